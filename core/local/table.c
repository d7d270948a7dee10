/* Open-addressing object table with retired entries (see table.h, docs/local-locks.md). */
#include "table.h"

#include <string.h>

#include "hash.h"
#include "log.h"

uint64_t rdlm_table_id(const char *name)
{
    return rdlm_hash_name(name);
}

/* The name of the kind in meta, for messages. */
static const char *rdlm_table_kind_name(uint32_t meta)
{
    static const char *const names[] = {
        [RDLM_KIND_LOCK] = "lock",       [RDLM_KIND_RWLOCK] = "rwlock",
        [RDLM_KIND_COUNTER] = "counter", [RDLM_KIND_BARRIER] = "barrier",
        [RDLM_KIND_SEMAPHORE] = "semaphore"};
    uint32_t kind = meta & RDLM_META_KIND;

    return kind < sizeof(names) / sizeof(names[0]) && names[kind] ? names[kind] : "?";
}

/* Home position of id in a table of size n (multiply-shift range reduction). */
static uint32_t rdlm_table_home(uint64_t id, uint32_t n)
{
    return (uint32_t)(((unsigned __int128)id * n) >> 64);
}

static uint32_t rdlm_table_next(const rdlm_segment_t *seg, uint32_t idx)
{
    return idx + 1 == seg->table_size ? 0 : idx + 1;
}

static unsigned rdlm_table_phase(const rdlm_segment_t *seg, uint32_t idx)
{
    return RDLM_STATE_PHASE(rdlm_load(&seg->entries[idx].state, RDLM_ACQUIRE));
}

static void rdlm_table_unpin(rdlm_segment_t *seg, uint32_t idx, int locked, int discard);

/* The floor word of id's bucket. */
static rdlm_atomic_u64_t *rdlm_table_floor(rdlm_segment_t *seg, uint64_t id)
{
    return &seg->hdr->floor[id % RDLM_FLOOR_BUCKETS];
}

/* Holding the creation lock: key entry idx (FREE or RETIRED) as name, pinned once:
 * CREATING (gen + 1) first, so that a lookup that read the old state cannot pin it;
 * then the fields, the first token above the name's floor, and LIVE (release). */
static void rdlm_table_key(rdlm_segment_t *seg, uint32_t idx, uint64_t id, const char *name,
                           unsigned kind, uint32_t size, int keep)
{
    rdlm_entry_t *e = &seg->entries[idx];
    uint32_t gen = RDLM_STATE_GEN(rdlm_load(&e->state, RDLM_RELAXED)) + 1;
    uint64_t epoch_base = (uint64_t)seg->hdr->epoch << 40;
    uint64_t floor = (seg->planted & RDLM_PLANTED_NO_FLOOR)
                         ? 0
                         : rdlm_load(rdlm_table_floor(seg, id), RDLM_RELAXED);

    rdlm_store(&seg->hdr->create_idx, idx, RDLM_RELAXED);
    rdlm_store(&e->state, RDLM_STATE_MAKE(gen, RDLM_PHASE_CREATING, 0), RDLM_SEQ_CST);
    rdlm_store(&e->key, id, RDLM_RELEASE);
    strncpy(seg->names[idx], name, RDLM_NAME_BYTES - 1);
    seg->names[idx][RDLM_NAME_BYTES - 1] = '\0';
    rdlm_store(&e->parked, 0, RDLM_RELAXED);
    rdlm_store(&e->word, 0, RDLM_RELAXED);
    rdlm_store(&e->token, floor > epoch_base ? floor : epoch_base, RDLM_RELAXED);
    rdlm_store(&e->kind_word64, 0, RDLM_RELAXED);
    rdlm_store(&e->kind_tail64, 0, RDLM_RELAXED);
    rdlm_store(&e->fixed_size, size, RDLM_RELAXED);
    rdlm_store(&e->kind_word32, 0, RDLM_RELAXED);
    rdlm_store(&e->meta, (kind & (RDLM_META_KIND | RDLM_META_FIFO)) | RDLM_META_READY,
               RDLM_RELAXED);
    rdlm_store(&e->state,
               RDLM_STATE_MAKE(gen, RDLM_PHASE_LIVE, (keep ? RDLM_STATE_KEEP : 0) | 1),
               RDLM_RELEASE);
    rdlm_store(&seg->hdr->create_idx, RDLM_TABLE_NONE, RDLM_RELAXED);
}

