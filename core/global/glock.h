/*
 * The global queue lock (glock.c): one word at the home, a queue of processes' queue
 * nodes, grants written into the waiter's own memory. See global.h for the protocol.
 * In a context that chose the home-served queue (d->am_lock, amq.h), acquire, try
 * and pass run that protocol instead, with the same contracts (no posted releases;
 * with a lease the home recovers a dead holder's lock, amq.h).
 */
#ifndef RDLM_GLOBAL_GLOCK_H
#define RDLM_GLOBAL_GLOCK_H

#include "word.h"

/** Claim an IDLE own queue node for a new use: next NOLINK(gen), state WAITING(gen).
 *  *qid_p its id, *ref_p that use. RDLM_ERR_NO_RESOURCE (logged): all in use. */
rdlm_status_t rdlm_glock_claim(rdlm_global_t *d, uint64_t *qid_p, uint64_t *ref_p);

/** The token after a lock's last token t: t + 1, or the first of this context's
 *  epoch. */
uint64_t rdlm_glock_first_token(const rdlm_global_t *d, uint64_t t);

/**
 * Take the global word w with one of this process's queue nodes, waiting in the
 * global FIFO queue until deadline_ns (UINT64_MAX: no limit). guess: the word's value
 * if it is free (the last token known here; a wrong guess costs one more CAS). On
 * RDLM_OK, *qid_p is the queue node that now stands for the holder (pass it to
 * rdlm_glock_pass) and *token_p the token (epoch << 40 | sequence). RDLM_OWNER_DEAD:
 * held too, taken over from a dead holder whose lease the authority ended (with a
 * lease only, glock.c "Recovery"); the token is the first of a new epoch.
 * RDLM_ERR_TIMEOUT, RDLM_ERR_CLOSED (the context is being destroyed): the place is
 * abandoned, and the holder passes over it (no trace in the queue).
 * RDLM_ERR_PEER_DEAD (without a lease): the process ahead in the queue died (checked
 * every 100 ms while queued; only peers the transport watches): nobody can grant this
 * place any more, so it is abandoned the same way. With a lease the waiter waits
 * instead until that process's lease ended and takes over if it held the lock.
 * RDLM_ERR_NO_RESOURCE: no free queue node. Cost: 1 remote CAS when free and guessed
 * right; plus 1 CAS into the predecessor's link when queued, and 1 get from it per
 * 100 ms of waiting.
 */
rdlm_status_t rdlm_glock_acquire(rdlm_global_t *d, const rdlm_global_word_t *w,
                                 uint64_t guess, uint64_t deadline_ns, uint64_t *qid_p,
                                 uint64_t *token_p);

/**
 * One attempt, nothing queued: CAS the word from FREE(guess) to held. RDLM_ERR_BUSY
 * after one remote atomic if the word is held; a second CAS, from the free word the
 * first one found, only if it was free with another token than guessed. RDLM_OK only
 * if a CAS took the word; RDLM_ERR_BUSY also when the second CAS finds it held or
 * free with yet another token (taken and freed in between).
 */
rdlm_status_t rdlm_glock_try(rdlm_global_t *d, const rdlm_global_word_t *w, uint64_t guess,
                             uint64_t *qid_p, uint64_t *token_p);

/** Pass the global word held through queue node qid, granted with token `granted`
 *  (the token its acquire returned: in the home-served queue it names the use of qid
 *  this releases, amq.h), with token `token` (the last one used), to the next live
 *  waiter (granting token + 1), or free it (FREE(token)); the
 *  free is posted where the transport posts CASes (glock.c "Posted releases": the
 *  pass may end later, in rdlm_glock_finish). Any process of the holder's node may
 *  call it. A successor that died is named in the
 *  holder word, and the pass ends there: the process behind it takes over once the
 *  dead one's lease ended. */
rdlm_status_t rdlm_glock_pass(rdlm_global_t *d, const rdlm_global_word_t *w, uint64_t qid,
                              uint64_t granted, uint64_t token);

/** rdlm_glock_pass for a holder that died holding the lock, or that gives up as
 *  such a holder would (an acquire granted RDLM_OWNER_DEAD, undone for a lost lease:
 *  nobody repaired what the dead one left). In the home-served queue the next grant
 *  says RDLM_OWNER_DEAD (RDLM_AMQ_F_DEAD); the remote-atomic queue carries no such
 *  mark: a plain pass there, logged (docs/distributed-locks.md, Limits). */
rdlm_status_t rdlm_glock_pass_dead(rdlm_global_t *d, const rdlm_global_word_t *w,
                                   uint64_t qid, uint64_t granted, uint64_t token);

/** The home's SETTLE (amq.h; leases, home-served queue): rank RDLM_QID_RANK(qid), which
 *  holds the lock of home slot slot1 - 1 at node home through its queue node qid, in
 *  the use granted with token `granted`, or a process of its node, died. If no live
 *  process of this node holds the lock through qid, pass that use on for the node
 *  (RDLM_AMQ_F_DEAD when a process of the node died holding it); if one may, leave
 *  it to that one. Never waits (cohort.c). */
void rdlm_global_settle_dead(rdlm_global_t *d, uint32_t home, uint64_t slot1, uint64_t qid,
                             uint64_t granted);

/** Every RDLM_GLOBAL_RW_SWEEP_NS, if a process of this node is gone: for each
 *  rwlock this node reads, count only the live readers' holds in the node's count of
 *  readers, and drop the node's registration if none is left (rwlock.c). From the
 *  progress thread; never waits (a gate that is busy is looked at next time). */
void rdlm_global_rw_sweep(rdlm_global_t *d);

/** Finish the posted releases of this process (glock.c "Posted releases") whose CAS
 *  completed; with wait, all of them, progressing until each completed. Any thread;
 *  a release another thread is finishing is left to it. */
void rdlm_glock_finish(rdlm_global_t *d, int wait);

#endif
