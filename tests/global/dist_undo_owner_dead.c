/*
 * dist_undo_owner_dead — with leases (the job's own authority), an acquire granted
 * RDLM_OWNER_DEAD whose own lease is lost before it returns (the process was stopped
 * in the lock delay) is undone: it returns RDLM_ERR_LEASE_EXPIRED, sets no token, and
 * the "previous holder died" it took over is not lost: the next holder gets
 * RDLM_OWNER_DEAD, since nobody repaired what the dead holder left
 * (core/api/api_lock.c, rdlm_lock_keep). An undo by a plain release loses it: the
 * next holder got RDLM_OK (3 runs in 3 before the fix, step 4).
 *
 * The parent forks 4 processes that join one context through the standalone
 * rendezvous, each its own virtual node (RDLM_VIRTUAL_NODES=4), over UCX TCP, with
 * RDLM_JOB_AUTHORITY=1 (replicas on nodes 0..2), a TTL of LEASE_TTL_MS and a lock
 * delay of LOCK_DELAY_MS (every rank's). The lock is homed at node 0 (rank 0 serves it; the
 * home-served queue, the default over UCX TCP).
 *   1. Rank 3, the dead, takes it, meets the others at a barrier, and 300 ms later
 *      kills itself (SIGKILL) holding it; rank 3 runs no replica, so no failover.
 *   2. Rank 2, the undone, queues for it at the barrier (timeout WAIT_TIMEOUT_NS). It
 *      created its context with RDLMTEST_LEASE_STOP_IN_DELAY (core/lease/client.c):
 *      granted RDLM_OWNER_DEAD once the authority ended rank 3's lease, it stops
 *      itself as the lock delay starts.
 *   3. The parent sees it stopped (/proc/<pid>/stat) within STOP_WAIT_S, keeps it
 *      stopped KEEP_STOPPED_MS (its lease then surely ended), and continues it: its
 *      acquire must return RDLM_ERR_LEASE_EXPIRED and leave its token untouched.
 *   4. Only then (SETTLE_US later, for the undo's release to reach the home) rank 1
 *      acquires: RDLM_OWNER_DEAD, a token larger than rank 3's, accepted by the
 *      resource's fence. Rank 1 must not queue while rank 2 is stopped: the home would
 *      then take the lock from rank 2 once its lease ended and grant RDLM_OWNER_DEAD
 *      for that, undo or not.
 *   5. Rank 1 releases; rank 0 acquires: RDLM_OK (one RDLM_OWNER_DEAD per death), a
 *      larger token still; releases. Ranks 0 and 1 destroy their contexts; rank 2
 *      ends without destroying (its lease is gone).
 * --rwlock: the same on a reader-writer lock's write side (rdlm_rwlock_write_*; a
 * dead writer's take-over is RDLM_OWNER_DEAD there too), named so that its W word
 * lives on node 0 and its R word on node 0 or 1 (computed as core/global/word.c
 * does: no public call tells the R word's home).
 * --atomic: the same in the remote-atomic queue (RDLM_LOCK_AM=0). Not registered: there
 * the undo's release does not carry the death either (rank 1 gets RDLM_OK; known gap).
 * The parent kills every child after PARENT_LIMIT_S, and removes what rank 3 left in
 * /dev/shm and rank 2's replica in TMPDIR. Exit: 0 pass, 1 fail.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <rdlm.h>

#include "hash.h"
#include "procs.h"

#define NPROCS 4
#define DEAD 3   /* holds the lock and dies */
#define UNDONE 2 /* granted RDLM_OWNER_DEAD, stopped in the delay, undone */
#define NEXT 1   /* the next holder: must hear of the death */
#define LAST 0   /* the one after: RDLM_OK */
/* As dist_paused_holder: outlives a failover (rank 2 may lead the authority when it
 * stops; nodes 0 and 1 then elect another leader, and their leases must hold). */
#define LEASE_TTL_MS "5000"
#define TTL_MS 5000.0
#define LOCK_DELAY_MS "1000"
#define WAIT_TIMEOUT_NS 40000000000ull
#define ACQUIRE_TIMEOUT_NS 10000000000ull
/* From the start: contexts created, then rank 3's lease ended (TTL * 1.1 + the home's
 * question, dist_peer_death --lease: under 7 s). */
#define STOP_WAIT_S 40.0
/* Rank 2 renews every TTL/3 and sees its lease lost TTL * 0.9 after its last renewal
 * was sent (4.5 s after the stop at most); the authority ends it TTL * 1.1 after, or,
 * when rank 2 led the authority, TTL after the new leader's election
 * (about 1 s after the stop: 6.0 s measured; up to 2 s, dist_peer_death --lease):
 * TTL * 1.1 + 2 s + 1 s, and the lease ended everywhere. */
