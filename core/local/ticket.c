/*
 * The on-node FIFO exclusive lock: a ticket lock in one 64-bit word (next | serving |
 * owner), so that an uncontended acquire and a release are one CAS each and no
 * moment exists at which a held lock names no holder. Waiters sleep on the word's
 * futex half with a per-ticket bit, so a release wakes the next waiter only.
 * Recovery passes over dead holders and abandoned tickets; a waiter that gives its
 * place up before the lock reaches it marks the ticket "left" in the entry's meta, and
 * the release that hands the lock to a marked ticket passes over it at once (the next
 * live waiter may be asleep and would find out only at its sleep slice). Protocol and proof
 * sketch: docs/local-locks.md ("Exclusive lock"); spin model: tests/model/lock_word.pml.
 */
#include <stddef.h>

#include "local.h"
#include "log.h"
#include "records.h"

/* Wake whoever holds ticket `ticket` (it may be asleep). */
static void rdlm_ticket_wake(rdlm_local_t *lc, rdlm_entry_t *e, uint16_t ticket)
{
    rdlm_wait_wake(rdlm_word_futex(&e->word), rdlm_wait_ticket_bit(ticket), &e->parked,
                   &lc->stats.wait);
}

/*
 * CAS the word from w (serving == s, owner == from) to (s + 1, to), whatever `next`
 * does meanwhile, and wake ticket s + 1. Fails (returns 0) as soon as serving or
 * owner differ from what is expected. w is the caller's last look at the word.
 */
static int rdlm_ticket_pass_from(rdlm_local_t *lc, rdlm_entry_t *e, uint64_t w, uint16_t s,
                                 uint32_t from, uint32_t to)
{
    while (RDLM_WORD_SERVING(w) == s && RDLM_WORD_OWNER(w) == from) {
        if (rdlm_cas(&e->word, &w, RDLM_WORD_MAKE(RDLM_WORD_NEXT(w), s + 1, to),
                     RDLM_SEQ_CST)) {
            rdlm_ticket_wake(lc, e, (uint16_t)(s + 1));
            return 1;
        }
    }
    return 0;
}

static int rdlm_ticket_pass(rdlm_local_t *lc, rdlm_entry_t *e, uint16_t s, uint32_t from,
                            uint32_t to)
{
    return rdlm_ticket_pass_from(lc, e, rdlm_load(&e->word, RDLM_RELAXED), s, from, to);
}

/* Ticket s has been passed over: its left mark, if any, is spent. (A mark is set before
 * its waiter frees its record, and s is passed over only after that, so the clear
 * follows the set.) Ticket s + 16 shares the bit: while it has been issued, the bit is
 * kept (a later hand-off to a live waiter of such a ticket costs one scan), so that a
 * mark of s + 16 is not lost (its waiter would find out at its sleep slice). Given-up
 * tickets stay outstanding until the lock passes them, so under churn more than 16
 * are outstanding with fewer than 16 waiters. */
static void rdlm_ticket_unmark(rdlm_entry_t *e, uint16_t s)
{
    if ((rdlm_load(&e->meta, RDLM_RELAXED) & RDLM_META_LEFT(s)) &&
        (uint16_t)(RDLM_WORD_NEXT(rdlm_load(&e->word, RDLM_RELAXED)) - s) <= 16) {
        rdlm_fetch_and(&e->meta, ~RDLM_META_LEFT(s), RDLM_RELAXED);
    }
}

/* Pass over served ticket s (owner o, nobody) if no live process claims it. Returns
 * 1 if passed, 0 if the word moved meanwhile, -1 if a live process claims s. */
static int rdlm_ticket_skip(rdlm_local_t *lc, uint32_t idx, uint16_t s, uint32_t o)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];

    if (rdlm_rec_find_claimant(&lc->seg, idx, s) != RDLM_CLAIMANT_NONE) {
        return -1;
    }
    if (!rdlm_ticket_pass(lc, e, s, o, o)) {
        return 0;
    }
    rdlm_ticket_unmark(e, s);
    rdlm_fetch_add(&lc->stats.skips, 1, RDLM_RELAXED);
    return 1;
}

