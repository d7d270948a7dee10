/*
 * mpi_lock: the ranks of an MPI job share one job-wide lock and a fenced file.
 *
 * Every rank takes the lock "journal" ROUNDS times and appends "token rank" to a file
 * under it; the file (fenced_file.c) accepts a write only if rdlm_fence_check passes
 * its token. At the end rank 0 plays a holder that was paused and wakes up late: it
 * writes with the first token it ever got, and the file rejects it. Rank 0 then checks
 * the file (every rank's writes there, tokens strictly increasing) and prints where
 * the lock was served from (global acquires vs hand-offs inside a node).
 *
 *   mpirun -np 4 --oversubscribe -x RDLM_VIRTUAL_NODES=2 -x UCX_TLS=tcp,self \
 *          build/examples/mpi_lock [file]
 *
 * On a cluster, put the file on a shared file system (default: /tmp, one machine).
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include <mpi.h>
#include <rdlm.h>
#include <rdlm/mpi.h>

#include "fenced_file.h"

#define ROUNDS 200

static int fail(const char *what, rdlm_status_t status)
{
    fprintf(stderr, "mpi_lock: %s: %s\n", what, rdlm_status_str(status));
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
}

int main(int argc, char **argv)
{
    char path[256];
    rdlm_ctx_dist_info_t info;
    rdlm_stats_t stats;
    rdlm_status_t status;
    rdlm_lock_h lock;
    rdlm_ctx_h ctx;
    uint64_t first_token = 0, sums[2], totals[2];
    int rank, size, fd, errors = 0, all_errors = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    snprintf(path, sizeof(path), "%s", argc > 1 ? argv[1] : "/tmp/rdlm-mpi-lock.log");
    if (rank == 0 && fenced_file_create(path) != 0) {
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    if ((status = rdlm_mpi_ctx_create(MPI_COMM_WORLD, NULL, &ctx)) != RDLM_OK) {
        return fail("rdlm_mpi_ctx_create", status);
    }
    rdlm_ctx_dist_info(ctx, &info);
    if (rank == 0) {
        printf("mpi_lock: %u ranks on %u nodes over %s, cohort bound %u, token epoch %u\n",
               info.size, info.nodes, info.transport, info.cohort_bound, info.token_epoch);
    }
    if ((status = rdlm_lock_open(ctx, "journal", &lock)) != RDLM_OK) {
        return fail("rdlm_lock_open", status);
    }
    fd = open(path, O_RDWR);
    if (fd < 0) {
        perror(path);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int i = 0; i < ROUNDS; i++) {
        uint64_t token;

        if ((status = rdlm_lock_acquire(lock, RDLM_TIMEOUT_INFINITE, &token)) != RDLM_OK) {
            return fail("rdlm_lock_acquire", status);
        }
        first_token = first_token != 0 ? first_token : token;
        errors += fenced_file_write(fd, token, rank) != RDLM_OK;
        rdlm_lock_release(lock);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    rdlm_ctx_stats(ctx, &stats);
    sums[0] = stats.global_acquires;
    sums[1] = stats.local_handoffs;
    MPI_Reduce(sums, totals, 2, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&errors, &all_errors, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        int increasing;
        long records;

        /* A holder paused since its first acquire wakes up and writes. */
        status = fenced_file_write(fd, first_token, rank);
        printf("mpi_lock: a late write with token %#" PRIx64 ": %s\n", first_token,
               rdlm_status_str(status));
        all_errors += status != RDLM_ERR_STALE_TOKEN;
        records = fenced_file_check(path, &increasing);
        printf("mpi_lock: %ld fenced writes (expected %d), tokens %s; %" PRIu64
               " global acquires, %" PRIu64 " hand-offs inside a node\n",
               records, size * ROUNDS, increasing ? "strictly increasing" : "NOT increasing",
               totals[0], totals[1]);
        all_errors += records != (long)size * ROUNDS || !increasing;
        printf("mpi_lock: %s\n", all_errors ? "FAILED" : "ok");
        unlink(path);
    }
    close(fd);
    rdlm_ctx_destroy(ctx);
    MPI_Bcast(&all_errors, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return all_errors != 0;
}
