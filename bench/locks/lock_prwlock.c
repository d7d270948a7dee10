/*
 * Baseline: a default pthread_rwlock_t made PTHREAD_PROCESS_SHARED, living in the
 * shared mapping (glibc's default prefers readers).
 */
#include <errno.h>
#include <pthread.h>

#include "lock_ops.h"

typedef struct rdlm_bench_prwlock {
    _Alignas(64) pthread_rwlock_t rw;
} rdlm_bench_prwlock_t;

static int rdlm_bench_prwlock_init(void *shared)
{
    rdlm_bench_prwlock_t *l = shared;
    pthread_rwlockattr_t attr;
    int rc;

    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
    rc = pthread_rwlock_init(&l->rw, &attr);
    pthread_rwlockattr_destroy(&attr);
    return rc == 0 ? 0 : -1;
}

static void rdlm_bench_prwlock_fini(void *shared)
{
    pthread_rwlock_destroy(&((rdlm_bench_prwlock_t *)shared)->rw);
}

/* Tokens: none (the benchmarks ask for none). */
static int rdlm_bench_prwlock_write_acquire(void *lock, uint64_t *token_p)
{
    (void)token_p;
    return pthread_rwlock_wrlock(lock);
}

static int rdlm_bench_prwlock_unlock(void *lock)
{
    return pthread_rwlock_unlock(lock);
}

static int rdlm_bench_prwlock_write_try(void *lock, int *busy_p)
{
    int rc = pthread_rwlock_trywrlock(lock);

    *busy_p = rc == EBUSY;
    return rc == EBUSY ? 0 : rc;
}

static int rdlm_bench_prwlock_read_acquire(void *lock)
{
    return pthread_rwlock_rdlock(lock);
}

const rdlm_bench_lock_ops_t rdlm_bench_lock_prwlock = {
    .name = "pthread_rwlock",
    .description = "pthread_rwlock_t, PTHREAD_PROCESS_SHARED, default kind",
    .caps = RDLM_BENCH_LOCK_CAP_SHARED,
    .shared_size = sizeof(rdlm_bench_prwlock_t),
    .shared_init = rdlm_bench_prwlock_init,
    .shared_fini = rdlm_bench_prwlock_fini,
    .attach = rdlm_bench_lock_attach_shared,
    .acquire = rdlm_bench_prwlock_write_acquire,
    .release = rdlm_bench_prwlock_unlock,
    .read_acquire = rdlm_bench_prwlock_read_acquire,
    .read_release = rdlm_bench_prwlock_unlock,
    .try_acquire = rdlm_bench_prwlock_write_try,
    .error_name = rdlm_bench_lock_errno_name,
    .stats = rdlm_bench_lock_no_stats,
    .detach = rdlm_bench_lock_nop_detach,
};
