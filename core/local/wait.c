/* Spin, yield, then futex sleep (see wait.h). */
#include "wait.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"

void rdlm_wait_init(rdlm_wait_t *w, const rdlm_wait_policy_t *policy,
                    rdlm_wait_stats_t *stats, uint64_t timeout_ns)
{
    rdlm_wait_init_until(w, policy, stats, rdlm_clock_deadline(timeout_ns));
}

void rdlm_wait_init_until(rdlm_wait_t *w, const rdlm_wait_policy_t *policy,
                          rdlm_wait_stats_t *stats, uint64_t deadline)
{
    w->policy = policy;
    w->stats = stats;
    w->deadline = deadline;
    w->spins = 0;
    w->yields = 0;
}

/* FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC time. */
void rdlm_wait_futex_sleep(rdlm_atomic_u32_t *word, uint32_t seen, uint32_t bitset,
                           uint64_t until_ns)
{
    struct timespec ts = {.tv_sec = (time_t)(until_ns / 1000000000ull),
                          .tv_nsec = (long)(until_ns % 1000000000ull)};

    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_BITSET, seen, &ts, NULL, bitset);
}

rdlm_wait_result_t rdlm_wait_step(rdlm_wait_t *w, rdlm_atomic_u32_t *word, uint32_t seen,
                                  uint32_t bitset, rdlm_atomic_u32_t *parked)
{
    const rdlm_wait_policy_t *p = w->policy;
    uint64_t now, until;

    if (w->spins < p->spin) {
        w->spins++;
        rdlm_cpu_relax();
        return (w->spins == p->spin) ? RDLM_WAIT_CHECK : RDLM_WAIT_AGAIN;
    }
    now = rdlm_clock_now_ns();
    if (now >= w->deadline) {
        return RDLM_WAIT_TIMEDOUT;
    }
    if (w->yields < p->yield) {
        w->yields++;
        sched_yield();
        return RDLM_WAIT_AGAIN;
    }
    until = (w->deadline - now > p->park_slice_ns) ? now + p->park_slice_ns : w->deadline;
    /* Dekker with rdlm_wait_wake: parked++ then the kernel's atomic compare of *word
     * with seen, against "change word, then read parked" (both seq_cst): either the
     * waker sees parked != 0 and wakes, or the kernel sees the new value and returns.
     * (No user-space re-read: word may be half of a 64-bit atomic.) */
    rdlm_fetch_add(parked, 1, RDLM_SEQ_CST);
    rdlm_fetch_add(&w->stats->parks, 1, RDLM_RELAXED);
    rdlm_wait_futex_sleep(word, seen, bitset, until);
    rdlm_fetch_sub(parked, 1, RDLM_SEQ_CST);
    return RDLM_WAIT_CHECK;
}

void rdlm_wait_stop_spinning(rdlm_wait_t *w)
{
    if (w->spins < w->policy->spin) {
        w->spins = w->policy->spin;
    }
}

static int rdlm_futex_wake(rdlm_atomic_u32_t *word, int nr, uint32_t bitset,
                           rdlm_wait_stats_t *stats)
{
    long woken;

    rdlm_fetch_add(&stats->wakes, 1, RDLM_RELAXED);
    woken = syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_BITSET, nr, NULL, NULL, bitset);
    return woken > 0 ? (int)woken : 0;
}

void rdlm_wait_wake_sleepers(rdlm_atomic_u32_t *word, uint32_t bitset,
                             rdlm_wait_stats_t *stats)
{
    rdlm_futex_wake(word, INT_MAX, bitset, stats);
}

int rdlm_wait_wake_one_sleeper(rdlm_atomic_u32_t *word, uint32_t bitset,
                               rdlm_wait_stats_t *stats)
{
    return rdlm_futex_wake(word, 1, bitset, stats);
}
