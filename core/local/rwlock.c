/*
 * The on-node reader-writer lock. A reader count and a writer bit share one 32-bit
 * word (rw_word, layout.h): a reader claims a READ record in its own slot and adds 1
 * to the count, one atomic on the shared line; it backs off only if a writer holds
 * the gate. A writer takes the gate (the entry's ticket lock) with a bounded bypass
 * (tries, then a FIFO place), sets the writer bit and waits until the count drains.
 * Readers that met the bit wait the same way and enter through the gate. A writer
 * whose wait finds no live process's READ record resets the count of dead readers.
 * docs/local-locks.md ("Reader-writer lock") has the protocol and why it is safe.
 *
 * Entry words used: those of the gate (ticket.c), rw_word (the word above), parked.
 * The cross-node rwlock (core/global/rwlock.c) passes the gate for every reader and
 * calls rdlm_rwlock_local_read_enter while holding it.
 */
#include <sched.h>

#include "bypass.h"
#include "clock.h"
#include "local.h"
#include "log.h"
#include "records.h"

/* READ record of a shared hold being released (still READ for scans). */
#define RDLM_RW_LEAVING 1u

/* A reader left (count old -> old - 1): wake the writer if it sleeps for the last. */
static void rdlm_rw_departed(rdlm_local_t *lc, rdlm_entry_t *e, uint32_t old)
{
    if ((old & RDLM_RW_SLEEP) && RDLM_RW_READERS(old) == 1) {
        rdlm_wait_wake_sleepers(&e->rw_word, RDLM_WAIT_ALL_BITS, &lc->stats.wait);
    }
}

/* Take back a unit added in epoch of `added`, unless a reset removed it already. */
static void rdlm_rw_undo(rdlm_local_t *lc, rdlm_entry_t *e, uint32_t added)
{
    uint32_t v = rdlm_load(&e->rw_word, RDLM_RELAXED);

    while ((v & RDLM_RW_EPOCH_MASK) == (added & RDLM_RW_EPOCH_MASK) &&
           RDLM_RW_READERS(v) != 0) {
        if (rdlm_cas(&e->rw_word, &v, v - 1, RDLM_SEQ_CST)) {
            rdlm_rw_departed(lc, e, v);
            return;
        }
    }
}

/* The reader fast path: record, then one fetch-add; 1 if in. */
static int rdlm_rw_read_fast(rdlm_local_t *lc, uint32_t idx, rdlm_status_t *status_p)
{
    rdlm_segment_t *seg = &lc->seg;
    rdlm_entry_t *e = &seg->entries[idx];
    uint32_t old;
    int r;

    if (rdlm_load(&e->rw_word, RDLM_RELAXED) & RDLM_RW_WRITER) {
        return 0;
    }
    r = rdlm_rec_claim(seg, RDLM_REC_MAKE(RDLM_REC_READ, idx, 0));
    if (r < 0) {
        *status_p = RDLM_ERR_NO_RESOURCE;
        return 1;
    }
    /* The record is published (seq_cst) before the unit: see the reset rule. */
    old = rdlm_fetch_add(&e->rw_word, 1, RDLM_SEQ_CST);
    if (!(old & RDLM_RW_WRITER)) {
        *status_p = RDLM_OK;
        return 1;
    }
    rdlm_rw_undo(lc, e, old);
    rdlm_store(rdlm_rec_at(seg, r), 0, RDLM_RELEASE);
    return 0;
}

rdlm_status_t rdlm_rwlock_local_read_enter(rdlm_local_t *lc, uint32_t idx)
{
    rdlm_segment_t *seg = &lc->seg;
    rdlm_entry_t *e = &seg->entries[idx];

    if (rdlm_rec_claim(seg, RDLM_REC_MAKE(RDLM_REC_READ, idx, 0)) < 0) {
        rdlm_error("rwlock \"%s\": this context holds too many shared locks (%d records)",
                   seg->names[idx], RDLM_SLOT_RECORDS);
        return RDLM_ERR_NO_RESOURCE;
    }
    /* We hold the gate, so no live writer holds the bit: one set is a dead writer's. */
    if (rdlm_load(&e->rw_word, RDLM_RELAXED) & (RDLM_RW_WRITER | RDLM_RW_SLEEP)) {
        rdlm_fetch_and(&e->rw_word, ~(RDLM_RW_WRITER | RDLM_RW_SLEEP), RDLM_SEQ_CST);
    }
    rdlm_fetch_add(&e->rw_word, 1, RDLM_SEQ_CST);
    return RDLM_OK;
}

