/*
 * dead_peer_reported (see tl_dead_peer.h). Every rank registers a region and
 * publishes its key, its pid and, for the victim, the moment it goes
 * (CLOCK_MONOTONIC, which the processes and network namespaces of one machine share).
 * Then, after a barrier:
 *
 *   victim     progresses the transport (the emulated atomics on its word complete)
 *              until that moment, then raises SIGKILL; with o->stop SIGSTOP instead:
 *              alive but silent, as a host that vanished; rank 0 kills it at the end
 *   survivors  fetch-add on the victim's word until one fails. It must fail with
 *              RDLM_ERR_PEER_DEAD, not before the moment and at most o->bound_ms
 *              after it, and at least one must have completed before. Then every
 *              kind of operation on the victim (fetching atomics, posted add, put,
 *              get, message, key unpack, flush of it and of all) must return
 *              RDLM_ERR_PEER_DEAD at once (each under DP_ONCE_MS). Then each survivor
 *              fetch-adds c->iters times on its slot in every other survivor's region
 *              (old values 0, 1, ...) and waits until its own slots are full: the
 *              context still works with the live peers, both ways.
 *
 * A watchdog (alarm) ends a survivor stuck in one operation with a FAIL line: with
 * RDLM_PEER_FAILURE=off the fetch-add on the dead victim never returns. Between the
 * victim's end and the context's destruction the bootstrap is not used (its
 * collectives include the victim); the destruction warns that its barriers failed.
 */
#include "tl_dead_peer.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"

#define DP_REGION 4096
#define DP_OFF_WORD 0   /* the word the survivors hammer, in the victim's region */
#define DP_OFF_SLOTS 64 /* 8 bytes per source rank, in each survivor's region */
#define DP_MAX_RANKS ((DP_REGION - DP_OFF_SLOTS) / 8)
#define DP_LEAD_NS 300000000ull /* the victim goes this long after it published */
#define DP_ONCE_MS 100.0        /* an operation on a known-dead peer: "at once" */
#define DP_AM_ID 5

#define fail(...) tl_checks_fail(c, __VA_ARGS__)
#define CHECK_OK(call) TL_CHECK_OK(c, call)

typedef struct dp_info {
    uint64_t gone_ns; /* the victim's moment; 0 for the others */
    uint64_t pid;
} dp_info_t;

static char dp_alarm_line[200];

static void dp_alarm(int sig)
{
    ssize_t n = write(STDERR_FILENO, dp_alarm_line, strlen(dp_alarm_line));

    (void)sig;
    (void)n;
    _exit(1);
}

static double dp_ms(uint64_t ns)
{
    return (double)ns / 1e6;
}

static void dp_victim(const tl_checks_t *c, const dp_info_t *mine,
                      const tl_dead_peer_opts_t *o)
{
    while (rdlm_clock_now_ns() < mine->gone_ns)
        c->ctx->setup->progress(c->ctx);
    printf("rank %u (victim): %s now\n", c->rank,
           o->stop ? "stopping (SIGSTOP)" : "dying (SIGKILL)");
    fflush(stdout);
    raise(o->stop ? SIGSTOP : SIGKILL);
    for (;;)
        pause(); /* stopped and continued: rank 0's SIGKILL is on its way */
}

/* Fetch-add on the victim's word until one fails; the time from the victim's moment
 * to that failure. */
static uint64_t dp_detect(const tl_checks_t *c, rdlm_tl_rkey_h vkey, const dp_info_t *v,
                          const tl_dead_peer_opts_t *o, uint64_t *done_p)
{
    uint64_t old, done = 0, t, bound_ns = (uint64_t)o->bound_ms * 1000000u;
    rdlm_status_t st;

    for (;;) {
        st = c->ctx->amo->fadd64(c->ctx, vkey, DP_OFF_WORD, 1, &old);
        t = rdlm_clock_now_ns();
        if (st != RDLM_OK)
            break;
        done++;
        if (t > v->gone_ns + bound_ns)
            fail("fetch-adds on rank %u still succeed %u ms after it went (%" PRIu64
                 " done)",
                 o->victim, o->bound_ms, done);
    }
    if (st != RDLM_ERR_PEER_DEAD)
        fail("fetch-add on the dead rank %u returned %s, expected RDLM_ERR_PEER_DEAD",
             o->victim, rdlm_status_name(st));
    if (t < v->gone_ns)
        fail("fetch-add on rank %u failed %.1f ms before it went", o->victim,
             dp_ms(v->gone_ns - t));
    if (t - v->gone_ns > bound_ns)
        fail("rank %u's end was reported after %.1f ms (bound %u ms)", o->victim,
             dp_ms(t - v->gone_ns), o->bound_ms);
    if (done == 0)
        fail("no fetch-add on rank %u completed while it was alive", o->victim);
    *done_p = done;
    return t - v->gone_ns;
}

