/*
 * dist_barrier_stopped_poller — a named barrier's node poller is stopped (SIGSTOP)
 * while waiting; the barrier completes; its node-mate, asleep in the same barrier,
 * must return at once, not when the poller resumes or at its own timeout (an outside
 * user's finding: before, the node-mate returned RDLM_OK only at its timeout, 10 s
 * and 20 s, or when the poller was continued).
 *
 * 4 processes forked by the parent, 2 virtual nodes (standalone rendezvous, UCX TCP),
 * barrier "nb" of 4. On node 1, V (local rank 1: not its node's leader, so no home
 * lives in it) arrives first from a thread, so it polls for the node, and stops the
 * whole process 300 ms later; its node-mate M (the leader)
 * arrives at 600 ms and sleeps; node 0's two arrive at 1 s and complete it. M must
 * return RDLM_OK within 5 s of its arrival (its timeout is 20 s), then continues V
 * (whose pid V published in a counter); V's wait must return RDLM_OK too.
 *
 * Exit: 0 pass, 1 fail.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <rdlm.h>

#include "procs.h"

#define NPROCS 4
#define PARENT_LIMIT_S 60.0
#define WAIT_NS (20ull * 1000000000ull)

#define FAIL(...) procs_fail("dist_barrier_stopped_poller", rank, __VA_ARGS__)

static rdlm_barrier_h nb;
static rdlm_status_t v_status = RDLM_ERR_INVALID_ARG;

static void *v_wait(void *arg)
{
    (void)arg;
    v_status = rdlm_barrier_wait(nb, WAIT_NS);
    return NULL;
}

static int child(unsigned rank, const char *rendezvous)
{
    rdlm_ctx_dist_info_t di;
    rdlm_counter_h pid;
    rdlm_ctx_h ctx;
    pthread_t t;
    rdlm_status_t s;
    double t0, waited;
    int64_t v;

    if (procs_join(rank, NPROCS, rendezvous, &ctx) != RDLM_OK ||
        rdlm_ctx_dist_info(ctx, &di) != RDLM_OK || di.nodes != 2 || di.local_size != 2)
        FAIL("not a context of 2 nodes of 2 processes");
    if (rdlm_barrier_open(ctx, "nb", NPROCS, &nb) != RDLM_OK ||
        rdlm_counter_open(ctx, "v-pid", &pid) != RDLM_OK)
        FAIL("open failed");
    if (rdlm_ctx_barrier(ctx) != RDLM_OK)
        FAIL("the first context barrier failed");
    if (di.node == 1 && di.local_rank == 1) { /* V: no home lives in it */
        if (rdlm_counter_fetch_add(pid, getpid(), &v) != RDLM_OK)
            FAIL("publishing the pid failed");
        if (pthread_create(&t, NULL, v_wait, NULL) != 0)
            FAIL("pthread_create failed");
        usleep(300000);
        raise(SIGSTOP); /* the thread stops with us, polling */
        pthread_join(t, NULL);
        if (v_status != RDLM_OK)
            FAIL("the stopped poller's wait: %s, want RDLM_OK", rdlm_status_name(v_status));
    } else if (di.node == 1) { /* M */
        usleep(600000);
        t0 = procs_now_s();
        s = rdlm_barrier_wait(nb, WAIT_NS);
        waited = procs_now_s() - t0;
        if (rdlm_counter_read(pid, &v) != RDLM_OK || v <= 0 || kill((pid_t)v, SIGCONT) != 0)
            FAIL("cannot continue the stopped process");
        if (s != RDLM_OK || waited > 5.0)
            FAIL("the node-mate's wait: %s after %.1f s, want RDLM_OK within 5 s",
                 rdlm_status_name(s), waited);
        printf("dist_barrier_stopped_poller: the node-mate left after %.2f s\n", waited);
    } else {
        usleep(1000000);
        if ((s = rdlm_barrier_wait(nb, WAIT_NS)) != RDLM_OK)
            FAIL("node 0's wait: %s", rdlm_status_name(s));
    }
    if ((s = rdlm_ctx_barrier(ctx)) != RDLM_OK)
        FAIL("the last context barrier: %s", rdlm_status_name(s));
    rdlm_ctx_destroy(ctx);
    return 0;
}

int main(void)
{
    return procs_main("dist_barrier_stopped_poller", "t-barrier-stopped", "2", NPROCS,
                      child, PARENT_LIMIT_S);
}
