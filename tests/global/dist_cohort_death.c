/*
 * dist_cohort_death — lock recovery where a node has two processes: the process
 * whose queue node stands for the node in a lock's global queue dies, while another
 * process of its node holds the lock, waits for it, or has no use for it.
 *
 * The remote-atomic queue (RDLM_LOCK_AM=0): a waiter on the other node takes over
 * once the authority ended the dead process's lease (core/global/glock.c,
 * "Recovery"); the other process of the dead one's node must then not hold the lock
 * through the dead process's queue node (core/global/cohort.c).
 * The home-served queue (the default over UCX TCP; core/global/amq_recover.c): the
 * node keeps its hand-offs, so the node-mate holds through the dead one's place (with
 * RDLM_OWNER_DEAD if it died holding) and passes the lock on; a node-mate with no use
 * for the lock is asked by the home (SETTLE) and passes it on for the node.
 *
 * 3 processes forked by the parent join one context (standalone rendezvous on
 * 127.0.0.1, UCX TCP) on 2 virtual nodes: ranks 0 and 1 on node 0, rank 2 on node 1,
 * with leases at the job's own authority (RDLM_JOB_AUTHORITY=1: one replica, in rank
 * 0; TTL TTL_MS). Rank 1, the victim, takes lock "cohort"; then rank 0 (same node)
 * and rank 2 (other node) ask for it, and 300 ms later the victim
 *   --handoff    releases it and, 200 ms later, kills itself (SIGKILL); its node's
 *                waiter, rank 0, would be handed the lock locally;
 *   --died       kills itself holding it;
 *   --died-idle  the same, but rank 0 never asks for the lock (it waits, idle, until
 *                rank 2 is done);
 *   --mate-died  roles swapped (home-served queue): rank 0 takes the lock first, with
 *                the node's queue node; the victim and rank 2 ask for it; rank 0
 *                hands it to the victim locally and stays idle; the victim dies
 *                holding it. The home must ask the node although the process whose
 *                queue node holds the lock lives (am_lease.pml, flaw 1: rank 2
 *                waited until its timeout before the fix).
 * Ranks 0 and 2 hold the lock HOLD_MS each (longer than the victim's lease takes to
 * end), flagging an "inside" word in shared memory: two processes inside at once is
 * an overlap. The parent checks: no overlap, every release answered RDLM_OK, one
 * RDLM_OWNER_DEAD per death in a critical section, and tokens increasing from the
 * victim's in the order the protocol grants: atomic queue, rank 2 (taking over:
 * RDLM_OWNER_DEAD in --died) then rank 0; home-served queue, rank 0 (RDLM_OWNER_DEAD
 * in --died) then rank 2; --died-idle, rank 2 with RDLM_OWNER_DEAD in both. Before
 * cohort.c refused local hand-offs with leases in the atomic queue, --handoff and
 * --died overlapped: rank 0 held through the victim's queue node while rank 2 took it
 * over.
 *
 * --expect-overlap (with the planted bug RDLMTEST_AMQ_SETTLE_BUSY): exit 0 if an
 * overlap was seen.
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
#define SAME_NODE 0
#define OTHER_NODE 2
#define TTL_MS "2000"
#define HOLD_MS 3000
#define ACQUIRE_TIMEOUT_NS 30000000000ull
#define PARENT_LIMIT_S 90.0

/* What the parent reads: per rank the acquire's status and token, the release's
 * status; and the overlap detector. */
static struct shared {
    atomic_int inside, overlaps, done;
    int am; /* the home-served queue (rdlm_ctx_dist_info().lock_protocol "am") */
    struct {
        int acquired, released;
        uint64_t token;
    } r[NPROCS];
} * sh;

static int died_mode; /* --died or --died-idle (else --handoff) */
static int idle_mode; /* --died-idle */
static int mate_mode; /* --mate-died */

#define FAIL(...) procs_fail("dist_cohort_death", rank, __VA_ARGS__)

