/*
 * Cross-node counters: one 64-bit word at the name's home; fetch-add and read are one
 * remote fetch-add each. Concurrent fetch-adds of one node are combined (flat
 * combining): each process posts its request in its own segment slot (creq, cdelta);
 * whoever takes the entry's combiner lock collects every pending request of the
 * counter, adds their sum with ONE remote fetch-add, and hands each requester
 * base + (sum of the deltas collected before it) -- so every fetch-add still gets a
 * distinct old value, in a total order. The process whose memory holds the word (the
 * home node's leader) never posts: its own fetch-add is a loopback that completes at
 * once, and atomic against the batches' (one remote fetch-add each), so every old
 * value stays distinct. A sharded counter keeps one word per node at the node's own
 * leader (a fetch-add stays on the node; read sums the shards).
 *
 * A request may also be withdrawn: a requester that finds a batch in flight (another
 * process holds the combiner lock) and takes the node's bypass (counter_bypass 0 -> 1:
 * one such process per node at a time) takes its request back (CAS PENDING -> 0; a
 * combiner takes with CAS PENDING -> TAKEN, so exactly one of them wins) and adds
 * directly. Waiting would cost it the batch's round trip and then its own; this way,
 * with 2 processes per node each has a fetch-add in flight, as without combining,
 * and with more the others still batch (tests/model/counter_combine.pml). A process
 * that dies holding the bypass leaves the node to batches alone.
 *
 * Entry fields (counter kind, distributed): home_slot1 = home slot + 1 (the shard's slot
 * on this node's leader if sharded); counter_flags = RDLM_GLOBAL_COUNTER_SHARDED flag,
 * fixed by the first open; word = the combiner lock (the holder's owner word, 0 when free);
 * counter_bypass = 1 while a process adds directly beside a batch (above).
 * Request states: PENDING (posted) -> TAKEN (in a combiner's batch) -> DONE.
 */
#include "word.h"

#include "log.h"

#define RDLM_CREQ_PENDING 1u
#define RDLM_CREQ_TAKEN 3u
#define RDLM_CREQ_DONE 2u
#define RDLM_CREQ(idx, state) ((((uint64_t)(idx) + 1) << 2) | (state))

static int rdlm_global_counter_sharded(const rdlm_entry_t *e)
{
    return (rdlm_load(&e->counter_flags, RDLM_RELAXED) & RDLM_GLOBAL_COUNTER_SHARDED) != 0;
}

/* The word this process adds to: the counter's home, or this node's shard. */
static void rdlm_global_counter_word(const rdlm_global_t *d, const rdlm_entry_t *e,
                                     rdlm_global_word_t *w)
{
    uint64_t id = rdlm_load(&e->key, RDLM_RELAXED);

    rdlm_global_word_at(d, id, rdlm_load(&e->home_slot1, RDLM_ACQUIRE), w);
    if (rdlm_global_counter_sharded(e)) {
        w->node = d->nodes.node;
    }
}

rdlm_status_t rdlm_global_counter_open(rdlm_global_t *d, rdlm_local_t *lc, uint32_t idx)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];
    uint64_t id = rdlm_load(&e->key, RDLM_RELAXED), cached = 0;
    uint32_t slot;
    rdlm_status_t s;

    if (rdlm_load(&e->home_slot1, RDLM_ACQUIRE) != 0) {
        return RDLM_OK;
    }
    s = rdlm_global_counter_sharded(e)
            ? rdlm_global_home_open_at(d, d->nodes.node, id, RDLM_KIND_COUNTER, &slot)
            : rdlm_global_home_open(d, id, RDLM_KIND_COUNTER, &slot);
    if (s == RDLM_OK) {
        rdlm_cas(&e->home_slot1, &cached, slot, RDLM_RELEASE);
    }
    return s;
}

/* Holding the combiner lock: serve every pending request of counter idx. */
static rdlm_status_t rdlm_global_combine(rdlm_global_t *d, rdlm_local_t *lc, uint32_t idx)
{
    rdlm_segment_t *seg = &lc->seg;
    uint32_t hwm = rdlm_segment_hwm(seg);
    uint64_t total = 0, base, prefix = 0;
    rdlm_global_word_t w;
    rdlm_status_t s;

    for (uint32_t i = 0; i < hwm; i++) {
        uint64_t r = RDLM_CREQ(idx, RDLM_CREQ_PENDING);

        if (rdlm_cas(&seg->slots[i].creq, &r, RDLM_CREQ(idx, RDLM_CREQ_TAKEN), RDLM_ACQUIRE)) {
            total += rdlm_load(&seg->slots[i].cdelta, RDLM_RELAXED);
            if (i != seg->self_slot) {
                rdlm_fetch_add(&d->stats.combined, 1, RDLM_RELAXED);
            }
        }
    }
    rdlm_global_counter_word(d, &seg->entries[idx], &w);
    s = rdlm_global_w_fadd(d, &w, total, &base);
    for (uint32_t i = 0; i < hwm; i++) {
        rdlm_slot_t *slot = &seg->slots[i];

        if (rdlm_load(&slot->creq, RDLM_RELAXED) == RDLM_CREQ(idx, RDLM_CREQ_TAKEN)) {
            /* On a failed fetch-add the result is meaningless: the requester sees the
             * status through cresult's companion below. */
            rdlm_store(&slot->cresult, s == RDLM_OK ? base + prefix : (uint64_t)s, RDLM_RELAXED);
            prefix += rdlm_load(&slot->cdelta, RDLM_RELAXED);
            rdlm_store(&slot->creq,
                       s == RDLM_OK ? RDLM_CREQ(idx, RDLM_CREQ_DONE) : RDLM_CREQ(idx, 0),
                       RDLM_RELEASE);
        }
    }
    return s;
}

