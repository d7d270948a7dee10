/*
 * core/local: a process's on-node context (its segment view, waiting policy and
 * statistics) and the operations on the objects in the segment. Objects are named by
 * their entry index from rdlm_table_open().
 */
#ifndef RDLM_LOCAL_H
#define RDLM_LOCAL_H

#include <stdint.h>

#include <rdlm/status.h>

#include "config.h"
#include "segment.h"
#include "wait.h"

typedef struct rdlm_local_stats {
    rdlm_wait_stats_t wait; /* parks, wakes */
    rdlm_atomic_u64_t acquires;
    rdlm_atomic_u64_t contended;
    rdlm_atomic_u64_t timeouts;
    rdlm_atomic_u64_t recoveries;
    rdlm_atomic_u64_t skips;
    rdlm_atomic_u64_t reservations; /* mutex waits that outlasted the bypass bound */
} rdlm_local_stats_t;

typedef struct rdlm_local {
    rdlm_segment_t seg;
    rdlm_wait_policy_t policy;
    uint64_t bypass_ns; /* RDLM_LOCK_BYPASS_US: a mutex waiter then reserves the lock */
    uint32_t cpus; /* online CPUs: more processes than this = oversubscribed */
    /* Processes known to share this host's CPUs, the segment's included (a context's
     * other virtual nodes, say), set by the layer above; 0: only the attached ones. */
    uint32_t host_procs;
    rdlm_switch_t oversubscribed; /* RDLM_OVERSUBSCRIBED (0: auto) */
    rdlm_local_stats_t stats;
    /* Set when the context is being destroyed: waiters give up their places and
     * return RDLM_ERR_CLOSED (checked after every wait step). */
    rdlm_atomic_u32_t closing;
    /* Calls of this context that wait, from before their first wait to their return
     * (rdlm_local_wait_enter): the destroy waits for them before the segment goes. */
    rdlm_atomic_u32_t waiting;
    rdlm_atomic_u64_t next_try_check_ns; /* rate limit of dead-holder checks by try */
    /* What the last failed try that read the clock saw, and the failed tries since.
     * Hints only (they pick when to read the clock; threads may race on them). */
    rdlm_atomic_u64_t try_word;
    rdlm_atomic_u32_t try_fails;
    /* Set by a layer with leases (ctx_svc.c) before any lock is used, else NULL: 1 if
     * the live process of owner word `owner`, holding an entry's FIFO (ticket) lock,
     * published lease session `session` and the authority ended it (it is stopped or
     * cut off: fenced). Asked for exclusive locks only. Waiters then pass the lock
     * over it as over a dead holder
     * (RDLM_OWNER_DEAD). Called by a waiter's recovery, often: it must be cheap until
     * the owner held the lock long (a lease's TTL). */
    int (*holder_fenced)(void *arg, uint32_t owner, uint64_t session);
    void *holder_fenced_arg;
} rdlm_local_t;

/** More processes than CPUs (attached to the segment, or host_procs on the host): a
 *  waiter that spins takes the CPU the holder (or the next in line) needs, so waiters
 *  yield or sleep at once. RDLM_OVERSUBSCRIBED=on or off overrides the count. */
static inline int rdlm_local_oversubscribed(const rdlm_local_t *lc)
{
    uint32_t attached;

    if (lc->oversubscribed != RDLM_SWITCH_AUTO) {
        return lc->oversubscribed == RDLM_SWITCH_ON;
    }
    attached = rdlm_load(&lc->seg.hdr->attached, RDLM_RELAXED);
    return (attached > lc->host_procs ? attached : lc->host_procs) > lc->cpus;
}

/* What both exclusive locks share (lock.c). */
/** Holding the lock: issue the next token (only the holder writes it), count the
 *  acquire, set *token_p if not NULL; OWNER_DEAD if prev_owner says so. */
