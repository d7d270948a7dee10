/*
 * The transport conformance suite: one program, instantiated per backend by ctest.
 * It forks --procs ranks that meet through the TCP bootstrap (the parent creates the
 * listening socket, so parallel ctest runs never collide on a port), open the backend
 * and check, each check skipped by capability (never by backend name):
 *
 *   ops_tables_have_no_null_entry
 *   fetching_atomics_return_old_values       fadd/cswap(hit, miss)/swap/or on one word
 *   fadd_hammer_exact_and_distinct           N*iters fetch-adds: final value exact,
 *                                            every returned old value distinct
 *   posted_fadd_exact_after_flush
 *   fetch_or_no_lost_bit                     every writer ors its 64 / writers bits, one
 *                                            at a time, into one word at rank 0: each
 *                                            old value holds the writer's earlier bits,
 *                                            the final word all bits of all writers
 *   cswap_increment_no_lost_update           CAS-retry increments: final value exact
 *   posted_cswap_increment_no_lost_update    the same with rdlm_tl_cswap64_post (the
 *                                            backend's posted CAS, or the blocking one
 *                                            it falls back to), each op waited for by
 *                                            progressing until done
 *   posted_cswap_done_by_progress_thread     with a progress thread: a posted CAS
 *                                            completes, with the word's value, while
 *                                            the caller only sleeps
 *   put_get_round_trip                       per-rank slots, also read by every rank
 *   am_delivery_intact                       every message once, payload intact;
 *                                            per-sender order reported, not required
 *   bad_keys_give_errors                     malformed blob, released key, offset out
 *                                            of range or misaligned
 *
 * --busy-target-ms MS runs one other check instead (busy_target_atomics_complete):
 * rank 0 registers a word, then computes for MS ms in a loop that never calls the
 * library, while ranks 1..N-1 run fetching fetch-adds on that word (each completion
 * timestamped with CLOCK_MONOTONIC) until MS + 300 ms after they started. The
 * timestamps are compared with rank 0's busy window after the fact, through the
 * bootstrap. The final value must be exact. With --progress-thread at least
 * BUSY_MIN_DURING fetch-adds must complete inside the window (the progress thread runs
 * the emulated atomics of UCX over TCP). Without it the counts are only printed: over
 * TCP they stall until rank 0 returns to the library, over shared memory they do not.
 *
 * --dead-peer VICTIM runs dead_peer_reported instead (tl_dead_peer.c): rank VICTIM
 * dies by SIGKILL (--victim-stops: stops by SIGSTOP) while the others run remote
 * atomics on its memory; they must get RDLM_ERR_PEER_DEAD within --bound-ms (default
 * 10000) and go on with each other. The launcher counts the victim's SIGKILL as its
 * success.
 *
 * The transport parameters come from the RDLM_* configuration (RDLM_PEER_FAILURE,
 * RDLM_PEER_TIMEOUT_MS, RDLM_LOG...), then from the options.
 *
 * --rank R --size N --connect ADDR:PORT runs a single rank in this process instead of
 * forking: rank 0 listens on ADDR:PORT, the others connect to it. netns_pair.sh uses it
 * to put rank 0 and rank 1 in two network namespaces joined by a veth pair.
 *
 * Exit: 0 all passed, 77 skipped (backend unusable here: message says why), 1 failed.
 * Every wait is bounded (--timeout-sec); the parent kills ranks that overrun.
 */
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>

#include "clock.h"
#include "config.h"
#include "tl_checks.h"
#include "tl_dead_peer.h"
#include "transport.h"

#define SKIP_CODE 77
#define AM_ID 3
#define AM_PER_PEER_MAX 256

/* Offsets in rank 0's region. */
#define OFF_OLDVAL 0
#define OFF_FADD 64
#define OFF_POST 128
#define OFF_CSWAP 192
#define OFF_BUSY 256
#define OFF_PCAS 320
#define OFF_OR 384
#define OFF_SLOTS 4096
#define REGION_BYTES (OFF_SLOTS + 64 * TL_CHECKS_SLOT_BYTES)

typedef struct opts {
    const char *backend;
    unsigned procs, iters, am_msgs, timeout_sec;
    int progress_thread;
    int missing_rank; /* bootstrap_missing_peer_times_out: the last rank never starts */
    unsigned busy_ms; /* busy_target_atomics_complete instead of the suite; 0: off */
    int victim;       /* dead_peer_reported instead of the suite; -1: off */
    tl_dead_peer_opts_t dead; /* its options (victim copied in) */
    int rank;         /* single-rank mode (--rank/--size/--connect); -1: fork all */
    const char *host; /* single-rank mode: rank 0's rendezvous address */
    uint16_t port;
} opts_t;

/* busy_target_atomics_complete: with the progress thread, at least this many fetch-adds
 * (over all issuing ranks) must complete while rank 0 computes. Over TCP on these
 * machines a fetch-add takes about 15-40 us, so 2 s give thousands: 100 is far from
 * the noise. */
