/*
 * The lease authority's own lock (rdlmd) behind the lock adapter, for `services`:
 * each worker process opens a session at RDLMBENCH_RDLMD through the public API of
 * <rdlm/lease.h>, whose renewal thread keeps it alive.
 *
 *   attach:   rdlm_session_open(RDLMBENCH_RDLMD, TTL 30 s)
 *   acquire:  rdlm_session_lock("rdlmbench:<job>", wait at most 20 s)
 *             one Raft entry committed by a majority of the replicas
 *   release:  rdlm_session_unlock(name, token)          one committed entry
 *   detach:   rdlm_session_close
 *
 * Codes are rdlm_status_t values (negative). RDLM_OWNER_DEAD (the previous holder's
 * lease expired) is a failure here, as in lock_rdlm.c: no worker should die.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdlm.h>
#include <rdlm/lease.h>

#include "lock_services.h"

typedef struct rdlm_bench_rdlmd_lock {
    rdlm_session_h session;
    char name[64];
    uint64_t token;
} rdlm_bench_rdlmd_lock_t;

static const char *rdlm_bench_rdlmd_error_name(int code)
{
    return rdlm_status_name((rdlm_status_t)code);
}

static int rdlm_bench_rdlmd_attach(void *shared, const char *job, void **lock_p, char *err,
                                   size_t errlen)
{
    const char *authority = getenv(RDLM_BENCH_ENV_RDLMD);
    rdlm_session_params_t params = {.field_mask = RDLM_SESSION_FIELD_TTL,
                                    .ttl_ms = RDLM_BENCH_SERVICE_TTL_MS};
    rdlm_bench_rdlmd_lock_t *l;
    rdlm_status_t st;

    (void)shared;
    if (authority == NULL || authority[0] == '\0') {
        snprintf(err, errlen, "%s not set (want a.b.c.d:port[,...])", RDLM_BENCH_ENV_RDLMD);
        return -1;
    }
    l = calloc(1, sizeof(*l));
    if (l == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    st = rdlm_session_open(authority, &params, &l->session);
    if (st != RDLM_OK) {
        snprintf(err, errlen, "rdlm_session_open(%s): %s", authority, rdlm_status_name(st));
        free(l);
        return -1;
    }
    snprintf(l->name, sizeof(l->name), "rdlmbench:%s", job);
    *lock_p = l;
    return 0;
}

/* token_p: not filled (the service's own token stays inside the adapter). */
static int rdlm_bench_rdlmd_acquire(void *lock, uint64_t *token_p)
{
    rdlm_bench_rdlmd_lock_t *l = lock;

    (void)token_p;
    return (int)rdlm_session_lock(
        l->session, l->name, (uint64_t)RDLM_BENCH_SERVICE_WAIT_MS * 1000000u, &l->token);
}

static int rdlm_bench_rdlmd_release(void *lock)
{
    rdlm_bench_rdlmd_lock_t *l = lock;

    return (int)rdlm_session_unlock(l->session, l->name, l->token);
}

static void rdlm_bench_rdlmd_detach(void *lock)
{
    rdlm_bench_rdlmd_lock_t *l = lock;

    rdlm_session_close(l->session);
    free(l);
}

const rdlm_bench_lock_ops_t rdlm_bench_lock_rdlmd = {
    .name = "rdlmd",
    .description = "rdlm lease authority lock, rdlm_session_lock (rdlmd replicas, "
                   "loopback)",
    .shared_size = 0,
    .shared_init = rdlm_bench_lock_nop_init,
    .shared_fini = rdlm_bench_lock_nop_fini,
    .attach = rdlm_bench_rdlmd_attach,
    .acquire = rdlm_bench_rdlmd_acquire,
    .release = rdlm_bench_rdlmd_release,
    .try_acquire = rdlm_bench_lock_no_try,
    .error_name = rdlm_bench_rdlmd_error_name,
    .stats = rdlm_bench_lock_no_stats,
    .detach = rdlm_bench_rdlmd_detach,
};
