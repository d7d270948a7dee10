/* The table's creation lock: one owner word in the header, taken over from a dead
 * holder (table.h, docs/local-locks.md "Table entries"). */
#include <sched.h>

#include "clock.h"
#include "log.h"
#include "table.h"

/* A holder is checked for life after the lock stayed taken this long, and again as
 * long as it stays taken. */
#define RDLM_TABLE_LOCK_CHECK_NS 10000000ull

/* Taken over from a dead holder: retire the entry it left CREATING (its fields may be
 * half written; a retired entry is only ever keyed again), raise the floor for the
 * entry it was retiring or keying (it may have died before it did; its token is the
 * old or the new one, either at most too high), count the entries that are not FREE
 * again (its count may be one off), and trim. */
static void rdlm_table_repair(rdlm_segment_t *seg)
{
    uint32_t idx = rdlm_load(&seg->hdr->create_idx, RDLM_RELAXED), used = 0;

    if (idx < seg->table_size) {
        rdlm_entry_t *e = &seg->entries[idx];
        uint64_t s = rdlm_load(&e->state, RDLM_ACQUIRE);

        if (RDLM_STATE_PHASE(s) == RDLM_PHASE_CREATING) {
            s = RDLM_STATE_MAKE(RDLM_STATE_GEN(s), RDLM_PHASE_RETIRED, 0);
            rdlm_store(&e->state, s, RDLM_RELEASE);
        }
        if (RDLM_STATE_PHASE(s) == RDLM_PHASE_RETIRED) {
            rdlm_table_raise_floor(seg, e);
        }
        rdlm_table_trim(seg, idx);
    }
    rdlm_store(&seg->hdr->create_idx, RDLM_TABLE_NONE, RDLM_RELAXED);
    for (uint32_t i = 0; i < seg->table_size; i++) {
        used += RDLM_STATE_PHASE(rdlm_load(&seg->entries[i].state, RDLM_RELAXED)) !=
                RDLM_PHASE_FREE;
    }
    rdlm_store(&seg->hdr->used, used, RDLM_RELAXED);
}

void rdlm_table_lock(rdlm_segment_t *seg)
{
    rdlm_atomic_u32_t *lock = &seg->hdr->create_lock;
    uint32_t me = seg->self_owner;
    uint64_t check_at = 0;

    for (;;) {
        uint32_t holder = 0;

        if (rdlm_cas(lock, &holder, me, RDLM_ACQUIRE)) {
            return;
        }
        if (check_at == 0) {
            check_at = rdlm_clock_deadline(RDLM_TABLE_LOCK_CHECK_NS);
        } else if (rdlm_clock_now_ns() >= check_at) {
            if (!rdlm_segment_owner_alive(seg, holder) &&
                rdlm_cas(lock, &holder, me, RDLM_ACQUIRE)) {
                rdlm_warn("%s/%s: the table's creation lock was held by a dead process; "
                          "taking it over",
                          seg->place.dir, seg->seg_name);
                rdlm_table_repair(seg);
                return;
            }
            check_at = rdlm_clock_deadline(RDLM_TABLE_LOCK_CHECK_NS);
        }
        sched_yield();
    }
}

void rdlm_table_unlock(rdlm_segment_t *seg)
{
    rdlm_store(&seg->hdr->create_lock, 0, RDLM_RELEASE);
}
