/*
 * Cohort locks: the node-local lock (core/local/ticket.c) in front of the global queue
 * lock (glock.c). Only the node's holder touches the global word; on release it
 * hands the lock to a waiter of its own node, with no remote operation, up to the
 * cohort bound, then passes the global word on.
 *
 * Entry fields of a distributed lock (layout.h; the node-local lock protects
 * queue_node1, cohort_handoffs and token):
 *   home_slot1       home slot + 1 (0: not resolved yet; set once, by CAS, by any
 *                    process)
 *   queue_node1      queue node id + 1 that stands for this node in the global queue
 *                    (0: the node does not hold the global word)
 *   queue_granted    the token the global word was granted with to queue_node1 (its
 *                    release names that use: glock.h's pass)
 *   cohort_handoffs  local hand-offs since the node took the global word
 *   token            the last token issued on this node: epoch << 40 | sequence
 *
 * Settling: a process that leaves the node-local lock free (a release that handed
 * off to a waiter that then timed out, or a waiter that timed out) checks whether
 * the node still holds the global word with nobody left to use it, and passes it on.
 *
 * With lock recovery (leases: d->recovery) in the remote-atomic queue, a waiter on
 * another node takes the lock over once the process that owns the node's queue node
 * is dead and its lease ended, whoever of the node holds the lock through that queue
 * node. So only its owner may: there are no local hand-offs (every release passes the
 * global word on), and a process that finds the queue node of a process that died
 * holding (its local acquire or settle returned RDLM_OWNER_DEAD) leaves that place to
 * the waiters behind it and queues with its own. The home-served queue (amq.h) asks
 * the node instead (rdlm_global_settle_dead below), so there the node keeps its
 * hand-offs under leases, and a process that finds the dead one's place holds through
 * it (RDLM_OWNER_DEAD) as without leases.
 *
 * A context of one node has nobody to share a lock with off the node: the node-local
 * lock is the whole lock, with no home slot and no global word. Its tokens still
 * start at the context's epoch (rdlm_global_node_only_token).
 */
#include "amq.h"
#include "glock.h"

#include "clock.h"
#include "log.h"

static void rdlm_global_word_of(const rdlm_global_t *d, const rdlm_entry_t *e,
                                rdlm_global_word_t *w)
{
    rdlm_global_word_at(d, rdlm_load(&e->key, RDLM_RELAXED),
                        rdlm_load(&e->home_slot1, RDLM_ACQUIRE), w);
}

/* One node: the node-local lock is all of the lock (top of the file). Going through
 * the global word as well made 2 processes of one node pass it through the home on
 * every other hand-off (the releaser found the other not yet queued): 7-8k
 * hand-offs/s. */
int rdlm_global_one_node(const rdlm_global_t *d)
{
    return d->nodes.nodes == 1;
}

/* A node-only acquire's token (holding the lock): the node's next one, but at least
 * the first of the context's epoch, which the authority may have raised after the
 * segment's entries started from the one agreed at create. */
static uint64_t rdlm_global_node_only_token(const rdlm_global_t *d, rdlm_entry_t *e,
                                            uint64_t token)
{
    uint64_t floor = (uint64_t)d->epoch << RDLM_GLOBAL_SEQ_BITS;

    if (token <= floor) {
        token = floor + 1;
        rdlm_store(&e->token, token, RDLM_RELAXED);
    }
    return token;
}

rdlm_status_t rdlm_global_lock_open(rdlm_global_t *d, rdlm_local_t *lc, uint32_t idx)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];
    uint64_t cached = 0;
    uint32_t slot;
    rdlm_status_t s;

    if (rdlm_global_one_node(d) || rdlm_load(&e->home_slot1, RDLM_ACQUIRE) != 0) {
        return RDLM_OK;
    }
    s = rdlm_global_home_open(d, rdlm_load(&e->key, RDLM_RELAXED), RDLM_KIND_LOCK, &slot);
    if (s == RDLM_OK) {
        /* A concurrent opener found the same slot (same id, same probe sequence). */
        rdlm_cas(&e->home_slot1, &cached, slot, RDLM_RELEASE);
    }
    return s;
}

