/*
 * The object table: lock-free open addressing over the segment's entries, keyed by a
 * 64-bit hash of the name; names that collide are told apart by the stored name.
 * Entries are never removed.
 */
#ifndef RDLM_TABLE_H
#define RDLM_TABLE_H

#include <stdint.h>

#include <rdlm/status.h>

#include "segment.h"

/** 64-bit id of a name (FNV-1a, finalised); never 0. */
uint64_t rdlm_table_id(const char *name);

/**
 * Find the entry named name, creating it as kind (with aux32 = aux32_init, token =
 * epoch << 40) if absent. Lock-free; waits (bounded) for a concurrent creator and
 * takes over from a dead one. name must be 1..RDLM_NAME_BYTES-1 bytes (caller checks).
 * kind may carry RDLM_META_FIFO (kept if this call creates the entry) and
 * RDLM_META_ORDER_SET (an existing entry must then have the same FIFO bit).
 * Errors: RDLM_ERR_KIND_MISMATCH (exists as another kind or order),
 * RDLM_ERR_TABLE_FULL.
 */
rdlm_status_t rdlm_table_open(rdlm_segment_t *seg, const char *name, unsigned kind,
                              uint32_t aux32_init, uint32_t *index_p);

#endif
