/*
 * The locks the stress validator runs, each an adapter of bench/locks/lock_ops.h (the
 * benchmarks' vocabulary, in the manner of Concurrency Kit's regressions) and what
 * the validator may check on it:
 *
 *   lock          rdlm exclusive lock (bounded bypass)     tokens
 *   lock_fifo     rdlm exclusive lock, RDLM_LOCK_ORDER_FIFO tokens, FIFO
 *   rwlock_write  rdlm reader-writer lock, writers only    tokens
 *   rwlock_mixed  rdlm reader-writer lock, 75% readers     tokens (writers), shared
 *   sem1          rdlm semaphore with 1 permit             exclusive (no tokens)
 *   pmutex        process-shared pthread_mutex_t, a baseline. glibc's mutex lets the
 *                 releaser take it back ahead of the waiter it woke: with long
 *                 critical sections (--cs-hold-us 1000) a waiter waits 0.3-1.4 s of a
 *                 1.5 s run, so it passes the bounded-wait check only with short ones.
 *   tas           the benchmarks' test-and-set spinlock: exclusive, but not FIFO. The
 *                 validator's FIFO check must catch it.
 *
 * and the planted bugs (stress_planted.c), which the validator must catch:
 *
 *   broken        non-atomic test-then-set on a shared word, sched_yield() between
 *                 the test and the set: NOT a lock
 *   broken_rwlock rwlock reader fast path that tests the writer bit, then adds
 *   broken_sem    semaphore fast path that checks, then adds
 *   bypass        exclusive test-and-set lock whose sleeping waiters may take it only
 *                 once it has been free for 2 ms: a waiter starves for most of the
 *                 run (unbounded bypass); the bounded-wait check must catch it
 *
 * FIFO is checked only where the adapter can count queued waiters (CAP_WAITERS): the
 * rdlm API has rdlm_lock_query but no query for reader-writer locks.
 */
#ifndef RDLM_STRESS_LOCKS_H
#define RDLM_STRESS_LOCKS_H

#include "lock_ops.h"

typedef struct stress_lock {
    const char *name;                 /**< --adapter NAME */
    const rdlm_bench_lock_ops_t *ops; /**< the lock */
    unsigned read_pct; /**< percentage of acquires made shared (CAP_SHARED) */
    int fifo;          /**< the FIFO check runs (the lock has CAP_WAITERS) */
    int planted;       /**< a planted bug: the validator must report it */
} stress_lock_t;

/** The lock called name, or NULL. */
const stress_lock_t *stress_lock_find(const char *name);

/** Every lock, ending with an entry whose name is NULL. */
extern const stress_lock_t stress_locks[];

/* The planted bugs (stress_planted.c). */
extern const rdlm_bench_lock_ops_t stress_planted_broken;
extern const rdlm_bench_lock_ops_t stress_planted_broken_rwlock;
extern const rdlm_bench_lock_ops_t stress_planted_broken_sem;
extern const rdlm_bench_lock_ops_t stress_planted_bypass;

#endif
