/*
 * A context's lease at the lease authority (RDLM_AUTHORITY, or the one the job runs
 * itself: ctx_authority.c): every process of the context holds its own session; rank
 * 0 commits the token epoch there; every operation checks the lease first
 * (rdlm_obj_check), so a process whose lease is lost gets RDLM_ERR_LEASE_EXPIRED
 * instead of a success; an acquire that took a lock over from a holder whose lease
 * ended waits out the lock delay (RDLM_LOCK_DELAY_MS) before it returns.
 */
#include "api.h"
#include "client_internal.h"
#include "log.h"

rdlm_status_t rdlm_ctx_lease_open(rdlm_ctx_h ctx, const char *job, const char *authority)
{
    rdlm_session_params_t sp = {
        .field_mask =
            RDLM_SESSION_FIELD_TTL | RDLM_SESSION_FIELD_JOB | RDLM_SESSION_FIELD_LOCK_DELAY,
        .ttl_ms = ctx->config.lease_ttl_ms,
        .job = job,
        .lock_delay_ms = ctx->config.lock_delay_ms,
    };

    if (authority[0] == '\0') {
        return RDLM_OK;
    }
    return rdlm_session_open(authority, &sp, &ctx->session);
}

rdlm_status_t rdlm_ctx_lease_epoch(rdlm_ctx_h ctx, uint32_t floor, uint32_t *epoch_p)
{
    uint64_t epoch = 0;
    rdlm_status_t status;

    *epoch_p = 0;
    if (ctx->session == NULL) {
        return RDLM_OK;
    }
    status = rdlm_lease_session_new_epoch_above(ctx->session, floor, &epoch);
    if (status != RDLM_OK) {
        rdlm_error("rdlm_ctx_create: no token epoch from the authority: %s",
                   rdlm_status_str(status));
        return status;
    }
    if (epoch == 0 || epoch > RDLM_GLOBAL_EPOCH_MAX) {
        rdlm_error("rdlm_ctx_create: authority epoch %llu is past %u (tokens would not "
                   "fit 63 bits)",
                   (unsigned long long)epoch, RDLM_GLOBAL_EPOCH_MAX);
        return RDLM_ERR_QUOTA;
    }
    *epoch_p = (uint32_t)epoch;
    return RDLM_OK;
}

void rdlm_ctx_lease_close(rdlm_ctx_h ctx)
{
    rdlm_session_close(ctx->session);
    ctx->session = NULL;
}

void rdlm_ctx_lease_lock_delay(const struct rdlm_ctx *ctx)
{
    rdlm_lease_session_lock_delay(ctx->session);
}

rdlm_session_h rdlm_ctx_session(rdlm_ctx_h ctx)
{
    return ctx != NULL && rdlm_ctx_check(ctx, __func__) == RDLM_OK ? ctx->session : NULL;
}
