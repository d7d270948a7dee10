/*
 * The global queue lock (see global.h for the protocol and glock.h for the contracts).
 *
 *   W      FREE(t) = t (bit 63 clear; t the lock's last token, 0 before the first)
 *          HELD = RDLM_W_HELD | ref of the queue's tail, plus RDLM_W_FIRST when that
 *          tail took W free: it holds the lock and nobody is queued behind it yet
 *   H      the ref the lock was last handed to by a pass (0 before the first)
 *   state  IDLE 0 | WAITING(g) | ABANDONED(g, ahead, f), sealed or not |
 *          PASSED(g, holder) | GRANTED(t) = t (t >= 2^40: epoch >= 1); ABANDONED
 *          names the place its waiter queued behind (f: that one took W free);
 *          PASSED, a sealed ABANDONED, once a pass went over it, the holder
 *          passing the lock through it (global.h)
 *   next   NOLINK(g) | LINK(ref) = RDLM_W_HELD | ref
 *   ref    qid | generation << 48: one use of a queue node. Links, grants and
 *          pass-overs name the use they are meant for, so a late write by a process
 *          that was paused past its lease cannot land on a later use.
 *
 * A queue node is reused only when IDLE, and becomes IDLE only when nothing refers
 * to it any more: its holder passed the word on (or freed it), or a passer went over
 * it after it was abandoned.
 *
 * Re-adoption. A waiter that gave up leaves its place in the queue until a pass goes
 * over it; a process whose acquires time out often would queue again and again at
 * the tail and run out of queue nodes. Its next acquire of the same lock takes its
 * place back instead, unless it is sealed: one CAS on its own state, from the
 * ABANDONED value it wrote to WAITING(g), and it waits there (still linked, still in
 * its turn). A pass records itself in each abandoned place it goes over (PASSED,
 * sealed) before it reads its next or frees W from it; its grant CAS that found the
 * place abandoned may race the re-adoption, so when the record CAS finds WAITING(g)
 * it grants again. With recovery, a waiter about to take the lock over from a dead
 * holder first seals the places its walk went over, each by CAS from the value it
 * read, and takes over only if every seal held: else a place it walked over, taken
 * back, would be first behind the dead holder too, and take over as well. So a
 * process has at most one unsealed abandoned place per lock. An acquire that finds
 * every queue node in use while some are abandoned waits (up to its deadline) for
 * passes to free them. Spin models: tests/model/dist_lock.pml -DREADOPT,
 * glock_recovery.pml -DREADOPT.
 *
 * Recovery (with a lease: d->recovery). A waiter whose predecessor p's process the
 * transport reports dead asks the lease authority whether p's lease has ended. Once
 * it has, the waiter takes the lock over if p held it: p took W free (the FIRST bit
 * of the word the waiter replaced), or a pass handed the lock to p (H names p), or a
 * passer that then died was handing it to the waiter itself (H names the waiter).
 * Otherwise p was itself waiting behind a live holder, whose pass finds p dead after
 * naming p in H: then the same rule applies. The taker's token is the first of a new
 * epoch from the authority, so it is larger than every earlier token of the lock.
 * Abandoned places in between do not hide a dead holder: the waiter walks over them
 * (each names the place ahead of it, or the holder passing the lock through it) to
 * the first one that is not abandoned, p, and H naming any place it walked over
 * counts as naming p. Spin model: tests/model/glock_recovery.pml (-DCODE
 * -DCODE_ABANDON).
 *
 * Intents (with leases, d->intents). A process that dies after its enqueue replaced W
 * and before its link reached the place ahead of it left that place's release waiting
 * for the link for good, and the waiters behind it with it: the dead process never
 * held the lock, so nobody takes it over, and its memory, where it kept the place it
 * queued behind, is gone with it (a soak, dist_death_churn, hung so in 2 of 17 runs).
 * So each queue node has an intent word at every home (after the barrier's flags):
 * before a CAS that would queue its use behind a tail, the enqueue writes there (a
 * fetching swap: complete at the home) the use's generation and that tail, and it
 * enqueues by CAS only: whenever W names a place, that place's intent names the one
 * ahead of it. The waiter behind a dead place that never held the lock, once the
 * authority ended its lease, reads its intent, seals the abandoned places its walk
 * went over, and links its own place into the next word of the place the intent
 * names, by CAS from that place's NOLINK: the dead place is skipped, and a late link
 * of its own (a process paused past its lease) fails on it (rdlm_glock_mend). A
 * release waiting for a link whose W's tail leads, over abandoned places, to a dead
 * place with an ended lease and an intent naming the releasing place sets that link
 * itself and passes the lock to the dead place (the next waiter behind it takes it
 * over: rdlm_glock_dead_tail). Spin model: glock_recovery.pml -DINTENT
 * -DINTENT_TAIL_WALK. Costs: an enqueue behind a tail writes its
 * intent first (one more round trip where the acquire waits anyway), a word whose CAS
 * fails 32 times in a row (heavy contention) is queued on by SWAP without an intent
 * (its window stays), and intents take 256 bytes per process at each home. FIRST is
 * always set by the CAS that takes W free, so the SWAP path's second window (a death
 * between a SWAP that found W free and the CAS that adds FIRST) is gone with it.
 *
 * Posted releases. Where the transport posts CASes (d->posts_release), a pass that
 * finds no successor linked (the uncontended release) issues the free CAS of W and
 * returns, so the acquire's CAS is the only round trip of an acquire + release that
 * the caller waits for. The queue node stays in use until the CAS came back; then
 * the process finishes the release (rdlm_glock_finish: from its next acquire, try or
 * pass, its waits for a grant, its progress thread and destroy): freed, the queue
 * node becomes IDLE; failed, because a successor swapped W in meanwhile, the rest of
 * the pass runs (wait for its link, grant it) as a blocking pass would have run it.
 * A later acquire's CAS may land before the free: it then queues behind the
 * releasing place and is granted by that finish. Only where the last release of the
 * word here found no successor (calm_hint): under contention a failed posted free
 * delays the successor's grant until the finish, which cost a quarter of the
 * hand-offs between 2 virtual nodes. Only with a progress thread (the finish must
 * not wait for this process's next call: its successor may be what that call waits
 * for), only the process's own queue node (a cohort hand-over reads another's with
 * gets) and only without leases (recovery reads H and the FIRST bit, which the
 * blocking path keeps exact). Spin model: tests/model/dist_lock.pml -DPOSTED.
 */
#include "glock.h"

#include <sched.h>
#include <signal.h>

#include "amq.h"

#include "clock.h"
#include "log.h"

/* A queued waiter checks every this often whether the process ahead of it died. */
#define RDLM_GLOCK_PROBE_NS 100000000ull
/* A release waiting this long for its successor's link says so (and again). */
#define RDLM_GLOCK_LINK_WARN_NS 10000000000ull
/* Most abandoned places a waiter walks over to find the one it really waits behind. */
#define RDLM_GLOCK_WALK_MAX 64u
/* CASes an enqueue tries (from the guess, then from what W held) before it swaps. */
#define RDLM_GLOCK_ENQUEUE_CAS 2
/* With intents: CASes an enqueue tries before it swaps without one (a busy word). */
#define RDLM_GLOCK_INTENT_CAS 32

