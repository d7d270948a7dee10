/*
 * The benchmark definitions: each is a name, a title, the process counts it runs at
 * and a run function that measures through the engine (workers, rounds, report).
 */
#ifndef RDLM_BENCH_BENCHMARKS_H
#define RDLM_BENCH_BENCHMARKS_H

#include <stdint.h>

#include "report.h"

typedef struct rdlm_bench_def {
    const char *name;
    const char *title;
    /** Default process counts, replaced by -p; NULL: always one process. */
    const uint32_t *default_procs;
    uint32_t ndefault_procs;
    /** 1: run only when named (-b or an operand), not in the default set. */
    int opt_in;
    /** Add measurements, comparisons and notes to the report; 0, or -1 on failure. */
    int (*run)(rdlm_bench_report_t *report);
} rdlm_bench_def_t;

extern const rdlm_bench_def_t rdlm_bench_def_lock_latency;
extern const rdlm_bench_def_t rdlm_bench_def_lock_contended;
extern const rdlm_bench_def_t rdlm_bench_def_try_lock;
extern const rdlm_bench_def_t rdlm_bench_def_rwlock_ratio;
extern const rdlm_bench_def_t rdlm_bench_def_sem;
extern const rdlm_bench_def_t rdlm_bench_def_cas_pingpong;
extern const rdlm_bench_def_t rdlm_bench_def_barrier;
extern const rdlm_bench_def_t rdlm_bench_def_dist_barrier;
extern const rdlm_bench_def_t rdlm_bench_def_memory;
extern const rdlm_bench_def_t rdlm_bench_def_dist_lock;
extern const rdlm_bench_def_t rdlm_bench_def_dist_contended;
extern const rdlm_bench_def_t rdlm_bench_def_dist_sweep;
extern const rdlm_bench_def_t rdlm_bench_def_dist_memory;
extern const rdlm_bench_def_t rdlm_bench_def_dist_counter;
extern const rdlm_bench_def_t rdlm_bench_def_services;
extern const rdlm_bench_def_t rdlm_bench_def_lease_renew;
#if RDLM_BENCH_HAVE_UCX
extern const rdlm_bench_def_t rdlm_bench_def_tl_fadd;
#endif

#endif
