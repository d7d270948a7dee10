/*
 * Remote words of the cross-node layer (word.c): a lock's global word at its home,
 * and queue nodes of any process (this one included). Each call is one remote
 * operation, or none when the word is this process's own and may be touched with
 * CPU atomics. Blocking; thread-safe.
 */
#ifndef RDLM_GLOBAL_WORD_H
#define RDLM_GLOBAL_WORD_H

#include <string.h>

#include "global.h"

/** A lock's global word: home node and byte offset in the home's region. */
typedef struct rdlm_global_word {
    uint32_t node;
    uint64_t offset;
} rdlm_global_word_t;

/** Own queue node q's state and next words (in the registered region). */
static inline rdlm_atomic_u64_t *rdlm_global_q_state(rdlm_global_t *d, uint32_t q)
{
    return &d->qn[2 * q];
}

static inline rdlm_atomic_u64_t *rdlm_global_q_next(rdlm_global_t *d, uint32_t q)
{
    return &d->qn[2 * q + 1];
}

/** The global word of the name id in home slot slot1 - 1 (slot1 as returned by
 *  rdlm_global_home_open). */
void rdlm_global_word_at(const rdlm_global_t *d, uint64_t id, uint64_t slot1,
                         rdlm_global_word_t *w);

/** The holder word H of the lock whose global word is w (next to it in the slot). */
void rdlm_global_holder_word(const rdlm_global_word_t *w, rdlm_global_word_t *h);

/** The enqueue intent word of queue node qid at the home of w (glock.c, "Intents";
 *  only where d->intents). */
void rdlm_global_intent_word(const rdlm_global_t *d, const rdlm_global_word_t *w,
                             uint64_t qid, rdlm_global_word_t *iw);

/** A job-wide constant of a named object of kind (a semaphore's or barrier's size):
 *  set the home word of id to value if it is still 0; *existing_p = the value it holds
 *  now (the caller compares: another value means another process opened the name with
 *  another size). value must not be 0. Errors as rdlm_global_home_open. */
rdlm_status_t rdlm_global_home_fix(rdlm_global_t *d, uint64_t id, unsigned kind,
                                   uint64_t value, uint64_t *existing_p);

/** The n-th companion word's name id of name id (n = 1, 2; never 0): objects with
 *  more than one home word (rwlock, semaphore, named barrier) key them so. */
uint64_t rdlm_global_sub_id(uint64_t id, unsigned n);

/** Resolve (once per node) the home slots of an object with two words: its own (id)
 *  and companion 1, cached in the entry's home_pair1 as first | second << 32. */
rdlm_status_t rdlm_global_open_pair(rdlm_global_t *d, rdlm_entry_t *e);

/** The two words of such an object. */
void rdlm_global_pair_words(const rdlm_global_t *d, const rdlm_entry_t *e,
                            rdlm_global_word_t *first, rdlm_global_word_t *second);

/** Polling a home word: the pause between two reads grows from 20 us to 1 ms. */
#define RDLM_GLOBAL_POLL_FIRST_NS 20000ull
#define RDLM_GLOBAL_POLL_MAX_NS 1000000ull

/** One pause of such a poll: RDLM_ERR_BUSY for a try, RDLM_ERR_TIMEOUT past
 *  deadline, RDLM_ERR_CLOSED while destroying; else progress, sleep *pause_p, double
 *  it (up to the maximum) and return RDLM_OK (poll again). */
rdlm_status_t rdlm_global_poll_pause(rdlm_global_t *d, uint64_t *pause_p, uint64_t deadline,
                                     int try_only);

/** Before this process works on a word of its own home (w's home is this process):
 *  progress first, at most every 5 us, so that the remote requests that already
 *  arrived for its home are served before its own (word.c says why). A no-op
 *  elsewhere, or where remote atomics do not need the target's progress. */
void rdlm_global_serve_own(rdlm_global_t *d, const rdlm_global_word_t *w);

/** Fetch-add on a global word (reader counts). */
rdlm_status_t rdlm_global_w_fadd(rdlm_global_t *d, const rdlm_global_word_t *w,
                                 uint64_t add, uint64_t *old_p);