/* Pin entry idx if it is live and keyed id: opens + 1 by CAS from the state whose
 * key was read, so a re-key since (gen + 1) fails it. 1 if pinned; 0 if not live
 * or not id; -1 if its opens are at their maximum. */
static int rdlm_table_pin(rdlm_segment_t *seg, uint32_t idx, uint64_t id, int keep)
{
    rdlm_entry_t *e = &seg->entries[idx];
    uint64_t s = rdlm_load(&e->state, RDLM_ACQUIRE);

    for (;;) {
        if (RDLM_STATE_PHASE(s) != RDLM_PHASE_LIVE ||
            rdlm_load(&e->key, RDLM_ACQUIRE) != id) {
            return 0;
        }
        if (RDLM_STATE_OPENS(s) == RDLM_STATE_OPENS_MAX) {
            return -1;
        }
        if (rdlm_cas(&e->state, &s, (s + 1) | (keep ? RDLM_STATE_KEEP : 0), RDLM_ACQ_REL)) {
            return 1;
        }
    }
}

/* Pinned entry idx keyed id: RDLM_OK if it is name, of kind (and order, if asked);
 * RDLM_INPROGRESS if another name with the same id (unpinned again); else the
 * mismatch (unpinned, logged). locked: the caller holds the creation lock. */
static rdlm_status_t rdlm_table_check(rdlm_segment_t *seg, uint32_t idx, const char *name,
                                      unsigned kind, int locked)
{
    uint32_t meta = rdlm_load(&seg->entries[idx].meta, RDLM_ACQUIRE);

    if (strncmp(seg->names[idx], name, RDLM_NAME_BYTES) != 0) {
        rdlm_table_unpin(seg, idx, locked, 0);
        return RDLM_INPROGRESS;
    }
    if ((meta & RDLM_META_KIND) != (kind & RDLM_META_KIND)) {
        rdlm_table_unpin(seg, idx, locked, 0);
        rdlm_error("\"%s\" exists as a %s, opened as a %s", name,
                   rdlm_table_kind_name(meta), rdlm_table_kind_name(kind));
        return RDLM_ERR_KIND_MISMATCH;
    }
    if ((kind & RDLM_META_ORDER_SET) && ((meta ^ kind) & RDLM_META_FIFO)) {
        rdlm_table_unpin(seg, idx, locked, 0);
        rdlm_error("lock \"%s\" exists as a %s lock, opened as a %s one", name,
                   (meta & RDLM_META_FIFO) ? "FIFO" : "bounded-bypass",
                   (kind & RDLM_META_FIFO) ? "FIFO" : "bounded-bypass");
        return RDLM_ERR_KIND_MISMATCH;
    }
    return RDLM_OK;
}

/* Walk id's probe chain from its home to the first FREE entry, pinning the live entry
 * of name. RDLM_OK (*index_p pinned), a mismatch, RDLM_ERR_NO_RESOURCE, or
 * RDLM_INPROGRESS: not live here; then *free_p is the first RETIRED entry of the
 * chain, else its FREE end (RDLM_TABLE_NONE if the walk found neither). locked: the
 * caller holds the creation lock. */
static rdlm_status_t rdlm_table_find(rdlm_segment_t *seg, const char *name, unsigned kind,
                                     int keep, int locked, uint32_t *index_p,
                                     uint32_t *free_p)
{
    uint64_t id = rdlm_table_id(name);
    uint32_t idx = rdlm_table_home(id, seg->table_size);

    *free_p = RDLM_TABLE_NONE;
    for (uint32_t probes = 0; probes < seg->table_size; probes++) {
        unsigned phase = rdlm_table_phase(seg, idx);
        int pinned;

        if (phase == RDLM_PHASE_FREE) {
            *free_p = *free_p == RDLM_TABLE_NONE ? idx : *free_p;
            return RDLM_INPROGRESS;
        }
        if (phase == RDLM_PHASE_RETIRED && *free_p == RDLM_TABLE_NONE) {
            *free_p = idx;
        }
        pinned = rdlm_table_pin(seg, idx, id, keep);
        if (pinned < 0) {
            rdlm_error("\"%s\": opened %llu times at once", name,
                       (unsigned long long)RDLM_STATE_OPENS_MAX);
            return RDLM_ERR_NO_RESOURCE;
        }
        if (pinned) {
            rdlm_status_t status = rdlm_table_check(seg, idx, name, kind, locked);

            if (status != RDLM_INPROGRESS) {
                *index_p = idx;
                return status;
            }
        }
        idx = rdlm_table_next(seg, idx);
    }
    return RDLM_INPROGRESS;
}