/* An enqueue intent (top of the file, "Intents"): the use's generation and the place
 * it queues behind (rank, index, generation; whether that one took W free). */
#define RDLM_INTENT_VALID (1ull << 63)
#define RDLM_INTENT_FIRST (1ull << 62)

static uint64_t rdlm_glock_intent(uint32_t gen, uint64_t held)
{
    uint64_t pred = RDLM_QREF_OF(held);

    return RDLM_INTENT_VALID | ((held & RDLM_W_FIRST) ? RDLM_INTENT_FIRST : 0) |
           (uint64_t)gen << 45 | (uint64_t)RDLM_QREF_GEN(pred) << 31 |
           (uint64_t)RDLM_QID_RANK(pred) << 5 | RDLM_QID_INDEX(pred);
}

/* 1 if intent v is of the use in generation gen: *pred_p the place it queued behind,
 * *first_p whether that one took W free. */
static int rdlm_glock_intent_of(uint64_t v, uint32_t gen, uint64_t *pred_p, int *first_p)
{
    if (!(v & RDLM_INTENT_VALID) || ((v >> 45) & RDLM_QGEN_MASK) != gen) {
        return 0;
    }
    *pred_p = RDLM_QREF(RDLM_QID((v >> 5) & (RDLM_GLOBAL_INTENT_RANKS - 1), v & 31u),
                        (v >> 31) & RDLM_QGEN_MASK);
    *first_p = (v & RDLM_INTENT_FIRST) != 0;
    return 1;
}

/* Whether enqueues write intents and waiters use them: the homes have them and the
 * context recovers dead holders' locks (every process holds a lease). */
static int rdlm_glock_intents(const rdlm_global_t *d)
{
    return d->intents && d->recovery.ended != NULL;
}

/* Read the intent of queue node qid at the home of w. */
static rdlm_status_t rdlm_glock_intent_read(rdlm_global_t *d, const rdlm_global_word_t *w,
                                            uint64_t qid, uint64_t *v_p)
{
    rdlm_global_word_t iw;

    rdlm_global_intent_word(d, w, qid, &iw);
    return rdlm_global_w_fadd(d, &iw, 0, v_p);
}

/* rdlm_glock_claim without the log line: 0 if all are in use. */
static int rdlm_glock_claim_one(rdlm_global_t *d, uint64_t *qid_p, uint64_t *ref_p)
{
    for (uint32_t q = 0; q < RDLM_GLOBAL_QNODES; q++) {
        uint32_t bit = 1u << q, gen;

        if (rdlm_load(rdlm_global_q_state(d, q), RDLM_ACQUIRE) != RDLM_Q_IDLE ||
            (rdlm_fetch_or(&d->qclaim, bit, RDLM_ACQUIRE) & bit)) {
            continue;
        }
        if (rdlm_load(rdlm_global_q_state(d, q), RDLM_ACQUIRE) == RDLM_Q_IDLE) {
            gen = (d->qgen[q] + 1u) & RDLM_QGEN_MASK;
            d->qgen[q] = (uint16_t)gen;
            rdlm_store(rdlm_global_q_next(d, q), RDLM_Q_NOLINK(gen), RDLM_RELAXED);
            rdlm_global_q_set_own_state(d, q, RDLM_Q_WAITING(gen)); /* not published */
            rdlm_fetch_and(&d->qclaim, ~bit, RDLM_RELEASE);
            *qid_p = RDLM_QID(d->rank, q);
            *ref_p = RDLM_QREF(*qid_p, gen);
            return 1;
        }
        rdlm_fetch_and(&d->qclaim, ~bit, RDLM_RELEASE);
    }
    return 0;
}

rdlm_status_t rdlm_glock_claim(rdlm_global_t *d, uint64_t *qid_p, uint64_t *ref_p)
{
    if (rdlm_glock_claim_one(d, qid_p, ref_p)) {
        return RDLM_OK;
    }
    rdlm_error("dist: all %u queue nodes of this process are in use (waits on many locks "
               "at once, or abandoned places not yet passed over)",
               RDLM_GLOBAL_QNODES);
    return RDLM_ERR_NO_RESOURCE;
}

uint64_t rdlm_glock_first_token(const rdlm_global_t *d, uint64_t t)
{
    uint64_t floor = (uint64_t)d->epoch << RDLM_GLOBAL_SEQ_BITS;

    return t >= floor ? t + 1 : floor + 1;
}

/* Whether one of this process's queue nodes is an abandoned place (a pass frees it). */
static int rdlm_glock_any_abandoned(rdlm_global_t *d)
{
    for (uint32_t q = 0; q < RDLM_GLOBAL_QNODES; q++) {
        uint64_t state = rdlm_load(rdlm_global_q_state(d, q), RDLM_ACQUIRE);

        if (rdlm_q_is_abandoned(state, rdlm_q_gen(state))) {
            return 1;
        }
    }
    return 0;
}

/* Claim a queue node for an acquire that may wait until deadline_ns. All in use, some
 * by abandoned places (on other locks, or being passed over): passes free those, so
 * wait for one; RDLM_ERR_TIMEOUT at the deadline, RDLM_ERR_CLOSED at destroy. All in
 * use by waits and holds: RDLM_ERR_NO_RESOURCE (rdlm_glock_claim). */
static rdlm_status_t rdlm_glock_claim_by(rdlm_global_t *d, uint64_t deadline_ns,
                                         uint64_t *qid_p, uint64_t *ref_p)
{
    unsigned spins = 0;

    while (!rdlm_glock_claim_one(d, qid_p, ref_p)) {
        if (!rdlm_glock_any_abandoned(d)) {
            return rdlm_glock_claim(d, qid_p, ref_p); /* or one was freed just now */
        }
        if (spins == 0) {
            rdlm_debug("dist: all %u queue nodes of this process are in use, some by "
                       "places given up on other locks: waiting for passes to free one",
                       RDLM_GLOBAL_QNODES);
        }
        if (rdlm_load(&d->closing, RDLM_RELAXED)) {
            return RDLM_ERR_CLOSED;
        }
        if (deadline_ns != UINT64_MAX && rdlm_clock_now_ns() >= deadline_ns) {
            return RDLM_ERR_TIMEOUT;
        }
        rdlm_glock_finish(d, 0); /* a posted release of ours may hold one */
        rdlm_global_pause(d, &spins);
    }
    return RDLM_OK;
}

/* The word an own queue node's use queues on (d->qword), as re-adoption matches it. */
static uint64_t rdlm_glock_word_key(const rdlm_global_word_t *w)
{
    return w->offset << 24 | w->node;
}

/* Take back a place this process abandoned on w that no pass went over yet (top of the
 * file, "Re-adoption"): 1 with *qid_p and *state_p, the ABANDONED value it had (its
 * generation, the place ahead, whether that one took W free); the place is
 * WAITING(g) again. 0: none. The state is read before the word:
 * a use retired and claimed again for w after the read changed the state, so the CAS
 * fails. */
