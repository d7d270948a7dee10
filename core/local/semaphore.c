/*
 * The on-node semaphore: N permits (entry aux32), `taken` in aux64. The entry's
 * ticket lock is a FIFO gate: an acquirer passes it in arrival order and, holding it,
 * waits until k permits are free, takes them with one CAS and leaves the gate. So a
 * large request at the head is never overtaken by later small ones (FIFO, no
 * starvation), and a timeout takes nothing. A release subtracts from `taken`, bumps
 * wake32 and wakes the gate's holder (the only waiter on wake32).
 */
#include "clock.h"
#include "local.h"
#include "log.h"

rdlm_status_t rdlm_sem_local_wait(rdlm_local_t *lc, uint32_t idx, uint64_t deadline,
                                  int (*ready)(void *arg), void *arg)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];
    rdlm_wait_t w;

    rdlm_wait_init_until(&w, &lc->policy, &lc->stats.wait, deadline);
    for (;;) {
        uint32_t releases = rdlm_load(&e->wake32, RDLM_SEQ_CST);

        if (ready(arg)) {
            return RDLM_OK;
        }
        if (rdlm_load(&lc->closing, RDLM_RELAXED)) {
            return RDLM_ERR_CLOSED;
        }
        if (rdlm_wait_step(&w, &e->wake32, releases, RDLM_WAIT_ALL_BITS, &e->parked) ==
            RDLM_WAIT_TIMEDOUT) {
            return deadline == 0 ? RDLM_ERR_BUSY : RDLM_ERR_TIMEOUT;
        }
    }
}

typedef struct rdlm_sem_take {
    rdlm_entry_t *e;
    uint32_t k;
} rdlm_sem_take_t;

/* Take k permits if free (one CAS loop on `taken`). */
static int rdlm_sem_take(void *arg)
{
    rdlm_sem_take_t *t = arg;
    uint64_t taken = rdlm_load(&t->e->aux64, RDLM_ACQUIRE);
    uint32_t permits = rdlm_load(&t->e->aux32, RDLM_RELAXED);

    while (permits - taken >= t->k) {
        if (rdlm_cas(&t->e->aux64, &taken, taken + t->k, RDLM_ACQ_REL)) {
            return 1;
        }
    }
    return 0;
}

rdlm_status_t rdlm_sem_local_acquire(rdlm_local_t *lc, uint32_t idx, uint32_t k,
                                     uint64_t timeout_ns)
{
    rdlm_sem_take_t t = {&lc->seg.entries[idx], k};
    uint64_t deadline = timeout_ns == 0 ? 0 : rdlm_clock_deadline(timeout_ns);
    rdlm_status_t s = rdlm_qlock_acquire(lc, idx, timeout_ns, NULL);

    if (s != RDLM_OK && s != RDLM_OWNER_DEAD) {
        return s;
    }
    s = rdlm_sem_local_wait(lc, idx, deadline, rdlm_sem_take, &t);
    rdlm_qlock_release(lc, idx);
    if (s == RDLM_ERR_TIMEOUT) {
        rdlm_fetch_add(&lc->stats.timeouts, 1, RDLM_RELAXED);
    }
    return s;
}

void rdlm_sem_local_release(rdlm_local_t *lc, uint32_t idx, uint32_t k)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];

    rdlm_fetch_sub(&e->aux64, k, RDLM_ACQ_REL);
    rdlm_fetch_add(&e->wake32, 1, RDLM_SEQ_CST);
    rdlm_wait_wake(&e->wake32, RDLM_WAIT_ALL_BITS, &e->parked, &lc->stats.wait);
}

uint32_t rdlm_sem_local_available(const rdlm_local_t *lc, uint32_t idx)
{
    const rdlm_entry_t *e = &lc->seg.entries[idx];

    return rdlm_load(&e->aux32, RDLM_RELAXED) - (uint32_t)rdlm_load(&e->aux64, RDLM_ACQUIRE);
}
