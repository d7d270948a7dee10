/*
 * Waiting on a shared 32-bit word: spin, then sched_yield, then futex sleep in
 * slices, so that many processes on few cores keep making progress. Sleepers are
 * counted in a "parked" word so that wakers skip the system call when nobody sleeps;
 * bitsets let a waker wake only the sleepers it means (one ticket, not the herd).
 */
#ifndef RDLM_WAIT_H
#define RDLM_WAIT_H

#include <stdint.h>

#include "atomics.h"

/** Waiting policy, decided at context creation (RDLM_SPIN, RDLM_YIELD, ...). */
typedef struct rdlm_wait_policy {
    uint32_t spin;          /* busy iterations before yielding */
    uint32_t yield;         /* sched_yield calls before sleeping */
    uint64_t park_slice_ns; /* futex sleep slice */
} rdlm_wait_policy_t;

/** Counters a wait updates (the context's statistics). */
typedef struct rdlm_wait_stats {
    rdlm_atomic_u64_t parks;
    rdlm_atomic_u64_t wakes;
} rdlm_wait_stats_t;

/** One wait in progress. */
typedef struct rdlm_wait {
    const rdlm_wait_policy_t *policy;
    rdlm_wait_stats_t *stats;
    uint64_t deadline; /* absolute, UINT64_MAX for none */
    uint32_t spins;
    uint32_t yields;
} rdlm_wait_t;

#define RDLM_WAIT_ALL_BITS 0xffffffffu

typedef enum rdlm_wait_result {
    RDLM_WAIT_AGAIN,   /* re-check the condition */
    RDLM_WAIT_CHECK,   /* re-check, and run slow-path checks (dead holders) */
    RDLM_WAIT_TIMEDOUT /* deadline passed */
} rdlm_wait_result_t;

void rdlm_wait_init(rdlm_wait_t *w, const rdlm_wait_policy_t *policy,
                    rdlm_wait_stats_t *stats, uint64_t timeout_ns);
/** The same with an absolute deadline (rdlm_clock_now_ns; UINT64_MAX: none), for a
 *  wait that is the second part of one timed call. */
void rdlm_wait_init_until(rdlm_wait_t *w, const rdlm_wait_policy_t *policy,
                          rdlm_wait_stats_t *stats, uint64_t deadline);

/**
 * One step of waiting while *word == seen. Spins first, then yields, then sleeps on
 * the futex with the given bitset (incrementing *parked around the sleep, seq_cst, so
 * that a waker that changes *word and then reads *parked never misses us). *word is
 * only handed to the kernel, never read here, so it may be half of a 64-bit atomic
 * word. Returns
 * CHECK once when the spin phase ends and after each sleep slice.
 */
rdlm_wait_result_t rdlm_wait_step(rdlm_wait_t *w, rdlm_atomic_u32_t *word, uint32_t seen,
                                  uint32_t bitset, rdlm_atomic_u32_t *parked);

/** End the spin phase now (a waiter far back in a queue, or on an oversubscribed
 *  node, gains nothing by spinning and takes CPU from the holder). The first
 *  RDLM_WAIT_CHECK then comes after the first sleep slice. */
void rdlm_wait_stop_spinning(rdlm_wait_t *w);

/** 1 while the wait is still in its spin phase (no yield or sleep yet). */
static inline int rdlm_wait_spinning(const rdlm_wait_t *w)
{
    return w->spins < w->policy->spin;
}

/** End the spin and yield phases now: the next step sleeps (a waiter that a wake
 *  will reach, and that the scheduler runs sooner when woken than when yielding). */
static inline void rdlm_wait_sleep_next(rdlm_wait_t *w)
{
    rdlm_wait_stop_spinning(w);
    if (w->yields < w->policy->yield) {
        w->yields = w->policy->yield;
    }
}

/** The system call behind rdlm_wait_wake (there are sleepers). */
void rdlm_wait_wake_sleepers(rdlm_atomic_u32_t *word, uint32_t bitset,
                             rdlm_wait_stats_t *stats);

/** Wake one sleeper on *word among those matching bitset (the caller knows there
 *  are sleepers, and that any one of them will do). Returns 1 if one was woken, 0 if
 *  none slept in the kernel (one counted as parked had not gone to sleep yet). */
int rdlm_wait_wake_one_sleeper(rdlm_atomic_u32_t *word, uint32_t bitset,
                               rdlm_wait_stats_t *stats);

/** The futex sleep under rdlm_wait_step, for a waiter that keeps its own count of
 *  sleepers: sleep while *word == seen (checked by the kernel), until woken with a
 *  bit of bitset or until_ns (absolute, rdlm_clock_now_ns). No statistics. */
void rdlm_wait_futex_sleep(rdlm_atomic_u32_t *word, uint32_t seen, uint32_t bitset,
                           uint64_t until_ns);

/** After changing *word (seq_cst): wake the sleepers matching bitset, if any. Inline
 *  because a release calls it every time and nobody sleeps most of the time. */
static inline void rdlm_wait_wake(rdlm_atomic_u32_t *word, uint32_t bitset,
                                  rdlm_atomic_u32_t *parked, rdlm_wait_stats_t *stats)
{
    if (rdlm_load(parked, RDLM_SEQ_CST) != 0) {
        rdlm_wait_wake_sleepers(word, bitset, stats);
    }
}

/** The futex bit of a ticket. */
static inline uint32_t rdlm_wait_ticket_bit(uint32_t ticket)
{
    return 1u << (ticket & 31u);
}

#endif
