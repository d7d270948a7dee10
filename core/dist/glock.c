/*
 * The global queue lock (see dist.h for the protocol and glock.h for the contracts).
 *
 *   W      FREE(seq) = seq (bit 63 clear)     HELD(tail) = RDLM_W_HELD | qid
 *   state  IDLE 0 | WAITING 1 | ABANDONED 2 | GRANTED(seq) = RDLM_Q_GRANTED | seq
 *   next   0 | RDLM_W_HELD | qid
 *
 * A queue node is reused only when IDLE, and becomes IDLE only when nothing refers
 * to it any more: its holder passed the word on (or freed it), or a passer went over
 * it after it was abandoned.
 */
#include "glock.h"

#include "clock.h"
#include "log.h"

/* A queued waiter checks every this often whether the process ahead of it died. */
#define RDLM_GLOCK_PROBE_NS 100000000ull

/* Claim an IDLE own queue node: reset its next, mark it WAITING. */
static rdlm_status_t rdlm_glock_claim(rdlm_dist_t *d, uint32_t *q_p)
{
    for (uint32_t q = 0; q < RDLM_DIST_QNODES; q++) {
        uint32_t bit = 1u << q;

        if (rdlm_load(rdlm_dist_q_state(d, q), RDLM_ACQUIRE) != RDLM_Q_IDLE ||
            (rdlm_fetch_or(&d->qclaim, bit, RDLM_ACQUIRE) & bit)) {
            continue;
        }
        if (rdlm_load(rdlm_dist_q_state(d, q), RDLM_ACQUIRE) == RDLM_Q_IDLE) {
            rdlm_store(rdlm_dist_q_next(d, q), 0, RDLM_RELAXED);
            rdlm_dist_q_set_state(d, RDLM_QID(d->rank, q), RDLM_Q_WAITING);
            rdlm_fetch_and(&d->qclaim, ~bit, RDLM_RELEASE);
            *q_p = q;
            return RDLM_OK;
        }
        rdlm_fetch_and(&d->qclaim, ~bit, RDLM_RELEASE);
    }
    rdlm_error("dist: all %u queue nodes of this process are in use (waits on many locks "
               "at once, or abandoned places not yet passed over)",
               RDLM_DIST_QNODES);
    return RDLM_ERR_NO_RESOURCE;
}

/* Give up a queued place: WAITING -> ABANDONED. 1 if given up; 0 if the grant won the
 * race (*seq_p set: the caller holds the lock). */
static int rdlm_glock_abandon(rdlm_dist_t *d, uint64_t qid, uint64_t *seq_p)
{
    uint64_t old = RDLM_Q_WAITING;

    rdlm_dist_q_cas(d, qid, RDLM_Q_WAITING, RDLM_Q_ABANDONED, &old);
    if (old == RDLM_Q_WAITING) {
        return 1;
    }
    *seq_p = old & RDLM_DIST_SEQ_MASK;
    return 0;
}

/* 1 if the process owning queue node pred is gone for the transport (a watched peer
 * that died: RDLM_PEER_FAILURE). Then nobody can grant the place behind it: its
 * grant, or a pass over it, would need its memory. */
static int rdlm_glock_pred_dead(rdlm_dist_t *d, uint64_t pred)
{
    uint64_t next;

    if (rdlm_dist_q_get_next(d, pred, &next) != RDLM_ERR_PEER_DEAD) {
        return 0;
    }
    rdlm_error("dist: rank %u, ahead of this process in a lock's queue, died; giving up "
               "the place (RDLM_ERR_PEER_DEAD)",
               RDLM_QID_RANK(pred));
    return 1;
}