static inline rdlm_status_t rdlm_local_lock_grant(rdlm_local_t *lc, uint32_t idx,
                                                  uint32_t prev_owner, uint64_t *token_p)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];
    /* Only the holder writes the token: no read-modify-write needed. */
    uint64_t token = rdlm_load(&e->token, RDLM_RELAXED) + 1;

    rdlm_store(&e->token, token, RDLM_RELAXED);
    /* Statistics are approximate under concurrent use: no lock prefix here. */
    rdlm_store(&lc->stats.acquires, rdlm_load(&lc->stats.acquires, RDLM_RELAXED) + 1,
               RDLM_RELAXED);
    if (token_p != NULL) {
        *token_p = token;
    }
    return prev_owner == RDLM_OWNER_DIED ? RDLM_OWNER_DEAD : RDLM_OK;
}
/** An acquire the node granted (counted by rdlm_local_lock_grant) failed above the
 *  node, at a global or a home's word, with status: uncount it, and count a timeout
 *  if it timed out there. */
static inline void rdlm_local_lock_ungrant(rdlm_local_t *lc, rdlm_status_t status)
{
    rdlm_store(&lc->stats.acquires, rdlm_load(&lc->stats.acquires, RDLM_RELAXED) - 1,
               RDLM_RELAXED);
    if (status == RDLM_ERR_TIMEOUT) {
        rdlm_fetch_add(&lc->stats.timeouts, 1, RDLM_RELAXED);
    }
}

/** The end of a waiting acquire of an exclusive lock or either side of an rwlock
 *  (not a gate of the layer above): granted (status RDLM_OK or RDLM_OWNER_DEAD) while
 *  the context closes, it passes the lock on (release), uncounts the grant and returns
 *  RDLM_ERR_CLOSED, since the destroy would release the lock under the caller (rdlm.h,
 *  rdlm_ctx_destroy). Else status. */
static inline rdlm_status_t
rdlm_local_lock_give_back(rdlm_local_t *lc, uint32_t idx, rdlm_status_t status,
                          rdlm_status_t (*release)(rdlm_local_t *, uint32_t))
{
    if ((status == RDLM_OK || status == RDLM_OWNER_DEAD) &&
        rdlm_load(&lc->closing, RDLM_SEQ_CST)) {
        release(lc, idx);
        rdlm_local_lock_ungrant(lc, RDLM_ERR_CLOSED);
        return RDLM_ERR_CLOSED;
    }
    return status;
}

/** The waiting acquire of either exclusive lock (lock.c): counted as waiting, wait
 *  (the lock's queue: RDLM_OK with *prev_owner_p, or why not), grant, and with a
 *  release, give the lock back if the context closes meanwhile
 *  (rdlm_local_lock_give_back; NULL: a gate of the layer above, which does that). */
rdlm_status_t rdlm_local_lock_wait(rdlm_local_t *lc, uint32_t idx, uint64_t timeout_ns,
                                   uint64_t *token_p,
                                   rdlm_status_t (*wait)(rdlm_local_t *, uint32_t, uint64_t,
                                                         uint32_t *prev_owner_p),
                                   rdlm_status_t (*release)(rdlm_local_t *, uint32_t));

#define RDLM_LOCAL_TRY_CHECK_INTERVAL_NS 10000000ull /* a try looks for dead holders */
#define RDLM_LOCAL_TRY_CLOCK_EVERY 64u /* failed tries on an unchanged word per clock read */

/** The clock part of rdlm_local_lock_try_check_due (lock.c). */
int rdlm_local_lock_try_clock(rdlm_local_t *lc, uint64_t word);

/**
 * A failed try on idx: 1 if it is time to look for a dead holder. A lock whose holder
 * died must not stay busy forever for callers that only ever try, so a failed try
 * checks at most once per RDLM_LOCAL_TRY_CHECK_INTERVAL_NS per context, decided by
 * the clock. The clock (about 20-40 ns, most of a failed try) is read only when the
 * word differs from the one the context saw at its last reading (the holder or the
 * queue moved: a ticket abandoned by a timed-out waiter shows at once) or on every
 * RDLM_LOCAL_TRY_CLOCK_EVERY-th failed try (a dead holder leaves the word as it was:
 * found after the interval and at most that many more tries). Inline: a failed try
 * is otherwise one load.
 */
static inline int rdlm_local_lock_try_check_due(rdlm_local_t *lc, uint32_t idx)
{
    uint64_t w = rdlm_load(&lc->seg.entries[idx].word, RDLM_RELAXED);

    if (w == rdlm_load(&lc->try_word, RDLM_RELAXED)) {
        uint32_t fails = rdlm_load(&lc->try_fails, RDLM_RELAXED) + 1;

        rdlm_store(&lc->try_fails, fails, RDLM_RELAXED);
        if (fails % RDLM_LOCAL_TRY_CLOCK_EVERY != 0) {
            return 0;
        }
    }
    return rdlm_local_lock_try_clock(lc, w);
}

