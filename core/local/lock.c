/*
 * What the two on-node exclusive locks (the bounded-bypass mutex, mutex.c, and the
 * FIFO ticket lock, ticket.c) share when a failed try reads the clock (local.h has
 * the rest of the try's check and the grant), and the frame of their waits.
 * docs/local-locks.md ("Exclusive lock").
 */
#include "clock.h"
#include "local.h"

int rdlm_local_lock_try_clock(rdlm_local_t *lc, uint64_t word)
{
    uint64_t now = rdlm_clock_now_ns();
    uint64_t due = rdlm_load(&lc->next_try_check_ns, RDLM_RELAXED);

    rdlm_store(&lc->try_word, word, RDLM_RELAXED);
    rdlm_store(&lc->try_fails, 0, RDLM_RELAXED);
    return now >= due && rdlm_cas(&lc->next_try_check_ns, &due,
                                  now + RDLM_LOCAL_TRY_CHECK_INTERVAL_NS, RDLM_RELAXED);
}

rdlm_status_t rdlm_local_lock_wait(rdlm_local_t *lc, uint32_t idx, uint64_t timeout_ns,
                                   uint64_t *token_p,
                                   rdlm_status_t (*wait)(rdlm_local_t *, uint32_t, uint64_t,
                                                         uint32_t *prev_owner_p),
                                   rdlm_status_t (*release)(rdlm_local_t *, uint32_t))
{
    uint32_t prev_owner = 0;
    rdlm_status_t status = rdlm_local_wait_enter(lc);

    if (status != RDLM_OK) {
        return status;
    }
    status = wait(lc, idx, timeout_ns, &prev_owner);
    if (status == RDLM_OK) {
        status = rdlm_local_lock_grant(lc, idx, prev_owner, token_p);
        if (release != NULL) {
            status = rdlm_local_lock_give_back(lc, idx, status, release);
        }
    }
    return rdlm_local_wait_leave(lc, status);
}
