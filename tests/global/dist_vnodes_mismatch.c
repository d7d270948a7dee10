/*
 * dist_vnodes_mismatch — processes of one context that were given different
 * RDLM_VIRTUAL_NODES (an MPMD launch that set it for one program only) split the hosts
 * alike: rank 0's value is every process's layout. Before, each process computed its
 * own, their collectives parted ways, and the create failed or hung (under Open MPI:
 * MPI_ERR_TRUNCATE, the job aborted).
 *
 * 2 processes forked by the parent join one context (standalone rendezvous on
 * 127.0.0.1, UCX TCP): rank 0 with RDLM_VIRTUAL_NODES=2, rank 1 with 1. Both must
 * create it, see 2 nodes, and pass 100 barriers.
 *
 * Exit: 0 pass, 1 fail.
 */
#include <stdio.h>
#include <stdlib.h>

#include <rdlm.h>

#include "procs.h"

#define NPROCS 2
#define PARENT_LIMIT_S 60.0

#define FAIL(...) procs_fail("dist_vnodes_mismatch", rank, __VA_ARGS__)

static int child(unsigned rank, const char *rendezvous)
{
    rdlm_ctx_dist_info_t di;
    rdlm_ctx_h ctx;
    rdlm_status_t s;

    if (rank == 1)
        setenv("RDLM_VIRTUAL_NODES", "1", 1);
    s = procs_join(rank, NPROCS, rendezvous, &ctx);
    if (s != RDLM_OK)
        FAIL("rdlm_ctx_create: %s", rdlm_status_name(s));
    if (rdlm_ctx_dist_info(ctx, &di) != RDLM_OK || di.nodes != 2)
        FAIL("%u nodes (want rank 0's 2)", di.nodes);
    for (int i = 0; i < 100; i++)
        if ((s = rdlm_ctx_barrier(ctx)) != RDLM_OK)
            FAIL("barrier %d: %s", i, rdlm_status_name(s));
    rdlm_ctx_destroy(ctx);
    return 0;
}

int main(void)
{
    return procs_main("dist_vnodes_mismatch", "t-vnodes-mismatch", "2", NPROCS, child,
                      PARENT_LIMIT_S);
}