#define BUSY_MIN_DURING 100u
#define BUSY_TAIL_NS 300000000u /* issuing ranks go on this long after the window */
#define BUSY_MAX_OPS 1000000u

static void die(void) __attribute__((noreturn));

/* A failing rank exits: the parent sees it and stops the others. */
static void die(void)
{
    exit(1);
}

/* fail() and CHECK_OK() outside the shared checks: the same FAIL line (rank set when
 * the rank starts). */
static tl_checks_t g_fail = {.prog = "tl_conformance", .die = die};
#define fail(...) tl_checks_fail(&g_fail, __VA_ARGS__)
#define CHECK_OK(call) TL_CHECK_OK(&g_fail, call)

/* ---- the active-message receiver ------------------------------------------------------ */

typedef struct am_state {
    unsigned size, expected;
    unsigned *count;    /* per source */
    unsigned *next_seq; /* per source: for the order report */
    unsigned out_of_order, corrupt;
} am_state_t;

typedef struct am_msg {
    uint32_t src, seq;
    uint8_t pattern[48];
} am_msg_t;

static void am_handler(void *arg, uint32_t src, const void *data, size_t len)
{
    am_state_t *s = arg;
    am_msg_t m;
    unsigned i;

    if (len != sizeof(m) || src >= s->size) {
        s->corrupt++;
        return;
    }
    memcpy(&m, data, sizeof(m));
    if (m.src != src)
        s->corrupt++;
    for (i = 0; i < sizeof(m.pattern); i++)
        if (m.pattern[i] != (uint8_t)(m.src * 31 + m.seq + i))
            s->corrupt++;
    if (m.seq != s->next_seq[src])
        s->out_of_order++;
    s->next_seq[src] = m.seq + 1;
    s->count[src]++;
}

/* ---- one rank ------------------------------------------------------------------------- */

/* The shared checks' context; user points at the opts_t. */
typedef tl_checks_t rank_ctx_t;

static const opts_t *opts_of(const rank_ctx_t *t)
{
    return t->user;
}

static void test_fetching_old_values(rank_ctx_t *t)
{
    rdlm_tl_ctx_h c = t->ctx;
    uint64_t old;

    if (t->rank == (t->active ? 0u : 1u)) {
        CHECK_OK(c->amo->fadd64(c, t->rk, OFF_OLDVAL, 5, &old));
        if (old != 0)
            fail("fadd64 returned %" PRIu64 ", expected 0", old);
        CHECK_OK(c->amo->cswap64(c, t->rk, OFF_OLDVAL, 5, 9, &old));
        if (old != 5)
            fail("cswap64 (hit) returned %" PRIu64 ", expected 5", old);
        CHECK_OK(c->amo->cswap64(c, t->rk, OFF_OLDVAL, 5, 1, &old));
        if (old != 9)
            fail("cswap64 (miss) returned %" PRIu64 ", expected 9", old);
        CHECK_OK(c->amo->swap64(c, t->rk, OFF_OLDVAL, 42, &old));
        if (old != 9)
            fail("swap64 returned %" PRIu64 ", expected 9 (did the missed cswap write?)",
                 old);
        CHECK_OK(c->amo->for64(c, t->rk, OFF_OLDVAL, UINT64_C(1) << 63 | 5, &old));
        if (old != 42)
            fail("for64 returned %" PRIu64 ", expected 42", old);
        CHECK_OK(c->amo->fadd64(c, t->rk, OFF_OLDVAL, 0, &old));
        if (old != (UINT64_C(1) << 63 | 47))
            fail("word holds %#" PRIx64 " after for64(1 << 63 | 5) on 42", old);
        printf("PASS fetching_atomics_return_old_values (rank %u)\n", t->rank);
    }
    tl_checks_barrier(t);
}

static void test_posted_fadd(rank_ctx_t *t)
{
    uint64_t i, v;

    if (!(t->caps.flags & RDLM_TL_CAP_AMO64_POST)) {
        if (t->rank == 0)
            printf("SKIP (capability) posted_fadd_exact_after_flush: no posted atomics\n");
        return;
    }
    if (t->active)
        for (i = 0; i < t->iters; i++)
            CHECK_OK(t->ctx->amo->fadd64_post(t->ctx, t->rk, OFF_POST, 3));
    CHECK_OK(t->ctx->setup->flush(t->ctx, 0));
    tl_checks_barrier(t);
    if (t->rank == 0) {
        v = tl_checks_read_word0(t, OFF_POST);
        if (v != (uint64_t)3 * t->writers * t->iters)
            fail("posted fetch-add word is %" PRIu64 ", expected %" PRIu64, v,
                 (uint64_t)3 * t->writers * t->iters);
        printf("PASS posted_fadd_exact_after_flush\n");
    }
    tl_checks_barrier(t);
}

