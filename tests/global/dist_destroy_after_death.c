/*
 * rdlm_ctx_destroy after a process of the context died (ctest
 * global.destroy_after_death*): under `mpirun --mca orte_enable_recovery 1` (without it
 * Open MPI aborts the job when a rank dies), 3 ranks make a context, meet at its
 * barrier, and the last rank kills itself; the others wait 500 ms and destroy their
 * contexts, which must return within DESTROY_BOUND_S: destroy is collective, but a
 * barrier with a dead member can only time out, so it gives up once the death is
 * known (the transport's watch over TCP, the process's record on this host). It took
 * 31 s before (the bootstrap's 30 s timeout, then 1 s more at finalize).
 *
 * Rank 1 sends its time to rank 0 (point to point between the live ranks still
 * works), which prints "destroy_after_death: PASS" or "FAIL" (ctest matches that).
 * Then the survivors _exit without MPI_Finalize: Open MPI 4.1's finalize waits in a
 * PMIx fence that includes the dead rank and, about one run in seven, never returns.
 */
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>
#include <rdlm.h>
#include <rdlm/mpi.h>

#define DESTROY_BOUND_S 5.0

static double now_s(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    int rank, size;
    double t0, took;
    rdlm_ctx_h ctx;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rdlm_mpi_ctx_create(MPI_COMM_WORLD, NULL, &ctx) != RDLM_OK ||
        rdlm_ctx_barrier(ctx) != RDLM_OK) {
        fprintf(stderr, "rank %d: no context\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rank == size - 1) {
        raise(SIGKILL);
    }
    usleep(500000);
    t0 = now_s();
    rdlm_ctx_destroy(ctx);
    took = now_s() - t0;
    printf("rank %d: rdlm_ctx_destroy took %.2f s after rank %d died (bound %.0f s)\n",
           rank, took, size - 1, DESTROY_BOUND_S);
    if (rank == 1) {
        MPI_Send(&took, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
    } else if (rank == 0) {
        double other = DESTROY_BOUND_S + 1;

        MPI_Recv(&other, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("destroy_after_death: %s\n",
               took <= DESTROY_BOUND_S && other <= DESTROY_BOUND_S ? "PASS" : "FAIL");
    }
    fflush(stdout);
    _exit(0);
}
