/*
 * The on-node bounded-bypass mutex, the default exclusive lock: one 64-bit word
 * (heir | owner, layout.h). A free lock goes to whoever takes it first, so a running
 * process takes it back at once instead of handing it to a sleeping waiter (which
 * costs a futex wake, about 0.1 ms here, per hand-off when processes outnumber
 * cores). Bypass is bounded: a waiter that has waited RDLM_LOCK_BYPASS_US reserves
 * the lock (heir), and then nobody else takes it; such waiters are served in the
 * order they reached the bound; a waiter that spins (it is running, so a hand-off to
 * it is cheap) reserves it while it spins. A release wakes one sleeper (or the heir),
 * and no second one while a woken one has not run (wake32).
 *
 * State transitions of the word (owner, heir); "nobody" is 0 or DIED:
 *   take     (nobody, 0)    -> (me, 0)       anyone
 *   claim    (nobody, me)   -> (me, 0)       the heir
 *   reserve  (x, 0)         -> (x, me)       a spinning waiter or one past the bound,
 *                                            x not nobody
 *   unreserve (x, me)       -> (x, 0)        a spinning waiter that stops spinning,
 *                                            x not nobody
 *   pass     (me, 0)        -> (me, w)       a holder that waited past the bound, to
 *                                            the oldest live waiter past it
 *   release  (me, h)        -> (0, h)        the holder; wakes h, or one sleeper
 *   give up  (x, me)        -> (x, 0)        the heir at its deadline
 *   dead     (o, h)         -> (DIED, h)     anyone, o's process dead
 *   dead     (x, h)         -> (x, 0)        anyone, h's process dead, or h alive
 *                                            with no WAITING record of the lock
 * Proof sketch: docs/local-locks.md ("Exclusive lock"); spin model:
 * tests/model/mutex_word.pml.
 */
#include <sched.h>

#include "clock.h"
#include "local.h"
#include "log.h"
#include "records.h"

/*
 * The lock became free with no heir, or a waiter left with a wake it may have been
 * sent: wake one sleeper, unless a waiter woken earlier has not run yet. wake32
 * counts: 1 while a woken waiter is on its way (it stores 0 when it runs), plus one
 * for every release that skipped its wake meanwhile. A wake that found nobody asleep
 * (the sleeper counted in parked had not gone to sleep yet) leaves nobody on the way
 * to look at the word: the waker takes the count back, and if releases skipped their
 * wakes meanwhile, their sleepers are its to wake, so it goes round again. Each round
 * after the first needs a release by another process in between, so the loop ends
 * when the others stop releasing (spin model tests/model/mutex_word.pml, WOKEN_RESET
 * and WAKE_COUNT: a fixed number of rounds loses a wake).
 */
static void rdlm_mutex_wake_next(rdlm_local_t *lc, rdlm_entry_t *e)
{
    if (rdlm_load(&e->parked, RDLM_SEQ_CST) == 0 ||
        rdlm_fetch_add(&e->wake32, 1, RDLM_SEQ_CST) != 0) {
        return; /* nobody sleeps, or a woken waiter is on its way: counted */
    }
    while (rdlm_wait_wake_one_sleeper(rdlm_mutex_futex(&e->word), RDLM_WAIT_ALL_BITS,
                                      &lc->stats.wait) == 0) {
        if (rdlm_exchange(&e->wake32, 0, RDLM_SEQ_CST) <= 1 ||
            rdlm_load(&e->parked, RDLM_SEQ_CST) == 0 ||
            rdlm_fetch_add(&e->wake32, 1, RDLM_SEQ_CST) != 0) {
            return; /* no release skipped; or none to wake; or another waker took over */
        }
    }
}

/* The heir may be asleep: wake it (its slot's bit; others sharing the bit re-sleep). */
static void rdlm_mutex_wake_heir(rdlm_local_t *lc, rdlm_entry_t *e, uint32_t heir)
{
    rdlm_wait_wake(rdlm_mutex_futex(&e->word), rdlm_wait_ticket_bit(RDLM_OWNER_SLOT(heir)),
                   &e->parked, &lc->stats.wait);
}

/*
 * Recovery (any waiter, after a sleep slice, or a due failed try): a dead holder's
 * lock becomes free with DIED (the next taker gets RDLM_OWNER_DEAD); a dead heir's
 * reservation is dropped. Every step is a CAS. Returns 1 if the word changed.
 */