static void test_fetch_or(rank_ctx_t *t)
{
    uint32_t per = 64 / t->writers, first = (t->rank - (t->writers < t->n)) * per;
    uint64_t mine = 0, want = per * t->writers == 64
                                  ? UINT64_MAX
                                  : (UINT64_C(1) << per * t->writers) - 1;
    uint64_t old;

    if (t->active)
        for (uint32_t i = 0; i < per; i++) {
            CHECK_OK(t->ctx->amo->for64(t->ctx, t->rk, OFF_OR, UINT64_C(1) << (first + i),
                                        &old));
            if ((old & mine) != mine)
                fail("for64 returned %#" PRIx64
                     " without this rank's earlier bits %#" PRIx64,
                     old, mine);
            mine |= UINT64_C(1) << (first + i);
        }
    CHECK_OK(t->ctx->setup->flush(t->ctx, RDLM_TL_PEER_ALL));
    tl_checks_barrier(t);
    if (t->rank == 0) {
        old = tl_checks_read_word0(t, OFF_OR);
        if (old != want)
            fail("or-ed word is %#" PRIx64 ", expected %#" PRIx64 " (a lost bit)", old,
                 want);
        printf("PASS fetch_or_no_lost_bit\n");
    }
    tl_checks_barrier(t);
}

static void test_posted_cswap(rank_ctx_t *t)
{
    uint64_t guess = 0, done = 0, retries = 0, v;
    rdlm_tl_op_t op;

    if (t->active)
        while (done < t->iters) {
            CHECK_OK(rdlm_tl_cswap64_post(t->ctx, t->rk, OFF_PCAS, guess, guess + 1, &op));
            while (!rdlm_load(&op.done, RDLM_ACQUIRE)) {
                rdlm_tl_progress(t->ctx);
                tl_checks_deadline(t, "posted cswap completion");
            }
            CHECK_OK(op.status);
            if (op.old == guess) {
                done++;
                guess++;
            } else {
                guess = op.old;
                retries++;
            }
        }
    tl_checks_barrier(t);
    if (t->rank == 0) {
        v = tl_checks_read_word0(t, OFF_PCAS);
        if (v != (uint64_t)t->writers * t->iters)
            fail("posted-cswap-incremented word is %" PRIu64 ", expected %" PRIu64
                 " (lost update)",
                 v, (uint64_t)t->writers * t->iters);
        printf("PASS posted_cswap_increment_no_lost_update (%s, rank 0 retried %" PRIu64
               " times)\n",
               t->ctx->amo->cswap64_post != NULL ? "posted" : "blocking fallback", retries);
    }
    tl_checks_barrier(t);
}

/* With a progress thread, a posted CAS (one that cannot swap: the word stays) must
 * complete while this thread never calls the library. */
static void test_posted_cswap_by_thread(rank_ctx_t *t)
{
    uint64_t want = (uint64_t)t->writers * t->iters;
    rdlm_tl_op_t op;
    unsigned naps = 0;

    if (!t->caps.progress_thread || t->ctx->amo->cswap64_post == NULL)
        return;
    if (t->active) {
        CHECK_OK(rdlm_tl_cswap64_post(t->ctx, t->rk, OFF_PCAS, UINT64_MAX, 0, &op));
        while (!rdlm_load(&op.done, RDLM_ACQUIRE)) {
            nanosleep(&(struct timespec){0, 1000000}, NULL);
            naps++;
            tl_checks_deadline(t, "a posted cswap the progress thread should complete");
        }
        CHECK_OK(op.status);
        if (op.old != want)
            fail("posted cswap by the progress thread: old value %" PRIu64
                 ", expected %" PRIu64,
                 op.old, want);
        printf(
            "PASS posted_cswap_done_by_progress_thread (rank %u, after %u naps of 1 ms)\n",
            t->rank, naps);
    }
    tl_checks_barrier(t);
}

static void test_am(rank_ctx_t *t)
{
    am_state_t s = {.size = t->n};
    unsigned msgs = opts_of(t)->am_msgs, r, i, total;
    uint64_t got;

    if (!(t->caps.flags & RDLM_TL_CAP_AM) || t->caps.am_max_payload < sizeof(am_msg_t)) {
        if (t->rank == 0)
            printf("SKIP (capability) am_delivery_intact: no active messages\n");
        return;
    }
    s.count = calloc(t->n, sizeof(unsigned));
    s.next_seq = calloc(t->n, sizeof(unsigned));
    if (s.count == NULL || s.next_seq == NULL)
        fail("out of memory");
    CHECK_OK(t->ctx->am->set_handler(t->ctx, AM_ID, am_handler, &s));
    tl_checks_barrier(t); /* every handler is in place before anyone sends */
    for (i = 0; i < msgs; i++)
        for (r = 0; r < t->n; r++) {
            am_msg_t m = {.src = t->rank, .seq = i};
            unsigned k;

            for (k = 0; k < sizeof(m.pattern); k++)
                m.pattern[k] = (uint8_t)(m.src * 31 + m.seq + k);
            CHECK_OK(t->ctx->am->send(t->ctx, r, AM_ID, &m, sizeof(m)));
        }
    total = msgs * t->n;
    for (;;) {
        for (got = 0, r = 0; r < t->n; r++)
            got += s.count[r];
        if (got >= total)
            break;
        if (t->ctx->setup->progress(t->ctx) == 0 && t->caps.progress_thread)
            nanosleep(&(struct timespec){0, 100000}, NULL);
        tl_checks_deadline(t, "active-message delivery");
    }
    tl_checks_barrier(t); /* nobody sends any more: the counts are final */
    for (r = 0; r < t->n; r++)
        if (s.count[r] != msgs)
            fail("received %u messages from rank %u, expected %u", s.count[r], r, msgs);
    if (s.corrupt)
        fail("%u corrupt active messages", s.corrupt);
    printf("PASS am_delivery_intact (rank %u: %u messages, %u out of per-sender order)\n",
           t->rank, total, s.out_of_order);
    CHECK_OK(t->ctx->am->set_handler(t->ctx, AM_ID, NULL, NULL));
    tl_checks_barrier(t);
    free(s.count);
    free(s.next_seq);
}