static int rdlm_glock_readopt(rdlm_global_t *d, const rdlm_global_word_t *w,
                              uint64_t *qid_p, uint64_t *state_p)
{
    uint64_t key = rdlm_glock_word_key(w), state, old;

    for (uint32_t q = 0; q < RDLM_GLOBAL_QNODES; q++) {
        state = rdlm_load(rdlm_global_q_state(d, q), RDLM_ACQUIRE);
        if (!rdlm_q_is_unpassed(state) || rdlm_load(&d->qword[q], RDLM_ACQUIRE) != key) {
            continue;
        }
        if (rdlm_global_q_cas(d, RDLM_QID(d->rank, q), state,
                              RDLM_Q_WAITING(rdlm_q_gen(state)), &old) == RDLM_OK &&
            old == state) {
            rdlm_debug("dist: taking back the place given up in a lock's queue");
            *qid_p = RDLM_QID(d->rank, q);
            *state_p = state;
            return 1;
        }
    }
    return 0;
}

/* A caller's guess of the free word: its last token, or 0 (a word never used) if that
 * is not one of this context's. */
static uint64_t rdlm_glock_guess(const rdlm_global_t *d, uint64_t guess)
{
    return guess > ((uint64_t)d->epoch << RDLM_GLOBAL_SEQ_BITS) ? guess : 0;
}

/* Record in w's holder word H that the lock was handed to ref, completed before the
 * caller goes on: a write that landed after the grant (or, on the SWAP path, after
 * this process passed the lock on) could overwrite a newer H and leave the waiter
 * behind a dead process unable to tell who held (tests/model: BUG_H_AFTER_GRANT,
 * code_outside_windows_stale_put). One round trip per cross-node hand-off. Only when
 * the slots have holder words (contexts with leases). */
static void rdlm_glock_record_holder(rdlm_global_t *d, const rdlm_global_word_t *w,
                                     uint64_t ref)
{
    rdlm_global_word_t h;

    if (d->slot_bytes == RDLM_GLOBAL_SLOT_BYTES_HOLDER) {
        rdlm_global_holder_word(w, &h);
        rdlm_global_home_write(d, &h, ref);
    }
}

/* RDLM_W_FIRST where recovery may read it (slots with holder words), else 0: without
 * leases W never carries it, and a SWAP that finds W free needs no second atomic. */
static uint64_t rdlm_glock_first_bit(const rdlm_global_t *d)
{
    return d->slot_bytes == RDLM_GLOBAL_SLOT_BYTES_HOLDER ? RDLM_W_FIRST : 0;
}

/* The bit of w in d->freed_hint and d->calm_hint. */
static uint64_t rdlm_glock_hint_bit(const rdlm_global_word_t *w)
{
    return 1ull << ((w->offset / RDLM_GLOBAL_SLOT_BYTES + w->node * 7u) & 63u);
}

/* Record in d->calm_hint whether w's release here found no successor. */
static void rdlm_glock_calm(rdlm_global_t *d, const rdlm_global_word_t *w, int calm)
{
    if (calm) {
        rdlm_fetch_or(&d->calm_hint, rdlm_glock_hint_bit(w), RDLM_RELAXED);
    } else {
        rdlm_fetch_and(&d->calm_hint, ~rdlm_glock_hint_bit(w), RDLM_RELAXED);
    }
}

/* With intents: make ref the tail of W by CAS, from guess and then from what W held,
 * each CAS that queues behind a tail preceded by ref's intent naming that tail,
 * complete at the home (a fetching swap of the intent word): whenever W names ref, its
 * intent names the place ahead of it. *old_p = the word replaced. RDLM_INPROGRESS
 * after RDLM_GLOCK_INTENT_CAS failed CASes (a busy word): the intent is cleared, the
 * caller swaps. */
static rdlm_status_t rdlm_glock_enqueue_intent(rdlm_global_t *d,
                                               const rdlm_global_word_t *w, uint64_t guess,
                                               uint64_t ref, uint64_t *old_p)
{
    uint64_t expected = guess, desired, old;
    rdlm_global_word_t iw;
    rdlm_status_t s;

    rdlm_global_intent_word(d, w, ref & RDLM_QID_MASK, &iw);
    for (int i = 0; i < RDLM_GLOCK_INTENT_CAS; i++) {
        desired = RDLM_W_HELD | RDLM_W_FIRST | ref;
        if (expected & RDLM_W_HELD) {
            s = rdlm_global_w_swap(d, &iw, rdlm_glock_intent(RDLM_QREF_GEN(ref), expected),
                                   &old);
            if (s != RDLM_OK) {
                return s;
            }
            desired = RDLM_W_HELD | ref;
        }
        s = rdlm_global_w_cas(d, w, expected, desired, &old);
        if (s != RDLM_OK || old == expected) {
            *old_p = old;
            return s;
        }
        expected = old;
    }
    s = rdlm_global_w_swap(d, &iw, 0, &old);
    return s != RDLM_OK ? s : RDLM_INPROGRESS;
}

/* Make ref the tail of W; *old_p = the word replaced. With intents, by
 * rdlm_glock_enqueue_intent, else (or when that gives up) as follows. When this
 * process was the last to free w (or has not used it yet), by CAS from guess (the
 * token it freed it with),
 * then once from whatever W held (the failed CAS returns it): exact, one remote atomic
 * when nobody took w since. Otherwise, or when W changed again between the two CASes,
 * by SWAP (one remote atomic when queueing behind someone); if W turns out free, the
 * FIRST bit is added by CAS, and if someone queued behind ref before that, H is set to
 * ref instead. Without intents a death between the SWAP and that CAS or write leaves
 * the lock stuck (tests/model: code_swap_window_stalls). The CASes are bounded: a process
 * at the home retakes a free W through the loopback in well under a remote round trip, and
 * a CAS loop chasing its tokens starved the remote process (global.homebusy.p2.vn2). */
static rdlm_status_t rdlm_glock_enqueue(rdlm_global_t *d, const rdlm_global_word_t *w,
                                        uint64_t guess, uint64_t ref, uint64_t *old_p)
{
    uint64_t expected = guess, desired, old, bit = rdlm_glock_hint_bit(w);
    uint64_t first = rdlm_glock_first_bit(d);
    int hinted = (rdlm_fetch_and(&d->freed_hint, ~bit, RDLM_RELAXED) & bit) != 0;
    rdlm_status_t s;

    if (rdlm_glock_intents(d)) {
        s = rdlm_glock_enqueue_intent(d, w, guess, ref, old_p);
        if (s != RDLM_INPROGRESS) {
            return s;
        }
        rdlm_debug("dist: a lock's word kept changing under %u CASes: queueing by SWAP, "
                   "without an intent",
                   RDLM_GLOCK_INTENT_CAS);
    } else if (hinted) {
        for (int i = 0; i < RDLM_GLOCK_ENQUEUE_CAS; i++) {
            desired = RDLM_W_HELD | ref | ((expected & RDLM_W_HELD) ? 0 : first);
            s = rdlm_global_w_cas(d, w, expected, desired, &old);
            if (s != RDLM_OK || old == expected) {
                *old_p = old;
                return s;
            }
            expected = old;
            rdlm_glock_finish(d, 0); /* a failed posted free of ours may be in */
        }
    }
    s = rdlm_global_w_swap(d, w, RDLM_W_HELD | ref, old_p);
    if (s != RDLM_OK || (*old_p & RDLM_W_HELD) || first == 0) {
        return s;
    }
    s = rdlm_global_w_cas(d, w, RDLM_W_HELD | ref, RDLM_W_HELD | first | ref, &old);
    if (s != RDLM_OK || old != (RDLM_W_HELD | ref)) {
        rdlm_glock_record_holder(d, w, ref);
    }
    return RDLM_OK; /* held either way */
}

