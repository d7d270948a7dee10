/*
 * What a replica applied, as a chain hash, and the check that two replicas applied the
 * same entries (witness.c).
 *
 * Why
 *   libraft 0.15 can lose a committed entry (docs/lease-authority.md, R2 and R3): two
 *   replicas then apply different entries at one position of the log, and a token or
 *   an epoch granted by the lost entry can be granted again. Raft cannot say so
 *   itself, so the replicas compare what they applied: a replica that finds another
 *   applied something else at the same position stops serving (fails closed) and
 *   says so, instead of handing out what may be a token given before.
 *
 * Marks
 *   After the n-th entry applied through the state machine adapter (raft_fsm.c), the
 *   replica records mark (n, chain_n), chain_n = FNV-1a-64 over chain_{n-1} and the
 *   entry's bytes (chain_0 = the FNV offset). Replicas that applied the same entries
 *   in the same order have equal marks; at the first entry where they differ, n is
 *   equal and the chains differ, and so they differ at every later n too. Only
 *   command entries reach the adapter, on every replica alike (configuration and
 *   barrier entries do not). A snapshot carries its mark (raft_fsm.c), so a replica that
 *   restores one goes on counting from there; one restored from a snapshot of an
 *   older version has no mark and takes no part (it neither answers nor checks).
 *
 * Check
 *   The leader, in each leadership confirmation round (confirm.c), asks every other
 *   replica for its chain at the leader's newest n (STATUS with token = n); a replica
 *   that applied n answers it from its ring of the last RDLM_LEASE_WITNESS_RING marks
 *   (reply session = n, token = chain), one that is behind answers its newest mark
 *   (libraft stops for good a replica whose committed entries the new leader's
 *   contradict: it stays behind, holding what was lost). A different chain at the same
 *   n is a divergence: the asker
 *   logs it once, at error, and from then on refuses every request but STATUS
 *   (RDLM_ERR_UNAVAILABLE; STATUS answers RDLM_ERR_CORRUPT). Only the asker judges:
 *   a STATUS from anywhere can ask, but what it claims is never compared, so no
 *   client can stop a replica. The check runs only as often as renewals ask for
 *   rounds; a divergence is found once both replicas have applied the entry where
 *   they differ, which may be after a client was told the lost entry's result.
 *
 * Threads
 *   Record on the loop thread (apply), check and look up from the confirmation thread
 *   or the loop: a mutex guards the ring.
 */
#ifndef RDLM_LEASE_WITNESS_H
#define RDLM_LEASE_WITNESS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define RDLM_LEASE_WITNESS_RING 4096u
#define RDLM_LEASE_CHAIN_START UINT64_C(0xcbf29ce484222325)

typedef struct rdlm_lease_mark {
    uint64_t n, chain;
} rdlm_lease_mark_t;

typedef struct rdlm_lease_witness {
    pthread_mutex_t lock;
    int known;    /* marks are absolute (0: restored from an unmarked snapshot) */
    int diverged; /* sticky */
    rdlm_lease_mark_t newest;
    rdlm_lease_mark_t ring[RDLM_LEASE_WITNESS_RING]; /* mark n at n % RING */
    rdlm_lease_mark_t first_bad; /* ours, where the divergence was found */
    uint64_t bad_chain;          /* the other replica's chain there */
} rdlm_lease_witness_t;

/** The chain after applying entry (len bytes) to chain. Pure. */
uint64_t rdlm_lease_chain_next(uint64_t chain, const void *entry, size_t len);

/** Start at mark (0, RDLM_LEASE_CHAIN_START), known. */
void rdlm_lease_witness_init(rdlm_lease_witness_t *w);
void rdlm_lease_witness_fini(rdlm_lease_witness_t *w);

/** Record the next entry applied (its bytes). */
void rdlm_lease_witness_apply(rdlm_lease_witness_t *w, const void *entry, size_t len);

/** Forget every mark and go on from mark, or from no known mark (known 0): after a
 *  snapshot was restored. */
void rdlm_lease_witness_restart(rdlm_lease_witness_t *w, rdlm_lease_mark_t mark, int known);

/** The newest mark; 0 if none is known (then *mark_p is zero). */
int rdlm_lease_witness_newest(rdlm_lease_witness_t *w, rdlm_lease_mark_t *mark_p);

/** The chain at n from the ring: 1 with *chain_p, or 0 (not applied yet, too old,
 *  unknown). */
int rdlm_lease_witness_lookup(rdlm_lease_witness_t *w, uint64_t n, uint64_t *chain_p);

/** Another replica says its chain at n is chain: 0 if that differs from ours at n
 *  (diverged: sticky, logged once at error, naming who), 1 otherwise (equal, or n not
 *  in our ring). */
int rdlm_lease_witness_check(rdlm_lease_witness_t *w, uint64_t n, uint64_t chain,
                             const char *who);

/** 1 once a divergence was found. */
int rdlm_lease_witness_diverged(rdlm_lease_witness_t *w);

#endif