static void dp_expect_dead(const tl_checks_t *c, rdlm_status_t st, uint64_t t0,
                           const char *what)
{
    double ms = dp_ms(rdlm_clock_now_ns() - t0);

    if (st != RDLM_ERR_PEER_DEAD)
        fail("%s on the dead rank returned %s, expected RDLM_ERR_PEER_DEAD", what,
             rdlm_status_name(st));
    if (ms > DP_ONCE_MS)
        fail("%s on the dead rank took %.1f ms (at once: under %.0f ms)", what, ms,
             DP_ONCE_MS);
}

/* Every kind of operation on the dead victim: RDLM_ERR_PEER_DEAD at once. */
static void dp_all_dead(const tl_checks_t *c, rdlm_tl_rkey_h vkey, unsigned victim,
                        const unsigned char *vblob)
{
    rdlm_tl_ctx_h x = c->ctx;
    uint64_t t0, old, word = 7;
    rdlm_tl_rkey_h k;

    t0 = rdlm_clock_now_ns();
    dp_expect_dead(c, x->amo->fadd64(x, vkey, DP_OFF_WORD, 1, &old), t0, "fadd64");
    t0 = rdlm_clock_now_ns();
    dp_expect_dead(c, x->amo->cswap64(x, vkey, DP_OFF_WORD, 0, 1, &old), t0, "cswap64");
    t0 = rdlm_clock_now_ns();
    dp_expect_dead(c, x->amo->swap64(x, vkey, DP_OFF_WORD, 1, &old), t0, "swap64");
    t0 = rdlm_clock_now_ns();
    dp_expect_dead(c, x->amo->for64(x, vkey, DP_OFF_WORD, 1, &old), t0, "for64");
    t0 = rdlm_clock_now_ns();
    dp_expect_dead(c, x->amo->fadd64_post(x, vkey, DP_OFF_WORD, 1), t0, "posted fadd64");
    t0 = rdlm_clock_now_ns();
    dp_expect_dead(c, x->rma->put(x, vkey, DP_OFF_WORD, &word, sizeof(word)), t0, "put");
    t0 = rdlm_clock_now_ns();
    dp_expect_dead(c, x->rma->get(x, vkey, DP_OFF_WORD, &word, sizeof(word)), t0, "get");
    t0 = rdlm_clock_now_ns();
    dp_expect_dead(c, x->am->send(x, victim, DP_AM_ID, &word, sizeof(word)), t0,
                   "active message");
    t0 = rdlm_clock_now_ns();
    dp_expect_dead(c, x->mem->rkey_unpack(x, victim, vblob, RDLM_TL_RKEY_MAX, &k), t0,
                   "key unpack");
    t0 = rdlm_clock_now_ns();
    dp_expect_dead(c, x->setup->flush(x, victim), t0, "flush of it");
    t0 = rdlm_clock_now_ns();
    dp_expect_dead(c, x->setup->flush(x, RDLM_TL_PEER_ALL), t0, "flush of all");
}

/* The word at off in our own region, through the transport (loopback). */
static uint64_t dp_own_word(const tl_checks_t *c, rdlm_tl_rkey_h own, uint64_t off)
{
    uint64_t v;

    CHECK_OK(c->ctx->amo->fadd64(c->ctx, own, off, 0, &v));
    return v;
}

/* The survivors among themselves, both ways. */
static void dp_live(const tl_checks_t *c, const rdlm_tl_rkey_h *keys, unsigned victim)
{
    uint64_t i, old, v, mine = DP_OFF_SLOTS + 8 * (uint64_t)c->rank;
    unsigned r;

    for (r = 0; r < c->n; r++) {
        if (r == victim || r == c->rank)
            continue;
        for (i = 0; i < c->iters; i++) {
            CHECK_OK(c->ctx->amo->fadd64(c->ctx, keys[r], mine, 1, &old));
            if (old != i)
                fail("fetch-add %" PRIu64 " on live rank %u returned %" PRIu64, i, r, old);
        }
    }
    for (r = 0; r < c->n; r++) {
        if (r == victim || r == c->rank)
            continue;
        while ((v = dp_own_word(c, keys[c->rank], DP_OFF_SLOTS + 8 * (uint64_t)r)) <
               c->iters) {
            c->ctx->setup->progress(c->ctx); /* their emulated atomics run here */
            tl_checks_deadline(c, "waiting for the live ranks' fetch-adds");
        }
        if (v != c->iters)
            fail("live rank %u's slot holds %" PRIu64 ", expected %u", r, v, c->iters);
    }
}