/* Give up a queued place: WAITING(gen) -> ABANDONED(gen, pred, first), naming the
 * place it queued behind for the waiter behind it (rdlm_glock_walk). 1 if given up;
 * 0 if the grant won the race (*token_p set: the caller holds the lock). */
static int rdlm_glock_abandon(rdlm_global_t *d, uint64_t qid, uint32_t gen, uint64_t pred,
                              int first, uint64_t *token_p)
{
    uint64_t old = RDLM_Q_WAITING(gen);

    rdlm_global_q_cas(d, qid, RDLM_Q_WAITING(gen), rdlm_q_abandoned(gen, pred, first),
                      &old);
    if (old == RDLM_Q_WAITING(gen)) {
        return 1;
    }
    *token_p = old;
    return 0;
}

/* The places a waiter waits behind (any state; pred the one it queued behind, first:
 * pred took W free). */
typedef struct rdlm_glock_ahead {
    uint64_t head; /* the first that is not abandoned (or the last walked, at the bound) */
    int first;     /* head holds the lock: it took W free, or it is passing it on */
    unsigned n;
    uint64_t abandoned[RDLM_GLOCK_WALK_MAX]; /* the abandoned places walked over */
    uint64_t states[RDLM_GLOCK_WALK_MAX];    /* the state the walk read in each */
} rdlm_glock_ahead_t;

/* Walk from pred over abandoned places (each names the place ahead of it) to the
 * first that is not, one get per place. 1 if head's process is gone: for the
 * transport (a watched peer that died: RDLM_PEER_FAILURE), or, on this host, by its
 * process record (peers.h; shared memory answers for a dead process): nobody can
 * grant the places behind it any more, as a grant or a pass over it needs it. */
static int rdlm_glock_walk(rdlm_global_t *d, uint64_t pred, int first,
                           rdlm_glock_ahead_t *a)
{
    uint64_t state;
    rdlm_status_t s;

    a->n = 0;
    for (;;) {
        s = rdlm_global_q_get_state(d, pred & RDLM_QID_MASK, &state);
        if (s != RDLM_OK || a->n == RDLM_GLOCK_WALK_MAX ||
            !rdlm_q_is_abandoned(state, RDLM_QREF_GEN(pred))) {
            break;
        }
        a->states[a->n] = state;
        a->abandoned[a->n++] = pred;
        first = rdlm_q_abandoned_first(state);
        pred = rdlm_q_abandoned_ahead(state);
    }
    a->head = pred;
    a->first = first;
    return s == RDLM_ERR_PEER_DEAD ||
           (s == RDLM_OK && rdlm_global_proc_gone(d->procs, RDLM_QID_RANK(pred)));
}

/* H names the dead head, a place walked over, or this waiter's own place ref. */
static int rdlm_glock_handed_here(const rdlm_glock_ahead_t *a, uint64_t held, uint64_t ref)
{
    for (unsigned i = 0; i < a->n; i++) {
        if (held == a->abandoned[i]) {
            return 1;
        }
    }
    return held == a->head || held == ref;
}

/* Seal the places a walk went over (top of the file, "Re-adoption"), each from the
 * state the walk read: 1 if each is sealed now, 0 if one changed since (taken back by
 * its owner: it waits again, ahead of this waiter). */
static int rdlm_glock_seal(rdlm_global_t *d, const rdlm_glock_ahead_t *a)
{
    uint64_t old;

    for (unsigned i = 0; i < a->n; i++) {
        if (rdlm_q_is_unpassed(a->states[i]) &&
            (rdlm_global_q_cas(d, a->abandoned[i] & RDLM_QID_MASK, a->states[i],
                               rdlm_q_sealed(a->states[i]), &old) != RDLM_OK ||
             old != a->states[i])) {
            return 0;
        }
    }
    return 1;
}

/* The dead head of a never held the lock (not FIRST, H names none of a's places) and
 * its lease ended: if it died between its enqueue and its link (top of the file,
 * "Intents"), link ref into the next word of the place its intent names, by CAS from
 * that place's NOLINK, whose pass then goes on to ref; the places the walk went over
 * are sealed first, as a taker seals them (their owners cannot take them back, or they
 * would wait behind the dead place). ref then waits behind that place (*pred_p,
 * *first_p) and its own intent says so (a waiter behind it that outlives it mends from
 * there). A head that linked before it died (the next word holds it: the pass names
 * it in H, then the take-over applies), one that queued by SWAP (no intent), or a
 * place ahead of it that is dead too: nothing to mend. Spin model: glock_recovery.pml
 * -DINTENT (orphan completion). */
static void rdlm_glock_mend(rdlm_global_t *d, const rdlm_global_word_t *w, uint64_t ref,
                            const rdlm_glock_ahead_t *a, uint64_t *pred_p, int *first_p)
{
    uint64_t v, pp, cur, old;
    rdlm_global_word_t iw;
    int ppfirst;

    if (rdlm_glock_intent_read(d, w, a->head & RDLM_QID_MASK, &v) != RDLM_OK ||
        !rdlm_glock_intent_of(v, RDLM_QREF_GEN(a->head), &pp, &ppfirst) ||
        !rdlm_glock_seal(d, a) ||
        rdlm_global_q_cas_next(d, pp & RDLM_QID_MASK, RDLM_Q_NOLINK(RDLM_QREF_GEN(pp)),
                               RDLM_Q_LINK(ref), &cur) != RDLM_OK ||
        (cur != RDLM_Q_NOLINK(RDLM_QREF_GEN(pp)) && cur != RDLM_Q_LINK(ref))) {
        return;
    }
    rdlm_warn("dist: rank %u died after it queued for a lock and before it linked behind "
              "rank %u: this process's place is linked there instead",
              RDLM_QID_RANK(a->head), RDLM_QID_RANK(pp));
    *pred_p = pp;
    *first_p = ppfirst;
    rdlm_global_intent_word(d, w, ref & RDLM_QID_MASK, &iw);
    rdlm_global_w_swap(d, &iw,
                       rdlm_glock_intent(RDLM_QREF_GEN(ref),
                                         RDLM_W_HELD | pp | (ppfirst ? RDLM_W_FIRST : 0)),
                       &old);
}

/* Waiting behind the dead head of a (rdlm_glock_walk): take the lock over if the
 * authority ended its lease and it held the lock (top of the file); if it never held
 * it, mend the queue around it (rdlm_glock_mend: *pred_p, *first_p). RDLM_OWNER_DEAD
 * (taken over) or RDLM_OK (granted meanwhile) with *token_p; RDLM_INPROGRESS: not
 * (yet), keep waiting. */
