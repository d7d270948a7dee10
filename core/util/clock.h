/*
 * Monotonic clock with an injection point for tests: production code calls
 * rdlm_clock_now_ns(); a test may install its own source with rdlm_clock_set_source().
 */
#ifndef RDLM_CLOCK_H
#define RDLM_CLOCK_H

#include <stdint.h>

typedef uint64_t (*rdlm_clock_func_t)(void);

/** Nanoseconds from CLOCK_MONOTONIC (or the injected source). Thread-safe. */
uint64_t rdlm_clock_now_ns(void);

/** Replace the time source; NULL restores CLOCK_MONOTONIC. Not thread-safe: call
 *  before other threads use the library. */
void rdlm_clock_set_source(rdlm_clock_func_t source);

/** Absolute deadline for a relative timeout; UINT64_MAX stays "never". */
uint64_t rdlm_clock_deadline(uint64_t timeout_ns);

#endif
