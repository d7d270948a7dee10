/*
 * counter: the ranks of an MPI job hand out work items with a job-wide counter and
 * limit concurrent "I/O" with a semaphore.
 *
 * Each rank takes item numbers with rdlm_counter_fetch_add(items, 1) until they run
 * out (every item is handed out exactly once, whatever the number of ranks or nodes),
 * "processes" each one, and writes its result while holding one of 2 permits of the
 * semaphore "io" (at most 2 ranks write at once). A sharded counter counts the
 * results cheaply (each node adds to its own shard). Rank 0 checks the totals.
 *
 *   mpirun -np 4 --oversubscribe -x RDLM_VIRTUAL_NODES=2 -x UCX_TLS=tcp,self \
 *          build/examples/counter [items (default 1000)]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>
#include <rdlm.h>
#include <rdlm/mpi.h>

static int check(rdlm_status_t status, const char *what)
{
    if (status != RDLM_OK) {
        fprintf(stderr, "counter: %s: %s\n", what, rdlm_status_str(status));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return 0;
}

int main(int argc, char **argv)
{
    int64_t nitems = argc > 1 ? atoll(argv[1]) : 1000, item, done = 0, total = 0;
    int64_t mine[2] = {0, 0}, sums[2] = {0, 0}; /* items, sum of item numbers */
    rdlm_counter_h items, results;
    rdlm_sem_h io;
    rdlm_stats_t st;
    rdlm_ctx_h ctx;
    int rank, size;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    check(rdlm_mpi_ctx_create(MPI_COMM_WORLD, NULL, &ctx), "rdlm_mpi_ctx_create");
    check(rdlm_counter_open(ctx, "items", &items), "open items");
    check(rdlm_counter_open_sharded(ctx, "results", &results), "open results");
    check(rdlm_sem_open(ctx, "io", 2, &io), "open io");
    for (;;) {
        check(rdlm_counter_fetch_add(items, 1, &item), "take an item");
        if (item >= nitems) {
            break;
        }
        mine[0]++;
        mine[1] += item;
        check(rdlm_sem_acquire(io, 1, RDLM_TIMEOUT_INFINITE), "io acquire");
        /* ... write the item's result: at most 2 ranks here at once ... */
        check(rdlm_sem_release(io, 1), "io release");
        check(rdlm_counter_fetch_add(results, 1, NULL), "count a result");
    }
    rdlm_ctx_stats(ctx, &st);
    MPI_Reduce(mine, sums, 2, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    check(rdlm_ctx_barrier(ctx), "barrier"); /* every result counted before the read */
    if (rank == 0) {
        check(rdlm_counter_read(results, &done), "read results");
        total = nitems * (nitems - 1) / 2;
        printf("counter: %d ranks handed out %" PRId64 " items (sum %" PRId64 ", want %" PRId64
               "), %" PRId64 " results counted; rank 0 served %" PRIu64
               " other fetch-adds in its combined ones\n",
               size, sums[0], sums[1], total, done, st.combined);
        printf("counter: %s\n", sums[0] == nitems && sums[1] == total && done == nitems
                                    ? "ok"
                                    : "FAILED");
    }
    rdlm_ctx_destroy(ctx);
    MPI_Finalize();
    return 0;
}
