/*
 * dist_sem_seen_dead — a live process waiting for a cross-node semaphore, which the
 * semaphore's home counts as dead when its turn comes (a transport that wrongly
 * reports a peer lost: the test hook RDLMTEST_AMQ_SEEN_DEAD), gets an answer: its
 * acquire ends with RDLM_ERR_PEER_DEAD long before its timeout. Before, the home
 * dropped its place without a word and it waited until its timeout (for ever
 * without one); tests/model/am_sem.pml found it.
 *
 * 3 processes forked by the parent join one context (standalone rendezvous on
 * 127.0.0.1, UCX TCP) on 2 virtual nodes: ranks 0 and 1 on node 0, rank 2 on node 1.
 * Rank 1 leads no node, so the home (a node leader) is another process. Semaphore
 * "pool" has 2 permits: ranks 0 and 2 take one each; rank 1 asks for one with
 * WAIT_TIMEOUT_NS; 300 ms later rank 2 gives its permit back, so rank 1's turn comes.
 * Rank 1 must get RDLM_ERR_PEER_DEAD within ANSWER_LIMIT_S, and once rank 0 gave its
 * permit back too, both permits must be free (the dropped place took none).
 *
 * Exit: 0 pass, 1 fail.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <rdlm.h>

#include "procs.h"

#define NPROCS 3
#define SEEN_DEAD 1
#define PERMITS 2
#define WAIT_TIMEOUT_NS 20000000000ull
#define ANSWER_LIMIT_S 5.0
#define PARENT_LIMIT_S 60.0

/* What the parent reads. */
static struct shared {
    atomic_int waiter_done;
    int acquired[NPROCS], released[NPROCS], available_status;
    uint32_t available_after;
    double waited_s;
} * sh;

#define FAIL(...) procs_fail("dist_sem_seen_dead", rank, __VA_ARGS__)

/* Rank 1: ask for a permit once the others hold theirs. */
static void waiter(unsigned rank, rdlm_ctx_h ctx, rdlm_sem_h sem)
{
    double t0;

    if (rdlm_ctx_barrier(ctx) != RDLM_OK)
        FAIL("barrier failed");
    t0 = procs_now_s();
    sh->acquired[rank] = rdlm_sem_acquire(sem, 1, WAIT_TIMEOUT_NS);
    sh->waited_s = procs_now_s() - t0;
    printf("waiter: %s after %.2f s\n", rdlm_status_name(sh->acquired[rank]), sh->waited_s);
    if (sh->acquired[rank] == RDLM_OK)
        sh->released[rank] = rdlm_sem_release(sem, 1);
    atomic_store(&sh->waiter_done, 1);
}

/* Ranks 0 and 2: hold a permit; rank 2 gives it back 300 ms after the barrier, rank 0
 * once the waiter is done, then counts the free ones. */
static void holder(unsigned rank, rdlm_ctx_h ctx, rdlm_sem_h sem)
{
    sh->acquired[rank] = rdlm_sem_acquire(sem, 1, WAIT_TIMEOUT_NS);
    if (rdlm_ctx_barrier(ctx) != RDLM_OK)
        FAIL("barrier failed");
    if (rank == 2) {
        usleep(300000); /* rank 1 queues meanwhile */
    } else {
        for (int i = 0; i < (int)PARENT_LIMIT_S * 100 && !atomic_load(&sh->waiter_done);
             i++)
            usleep(10000);
    }
    if (sh->acquired[rank] == RDLM_OK)
        sh->released[rank] = rdlm_sem_release(sem, 1);
    if (rank == 0)
        sh->available_status = rdlm_sem_available(sem, &sh->available_after);
}

static int child(unsigned rank, const char *rendezvous)
{
    rdlm_ctx_dist_info_t di;
    rdlm_ctx_h ctx = procs_join_two_nodes("dist_sem_seen_dead", rank, NPROCS, rendezvous,
                                          SEEN_DEAD, &di);
    rdlm_sem_h sem = procs_sem_am("dist_sem_seen_dead", rank, ctx, &di, "pool", PERMITS);

    if (rank == SEEN_DEAD)
        waiter(rank, ctx, sem);
    else
        holder(rank, ctx, sem);
    if (rdlm_ctx_barrier(ctx) != RDLM_OK)
        FAIL("barrier failed"); /* rank 0 counted before anyone leaves */
    rdlm_ctx_destroy(ctx);
    return 0;
}

/* 1 if the run went as it must (the file's comment). */
static int checked(void)
{
    int ok =
        procs_all_ok("dist_sem_seen_dead", NPROCS, SEEN_DEAD, sh->acquired, sh->released);

    if (sh->acquired[SEEN_DEAD] != RDLM_ERR_PEER_DEAD || sh->waited_s > ANSWER_LIMIT_S) {
        fprintf(stderr,
                "dist_sem_seen_dead: the waiter the home counts dead got %s after %.2f s "
                "(want RDLM_ERR_PEER_DEAD within %.0f s)\n",
                rdlm_status_name(sh->acquired[SEEN_DEAD]), sh->waited_s, ANSWER_LIMIT_S);
        ok = 0;
    }
    return procs_permits_free("dist_sem_seen_dead", sh->available_status,
                              sh->available_after, PERMITS) &&
           ok;
}

int main(void)
{
    unsigned rank = NPROCS; /* the parent, for FAIL */
    char rendezvous[32];
    pid_t pids[NPROCS];
    int port = procs_free_port(), failed;

    setvbuf(stdout, NULL, _IONBF, 0); /* children end with _exit */
    sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED || port < 0)
        FAIL("no shared memory or no free port");
    snprintf(rendezvous, sizeof(rendezvous), "127.0.0.1:%d", port);
    procs_env("t-sem-seen-dead", "2", 0);
    setenv("RDLMTEST_AMQ_SEEN_DEAD", "1", 1);
    if (procs_start(pids, NPROCS, child, rendezvous) != 0)
        FAIL("fork failed");
    failed = !procs_reap(pids, NPROCS, NPROCS /* no victim */, PARENT_LIMIT_S,
                         "dist_sem_seen_dead");
    failed |= !checked();
    printf("dist_sem_seen_dead: %s\n", failed ? "FAILED" : "passed");
    return failed;
}