static void expect_status(rdlm_status_t got, rdlm_status_t want, const char *what)
{
    if (got != want)
        fail("%s: got %s, expected %s", what, rdlm_status_name(got), rdlm_status_name(want));
}

static void test_bad_keys(rank_ctx_t *t, const unsigned char *key0)
{
    rdlm_tl_ctx_h c = t->ctx;
    unsigned char junk[64];
    rdlm_tl_rkey_h k2;
    uint64_t old;

    memset(junk, 0xa5, sizeof(junk));
    expect_status(c->mem->rkey_unpack(c, 0, junk, sizeof(junk), &k2), RDLM_ERR_INVALID_ARG,
                  "unpacking a malformed key");
    expect_status(c->mem->rkey_unpack(c, 0, key0, 4, &k2), RDLM_ERR_INVALID_ARG,
                  "unpacking a truncated key");
    if (t->caps.flags & RDLM_TL_CAP_AMO64) {
        expect_status(c->amo->fadd64(c, 0, 0, 1, &old), RDLM_ERR_BAD_HANDLE,
                      "fadd64 with a never-issued key");
        expect_status(c->amo->fadd64(c, t->rk, REGION_BYTES, 1, &old), RDLM_ERR_INVALID_ARG,
                      "fadd64 past the region");
        expect_status(c->amo->fadd64(c, t->rk, 4, 1, &old), RDLM_ERR_INVALID_ARG,
                      "fadd64 at a misaligned offset");
        expect_status(c->amo->fadd64(c, t->rk, UINT64_MAX - 3, 1, &old),
                      RDLM_ERR_INVALID_ARG, "fadd64 at an overflowing offset");
        CHECK_OK(c->mem->rkey_unpack(c, 0, key0, RDLM_TL_RKEY_MAX, &k2));
        CHECK_OK(c->mem->rkey_release(c, k2));
        expect_status(c->amo->fadd64(c, k2, OFF_FADD, 1, &old), RDLM_ERR_BAD_HANDLE,
                      "fadd64 with a released key");
        expect_status(c->mem->rkey_release(c, k2), RDLM_ERR_BAD_HANDLE,
                      "releasing a key twice");
    }
    if (t->rank == 0) {
        printf("PASS bad_keys_give_errors (malformed, truncated, never issued, released, "
               "out of range, misaligned)\n");
        printf("SKIP target_deregistered_key: the target's deregistration is not "
               "visible to a peer holding its key (UCX keeps no remote validity state: "
               "shared-memory keys stay mapped, emulated atomics would touch freed "
               "memory); the caller must barrier before dereg\n");
    }
    tl_checks_barrier(t);
}

/* ---- busy target ----------------------------------------------------------------------- */

static uint64_t mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* What an issuing rank reports about its completions, relative to rank 0's window. */
typedef struct busy_report {
    uint64_t total;       /* fetch-adds completed in the measured loop */
    uint64_t during;      /* ... of which completed inside [start, end) */
    uint64_t after;       /* ... completed at or after end */
    uint64_t first_ns;    /* first completion after start, relative to start */
    uint64_t max_gap_ns;  /* longest time without a completion inside the window */
} busy_report_t;