/* The victim: take the lock, let the others queue, then release and die, or die. */
static void victim(unsigned rank, rdlm_ctx_h ctx, rdlm_lock_h lock)
{
    sh->r[rank].acquired = rdlm_lock_acquire(lock, ACQUIRE_TIMEOUT_NS, &sh->r[rank].token);
    if (sh->r[rank].acquired != RDLM_OK)
        FAIL("acquire: %s", rdlm_status_str(sh->r[rank].acquired));
    if (rdlm_ctx_barrier(ctx) != RDLM_OK)
        FAIL("barrier failed");
    usleep(300000); /* the others queue meanwhile */
    if (!died_mode) {
        sh->r[rank].released = rdlm_lock_release(lock);
        usleep(200000);
    }
    raise(SIGKILL);
}

/* --mate-died: rank 0 takes the lock, lets the others queue, releases it (to the
 * victim, locally) and waits idle; the victim dies holding it. */
static void mate_died(unsigned rank, rdlm_ctx_h ctx, rdlm_lock_h lock)
{
    if (rank == SAME_NODE) {
        sh->r[rank].acquired =
            rdlm_lock_acquire(lock, ACQUIRE_TIMEOUT_NS, &sh->r[rank].token);
        if (rdlm_ctx_barrier(ctx) != RDLM_OK)
            FAIL("barrier failed");
        usleep(300000); /* the others queue meanwhile */
        sh->r[rank].released = rdlm_lock_release(lock);
        for (int i = 0; i < (int)PARENT_LIMIT_S * 10 && !atomic_load(&sh->done); i++)
            usleep(100000);
        return;
    }
    if (rdlm_ctx_barrier(ctx) != RDLM_OK)
        FAIL("barrier failed");
    if (rank == VICTIM) {
        sh->r[rank].acquired =
            rdlm_lock_acquire(lock, ACQUIRE_TIMEOUT_NS, &sh->r[rank].token);
        raise(SIGKILL);
    }
}

/* Ranks 0 and 2: wait for the lock, hold it HOLD_MS, release; in --died-idle rank 0
 * only waits (at most PARENT_LIMIT_S) until rank 2 is done. */
static void waiter(unsigned rank, rdlm_ctx_h ctx, rdlm_lock_h lock)
{
    if (rdlm_ctx_barrier(ctx) != RDLM_OK)
        FAIL("barrier failed");
    if (idle_mode && rank == SAME_NODE) {
        for (int i = 0; i < (int)PARENT_LIMIT_S * 10 && !atomic_load(&sh->done); i++)
            usleep(100000);
        return;
    }
    sh->r[rank].acquired = rdlm_lock_acquire(lock, ACQUIRE_TIMEOUT_NS, &sh->r[rank].token);
    printf("rank %u: %s, token %#llx\n", rank, rdlm_status_name(sh->r[rank].acquired),
           (unsigned long long)sh->r[rank].token);
    if (sh->r[rank].acquired < 0)
        return;
    if (atomic_exchange(&sh->inside, 1) != 0)
        atomic_fetch_add(&sh->overlaps, 1);
    for (int i = 0; i < HOLD_MS / 10; i++) {
        usleep(10000);
        atomic_store(&sh->inside, 1); /* a leaving overlapper cleared it */
    }
    atomic_store(&sh->inside, 0);
    sh->r[rank].released = rdlm_lock_release(lock);
    atomic_store(&sh->done, 1);
}

static int child(unsigned rank, const char *rendezvous)
{
    rdlm_ctx_dist_info_t di;
    rdlm_lock_h lock;
    rdlm_ctx_h ctx =
        procs_join_two_nodes("dist_cohort_death", rank, NPROCS, rendezvous, VICTIM, &di);
    if (rank == SAME_NODE)
        sh->am = strcmp(di.lock_protocol, "am") == 0;
    if (rdlm_lock_open(ctx, "cohort", &lock) != RDLM_OK)
        FAIL("rdlm_lock_open failed");
    if (rdlm_ctx_barrier(ctx) != RDLM_OK)
        FAIL("barrier failed");
    if (mate_mode && rank != OTHER_NODE)
        mate_died(rank, ctx, lock);
    else if (mate_mode || rank != VICTIM)
        waiter(rank, ctx, lock);
    else
        victim(rank, ctx, lock);
    rdlm_ctx_destroy(ctx);
    return 0;
}

