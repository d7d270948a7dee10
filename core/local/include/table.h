/*
 * The object table: open addressing over the segment's entries, keyed by a 64-bit
 * hash of the name; names that collide are told apart by the stored name. Lookups of
 * live objects are lock-free; creating, retiring and re-keying an entry go under the
 * segment's robust creation lock (docs/local-locks.md, "Table entries").
 */
#ifndef RDLM_TABLE_H
#define RDLM_TABLE_H

#include <stdint.h>

#include <rdlm/status.h>

#include "segment.h"

/** 64-bit id of a name (FNV-1a, finalised); never 0. */
uint64_t rdlm_table_id(const char *name);

/**
 * Open the object named name: pin its live entry (opens + 1), or create it as kind
 * (the entry's size = size, token above the name's floor) in a free or retired entry if
 * no live entry has the name. Lock-free when the object is live; else it takes the
 * creation lock (blocking; a dead holder is taken over). name must be
 * 1..RDLM_NAME_BYTES-1 bytes (caller checks). kind may carry RDLM_META_FIFO (kept if
 * this call creates the entry) and RDLM_META_ORDER_SET (an existing entry must then
 * have the same FIFO bit). keep: the entry is never retired afterwards (a cross-node
 * context's: its state lives beyond the entry). Every RDLM_OK is paired with one
 * rdlm_table_close of *index_p. Errors: RDLM_ERR_KIND_MISMATCH (exists as another
 * kind or order), RDLM_ERR_TABLE_FULL, RDLM_ERR_NO_RESOURCE (too many opens).
 */
rdlm_status_t rdlm_table_open(rdlm_segment_t *seg, const char *name, unsigned kind,
                              uint32_t size, int keep, uint32_t *index_p);

/**
 * Undo one rdlm_table_open of entry idx (the caller released what it held there).
 * The last close of an idle lock or rwlock without KEEP retires the entry under the
 * creation lock (blocking, briefly): its last token raises its name's floor, and it
 * may later hold another object. Counters, semaphores and barriers stay.
 */
void rdlm_table_close(rdlm_segment_t *seg, uint32_t idx);

/**
 * rdlm_table_close for an open whose object turned out unusable (another kind or size
 * job-wide, said by the cross-node layer): if it was the entry's last open, the entry
 * is retired whatever its kind or KEEP, so that the node is not left holding a wrong
 * entry that every later open, right ones included, would meet. Only for an entry
 * nobody can have used: every open of it on this node fails the same way.
 */
void rdlm_table_discard(rdlm_segment_t *seg, uint32_t idx);

/* The creation lock (table_lock.c). */

/** Take the segment's creation lock: blocking (yields), taking it over from a dead
 *  holder after repairing what that holder left (an entry left CREATING is retired,
 *  the floor raised for the entry it was retiring or keying, the count of used
 *  entries recounted). Acquire ordering. */
void rdlm_table_lock(rdlm_segment_t *seg);

/** Release the creation lock (release ordering). */
void rdlm_table_unlock(rdlm_segment_t *seg);

/** Holding the creation lock, entry e retired: raise its name's token floor to its
 *  last token, so that a later keying of the name (under the lock) starts above every
 *  token the entry issued. */
void rdlm_table_raise_floor(rdlm_segment_t *seg, rdlm_entry_t *e);

/** Holding the creation lock: free the retired entries that end a probe chain, from
 *  idx backwards (an entry is freed while it is retired and the next one is free). */
void rdlm_table_trim(rdlm_segment_t *seg, uint32_t idx);

#endif