rdlm_status_t rdlm_global_w_swap(rdlm_global_t *d, const rdlm_global_word_t *w,
                                 uint64_t value, uint64_t *old_p);
rdlm_status_t rdlm_global_w_cas(rdlm_global_t *d, const rdlm_global_word_t *w,
                                uint64_t compare, uint64_t swap, uint64_t *old_p);

/** CAS on a global word, posted (rdlm_tl_cswap64_post): op completes later. Counted
 *  in home_ops and home_ops_posted. */
rdlm_status_t rdlm_global_w_cas_post(rdlm_global_t *d, const rdlm_global_word_t *w,
                                     uint64_t compare, uint64_t swap, rdlm_tl_op_t *op);

/** Add to a word of a home process's region at w's offset, posted (not flushed: it
 *  completes while the caller keeps progressing; a fetching add where the transport
 *  has no posted one): the barrier's dissemination flags. Adds commute, so the
 *  word's value does not depend on the order in which they land. */
rdlm_status_t rdlm_global_home_add_post(rdlm_global_t *d, const rdlm_global_word_t *w,
                                        uint64_t add);

/** Write value into a home process's region at w's offset, completed at the home before
 *  return (a put and a flush: one round trip). */
rdlm_status_t rdlm_global_home_write(rdlm_global_t *d, const rdlm_global_word_t *w,
                                     uint64_t value);

/** CAS on queue node qid's state. */
rdlm_status_t rdlm_global_q_cas(rdlm_global_t *d, uint64_t qid, uint64_t compare,
                                uint64_t swap, uint64_t *old_p);
/** Write queue node qid's state (a swap: the state word is only ever written by
 *  atomics of one engine). */
rdlm_status_t rdlm_global_q_set_state(rdlm_global_t *d, uint64_t qid, uint64_t value);
/** Write own queue node q's state with a CPU store instead of through the transport
 *  (rdlm_global_q_set_state), in a context without leases: only while no other process
 *  can act on this use of the node, that is before it is published in W (a claim; a
 *  try whose CAS was answered without taking W) or once W was freed from it with
 *  nobody queued behind it. No remote atomic on the word can then be in flight, so the
 *  store never interleaves with an adapter's atomic that is not atomic against the
 *  CPU's (design invariant 3 is about concurrent updates; tests/model/dist_lock.pml,
 *  property (f)); the claim sets the next word so for the same reason. Over the verbs
 *  backend this saves the two loopback atomics of an uncontended acquire + release.
 *  With leases (recovery) the write stays on the transport: a process paused past its
 *  lease may still send a late CAS to the node, which fails on the generation, and an
 *  adapter's failed CAS is not known to leave the word unwritten on every adapter. */
static inline void rdlm_global_q_set_own_state(rdlm_global_t *d, uint32_t q, uint64_t value)
{
    if (d->recovery.ended != NULL) {
        (void)rdlm_global_q_set_state(d, RDLM_QID(d->rank, q), value);
        return;
    }
    rdlm_store(rdlm_global_q_state(d, q), value, RDLM_SEQ_CST);
}

/** CAS on queue node qid's next word (a waiter links itself behind qid). */
rdlm_status_t rdlm_global_q_cas_next(rdlm_global_t *d, uint64_t qid, uint64_t compare,
                                     uint64_t swap, uint64_t *old_p);
/** Read qid's next word. */
rdlm_status_t rdlm_global_q_get_next(rdlm_global_t *d, uint64_t qid, uint64_t *next_p);
/** Read queue node qid's state (a get; a plain load for this process's own). */
rdlm_status_t rdlm_global_q_get_state(rdlm_global_t *d, uint64_t qid, uint64_t *state_p);

/** Add 1 to rank's goodbye word (goodbye.c): one fetching remote atomic. */
rdlm_status_t rdlm_global_bye_send(rdlm_global_t *d, uint32_t rank);

/** The goodbyes this process's word has counted. */
static inline uint64_t rdlm_global_byes(rdlm_global_t *d)
{
    return rdlm_load(&d->qn[2 * RDLM_GLOBAL_QNODES], RDLM_ACQUIRE);
}

#endif
