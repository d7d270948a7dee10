/*
 * The requester's side of the home-served queue lock (amq.h has the protocol). A
 * request occupies one of this process's queue nodes, as in the atomic queue: its
 * state word is WAITING until the answer's handler writes the token (GRANT) or
 * RDLM_AMQ_REFUSED(type) into it; the waiter polls that word while it progresses.
 * A request to this process's own home is handled in place, without a message.
 *
 * The queue node is IDLE again as soon as its answer came, also a GRANT: the home
 * keeps the holder, (rank, queue node), in the lock's record until its REL, so the
 * node may serve another request meanwhile (for another lock: a node's next global
 * request for the same lock waits for the node's release, cohort.c). A node-mate
 * that releases the lock (cohorts) then only sends the REL. Before, it reset the
 * holder's queue node through the transport: a blocking round trip through that
 * process's progress over TCP in every cross-node pass of a cohort.
 *
 * A semaphore's requests (SEM_ACQ, SEM_TRY, SEM_COUNT) take a queue node the same way,
 * retired at the answer; its SEM_REL needs none.
 *
 * Tests only (RDLMTEST_AMQ_REPLAY_REL, d->test_replay_rel): each thread sends the last
 * REL it sent once more right after each grant of a lock, while it holds it: a late
 * copy, as a SETTLE's REL and the holder's own may both arrive (am_lease.pml, flaw 6).
 * The home must ignore it (global.stress_stale_rel); releasing the queue node's use
 * that holds now would let the next waiter in beside this process.
 */
#include "amq.h"

#include <sched.h>

#include "clock.h"
#include "glock.h"
#include "log.h"

/* RDLMTEST_AMQ_REPLAY_REL: this thread's last REL and its lock's word. */
static _Thread_local struct {
    int have;
    rdlm_global_word_t w;
    rdlm_amq_msg_t m;
} rdlm_amq_replay;

/* A waiter checks this often whether the home's process died. */
#define RDLM_AMQ_PROBE_NS 100000000ull
/* The longest wait for the answer to a cancel or a try is d->answer_ns, the peer
 * timeout: the home answers at once unless it died (the probe finds that) or stopped
 * (a process stopped with SIGSTOP answers nothing and is not dead: a waiter then
 * returns late by that much, not by a fixed 10 s). */
/* On a crowded host: polls, then polls that yield the CPU first, before the waiter
 * sleeps; its longest sleep. */
#define RDLM_AMQ_CROWDED_POLLS 16u
#define RDLM_AMQ_CROWDED_YIELDS 200u
#define RDLM_AMQ_SLEEP_NS 1000000ull

/* 1 if queue node state is answered: no longer WAITING. */
static int rdlm_amq_answered(uint64_t state)
{
    return (state & 3u) != 1u || state >= (1ull << RDLM_GLOBAL_SEQ_BITS);
}

void rdlm_amq_answer(rdlm_global_t *d, const rdlm_amq_msg_t *m)
{
    rdlm_atomic_u64_t *state;
    uint64_t was, value;

    if (m->q >= RDLM_GLOBAL_QNODES || m->type < RDLM_AMQ_GRANT || m->type > RDLM_AMQ_LOST) {
        rdlm_error("dist: a malformed lock answer (type %u, queue node %u): dropped",
                   m->type, m->q);
        return;
    }
    if (m->seq != rdlm_load(&d->amq_seq[m->q], RDLM_ACQUIRE)) {
        rdlm_debug("dist: a lock answer for an earlier use of queue node %u: ignored",
                   m->q);
        return;
    }
    state = rdlm_global_q_state(d, m->q);
    was = rdlm_load(state, RDLM_ACQUIRE);
    value = m->type == RDLM_AMQ_GRANT ? m->token : RDLM_AMQ_REFUSED(m->type);
    if (rdlm_amq_answered(was)) {
        rdlm_debug("dist: a second lock answer for queue node %u: ignored", m->q);
        return;
    }
    if (m->type == RDLM_AMQ_GRANT && (m->flags & RDLM_AMQ_F_DEAD)) {
        rdlm_fetch_or(&d->amq_dead, 1u << m->q, RDLM_RELAXED); /* before the state */
    }
    if (!rdlm_cas(state, &was, value, RDLM_RELEASE)) {
        rdlm_debug("dist: a second lock answer for queue node %u: ignored", m->q);
    }
}

