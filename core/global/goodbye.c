/*
 * Leaving a distributed context when a process of it may be dead (global.h).
 *
 * rdlm_ctx_destroy is collective: no process may free memory that a peer still uses.
 * The transport's destroy waits in bootstrap barriers, and a barrier whose member died
 * can only time out (30 s with MPI), however early the death was known. So first:
 *
 *   every process, on leaving:   fetch-add 1 to the goodbye word of every other
 *                                process not known dead (its queue-node region)
 *   then wait until:             own goodbye word >= others not known dead
 *                                (re-checked every RDLM_GLOBAL_GOODBYE_CHECK_NS)
 *
 * A live process is waited for however long it takes to leave (bounded: the
 * bootstrap's own bound, RDLM_GLOBAL_GOODBYE_NS). A process that died before saying
 * goodbye is not waited for once it is known dead, by the transport (a watched peer)
 * or by its record on this host (peers.h); one that said goodbye and then died
 * counted already. Once every live process left, and only if one is dead, the
 * bootstrap is given up (a barrier whose idle says so: RDLM_ERR_PEER_DEAD at once),
 * so the transport's barriers that follow end at once too. A dead process on another
 * host that nothing watches (RDLM_PEER_FAILURE=off) is waited for until the bound.
 */
#include "word.h"

#include <sched.h>
#include <time.h>

#include "clock.h"
#include "glock.h"
#include "log.h"

#define RDLM_GLOBAL_GOODBYE_NS 30000000000ull    /* as the MPI bootstrap's timeout */
#define RDLM_GLOBAL_GOODBYE_CHECK_NS 10000000ull /* deaths looked for this often */

/* Processes other than this one not known dead. */
static uint32_t rdlm_global_others_alive(rdlm_global_t *d)
{
    uint32_t alive = 0;

    for (uint32_t r = 0; r < d->bootstrap->size; r++) {
        alive += r != d->rank && !rdlm_global_rank_gone(d, r);
    }
    return alive;
}

/* Wait until every other process not known dead said goodbye; its status. */
static rdlm_status_t rdlm_global_goodbye_wait(rdlm_global_t *d, uint32_t *alive_p)
{
    uint64_t start = rdlm_clock_now_ns(), check_at = start;
    struct timespec nap = {0, 20000};

    for (;;) {
        uint64_t now = rdlm_clock_now_ns();

        if (now >= check_at) {
            *alive_p = rdlm_global_others_alive(d);
            check_at = now + RDLM_GLOBAL_GOODBYE_CHECK_NS;
        }
        if (rdlm_global_byes(d) >= *alive_p) {
            return RDLM_OK;
        }
        if (now - start >= RDLM_GLOBAL_GOODBYE_NS) {
            return RDLM_ERR_TIMEOUT;
        }
        if (rdlm_global_progress(d) == 0) {
            nanosleep(&nap, NULL);
        }
    }
}

static int rdlm_global_goodbye_dead_idle(void *arg)
{
    (void)arg;
    return -1; /* the bootstrap gives the collective up: a process is dead */
}

void rdlm_global_goodbye(rdlm_global_t *d)
{
    const rdlm_tl_bootstrap_t *bs = d->bootstrap;
    rdlm_tl_idle_t dead = {rdlm_global_goodbye_dead_idle, NULL};
    uint32_t alive = 0;
    rdlm_status_t s;

    for (uint32_t r = 0; r < bs->size; r++) {
        if (r != d->rank && !rdlm_global_rank_gone(d, r) &&
            rdlm_global_bye_send(d, r) == RDLM_ERR_PEER_DEAD) {
            rdlm_debug("dist: rank %u: goodbye to rank %u: dead", d->rank, r);
        }
    }
    s = rdlm_global_goodbye_wait(d, &alive);
    if (s != RDLM_OK) {
        rdlm_warn("dist: rank %u: %u of %u processes not known dead did not leave the "
                  "context within %llu s; destroying anyway",
                  d->rank, alive - (uint32_t)rdlm_global_byes(d), alive,
                  RDLM_GLOBAL_GOODBYE_NS / 1000000000ull);
    }
    if (alive + 1 < bs->size) {
        rdlm_warn("dist: rank %u: %u process(es) of this context are dead or gone (left, "
                  "and seen dead by the transport since); every live one left, so destroy "
                  "does not wait for the dead",
                  d->rank, bs->size - 1 - alive);
        (void)bs->barrier(bs->arg, &dead);
    }
}

rdlm_status_t rdlm_global_leave(rdlm_global_t *d, const void *mine, void *all, size_t len)
{
    const rdlm_tl_idle_t idle = {rdlm_global_progress_idle, d};

    rdlm_glock_finish(d, 1); /* releases made after quiesce (held at destroy) */
    if (d->procs != NULL) {
        rdlm_global_goodbye(d); /* a dead process: the bootstrap is given up */
    }
    d->left = 1;
    if (all == NULL) {
        return RDLM_ERR_NO_MEMORY; /* the others' allgather times out (bounded) */
    }
    return d->bootstrap->allgather(d->bootstrap->arg, mine, all, len, &idle);
}
