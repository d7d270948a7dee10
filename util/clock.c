/* Monotonic clock with an injectable source (see clock.h). */
#include "clock.h"

#include <time.h>

static uint64_t rdlm_clock_monotonic(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static rdlm_clock_func_t rdlm_clock_source = rdlm_clock_monotonic;

uint64_t rdlm_clock_now_ns(void)
{
    return rdlm_clock_source();
}

void rdlm_clock_set_source(rdlm_clock_func_t source)
{
    rdlm_clock_source = source ? source : rdlm_clock_monotonic;
}

uint64_t rdlm_clock_deadline(uint64_t timeout_ns)
{
    uint64_t now = rdlm_clock_now_ns();
    return (timeout_ns > UINT64_MAX - now) ? UINT64_MAX : now + timeout_ns;
}

#define RDLM_CLOCK_EPOCH_BASE 1704067200 /* 2024-01-01T00:00:00Z */

uint32_t rdlm_clock_epoch(time_t now)
{
    uint64_t minutes =
        now > RDLM_CLOCK_EPOCH_BASE ? ((uint64_t)now - RDLM_CLOCK_EPOCH_BASE) / 60 : 0;

    return (uint32_t)(minutes % RDLM_CLOCK_EPOCH_MAX) + 1;
}