/** The mutex's take (mutex.c): take the lock if it is free and not reserved for
 *  another (or claim it if reserved for this context); *prev_owner_p gets the owner it
 *  replaced (0 or DIED). Inline: it is all of an uncontended acquire. */
static inline int rdlm_mutex_take(rdlm_local_t *lc, rdlm_entry_t *e, uint32_t *prev_owner_p)
{
    uint32_t me = lc->seg.self_owner;
    /* A load first: a failed try then leaves the line shared with its holder. */
    uint64_t w = rdlm_load(&e->word, RDLM_RELAXED);

    while (RDLM_OWNER_IS_NOBODY(RDLM_WORD_OWNER(w)) &&
           (RDLM_MUTEX_HEIR(w) == 0 || RDLM_MUTEX_HEIR(w) == me)) {
        if (rdlm_cas(&e->word, &w, RDLM_MUTEX_MAKE(me, 0), RDLM_ACQUIRE)) {
            *prev_owner_p = RDLM_WORD_OWNER(w);
            return 1;
        }
    }
    return 0;
}

/** A call about to wait counts itself in lc->waiting until it returns
 *  (rdlm_local_wait_leave), so that the destroy (rdlm_local_quiesce) does not unmap
 *  the segment under it: RDLM_OK, or RDLM_ERR_CLOSED (not counted) once the context
 *  is closing. Only waits count: a fast path touches no shared line of the context. */
static inline rdlm_status_t rdlm_local_wait_enter(rdlm_local_t *lc)
{
    rdlm_fetch_add(&lc->waiting, 1, RDLM_SEQ_CST);
    if (rdlm_load(&lc->closing, RDLM_SEQ_CST)) {
        rdlm_fetch_sub(&lc->waiting, 1, RDLM_RELEASE);
        return RDLM_ERR_CLOSED;
    }
    return RDLM_OK;
}

/** The end of a call counted by rdlm_local_wait_enter: returns s. */
static inline rdlm_status_t rdlm_local_wait_leave(rdlm_local_t *lc, rdlm_status_t s)
{
    rdlm_fetch_sub(&lc->waiting, 1, RDLM_RELEASE);
    return s;
}

/** The context's destroy: set closing, so that every waiting call gives up its place
 *  and returns RDLM_ERR_CLOSED (within a park slice), and wait until none is left
 *  (bounded: 10 s, then a warning). The caller makes no more calls on lc. */
void rdlm_local_quiesce(rdlm_local_t *lc);

/** The mutex's acquire after a failed take (mutex.c): a try whose dead-holder check
 *  is due (rdlm_local_lock_try_check_due said so), or the wait. */
rdlm_status_t rdlm_mutex_acquire_slow(rdlm_local_t *lc, uint32_t idx, uint64_t timeout_ns,
                                      uint64_t *token_p);

/** Bounded-bypass mutex (contracts as rdlm_local_lock_*). Inline: an uncontended
 *  acquire and a failed try are a few instructions. */
static inline rdlm_status_t rdlm_mutex_acquire(rdlm_local_t *lc, uint32_t idx,
                                               uint64_t timeout_ns, uint64_t *token_p)
{
    uint32_t prev_owner;

    if (rdlm_mutex_take(lc, &lc->seg.entries[idx], &prev_owner)) {
        return rdlm_local_lock_grant(lc, idx, prev_owner, token_p);
    }
    if (timeout_ns == 0 && !rdlm_local_lock_try_check_due(lc, idx)) {
        return RDLM_ERR_BUSY;
    }
    return rdlm_mutex_acquire_slow(lc, idx, timeout_ns, token_p);
}

/** The mutex's release, out of line (mutex.c): after its CAS saw the word w, hand the
 *  lock to w's heir or wake a sleeper; and the release by a context that does not
 *  hold the lock (logged; RDLM_ERR_NOT_OWNER). */
void rdlm_mutex_released(rdlm_local_t *lc, rdlm_entry_t *e, uint64_t w);
rdlm_status_t rdlm_mutex_not_held(const rdlm_local_t *lc, uint32_t idx);

