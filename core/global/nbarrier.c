/*
 * Named counting barriers across nodes: N participants that need not be a
 * communicator (the ZooKeeper recipes' barriers). One word B at the name's home:
 * generation << 32 | arrived. An arrival is one fetch-add; the N-th arriver opens the
 * next generation (a swap) and releases its node. The other arrivers wait, on each
 * node, for one of them -- the node's poller, holding the entry's word as a lock --
 * to see the generation change (it polls B with pauses growing to 1 ms); the rest
 * sleep on the entry's barrier_released futex, where the poller (or a local last arriver)
 * posts the generation. So one remote poller per node and barrier, however many wait there
 * (and each sleeper reads B once per 100 ms: a stopped poller is alive).
 * A timeout withdraws the arrival (CAS of the count down, only within the same
 * generation); if the generation changed meanwhile the barrier completed: RDLM_OK.
 *
 * Entry barriers, exit barriers and double barriers are successive waits of one
 * reusable barrier (docs/distributed-locks.md). N is fixed job-wide by the first open
 * (companion word 2, rdlm_global_home_fix).
 *
 * Entry fields (barrier kind, distributed): home_slot1 = B slot + 1; barrier_nprocs = N;
 * word = the node poller's owner word (0: no poller); barrier_released = the last
 * generation the node saw completed.
 */
#include "word.h"

#include "clock.h"
#include "log.h"

#define RDLM_NB_GEN(v) ((uint32_t)((v) >> 32))
#define RDLM_NB_ARRIVED(v) ((uint32_t)(v))

static void rdlm_nb_word(const rdlm_global_t *d, const rdlm_entry_t *e,
                         rdlm_global_word_t *w)
{
    rdlm_global_word_at(d, rdlm_load(&e->key, RDLM_RELAXED),
                        rdlm_load(&e->home_slot1, RDLM_ACQUIRE), w);
}

rdlm_status_t rdlm_global_nbarrier_open(rdlm_global_t *d, rdlm_local_t *lc, uint32_t idx)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];
    uint64_t id = rdlm_load(&e->key, RDLM_RELAXED), cached = 0, fixed;
    uint32_t n = rdlm_load(&e->barrier_nprocs, RDLM_RELAXED), slot;
    rdlm_status_t s;

    if (rdlm_load(&e->home_slot1, RDLM_ACQUIRE) != 0) {
        return RDLM_OK;
    }
    s = rdlm_global_home_fix(d, rdlm_global_sub_id(id, 2), RDLM_KIND_BARRIER, n, &fixed);
    if (s == RDLM_OK && fixed != n) {
        rdlm_error("barrier \"%s\" exists for %llu participants on another node, opened "
                   "for %u", lc->seg.names[idx], (unsigned long long)fixed, n);
        return RDLM_ERR_MISMATCH;
    }
    if (s == RDLM_OK) {
        s = rdlm_global_home_open(d, id, RDLM_KIND_BARRIER, &slot);
    }
    if (s == RDLM_OK) {
        rdlm_cas(&e->home_slot1, &cached, slot, RDLM_RELEASE);
    }
    return s;
}

/* Post generation gen as completed on this node and wake the node's sleepers. */
static void rdlm_nb_post(rdlm_local_t *lc, rdlm_entry_t *e, uint32_t gen)
{
    uint32_t seen = rdlm_load(&e->barrier_released, RDLM_ACQUIRE);

    while ((int32_t)(gen - seen) > 0 &&
           !rdlm_cas(&e->barrier_released, &seen, gen, RDLM_ACQ_REL)) {
    }
    rdlm_wait_wake(&e->barrier_released, RDLM_WAIT_ALL_BITS, &e->parked, &lc->stats.wait);
}

/* 1 if this node saw generation g completed. */
static int rdlm_nb_done(const rdlm_entry_t *e, uint32_t g)
{
    return (int32_t)(rdlm_load(&e->barrier_released, RDLM_ACQUIRE) - g) > 0;
}

/* A sleeping waiter reads B itself this often (rdlm_nb_await). */
#define RDLM_NB_CHECK_NS 100000000ull

/* When a sleeper waiting since now reads B next: RDLM_NB_CHECK_NS on, or deadline. */
static uint64_t rdlm_nb_check_at(uint64_t now, uint64_t deadline)
{
    return deadline - now > RDLM_NB_CHECK_NS ? now + RDLM_NB_CHECK_NS : deadline;
}

/* The node's poller: poll B until its generation passes g or the deadline. */
static rdlm_status_t rdlm_nb_poll(rdlm_global_t *d, rdlm_local_t *lc, rdlm_entry_t *e,
                                  const rdlm_global_word_t *w, uint32_t g,
                                  uint64_t deadline)
{
    uint64_t pause = RDLM_GLOBAL_POLL_FIRST_NS, v;
    rdlm_status_t s;

    for (;;) {
        s = rdlm_global_w_fadd(d, w, 0, &v);
        if (s != RDLM_OK) {
            return s;
        }
        if (RDLM_NB_GEN(v) != g) {
            rdlm_nb_post(lc, e, RDLM_NB_GEN(v));
            return RDLM_OK;
        }
        if (rdlm_nb_done(e, g)) {
            return RDLM_OK; /* a local last arriver posted it */
        }
        s = rdlm_global_poll_pause(d, &pause, deadline, 0);
        if (s != RDLM_OK) {
            return s;
        }
    }
}