rdlm_status_t rdlm_glock_acquire(rdlm_dist_t *d, const rdlm_dist_word_t *w,
                                 uint64_t deadline_ns, uint64_t *qid_p, uint64_t *seq_p)
{
    rdlm_status_t s;
    uint64_t qid, old, state, pred, probe_at;
    unsigned spins = 0;
    int gone;
    uint32_t q;

    s = rdlm_glock_claim(d, &q);
    if (s != RDLM_OK) {
        return s;
    }
    qid = RDLM_QID(d->rank, q);
    s = rdlm_dist_w_swap(d, w, RDLM_W_HELD | qid, &old);
    if (s != RDLM_OK) {
        rdlm_dist_q_set_state(d, qid, RDLM_Q_IDLE); /* the swap did not happen */
        return s;
    }
    *qid_p = qid;
    if (!(old & RDLM_W_HELD)) {
        *seq_p = (old & RDLM_DIST_SEQ_MASK) + 1;
        return RDLM_OK;
    }
    /* Queued behind old's node: link, then wait for the grant in our own memory. */
    pred = old & ~RDLM_W_HELD;
    s = rdlm_dist_q_put_next(d, pred, RDLM_W_HELD | qid);
    if (s != RDLM_OK) {
        rdlm_error("dist: linking behind rank %u failed: %s; the lock may stall",
                   RDLM_QID_RANK(old), rdlm_status_str(s));
        return s;
    }
    probe_at = rdlm_clock_now_ns() + RDLM_GLOCK_PROBE_NS;
    for (;;) {
        state = rdlm_load(rdlm_dist_q_state(d, q), RDLM_ACQUIRE);
        if ((state & RDLM_Q_GRANTED) == RDLM_Q_GRANTED) {
            *seq_p = state & RDLM_DIST_SEQ_MASK;
            return RDLM_OK;
        }
        gone = 0;
        if (rdlm_clock_now_ns() >= probe_at) {
            gone = rdlm_glock_pred_dead(d, pred);
            probe_at = rdlm_clock_now_ns() + RDLM_GLOCK_PROBE_NS;
        }
        if (gone || rdlm_load(&d->closing, RDLM_RELAXED) ||
            (deadline_ns != UINT64_MAX && rdlm_clock_now_ns() >= deadline_ns)) {
            if (!rdlm_glock_abandon(d, qid, seq_p)) {
                return RDLM_OK; /* granted meanwhile: late, but held */
            }
            if (gone) {
                return RDLM_ERR_PEER_DEAD;
            }
            return rdlm_load(&d->closing, RDLM_RELAXED) ? RDLM_ERR_CLOSED
                                                        : RDLM_ERR_TIMEOUT;
        }
        rdlm_dist_pause(d, &spins);
    }
}

rdlm_status_t rdlm_glock_try(rdlm_dist_t *d, const rdlm_dist_word_t *w, uint64_t guess,
                             uint64_t *qid_p, uint64_t *seq_p)
{
    uint64_t qid, old, expected = guess & RDLM_DIST_SEQ_MASK;
    rdlm_status_t s;
    uint32_t q;

    s = rdlm_glock_claim(d, &q);
    if (s != RDLM_OK) {
        return s;
    }
    qid = RDLM_QID(d->rank, q);
    /* At most two CASes: the second only if the word was free with another sequence
     * than guessed; a held word answers busy after the first. */
    for (int i = 0; i < 2; i++) {
        s = rdlm_dist_w_cas(d, w, expected, RDLM_W_HELD | qid, &old);
        if (s != RDLM_OK || old == expected || (old & RDLM_W_HELD)) {
            break;
        }
        expected = old;
    }
    if (s == RDLM_OK && old == expected) {
        *qid_p = qid;
        *seq_p = expected + 1;
        return RDLM_OK;
    }
    rdlm_dist_q_set_state(d, qid, RDLM_Q_IDLE); /* never published */
    return s != RDLM_OK ? s : RDLM_ERR_BUSY;
}

/* Wait until queue node qid's next is set (a successor swapped itself into W and is
 * linking): polls the own word, or the owner's by get on a cohort hand-over. */
static rdlm_status_t rdlm_glock_wait_next(rdlm_dist_t *d, uint64_t qid, uint64_t *next_p)
{
    unsigned spins = 0;
    rdlm_status_t s;

    for (;;) {
        s = rdlm_dist_q_get_next(d, qid, next_p);
        if (s != RDLM_OK || *next_p != 0) {
            return s;
        }
        rdlm_dist_pause(d, &spins);
    }
}

rdlm_status_t rdlm_glock_pass(rdlm_dist_t *d, const rdlm_dist_word_t *w, uint64_t qid,
                              uint64_t seq)
{
    uint64_t next, old;
    rdlm_status_t s;

    /* Everything written in the critical section before the word moves on. */
    atomic_thread_fence(memory_order_seq_cst);
    for (;;) {
        s = rdlm_dist_q_get_next(d, qid, &next);
        if (s == RDLM_OK && next == 0) {
            s = rdlm_dist_w_cas(d, w, RDLM_W_HELD | qid, seq, &old);
            if (s == RDLM_OK && old == (RDLM_W_HELD | qid)) {
                return rdlm_dist_q_set_state(d, qid, RDLM_Q_IDLE);
            }
            if (s == RDLM_OK) {
                s = rdlm_glock_wait_next(d, qid, &next);
            }
        }
        if (s != RDLM_OK) {
            rdlm_error("dist: passing the lock on failed: %s", rdlm_status_str(s));
            return s;
        }
        next &= ~RDLM_W_HELD;
        s = rdlm_dist_q_cas(d, next, RDLM_Q_WAITING, RDLM_Q_GRANTED | (seq + 1), &old);
        if (s != RDLM_OK) {
            return s;
        }
        /* Nothing refers to qid any more. */
        s = rdlm_dist_q_set_state(d, qid, RDLM_Q_IDLE);
        if (s != RDLM_OK || old == RDLM_Q_WAITING) {
            return s;
        }
        rdlm_debug("dist: passing over an abandoned place of rank %u", RDLM_QID_RANK(next));
        qid = next; /* ABANDONED: its place passes on with the same sequence */
    }
}
