/*
 * Monotonic clock with an injection point for tests: production code calls
 * rdlm_clock_now_ns(); a test may install its own source with rdlm_clock_set_source().
 */
#ifndef RDLM_CLOCK_H
#define RDLM_CLOCK_H

#include <stdint.h>
#include <time.h>

#include "shared.h"

/* Largest clock epoch, and largest token epoch of any kind: epoch << 40 | sequence
 * stays below 2^63 (the HELD bit of a global lock word, core/global). */
#define RDLM_CLOCK_EPOCH_MAX ((1u << 23) - 1)

typedef uint64_t (*rdlm_clock_func_t)(void);

/** Nanoseconds from CLOCK_MONOTONIC (or the injected source). Thread-safe. */
RDLM_SHARED uint64_t rdlm_clock_now_ns(void);

/** Replace the time source; NULL restores CLOCK_MONOTONIC. Not thread-safe: call
 *  before other threads use the library. */
void rdlm_clock_set_source(rdlm_clock_func_t source);

/** Absolute deadline for a relative timeout; UINT64_MAX stays "never". */
RDLM_SHARED uint64_t rdlm_clock_deadline(uint64_t timeout_ns);

/** The clock epoch of wall-clock time now: minutes since 2024-01-01 + 1, in
 *  1..RDLM_CLOCK_EPOCH_MAX (it wraps in 2039). Pure. What a token epoch is, is in
 *  core/local/include/epoch.h (hosts) and core/lease (the authority). */
uint32_t rdlm_clock_epoch(time_t now);

#endif
