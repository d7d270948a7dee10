/*
 * The planted bugs of the stress validator (stress_locks.h), as lock adapters of
 * bench/locks/lock_ops.h. Each exists only to prove that the validator reports what
 * it claims to check. Their words live in the run's shared mapping, zeroed before
 * fork; a waiter waits without a bound (the validator's deadline ends a hung run).
 */
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#include "stress_locks.h"
#include "stress_util.h"

/* ---- broken: not a lock ---------------------------------------------------------- */

/*
 * A test-then-set "lock" whose test and set are two separate steps with a
 * sched_yield() between them, so two processes that both see the word free both
 * "acquire". Its token is a non-atomic read-increment-write, so tokens can repeat.
 */
typedef struct broken_lock {
    _Atomic uint64_t word;  /* 1 while "held" */
    _Atomic uint64_t token; /* last token handed out */
} broken_lock_t;

static int broken_acquire(void *lock, uint64_t *token_p)
{
    broken_lock_t *b = lock;
    uint64_t t;

    while (atomic_load_explicit(&b->word, memory_order_acquire) != 0) { /* test */
        sched_yield();
    }
    sched_yield(); /* widen the window: another process may test now too */
    atomic_store_explicit(&b->word, 1, memory_order_relaxed); /* set */
    atomic_thread_fence(memory_order_seq_cst);
    t = atomic_load_explicit(&b->token, memory_order_relaxed) + 1;
    atomic_store_explicit(&b->token, t, memory_order_relaxed);
    if (token_p != NULL) {
        *token_p = t;
    }
    return 0;
}

static int broken_release(void *lock)
{
    atomic_store_explicit(&((broken_lock_t *)lock)->word, 0, memory_order_release);
    return 0;
}

const rdlm_bench_lock_ops_t stress_planted_broken = {
    .name = "broken",
    .description = "DELIBERATELY BROKEN non-atomic test-then-set lock",
    .caps = RDLM_BENCH_LOCK_CAP_TOKENS,
    .shared_size = sizeof(broken_lock_t),
    .shared_init = rdlm_bench_lock_nop_init,
    .shared_fini = rdlm_bench_lock_nop_fini,
    .attach = rdlm_bench_lock_attach_shared,
    .acquire = broken_acquire,
    .release = broken_release,
    .try_acquire = rdlm_bench_lock_no_try,
    .error_name = rdlm_bench_lock_errno_name,
    .stats = rdlm_bench_lock_no_stats,
    .detach = rdlm_bench_lock_nop_detach,
};

/* ---- correct but starving lock: unbounded bypass -------------------------------- */

/*
 * A test-and-set lock whose waiters sleep and may take it only once it has been free
 * for BYPASS_QUIET_NS. A running process takes a free lock at once (exchange), and
 * a holder that releases and comes straight back (the validator's loop) always finds
 * it free again, so the lock stays with one process until that process is done, and
 * the others sleep the whole while: some waiter waits for most of the run. Mutually
 * exclusive, tokens taken inside the critical section, every request served in the
 * end: it must pass every safety check and fail only the bounded-wait check.
 *
 *   (word, released_at): (0, t) free since t; (1, t) held
 *   waiter may take it:  word == 0 && now - released_at >= BYPASS_QUIET_NS
 */
#define BYPASS_QUIET_NS (2 * STRESS_NSEC_PER_MSEC)
#define BYPASS_POLL_NS (500 * 1000ull)

typedef struct bypass_lock {
    _Atomic uint64_t word;
    _Atomic uint64_t token;
    _Atomic uint64_t released_at; /* CLOCK_MONOTONIC of the last release */
} bypass_lock_t;

static int bypass_quiet(bypass_lock_t *b)
{
    return atomic_load_explicit(&b->word, memory_order_relaxed) == 0 &&
           stress_now_ns() - atomic_load_explicit(&b->released_at, memory_order_relaxed) >=
               BYPASS_QUIET_NS;
}

static int bypass_acquire(void *lock, uint64_t *token_p)
{
    bypass_lock_t *b = lock;

    /* A running process takes a free lock; a sleeper takes only a quiet one. */
    while (atomic_exchange_explicit(&b->word, 1, memory_order_acquire) != 0) {
        do {
            stress_sleep_ns(BYPASS_POLL_NS);
        } while (!bypass_quiet(b));
    }
    if (token_p != NULL) {
        *token_p = atomic_fetch_add_explicit(&b->token, 1, memory_order_relaxed) + 1;
    }
    return 0;
}

static int bypass_release(void *lock)
{
    bypass_lock_t *b = lock;

    atomic_store_explicit(&b->released_at, stress_now_ns(), memory_order_relaxed);
    atomic_store_explicit(&b->word, 0, memory_order_release);
    return 0;
}