/* The status rank's acquire must return, and whether it must hold at all. */
static int want_status(unsigned rank)
{
    if (idle_mode || mate_mode)
        return rank == OTHER_NODE ? RDLM_OWNER_DEAD : RDLM_OK; /* rank 0: its first */
    if (!died_mode)
        return RDLM_OK;
    /* One RDLM_OWNER_DEAD per death: the atomic queue's take-over is rank 2's (rank 0
     * then gets the lock from rank 2, alive); the home-served queue leaves the lock to
     * the node, where rank 0 finds the victim dead holding the node-local lock. */
    return (rank == SAME_NODE) == sh->am ? RDLM_OWNER_DEAD : RDLM_OK;
}

/* No overlap; the waiters held and released with the statuses wanted; tokens
 * increasing in the protocol's order. 1 if so. */
static int checked(void)
{
    int ok = atomic_load(&sh->overlaps) == 0;
    uint64_t v = sh->r[VICTIM].token, a = sh->r[SAME_NODE].token,
             b = sh->r[OTHER_NODE].token;
    /* first and second in the order the lock reached them */
    uint64_t first = sh->am && !idle_mode ? a : b, second = sh->am ? b : a;

    if (mate_mode) { /* rank 0, the victim, rank 2 */
        first = v;
        second = b;
        v = a;
    }

    if (!ok)
        fprintf(stderr, "dist_cohort_death: %d overlaps: two processes held the lock\n",
                atomic_load(&sh->overlaps));
    for (unsigned r = 0; r < NPROCS; r++) {
        if (r == VICTIM || (idle_mode && r == SAME_NODE))
            continue;
        if (mate_mode && r == SAME_NODE && sh->r[r].acquired == RDLM_OK &&
            sh->r[r].released == RDLM_OK)
            continue;
        if (sh->r[r].acquired != want_status(r) || sh->r[r].released != RDLM_OK) {
            fprintf(stderr,
                    "dist_cohort_death: rank %u got %s (want %s) and released %s (protocol "
                    "%s)\n",
                    r, rdlm_status_name(sh->r[r].acquired),
                    rdlm_status_name(want_status(r)), rdlm_status_name(sh->r[r].released),
                    sh->am ? "am" : "atomic");
            ok = 0;
        }
    }
    if (!(v < first && ((idle_mode && !mate_mode) || first < second))) {
        fprintf(stderr,
                "dist_cohort_death: tokens victim %#llx, rank 2 %#llx, rank 0 %#llx not "
                "increasing in the %s queue's order\n",
                (unsigned long long)v, (unsigned long long)b, (unsigned long long)a,
                sh->am ? "home-served" : "atomic");
        ok = 0;
    }
    return ok;
}

int main(int argc, char **argv)
{
    unsigned rank = NPROCS; /* the parent, for FAIL */
    int failed;

    setvbuf(stdout, NULL, _IONBF, 0); /* children end with _exit */
    if (argc < 2 || argc > 3 ||
        (strcmp(argv[1], "--handoff") != 0 && strcmp(argv[1], "--died") != 0 &&
         strcmp(argv[1], "--died-idle") != 0 && strcmp(argv[1], "--mate-died") != 0) ||
        (argc == 3 && strcmp(argv[2], "--expect-overlap") != 0))
        FAIL("usage: dist_cohort_death --handoff|--died|--died-idle|--mate-died "
             "[--expect-overlap]");
    idle_mode = strcmp(argv[1], "--died-idle") == 0;
    mate_mode = strcmp(argv[1], "--mate-died") == 0;
    died_mode = idle_mode || strcmp(argv[1], "--died") == 0;
    sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED)
        FAIL("no shared memory");
    failed = !procs_run_leased("t-cohort-death", "2", TTL_MS, NPROCS, child, VICTIM,
                               PARENT_LIMIT_S, "dist_cohort_death");
    if (argc == 3) {
        /* a planted bug (RDLMTEST_AMQ_SETTLE_BUSY): the overlap must show */
        procs_remove_segments("t-cohort-death");
        printf("dist_cohort_death %s %s: %d overlaps\n", argv[1], argv[2],
               atomic_load(&sh->overlaps));
        return atomic_load(&sh->overlaps) == 0;
    }
    failed |= !checked();
    procs_remove_segments("t-cohort-death");
    printf("dist_cohort_death %s: %s\n", argv[1], failed ? "FAILED" : "passed");
    return failed;
}
