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
