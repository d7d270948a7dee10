/*
 * Breaking the global locks of dead processes (core/global/glock.c, "Recovery") in a
 * distributed context that holds a lease: at create every process learns every
 * other's session id; then the lock layer's two questions are asked through the
 * process's own session: has rank r's lease ended (a FATE request: one round trip to
 * the leader, no log entry), and a new token epoch (an EPOCH entry).
 */
#include <stdlib.h>

#include "api.h"
#include "client_internal.h"
#include "log.h"

static int rdlm_ctx_recovery_ended(void *arg, uint32_t rank)
{
    rdlm_ctx_h ctx = arg;
    int r = rdlm_lease_session_ended(ctx->session, ctx->peer_sessions[rank]);

    if (r < 0) {
        rdlm_info("lock recovery: could not ask whether rank %u's lease ended: %s", rank,
                  rdlm_status_str((rdlm_status_t)r));
        return 0;
    }
    return r;
}

static rdlm_status_t rdlm_ctx_recovery_epoch(void *arg, uint32_t *epoch_p)
{
    rdlm_ctx_h ctx = arg;

    return rdlm_ctx_lease_epoch(ctx, ctx->dist->epoch, epoch_p);
}

rdlm_status_t rdlm_ctx_recovery_start(rdlm_ctx_h ctx)
{
    const rdlm_tl_bootstrap_t *bs = ctx->dist->bootstrap;
    uint64_t mine = ctx->session != NULL ? rdlm_lease_session_id(ctx->session) : 0;
    uint64_t *all = calloc(bs->size, sizeof(*all));
    rdlm_global_recovery_t rec = {
        .ended = rdlm_ctx_recovery_ended,
        .new_epoch = rdlm_ctx_recovery_epoch,
        .arg = ctx,
        .ttl_ns = (uint64_t)ctx->config.lease_ttl_ms * 1000000ull};
    rdlm_status_t s;

    if (all == NULL) {
        rdlm_error("rdlm_ctx_create: no memory for %u session ids", bs->size);
        return RDLM_ERR_NO_MEMORY;
    }
    s = bs->allgather(bs->arg, &mine, all, sizeof(mine), NULL);
    for (uint32_t r = 0; s == RDLM_OK && r < bs->size; r++) {
        if (all[r] == 0) {
            free(all); /* a process without a lease: no recovery anywhere */
            return RDLM_OK;
        }
    }
    if (s != RDLM_OK) {
        free(all);
        return s;
    }
    ctx->peer_sessions = all;
    rdlm_global_set_recovery(ctx->dist, &rec);
    return RDLM_OK;
}

void rdlm_ctx_recovery_free(rdlm_ctx_h ctx)
{
    free(ctx->peer_sessions);
    ctx->peer_sessions = NULL;
}