/* Pass the node's global word on (holding the node-local lock); holder_died: a
 * process of the node died holding it, or gives it up as such a holder would
 * (rdlm_glock_pass_dead). */
static rdlm_status_t rdlm_global_node_pass(rdlm_global_t *d, rdlm_entry_t *e,
                                           int holder_died)
{
    uint32_t g = rdlm_load(&e->queue_node1, RDLM_RELAXED);
    uint64_t token = rdlm_load(&e->token, RDLM_RELAXED);
    uint64_t granted = rdlm_load(&e->queue_granted, RDLM_RELAXED);
    rdlm_global_word_t w;

    rdlm_store(&e->queue_node1, 0, RDLM_RELAXED);
    rdlm_store(&e->cohort_handoffs, 0, RDLM_RELAXED);
    rdlm_global_word_of(d, e, &w);
    return holder_died ? rdlm_glock_pass_dead(d, &w, (uint64_t)g - 1, granted, token)
                       : rdlm_glock_pass(d, &w, (uint64_t)g - 1, granted, token);
}

/* The node's queue node + 1 (queue_node1; 0: the node does not hold the global word), if
 * this process may hold the lock through it (holding the node-local lock). Without
 * recovery, or in the home-served queue, any process of the node may; with recovery in
 * the remote-atomic queue only the queue node's owner: another process's place (it
 * died holding) is dropped, for recovery to take over. */
static uint32_t rdlm_global_node_place(rdlm_global_t *d, rdlm_local_t *lc, uint32_t idx)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];
    uint32_t g = rdlm_load(&e->queue_node1, RDLM_RELAXED);

    if (g != 0 && d->recovery.ended != NULL && !d->am_lock &&
        RDLM_QID_RANK((uint64_t)g - 1) != d->rank) {
        rdlm_warn("dist: lock \"%s\": rank %u died holding it; its place in the global "
                  "queue is left to the waiters behind it (they take it over once its "
                  "lease ended)",
                  lc->seg.names[idx], RDLM_QID_RANK((uint64_t)g - 1));
        rdlm_store(&e->queue_node1, 0, RDLM_RELAXED);
        return 0;
    }
    return g;
}

static void rdlm_global_settle(rdlm_global_t *d, rdlm_local_t *lc, uint32_t idx)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];
    rdlm_status_t s;

    if (rdlm_load(&e->queue_node1, RDLM_ACQUIRE) == 0 || !rdlm_ticket_idle(lc, idx)) {
        return;
    }
    s = rdlm_ticket_acquire(lc, idx, 0, NULL);
    if (s != RDLM_OK && s != RDLM_OWNER_DEAD) {
        return; /* someone else took it: their release decides */
    }
    if (rdlm_global_node_place(d, lc, idx) != 0) {
        rdlm_debug("dist: lock \"%s\": nobody left on this node; passing it on",
                   lc->seg.names[idx]);
        /* RDLM_OWNER_DEAD: the last holder here died, or gave the lock up as one that
         * died would (rdlm_global_lock_release's died): the next holder is told. */
        rdlm_global_node_pass(d, e, s == RDLM_OWNER_DEAD);
    }
    rdlm_ticket_release(lc, idx);
}

/* The global part of an acquire (holding the node-local lock; the node does not
 * hold the global word). */
