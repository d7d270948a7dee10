/*
 * The on-node semaphore: N permits (entry sem_permits) and one state word (sem_state,
 * layout.h: taken | sleepers | WOKEN | RSV). Permits are taken with one CAS on the word
 * when enough are free and no reservation stands (the fast path, which lets a running
 * process take permits back at once). A waiter tries, then registers as a sleeper on
 * sem_wake; a release that sees sleepers (and no wake in flight, WOKEN) wakes one. A
 * waiter that has waited RDLM_LOCK_BYPASS_US passes the entry's ticket lock (the gate,
 * FIFO) and, holding it, sets RSV: from then on the fast path fails and the next free
 * permits go to it, so no request waits unboundedly and a large one is not starved by
 * small ones. A timeout takes nothing. docs/local-locks.md ("Semaphore").
 */
#include <sched.h>

#include "bypass.h"
#include "clock.h"
#include "local.h"
#include "log.h"

/* Futex bits on sem_wake: bypass sleepers, and the reserver (the gate's holder). */
#define RDLM_SEM_BIT_BYPASS 1u
#define RDLM_SEM_BIT_RSV 2u

rdlm_status_t rdlm_sem_local_wait(rdlm_local_t *lc, uint32_t idx, uint64_t deadline,
                                  int (*ready)(void *arg), void *arg)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];
    rdlm_wait_t w;

    rdlm_wait_init_until(&w, &lc->policy, &lc->stats.wait, deadline);
    if (rdlm_local_oversubscribed(lc)) {
        rdlm_wait_stop_spinning(&w);
    }
    for (;;) {
        uint32_t releases = rdlm_load(&e->sem_wake, RDLM_SEQ_CST);

        if (ready(arg)) {
            return RDLM_OK;
        }
        if (rdlm_load(&lc->closing, RDLM_RELAXED)) {
            return RDLM_ERR_CLOSED;
        }
        if (rdlm_wait_step(&w, &e->sem_wake, releases, RDLM_SEM_BIT_RSV, &e->parked) ==
            RDLM_WAIT_TIMEDOUT) {
            return deadline == 0 ? RDLM_ERR_BUSY : RDLM_ERR_TIMEOUT;
        }
    }
}

/* Wake at most one sleeper of bitset on sem_wake (which the caller has changed). */
static void rdlm_sem_wake_one(rdlm_local_t *lc, rdlm_entry_t *e, uint32_t bitset)
{
    rdlm_wait_wake_one_sleeper(&e->sem_wake, bitset, &lc->stats.wait);
}

static void rdlm_sem_sleep(rdlm_local_t *lc, rdlm_entry_t *e, uint32_t seen,
                           uint64_t until_ns)
{
    rdlm_fetch_add(&lc->stats.wait.parks, 1, RDLM_RELAXED);
    rdlm_wait_futex_sleep(&e->sem_wake, seen, RDLM_SEM_BIT_BYPASS, until_ns);
}

/* The fast path: take k permits if free and nothing is reserved. */
static int rdlm_sem_try(rdlm_entry_t *e, uint32_t permits, uint32_t k)
{
    uint64_t v = rdlm_load(&e->sem_state, RDLM_RELAXED);

    while (!(v & RDLM_SEM_RSV) && permits - RDLM_SEM_TAKEN(v) >= k) {
        if (rdlm_cas(&e->sem_state, &v, v + k, RDLM_SEQ_CST)) {
            return 1;
        }
    }
    return 0;
}

/* Permits are free, nothing reserved, a sleeper registered and no wake in flight:
 * wake one sleeper. Run by releases and by whoever leaves free permits behind. */
static void rdlm_sem_pass_wake(rdlm_local_t *lc, rdlm_entry_t *e, uint32_t permits)
{
    uint64_t v = rdlm_load(&e->sem_state, RDLM_SEQ_CST);

    while (!(v & (RDLM_SEM_RSV | RDLM_SEM_WOKEN)) && RDLM_SEM_SLEEPERS(v) != 0 &&
           RDLM_SEM_TAKEN(v) < permits) {
        if (rdlm_cas(&e->sem_state, &v, v | RDLM_SEM_WOKEN, RDLM_SEQ_CST)) {
            rdlm_fetch_add(&e->sem_wake, 1, RDLM_SEQ_CST);
            rdlm_sem_wake_one(lc, e, RDLM_SEM_BIT_BYPASS);
            return;
        }
    }
}

/*
 * Register as a sleeper unless k permits can be taken (then take them: 1). The
 * futex word was read before, so a release after this CAS changes it. With no other
 * sleeper no wake can be in flight: a stale WOKEN is cleared.
 */