void rdlm_amq_settle_note(rdlm_global_t *d, uint32_t src, const rdlm_amq_msg_t *m)
{
    uint32_t n;

    if (src >= d->nodes.size || m->rank >= d->nodes.size || m->q >= RDLM_GLOBAL_QNODES ||
        m->offset % d->slot_bytes != 8) {
        rdlm_error("dist: a malformed SETTLE from rank %u: dropped", src);
        return;
    }
    pthread_mutex_lock(&d->settle_lock);
    n = rdlm_load(&d->settle_n, RDLM_RELAXED);
    if (n < sizeof(d->settle) / sizeof(d->settle[0])) {
        d->settle[n].home = d->nodes.node_of[src];
        d->settle[n].slot1 = m->offset / d->slot_bytes + 1;
        d->settle[n].qid = RDLM_QID(m->rank, m->q);
        d->settle[n].granted = m->granted;
        rdlm_store(&d->settle_n, n + 1, RDLM_RELEASE);
    } /* else dropped: the home asks again at its next scan */
    pthread_mutex_unlock(&d->settle_lock);
}

void rdlm_amq_settle_run(rdlm_global_t *d)
{
    uint32_t idle = 0;

    if (rdlm_load(&d->settle_n, RDLM_ACQUIRE) == 0 ||
        !rdlm_cas(&d->settle_run, &idle, 1, RDLM_ACQUIRE)) {
        return; /* nothing, or another thread runs them */
    }
    rdlm_fetch_add(&d->active, 1, RDLM_ACQ_REL); /* destroy waits for us */
    while (rdlm_load(&d->settle_n, RDLM_ACQUIRE) != 0 && d->local != NULL &&
           !rdlm_load(&d->closing, RDLM_ACQUIRE)) {
        uint32_t n, home;
        uint64_t slot1, qid, granted;

        pthread_mutex_lock(&d->settle_lock);
        n = rdlm_load(&d->settle_n, RDLM_RELAXED) - 1;
        home = d->settle[n].home;
        slot1 = d->settle[n].slot1;
        qid = d->settle[n].qid;
        granted = d->settle[n].granted;
        rdlm_store(&d->settle_n, n, RDLM_RELEASE);
        pthread_mutex_unlock(&d->settle_lock);
        rdlm_global_settle_dead(d, home, slot1, qid, granted);
    }
    rdlm_fetch_sub(&d->active, 1, RDLM_ACQ_REL);
    rdlm_store(&d->settle_run, 0, RDLM_RELEASE);
}

/* Send request m to the home of w (handled in place when that is this process);
 * counted in home_ops, and in home_ops_posted when nobody waits for an answer. */
static rdlm_status_t rdlm_amq_send(rdlm_global_t *d, const rdlm_global_word_t *w,
                                   rdlm_amq_msg_t *m)
{
    uint32_t home = d->nodes.leader_of[w->node];
    rdlm_status_t s;

    m->offset = w->offset;
    if (home == d->rank) {
        rdlm_global_serve_own(d, w); /* requests that came first are queued first */
        rdlm_amq_home_request(d, d->rank, m);
        /* A grant this made (a release to the next waiter) goes out now: this
         * process may not progress again for a while, and its progress thread may
         * be backing off for up to 1 ms (a semaphore's waiters waited about that
         * long for each gate, 3.9k acquires/s against 27-30k before this line). */
        rdlm_amq_flush(d);
        return RDLM_OK;
    }
    rdlm_fetch_add(&d->stats.home_ops, 1, RDLM_RELAXED);
    if (m->type == RDLM_AMQ_REL || m->type == RDLM_AMQ_SEM_REL ||
        m->type == RDLM_AMQ_CANCEL) {
        rdlm_fetch_add(&d->stats.home_ops_posted, 1, RDLM_RELAXED);
    }
    s = d->tl->am->send(d->tl, home, RDLM_GLOBAL_AM_LOCK_REQ, m, sizeof(*m));
    rdlm_amq_flush(d); /* the send's wait may have run this home's handler */
    return s;
}

