/*
 * A service-wide lock on the lock homes the rdlmd replicas host (core/svc), through
 * the ordinary lock API, for `services`: each worker process is its own job, so no
 * node-local lock orders the workers and only the home's word does (as on two hosts).
 *
 *   attach:   RDLM_AUTHORITY = RDLMBENCH_RDLMD, RDLM_LEASE_TTL_MS = 30000 (setenv:
 *             the context has no parameter for them), job "rdlmbench-svc-<pid>";
 *             rdlm_ctx_create (a session at the authority), rdlm_lock_open
 *             ("rdlmbench.<run's job>"), rdlm_lock_query: home_node must be >= 0
 *   acquire:  rdlm_lock_acquire(wait at most 20 s)     node-local lock, then one
 *             remote compare-and-swap on the home's word when free (UCX, loopback)
 *   release:  rdlm_lock_release                        one remote compare-and-swap
 *   detach:   rdlm_lock_close, rdlm_ctx_destroy
 *
 * The probe of bench_services.c runs attach: a context whose rdlmd hosts no home
 * (--home-slots 0, or rdlmd built without UCX) gets a node-local lock only, which
 * would measure shared memory under a service's name, so attach fails then.
 * Codes are rdlm_status_t values (negative); RDLM_OWNER_DEAD is a failure, as in
 * lock_rdlm.c: no worker should die.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <rdlm.h>

#include "lock_services.h"
#include "workers.h"

typedef struct rdlm_bench_svc_lock {
    rdlm_ctx_h ctx;
    rdlm_lock_h lock;
    uint64_t token; /* the last acquire's (the home's epoch << 40 | sequence) */
} rdlm_bench_svc_lock_t;

static const char *rdlm_bench_svc_error_name(int code)
{
    return rdlm_status_name((rdlm_status_t)code);
}

/* The variables rdlm_ctx_create reads for the authority; 0, or -1 with why in err. */
static int rdlm_bench_svc_env(char *err, size_t errlen)
{
    const char *authority = getenv(RDLM_BENCH_ENV_RDLMD);
    char ttl[16];

    if (authority == NULL || authority[0] == '\0') {
        snprintf(err, errlen, "%s not set (want a.b.c.d:port[,...])", RDLM_BENCH_ENV_RDLMD);
        return -1;
    }
    snprintf(ttl, sizeof(ttl), "%u", (unsigned)RDLM_BENCH_SERVICE_TTL_MS);
    if (setenv("RDLM_AUTHORITY", authority, 1) != 0 ||
        setenv("RDLM_LEASE_TTL_MS", ttl, 1) != 0) {
        snprintf(err, errlen, "setenv failed");
        return -1;
    }
    return 0;
}

static int rdlm_bench_svc_attach(void *shared, const char *job, void **lock_p, char *err,
                                 size_t errlen)
{
    char own_job[RDLM_BENCH_JOB_MAX + 1];
    char name[RDLM_NAME_MAX + 1];
    rdlm_ctx_params_t params = {.field_mask = RDLM_CTX_FIELD_JOB, .job = own_job};
    rdlm_bench_svc_lock_t *l;
    rdlm_lock_info_t info;
    rdlm_status_t st;

    (void)shared;
    if (rdlm_bench_svc_env(err, errlen) != 0) {
        return -1;
    }
    l = calloc(1, sizeof(*l));
    if (l == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    snprintf(own_job, sizeof(own_job), "rdlmbench-svc-%ld", (long)getpid());
    st = rdlm_ctx_create(&params, &l->ctx);
    if (st != RDLM_OK) {
        snprintf(err, errlen, "rdlm_ctx_create(RDLM_AUTHORITY=%s): %s",
                 getenv(RDLM_BENCH_ENV_RDLMD), rdlm_status_name(st));
        goto err_free;
    }
    snprintf(name, sizeof(name), "rdlmbench.%s", job);
    st = rdlm_lock_open(l->ctx, name, &l->lock);
    if (st != RDLM_OK) {
        snprintf(err, errlen, "rdlm_lock_open(%s): %s", name, rdlm_status_name(st));
        goto err_destroy_ctx;
    }
    st = rdlm_lock_query(l->lock, &info);
    if (st != RDLM_OK) {
        snprintf(err, errlen, "rdlm_lock_query: %s", rdlm_status_name(st));
        goto err_destroy_ctx;
    }
    if (info.home_node < 0) {
        snprintf(err, errlen,
                 "rdlmd hosts no lock homes (built without UCX, or --home-slots 0?): "
                 "the lock would be node-local only");
        goto err_destroy_ctx;
    }
    *lock_p = l;
    return 0;

err_destroy_ctx:
    rdlm_ctx_destroy(l->ctx); /* closes the lock too */
err_free:
    free(l);
    return -1;
}

/* token_p: not filled (the service's own token stays inside the adapter). */
static int rdlm_bench_svc_acquire(void *lock, uint64_t *token_p)
{
    rdlm_bench_svc_lock_t *l = lock;

    (void)token_p;
    /* With a token, as a caller that fences asks for (and as lock_rdlmd.c does). */
    return (int)rdlm_lock_acquire(l->lock, (uint64_t)RDLM_BENCH_SERVICE_WAIT_MS * 1000000u,
                                  &l->token);
}

static int rdlm_bench_svc_release(void *lock)
{
    return (int)rdlm_lock_release(((rdlm_bench_svc_lock_t *)lock)->lock);
}

static void rdlm_bench_svc_detach(void *lock)
{
    rdlm_bench_svc_lock_t *l = lock;

    rdlm_lock_close(l->lock);
    rdlm_ctx_destroy(l->ctx);
    free(l);
}

const rdlm_bench_lock_ops_t rdlm_bench_lock_rdlmd_homes = {
    .name = "rdlmd-homes",
    .description = "rdlm lock on an rdlmd lock home, rdlm_lock_acquire with "
                   "RDLM_AUTHORITY (a job per process; remote CAS over UCX, loopback)",
    .shared_size = 0,
    .shared_init = rdlm_bench_lock_nop_init,
    .shared_fini = rdlm_bench_lock_nop_fini,
    .attach = rdlm_bench_svc_attach,
    .acquire = rdlm_bench_svc_acquire,
    .release = rdlm_bench_svc_release,
    .try_acquire = rdlm_bench_lock_no_try,
    .error_name = rdlm_bench_svc_error_name,
    .stats = rdlm_bench_lock_no_stats,
    .detach = rdlm_bench_svc_detach,
};
