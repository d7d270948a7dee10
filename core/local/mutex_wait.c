/*
 * Waiting for the bounded-bypass mutex (mutex.c has the word and its transitions):
 * spin and reserve, settle (the WAITING record and the bypass bound), yield or sleep,
 * at the bound take a place among the starving and reserve, and once holding pass
 * the reservation to the oldest of them. docs/local-locks.md ("The mutex").
 */
#include <sched.h>

#include "clock.h"
#include "log.h"
#include "mutex.h"
#include "records.h"

/* Why a waiter holds the reservation. */
enum rdlm_mutex_heir { RDLM_HEIR_NONE, RDLM_HEIR_SPINNING, RDLM_HEIR_BOUND };

/* One wait for the lock (rdlm_mutex_wait). */
typedef struct rdlm_mutex_waiter {
    rdlm_wait_t w;
    uint64_t deadline;         /* the caller's */
    uint64_t next_check;       /* the next dead-holder check at a bound */
    rdlm_atomic_u64_t *rec;    /* WAITING(idx, 0, or STARVING | place) */
    uint32_t starving;         /* 0, or the STARVING ticket once past the bound */
    enum rdlm_mutex_heir heir; /* why this waiter holds the reservation */
    int took;                  /* a reserve attempt took the lock (it was free) */
    uint32_t prev_owner;       /* then: the owner it replaced */
} rdlm_mutex_waiter_t;

static int rdlm_mutex_spinning(const rdlm_local_t *lc, const rdlm_wait_t *w)
{
    return w->spins < lc->policy.spin;
}

/* Reserve the lock for this waiter (for `why`), or take it if it became free. */
static void rdlm_mutex_try_reserve(rdlm_local_t *lc, rdlm_entry_t *e, rdlm_mutex_waiter_t *mw,
                                   enum rdlm_mutex_heir why)
{
    switch (rdlm_mutex_take_or_reserve(lc, e, &mw->prev_owner)) {
    case RDLM_GOT_LOCK:
        mw->took = 1;
        break;
    case RDLM_GOT_RESERVATION:
        mw->heir = why;
        break;
    case RDLM_GOT_NOTHING:
        break;
    }
}

/* 1 if this process is the oldest live waiter past the bound of lock idx (or none is
 * found: a record scan that raced with a change). */
static int rdlm_mutex_oldest_is_me(const rdlm_local_t *lc, uint32_t idx)
{
    uint32_t oldest;

    return !rdlm_rec_oldest_starving(&lc->seg, idx, &oldest) ||
           oldest == lc->seg.self_owner;
}

/* Wait until `until` (or the caller's deadline, if earlier), yielding then sleeping. */
static void rdlm_mutex_wait_until(rdlm_local_t *lc, rdlm_mutex_waiter_t *mw, uint64_t until)
{
    rdlm_wait_init_until(&mw->w, &lc->policy, &lc->stats.wait,
                         until < mw->deadline ? until : mw->deadline);
}

/*
 * The bypass bound passed (again): take a place among the waiters past the bound
 * (STARVING ticket: releases pass the reservation to the oldest, below), reserve the
 * lock if nobody has, and look for the dead once per sleep slice (a waiter that keeps
 * yielding may never reach a CHECK).
 */
static void rdlm_mutex_at_bound(rdlm_local_t *lc, uint32_t idx, rdlm_mutex_waiter_t *mw)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];
    uint64_t now = rdlm_clock_now_ns();

    if (mw->starving == 0) {
        mw->starving = RDLM_REC_STARVING |
                       ((uint32_t)rdlm_fetch_add(&e->mutex_starving, 1, RDLM_RELAXED) &
                        ~RDLM_REC_STARVING);
        rdlm_store(mw->rec, RDLM_REC_MAKE(RDLM_REC_WAITING, idx, mw->starving), RDLM_SEQ_CST);
        rdlm_fetch_add(&lc->stats.reservations, 1, RDLM_RELAXED);
    }
    if (now >= mw->next_check) {
        rdlm_mutex_recover(lc, idx);
        mw->next_check = now + lc->policy.park_slice_ns;
    }
    /* (A spinning waiter reads no clock: its reservation never meets the bound.) Only
     * the oldest waiter past the bound reserves: a younger one that did so between a
     * holder's take (which clears the reservation) and its pass to the oldest was
     * served first (api.lock_order: about 1 run in 80). */
    if (mw->heir == RDLM_HEIR_NONE && rdlm_mutex_oldest_is_me(lc, idx)) {
        rdlm_mutex_try_reserve(lc, e, mw, RDLM_HEIR_BOUND);
    }
    rdlm_mutex_wait_until(lc, mw, mw->heir == RDLM_HEIR_BOUND ? mw->deadline : now + lc->bypass_ns);
    if (mw->heir == RDLM_HEIR_BOUND) {
        /* The release wakes the heir, and a woken process runs sooner than one that
         * yields among many runnable ones. */
        rdlm_wait_sleep_next(&mw->w);
    } else {
        rdlm_wait_stop_spinning(&mw->w);
    }
}

