/*
 * One adapter per lock implementation, so every lock benchmark is written once and
 * run over rdlm and its baselines alike (the Concurrency Kit pattern).
 *
 *   parent:  shared_init(shared)           the lock's words in the data mapping
 *   worker:  attach(shared, job) -> lock   per process (rdlm: a context per process)
 *            acquire(lock) / release(lock) the measured calls: 0, or a code that
 *                                          error_name(code) names
 *            try_acquire(lock, &busy)      one attempt: 0 with busy 0 (held now) or
 *                                          1 (held by another, not taken), or a code
 *            stats(lock, &s)               0 if the implementation keeps statistics
 *            detach(lock)
 *   parent:  shared_fini(shared)
 */
#ifndef RDLM_BENCH_LOCK_OPS_H
#define RDLM_BENCH_LOCK_OPS_H

#include <stddef.h>

#include <rdlm.h>

typedef struct rdlm_bench_lock_ops {
    const char *name;        /**< short name used in tables and files */
    const char *description; /**< one line for the section header */
    size_t shared_size;      /**< bytes it needs in the shared data mapping */
    int (*shared_init)(void *shared);
    void (*shared_fini)(void *shared);
    int (*attach)(void *shared, const char *job, void **lock_p, char *err, size_t errlen);
    int (*acquire)(void *lock);
    int (*release)(void *lock);
    int (*try_acquire)(void *lock, int *busy_p);
    const char *(*error_name)(int code);
    int (*stats)(void *lock, rdlm_stats_t *stats_p);
    void (*detach)(void *lock);
} rdlm_bench_lock_ops_t;

/** rdlm exclusive lock: a context per process, one named lock. */
extern const rdlm_bench_lock_ops_t rdlm_bench_lock_rdlm;
/** rdlm's exclusive lock opened with RDLM_LOCK_ORDER_FIFO. */
extern const rdlm_bench_lock_ops_t rdlm_bench_lock_rdlm_fifo;
/** Test-and-test-and-set spinlock on one C11 atomic word, pause while spinning. */
extern const rdlm_bench_lock_ops_t rdlm_bench_lock_tas;
/** Default pthread_mutex_t, PTHREAD_PROCESS_SHARED, in the shared mapping. */
extern const rdlm_bench_lock_ops_t rdlm_bench_lock_pmutex;

/** A reader-writer lock: lock is its exclusive (write) side, so every lock helper
 *  applies to it; read_acquire/read_release are the shared side. */
typedef struct rdlm_bench_rwlock_ops {
    rdlm_bench_lock_ops_t lock;
    int (*read_acquire)(void *lock);
    int (*read_release)(void *lock);
} rdlm_bench_rwlock_ops_t;

/** rdlm reader-writer lock: a context per process, one named rwlock. */
extern const rdlm_bench_rwlock_ops_t rdlm_bench_rwlock_rdlm;
/** Default pthread_rwlock_t, PTHREAD_PROCESS_SHARED, in the shared mapping. */
extern const rdlm_bench_rwlock_ops_t rdlm_bench_rwlock_pthread;

/* Stubs for adapters that have nothing to do or report. */
int rdlm_bench_lock_nop_init(void *shared);
void rdlm_bench_lock_nop_fini(void *shared);
/** try_acquire of a lock that has no single-attempt form: returns ENOSYS. */
int rdlm_bench_lock_no_try(void *lock, int *busy_p);
int rdlm_bench_lock_no_stats(void *lock, rdlm_stats_t *stats_p);
void rdlm_bench_lock_nop_detach(void *lock);

#endif
