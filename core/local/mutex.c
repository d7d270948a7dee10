/*
 * The on-node bounded-bypass mutex, the default exclusive lock: one 64-bit word
 * (heir | owner, layout.h). A free lock goes to whoever takes it first, so a running
 * process takes it back at once instead of handing it to a sleeping waiter (which
 * costs a futex wake, about 0.1 ms here, per hand-off when processes outnumber
 * cores). Bypass is bounded: a waiter that has waited RDLM_LOCK_BYPASS_US reserves
 * the lock (heir), and then nobody else takes it; such waiters are served in the
 * order they reached the bound; a waiter that spins (it is running, so a hand-off to
 * it is cheap) reserves it while it spins. A release wakes one sleeper (or the heir),
 * and no second one while a woken one has not run (mutex_woken).
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
 * The waiting (spin, reserve, bound, sleep, pass) is in mutex_wait.c. Proof sketch:
 * docs/local-locks.md ("Exclusive lock"); spin model: tests/model/mutex_word.pml.
 */
#include "log.h"
#include "mutex.h"
#include "records.h"

/*
 * The lock became free with no heir, or a waiter left with a wake it may have been
 * sent: wake one sleeper, unless a waiter woken earlier has not run yet. mutex_woken
 * counts: 1 while a woken waiter is on its way (it stores 0 when it runs), plus one
 * for every release that skipped its wake meanwhile. A wake that found nobody asleep
 * (the sleeper counted in parked had not gone to sleep yet) leaves nobody on the way
 * to look at the word: the waker takes the count back, and if releases skipped their
 * wakes meanwhile, their sleepers are its to wake, so it goes round again. Each round
 * after the first needs a release by another process in between, so the loop ends
 * when the others stop releasing (spin model tests/model/mutex_word.pml, WOKEN_RESET
 * and WAKE_COUNT: a fixed number of rounds loses a wake).
 */
void rdlm_mutex_wake_next(rdlm_local_t *lc, rdlm_entry_t *e)
{
    if (rdlm_load(&e->parked, RDLM_SEQ_CST) == 0 ||
        rdlm_fetch_add(&e->mutex_woken, 1, RDLM_SEQ_CST) != 0) {
        return; /* nobody sleeps, or a woken waiter is on its way: counted */
    }
    while (rdlm_wait_wake_one_sleeper(rdlm_mutex_futex(&e->word), RDLM_WAIT_ALL_BITS,
                                      &lc->stats.wait) == 0) {
        uint32_t count = rdlm_exchange(&e->mutex_woken, 0, RDLM_SEQ_CST);

        if (count == 0) {
            /* A running waiter erased the count (and skipped releases with it): that
             * waiter may die before it looks, so look at the word instead (model:
             * FIX_ERASED; without it 4 processes lose a wake). */
            uint64_t w = rdlm_load(&e->word, RDLM_SEQ_CST);

            if (!RDLM_OWNER_IS_NOBODY(RDLM_WORD_OWNER(w)) || RDLM_MUTEX_HEIR(w) != 0) {
                return;
            }
        } else if (count == 1) {
            return; /* no release skipped meanwhile */
        }
        if (rdlm_load(&e->parked, RDLM_SEQ_CST) == 0 ||
            rdlm_fetch_add(&e->mutex_woken, 1, RDLM_SEQ_CST) != 0) {
            return; /* none to wake; or another waker took over */
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
int rdlm_mutex_recover(rdlm_local_t *lc, uint32_t idx)
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

/*
 * Take the lock if it is free (and not reserved for another), else reserve it if it
 * is held and nobody has: one CAS loop, retried at once on the value a failed CAS
 * returns, so that a holder that releases and takes the lock again cannot slip in
 * between a waiter's failed reserve and its next take. *prev_owner_p as for a take.
 */
enum rdlm_mutex_got rdlm_mutex_take_or_reserve(rdlm_local_t *lc, rdlm_entry_t *e,
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
void rdlm_mutex_unreserve(rdlm_local_t *lc, rdlm_entry_t *e)
{
    uint64_t w = rdlm_load(&e->word, RDLM_RELAXED);

    while (RDLM_MUTEX_HEIR(w) == lc->seg.self_owner &&
           !RDLM_OWNER_IS_NOBODY(RDLM_WORD_OWNER(w)) &&
           !rdlm_cas(&e->word, &w, RDLM_MUTEX_MAKE(RDLM_WORD_OWNER(w), 0), RDLM_SEQ_CST)) {
    }
}

/* Leaving without the lock (deadline, context closing): drop a reservation, and pass
 * on a wake this waiter may have been sent, if the lock is free. */
void rdlm_mutex_leave(rdlm_local_t *lc, rdlm_entry_t *e)
{
    uint32_t me = lc->seg.self_owner;
    uint64_t w = rdlm_load(&e->word, RDLM_RELAXED);

    while (RDLM_MUTEX_HEIR(w) == me &&
           !rdlm_cas(&e->word, &w, RDLM_MUTEX_MAKE(RDLM_WORD_OWNER(w), 0), RDLM_SEQ_CST)) {
    }
    rdlm_store(&e->mutex_woken, 0, RDLM_SEQ_CST);
    if (RDLM_OWNER_IS_NOBODY(RDLM_WORD_OWNER(rdlm_load(&e->word, RDLM_SEQ_CST)))) {
        rdlm_mutex_wake_next(lc, e);
    }
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
        return rdlm_local_lock_grant(lc, idx, prev_owner, token_p);
    }
    return rdlm_local_lock_wait(lc, idx, timeout_ns, token_p, rdlm_mutex_wait,
                                rdlm_mutex_release);
}

void rdlm_mutex_released(rdlm_local_t *lc, rdlm_entry_t *e, uint64_t w)
{
    if (RDLM_MUTEX_HEIR(w) != 0) {
        rdlm_mutex_wake_heir(lc, e, RDLM_MUTEX_HEIR(w));
    } else {
        rdlm_mutex_wake_next(lc, e);
    }
}

rdlm_status_t rdlm_mutex_not_held(const rdlm_local_t *lc, uint32_t idx)
{
    rdlm_warn("lock \"%s\": release by a context that does not hold it",
              lc->seg.names[idx]);
    return RDLM_ERR_NOT_OWNER;
}
