/*
 * dist_barrier_probes — a barrier's waiters look for dead processes once per
 * RDLM_GLOBAL_GONE_CHECK_NS (10 ms) of waiting, not at every barrier. A look is a
 * kill(pid, 0) and a /proc read per process it asks about (8 us each on the test VMs);
 * from bf08ee3 every wait looked at once, which made 4 processes on one node of 2 CPUs
 * take 40 us a barrier instead of 3.
 *
 * 4 processes of one context, RDLM_OVERSUBSCRIBED=on (waiters do not spin, whatever
 * the CPUs), run BARRIERS barriers. This program defines kill(), so the library's
 * kill(pid, 0) calls come here and are counted; each process checks that its count
 * during the barriers is at most 3 node-mates (or senders) per 10 ms of the time they
 * took, plus one look. Shape (argument): "node", one node (waiters of the count);
 * "leaders", 4 virtual nodes with RDLM_BARRIER_LINKS=off (leaders waiting for a round's
 * flag over UCX's active messages).
 *
 * Exit: 0 pass, 1 fail.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rdlm.h>

#include "procs.h"

#define PROCS 4
#define BARRIERS 2000
#define LOOK_INTERVAL_S 0.010
#define LIMIT_S 120.0

static unsigned long zero_kills; /* kill(pid, 0) calls of this process */

/* The library's (and procs_reap's) kill: counted when it only asks about pid. */
int kill(pid_t pid, int sig)
{
    if (sig == 0)
        zero_kills++;
    return (int)syscall(SYS_kill, pid, sig);
}

#define FAIL(...) procs_fail("dist_barrier_probes", rank, __VA_ARGS__)

static int child(unsigned rank, const char *rendezvous)
{
    rdlm_ctx_h ctx;
    unsigned long before, looks_allowed;
    double t0, took;

    if (procs_join(rank, PROCS, rendezvous, &ctx) != RDLM_OK)
        FAIL("rdlm_ctx_create failed");
    if (rdlm_ctx_barrier(ctx) != RDLM_OK)
        FAIL("the first barrier failed");
    before = zero_kills;
    t0 = procs_now_s();
    for (unsigned i = 0; i < BARRIERS; i++)
        if (rdlm_ctx_barrier(ctx) != RDLM_OK)
            FAIL("barrier %u failed", i);
    took = procs_now_s() - t0;
    looks_allowed = (unsigned long)(took / LOOK_INTERVAL_S) + 1;
    printf("rank %u: %u barriers in %.3f s, %lu kill(pid, 0) calls (at most %lu)\n", rank,
           BARRIERS, took, zero_kills - before, (PROCS - 1) * looks_allowed);
    if (zero_kills - before > (PROCS - 1) * looks_allowed)
        FAIL("%lu liveness looks in %u barriers (%.3f s): a look at every wait",
             zero_kills - before, BARRIERS, took);
    rdlm_ctx_destroy(ctx);
    return 0;
}

int main(int argc, char **argv)
{
    const int leaders = argc == 2 && strcmp(argv[1], "leaders") == 0;

    if (argc != 2 || (!leaders && strcmp(argv[1], "node") != 0)) {
        fprintf(stderr, "usage: dist_barrier_probes node|leaders\n");
        return 1;
    }
    setenv("RDLM_OVERSUBSCRIBED", "on", 1);
    setenv("RDLM_BARRIER_LINKS", "off", 1);
    return procs_main("dist_barrier_probes", leaders ? "t-bprobe-l" : "t-bprobe-n",
                      leaders ? "4" : "1", PROCS, child, LIMIT_S);
}
