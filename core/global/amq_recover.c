/*
 * Recovery at the home of the home-served queue lock (amq.h), in a context with
 * leases: a process of the node of the lock's holder A died (A itself, or a node-mate
 * that may hold the lock through A's queue node after a cohort hand-off) while
 * someone waits (the home's scan found it gone: for the transport, or by its record
 * on the home's host). Or A is not known dead but held longer than the lease TTL while
 * someone waited (a stopped process is never seen dead: the transport keeps its
 * connection, its host keeps its record): the home asks the authority whether A's
 * lease ended (one FATE round trip, at most every TTL / RDLM_AMQ_ASK_PER_TTL per such
 * lock); once it has, A is fenced (stale token, calls that fail closed, a REL naming a
 * use that no longer holds) and counts as dead below. If a live node-mate remains, its
 * SETTLE finds the node-local lock busy while A holds it: a stopped holder on a node
 * with live mates is not recovered (docs/distributed-locks.md, Limits).
 *
 *   - Some process P of A's node lives (A itself may): any process of the node may hold
 *     the lock through A's queue node (cohort hand-offs), and only the node can tell. The
 * home sends P SETTLE(A, q) at every scan (100 ms) until the lock moves on; P passes it on
 * for the node if nobody of it holds it (rdlm_global_settle_dead, cohort.c), else the one
 * who holds it passes it on at its release.
 *   - Every process of A's node is dead: once the authority says each one's lease
 *     ended (a process past its lease fails closed), the home grants the first waiter
 *     with the first token of a new epoch, above every token the node issued in its
 *     hand-offs, which the home never saw.
 *
 * The next holder's GRANT carries RDLM_AMQ_F_DEAD when the one before died holding
 * (the take-over; a SETTLE that found the node-local lock's holder dead): its acquire
 * returns RDLM_OWNER_DEAD. Spin model: tests/model/am_lease.pml.
 */
#include "amq_home.h"

#include "log.h"

/* The lowest live process of node (the holder itself included) other than fenced (a
 * rank whose lease ended, or UINT32_MAX), or UINT32_MAX. */
static uint32_t rdlm_amq_live_mate(rdlm_global_t *d, uint32_t node, uint32_t fenced)
{
    for (uint32_t r = 0; r < d->nodes.size; r++) {
        if (d->nodes.node_of[r] == node && r != fenced &&
            (r == d->rank || !rdlm_global_rank_gone(d, r))) {
            return r;
        }
    }
    return UINT32_MAX;
}

/* 1 if the authority ended the lease of every process of node. */
static int rdlm_amq_node_ended(rdlm_global_t *d, uint32_t node)
{
    for (uint32_t r = 0; r < d->nodes.size; r++) {
        if (d->nodes.node_of[r] == node && !d->recovery.ended(d->recovery.arg, r)) {
            return 0;
        }
    }
    return 1;
}

/* Grant the first waiter of dead's record with the first token of epoch, if its
 * holder is still the dead one in the same use. */
static void rdlm_amq_take_over(rdlm_global_t *d, const rdlm_amq_dead_t *dead,
                               uint32_t epoch)
{
    struct rdlm_amq_home *h = d->amq_home;
    rdlm_amq_rec_t *rec = &h->recs[dead->slot];
    uint32_t wi;

    pthread_mutex_lock(&h->lock);
    if (rec->holder == dead->holder && rec->granted == dead->granted && rec->head != 0) {
        wi = rec->head - 1;
        rdlm_amq_unlink(h, rec, wi);
        rec->token = (uint64_t)epoch << RDLM_GLOBAL_SEQ_BITS;
        rdlm_amq_grant(d, rec, wi, h->waiters[wi].last_seq, RDLM_AMQ_F_DEAD);
        rdlm_warn("dist: lock home: every process of rank %u's node died or stopped, and "
                  "their leases ended: the lock of home slot %u goes to rank %u with token "
                  "0x%llx (RDLM_OWNER_DEAD)",
                  (dead->holder - 1) / RDLM_GLOBAL_QNODES, dead->slot,
                  wi / RDLM_GLOBAL_QNODES, (unsigned long long)rec->token);
    }
    pthread_mutex_unlock(&h->lock);
}

/* 1 the first time the end of the lease of dead's holder, in the same use, is found
 * (say it once, not at every question while a node-mate cannot pass the lock on). */
static int rdlm_amq_fenced_first(rdlm_global_t *d, const rdlm_amq_dead_t *dead)
{
    struct rdlm_amq_home *h = d->amq_home;
    rdlm_amq_rec_t *rec = &h->recs[dead->slot];
    int first = 0;

    pthread_mutex_lock(&h->lock);
    if (rec->holder == dead->holder && rec->granted == dead->granted && !rec->watch_said) {
        rec->watch_said = 1;
        first = 1;
    }
    pthread_mutex_unlock(&h->lock);
    return first;
}

void rdlm_amq_recover(rdlm_global_t *d, const rdlm_amq_dead_t *dead)
{
    uint32_t rank = (dead->holder - 1) / RDLM_GLOBAL_QNODES, node = d->nodes.node_of[rank];
    uint32_t fenced = UINT32_MAX, mate, epoch;
    rdlm_amq_msg_t m = {.type = RDLM_AMQ_SETTLE,
                        .q = (uint8_t)((dead->holder - 1) % RDLM_GLOBAL_QNODES),
                        .rank = rank,
                        .granted = dead->granted,
                        .offset = (uint64_t)dead->slot * d->slot_bytes + 8};
    rdlm_status_t s;

    if (dead->held_long) {
        /* Nobody of the node is known dead, but the holder held past the TTL: if the
         * authority committed the end of its lease (it is stopped, or cut off), it is
         * fenced (its token is stale, its calls fail closed, its REL names a use that no
         * longer holds) and counts as dead here; else it holds. */
        if (!d->recovery.ended(d->recovery.arg, rank)) {
            return;
        }
        fenced = rank;
        if (rdlm_amq_fenced_first(d, dead)) {
            rdlm_warn("dist: lock home: rank %u has held a lock (home slot %u) with "
                      "waiters past its lease, which the authority ended: recovering it "
                      "as a dead holder's",
                      rank, dead->slot);
        }
    }
    mate = rdlm_amq_live_mate(d, node, fenced);
    if (mate != UINT32_MAX) {
        if (dead->first) {
            rdlm_warn("dist: lock home: a process of the node of rank %u, which holds a "
                      "lock (home slot %u), died; rank %u, on that node, passes it on "
                      "unless a live process there holds it",
                      rank, dead->slot, mate);
        }
        if (mate == d->rank) {
            rdlm_amq_settle_note(d, d->rank, &m);
            return;
        }
        s = d->tl->am->send(d->tl, mate, RDLM_GLOBAL_AM_LOCK_ANS, &m, sizeof(m));
        if (s != RDLM_OK) {
            rdlm_info("dist: lock home: SETTLE to rank %u failed: %s (asked again at the "
                      "next scan)",
                      mate, rdlm_status_str(s));
        }
        return;
    }
    if (dead->first) {
        rdlm_warn("dist: lock home: rank %u died holding a lock (home slot %u) and so did "
                  "every process of its node: its waiters take it over once the authority "
                  "ended their leases",
                  rank, dead->slot);
    }
    if (rdlm_amq_node_ended(d, node) &&
        d->recovery.new_epoch(d->recovery.arg, &epoch) == RDLM_OK) {
        rdlm_amq_take_over(d, dead, epoch);
    }
}
