/*
 * Timed-out waiters leave nothing behind: P processes of one node take one lock (or
 * the write side of one reader-writer lock) with random timeouts of 0-299 us, many of
 * which expire while queued, for N rounds each; then, once all are done, every
 * process must take the free lock within 2 s. Each timed-out FIFO waiter left a
 * ticket that a later waiter passed over only after a sleep slice (20 ms) each: after
 * a few hundred timeouts the free lock could not be taken for many seconds (an outside
 * user's program under mpirun -np 4: 4 of 5 runs, query saying held=0 waiters=0).
 * The processes start the rounds together and take the lock at the end one at a time.
 *
 *   rdlm_short_timeouts --kind fifo|mutex|rwlock [--procs P] [--rounds N]
 *
 * Exit 0: every process took the lock at the end within 2 s and every section was
 * exclusive; 1 otherwise (the reason on stderr).
 */
#include <rdlm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stress_util.h"

#define HOLD_NS 50000u /* a critical section: 50 us */

typedef struct shared {
    volatile int inside, overlaps;
    int ready, done, turn, timeouts;
} shared_t;

typedef struct child_arg {
    shared_t *sh;
    const char *job, *kind;
    int id, procs, rounds;
} child_arg_t;

static rdlm_status_t take(const char *kind, rdlm_lock_h l, rdlm_rwlock_h rw,
                          uint64_t timeout_ns)
{
    uint64_t token;

    return strcmp(kind, "rwlock") == 0 ? rdlm_rwlock_write_acquire(rw, timeout_ns, &token)
                                       : rdlm_lock_acquire(l, timeout_ns, &token);
}

static void give(const char *kind, rdlm_lock_h l, rdlm_rwlock_h rw)
{
    if (strcmp(kind, "rwlock") == 0)
        rdlm_rwlock_write_release(rw);
    else
        rdlm_lock_release(l);
}

static int child(void *p)
{
    child_arg_t *a = p;
    rdlm_ctx_params_t cp = {.field_mask = RDLM_CTX_FIELD_JOB, .job = a->job};
    rdlm_lock_params_t lp = {.field_mask = RDLM_LOCK_FIELD_ORDER,
                             .order = strcmp(a->kind, "fifo") == 0 ? RDLM_LOCK_ORDER_FIFO
                                                                   : RDLM_LOCK_ORDER_DEFAULT};
    unsigned seed = (unsigned)a->id * 7919u + 1u;
    rdlm_lock_h l = NULL;
    rdlm_rwlock_h rw = NULL;
    rdlm_ctx_h ctx;
    rdlm_status_t s;
    uint64_t t0;

    if (rdlm_ctx_create(&cp, &ctx) != RDLM_OK || rdlm_lock_open_params(ctx, "st", &lp, &l) ||
        rdlm_rwlock_open(ctx, "st-rw", &rw) != RDLM_OK)
        return 2;
    /* Start together (bounded: the parent's deadline kills a straggler). */
    __atomic_fetch_add(&a->sh->ready, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&a->sh->ready, __ATOMIC_SEQ_CST) < a->procs)
        usleep(100);
    int timeouts = a->rounds;

    for (int i = 0; i < a->rounds; i++) {
        s = take(a->kind, l, rw, (uint64_t)(rand_r(&seed) % 300) * 1000u);
        if (s == RDLM_OK) {
            uint64_t until = stress_now_ns() + HOLD_NS;

            if (__atomic_fetch_add(&a->sh->inside, 1, __ATOMIC_SEQ_CST) != 0)
                __atomic_fetch_add(&a->sh->overlaps, 1, __ATOMIC_SEQ_CST);
            while (stress_now_ns() < until) /* others' short timeouts expire meanwhile */
                ;
            __atomic_fetch_sub(&a->sh->inside, 1, __ATOMIC_SEQ_CST);
            timeouts--;
            give(a->kind, l, rw);
        } else if (s != RDLM_ERR_TIMEOUT && s != RDLM_ERR_BUSY) {
            fprintf(stderr, "process %d: %s\n", a->id, rdlm_status_name(s));
            return 1;
        }
    }
    __atomic_fetch_add(&a->sh->timeouts, timeouts, __ATOMIC_SEQ_CST);
    /* Everyone done (bounded as above). */
    __atomic_fetch_add(&a->sh->done, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&a->sh->done, __ATOMIC_SEQ_CST) < a->procs)
        usleep(1000);
    /* One at a time, as a program's ranks in turn: nobody else waits to pass over
     * what the timed-out waiters left. */
    while (__atomic_load_n(&a->sh->turn, __ATOMIC_SEQ_CST) != a->id)
        usleep(1000);
    t0 = stress_now_ns();
    s = take(a->kind, l, rw, 2 * STRESS_NSEC_PER_SEC);
    __atomic_fetch_add(&a->sh->turn, 1, __ATOMIC_SEQ_CST);
    if (s != RDLM_OK) {
        fprintf(stderr, "process %d: the free %s lock after %d rounds of short timeouts: "
                        "%s after %.3f s\n",
                a->id, a->kind, a->rounds, rdlm_status_name(s),
                (double)(stress_now_ns() - t0) / 1e9);
        return 1;
    }
    if (stress_now_ns() - t0 > 100 * STRESS_NSEC_PER_MSEC)
        fprintf(stderr, "process %d: the free lock took %.3f s\n", a->id,
                (double)(stress_now_ns() - t0) / 1e9);
    give(a->kind, l, rw);
    rdlm_ctx_destroy(ctx);
    return 0;
}

int main(int argc, char **argv)
{
    const char *kind = "fifo";
    int procs = 4, rounds = 400, failed;
    char job[40];
    pid_t pids[64];
    child_arg_t args[64];
    shared_t *sh;

    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--kind") == 0)
            kind = argv[i + 1];
        else if (strcmp(argv[i], "--procs") == 0)
            procs = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--rounds") == 0)
            rounds = atoi(argv[i + 1]);
    }
    if (procs < 2 || procs > 64 || rounds < 1 ||
        (strcmp(kind, "fifo") && strcmp(kind, "mutex") && strcmp(kind, "rwlock"))) {
        fprintf(stderr, "usage: %s --kind fifo|mutex|rwlock [--procs 2..64] [--rounds N]\n",
                argv[0]);
        return 2;
    }
    sh = stress_shared_alloc(sizeof(*sh));
    stress_job_name(job, sizeof(job), "short-to");
    for (int i = 0; i < procs; i++) {
        args[i] = (child_arg_t){.sh = sh, .job = job, .kind = kind, .id = i,
                                .procs = procs, .rounds = rounds};
        pids[i] = stress_fork(child, &args[i]);
    }
    failed = stress_reap_all(pids, procs, 60);
    if (sh->overlaps != 0) {
        fprintf(stderr, "FAILED: %d overlapping critical sections\n", sh->overlaps);
        failed = 1;
    }
    stress_segment_cleanup(job);
    printf("short_timeouts: %s lock, %d processes x %d rounds, %d timed out: %s\n", kind,
           procs, rounds, sh->timeouts,
           failed ? "FAILED" : "every process took the free lock at the end");
    return failed;
}
