/*
 * Slot records (layout.h): claimed by a context while it waits for a lock (PENDING,
 * WAITING) or holds a shared lock (READ), and the scans over all slots' records that
 * recovery and writers use.
 */
#ifndef RDLM_RECORDS_H
#define RDLM_RECORDS_H

#include <stdint.h>

#include "segment.h"

/** Claim a free record of the own slot with value; returns its index or -1. */
int rdlm_rec_claim(rdlm_segment_t *seg, uint64_t value);

/** Log that a wait on lock idx found all the own slot's records used (more threads
 *  of one context waiting at once than it has records: RDLM_ERR_NO_RESOURCE): at error
 *  the first time in the process, then at debug (one line per failed call flooded the
 *  log: 78,846 lines in one outside user's run). */
void rdlm_rec_full(const rdlm_segment_t *seg, uint32_t idx);

/** The own slot's record number r. */
static inline rdlm_atomic_u64_t *rdlm_rec_at(rdlm_segment_t *seg, int r)
{
    return &seg->slots[seg->self_slot].rec[r];
}

typedef enum rdlm_claimant {
    RDLM_CLAIMANT_NONE,     /* no live process holds or is taking the ticket */
    RDLM_CLAIMANT_LIVE,     /* a live process waits with the ticket */
    RDLM_CLAIMANT_IN_FLIGHT /* a live process is taking some ticket of this lock */
} rdlm_claimant_t;

/** Who, among live processes, claims ticket of lock idx (slow: liveness checks). */
rdlm_claimant_t rdlm_rec_find_claimant(const rdlm_segment_t *seg, uint32_t idx,
                                       uint32_t ticket);

/** A mutex waiter's WAITING ticket once it has waited past the bypass bound: this bit
 *  and its place among such waiters (31 bits, wrapping). 0 before. */
#define RDLM_REC_STARVING 0x80000000u

/** The live process whose WAITING record of lock idx has the oldest STARVING
 *  ticket: 1 and its owner word in *owner_p, or 0 if none (slow: liveness checks). */
int rdlm_rec_oldest_starving(const rdlm_segment_t *seg, uint32_t idx, uint32_t *owner_p);

/** 1 if the slot of owner (a live owner word) has a WAITING record of lock idx (a
 *  mutex heir that still waits for it). */
int rdlm_rec_owner_waits(const rdlm_segment_t *seg, uint32_t idx, uint32_t owner);

/** Records of lock idx in state (READ: shared holders; WAITING: queued requests) in
 *  active slots; with check_alive, only in slots whose process lives (slow). */
uint32_t rdlm_rec_count(const rdlm_segment_t *seg, uint32_t idx, unsigned state,
                        int check_alive);

#endif