/* The transport's sleep's question: was the queue node (arg) answered meanwhile? */
static int rdlm_amq_answered_at(void *arg)
{
    return rdlm_amq_answered(rdlm_load((rdlm_atomic_u64_t *)arg, RDLM_ACQUIRE));
}

/* Wait until own queue node q is answered (*state_p its state then): RDLM_OK; or
 * RDLM_ERR_PEER_DEAD, the home's process died; with give_up, RDLM_ERR_TIMEOUT past
 * deadline_ns and RDLM_ERR_CLOSED while the context closes. The answer is a message
 * to this process. On a crowded host the waiter polls a little, then yields the CPU
 * before each poll (the holder and the home run, and it answers at once when its
 * turn comes), then sleeps until the transport has an event (at most
 * RDLM_AMQ_SLEEP_NS). Measured with 4 processes on 4 virtual nodes, 2 CPUs: 20-25k
 * hand-offs/s sleeping after the polls, 63-75k with the yields first (MPI_Win_lock
 * 26-31k); spinning cost the hand-offs more than either. */
static rdlm_status_t rdlm_amq_wait(rdlm_global_t *d, uint32_t q, uint32_t home,
                                   uint64_t deadline_ns, int give_up, uint64_t *state_p)
{
    uint64_t probe_at = rdlm_clock_now_ns() + RDLM_AMQ_PROBE_NS;
    rdlm_atomic_u64_t *word = rdlm_global_q_state(d, q);
    unsigned spins = 0;

    for (;;) {
        uint64_t state = rdlm_load(word, RDLM_ACQUIRE), now;

        if (rdlm_amq_answered(state)) {
            *state_p = state;
            return RDLM_OK;
        }
        now = rdlm_clock_now_ns();
        if (now >= probe_at) {
            if (home != d->rank && rdlm_global_rank_gone(d, home)) {
                rdlm_error("dist: rank %u, home of a lock this process waits for, died",
                           home);
                return RDLM_ERR_PEER_DEAD;
            }
            probe_at = now + RDLM_AMQ_PROBE_NS;
        }
        if (give_up && rdlm_load(&d->closing, RDLM_RELAXED)) {
            return RDLM_ERR_CLOSED;
        }
        if (now >= deadline_ns) {
            return RDLM_ERR_TIMEOUT;
        }
        if (d->crowded && spins >= RDLM_AMQ_CROWDED_POLLS + RDLM_AMQ_CROWDED_YIELDS) {
            d->tl->setup->sleep(d->tl, RDLM_AMQ_SLEEP_NS, rdlm_amq_answered_at, word);
            rdlm_global_progress(d);
        } else if (d->crowded) {
            if (spins++ >= RDLM_AMQ_CROWDED_POLLS) {
                sched_yield();
            }
            rdlm_global_progress(d);
        } else {
            rdlm_global_pause(d, &spins);
        }
    }
}

/* Own queue node q (in its use seq) is done with: IDLE again. */
static void rdlm_amq_retire(rdlm_global_t *d, uint32_t q)
{
    rdlm_store(rdlm_global_q_state(d, q), RDLM_Q_IDLE, RDLM_RELEASE);
}

/* The outcome of q's answered request (its state): granted (RDLM_OK, *token_p), or
 * refused (q retired): RDLM_ERR_BUSY, refused_status for a cancel that won,
 * RDLM_ERR_PEER_DEAD for a holder that died or a home that counts this process dead. */
