/* The on-node counter: one 64-bit word (entry counter_value), sequentially consistent. */
#include "local.h"

int64_t rdlm_counter_local_fetch_add(rdlm_local_t *lc, uint32_t idx, int64_t delta)
{
    /* Unsigned arithmetic: wrapping is defined. */
    return (int64_t)rdlm_fetch_add(&lc->seg.entries[idx].counter_value, (uint64_t)delta,
                                   RDLM_SEQ_CST);
}

int64_t rdlm_counter_local_read(const rdlm_local_t *lc, uint32_t idx)
{
    return (int64_t)rdlm_load(&lc->seg.entries[idx].counter_value, RDLM_SEQ_CST);
}
