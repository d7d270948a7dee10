/*
 * Cross-node semaphores: N permits in a word P at the home, P = waiters << 48 | taken.
 *
 *   fast path  one fetch-add of k on P; it holds if nobody waits (waiters 0) and k
 *              were free. So an uncontended acquire + release is two home operations.
 *   slow path  otherwise the same fetch-add undoes the k and counts this process as a
 *              waiter (-k + one waiter, one operation); then the two FIFO gates of the
 *              cross-node writers: the node-local ticket lock, then the global queue
 *              lock W (glock.c). The process at the head of both takes k permits and
 *              stops waiting with one fetch-add of k - one waiter on P (undone if fewer
 *              than k were free) and, while too few are free, polls P with pauses
 *              growing to 1 ms: one poller per semaphore, the rest queue.
 *   release    one fetch-add of -k.
 *
 * While anyone waits, newcomers queue behind them (FIFO among waiters). One window
 * remains: between a waiter's failed take and its undo it is not counted, so a
 * newcomer's fast attempt can succeed there, only when the waiter's k would still fit
 * beside it (the waiter's undo then finds room and takes: it loses two round trips,
 * no permits). A failed fast attempt is undone at once, so it delays a waiter's take
 * by at most one attempt per newcomer. N is fixed job-wide by the first open (a third home
 * word, CAS from 0). taken can exceed N for the two round trips of a fetch-add and its
 * undo: readers of the free count (rdlm_global_sem_available) clamp it to 0..N. A process
 * that dies while waiting leaves its waiter count behind: from then on every acquire takes
 * the slow path (still correct; rdlm_info-visible as home operations per acquire).
 *
 * Home-served (d->am_lock, amq.h): where locks are served by their home process, so
 * are semaphores. The home keeps the permits taken and a FIFO queue of waiters; an
 * acquire is one round trip (SEM_ACQ -> GRANT, at once or when a release lets it
 * in), a release one message (SEM_REL). P and its waiter count are not used there.
 *
 * Entry fields (semaphore kind, distributed): home_pair1 = W slot + 1 | (P slot + 1) << 32
 * (rdlm_global_open_pair: P is companion word 1; N is fixed in companion word 2);
 * sem_permits = N.
 */
#include "amq.h"
#include "glock.h"

#include "clock.h"
#include "log.h"

/* P = waiters << 48 | taken. taken counts the fast attempts in flight too (between a
 * fetch-add and its undo), so it can reach (processes + 1) x N: 48 bits keep that
 * below the waiters half for 131,072 concurrent acquirers at N = RDLM_SEM_PERMITS_MAX
 * (a carry would let a slow take succeed beside a holder of N: dist_sem.pml,
 * code_taken_wraps). More than 65,535 waiters at once wrap the 16-bit half away,
 * which costs newcomers' fairness, not safety (taken bounds the holders). */
#define RDLM_DSEM_WAITER (1ull << 48)
#define RDLM_DSEM_TAKEN(p) ((p) & (RDLM_DSEM_WAITER - 1))
#define RDLM_DSEM_WAITERS(p) ((p) >> 48)

rdlm_status_t rdlm_global_sem_open(rdlm_global_t *d, rdlm_local_t *lc, uint32_t idx)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];
    uint32_t permits = rdlm_load(&e->sem_permits, RDLM_RELAXED);
    uint64_t fixed;
    rdlm_status_t s;

    if (rdlm_load(&e->home_pair1, RDLM_ACQUIRE) != 0) {
        return RDLM_OK;
    }
    s = rdlm_global_home_fix(d, rdlm_global_sub_id(rdlm_load(&e->key, RDLM_RELAXED), 2),
                             RDLM_KIND_SEMAPHORE, permits, &fixed);
    if (s == RDLM_OK && fixed != permits) {
        rdlm_error("semaphore \"%s\" exists with %llu permits on another node, opened with "
                   "%u",
                   lc->seg.names[idx], (unsigned long long)fixed, permits);
        return RDLM_ERR_MISMATCH;
    }
    return s != RDLM_OK ? s : rdlm_global_open_pair(d, e);
}

/* Holding both gates, counted as a waiter: take k of the permits and stop waiting,
 * waiting for them until deadline (try_only: not at all; then still a waiter). */
static rdlm_status_t rdlm_sem_take(rdlm_global_t *d, const rdlm_global_word_t *p,
                                   uint32_t permits, uint32_t k, uint64_t deadline,
                                   int try_only)
{
    const uint64_t take = k - RDLM_DSEM_WAITER; /* wraps: adds k, removes one waiter */
    uint64_t pause = RDLM_GLOBAL_POLL_FIRST_NS, old;
    rdlm_status_t s;

    for (;;) {
        s = rdlm_global_w_fadd(d, p, take, &old);
        if (s != RDLM_OK || RDLM_DSEM_TAKEN(old) + k <= permits) {
            return s;
        }
        s = rdlm_global_w_fadd(d, p, (uint64_t)0 - take, &old); /* undo */
        old -= take; /* the count without our k, with us waiting */
        /* Wait until enough are free (reads), then try again. */
        while (s == RDLM_OK && RDLM_DSEM_TAKEN(old) + k > permits) {
            s = rdlm_global_poll_pause(d, &pause, deadline, try_only);
            if (s == RDLM_OK) {
                s = rdlm_global_w_fadd(d, p, 0, &old);
            }
        }
        if (s != RDLM_OK) {
            return s;
        }
    }
}

/* The slow path, counted as a waiter: the gates, then the take; a waiter that gives
 * up (error, timeout) stops counting. */
