/*
 * One adapter per lock implementation, the one vocabulary of the lock benchmarks
 * (bench/) and of the stress validator (tests/stress), so a lock is added once and
 * both run it (the Concurrency Kit pattern).
 *
 *   parent:  shared_init(shared)           the lock's words in the shared mapping
 *   worker:  attach(shared, job) -> lock   per process (rdlm: a context per process)
 *            acquire(lock, &token)         0, or a code that error_name(code) names;
 *            release(lock)                 token_p may be NULL (CAP_TOKENS: a
 *                                          fencing token, larger than every earlier)
 *            read_acquire / read_release   the shared side (CAP_SHARED only)
 *            try_acquire(lock, &busy)      one attempt: 0 with busy 0 (held now) or
 *                                          1 (held by another, not taken), or a code
 *            waiters(lock, &n)             requests waiting behind the holder, asked
 *                                          by the holder (CAP_WAITERS only)
 *            stats(lock, &s)               0 if the implementation keeps statistics
 *            detach(lock)
 *   parent:  shared_fini(shared)
 *
 * Members a cap does not name are NULL; every other member is set (stubs below).
 */
#ifndef RDLM_BENCH_LOCK_OPS_H
#define RDLM_BENCH_LOCK_OPS_H

#include <stddef.h>
#include <stdint.h>

#include <rdlm.h>

/** What an adapter offers beyond exclusive acquire and release. */
enum rdlm_bench_lock_cap {
    RDLM_BENCH_LOCK_CAP_TOKENS = 1u << 0,  /**< acquire fills a fencing token */
    RDLM_BENCH_LOCK_CAP_SHARED = 1u << 1,  /**< read_acquire / read_release */
    RDLM_BENCH_LOCK_CAP_WAITERS = 1u << 2, /**< waiters */
    RDLM_BENCH_LOCK_CAP_PERMITS = 1u << 3, /**< a semaphore: see rdlm_bench_lock_permits */
};

/** A semaphore adapter's shared words start with its permits, which the caller sets
 *  before shared_init (0 means 1): a lock of that many holders. */
typedef struct rdlm_bench_lock_permits {
    uint32_t permits;
} rdlm_bench_lock_permits_t;

/** The permits of a semaphore adapter's shared words (at least 1). */
static inline uint32_t rdlm_bench_lock_permits(const void *shared)
{
    uint32_t k = ((const rdlm_bench_lock_permits_t *)shared)->permits;

    return k != 0 ? k : 1;
}

typedef struct rdlm_bench_lock_ops {
    const char *name;        /**< short name used in tables and files */
    const char *description; /**< one line for the section header */
    unsigned caps;           /**< OR of enum rdlm_bench_lock_cap */
    size_t shared_size;      /**< bytes it needs in the shared data mapping */
    int (*shared_init)(void *shared);
    void (*shared_fini)(void *shared);
    int (*attach)(void *shared, const char *job, void **lock_p, char *err, size_t errlen);
    int (*acquire)(void *lock, uint64_t *token_p);
    int (*release)(void *lock);
    int (*read_acquire)(void *lock);
    int (*read_release)(void *lock);
    int (*try_acquire)(void *lock, int *busy_p);
    int (*waiters)(void *lock, uint32_t *waiters_p);
    const char *(*error_name)(int code);
    int (*stats)(void *lock, rdlm_stats_t *stats_p);
    void (*detach)(void *lock);
} rdlm_bench_lock_ops_t;

/** rdlm exclusive lock: a context per process, one named lock. */
extern const rdlm_bench_lock_ops_t rdlm_bench_lock_rdlm;
/** rdlm's exclusive lock opened with RDLM_LOCK_ORDER_FIFO; waiters from
 *  rdlm_lock_query. */
extern const rdlm_bench_lock_ops_t rdlm_bench_lock_rdlm_fifo;
/** rdlm reader-writer lock: a context per process, one named rwlock. */
extern const rdlm_bench_lock_ops_t rdlm_bench_lock_rdlm_rwlock;
/** rdlm semaphore as a lock of rdlm_bench_lock_permits holders (no tokens). */
extern const rdlm_bench_lock_ops_t rdlm_bench_lock_rdlm_sem;
/** POSIX sem_t, sem_init(pshared 1) in the shared mapping, sem_wait/sem_post. */
extern const rdlm_bench_lock_ops_t rdlm_bench_lock_posix_sem;
/** Test-and-test-and-set spinlock on one C11 atomic word, pause while spinning:
 *  exclusive, not FIFO; waiters counts the spinning requests. */
extern const rdlm_bench_lock_ops_t rdlm_bench_lock_tas;
/** Default pthread_mutex_t, PTHREAD_PROCESS_SHARED, in the shared mapping. */
extern const rdlm_bench_lock_ops_t rdlm_bench_lock_pmutex;
/** Default pthread_rwlock_t, PTHREAD_PROCESS_SHARED, in the shared mapping. */
extern const rdlm_bench_lock_ops_t rdlm_bench_lock_prwlock;

/* Stubs for adapters that have nothing to do or report. */
int rdlm_bench_lock_nop_init(void *shared);
void rdlm_bench_lock_nop_fini(void *shared);
/** attach of an adapter whose lock is its shared words: *lock_p = shared. */
int rdlm_bench_lock_attach_shared(void *shared, const char *job, void **lock_p, char *err,
                                  size_t errlen);
/** try_acquire of a lock that has no single-attempt form: returns ENOSYS. */
int rdlm_bench_lock_no_try(void *lock, int *busy_p);
int rdlm_bench_lock_no_stats(void *lock, rdlm_stats_t *stats_p);
void rdlm_bench_lock_nop_detach(void *lock);
/** error_name of the adapters whose codes are errno values. */
const char *rdlm_bench_lock_errno_name(int code);

#endif