#define KEEP_STOPPED_MS (TTL_MS * 1.1 + 2000.0 + 1000.0)
#define SETTLE_US 300000
#define STEP_WAIT_S 30.0
#define PARENT_LIMIT_S 100 /* after the continue; STOP_WAIT_S before: under TIMEOUT 150 */

#define SENTINEL 0x5e5e5e5eull

/* Shared between the processes and the parent; times are procs_now_s(). */
static struct shared {
    uint64_t highest; /* the resource's fence */
    uint64_t token[NPROCS];
    int status[NPROCS]; /* ranks 2, 1, 0: the acquire of the scenario */
    int fence[NPROCS];
    double acquire_ms[NPROCS];
    double t_death, t_stopped, t_continued, t_undone;
    int undone_done, next_done, last_done; /* 1 once that rank's step is over */
} * sh;

static int rw_mode;     /* --rwlock */
static int atomic_mode; /* --atomic */
static rdlm_lock_h lk;
static rdlm_rwlock_h rw;

#define FAIL(...) procs_fail("dist_undo_owner_dead", rank, __VA_ARGS__)

static rdlm_status_t acquire(uint64_t timeout_ns, uint64_t *token_p)
{
    return rw_mode ? rdlm_rwlock_write_acquire(rw, timeout_ns, token_p)
                   : rdlm_lock_acquire(lk, timeout_ns, token_p);
}

static rdlm_status_t release(void)
{
    return rw_mode ? rdlm_rwlock_write_release(rw) : rdlm_lock_release(lk);
}

/* The home node of a distributed word id among nodes (core/global/word.c). */
static unsigned home_of(uint64_t id, unsigned nodes)
{
    return (unsigned)((id >> 17) % nodes);
}

/* --rwlock: "undo-rw-<k>" for the first k whose W word (the name's id) is homed at
 * node 0 and whose R word (companion 1: the id mixed as rdlm_global_sub_id does) at
 * node 0 or 1: neither on the dead node nor on the stopped one. */
static void open_rwlock(unsigned rank, rdlm_ctx_h ctx)
{
    for (int k = 0; k < 1000; k++) {
        char name[64];
        uint64_t id, r;

        snprintf(name, sizeof(name), "undo-rw-%d", k);
        id = rdlm_hash_name(name);
        r = id ^ 0x9e3779b97f4a7c15ull;
        if (home_of(id, NPROCS) != 0 || home_of(r != 0 ? r : 1, NPROCS) > 1)
            continue;
        if (rdlm_rwlock_open(ctx, name, &rw) != RDLM_OK)
            FAIL("rdlm_rwlock_open %s failed", name);
        return;
    }
    FAIL("no rwlock name of 1000 has its words on nodes 0 and 1");
}

/* Rank 2: wait behind the dead holder; stopped in the delay; undone. */
static void undone(unsigned rank)
{
    double t0 = procs_now_s();
    rdlm_status_t s;

    sh->token[rank] = SENTINEL;
    s = acquire(WAIT_TIMEOUT_NS, &sh->token[rank]);
    sh->t_undone = procs_now_s();
    sh->status[rank] = s;
    sh->acquire_ms[rank] = (sh->t_undone - t0) * 1000.0;
    printf("rank %u: %s after %.0f ms (%.0f ms after the continue), token %#llx\n", rank,
           rdlm_status_name(s), sh->acquire_ms[rank],
           (sh->t_undone - sh->t_continued) * 1000.0, (unsigned long long)sh->token[rank]);
    if (s == RDLM_OK || s == RDLM_OWNER_DEAD) /* not undone: let the others go on */
        release();
    __atomic_store_n(&sh->undone_done, 1, __ATOMIC_RELEASE);
}

/* Ranks 1 and 0: once the rank before is through, take the lock, fence, release. */
static void take(unsigned rank, int *after, double limit_s)
{
    double t0;
    rdlm_status_t s;

    if (!procs_wait_for(after, 1, limit_s))
        FAIL("the rank before never got through");
    if (rank == NEXT)
        usleep(SETTLE_US);
    t0 = procs_now_s();
    s = acquire(ACQUIRE_TIMEOUT_NS, &sh->token[rank]);
    sh->status[rank] = s;
    sh->acquire_ms[rank] = (procs_now_s() - t0) * 1000.0;
    if (s == RDLM_OK || s == RDLM_OWNER_DEAD) {
        sh->fence[rank] = rdlm_fence_check(&sh->highest, sh->token[rank]);
        if (release() != RDLM_OK)
            FAIL("release failed");
    }
    printf("rank %u: %s in %.0f ms, token %#llx, fence %s\n", rank, rdlm_status_name(s),
           sh->acquire_ms[rank], (unsigned long long)sh->token[rank],
           rdlm_status_name((rdlm_status_t)sh->fence[rank]));
}

