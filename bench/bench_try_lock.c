/*
 * try-lock: one attempt to take a lock, rdlm_lock_acquire(lock, 0, &token), against
 * pthread_mutex_trylock on a process-shared mutex. Two cases: the lock is free (the
 * attempt succeeds and is released: us per try+release) and another process holds it
 * (the attempt fails, RDLM_ERR_BUSY / EBUSY: us per failed try). Target (issue 18): a
 * failed try <= 1.5x pthread_mutex_trylock.
 *
 *   free:  1 process    x warm-up, then i x { try_acquire -> taken; release }
 *   held:  rank 1 acquires, passes the start barrier and sleeps until rank 0 is done;
 *          rank 0 after the barrier: x warm-up, then i x { try_acquire -> busy }
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "benchmarks.h"
#include "clock.h"
#include "lock_bench.h"
#include "rounds.h"

#define RDLM_BENCH_TRY_ITERATIONS 1000000u
#define RDLM_BENCH_TRY_WARMUP 10000u
#define RDLM_BENCH_TRY_POLL_NS 200000 /* the holder's sleep between looks at done */

static const rdlm_bench_lock_ops_t *const rdlm_bench_try_impls[] = {&rdlm_bench_lock_rdlm,
                                                                    &rdlm_bench_lock_pmutex};
#define RDLM_BENCH_TRY_NIMPL (sizeof(rdlm_bench_try_impls) / sizeof(rdlm_bench_try_impls[0]))

typedef struct rdlm_bench_try_arg {
    rdlm_bench_lock_arg_t lock; /* first: the lock helpers read it */
    int held;                   /* 1: rank 1 holds the lock, every try must fail */
} rdlm_bench_try_arg_t;

/* After the lock's data: rank 0 raises done when it finished trying. */
typedef struct rdlm_bench_try_flag {
    _Alignas(64) _Atomic uint32_t done;
} rdlm_bench_try_flag_t;

static rdlm_bench_try_flag_t *rdlm_bench_try_flag(void *data, const rdlm_bench_try_arg_t *a)
{
    return (rdlm_bench_try_flag_t *)((char *)data + rdlm_bench_lock_data_size(&a->lock));
}

/* n single attempts, each expected to find the lock busy (held) or to take it, then
 * released: 0, or -1 after recording why. */
static int rdlm_bench_try_calls(rdlm_bench_worker_t *w, const rdlm_bench_lock_ops_t *ops,
                                void *lock, uint64_t n, int held)
{
    uint64_t k;
    int busy;
    int rc;

    for (k = 0; k < n; k++) {
        if ((rc = ops->try_acquire(lock, &busy)) != 0) {
            return rdlm_bench_lock_failed(w, "try_acquire", rc);
        }
        if (busy != held) {
            return rdlm_bench_worker_fail(w, "%s try_acquire: %s, expected %s", ops->name,
                                          busy ? "busy" : "taken", held ? "busy" : "taken");
        }
        if (!busy && (rc = ops->release(lock)) != 0) {
            return rdlm_bench_lock_failed(w, "release", rc);
        }
    }
    return 0;
}

/* Rank 1 of the held case: hold the lock until rank 0 is done. */
static int rdlm_bench_try_hold(rdlm_bench_worker_t *w, const rdlm_bench_try_arg_t *a,
                               void *lock)
{
    const struct timespec poll = {.tv_nsec = RDLM_BENCH_TRY_POLL_NS};
    rdlm_bench_try_flag_t *f = rdlm_bench_try_flag(w->data, a);
    int rc;

    if ((rc = a->lock.ops->acquire(lock, NULL)) != 0) {
        return rdlm_bench_lock_failed(w, "acquire", rc);
    }
    if (rdlm_bench_worker_start(w) == 0) {
        while (!atomic_load_explicit(&f->done, memory_order_acquire)) {
            nanosleep(&poll, NULL);
        }
        rdlm_bench_worker_end(w, 0);
    }
    if ((rc = a->lock.ops->release(lock)) != 0) {
        return rdlm_bench_lock_failed(w, "release", rc);
    }
    return 0;
}

/* Rank 0: warm up, then time the tries itself (values[0] = ns), so the holder's
 * polling does not count. In the held case the warm-up waits for the barrier. */
static int rdlm_bench_try_measure(rdlm_bench_worker_t *w, const rdlm_bench_try_arg_t *a,
                                  void *lock)
{
    const rdlm_bench_lock_ops_t *ops = a->lock.ops;
    uint64_t t0;
    int rc = -1;

    if (!a->held && rdlm_bench_try_calls(w, ops, lock, a->lock.warmup, 0) != 0) {
        goto out_done;
    }
    if (rdlm_bench_worker_start(w) != 0) {
        goto out_done;
    }
    if (a->held && rdlm_bench_try_calls(w, ops, lock, a->lock.warmup, 1) != 0) {
        goto out_done;
    }
    t0 = rdlm_bench_now_ns();
    if (rdlm_bench_try_calls(w, ops, lock, a->lock.iterations, a->held) != 0) {
        goto out_done;
    }
    w->slot->values[0] = (double)(rdlm_bench_now_ns() - t0);
    rdlm_bench_worker_end(w, a->lock.iterations);
    rc = 0;
out_done:
    atomic_store_explicit(&rdlm_bench_try_flag(w->data, a)->done, 1, memory_order_release);
    return rc;
}

