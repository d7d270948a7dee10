/*
 * A FIFO waiter that gives up does not leave the next waiter asleep: holder H takes a
 * FIFO lock; K waiters queue in turn with a 300 ms timeout and give up while H holds
 * it; waiter B, queued behind them with no timeout, has gone to sleep (its context's
 * parks, read by a thread of its process). Then H releases: the lock reaches the
 * first abandoned ticket, and B must have it within
 * 1000 ms although its sleep slice is 2000 ms (RDLM_PARK_SLICE_MS, set here): before
 * the release passed over tickets marked left, nobody took the lock until B's slice
 * ended (an outside user: 13-33 ms with the default 20 ms slice).
 *
 *   rdlm_left_ticket [--left K]      (K = 1..8, default 1)
 *
 * Exit 0: B took the lock within 1000 ms of H's release and every waiter that gave
 * up got RDLM_ERR_TIMEOUT; 1 otherwise (the reason on stderr). Bounded: the parent
 * kills what still runs after 30 s.
 */
#include <pthread.h>
#include <rdlm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stress_util.h"

#define SLICE_MS "2000"
#define GIVE_UP_NS (300 * STRESS_NSEC_PER_MSEC)
#define BOUND_NS (1000 * STRESS_NSEC_PER_MSEC)
#define MAX_LEFT 8

typedef struct shared {
    int held, gave_up, b_parked;
    uint64_t released_ns, got_ns;
} shared_t;

typedef struct child_arg {
    shared_t *sh;
    const char *job;
    int role; /* 0: H, 1..K: the waiters that give up, K + 1: B */
    int left;
    rdlm_ctx_h ctx;
} child_arg_t;

static int load_int(const int *p)
{
    return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

/* Wait until the lock has `n` queued live waiters (bounded by the parent). */
static void wait_waiters(rdlm_lock_h l, uint32_t n)
{
    rdlm_lock_info_t info;

    while (rdlm_lock_query(l, &info) != RDLM_OK || info.waiters != n)
        usleep(1000);
}

/* In B's process, beside B's acquire: say when B has gone to sleep. */
static void *watch_parks(void *p)
{
    child_arg_t *a = p;
    rdlm_stats_t st;

    while (__atomic_load_n(&a->sh->got_ns, __ATOMIC_SEQ_CST) == 0) {
        if (rdlm_ctx_stats(a->ctx, &st) == RDLM_OK && st.parks > 0)
            __atomic_store_n(&a->sh->b_parked, 1, __ATOMIC_SEQ_CST);
        usleep(1000);
    }
    return NULL;
}

static int holder(shared_t *sh, rdlm_lock_h l, int left)
{
    if (rdlm_lock_acquire(l, RDLM_TIMEOUT_INFINITE, NULL) != RDLM_OK)
        return 1;
    __atomic_store_n(&sh->held, 1, __ATOMIC_SEQ_CST);
    /* Every waiter that gives up has given up, and B (queued behind them) sleeps. */
    while (load_int(&sh->gave_up) < left || !load_int(&sh->b_parked))
        usleep(1000);
    wait_waiters(l, 1);
    __atomic_store_n(&sh->released_ns, stress_now_ns(), __ATOMIC_SEQ_CST);
    return rdlm_lock_release(l) == RDLM_OK ? 0 : 1;
}

static int child(void *p)
{
    child_arg_t *a = p;
    rdlm_ctx_params_t cp = {.field_mask = RDLM_CTX_FIELD_JOB, .job = a->job};
    rdlm_lock_params_t lp = {.field_mask = RDLM_LOCK_FIELD_ORDER,
                             .order = RDLM_LOCK_ORDER_FIFO};
    rdlm_lock_h l;
    rdlm_ctx_h ctx;
    rdlm_status_t s;
    pthread_t watcher;
    int rc = 0;

    if (rdlm_ctx_create(&cp, &ctx) != RDLM_OK || rdlm_lock_open_params(ctx, "lt", &lp, &l))
        return 2;
    a->ctx = ctx;
    if (a->role == 0) {
        rc = holder(a->sh, l, a->left);
    } else {
        while (!load_int(&a->sh->held))
            usleep(1000);
        wait_waiters(l, (uint32_t)(a->role - 1)); /* queue in turn: tickets in order */
        if (a->role <= a->left) {
            s = rdlm_lock_acquire(l, GIVE_UP_NS, NULL);
            if (s != RDLM_ERR_TIMEOUT) {
                fprintf(stderr, "waiter %d: %s, expected RDLM_ERR_TIMEOUT\n", a->role,
                        rdlm_status_name(s));
                rc = 1;
            }
            __atomic_fetch_add(&a->sh->gave_up, 1, __ATOMIC_SEQ_CST);
        } else {
            if (pthread_create(&watcher, NULL, watch_parks, a) != 0)
                return 2;
            s = rdlm_lock_acquire(l, RDLM_TIMEOUT_INFINITE, NULL);
            __atomic_store_n(&a->sh->got_ns, stress_now_ns(), __ATOMIC_SEQ_CST);
            pthread_join(watcher, NULL);
            if (s != RDLM_OK) {
                fprintf(stderr, "B: %s\n", rdlm_status_name(s));
                rc = 1;
            } else {
                rdlm_lock_release(l);
            }
        }
    }
    rdlm_ctx_destroy(ctx);
    return rc;
}

int main(int argc, char **argv)
{
    int left = 1, failed, n;
    char job[40];
    pid_t pids[MAX_LEFT + 2];
    child_arg_t args[MAX_LEFT + 2];
    shared_t *sh;
    double after_ms;

    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--left") == 0)
            left = atoi(argv[i + 1]);
    }
    if (left < 1 || left > MAX_LEFT) {
        fprintf(stderr, "usage: %s [--left 1..%d]\n", argv[0], MAX_LEFT);
        return 2;
    }
    setenv("RDLM_PARK_SLICE_MS", SLICE_MS, 1);
    sh = stress_shared_alloc(sizeof(*sh));
    stress_job_name(job, sizeof(job), "left");
    n = left + 2;
    for (int i = 0; i < n; i++) {
        args[i] = (child_arg_t){.sh = sh, .job = job, .role = i, .left = left};
        pids[i] = stress_fork(child, &args[i]);
    }
    failed = stress_reap_all(pids, n, 30);
    after_ms = sh->got_ns > sh->released_ns && sh->released_ns != 0
                   ? (double)(sh->got_ns - sh->released_ns) / 1e6
                   : -1.0;
    if (!failed && (after_ms < 0 || after_ms > BOUND_NS / 1e6)) {
        fprintf(stderr,
                "FAILED: B took the lock %.3f ms after the release (bound %.0f ms; "
                "sleep slice " SLICE_MS " ms): the lock went to an abandoned ticket "
                "and B slept on\n",
                after_ms, BOUND_NS / 1e6);
        failed = 1;
    }
    stress_segment_cleanup(job);
    printf("left_ticket: %d waiter(s) gave up, B took the lock %.3f ms after the release: "
           "%s\n",
           left, after_ms, failed ? "FAILED" : "ok");
    return failed;
}
