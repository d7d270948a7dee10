/*
 * dist_link_death — with leases and the remote-atomic queue (RDLM_JOB_AUTHORITY=1,
 * RDLM_LOCK_AM=0), a process dies after it queued for a lock and before it linked
 * behind the holder (the test hook RDLMTEST_GLOCK_DIE_BEFORE_LINK, set in the victim
 * only, kills it there). Before enqueue intents (glock.c, "Intents") the holder's
 * release waited for that link for good, and so did everyone queued behind the dead
 * place; a soak (dist_death_churn) hung so in 2 of 17 runs.
 *
 * 3 processes, each its own virtual node; the lock is homed at node 0 (rank 0); the
 * victim is rank 2. After a barrier: rank 1 acquires the lock; the victim acquires it
 * (queues behind rank 1 and dies); 300 ms later, with --behind, rank 0 acquires it
 * too (it queues behind the dead place); 600 ms after the barrier rank 1 releases.
 *   --behind: rank 1's release returns within RELEASE_BOUND_S; rank 0 gets the lock
 *     with RDLM_OK (rank 1's pass, once rank 0 linked its place behind rank 1's,
 *     the one the victim's intent names) within GRANT_BOUND_S of the kill, with a
 *     larger token than rank 1's.
 *   --tail (nobody behind the dead place): rank 1's release returns within
 *     RELEASE_BOUND_S (it finds W's tail dead, its lease ended, its intent naming its
 *     own place, and passes the lock to it); then rank 0 acquires: RDLM_OWNER_DEAD
 *     (taken over from the dead place) with a larger token.
 * Rank 0 then takes and releases the lock 20 times more (RDLM_OK, tokens increasing).
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
#define VICTIM 2
#define LEASE_TTL_MS "5000"
/* The lease's TTL with drift (5.5 s), a failover when the victim led the job's
 * authority (a new leader arms every session for a full TTL: 5 s more, plus the
 * election), and the probes (100 ms). */
#define GRANT_BOUND_S 14.0
#define RELEASE_BOUND_S GRANT_BOUND_S
#define ROUNDS 20
#define PARENT_LIMIT_S 60

static struct shared {
    atomic_ullong token1; /* rank 1's token */
    atomic_int released;  /* rank 1's release returned */
} * sh;

static unsigned rank = NPROCS;
static int tail_mode; /* --tail */

#define FAIL(...) procs_fail("dist_link_death", rank, __VA_ARGS__)

static int child(unsigned r, const char *rendezvous)
{
    rdlm_ctx_h ctx;
    rdlm_lock_h l;
    uint64_t token = 0, last;
    double start, took;
    rdlm_status_t s;

    rank = r;
    if (r == VICTIM)
        setenv("RDLMTEST_GLOCK_DIE_BEFORE_LINK", "1", 1);
    if ((s = procs_join(r, NPROCS, rendezvous, &ctx)) != RDLM_OK)
        FAIL("rdlm_ctx_create: %s", rdlm_status_str(s));
    l = procs_open_homed("dist_link_death", r, ctx, "link", 0);
    if (rdlm_ctx_barrier(ctx) != RDLM_OK)
        FAIL("barrier failed");
    start = procs_now_s();
    if (r == 1) {
        if ((s = rdlm_lock_acquire(l, RDLM_TIMEOUT_INFINITE, &token)) != RDLM_OK)
            FAIL("acquire: %s", rdlm_status_str(s));
        atomic_store(&sh->token1, token);
        usleep(600000);
        s = rdlm_lock_release(l);
        took = procs_now_s() - start - 0.6;
        if (s != RDLM_OK)
            FAIL("release: %s", rdlm_status_str(s));
        if (took > RELEASE_BOUND_S)
            FAIL("release took %.1f s (bound %.0f s)", took, RELEASE_BOUND_S);
        atomic_store(&sh->released, 1);
        printf("rank 1: released after %.2f s\n", took);
    } else if (r == VICTIM) {
        usleep(100000);                                      /* behind rank 1 */
        rdlm_lock_acquire(l, RDLM_TIMEOUT_INFINITE, &token); /* the hook kills it */
        FAIL("the test hook did not kill the victim");
    } else {
        usleep(400000); /* behind the victim's place, before rank 1 releases */
        for (unsigned i = 0; tail_mode && !atomic_load(&sh->released) && i < 3000; i++)
            usleep(10000); /* --tail: after rank 1's release returned (or 30 s) */
        if (tail_mode)
            start = procs_now_s() - 0.1; /* --tail: the bound holds from the acquire */
        s = rdlm_lock_acquire(l, RDLM_TIMEOUT_INFINITE, &token);
        took = procs_now_s() - start - 0.1;
        if (s != (tail_mode ? RDLM_OWNER_DEAD : RDLM_OK))
            FAIL("acquire: %s, want %s", rdlm_status_str(s),
                 tail_mode ? "RDLM_OWNER_DEAD" : "RDLM_OK");
        if (took > GRANT_BOUND_S)
            FAIL("acquire took %.1f s after the kill (bound %.0f s)", took, GRANT_BOUND_S);
        last = atomic_load(&sh->token1);
        if (token <= last)
            FAIL("token %#llx after rank 1's %#llx", (unsigned long long)token,
                 (unsigned long long)last);
        printf("rank 0: %s after %.2f s\n", rdlm_status_name(s), took);
        for (unsigned i = 0; i < ROUNDS; i++) {
            if ((s = rdlm_lock_release(l)) != RDLM_OK)
                FAIL("release %u: %s", i, rdlm_status_str(s));
            last = token;
            if ((s = rdlm_lock_acquire(l, RDLM_TIMEOUT_INFINITE, &token)) != RDLM_OK)
                FAIL("acquire %u: %s", i, rdlm_status_str(s));
            if (token <= last)
                FAIL("round %u: token %#llx after %#llx", i, (unsigned long long)token,
                     (unsigned long long)last);
        }
        if ((s = rdlm_lock_release(l)) != RDLM_OK)
            FAIL("last release: %s", rdlm_status_str(s));
    }
    rdlm_ctx_destroy(ctx);
    return 0;
}

int main(int argc, char **argv)
{
    int ok;

    setvbuf(stdout, NULL, _IONBF, 0); /* children end with _exit */
    if (argc != 2 || (strcmp(argv[1], "--behind") != 0 && strcmp(argv[1], "--tail") != 0)) {
        fprintf(stderr, "usage: %s --behind|--tail\n", argv[0]);
        return 2;
    }
    tail_mode = strcmp(argv[1], "--tail") == 0;
    sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED)
        FAIL("mmap failed");
    setenv("RDLM_LOCK_AM", "0", 1);
    ok = procs_run_leased("t-link-death", "3", LEASE_TTL_MS, NPROCS, child, VICTIM,
                          PARENT_LIMIT_S, "dist_link_death");
    procs_remove_segments("t-link-death");
    printf("dist_link_death: %s\n", ok ? "passed" : "FAILED");
    return ok ? 0 : 1;
}
