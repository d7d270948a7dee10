/* Service-wide locks in a library built without UCX (RDLM_WITH_UCX=OFF): a context
 * with RDLM_AUTHORITY keeps node-local locks (ctx->svc stays NULL and ctx->ops the
 * node-local table). */
#include "api.h"
#include "log.h"

rdlm_status_t rdlm_ctx_svc_open(rdlm_ctx_h ctx)
{
    if (ctx->session != NULL) {
        rdlm_warn("rdlm_ctx_create: built without UCX: this context's locks are "
                  "node-local, not service-wide");
    }
    return RDLM_OK;
}

void rdlm_ctx_svc_close(rdlm_ctx_h ctx)
{
    (void)ctx;
}

uint64_t rdlm_ctx_svc_home_ops(rdlm_ctx_h ctx)
{
    (void)ctx;
    return 0;
}
