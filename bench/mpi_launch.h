/*
 * Runs rdlm-bench's MPI programs (found beside it: rdlm_bench_mpi_find) under mpirun
 * (the configured launcher's name in PATH, else its configured path), with Open
 * MPI's run-as-root variables, --oversubscribe and --bind-to none (rdlm's processes
 * are not bound either), the job's MCA parameters and exported variables, and
 * collects their output, from which the caller reads the result lines
 * (mpi_result.h; bench_dist.h reads them into the report).
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

/** The names of the MPI programs and of the MPI_Barrier shim library, as the build
 *  defines them; NULL when not built (rdlm_bench_mpi_find then finds nothing). */
#ifndef RDLM_BENCH_MPI_LOCK_BENCH
#define RDLM_BENCH_MPI_LOCK_BENCH NULL
#endif
#ifndef RDLM_BENCH_MPI_BARRIER_BENCH
#define RDLM_BENCH_MPI_BARRIER_BENCH NULL
#endif
#ifndef RDLM_BENCH_PMPI_LIB
#define RDLM_BENCH_PMPI_LIB NULL
#endif

/**
 * Where name, a program or library rdlm-bench runs, is: a program beside rdlm-bench's
 * own executable (/proc/self/exe; the build tree and an installed bin alike), else in
 * PATH; a library (name holds ".so") in the installed lib directory relative to it,
 * else in the build tree's, relative too (no build-tree path is compiled in). NULL
 * when not found or name is NULL. The string lives until exit. Not thread-safe.
 */
const char *rdlm_bench_mpi_find(const char *name);

#endif
