/*
 * The collective barrier of a distributed context:
 *
 *   fan-in    each process stores the generation into its own slot's `coll` word in
 *             the node segment (one padded line per process); the node leader waits
 *             until every local word reached it
 *   exchange  leaders only: dissemination, ceil(log2 nodes) rounds; in round k leader
 *             i puts the generation into flag k of leader (i + 2^k) mod nodes and
 *             waits for its own flag k to reach it. Flags are stamped with the
 *             generation and only grow, so nothing is reset between barriers
 *   fan-out   the leader stores the generation into the segment's coll_release word
 *             and wakes the sleepers; the others wait on it (spin, yield, futex)
 *
 * Split phase: arrive does the process's fan-in store (the leader's arrival is
 * implied) and returns; wait does the rest.
 */
#include "word.h"

#include <stdlib.h>

#include "log.h"

static int rdlm_dist_is_leader(const rdlm_dist_t *d)
{
    return d->nodes.leader_of[d->nodes.node] == d->rank;
}

rdlm_status_t rdlm_dist_attach_node(rdlm_dist_t *d, const rdlm_local_t *lc)
{
    const rdlm_tl_bootstrap_t *bs = d->bootstrap;
    uint32_t mine = lc->seg.self_slot, *all, n = 0;
    const rdlm_tl_idle_t idle = {rdlm_tl_progress_idle, d->tl};
    rdlm_status_t s;

    all = calloc(bs->size, sizeof(*all));
    d->local_slots = calloc(d->nodes.local_size, sizeof(*d->local_slots));
    if (all == NULL || d->local_slots == NULL) {
        free(all);
        return RDLM_ERR_NO_MEMORY;
    }
    s = bs->allgather(bs->arg, &mine, all, sizeof(mine), &idle);
    for (uint32_t r = 0; s == RDLM_OK && r < bs->size; r++) {
        if (d->nodes.node_of[r] == d->nodes.node) {
            d->local_slots[n++] = all[r];
        }
    }
    free(all);
    return s;
}

/* Flag k of this leader (in its home region, after the slots). */
static rdlm_atomic_u64_t *rdlm_dist_flag(rdlm_dist_t *d, uint32_t k)
{
    void *base;
    size_t len;

    d->tl->mem->addr(d->tl, d->homemem, &base, &len);
    return (rdlm_atomic_u64_t *)((char *)base + (size_t)d->home_slots * d->slot_bytes) +
           k;
}

rdlm_status_t rdlm_dist_barrier_arrive(rdlm_dist_t *d, rdlm_local_t *lc)
{
    if (rdlm_load(&d->closing, RDLM_ACQUIRE)) {
        return RDLM_ERR_CLOSED;
    }
    if (d->barrier_arrived) {
        rdlm_warn("barrier: arrive twice without wait");
        return RDLM_ERR_MISMATCH;
    }
    d->barrier_arrived = 1;
    d->barrier_gen++;
    /* Release: everything written before arriving is visible to whoever sees it. */
    rdlm_store(&lc->seg.slots[lc->seg.self_slot].coll, d->barrier_gen, RDLM_RELEASE);
    return RDLM_OK;
}

/* Leader: wait until every process of the node arrived at gen. */
static rdlm_status_t rdlm_dist_fan_in(rdlm_dist_t *d, rdlm_local_t *lc, uint64_t gen)
{
    for (uint32_t i = 0; i < d->nodes.local_size; i++) {
        const rdlm_atomic_u64_t *w = &lc->seg.slots[d->local_slots[i]].coll;
        unsigned spins = 0;

        while (rdlm_load(w, RDLM_ACQUIRE) < gen) {
            if (rdlm_load(&d->closing, RDLM_RELAXED)) {
                return RDLM_ERR_CLOSED;
            }
            rdlm_dist_pause(d, &spins);
        }
    }
    return RDLM_OK;
}

/* Leader: dissemination among the leaders. */
static rdlm_status_t rdlm_dist_exchange(rdlm_dist_t *d, uint64_t gen)
{
    uint32_t nodes = d->nodes.nodes, node = d->nodes.node;

    for (uint32_t k = 0, dist = 1; dist < nodes; k++, dist <<= 1) {
        rdlm_dist_word_t peer = {.node = (node + dist) % nodes,
                                 .offset = (uint64_t)d->home_slots * d->slot_bytes +
                                           k * sizeof(uint64_t)};
        rdlm_atomic_u64_t *mine = rdlm_dist_flag(d, k);
        unsigned spins = 0;
        rdlm_status_t s = rdlm_dist_home_put(d, &peer, gen);

        if (s != RDLM_OK) {
            return s;
        }
        rdlm_fetch_add(&d->stats.barrier_msgs, 1, RDLM_RELAXED);
        while (rdlm_load(mine, RDLM_ACQUIRE) < gen) {
            if (rdlm_load(&d->closing, RDLM_RELAXED)) {
                return RDLM_ERR_CLOSED;
            }
            rdlm_dist_pause(d, &spins);
        }
    }
    /* The flags were written by the progress engine: order our later reads after
     * the peers' writes that preceded their puts. */
    atomic_thread_fence(memory_order_seq_cst);
    return RDLM_OK;
}

/* Non-leader: wait for the leader's release of gen. */
static rdlm_status_t rdlm_dist_await_release(rdlm_dist_t *d, rdlm_local_t *lc, uint64_t gen)
{
    rdlm_seg_header_t *hdr = lc->seg.hdr;
    rdlm_wait_t w;

    rdlm_wait_init(&w, &lc->policy, &lc->stats.wait, UINT64_MAX);
    for (;;) {
        uint32_t rel = rdlm_load(&hdr->coll_release, RDLM_ACQUIRE);

        if ((int32_t)(rel - (uint32_t)gen) >= 0) {
            return RDLM_OK;
        }
        if (rdlm_load(&d->closing, RDLM_RELAXED)) {
            return RDLM_ERR_CLOSED;
        }
        rdlm_wait_step(&w, &hdr->coll_release, rel, RDLM_WAIT_ALL_BITS, &hdr->coll_parked);
    }
}

rdlm_status_t rdlm_dist_barrier_wait(rdlm_dist_t *d, rdlm_local_t *lc)
{
    uint64_t gen = d->barrier_gen;
    rdlm_status_t s;

    if (!d->barrier_arrived) {
        rdlm_warn("barrier: wait without arrive");
        return RDLM_ERR_MISMATCH;
    }
    d->barrier_arrived = 0;
    rdlm_fetch_add(&d->active, 1, RDLM_ACQ_REL);
    if (!rdlm_dist_is_leader(d)) {
        s = rdlm_dist_await_release(d, lc, gen);
    } else {
        s = rdlm_dist_fan_in(d, lc, gen);
        if (s == RDLM_OK) {
            s = rdlm_dist_exchange(d, gen);
        }
        if (s == RDLM_OK) {
            rdlm_store(&lc->seg.hdr->coll_release, (uint32_t)gen, RDLM_SEQ_CST);
            rdlm_wait_wake(&lc->seg.hdr->coll_release, RDLM_WAIT_ALL_BITS,
                           &lc->seg.hdr->coll_parked, &lc->stats.wait);
        }
    }
    if (s == RDLM_OK) {
        rdlm_fetch_add(&d->stats.barriers, 1, RDLM_RELAXED);
    }
    rdlm_fetch_sub(&d->active, 1, RDLM_ACQ_REL);
    return s;
}
