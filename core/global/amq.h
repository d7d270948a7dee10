/*
 * The home-served queue lock (amq.c: the requester's side; amq_home.c: the home's).
 * Where the transport emulates remote atomics with messages to the target process
 * (UCX over TCP: caps.amo_needs_target_progress), a lock's home process keeps the
 * lock's holder, its FIFO queue and its last token itself, and requesters talk to it
 * with active messages:
 *
 *   ACQ(q, seq)       -> GRANT(q, seq, token) now, or when its turn comes
 *   TRY(q, seq)       -> GRANT, or BUSY
 *   CANCEL(q, seq)    -> CANCELLED (was queued, or not seen yet), or nothing (was
 *                        granted: the GRANT crossed the cancel, and the requester holds)
 *   REL(rank, q, t)   the holder's release, any process of its node may send it; no
 *                        answer; the home grants the next with t + 1
 *
 * An acquire is one round trip, a release one message nobody waits for; the atomic
 * queue (glock.c) takes one round trip for an uncontended acquire too, but a release
 * that is a round trip of its own (posted, still answered), and three round trips per
 * hand-off between nodes (enqueue, link, grant). A request names one use of one of
 * the requester's queue nodes, q, and seq, a 32-bit count of that node's uses:
 * answers carry both, and the requester's handler takes only the answer to the
 * current use (a stale one changes nothing). The home drops a request older than
 * the newest it saw from that queue node, so no delivery order is assumed.
 *
 * Chosen at create by every process alike (rdlm_global_create): the transport
 * emulates remote atomics, has active messages and a progress thread, the context
 * holds no lease (recovery reads the atomic queue's words) and RDLM_LOCK_AM=1.
 * Spin model: tests/model/am_lock.pml.
 */
#ifndef RDLM_GLOBAL_AMQ_H
#define RDLM_GLOBAL_AMQ_H

#include "word.h"

/* Message types. */
enum {
    RDLM_AMQ_ACQ = 1,
    RDLM_AMQ_TRY,
    RDLM_AMQ_CANCEL,
    RDLM_AMQ_REL,
    RDLM_AMQ_GRANT,
    RDLM_AMQ_BUSY,
    RDLM_AMQ_CANCELLED,
    RDLM_AMQ_DEAD /* the holder's process died: the waiter gives up (no lease) */
};

typedef struct rdlm_amq_msg {
    uint8_t type;
    uint8_t q; /* the requester's queue node (REL: the holder's) */
    uint16_t pad;
    uint32_t seq;  /* which use of it (not in REL) */
    uint32_t rank; /* REL: the holder's rank (the sender may be a node-mate) */
    uint32_t pad2;
    uint64_t offset; /* requests: the lock's global word in the home's region */
    uint64_t token;  /* GRANT: the holder's token; REL: the last one it used */
} rdlm_amq_msg_t;

/* What a queue node's state becomes when its request is answered without a grant
 * (never a token, never IDLE or WAITING). */
#define RDLM_AMQ_REFUSED(type) (RDLM_Q_ABANDONED_BIT | (uint64_t)(type) << 32 | 3u)

/* ---- the requester's side (amq.c): glock.h's contracts, on this protocol ---------- */

rdlm_status_t rdlm_amq_acquire(rdlm_global_t *d, const rdlm_global_word_t *w,
                               uint64_t deadline_ns, uint64_t *qid_p, uint64_t *token_p);
rdlm_status_t rdlm_amq_try(rdlm_global_t *d, const rdlm_global_word_t *w, uint64_t *qid_p,
                           uint64_t *token_p);
rdlm_status_t rdlm_amq_pass(rdlm_global_t *d, const rdlm_global_word_t *w, uint64_t qid,
                            uint64_t token);

/** An answer for one of this process's queue nodes (from the home's handler, or from
 *  this process's own home directly). */
void rdlm_amq_answer(rdlm_global_t *d, const rdlm_amq_msg_t *m);

/* ---- the home's side (amq_home.c) --------------------------------------------------- */

/** Decide d->am_lock with every process (a collective: one allgather) and, if on,
 *  set up this process's home records (node leaders) and both message handlers. */
rdlm_status_t rdlm_amq_setup(rdlm_global_t *d, int wanted);

/** Free the home records (after the transport is gone). */
void rdlm_amq_free(rdlm_global_t *d);

/** A request from rank src for this process's home, handled in place (src ==
 *  d->rank: no message). */
void rdlm_amq_home_request(rdlm_global_t *d, uint32_t src, const rdlm_amq_msg_t *m);

/** Send the home's queued answers, and every 100 ms tell the waiters behind a holder
 *  whose process died (RDLM_AMQ_DEAD). Any thread; cheap when there is nothing to do.
 *  Called after every progress of core/global (rdlm_global_progress). */
void rdlm_amq_flush(rdlm_global_t *d);

#endif
