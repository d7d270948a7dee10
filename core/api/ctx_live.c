/*
 * Live contexts (api.h): the process's set of the contexts created and not yet
 * destroyed (util's live.h), so that a call through the handle of a destroyed context
 * answers RDLM_ERR_BAD_HANDLE instead of touching freed memory. Only the calls that
 * take an rdlm_ctx_h look: opens, statistics, information and the collective barrier,
 * never an object's operations.
 */
#include "api.h"
#include "live.h"
#include "log.h"

static rdlm_live_set_t rdlm_ctx_live = RDLM_LIVE_SET_INIT;

void rdlm_ctx_live_add(rdlm_ctx_h ctx)
{
    rdlm_live_add(&rdlm_ctx_live, &ctx->live);
}

void rdlm_ctx_live_remove(rdlm_ctx_h ctx)
{
    (void)rdlm_live_remove(&rdlm_ctx_live, &ctx->live);
}

static int rdlm_ctx_is_live(const struct rdlm_ctx *ctx)
{
    return rdlm_live_has(&rdlm_ctx_live, &ctx->live);
}

rdlm_status_t rdlm_ctx_check(const struct rdlm_ctx *ctx, const char *func)
{
    if (ctx == NULL) {
        rdlm_warn("%s: NULL context", func);
        return RDLM_ERR_BAD_HANDLE;
    }
    if (!rdlm_ctx_is_live(ctx)) {
        rdlm_warn("%s: not a live context (destroyed already?)", func);
        return RDLM_ERR_BAD_HANDLE;
    }
    return RDLM_OK;
}

rdlm_status_t rdlm_ctx_check_out(const struct rdlm_ctx *ctx, const void *out,
                                 const char *func)
{
    rdlm_status_t status = rdlm_ctx_check(ctx, func);

    if (status == RDLM_OK && out == NULL) {
        rdlm_warn("%s: NULL output pointer", func);
        status = RDLM_ERR_INVALID_ARG;
    }
    return status;
}
