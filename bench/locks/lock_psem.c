/*
 * Baseline: a POSIX semaphore, sem_init(pshared 1) in the shared mapping with the
 * permits the caller set (rdlm_bench_lock_permits), sem_wait / sem_post. Codes are
 * errno values.
 */
#include <errno.h>
#include <semaphore.h>

#include "lock_ops.h"

typedef struct rdlm_bench_psem {
    rdlm_bench_lock_permits_t permits; /* first: set by the caller */
    _Alignas(64) sem_t sem;
} rdlm_bench_psem_t;

static int rdlm_bench_psem_init(void *shared)
{
    rdlm_bench_psem_t *s = shared;

    return sem_init(&s->sem, 1, rdlm_bench_lock_permits(shared)) == 0 ? 0 : -1;
}

static void rdlm_bench_psem_fini(void *shared)
{
    sem_destroy(&((rdlm_bench_psem_t *)shared)->sem);
}

/* sem_wait restarts after a signal. No tokens. */
static int rdlm_bench_psem_acquire(void *lock, uint64_t *token_p)
{
    rdlm_bench_psem_t *s = lock;

    (void)token_p;
    while (sem_wait(&s->sem) != 0) {
        if (errno != EINTR) {
            return errno;
        }
    }
    return 0;
}

static int rdlm_bench_psem_release(void *lock)
{
    return sem_post(&((rdlm_bench_psem_t *)lock)->sem) == 0 ? 0 : errno;
}

const rdlm_bench_lock_ops_t rdlm_bench_lock_posix_sem = {
    .name = "posix_sem",
    .description = "sem_t, sem_init(pshared 1) in the shared mapping, sem_wait/sem_post",
    .caps = RDLM_BENCH_LOCK_CAP_PERMITS,
    .shared_size = sizeof(rdlm_bench_psem_t),
    .shared_init = rdlm_bench_psem_init,
    .shared_fini = rdlm_bench_psem_fini,
    .attach = rdlm_bench_lock_attach_shared,
    .acquire = rdlm_bench_psem_acquire,
    .release = rdlm_bench_psem_release,
    .try_acquire = rdlm_bench_lock_no_try,
    .error_name = rdlm_bench_lock_errno_name,
    .stats = rdlm_bench_lock_no_stats,
    .detach = rdlm_bench_lock_nop_detach,
};
