/*
 * Adapters from the stress validator's ops table to each lock kind; see
 * stress_adapter.h. Each adapter is a handful of lines: anything that needs checking
 * belongs in the validator, not here.
 */
#include "stress_adapter.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "stress_util.h"

/* ---- rdlm exclusive lock -------------------------------------------------------- */

static rdlm_status_t lock_open(rdlm_ctx_h ctx, const char *name, void *scratch,
                               void **lock_p)
{
    (void)scratch;
    return rdlm_lock_open(ctx, name, (rdlm_lock_h *)lock_p);
}

static rdlm_status_t lock_acquire(void *lock, stress_mode_t mode, uint64_t timeout_ns,
                                  uint64_t *token_p)
{
    (void)mode;
    return rdlm_lock_acquire(lock, timeout_ns, token_p);
}

static rdlm_status_t lock_release(void *lock, stress_mode_t mode)
{
    (void)mode;
    return rdlm_lock_release(lock);
}

static rdlm_status_t lock_waiters(void *lock, uint32_t *waiters_p)
{
    rdlm_lock_info_t info;
    rdlm_status_t st = rdlm_lock_query(lock, &info);

    *waiters_p = st == RDLM_OK ? info.waiters : 0;
    return st;
}

static void lock_close(void *lock)
{
    rdlm_lock_close(lock);
}

static const stress_adapter_ops_t lock_ops = {
    .name = "lock",
    .description = "rdlm exclusive lock, default order (bounded bypass)",
    .caps = STRESS_CAP_TOKENS,
    .read_pct = 0,
    .open = lock_open,
    .acquire = lock_acquire,
    .release = lock_release,
    .close = lock_close,
};

static rdlm_status_t lock_fifo_open(rdlm_ctx_h ctx, const char *name, void *scratch,
                                    void **lock_p)
{
    rdlm_lock_params_t params = {.field_mask = RDLM_LOCK_FIELD_ORDER,
                                 .order = RDLM_LOCK_ORDER_FIFO};

    (void)scratch;
    return rdlm_lock_open_params(ctx, name, &params, (rdlm_lock_h *)lock_p);
}

static const stress_adapter_ops_t lock_fifo_ops = {
    .name = "lock_fifo",
    .description = "rdlm exclusive lock, FIFO order",
    .caps = STRESS_CAP_TOKENS | STRESS_CAP_FIFO,
    .read_pct = 0,
    .open = lock_fifo_open,
    .acquire = lock_acquire,
    .release = lock_release,
    .waiters = lock_waiters,
    .close = lock_close,
};

/* ---- rdlm reader-writer lock ---------------------------------------------------- */

static rdlm_status_t rwlock_open(rdlm_ctx_h ctx, const char *name, void *scratch,
                                 void **lock_p)
{
    (void)scratch;
    return rdlm_rwlock_open(ctx, name, (rdlm_rwlock_h *)lock_p);
}

static rdlm_status_t rwlock_acquire(void *rw, stress_mode_t mode, uint64_t timeout_ns,
                                    uint64_t *token_p)
{
    if (mode == STRESS_SHARED) {
        return rdlm_rwlock_read_acquire(rw, timeout_ns);
    }
    return rdlm_rwlock_write_acquire(rw, timeout_ns, token_p);
}

static rdlm_status_t rwlock_release(void *rw, stress_mode_t mode)
{
    if (mode == STRESS_SHARED) {
        return rdlm_rwlock_read_release(rw);
    }
    return rdlm_rwlock_write_release(rw);
}

static void rwlock_close(void *rw)
{
    rdlm_rwlock_close(rw);
}

static const stress_adapter_ops_t rwlock_write_ops = {
    .name = "rwlock_write",
    .description = "rdlm reader-writer lock, write mode only",
    .caps = STRESS_CAP_TOKENS,
    .read_pct = 0,
    .open = rwlock_open,
    .acquire = rwlock_acquire,
    .release = rwlock_release,
    .close = rwlock_close,
};

