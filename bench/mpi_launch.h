/*
 * Runs the MPI_Barrier baseline (rdlm-mpi-barrier-baseline) under the mpirun found
 * at configure time, with Open MPI's run-as-root variables, over shared memory
 * (pml ob1, btl self,vader), and parses its RESULT line.
 */
#ifndef RDLM_BENCH_MPI_LAUNCH_H
#define RDLM_BENCH_MPI_LAUNCH_H

#include <stddef.h>
#include <stdint.h>

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
