/*
 * What the lock benchmarks share: their parameters, the layout of the data mapping
 * (the lock's words, then the critical section's own cache line), the per-worker
 * attach that turns adapter errors into worker failures, the measured steps their
 * loops are made of (inline: they are the hot path), and the bodies that run the
 * workloads of workload.h (uncontended pairs; a window of contended sections) over
 * the adapters.
 *
 *   data mapping:  [ lock words (ops->shared_size), padded ][ cs: 1 cache line ]
 */
#ifndef RDLM_BENCH_LOCK_BENCH_H
#define RDLM_BENCH_LOCK_BENCH_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "clock.h"
#include "lock_ops.h"
#include "report.h"
#include "workers.h"

/** Parameters of one lock measurement (copied into the workers by fork). */
typedef struct rdlm_bench_lock_arg {
    const rdlm_bench_lock_ops_t *ops;
    uint64_t iterations; /**< measured iterations (iteration-bound benchmarks) */
    uint64_t warmup;     /**< warm-up iterations per worker */
    uint32_t permits;    /**< a semaphore's (CAP_PERMITS), set by data_init */
    /* rdlm_bench_lock_pairs_body */
    uint32_t batch;  /**< pairs per timed batch (a sample each; 0 is 1) */
    uint64_t cap_ns; /**< end the measurement after this long (0: never) */
    /* the window bodies */
    uint64_t sample_mask; /**< time the acquire when (ops & mask) == 0 (0: all) */
} rdlm_bench_lock_arg_t;

/** The state the critical section protects: plain, non-atomic, one cache line. The
 *  final counter must equal the number of critical sections run (a lost-update
 *  check on every implementation, baselines included). */
typedef struct rdlm_bench_cs {
    _Alignas(64) uint64_t counter;
    uint64_t last_rank;
    _Atomic uint32_t inside;     /**< semaphores: holders inside now (sem) */
    _Atomic uint32_t max_inside; /**< and the most ever at once */
} rdlm_bench_cs_t;

/** Bytes of the data mapping for these parameters. */
size_t rdlm_bench_lock_data_size(const rdlm_bench_lock_arg_t *arg);

/** data_init / data_fini for rdlm_bench_run_params_t (arg is rdlm_bench_lock_arg_t). */
int rdlm_bench_lock_data_init(void *data, const void *arg);
void rdlm_bench_lock_data_fini(void *data, const void *arg);

/** The critical section's cache line inside the data mapping. */
rdlm_bench_cs_t *rdlm_bench_lock_cs(void *data, const rdlm_bench_lock_arg_t *arg);

/** Attach this worker to the lock; on error records it in the slot and returns -1. */
int rdlm_bench_lock_attach(rdlm_bench_worker_t *w, void **lock_p);

/** Record a failed acquire/release in the slot; returns -1. */
int rdlm_bench_lock_failed(rdlm_bench_worker_t *w, const char *what, int code);

/** data_check of the contended benchmarks: the counter must equal the critical
 *  sections run, every worker's ops plus its warm-up (which it keeps in values[0]);
 *  a lock that let two holders in at once loses increments. */
int rdlm_bench_lock_check(void *data, const void *arg, const rdlm_bench_outcome_t *out,
                          char *why, size_t whylen);

/** The counter check itself: 0 if the critical section's counter equals expected,
 *  else -1 with why filled (names the implementation). */
int rdlm_bench_lock_check_count(void *data, const void *arg, uint64_t expected, char *why,
                                size_t whylen);

/** The uncontended workload (arg is rdlm_bench_lock_arg_t): warm-up pairs, then
 *  iterations acquire+release pairs in batches (rdlm_bench_batches), every full
 *  batch's time a sample, until done or cap_ns; rdlm's statistics over the measured
 *  phase. ops = pairs. */
int rdlm_bench_lock_pairs_body(rdlm_bench_worker_t *w);

/** The contended workload (arg is rdlm_bench_lock_arg_t): warm-up sections, then
 *  sections (rdlm_bench_window: acquire, rdlm_bench_cs_enter, release, local work)
 *  until the stop flag, the acquire timed when (ops & sample_mask) == 0 (0: every
 *  one); ops = sections. values: [0] warm-up sections, [1] local work's result, [2]
 *  hand-offs, [3] longest timed wait ns. rdlm's statistics as above. */
int rdlm_bench_lock_window_body(rdlm_bench_worker_t *w);
/** The same without the local work (a section costs a service's round trips). */
int rdlm_bench_lock_bare_window_body(rdlm_bench_worker_t *w);
/** The window body on a semaphore (CAP_PERMITS): its sections count the holders
 *  inside (rdlm_bench_cs_permit) instead of the counter; hand-offs are 0. */
int rdlm_bench_lock_permit_window_body(rdlm_bench_worker_t *w);

/** rdlm_bench_run of p with arg (an rdlm_bench_lock_arg_t, or a struct that starts
 *  with one) and the lock benchmarks' data mapping, then extra bytes: p's data_size,
 *  data_init, data_fini and arg are set here. */
int rdlm_bench_lock_run(rdlm_bench_run_params_t *p, const void *arg, size_t extra,
                        rdlm_bench_outcome_t *out_p);

/** m[k] = a measurement of impls[k] (bench, metric, procs, unit) for k < n: 0, or -1
 *  when the table is full. */
int rdlm_bench_lock_measures(rdlm_bench_report_t *r, const char *bench, const char *metric,
                             const rdlm_bench_lock_ops_t *const *impls, uint32_t n,
                             uint32_t procs, const char *unit, rdlm_bench_measure_t **m);

/** The sum of values[k] over the workers of out. */
double rdlm_bench_outcome_sum(const rdlm_bench_outcome_t *out, uint32_t k);

#define RDLM_BENCH_LOCAL_WORK_STEPS 64 /**< LCG steps of local work: about 0.1 us */

/** Work outside the lock (about 0.1 us) that the compiler cannot remove or shortcut;
 *  feed the result back in and keep the last one alive. */
static inline uint64_t rdlm_bench_local_work(uint64_t x)
{
    int k;

    for (k = 0; k < RDLM_BENCH_LOCAL_WORK_STEPS; k++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    }
    return x;
}

/** The critical section of every lock benchmark (fork or MPI), under the lock:
 *  counter++ and last_rank = rank in cs. 1 if it came after another process's (a
 *  hand-off), 0 if after this one's. */
static inline int rdlm_bench_cs_enter(rdlm_bench_cs_t *cs, uint64_t rank)
{
    int handoff = cs->last_rank != rank;

    cs->counter++;
    cs->last_rank = rank;
    return handoff;
}

/** One untimed critical section: acquire, rdlm_bench_cs_enter, release. 1 if it came
 *  after another worker's (a hand-off), 0 if after this one's, -1 after
 *  rdlm_bench_lock_failed. */
static inline int rdlm_bench_lock_section(rdlm_bench_worker_t *w,
                                          const rdlm_bench_lock_ops_t *ops, void *lock,
                                          rdlm_bench_cs_t *cs)
{
    int rc = ops->acquire(lock, NULL);
    int handoff;

    if (rc != 0) {
        return rdlm_bench_lock_failed(w, "acquire", rc);
    }
    handoff = rdlm_bench_cs_enter(cs, w->rank);
    if ((rc = ops->release(lock)) != 0) {
        return rdlm_bench_lock_failed(w, "release", rc);
    }
    return handoff;
}

#endif
