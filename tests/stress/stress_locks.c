/* The locks the stress validator runs; see stress_locks.h. */
#include "stress_locks.h"

#include <string.h>

const stress_lock_t stress_locks[] = {
    {.name = "lock", .ops = &rdlm_bench_lock_rdlm},
    {.name = "lock_fifo", .ops = &rdlm_bench_lock_rdlm_fifo, .fifo = 1},
    {.name = "rwlock_write", .ops = &rdlm_bench_lock_rdlm_rwlock},
    {.name = "rwlock_mixed", .ops = &rdlm_bench_lock_rdlm_rwlock, .read_pct = 75},
    {.name = "sem1", .ops = &rdlm_bench_lock_rdlm_sem},
    {.name = "pmutex", .ops = &rdlm_bench_lock_pmutex},
    {.name = "tas", .ops = &rdlm_bench_lock_tas, .fifo = 1, .planted = 1},
    {.name = "broken", .ops = &stress_planted_broken, .planted = 1},
    {.name = "broken_rwlock", .ops = &stress_planted_broken_rwlock, .read_pct = 75,
     .planted = 1},
    {.name = "broken_sem", .ops = &stress_planted_broken_sem, .planted = 1},
    {.name = "bypass", .ops = &stress_planted_bypass, .planted = 1},
    {.name = NULL},
};

const stress_lock_t *stress_lock_find(const char *name)
{
    for (const stress_lock_t *l = stress_locks; l->name != NULL; l++) {
        if (strcmp(l->name, name) == 0) {
            return l;
        }
    }
    return NULL;
}