static rdlm_status_t rdlm_glock_recover(rdlm_global_t *d, const rdlm_global_word_t *w,
                                        uint64_t ref, const rdlm_glock_ahead_t *a,
                                        uint64_t *pred_p, int *first_p, uint64_t *token_p)
{
    const rdlm_global_recovery_t *rec = &d->recovery;
    uint64_t qid = ref & RDLM_QID_MASK, held, old, token;
    uint32_t gen = RDLM_QREF_GEN(ref), epoch;
    rdlm_global_word_t h;
    rdlm_status_t s;

    if (!rec->ended(rec->arg, RDLM_QID_RANK(a->head))) {
        return RDLM_INPROGRESS;
    }
    if (!a->first) {
        rdlm_global_holder_word(w, &h);
        s = rdlm_global_w_fadd(d, &h, 0, &held);
        if (s == RDLM_OK && !rdlm_glock_handed_here(a, held, ref) && d->intents) {
            rdlm_glock_mend(d, w, ref, a, pred_p, first_p);
        }
        if (s != RDLM_OK || !rdlm_glock_handed_here(a, held, ref)) {
            return RDLM_INPROGRESS; /* head was waiting: its predecessor's pass names it */
        }
    }
    if (!rdlm_glock_seal(d, a)) {
        return RDLM_INPROGRESS; /* walked again at the next probe */
    }
    if (rec->new_epoch(rec->arg, &epoch) != RDLM_OK) {
        return RDLM_INPROGRESS; /* logged; tried again at the next probe */
    }
    token = ((uint64_t)epoch << RDLM_GLOBAL_SEQ_BITS) | 1u;
    s = rdlm_global_q_cas(d, qid, RDLM_Q_WAITING(gen), token, &old);
    if (s != RDLM_OK) {
        return RDLM_INPROGRESS;
    }
    if (old != RDLM_Q_WAITING(gen)) {
        *token_p = old; /* a late grant won */
        return RDLM_OK;
    }
    rdlm_warn("dist: rank %u held a lock ahead of this process, died, and its lease "
              "ended: lock taken over with token 0x%llx (RDLM_OWNER_DEAD)",
              RDLM_QID_RANK(a->head), (unsigned long long)token);
    *token_p = token;
    return RDLM_OWNER_DEAD;
}

/* Place ref, linked behind pred (first: pred took W free), waits for the grant in our
 * own memory, probing the places ahead from probe_at on and every RDLM_GLOCK_PROBE_NS
 * after. */
static rdlm_status_t rdlm_glock_wait(rdlm_global_t *d, const rdlm_global_word_t *w,
                                     uint64_t ref, uint64_t pred, int first,
                                     uint64_t probe_at, uint64_t deadline_ns,
                                     uint64_t *token_p)
{
    uint64_t qid = ref & RDLM_QID_MASK, state;
    uint64_t logged = UINT64_MAX; /* the dead head last reported */
    uint32_t q = RDLM_QID_INDEX(qid), gen = RDLM_QREF_GEN(ref);
    int dead = 0;
    rdlm_glock_ahead_t a;
    unsigned spins = 0;
    rdlm_status_t s;

    for (;;) {
        state = rdlm_load(rdlm_global_q_state(d, q), RDLM_ACQUIRE);
        if (RDLM_Q_IS_GRANTED(state)) {
            *token_p = state;
            return RDLM_OK;
        }
        if (rdlm_clock_now_ns() >= probe_at) {
            dead = rdlm_glock_walk(d, pred, first, &a);
            if (dead && a.head != logged) {
                logged = a.head;
                rdlm_error("dist: rank %u, ahead of this process in a lock's queue, died%s",
                           RDLM_QID_RANK(a.head),
                           d->recovery.ended != NULL
                               ? "; waiting for the authority to end its lease"
                               : "; giving up the place (RDLM_ERR_PEER_DEAD)");
            }
            if (dead && d->recovery.ended != NULL) {
                s = rdlm_glock_recover(d, w, ref, &a, &pred, &first, token_p);
                if (s != RDLM_INPROGRESS) {
                    return s;
                }
            }
            probe_at = rdlm_clock_now_ns() + RDLM_GLOCK_PROBE_NS;
        }
        if ((dead && d->recovery.ended == NULL) || rdlm_load(&d->closing, RDLM_RELAXED) ||
            (deadline_ns != UINT64_MAX && rdlm_clock_now_ns() >= deadline_ns)) {
            if (!rdlm_glock_abandon(d, qid, gen, pred, first, token_p)) {
                return RDLM_OK; /* granted meanwhile: late, but held */
            }
            if (dead && d->recovery.ended == NULL) {
                return RDLM_ERR_PEER_DEAD;
            }
            return rdlm_load(&d->closing, RDLM_RELAXED) ? RDLM_ERR_CLOSED
                                                        : RDLM_ERR_TIMEOUT;
        }
        rdlm_glock_finish(d, 0); /* a posted release of ours may be what grants us */
        rdlm_global_pause(d, &spins);
    }
}

/* Queued behind the tail old replaced: link into its next, then wait. */
static rdlm_status_t rdlm_glock_link_wait(rdlm_global_t *d, const rdlm_global_word_t *w,
                                          uint64_t ref, uint64_t old, uint64_t deadline_ns,
                                          uint64_t *token_p)
{
    uint64_t pred = RDLM_QREF_OF(old), cur, probe_at;
    rdlm_status_t s;

    if (d->test_die_before_link) {
        raise(SIGKILL); /* tests only: RDLMTEST_GLOCK_DIE_BEFORE_LINK */
    }
    s = rdlm_global_q_cas_next(d, pred, RDLM_Q_NOLINK(RDLM_QREF_GEN(pred)),
                               RDLM_Q_LINK(ref), &cur);
    probe_at = rdlm_clock_now_ns() + RDLM_GLOCK_PROBE_NS;
    if (s == RDLM_ERR_PEER_DEAD) {
        probe_at = 0; /* the probe finds it dead at once */
    } else if (s != RDLM_OK || cur != RDLM_Q_NOLINK(RDLM_QREF_GEN(pred))) {
        rdlm_error("dist: linking behind rank %u failed: %s; the lock may stall",
                   RDLM_QID_RANK(pred),
                   s != RDLM_OK ? rdlm_status_str(s)
                                : "its queue node was reused (this "
                                  "process paused past its lease?)");
        return s != RDLM_OK ? s : RDLM_ERR_LEASE_EXPIRED;
    }
    return rdlm_glock_wait(d, w, ref, pred, (old & RDLM_W_FIRST) != 0, probe_at,
                           deadline_ns, token_p);
}

