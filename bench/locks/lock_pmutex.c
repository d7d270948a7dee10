/*
 * Baseline: a default (PTHREAD_MUTEX_NORMAL) pthread_mutex_t made
 * PTHREAD_PROCESS_SHARED, living in the shared mapping. Stubs for every adapter.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "lock_ops.h"

typedef struct rdlm_bench_pmutex {
    _Alignas(64) pthread_mutex_t mutex;
    uint64_t token; /* last token handed out; the holder's */
} rdlm_bench_pmutex_t;

static int rdlm_bench_pmutex_init(void *shared)
{
    rdlm_bench_pmutex_t *m = shared;
    pthread_mutexattr_t attr;
    int rc;

    pthread_mutexattr_init(&attr);
    pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
    rc = pthread_mutex_init(&m->mutex, &attr);
    pthread_mutexattr_destroy(&attr);
    m->token = 0;
    return rc == 0 ? 0 : -1;
}

static void rdlm_bench_pmutex_fini(void *shared)
{
    pthread_mutex_destroy(&((rdlm_bench_pmutex_t *)shared)->mutex);
}

static int rdlm_bench_pmutex_acquire(void *lock, uint64_t *token_p)
{
    rdlm_bench_pmutex_t *m = lock;
    int rc = pthread_mutex_lock(&m->mutex);

    if (rc == 0 && token_p != NULL) {
        *token_p = ++m->token;
    }
    return rc;
}

static int rdlm_bench_pmutex_release(void *lock)
{
    return pthread_mutex_unlock(&((rdlm_bench_pmutex_t *)lock)->mutex);
}

static int rdlm_bench_pmutex_try_acquire(void *lock, int *busy_p)
{
    int rc = pthread_mutex_trylock(&((rdlm_bench_pmutex_t *)lock)->mutex);

    *busy_p = rc == EBUSY;
    return rc == EBUSY ? 0 : rc;
}

const rdlm_bench_lock_ops_t rdlm_bench_lock_pmutex = {
    .name = "pthread_mutex",
    .description = "pthread_mutex_t, PTHREAD_PROCESS_SHARED, default type",
    .caps = RDLM_BENCH_LOCK_CAP_TOKENS,
    .shared_size = sizeof(rdlm_bench_pmutex_t),
    .shared_init = rdlm_bench_pmutex_init,
    .shared_fini = rdlm_bench_pmutex_fini,
    .attach = rdlm_bench_lock_attach_shared,
    .acquire = rdlm_bench_pmutex_acquire,
    .release = rdlm_bench_pmutex_release,
    .try_acquire = rdlm_bench_pmutex_try_acquire,
    .error_name = rdlm_bench_lock_errno_name,
    .stats = rdlm_bench_lock_no_stats,
    .detach = rdlm_bench_lock_nop_detach,
};

/* ---- stubs shared by the adapters --------------------------------------------------- */

int rdlm_bench_lock_nop_init(void *shared)
{
    (void)shared;
    return 0;
}

void rdlm_bench_lock_nop_fini(void *shared)
{
    (void)shared;
}

int rdlm_bench_lock_attach_shared(void *shared, const char *job, void **lock_p, char *err,
                                  size_t errlen)
{
    (void)job;
    (void)err;
    (void)errlen;
    *lock_p = shared;
    return 0;
}

int rdlm_bench_lock_no_try(void *lock, int *busy_p)
{
    (void)lock;
    *busy_p = 0;
    return ENOSYS;
}

int rdlm_bench_lock_no_stats(void *lock, rdlm_stats_t *stats_p)
{
    (void)lock;
    (void)stats_p;
    return -1;
}

void rdlm_bench_lock_nop_detach(void *lock)
{
    (void)lock;
}

const char *rdlm_bench_lock_errno_name(int code)
{
    return strerror(code);
}