rdlm_status_t rdlm_global_counter_fetch_add(rdlm_global_t *d, rdlm_local_t *lc,
                                            uint32_t idx, int64_t delta, int64_t *old_p)
{
    rdlm_segment_t *seg = &lc->seg;
    rdlm_entry_t *e = &seg->entries[idx];
    rdlm_slot_t *mine = &seg->slots[seg->self_slot];
    rdlm_global_word_t w;
    rdlm_status_t s = RDLM_OK;
    unsigned spins = 0;
    uint64_t old;

    rdlm_global_counter_word(d, e, &w);
    /* The home process adds directly: the word is its own memory, so the transport's
     * loopback completes at once, where a batch waits for a node-mate's remote round
     * trip. So does a thread whose process's slot has another thread's request. */
    if (d->nodes.leader_of[w.node] == d->rank ||
        pthread_mutex_trylock(&d->combine_lock) != 0) {
        s = rdlm_global_w_fadd(d, &w, (uint64_t)delta, &old);
        *old_p = (int64_t)old;
        return s;
    }
    rdlm_store(&mine->cdelta, (uint64_t)delta, RDLM_RELAXED);
    rdlm_store(&mine->creq, RDLM_CREQ(idx, RDLM_CREQ_PENDING), RDLM_RELEASE);
    for (int may_withdraw = 1;; may_withdraw = 0) {
        uint64_t r = rdlm_load(&mine->creq, RDLM_ACQUIRE), free_lock = 0;
        uint64_t pending = RDLM_CREQ(idx, RDLM_CREQ_PENDING);
        uint32_t unused = 0;

        if (r == RDLM_CREQ(idx, RDLM_CREQ_DONE) || r == RDLM_CREQ(idx, 0)) {
            s = r == RDLM_CREQ(idx, RDLM_CREQ_DONE)
                    ? RDLM_OK
                    : (rdlm_status_t)(int64_t)rdlm_load(&mine->cresult, RDLM_RELAXED);
            *old_p = (int64_t)rdlm_load(&mine->cresult, RDLM_RELAXED);
            break;
        }
        if (rdlm_cas(&e->word, &free_lock, seg->self_owner, RDLM_ACQUIRE)) {
            rdlm_global_combine(d, lc, idx);
            rdlm_store(&e->word, 0, RDLM_RELEASE);
            continue; /* our own request was pending: it is served now */
        }
        if (may_withdraw && free_lock != 0 && rdlm_cas(&e->counter_bypass, &unused, 1,
                                                      RDLM_ACQUIRE)) {
            int withdrawn = rdlm_cas(&mine->creq, &pending, 0, RDLM_ACQUIRE);

            if (withdrawn) { /* no combiner can take it now */
                s = rdlm_global_w_fadd(d, &w, (uint64_t)delta, &old);
                *old_p = (int64_t)old;
            }
            rdlm_store(&e->counter_bypass, 0, RDLM_RELEASE);
            if (withdrawn) {
                break;
            }
        }
        if (free_lock != 0 && spins > 1000 &&
            !rdlm_segment_owner_alive(seg, (uint32_t)free_lock)) {
            /* The combiner died: take its lock over (its batch is lost to it, not to
             * us: our request is still PENDING or was served before). */
            rdlm_cas(&e->word, &free_lock, 0, RDLM_RELAXED);
        }
        rdlm_global_pause(d, &spins);
    }
    rdlm_store(&mine->creq, 0, RDLM_RELAXED);
    pthread_mutex_unlock(&d->combine_lock);
    return s;
}

rdlm_status_t rdlm_global_counter_read(rdlm_global_t *d, rdlm_local_t *lc, uint32_t idx,
                                       int64_t *value_p)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];
    uint64_t id = rdlm_load(&e->key, RDLM_RELAXED), sum = 0, v;
    rdlm_global_word_t w;
    rdlm_status_t s = RDLM_OK;

    if (!rdlm_global_counter_sharded(e)) {
        rdlm_global_counter_word(d, e, &w);
        s = rdlm_global_w_fadd(d, &w, 0, &v);
        *value_p = (int64_t)v;
        return s;
    }
    for (uint32_t n = 0; s == RDLM_OK && n < d->nodes.nodes; n++) {
        uint32_t slot;

        s = rdlm_global_home_open_at(d, n, id, RDLM_KIND_COUNTER, &slot);
        if (s == RDLM_OK) {
            rdlm_global_word_at(d, id, slot, &w);
            w.node = n;
            s = rdlm_global_w_fadd(d, &w, 0, &v);
            sum += v;
        }
    }
    *value_p = (int64_t)sum;
    return s;
}