/*
 * Take the gate with a bounded bypass: try it (one CAS when free; a try also passes
 * over a dead holder now and then) while spinning (only with a CPU per process) and
 * yielding, for at most lc->bypass_ns; then queue for a FIFO place. `reader`:
 * also try the reader fast path (*entered_p = 1 when it succeeds).
 */
static rdlm_status_t rdlm_rw_gate(rdlm_local_t *lc, uint32_t idx, uint64_t deadline,
                                  uint64_t *token_p, int reader, int *entered_p)
{
    uint64_t now = rdlm_clock_now_ns(), until = now + lc->bypass_ns;
    uint32_t spins = rdlm_bypass_spins(lc);
    rdlm_status_t s;

    for (uint32_t i = 0;; i++) {
        if (reader && rdlm_rw_read_fast(lc, idx, &s)) {
            *entered_p = 1;
            return s;
        }
        s = rdlm_ticket_acquire(lc, idx, 0, token_p);
        if (s != RDLM_ERR_BUSY) {
            return s;
        }
        s = rdlm_bypass_turn(lc, i, spins, deadline, &now);
        if (s == RDLM_INPROGRESS) {
            continue;
        }
        if (s == RDLM_ERR_TIMEOUT) { /* the queue's below: ticket.c counts them */
            rdlm_fetch_add(&lc->stats.timeouts, 1, RDLM_RELAXED);
        }
        if (s != RDLM_OK) {
            return s;
        }
        if (now >= until || i >= spins + lc->policy.yield) {
            break;
        }
        sched_yield();
    }
    return rdlm_ticket_acquire(
        lc, idx, deadline == UINT64_MAX ? UINT64_MAX : deadline - now, token_p);
}

/* The read acquire after its fast path failed: through the gate. */
static rdlm_status_t rdlm_rw_read_gated(rdlm_local_t *lc, uint32_t idx, uint64_t timeout_ns)
{
    rdlm_status_t status, entered;
    int fast = 0;

    if (timeout_ns == 0) {
        status = rdlm_ticket_acquire(lc, idx, 0, NULL);
    } else {
        status = rdlm_rw_gate(lc, idx, rdlm_clock_deadline(timeout_ns), NULL, 1, &fast);
        if (fast) {
            return status;
        }
    }
    if (status != RDLM_OK && status != RDLM_OWNER_DEAD) {
        return status; /* a timeout is counted where it happened (the gate's) */
    }
    entered = rdlm_rwlock_local_read_enter(lc, idx);
    rdlm_ticket_release(lc, idx);
    return entered != RDLM_OK ? entered : status;
}

rdlm_status_t rdlm_rwlock_local_read_acquire(rdlm_local_t *lc, uint32_t idx,
                                             uint64_t timeout_ns)
{
    rdlm_status_t status;

    if (rdlm_rw_read_fast(lc, idx, &status)) {
        return status;
    }
    if (timeout_ns == 0) {
        return rdlm_rw_read_gated(lc, idx, 0);
    }
    status = rdlm_local_wait_enter(lc);
    if (status != RDLM_OK) {
        return status;
    }
    status = rdlm_rw_read_gated(lc, idx, timeout_ns);
    return rdlm_local_wait_leave(
        lc, rdlm_local_lock_give_back(lc, idx, status, rdlm_rwlock_local_read_release));
}