/* Wait for generation g to complete: poll for the node, or sleep until the poller
 * posts it. A sleeper also reads B itself every RDLM_NB_CHECK_NS: a poller that is
 * stopped (SIGSTOP) is alive, so nobody takes its place, and its node-mates slept past
 * the barrier's completion until it resumed or their timeout passed. */
static rdlm_status_t rdlm_nb_await(rdlm_global_t *d, rdlm_local_t *lc, rdlm_entry_t *e,
                                   const rdlm_global_word_t *w, uint32_t g,
                                   uint64_t deadline)
{
    rdlm_wait_t wt;

    rdlm_wait_init_until(&wt, &lc->policy, &lc->stats.wait,
                         rdlm_nb_check_at(rdlm_clock_now_ns(), deadline));
    for (;;) {
        uint32_t seen = rdlm_load(&e->barrier_released, RDLM_ACQUIRE);
        uint64_t nobody = 0;

        if ((int32_t)(seen - g) > 0) {
            return RDLM_OK;
        }
        if (rdlm_cas(&e->word, &nobody, lc->seg.self_owner, RDLM_ACQUIRE)) {
            rdlm_status_t s = rdlm_nb_poll(d, lc, e, w, g, deadline);

            rdlm_store(&e->word, 0, RDLM_RELEASE);
            /* If we stop early (timeout), a sleeper takes over polling. */
            rdlm_wait_wake(&e->barrier_released, RDLM_WAIT_ALL_BITS, &e->parked,
                           &lc->stats.wait);
            return s;
        }
        if (nobody != 0 && !rdlm_segment_owner_alive(&lc->seg, (uint32_t)nobody)) {
            rdlm_cas(&e->word, &nobody, 0, RDLM_RELAXED); /* the poller died */
            continue;
        }
        if (rdlm_load(&d->closing, RDLM_RELAXED)) {
            return RDLM_ERR_CLOSED;
        }
        if (rdlm_wait_step(&wt, &e->barrier_released, seen, RDLM_WAIT_ALL_BITS,
                           &e->parked) == RDLM_WAIT_TIMEDOUT) {
            uint64_t now = rdlm_clock_now_ns(), v;

            if (now >= deadline) {
                return RDLM_ERR_TIMEOUT;
            }
            if (rdlm_global_w_fadd(d, w, 0, &v) == RDLM_OK && RDLM_NB_GEN(v) != g) {
                rdlm_nb_post(lc, e, RDLM_NB_GEN(v));
                return RDLM_OK;
            }
            wt.deadline = rdlm_nb_check_at(now, deadline);
        }
    }
}

/* Withdraw an arrival at generation g after a timeout; RDLM_OK if the barrier
 * completed meanwhile. */
static rdlm_status_t rdlm_nb_withdraw(rdlm_global_t *d, const rdlm_global_word_t *w,
                                      uint32_t g)
{
    uint64_t v, old;
    rdlm_status_t s = rdlm_global_w_fadd(d, w, 0, &v);

    while (s == RDLM_OK && RDLM_NB_GEN(v) == g) {
        s = rdlm_global_w_cas(d, w, v, v - 1, &old);
        if (s == RDLM_OK && old == v) {
            return RDLM_ERR_TIMEOUT;
        }
        v = old;
    }
    return s;
}

rdlm_status_t rdlm_global_nbarrier_wait(rdlm_global_t *d, rdlm_local_t *lc, uint32_t idx,
                                        uint64_t timeout_ns)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];
    uint32_t n = rdlm_load(&e->barrier_nprocs, RDLM_RELAXED), g;
    uint64_t deadline = rdlm_clock_deadline(timeout_ns), old;
    rdlm_global_word_t w;
    rdlm_status_t s;

    if (rdlm_load(&d->closing, RDLM_ACQUIRE)) {
        return RDLM_ERR_CLOSED;
    }
    rdlm_fetch_add(&d->active, 1, RDLM_ACQ_REL);
    rdlm_nb_word(d, e, &w);
    atomic_thread_fence(memory_order_seq_cst); /* writes before the barrier */
    s = rdlm_global_w_fadd(d, &w, 1, &old);
    g = RDLM_NB_GEN(old);
    if (s == RDLM_OK && RDLM_NB_ARRIVED(old) + 1 == n) {
        s = rdlm_global_w_swap(d, &w, (uint64_t)(g + 1) << 32, &old); /* open g + 1 */
        rdlm_nb_post(lc, e, g + 1);
    } else if (s == RDLM_OK) {
        s = rdlm_nb_await(d, lc, e, &w, g, deadline);
        if (s == RDLM_ERR_TIMEOUT || s == RDLM_ERR_CLOSED) {
            rdlm_status_t r = rdlm_nb_withdraw(d, &w, g);

            if (r == RDLM_OK) {
                rdlm_nb_post(lc, e, g + 1); /* it completed after all */
                s = RDLM_OK;
            } else if (r != RDLM_ERR_TIMEOUT) {
                s = r;
            }
        }
    }
    if (s == RDLM_ERR_TIMEOUT) {
        rdlm_fetch_add(&lc->stats.timeouts, 1, RDLM_RELAXED);
    }
    atomic_thread_fence(memory_order_seq_cst);
    rdlm_fetch_sub(&d->active, 1, RDLM_ACQ_REL);
    return s;
}
