/* Rank, size and rendezvous from PMIx (launch.h), in a build without libpmix: never. */
#include "launch.h"

int rdlm_launch_pmix_peers(uint32_t *rank_p, uint32_t *size_p)
{
    (void)rank_p;
    (void)size_p;
    return 0;
}

rdlm_status_t rdlm_launch_pmix_exchange(const char *key, const char *value,
                                        uint32_t timeout_ms, char *value_p, size_t cap)
{
    (void)key;
    (void)value;
    (void)timeout_ms;
    (void)value_p;
    (void)cap;
    return RDLM_ERR_UNSUPPORTED;
}

int rdlm_launch_pmix_built(void)
{
    return 0;
}