static const stress_adapter_ops_t rwlock_mixed_ops = {
    .name = "rwlock_mixed",
    .description = "rdlm reader-writer lock, 75% readers / 25% writers",
    .caps = STRESS_CAP_TOKENS | STRESS_CAP_SHARED,
    .read_pct = 75,
    .open = rwlock_open,
    .acquire = rwlock_acquire,
    .release = rwlock_release,
    .close = rwlock_close,
};

/* ---- deliberately broken lock --------------------------------------------------- */

/*
 * A test-then-set "lock" whose test and set are two separate steps with a
 * sched_yield() between them, so two processes that both see the word free both
 * "acquire". Its token is a non-atomic read-increment-write, so tokens can repeat.
 * Exists only to prove that the validator reports what it claims to check.
 */
typedef struct broken_lock {
    _Atomic uint64_t word;  /* 1 while "held" */
    _Atomic uint64_t token; /* last token handed out */
} broken_lock_t;

_Static_assert(sizeof(broken_lock_t) <= STRESS_ADAPTER_SCRATCH, "scratch too small");

static rdlm_status_t broken_open(rdlm_ctx_h ctx, const char *name, void *scratch,
                                 void **lock_p)
{
    (void)ctx;
    (void)name;
    *lock_p = scratch;
    return RDLM_OK;
}

