/*
 * dist_bad_config — over the standalone rendezvous, one process with a bad
 * configuration value does not leave the others waiting: rdlm_ctx_create fails on
 * every process within ANSWER_LIMIT_S with RDLM_ERR_BAD_CONFIG (the bad one still
 * makes the rendezvous, and the create's first collective tells the others); then,
 * with the value gone, a second create succeeds everywhere and a barrier passes.
 * Before, the bad process returned at once without connecting: alone, the others
 * timed out after the bootstrap's 30 s; here its second create joined the others'
 * first, which then returned RDLM_OK (FAILED).
 *
 * 3 processes forked by the parent (rendezvous on 127.0.0.1, UCX TCP, 2 virtual
 * nodes); the last sets RDLM_SPIN=not-a-number before its first create.
 * Exit: 0 pass, 1 fail.
 */
#include <stdio.h>
#include <stdlib.h>

#include <rdlm.h>

#include "procs.h"

#define NPROCS 3
#define ANSWER_LIMIT_S 10.0
#define PARENT_LIMIT_S 90.0

#define FAIL(...) procs_fail("dist_bad_config", rank, __VA_ARGS__)

static int child(unsigned rank, const char *rendezvous)
{
    rdlm_ctx_h ctx;
    rdlm_status_t s;
    double t0 = procs_now_s(), took;

    if (rank == NPROCS - 1)
        setenv("RDLM_SPIN", "not-a-number", 1);
    s = procs_join(rank, NPROCS, rendezvous, &ctx);
    took = procs_now_s() - t0;
    printf("rank %u: first rdlm_ctx_create: %s after %.3f s\n", rank, rdlm_status_name(s),
           took);
    if (s != RDLM_ERR_BAD_CONFIG || took > ANSWER_LIMIT_S)
        FAIL("the first create returned %s after %.2f s (want RDLM_ERR_BAD_CONFIG within "
             "%.0f s)",
             rdlm_status_name(s), took, ANSWER_LIMIT_S);
    unsetenv("RDLM_SPIN");
    s = procs_join(rank, NPROCS, rendezvous, &ctx);
    if (s != RDLM_OK)
        FAIL("the second create returned %s", rdlm_status_name(s));
    if ((s = rdlm_ctx_barrier(ctx)) != RDLM_OK)
        FAIL("a barrier after the second create: %s", rdlm_status_name(s));
    rdlm_ctx_destroy(ctx);
    return 0;
}

int main(void)
{
    return procs_main("dist_bad_config", "t-bad-config", "2", NPROCS, child,
                      PARENT_LIMIT_S);
}