/* A step that spins or yields instead of sleeping on the futex (the lock is free,
 * reserved for another): the caller's deadline and the bypass bound as in
 * rdlm_wait_step. A spinning waiter keeps spinning (a system call would cost more
 * than the heir takes to claim). */
static rdlm_status_t rdlm_mutex_yield(rdlm_local_t *lc, uint32_t idx, rdlm_mutex_waiter_t *mw)
{
    uint64_t now;

    if (rdlm_mutex_spinning(lc, &mw->w)) {
        mw->w.spins++;
        rdlm_cpu_relax();
        return RDLM_OK;
    }
    now = rdlm_clock_now_ns();
    if (now >= mw->deadline) {
        return RDLM_ERR_TIMEOUT;
    }
    if (now >= mw->w.deadline) {
        rdlm_mutex_at_bound(lc, idx, mw);
    } else {
        sched_yield();
    }
    return RDLM_OK;
}

/* The spin phase is over (or there is none): the WAITING record (queries, and the
 * order past the bound) and the bypass bound start now. Until then a waiter costs no
 * clock read and no record: a hand-off to a spinning waiter is as short as it can be. */
static rdlm_status_t rdlm_mutex_settle(rdlm_local_t *lc, uint32_t idx, rdlm_mutex_waiter_t *mw)
{
    rdlm_segment_t *seg = &lc->seg;
    int r = rdlm_rec_claim(seg, RDLM_REC_MAKE(RDLM_REC_WAITING, idx, 0));

    if (r < 0) {
        rdlm_rec_full(seg, idx);
        return RDLM_ERR_NO_RESOURCE;
    }
    mw->rec = rdlm_rec_at(seg, r);
    rdlm_mutex_wait_until(lc, mw, rdlm_clock_now_ns() + lc->bypass_ns);
    rdlm_wait_stop_spinning(&mw->w);
    return RDLM_OK;
}

/* One step of the wait: RDLM_OK to look at the word again, or why to give up. */
static rdlm_status_t rdlm_mutex_step(rdlm_local_t *lc, uint32_t idx, rdlm_mutex_waiter_t *mw)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];
    uint64_t word = rdlm_load(&e->word, RDLM_ACQUIRE);
    uint32_t me = lc->seg.self_owner;

    if (rdlm_load(&lc->closing, RDLM_RELAXED)) {
        return RDLM_ERR_CLOSED;
    }
    if (mw->rec == NULL && !rdlm_mutex_spinning(lc, &mw->w)) {
        rdlm_status_t status = rdlm_mutex_settle(lc, idx, mw);

        if (status != RDLM_OK) {
            return status;
        }
    }
    if (RDLM_MUTEX_HEIR(word) != me) {
        if (mw->heir == RDLM_HEIR_BOUND) {
            /* Another thread of this context took the reservation: reserve again at
             * once, or this waiter could be bypassed until its deadline. */
            rdlm_mutex_wait_until(lc, mw, 0);
            rdlm_wait_stop_spinning(&mw->w);
        }
        mw->heir = RDLM_HEIR_NONE;
    } else if (mw->heir == RDLM_HEIR_NONE) {
        mw->heir = RDLM_HEIR_BOUND; /* passed to this waiter by a holder */
        rdlm_mutex_wait_until(lc, mw, mw->deadline);
        rdlm_wait_sleep_next(&mw->w);
    }
    if (RDLM_OWNER_IS_NOBODY(RDLM_WORD_OWNER(word))) {
        /* Free: take again; or free and reserved for another, which is on its way
         * (its release or D1 woke it). Never sleep on a free lock: the heir's claim
         * and release can bring the owner half back to the value a sleeper compares
         * (model: NOBODY_SLEEP). Yield instead, keeping the deadline and the bound. */
        return RDLM_MUTEX_HEIR(word) == 0 ? RDLM_OK : rdlm_mutex_yield(lc, idx, mw);
    }
    if (mw->heir == RDLM_HEIR_NONE && rdlm_mutex_spinning(lc, &mw->w)) {
        rdlm_mutex_try_reserve(lc, e, mw, RDLM_HEIR_SPINNING);
        if (mw->took) {
            return RDLM_OK;
        }
    }
    switch (rdlm_wait_step(&mw->w, rdlm_mutex_futex(&e->word), RDLM_WORD_OWNER(word),
                           rdlm_wait_ticket_bit(lc->seg.self_slot), &e->parked)) {
    case RDLM_WAIT_AGAIN:
        break;
    case RDLM_WAIT_CHECK:
        rdlm_store(&e->mutex_woken, 0, RDLM_SEQ_CST); /* running: releases may wake again */
        if (mw->heir == RDLM_HEIR_SPINNING && !rdlm_mutex_spinning(lc, &mw->w)) {
            rdlm_mutex_unreserve(lc, e);
            mw->heir = RDLM_HEIR_NONE;
        }
        rdlm_mutex_recover(lc, idx);
        break;
    case RDLM_WAIT_TIMEDOUT:
        if (rdlm_clock_now_ns() >= mw->deadline) {
            return RDLM_ERR_TIMEOUT;
        }
        rdlm_mutex_at_bound(lc, idx, mw);
        break;
    }
    return RDLM_OK;
}

