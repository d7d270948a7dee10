/*
 * An unmodified MPI program: N barriers over MPI_COMM_WORLD, each checked with a
 * one-sided view (every rank writes its iteration into a window on rank 0 before the
 * barrier; after the barrier rank 0 sees them all), then one barrier over an
 * intercommunicator (which librdlm_pmpi.so leaves to MPI). Run it with and without
 * the shim:
 *
 *   mpirun -np 4 ./barrier_c                                        # MPI's barrier
 *   mpirun -np 4 -x LD_PRELOAD=.../librdlm_pmpi.so -x RDLM_STATS=1 ./barrier_c
 *
 * usage: barrier_c [iterations (default 100)]
 */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

int main(int argc, char **argv)
{
    int rank, size, iters = argc > 1 ? atoi(argv[1]) : 100, errors = 0;
    int *seen = NULL;
    double t0, t;
    MPI_Win win;
    MPI_Comm half, inter;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Win_allocate(rank == 0 ? (MPI_Aint)(size * sizeof(int)) : 0, sizeof(int),
                     MPI_INFO_NULL, MPI_COMM_WORLD, &seen, &win);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int i = 1; i <= iters; i++) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        MPI_Put(&i, 1, MPI_INT, 0, rank, 1, MPI_INT, win);
        MPI_Win_unlock(0, win); /* complete at rank 0 before the barrier */
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
            for (int r = 0; r < size; r++) {
                errors += seen[r] < i;
            }
            MPI_Win_unlock(0, win);
        }
        MPI_Barrier(MPI_COMM_WORLD); /* nobody writes i + 1 before rank 0 checked i */
    }
    t = MPI_Wtime() - t0;

    /* An intercommunicator between the two halves of the job. */
    if (size >= 2) {
        MPI_Comm_split(MPI_COMM_WORLD, rank < size / 2, rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank < size / 2 ? size / 2 : 0, 7,
                             &inter);
        MPI_Barrier(inter);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }
    MPI_Win_free(&win);
    if (rank == 0) {
        printf("barrier_c: %d ranks, %d checked barriers (%d barrier calls), %.1f us per "
               "iteration, %s\n", size, iters, 2 * iters + 1, 1e6 * t / iters,
               errors ? "FAILED" : "every write visible after its barrier");
    }
    MPI_Finalize();
    return errors != 0;
}
