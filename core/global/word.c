/*
 * Remote words of the cross-node layer: home slots (tag + global word) and queue
 * nodes (state + next), each reached through the transport with the peer's key,
 * unpacked on first use. A process's own queue-node state is touched with CPU atomics
 * only when the transport's atomics are CPU-coherent (design invariant 3); otherwise
 * through the transport too (loopback). Home words always go through the transport.
 * Every remote operation is counted (home_ops, peer_ops).
 */
#include "word.h"

#include <time.h>

#include "amq.h"
#include "clock.h"
#include "log.h"

/* How often a busy home process serves its home's remote requests. */
#define RDLM_GLOBAL_SERVE_NS 5000ull

/* Unpack (once) the key in rank's blob at position which (0: qnodes, 1: home). */
static rdlm_status_t rdlm_global_key(rdlm_global_t *d, uint32_t rank, int which,
                                     rdlm_tl_rkey_h *cache, rdlm_tl_rkey_h *key_p)
{
    rdlm_status_t s = RDLM_OK;
    rdlm_tl_rkey_h k = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    const char *blob;
    uint64_t len;

    if (k != 0) {
        *key_p = k;
        return RDLM_OK;
    }
    pthread_mutex_lock(&d->keys_lock);
    k = *cache;
    if (k == 0) {
        blob = d->blobs + ((size_t)rank * 2 + (size_t)which) * (d->blob_len + 8);
        memcpy(&len, blob, sizeof(len));
        if (len == 0 || len > d->blob_len) {
            rdlm_error("dist: rank %u has no %s key", rank, which ? "home" : "queue");
            s = RDLM_ERR_CORRUPT;
        } else {
            s = d->tl->mem->rkey_unpack(d->tl, rank, blob + 8, len, &k);
        }
        if (s == RDLM_OK) {
            __atomic_store_n(cache, k, __ATOMIC_RELEASE);
        }
    }
    pthread_mutex_unlock(&d->keys_lock);
    *key_p = k;
    return s;
}

static rdlm_status_t rdlm_global_qkey(rdlm_global_t *d, uint32_t rank,
                                      rdlm_tl_rkey_h *key_p)
{
    return rdlm_global_key(d, rank, 0, &d->qkeys[rank], key_p);
}

static rdlm_status_t rdlm_global_homekey(rdlm_global_t *d, uint32_t node,
                                         rdlm_tl_rkey_h *key_p)
{
    return rdlm_global_key(d, d->nodes.leader_of[node], 1, &d->homekeys[node], key_p);
}

static void rdlm_global_count(rdlm_atomic_u64_t *counter)
{
    rdlm_fetch_add(counter, 1, RDLM_RELAXED);
}

uint32_t rdlm_global_home_node(const rdlm_global_t *d, uint64_t id)
{
    return (uint32_t)((id >> 17) % d->nodes.nodes);
}

rdlm_status_t rdlm_global_home_open(rdlm_global_t *d, uint64_t id, unsigned kind,
                                    uint32_t *slot_p)
{
    return rdlm_global_home_open_at(d, rdlm_global_home_node(d, id), id, kind, slot_p);
}

/* The tag a home slot holds for id of an object of kind: id with its top bits replaced
 * by the kind (1..7), so that a name opened as another kind on another node meets the
 * slot and is refused instead of sharing its words. */
#define RDLM_GLOBAL_KIND_SHIFT 61
#define RDLM_GLOBAL_KIND_BITS (7ull << RDLM_GLOBAL_KIND_SHIFT)

static uint64_t rdlm_global_home_tag(uint64_t id, unsigned kind)
{
    return (id & ~RDLM_GLOBAL_KIND_BITS) |
           ((uint64_t)(kind & 7u) << RDLM_GLOBAL_KIND_SHIFT);
}

