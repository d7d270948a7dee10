/*
 * A test-and-test-and-set spinlock, written once for the benchmarks (the TAS
 * baseline) and the stress validator (a lock that is exclusive but not FIFO, which
 * its FIFO check must catch). Acquire exchanges 1 into the word and, while that
 * fails, spins reading it (with the CPU's pause) until it looks free; a request
 * that had to spin is counted in spinners until it holds the lock (waiters).
 *
 *   (word, spinners): (0, n) free; (1, n) held, n requests spinning
 */
#include <stdatomic.h>
#include <stdint.h>

#include "clock.h"
#include "lock_ops.h"

typedef struct rdlm_bench_tas {
    _Alignas(64) _Atomic uint32_t word; /* 0 free, 1 held */
    _Atomic uint32_t spinners;          /* requests that found it held, not yet granted */
    uint64_t token;                     /* last token handed out; the holder's */
} rdlm_bench_tas_t;

static int rdlm_bench_tas_init(void *shared)
{
    rdlm_bench_tas_t *t = shared;

    atomic_init(&t->word, 0);
    atomic_init(&t->spinners, 0);
    t->token = 0;
    return 0;
}

/* The uncontended path is one exchange; spinners moves only when it fails. */
static int rdlm_bench_tas_acquire(void *lock, uint64_t *token_p)
{
    rdlm_bench_tas_t *t = lock;

    if (atomic_exchange_explicit(&t->word, 1, memory_order_acquire) != 0) {
        atomic_fetch_add_explicit(&t->spinners, 1, memory_order_relaxed);
        do {
            while (atomic_load_explicit(&t->word, memory_order_relaxed) != 0) {
                rdlm_bench_pause();
            }
        } while (atomic_exchange_explicit(&t->word, 1, memory_order_acquire) != 0);
        atomic_fetch_sub_explicit(&t->spinners, 1, memory_order_relaxed);
    }
    if (token_p != NULL) {
        *token_p = ++t->token;
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

static int rdlm_bench_tas_waiters(void *lock, uint32_t *waiters_p)
{
    *waiters_p = atomic_load(&((rdlm_bench_tas_t *)lock)->spinners);
    return 0;
}

const rdlm_bench_lock_ops_t rdlm_bench_lock_tas = {
    .name = "tas",
    .description = "test-and-test-and-set spinlock (C11 atomics, pause)",
    .caps = RDLM_BENCH_LOCK_CAP_TOKENS | RDLM_BENCH_LOCK_CAP_WAITERS,
    .shared_size = sizeof(rdlm_bench_tas_t),
    .shared_init = rdlm_bench_tas_init,
    .shared_fini = rdlm_bench_lock_nop_fini,
    .attach = rdlm_bench_lock_attach_shared,
    .acquire = rdlm_bench_tas_acquire,
    .release = rdlm_bench_tas_release,
    .try_acquire = rdlm_bench_tas_try_acquire,
    .waiters = rdlm_bench_tas_waiters,
    .error_name = rdlm_bench_lock_errno_name,
    .stats = rdlm_bench_lock_no_stats,
    .detach = rdlm_bench_lock_nop_detach,
};
