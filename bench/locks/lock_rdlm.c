/*
 * rdlm's exclusive lock, its reader-writer lock and its semaphore behind the
 * adapters: each worker process attaches its own context to the run's job and opens
 * the object by name. The object is in rdlm's segment; the data mapping holds only a
 * semaphore's permits.
 */
#include <stdio.h>
#include <stdlib.h>

#include "lock_ops.h"

#define RDLM_BENCH_LOCK_NAME "bench.lock"
#define RDLM_BENCH_RWLOCK_NAME "bench.rwlock"
#define RDLM_BENCH_SEM_NAME "bench.sem"

/* One of lock, rw, sem is open, as the adapter says. */
typedef struct rdlm_bench_rdlm_lock {
    rdlm_ctx_h ctx;
    rdlm_lock_h lock;
    rdlm_rwlock_h rw;
    rdlm_sem_h sem;
} rdlm_bench_rdlm_lock_t;

/* What rdlm_bench_rdlm_open opens. */
enum rdlm_bench_rdlm_kind {
    RDLM_BENCH_RDLM_LOCK,
    RDLM_BENCH_RDLM_FIFO,
    RDLM_BENCH_RDLM_RWLOCK,
    RDLM_BENCH_RDLM_SEM
};

/* The object of kind in l's context (a semaphore of permits): 0, or an rdlm status
 * with err filled. */
static rdlm_status_t rdlm_bench_rdlm_open_object(rdlm_bench_rdlm_lock_t *l,
                                                 enum rdlm_bench_rdlm_kind kind,
                                                 uint32_t permits, char *err, size_t errlen)
{
    rdlm_lock_params_t fifo = {.field_mask = RDLM_LOCK_FIELD_ORDER,
                               .order = RDLM_LOCK_ORDER_FIFO};
    rdlm_status_t st;

    switch (kind) {
    case RDLM_BENCH_RDLM_RWLOCK:
        st = rdlm_rwlock_open(l->ctx, RDLM_BENCH_RWLOCK_NAME, &l->rw);
        break;
    case RDLM_BENCH_RDLM_SEM:
        st = rdlm_sem_open(l->ctx, RDLM_BENCH_SEM_NAME, permits, &l->sem);
        break;
    default:
        st = rdlm_lock_open_params(l->ctx, RDLM_BENCH_LOCK_NAME,
                                   kind == RDLM_BENCH_RDLM_FIFO ? &fifo : NULL, &l->lock);
    }
    if (st != RDLM_OK) {
        snprintf(err, errlen, "opening the rdlm object: %s", rdlm_status_name(st));
    }
    return st;
}

