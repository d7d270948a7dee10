/*
 * The lock workloads, written once for both kinds of participant: a forked worker
 * (lock_bench.c, bench_pingpong.c) and an MPI rank (mpi_lock_bench.c). The
 * participant says how its operations run, when to stop and where samples go; the
 * workload says what is timed and counted.
 *
 *   batches  uncontended cycles in batches; every full batch's time is a sample
 *   window   loop { acquire; section; release; local work } until stopped; the
 *            acquire timed in one loop in sample_mask + 1 (without a section, the
 *            whole operation)
 *
 * Both are inline: a participant built as a local constant at the call (its
 * functions and choices known there) gets loops compiled without them, as the
 * adapters' own calls (lock_ops.h) on the hot path.
 */
#ifndef RDLM_BENCH_WORKLOAD_H
#define RDLM_BENCH_WORKLOAD_H

#include <stdatomic.h>
#include <stdint.h>

#include "clock.h"
#include "lock_bench.h"
#include "stats.h"

/** What a window's section does under the lock. */
enum rdlm_bench_section {
    RDLM_BENCH_SECTION_NONE,   /**< nothing: the operation is acquire + release */
    RDLM_BENCH_SECTION_CS,     /**< rdlm_bench_cs_enter (counter, hand-offs) */
    RDLM_BENCH_SECTION_PERMIT, /**< rdlm_bench_cs_permit (a semaphore's holders) */
};

/** One participant of a workload: a forked worker or an MPI rank. Its operations
 *  have the adapters' shape (lock_ops.h): 0, or a code. */
typedef struct rdlm_bench_part {
    void *self; /**< passed to the functions below (a forked worker: its lock) */
    int (*acquire)(void *self, uint64_t *token_p);
    int (*release)(void *self);
    int (*cycle)(void *self);      /**< batches: one cycle (NULL: acquire, then release) */
    uint64_t batch;                /**< batches: cycles per sample (0 is 1) */
    const _Atomic uint32_t *stop;  /**< stopped once it is raised (NULL: never) */
    uint64_t deadline_ns;          /**< stopped from then on (UINT64_MAX: never) */
    rdlm_bench_sampler_t *sampler; /**< samples in ns (NULL: nothing timed) */
    /* window */
    enum rdlm_bench_section section;
    rdlm_bench_cs_t *cs;  /**< the section's line (not NONE) */
    uint64_t rank;        /**< the participant's mark in cs->last_rank */
    uint64_t sample_mask; /**< time loop k when (k & mask) == 0 (0: every loop) */
    int local_work;       /**< rdlm_bench_local_work after every loop */
} rdlm_bench_part_t;

/** What a workload counted; the caller zeroes it (sink: a seed) and reads it. */
typedef struct rdlm_bench_tally {
    uint64_t ops;         /**< cycles, or loops */
    uint64_t handoffs;    /**< CS sections after another participant's */
    uint64_t max_wait_ns; /**< the longest timed wait */
    uint64_t sink;        /**< local work's result (keep it alive) */
    const char *failed;   /**< the step that failed: "acquire", "release", "cycle" */
} rdlm_bench_tally_t;

/** 1 once p's stop flag is raised or its deadline has passed. */
static inline int rdlm_bench_part_stopped(const rdlm_bench_part_t *p)
{
    return (p->stop != NULL && atomic_load_explicit(p->stop, memory_order_relaxed) != 0) ||
           (p->deadline_ns != UINT64_MAX && rdlm_bench_now_ns() >= p->deadline_ns);
}

/** One cycle of p: 0, or its code with t->failed naming the step. */
static inline int rdlm_bench_part_cycle(const rdlm_bench_part_t *p, rdlm_bench_tally_t *t)
{
    int rc;

    if (p->cycle != NULL) {
        if ((rc = p->cycle(p->self)) != 0) {
            t->failed = "cycle";
        }
        return rc;
    }
    if ((rc = p->acquire(p->self, NULL)) != 0) {
        t->failed = "acquire";
        return rc;
    }
    if ((rc = p->release(p->self)) != 0) {
        t->failed = "release";
    }
    return rc;
}

