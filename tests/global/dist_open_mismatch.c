/*
 * dist_open_mismatch — a name opened on another node as another kind, or a semaphore
 * or barrier opened there with another size (helper-57's findings, 2026-12-07).
 *
 * Before: opening a counter's name as a lock on the other node returned RDLM_OK and the
 * two objects shared their words at the home (the counter read garbage; with
 * RDLM_LOCK_AM=0 the lock then failed with RDLM_ERR_CORRUPT and a release waited for
 * ever); and after one open with a wrong size, every later open on that node, right
 * ones included, returned RDLM_ERR_MISMATCH (the wrong entry stayed in the node's
 * table).
 *
 * 4 processes forked by the parent, 2 virtual nodes (standalone rendezvous, UCX TCP).
 * Rank 0 (node A) makes counter "k" (adds 1), sem "s" (3 permits), barrier "b" (4);
 * a process of node B makes lock "l". Then on node B: "k" as a lock, rwlock, semaphore
 * or barrier is RDLM_ERR_KIND_MISMATCH, as a counter it reads 1; "s" with 4 permits
 * and "b" for 5 are RDLM_ERR_MISMATCH, and right after, the same process and its
 * node-mate open them with the right sizes. On node A, "l" as a counter is
 * RDLM_ERR_KIND_MISMATCH and as a lock it works.
 *
 * Exit: 0 pass, 1 fail.
 */
#include <stdio.h>
#include <stdlib.h>

#include <rdlm.h>

#include "procs.h"

#define NPROCS 4
#define PARENT_LIMIT_S 90.0

#define FAIL(...) procs_fail("dist_open_mismatch", rank, __VA_ARGS__)
#define WANT(call, want)                                                                   \
    do {                                                                                   \
        rdlm_status_t got_ = (call);                                                       \
        if (got_ != (want))                                                                \
            FAIL("%s: %s, want %s", #call, rdlm_status_name(got_),                         \
                 rdlm_status_name(want));                                                  \
    } while (0)

static void barrier(unsigned rank, rdlm_ctx_h ctx)
{
    WANT(rdlm_ctx_barrier(ctx), RDLM_OK);
}

static int child(unsigned rank, const char *rendezvous)
{
    rdlm_ctx_dist_info_t di;
    rdlm_ctx_h ctx;
    rdlm_counter_h k = NULL;
    rdlm_lock_h l = NULL, lk;
    rdlm_rwlock_h rw;
    rdlm_sem_h s = NULL;
    rdlm_barrier_h b = NULL, bk;
    rdlm_counter_h kl;
    rdlm_sem_h sk;
    uint64_t token;
    int64_t v = 0;
    int on_b, first;

    WANT(procs_join(rank, NPROCS, rendezvous, &ctx), RDLM_OK);
    if (rdlm_ctx_dist_info(ctx, &di) != RDLM_OK || di.nodes != 2 || di.local_size != 2)
        FAIL("not a context of 2 nodes of 2 processes");
    if (rank == 0 && di.node != 0)
        FAIL("rank 0 on node %u (the test takes node 0 for rank 0's)", di.node);
    on_b = di.node == 1;
    first = on_b && di.local_rank == 0;

    /* 1: node A makes "k", "s", "b"; node B makes "l" */
    if (rank == 0) {
        WANT(rdlm_counter_open(ctx, "k", &k), RDLM_OK);
        WANT(rdlm_counter_fetch_add(k, 1, &v), RDLM_OK);
        WANT(rdlm_sem_open(ctx, "s", 3, &s), RDLM_OK);
        WANT(rdlm_barrier_open(ctx, "b", 4, &b), RDLM_OK);
    }
    if (first)
        WANT(rdlm_lock_open(ctx, "l", &l), RDLM_OK);
    barrier(rank, ctx);

    /* 2: node B's first process opens them wrongly */
    if (first) {
        WANT(rdlm_lock_open(ctx, "k", &lk), RDLM_ERR_KIND_MISMATCH);
        WANT(rdlm_rwlock_open(ctx, "k", &rw), RDLM_ERR_KIND_MISMATCH);
        WANT(rdlm_sem_open(ctx, "k", 2, &sk), RDLM_ERR_KIND_MISMATCH);
        WANT(rdlm_barrier_open(ctx, "k", 4, &bk), RDLM_ERR_KIND_MISMATCH);
        WANT(rdlm_sem_open(ctx, "s", 4, &sk), RDLM_ERR_MISMATCH);
        WANT(rdlm_barrier_open(ctx, "b", 5, &bk), RDLM_ERR_MISMATCH);
    }
    barrier(rank, ctx);

    /* 3: then the right opens work on node B, first for the node-mate (which never
     * opened them wrongly), then for the process that did (one at a time: while a
     * process is inside a wrong open, a right one on its node may meet that entry) */
    for (int turn = 0; turn < 2; turn++) {
        if (on_b && first == turn) {
            WANT(rdlm_counter_open(ctx, "k", &k), RDLM_OK);
            WANT(rdlm_counter_read(k, &v), RDLM_OK);
            if (v != 1)
                FAIL("counter \"k\" reads %lld on node B, want 1", (long long)v);
            WANT(rdlm_sem_open(ctx, "s", 3, &s), RDLM_OK);
            WANT(rdlm_barrier_open(ctx, "b", 4, &b), RDLM_OK);
        }
        barrier(rank, ctx);
    }
    if (rank == 0) {
        WANT(rdlm_counter_open(ctx, "l", &kl), RDLM_ERR_KIND_MISMATCH);
        WANT(rdlm_lock_open(ctx, "l", &l), RDLM_OK);
        WANT(rdlm_lock_acquire(l, 10ull * 1000000000ull, &token), RDLM_OK);
        WANT(rdlm_lock_release(l), RDLM_OK);
    }
    if (!on_b && rank != 0)
        WANT(rdlm_barrier_open(ctx, "b", 4, &b), RDLM_OK);
    barrier(rank, ctx);

    /* 4: the barrier of 4 and the semaphore of 3 work across the nodes */
    WANT(rdlm_barrier_wait(b, 30ull * 1000000000ull), RDLM_OK);
    if (s != NULL) {
        WANT(rdlm_sem_acquire(s, 3, 10ull * 1000000000ull), RDLM_OK);
        WANT(rdlm_sem_release(s, 3), RDLM_OK);
    }
    barrier(rank, ctx);
    rdlm_ctx_destroy(ctx);
    return 0;
}

int main(void)
{
    return procs_main("dist_open_mismatch", "t-open-mismatch", "2", NPROCS, child,
                      PARENT_LIMIT_S);
}