rdlm_status_t rdlm_glock_acquire(rdlm_global_t *d, const rdlm_global_word_t *w,
                                 uint64_t guess, uint64_t deadline_ns, uint64_t *qid_p,
                                 uint64_t *token_p)
{
    uint64_t qid, ref, old;
    rdlm_status_t s;

    if (d->am_lock) {
        return rdlm_amq_acquire(d, w, deadline_ns, qid_p, token_p);
    }
    rdlm_glock_finish(d, 0);
    if (rdlm_glock_readopt(d, w, &qid, &old)) {
        *qid_p = qid;
        return rdlm_glock_wait(d, w, RDLM_QREF(qid, rdlm_q_gen(old)),
                               rdlm_q_abandoned_ahead(old), rdlm_q_abandoned_first(old),
                               rdlm_clock_now_ns() + RDLM_GLOCK_PROBE_NS, deadline_ns,
                               token_p);
    }
    s = rdlm_glock_claim_by(d, deadline_ns, &qid, &ref);
    if (s != RDLM_OK) {
        return s;
    }
    rdlm_store(&d->qword[RDLM_QID_INDEX(qid)], rdlm_glock_word_key(w), RDLM_RELEASE);
    s = rdlm_glock_enqueue(d, w, rdlm_glock_guess(d, guess), ref, &old);
    if (s != RDLM_OK) {
        rdlm_global_q_set_state(d, qid, RDLM_Q_IDLE); /* the CAS did not happen */
        return s;
    }
    *qid_p = qid;
    if (!(old & RDLM_W_HELD)) {
        *token_p = rdlm_glock_first_token(d, old);
        return RDLM_OK;
    }
    return rdlm_glock_link_wait(d, w, ref, old, deadline_ns, token_p);
}

rdlm_status_t rdlm_glock_try(rdlm_global_t *d, const rdlm_global_word_t *w, uint64_t guess,
                             uint64_t *qid_p, uint64_t *token_p)
{
    uint64_t qid, ref, old, desired, expected = rdlm_glock_guess(d, guess);
    rdlm_status_t s;

    if (d->am_lock) {
        return rdlm_amq_try(d, w, qid_p, token_p);
    }
    rdlm_glock_finish(d, 0);
    s = rdlm_glock_claim(d, &qid, &ref);
    if (s != RDLM_OK) {
        return s;
    }
    /* At most two CASes: the second only if the word was free with another token than
     * guessed; a held word answers busy after the first. Taken only if the last CAS
     * found what it expected: a second CAS that finds the word free with yet another
     * token (taken and freed meanwhile) is busy too (the loop here once took that
     * value as its next guess and returned held without having swapped: two holders,
     * tests/model/dist_lock.pml -DTRY -DBUG_TRY_LAST_GUESS). */
    desired = RDLM_W_HELD | rdlm_glock_first_bit(d) | ref;
    s = rdlm_global_w_cas(d, w, expected, desired, &old);
    if (s == RDLM_OK && old != expected && !(old & RDLM_W_HELD)) {
        expected = old;
        s = rdlm_global_w_cas(d, w, expected, desired, &old);
    }
    if (s == RDLM_OK && old == expected) {
        *qid_p = qid;
        *token_p = rdlm_glock_first_token(d, expected);
        return RDLM_OK;
    }
    if (s == RDLM_OK) {
        rdlm_global_q_set_own_state(d, RDLM_QID_INDEX(qid),
                                    RDLM_Q_IDLE); /* never published */
        return RDLM_ERR_BUSY;
    }
    rdlm_global_q_set_state(d, qid, RDLM_Q_IDLE); /* an error: through the transport */
    return s;
}

/* Waiting for a successor's link into cur (a use, with intents): 1 if the place W's
 * tail leads to, over abandoned places (rdlm_glock_walk), is the place of a dead
 * process whose lease ended and whose intent names cur: it queued behind cur and died
 * before it linked (the places behind it were given up: nobody waits there to mend).
 * Its link is then set in cur's next (a late one of its own fails) and *next_p holds
 * it: the pass goes on as for a link, and the next waiter behind the dead place takes
 * the lock over. Spin model: glock_recovery.pml -DINTENT -DINTENT_TAIL_WALK (from W's
 * tail only, it stalls when the waiter behind the dead place timed out). */
static int rdlm_glock_dead_tail(rdlm_global_t *d, const rdlm_global_word_t *w, uint64_t cur,
                                uint64_t *next_p)
{
    uint64_t held, v, pred, nolink = RDLM_Q_NOLINK(RDLM_QREF_GEN(cur));
    rdlm_glock_ahead_t a;
    int first;

    if (rdlm_global_w_fadd(d, w, 0, &held) != RDLM_OK || !(held & RDLM_W_HELD) ||
        RDLM_QREF_OF(held) == cur ||
        !rdlm_glock_walk(d, RDLM_QREF_OF(held), (held & RDLM_W_FIRST) != 0, &a) ||
        a.head == cur || !d->recovery.ended(d->recovery.arg, RDLM_QID_RANK(a.head)) ||
        rdlm_glock_intent_read(d, w, a.head & RDLM_QID_MASK, &v) != RDLM_OK ||
        !rdlm_glock_intent_of(v, RDLM_QREF_GEN(a.head), &pred, &first) || pred != cur ||
        rdlm_global_q_cas_next(d, cur & RDLM_QID_MASK, nolink, RDLM_Q_LINK(a.head),
                               next_p) != RDLM_OK) {
        return 0;
    }
    if (*next_p == nolink) {
        *next_p = RDLM_Q_LINK(a.head);
        rdlm_warn("dist: rank %u died after it queued for a lock behind this process and "
                  "before it linked: passing the lock to its place (whoever queues next "
                  "takes it over)",
                  RDLM_QID_RANK(a.head));
    }
    return 1;
}

/* Wait until the next word of cur (a use of a queue node) names a successor (it
 * replaced W and is linking): polls the own word, or the owner's by get on a cohort
 * hand-over or a pass-over. A successor that died between replacing W and linking
 * never links: with intents the wait looks for that every RDLM_GLOCK_PROBE_NS
 * (rdlm_glock_dead_tail; a dead successor with a waiter behind it is mended by that
 * waiter, rdlm_glock_mend); without, this waits forever then (tests/model/README.md,
 * "crash between enqueue and link"), saying so every RDLM_GLOCK_LINK_WARN_NS. */
static rdlm_status_t rdlm_glock_wait_next(rdlm_global_t *d, const rdlm_global_word_t *w,
                                          uint64_t cur, uint64_t *next_p)
{
    uint64_t now, warn_at = rdlm_clock_now_ns() + RDLM_GLOCK_LINK_WARN_NS;
    uint64_t probe_at = rdlm_clock_now_ns() + RDLM_GLOCK_PROBE_NS;
    unsigned spins = 0;
    rdlm_status_t s;

    for (;;) {
        s = rdlm_global_q_get_next(d, cur & RDLM_QID_MASK, next_p);
        if (s != RDLM_OK || (*next_p & RDLM_W_HELD)) {
            return s;
        }
        now = rdlm_clock_now_ns();
        if (rdlm_glock_intents(d) && now >= probe_at) {
            if (rdlm_glock_dead_tail(d, w, cur, next_p)) {
                return RDLM_OK;
            }
            probe_at = now + RDLM_GLOCK_PROBE_NS;
        }
        if (now >= warn_at) {
            rdlm_warn("dist: releasing a lock: the process that queued behind this one "
                      "has not linked for %llu s (died right after queueing?); still "
                      "waiting",
                      (unsigned long long)(RDLM_GLOCK_LINK_WARN_NS / 1000000000u));
            warn_at = now + RDLM_GLOCK_LINK_WARN_NS;
        }
        rdlm_global_pause(d, &spins);
    }
}

/* Free W if qid (in its use gen) is still its tail: *freed_p = 1 if freed. first: the
 * holder took W free (W has RDLM_W_FIRST, with holder words); the other form is tried
 * if that was wrong. */