static rdlm_status_t rdlm_global_queue_acquire(rdlm_global_t *d, rdlm_entry_t *e,
                                               uint64_t timeout_ns, uint64_t deadline_ns,
                                               uint64_t *token_p)
{
    /* The local acquire raised the node's token by one: undo for the guess. */
    uint64_t guess = rdlm_load(&e->token, RDLM_RELAXED) - 1, qid, token;
    rdlm_global_word_t w;
    rdlm_status_t s;

    rdlm_global_word_of(d, e, &w);
    if (timeout_ns == 0) {
        s = rdlm_glock_try(d, &w, guess, &qid, &token);
    } else {
        s = rdlm_glock_acquire(d, &w, guess, deadline_ns, &qid, &token);
    }
    if (s != RDLM_OK && s != RDLM_OWNER_DEAD) {
        return s;
    }
    rdlm_store(&e->token, token, RDLM_RELAXED);
    rdlm_store(&e->queue_granted, token, RDLM_RELAXED);
    rdlm_store(&e->queue_node1, (uint32_t)qid + 1, RDLM_RELAXED);
    rdlm_store(&e->cohort_handoffs, 0, RDLM_RELAXED);
    rdlm_fetch_add(&d->stats.global_acquires, 1, RDLM_RELAXED);
    *token_p = token;
    return s; /* RDLM_OWNER_DEAD: taken over from a dead holder (glock.c) */
}

rdlm_status_t rdlm_global_lock_acquire(rdlm_global_t *d, rdlm_local_t *lc, uint32_t idx,
                                       uint64_t timeout_ns, uint64_t *token_p)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];
    uint64_t deadline = timeout_ns == UINT64_MAX || timeout_ns > UINT64_MAX / 2
                            ? UINT64_MAX
                            : rdlm_clock_now_ns() + timeout_ns;
    rdlm_status_t s, local;
    uint64_t token;

    if (rdlm_load(&d->closing, RDLM_ACQUIRE)) {
        rdlm_warn("lock \"%s\": context is being destroyed", lc->seg.names[idx]);
        return RDLM_ERR_CLOSED;
    }
    rdlm_fetch_add(&d->active, 1, RDLM_ACQ_REL);
    local = rdlm_ticket_acquire(lc, idx, timeout_ns, &token);
    if (local != RDLM_OK && local != RDLM_OWNER_DEAD) {
        if (local == RDLM_ERR_TIMEOUT || local == RDLM_ERR_CLOSED) {
            /* A waiter that gives up may have been counted by a releaser that kept
             * the global word for it (spin model: BUG_NO_SETTLE_ON_GIVEUP). */
            rdlm_global_settle(d, lc, idx);
        }
        s = local;
    } else if (rdlm_global_one_node(d)) {
        token = rdlm_global_node_only_token(d, e, token);
        s = local;
    } else if (rdlm_global_node_place(d, lc, idx) != 0) {
        rdlm_fetch_add(&d->stats.local_handoffs, 1, RDLM_RELAXED);
        s = local;
    } else {
        s = rdlm_global_queue_acquire(d, e, timeout_ns, deadline, &token);
        if (s != RDLM_OK && s != RDLM_OWNER_DEAD) {
            rdlm_ticket_release(lc, idx); /* the node holds nothing: plain release */
            rdlm_local_lock_ungrant(lc, s);
        } else if (s == RDLM_OK && d->recovery.ended == NULL) {
            s = local;
        }
        /* With recovery the global lock alone says whether its holder died: a local
         * RDLM_OWNER_DEAD only means the dead node-mate's place was left to the
         * queue, whose waiter behind it took the lock over and reported the death
         * (or this process did, and glock said so). One OWNER_DEAD per death. */
    }
    if ((s == RDLM_OK || s == RDLM_OWNER_DEAD) && rdlm_load(&d->closing, RDLM_ACQUIRE)) {
        /* Granted while the context closes: a node-mate's hand-off, or a grant that
         * reached this waiter before it looked at closing (or crossed its cancel).
         * The destroy would release it under the caller, who would believe it holds:
         * pass it on now (the destroy waits for us) and report the close (rdlm.h,
         * rdlm_ctx_destroy). */
        rdlm_global_lock_release(d, lc, idx, 0);
        rdlm_local_lock_ungrant(lc, RDLM_ERR_CLOSED);
        s = RDLM_ERR_CLOSED;
    }
    if ((s == RDLM_OK || s == RDLM_OWNER_DEAD) && token_p != NULL) {
        *token_p = token;
    }
    rdlm_fetch_sub(&d->active, 1, RDLM_ACQ_REL);
    return s;
}