static int rdlm_mutex_recover(rdlm_local_t *lc, uint32_t idx)
{
    rdlm_segment_t *seg = &lc->seg;
    rdlm_entry_t *e = &seg->entries[idx];
    uint64_t w = rdlm_load(&e->word, RDLM_ACQUIRE);
    uint32_t o = RDLM_WORD_OWNER(w);
    uint32_t h = RDLM_MUTEX_HEIR(w);

    if (!RDLM_OWNER_IS_NOBODY(o) && !rdlm_segment_owner_alive(seg, o)) {
        if (!rdlm_cas(&e->word, &w, RDLM_MUTEX_MAKE(RDLM_OWNER_DIED, h), RDLM_SEQ_CST)) {
            return 0;
        }
        rdlm_fetch_add(&lc->stats.recoveries, 1, RDLM_RELAXED);
        rdlm_warn("lock \"%s\": holder (slot %u) died; freed", seg->names[idx],
                  RDLM_OWNER_SLOT(o));
        /* The dead holder's release: its wake too (model: D1_WAKE). */
        if (h != 0) {
            rdlm_mutex_wake_heir(lc, e, h);
        } else {
            rdlm_mutex_wake_next(lc, e);
        }
        return 1;
    }
    /* A live heir that no longer waits (no WAITING record of this lock): a holder
     * passed the reservation to a waiter that had just left (its leave looked at the
     * word before the pass; or the passer read its record and then it timed out).
     * Nobody else would ever take the lock: drop it as a dead heir's (model:
     * STALE_HEIR). A heir that starts waiting again meanwhile only loses it. */
    if (h == 0 ||
        (rdlm_segment_owner_alive(seg, h) && rdlm_rec_owner_waits(seg, idx, h)) ||
        !rdlm_cas(&e->word, &w, RDLM_MUTEX_MAKE(o, 0), RDLM_SEQ_CST)) {
        return 0;
    }
    rdlm_fetch_add(&lc->stats.skips, 1, RDLM_RELAXED);
    rdlm_debug("lock \"%s\": reserving waiter (slot %u) died or left; reservation dropped",
               seg->names[idx], RDLM_OWNER_SLOT(h));
    if (RDLM_OWNER_IS_NOBODY(o)) {
        rdlm_mutex_wake_next(lc, e);
    }
    return 1;
}

/* What rdlm_mutex_take_or_reserve did. */
enum rdlm_mutex_got { RDLM_GOT_NOTHING, RDLM_GOT_LOCK, RDLM_GOT_RESERVATION };

/*
 * Take the lock if it is free (and not reserved for another), else reserve it if it
 * is held and nobody has: one CAS loop, retried at once on the value a failed CAS
 * returns, so that a holder that releases and takes the lock again cannot slip in
 * between a waiter's failed reserve and its next take. *prev_owner_p as for a take.
 */
static enum rdlm_mutex_got rdlm_mutex_take_or_reserve(rdlm_local_t *lc, rdlm_entry_t *e,
                                                      uint32_t *prev_owner_p)
{
    uint32_t me = lc->seg.self_owner;
    uint64_t w = rdlm_load(&e->word, RDLM_RELAXED);

    for (;;) {
        uint32_t o = RDLM_WORD_OWNER(w);
        uint32_t h = RDLM_MUTEX_HEIR(w);

        if (RDLM_OWNER_IS_NOBODY(o) && (h == 0 || h == me)) {
            if (rdlm_cas(&e->word, &w, RDLM_MUTEX_MAKE(me, 0), RDLM_ACQUIRE)) {
                *prev_owner_p = o;
                return RDLM_GOT_LOCK;
            }
        } else if (!RDLM_OWNER_IS_NOBODY(o) && h == 0) {
            if (rdlm_cas(&e->word, &w, RDLM_MUTEX_MAKE(o, me), RDLM_SEQ_CST)) {
                return RDLM_GOT_RESERVATION;
            }
        } else {
            return RDLM_GOT_NOTHING;
        }
    }
}

/* A spinning waiter that stops spinning gives its reservation up while the lock is
 * held (a free lock reserved for it, it takes next). */
