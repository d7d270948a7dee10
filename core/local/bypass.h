/*
 * The bypass phase a waiter runs before it takes a fair place (the rwlock's gate, the
 * semaphore's bypass): try, spin (only with a CPU per process), then read the clock
 * for the caller's next step, giving up when the context closes or the deadline
 * passes.
 */
#ifndef RDLM_BYPASS_H
#define RDLM_BYPASS_H

#include <stdint.h>

#include "clock.h"
#include "local.h"

/** How many turns of a bypass spin: none on an oversubscribed node. */
static inline uint32_t rdlm_bypass_spins(const rdlm_local_t *lc)
{
    return rdlm_local_oversubscribed(lc) ? 0 : lc->policy.spin;
}

/**
 * Turn i of a bypass, after a failed try: RDLM_ERR_CLOSED if the context closes;
 * RDLM_INPROGRESS while i < spins (one cpu_relax: try again); RDLM_ERR_TIMEOUT once
 * the deadline passes; else RDLM_OK with *now_p the time, for the caller's yield or
 * sleep.
 */
static inline rdlm_status_t rdlm_bypass_turn(rdlm_local_t *lc, uint32_t i, uint32_t spins,
                                             uint64_t deadline, uint64_t *now_p)
{
    if (rdlm_load(&lc->closing, RDLM_RELAXED)) {
        return RDLM_ERR_CLOSED;
    }
    if (i < spins) {
        rdlm_cpu_relax();
        return RDLM_INPROGRESS;
    }
    *now_p = rdlm_clock_now_ns();
    if (*now_p >= deadline) {
        return RDLM_ERR_TIMEOUT;
    }
    return RDLM_OK;
}

#endif
