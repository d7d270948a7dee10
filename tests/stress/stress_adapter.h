/*
 * The lock adapters the stress validator runs over (in the manner of Concurrency
 * Kit's regressions): one small ops table per lock kind, so a single validator checks
 * every kind the same way.
 *
 *   lock          rdlm exclusive lock (bounded bypass)     tokens
 *   lock_fifo     rdlm exclusive lock, RDLM_LOCK_ORDER_FIFO tokens, FIFO
 *   rwlock_write  rdlm reader-writer lock, writers only    tokens
 *   rwlock_mixed  rdlm reader-writer lock, readers+writers tokens (writers), shared
 *   sem1          rdlm semaphore with 1 permit             exclusive (no tokens)
 *   broken        non-atomic test-then-set on a shared word, sched_yield() between
 *                 the test and the set: NOT a lock. The validator must catch it.
 *   broken_rwlock rwlock reader fast path that tests the writer bit, then adds:
 *                 BROKEN (a writer goes in beside a reader); must be caught
 *   broken_sem    semaphore fast path that checks, then adds: BROKEN; must be caught
 *   tas           atomic test-and-set spinlock: exclusive, but not FIFO. The
 *                 validator's FIFO check must catch it.
 *   bypass        exclusive test-and-set lock whose sleeping waiters may take it only
 *                 once it has been free for 2 ms, so the running process keeps it
 *                 and a waiter starves for most of the run (unbounded bypass). The
 *                 bounded-wait check (--max-wait-ms) must catch it.
 *   pmutex        process-shared pthread_mutex_t, a baseline. glibc's mutex lets the
 *                 releaser take it back ahead of the waiter it woke: with long
 *                 critical sections (--cs-hold-us 1000) a waiter waits 0.3-1.4 s of a
 *                 1.5 s run, so it passes the bounded-wait check only with short ones.
 *
 * FIFO is checked only where the adapter can count queued waiters (the waiters op):
 * the rdlm API has rdlm_lock_query but no query for reader-writer locks.
 */
#ifndef RDLM_STRESS_ADAPTER_H
#define RDLM_STRESS_ADAPTER_H

#include <stdint.h>

#include <rdlm.h>

/** How one acquire is made. */
typedef enum stress_mode {
    STRESS_EXCLUSIVE = 0,
    STRESS_SHARED = 1,
} stress_mode_t;

/** What an adapter promises, i.e. what the validator may check. */
enum stress_cap {
    STRESS_CAP_TOKENS = 1u << 0, /**< exclusive acquires return fencing tokens */
    STRESS_CAP_FIFO = 1u << 1,   /**< claims FIFO grants; has the waiters op */
    STRESS_CAP_SHARED = 1u << 2, /**< shared (reader) acquires exist */
    STRESS_CAP_BROKEN = 1u << 3, /**< deliberately broken: violations are expected */
};

/** Bytes of shared scratch memory an adapter may use (created before fork). */
#define STRESS_ADAPTER_SCRATCH 64

typedef struct stress_adapter_ops {
    const char *name;
    const char *description;
    unsigned caps;     /**< OR of enum stress_cap */
    unsigned read_pct; /**< percentage of acquires made in shared mode */
    /** Open the lock called name; scratch is shared by all processes of the run. */
    rdlm_status_t (*open)(rdlm_ctx_h ctx, const char *name, void *scratch,
                          void **lock_p);
    /** RDLM_OK when held; token_p gets the fencing token in exclusive mode. */
    rdlm_status_t (*acquire)(void *lock, stress_mode_t mode, uint64_t timeout_ns,
                             uint64_t *token_p);
    rdlm_status_t (*release)(void *lock, stress_mode_t mode);
    /** Requests queued behind the holder, called by the holder inside its critical
     *  section; NULL unless STRESS_CAP_FIFO. */
    rdlm_status_t (*waiters)(void *lock, uint32_t *waiters_p);
    void (*close)(void *lock);
} stress_adapter_ops_t;

/** The adapter called name, or NULL. */
const stress_adapter_ops_t *stress_adapter_find(const char *name);

/** NULL-terminated list of every adapter. */
extern const stress_adapter_ops_t *const stress_adapters[];

#endif