/* The live holder o of exclusive lock e is fenced (rdlm_local_t.holder_fenced). Only
 * exclusive locks: the ticket is all they hold on the node, while an rwlock's or a
 * semaphore's holder holds more than its gate (writer bit, readers, permits). */
static int rdlm_ticket_holder_fenced(rdlm_local_t *lc, const rdlm_entry_t *e, uint32_t o)
{
    uint64_t session;

    if (lc->holder_fenced == NULL ||
        (rdlm_load(&e->meta, RDLM_RELAXED) & RDLM_META_KIND) != RDLM_KIND_LOCK) {
        return 0;
    }
    session = rdlm_segment_owner_session(&lc->seg, o);
    return session != 0 && lc->holder_fenced(lc->holder_fenced_arg, o, session);
}

/*
 * Recovery (docs/local-locks.md): pass over a dead (or fenced) holder, or over a served
 * ticket no live process claims. Every step is a CAS on the word, so any number of waiters
 * may run it at once. Returns 1 if the lock moved on.
 */
static int rdlm_ticket_recover(rdlm_local_t *lc, uint32_t idx)
{
    rdlm_segment_t *seg = &lc->seg;
    rdlm_entry_t *e = &seg->entries[idx];
    uint64_t w = rdlm_load(&e->word, RDLM_ACQUIRE);
    uint32_t o = RDLM_WORD_OWNER(w);
    uint16_t s = RDLM_WORD_SERVING(w);

    if (!RDLM_OWNER_IS_NOBODY(o)) {
        int alive = rdlm_segment_owner_alive(seg, o);

        if ((alive && !rdlm_ticket_holder_fenced(lc, e, o)) ||
            !rdlm_ticket_pass(lc, e, s, o, RDLM_OWNER_DIED)) {
            return 0;
        }
        rdlm_fetch_add(&lc->stats.recoveries, 1, RDLM_RELAXED);
        rdlm_warn("lock \"%s\": holder (slot %u) %s; passed on", seg->names[idx],
                  RDLM_OWNER_SLOT(o),
                  alive ? "lives but its lease ended (stopped or cut off: fenced)"
                        : "died");
        return 1;
    }
    if (s == RDLM_WORD_NEXT(w) || rdlm_ticket_skip(lc, idx, s, o) <= 0) {
        return 0;
    }
    rdlm_debug("lock \"%s\": ticket %u has no live claimant; passed over", seg->names[idx],
               s);
    return 1;
}

/* Recovery until the lock stops moving: a run of abandoned tickets (each timed-out
 * waiter leaves one) is passed over at once, not one per sleep slice. Each pass moves
 * serving up by one, so next - serving bounds the loop. Returns 1 if it moved. Out of
 * line, so that a release, which calls it only after a waiter gave up, stays a few
 * instructions (inlined, its registers cost every release 17 instructions). */
static __attribute__((noinline)) int rdlm_ticket_recover_all(rdlm_local_t *lc, uint32_t idx)
{
    unsigned moved = 0;

    while (moved <= UINT16_MAX && rdlm_ticket_recover(lc, idx)) {
        moved++;
    }
    return moved != 0;
}

/* The lock has just been handed to ticket s (a release, or a timed-out waiter passing
 * its place on). If s is marked left, its waiter has gone and the next live one may be
 * asleep: pass over it (and any run behind it) now. One load of the entry's cache
 * line, which the hand-off's CAS has just written; seq_cst, against the give-up's
 * "mark, then load the word": either this load sees the mark, or that load sees the
 * lock handed to s and its waiter passes its place on itself. */
static void rdlm_ticket_handed(rdlm_local_t *lc, uint32_t idx, uint16_t s)
{
    if (rdlm_load(&lc->seg.entries[idx].meta, RDLM_SEQ_CST) & RDLM_META_LEFT(s)) {
        rdlm_ticket_recover_all(lc, idx);
    }
}

/* A waiter has just published WAITING(t). A release that handed the lock to a left
 * ticket while this waiter's record was PENDING (a ticket in flight, which recovery
 * waits for) could not pass over it; take over its look. The release's scan read
 * PENDING before the store of WAITING (both seq_cst), so this load sees its hand-off. */
