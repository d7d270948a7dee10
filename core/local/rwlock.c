/*
 * The on-node reader-writer lock: the ticket lock is a FIFO gate; readers pass it and
 * leave a READ record; a writer keeps the gate and waits until no live process has a
 * READ record. Arrival order through the gate means a waiting writer is never
 * overtaken by later readers. docs/local-locks.md ("Reader-writer lock").
 *
 * Entry words used: those of the gate (qlock.c), wake32 (reader departures, the futex
 * word a writer sleeps on), parked.
 */
#include "clock.h"
#include "local.h"
#include "log.h"
#include "records.h"

rdlm_status_t rdlm_rwlock_local_read_enter(rdlm_local_t *lc, uint32_t idx)
{
    rdlm_segment_t *seg = &lc->seg;

    if (rdlm_rec_claim(seg, RDLM_REC_MAKE(RDLM_REC_READ, idx, 0)) < 0) {
        rdlm_error("rwlock \"%s\": this context holds too many shared locks (%d records)",
                   seg->names[idx], RDLM_SLOT_RECORDS);
        return RDLM_ERR_NO_RESOURCE;
    }
    return RDLM_OK;
}

rdlm_status_t rdlm_rwlock_local_read_acquire(rdlm_local_t *lc, uint32_t idx,
                                             uint64_t timeout_ns)
{
    rdlm_status_t status = rdlm_qlock_acquire(lc, idx, timeout_ns, NULL);
    rdlm_status_t entered;

    if (status != RDLM_OK && status != RDLM_OWNER_DEAD) {
        return status;
    }
    entered = rdlm_rwlock_local_read_enter(lc, idx);
    rdlm_qlock_release(lc, idx);
    return entered != RDLM_OK ? entered : status;
}

rdlm_status_t rdlm_rwlock_local_read_release(rdlm_local_t *lc, uint32_t idx)
{
    rdlm_segment_t *seg = &lc->seg;
    rdlm_entry_t *e = &seg->entries[idx];
    uint64_t read = RDLM_REC_MAKE(RDLM_REC_READ, idx, 0);

    for (int r = 0; r < RDLM_SLOT_RECORDS; r++) {
        uint64_t expected = read;

        if (rdlm_cas(rdlm_rec_at(seg, r), &expected, 0, RDLM_RELEASE)) {
            rdlm_fetch_add(&e->wake32, 1, RDLM_SEQ_CST);
            rdlm_wait_wake(&e->wake32, RDLM_WAIT_ALL_BITS, &e->parked, &lc->stats.wait);
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

/* Holding the gate: wait until no live reader remains. */
static rdlm_status_t rdlm_rwlock_drain_readers(rdlm_local_t *lc, uint32_t idx,
                                               uint64_t deadline)
{
    rdlm_segment_t *seg = &lc->seg;
    rdlm_entry_t *e = &seg->entries[idx];
    rdlm_wait_t w;

    rdlm_wait_init_until(&w, &lc->policy, &lc->stats.wait, deadline);
    for (;;) {
        uint32_t departures = rdlm_load(&e->wake32, RDLM_SEQ_CST);

        if (rdlm_rec_count(seg, idx, RDLM_REC_READ, 0) == 0) {
            return RDLM_OK;
        }
        switch (
            rdlm_wait_step(&w, &e->wake32, departures, RDLM_WAIT_ALL_BITS, &e->parked)) {
        case RDLM_WAIT_AGAIN:
            break;
        case RDLM_WAIT_CHECK: /* dead readers' records do not count */
            if (rdlm_rec_count(seg, idx, RDLM_REC_READ, 1) == 0) {
                return RDLM_OK;
            }
            break;
        case RDLM_WAIT_TIMEDOUT:
            return RDLM_ERR_TIMEOUT;
        }
    }
}

rdlm_status_t rdlm_rwlock_local_write_acquire(rdlm_local_t *lc, uint32_t idx,
                                              uint64_t timeout_ns, uint64_t *token_p)
{
    uint64_t deadline = rdlm_clock_deadline(timeout_ns);
    rdlm_status_t status = rdlm_qlock_acquire(lc, idx, timeout_ns, token_p);
    rdlm_status_t drained;

    if (status != RDLM_OK && status != RDLM_OWNER_DEAD) {
        return status;
    }
    drained = rdlm_rwlock_drain_readers(lc, idx, deadline);
    if (drained != RDLM_OK) {
        rdlm_qlock_release(lc, idx);
        rdlm_fetch_add(&lc->stats.timeouts, 1, RDLM_RELAXED);
        return (timeout_ns == 0) ? RDLM_ERR_BUSY : drained;
    }
    return status;
}