rdlm_status_t rdlm_global_lock_release(rdlm_global_t *d, rdlm_local_t *lc, uint32_t idx,
                                       int died)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];
    rdlm_status_t s = RDLM_OK, r;
    uint32_t handoffs, to = died ? RDLM_OWNER_DIED : 0;

    if (!rdlm_ticket_held_by_me(lc, idx)) {
        rdlm_warn("lock \"%s\": release by a context that does not hold it",
                  lc->seg.names[idx]);
        return RDLM_ERR_NOT_OWNER;
    }
    rdlm_fetch_add(&d->active, 1, RDLM_ACQ_REL);
    handoffs = rdlm_load(&e->cohort_handoffs, RDLM_RELAXED);
    if (rdlm_load(&e->queue_node1, RDLM_RELAXED) != 0 &&
        handoffs < rdlm_global_cohort_bound(d) && rdlm_ticket_has_waiters(lc, idx)) {
        rdlm_store(&e->cohort_handoffs, handoffs + 1, RDLM_RELAXED);
        r = rdlm_ticket_release_to(lc, idx, to);
        rdlm_global_settle(d, lc, idx);
    } else {
        if (rdlm_load(&e->queue_node1, RDLM_RELAXED) != 0) {
            s = rdlm_global_node_pass(d, e, died);
        }
        r = rdlm_ticket_release_to(lc, idx, to);
    }
    rdlm_fetch_sub(&d->active, 1, RDLM_ACQ_REL);
    return s != RDLM_OK ? s : r;
}

int rdlm_global_lock_node_holds(const rdlm_local_t *lc, uint32_t idx)
{
    return rdlm_load(&lc->seg.entries[idx].queue_node1, RDLM_ACQUIRE) != 0;
}

/* This node's entry of the lock or rwlock whose global word is home slot slot1 - 1 at
 * node home, or UINT32_MAX (a scan: only on the SETTLE path). */
static uint32_t rdlm_global_entry_at(rdlm_global_t *d, rdlm_local_t *lc, uint32_t home,
                                     uint64_t slot1)
{
    for (uint32_t idx = 0; idx < lc->seg.table_size; idx++) {
        rdlm_entry_t *e = &lc->seg.entries[idx];
        uint32_t kind = (uint32_t)rdlm_load(&e->meta, RDLM_RELAXED) & RDLM_META_KIND;
        uint64_t key = rdlm_load(&e->key, RDLM_RELAXED);

        if ((kind == RDLM_KIND_LOCK || kind == RDLM_KIND_RWLOCK) && key != 0 &&
            (uint32_t)rdlm_load(&e->home_slot1, RDLM_ACQUIRE) == slot1 &&
            rdlm_global_home_node(d, key) == home) {
            return idx;
        }
    }
    return UINT32_MAX;
}

/* 1 if this process passed the place (home, slot1, qid) in its use granted on for a
 * SETTLE lately: its REL is under way, and a second one, unflagged, could overtake it
 * (am_lease.pml, flaw 3). */
static int rdlm_global_settle_passed(rdlm_global_t *d, uint32_t home, uint64_t slot1,
                                     uint64_t qid, uint64_t granted, int record)
{
    uint32_t n = sizeof(d->settle_passed) / sizeof(d->settle_passed[0]);

    for (uint32_t i = 0; i < n; i++) {
        if (d->settle_passed[i].home == home && d->settle_passed[i].slot1 == slot1 &&
            d->settle_passed[i].qid == qid && d->settle_passed[i].granted == granted) {
            return 1;
        }
    }
    if (record) {
        d->settle_passed[d->settle_passed_next % n].home = home;
        d->settle_passed[d->settle_passed_next % n].slot1 = slot1;
        d->settle_passed[d->settle_passed_next % n].qid = qid;
        d->settle_passed[d->settle_passed_next % n].granted = granted;
        d->settle_passed_next++;
    }
    return 0;
}