static void rdlm_ticket_arrived(rdlm_local_t *lc, uint32_t idx, uint16_t t)
{
    uint64_t w = rdlm_load(&lc->seg.entries[idx].word, RDLM_SEQ_CST);

    if (RDLM_OWNER_IS_NOBODY(RDLM_WORD_OWNER(w)) && RDLM_WORD_SERVING(w) != t) {
        rdlm_ticket_handed(lc, idx, RDLM_WORD_SERVING(w));
    }
}

/* Fast path: take a free lock in one CAS. *prev_owner_p gets the owner it replaced. */
static int rdlm_ticket_try_fast(rdlm_local_t *lc, rdlm_entry_t *e, uint32_t *prev_owner_p)
{
    uint64_t w = rdlm_load(&e->word, RDLM_RELAXED);
    uint16_t n = RDLM_WORD_NEXT(w);

    if (RDLM_WORD_SERVING(w) != n || !RDLM_OWNER_IS_NOBODY(RDLM_WORD_OWNER(w)) ||
        !rdlm_cas(&e->word, &w, RDLM_WORD_MAKE(n + 1, n, lc->seg.self_owner),
                  RDLM_ACQUIRE)) {
        return 0;
    }
    *prev_owner_p = RDLM_WORD_OWNER(w);
    return 1;
}

/* Holding ticket t and serving == t: claim. *prev_owner_p gets 0 or DIED. */
static int rdlm_ticket_claim(rdlm_local_t *lc, rdlm_entry_t *e, uint16_t t,
                             uint32_t *prev_owner_p)
{
    uint64_t w = rdlm_load(&e->word, RDLM_ACQUIRE);

    while (RDLM_WORD_SERVING(w) == t && RDLM_OWNER_IS_NOBODY(RDLM_WORD_OWNER(w))) {
        if (rdlm_cas(&e->word, &w, RDLM_WORD_MAKE(RDLM_WORD_NEXT(w), t, lc->seg.self_owner),
                     RDLM_SEQ_CST)) {
            *prev_owner_p = RDLM_WORD_OWNER(w);
            return 1;
        }
    }
    return 0;
}

/* Slow path: queue with a ticket and wait for it. The record R lets recovery tell a
 * live claimant from an abandoned ticket. */
