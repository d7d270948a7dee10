/*
 * One job of several that write, one after another, to a fenced file that outlives
 * them (ctest global.epoch_jobs runs it twice back to back, within the same second).
 *
 * usage: mpirun -np N rdlm_global_epoch_jobs FILE ROUNDS
 *
 * Every rank acquires the lock "fenced-file" ROUNDS times; under it, the holder reads
 * the highest token FILE has accepted and writes its own, which must be strictly
 * larger: each acquire is a new holder, so an equal token means two holders with one
 * token, and a smaller one a write the file would reject. A later job's tokens must
 * therefore be larger than every earlier job's (they once began again at the same
 * token when two jobs started in the same minute). Rank 0 creates FILE if missing.
 * Exit: 0 all writes accepted, 1 a write rejected or an error.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <mpi.h>
#include <rdlm.h>
#include <rdlm/mpi.h>

static int fenced_write(int fd, uint64_t token, int rank)
{
    uint64_t highest = 0;

    if (pread(fd, &highest, sizeof(highest), 0) < 0) {
        perror("pread");
        return 1;
    }
    if (token <= highest) {
        fprintf(stderr, "rank %d: token %#" PRIx64 " not above the file's %#" PRIx64 "\n",
                rank, token, highest);
        return 1;
    }
    if (pwrite(fd, &token, sizeof(token), 0) != (ssize_t)sizeof(token)) {
        perror("pwrite");
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int rank, fd, bad = 0, all_bad = 0;
    long rounds = argc == 3 ? strtol(argv[2], NULL, 10) : 0;
    rdlm_ctx_dist_info_t di;
    uint64_t token, first = 0;
    rdlm_lock_h lock;
    rdlm_ctx_h ctx;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rounds <= 0) {
        fprintf(stderr, "usage: %s FILE ROUNDS\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    fd = open(argv[1], O_RDWR | (rank == 0 ? O_CREAT : 0), 0600);
    MPI_Barrier(MPI_COMM_WORLD);
    if (fd < 0 && (fd = open(argv[1], O_RDWR)) < 0) {
        perror(argv[1]);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rdlm_mpi_ctx_create(MPI_COMM_WORLD, NULL, &ctx) != RDLM_OK ||
        rdlm_lock_open(ctx, "fenced-file", &lock) != RDLM_OK ||
        rdlm_ctx_dist_info(ctx, &di) != RDLM_OK) {
        fprintf(stderr, "rank %d: no context or lock\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (long i = 0; i < rounds && !bad; i++) {
        rdlm_status_t s = rdlm_lock_acquire(lock, 10000000000ull, &token);

        if (s != RDLM_OK) {
            fprintf(stderr, "rank %d: acquire: %s\n", rank, rdlm_status_str(s));
            bad = 1;
            break;
        }
        first = first != 0 ? first : token;
        bad = fenced_write(fd, token, rank);
        rdlm_lock_release(lock);
    }
    MPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("token epoch %u, rank 0's first token %#" PRIx64 ": %s\n", di.token_epoch,
               first, all_bad ? "a write was rejected" : "every write accepted");
    }
    rdlm_lock_close(lock);
    rdlm_ctx_destroy(ctx);
    close(fd);
    MPI_Finalize();
    return all_bad;
}