static void test_busy_target(rank_ctx_t *t)
{
    uint64_t busy_ns = (uint64_t)opts_of(t)->busy_ms * 1000000u, old, w0, i, prev, v;
    uint64_t expect;
    uint64_t win[2] = {0, 0}, *allwin, *ts = NULL, sum_during = 0, sum_total = 0;
    busy_report_t rep = {0}, *reps;
    volatile uint64_t sink = 0;
    size_t nts = 0;
    unsigned r;

    if (!(t->caps.flags & RDLM_TL_CAP_AMO64)) {
        if (t->rank == 0)
            printf("SKIP (capability) busy_target_atomics_complete: no remote atomics\n");
        return;
    }
    if (t->n < 2)
        fail("busy target needs at least 2 ranks");
    allwin = calloc((size_t)t->n * 2, sizeof(*allwin));
    reps = calloc(t->n, sizeof(*reps));
    if (t->rank != 0)
        ts = malloc(sizeof(*ts) * BUSY_MAX_OPS);
    if (allwin == NULL || reps == NULL || (t->rank != 0 && ts == NULL))
        fail("out of memory");
    /* Warm-up: every issuing rank connects and completes one fetch-add while rank 0
     * still progresses (in the barrier's idle callback), so the window measures
     * atomics, not endpoint wire-up. */
    if (t->rank != 0)
        CHECK_OK(t->ctx->amo->fadd64(t->ctx, t->rk, OFF_BUSY, 1, &old));
    tl_checks_barrier(t);
    if (t->rank == 0) {
        /* Compute without calling the library (not even the clock wrapper). */
        uint64_t x = 88172645463325252u;

        win[0] = mono_ns();
        do {
            for (i = 0; i < 4096; i++) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
            }
            sink += x;
            win[1] = mono_ns();
        } while (win[1] - win[0] < busy_ns);
    } else {
        w0 = mono_ns();
        while (nts < BUSY_MAX_OPS && mono_ns() - w0 < busy_ns + BUSY_TAIL_NS) {
            CHECK_OK(t->ctx->amo->fadd64(t->ctx, t->rk, OFF_BUSY, 1, &old));
            ts[nts++] = mono_ns();
            if ((nts & 255) == 0)
                tl_checks_deadline(t, "busy-target fetch-adds");
        }
    }
    CHECK_OK(t->ctx->setup->flush(t->ctx, RDLM_TL_PEER_ALL));
    tl_checks_barrier(t);
    /* Rank 0's window to everyone, then everyone's report to rank 0. */
    CHECK_OK(t->b->allgather(t->b->arg, win, allwin, sizeof(win), &t->idle));
    win[0] = allwin[0];
    win[1] = allwin[1];
    if (t->rank != 0) {
        rep.total = nts;
        rep.first_ns = UINT64_MAX;
        prev = win[0];
        for (i = 0; i < nts; i++) {
            if (ts[i] < win[0])
                continue;
            if (ts[i] >= win[1]) {
                rep.after++;
                continue;
            }
            if (rep.during++ == 0)
                rep.first_ns = ts[i] - win[0];
            if (ts[i] - prev > rep.max_gap_ns)
                rep.max_gap_ns = ts[i] - prev;
            prev = ts[i];
        }
        if (win[1] - prev > rep.max_gap_ns)
            rep.max_gap_ns = win[1] - prev;
    }
    CHECK_OK(t->b->allgather(t->b->arg, &rep, reps, sizeof(rep), &t->idle));
    if (t->rank == 0) {
        for (r = 1; r < t->n; r++) {
            printf("busy target: rank %u: %" PRIu64 " fetch-adds, %" PRIu64
                   " completed during rank 0's %.2f s of computing, %" PRIu64
                   " after; first during %s%.1f ms after the start; longest gap in the "
                   "window %.1f ms%s\n",
                   r, reps[r].total, reps[r].during, (double)(win[1] - win[0]) / 1e9,
                   reps[r].after, reps[r].during ? "" : "(none) ",
                   reps[r].during ? (double)reps[r].first_ns / 1e6 : 0.0,
                   (double)reps[r].max_gap_ns / 1e6,
                   reps[r].total >= BUSY_MAX_OPS ? " (stopped early at the op cap)" : "");
            sum_during += reps[r].during;
            sum_total += reps[r].total;
        }
        expect = sum_total + (t->n - 1); /* plus one warm-up fetch-add per rank */
        v = tl_checks_read_word0(t, OFF_BUSY);
        if (v != expect)
            fail("busy-target word is %" PRIu64 ", expected %" PRIu64, v, expect);
        printf("busy target: %s progress thread, needs_target_progress=%d: %" PRIu64
               " of %" PRIu64 " fetch-adds completed while rank 0 computed\n",
               t->caps.progress_thread ? "with" : "without",
               t->caps.amo_needs_target_progress, sum_during, sum_total);
        if (t->caps.progress_thread) {
            if (sum_during < BUSY_MIN_DURING)
                fail("only %" PRIu64 " fetch-adds completed while rank 0 computed for "
                     "%.2f s with the progress thread (at least %u expected)",
                     sum_during, (double)(win[1] - win[0]) / 1e9, BUSY_MIN_DURING);
            printf("PASS busy_target_atomics_complete (>= %u during the window, final "
                   "value exact)\n", BUSY_MIN_DURING);
        } else {
            printf("PASS busy_target_atomics_complete (informational without the progress "
                   "thread: %s; final value exact)\n",
                   sum_during == 0 ? "the fetch-adds stalled until rank 0 returned to the "
                                     "library"
                                   : "some completed anyway");
        }
    }
    (void)sink;
    free(ts);
    free(allwin);
    free(reps);
    tl_checks_barrier(t);
}

/* bootstrap_missing_peer_times_out: rank size-1 is never started. Rank 0 must give
 * RDLM_ERR_TIMEOUT (with a log line naming the missing rank) within the timeout; the
 * others connect, then their first collective fails with RDLM_ERR_TIMEOUT too (rank 0
 * tells them it gave up, and why) instead of hanging, or of saying that a process
 * died (it did before). */