static rdlm_status_t rdlm_ticket_queue(rdlm_local_t *lc, uint32_t idx, uint64_t timeout_ns,
                                       uint32_t *prev_owner_p)
{
    rdlm_segment_t *seg = &lc->seg;
    rdlm_entry_t *e = &seg->entries[idx];
    rdlm_atomic_u64_t *rec;
    rdlm_wait_result_t step;
    rdlm_wait_t w;
    uint64_t word;
    uint16_t t;
    uint32_t scanned = UINT32_MAX; /* serving + 1 of the free word last recovered from */
    int r;

    r = rdlm_rec_claim(seg, RDLM_REC_MAKE(RDLM_REC_PENDING, idx, 0));
    if (r < 0) {
        rdlm_rec_full(seg, idx);
        return RDLM_ERR_NO_RESOURCE;
    }
    rec = rdlm_rec_at(seg, r);
    t = RDLM_WORD_NEXT(rdlm_fetch_add(&e->word, RDLM_WORD_NEXT_ONE, RDLM_SEQ_CST));
    rdlm_store(rec, RDLM_REC_MAKE(RDLM_REC_WAITING, idx, t), RDLM_SEQ_CST);
    rdlm_ticket_arrived(lc, idx, t);
    rdlm_fetch_add(&lc->stats.contended, 1, RDLM_RELAXED);
    rdlm_wait_init(&w, &lc->policy, &lc->stats.wait, timeout_ns);
    /* More processes than CPUs: a spinning waiter takes the CPU the holder (or the
     * next in line) needs. Yield at once instead. */
    if (rdlm_local_oversubscribed(lc)) {
        rdlm_wait_stop_spinning(&w);
    }
    while (!rdlm_ticket_claim(lc, e, t, prev_owner_p)) {
        word = rdlm_load(&e->word, RDLM_ACQUIRE);
        if (RDLM_WORD_SERVING(word) == t) {
            continue; /* served, claim raced with an arrival: retry the claim */
        }
        /* Free, the ticket served is the one just before ours, still not claimed,
         * and we are about to sleep: its waiter may have timed out. Pass over it
         * now (once per ticket seen served; a live or arriving claimant is never
         * passed over), not after the sleep slice: the next acquire after a timeout
         * slept a slice. Only the waiter right behind looks, and only before it
         * sleeps: every waiter looking at every hand-off cost 16 processes on 2 CPUs
         * a fifth of their throughput. A run of abandoned tickets is passed over at
         * once at the next sleep slice's check. */
        if (RDLM_OWNER_IS_NOBODY(RDLM_WORD_OWNER(word)) &&
            (uint16_t)(t - RDLM_WORD_SERVING(word)) == 1 &&
            (uint32_t)RDLM_WORD_SERVING(word) + 1 != scanned &&
            w.spins >= lc->policy.spin && w.yields >= lc->policy.yield) {
            scanned = (uint32_t)RDLM_WORD_SERVING(word) + 1;
            if (rdlm_ticket_recover_all(lc, idx)) {
                continue;
            }
        }
        /* Only the next in line spins; the others yield, then sleep (and look for
         * dead holders after each sleep slice). */
        if ((uint16_t)(t - RDLM_WORD_SERVING(word)) > 1) {
            rdlm_wait_stop_spinning(&w);
        }
        step = rdlm_wait_step(&w, rdlm_word_futex(&e->word), RDLM_WORD_HIGH(word),
                              rdlm_wait_ticket_bit(t), &e->parked);
        if (rdlm_load(&lc->closing, RDLM_RELAXED)) {
            step = RDLM_WAIT_TIMEDOUT;
        }
        switch (step) {
        case RDLM_WAIT_AGAIN:
            break;
        case RDLM_WAIT_CHECK:
            rdlm_ticket_recover_all(lc, idx);
            break;
        case RDLM_WAIT_TIMEDOUT:
            /* Give the place up; never take it after the record is gone. Mark the
             * ticket left before freeing the record: the release that hands the lock
             * to t then passes over it (rdlm_ticket_handed), and whoever passes over
             * t (possible only once the record is free) clears the mark after it
             * was set. If the lock has reached t already, pass it on ourselves. */
            rdlm_fetch_or(&e->meta, RDLM_META_LEFT(t), RDLM_SEQ_CST);
            rdlm_store(rec, 0, RDLM_SEQ_CST);
            word = rdlm_load(&e->word, RDLM_SEQ_CST);
            if (RDLM_OWNER_IS_NOBODY(RDLM_WORD_OWNER(word)) &&
                rdlm_ticket_pass(lc, e, t, RDLM_WORD_OWNER(word), RDLM_WORD_OWNER(word))) {
                rdlm_ticket_unmark(e, t);
                rdlm_ticket_handed(lc, idx, (uint16_t)(t + 1));
            }
            if (rdlm_load(&lc->closing, RDLM_RELAXED)) {
                return RDLM_ERR_CLOSED;
            }
            rdlm_fetch_add(&lc->stats.timeouts, 1, RDLM_RELAXED);
            return RDLM_ERR_TIMEOUT;
        }
    }
    rdlm_store(rec, 0, RDLM_RELEASE);
    return RDLM_OK;
}

/* rdlm_ticket_acquire; with give_back, rdlm_ticket_lock_acquire. */
static rdlm_status_t rdlm_ticket_take(rdlm_local_t *lc, uint32_t idx, uint64_t timeout_ns,
                                      uint64_t *token_p, int give_back)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];
    uint32_t prev_owner;

    if (rdlm_ticket_try_fast(lc, e, &prev_owner)) {
        return rdlm_local_lock_grant(lc, idx, prev_owner, token_p);
    }
    if (timeout_ns == 0) {
        if (!(rdlm_local_lock_try_check_due(lc, idx) && rdlm_ticket_recover_all(lc, idx) &&
              rdlm_ticket_try_fast(lc, e, &prev_owner))) {
            return RDLM_ERR_BUSY;
        }
        return rdlm_local_lock_grant(lc, idx, prev_owner, token_p);
    }
    return rdlm_local_lock_wait(lc, idx, timeout_ns, token_p, rdlm_ticket_queue,
                                give_back ? rdlm_ticket_release : NULL);
}

