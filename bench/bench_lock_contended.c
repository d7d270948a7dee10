/*
 * lock-contended: N processes loop { acquire; increment a plain counter and write a
 * word in one shared cache line; release; about 0.1 us of local work } for a fixed
 * window. Figures: total operations / (last end - first start), in Mops/s; and
 * hand-offs, the critical sections entered by a different process than the one
 * before, per second (a lock that lets its releaser take it straight back does many
 * operations and few hand-offs). p99: wait in acquire, 1 acquire in 16 timed.
 * Waits: every implementation also runs wait rounds, alternated with the throughput
 * rounds, in which every acquire is timed (two clock reads, about 0.1 us here: too
 * much to add to the throughput rounds, whose 2-process operations take 0.2-0.3 us);
 * "wait max" is the longest wait over every acquire of every process in a round,
 * "wait p99.9" the 99.9th percentile of a uniform sample of them (16384 per process).
 * Sections out of turn: sections entered right after the same process's own
 * (operations - hand-offs, throughput rounds). The counter must equal the operations run.
 * Implementations: rdlm (the default, bounded-bypass lock), pthread_mutex (pshared),
 * TAS, and rdlm_fifo (an rdlm lock opened RDLM_LOCK_ORDER_FIFO, for what strict FIFO
 * costs). Targets (issue): 2 processes, hand-off throughput of rdlm >= 1.5 x pthread_mutex;
 * 16 processes on 2 cores, throughput rdlm@16 / rdlm@2 >= 0.3, and no acquire of
 * rdlm waits more than 10 ms in any round (bounded bypass).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "benchmarks.h"
#include "clock.h"
#include "lock_bench.h"
#include "rounds.h"

#define RDLM_BENCH_CONT_DURATION_MS 300u
#define RDLM_BENCH_CONT_WARMUP 200u
#define RDLM_BENCH_CONT_SAMPLE_EVERY 16u /* power of two */
#define RDLM_BENCH_CONT_SAMPLES 16384u
#define RDLM_BENCH_CONT_MAX_WAIT_MS 10.0 /* target: rdlm's longest wait at 16 procs */

static const uint32_t rdlm_bench_cont_procs[] = {2, 16};

static const rdlm_bench_lock_ops_t *const rdlm_bench_cont_impls[] = {
    &rdlm_bench_lock_rdlm, &rdlm_bench_lock_pmutex, &rdlm_bench_lock_tas,
    &rdlm_bench_lock_rdlm_fifo};
#define RDLM_BENCH_CONT_NIMPL (sizeof(rdlm_bench_cont_impls) / sizeof(rdlm_bench_cont_impls[0]))

typedef struct rdlm_bench_cont_ctx {
    rdlm_bench_report_t *report;
    uint32_t nprocs;
    uint32_t duration_ms;
    uint64_t warmup;
    rdlm_bench_measure_t *measure[RDLM_BENCH_CONT_NIMPL];
    rdlm_bench_measure_t *handoffs[RDLM_BENCH_CONT_NIMPL];
    rdlm_bench_measure_t *wait_p999[RDLM_BENCH_CONT_NIMPL]; /* us, wait rounds */
    rdlm_bench_measure_t *wait_max[RDLM_BENCH_CONT_NIMPL];  /* ms, wait rounds */
    double worst_wait_ms[RDLM_BENCH_CONT_NIMPL];            /* over rounds */
    uint64_t ops[RDLM_BENCH_CONT_NIMPL];                    /* summed over rounds */
    uint64_t turns[RDLM_BENCH_CONT_NIMPL];                  /* hand-offs, summed */
    /* throughput rounds, then wait rounds: impl k's wait round is NIMPL + k */
    rdlm_stats_t rdlm_stats; /* summed over rounds and processes */
} rdlm_bench_cont_ctx_t;