/* Holding the lock after a wait past the bound: pass the reservation on to the
 * oldest waiter past the bound, so that such waiters are served in order. */
static void rdlm_mutex_pass_reservation(rdlm_local_t *lc, uint32_t idx)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];
    uint32_t me = lc->seg.self_owner;
    uint32_t oldest;
    uint64_t w;

    if (!rdlm_rec_oldest_starving(&lc->seg, idx, &oldest)) {
        return;
    }
    w = rdlm_load(&e->word, RDLM_RELAXED);
    while (RDLM_WORD_OWNER(w) == me && RDLM_MUTEX_HEIR(w) == 0 &&
           !rdlm_cas(&e->word, &w, RDLM_MUTEX_MAKE(me, oldest), RDLM_SEQ_CST)) {
    }
}

/*
 * Slow path: wait for the lock. A waiter that spins (it runs: a hand-off to it costs
 * no wake) reserves the lock while it spins, if nobody has; so two processes on two
 * cores alternate as with a FIFO lock. A waiter that yields or sleeps is bypassed
 * until the bypass bound: the wait's deadline is the earlier of the caller's and the
 * bound, which starts when the spin phase ends (rdlm_mutex_settle); at the bound
 * the waiter takes a place among the waiters past it and reserves the lock if nobody
 * has; a holder that waited past the bound passes the reservation to the oldest of
 * them. The WAITING record serves queries and that order.
 */
rdlm_status_t rdlm_mutex_wait(rdlm_local_t *lc, uint32_t idx, uint64_t timeout_ns,
                              uint32_t *prev_owner_p)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];
    rdlm_mutex_waiter_t mw = {.deadline = rdlm_clock_deadline(timeout_ns)};
    rdlm_status_t status = RDLM_OK;

    rdlm_fetch_add(&lc->stats.contended, 1, RDLM_RELAXED);
    rdlm_mutex_wait_until(lc, &mw, UINT64_MAX); /* the spin phase: no bound yet */
    /* More processes than CPUs: a spinning waiter takes the CPU the holder needs. */
    if (rdlm_local_oversubscribed(lc)) {
        rdlm_wait_stop_spinning(&mw.w);
    }
    while (status == RDLM_OK && !mw.took && !rdlm_mutex_take(lc, e, prev_owner_p)) {
        status = rdlm_mutex_step(lc, idx, &mw);
    }
    if (mw.took) {
        *prev_owner_p = mw.prev_owner;
    }
    if (mw.rec != NULL) {
        rdlm_store(mw.rec, 0, RDLM_SEQ_CST);
    }
    if (status != RDLM_OK) {
        rdlm_mutex_leave(lc, e);
        if (status == RDLM_ERR_TIMEOUT) {
            rdlm_fetch_add(&lc->stats.timeouts, 1, RDLM_RELAXED);
        }
    } else if (mw.starving != 0) {
        rdlm_mutex_pass_reservation(lc, idx);
    }
    return status;
}