rdlm_status_t rdlm_rwlock_local_read_release(rdlm_local_t *lc, uint32_t idx)
{
    rdlm_segment_t *seg = &lc->seg;
    rdlm_entry_t *e = &seg->entries[idx];
    uint64_t read = RDLM_REC_MAKE(RDLM_REC_READ, idx, 0);

    for (int r = 0; r < RDLM_SLOT_RECORDS; r++) {
        uint64_t expected = read;

        /* Mark the record (another thread of this context may hold the same), drop
         * the unit, then free the record: a record outlives its unit. */
        if (rdlm_cas(rdlm_rec_at(seg, r), &expected,
                     RDLM_REC_MAKE(RDLM_REC_READ, idx, RDLM_RW_LEAVING), RDLM_RELAXED)) {
            rdlm_rw_departed(lc, e, rdlm_fetch_sub(&e->rw_word, 1, RDLM_SEQ_CST));
            rdlm_store(rdlm_rec_at(seg, r), 0, RDLM_RELEASE);
            return RDLM_OK;
        }
    }
    rdlm_warn("rwlock \"%s\": shared release by a context that holds no shared lock",
              seg->names[idx]);
    return RDLM_ERR_NOT_OWNER;
}

uint32_t rdlm_rwlock_local_reads_held(const rdlm_local_t *lc, uint32_t idx)
{
    const rdlm_slot_t *slot = &lc->seg.slots[lc->seg.self_slot];
    uint64_t read = RDLM_REC_MAKE(RDLM_REC_READ, idx, 0);
    uint32_t n = 0;

    for (int r = 0; r < RDLM_SLOT_RECORDS; r++) {
        n += rdlm_load(&slot->rec[r], RDLM_ACQUIRE) == read;
    }
    return n;
}

uint32_t rdlm_rwlock_local_live_reads(const rdlm_local_t *lc, uint32_t idx)
{
    return rdlm_rec_count(&lc->seg, idx, RDLM_REC_READ, 1);
}

/*
 * Holding the gate with the writer bit set, the count seen as v != 0: if no live
 * process has a READ record of this lock, every unit left is a dead reader's (or a
 * backing-off reader's, which then finds the epoch changed and takes nothing back):
 * zero the count and move the epoch, by one CAS that fails if the word moved.
 */
static void rdlm_rw_reset_dead(rdlm_local_t *lc, uint32_t idx, uint32_t v)
{
    rdlm_segment_t *seg = &lc->seg;
    rdlm_entry_t *e = &seg->entries[idx];
    uint32_t epoch = (v + (1u << RDLM_RW_EPOCH_SHIFT)) & RDLM_RW_EPOCH_MASK;

    /* v is read after the wait: the readers may have left meanwhile (nothing to
     * reset, and no recovery to report). */
    if (RDLM_RW_READERS(v) == 0 || rdlm_rec_count(seg, idx, RDLM_REC_READ, 1) != 0) {
        return;
    }
    if (rdlm_cas(&e->rw_word, &v, (v & (RDLM_RW_WRITER | RDLM_RW_SLEEP)) | epoch,
                 RDLM_SEQ_CST)) {
        rdlm_fetch_add(&lc->stats.recoveries, 1, RDLM_RELAXED);
        rdlm_warn("rwlock \"%s\": %u shared holders died; their count was reset",
                  seg->names[idx], RDLM_RW_READERS(v));
    }
}

/* Holding the gate with the writer bit set: wait until no reader remains. */
static rdlm_status_t rdlm_rwlock_drain_readers(rdlm_local_t *lc, uint32_t idx,
                                               uint64_t deadline)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];
    rdlm_atomic_u32_t parked_self = 0; /* only the gate's holder sleeps on rw_word */
    rdlm_wait_t w;

    rdlm_wait_init_until(&w, &lc->policy, &lc->stats.wait, deadline);
    if (rdlm_local_oversubscribed(lc)) {
        rdlm_wait_stop_spinning(&w);
    }
    for (;;) {
        uint32_t v = rdlm_load(&e->rw_word, RDLM_SEQ_CST);

        if (RDLM_RW_READERS(v) == 0) {
            return RDLM_OK;
        }
        if (rdlm_load(&lc->closing, RDLM_RELAXED)) {
            return RDLM_ERR_CLOSED;
        }
        /* About to sleep: ask the last reader out for a wake (SLEEP, same word). */
        if (w.spins >= lc->policy.spin && w.yields >= lc->policy.yield &&
            !(v & RDLM_RW_SLEEP)) {
            if (!rdlm_cas(&e->rw_word, &v, v | RDLM_RW_SLEEP, RDLM_SEQ_CST)) {
                continue;
            }
            v |= RDLM_RW_SLEEP;
        }
        switch (rdlm_wait_step(&w, &e->rw_word, v, RDLM_WAIT_ALL_BITS, &parked_self)) {
        case RDLM_WAIT_AGAIN:
            break;
        case RDLM_WAIT_CHECK:
            rdlm_rw_reset_dead(lc, idx, rdlm_load(&e->rw_word, RDLM_SEQ_CST));
            break;
        case RDLM_WAIT_TIMEDOUT:
            return RDLM_ERR_TIMEOUT;
        }
    }
}

