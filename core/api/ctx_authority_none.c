/* RDLM_JOB_AUTHORITY in a library built without the lease authority
 * (RDLM_WITH_AUTHORITY=OFF): refused, on every process alike. */
#include "api.h"
#include "log.h"

rdlm_status_t rdlm_ctx_authority_start(rdlm_ctx_h ctx, const char *job)
{
    (void)ctx;
    (void)job;
    rdlm_error("RDLM_JOB_AUTHORITY=1: this librdlm was built without the lease "
               "authority (RDLM_WITH_AUTHORITY=OFF)");
    return RDLM_ERR_UNSUPPORTED;
}

void rdlm_ctx_authority_stop(rdlm_ctx_h ctx)
{
    (void)ctx;
}