/* Record one wait round of impl. */
static void rdlm_bench_cont_waits(rdlm_bench_cont_ctx_t *c, uint32_t impl, uint32_t round,
                                  const rdlm_bench_outcome_t *out)
{
    rdlm_bench_summary_t pct;
    double max_wait_ms = 0;

    for (uint32_t k = 0; k < out->nprocs; k++) {
        max_wait_ms = fmax(max_wait_ms, out->slots[k].values[3] / 1e6);
    }
    rdlm_bench_outcome_percentiles(out, 1.0 / 1000.0, 0, &pct);
    rdlm_bench_measure_round(c->wait_p999[impl], pct.p999, NULL);
    rdlm_bench_measure_round(c->wait_max[impl], max_wait_ms, NULL);
    if (max_wait_ms > c->worst_wait_ms[impl]) {
        c->worst_wait_ms[impl] = max_wait_ms;
    }
    rdlm_bench_report_round(c->report, round,
                            "%-14s %2u procs, every acquire timed: wait p99 %.2f us, p99.9 "
                            "%.2f us, max %.3f ms\n",
                            rdlm_bench_cont_impls[impl]->name, c->nprocs, pct.p99, pct.p999,
                            max_wait_ms);
}

static int rdlm_bench_cont_round(uint32_t run, uint32_t round, void *ctx)
{
    rdlm_bench_cont_ctx_t *c = ctx;
    uint32_t impl = run % RDLM_BENCH_CONT_NIMPL;
    int waits = run >= RDLM_BENCH_CONT_NIMPL;
    rdlm_bench_lock_arg_t arg = {.ops = rdlm_bench_cont_impls[impl],
                                 .warmup = c->warmup,
                                 .sample_mask = waits ? 0 : RDLM_BENCH_CONT_SAMPLE_EVERY - 1};
    rdlm_bench_run_params_t p = {
        .nprocs = c->nprocs,
        .duration_ms = c->duration_ms,
        .sample_cap = RDLM_BENCH_CONT_SAMPLES,
        .timeout_s = 60 + c->duration_ms / 1000,
        .data_check = rdlm_bench_lock_check,
        .body = rdlm_bench_lock_window_body,
        .verbose = c->report->opts->verbose,
    };
    rdlm_bench_outcome_t out;
    rdlm_bench_summary_t pct;
    double mops, handoffs;

    if (rdlm_bench_lock_run(&p, &arg, 0, &out) != 0) {
        return -1;
    }
    if (waits) {
        rdlm_bench_cont_waits(c, impl, round, &out);
        rdlm_bench_outcome_free(&out);
        return 0;
    }
    handoffs = rdlm_bench_outcome_sum(&out, 2);
    mops = out.window_ns > 0 ? (double)out.ops * 1000.0 / (double)out.window_ns : 0.0;
    rdlm_bench_outcome_percentiles(&out, 1.0 / 1000.0, 0, &pct);
    rdlm_bench_measure_round(c->measure[impl], mops, &pct);
    rdlm_bench_measure_round(c->handoffs[impl],
                             out.window_ns > 0 ? handoffs * 1000.0 / (double)out.window_ns : 0.0,
                             NULL);
    c->ops[impl] += out.ops;
    c->turns[impl] += (uint64_t)handoffs;
    rdlm_bench_stats_add(&c->rdlm_stats, &out.stats, 1); /* zero without stats */
    rdlm_bench_report_round(
        c->report, round,
        "%-14s %2u procs %.3f Mops/s (%" PRIu64 " ops in %.1f ms), acquire p99 %.2f us\n",
        arg.ops->name, c->nprocs, mops, out.ops, (double)out.window_ns / 1e6, pct.p99);
    rdlm_bench_outcome_free(&out);
    return 0;
}

/* Say whether rdlm's waiters spun or slept, from its own counters. */
static void rdlm_bench_cont_stats_note(rdlm_bench_report_t *r, const char *bench,
                                       const rdlm_bench_cont_ctx_t *c)
{
    const rdlm_stats_t *s = &c->rdlm_stats;
    double contended = s->acquires ? 100.0 * (double)s->contended / (double)s->acquires : 0;
    double parks_per = s->contended ? (double)s->parks / (double)s->contended : 0;
    const char *verdict = s->contended == 0  ? "no waiting"
                          : parks_per < 0.1 ? "waiters mostly spun"
                          : parks_per < 0.5 ? "waiters both spun and parked"
                                            : "waiters mostly parked";

    rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_INFO,
                           "rdlm statistics, %u procs, summed over processes and rounds: "
                           "acquires %" PRIu64 ", contended %" PRIu64 " (%.1f%%), parks %" PRIu64
                           " (%.2f per contended acquire), wakes %" PRIu64 ", skips %" PRIu64
                           ": %s",
                           c->nprocs, s->acquires, s->contended, contended, s->parks,
                           parks_per, s->wakes, s->skips, verdict);
}

