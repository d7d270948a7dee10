/* Lock-free open-addressing object table (see table.h, docs/local-locks.md). */
#include "table.h"

#include <sched.h>
#include <string.h>

#include "clock.h"
#include "hash.h"
#include "log.h"

#define RDLM_TABLE_TAKEOVER_NS 1000000000ull /* creator silent this long: check it */

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

static void rdlm_table_init_entry(rdlm_segment_t *seg, uint32_t idx, const char *name,
                                  unsigned kind, uint32_t aux32_init)
{
    rdlm_entry_t *e = &seg->entries[idx];

    strncpy(seg->names[idx], name, RDLM_NAME_BYTES - 1);
    seg->names[idx][RDLM_NAME_BYTES - 1] = '\0';
    rdlm_store(&e->parked, 0, RDLM_RELAXED);
    rdlm_store(&e->word, 0, RDLM_RELAXED);
    rdlm_store(&e->token, (uint64_t)seg->hdr->epoch << 40, RDLM_RELAXED);
    rdlm_store(&e->aux64, 0, RDLM_RELAXED);
    rdlm_store(&e->aux64b, 0, RDLM_RELAXED);
    rdlm_store(&e->aux32, aux32_init, RDLM_RELAXED);
    rdlm_store(&e->wake32, 0, RDLM_RELAXED);
    rdlm_store(&e->meta, (kind & (RDLM_META_KIND | RDLM_META_FIFO)) | RDLM_META_READY,
               RDLM_RELEASE);
}

/* Wait until entry idx is READY; finish it ourselves if its creator died first.
 * Returns its meta. */
static uint32_t rdlm_table_wait_ready(rdlm_segment_t *seg, uint32_t idx, const char *name,
                                      unsigned kind, uint32_t aux32_init)
{
    rdlm_entry_t *e = &seg->entries[idx];
    uint64_t deadline = rdlm_clock_deadline(RDLM_TABLE_TAKEOVER_NS);
    uint32_t meta;

    while (!((meta = rdlm_load(&e->meta, RDLM_ACQUIRE)) & RDLM_META_READY)) {
        uint64_t creator = rdlm_load(&e->creator, RDLM_ACQUIRE);

        if (rdlm_clock_now_ns() < deadline ||
            rdlm_segment_owner_alive(seg, (uint32_t)creator)) {
            sched_yield();
            continue;
        }
        if (rdlm_cas(&e->creator, &creator, seg->self_owner, RDLM_ACQ_REL)) {
            rdlm_warn("entry %u: creator died during initialisation; taking it over", idx);
            rdlm_table_init_entry(seg, idx, name, kind, aux32_init);
        }
        deadline = rdlm_clock_deadline(RDLM_TABLE_TAKEOVER_NS);
    }
    return meta;
}

/* Try to claim the empty entry idx for id. Returns 1 if claimed. */
static int rdlm_table_claim(rdlm_segment_t *seg, uint32_t idx, uint64_t id,
                            rdlm_status_t *status_p)
{
    rdlm_seg_header_t *hdr = seg->hdr;
    uint64_t empty = 0;

    if (rdlm_fetch_add(&hdr->used, 1, RDLM_RELAXED) >= hdr->capacity) {
        rdlm_fetch_sub(&hdr->used, 1, RDLM_RELAXED);
        rdlm_error("%s/%s: table full (%u objects; raise RDLM_CAPACITY for the creator)",
                   seg->place.dir, seg->seg_name, hdr->capacity);
        *status_p = RDLM_ERR_TABLE_FULL;
        return 0;
    }
    if (!rdlm_cas(&seg->entries[idx].key, &empty, id, RDLM_ACQ_REL)) {
        rdlm_fetch_sub(&hdr->used, 1, RDLM_RELAXED);
        return 0;
    }
    rdlm_store(&seg->entries[idx].creator, seg->self_owner, RDLM_RELEASE);
    return 1;
}

rdlm_status_t rdlm_table_open(rdlm_segment_t *seg, const char *name, unsigned kind,
                              uint32_t aux32_init, uint32_t *index_p)
{
    uint32_t n = seg->table_size;
    uint64_t id = rdlm_table_id(name);
    uint32_t idx = rdlm_table_home(id, n);

    for (uint32_t probes = 0; probes < n; probes++, idx = (idx + 1 == n) ? 0 : idx + 1) {
        rdlm_status_t status = RDLM_OK;
        uint64_t key = rdlm_load(&seg->entries[idx].key, RDLM_ACQUIRE);

        if (key == 0) {
            if (rdlm_table_claim(seg, idx, id, &status)) {
                rdlm_table_init_entry(seg, idx, name, kind, aux32_init);
                *index_p = idx;
                return RDLM_OK;
            }
            if (status != RDLM_OK) {
                return status;
            }
            key = rdlm_load(&seg->entries[idx].key, RDLM_ACQUIRE); /* lost the race */
        }
        if (key != id) {
            continue;
        }
        uint32_t meta = rdlm_table_wait_ready(seg, idx, name, kind, aux32_init);
        if (strncmp(seg->names[idx], name, RDLM_NAME_BYTES) != 0) {
            continue; /* another name with the same id */
        }
        if ((meta & RDLM_META_KIND) != (kind & RDLM_META_KIND)) {
            rdlm_error("\"%s\" exists as a %s, opened as a %s", name,
                       rdlm_table_kind_name(meta), rdlm_table_kind_name(kind));
            return RDLM_ERR_KIND_MISMATCH;
        }
        if ((kind & RDLM_META_ORDER_SET) && ((meta ^ kind) & RDLM_META_FIFO)) {
            rdlm_error("lock \"%s\" exists as a %s lock, opened as a %s one", name,
                       (meta & RDLM_META_FIFO) ? "FIFO" : "bounded-bypass",
                       (kind & RDLM_META_FIFO) ? "FIFO" : "bounded-bypass");
            return RDLM_ERR_KIND_MISMATCH;
        }
        *index_p = idx;
        return RDLM_OK;
    }
    return RDLM_ERR_TABLE_FULL; /* unreachable: used <= capacity < table_size */
}