static rdlm_status_t broken_acquire(void *lock, stress_mode_t mode, uint64_t timeout_ns,
                                    uint64_t *token_p)
{
    broken_lock_t *b = lock;
    uint64_t deadline = stress_now_ns() + timeout_ns;
    uint64_t t;

    (void)mode;
    while (atomic_load_explicit(&b->word, memory_order_acquire) != 0) { /* test */
        if (stress_now_ns() > deadline) {
            return RDLM_ERR_TIMEOUT;
        }
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
    return RDLM_OK;
}

static rdlm_status_t broken_release(void *lock, stress_mode_t mode)
{
    broken_lock_t *b = lock;

    (void)mode;
    atomic_store_explicit(&b->word, 0, memory_order_release);
    return RDLM_OK;
}

static void broken_close(void *lock)
{
    (void)lock;
}

static const stress_adapter_ops_t broken_ops = {
    .name = "broken",
    .description = "DELIBERATELY BROKEN non-atomic test-then-set lock",
    .caps = STRESS_CAP_TOKENS | STRESS_CAP_BROKEN,
    .read_pct = 0,
    .open = broken_open,
    .acquire = broken_acquire,
    .release = broken_release,
    .close = broken_close,
};

/* ---- correct but unfair lock ---------------------------------------------------- */

/*
 * An atomic test-and-set spinlock (exchange, sched_yield() while held): mutually
 * exclusive, with tokens taken inside the critical section, but with no order among
 * waiters. It must pass every safety check and fail the FIFO check, which proves
 * that check can fire.
 */
typedef struct tas_lock {
    _Atomic uint64_t word;
    _Atomic uint64_t token;
    _Atomic uint32_t spinners; /* requests started and not yet granted */
} tas_lock_t;

_Static_assert(sizeof(tas_lock_t) <= STRESS_ADAPTER_SCRATCH, "scratch too small");

static rdlm_status_t tas_acquire(void *lock, stress_mode_t mode, uint64_t timeout_ns,
                                 uint64_t *token_p)
{
    tas_lock_t *t = lock;
    uint64_t deadline = stress_now_ns() + timeout_ns;

    (void)mode;
    atomic_fetch_add(&t->spinners, 1);
    while (atomic_exchange_explicit(&t->word, 1, memory_order_acquire) != 0) {
        if (stress_now_ns() > deadline) {
            atomic_fetch_sub(&t->spinners, 1);
            return RDLM_ERR_TIMEOUT;
        }
        sched_yield();
    }
    atomic_fetch_sub(&t->spinners, 1);
    if (token_p != NULL) {
        *token_p = atomic_fetch_add_explicit(&t->token, 1, memory_order_relaxed) + 1;
    }
    return RDLM_OK;
}

static rdlm_status_t tas_release(void *lock, stress_mode_t mode)
{
    tas_lock_t *t = lock;

    (void)mode;
    atomic_store_explicit(&t->word, 0, memory_order_release);
    return RDLM_OK;
}

static rdlm_status_t tas_waiters(void *lock, uint32_t *waiters_p)
{
    tas_lock_t *t = lock;

    *waiters_p = atomic_load(&t->spinners);
    return RDLM_OK;
}

static const stress_adapter_ops_t tas_ops = {
    .name = "tas",
    .description = "test-and-set spinlock: exclusive but NOT FIFO",
    .caps = STRESS_CAP_TOKENS | STRESS_CAP_FIFO | STRESS_CAP_BROKEN,
    .read_pct = 0,
    .open = broken_open,
    .acquire = tas_acquire,
    .release = tas_release,
    .waiters = tas_waiters,
    .close = broken_close,
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

_Static_assert(sizeof(bypass_lock_t) <= STRESS_ADAPTER_SCRATCH, "scratch too small");

static int bypass_quiet(bypass_lock_t *b)
{
    return atomic_load_explicit(&b->word, memory_order_relaxed) == 0 &&
           stress_now_ns() - atomic_load_explicit(&b->released_at, memory_order_relaxed) >=
               BYPASS_QUIET_NS;
}

static rdlm_status_t bypass_acquire(void *lock, stress_mode_t mode, uint64_t timeout_ns,
                                    uint64_t *token_p)
{
    bypass_lock_t *b = lock;
    uint64_t deadline = stress_now_ns() + timeout_ns;

    (void)mode;
    /* A running process takes a free lock; a sleeper takes only a quiet one. */
    while (atomic_exchange_explicit(&b->word, 1, memory_order_acquire) != 0) {
        do {
            if (stress_now_ns() > deadline) {
                return RDLM_ERR_TIMEOUT;
            }
            stress_sleep_ns(BYPASS_POLL_NS);
        } while (!bypass_quiet(b));
    }
    if (token_p != NULL) {
        *token_p = atomic_fetch_add_explicit(&b->token, 1, memory_order_relaxed) + 1;
    }
    return RDLM_OK;
}

static rdlm_status_t bypass_release(void *lock, stress_mode_t mode)
{
    bypass_lock_t *b = lock;

    (void)mode;
    atomic_store_explicit(&b->released_at, stress_now_ns(), memory_order_relaxed);
    atomic_store_explicit(&b->word, 0, memory_order_release);
    return RDLM_OK;
}

static const stress_adapter_ops_t bypass_ops = {
    .name = "bypass",
    .description = "exclusive lock with UNBOUNDED bypass: sleeping waiters starve",
    .caps = STRESS_CAP_TOKENS | STRESS_CAP_BROKEN,
    .read_pct = 0,
    .open = broken_open,
    .acquire = bypass_acquire,
    .release = bypass_release,
    .close = broken_close,
};

/* ---- pthread_mutex baseline ----------------------------------------------------- */

/*
 * The default process-shared pthread_mutex_t in the scratch memory, initialised by
 * the first process to open it (state 0 -> 1 -> 2), the others wait for state 2.
 * A baseline for the bounded-wait check: glibc's mutex lets a running thread take a
 * free mutex ahead of the one it woke, with no bound on how often.
 */
typedef struct pmutex_lock {
    pthread_mutex_t mutex;
    _Atomic uint32_t state; /* 0 untouched, 1 initialising, 2 ready */
    uint64_t token;         /* written only by the holder */
} pmutex_lock_t;

_Static_assert(sizeof(pmutex_lock_t) <= STRESS_ADAPTER_SCRATCH, "scratch too small");

static rdlm_status_t pmutex_open(rdlm_ctx_h ctx, const char *name, void *scratch,
                                 void **lock_p)
{
    pmutex_lock_t *m = scratch;
    uint32_t expected = 0;
    uint64_t deadline = stress_now_ns() + 10 * STRESS_NSEC_PER_SEC;
    pthread_mutexattr_t attr;

    (void)ctx;
    (void)name;
    if (atomic_compare_exchange_strong(&m->state, &expected, 1)) {
        pthread_mutexattr_init(&attr);
        pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
        pthread_mutex_init(&m->mutex, &attr);
        pthread_mutexattr_destroy(&attr);
        atomic_store_explicit(&m->state, 2, memory_order_release);
    }
    while (atomic_load_explicit(&m->state, memory_order_acquire) != 2) {
        if (stress_now_ns() > deadline) {
            return RDLM_ERR_TIMEOUT;
        }
        sched_yield();
    }
    *lock_p = m;
    return RDLM_OK;
}

static rdlm_status_t pmutex_acquire(void *lock, stress_mode_t mode, uint64_t timeout_ns,
                                    uint64_t *token_p)
{
    pmutex_lock_t *m = lock;
    uint64_t abs_ns;
    struct timespec ts;
    int rc;

    (void)mode;
    clock_gettime(CLOCK_REALTIME, &ts);
    abs_ns = (uint64_t)ts.tv_sec * STRESS_NSEC_PER_SEC + (uint64_t)ts.tv_nsec + timeout_ns;
    ts.tv_sec = (time_t)(abs_ns / STRESS_NSEC_PER_SEC);
    ts.tv_nsec = (long)(abs_ns % STRESS_NSEC_PER_SEC);
    rc = pthread_mutex_timedlock(&m->mutex, &ts);
    if (rc != 0) {
        return rc == ETIMEDOUT ? RDLM_ERR_TIMEOUT : RDLM_ERR_IO;
    }
    if (token_p != NULL) {
        *token_p = ++m->token;
    }
    return RDLM_OK;
}

static rdlm_status_t pmutex_release(void *lock, stress_mode_t mode)
{
    pmutex_lock_t *m = lock;

    (void)mode;
    return pthread_mutex_unlock(&m->mutex) == 0 ? RDLM_OK : RDLM_ERR_IO;
}

static const stress_adapter_ops_t pmutex_ops = {
    .name = "pmutex",
    .description = "process-shared pthread_mutex_t (baseline)",
    .caps = STRESS_CAP_TOKENS,
    .read_pct = 0,
    .open = pmutex_open,
    .acquire = pmutex_acquire,
    .release = pmutex_release,
    .close = broken_close,
};

/* ---- rdlm semaphore ------------------------------------------------------------- */

/* One permit: a mutex built from the semaphore's fast path, bypass and reservation. */
static rdlm_status_t sem_open(rdlm_ctx_h ctx, const char *name, void *scratch,
                              void **lock_p)
{
    (void)scratch;
    return rdlm_sem_open(ctx, name, 1, (rdlm_sem_h *)lock_p);
}

static rdlm_status_t sem_acquire(void *sem, stress_mode_t mode, uint64_t timeout_ns,
                                 uint64_t *token_p)
{
    (void)mode;
    (void)token_p;
    return rdlm_sem_acquire(sem, 1, timeout_ns);
}

static rdlm_status_t sem_release(void *sem, stress_mode_t mode)
{
    (void)mode;
    return rdlm_sem_release(sem, 1);
}

static void sem_close(void *sem)
{
    rdlm_sem_close(sem);
}

static const stress_adapter_ops_t sem1_ops = {
    .name = "sem1",
    .description = "rdlm semaphore with 1 permit",
    .caps = 0,
    .read_pct = 0,
    .open = sem_open,
    .acquire = sem_acquire,
    .release = sem_release,
    .close = sem_close,
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

_Static_assert(sizeof(broken_rw_t) <= STRESS_ADAPTER_SCRATCH, "scratch too small");

#define BROKEN_RW_WRITER (1u << 30)

static rdlm_status_t broken_rw_acquire(void *lock, stress_mode_t mode, uint64_t timeout_ns,
                                       uint64_t *token_p)
{
    broken_rw_t *b = lock;
    uint64_t deadline = stress_now_ns() + timeout_ns;

    if (mode == STRESS_SHARED) {
        while (atomic_load(&b->word) & BROKEN_RW_WRITER) { /* test */
            if (stress_now_ns() > deadline) {
                return RDLM_ERR_TIMEOUT;
            }
            sched_yield();
        }
        sched_yield();                 /* widen the window */
        atomic_fetch_add(&b->word, 1); /* BUG: the result is not checked */
        return RDLM_OK;
    }
    while (atomic_exchange(&b->gate, 1) != 0) {
        if (stress_now_ns() > deadline) {
            return RDLM_ERR_TIMEOUT;
        }
        sched_yield();
    }
    atomic_fetch_or(&b->word, BROKEN_RW_WRITER);
    while ((atomic_load(&b->word) & 0xffffu) != 0) {
        sched_yield();
    }
    if (token_p != NULL) {
        *token_p = atomic_fetch_add(&b->token, 1) + 1;
    }
    return RDLM_OK;
}

static rdlm_status_t broken_rw_release(void *lock, stress_mode_t mode)
{
    broken_rw_t *b = lock;

    if (mode == STRESS_SHARED) {
        atomic_fetch_sub(&b->word, 1);
        return RDLM_OK;
    }
    atomic_fetch_and(&b->word, ~BROKEN_RW_WRITER);
    atomic_store(&b->gate, 0);
    return RDLM_OK;
}

static const stress_adapter_ops_t broken_rwlock_ops = {
    .name = "broken_rwlock",
    .description = "DELIBERATELY BROKEN rwlock reader fast path (tests, then adds)",
    .caps = STRESS_CAP_TOKENS | STRESS_CAP_SHARED | STRESS_CAP_BROKEN,
    .read_pct = 75,
    .open = broken_open,
    .acquire = broken_rw_acquire,
    .release = broken_rw_release,
    .close = broken_close,
};

/*
 * The semaphore's fast path with its one rule broken: it checks that a permit is free,
 * then takes it with a fetch-add, instead of one CAS from the value it checked. Two
 * takers that both saw the last permit free are both inside.
 */
typedef struct broken_sem {
    _Atomic uint64_t taken;
} broken_sem_t;

static rdlm_status_t broken_sem_acquire(void *lock, stress_mode_t mode, uint64_t timeout_ns,
                                        uint64_t *token_p)
{
    broken_sem_t *b = lock;
    uint64_t deadline = stress_now_ns() + timeout_ns;

    (void)mode;
    (void)token_p;
    while (atomic_load(&b->taken) >= 1) { /* 1 permit */
        if (stress_now_ns() > deadline) {
            return RDLM_ERR_TIMEOUT;
        }
        sched_yield();
    }
    sched_yield();                  /* widen the window */
    atomic_fetch_add(&b->taken, 1); /* BUG: not a CAS from the value checked */
    return RDLM_OK;
}

static rdlm_status_t broken_sem_release(void *lock, stress_mode_t mode)
{
    broken_sem_t *b = lock;

    (void)mode;
    atomic_fetch_sub(&b->taken, 1);
    return RDLM_OK;
}

static const stress_adapter_ops_t broken_sem_ops = {
    .name = "broken_sem",
    .description = "DELIBERATELY BROKEN semaphore fast path (checks, then adds)",
    .caps = STRESS_CAP_BROKEN,
    .read_pct = 0,
    .open = broken_open,
    .acquire = broken_sem_acquire,
    .release = broken_sem_release,
    .close = broken_close,
};

/* ---- registry ------------------------------------------------------------------- */

const stress_adapter_ops_t *const stress_adapters[] = {
    &lock_ops,   &lock_fifo_ops, &rwlock_write_ops,  &rwlock_mixed_ops, &sem1_ops,
    &pmutex_ops, &broken_ops,    &tas_ops,           &bypass_ops,       &broken_rwlock_ops,
    &broken_sem_ops, NULL,
};

const stress_adapter_ops_t *stress_adapter_find(const char *name)
{
    for (int i = 0; stress_adapters[i] != NULL; i++) {
        if (strcmp(stress_adapters[i]->name, name) == 0) {
            return stress_adapters[i];
        }
    }
    return NULL;
}