void tl_dead_peer_run(tl_checks_t *c, const tl_dead_peer_opts_t *o)
{
    unsigned char key[RDLM_TL_RKEY_MAX] = {0};
    unsigned char *blobs = malloc((size_t)RDLM_TL_RKEY_MAX * c->n);
    dp_info_t mine = {.pid = (uint64_t)getpid()};
    dp_info_t *info = calloc(c->n, sizeof(*info));
    rdlm_tl_rkey_h *keys = calloc(c->n, sizeof(*keys));
    uint64_t took, done;
    rdlm_tl_mem_h mem;
    size_t klen;
    unsigned r;

    if (blobs == NULL || info == NULL || keys == NULL)
        fail("out of memory");
    if (o->victim == 0 || o->victim >= c->n || c->n > DP_MAX_RANKS ||
        !(c->caps.flags & RDLM_TL_CAP_AMO64) || !(c->caps.flags & RDLM_TL_CAP_LOOPBACK))
        fail("dead_peer_reported needs a victim in 1..%u, at most %u ranks, remote atomics "
             "and loopback",
             c->n - 1, (unsigned)DP_MAX_RANKS);
    CHECK_OK(c->ctx->mem->reg(c->ctx, NULL, DP_REGION, &mem));
    CHECK_OK(c->ctx->mem->rkey_pack(c->ctx, mem, key, sizeof(key), &klen));
    if (c->rank == o->victim)
        mine.gone_ns = rdlm_clock_now_ns() + DP_LEAD_NS;
    CHECK_OK(c->b->allgather(c->b->arg, key, blobs, RDLM_TL_RKEY_MAX, &c->idle));
    CHECK_OK(c->b->allgather(c->b->arg, &mine, info, sizeof(mine), &c->idle));
    for (r = 0; r < c->n; r++)
        CHECK_OK(c->ctx->mem->rkey_unpack(c->ctx, r, blobs + (size_t)r * RDLM_TL_RKEY_MAX,
                                          RDLM_TL_RKEY_MAX, &keys[r]));
    tl_checks_barrier(c); /* every endpoint and key is in place */
    if (c->rank == o->victim)
        dp_victim(c, &mine, o);

    snprintf(dp_alarm_line, sizeof(dp_alarm_line),
             "tl_conformance rank %u: FAIL: operations on rank %u, which went after %u ms, "
             "did not return within %u ms (hung: its end was not reported)\n",
             c->rank, o->victim, (unsigned)(DP_LEAD_NS / 1000000u), 2 * o->bound_ms + 2000);
    signal(SIGALRM, dp_alarm);
    alarm((2 * o->bound_ms + 2000 + 999) / 1000);
    took = dp_detect(c, keys[o->victim], &info[o->victim], o, &done);
    dp_all_dead(c, keys[o->victim], o->victim,
                blobs + (size_t)o->victim * RDLM_TL_RKEY_MAX);
    alarm(0);
    dp_live(c, keys, o->victim);
    printf("PASS dead_peer_reported (rank %u: rank %u %s; %" PRIu64 " fetch-adds on it "
           "before, then RDLM_ERR_PEER_DEAD after %.1f ms (bound %u ms) and at once for "
           "every operation on it; %u x %u fetch-adds with the live ranks exact)\n",
           c->rank, o->victim, o->stop ? "stopped" : "was killed", done, dp_ms(took),
           o->bound_ms, c->iters, c->n - 2);
    if (o->stop && c->rank == 0 && kill((pid_t)info[o->victim].pid, SIGKILL) != 0)
        fail("could not kill the stopped rank %u (pid %" PRIu64 ")", o->victim,
             info[o->victim].pid);

    for (r = 0; r < c->n; r++)
        CHECK_OK(c->ctx->mem->rkey_release(c->ctx, keys[r]));
    CHECK_OK(c->ctx->mem->dereg(c->ctx, mem));
    rdlm_tl_destroy(c->ctx); /* its barriers fail without the victim: warnings */
    free(blobs);
    free(info);
    free(keys);
}
