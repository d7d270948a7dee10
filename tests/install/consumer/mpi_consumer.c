/* An external MPI program built against an installed rdlm: every rank takes a job-wide
 * lock once (tokens must differ across ranks), then calls MPI_Barrier, which the
 * preloaded librdlm_pmpi.so may replace. Prints "mpi consumer: ok" on rank 0; exit 0
 * on success. */
#include <stdint.h>
#include <stdio.h>

#include <rdlm/mpi.h>

int main(int argc, char **argv)
{
    rdlm_ctx_h ctx;
    rdlm_lock_h lock;
    uint64_t token = 0, max = 0, min = 0;
    rdlm_status_t status;
    int rank, ok;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    status = rdlm_mpi_ctx_create(MPI_COMM_WORLD, NULL, &ctx);
    if (status == RDLM_OK) {
        status = rdlm_lock_open(ctx, "mpi-consumer", &lock);
        if (status == RDLM_OK) {
            status = rdlm_lock_acquire(lock, 10000, &token);
        }
        if (status == RDLM_OK) {
            status = rdlm_lock_release(lock);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        rdlm_ctx_destroy(ctx);
    }
    if (status != RDLM_OK) {
        fprintf(stderr, "mpi consumer, rank %d: %s\n", rank, rdlm_status_str(status));
    }
    ok = status == RDLM_OK && token != 0;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    MPI_Allreduce(&token, &max, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&token, &min, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("mpi consumer: %s (tokens %llu..%llu)\n", ok && min != max ? "ok" : "FAIL",
               (unsigned long long)min, (unsigned long long)max);
    }
    MPI_Finalize();
    return ok && min != max ? 0 : 1;
}