const rdlm_bench_lock_ops_t stress_planted_bypass = {
    .name = "bypass",
    .description = "exclusive lock with UNBOUNDED bypass: sleeping waiters starve",
    .caps = RDLM_BENCH_LOCK_CAP_TOKENS,
    .shared_size = sizeof(bypass_lock_t),
    .shared_init = rdlm_bench_lock_nop_init,
    .shared_fini = rdlm_bench_lock_nop_fini,
    .attach = rdlm_bench_lock_attach_shared,
    .acquire = bypass_acquire,
    .release = bypass_release,
    .try_acquire = rdlm_bench_lock_no_try,
    .error_name = rdlm_bench_lock_errno_name,
    .stats = rdlm_bench_lock_no_stats,
    .detach = rdlm_bench_lock_nop_detach,
};

/* ---- deliberately broken rwlock and semaphore protocols -------------------------- */

/*
 * The rwlock's reader fast path with its one rule broken: the reader tests the
 * writer bit, then adds itself to the count, instead of judging the fetch-add's own
 * result. A writer that sets the bit and sees the count 0 between the two steps goes
 * in beside the reader. Writers: a test-and-set on `gate`, then the bit, then wait for
 * the count to drain (as core/local/rwlock.c does).
 */
typedef struct broken_rw {
    _Atomic uint64_t gate;
    _Atomic uint64_t token;
    _Atomic uint32_t word; /* writer bit 30 | readers */
} broken_rw_t;

#define BROKEN_RW_WRITER (1u << 30)

static int broken_rw_read_acquire(void *lock)
{
    broken_rw_t *b = lock;

    while (atomic_load(&b->word) & BROKEN_RW_WRITER) { /* test */
        sched_yield();
    }
    sched_yield();                 /* widen the window */
    atomic_fetch_add(&b->word, 1); /* BUG: the result is not checked */
    return 0;
}

static int broken_rw_read_release(void *lock)
{
    atomic_fetch_sub(&((broken_rw_t *)lock)->word, 1);
    return 0;
}

static int broken_rw_write_acquire(void *lock, uint64_t *token_p)
{
    broken_rw_t *b = lock;

    while (atomic_exchange(&b->gate, 1) != 0) {
        sched_yield();
    }
    atomic_fetch_or(&b->word, BROKEN_RW_WRITER);
    while ((atomic_load(&b->word) & 0xffffu) != 0) {
        sched_yield();
    }
    if (token_p != NULL) {
        *token_p = atomic_fetch_add(&b->token, 1) + 1;
    }
    return 0;
}

static int broken_rw_write_release(void *lock)
{
    broken_rw_t *b = lock;

    atomic_fetch_and(&b->word, ~BROKEN_RW_WRITER);
    atomic_store(&b->gate, 0);
    return 0;
}

const rdlm_bench_lock_ops_t stress_planted_broken_rwlock = {
    .name = "broken_rwlock",
    .description = "DELIBERATELY BROKEN rwlock reader fast path (tests, then adds)",
    .caps = RDLM_BENCH_LOCK_CAP_TOKENS | RDLM_BENCH_LOCK_CAP_SHARED,
    .shared_size = sizeof(broken_rw_t),
    .shared_init = rdlm_bench_lock_nop_init,
    .shared_fini = rdlm_bench_lock_nop_fini,
    .attach = rdlm_bench_lock_attach_shared,
    .acquire = broken_rw_write_acquire,
    .release = broken_rw_write_release,
    .read_acquire = broken_rw_read_acquire,
    .read_release = broken_rw_read_release,
    .try_acquire = rdlm_bench_lock_no_try,
    .error_name = rdlm_bench_lock_errno_name,
    .stats = rdlm_bench_lock_no_stats,
    .detach = rdlm_bench_lock_nop_detach,
};

/*
 * The semaphore's fast path with its one rule broken: it checks that a permit is free,
 * then takes it with a fetch-add, instead of one CAS from the value it checked. Two
 * takers that both saw the last permit free are both inside.
 */
typedef struct broken_sem {
    _Atomic uint64_t taken;
} broken_sem_t;

static int broken_sem_acquire(void *lock, uint64_t *token_p)
{
    broken_sem_t *b = lock;

    (void)token_p;
    while (atomic_load(&b->taken) >= 1) { /* 1 permit */
        sched_yield();
    }
    sched_yield();                  /* widen the window */
    atomic_fetch_add(&b->taken, 1); /* BUG: not a CAS from the value checked */
    return 0;
}

static int broken_sem_release(void *lock)
{
    atomic_fetch_sub(&((broken_sem_t *)lock)->taken, 1);
    return 0;
}

const rdlm_bench_lock_ops_t stress_planted_broken_sem = {
    .name = "broken_sem",
    .description = "DELIBERATELY BROKEN semaphore fast path (checks, then adds)",
    .caps = 0,
    .shared_size = sizeof(broken_sem_t),
    .shared_init = rdlm_bench_lock_nop_init,
    .shared_fini = rdlm_bench_lock_nop_fini,
    .attach = rdlm_bench_lock_attach_shared,
    .acquire = broken_sem_acquire,
    .release = broken_sem_release,
    .try_acquire = rdlm_bench_lock_no_try,
    .error_name = rdlm_bench_lock_errno_name,
    .stats = rdlm_bench_lock_no_stats,
    .detach = rdlm_bench_lock_nop_detach,
};
