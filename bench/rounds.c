/* Alternating rounds; see rounds.h. */
#include "rounds.h"

int rdlm_bench_alternate(uint32_t nimpl, uint32_t rounds, rdlm_bench_round_func_t fn,
                         void *ctx)
{
    uint32_t r;
    uint32_t k;

    for (r = 0; r < rounds; r++) {
        for (k = 0; k < nimpl; k++) {
            uint32_t impl = r % 2 == 0 ? k : nimpl - 1 - k;

            if (fn(impl, r, ctx) != 0) {
                return -1;
            }
        }
    }
    return 0;
}
