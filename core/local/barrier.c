/*
 * The on-node barrier: one word `barrier_state = generation << 32 | arrived`; the last
 * arriver opens the next generation and mirrors it into `barrier_released`, the futex word
 * the others sleep on. Nothing is reset between rounds. docs/local-locks.md ("Barrier").
 */
#include "local.h"

#define RDLM_BARRIER_GEN(v) ((uint32_t)((v) >> 32))

/* Take the arrival back if the generation is still gen. 1 if withdrawn. */
static int rdlm_barrier_withdraw(rdlm_entry_t *e, uint32_t gen)
{
    uint64_t cur = rdlm_load(&e->barrier_state, RDLM_ACQUIRE);

    while (RDLM_BARRIER_GEN(cur) == gen) {
        if (rdlm_cas(&e->barrier_state, &cur, cur - 1, RDLM_ACQ_REL)) {
            return 1;
        }
    }
    return 0;
}

rdlm_status_t rdlm_barrier_local_wait(rdlm_local_t *lc, uint32_t idx, uint64_t timeout_ns)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];
    uint32_t nprocs = rdlm_load(&e->barrier_nprocs, RDLM_RELAXED);
    uint64_t v = rdlm_fetch_add(&e->barrier_state, 1, RDLM_ACQ_REL);
    uint32_t gen = RDLM_BARRIER_GEN(v);
    rdlm_status_t status = RDLM_OK;
    rdlm_wait_t w;

    if ((uint32_t)v + 1 == nprocs) {
        rdlm_store(&e->barrier_state, (uint64_t)(gen + 1) << 32, RDLM_SEQ_CST);
        rdlm_store(&e->barrier_released, gen + 1, RDLM_SEQ_CST);
        rdlm_wait_wake(&e->barrier_released, RDLM_WAIT_ALL_BITS, &e->parked,
                       &lc->stats.wait);
        return RDLM_OK;
    }
    if (timeout_ns != 0 && rdlm_local_wait_enter(lc) != RDLM_OK) {
        return rdlm_barrier_withdraw(e, gen) ? RDLM_ERR_CLOSED : RDLM_OK;
    }
    rdlm_wait_init(&w, &lc->policy, &lc->stats.wait, timeout_ns);
    while (RDLM_BARRIER_GEN(rdlm_load(&e->barrier_state, RDLM_ACQUIRE)) == gen) {
        int closing = rdlm_load(&lc->closing, RDLM_RELAXED) != 0;

        if ((closing || rdlm_wait_step(&w, &e->barrier_released, gen, RDLM_WAIT_ALL_BITS,
                                       &e->parked) == RDLM_WAIT_TIMEDOUT) &&
            rdlm_barrier_withdraw(e, gen)) {
            if (!closing) {
                rdlm_fetch_add(&lc->stats.timeouts, 1, RDLM_RELAXED);
            }
            status = closing ? RDLM_ERR_CLOSED : RDLM_ERR_TIMEOUT;
            break;
        }
    }
    return timeout_ns != 0 ? rdlm_local_wait_leave(lc, status) : status;
}
