/*
 * Plumbing shared by the lock benchmarks: their parameters, the layout of the data
 * mapping (the lock's words, then the critical section's own cache line), and the
 * per-worker attach that turns adapter errors into worker failures.
 *
 *   data mapping:  [ lock words (ops->shared_size), padded ][ cs: 1 cache line ]
 */
#ifndef RDLM_BENCH_LOCK_BENCH_H
#define RDLM_BENCH_LOCK_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "lock_ops.h"
#include "workers.h"

/** Parameters of one lock measurement (copied into the workers by fork). */
typedef struct rdlm_bench_lock_arg {
    const rdlm_bench_lock_ops_t *ops;
    uint64_t iterations; /**< measured iterations (iteration-bound benchmarks) */
    uint64_t warmup;     /**< warm-up iterations per worker */
} rdlm_bench_lock_arg_t;

/** The state the critical section protects: plain, non-atomic, one cache line. The
 *  final counter must equal the number of critical sections run (a lost-update
 *  check on every implementation, baselines included). */
typedef struct rdlm_bench_cs {
    _Alignas(64) uint64_t counter;
    uint64_t last_rank;
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

#endif