/* Holding the creation lock: sweep every probe chain's retired tail (a full table). */
static void rdlm_table_trim_all(rdlm_segment_t *seg)
{
    for (uint32_t idx = 0; idx < seg->table_size; idx++) {
        if (rdlm_table_phase(seg, idx) == RDLM_PHASE_FREE) {
            rdlm_table_trim(seg, idx == 0 ? seg->table_size - 1 : idx - 1);
        }
    }
}

/* Holding the creation lock: find name again, else key a retired entry of its chain,
 * else its FREE end if the table has room (after a sweep if it had none). */
static rdlm_status_t rdlm_table_create(rdlm_segment_t *seg, const char *name, unsigned kind,
                                       uint32_t size, int keep, uint32_t *index_p)
{
    rdlm_seg_header_t *hdr = seg->hdr;
    uint32_t target;

    for (int swept = 0;; swept++) {
        rdlm_status_t status = rdlm_table_find(seg, name, kind, keep, 1, index_p, &target);

        if (status != RDLM_INPROGRESS) {
            return status;
        }
        if (target != RDLM_TABLE_NONE &&
            (rdlm_table_phase(seg, target) == RDLM_PHASE_RETIRED ||
             rdlm_load(&hdr->used, RDLM_RELAXED) < hdr->capacity)) {
            break;
        }
        if (swept) {
            rdlm_error(
                "%s/%s: table full (%u objects; raise RDLM_CAPACITY for the creator)",
                seg->place.dir, seg->seg_name, hdr->capacity);
            return RDLM_ERR_TABLE_FULL;
        }
        rdlm_table_trim_all(seg);
    }
    if (rdlm_table_phase(seg, target) == RDLM_PHASE_FREE) {
        rdlm_fetch_add(&hdr->used, 1, RDLM_RELAXED);
    }
    rdlm_table_key(seg, target, rdlm_table_id(name), name, kind, size, keep);
    *index_p = target;
    return RDLM_OK;
}

rdlm_status_t rdlm_table_open(rdlm_segment_t *seg, const char *name, unsigned kind,
                              uint32_t size, int keep, uint32_t *index_p)
{
    uint32_t target;
    rdlm_status_t status = rdlm_table_find(seg, name, kind, keep, 0, index_p, &target);

    if (status != RDLM_INPROGRESS) {
        return status;
    }
    rdlm_table_lock(seg);
    status = rdlm_table_create(seg, name, kind, size, keep, index_p);
    rdlm_table_unlock(seg);
    return status;
}

void rdlm_table_trim(rdlm_segment_t *seg, uint32_t idx)
{
    rdlm_entry_t *e;

    while (rdlm_table_phase(seg, idx) == RDLM_PHASE_RETIRED &&
           rdlm_table_phase(seg, rdlm_table_next(seg, idx)) == RDLM_PHASE_FREE) {
        e = &seg->entries[idx];
        rdlm_store(&e->key, 0, RDLM_RELAXED);
        rdlm_store(&e->state,
                   RDLM_STATE_MAKE(RDLM_STATE_GEN(rdlm_load(&e->state, RDLM_RELAXED)),
                                   RDLM_PHASE_FREE, 0),
                   RDLM_RELEASE);
        rdlm_fetch_sub(&seg->hdr->used, 1, RDLM_RELAXED);
        idx = idx == 0 ? seg->table_size - 1 : idx - 1;
    }
}

/* (table.h) After the retire, not before: a process may pin the entry, take tokens
 * and close it again between a read of the token and a retire CAS whose state word is
 * then the same again (tests/model/table_reuse.pml found it). */
void rdlm_table_raise_floor(rdlm_segment_t *seg, rdlm_entry_t *e)
{
    rdlm_atomic_u64_t *floor = rdlm_table_floor(seg, rdlm_load(&e->key, RDLM_RELAXED));
    uint64_t last = rdlm_load(&e->token, RDLM_ACQUIRE);

    if (last > rdlm_load(floor, RDLM_RELAXED)) {
        rdlm_store(floor, last, RDLM_RELAXED);
    }
}