/** Bounded-bypass mutex release (contracts as rdlm_local_lock_release_to). Inline:
 *  with no heir and nobody asleep it is one CAS and one load. */
static inline rdlm_status_t rdlm_mutex_release_to(rdlm_local_t *lc, uint32_t idx,
                                                  uint32_t to)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];
    uint64_t w = rdlm_load(&e->word, RDLM_RELAXED);

    do {
        if (RDLM_WORD_OWNER(w) != lc->seg.self_owner) {
            return rdlm_mutex_not_held(lc, idx);
        }
    } while (
        !rdlm_cas(&e->word, &w, RDLM_MUTEX_MAKE(to, RDLM_MUTEX_HEIR(w)), RDLM_SEQ_CST));
    if (RDLM_MUTEX_HEIR(w) != 0 || rdlm_load(&e->parked, RDLM_SEQ_CST) != 0) {
        rdlm_mutex_released(lc, e, w);
    }
    return RDLM_OK;
}

static inline rdlm_status_t rdlm_mutex_release(rdlm_local_t *lc, uint32_t idx)
{
    return rdlm_mutex_release_to(lc, idx, 0);
}

/* FIFO ticket lock: ticket.c (the cross-node cohort's, the rwlock's and the
 * semaphore's gate, and FIFO exclusive locks). timeout_ns 0 = one try. */
rdlm_status_t rdlm_ticket_acquire(rdlm_local_t *lc, uint32_t idx, uint64_t timeout_ns,
                                  uint64_t *token_p);
/* A node-only context's FIFO lock: rdlm_ticket_acquire, and a wait granted while the
 * context closes gives the lock back (rdlm_local_lock_give_back). */
rdlm_status_t rdlm_ticket_lock_acquire(rdlm_local_t *lc, uint32_t idx, uint64_t timeout_ns,
                                       uint64_t *token_p);
rdlm_status_t rdlm_ticket_release(rdlm_local_t *lc, uint32_t idx);
/** rdlm_ticket_release, passing to `to` (rdlm_local_lock_release_to). */
rdlm_status_t rdlm_ticket_release_to(rdlm_local_t *lc, uint32_t idx, uint32_t to);
/** 1 if this context holds the lock (or rwlock write side); either lock kind. */
int rdlm_ticket_held_by_me(const rdlm_local_t *lc, uint32_t idx);

static inline int rdlm_local_lock_is_fifo(const rdlm_local_t *lc, uint32_t idx)
{
    return (rdlm_load(&lc->seg.entries[idx].meta, RDLM_RELAXED) & RDLM_META_FIFO) != 0;
}

/**
 * The exclusive lock of an entry: the bounded-bypass mutex (mutex.c) by default, the
 * FIFO ticket lock (ticket.c) if the entry has RDLM_META_FIFO. timeout_ns 0 = one
 * try. Returns RDLM_OK or RDLM_OWNER_DEAD (held; *token_p set if not NULL),
 * RDLM_ERR_BUSY, RDLM_ERR_TIMEOUT, RDLM_ERR_CLOSED, RDLM_ERR_NO_RESOURCE.
 */
static inline rdlm_status_t rdlm_local_lock_acquire(rdlm_local_t *lc, uint32_t idx,
                                                    uint64_t timeout_ns, uint64_t *token_p)
{
    return rdlm_local_lock_is_fifo(lc, idx)
               ? rdlm_ticket_lock_acquire(lc, idx, timeout_ns, token_p)
               : rdlm_mutex_acquire(lc, idx, timeout_ns, token_p);
}

/** Release ordering; RDLM_ERR_NOT_OWNER (nothing changed) if not held here. */
static inline rdlm_status_t rdlm_local_lock_release(rdlm_local_t *lc, uint32_t idx)
{
    return rdlm_local_lock_is_fifo(lc, idx) ? rdlm_ticket_release(lc, idx)
                                            : rdlm_mutex_release(lc, idx);
}

/** rdlm_local_lock_release, leaving the lock to `to`: 0 (nobody), or RDLM_OWNER_DIED:
 *  the next taker gets RDLM_OWNER_DEAD, as after a holder that died (an acquire
 *  granted RDLM_OWNER_DEAD and undone: nobody repaired what the dead one left). */
