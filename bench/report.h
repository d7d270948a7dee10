/*
 * What rdlm-bench found: measurements (one quantity of one implementation over
 * rounds), comparisons (rdlm against a baseline, with the target), notes
 * and skips; printed as tables and written as CSV and JSON.
 *
 *   figure = median over rounds of the per-round figure
 *   p50/p90/p99 = single-operation percentiles in us, median over rounds
 *   ratio = ours.median / base.median; a target is "ratio <= x" or "ratio >= x"
 */
#ifndef RDLM_BENCH_REPORT_H
#define RDLM_BENCH_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "header.h"
#include "options.h"
#include "stats.h"

#define RDLM_BENCH_MAX_MEASURES 128
#define RDLM_BENCH_MAX_COMPARES 64
#define RDLM_BENCH_MAX_NOTES 64

typedef struct rdlm_bench_measure {
    char bench[24];
    char metric[32];
    char impl[24];
    char unit[12];
    uint32_t procs;
    uint32_t nrounds;
    double round[RDLM_BENCH_MAX_ROUNDS];
    double round_pct[RDLM_BENCH_MAX_ROUNDS][3]; /**< p50, p90, p99 in us, or NAN */
    double median, min, max;                    /**< over rounds, by _finish */
    double p50, p90, p99;                       /**< medians over rounds, by _finish */
} rdlm_bench_measure_t;

enum rdlm_bench_target {
    RDLM_BENCH_TARGET_NONE,
    RDLM_BENCH_TARGET_AT_MOST,  /**< ratio <= target */
    RDLM_BENCH_TARGET_AT_LEAST, /**< ratio >= target */
};

typedef struct rdlm_bench_compare {
    const rdlm_bench_measure_t *ours;
    const rdlm_bench_measure_t *base;
    char base_label[32]; /**< e.g. "pthread_mutex", "rdlm@2" */
    char ours_label[16]; /**< which of rdlm's implementations, where several are
                          *  compared ("home", "raft"); "" for the benchmark's one */
    double ratio;
    enum rdlm_bench_target kind;
    double target;
    int met; /**< 1, 0, or -1 without a target */
} rdlm_bench_compare_t;

enum rdlm_bench_note_kind {
    RDLM_BENCH_NOTE_PARAMS, /**< how it was measured: printed above the section table */
    RDLM_BENCH_NOTE_INFO,   /**< a finding: printed below it */
    RDLM_BENCH_NOTE_SKIP,   /**< a skipped measurement: also in the final table */
};

typedef struct rdlm_bench_note {
    char bench[24];
    enum rdlm_bench_note_kind kind;
    char text[256];
} rdlm_bench_note_t;

typedef struct rdlm_bench_report {
    rdlm_bench_header_t header;
    const rdlm_bench_opts_t *opts;
    rdlm_bench_measure_t measures[RDLM_BENCH_MAX_MEASURES];
    uint32_t nmeasures;
    rdlm_bench_compare_t compares[RDLM_BENCH_MAX_COMPARES];
    uint32_t ncompares;
    rdlm_bench_note_t notes[RDLM_BENCH_MAX_NOTES];
    uint32_t nnotes;
    double noise_max;     /**< largest share of the CPUs other work used, or -1 */
    char noise_bench[24]; /**< during which benchmark */
} rdlm_bench_report_t;

/** A new measurement; NULL when the table is full (then the caller skips it). */
rdlm_bench_measure_t *rdlm_bench_report_measure(rdlm_bench_report_t *r, const char *bench,
                                                const char *metric, const char *impl,
                                                uint32_t procs, const char *unit);

/** Add one round's figure and, if pct_us is not NULL, its single-op percentiles. */
void rdlm_bench_measure_round(rdlm_bench_measure_t *m, double value,
                              const rdlm_bench_summary_t *pct_us);

/** Compute the medians over rounds. */
void rdlm_bench_measure_finish(rdlm_bench_measure_t *m);

/** A figure measured once (sizes, operations per operation): a measurement of one
 *  round, finished; NULL when the table is full. */
rdlm_bench_measure_t *rdlm_bench_report_figure(rdlm_bench_report_t *r, const char *bench,
                                               const char *metric, const char *impl,
                                               uint32_t procs, const char *unit,
                                               double value);

/** rdlm_bench_measure_finish of m[0..n-1]. */
void rdlm_bench_measures_finish(rdlm_bench_measure_t *const *m, uint32_t n);

/** Compare ours with base (label NULL: base's impl name). base NULL: a figure with
 *  no baseline, listed in the comparison table for completeness. */
const rdlm_bench_compare_t *rdlm_bench_report_compare(rdlm_bench_report_t *r,
                                                      const rdlm_bench_measure_t *ours,
                                                      const rdlm_bench_measure_t *base,
                                                      const char *label,
                                                      enum rdlm_bench_target kind,
                                                      double target);

/** rdlm_bench_report_compare for one of several rdlm implementations: ours_label
 *  names it before the metric in the comparison table. */
const rdlm_bench_compare_t *rdlm_bench_report_compare_as(rdlm_bench_report_t *r,
                                                         const char *ours_label,
                                                         const rdlm_bench_measure_t *ours,
                                                         const rdlm_bench_measure_t *base,
                                                         const char *label,
                                                         enum rdlm_bench_target kind,
                                                         double target);

/** Keep a note for the section (and the JSON). */
void rdlm_bench_report_note(rdlm_bench_report_t *r, const char *bench,
                            enum rdlm_bench_note_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/** With -v, print "rdlm-bench:   round <round + 1> " and fmt's text on stderr: the one
 *  form of every benchmark's per-round line. */
void rdlm_bench_report_round(const rdlm_bench_report_t *r, uint32_t round, const char *fmt,
                             ...) __attribute__((format(printf, 3, 4)));

/** Print one benchmark's section: title, parameters, per-implementation table,
 *  findings and skips. */
void rdlm_bench_report_section(const rdlm_bench_report_t *r, const char *bench,
                               const char *title, FILE *out);

/** c's target as text in buf: "<=0.80", ">=2.00", or "-" without one; returns buf. */
const char *rdlm_bench_target_text(const rdlm_bench_compare_t *c, char *buf, size_t len);

/** Print the comparison table (ours, baseline, ratio, target, met). */
void rdlm_bench_report_table(const rdlm_bench_report_t *r, FILE *out);

/** Write every measurement and comparison; 0 or -1 (reason printed). */
int rdlm_bench_report_write_csv(const rdlm_bench_report_t *r, const char *path);
int rdlm_bench_report_write_json(const rdlm_bench_report_t *r, const char *path);

#endif
