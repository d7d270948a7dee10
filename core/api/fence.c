/* The resource side of fencing: rdlm_fence_check (see rdlm.h). */
#include <rdlm.h>

#include "log.h"

rdlm_status_t rdlm_fence_check(uint64_t *highest, uint64_t token)
{
    uint64_t seen;

    if (highest == NULL) {
        rdlm_warn("rdlm_fence_check: NULL highest");
        return RDLM_ERR_INVALID_ARG;
    }
    seen = __atomic_load_n(highest, __ATOMIC_ACQUIRE);
    do {
        if (token < seen) {
            rdlm_info("rdlm_fence_check: stale token %#llx rejected (highest %#llx)",
                      (unsigned long long)token, (unsigned long long)seen);
            return RDLM_ERR_STALE_TOKEN;
        }
    } while (token != seen && !__atomic_compare_exchange_n(highest, &seen, token, 0,
                                                           __ATOMIC_ACQ_REL,
                                                           __ATOMIC_ACQUIRE));
    return RDLM_OK;
}
