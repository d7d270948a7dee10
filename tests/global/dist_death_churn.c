/*
 * dist_death_churn — a process dies at a random moment while three processes churn two
 * cross-node locks with short timeouts, with leases at the job's own authority
 * (RDLM_JOB_AUTHORITY=1, TTL LEASE_TTL_MS) and the remote-atomic queue (RDLM_LOCK_AM=0;
 * --default-tls: over UCX's shared memory, else UCX TCP). The dead one may hold a lock,
 * wait in a queue, or have given places up in both queues; the survivors must go on.
 *
 * 3 processes, each its own virtual node, standalone rendezvous; the locks are homed
 * at nodes 0 and 1 (the victim, rank 2, is node 2: its death takes no home). Each rank
 * loops for CHURN_S: a random lock, every third acquire without timeout, the others
 * with 1 us-2 ms; held, it checks and holds for up to 50 us. A thread of the victim
 * kills it (SIGKILL) 200-800 ms into the churn. Then each survivor takes each lock
 * FINAL_ROUNDS more times without timeout. Checks, per lock, in a shared mapping:
 *   - exclusion: nobody else inside when a process enters (the victim's mark is
 *     cleared only by the RDLM_OWNER_DEAD that reports its death);
 *   - tokens strictly increase over the holds;
 *   - every acquire returns RDLM_OK, RDLM_OWNER_DEAD or (timed) RDLM_ERR_TIMEOUT;
 *   - the survivors finish within PARENT_LIMIT_S (a survivor stuck in an acquire for
 *     good fails it: before re-adoption with leases, a process that died with two
 *     places in one queue, one given up and one waiting, stalled that lock; an
 *     outside program saw survivors stuck in 2 of 10 runs).
 * Exit: 0 pass, 1 fail.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <rdlm.h>

#include "procs.h"

#define NPROCS 3
#define VICTIM 2
#define NLOCKS 2
#define CHURN_S 1.5
#define FINAL_ROUNDS 50
#define LEASE_TTL_MS "5000" /* outlives a failover when the victim led (dist_peer_death) */
#define PARENT_LIMIT_S 60

/* Per lock: who is inside (rank + 1, 0: nobody), the last token, the holds. */
static struct shared {
    atomic_uint inside[NLOCKS];
    atomic_ullong last_token[NLOCKS];
    atomic_ulong holds[NLOCKS], owner_dead[NLOCKS];
} * sh;

static unsigned rank = NPROCS; /* the parent, for FAIL */

#define FAIL(...) procs_fail("dist_death_churn", rank, __VA_ARGS__)

static void *victim_timer(void *arg)
{
    (void)arg;
    usleep(200000 + (useconds_t)(rand() % 600000));
    raise(SIGKILL);
    return NULL;
}

/* One acquire of lock l with timeout_ns, and if held, the checks and the release. */
static void take(rdlm_lock_h *locks, unsigned l, uint64_t timeout_ns)
{
    uint64_t token = 0, last;
    unsigned me = rank + 1, was = 0;
    rdlm_status_t s = rdlm_lock_acquire(locks[l], timeout_ns, &token);

    if (s == RDLM_ERR_TIMEOUT && timeout_ns != RDLM_TIMEOUT_INFINITE)
        return;
    if (s != RDLM_OK && s != RDLM_OWNER_DEAD)
        FAIL("lock %u: acquire (timeout %llu ns): %s", l, (unsigned long long)timeout_ns,
             rdlm_status_str(s));
    if (s == RDLM_OWNER_DEAD) {
        unsigned dead = VICTIM + 1;

        atomic_compare_exchange_strong(&sh->inside[l], &dead, 0);
        atomic_fetch_add(&sh->owner_dead[l], 1);
    }
    if (!atomic_compare_exchange_strong(&sh->inside[l], &was, me))
        FAIL("lock %u: rank %u entered while rank %u was inside", l, rank, was - 1);
    last = atomic_load(&sh->last_token[l]);
    if (token <= last)
        FAIL("lock %u: token %#llx after %#llx", l, (unsigned long long)token,
             (unsigned long long)last);
    atomic_store(&sh->last_token[l], token);
    atomic_fetch_add(&sh->holds[l], 1);
    usleep((useconds_t)(rand() % 50));
    atomic_store(&sh->inside[l], 0);
    s = rdlm_lock_release(locks[l]);
    if (s != RDLM_OK)
        FAIL("lock %u: release: %s", l, rdlm_status_str(s));
}

static int child(unsigned r, const char *rendezvous)
{
    rdlm_lock_h locks[NLOCKS];
    rdlm_ctx_h ctx;
    pthread_t timer;
    double end;
    rdlm_status_t s;

    rank = r;
    srand(1000u * r + (unsigned)getpid());
    if ((s = procs_join(r, NPROCS, rendezvous, &ctx)) != RDLM_OK)
        FAIL("rdlm_ctx_create: %s", rdlm_status_str(s));
    for (unsigned l = 0; l < NLOCKS; l++)
        locks[l] = procs_open_homed("dist_death_churn", r, ctx, "churn", (int32_t)l);
    if (rdlm_ctx_barrier(ctx) != RDLM_OK)
        FAIL("barrier before the churn failed");
    if (r == VICTIM && pthread_create(&timer, NULL, victim_timer, NULL) != 0)
        FAIL("pthread_create failed");
    end = procs_now_s() + CHURN_S;
    for (unsigned i = 0; procs_now_s() < end; i++) {
        uint64_t timeout = i % 3 == 0 ? RDLM_TIMEOUT_INFINITE
                                      : 1000u + (uint64_t)(rand() % 2000) * 1000u;

        take(locks, (unsigned)rand() % NLOCKS, timeout);
    }
    if (r == VICTIM)
        pause(); /* its timer kills it */
    for (unsigned i = 0; i < FINAL_ROUNDS; i++) {
        for (unsigned l = 0; l < NLOCKS; l++)
            take(locks, l, RDLM_TIMEOUT_INFINITE);
    }
    printf("rank %u: done\n", r);
    rdlm_ctx_destroy(ctx); /* ends without the dead rank (dist_peer_death checks how) */
    return 0;
}

int main(int argc, char **argv)
{
    int ok;

    setvbuf(stdout, NULL, _IONBF, 0); /* children end with _exit */
    sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED)
        FAIL("mmap failed");
    setenv("RDLM_JOB_AUTHORITY", "1", 1);
    setenv("RDLM_LEASE_TTL_MS", LEASE_TTL_MS, 1);
    setenv("RDLM_LOCK_AM", "0", 1);
    ok = procs_run("t-death-churn", "3", argc > 1 && !strcmp(argv[1], "--default-tls"),
                   NPROCS, child, VICTIM, PARENT_LIMIT_S, "dist_death_churn");
    procs_remove_segments("t-death-churn");
    for (unsigned l = 0; l < NLOCKS; l++)
        printf("lock %u: %lu holds, %lu RDLM_OWNER_DEAD\n", l, atomic_load(&sh->holds[l]),
               atomic_load(&sh->owner_dead[l]));
    printf("dist_death_churn: %s\n", ok ? "passed" : "FAILED");
    return ok ? 0 : 1;
}
