/* Checks shared by tl_conformance and mpi_bootstrap_ucx: see tl_checks.h. */
#include "tl_checks.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"

void tl_checks_fail(const tl_checks_t *c, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "%s rank %u: FAIL: ", c->prog, c->rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    c->die();
    abort(); /* not reached: die does not return */
}

#define CHECK_OK(call) TL_CHECK_OK(c, call)

void tl_checks_barrier(const tl_checks_t *c)
{
    CHECK_OK(c->b->barrier(c->b->arg, &c->idle));
}

void tl_checks_deadline(const tl_checks_t *c, const char *what)
{
    if (rdlm_clock_now_ns() > c->deadline)
        tl_checks_fail(c, "timed out in %s", what);
}

int tl_checks_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

uint64_t tl_checks_read_word0(const tl_checks_t *c, uint64_t off)
{
    uint64_t v;
    void *addr;
    size_t len;

    if (c->active && (c->caps.flags & RDLM_TL_CAP_AMO64)) {
        CHECK_OK(c->ctx->amo->fadd64(c->ctx, c->rk, off, 0, &v));
        return v;
    }
    CHECK_OK(c->ctx->mem->addr(c->ctx, c->mem, &addr, &len));
    memcpy(&v, (char *)addr + off, sizeof(v));
    return v;
}

void tl_checks_fadd_hammer(const tl_checks_t *c, unsigned iters)
{
    unsigned n = c->n;
    uint64_t *olds = calloc(iters ? iters : 1, sizeof(*olds));
    uint64_t *all = calloc((size_t)(iters ? iters : 1) * n, sizeof(*all));
    uint64_t i, total = (uint64_t)c->writers * iters, *mine, t0, t1;

    if (olds == NULL || all == NULL)
        tl_checks_fail(c, "out of memory");
    t0 = rdlm_clock_now_ns();
    if (c->active)
        for (i = 0; i < iters; i++) {
            CHECK_OK(c->ctx->amo->fadd64(c->ctx, c->rk, c->off_fadd, 1, &olds[i]));
            if ((i & 255) == 0)
                tl_checks_deadline(c, "fadd hammer");
        }
    t1 = rdlm_clock_now_ns();
    if (c->active && iters > 0)
        printf("rank %u: fetch-add mean latency %.2f us (%u ranks contending)\n", c->rank,
               (double)(t1 - t0) / 1e3 / iters, c->writers);
    CHECK_OK(c->ctx->setup->flush(c->ctx, RDLM_TL_PEER_ALL));
    /* Rank 0 may still be the target of others' emulated atomics here: the allgather
     * must progress the transport while it waits. */
    CHECK_OK(c->b->allgather(c->b->arg, olds, all, sizeof(*olds) * (iters ? iters : 1),
                             &c->idle));
    if (c->rank == 0) {
        mine = all + (c->active ? 0 : iters); /* the writers' blocks */
        qsort(mine, total, sizeof(*mine), tl_checks_cmp_u64);
        for (i = 0; i < total; i++)
            if (mine[i] != i)
                tl_checks_fail(c,
                               "fetch-add old values are not a permutation of 0..%" PRIu64
                               ": sorted position %" PRIu64 " holds %" PRIu64,
                               total - 1, i, mine[i]);
        i = tl_checks_read_word0(c, c->off_fadd);
        if (i != total)
            tl_checks_fail(c, "fetch-add word is %" PRIu64 ", expected %" PRIu64, i, total);
        printf("PASS fadd_hammer_exact_and_distinct (%u x %u)\n", c->writers, iters);
    }
    free(olds);
    free(all);
    tl_checks_barrier(c);
}

void tl_checks_cswap_increment(const tl_checks_t *c)
{
    uint64_t guess = 0, old, done = 0, retries = 0, v;

    if (c->active)
        while (done < c->iters) {
            CHECK_OK(c->ctx->amo->cswap64(c->ctx, c->rk, c->off_cswap, guess, guess + 1,
                                          &old));
            if (old == guess) {
                done++;
                guess++;
            } else {
                guess = old;
                retries++;
            }
            if ((done & 255) == 0)
                tl_checks_deadline(c, "cswap increments");
        }
    CHECK_OK(c->ctx->setup->flush(c->ctx, RDLM_TL_PEER_ALL));
    tl_checks_barrier(c);
    if (c->rank == 0) {
        v = tl_checks_read_word0(c, c->off_cswap);
        if (v != (uint64_t)c->writers * c->iters)
            tl_checks_fail(c,
                           "cswap-incremented word is %" PRIu64 ", expected %" PRIu64
                           " (lost update)",
                           v, (uint64_t)c->writers * c->iters);
        printf("PASS cswap_increment_no_lost_update (rank 0 retried %" PRIu64 " times)\n",
               retries);
    }
    tl_checks_barrier(c);
}

static void fill_slot(unsigned char *buf, unsigned owner)
{
    unsigned i;

    for (i = 0; i < TL_CHECKS_SLOT_BYTES; i++)
        buf[i] = (unsigned char)(owner * 7 + i * 13 + 1);
}

void tl_checks_put_get(const tl_checks_t *c)
{
    unsigned char out[TL_CHECKS_SLOT_BYTES], in[TL_CHECKS_SLOT_BYTES];
    unsigned r;

    if (!(c->caps.flags & RDLM_TL_CAP_RMA)) {
        if (c->rank == 0)
            printf("SKIP (capability) put_get_round_trip: no put/get\n");
        return;
    }
    if (c->active) {
        fill_slot(out, c->rank);
        CHECK_OK(c->ctx->rma->put(c->ctx, c->rk,
                                  c->off_slots + (uint64_t)c->rank * TL_CHECKS_SLOT_BYTES,
                                  out, sizeof(out)));
        CHECK_OK(c->ctx->setup->flush(c->ctx, 0));
        memset(in, 0, sizeof(in));
        CHECK_OK(c->ctx->rma->get(c->ctx, c->rk,
                                  c->off_slots + (uint64_t)c->rank * TL_CHECKS_SLOT_BYTES,
                                  in, sizeof(in)));
        if (memcmp(in, out, sizeof(in)) != 0)
            tl_checks_fail(c, "get after put+flush returned other bytes");
    }
    tl_checks_barrier(c);
    if (c->active)
        for (r = 0; r < c->n; r++) {
            if (r == 0 && !(c->caps.flags & RDLM_TL_CAP_LOOPBACK))
                continue;
            fill_slot(out, r);
            CHECK_OK(c->ctx->rma->get(c->ctx, c->rk,
                                      c->off_slots + (uint64_t)r * TL_CHECKS_SLOT_BYTES, in,
                                      sizeof(in)));
            if (memcmp(in, out, sizeof(in)) != 0)
                tl_checks_fail(c, "rank %u's slot read back wrong", r);
        }
    tl_checks_barrier(c);
    if (c->rank == 0)
        printf("PASS put_get_round_trip\n");
}
