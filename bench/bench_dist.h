/*
 * rdlm-bench's side of its MPI programs, rdlm-mpi-lock-bench (mpi_lock_bench.c, which
 * documents its measurements) and rdlm-mpi-barrier-bench (mpi_barrier_bench.c): their
 * jobs (the programs found, their arguments built from rdlm-bench's options, run
 * under mpirun; the cross-node ones on one machine split into virtual nodes with
 * everything over TCP) and the one reading of their result lines (mpi_result.h) into
 * the report. Used by dist-lock, dist-contended, dist-memory (bench_dist_lock.c),
 * dist-sweep, dist-counter, dist-barrier and the MPI_Barrier baseline of barrier.
 */
#ifndef RDLM_BENCH_DIST_H
#define RDLM_BENCH_DIST_H

#include <stdint.h>

#include "benchmarks.h"
#include "mpi_launch.h"
#include "mpi_result.h"
#include "report.h"

/** At most this many arguments of a job's program (rdlm_bench_dist_args_t). */
#define RDLM_BENCH_DIST_ARGS_MAX 16u

/** A job's program arguments, appended in order; argv is NULL-ended (job.args). */
typedef struct rdlm_bench_dist_args {
    const char *argv[RDLM_BENCH_DIST_ARGS_MAX + 1];
    char text[RDLM_BENCH_DIST_ARGS_MAX][64];
    uint32_t n;
} rdlm_bench_dist_args_t;

/** Append flag, then, unless fmt is NULL, its value printed from fmt (at most 63
 *  characters); arguments beyond RDLM_BENCH_DIST_ARGS_MAX are dropped. */
void rdlm_bench_dist_arg(rdlm_bench_dist_args_t *a, const char *flag, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** Append -i and -x: o's, else iterations and warmup. */
void rdlm_bench_dist_counts(rdlm_bench_dist_args_t *a, const rdlm_bench_opts_t *o,
                            uint64_t iterations, uint64_t warmup);

/** Append a timed window's arguments: --duration (o's -d, else duration_ms), -x (o's,
 *  else warmup), and -i only when o sets it (a cap on the window's loops). */
void rdlm_bench_dist_window(rdlm_bench_dist_args_t *a, const rdlm_bench_opts_t *o,
                            uint32_t duration_ms, uint64_t warmup);

/** The default process count of the benchmarks of rdlm-mpi-lock-bench but dist-sweep
 *  (-p replaces it): 2 nodes x 2 ranks. */
extern const uint32_t rdlm_bench_dist_procs[1];

/** The job of rdlm-mpi-lock-bench on procs ranks as 2 virtual nodes, everything over
 *  TCP (UCX_TLS=tcp,self; Open MPI pml ob1, btl self,tcp, osc pt2pt), with args
 *  (NULL-ended, not copied) and a time limit (0: the launcher's); -v from o. */
rdlm_bench_mpi_job_t rdlm_bench_dist_job_2nodes(const rdlm_bench_opts_t *o, uint32_t procs,
                                                const char *const *args,
                                                uint32_t timeout_s);

/** The statistics (RDLM_BENCH_STATS) of the program's implementation key in out, in
 *  enum order into v: 0, or -1 if one is missing. */
int rdlm_bench_dist_stats(const char *out, const char *key, double *v);

/** Add the findings the program printed (rdlm_bench_result_note) to bench's notes, in
 *  its order. */
void rdlm_bench_dist_notes(rdlm_bench_report_t *r, const char *bench, const char *out);

/** One implementation the program measures: its name there (key), the report's
 *  implementation name and metric (NULL where the caller picks the metric). */
typedef struct rdlm_bench_dist_impl {
    const char *key;
    const char *impl;
    const char *metric;
} rdlm_bench_dist_impl_t;

/** A comparison of two rows of a job (indices into its rows; base -1: none); why (not
 *  NULL, only with a base): when either row has no rounds, a SKIP note naming it
 *  instead. */
typedef struct rdlm_bench_dist_cmp {
    uint32_t ours;
    int32_t base;
    enum rdlm_bench_target kind;
    double target;
    const char *why;
} rdlm_bench_dist_cmp_t;

/** What one run of a program adds to the report: a row, in unit, per figure and
 *  implementation (figure by figure), the first nrequired of which must have rounds,
 *  then its comparisons (in the final table's order). */
typedef struct rdlm_bench_dist_table {
    const rdlm_bench_dist_impl_t *impls;
    struct {
        const char *key;    /* NULL: "value", with its percentiles */
        const char *metric; /* of its rows; NULL: each implementation's */
        uint32_t nimpl;     /* read for the first nimpl implementations (0: no figure) */
    } figs[2];
    uint32_t nrequired;
    const rdlm_bench_dist_cmp_t *cmps;
    uint32_t ncmps;
    const char *unit;
} rdlm_bench_dist_table_t;

/** Run job once: its output (the caller frees it), or NULL after saying why on stderr
 *  as "rdlm-bench: <what>: ...". With job->verbose, its result lines on stderr. */
char *rdlm_bench_dist_run(const char *what, const rdlm_bench_mpi_job_t *job);

/** Add to m the rounds of figure fig of the program's implementation key in out (with
 *  "value", also their percentiles): their count, or -1 when out has none. */
int rdlm_bench_dist_rounds(const char *out, const char *key, const char *fig,
                           rdlm_bench_measure_t *m);

/**
 * The one reading of a program's result lines into the report: run job once for
 * bench (its command noted as a parameter), read the rows of t into m (measured at
 * procs, finished), then make t's comparisons. 0 and *out_p (the program's output,
 * for notes; the caller frees it), or -1 with the reason on stderr (also when a
 * required row has no round).
 */
int rdlm_bench_dist_job(rdlm_bench_report_t *r, const char *bench,
                        const rdlm_bench_mpi_job_t *job, const rdlm_bench_dist_table_t *t,
                        uint32_t procs, rdlm_bench_measure_t **m, char **out_p);

/** The baseline of a figure measured once: its label, value, and the ratio's target
 *  (RDLM_BENCH_TARGET_NONE: none). */
typedef struct rdlm_bench_dist_base {
    const char *label;
    double value;
    enum rdlm_bench_target kind;
    double target;
} rdlm_bench_dist_base_t;

/** rdlm's figure measured once (operations per operation, bytes) for bench at procs,
 *  in the final table beside base (NULL: alone). */
void rdlm_bench_dist_once(rdlm_bench_report_t *r, const char *bench, uint32_t procs,
                          const char *metric, const char *unit, double value,
                          const rdlm_bench_dist_base_t *base);

/** Measure benchmark def at every process count (-p, else def's defaults) of at least
 *  min_procs with run_procs, after noting params (if not NULL); a SKIP note instead
 *  when the program cannot run. 0, or -1 if a measurement failed. */
int rdlm_bench_dist_each(rdlm_bench_report_t *r, const rdlm_bench_def_t *def,
                         uint32_t min_procs, const char *params,
                         int (*run_procs)(rdlm_bench_report_t *r, uint32_t procs));

#endif
