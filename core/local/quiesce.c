/*
 * The end of a context's waits at its destroy (local.h, rdlm_local_quiesce): closing
 * makes every waiting call give up its place within a park slice; the calls that wait
 * count themselves (rdlm_local_wait_enter), so the destroy knows when the last one has
 * left the segment it is about to unmap. Before, a node-only context's destroy unmapped
 * it under threads still waiting in it (they crashed), and they were never told to
 * give up.
 */
#include <time.h>

#include "clock.h"
#include "local.h"
#include "log.h"

#define RDLM_LOCAL_QUIESCE_NS 10000000000ull /* a waiter leaves within a park slice */

void rdlm_local_quiesce(rdlm_local_t *lc)
{
    uint64_t until = rdlm_clock_now_ns() + RDLM_LOCAL_QUIESCE_NS;
    struct timespec pause = {0, 100000};

    rdlm_store(&lc->closing, 1, RDLM_SEQ_CST);
    while (rdlm_load(&lc->waiting, RDLM_SEQ_CST) != 0 && rdlm_clock_now_ns() < until) {
        nanosleep(&pause, NULL);
    }
    if (rdlm_load(&lc->waiting, RDLM_ACQUIRE) != 0) {
        rdlm_warn("%s: %u waiting calls of the context still running after 10 s at "
                  "destroy (a thread stopped?)",
                  lc->seg.place.dir, rdlm_load(&lc->waiting, RDLM_ACQUIRE));
    }
}