static int rdlm_bench_try_body(rdlm_bench_worker_t *w)
{
    const rdlm_bench_try_arg_t *a = w->arg;
    void *lock;
    int rc;

    if (rdlm_bench_lock_attach(w, &lock) != 0) {
        return -1;
    }
    rc = w->rank == 0 ? rdlm_bench_try_measure(w, a, lock) : rdlm_bench_try_hold(w, a, lock);
    a->lock.ops->detach(lock);
    return rc;
}

typedef struct rdlm_bench_try_ctx {
    rdlm_bench_report_t *report;
    /* [held * NIMPL + impl] */
    rdlm_bench_measure_t *measure[2 * RDLM_BENCH_TRY_NIMPL];
    uint64_t iterations;
    uint64_t warmup;
} rdlm_bench_try_ctx_t;

/* slot: held * NIMPL + impl, so each round alternates over both cases too. */
static int rdlm_bench_try_round(uint32_t slot, uint32_t round, void *ctx)
{
    rdlm_bench_try_ctx_t *c = ctx;
    rdlm_bench_try_arg_t arg = {
        .lock = {.ops = rdlm_bench_try_impls[slot % RDLM_BENCH_TRY_NIMPL],
                 .iterations = c->iterations,
                 .warmup = c->warmup},
        .held = slot >= RDLM_BENCH_TRY_NIMPL,
    };
    rdlm_bench_run_params_t p = {
        .nprocs = arg.held ? 2 : 1,
        .body = rdlm_bench_try_body,
        .verbose = c->report->opts->verbose,
    };
    rdlm_bench_outcome_t out;
    double us;

    if (rdlm_bench_lock_run(&p, &arg, sizeof(rdlm_bench_try_flag_t), &out) != 0) {
        return -1;
    }
    us = out.slots[0].values[0] / (double)c->iterations / 1000.0;
    rdlm_bench_measure_round(c->measure[slot], us, NULL);
    rdlm_bench_report_round(c->report, round, "%-14s %s %.4f us per call\n",
                            arg.lock.ops->name, arg.held ? "held" : "free", us);
    rdlm_bench_outcome_free(&out);
    return 0;
}

static int rdlm_bench_try_run(rdlm_bench_report_t *r)
{
    const rdlm_bench_opts_t *o = r->opts;
    const char *bench = rdlm_bench_def_try_lock.name;
    rdlm_bench_try_ctx_t c = {
        .report = r,
        .iterations = rdlm_bench_opts_iterations(o, RDLM_BENCH_TRY_ITERATIONS),
        .warmup = rdlm_bench_opts_warmup(o, RDLM_BENCH_TRY_WARMUP),
    };

    rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_PARAMS,
                           "%" PRIu64 " attempts after %" PRIu64 " warm-up, %u rounds; us "
                           "per call; free: 1 process, try+release; held: another process "
                           "holds the lock, the try fails (busy)",
                           c.iterations, c.warmup, o->rounds);
    if (rdlm_bench_lock_measures(r, bench, "try+release (free)", rdlm_bench_try_impls,
                                 RDLM_BENCH_TRY_NIMPL, 1, "us", c.measure) != 0 ||
        rdlm_bench_lock_measures(r, bench, "failed try (held)", rdlm_bench_try_impls,
                                 RDLM_BENCH_TRY_NIMPL, 2, "us",
                                 &c.measure[RDLM_BENCH_TRY_NIMPL]) != 0 ||
        rdlm_bench_alternate(2 * RDLM_BENCH_TRY_NIMPL, o->rounds, rdlm_bench_try_round,
                             &c) != 0) {
        return -1;
    }
    rdlm_bench_measures_finish(c.measure, 2 * RDLM_BENCH_TRY_NIMPL);
    /* [0] rdlm free, [1] pthread_mutex free, [2] rdlm held, [3] pthread_mutex held */
    rdlm_bench_report_compare(r, c.measure[0], c.measure[1], NULL, RDLM_BENCH_TARGET_NONE, 0);
    rdlm_bench_report_compare(r, c.measure[2], c.measure[3], NULL, RDLM_BENCH_TARGET_AT_MOST,
                              1.5);
    return 0;
}

const rdlm_bench_def_t rdlm_bench_def_try_lock = {
    .name = "try-lock",
    .title = "one-attempt acquire, free and held: rdlm vs pshared pthread_mutex_trylock",
    .run = rdlm_bench_try_run,
};