static rdlm_status_t rdlm_glock_free(rdlm_global_t *d, const rdlm_global_word_t *w,
                                     uint64_t qid, uint32_t gen, int first, uint64_t token,
                                     int *freed_p)
{
    uint64_t held = RDLM_W_HELD | RDLM_QREF(qid, gen), old;
    uint64_t guess = first ? held | rdlm_glock_first_bit(d) : held;
    uint64_t other = guess ^ RDLM_W_FIRST;
    rdlm_status_t s = rdlm_global_w_cas(d, w, guess, token, &old);

    if (s == RDLM_OK && old == other && rdlm_glock_first_bit(d) != 0) {
        guess = other;
        s = rdlm_global_w_cas(d, w, guess, token, &old);
    }
    *freed_p = s == RDLM_OK && old == guess;
    return s;
}

/* 1 if the holder's queue node qid took W free: its state is still WAITING (a grant
 * or a take-over writes the token there). */
static int rdlm_glock_took_free(rdlm_global_t *d, uint64_t qid)
{
    uint64_t state = 0;

    return rdlm_global_q_get_state(d, qid, &state) == RDLM_OK && !RDLM_Q_IS_GRANTED(state);
}

/* Nothing refers to cur any more: the holder's node (abandoned 0; any state) or an
 * abandoned one passed over (abandoned: its state, that use of it only: a late pass by
 * a paused process changes nothing). */
static void rdlm_glock_retire(rdlm_global_t *d, uint64_t cur, uint64_t abandoned)
{
    uint64_t old;

    if (abandoned != 0) {
        rdlm_global_q_cas(d, cur, abandoned, RDLM_Q_IDLE, &old);
    } else {
        rdlm_global_q_set_state(d, cur, RDLM_Q_IDLE);
    }
}

/* W was freed from cur (nobody queued behind it): retire it. This process's own node,
 * not an abandoned place passed over, takes a CPU store (rdlm_global_q_set_own_state). */
static void rdlm_glock_retire_freed(rdlm_global_t *d, uint64_t cur, uint64_t abandoned)
{
    if (abandoned == 0 && RDLM_QID_RANK(cur) == d->rank) {
        rdlm_global_q_set_own_state(d, RDLM_QID_INDEX(cur), RDLM_Q_IDLE);
    } else {
        rdlm_glock_retire(d, cur, abandoned);
    }
}

/* The ref of the use of qid that holds the lock: its generation is known for this
 * process's own queue nodes, which are the only ones a holder passes from when
 * waiters may walk (with recovery there are no local hand-offs, cohort.c). */
static uint64_t rdlm_glock_holder_ref(const rdlm_global_t *d, uint64_t qid)
{
    uint32_t gen = RDLM_QID_RANK(qid) == d->rank ? d->qgen[RDLM_QID_INDEX(qid)] : 0;

    return RDLM_QREF(qid, gen);
}

/* Grant the place succ with token; if its waiter gave it up, record in it the holder
 * passing the lock through it (PASSED), so that the waiters behind it know whose
 * death to wait for once the places ahead of it are retired, and its owner cannot
 * take it back (top of the file, "Re-adoption"). A record that finds the place
 * WAITING (taken back after the grant CAS found it abandoned) or sealed since grants
 * again. *state_p: WAITING when the place holds the lock now (granted, or taken back
 * and then taken over by its owner, whose walk found a dead process ahead and the
 * holder word naming it: nothing left to pass), the record, or what the grant CAS
 * found instead. Spin model: glock_recovery.pml -DREADOPT (STALE_OK). */
static rdlm_status_t rdlm_glock_grant(rdlm_global_t *d, uint64_t succ, uint64_t token,
                                      uint64_t holder, uint64_t *state_p)
{
    uint64_t qid = succ & RDLM_QID_MASK, was;
    uint32_t gen = RDLM_QREF_GEN(succ);
    rdlm_status_t s;

    for (;;) {
        s = rdlm_global_q_cas(d, qid, RDLM_Q_WAITING(gen), token, state_p);
        if (s != RDLM_OK || !rdlm_q_is_abandoned(*state_p, gen)) {
            return s;
        }
        was = *state_p;
        s = rdlm_global_q_cas(d, qid, was, rdlm_q_passed(gen, holder), state_p);
        if (s != RDLM_OK) {
            return s;
        }
        if (*state_p == was) {
            *state_p = rdlm_q_passed(gen, holder);
            return s;
        }
        if (RDLM_Q_IS_GRANTED(*state_p)) {
            rdlm_info("dist: rank %u took back its place in a lock's queue and took the "
                      "lock over (a process ahead died) while this one passed it on",
                      RDLM_QID_RANK(succ));
            *state_p = RDLM_Q_WAITING(gen);
            return s;
        }
    }
}

/* Free W posted (top of the file: "Posted releases"), the holder's own queue node qid
 * in use gen: 1 if issued, 0 if the caller frees it itself (not this case, the word
 * was contended at its last release here, no free slot, or nothing was issued). */
static int rdlm_glock_free_posted(rdlm_global_t *d, const rdlm_global_word_t *w,
                                  uint64_t qid, uint32_t gen, uint64_t token)
{
    if (!d->posts_release || d->slot_bytes == RDLM_GLOBAL_SLOT_BYTES_HOLDER ||
        RDLM_QID_RANK(qid) != d->rank || rdlm_load(&d->closing, RDLM_RELAXED) ||
        !(rdlm_load(&d->calm_hint, RDLM_RELAXED) & rdlm_glock_hint_bit(w))) {
        return 0;
    }
    for (uint32_t i = 0; i < RDLM_GLOBAL_POSTED; i++) {
        rdlm_global_posted_t *p = &d->posted[i];
        uint32_t expected = RDLM_GLOBAL_POSTED_FREE;

        if (!rdlm_cas(&p->state, &expected, RDLM_GLOBAL_POSTED_FILLING, RDLM_ACQUIRE)) {
            continue;
        }
        p->node = w->node;
        p->offset = w->offset;
        p->qid = qid;
        p->held = RDLM_W_HELD | RDLM_QREF(qid, gen);
        p->token = token;
        rdlm_fetch_add(&d->posted_n, 1, RDLM_ACQ_REL);
        if (rdlm_global_w_cas_post(d, w, p->held, token, &p->op) != RDLM_OK) {
            rdlm_store(&p->state, RDLM_GLOBAL_POSTED_FREE, RDLM_RELEASE);
            rdlm_fetch_sub(&d->posted_n, 1, RDLM_ACQ_REL);
            return 0;
        }
        /* The next acquire here guesses that the free landed (a wrong guess costs
         * one CAS). */
        rdlm_fetch_or(&d->freed_hint, rdlm_glock_hint_bit(w), RDLM_RELAXED);
        rdlm_store(&p->state, RDLM_GLOBAL_POSTED_POSTED, RDLM_RELEASE);
        return 1;
    }
    return 0;
}

/* Pass the lock on from queue node qid (rdlm_glock_pass); linking: the free of W
 * already failed, so a successor is linking behind qid. */