rdlm_status_t rdlm_global_home_open_at(rdlm_global_t *d, uint32_t node, uint64_t id,
                                       unsigned kind, uint32_t *slot_p)
{
    uint32_t start = (uint32_t)(id % d->home_slots);
    uint64_t tag = rdlm_global_home_tag(id, kind);
    rdlm_tl_rkey_h key;
    rdlm_status_t s = rdlm_global_homekey(d, node, &key);

    for (uint32_t i = 0; s == RDLM_OK && i < RDLM_GLOBAL_PROBES && i < d->home_slots; i++) {
        uint32_t slot = (start + i) % d->home_slots;
        uint64_t old;

        s = rdlm_tl_cswap64(d->tl, key, (uint64_t)slot * d->slot_bytes, 0, tag, &old);
        rdlm_global_count(&d->stats.home_ops);
        if (s == RDLM_OK && (old == 0 || old == tag)) {
            *slot_p = slot + 1;
            return RDLM_OK;
        }
        if (s == RDLM_OK && ((old ^ tag) & ~RDLM_GLOBAL_KIND_BITS) == 0) {
            rdlm_error("dist: a name (id %#llx) is open as another kind of object on "
                       "another node (kind %u there, %u here)",
                       (unsigned long long)id, (unsigned)(old >> RDLM_GLOBAL_KIND_SHIFT),
                       kind);
            return RDLM_ERR_KIND_MISMATCH;
        }
    }
    if (s == RDLM_OK) {
        rdlm_error("dist: home node %u has no free slot near %u (RDLM_CAPACITY at the "
                   "home's creator sets the slots)",
                   node, start);
        s = RDLM_ERR_TABLE_FULL;
    }
    return s;
}

rdlm_status_t rdlm_global_home_fix(rdlm_global_t *d, uint64_t id, unsigned kind,
                                   uint64_t value, uint64_t *existing_p)
{
    rdlm_global_word_t w;
    uint32_t slot;
    rdlm_status_t s = rdlm_global_home_open(d, id, kind, &slot);

    if (s != RDLM_OK) {
        return s;
    }
    rdlm_global_word_at(d, id, slot, &w);
    s = rdlm_global_w_cas(d, &w, 0, value, existing_p);
    if (s == RDLM_OK && *existing_p == 0) {
        *existing_p = value;
    }
    return s;
}

void rdlm_global_word_at(const rdlm_global_t *d, uint64_t id, uint64_t slot1,
                         rdlm_global_word_t *w)
{
    w->node = rdlm_global_home_node(d, id);
    w->offset = (slot1 - 1) * d->slot_bytes + 8;
}

void rdlm_global_intent_word(const rdlm_global_t *d, const rdlm_global_word_t *w,
                             uint64_t qid, rdlm_global_word_t *iw)
{
    iw->node = w->node;
    iw->offset = rdlm_global_intents_offset(d) +
                 ((uint64_t)RDLM_QID_RANK(qid) * RDLM_GLOBAL_QNODES + RDLM_QID_INDEX(qid)) *
                     sizeof(uint64_t);
}

void rdlm_global_holder_word(const rdlm_global_word_t *w, rdlm_global_word_t *h)
{
    *h = *w;
    h->offset = w->offset + 8;
}

typedef enum rdlm_global_amo {
    RDLM_GLOBAL_FADD,
    RDLM_GLOBAL_SWAP,
    RDLM_GLOBAL_CAS
} rdlm_global_amo_t;

/* A home process that works on its own home's words completes them at once (the
 * transport's loopback), but the same words' remote requests only while it
 * progresses: busy with its own calls it would leave them to its progress thread,
 * which waits for a free CPU, and a remote waiter starved (2 processes on 2 virtual
 * nodes: 0.1-0.5k hand-offs/s against MPI_Win_lock's 30k). So it progresses first,
 * at most every RDLM_GLOBAL_SERVE_NS. */