/* Holding the gate with WRITER set, readers counted before it still in: wait until
 * they left (deadline 0: not read from the clock yet); status is how the gate was
 * got. On failure the gate is released. */
static rdlm_status_t rdlm_rw_write_drain(rdlm_local_t *lc, uint32_t idx,
                                         uint64_t timeout_ns, uint64_t deadline,
                                         rdlm_status_t status)
{
    rdlm_status_t drained = rdlm_rwlock_drain_readers(
        lc, idx, deadline != 0 ? deadline : rdlm_clock_deadline(timeout_ns));

    if (drained != RDLM_OK) {
        rdlm_rwlock_local_write_release(lc, idx);
        rdlm_fetch_add(&lc->stats.timeouts, 1, RDLM_RELAXED);
        return (timeout_ns == 0 && drained == RDLM_ERR_TIMEOUT) ? RDLM_ERR_BUSY : drained;
    }
    return status;
}

rdlm_status_t rdlm_rwlock_local_write_acquire(rdlm_local_t *lc, uint32_t idx,
                                              uint64_t timeout_ns, uint64_t *token_p)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];
    uint64_t deadline = 0; /* read from the clock only when there is a wait */
    rdlm_status_t status, counted = RDLM_ERR_BUSY; /* RDLM_OK once counted as waiting */
    int unused = 0;

    /* A free gate and no readers: two atomics, no clock (a clock read costs two
     * to three times the lock here). */
    status = rdlm_ticket_acquire(lc, idx, 0, token_p);
    if (status == RDLM_ERR_BUSY && timeout_ns != 0) {
        counted = status = rdlm_local_wait_enter(lc);
        if (status == RDLM_OK) {
            deadline = rdlm_clock_deadline(timeout_ns);
            status = rdlm_rw_gate(lc, idx, deadline, token_p, 0, &unused);
        }
    }
    /* Holding the gate (a failure, a timeout say, was counted where it happened):
     * readers counted before the bit must leave; any later reader sees the bit. */
    if ((status == RDLM_OK || status == RDLM_OWNER_DEAD) &&
        RDLM_RW_READERS(rdlm_fetch_or(&e->rw_word, RDLM_RW_WRITER, RDLM_SEQ_CST)) != 0) {
        if (counted != RDLM_OK && timeout_ns != 0) {
            counted = rdlm_local_wait_enter(lc);
        }
        if (counted == RDLM_ERR_CLOSED) {
            rdlm_rwlock_local_write_release(lc, idx);
            status = counted;
        } else {
            status = rdlm_rw_write_drain(lc, idx, timeout_ns, deadline, status);
        }
    }
    if (counted != RDLM_OK) {
        return status;
    }
    return rdlm_local_wait_leave(
        lc, rdlm_local_lock_give_back(lc, idx, status, rdlm_rwlock_local_write_release));
}

rdlm_status_t rdlm_rwlock_local_write_release(rdlm_local_t *lc, uint32_t idx)
{
    return rdlm_rwlock_local_write_release_to(lc, idx, 0);
}

rdlm_status_t rdlm_rwlock_local_write_release_to(rdlm_local_t *lc, uint32_t idx,
                                                 uint32_t to)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];

    if (!rdlm_ticket_held_by_me(lc, idx)) {
        return rdlm_ticket_release(lc, idx); /* NOT_OWNER, and its warning */
    }
    rdlm_fetch_and(&e->rw_word, ~(RDLM_RW_WRITER | RDLM_RW_SLEEP), RDLM_SEQ_CST);
    return rdlm_ticket_release_to(lc, idx, to);
}
