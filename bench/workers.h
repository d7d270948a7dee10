/*
 * One measurement run in N forked worker processes.
 *
 *   parent                              worker k (forked, k = 0..N-1)
 *   ------                              -----------------------------
 *   map the control mapping (start
 *   barrier, stop flag, result slots,
 *   samples) and the benchmark's data
 *   mapping; data_init(data)
 *   fork N  ------------------------->  body(w): set up, warm up, then
 *                                       rdlm_bench_worker_start(w): pthread barrier
 *   wait until all N have started       (process-shared, in the control mapping,
 *   timed run: sleep duration_ms,       never the primitive under test); measure
 *   then raise the stop flag            until the stop flag or the iteration count
 *                                       rdlm_bench_worker_end(w, ops); clean up
 *   reap; kill all on a failure or
 *   after timeout_s; copy the slots
 *
 * Benchmarks never share memory other than these two mappings; the data mapping is
 * the benchmark's own (the lock words, the cache line of a critical section).
 */
#ifndef RDLM_BENCH_WORKERS_H
#define RDLM_BENCH_WORKERS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <rdlm.h>

#include "stats.h"

#define RDLM_BENCH_SLOT_VALUES 8 /**< benchmark-defined doubles per worker */
#define RDLM_BENCH_JOB_MAX 32    /**< rdlm job name length limit */

/** What one worker reports; lives in the control mapping while the run lasts. */
typedef struct rdlm_bench_slot {
    uint64_t ops;        /**< operations in the measured phase */
    uint64_t t_start_ns; /**< CLOCK_MONOTONIC after the start barrier */
    uint64_t t_end_ns;   /**< CLOCK_MONOTONIC at the end of the measured phase */
    double values[RDLM_BENCH_SLOT_VALUES]; /**< benchmark-defined */
    rdlm_stats_t stats;  /**< rdlm statistics over the measured phase */
    int has_stats;       /**< stats is filled */
    int failed;          /**< error holds why */
    uint32_t nsamples;   /**< samples kept (at most the run's sample_cap) */
    char error[200];
} rdlm_bench_slot_t;

struct rdlm_bench_ctl;
struct rdlm_bench_outcome;

/** A worker's view of its run; filled by the engine before body() is called. */
typedef struct rdlm_bench_worker {
    uint32_t rank;    /**< 0..nprocs-1 */
    uint32_t nprocs;
    const char *job;  /**< rdlm job name unique to this run */
    void *data;       /**< the benchmark's shared data mapping */
    const void *arg;  /**< the benchmark's parameters */
    rdlm_bench_slot_t *slot;
    rdlm_bench_sampler_t sampler; /**< per-operation samples, into the control mapping */
    const _Atomic uint32_t *stop; /**< raised by the parent to end a timed run */
    struct rdlm_bench_ctl *ctl;
    int started;
} rdlm_bench_worker_t;

/** A worker's program: returns 0, or -1 after rdlm_bench_worker_fail(). It must call
 *  rdlm_bench_worker_start() once (the engine does it for a body that failed before). */
typedef int (*rdlm_bench_body_func_t)(rdlm_bench_worker_t *w);

typedef struct rdlm_bench_run_params {
    uint32_t nprocs;      /**< 1..RDLM_BENCH_MAX_PROCS */
    uint32_t duration_ms; /**< > 0: a timed run, stop raised this long after the start */
    uint32_t sample_cap;  /**< samples kept per worker (0: none) */
    uint32_t timeout_s;   /**< kill every worker after this long (0: 120 s) */
    size_t data_size;     /**< bytes of the data mapping (0: none) */
    /** In the parent before the fork (NULL: the mapping is zero-filled only). */
    int (*data_init)(void *data, const void *arg);
    /** In the parent after every worker ended cleanly: 0, or -1 with why filled,
     *  which fails the run (NULL: no check). */
    int (*data_check)(void *data, const void *arg, const struct rdlm_bench_outcome *out,
                      char *why, size_t whylen);
    /** In the parent after every worker ended (NULL: nothing). */
    void (*data_fini)(void *data, const void *arg);
    rdlm_bench_body_func_t body;
    const void *arg;
    int verbose;
    char *failure;      /**< NULL, or where a failed run's first reason is copied */
    size_t failure_len; /**< bytes at failure */
} rdlm_bench_run_params_t;

/** What a run produced; the parent's own copy. */
typedef struct rdlm_bench_outcome {
    uint32_t nprocs;
    rdlm_bench_slot_t *slots; /**< nprocs */
    uint32_t *samples;        /**< worker k's at samples + k * sample_cap */
    uint32_t sample_cap;
    uint64_t ops;             /**< sum over workers */
    uint64_t window_ns;       /**< last end - first start */
    uint64_t max_elapsed_ns;  /**< max over workers of end - start */
    rdlm_stats_t stats;       /**< sum over the workers that had stats */
    int has_stats;
} rdlm_bench_outcome_t;

/** Run once. Returns 0 and fills *out_p, or -1 after printing why on stderr (a
 *  worker's error, a crash, or the timeout). Blocking; not thread-safe. */
int rdlm_bench_run(const rdlm_bench_run_params_t *params, rdlm_bench_outcome_t *out_p);

/**
 * The CPU worker rank of nprocs runs on: the rank-th CPU this process may use
 * (sched_getaffinity), or -1 when nprocs workers do not fit those CPUs (then they
 * float). rdlm_bench_run pins every worker so before its body runs, as mpirun
 * --bind-to core does: the placement is then the same for rdlm and its baselines,
 * and from run to run.
 */
int rdlm_bench_cpu_of(uint32_t rank, uint32_t nprocs);

/** Free what rdlm_bench_run allocated; NULL-safe. */
void rdlm_bench_outcome_free(rdlm_bench_outcome_t *out);

/**
 * Percentiles of the samples times scale. per_process_max: each percentile is the
 * maximum over workers of that worker's percentile (barriers); else all samples are
 * pooled.
 */
void rdlm_bench_outcome_percentiles(const rdlm_bench_outcome_t *out, double scale,
                                    int per_process_max, rdlm_bench_summary_t *summary_p);

/* ---- inside a worker ------------------------------------------------------------ */

/** Wait at the start barrier, then stamp t_start. Returns 0 to measure, -1 if some
 *  worker failed before it (then clean up and return -1). */
int rdlm_bench_worker_start(rdlm_bench_worker_t *w);

/** Stamp t_end and record the operation count of the measured phase. */
void rdlm_bench_worker_end(rdlm_bench_worker_t *w, uint64_t ops);

/** Record why this worker failed; returns -1 for `return rdlm_bench_worker_fail(..)`. */
int rdlm_bench_worker_fail(rdlm_bench_worker_t *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/** 1 once the parent raised the stop flag of a timed run. One relaxed load. */
static inline int rdlm_bench_worker_stopped(const rdlm_bench_worker_t *w)
{
    return atomic_load_explicit(w->stop, memory_order_relaxed) != 0;
}

/** sum += sign * x over the counters rdlm-bench reads, modulo 2^64 (sign 1 adds,
 *  UINT64_MAX subtracts). */
void rdlm_bench_stats_add(rdlm_stats_t *sum, const rdlm_stats_t *x, uint64_t sign);

/** Fill slot->stats with after - before, field by field, and set has_stats. */
void rdlm_bench_worker_stats(rdlm_bench_worker_t *w, const rdlm_stats_t *before,
                             const rdlm_stats_t *after);

#endif