rdlm_status_t rdlm_ticket_acquire(rdlm_local_t *lc, uint32_t idx, uint64_t timeout_ns,
                                  uint64_t *token_p)
{
    return rdlm_ticket_take(lc, idx, timeout_ns, token_p, 0);
}

rdlm_status_t rdlm_ticket_lock_acquire(rdlm_local_t *lc, uint32_t idx, uint64_t timeout_ns,
                                       uint64_t *token_p)
{
    return rdlm_ticket_take(lc, idx, timeout_ns, token_p, 1);
}

rdlm_status_t rdlm_ticket_release(rdlm_local_t *lc, uint32_t idx)
{
    return rdlm_ticket_release_to(lc, idx, 0);
}

rdlm_status_t rdlm_ticket_release_to(rdlm_local_t *lc, uint32_t idx, uint32_t to)
{
    rdlm_segment_t *seg = &lc->seg;
    rdlm_entry_t *e = &seg->entries[idx];
    uint64_t w = rdlm_load(&e->word, RDLM_RELAXED);

    if (!rdlm_ticket_pass_from(lc, e, w, RDLM_WORD_SERVING(w), seg->self_owner, to)) {
        rdlm_warn("lock \"%s\": release by a context that does not hold it",
                  seg->names[idx]);
        return RDLM_ERR_NOT_OWNER;
    }
    rdlm_ticket_handed(lc, idx, (uint16_t)(RDLM_WORD_SERVING(w) + 1));
    return RDLM_OK;
}

int rdlm_ticket_held_by_me(const rdlm_local_t *lc, uint32_t idx)
{
    return RDLM_WORD_OWNER(rdlm_load(&lc->seg.entries[idx].word, RDLM_ACQUIRE)) ==
           lc->seg.self_owner;
}

int rdlm_ticket_has_waiters(const rdlm_local_t *lc, uint32_t idx)
{
    uint64_t w = rdlm_load(&lc->seg.entries[idx].word, RDLM_ACQUIRE);

    return (uint16_t)(RDLM_WORD_NEXT(w) - RDLM_WORD_SERVING(w)) > 1;
}

int rdlm_ticket_idle(rdlm_local_t *lc, uint32_t idx)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];

    /* Each pass-over moves serving up by one, so next - serving bounds the loop. */
    for (unsigned i = 0; i <= UINT16_MAX; i++) {
        uint64_t w = rdlm_load(&e->word, RDLM_ACQUIRE);
        uint32_t o = RDLM_WORD_OWNER(w);
        uint16_t s = RDLM_WORD_SERVING(w);

        if (!RDLM_OWNER_IS_NOBODY(o)) {
            return 0;
        }
        if (s == RDLM_WORD_NEXT(w)) {
            return 1;
        }
        if (rdlm_ticket_skip(lc, idx, s, o) < 0) {
            return 0;
        }
    }
    return 0;
}

void rdlm_ticket_snapshot(const rdlm_local_t *lc, uint32_t idx, rdlm_lock_snapshot_t *snap)
{
    const rdlm_segment_t *seg = &lc->seg;
    uint64_t w = rdlm_load(&seg->entries[idx].word, RDLM_ACQUIRE);

    snap->held = !RDLM_OWNER_IS_NOBODY(RDLM_WORD_OWNER(w));
    snap->held_by_me = RDLM_WORD_OWNER(w) == seg->self_owner;
    snap->reserved = !rdlm_local_lock_is_fifo(lc, idx) &&
                     rdlm_segment_owner_alive(seg, RDLM_MUTEX_HEIR(w));
    /* Counted from live processes' records, not tickets: an abandoned ticket, or one
     * of a dead process, is nobody's request. */
    snap->waiters = rdlm_rec_count(seg, idx, RDLM_REC_WAITING, 1);
    snap->readers = rdlm_rec_count(seg, idx, RDLM_REC_READ, 1);
    snap->reads_held_by_me = rdlm_rwlock_local_reads_held(lc, idx);
    snap->last_token = rdlm_load(&seg->entries[idx].token, RDLM_ACQUIRE);
}
