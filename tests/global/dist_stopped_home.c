/*
 * dist_stopped_home — the home of a lock stops (SIGSTOP: alive, answering nothing).
 * A timed acquire of that lock must return by its timeout plus RDLM_PEER_TIMEOUT_MS
 * (its cancel waits that long for the home's answer), every time: it returned 10 s
 * late, whatever RDLM_PEER_TIMEOUT_MS said (an outside user's program, 4 ranks as 4
 * virtual nodes).
 *
 * The parent forks 3 processes that join one context through the standalone
 * rendezvous, each its own virtual node, over UCX TCP, RDLM_PEER_TIMEOUT_MS=500. Each
 * opens a lock homed at node 2 and meets the others at a barrier; rank 2 (the victim)
 * then publishes its pid and stops itself. Ranks 0 and 1 each make two acquires of
 * that lock with a 200 ms timeout: each must end in RDLM_ERR_TIMEOUT or
 * RDLM_ERR_PEER_DEAD within 200 + 500 ms + SLACK_MS. Rank 0 then kills the victim
 * (SIGKILL), and the survivors exit without destroying the context (its goodbye to
 * the victim is not what is tested here). The parent kills every child after 60 s.
 *
 * Exit: 0 pass, 1 fail.
 */
#include <sys/mman.h>

#include <rdlm.h>

#include "procs.h"

#define NPROCS 3
#define VICTIM 2
#define TIMEOUT_MS 200.0
#define PEER_TIMEOUT_MS "500"
#define SLACK_MS 1000.0 /* a loaded 2-core machine, sanitizer builds */
#define PARENT_LIMIT_S 60

#define FAIL(...) procs_fail("dist_stopped_home", rank, __VA_ARGS__)

static volatile pid_t *victim_pid; /* shared with the children (MAP_SHARED) */

static int child(unsigned rank, const char *rendezvous)
{
    rdlm_ctx_h ctx;
    rdlm_lock_h lock;
    rdlm_status_t s = procs_join(rank, NPROCS, rendezvous, &ctx);

    if (s != RDLM_OK)
        FAIL("rdlm_ctx_create: %s", rdlm_status_str(s));
    lock = procs_open_homed("dist_stopped_home", rank, ctx, "stopped-home", VICTIM);
    if (rdlm_ctx_barrier(ctx) != RDLM_OK)
        FAIL("barrier failed");
    if (rank == VICTIM) {
        *victim_pid = getpid();
        raise(SIGSTOP);
        FAIL("the victim went on");
    }
    while (*victim_pid == 0)
        usleep(1000);
    usleep(100000); /* the victim has stopped */
    for (int i = 0; i < 2; i++) {
        double t0 = procs_now_s(), ms;

        s = rdlm_lock_acquire(lock, (uint64_t)(TIMEOUT_MS * 1e6), NULL);
        ms = (procs_now_s() - t0) * 1e3;
        if (s != RDLM_ERR_TIMEOUT && s != RDLM_ERR_PEER_DEAD)
            FAIL("acquire %d with the home stopped: %s", i, rdlm_status_name(s));
        if (ms > TIMEOUT_MS + atof(PEER_TIMEOUT_MS) + SLACK_MS)
            FAIL("acquire %d with the home stopped returned after %.0f ms (%s), above "
                 "%.0f + RDLM_PEER_TIMEOUT_MS %s + %.0f",
                 i, ms, rdlm_status_name(s), TIMEOUT_MS, PEER_TIMEOUT_MS, SLACK_MS);
        printf("dist_stopped_home: rank %u: acquire %d: %s after %.0f ms\n", rank, i,
               rdlm_status_name(s), ms);
    }
    if (rank == 0)
        kill(*victim_pid, SIGKILL);
    return 0;
}

int main(void)
{
    int ok;

    setvbuf(stdout, NULL, _IONBF, 0);
    victim_pid = mmap(NULL, sizeof(*victim_pid), PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (victim_pid == MAP_FAILED)
        return 1;
    *victim_pid = 0;
    setenv("RDLM_PEER_TIMEOUT_MS", PEER_TIMEOUT_MS, 1);
    ok = procs_run("t-stopped-home", "3", 0, NPROCS, child, VICTIM, PARENT_LIMIT_S,
                   "dist_stopped_home");
    procs_remove_segments("t-stopped-home");
    printf("dist_stopped_home: %s\n", ok ? "passed" : "FAILED");
    return !ok;
}
