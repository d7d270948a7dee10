/* Slot records and the scans over them (see records.h). */
#include "records.h"

#include "log.h"

int rdlm_rec_claim(rdlm_segment_t *seg, uint64_t value)
{
    for (int r = 0; r < RDLM_SLOT_RECORDS; r++) {
        uint64_t expected = 0;

        if (rdlm_cas(rdlm_rec_at(seg, r), &expected, value, RDLM_SEQ_CST)) {
            return r;
        }
    }
    return -1;
}

void rdlm_rec_full(const rdlm_segment_t *seg, uint32_t idx)
{
    static rdlm_atomic_u32_t told;

    if (rdlm_fetch_add(&told, 1, RDLM_RELAXED) == 0) {
        rdlm_error("lock \"%s\": this context already uses all %d wait records: more "
                   "than %d of its threads wait at once; RDLM_ERR_NO_RESOURCE (said once "
                   "per process, then at debug)",
                   seg->names[idx], RDLM_SLOT_RECORDS, RDLM_SLOT_RECORDS);
    } else {
        rdlm_debug("lock \"%s\": this context already uses all %d wait records",
                   seg->names[idx], RDLM_SLOT_RECORDS);
    }
}

typedef int (*rdlm_rec_visit_func_t)(const rdlm_segment_t *seg, const rdlm_slot_t *slot,
                                     uint64_t rec, void *arg);

/* Visit every record of lock idx in active slots; stop at the first nonzero return. */
static int rdlm_rec_scan(const rdlm_segment_t *seg, uint32_t idx,
                         rdlm_rec_visit_func_t visit, void *arg)
{
    uint32_t hwm = rdlm_segment_hwm(seg);

    for (uint32_t s = 0; s < hwm; s++) {
        const rdlm_slot_t *slot = &seg->slots[s];

        if (rdlm_load(&slot->state, RDLM_ACQUIRE) != RDLM_SLOT_ACTIVE) {
            continue;
        }
        for (int r = 0; r < RDLM_SLOT_RECORDS; r++) {
            uint64_t rec = rdlm_load(&slot->rec[r], RDLM_SEQ_CST);
            int stop;

            if (RDLM_REC_STATE(rec) == RDLM_REC_FREE || RDLM_REC_ENTRY(rec) != idx) {
                continue;
            }
            stop = visit(seg, slot, rec, arg);
            if (stop) {
                return stop;
            }
        }
    }
    return 0;
}

static int rdlm_rec_slot_alive(const rdlm_segment_t *seg, const rdlm_slot_t *slot)
{
    uint32_t s = (uint32_t)(slot - seg->slots);

    return rdlm_segment_owner_alive(
        seg, RDLM_OWNER_MAKE(s, rdlm_load(&slot->gen, RDLM_ACQUIRE)));
}

typedef struct rdlm_claimant_search {
    uint32_t ticket;
    rdlm_claimant_t found;
} rdlm_claimant_search_t;

static int rdlm_rec_visit_claimant(const rdlm_segment_t *seg, const rdlm_slot_t *slot,
                                   uint64_t rec, void *arg)
{
    rdlm_claimant_search_t *search = arg;
    unsigned state = RDLM_REC_STATE(rec);

    if (state == RDLM_REC_WAITING && RDLM_REC_TICKET(rec) == search->ticket &&
        rdlm_rec_slot_alive(seg, slot)) {
        search->found = RDLM_CLAIMANT_LIVE;
        return 1;
    }
    if (state == RDLM_REC_PENDING && rdlm_rec_slot_alive(seg, slot)) {
        search->found = RDLM_CLAIMANT_IN_FLIGHT;
    }
    return 0;
}

rdlm_claimant_t rdlm_rec_find_claimant(const rdlm_segment_t *seg, uint32_t idx,
                                       uint32_t ticket)
{
    rdlm_claimant_search_t search = {.ticket = ticket, .found = RDLM_CLAIMANT_NONE};

    rdlm_rec_scan(seg, idx, rdlm_rec_visit_claimant, &search);
    return search.found;
}

typedef struct rdlm_starving_search {
    uint32_t ticket; /* the oldest so far */
    uint32_t owner;  /* its owner word, 0 for none */
} rdlm_starving_search_t;

static int rdlm_rec_visit_starving(const rdlm_segment_t *seg, const rdlm_slot_t *slot,
                                   uint64_t rec, void *arg)
{
    rdlm_starving_search_t *search = arg;
    uint32_t t = RDLM_REC_TICKET(rec);
    uint32_t s = (uint32_t)(slot - seg->slots);

    /* Older: earlier in the 31-bit wrapping order. Liveness only for a new oldest. */
    if (RDLM_REC_STATE(rec) == RDLM_REC_WAITING && (t & RDLM_REC_STARVING) &&
        (search->owner == 0 || (int32_t)((t - search->ticket) << 1) < 0) &&
        rdlm_rec_slot_alive(seg, slot)) {
        search->ticket = t;
        search->owner = RDLM_OWNER_MAKE(s, rdlm_load(&slot->gen, RDLM_ACQUIRE));
    }
    return 0;
}

int rdlm_rec_oldest_starving(const rdlm_segment_t *seg, uint32_t idx, uint32_t *owner_p)
{
    rdlm_starving_search_t search = {.ticket = 0, .owner = 0};

    rdlm_rec_scan(seg, idx, rdlm_rec_visit_starving, &search);
    *owner_p = search.owner;
    return search.owner != 0;
}

int rdlm_rec_owner_waits(const rdlm_segment_t *seg, uint32_t idx, uint32_t owner)
{
    const rdlm_slot_t *slot = &seg->slots[RDLM_OWNER_SLOT(owner)];

    for (int r = 0; r < RDLM_SLOT_RECORDS; r++) {
        uint64_t rec = rdlm_load(&slot->rec[r], RDLM_SEQ_CST);

        if (RDLM_REC_STATE(rec) == RDLM_REC_WAITING && RDLM_REC_ENTRY(rec) == idx) {
            return 1;
        }
    }
    return 0;
}

typedef struct rdlm_rec_tally {
    unsigned state;
    int check_alive;
    uint32_t n;
} rdlm_rec_tally_t;

static int rdlm_rec_visit_tally(const rdlm_segment_t *seg, const rdlm_slot_t *slot,
                                uint64_t rec, void *arg)
{
    rdlm_rec_tally_t *tally = arg;

    if (RDLM_REC_STATE(rec) == tally->state &&
        (!tally->check_alive || rdlm_rec_slot_alive(seg, slot))) {
        tally->n++;
    }
    return 0;
}

uint32_t rdlm_rec_count(const rdlm_segment_t *seg, uint32_t idx, unsigned state,
                        int check_alive)
{
    rdlm_rec_tally_t tally = {.state = state, .check_alive = check_alive, .n = 0};

    rdlm_rec_scan(seg, idx, rdlm_rec_visit_tally, &tally);
    return tally.n;
}