static int child(unsigned rank, const char *rendezvous)
{
    rdlm_ctx_dist_info_t di;
    rdlm_ctx_h ctx;
    double t0;

    if (rank == UNDONE)
        setenv("RDLMTEST_LEASE_STOP_IN_DELAY", "1", 1); /* read at the session's open */
    ctx = procs_join_nodes("dist_undo_owner_dead", rank, NPROCS, rendezvous, &di);
    if (strcmp(di.lock_protocol, atomic_mode ? "atomic" : "am") != 0)
        FAIL("lock protocol %s", di.lock_protocol);
    if (rw_mode)
        open_rwlock(rank, ctx);
    else
        lk = procs_open_homed("dist_undo_owner_dead", rank, ctx, "undo", 0);
    if (rank == DEAD) {
        if (acquire(10ull * 1000000000ull, &sh->token[DEAD]) != RDLM_OK)
            FAIL("the dead could not take the lock");
        if (rdlm_fence_check(&sh->highest, sh->token[DEAD]) != RDLM_OK)
            FAIL("the dead's token was refused");
    }
    if (rdlm_ctx_barrier(ctx) != RDLM_OK)
        FAIL("barrier before the death failed");
    if (rank == DEAD) {
        usleep(300000); /* rank 2 queues behind it meanwhile */
        sh->t_death = procs_now_s();
        raise(SIGKILL);
    }
    if (rank == UNDONE) {
        undone(rank);
        if (!procs_wait_for(&sh->last_done, 1, 2 * STEP_WAIT_S))
            FAIL("ranks 1 and 0 did not get through");
        return 0; /* no destroy: the lease is gone */
    }
    if (rank == NEXT) {
        take(rank, &sh->undone_done, STOP_WAIT_S + KEEP_STOPPED_MS / 1000.0 + STEP_WAIT_S);
        __atomic_store_n(&sh->next_done, 1, __ATOMIC_RELEASE);
    } else {
        take(rank, &sh->next_done,
             STOP_WAIT_S + KEEP_STOPPED_MS / 1000.0 + 2 * STEP_WAIT_S);
        __atomic_store_n(&sh->last_done, 1, __ATOMIC_RELEASE);
    }
    if (!procs_wait_for(&sh->last_done, 1, STEP_WAIT_S))
        FAIL("rank 0 did not get through");
    t0 = procs_now_s();
    rdlm_ctx_destroy(ctx);
    printf("rank %u: destroy in %.1f ms\n", rank, (procs_now_s() - t0) * 1000.0);
    return 0;
}

/* 1 if process pid is stopped (state T in /proc/<pid>/stat). */
static int stopped(pid_t pid)
{
    char path[64], buf[512], *p;
    FILE *f;
    size_t n;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    f = fopen(path, "r");
    if (f == NULL)
        return 0;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    p = strrchr(buf, ')'); /* after the command's name */
    return p != NULL && p[1] == ' ' && p[2] == 'T';
}

/* Steps 2 and 3 from outside: rank 2 stopped after the death and before its acquire
 * returned; kept stopped KEEP_STOPPED_MS; continued. 1 if it stopped. */
static int hold_stopped(pid_t pid)
{
    double end = procs_now_s() + STOP_WAIT_S;

    while (!stopped(pid)) {
        if (procs_now_s() > end || __atomic_load_n(&sh->undone_done, __ATOMIC_ACQUIRE)) {
            fprintf(stderr, "dist_undo_owner_dead: rank %d did not stop in the delay\n",
                    UNDONE);
            return 0;
        }
        usleep(5000);
    }
    sh->t_stopped = procs_now_s();
    printf("parent: rank %d stopped %.0f ms after the death; kept stopped %.0f ms\n",
           UNDONE, (sh->t_stopped - sh->t_death) * 1000.0, KEEP_STOPPED_MS);
    usleep((useconds_t)(KEEP_STOPPED_MS * 1000.0));
    sh->t_continued = procs_now_s();
    kill(pid, SIGCONT);
    return 1;
}

/* The data directory the replica of rank 2 (node 2) left: it ends without a destroy
 * (core/api/ctx_authority.c, "Data directories"; flat). */
static void remove_replica_dir(const char *job, pid_t pid)
{
    const char *tmp = getenv("TMPDIR");
    char path[256];
    DIR *dir;
    struct dirent *e;

    snprintf(path, sizeof(path), "%s/rdlm-%u-%s-%d-0",
             tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp", (unsigned)geteuid(), job,
             (int)pid);
    dir = opendir(path);
    if (dir == NULL)
        return;
    while ((e = readdir(dir)) != NULL) {
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            unlinkat(dirfd(dir), e->d_name, 0);
    }
    closedir(dir);
    rmdir(path);
}