static void rdlm_mutex_unreserve(rdlm_local_t *lc, rdlm_entry_t *e)
{
    uint64_t w = rdlm_load(&e->word, RDLM_RELAXED);

    while (RDLM_MUTEX_HEIR(w) == lc->seg.self_owner &&
           !RDLM_OWNER_IS_NOBODY(RDLM_WORD_OWNER(w)) &&
           !rdlm_cas(&e->word, &w, RDLM_MUTEX_MAKE(RDLM_WORD_OWNER(w), 0), RDLM_SEQ_CST)) {
    }
}

/* Leaving without the lock (deadline, context closing): drop a reservation, and pass
 * on a wake this waiter may have been sent, if the lock is free. */
static void rdlm_mutex_leave(rdlm_local_t *lc, rdlm_entry_t *e)
{
    uint32_t me = lc->seg.self_owner;
    uint64_t w = rdlm_load(&e->word, RDLM_RELAXED);

    while (RDLM_MUTEX_HEIR(w) == me &&
           !rdlm_cas(&e->word, &w, RDLM_MUTEX_MAKE(RDLM_WORD_OWNER(w), 0), RDLM_SEQ_CST)) {
    }
    rdlm_store(&e->wake32, 0, RDLM_SEQ_CST);
    if (RDLM_OWNER_IS_NOBODY(RDLM_WORD_OWNER(rdlm_load(&e->word, RDLM_SEQ_CST)))) {
        rdlm_mutex_wake_next(lc, e);
    }
}

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
        mw->starving = RDLM_REC_STARVING | ((uint32_t)rdlm_fetch_add(&e->aux64, 1, RDLM_RELAXED) &
                                            ~RDLM_REC_STARVING);
        rdlm_store(mw->rec, RDLM_REC_MAKE(RDLM_REC_WAITING, idx, mw->starving), RDLM_SEQ_CST);
        rdlm_fetch_add(&lc->stats.reservations, 1, RDLM_RELAXED);
    }
    if (now >= mw->next_check) {
        rdlm_mutex_recover(lc, idx);
        mw->next_check = now + lc->policy.park_slice_ns;
    }
    /* (A spinning waiter reads no clock: its reservation never meets the bound.) */
    if (mw->heir == RDLM_HEIR_NONE) {
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
        rdlm_error("lock \"%s\": this context already uses all %d wait records",
                   seg->names[idx], RDLM_SLOT_RECORDS);
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
        rdlm_store(&e->wake32, 0, RDLM_SEQ_CST); /* running: releases may wake again */
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
static rdlm_status_t rdlm_mutex_wait(rdlm_local_t *lc, uint32_t idx, uint64_t timeout_ns,
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

rdlm_status_t rdlm_mutex_acquire_slow(rdlm_local_t *lc, uint32_t idx, uint64_t timeout_ns,
                                      uint64_t *token_p)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];
    uint32_t prev_owner = 0;

    if (timeout_ns == 0) {
        if (!(rdlm_mutex_recover(lc, idx) && rdlm_mutex_take(lc, e, &prev_owner))) {
            return RDLM_ERR_BUSY;
        }
    } else {
        rdlm_status_t status = rdlm_mutex_wait(lc, idx, timeout_ns, &prev_owner);
        if (status != RDLM_OK) {
            return status;
        }
    }
    return rdlm_local_lock_grant(lc, idx, prev_owner, token_p);
}

rdlm_status_t rdlm_mutex_release(rdlm_local_t *lc, uint32_t idx)
{
    rdlm_segment_t *seg = &lc->seg;
    rdlm_entry_t *e = &seg->entries[idx];
    uint64_t w = rdlm_load(&e->word, RDLM_RELAXED);

    do {
        if (RDLM_WORD_OWNER(w) != seg->self_owner) {
            rdlm_warn("lock \"%s\": release by a context that does not hold it",
                      seg->names[idx]);
            return RDLM_ERR_NOT_OWNER;
        }
    } while (!rdlm_cas(&e->word, &w, RDLM_MUTEX_MAKE(0, RDLM_MUTEX_HEIR(w)), RDLM_SEQ_CST));
    if (RDLM_MUTEX_HEIR(w) != 0) {
        rdlm_mutex_wake_heir(lc, e, RDLM_MUTEX_HEIR(w));
    } else {
        rdlm_mutex_wake_next(lc, e);
    }
    return RDLM_OK;
}