static rdlm_status_t rdlm_sem_queue(rdlm_global_t *d, rdlm_local_t *lc, uint32_t idx,
                                    uint32_t k, uint64_t timeout_ns, uint64_t deadline)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];
    rdlm_global_word_t w, p;
    uint64_t qid, seq, old;
    rdlm_status_t s, taken = RDLM_ERR_TIMEOUT;

    rdlm_global_pair_words(d, e, &w, &p);
    s = rdlm_ticket_acquire(lc, idx, timeout_ns, NULL); /* the node's FIFO gate */
    if (s == RDLM_OWNER_DEAD) {
        s = RDLM_OK;
    }
    if (s == RDLM_OK) {
        s = timeout_ns == 0 ? rdlm_glock_try(d, &w, 0, &qid, &seq)
                            : rdlm_glock_acquire(d, &w, 0, deadline, &qid, &seq);
        if (s == RDLM_OWNER_DEAD) {
            s = RDLM_OK; /* W only orders the takers: a dead one ahead changes nothing */
        }
        if (s == RDLM_OK) {
            s = taken = rdlm_sem_take(d, &p, rdlm_load(&e->sem_permits, RDLM_RELAXED), k,
                                      deadline, timeout_ns == 0);
            /* W only orders the takers: pass it on without using the token. */
            rdlm_glock_pass(d, &w, qid, seq, seq - 1);
        }
        rdlm_ticket_release(lc, idx);
    }
    if (taken != RDLM_OK) {
        rdlm_global_w_fadd(d, &p, (uint64_t)0 - RDLM_DSEM_WAITER, &old);
    }
    return s;
}

/* The remote-atomic protocol's acquire: the fast path, else the slow one. */
static rdlm_status_t rdlm_sem_atomic_acquire(rdlm_global_t *d, rdlm_local_t *lc,
                                             uint32_t idx, uint32_t k, uint64_t timeout_ns,
                                             uint64_t deadline)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];
    rdlm_global_word_t w, p;
    uint64_t old;
    rdlm_status_t s;

    rdlm_global_pair_words(d, e, &w, &p);
    s = rdlm_global_w_fadd(d, &p, k, &old);
    if (s == RDLM_OK &&
        (RDLM_DSEM_WAITERS(old) != 0 ||
         RDLM_DSEM_TAKEN(old) + k > rdlm_load(&e->sem_permits, RDLM_RELAXED))) {
        /* undo, and wait behind the others */
        s = rdlm_global_w_fadd(d, &p, RDLM_DSEM_WAITER - k, &old);
        if (s == RDLM_OK) {
            s = rdlm_sem_queue(d, lc, idx, k, timeout_ns, deadline);
        }
    }
    return s;
}

rdlm_status_t rdlm_global_sem_acquire(rdlm_global_t *d, rdlm_local_t *lc, uint32_t idx,
                                      uint32_t k, uint64_t timeout_ns)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];
    uint64_t deadline = rdlm_clock_deadline(timeout_ns);
    rdlm_global_word_t w, p;
    rdlm_status_t s;

    if (rdlm_load(&d->closing, RDLM_ACQUIRE)) {
        return RDLM_ERR_CLOSED;
    }
    rdlm_fetch_add(&d->active, 1, RDLM_ACQ_REL);
    if (d->am_lock) {
        rdlm_global_pair_words(d, e, &w, &p);
        s = rdlm_amq_sem_acquire(d, &w, k, rdlm_load(&e->sem_permits, RDLM_RELAXED),
                                 deadline, timeout_ns == 0);
    } else {
        s = rdlm_sem_atomic_acquire(d, lc, idx, k, timeout_ns, deadline);
    }
    if (s == RDLM_ERR_TIMEOUT) {
        rdlm_fetch_add(&lc->stats.timeouts, 1, RDLM_RELAXED);
    }
    if (s == RDLM_OK && timeout_ns != 0 && rdlm_load(&d->closing, RDLM_ACQUIRE)) {
        /* Granted while the context closes: the destroy would give the permits back
         * under the caller (rdlm.h, rdlm_ctx_destroy). */
        rdlm_global_sem_release(d, lc, idx, k);
        s = RDLM_ERR_CLOSED;
    }
    rdlm_fetch_sub(&d->active, 1, RDLM_ACQ_REL);
    return s;
}

rdlm_status_t rdlm_global_sem_release(rdlm_global_t *d, rdlm_local_t *lc, uint32_t idx,
                                      uint32_t k)
{
    rdlm_global_word_t w, p;
    uint64_t old;

    rdlm_global_pair_words(d, &lc->seg.entries[idx], &w, &p);
    return d->am_lock ? rdlm_amq_sem_release(d, &w, k)
                      : rdlm_global_w_fadd(d, &p, (uint64_t) - (int64_t)k, &old);
}

rdlm_status_t rdlm_global_sem_available(rdlm_global_t *d, rdlm_local_t *lc, uint32_t idx,
                                        uint32_t *available_p)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];
    rdlm_global_word_t w, p;
    uint64_t word;
    rdlm_status_t s;

    rdlm_global_pair_words(d, e, &w, &p);
    s = d->am_lock ? rdlm_amq_sem_taken(d, &w, &word) : rdlm_global_w_fadd(d, &p, 0, &word);
    if (s == RDLM_OK) {
        /* taken exceeds N while a taker's fetch-add waits for its undo */
        uint32_t permits = rdlm_load(&e->sem_permits, RDLM_RELAXED);
        uint64_t taken = RDLM_DSEM_TAKEN(word);

        *available_p = taken < permits ? permits - (uint32_t)taken : 0;
    }
    return s;
}
