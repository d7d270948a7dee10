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
 *   REL(rank, q, g, t) the holder's release, any process of its node may send it; no
 *                        answer; g, the token of the GRANT it releases, names the use:
 *                        the home takes it only while that use holds (a late copy of
 *                        a REL never releases the queue node's next use: am_lease.pml,
 *                        flaw 6); it grants the next with t + 1
 *
 * A semaphore's home keeps its permits taken and a FIFO queue of waiters, each with
 * the permits k it asks for (the record of the semaphore's gate word):
 *
 *   SEM_ACQ(q, seq, k, N)  -> GRANT when nobody is queued and k fit (taken + k <= N),
 *                             or when its turn comes and k fit
 *   SEM_TRY(q, seq, k, N)  -> GRANT, or BUSY
 *   CANCEL(q, seq)         as for locks; a cancelled head lets the next ones in
 *   SEM_REL(k)             no answer; the queue's head is granted while its k fit
 *   SEM_COUNT(q, seq)      -> GRANT whose token is RDLM_AMQ_COUNT_BASE + taken
 *
 * So an acquire + release is one round trip and one message, contended or not, and a
 * waiter is granted by the release itself: nobody polls the count.
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
 * With leases the home recovers a lock whose holder A died (amq_home.c, "Recovery"):
 * while some process of A's node lives, the home asks it, SETTLE(A, q), to pass the
 * lock on for the node if nobody of it holds the lock through A's queue node in the use
 * the SETTLE names (the token of A's GRANT) (a node
 * keeps cohort hand-offs under leases: any of its processes may hold through it);
 * once every process of A's node is dead and its lease ended, the home grants the next
 * waiter with the first token of a new epoch. Either way the next holder's GRANT says
 * DEAD when A (or the one after it on its node) died holding: RDLM_OWNER_DEAD.
 *
 * Chosen at create by every process alike (rdlm_global_create): the transport
 * emulates remote atomics, has active messages and a progress thread, and
 * RDLM_LOCK_AM=1.
 * Spin models: tests/model/am_lock.pml (locks), tests/model/am_sem.pml (semaphores).
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
    RDLM_AMQ_SEM_ACQ,
    RDLM_AMQ_SEM_TRY,
    RDLM_AMQ_SEM_REL,
    RDLM_AMQ_SEM_COUNT,
    RDLM_AMQ_GRANT, /* the answers: from here on */
    RDLM_AMQ_BUSY,
    RDLM_AMQ_CANCELLED,
    RDLM_AMQ_DEAD,  /* the holder's process died: the waiter gives up (no lease) */
    RDLM_AMQ_LOST,  /* the home counts the waiter's process dead: it gives up */
    RDLM_AMQ_SETTLE /* home -> a node-mate of a dead holder (leases; not an answer) */
};

/* Message flags. */
#define RDLM_AMQ_F_DEAD 1u /* REL: its holder died holding; GRANT: RDLM_OWNER_DEAD */
#define RDLM_AMQ_F_UNUSED                                                                  \
    2u /* REL: its holder died before it used the grant: the next                          \
          grant says DEAD if that grant did */

typedef struct rdlm_amq_msg {
    uint8_t type;
    uint8_t q; /* the requester's queue node (REL, SETTLE: the holder's) */
    uint16_t flags;
    uint32_t seq;  /* which use of it (requests and their answers) */
    uint32_t rank; /* REL, SETTLE: the holder's rank (the sender may be a node-mate) */
    uint32_t k;    /* SEM_ACQ, SEM_TRY, SEM_REL: the permits asked or given back */
    uint64_t offset; /* requests: the lock's global word in the home's region */
    uint64_t token;  /* GRANT: the holder's token; REL: the last one it used;
                        SEM_ACQ, SEM_TRY: the semaphore's N */
    uint64_t granted; /* REL, SETTLE: the token of the GRANT whose use it names */
} rdlm_amq_msg_t;

/* SEM_COUNT's answer: a GRANT with this plus the permits taken (a granted state). */
#define RDLM_AMQ_COUNT_BASE (1ull << RDLM_GLOBAL_SEQ_BITS)