void rdlm_global_serve_own(rdlm_global_t *d, const rdlm_global_word_t *w)
{
    uint64_t now;

    if (!d->serves_home || d->nodes.leader_of[w->node] != d->rank) {
        return;
    }
    now = rdlm_clock_now_ns();
    if (now - rdlm_load(&d->served_ns, RDLM_RELAXED) >= RDLM_GLOBAL_SERVE_NS) {
        rdlm_store(&d->served_ns, now, RDLM_RELAXED);
        rdlm_global_progress(d);
    }
}

/* Before one remote atomic on home word w: its home's key, the home served, the
 * operation counted. */
static rdlm_status_t rdlm_global_home_amo_key(rdlm_global_t *d, const rdlm_global_word_t *w,
                                              rdlm_tl_rkey_h *key_p)
{
    rdlm_status_t s = rdlm_global_homekey(d, w->node, key_p);

    if (s == RDLM_OK) {
        rdlm_global_serve_own(d, w);
        rdlm_global_count(&d->stats.home_ops);
    }
    return s;
}

/* One remote atomic on a home word, counted. Its wait progresses the transport, so
 * the lock home's handler may have left answers (amq.h): they go out before the
 * caller goes on, which may be a while (a semaphore's release, then the user's
 * work), since the progress thread may be backing off for up to 1 ms. */
static rdlm_status_t rdlm_global_home_amo(rdlm_global_t *d, const rdlm_global_word_t *w,
                                          rdlm_global_amo_t op, uint64_t a, uint64_t b,
                                          uint64_t *old_p)
{
    rdlm_tl_rkey_h key;
    rdlm_status_t s = rdlm_global_home_amo_key(d, w, &key);

    if (s != RDLM_OK) {
        return s;
    }
    switch (op) {
    case RDLM_GLOBAL_FADD:
        s = rdlm_tl_fadd64(d->tl, key, w->offset, a, old_p);
        break;
    case RDLM_GLOBAL_SWAP:
        s = d->tl->amo->swap64(d->tl, key, w->offset, a, old_p);
        break;
    default:
        s = rdlm_tl_cswap64(d->tl, key, w->offset, a, b, old_p);
        break;
    }
    rdlm_amq_flush(d);
    return s;
}

rdlm_status_t rdlm_global_w_fadd(rdlm_global_t *d, const rdlm_global_word_t *w,
                                 uint64_t add, uint64_t *old_p)
{
    return rdlm_global_home_amo(d, w, RDLM_GLOBAL_FADD, add, 0, old_p);
}

rdlm_status_t rdlm_global_w_swap(rdlm_global_t *d, const rdlm_global_word_t *w,
                                 uint64_t value, uint64_t *old_p)
{
    return rdlm_global_home_amo(d, w, RDLM_GLOBAL_SWAP, value, 0, old_p);
}

rdlm_status_t rdlm_global_w_cas(rdlm_global_t *d, const rdlm_global_word_t *w,
                                uint64_t compare, uint64_t swap, uint64_t *old_p)
{
    return rdlm_global_home_amo(d, w, RDLM_GLOBAL_CAS, compare, swap, old_p);
}

rdlm_status_t rdlm_global_w_cas_post(rdlm_global_t *d, const rdlm_global_word_t *w,
                                     uint64_t compare, uint64_t swap, rdlm_tl_op_t *op)
{
    rdlm_tl_rkey_h key;
    rdlm_status_t s = rdlm_global_home_amo_key(d, w, &key);

    if (s != RDLM_OK) {
        return s;
    }
    rdlm_global_count(&d->stats.home_ops_posted);
    return rdlm_tl_cswap64_post(d->tl, key, w->offset, compare, swap, op);
}

uint64_t rdlm_global_sub_id(uint64_t id, unsigned n)
{
    static const uint64_t mix[] = {0, 0x9e3779b97f4a7c15ull, 0xc2b2ae3d27d4eb4full};
    uint64_t r = id ^ mix[n];

    return r != 0 ? r : n;
}

