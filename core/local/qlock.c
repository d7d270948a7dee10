/*
 * The on-node exclusive lock: a ticket lock whose waiters sleep on the `serving` word
 * with a per-ticket futex bit, so a release wakes the next waiter only; with recovery
 * from dead holders and abandoned tickets. Protocol and proof sketch:
 * docs/local-locks.md ("Exclusive lock"); spin model: tests/model/ticket_lock.pml.
 *
 * Entry words used: next, serving, owner, token, died, parked.
 */
#include <stddef.h>

#include "clock.h"
#include "local.h"
#include "log.h"
#include "records.h"

#define RDLM_TRY_CHECK_INTERVAL_NS 10000000ull /* try-acquire looks for dead holders */

/* Wake whoever holds ticket `ticket` (it may be asleep). */
static void rdlm_qlock_wake(rdlm_local_t *lc, rdlm_entry_t *e, uint32_t ticket)
{
    rdlm_wait_wake(&e->serving, rdlm_wait_ticket_bit(ticket), &e->parked,
                   &lc->stats.wait);
}

/* Move serving from s to s + 1 if it is still s; wake the next ticket. */
static int rdlm_qlock_advance(rdlm_local_t *lc, rdlm_entry_t *e, uint32_t s)
{
    if (!rdlm_cas(&e->serving, &s, s + 1, RDLM_SEQ_CST)) {
        return 0;
    }
    rdlm_qlock_wake(lc, e, s + 1);
    return 1;
}

/*
 * Recovery (docs/local-locks.md): pass over a dead holder, or a ticket no live
 * process claims. Safe to run concurrently from many waiters: every step is a CAS.
 * Returns 1 if the lock moved on.
 */
static int rdlm_qlock_recover(rdlm_local_t *lc, uint32_t idx)
{
    rdlm_segment_t *seg = &lc->seg;
    rdlm_entry_t *e = &seg->entries[idx];
    uint64_t o = rdlm_load(&e->owner, RDLM_ACQUIRE);
    uint32_t s;

    if (o != 0) {
        if (rdlm_segment_owner_alive(seg, o)) {
            return 0;
        }
        s = rdlm_load(&e->serving, RDLM_ACQUIRE);
        if (!rdlm_cas(&e->owner, &o, 0, RDLM_SEQ_CST)) {
            return 0;
        }
        rdlm_store(&e->died, 1, RDLM_RELAXED);
        rdlm_fetch_add(&lc->stats.recoveries, 1, RDLM_RELAXED);
        rdlm_warn("lock \"%s\": holder (slot %u) died; passing it on", seg->names[idx],
                  RDLM_OWNER_SLOT(o));
        return rdlm_qlock_advance(lc, e, s);
    }
    s = rdlm_load(&e->serving, RDLM_ACQUIRE);
    if (s == rdlm_load(&e->next, RDLM_ACQUIRE) ||
        rdlm_rec_find_claimant(seg, idx, s) != RDLM_CLAIMANT_NONE) {
        return 0;
    }
    /* A claimant sets owner before freeing its record: re-read owner after the scan. */
    if (rdlm_load(&e->owner, RDLM_SEQ_CST) != 0 || !rdlm_qlock_advance(lc, e, s)) {
        return 0;
    }
    rdlm_fetch_add(&lc->stats.skips, 1, RDLM_RELAXED);
    rdlm_debug("lock \"%s\": ticket %u has no live claimant; passed over", seg->names[idx],
               s);
    return 1;
}

/* try-acquire: one ticket if the lock is free right now. */
static int rdlm_qlock_try_ticket(rdlm_entry_t *e, uint32_t *ticket_p)
{
    uint32_t n = rdlm_load(&e->next, RDLM_ACQUIRE);

    if (rdlm_load(&e->serving, RDLM_ACQUIRE) != n ||
        !rdlm_cas(&e->next, &n, n + 1, RDLM_SEQ_CST)) {
        return 0;
    }
    *ticket_p = n;
    return 1;
}

/* A busy try-acquire looks for a dead holder now and then (a lock whose holder died
 * must not stay busy forever for callers that only ever try). */
static int rdlm_qlock_try_recover(rdlm_local_t *lc, uint32_t idx)
{
    uint64_t now = rdlm_clock_now_ns();
    uint64_t due = rdlm_load(&lc->next_try_check_ns, RDLM_RELAXED);

    if (now < due ||
        !rdlm_cas(&lc->next_try_check_ns, &due, now + RDLM_TRY_CHECK_INTERVAL_NS,
                  RDLM_RELAXED)) {
        return 0;
    }
    return rdlm_qlock_recover(lc, idx);
}