static int rdlm_sem_register(rdlm_entry_t *e, uint32_t permits, uint32_t k)
{
    uint64_t v = rdlm_load(&e->sem_state, RDLM_SEQ_CST);

    for (;;) {
        int take = !(v & RDLM_SEM_RSV) && permits - RDLM_SEM_TAKEN(v) >= k;
        uint64_t next = take ? v + k : v + RDLM_SEM_SLEEPER_ONE;

        if (!take && RDLM_SEM_SLEEPERS(v) == 0) {
            next &= ~RDLM_SEM_WOKEN;
        }
        if (rdlm_cas(&e->sem_state, &v, next, RDLM_SEQ_CST)) {
            return take;
        }
    }
}

/* After a sleep: no longer a sleeper; a wake in flight was (or may have been) ours. */
static void rdlm_sem_unregister(rdlm_entry_t *e)
{
    uint64_t v = rdlm_load(&e->sem_state, RDLM_RELAXED);

    while (!rdlm_cas(&e->sem_state, &v, (v - RDLM_SEM_SLEEPER_ONE) & ~RDLM_SEM_WOKEN,
                     RDLM_SEQ_CST)) {
    }
}

/* The bypass phase: try, spin (only with a CPU per process), yield, then sleep as a
 * registered sleeper, until the permits are taken (OK), the bound passes (RDLM_INPROGRESS:
 * reserve), the deadline passes or the context closes. */
static rdlm_status_t rdlm_sem_bypass(rdlm_local_t *lc, rdlm_entry_t *e, uint32_t permits,
                                     uint32_t k, uint64_t deadline)
{
    uint64_t now = rdlm_clock_now_ns(), bound = now + lc->bypass_ns;
    uint32_t spins = rdlm_bypass_spins(lc);
    uint32_t yields = 0;

    for (uint32_t i = 0;; i++) {
        uint32_t seen;
        uint64_t until;
        rdlm_status_t s;

        if (rdlm_sem_try(e, permits, k)) {
            return RDLM_OK;
        }
        s = rdlm_bypass_turn(lc, i, spins, deadline, &now);
        if (s == RDLM_INPROGRESS) {
            continue;
        }
        if (s != RDLM_OK) {
            return s;
        }
        if (now >= bound) {
            return RDLM_INPROGRESS; /* the bound passed: reserve */
        }
        if (yields < lc->policy.yield) {
            yields++;
            sched_yield();
            continue;
        }
        seen = rdlm_load(&e->sem_wake, RDLM_SEQ_CST);
        if (rdlm_sem_register(e, permits, k)) {
            return RDLM_OK;
        }
        until = bound < deadline ? bound : deadline;
        if (until - now > lc->policy.park_slice_ns) {
            until = now + lc->policy.park_slice_ns;
        }
        rdlm_sem_sleep(lc, e, seen, until);
        rdlm_sem_unregister(e);
    }
}

typedef struct rdlm_sem_take {
    rdlm_entry_t *e;
    uint32_t permits;
    uint32_t k;
} rdlm_sem_take_t;

/* The reserver's take: k permits if free, clearing RSV in the same CAS. */
static int rdlm_sem_take_reserved(void *arg)
{
    rdlm_sem_take_t *t = arg;
    uint64_t v = rdlm_load(&t->e->sem_state, RDLM_SEQ_CST);

    while (t->permits - RDLM_SEM_TAKEN(v) >= t->k) {
        if (rdlm_cas(&t->e->sem_state, &v, (v + t->k) & ~RDLM_SEM_RSV, RDLM_SEQ_CST)) {
            return 1;
        }
    }
    return 0;
}

/* Past the bound: a FIFO place at the gate, then reserve and wait for the permits. */
static rdlm_status_t rdlm_sem_reserve(rdlm_local_t *lc, uint32_t idx, uint32_t permits,
                                      uint32_t k, uint64_t deadline)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];
    rdlm_sem_take_t t = {e, permits, k};
    uint64_t now = rdlm_clock_now_ns();
    rdlm_status_t s;

    if (now >= deadline) {
        return RDLM_ERR_TIMEOUT;
    }
    s = rdlm_ticket_acquire(lc, idx, deadline == UINT64_MAX ? UINT64_MAX : deadline - now,
                            NULL);
    if (s != RDLM_OK && s != RDLM_OWNER_DEAD) {
        return s;
    }
    rdlm_local_lock_ungrant(lc, RDLM_OK); /* the gate's grant is no acquire */
    /* Holding the gate: an RSV already set is a dead reserver's; ours now. */
    rdlm_fetch_or(&e->sem_state, RDLM_SEM_RSV, RDLM_SEQ_CST);
    s = rdlm_sem_local_wait(lc, idx, deadline, rdlm_sem_take_reserved, &t);
    if (s != RDLM_OK) {
        rdlm_fetch_and(&e->sem_state, ~RDLM_SEM_RSV, RDLM_SEQ_CST);
    }
    rdlm_ticket_release(lc, idx);
    rdlm_sem_pass_wake(lc, e, permits); /* permits left over go to a sleeper */
    return s;
}

