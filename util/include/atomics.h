/*
 * The one atomics header: C11 <stdatomic.h> with the memory order always spelled
 * out. Shared-memory words are declared with these typedefs; every access names its
 * order. Fences are named by purpose at their call sites.
 */
#ifndef RDLM_ATOMICS_H
#define RDLM_ATOMICS_H

#include <stdatomic.h>
#include <stdint.h>

typedef _Atomic uint32_t rdlm_atomic_u32_t;
typedef _Atomic uint64_t rdlm_atomic_u64_t;
typedef _Atomic int64_t rdlm_atomic_i64_t;

#define RDLM_RELAXED memory_order_relaxed
#define RDLM_ACQUIRE memory_order_acquire
#define RDLM_RELEASE memory_order_release
#define RDLM_ACQ_REL memory_order_acq_rel
#define RDLM_SEQ_CST memory_order_seq_cst

#define rdlm_load(p, mo) atomic_load_explicit((p), (mo))
#define rdlm_store(p, v, mo) atomic_store_explicit((p), (v), (mo))
#define rdlm_fetch_add(p, v, mo) atomic_fetch_add_explicit((p), (v), (mo))
#define rdlm_fetch_sub(p, v, mo) atomic_fetch_sub_explicit((p), (v), (mo))
#define rdlm_fetch_or(p, v, mo) atomic_fetch_or_explicit((p), (v), (mo))
#define rdlm_fetch_and(p, v, mo) atomic_fetch_and_explicit((p), (v), (mo))
#define rdlm_exchange(p, v, mo) atomic_exchange_explicit((p), (v), (mo))
/* Strong CAS; on failure *expected_p receives the current value (relaxed). */
#define rdlm_cas(p, expected_p, desired, mo)                                               \
    atomic_compare_exchange_strong_explicit((p), (expected_p), (desired), (mo),            \
                                            memory_order_relaxed)

/** A CPU hint inside spin loops. */
static inline void rdlm_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

#endif
