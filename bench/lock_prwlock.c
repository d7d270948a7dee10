/*
 * Baseline: a default pthread_rwlock_t made PTHREAD_PROCESS_SHARED, living in the
 * shared mapping (glibc's default prefers readers).
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

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

static int rdlm_bench_prwlock_attach(void *shared, const char *job, void **lock_p,
                                     char *err, size_t errlen)
{
    (void)job;
    (void)err;
    (void)errlen;
    *lock_p = &((rdlm_bench_prwlock_t *)shared)->rw;
    return 0;
}

static int rdlm_bench_prwlock_write_acquire(void *lock)
{
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

static const char *rdlm_bench_prwlock_error_name(int code)
{
    return strerror(code);
}

const rdlm_bench_rwlock_ops_t rdlm_bench_rwlock_pthread = {
    .lock =
        {
            .name = "pthread_rwlock",
            .description = "pthread_rwlock_t, PTHREAD_PROCESS_SHARED, default kind",
            .shared_size = sizeof(rdlm_bench_prwlock_t),
            .shared_init = rdlm_bench_prwlock_init,
            .shared_fini = rdlm_bench_prwlock_fini,
            .attach = rdlm_bench_prwlock_attach,
            .acquire = rdlm_bench_prwlock_write_acquire,
            .release = rdlm_bench_prwlock_unlock,
            .try_acquire = rdlm_bench_prwlock_write_try,
            .error_name = rdlm_bench_prwlock_error_name,
            .stats = rdlm_bench_lock_no_stats,
            .detach = rdlm_bench_lock_nop_detach,
        },
    .read_acquire = rdlm_bench_prwlock_read_acquire,
    .read_release = rdlm_bench_prwlock_unlock,
};