static rdlm_status_t rdlm_glock_pass_on(rdlm_global_t *d, const rdlm_global_word_t *w,
                                        uint64_t qid, uint64_t token, int linking)
{
    uint64_t cur = qid, next, succ, old, holder = rdlm_glock_holder_ref(d, qid), cur_ref;
    uint64_t abandoned = 0; /* cur's state when it is an abandoned place passed over */
    int freed;
    rdlm_status_t s;

    for (;;) {
        cur_ref = abandoned != 0 ? RDLM_QREF(cur, rdlm_q_gen(abandoned)) : holder;
        if (linking) {
            linking = 0;
            s = rdlm_glock_wait_next(d, w, cur_ref, &next);
        } else if ((s = rdlm_global_q_get_next(d, cur, &next)) == RDLM_OK &&
                   !(next & RDLM_W_HELD)) {
            uint32_t gen = (uint32_t)(next >> 2) & RDLM_QGEN_MASK; /* NOLINK(gen) */

            if (abandoned == 0 && rdlm_glock_free_posted(d, w, cur, gen, token)) {
                return RDLM_OK;
            }
            s = rdlm_glock_free(d, w, cur, gen,
                                abandoned == 0 && rdlm_glock_took_free(d, cur), token,
                                &freed);
            if (s == RDLM_OK && freed) {
                rdlm_fetch_or(&d->freed_hint, rdlm_glock_hint_bit(w), RDLM_RELAXED);
                rdlm_glock_calm(d, w, 1);
                rdlm_glock_retire_freed(d, cur, abandoned);
                return RDLM_OK;
            }
            if (s == RDLM_OK) {
                s = rdlm_glock_wait_next(d, w, cur_ref, &next);
            }
        }
        rdlm_glock_calm(d, w, 0); /* a successor is there */
        if (s == RDLM_ERR_PEER_DEAD && abandoned != 0) {
            /* H names it: its successor takes over once its lease ended. */
            rdlm_info("dist: passing over rank %u, which died: the lock is left to the "
                      "process behind it",
                      RDLM_QID_RANK(cur));
            return RDLM_OK;
        }
        if (s != RDLM_OK) {
            rdlm_error("dist: passing the lock on failed: %s", rdlm_status_str(s));
            return s;
        }
        succ = RDLM_QREF_OF(next);
        rdlm_glock_record_holder(d, w, succ);
        s = rdlm_glock_grant(d, succ, token + 1, holder, &old); /* before cur is retired */
        rdlm_glock_retire(d, cur, abandoned);
        if (s == RDLM_ERR_PEER_DEAD) {
            rdlm_info("dist: the lock was handed to rank %u, which died: the process "
                      "behind it takes over once its lease ended",
                      RDLM_QID_RANK(succ));
            return RDLM_OK;
        }
        if (s != RDLM_OK || old == RDLM_Q_WAITING(RDLM_QREF_GEN(succ))) {
            return s;
        }
        if (old != rdlm_q_passed(RDLM_QREF_GEN(succ), holder)) {
            rdlm_error("dist: the successor's place was reused: this process passed the "
                       "lock on after its lease ended (paused?); nothing done");
            return RDLM_ERR_LEASE_EXPIRED;
        }
        rdlm_debug("dist: passing over an abandoned place of rank %u", RDLM_QID_RANK(succ));
        cur = succ & RDLM_QID_MASK; /* its place passes on with the same token */
        abandoned = old;
    }
}

rdlm_status_t rdlm_glock_pass(rdlm_global_t *d, const rdlm_global_word_t *w, uint64_t qid,
                              uint64_t granted, uint64_t token)
{
    if (d->am_lock) {
        return rdlm_amq_pass(d, w, qid, granted, token, 0);
    }
    /* Everything written in the critical section before the word moves on. */
    atomic_thread_fence(memory_order_seq_cst);
    rdlm_glock_finish(d, 0);
    return rdlm_glock_pass_on(d, w, qid, token, 0);
}

rdlm_status_t rdlm_glock_pass_dead(rdlm_global_t *d, const rdlm_global_word_t *w,
                                   uint64_t qid, uint64_t granted, uint64_t token)
{
    if (d->am_lock) {
        return rdlm_amq_pass(d, w, qid, granted, token, RDLM_AMQ_F_DEAD);
    }
    rdlm_warn("dist: the remote-atomic queue (RDLM_LOCK_AM=0) cannot tell the next "
              "holder that this lock's holder died (RDLM_OWNER_DEAD): it gets RDLM_OK");
    return rdlm_glock_pass(d, w, qid, granted, token);
}

/* Finish posted release p (claimed: FINISHING), its CAS complete. */
static void rdlm_glock_finish_one(rdlm_global_t *d, rdlm_global_posted_t *p)
{
    rdlm_global_word_t w = {.node = p->node, .offset = p->offset};
    rdlm_status_t s = p->op.status;

    if (s != RDLM_OK) {
        rdlm_error("dist: releasing a lock: its posted free failed: %s; the lock may "
                   "stall",
                   rdlm_status_str(s));
    } else if (p->op.old == p->held) {
        rdlm_glock_retire_freed(d, p->qid, 0);
    } else {
        /* A successor swapped W in before the free landed. */
        rdlm_fetch_and(&d->freed_hint, ~rdlm_glock_hint_bit(&w), RDLM_RELAXED);
        rdlm_glock_calm(d, &w, 0);
        rdlm_glock_pass_on(d, &w, p->qid, p->token, 1);
    }
    rdlm_store(&p->state, RDLM_GLOBAL_POSTED_FREE, RDLM_RELEASE);
    rdlm_fetch_sub(&d->posted_n, 1, RDLM_ACQ_REL);
}

void rdlm_glock_finish(rdlm_global_t *d, int wait)
{
    uint64_t until = wait ? rdlm_clock_now_ns() + RDLM_GLOCK_LINK_WARN_NS : 0;

    if (rdlm_load(&d->posted_n, RDLM_ACQUIRE) == 0) {
        return;
    }
    for (uint32_t i = 0; i < RDLM_GLOBAL_POSTED; i++) {
        rdlm_global_posted_t *p = &d->posted[i];
        uint32_t expected = RDLM_GLOBAL_POSTED_POSTED;

        /* With wait, also until another thread (the progress thread) finished it. */
        while (wait && rdlm_load(&p->state, RDLM_ACQUIRE) == RDLM_GLOBAL_POSTED_FINISHING &&
               rdlm_clock_now_ns() < until) {
            sched_yield();
        }
        if (rdlm_load(&p->state, RDLM_ACQUIRE) != RDLM_GLOBAL_POSTED_POSTED) {
            continue;
        }
        while (wait && !rdlm_load(&p->op.done, RDLM_ACQUIRE) &&
               rdlm_clock_now_ns() < until) {
            rdlm_global_progress(d);
        }
        if (!rdlm_load(&p->op.done, RDLM_ACQUIRE)) {
            if (wait) {
                rdlm_warn("dist: a lock's posted release got no answer from its home "
                          "within %llu s",
                          (unsigned long long)(RDLM_GLOCK_LINK_WARN_NS / 1000000000u));
            }
            continue;
        }
        if (rdlm_cas(&p->state, &expected, RDLM_GLOBAL_POSTED_FINISHING, RDLM_ACQUIRE)) {
            rdlm_glock_finish_one(d, p);
        }
    }
}
