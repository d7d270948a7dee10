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
 * With "split" (one host only), the barriers run on the two halves of the job at once
 * (MPI_Comm_split by rank < size / 2), each half its own communicator: two rdlm
 * contexts whose ranks share the node, each with its own node segment. They are
 * checked with the host's monotonic clock instead of a window (Open MPI 4.1's
 * shared-memory windows of two such halves can collide on one file name): no rank
 * of a half leaves barrier i before every rank of the half arrived at it.
 *
 * usage: barrier_c [iterations (default 100)] [split]
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

static double now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* 2 * iters + 1 barriers on comm, stamped; errors on rank 0 of comm (0 elsewhere):
 * barriers that a rank left before another arrived. */
static int check_split(MPI_Comm comm, int iters)
{
    int n = 2 * iters + 1, crank, errors = 0;
    double *arrive = malloc(n * sizeof(double)), *leave = malloc(n * sizeof(double));
    double *last_in = malloc(n * sizeof(double)), *first_out = malloc(n * sizeof(double));

    MPI_Comm_rank(comm, &crank);
    for (int i = 0; i < n; i++) {
        arrive[i] = now_us();
        MPI_Barrier(comm);
        leave[i] = now_us();
    }
    MPI_Reduce(arrive, last_in, n, MPI_DOUBLE, MPI_MAX, 0, comm);
    MPI_Reduce(leave, first_out, n, MPI_DOUBLE, MPI_MIN, 0, comm);
    for (int i = 0; crank == 0 && i < n; i++) {
        errors += first_out[i] < last_in[i];
    }
    free(arrive);
    free(leave);
    free(last_in);
    free(first_out);
    return errors;
}

int main(int argc, char **argv)
{
    int rank, size, iters = argc > 1 ? atoi(argv[1]) : 100, errors = 0, all_errors = 0;
    int split = argc > 2 && strcmp(argv[2], "split") == 0, crank, csize;
    int *seen = NULL;
    double t0, t;
    MPI_Win win;
    MPI_Comm comm, half, inter;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    comm = MPI_COMM_WORLD;
    if (split) {
        MPI_Comm_split(MPI_COMM_WORLD, rank < size / 2, rank, &comm);
    }
    MPI_Comm_rank(comm, &crank);
    MPI_Comm_size(comm, &csize);
    if (split) {
        t0 = MPI_Wtime();
        errors = check_split(comm, iters);
        t = MPI_Wtime() - t0;
    } else {
        MPI_Win_allocate(crank == 0 ? (MPI_Aint)(csize * sizeof(int)) : 0, sizeof(int),
                         MPI_INFO_NULL, comm, &seen, &win);
        MPI_Barrier(comm);
        t0 = MPI_Wtime();
        for (int i = 1; i <= iters; i++) {
            MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
            MPI_Put(&i, 1, MPI_INT, 0, crank, 1, MPI_INT, win);
            MPI_Win_unlock(0, win); /* complete at rank 0 before the barrier */
            MPI_Barrier(comm);
            if (crank == 0) {
                MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
                for (int r = 0; r < csize; r++) {
                    errors += seen[r] < i;
                }
                MPI_Win_unlock(0, win);
            }
            MPI_Barrier(comm); /* nobody writes i + 1 before rank 0 checked i */
        }
        t = MPI_Wtime() - t0;
        MPI_Win_free(&win);
    }
    if (split) {
        MPI_Comm_free(&comm);
    }
    MPI_Allreduce(&errors, &all_errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);

    /* An intercommunicator between the two halves of the job. */
    if (size >= 2) {
        MPI_Comm_split(MPI_COMM_WORLD, rank < size / 2, rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank < size / 2 ? size / 2 : 0, 7,
                             &inter);
        MPI_Barrier(inter);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }
    if (rank == 0) {
        printf("barrier_c: %d ranks%s, %d checked barriers (%d barrier calls), %.1f us per "
               "iteration, %s\n", size, split ? " in two halves" : "", iters, 2 * iters + 1,
               1e6 * t / iters,
               all_errors ? "FAILED"
               : split    ? "no rank left a barrier before its half arrived"
                          : "every write visible after its barrier");
    }
    MPI_Finalize();
    return all_errors != 0;
}
