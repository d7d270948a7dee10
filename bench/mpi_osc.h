/*
 * The one-sided (osc) component the MPI baselines of rdlm-mpi-lock-bench run on, so
 * that the program run as plainly as osu_latency ("mpirun -np 2 ...") does not crash.
 */
#ifndef RDLM_BENCH_MPI_OSC_H
#define RDLM_BENCH_MPI_OSC_H

/** The components chosen when the user chose none: shared memory on one machine,
 *  point-to-point (the target progresses in its MPI calls) across machines. */
#define RDLM_BENCH_MPI_OSC_DEFAULT "sm,pt2pt"

/** Who chose the osc component (rdlm_bench_mpi_osc_choose). */
enum rdlm_bench_mpi_osc {
    RDLM_BENCH_OSC_NOT_OMPI = -1, /**< not Open MPI: nothing chosen */
    RDLM_BENCH_OSC_USER = 0,      /**< the user (OMPI_MCA_osc was set) */
    RDLM_BENCH_OSC_CHOSEN = 1,    /**< this function: RDLM_BENCH_MPI_OSC_DEFAULT */
};

/**
 * Call before MPI_Init. Under Open MPI, when the user chose no osc component
 * (OMPI_MCA_osc unset: no "--mca osc X", no "-x OMPI_MCA_osc"), choose
 * RDLM_BENCH_MPI_OSC_DEFAULT by setting OMPI_MCA_osc: Open MPI 4.1's default on one
 * machine, osc rdma over btl vader, crashes in a 64-bit MPI_Compare_and_swap (Open MPI
 * issues 7967, 11349; osu_cas_latency crashes the same way). *osc_p: the component
 * list in force ("default" when not known). Not thread-safe (setenv).
 */
enum rdlm_bench_mpi_osc rdlm_bench_mpi_osc_choose(const char **osc_p);

#endif