/* The longest waits and the sections out of turn of every implementation. */
static void rdlm_bench_cont_wait_note(rdlm_bench_report_t *r, const char *bench,
                                      const rdlm_bench_cont_ctx_t *c)
{
    char text[RDLM_BENCH_CONT_NIMPL][64];
    uint32_t k;

    for (k = 0; k < RDLM_BENCH_CONT_NIMPL; k++) {
        snprintf(text[k], sizeof(text[k]), "%s %.3f ms / %.1f%%",
                 rdlm_bench_cont_impls[k]->name, c->worst_wait_ms[k],
                 c->ops[k] ? 100.0 * (double)(c->ops[k] - c->turns[k]) / (double)c->ops[k]
                           : 0.0);
    }
    rdlm_bench_report_note(
        r, bench, RDLM_BENCH_NOTE_INFO,
        "%u procs, longest wait in acquire over every acquire of every "
        "wait round / sections out of turn (after the same process's own, "
        "throughput rounds): %s, %s, %s, %s",
        c->nprocs, text[0], text[1], text[2], text[3]);
}

/* Target row: rdlm's longest wait over every round against the limit. */
static int rdlm_bench_cont_wait_target(rdlm_bench_report_t *r, const char *bench,
                                       const rdlm_bench_cont_ctx_t *c)
{
    rdlm_bench_measure_t *worst = rdlm_bench_report_figure(
        r, bench, "wait max, all rounds", rdlm_bench_cont_impls[0]->name, c->nprocs, "ms",
        c->worst_wait_ms[0]);
    rdlm_bench_measure_t *limit =
        rdlm_bench_report_figure(r, bench, "wait max, all rounds", "limit", c->nprocs, "ms",
                                 RDLM_BENCH_CONT_MAX_WAIT_MS);
    char label[32];

    if (worst == NULL || limit == NULL) {
        return -1;
    }
    snprintf(label, sizeof(label), "limit (%.0f ms)", RDLM_BENCH_CONT_MAX_WAIT_MS);
    rdlm_bench_report_compare(r, worst, limit, label, RDLM_BENCH_TARGET_AT_MOST, 1.0);
    return 0;
}

