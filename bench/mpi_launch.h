/*
 * Runs rdlm-bench's MPI programs (found beside it: rdlm_bench_mpi_find) under mpirun
 * (the configured launcher's name in PATH, else its configured path), with Open
 * MPI's run-as-root variables, --oversubscribe and --bind-to none (rdlm's processes
 * are not bound either), the job's MCA parameters and exported variables, and
 * collects their output, from which the caller reads the result lines
 * (mpi_result.h). The MPI_Barrier baseline of the `barrier`
 * benchmark (rdlm-mpi-barrier-bench --impls mpi, over shared memory: pml ob1, btl
 * self,vader) has its own entry point below.
 */
#ifndef RDLM_BENCH_MPI_LAUNCH_H
#define RDLM_BENCH_MPI_LAUNCH_H

#include <stddef.h>
#include <stdint.h>

/** One mpirun. */
typedef struct rdlm_bench_mpi_job {
    const char *program;          /**< path of the MPI program */
    uint32_t nprocs;              /**< -np */
    const char *const *args;      /**< the program's arguments, NULL-terminated */
    const char *const *mca;       /**< MCA name, value, name, value, ..., NULL */
    const char *const *env;       /**< "NAME=value" exported to the ranks (-x), NULL-ended */
    const char *const *unset_env; /**< names removed from mpirun's environment, NULL-ended */
    uint32_t timeout_s;           /**< kill mpirun and its ranks after this (0: 60 s) */
    int verbose;                  /**< print the command on stderr */
} rdlm_bench_mpi_job_t;

/** 1 if mpirun and program can be run; else 0 and why names what is missing. */
int rdlm_bench_mpi_can_run(const char *program, char *why, size_t whylen);

/** The command line of job (without the run-as-root variables), for notes. */
void rdlm_bench_mpi_command(const rdlm_bench_mpi_job_t *job, char *buf, size_t len);

/** Run job once. 0 and *out_p (malloc'ed, NUL-terminated stdout and stderr, the
 *  caller frees) when mpirun exited with 0; else -1 with why (the output's start). */
int rdlm_bench_mpi_run(const rdlm_bench_mpi_job_t *job, char **out_p, char *why,
                       size_t whylen);

/**
 * Where name, a program or library rdlm-bench runs, is: a program beside rdlm-bench's
 * own executable (/proc/self/exe; the build tree and an installed bin alike), else in
 * PATH; a library (name holds ".so") in the installed lib directory relative to it,
 * else in the build tree's, relative too (no build-tree path is compiled in). NULL
 * when not found. The string lives until exit. Not thread-safe.
 */
const char *rdlm_bench_mpi_find(const char *name);

/** The path of rdlm-mpi-barrier-bench (mpi_barrier_bench.c), or NULL if not built or
 *  not found (rdlm_bench_mpi_find). */
const char *rdlm_bench_mpi_barrier_program(void);

/* ---- the MPI_Barrier baseline ----------------------------------------------------- */

typedef struct rdlm_bench_mpi_result {
    double us_max;  /**< max over ranks of elapsed / iterations, us per barrier */
    double p50_us;  /**< max over ranks of each rank's percentile of single barriers */
    double p90_us;
    double p99_us;
    uint64_t done;  /**< barriers measured (fewer than asked if the time cap hit) */
} rdlm_bench_mpi_result_t;

/** 1 if the baseline can be run; else 0 and why names what is missing. */
int rdlm_bench_mpi_available(char *why, size_t whylen);

/** The mpirun command line used, for the header and -v. */
const char *rdlm_bench_mpi_describe(void);

/** Run nprocs ranks once, measuring at most iterations barriers or cap_ms. 0 and
 *  *result_p filled, or -1 with why (the program's output kept). */
int rdlm_bench_mpi_barrier(uint32_t nprocs, uint64_t iterations, uint64_t warmup,
                           uint32_t cap_ms, int verbose, rdlm_bench_mpi_result_t *result_p,
                           char *why, size_t whylen);

#endif
