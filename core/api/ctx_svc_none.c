/* Service-wide locks in a library built without UCX (RDLM_WITH_UCX=OFF): a context
 * with RDLM_AUTHORITY keeps node-local locks (ctx->svc stays NULL, so the other
 * functions are never called). */
#include "api.h"
#include "log.h"

rdlm_status_t rdlm_ctx_svc_open(rdlm_ctx_h ctx)
{
    if (ctx->session != NULL) {
        rdlm_info("rdlm_ctx_create: built without UCX: locks stay node-local");
    }
    return RDLM_OK;
}

void rdlm_ctx_svc_close(rdlm_ctx_h ctx)
{
    (void)ctx;
}

rdlm_status_t rdlm_ctx_svc_acquire(rdlm_obj_t *obj, uint64_t timeout_ns, uint64_t *token_p)
{
    (void)obj;
    (void)timeout_ns;
    (void)token_p;
    return RDLM_ERR_UNSUPPORTED;
}

rdlm_status_t rdlm_ctx_svc_release(rdlm_obj_t *obj)
{
    (void)obj;
    return RDLM_ERR_UNSUPPORTED;
}

void rdlm_ctx_svc_forget(rdlm_obj_t *obj)
{
    (void)obj;
}

uint64_t rdlm_ctx_svc_home_ops(rdlm_ctx_h ctx)
{
    (void)ctx;
    return 0;
}

int32_t rdlm_ctx_svc_home(const rdlm_obj_t *obj)
{
    (void)obj;
    return -1;
}
