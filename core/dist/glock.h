/*
 * The global queue lock (glock.c): one word at the home, a queue of processes' queue
 * nodes, grants written into the waiter's own memory. See dist.h for the protocol.
 */
#ifndef RDLM_DIST_GLOCK_H
#define RDLM_DIST_GLOCK_H

#include "word.h"

/**
 * Take the global word w with one of this process's queue nodes, waiting in the
 * global FIFO queue until deadline_ns (UINT64_MAX: no limit). On RDLM_OK, *qid_p is
 * the queue node that now stands for the holder (pass it to rdlm_glock_pass) and
 * *seq_p the token sequence. RDLM_ERR_TIMEOUT, RDLM_ERR_CLOSED (the context is being
 * destroyed): the place is abandoned, and the holder passes over it (no trace in the
 * queue). RDLM_ERR_PEER_DEAD: the process ahead in the queue died (checked every
 * 100 ms while queued; only peers the transport watches): nobody can grant this place
 * any more, so it is abandoned the same way. RDLM_ERR_NO_RESOURCE: no free queue
 * node. Cost: 1 remote atomic when free; plus 1 put to the predecessor when queued,
 * and 1 get from it per 100 ms of waiting.
 */
rdlm_status_t rdlm_glock_acquire(rdlm_dist_t *d, const rdlm_dist_word_t *w,
                                 uint64_t deadline_ns, uint64_t *qid_p, uint64_t *seq_p);

/**
 * One attempt, nothing queued: CAS the word from FREE(guess's sequence) to held.
 * RDLM_ERR_BUSY after one remote atomic if the word is held; a second CAS only if it
 * was free with another sequence than guessed.
 */
rdlm_status_t rdlm_glock_try(rdlm_dist_t *d, const rdlm_dist_word_t *w, uint64_t guess,
                             uint64_t *qid_p, uint64_t *seq_p);

/** Pass the global word held through queue node qid, with token sequence seq, to the
 *  next live waiter, or free it. Any process of the holder's node may call it. */
rdlm_status_t rdlm_glock_pass(rdlm_dist_t *d, const rdlm_dist_word_t *w, uint64_t qid,
                              uint64_t seq);

#endif