/* Wait until serving == t. Returns RDLM_OK or RDLM_ERR_TIMEOUT (ticket given up). */
static rdlm_status_t rdlm_qlock_wait(rdlm_local_t *lc, uint32_t idx, uint32_t t,
                                     rdlm_atomic_u64_t *rec, uint64_t timeout_ns)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];
    rdlm_wait_t w;
    uint32_t s;

    rdlm_fetch_add(&lc->stats.contended, 1, RDLM_RELAXED);
    rdlm_wait_init(&w, &lc->policy, &lc->stats.wait, timeout_ns);
    while ((s = rdlm_load(&e->serving, RDLM_ACQUIRE)) != t) {
        switch (rdlm_wait_step(&w, &e->serving, s, rdlm_wait_ticket_bit(t), &e->parked)) {
        case RDLM_WAIT_AGAIN:
            break;
        case RDLM_WAIT_CHECK:
            rdlm_qlock_recover(lc, idx);
            break;
        case RDLM_WAIT_TIMEDOUT:
            /* Give the place up; never take it after the record is gone. */
            rdlm_store(rec, 0, RDLM_SEQ_CST);
            rdlm_qlock_advance(lc, e, t);
            rdlm_fetch_add(&lc->stats.timeouts, 1, RDLM_RELAXED);
            return RDLM_ERR_TIMEOUT;
        }
    }
    return RDLM_OK;
}

rdlm_status_t rdlm_qlock_acquire(rdlm_local_t *lc, uint32_t idx, uint64_t timeout_ns,
                                 uint64_t *token_p)
{
    rdlm_segment_t *seg = &lc->seg;
    rdlm_entry_t *e = &seg->entries[idx];
    rdlm_atomic_u64_t *rec;
    rdlm_status_t status;
    uint64_t token;
    uint32_t t;
    int r;

    r = rdlm_rec_claim(seg, RDLM_REC_MAKE(RDLM_REC_PENDING, idx, 0));
    if (r < 0) {
        rdlm_error("lock \"%s\": this context already uses all %d wait records",
                   seg->names[idx], RDLM_SLOT_RECORDS);
        return RDLM_ERR_NO_RESOURCE;
    }
    rec = rdlm_rec_at(seg, r);
    if (timeout_ns == 0) {
        if (!rdlm_qlock_try_ticket(e, &t) &&
            !(rdlm_qlock_try_recover(lc, idx) && rdlm_qlock_try_ticket(e, &t))) {
            rdlm_store(rec, 0, RDLM_RELEASE);
            return RDLM_ERR_BUSY;
        }
        rdlm_store(rec, RDLM_REC_MAKE(RDLM_REC_WAITING, idx, t), RDLM_SEQ_CST);
    } else {
        t = rdlm_fetch_add(&e->next, 1, RDLM_SEQ_CST);
        rdlm_store(rec, RDLM_REC_MAKE(RDLM_REC_WAITING, idx, t), RDLM_SEQ_CST);
        if (rdlm_load(&e->serving, RDLM_ACQUIRE) != t) {
            status = rdlm_qlock_wait(lc, idx, t, rec, timeout_ns);
            if (status != RDLM_OK) {
                return status;
            }
        }
    }
    /* Holder: owner first, record last (recovery relies on this order). */
    rdlm_store(&e->owner, seg->self_owner, RDLM_SEQ_CST);
    token = rdlm_fetch_add(&e->token, 1, RDLM_RELAXED) + 1;
    status = rdlm_exchange(&e->died, 0, RDLM_RELAXED) ? RDLM_OWNER_DEAD : RDLM_OK;
    rdlm_store(rec, 0, RDLM_SEQ_CST);
    rdlm_fetch_add(&lc->stats.acquires, 1, RDLM_RELAXED);
    if (token_p != NULL) {
        *token_p = token;
    }
    return status;
}

rdlm_status_t rdlm_qlock_release(rdlm_local_t *lc, uint32_t idx)
{
    rdlm_segment_t *seg = &lc->seg;
    rdlm_entry_t *e = &seg->entries[idx];
    uint64_t me = seg->self_owner;
    /* Stable while we hold: read it before owner := 0 lets recovery move it. */
    uint32_t s = rdlm_load(&e->serving, RDLM_RELAXED);

    if (!rdlm_cas(&e->owner, &me, 0, RDLM_SEQ_CST)) {
        rdlm_warn("lock \"%s\": release by a context that does not hold it",
                  seg->names[idx]);
        return RDLM_ERR_NOT_OWNER;
    }
    rdlm_qlock_advance(lc, e, s);
    return RDLM_OK;
}

int rdlm_qlock_held_by_me(const rdlm_local_t *lc, uint32_t idx)
{
    return rdlm_load(&lc->seg.entries[idx].owner, RDLM_ACQUIRE) == lc->seg.self_owner;
}