static inline rdlm_status_t rdlm_local_lock_release_to(rdlm_local_t *lc, uint32_t idx,
                                                       uint32_t to)
{
    return rdlm_local_lock_is_fifo(lc, idx) ? rdlm_ticket_release_to(lc, idx, to)
                                            : rdlm_mutex_release_to(lc, idx, to);
}
/** 1 if places were taken behind the current holder (live or abandoned ones). */
int rdlm_ticket_has_waiters(const rdlm_local_t *lc, uint32_t idx);
/** After leaving a lock (release, timeout): passes over abandoned places at its
 *  head, then returns 1 if nobody holds the lock and no live waiter is about to
 *  take it, 0 if someone holds it or a live waiter will. The cross-node layer runs it
 *  so that a node never keeps a global lock nobody on the node uses. */
int rdlm_ticket_idle(rdlm_local_t *lc, uint32_t idx);

/** A lock's or rwlock's state, for queries (scans the slots' records); either lock
 *  kind. */
typedef struct rdlm_lock_snapshot {
    uint32_t waiters;          /* queued requests of live processes */
    uint32_t readers;          /* shared holders of live processes (rwlock) */
    uint32_t reads_held_by_me; /* shared holds of this context (rwlock) */
    int held;                  /* exclusively held */
    int held_by_me;
    int reserved; /* a bounded-bypass lock's waiter reserved it (an heir) */
    uint64_t last_token;
} rdlm_lock_snapshot_t;

void rdlm_ticket_snapshot(const rdlm_local_t *lc, uint32_t idx, rdlm_lock_snapshot_t *snap);

/* Reader-writer lock: rwlock.c. */
rdlm_status_t rdlm_rwlock_local_read_acquire(rdlm_local_t *lc, uint32_t idx,
                                             uint64_t timeout_ns);
rdlm_status_t rdlm_rwlock_local_read_release(rdlm_local_t *lc, uint32_t idx);
rdlm_status_t rdlm_rwlock_local_write_acquire(rdlm_local_t *lc, uint32_t idx,
                                              uint64_t timeout_ns, uint64_t *token_p);
/** Clear the writer bit, then release the gate (NOT_OWNER if not held). */
rdlm_status_t rdlm_rwlock_local_write_release(rdlm_local_t *lc, uint32_t idx);
/** rdlm_rwlock_local_write_release, leaving the gate to `to` (as
 *  rdlm_local_lock_release_to: RDLM_OWNER_DIED, the next writer or reader through the
 *  gate gets RDLM_OWNER_DEAD). */
rdlm_status_t rdlm_rwlock_local_write_release_to(rdlm_local_t *lc, uint32_t idx,
                                                 uint32_t to);
/** Holding the gate (the entry's ticket lock): record a shared hold of this context
 *  (RDLM_ERR_NO_RESOURCE if it holds too many). read_acquire = gate + enter + gate
 *  release; the cross-node layer puts its own step between. */
rdlm_status_t rdlm_rwlock_local_read_enter(rdlm_local_t *lc, uint32_t idx);
/** Shared holds of this context on the rwlock. */
uint32_t rdlm_rwlock_local_reads_held(const rdlm_local_t *lc, uint32_t idx);
/** Shared holds on the rwlock of every live process of the node (a scan of the
 *  slots' records, each owner's liveness checked: system calls). */
uint32_t rdlm_rwlock_local_live_reads(const rdlm_local_t *lc, uint32_t idx);

/* Counter: counter.c. Non-blocking, seq_cst; wraps. */
int64_t rdlm_counter_local_fetch_add(rdlm_local_t *lc, uint32_t idx, int64_t delta);
int64_t rdlm_counter_local_read(const rdlm_local_t *lc, uint32_t idx);

/* Semaphore: semaphore.c. sem_permits = N (fixed by the first open). */
/** Bounded bypass: one CAS on sem_state when k are free and nothing is reserved; else
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
 *  entry's sem_wake word, which releases bump while a reservation stands) or the
 *  deadline. The reserver's wait (semaphore.c). */
rdlm_status_t rdlm_sem_local_wait(rdlm_local_t *lc, uint32_t idx, uint64_t deadline,
                                  int (*ready)(void *arg), void *arg);

/* Barrier: barrier.c. */
rdlm_status_t rdlm_barrier_local_wait(rdlm_local_t *lc, uint32_t idx, uint64_t timeout_ns);

#endif
