/*
 * What the MPI programs (rdlm-mpi-lock-bench, rdlm-mpi-barrier-bench) print for a
 * user who runs them like osu_*: '#' header lines, then one row per measurement
 * (table, the default), or CSV (RFC 4180, one header row) or JSON; and a progress
 * line on stderr once a run lasts longer than a few seconds. Rank 0 only.
 */
#ifndef RDLM_BENCH_MPI_OUTPUT_H
#define RDLM_BENCH_MPI_OUTPUT_H

#include <stdint.h>

#include <rdlm.h>

#include "mpi_result.h"

/** How rows are printed (--csv, --json; the table otherwise). */
enum rdlm_bench_out_format {
    RDLM_BENCH_OUT_TABLE,
    RDLM_BENCH_OUT_CSV,
    RDLM_BENCH_OUT_JSON,
};

/** One measurement: an implementation at one size, its figure over rounds. */
typedef struct rdlm_bench_out_row {
    uint64_t size;        /**< the size column (the program's usage says what it is) */
    const char *impl;     /**< implementation */
    const char *unit;     /**< of median, min, max: "us", "kops/s", "KiB" */
    double median;        /**< median over rounds (the figure) */
    double min, max;      /**< over rounds */
    double p50, p90, p99; /**< us; medians over rounds of each round's percentile */
    uint64_t ops;         /**< operations timed (all ranks, all rounds) */
    uint32_t rounds;
} rdlm_bench_out_row_t;

/** The output of one run (rdlm_bench_out_begin .. rdlm_bench_out_end). */
typedef struct rdlm_bench_out {
    enum rdlm_bench_out_format format;
    int full;         /**< -f: min, max, percentiles and ops in the table */
    const char *size; /**< the size column's name, e.g. "Ranks" */
    uint32_t nrows;   /**< printed so far */
    uint64_t t0_ns;   /**< progress: the run's start */
    uint64_t last_ns; /**< progress: the last line printed */
} rdlm_bench_out_t;

/**
 * Print the header: "# rdlm <what> benchmark vX.Y.Z", "# ranks N, nodes M", each of
 * notes[0..nnotes) as "# <note>", the column header (table; CSV: its header row;
 * JSON: the object's opening with these fields).
 */
void rdlm_bench_out_begin(rdlm_bench_out_t *o, const char *what, int ranks, uint32_t nodes,
                          const char *const *notes, uint32_t nnotes);

/** Print one row in o's format: row's size, impl and unit, and its figures over the n
 *  rounds of fig (filled into row): median, min, max of fig[RDLM_BENCH_FIG_VALUE], p50,
 *  p90, p99 the medians of the percentiles' rounds, ops their sum. */
void rdlm_bench_out_row(rdlm_bench_out_t *o, rdlm_bench_out_row_t *row,
                        const rdlm_bench_rounds_t *fig, uint32_t n);

/** Close the output (JSON: the rows' array and the object) and flush it. */
void rdlm_bench_out_end(rdlm_bench_out_t *o);

/** Print "<tool>: rank <rank>: <message>" on stderr and abort the job, so that no rank
 *  hangs (PMPI_Abort: never a profiling layer's). */
void rdlm_bench_out_die(const char *tool, int rank, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));

/** rdlm_bench_out_die with "<what>: <status>" unless st is RDLM_OK. */
void rdlm_bench_out_check(const char *tool, int rank, rdlm_status_t st, const char *what);

/** Start the clock of rdlm_bench_out_progress (the run's start). */
void rdlm_bench_out_start(rdlm_bench_out_t *o);

/** What marks a progress line (rdlm-bench passes such lines of its children on). */
#define RDLM_BENCH_OUT_PROGRESS_MARK " phases done (last: "

/**
 * On stderr, at most one line every 2 s once the run has lasted 3 s since
 * rdlm_bench_out_start:
 * "<tool>: <done>/<total> phases done (last: <impl>), <elapsed> s". Called between phases.
 */
void rdlm_bench_out_progress(rdlm_bench_out_t *o, const char *tool, uint32_t done,
                             uint32_t total, const char *impl);

#endif
