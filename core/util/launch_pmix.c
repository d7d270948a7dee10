/* Rank and size from PMIx (launch.h), in a build with libpmix. */
#include "launch.h"

#include <pmix.h>
#include <pthread.h>
#include <stdlib.h>

#include "log.h"

static pthread_once_t rdlm_launch_pmix_once = PTHREAD_ONCE_INIT;
static int rdlm_launch_pmix_found;
static uint32_t rdlm_launch_pmix_rank, rdlm_launch_pmix_size;

/* At exit: a PMIx server (Open MPI's mpirun) counts a client that never finalized as
 * an abnormal end of the job. After MPI_Finalize's own, this is the last reference. */
static void rdlm_launch_pmix_finalize(void)
{
    PMIx_Finalize(NULL, 0);
}

/* Once per process: PMIx_Init and PMIX_JOB_SIZE (an Init, Finalize and a later
 * MPI_Init would fail: PMIx 4.2 cannot start again once finalized). */
static void rdlm_launch_pmix_init(void)
{
    pmix_proc_t me, job;
    pmix_value_t *size = NULL;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);

    if (rc != PMIX_SUCCESS) {
        rdlm_debug("launch: PMIx_Init: %s", PMIx_Error_string(rc));
        return;
    }
    atexit(rdlm_launch_pmix_finalize);
    PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
    rc = PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &size);
    if (rc == PMIX_SUCCESS && size->type == PMIX_UINT32 && me.rank < size->data.uint32) {
        rdlm_launch_pmix_rank = me.rank;
        rdlm_launch_pmix_size = size->data.uint32;
        rdlm_launch_pmix_found = 1;
    } else {
        rdlm_debug("launch: PMIx: no job size for rank %u (%s)", (unsigned)me.rank,
                   PMIx_Error_string(rc));
    }
    if (rc == PMIX_SUCCESS) {
        PMIX_VALUE_RELEASE(size);
    }
}

int rdlm_launch_pmix_peers(uint32_t *rank_p, uint32_t *size_p)
{
    pthread_once(&rdlm_launch_pmix_once, rdlm_launch_pmix_init);
    if (!rdlm_launch_pmix_found) {
        return 0;
    }
    *rank_p = rdlm_launch_pmix_rank;
    *size_p = rdlm_launch_pmix_size;
    return 1;
}
