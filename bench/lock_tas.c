/*
 * Baseline: a test-and-test-and-set spinlock. Acquire exchanges 1 into the word and,
 * while that fails, spins reading it (with the CPU's pause) until it looks free.
 */
#include <stdatomic.h>
#include <stdint.h>

#include "clock.h"
#include "lock_ops.h"

typedef struct rdlm_bench_tas {
    _Alignas(64) _Atomic uint32_t word; /* 0 free, 1 held */
} rdlm_bench_tas_t;

static int rdlm_bench_tas_init(void *shared)
{
    atomic_init(&((rdlm_bench_tas_t *)shared)->word, 0);
    return 0;
}

static int rdlm_bench_tas_attach(void *shared, const char *job, void **lock_p, char *err,
                                 size_t errlen)
{
    (void)job;
    (void)err;
    (void)errlen;
    *lock_p = shared;
    return 0;
}

static int rdlm_bench_tas_acquire(void *lock)
{
    rdlm_bench_tas_t *t = lock;

    while (atomic_exchange_explicit(&t->word, 1, memory_order_acquire) != 0) {
        while (atomic_load_explicit(&t->word, memory_order_relaxed) != 0) {
            rdlm_bench_pause();
        }
    }
    return 0;
}

static int rdlm_bench_tas_release(void *lock)
{
    atomic_store_explicit(&((rdlm_bench_tas_t *)lock)->word, 0, memory_order_release);
    return 0;
}

static int rdlm_bench_tas_try_acquire(void *lock, int *busy_p)
{
    rdlm_bench_tas_t *t = lock;

    *busy_p = atomic_exchange_explicit(&t->word, 1, memory_order_acquire) != 0;
    return 0;
}

static const char *rdlm_bench_tas_error_name(int code)
{
    (void)code;
    return "tas lock failed (cannot happen)";
}

const rdlm_bench_lock_ops_t rdlm_bench_lock_tas = {
    .name = "tas",
    .description = "test-and-test-and-set spinlock (C11 atomics, pause)",
    .shared_size = sizeof(rdlm_bench_tas_t),
    .shared_init = rdlm_bench_tas_init,
    .shared_fini = rdlm_bench_lock_nop_fini,
    .attach = rdlm_bench_tas_attach,
    .acquire = rdlm_bench_tas_acquire,
    .release = rdlm_bench_tas_release,
    .try_acquire = rdlm_bench_tas_try_acquire,
    .error_name = rdlm_bench_tas_error_name,
    .stats = rdlm_bench_lock_no_stats,
    .detach = rdlm_bench_lock_nop_detach,
};