/**
 * Up to n cycles of p in batches of p->batch: every full batch's time (ns) is a
 * sample; ends after n, or at the end of a batch from p's deadline on (the stop flag
 * is not read). t->ops += the cycles run. 0, or the code of the step that failed
 * (t->failed). Blocking; p's thread only.
 */
static inline int rdlm_bench_batches(const rdlm_bench_part_t *p, uint64_t n,
                                     rdlm_bench_tally_t *t)
{
    uint64_t batch = p->batch ? p->batch : 1, t0 = rdlm_bench_now_ns(), end = t->ops + n;
    uint64_t k, now;
    int rc;

    while (t->ops < end) {
        for (k = 0; k < batch && t->ops < end; k++, t->ops++) {
            if ((rc = rdlm_bench_part_cycle(p, t)) != 0) {
                return rc;
            }
        }
        now = rdlm_bench_now_ns();
        if (k == batch && p->sampler != NULL) {
            rdlm_bench_sampler_add(p->sampler, now - t0);
        }
        t0 = now;
        if (now >= p->deadline_ns) {
            break;
        }
    }
    return 0;
}

/** The semaphore's section: count the holders inside (cs->inside, and the most ever at
 *  once in cs->max_inside). */
static inline void rdlm_bench_cs_permit(rdlm_bench_cs_t *cs)
{
    uint32_t seen = atomic_fetch_add_explicit(&cs->inside, 1, memory_order_relaxed) + 1;
    uint32_t max = atomic_load_explicit(&cs->max_inside, memory_order_relaxed);

    while (seen > max && !atomic_compare_exchange_weak_explicit(&cs->max_inside, &max, seen,
                                                                memory_order_relaxed,
                                                                memory_order_relaxed)) {
    }
    atomic_fetch_sub_explicit(&cs->inside, 1, memory_order_relaxed);
}

/**
 * Loops of p until n are done or p is stopped (checked before every loop): acquire,
 * p's section, release, local work; with a sampler, loop k (k counted in t->ops) is
 * timed when (k & sample_mask) == 0: the wait in acquire (also into t->max_wait_ns),
 * or with no section the whole operation. 0, or the code of the step that failed
 * (t->failed). Blocking; p's thread only.
 */
static inline int rdlm_bench_window(const rdlm_bench_part_t *p, uint64_t n,
                                    rdlm_bench_tally_t *t)
{
    uint64_t t0 = 0, wait;
    int timed, rc;

    while (t->ops < n && !rdlm_bench_part_stopped(p)) {
        timed = p->sampler != NULL && (t->ops & p->sample_mask) == 0;
        t0 = timed ? rdlm_bench_now_ns() : t0;
        if ((rc = p->acquire(p->self, NULL)) != 0) {
            t->failed = "acquire";
            return rc;
        }
        if (timed && p->section != RDLM_BENCH_SECTION_NONE) {
            wait = rdlm_bench_now_ns() - t0;
            rdlm_bench_sampler_add(p->sampler, wait);
            t->max_wait_ns = wait > t->max_wait_ns ? wait : t->max_wait_ns;
        }
        if (p->section == RDLM_BENCH_SECTION_CS) {
            t->handoffs += (uint64_t)rdlm_bench_cs_enter(p->cs, p->rank);
        } else if (p->section == RDLM_BENCH_SECTION_PERMIT) {
            rdlm_bench_cs_permit(p->cs);
        }
        if ((rc = p->release(p->self)) != 0) {
            t->failed = "release";
            return rc;
        }
        if (timed && p->section == RDLM_BENCH_SECTION_NONE) {
            rdlm_bench_sampler_add(p->sampler, rdlm_bench_now_ns() - t0);
        }
        t->sink = p->local_work ? rdlm_bench_local_work(t->sink) : t->sink;
        t->ops++;
    }
    return 0;
}

#endif
