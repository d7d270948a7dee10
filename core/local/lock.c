/*
 * What the two on-node exclusive locks (the bounded-bypass mutex, mutex.c, and the
 * FIFO ticket lock, ticket.c) share when a failed try reads the clock (local.h has
 * the rest of the try's check and the grant). docs/local-locks.md ("Exclusive lock").
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
