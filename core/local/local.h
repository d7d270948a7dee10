/*
 * core/local: a process's on-node context (its segment view, waiting policy and
 * statistics) and the operations on the objects in the segment. Objects are named by
 * their entry index from rdlm_table_open().
 */
#ifndef RDLM_LOCAL_H
#define RDLM_LOCAL_H

#include <stdint.h>

#include <rdlm/status.h>

#include "segment.h"
#include "wait.h"

typedef struct rdlm_local_stats {
    rdlm_wait_stats_t wait; /* parks, wakes */
    rdlm_atomic_u64_t acquires;
    rdlm_atomic_u64_t contended;
    rdlm_atomic_u64_t timeouts;
    rdlm_atomic_u64_t recoveries;
    rdlm_atomic_u64_t skips;
} rdlm_local_stats_t;

typedef struct rdlm_local {
    rdlm_segment_t seg;
    rdlm_wait_policy_t policy;
    uint32_t cpus; /* online CPUs: more attached processes than this = oversubscribed */
    rdlm_local_stats_t stats;
    /* Set when the context is being destroyed: waiters give up their places and
     * return RDLM_ERR_CLOSED (checked after every wait step). */
    rdlm_atomic_u32_t closing;
    rdlm_atomic_u64_t next_try_check_ns; /* rate limit of dead-holder checks by try */
} rdlm_local_t;

/* Exclusive (ticket) lock: qlock.c. timeout_ns 0 = one try. */
rdlm_status_t rdlm_qlock_acquire(rdlm_local_t *lc, uint32_t idx, uint64_t timeout_ns,
                                 uint64_t *token_p);
rdlm_status_t rdlm_qlock_release(rdlm_local_t *lc, uint32_t idx);
/** 1 if this context holds the lock (or rwlock write side). */
int rdlm_qlock_held_by_me(const rdlm_local_t *lc, uint32_t idx);
/** 1 if places were taken behind the current holder (live or abandoned ones). */
int rdlm_qlock_has_waiters(const rdlm_local_t *lc, uint32_t idx);
/** After leaving a lock (release, timeout): passes over abandoned places at its
 *  head, then returns 1 if nobody holds the lock and no live waiter is about to
 *  take it, 0 if someone holds it or a live waiter will. The cross-node layer runs it
 *  so that a node never keeps a global lock nobody on the node uses. */
int rdlm_qlock_idle(rdlm_local_t *lc, uint32_t idx);

/** A lock's or rwlock's state, for queries (scans the slots' records). */
typedef struct rdlm_lock_snapshot {
    uint32_t waiters;          /* queued requests of live processes */
    uint32_t readers;          /* shared holders of live processes (rwlock) */
    uint32_t reads_held_by_me; /* shared holds of this context (rwlock) */
    int held;                  /* exclusively held */
    int held_by_me;
    uint64_t last_token;
} rdlm_lock_snapshot_t;

void rdlm_qlock_snapshot(const rdlm_local_t *lc, uint32_t idx, rdlm_lock_snapshot_t *snap);

/* Reader-writer lock: rwlock.c. */
rdlm_status_t rdlm_rwlock_local_read_acquire(rdlm_local_t *lc, uint32_t idx,
                                             uint64_t timeout_ns);
rdlm_status_t rdlm_rwlock_local_read_release(rdlm_local_t *lc, uint32_t idx);
rdlm_status_t rdlm_rwlock_local_write_acquire(rdlm_local_t *lc, uint32_t idx,
                                              uint64_t timeout_ns, uint64_t *token_p);
/** Clear the writer bit, then release the gate (NOT_OWNER if not held). */
rdlm_status_t rdlm_rwlock_local_write_release(rdlm_local_t *lc, uint32_t idx);
/** Holding the gate (the entry's qlock): record a shared hold of this context
 *  (RDLM_ERR_NO_RESOURCE if it holds too many). read_acquire = gate + enter + gate
 *  release; the cross-node layer puts its own step between. */
rdlm_status_t rdlm_rwlock_local_read_enter(rdlm_local_t *lc, uint32_t idx);
/** Shared holds of this context on the rwlock. */
uint32_t rdlm_rwlock_local_reads_held(const rdlm_local_t *lc, uint32_t idx);

/* Counter: counter.c. Non-blocking, seq_cst; wraps. */
int64_t rdlm_counter_local_fetch_add(rdlm_local_t *lc, uint32_t idx, int64_t delta);
int64_t rdlm_counter_local_read(const rdlm_local_t *lc, uint32_t idx);

/* Semaphore: semaphore.c. aux32 = permits (fixed by the first open). */
/** Bounded bypass: one CAS on aux64 when k are free and nothing is reserved; else
 *  retry and sleep for up to 1 ms, then pass the gate (the entry's ticket lock) and,
 *  holding it, reserve the next free permits. timeout_ns 0 = one try. A timeout
 *  takes nothing. k must be 1..permits (the caller checks). */
rdlm_status_t rdlm_sem_local_acquire(rdlm_local_t *lc, uint32_t idx, uint32_t k,
                                     uint64_t timeout_ns);
/** Give k permits back (one fetch-sub); wake the reserver or one sleeper if any. The
 *  caller checks it holds k. */
void rdlm_sem_local_release(rdlm_local_t *lc, uint32_t idx, uint32_t k);
/** Permits free now. */
uint32_t rdlm_sem_local_available(const rdlm_local_t *lc, uint32_t idx);

/** Holding the gate: wait until `ready(arg)` (re-checked after every change of the
 *  entry's wake32 word, which releases bump while a reservation stands) or the
 *  deadline. The reserver's wait (semaphore.c). */
rdlm_status_t rdlm_sem_local_wait(rdlm_local_t *lc, uint32_t idx, uint64_t deadline,
                                  int (*ready)(void *arg), void *arg);

/* Barrier: barrier.c. */
rdlm_status_t rdlm_barrier_local_wait(rdlm_local_t *lc, uint32_t idx, uint64_t timeout_ns);

#endif