/* A context on job, then the object of kind (a semaphore of permits). */
static int rdlm_bench_rdlm_open(const char *job, enum rdlm_bench_rdlm_kind kind,
                                uint32_t permits, void **lock_p, char *err, size_t errlen)
{
    rdlm_ctx_params_t params = {.field_mask = RDLM_CTX_FIELD_JOB, .job = job};
    rdlm_bench_rdlm_lock_t *l;
    rdlm_status_t st;

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
    if (rdlm_bench_rdlm_open_object(l, kind, permits, err, errlen) != RDLM_OK) {
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

static int rdlm_bench_rdlm_attach(void *shared, const char *job, void **lock_p, char *err,
                                  size_t errlen)
{
    (void)shared;
    return rdlm_bench_rdlm_open(job, RDLM_BENCH_RDLM_LOCK, 0, lock_p, err, errlen);
}

static int rdlm_bench_rdlm_fifo_attach(void *shared, const char *job, void **lock_p,
                                       char *err, size_t errlen)
{
    (void)shared;
    return rdlm_bench_rdlm_open(job, RDLM_BENCH_RDLM_FIFO, 0, lock_p, err, errlen);
}

/* RDLM_OWNER_DEAD counts as a failure here: no worker of a benchmark should die. */
static int rdlm_bench_rdlm_acquire(void *lock, uint64_t *token_p)
{
    return (int)rdlm_lock_acquire(((rdlm_bench_rdlm_lock_t *)lock)->lock,
                                  RDLM_TIMEOUT_INFINITE, token_p);
}

static int rdlm_bench_rdlm_release(void *lock)
{
    return (int)rdlm_lock_release(((rdlm_bench_rdlm_lock_t *)lock)->lock);
}

/* One attempt, with a token as a caller that fences would ask for. */
static int rdlm_bench_rdlm_try_acquire(void *lock, int *busy_p)
{
    uint64_t token;
    rdlm_status_t st = rdlm_lock_acquire(((rdlm_bench_rdlm_lock_t *)lock)->lock, 0, &token);

    *busy_p = st == RDLM_ERR_BUSY;
    return st == RDLM_ERR_BUSY ? 0 : (int)st;
}

static int rdlm_bench_rdlm_waiters(void *lock, uint32_t *waiters_p)
{
    rdlm_lock_info_t info;
    rdlm_status_t st = rdlm_lock_query(((rdlm_bench_rdlm_lock_t *)lock)->lock, &info);

    *waiters_p = st == RDLM_OK ? info.waiters : 0;
    return (int)st;
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

/* Closes whichever of lock, rw, sem is open. */
static void rdlm_bench_rdlm_detach(void *lock)
{
    rdlm_bench_rdlm_lock_t *l = lock;

    if (l->rw != NULL) {
        rdlm_rwlock_close(l->rw);
    } else if (l->sem != NULL) {
        rdlm_sem_close(l->sem);
    } else {
        rdlm_lock_close(l->lock);
    }
    rdlm_ctx_destroy(l->ctx);
    free(l);
}

const rdlm_bench_lock_ops_t rdlm_bench_lock_rdlm = {
    .name = "rdlm",
    .description = "rdlm_lock_acquire/release, one context per process",
    .caps = RDLM_BENCH_LOCK_CAP_TOKENS,
    .shared_size = 0,
    .shared_init = rdlm_bench_lock_nop_init,
    .shared_fini = rdlm_bench_lock_nop_fini,
    .attach = rdlm_bench_rdlm_attach,
    .acquire = rdlm_bench_rdlm_acquire,
    .release = rdlm_bench_rdlm_release,
    .try_acquire = rdlm_bench_rdlm_try_acquire,
    .error_name = rdlm_bench_rdlm_error_name,
    .stats = rdlm_bench_rdlm_stats,
    .detach = rdlm_bench_rdlm_detach,
};

const rdlm_bench_lock_ops_t rdlm_bench_lock_rdlm_fifo = {
    .name = "rdlm_fifo",
    .description = "rdlm_lock_acquire/release of a lock opened RDLM_LOCK_ORDER_FIFO",
    .caps = RDLM_BENCH_LOCK_CAP_TOKENS | RDLM_BENCH_LOCK_CAP_WAITERS,
    .shared_size = 0,
    .shared_init = rdlm_bench_lock_nop_init,
    .shared_fini = rdlm_bench_lock_nop_fini,
    .attach = rdlm_bench_rdlm_fifo_attach,
    .acquire = rdlm_bench_rdlm_acquire,
    .release = rdlm_bench_rdlm_release,
    .try_acquire = rdlm_bench_rdlm_try_acquire,
    .waiters = rdlm_bench_rdlm_waiters,
    .error_name = rdlm_bench_rdlm_error_name,
    .stats = rdlm_bench_rdlm_stats,
    .detach = rdlm_bench_rdlm_detach,
};

/* ---- reader-writer lock ------------------------------------------------------------ */

static int rdlm_bench_rdlm_rw_attach(void *shared, const char *job, void **lock_p,
                                     char *err, size_t errlen)
{
    (void)shared;
    return rdlm_bench_rdlm_open(job, RDLM_BENCH_RDLM_RWLOCK, 0, lock_p, err, errlen);
}

static int rdlm_bench_rdlm_write_acquire(void *lock, uint64_t *token_p)
{
    return (int)rdlm_rwlock_write_acquire(((rdlm_bench_rdlm_lock_t *)lock)->rw,
                                          RDLM_TIMEOUT_INFINITE, token_p);
}

static int rdlm_bench_rdlm_write_release(void *lock)
{
    return (int)rdlm_rwlock_write_release(((rdlm_bench_rdlm_lock_t *)lock)->rw);
}

static int rdlm_bench_rdlm_write_try(void *lock, int *busy_p)
{
    rdlm_status_t st = rdlm_rwlock_write_acquire(((rdlm_bench_rdlm_lock_t *)lock)->rw, 0,
                                                 NULL);

    *busy_p = st == RDLM_ERR_BUSY;
    return st == RDLM_ERR_BUSY ? 0 : (int)st;
}

static int rdlm_bench_rdlm_read_acquire(void *lock)
{
    return (int)rdlm_rwlock_read_acquire(((rdlm_bench_rdlm_lock_t *)lock)->rw,
                                         RDLM_TIMEOUT_INFINITE);
}

static int rdlm_bench_rdlm_read_release(void *lock)
{
    return (int)rdlm_rwlock_read_release(((rdlm_bench_rdlm_lock_t *)lock)->rw);
}

const rdlm_bench_lock_ops_t rdlm_bench_lock_rdlm_rwlock = {
    .name = "rdlm",
    .description = "rdlm_rwlock_read/write_acquire/release, one context per process",
    .caps = RDLM_BENCH_LOCK_CAP_TOKENS | RDLM_BENCH_LOCK_CAP_SHARED,
    .shared_size = 0,
    .shared_init = rdlm_bench_lock_nop_init,
    .shared_fini = rdlm_bench_lock_nop_fini,
    .attach = rdlm_bench_rdlm_rw_attach,
    .acquire = rdlm_bench_rdlm_write_acquire,
    .release = rdlm_bench_rdlm_write_release,
    .read_acquire = rdlm_bench_rdlm_read_acquire,
    .read_release = rdlm_bench_rdlm_read_release,
    .try_acquire = rdlm_bench_rdlm_write_try,
    .error_name = rdlm_bench_rdlm_error_name,
    .stats = rdlm_bench_rdlm_stats,
    .detach = rdlm_bench_rdlm_detach,
};

/* ---- semaphore ------------------------------------------------------------------- */

static int rdlm_bench_rdlm_sem_attach(void *shared, const char *job, void **lock_p,
                                      char *err, size_t errlen)
{
    return rdlm_bench_rdlm_open(job, RDLM_BENCH_RDLM_SEM, rdlm_bench_lock_permits(shared),
                                lock_p, err, errlen);
}

static int rdlm_bench_rdlm_sem_acquire(void *lock, uint64_t *token_p)
{
    (void)token_p;
    return (int)rdlm_sem_acquire(((rdlm_bench_rdlm_lock_t *)lock)->sem, 1,
                                 RDLM_TIMEOUT_INFINITE);
}

static int rdlm_bench_rdlm_sem_release(void *lock)
{
    return (int)rdlm_sem_release(((rdlm_bench_rdlm_lock_t *)lock)->sem, 1);
}

const rdlm_bench_lock_ops_t rdlm_bench_lock_rdlm_sem = {
    .name = "rdlm",
    .description = "rdlm_sem_acquire/release(1), one context per process",
    .caps = RDLM_BENCH_LOCK_CAP_PERMITS,
    .shared_size = sizeof(rdlm_bench_lock_permits_t),
    .shared_init = rdlm_bench_lock_nop_init,
    .shared_fini = rdlm_bench_lock_nop_fini,
    .attach = rdlm_bench_rdlm_sem_attach,
    .acquire = rdlm_bench_rdlm_sem_acquire,
    .release = rdlm_bench_rdlm_sem_release,
    .try_acquire = rdlm_bench_lock_no_try,
    .error_name = rdlm_bench_rdlm_error_name,
    .stats = rdlm_bench_rdlm_stats,
    .detach = rdlm_bench_rdlm_detach,
};