rdlm_status_t rdlm_global_open_pair(rdlm_global_t *d, rdlm_entry_t *e)
{
    uint64_t id = rdlm_load(&e->key, RDLM_RELAXED), cached = 0;
    unsigned kind = rdlm_load(&e->meta, RDLM_RELAXED) & RDLM_META_KIND;
    uint32_t first, second;
    rdlm_status_t s;

    if (rdlm_load(&e->home_pair1, RDLM_ACQUIRE) != 0) {
        return RDLM_OK;
    }
    s = rdlm_global_home_open(d, id, kind, &first);
    if (s == RDLM_OK) {
        s = rdlm_global_home_open(d, rdlm_global_sub_id(id, 1), kind, &second);
    }
    if (s == RDLM_OK) {
        rdlm_cas(&e->home_pair1, &cached, first | (uint64_t)second << 32, RDLM_RELEASE);
    }
    return s;
}

void rdlm_global_pair_words(const rdlm_global_t *d, const rdlm_entry_t *e,
                            rdlm_global_word_t *first, rdlm_global_word_t *second)
{
    uint64_t id = rdlm_load(&e->key, RDLM_RELAXED);
    uint64_t slots = rdlm_load(&e->home_pair1, RDLM_ACQUIRE);

    rdlm_global_word_at(d, id, (uint32_t)slots, first);
    rdlm_global_word_at(d, rdlm_global_sub_id(id, 1), slots >> 32, second);
}

rdlm_status_t rdlm_global_poll_pause(rdlm_global_t *d, uint64_t *pause_p, uint64_t deadline,
                                     int try_only)
{
    struct timespec ts = {0, (long)*pause_p};

    if (try_only) {
        return RDLM_ERR_BUSY;
    }
    if (deadline != UINT64_MAX && rdlm_clock_now_ns() >= deadline) {
        return RDLM_ERR_TIMEOUT;
    }
    if (rdlm_load(&d->closing, RDLM_RELAXED)) {
        return RDLM_ERR_CLOSED;
    }
    rdlm_global_progress(d);
    nanosleep(&ts, NULL);
    *pause_p =
        *pause_p * 2 < RDLM_GLOBAL_POLL_MAX_NS ? *pause_p * 2 : RDLM_GLOBAL_POLL_MAX_NS;
    return RDLM_OK;
}

rdlm_status_t rdlm_global_home_write(rdlm_global_t *d, const rdlm_global_word_t *w,
                                     uint64_t value)
{
    rdlm_tl_rkey_h key;
    rdlm_status_t s = rdlm_global_homekey(d, w->node, &key);

    if (s == RDLM_OK) {
        s = d->tl->rma->put(d->tl, key, w->offset, &value, sizeof(value));
    }
    return s == RDLM_OK ? d->tl->setup->flush(d->tl, d->nodes.leader_of[w->node]) : s;
}

rdlm_status_t rdlm_global_home_add_post(rdlm_global_t *d, const rdlm_global_word_t *w,
                                        uint64_t add)
{
    rdlm_tl_rkey_h key;
    rdlm_status_t s = rdlm_global_homekey(d, w->node, &key);
    uint64_t old;

    if (s != RDLM_OK) {
        return s;
    }
    /* Not flushed: the caller waits for the peer's answer while progressing, which
     * pushes ours out too; a flush would add a round trip per round. */
    return (d->caps.flags & RDLM_TL_CAP_AMO64_POST)
               ? d->tl->amo->fadd64_post(d->tl, key, w->offset, add)
               : rdlm_tl_fadd64(d->tl, key, w->offset, add, &old);
}

static int rdlm_global_q_mine(const rdlm_global_t *d, uint64_t qid)
{
    return RDLM_QID_RANK(qid) == d->rank && d->caps.atomic_domain == RDLM_TL_ATOMIC_CPU;
}