static int run_missing(const opts_t *o, unsigned rank, int listen_fd, uint16_t port)
{
    rdlm_tl_boot_tcp_params_t bp = {.rank = rank,
                                    .size = o->procs,
                                    .port = port,
                                    .listen_fd = rank == 0 ? listen_fd : -1,
                                    .timeout_ms = o->timeout_sec * 1000};
    rdlm_tl_boot_tcp_t *boot = NULL;
    const rdlm_tl_bootstrap_t *b;
    uint64_t t0 = rdlm_clock_now_ns();
    rdlm_status_t st = rdlm_tl_boot_tcp_create(&bp, &boot);

    g_fail.rank = rank;
    if (rank == 0) {
        expect_status(st, RDLM_ERR_TIMEOUT, "rank 0 waiting for a rank that never starts");
        printf("PASS bootstrap_missing_peer_times_out (rank 0 gave up after %.1f s)\n",
               (double)(rdlm_clock_now_ns() - t0) / 1e9);
        return 0;
    }
    CHECK_OK(st);
    b = rdlm_tl_boot_tcp_get(boot);
    st = b->barrier(b->arg, NULL);
    expect_status(st, RDLM_ERR_TIMEOUT, "the first barrier after rank 0 gave up");
    rdlm_tl_boot_tcp_destroy(boot);
    return 0;
}

static int run_rank(const opts_t *o, unsigned rank, int listen_fd, const char *host,
                    uint16_t port)
{
    rdlm_tl_boot_tcp_params_t bp = {.rank = rank,
                                    .size = o->procs,
                                    .host = host,
                                    .port = port,
                                    .listen_fd = rank == 0 ? listen_fd : -1,
                                    .timeout_ms = o->timeout_sec * 1000};
    rdlm_tl_params_t tp = {.thread_mode = RDLM_TL_THREAD_SINGLE,
                           .progress_thread = o->progress_thread};
    rdlm_config_t cfg;
    rank_ctx_t t = {.rank = rank,
                    .n = o->procs,
                    .iters = o->iters,
                    .off_fadd = OFF_FADD,
                    .off_cswap = OFF_CSWAP,
                    .off_slots = OFF_SLOTS,
                    .prog = "tl_conformance",
                    .die = die,
                    .user = o};
    unsigned char *keys, mykey[RDLM_TL_RKEY_MAX] = {0};
    rdlm_tl_boot_tcp_t *boot;
    rdlm_tl_stats_t stats;
    size_t klen = 0;
    rdlm_status_t st;

    g_fail.rank = rank;
    t.deadline = rdlm_clock_deadline((uint64_t)o->timeout_sec * 1000000000u);
    setvbuf(stdout, NULL, _IOLBF, 0);
    CHECK_OK(rdlm_config_load(&cfg));
    rdlm_tl_params_from_config(&cfg, &tp);
    tp.progress_thread = tp.progress_thread || o->progress_thread;
    CHECK_OK(rdlm_tl_boot_tcp_create(&bp, &boot));
    t.b = rdlm_tl_boot_tcp_get(boot);
    tp.bootstrap = t.b;
    st = rdlm_tl_open(o->backend, &tp, &t.ctx);
    if (st == RDLM_ERR_UNSUPPORTED || st == RDLM_ERR_NOT_FOUND) {
        if (rank == 0)
            printf("SKIP: backend '%s' is not usable here (%s): see the log line above\n",
                   o->backend, rdlm_status_name(st));
        rdlm_tl_boot_tcp_destroy(boot);
        return SKIP_CODE;
    }
    CHECK_OK(st);
    t.idle = (rdlm_tl_idle_t){rdlm_tl_progress_idle, t.ctx};

    if (!rdlm_tl_ops_complete(t.ctx))
        fail("an ops table has a NULL entry");
    CHECK_OK(t.ctx->setup->query(t.ctx, &t.caps));
    if (t.caps.rank != rank || t.caps.size != t.n)
        fail("query: rank/size %u/%u, expected %u/%u", t.caps.rank, t.caps.size, rank, t.n);
    if (o->progress_thread && !t.caps.progress_thread)
        fail("progress thread requested but not reported running");
    if (rank == 0)
        printf("PASS ops_tables_have_no_null_entry\n"
               "caps: backend=%s ranks=%u atomics=%s needs_target_progress=%d "
               "thread_mode=%s serialized_by_rdlm=%d progress_thread=%d am_max=%zu "
               "peer_failure=%d\n",
               t.caps.backend, t.n, rdlm_tl_atomic_domain_str(t.caps.atomic_domain),
               t.caps.amo_needs_target_progress,
               t.caps.thread_mode == RDLM_TL_THREAD_MULTI ? "multi" : "single",
               t.caps.serialized_by_rdlm, t.caps.progress_thread, t.caps.am_max_payload,
               (t.caps.flags & RDLM_TL_CAP_PEER_FAILURE) != 0);
    if (o->victim >= 0) {
        tl_dead_peer_run(&t, &o->dead); /* destroys the context; the victim ends there */
        rdlm_tl_boot_tcp_destroy(boot);
        return 0;
    }

    /* Rank 0's region (allocated by the transport, so shared-memory atomics work) and
     * its key, published to all. */
    if (rank == 0) {
        CHECK_OK(t.ctx->mem->reg(t.ctx, NULL, REGION_BYTES, &t.mem));
        CHECK_OK(t.ctx->mem->rkey_pack(t.ctx, t.mem, mykey, sizeof(mykey), &klen));
    }
    keys = malloc((size_t)RDLM_TL_RKEY_MAX * t.n);
    if (keys == NULL)
        fail("out of memory");
    CHECK_OK(t.b->allgather(t.b->arg, mykey, keys, RDLM_TL_RKEY_MAX, &t.idle));
    CHECK_OK(t.ctx->mem->rkey_unpack(t.ctx, 0, keys, RDLM_TL_RKEY_MAX, &t.rk));
    t.active = rank != 0 || (t.caps.flags & RDLM_TL_CAP_LOOPBACK);
    t.writers = (t.caps.flags & RDLM_TL_CAP_LOOPBACK) ? t.n : t.n - 1;
    if (!(t.caps.flags & RDLM_TL_CAP_LOOPBACK) && rank == 0)
        printf("SKIP (capability) loopback: rank 0 does not reach its own region through "
               "the transport and takes no part in remote operations\n");

    if (o->busy_ms > 0) {
        test_busy_target(&t);
    } else if (t.caps.flags & RDLM_TL_CAP_AMO64) {
        test_fetching_old_values(&t);
        tl_checks_fadd_hammer(&t, o->iters);
        test_posted_fadd(&t);
        tl_checks_cswap_increment(&t);
        test_fetch_or(&t);
        test_posted_cswap(&t);
        test_posted_cswap_by_thread(&t);
    } else if (rank == 0) {
        printf("SKIP (capability) atomics: no remote 64-bit atomics\n");
    }
    if (o->busy_ms == 0) {
        tl_checks_put_get(&t);
        test_am(&t);
        test_bad_keys(&t, keys);
    }

    rdlm_tl_stats_read(t.ctx, &stats);
    printf("rank %u stats: amo=%" PRIu64 " puts=%" PRIu64 " gets=%" PRIu64
           " am_sent=%" PRIu64 " am_recv=%" PRIu64 " progress=%" PRIu64 "\n",
           rank, stats.amo, stats.puts, stats.gets, stats.am_sent, stats.am_recv,
           stats.progress);

    CHECK_OK(t.ctx->mem->rkey_release(t.ctx, t.rk));
    tl_checks_barrier(&t); /* nobody touches rank 0's region any more */
    if (rank == 0)
        CHECK_OK(t.ctx->mem->dereg(t.ctx, t.mem));
    /* A region left registered: destroy must release it (UCX aborts otherwise). */
    CHECK_OK(t.ctx->mem->reg(t.ctx, NULL, 4096, &t.mem));
    rdlm_tl_destroy(t.ctx);
    rdlm_tl_boot_tcp_destroy(boot);
    free(keys);
    (void)klen;
    return 0;
}