static rdlm_status_t rdlm_amq_outcome(rdlm_global_t *d, uint32_t q, uint64_t state,
                                      rdlm_status_t refused_status, uint64_t *token_p)
{
    rdlm_amq_retire(d, q); /* answered: the home keeps the rest (top of the file) */
    if (RDLM_Q_IS_GRANTED(state)) {
        *token_p = state;
        return rdlm_fetch_and(&d->amq_dead, ~(1u << q), RDLM_ACQ_REL) & (1u << q)
                   ? RDLM_OWNER_DEAD /* the holder before died holding (leases) */
                   : RDLM_OK;
    }
    if (state == RDLM_AMQ_REFUSED(RDLM_AMQ_BUSY)) {
        return RDLM_ERR_BUSY;
    }
    if (state == RDLM_AMQ_REFUSED(RDLM_AMQ_DEAD)) {
        rdlm_error("dist: the holder of a lock this process waited for died; giving up "
                   "the place (RDLM_ERR_PEER_DEAD)");
        return RDLM_ERR_PEER_DEAD;
    }
    if (state == RDLM_AMQ_REFUSED(RDLM_AMQ_LOST)) {
        rdlm_error("dist: the home of a semaphore this process waited for counts this "
                   "process as dead (its link to it was lost); giving up the place "
                   "(RDLM_ERR_PEER_DEAD)");
        return RDLM_ERR_PEER_DEAD;
    }
    return refused_status;
}

/* Send request m (its type and payload) for a fresh use of a claimed queue node qid
 * and wait for its answer (ACQ, SEM_ACQ: until deadline_ns, then cancel). */
static rdlm_status_t rdlm_amq_request(rdlm_global_t *d, const rdlm_global_word_t *w,
                                      rdlm_amq_msg_t m, uint64_t qid, uint64_t deadline_ns,
                                      uint64_t *token_p)
{
    uint32_t q = RDLM_QID_INDEX(qid), home = d->nodes.leader_of[w->node];
    uint64_t state = 0;
    int give_up = m.type == RDLM_AMQ_ACQ || m.type == RDLM_AMQ_SEM_ACQ;
    rdlm_status_t s, gave_up;

    m.q = (uint8_t)q;
    rdlm_fetch_and(&d->amq_dead, ~(1u << q), RDLM_RELAXED);
    m.seq = rdlm_fetch_add(&d->amq_seq[q], 1, RDLM_ACQ_REL) + 1;
    s = rdlm_amq_send(d, w, &m);
    if (s == RDLM_OK) {
        s = rdlm_amq_wait(d, q, home, deadline_ns, give_up, &state);
    }
    if (s == RDLM_OK) {
        return rdlm_amq_outcome(d, q, state, RDLM_ERR_BUSY, token_p);
    }
    if (s != RDLM_ERR_TIMEOUT && s != RDLM_ERR_CLOSED) {
        rdlm_amq_retire(d, q); /* the home is gone: no answer comes any more */
        return s;
    }
    /* Gave up: cancel; the answer is CANCELLED, or the GRANT that crossed it. */
    gave_up = s;
    m.type = RDLM_AMQ_CANCEL;
    s = rdlm_amq_send(d, w, &m);
    if (s == RDLM_OK) {
        s = rdlm_amq_wait(d, q, home, rdlm_clock_now_ns() + d->answer_ns, 0, &state);
    }
    if (s == RDLM_OK && RDLM_Q_IS_GRANTED(state)) {
        rdlm_debug("dist: a lock's grant crossed this process's cancel: held after all");
    }
    if (s == RDLM_OK) {
        return rdlm_amq_outcome(d, q, state, gave_up, token_p);
    }
    if (s == RDLM_ERR_TIMEOUT) {
        /* The queue node stays in use: a late grant must not land on its next use. */
        rdlm_error("dist: the home of a lock (rank %u) did not answer a cancel within %llu "
                   "ms (RDLM_PEER_TIMEOUT_MS); one queue node of this process stays in use",
                   home, (unsigned long long)(d->answer_ns / 1000000u));
        return gave_up;
    }
    rdlm_amq_retire(d, q);
    return s;
}

rdlm_status_t rdlm_amq_acquire(rdlm_global_t *d, const rdlm_global_word_t *w,
                               uint64_t deadline_ns, uint64_t *qid_p, uint64_t *token_p)
{
    uint64_t ref;
    rdlm_status_t s = rdlm_glock_claim(d, qid_p, &ref);

    if (s == RDLM_OK) {
        s = rdlm_amq_request(d, w, (rdlm_amq_msg_t){.type = RDLM_AMQ_ACQ}, *qid_p,
                             deadline_ns, token_p);
    }
    if ((s == RDLM_OK || s == RDLM_OWNER_DEAD) && d->test_replay_rel &&
        rdlm_amq_replay.have) {
        rdlm_amq_msg_t late = rdlm_amq_replay.m; /* the send sets its offset again */

        rdlm_amq_send(d, &rdlm_amq_replay.w, &late);
    }
    return s;
}

