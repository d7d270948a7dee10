/* Rank, size and rendezvous from PMIx (launch.h), in a build with libpmix. */
#include "launch.h"

#include <pmix.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

static pthread_once_t rdlm_launch_pmix_once = PTHREAD_ONCE_INIT;
static int rdlm_launch_pmix_found;
static uint32_t rdlm_launch_pmix_rank, rdlm_launch_pmix_size;
static pmix_nspace_t rdlm_launch_pmix_nspace;

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
        PMIX_LOAD_NSPACE(rdlm_launch_pmix_nspace, me.nspace);
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

/* A failed PMIx call of the rendezvous: its status, logged. */
static rdlm_status_t rdlm_launch_pmix_failed(const char *call, const char *key,
                                             pmix_status_t rc, uint32_t timeout_ms)
{
    if (rc == PMIX_ERR_TIMEOUT) {
        rdlm_error("RDLM_RENDEZVOUS=launcher: %s of %s: timed out after %u ms (a process "
                   "of the job did not create its context)",
                   call, key, (unsigned)timeout_ms);
    } else {
        rdlm_error("RDLM_RENDEZVOUS=launcher: %s of %s: %s", call, key,
                   PMIx_Error_string(rc));
    }
    return rc == PMIX_ERR_TIMEOUT ? RDLM_ERR_TIMEOUT : RDLM_ERR_IO;
}

/* Rank 0's part: put value under key and commit it. */
static pmix_status_t rdlm_launch_pmix_put(const char *key, const char *value)
{
    pmix_value_t v;
    pmix_status_t rc;

    PMIX_VALUE_LOAD(&v, value, PMIX_STRING);
    rc = PMIx_Put(PMIX_GLOBAL, key, &v);
    PMIX_VALUE_DESTRUCT(&v);
    return rc == PMIX_SUCCESS ? PMIx_Commit() : rc;
}

/* The others' part: rank 0's value of key into value_p. */
static pmix_status_t rdlm_launch_pmix_get(const char *key, pmix_info_t *timeout,
                                          char *value_p, size_t cap)
{
    pmix_proc_t zero;
    pmix_value_t *v = NULL;
    pmix_status_t rc;

    PMIX_LOAD_PROCID(&zero, rdlm_launch_pmix_nspace, 0);
    rc = PMIx_Get(&zero, key, timeout, 1, &v);
    if (rc != PMIX_SUCCESS) {
        return rc;
    }
    if (v->type != PMIX_STRING || v->data.string == NULL || strlen(v->data.string) >= cap) {
        rc = PMIX_ERR_BAD_PARAM;
    } else {
        strcpy(value_p, v->data.string);
    }
    PMIX_VALUE_RELEASE(v);
    return rc;
}

rdlm_status_t rdlm_launch_pmix_exchange(const char *key, const char *value,
                                        uint32_t timeout_ms, char *value_p, size_t cap)
{
    pmix_info_t info[2];
    pmix_proc_t all;
    bool collect = true;
    int seconds = (int)((timeout_ms + 999) / 1000);
    pmix_status_t rc = PMIX_SUCCESS;
    const char *call = "PMIx_Put";

    pthread_once(&rdlm_launch_pmix_once, rdlm_launch_pmix_init);
    if (!rdlm_launch_pmix_found) {
        return RDLM_ERR_UNSUPPORTED;
    }
    PMIX_INFO_LOAD(&info[0], PMIX_TIMEOUT, &seconds, PMIX_INT);
    PMIX_INFO_LOAD(&info[1], PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    if (value != NULL) {
        rc = rdlm_launch_pmix_put(key, value);
    }
    if (rc == PMIX_SUCCESS) {
        call = "PMIx_Fence";
        PMIX_LOAD_PROCID(&all, rdlm_launch_pmix_nspace, PMIX_RANK_WILDCARD);
        rc = PMIx_Fence(&all, 1, info, 2);
    }
    if (rc == PMIX_SUCCESS && value == NULL) {
        call = "PMIx_Get";
        rc = rdlm_launch_pmix_get(key, &info[0], value_p, cap);
    }
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    return rc == PMIX_SUCCESS ? RDLM_OK
                              : rdlm_launch_pmix_failed(call, key, rc, timeout_ms);
}

int rdlm_launch_pmix_built(void)
{
    return 1;
}