/* What a queue node's state becomes when its request is answered without a grant
 * (never a token, never IDLE or WAITING). */
#define RDLM_AMQ_REFUSED(type) (RDLM_Q_ABANDONED_BIT | (uint64_t)(type) << 32 | 3u)

/* ---- the requester's side (amq.c): glock.h's contracts, on this protocol ---------- */

rdlm_status_t rdlm_amq_acquire(rdlm_global_t *d, const rdlm_global_word_t *w,
                               uint64_t deadline_ns, uint64_t *qid_p, uint64_t *token_p);
rdlm_status_t rdlm_amq_try(rdlm_global_t *d, const rdlm_global_word_t *w, uint64_t *qid_p,
                           uint64_t *token_p);
/** glock.h's pass; flags RDLM_AMQ_F_DEAD (the holder died holding) or
 *  RDLM_AMQ_F_UNUSED (it died before using its grant), else 0. */
rdlm_status_t rdlm_amq_pass(rdlm_global_t *d, const rdlm_global_word_t *w, uint64_t qid,
                            uint64_t granted, uint64_t token, uint16_t flags);

/* Semaphores (semaphore.c, where d->am_lock): w is the semaphore's gate word, whose
 * record at the home keeps the permits. */

/** Take k of permits (N): RDLM_OK; with try_only RDLM_ERR_BUSY at once if they are not
 *  free; else RDLM_ERR_TIMEOUT at deadline_ns (a cancel whose grant crossed it holds:
 *  RDLM_OK), RDLM_ERR_CLOSED, RDLM_ERR_PEER_DEAD (the home died), RDLM_ERR_NO_RESOURCE
 *  (no free queue node). */
rdlm_status_t rdlm_amq_sem_acquire(rdlm_global_t *d, const rdlm_global_word_t *w,
                                   uint32_t k, uint32_t permits, uint64_t deadline_ns,
                                   int try_only);
/** Give k permits back (one message; nobody waits). */
rdlm_status_t rdlm_amq_sem_release(rdlm_global_t *d, const rdlm_global_word_t *w,
                                   uint32_t k);
/** The permits taken now, at the home, into *taken_p (one round trip). */
rdlm_status_t rdlm_amq_sem_taken(rdlm_global_t *d, const rdlm_global_word_t *w,
                                 uint64_t *taken_p);

/** An answer for one of this process's queue nodes (from the home's handler, or from
 *  this process's own home directly). */
void rdlm_amq_answer(rdlm_global_t *d, const rdlm_amq_msg_t *m);

/** A SETTLE from home rank src (its handler, or this process's own home): noted, run
 *  by rdlm_amq_settle_run. */
void rdlm_amq_settle_note(rdlm_global_t *d, uint32_t src, const rdlm_amq_msg_t *m);

/** Run the SETTLEs noted (rdlm_global_settle_dead), one thread at a time; called by
 *  rdlm_amq_flush. Never waits. */
void rdlm_amq_settle_run(rdlm_global_t *d);

/* ---- the home's side (amq_home.c) --------------------------------------------------- */

/** Decide d->am_lock with every process (a collective: one allgather) and, if on,
 *  set up this process's home records (node leaders) and both message handlers. */
rdlm_status_t rdlm_amq_setup(rdlm_global_t *d, int wanted);

/** Free the home records (after the transport is gone). */
void rdlm_amq_free(rdlm_global_t *d);

/** A request from rank src for this process's home, handled in place (src ==
 *  d->rank: no message). */
void rdlm_amq_home_request(rdlm_global_t *d, uint32_t src, const rdlm_amq_msg_t *m);

/** Send the home's queued answers, run the SETTLEs noted, and every 100 ms look for
 *  holders that died with waiters behind them (RDLM_AMQ_DEAD to the waiters without
 *  leases; recovery with them). Any thread; cheap when there is nothing to do.
 *  Called after every progress of core/global (rdlm_global_progress). */
void rdlm_amq_flush(rdlm_global_t *d);

#endif