/* CAS on word `which` (0 state, 1 next) of queue node qid. */
static rdlm_status_t rdlm_global_q_cas_word(rdlm_global_t *d, uint64_t qid, unsigned which,
                                            uint64_t compare, uint64_t swap,
                                            uint64_t *old_p)
{
    rdlm_tl_rkey_h key;
    rdlm_status_t s;

    if (rdlm_global_q_mine(d, qid)) {
        uint64_t expected = compare;

        rdlm_cas(&d->qn[2 * RDLM_QID_INDEX(qid) + which], &expected, swap, RDLM_SEQ_CST);
        *old_p = expected;
        return RDLM_OK;
    }
    s = rdlm_global_qkey(d, RDLM_QID_RANK(qid), &key);
    if (s != RDLM_OK) {
        return s;
    }
    rdlm_global_count(&d->stats.peer_ops);
    return rdlm_tl_cswap64(
        d->tl, key, (uint64_t)RDLM_QID_INDEX(qid) * RDLM_GLOBAL_QNODE_BYTES + 8u * which,
        compare, swap, old_p);
}

rdlm_status_t rdlm_global_q_cas(rdlm_global_t *d, uint64_t qid, uint64_t compare,
                                uint64_t swap, uint64_t *old_p)
{
    return rdlm_global_q_cas_word(d, qid, 0, compare, swap, old_p);
}

rdlm_status_t rdlm_global_q_cas_next(rdlm_global_t *d, uint64_t qid, uint64_t compare,
                                     uint64_t swap, uint64_t *old_p)
{
    return rdlm_global_q_cas_word(d, qid, 1, compare, swap, old_p);
}

rdlm_status_t rdlm_global_q_set_state(rdlm_global_t *d, uint64_t qid, uint64_t value)
{
    rdlm_tl_rkey_h key;
    uint64_t old;
    rdlm_status_t s;

    if (rdlm_global_q_mine(d, qid)) {
        rdlm_store(rdlm_global_q_state(d, RDLM_QID_INDEX(qid)), value, RDLM_SEQ_CST);
        return RDLM_OK;
    }
    s = rdlm_global_qkey(d, RDLM_QID_RANK(qid), &key);
    if (s != RDLM_OK) {
        return s;
    }
    rdlm_global_count(&d->stats.peer_ops);
    return d->tl->amo->swap64(
        d->tl, key, (uint64_t)RDLM_QID_INDEX(qid) * RDLM_GLOBAL_QNODE_BYTES, value, &old);
}

/* Read word `which` (0 state, 1 next) of queue node qid. */
static rdlm_status_t rdlm_global_q_get_word(rdlm_global_t *d, uint64_t qid, unsigned which,
                                            uint64_t *value_p)
{
    rdlm_tl_rkey_h key;
    rdlm_status_t s;

    if (RDLM_QID_RANK(qid) == d->rank) {
        *value_p = rdlm_load(&d->qn[2 * RDLM_QID_INDEX(qid) + which], RDLM_ACQUIRE);
        return RDLM_OK;
    }
    s = rdlm_global_qkey(d, RDLM_QID_RANK(qid), &key);
    if (s != RDLM_OK) {
        return s;
    }
    rdlm_global_count(&d->stats.peer_ops);
    return d->tl->rma->get(
        d->tl, key, (uint64_t)RDLM_QID_INDEX(qid) * RDLM_GLOBAL_QNODE_BYTES + 8u * which,
        value_p, sizeof(*value_p));
}

rdlm_status_t rdlm_global_q_get_next(rdlm_global_t *d, uint64_t qid, uint64_t *next_p)
{
    return rdlm_global_q_get_word(d, qid, 1, next_p);
}

rdlm_status_t rdlm_global_q_get_state(rdlm_global_t *d, uint64_t qid, uint64_t *state_p)
{
    return rdlm_global_q_get_word(d, qid, 0, state_p);
}

rdlm_status_t rdlm_global_bye_send(rdlm_global_t *d, uint32_t rank)
{
    rdlm_tl_rkey_h key;
    uint64_t old;
    rdlm_status_t s = rdlm_global_qkey(d, rank, &key);

    return s != RDLM_OK ? s : rdlm_tl_fadd64(d->tl, key, RDLM_GLOBAL_BYE_OFFSET, 1, &old);
}