/* ---- the launcher ------------------------------------------------------------------------ */

static void usage(void)
{
    fprintf(stderr, "usage: tl_conformance --backend NAME [--procs N] [--iters N] "
                    "[--am-msgs N] [--progress-thread] [--busy-target-ms MS]\n"
                    "                      [--dead-peer VICTIM [--victim-stops] "
                    "[--bound-ms MS]]\n"
                    "                      [--timeout-sec S] [--rank R --size N "
                    "--connect ADDR:PORT]\n"
                    "       tl_conformance --missing-rank --procs N (>= 3) "
                    "[--timeout-sec S]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    opts_t o = {.backend = NULL,
                .procs = 2,
                .iters = 1000,
                .am_msgs = 50,
                .timeout_sec = 100,
                .rank = -1,
                .victim = -1,
                .dead = {.bound_ms = 10000}};
    const char *connect = NULL;
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t salen = sizeof(sa);
    pid_t *pids;
    int lfd, i, failed = 0, skipped = 0, passed = 0;
    uint64_t deadline;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc)
            o.backend = argv[++i];
        else if (strcmp(argv[i], "--procs") == 0 && i + 1 < argc)
            o.procs = (unsigned)atoi(argv[++i]);
        else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc)
            o.iters = (unsigned)atoi(argv[++i]);
        else if (strcmp(argv[i], "--am-msgs") == 0 && i + 1 < argc)
            o.am_msgs = (unsigned)atoi(argv[++i]);
        else if (strcmp(argv[i], "--timeout-sec") == 0 && i + 1 < argc)
            o.timeout_sec = (unsigned)atoi(argv[++i]);
        else if (strcmp(argv[i], "--progress-thread") == 0)
            o.progress_thread = 1;
        else if (strcmp(argv[i], "--missing-rank") == 0)
            o.missing_rank = 1;
        else if (strcmp(argv[i], "--busy-target-ms") == 0 && i + 1 < argc)
            o.busy_ms = (unsigned)atoi(argv[++i]);
        else if (strcmp(argv[i], "--dead-peer") == 0 && i + 1 < argc)
            o.victim = atoi(argv[++i]);
        else if (strcmp(argv[i], "--victim-stops") == 0)
            o.dead.stop = 1;
        else if (strcmp(argv[i], "--bound-ms") == 0 && i + 1 < argc)
            o.dead.bound_ms = (unsigned)atoi(argv[++i]);
        else if (strcmp(argv[i], "--rank") == 0 && i + 1 < argc)
            o.rank = atoi(argv[++i]);
        else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc)
            o.procs = (unsigned)atoi(argv[++i]);
        else if (strcmp(argv[i], "--connect") == 0 && i + 1 < argc)
            connect = argv[++i];
        else
            usage();
    }
    if (o.victim >= 0)
        o.dead.victim = (unsigned)o.victim;
    if (o.rank >= 0 || connect != NULL) {
        /* One rank in this process: the caller starts the others (netns_pair.sh). */
        static char host[64];
        const char *colon = connect ? strrchr(connect, ':') : NULL;
        long port = colon ? strtol(colon + 1, NULL, 10) : 0;

        if (o.backend == NULL || o.missing_rank || o.rank < 0 || o.procs < 1 ||
            o.procs > 64 || (unsigned)o.rank >= o.procs || o.timeout_sec == 0 ||
            colon == NULL || (size_t)(colon - connect) >= sizeof(host) || port <= 0 ||
            port > 65535)
            usage();
        memcpy(host, connect, (size_t)(colon - connect));
        host[colon - connect] = '\0';
        o.host = host;
        o.port = (uint16_t)port;
        return run_rank(&o, (unsigned)o.rank, -1, o.host, o.port);
    }
    if (o.missing_rank)
        o.backend = "none";
    if (o.backend == NULL || o.procs < 1 || (o.missing_rank && o.procs < 3) || o.procs > 64 || o.timeout_sec == 0)
        usage();

    /* The rendezvous socket exists before any rank does: no port race. */
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    lfd = socket(AF_INET, SOCK_STREAM, 0);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
        listen(lfd, 64) != 0 || getsockname(lfd, (struct sockaddr *)&sa, &salen) != 0) {
        perror("tl_conformance: rendezvous socket");
        return 1;
    }
    fflush(stdout);
    pids = calloc(o.procs, sizeof(*pids));
    for (i = 0; i < (int)o.procs - o.missing_rank; i++) {
        pids[i] = fork();
        if (pids[i] < 0) {
            perror("fork");
            return 1;
        }
        if (pids[i] == 0) {
            int rc = o.missing_rank ? run_missing(&o, (unsigned)i, lfd, ntohs(sa.sin_port))
                                    : run_rank(&o, (unsigned)i, lfd, "127.0.0.1",
                                               ntohs(sa.sin_port));
            free(pids); /* the parent's bookkeeping, inherited */
            exit(rc);   /* not _exit: LeakSanitizer checks the rank at exit */
        }
    }
    close(lfd);
    /* Reap with a deadline a little beyond the ranks' own. */
    deadline = rdlm_clock_deadline((uint64_t)(o.timeout_sec + 10) * 1000000000u);
    for (int left = (int)o.procs - o.missing_rank; left > 0;) {
        int status;
        pid_t p = waitpid(-1, &status, WNOHANG);

        if (p == 0) {
            if (rdlm_clock_now_ns() > deadline) {
                fprintf(stderr, "tl_conformance: ranks overran; killing them\n");
                for (i = 0; i < (int)o.procs; i++)
                    if (pids[i] > 0)
                        kill(pids[i], SIGKILL);
                failed++;
                deadline = UINT64_MAX;
            }
            nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
            continue;
        }
        if (p < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (i = 0; i < (int)o.procs && pids[i] != p; i++) {
        }
        if (i < (int)o.procs)
            pids[i] = 0;
        left--;
        if (i == o.victim && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
            passed++; /* dead_peer_reported's victim: that end is its success */
        else if (i != o.victim && WIFEXITED(status) && WEXITSTATUS(status) == 0)
            passed++;
        else if (WIFEXITED(status) && WEXITSTATUS(status) == SKIP_CODE)
            skipped++;
        else {
            failed++;
            fprintf(stderr, "tl_conformance: a rank %s %d\n",
                    WIFEXITED(status) ? "exited with" : "died of signal",
                    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
            /* The others would wait for it in a collective until their timeout. */
            for (i = 0; i < (int)o.procs && !o.missing_rank; i++)
                if (pids[i] > 0)
                    kill(pids[i], SIGTERM);
        }
    }
    free(pids);
    if (failed) {
        printf("tl_conformance %s x%u: FAILED\n", o.backend, o.procs);
        return 1;
    }
    if (skipped) {
        printf("tl_conformance %s x%u: SKIPPED\n", o.backend, o.procs);
        return SKIP_CODE;
    }
    printf("tl_conformance %s x%u: all %d ranks passed\n", o.backend, o.procs, passed);
    return 0;
}