/* The statuses and tokens of steps 3-5. 1 if as wanted (else said on stderr). */
static int checked(int was_stopped)
{
    int ok = was_stopped;

    if (sh->status[UNDONE] != RDLM_ERR_LEASE_EXPIRED || sh->token[UNDONE] != SENTINEL) {
        fprintf(stderr,
                "dist_undo_owner_dead: rank %d: %s, token %#llx; want "
                "RDLM_ERR_LEASE_EXPIRED, token untouched (%#llx)\n",
                UNDONE, rdlm_status_name(sh->status[UNDONE]),
                (unsigned long long)sh->token[UNDONE], SENTINEL);
        ok = 0;
    }
    if (sh->status[NEXT] != RDLM_OWNER_DEAD) {
        fprintf(stderr,
                "dist_undo_owner_dead: rank %d: %s, want RDLM_OWNER_DEAD (the undone "
                "acquire of rank %d lost the death of rank %d)\n",
                NEXT, rdlm_status_name(sh->status[NEXT]), UNDONE, DEAD);
        ok = 0;
    }
    if (sh->status[LAST] != RDLM_OK) {
        fprintf(stderr, "dist_undo_owner_dead: rank %d: %s, want RDLM_OK\n", LAST,
                rdlm_status_name(sh->status[LAST]));
        ok = 0;
    }
    if (sh->token[NEXT] <= sh->token[DEAD] || sh->token[LAST] <= sh->token[NEXT] ||
        sh->fence[NEXT] != RDLM_OK || sh->fence[LAST] != RDLM_OK) {
        fprintf(stderr,
                "dist_undo_owner_dead: tokens %#llx (dead) %#llx %#llx, fence %s %s; "
                "want increasing, accepted\n",
                (unsigned long long)sh->token[DEAD], (unsigned long long)sh->token[NEXT],
                (unsigned long long)sh->token[LAST],
                rdlm_status_name((rdlm_status_t)sh->fence[NEXT]),
                rdlm_status_name((rdlm_status_t)sh->fence[LAST]));
        ok = 0;
    }
    return ok;
}

int main(int argc, char **argv)
{
    char rendezvous[32];
    const char *job;
    pid_t pids[NPROCS];
    int port = procs_free_port(), ok, was_stopped;
    unsigned rank = NPROCS; /* the parent, for FAIL */
    double t0 = procs_now_s();

    setvbuf(stdout, NULL, _IONBF, 0); /* children end with _exit */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--rwlock") == 0)
            rw_mode = 1;
        else if (strcmp(argv[i], "--atomic") == 0)
            atomic_mode = 1;
        else
            FAIL("usage: %s [--rwlock] [--atomic]", argv[0]);
    }
    setenv("RDLM_LOCK_AM", atomic_mode ? "0" : "1", 1);
    setenv("RDLM_JOB_AUTHORITY", "1", 1);
    setenv("RDLM_LEASE_TTL_MS", LEASE_TTL_MS, 1);
    setenv("RDLM_LOCK_DELAY_MS", LOCK_DELAY_MS, 1);
    unsetenv("RDLMTEST_LEASE_STOP_IN_DELAY"); /* rank 2's only */
    sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED)
        FAIL("mmap failed");
    for (unsigned r = 0; r < NPROCS; r++)
        sh->status[r] = sh->fence[r] = RDLM_INPROGRESS; /* not reported */
    if (port < 0)
        FAIL("no free port");
    snprintf(rendezvous, sizeof(rendezvous), "127.0.0.1:%d", port);
    /* a job per mode, none a prefix of another (procs_remove_segments) */
    job = rw_mode ? "t-undo-rw" : atomic_mode ? "t-undo-atomic" : "t-undo-lock";
    procs_env(job, "4", 0);
    if (procs_start(pids, NPROCS, child, rendezvous) != 0)
        FAIL("fork failed");
    was_stopped = hold_stopped(pids[UNDONE]);
    if (!was_stopped)
        kill(pids[UNDONE], SIGCONT);
    ok = procs_reap(pids, NPROCS, DEAD, PARENT_LIMIT_S, "dist_undo_owner_dead");
    ok &= checked(was_stopped);
    procs_remove_segments(job);
    remove_replica_dir(job, pids[UNDONE]);
    printf("dist_undo_owner_dead: %s in %.1f s\n", ok ? "passed" : "FAILED",
           procs_now_s() - t0);
    return !ok;
}