/* A try found the fast path closed by a reservation: if the gate is free, the
 * reserver is gone (a live one holds it); clear RSV under the gate and try again. */
static int rdlm_sem_try_stale(rdlm_local_t *lc, uint32_t idx, uint32_t permits, uint32_t k)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];
    rdlm_status_t s;
    int took;

    if (!(rdlm_load(&e->sem_state, RDLM_RELAXED) & RDLM_SEM_RSV)) {
        return 0;
    }
    s = rdlm_ticket_acquire(lc, idx, 0, NULL);
    if (s != RDLM_OK && s != RDLM_OWNER_DEAD) {
        return 0;
    }
    rdlm_fetch_and(&e->sem_state, ~RDLM_SEM_RSV, RDLM_SEQ_CST);
    took = rdlm_sem_try(e, permits, k);
    rdlm_ticket_release(lc, idx);
    return took;
}

rdlm_status_t rdlm_sem_local_acquire(rdlm_local_t *lc, uint32_t idx, uint32_t k,
                                     uint64_t timeout_ns)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];
    uint32_t permits = rdlm_load(&e->sem_permits, RDLM_RELAXED);
    uint64_t deadline;
    rdlm_status_t s;

    if (rdlm_sem_try(e, permits, k)) {
        return RDLM_OK;
    }
    if (timeout_ns == 0) {
        return rdlm_sem_try_stale(lc, idx, permits, k) ? RDLM_OK : RDLM_ERR_BUSY;
    }
    s = rdlm_local_wait_enter(lc);
    if (s != RDLM_OK) {
        return s;
    }
    rdlm_fetch_add(&lc->stats.contended, 1, RDLM_RELAXED);
    deadline = rdlm_clock_deadline(timeout_ns);
    s = rdlm_sem_bypass(lc, e, permits, k, deadline);
    if (s == RDLM_INPROGRESS) {
        s = rdlm_sem_reserve(lc, idx, permits, k, deadline);
    } else if (s == RDLM_OK) {
        rdlm_sem_pass_wake(lc, e, permits);
    }
    if (s == RDLM_ERR_TIMEOUT || s == RDLM_ERR_CLOSED) {
        rdlm_sem_pass_wake(lc, e, permits); /* a wake we consumed is passed on */
    }
    if (s == RDLM_ERR_TIMEOUT) {
        rdlm_fetch_add(&lc->stats.timeouts, 1, RDLM_RELAXED);
    }
    if (s == RDLM_OK && rdlm_load(&lc->closing, RDLM_SEQ_CST)) {
        rdlm_sem_local_release(lc, idx, k); /* granted while the context closes */
        s = RDLM_ERR_CLOSED;
    }
    return rdlm_local_wait_leave(lc, s);
}

void rdlm_sem_local_release(rdlm_local_t *lc, uint32_t idx, uint32_t k)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];
    uint64_t old = rdlm_fetch_sub(&e->sem_state, k, RDLM_SEQ_CST);

    if (old & RDLM_SEM_RSV) {
        /* The reserver waits holding the gate; only it sleeps with this bit. */
        rdlm_fetch_add(&e->sem_wake, 1, RDLM_SEQ_CST);
        rdlm_wait_wake(&e->sem_wake, RDLM_SEM_BIT_RSV, &e->parked, &lc->stats.wait);
    } else if (RDLM_SEM_SLEEPERS(old) != 0 && !(old & RDLM_SEM_WOKEN)) {
        rdlm_sem_pass_wake(lc, e, rdlm_load(&e->sem_permits, RDLM_RELAXED));
    }
}

uint32_t rdlm_sem_local_available(const rdlm_local_t *lc, uint32_t idx)
{
    const rdlm_entry_t *e = &lc->seg.entries[idx];

    return rdlm_load(&e->sem_permits, RDLM_RELAXED) -
           RDLM_SEM_TAKEN(rdlm_load(&e->sem_state, RDLM_ACQUIRE));
}
