/*
 * The one clock and the one spin pause of rdlm-bench (and of the MPI baseline, so
 * both sides of a comparison read time the same way).
 */
#ifndef RDLM_BENCH_CLOCK_H
#define RDLM_BENCH_CLOCK_H

#include <stdint.h>
#include <time.h>

/** CLOCK_MONOTONIC in nanoseconds; a vDSO call, no system call on this platform. */
static inline uint64_t rdlm_bench_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/** ms milliseconds from now on clock, for the waits that take an absolute time
 *  (clock_nanosleep with TIMER_ABSTIME, pthread_cond_timedwait). */
static inline struct timespec rdlm_bench_deadline_ts(clockid_t clock, uint32_t ms)
{
    struct timespec ts;

    clock_gettime(clock, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

/** The CPU's spin-wait hint, used inside busy-wait loops. */
static inline void rdlm_bench_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
}

#endif