/* Planted bug (RDLMTEST_AMQ_SETTLE_BUSY, tests only): a SETTLE passes the lock on also
 * when a live process of the node holds the node-local lock (the test,
 * global.lock_recovery_cohort_settle_busy_is_caught, must see two holders). */
void rdlm_global_settle_dead(rdlm_global_t *d, uint32_t home, uint64_t slot1, uint64_t qid,
                             uint64_t granted)
{
    rdlm_local_t *lc = d->local;
    uint32_t g1 = (uint32_t)qid + 1, holder = RDLM_QID_RANK(qid);
    uint32_t idx = rdlm_global_entry_at(d, lc, home, slot1), kind;
    /* Gone first, the node's place after: a holder seen gone can no longer take its
     * place, so what the entry says then stays true (am_lease.pml, flaw 2). */
    int gone = rdlm_global_proc_gone(d->procs, holder), held;
    rdlm_global_word_t w;
    rdlm_entry_t *e;
    rdlm_status_t s;

    if (idx == UINT32_MAX) {
        return; /* no entry on this node: none of its processes can have held it */
    }
    e = &lc->seg.entries[idx];
    kind = (uint32_t)rdlm_load(&e->meta, RDLM_RELAXED) & RDLM_META_KIND;
    held = rdlm_load(&e->queue_node1, RDLM_ACQUIRE) == g1;
    if (kind == RDLM_KIND_LOCK && held) {
        /* The node holds the lock through that place: whoever holds the node-local
         * lock (or waits for it) passes it on; if nobody, we do. */
        s = rdlm_ticket_acquire(lc, idx, 0, NULL);
        if (s != RDLM_OK && s != RDLM_OWNER_DEAD && !d->planted_settle_busy) {
            return;
        }
        if (rdlm_load(&e->queue_node1, RDLM_RELAXED) == g1) {
            rdlm_warn("dist: lock \"%s\": a process of this node died; passing the lock on "
                      "for the node%s",
                      lc->seg.names[idx],
                      s == RDLM_OWNER_DEAD ? " (it died holding it: RDLM_OWNER_DEAD)" : "");
            rdlm_global_settle_passed(d, home, slot1, qid,
                                      rdlm_load(&e->queue_granted, RDLM_RELAXED), 1);
            rdlm_global_node_pass(d, e, s == RDLM_OWNER_DEAD);
        }
        rdlm_ticket_release(lc, idx);
        return;
    }
    if (!gone || rdlm_global_settle_passed(d, home, slot1, qid, granted, 0)) {
        return; /* alive: it passes the lock on itself; or our REL is under way */
    }
    /* Gone without the node holding through its place: it died between its grant and
     * taking the node's place (it never used the grant), or it was an rwlock's writer,
     * whose place nobody else uses. */
    if (held) {
        rdlm_cas(&e->queue_node1, &g1, 0, RDLM_RELAXED);
    }
    rdlm_global_word_at(d, rdlm_load(&e->key, RDLM_RELAXED), slot1, &w);
    rdlm_warn("dist: lock \"%s\": rank %u died %s; passing the lock on for this node",
              lc->seg.names[idx], holder, held ? "writing" : "before it took its place");
    /* The use the SETTLE names: if the holder's own REL of it came first, the home
     * ignores this one (am_lease.pml, flaw 6). */
    rdlm_amq_pass(d, &w, qid, granted, rdlm_load(&e->token, RDLM_RELAXED),
                  held ? RDLM_AMQ_F_DEAD : RDLM_AMQ_F_UNUSED);
}