static int rdlm_bench_cont_run(rdlm_bench_report_t *r)
{
    const rdlm_bench_opts_t *o = r->opts;
    const char *bench = rdlm_bench_def_lock_contended.name;
    rdlm_bench_measure_t *first[RDLM_BENCH_CONT_NIMPL] = {NULL};
    uint32_t first_procs = 0;
    const uint32_t *procs;
    uint32_t nprocs;
    uint32_t n;
    uint32_t k;
    char label[32];

    nprocs = rdlm_bench_opts_procs(o, rdlm_bench_cont_procs,
                                   sizeof(rdlm_bench_cont_procs) / sizeof(uint32_t), &procs);
    rdlm_bench_report_note(
        r, bench, RDLM_BENCH_NOTE_PARAMS,
        "%u ms window per measurement after %" PRIu64
        " warm-up ops per process, %u rounds; "
        "Mops/s over all processes; p99 = wait in acquire (1 in %u timed); wait p99.9 "
        "and wait max: from as many wait rounds, alternated, every acquire timed",
        rdlm_bench_opts_duration_ms(o, RDLM_BENCH_CONT_DURATION_MS),
        rdlm_bench_opts_warmup(o, RDLM_BENCH_CONT_WARMUP), o->rounds,
        RDLM_BENCH_CONT_SAMPLE_EVERY);
    for (n = 0; n < nprocs; n++) {
        rdlm_bench_cont_ctx_t c = {
            .report = r,
            .nprocs = procs[n],
            .duration_ms = rdlm_bench_opts_duration_ms(o, RDLM_BENCH_CONT_DURATION_MS),
            .warmup = rdlm_bench_opts_warmup(o, RDLM_BENCH_CONT_WARMUP),
        };

        for (k = 0; k < RDLM_BENCH_CONT_NIMPL; k++) {
            const rdlm_bench_lock_ops_t *const *impl = &rdlm_bench_cont_impls[k];

            /* table order: each implementation's four rows together */
            if (rdlm_bench_lock_measures(r, bench, "throughput", impl, 1, procs[n],
                                         "Mops/s", &c.measure[k]) != 0 ||
                rdlm_bench_lock_measures(r, bench, "hand-offs", impl, 1, procs[n], "M/s",
                                         &c.handoffs[k]) != 0 ||
                rdlm_bench_lock_measures(r, bench, "wait p99.9", impl, 1, procs[n], "us",
                                         &c.wait_p999[k]) != 0 ||
                rdlm_bench_lock_measures(r, bench, "wait max", impl, 1, procs[n], "ms",
                                         &c.wait_max[k]) != 0) {
                return -1;
            }
        }
        if (o->verbose) {
            fprintf(stderr, "rdlm-bench:   %u processes\n", procs[n]);
        }
        if (rdlm_bench_alternate(2 * RDLM_BENCH_CONT_NIMPL, o->rounds,
                                 rdlm_bench_cont_round, &c) != 0) {
            return -1;
        }
        rdlm_bench_measures_finish(c.measure, RDLM_BENCH_CONT_NIMPL);
        rdlm_bench_measures_finish(c.handoffs, RDLM_BENCH_CONT_NIMPL);
        rdlm_bench_measures_finish(c.wait_p999, RDLM_BENCH_CONT_NIMPL);
        rdlm_bench_measures_finish(c.wait_max, RDLM_BENCH_CONT_NIMPL);
        /* [0] is rdlm, [1] pthread_mutex, [2] tas, [3] rdlm_fifo */
        rdlm_bench_report_compare(r, c.measure[0], c.measure[1], NULL,
                                  RDLM_BENCH_TARGET_NONE, 0);
        rdlm_bench_report_compare(r, c.measure[0], c.measure[2], NULL,
                                  RDLM_BENCH_TARGET_NONE, 0);
        rdlm_bench_report_compare(r, c.measure[0], c.measure[3], NULL,
                                  RDLM_BENCH_TARGET_NONE, 0);
        rdlm_bench_report_compare(r, c.handoffs[0], c.handoffs[1], NULL,
                                  procs[n] == 2 ? RDLM_BENCH_TARGET_AT_LEAST
                                                : RDLM_BENCH_TARGET_NONE,
                                  1.5);
        rdlm_bench_cont_stats_note(r, bench, &c);
        rdlm_bench_cont_wait_note(r, bench, &c);
        if (n == 0) {
            first_procs = procs[n];
            for (k = 0; k < RDLM_BENCH_CONT_NIMPL; k++) {
                first[k] = c.measure[k];
            }
            continue;
        }
        /* Scaling: the same lock at this count against the first count. */
        snprintf(label, sizeof(label), "rdlm@%u", first_procs);
        rdlm_bench_report_compare(r, c.measure[0], first[0], label,
                                  procs[n] == 16 && first_procs == 2
                                      ? RDLM_BENCH_TARGET_AT_LEAST
                                      : RDLM_BENCH_TARGET_NONE,
                                  0.3);
        if (procs[n] == 16 && rdlm_bench_cont_wait_target(r, bench, &c) != 0) {
            return -1;
        }
    }
    return 0;
}

const rdlm_bench_def_t rdlm_bench_def_lock_contended = {
    .name = "lock-contended",
    .title = "throughput of N processes on one lock: rdlm vs pshared pthread_mutex vs TAS",
    .default_procs = rdlm_bench_cont_procs,
    .ndefault_procs = sizeof(rdlm_bench_cont_procs) / sizeof(rdlm_bench_cont_procs[0]),
    .run = rdlm_bench_cont_run,
};
