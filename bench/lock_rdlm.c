/*
 * rdlm's exclusive lock behind the adapter: each worker process attaches its own
 * context to the run's job and opens the lock by name. Nothing lives in the data
 * mapping; the lock is in rdlm's segment.
 */
#include <stdio.h>
#include <stdlib.h>

#include "lock_ops.h"

#define RDLM_BENCH_LOCK_NAME "bench.lock"

typedef struct rdlm_bench_rdlm_lock {
    rdlm_ctx_h ctx;
    rdlm_lock_h lock;
} rdlm_bench_rdlm_lock_t;

static int rdlm_bench_rdlm_attach(void *shared, const char *job, void **lock_p, char *err,
                                  size_t errlen)
{
    rdlm_ctx_params_t params = {.field_mask = RDLM_CTX_FIELD_JOB, .job = job};
    rdlm_bench_rdlm_lock_t *l;
    rdlm_status_t st;

    (void)shared;
    l = calloc(1, sizeof(*l));
    if (l == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    st = rdlm_ctx_create(&params, &l->ctx);
    if (st != RDLM_OK) {
        snprintf(err, errlen, "rdlm_ctx_create(job %s): %s", job, rdlm_status_name(st));
        goto err_free;
    }
    st = rdlm_lock_open(l->ctx, RDLM_BENCH_LOCK_NAME, &l->lock);
    if (st != RDLM_OK) {
        snprintf(err, errlen, "rdlm_lock_open: %s", rdlm_status_name(st));
        goto err_destroy_ctx;
    }
    *lock_p = l;
    return 0;

err_destroy_ctx:
    rdlm_ctx_destroy(l->ctx);
err_free:
    free(l);
    return -1;
}

/* RDLM_OWNER_DEAD counts as a failure here: no worker of a benchmark should die. */
static int rdlm_bench_rdlm_acquire(void *lock)
{
    return (int)rdlm_lock_acquire(((rdlm_bench_rdlm_lock_t *)lock)->lock,
                                  RDLM_TIMEOUT_INFINITE, NULL);
}

static int rdlm_bench_rdlm_release(void *lock)
{
    return (int)rdlm_lock_release(((rdlm_bench_rdlm_lock_t *)lock)->lock);
}

static const char *rdlm_bench_rdlm_error_name(int code)
{
    return rdlm_status_name((rdlm_status_t)code);
}

static int rdlm_bench_rdlm_stats(void *lock, rdlm_stats_t *stats_p)
{
    return rdlm_ctx_stats(((rdlm_bench_rdlm_lock_t *)lock)->ctx, stats_p) == RDLM_OK ? 0
                                                                                     : -1;
}

static void rdlm_bench_rdlm_detach(void *lock)
{
    rdlm_bench_rdlm_lock_t *l = lock;

    rdlm_lock_close(l->lock);
    rdlm_ctx_destroy(l->ctx);
    free(l);
}

const rdlm_bench_lock_ops_t rdlm_bench_lock_rdlm = {
    .name = "rdlm",
    .description = "rdlm_lock_acquire/release, one context per process",
    .shared_size = 0,
    .shared_init = rdlm_bench_lock_nop_init,
    .shared_fini = rdlm_bench_lock_nop_fini,
    .attach = rdlm_bench_rdlm_attach,
    .acquire = rdlm_bench_rdlm_acquire,
    .release = rdlm_bench_rdlm_release,
    .error_name = rdlm_bench_rdlm_error_name,
    .stats = rdlm_bench_rdlm_stats,
    .detach = rdlm_bench_rdlm_detach,
};
