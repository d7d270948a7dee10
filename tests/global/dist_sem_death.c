/*
 * dist_sem_death — a cross-node semaphore whose holder dies: with leases, its
 * permits come back once the authority ended its lease (home-served semaphore,
 * core/global/amq_sem_held.c), and only then.
 *
 * 3 processes forked by the parent join one context (standalone rendezvous on
 * 127.0.0.1, UCX TCP) on 2 virtual nodes: ranks 0 and 1 on node 0, rank 2 on node 1,
 * with leases at the job's own authority (RDLM_JOB_AUTHORITY=1, TTL TTL_MS).
 * Semaphore "pool" has 2 permits. Rank 1, the victim, takes 1; rank 0 takes 1 and
 * holds it until rank 2 is done; rank 2 asks for 1, and 300 ms later the victim kills
 * itself (SIGKILL) holding its permit. Rank 2 must get the permit (RDLM_OK) within
 * ACQUIRE_TIMEOUT_NS, not before the victim died, while rank 0 still holds its own
 * (so the semaphore is never over its 2); after rank 0 and rank 2 released, 2 permits
 * must be free (nothing counted twice, nothing lost). Before the home tracked who
 * holds what, the victim's permit was lost and rank 2 timed out.
 *
 * --try: rank 2 only tries (timeout 0, every TRY_PAUSE_US, until ACQUIRE_TIMEOUT_NS),
 * as a process that polls does: it never queues, so the home must look for the dead
 * holder when a try is refused too (before, it looked only while someone waited, and
 * rank 2 never got the permit).
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
#define VICTIM 1
#define HOLDER 0
#define TAKER 2
#define PERMITS 2
#define TTL_MS "2000"
#define ACQUIRE_TIMEOUT_NS 30000000000ull
#define PARENT_LIMIT_S 90.0
#define TRY_PAUSE_US 20000

static int try_mode; /* --try */

/* What the parent reads. */
static struct shared {
    atomic_int victim_dying, holder_holds, taker_done;
    int acquired[NPROCS], released[NPROCS], granted_early, holder_let_go;
    uint32_t available_after;
    int available_status;
} * sh;

#define FAIL(...) procs_fail("dist_sem_death", rank, __VA_ARGS__)

static void victim(unsigned rank, rdlm_ctx_h ctx, rdlm_sem_h sem)
{
    sh->acquired[rank] = rdlm_sem_acquire(sem, 1, ACQUIRE_TIMEOUT_NS);
    if (sh->acquired[rank] != RDLM_OK)
        FAIL("acquire: %s", rdlm_status_str(sh->acquired[rank]));
    if (rdlm_ctx_barrier(ctx) != RDLM_OK)
        FAIL("barrier failed");
    usleep(300000); /* rank 2 queues meanwhile */
    atomic_store(&sh->victim_dying, 1);
    raise(SIGKILL);
}

/* Rank 0: hold one permit until rank 2 is done, then count the free ones. */
static void holder(unsigned rank, rdlm_ctx_h ctx, rdlm_sem_h sem)
{
    sh->acquired[rank] = rdlm_sem_acquire(sem, 1, ACQUIRE_TIMEOUT_NS);
    atomic_store(&sh->holder_holds, sh->acquired[rank] == RDLM_OK);
    if (rdlm_ctx_barrier(ctx) != RDLM_OK)
        FAIL("barrier failed");
    for (int i = 0; i < (int)PARENT_LIMIT_S * 100 && !atomic_load(&sh->taker_done); i++)
        usleep(10000);
    atomic_store(&sh->holder_holds, 0);
    if (sh->acquired[rank] == RDLM_OK)
        sh->released[rank] = rdlm_sem_release(sem, 1);
    sh->available_status = rdlm_sem_available(sem, &sh->available_after);
}

/* Rank 2: ask for one permit after the others took theirs. */
static void taker(unsigned rank, rdlm_ctx_h ctx, rdlm_sem_h sem)
{
    if (rdlm_ctx_barrier(ctx) != RDLM_OK)
        FAIL("barrier failed");
    if (try_mode) {
        double until = procs_now_s() + (double)ACQUIRE_TIMEOUT_NS / 1e9;

        do {
            sh->acquired[rank] = rdlm_sem_acquire(sem, 1, 0);
        } while (sh->acquired[rank] == RDLM_ERR_BUSY && procs_now_s() < until &&
                 usleep(TRY_PAUSE_US) == 0);
    } else {
        sh->acquired[rank] = rdlm_sem_acquire(sem, 1, ACQUIRE_TIMEOUT_NS);
    }
    sh->granted_early = !atomic_load(&sh->victim_dying);
    sh->holder_let_go = !atomic_load(&sh->holder_holds);
    printf("taker: %s\n", rdlm_status_name(sh->acquired[rank]));
    if (sh->acquired[rank] == RDLM_OK)
        sh->released[rank] = rdlm_sem_release(sem, 1);
    atomic_store(&sh->taker_done, 1);
}

static int child(unsigned rank, const char *rendezvous)
{
    rdlm_ctx_dist_info_t di;
    rdlm_ctx_h ctx =
        procs_join_two_nodes("dist_sem_death", rank, NPROCS, rendezvous, VICTIM, &di);
    rdlm_sem_h sem = procs_sem_am("dist_sem_death", rank, ctx, &di, "pool", PERMITS);

    if (rank == VICTIM)
        victim(rank, ctx, sem);
    else if (rank == HOLDER)
        holder(rank, ctx, sem);
    else
        taker(rank, ctx, sem);
    rdlm_ctx_destroy(ctx);
    return 0;
}

/* 1 if the run went as it must (the file's comment). */
static int checked(void)
{
    int ok = procs_all_ok("dist_sem_death", NPROCS, VICTIM, sh->acquired, sh->released);

    if (sh->granted_early || sh->holder_let_go) {
        fprintf(stderr, "dist_sem_death: rank 2 got its permit %s\n",
                sh->granted_early ? "before the victim died" : "after rank 0 let go");
        ok = 0;
    }
    return procs_permits_free("dist_sem_death", sh->available_status, sh->available_after,
                              PERMITS) &&
           ok;
}

int main(int argc, char **argv)
{
    unsigned rank = NPROCS; /* the parent, for FAIL */
    int failed;

    if (argc > 2 || (argc == 2 && strcmp(argv[1], "--try") != 0))
        FAIL("usage: dist_sem_death [--try]");
    try_mode = argc == 2;
    setvbuf(stdout, NULL, _IONBF, 0); /* children end with _exit */
    sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED)
        FAIL("no shared memory");
    failed = !procs_run_leased("t-sem-death", "2", TTL_MS, NPROCS, child, VICTIM,
                               PARENT_LIMIT_S, "dist_sem_death");
    failed |= !checked();
    procs_remove_segments("t-sem-death");
    printf("dist_sem_death: %s\n", failed ? "FAILED" : "passed");
    return failed;
}
