/*
 * mpi_bad_config — one rank with a bad configuration value does not leave the others
 * waiting: rdlm_mpi_ctx_create fails on every rank, within ANSWER_LIMIT_S, with the
 * bad rank's RDLM_ERR_BAD_CONFIG; then, with the value gone, a second create succeeds
 * everywhere (the ranks are still in step). Before, the other ranks waited in the
 * create's first collective until the MPI bootstrap's timeout: RDLM_ERR_TIMEOUT after
 * 30 s (the test failed after 31.5 s).
 *
 * The last rank sets RDLM_SPIN=not-a-number before its first create. A watchdog
 * (alarm) ends a rank stuck in a create with a FAIL line and MPI_Abort.
 * Exit: 0 pass, 1 fail (FAIL on stdout).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>
#include <rdlm.h>
#include <rdlm/mpi.h>

#define ANSWER_LIMIT_S 10.0
#define WATCHDOG_S 60

static int rank;

static void watchdog(int sig)
{
    (void)sig;
    printf("mpi_bad_config rank %d: FAIL: rdlm_mpi_ctx_create did not return within %d "
           "s\n",
           rank, WATCHDOG_S);
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static double now_s(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    rdlm_ctx_h ctx = NULL;
    rdlm_status_t s;
    int size, failed = 0, any;
    double t0, took;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    signal(SIGALRM, watchdog);
    alarm(WATCHDOG_S);
    if (rank == size - 1) {
        setenv("RDLM_SPIN", "not-a-number", 1);
    }
    t0 = now_s();
    s = rdlm_mpi_ctx_create(MPI_COMM_WORLD, NULL, &ctx);
    took = now_s() - t0;
    if (s != RDLM_ERR_BAD_CONFIG || took > ANSWER_LIMIT_S) {
        printf("mpi_bad_config rank %d: FAIL: the first create returned %s after %.2f s "
               "(want RDLM_ERR_BAD_CONFIG within %.0f s)\n",
               rank, rdlm_status_name(s), took, ANSWER_LIMIT_S);
        failed = 1;
        if (s == RDLM_OK) {
            rdlm_ctx_destroy(ctx);
        }
    }
    unsetenv("RDLM_SPIN");
    s = rdlm_mpi_ctx_create(MPI_COMM_WORLD, NULL, &ctx);
    if (s != RDLM_OK) {
        printf("mpi_bad_config rank %d: FAIL: the second create returned %s\n", rank,
               rdlm_status_name(s));
        failed = 1;
    } else {
        if (rdlm_ctx_barrier(ctx) != RDLM_OK) {
            printf("mpi_bad_config rank %d: FAIL: a barrier after the second create\n",
                   rank);
            failed = 1;
        }
        rdlm_ctx_destroy(ctx);
    }
    alarm(0);
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("mpi_bad_config: %s\n", any ? "FAILED" : "passed");
    }
    MPI_Finalize();
    return any;
}