rdlm_status_t rdlm_amq_try(rdlm_global_t *d, const rdlm_global_word_t *w, uint64_t *qid_p,
                           uint64_t *token_p)
{
    uint64_t ref;
    rdlm_status_t s = rdlm_glock_claim(d, qid_p, &ref);

    return s != RDLM_OK
               ? s
               : rdlm_amq_request(d, w, (rdlm_amq_msg_t){.type = RDLM_AMQ_TRY}, *qid_p,
                                  rdlm_clock_now_ns() + d->answer_ns, token_p);
}

rdlm_status_t rdlm_amq_pass(rdlm_global_t *d, const rdlm_global_word_t *w, uint64_t qid,
                            uint64_t granted, uint64_t token, uint16_t flags)
{
    rdlm_amq_msg_t m = {.type = RDLM_AMQ_REL,
                        .q = (uint8_t)RDLM_QID_INDEX(qid),
                        .flags = flags,
                        .rank = RDLM_QID_RANK(qid),
                        .token = token,
                        .granted = granted};
    rdlm_status_t s;

    /* Everything written in the critical section before the lock moves on. */
    atomic_thread_fence(memory_order_seq_cst);
    if (d->test_replay_rel) {
        rdlm_amq_replay.have = 1;
        rdlm_amq_replay.w = *w;
        rdlm_amq_replay.m = m;
    }
    s = rdlm_amq_send(d, w, &m);
    if (s != RDLM_OK) {
        rdlm_error("dist: releasing a lock: its home did not take the release: %s",
                   rdlm_status_str(s));
    }
    return s;
}

/* A semaphore's request m on a queue node of its own, retired at the answer (the
 * home keeps the permits, not the holders). */
static rdlm_status_t rdlm_amq_sem_request(rdlm_global_t *d, const rdlm_global_word_t *w,
                                          rdlm_amq_msg_t m, uint64_t deadline_ns,
                                          uint64_t *token_p)
{
    uint64_t qid, ref;
    rdlm_status_t s = rdlm_glock_claim(d, &qid, &ref);

    return s != RDLM_OK ? s : rdlm_amq_request(d, w, m, qid, deadline_ns, token_p);
}

rdlm_status_t rdlm_amq_sem_acquire(rdlm_global_t *d, const rdlm_global_word_t *w,
                                   uint32_t k, uint32_t permits, uint64_t deadline_ns,
                                   int try_only)
{
    rdlm_amq_msg_t m = {
        .type = try_only ? RDLM_AMQ_SEM_TRY : RDLM_AMQ_SEM_ACQ, .k = k, .token = permits};
    uint64_t granted;

    return rdlm_amq_sem_request(
        d, w, m, try_only ? rdlm_clock_now_ns() + d->answer_ns : deadline_ns,
        &granted);
}

rdlm_status_t rdlm_amq_sem_release(rdlm_global_t *d, const rdlm_global_word_t *w,
                                   uint32_t k)
{
    rdlm_amq_msg_t m = {.type = RDLM_AMQ_SEM_REL, .k = k};

    atomic_thread_fence(memory_order_seq_cst); /* the holder's writes before the permits */
    return rdlm_amq_send(d, w, &m);
}

rdlm_status_t rdlm_amq_sem_taken(rdlm_global_t *d, const rdlm_global_word_t *w,
                                 uint64_t *taken_p)
{
    rdlm_amq_msg_t m = {.type = RDLM_AMQ_SEM_COUNT};
    uint64_t answer;
    rdlm_status_t s =
        rdlm_amq_sem_request(d, w, m, rdlm_clock_now_ns() + d->answer_ns, &answer);

    if (s == RDLM_OK) {
        *taken_p = answer - RDLM_AMQ_COUNT_BASE;
    }
    return s;
}
