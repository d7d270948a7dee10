/*
 * lock-latency: uncontended acquire + release in one process, rdlm against a TAS
 * spinlock and a process-shared pthread_mutex. Figure: elapsed / iterations. The
 * percentiles are of 100-pair batches (a clock read costs about as much as one pair).
 * Targets (issue): rdlm <= 1.2 x TAS and <= 1.0 x pthread_mutex.
 */
#include <inttypes.h>
#include <stdio.h>

#include "benchmarks.h"
#include "clock.h"
#include "lock_bench.h"
#include "rounds.h"

#define RDLM_BENCH_LAT_ITERATIONS 1000000u
#define RDLM_BENCH_LAT_WARMUP 10000u
#define RDLM_BENCH_LAT_BATCH 100u
#define RDLM_BENCH_LAT_SAMPLES 65536u

static const rdlm_bench_lock_ops_t *const rdlm_bench_lat_impls[] = {
    &rdlm_bench_lock_rdlm, &rdlm_bench_lock_tas, &rdlm_bench_lock_pmutex};
#define RDLM_BENCH_LAT_NIMPL (sizeof(rdlm_bench_lat_impls) / sizeof(rdlm_bench_lat_impls[0]))

typedef struct rdlm_bench_lat_ctx {
    rdlm_bench_report_t *report;
    rdlm_bench_measure_t *measure[RDLM_BENCH_LAT_NIMPL];
    rdlm_stats_t rdlm_stats;
    uint64_t iterations;
    uint64_t warmup;
} rdlm_bench_lat_ctx_t;

static int rdlm_bench_lat_round(uint32_t impl, uint32_t round, void *ctx)
{
    rdlm_bench_lat_ctx_t *c = ctx;
    rdlm_bench_lock_arg_t arg = {.ops = rdlm_bench_lat_impls[impl],
                                 .iterations = c->iterations,
                                 .warmup = c->warmup,
                                 .batch = RDLM_BENCH_LAT_BATCH};
    rdlm_bench_run_params_t p = {
        .nprocs = 1,
        .sample_cap = RDLM_BENCH_LAT_SAMPLES,
        .body = rdlm_bench_lock_pairs_body,
        .verbose = c->report->opts->verbose,
    };
    rdlm_bench_outcome_t out;
    rdlm_bench_summary_t pct;
    double us;

    if (rdlm_bench_lock_run(&p, &arg, 0, &out) != 0) {
        return -1;
    }
    us = (double)out.max_elapsed_ns / (double)c->iterations / 1000.0;
    rdlm_bench_outcome_percentiles(&out, 1.0 / (1000.0 * RDLM_BENCH_LAT_BATCH), 0, &pct);
    rdlm_bench_measure_round(c->measure[impl], us, &pct);
    rdlm_bench_stats_add(&c->rdlm_stats, &out.stats, 1); /* zero without stats */
    rdlm_bench_report_round(c->report, round, "%-14s %.4f us per pair\n", arg.ops->name,
                            us);
    rdlm_bench_outcome_free(&out);
    return 0;
}

static int rdlm_bench_lat_run(rdlm_bench_report_t *r)
{
    const rdlm_bench_opts_t *o = r->opts;
    const char *bench = rdlm_bench_def_lock_latency.name;
    rdlm_bench_lat_ctx_t c = {
        .report = r,
        .iterations = rdlm_bench_opts_iterations(o, RDLM_BENCH_LAT_ITERATIONS),
        .warmup = rdlm_bench_opts_warmup(o, RDLM_BENCH_LAT_WARMUP),
    };

    rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_PARAMS,
                           "1 process, %" PRIu64 " iterations after %" PRIu64
                           " warm-up, %u rounds; us per acquire+release pair; "
                           "p99 over %u-pair batches",
                           c.iterations, c.warmup, o->rounds, RDLM_BENCH_LAT_BATCH);
    if (rdlm_bench_lock_measures(r, bench, "acquire+release", rdlm_bench_lat_impls,
                                 RDLM_BENCH_LAT_NIMPL, 1, "us", c.measure) != 0 ||
        rdlm_bench_alternate(RDLM_BENCH_LAT_NIMPL, o->rounds, rdlm_bench_lat_round, &c) !=
            0) {
        return -1;
    }
    rdlm_bench_measures_finish(c.measure, RDLM_BENCH_LAT_NIMPL);
    /* measure[0] is rdlm, [1] tas, [2] pthread_mutex */
    rdlm_bench_report_compare(r, c.measure[0], c.measure[1], NULL, RDLM_BENCH_TARGET_AT_MOST,
                              1.2);
    rdlm_bench_report_compare(r, c.measure[0], c.measure[2], NULL, RDLM_BENCH_TARGET_AT_MOST,
                              1.0);
    rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_INFO,
                           "rdlm statistics over all rounds: acquires %" PRIu64
                           ", contended %" PRIu64 ", parks %" PRIu64
                           " (uncontended: both should be 0)",
                           c.rdlm_stats.acquires, c.rdlm_stats.contended,
                           c.rdlm_stats.parks);
    return 0;
}

const rdlm_bench_def_t rdlm_bench_def_lock_latency = {
    .name = "lock-latency",
    .title = "uncontended acquire+release: rdlm vs TAS spinlock vs pshared pthread_mutex",
    .run = rdlm_bench_lat_run,
};