/* A lock or rwlock nobody holds, waits for or sleeps on: it may be retired. */
static int rdlm_table_idle(const rdlm_entry_t *e)
{
    uint32_t meta = rdlm_load(&e->meta, RDLM_RELAXED);
    uint32_t kind = meta & RDLM_META_KIND;
    uint64_t w = rdlm_load(&e->word, RDLM_ACQUIRE);
    int word_free = RDLM_OWNER_IS_NOBODY(RDLM_WORD_OWNER(w)) &&
                    ((meta & RDLM_META_FIFO) || kind == RDLM_KIND_RWLOCK
                         ? RDLM_WORD_NEXT(w) == RDLM_WORD_SERVING(w)
                         : RDLM_MUTEX_HEIR(w) == 0);

    if (kind == RDLM_KIND_RWLOCK &&
        (RDLM_RW_READERS(rdlm_load(&e->rw_word, RDLM_RELAXED)) != 0 ||
         (rdlm_load(&e->rw_word, RDLM_RELAXED) & RDLM_RW_WRITER) != 0)) {
        return 0;
    }
    return (kind == RDLM_KIND_LOCK || kind == RDLM_KIND_RWLOCK) && word_free &&
           rdlm_load(&e->parked, RDLM_RELAXED) == 0;
}

/* The state after one close from s: opens - 1, or RETIRED if that was the last open of
 * an idle, retirable entry (or of any entry, discard) and the creation lock is held
 * (locked). */
static uint64_t rdlm_table_closed(const rdlm_segment_t *seg, const rdlm_entry_t *e,
                                  uint64_t s, int locked, int discard)
{
    uint64_t last = (seg->planted & RDLM_PLANTED_RETIRE_OPEN) ? RDLM_STATE_OPENS(s) : 1;

    if (locked && RDLM_STATE_OPENS(s) == last &&
        (discard || (!(s & RDLM_STATE_KEEP) && rdlm_table_idle(e)))) {
        return RDLM_STATE_MAKE(RDLM_STATE_GEN(s), RDLM_PHASE_RETIRED, 0);
    }
    return s - 1;
}

/* 1 if closing from s may retire the entry (so the close takes the creation lock). */
static int rdlm_table_may_retire(const rdlm_segment_t *seg, const rdlm_entry_t *e,
                                 uint64_t s)
{
    uint32_t kind = rdlm_load(&e->meta, RDLM_RELAXED) & RDLM_META_KIND;

    return (RDLM_STATE_OPENS(s) == 1 || (seg->planted & RDLM_PLANTED_RETIRE_OPEN)) &&
           !(s & RDLM_STATE_KEEP) && (kind == RDLM_KIND_LOCK || kind == RDLM_KIND_RWLOCK);
}

/* One close of entry idx; locked: the caller holds the creation lock (else it is
 * taken here if the close may retire the entry); discard: retire it if this is its last
 * open, whatever its kind and KEEP (rdlm_table_discard). */
static void rdlm_table_unpin(rdlm_segment_t *seg, uint32_t idx, int locked, int discard)
{
    rdlm_entry_t *e = &seg->entries[idx];
    uint64_t s = rdlm_load(&e->state, RDLM_ACQUIRE), next;
    int took = 0, retired = 0;

    for (;;) {
        if (RDLM_STATE_PHASE(s) != RDLM_PHASE_LIVE || RDLM_STATE_OPENS(s) == 0) {
            rdlm_error("entry %u: closed while not open (state %#llx); left alone", idx,
                       (unsigned long long)s);
            break;
        }
        if (!locked && (discard || rdlm_table_may_retire(seg, e, s))) {
            rdlm_table_lock(seg);
            locked = took = 1;
            s = rdlm_load(&e->state, RDLM_ACQUIRE);
            continue;
        }
        next = rdlm_table_closed(seg, e, s, locked, discard);
        if (RDLM_STATE_PHASE(next) == RDLM_PHASE_RETIRED) {
            /* A taker-over of the lock raises the floor if this process dies now. */
            rdlm_store(&seg->hdr->create_idx, idx, RDLM_RELAXED);
        }
        if (rdlm_cas(&e->state, &s, next, RDLM_ACQ_REL)) {
            retired = RDLM_STATE_PHASE(next) == RDLM_PHASE_RETIRED;
            break;
        }
    }
    if (retired) {
        rdlm_table_raise_floor(seg, e);
        rdlm_table_trim(seg, idx);
    }
    if (locked) {
        rdlm_store(&seg->hdr->create_idx, RDLM_TABLE_NONE, RDLM_RELAXED);
    }
    if (took) {
        rdlm_table_unlock(seg);
    }
}

void rdlm_table_close(rdlm_segment_t *seg, uint32_t idx)
{
    rdlm_table_unpin(seg, idx, 0, 0);
}

void rdlm_table_discard(rdlm_segment_t *seg, uint32_t idx)
{
    rdlm_table_unpin(seg, idx, 0, 1);
}
