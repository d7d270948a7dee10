/*
 * rdlm_stress_validator — one multi-process validator for every lock kind.
 *
 * N forked processes each attach to the lock under test (through an adapter of
 * bench/locks/lock_ops.h, see stress_locks.h; rdlm's make a context per process) and
 * take it a bounded number of times. The
 * protected state lives in a MAP_SHARED|MAP_ANONYMOUS mapping made before fork and is
 * deliberately plain, non-atomic memory:
 *
 *   counter      incremented as read, tiny pause, write: a lost update shows as a
 *                final value below the number of exclusive acquires
 *   token log    every exclusive holder appends its fencing token
 *   grant_seq    grant sequence number, read at arrival and taken inside the CS;
 *                grant_owner[seq] records which process got each grant
 *
 * Beside it, atomic detectors (writers inside, readers inside) catch overlapping
 * critical sections directly. After the run the parent checks:
 *
 *   1. counter == number of exclusive acquires (zero lost updates)
 *   2. token log length == number of exclusive acquires and tokens strictly increase
 *      in log order
 *   3. no writer ever saw another writer or a reader inside; no reader ever saw a
 *      writer inside or the counter change under it
 *   4. FIFO (adapters that can count waiters, i.e. the exclusive lock): inside its
 *      critical section each holder asks how many requests are queued behind it (w)
 *      and then stamps a logical clock T. Those w requests took their tickets before
 *      T, so with FIFO the next w grants all go to requests that started (stamped
 *      the same clock just before calling acquire) before T. A request that started
 *      after T and was served among them overtook a queued one. This check is sound
 *      whatever the scheduler does.
 *   5. every process finished every iteration without an error, in time.
 *   6. bounded wait (only with --max-wait-ms N): every acquire's wait, from the call
 *      to holding the lock (CLOCK_MONOTONIC around the adapter's acquire, in every
 *      process), is at most N ms. The p50, p99.9 and maximum wait over all processes
 *      are printed on every run. This is a liveness check, not a speed check: pick N
 *      far above what a fair lock shows on a loaded machine or under a sanitizer, and
 *      far below the run's length, so that a lock that lets a waiter starve while
 *      others run (the planted "bypass" adapter) fails and a fair one never does.
 *
 *   Also reported, for information: bounded bypass. Each process reads the grant
 *   sequence at arrival; while it waits, how often is one other process granted?
 *   With FIFO at most twice (one request queued ahead, one placed between our read
 *   and our ticket) -- but only if nothing delays us between that read and the
 *   ticket, which is taken inside rdlm_lock_acquire and cannot be observed. On a
 *   2-core machine with 8-16 processes a correct FIFO lock shows rare episodes far
 *   above 2 (a process preempted right after its read), so the bound is asserted
 *   only with --strict-bypass.
 *
 * Exit status: 0 all checks passed; 1 a lock property was violated; 2 the run itself
 * failed (rdlm error, crash, timeout). With --expect-failure the meaning of the first
 * two flips: 0 iff the validator reported a safety violation (1-3) and the run
 * completed, so a ctest can assert that the checker fires on the broken lock.
 * Exit status with --expect-fifo-failure: 0 iff every safety check passed and the
 * FIFO check (4) fired (for the unfair "tas" adapter). With --expect-wait-failure:
 * 0 iff the run completed, every safety and FIFO check passed and the bounded-wait
 * check (6) fired (for the starving "bypass" adapter; needs --max-wait-ms).
 *
 * Tunables (argv; the environment overrides, so soak runs reuse ctest's lines; the
 * variables do not start with RDLM_ because rdlm warns about unknown RDLM_* names):
 *   --adapter NAME  --procs N  --iters N  --cs-spin N  --cs-yield-pct N
 *   --think-spin N  --max-bypass N  --strict-bypass  --timeout-sec N
 *   --seed N  --verbose
 *   --cs-hold-us N  hold every critical section at least N us (a clock-timed spin,
 *                   so a run's length in time does not depend on the CPU)
 *   --max-wait-ms N fail if any acquire waited longer than N ms (default: off)
 *   RDLMTEST_STRESS_ITERS=N      iterations per process (absolute)
 *   RDLMTEST_STRESS_SCALE=N      multiply the iteration count by N
 *   RDLMTEST_STRESS_TIMEOUT_SEC  whole-run deadline (default 100 s)
 */
#include <inttypes.h>
#include <sched.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rdlm.h>

#include "stress_locks.h"
#include "stress_util.h"

#define STRESS_MAX_PROCS 64
#define STRESS_LOCK_NAME "stress.lock"
#define STRESS_NO_GRANT UINT64_MAX
#define STRESS_LOCK_WORDS 256 /* at least every adapter's shared_size */

enum stress_exit {
    STRESS_EXIT_PASS = 0,
    STRESS_EXIT_VIOLATION = 1,
    STRESS_EXIT_RUN_FAILED = 2,
};

/** What the run is expected to show. */
enum stress_expect {
    STRESS_EXPECT_PASS = 0,
    STRESS_EXPECT_SAFETY_FAILURE, /* --expect-failure */
    STRESS_EXPECT_FIFO_FAILURE,   /* --expect-fifo-failure */
    STRESS_EXPECT_WAIT_FAILURE,   /* --expect-wait-failure */
};

/** Where a child process failed. */
enum stress_failed_op {
    STRESS_OP_NONE = 0,
    STRESS_OP_ATTACH,
    STRESS_OP_START,
    STRESS_OP_ACQUIRE,
    STRESS_OP_RELEASE,
    STRESS_OP_WAITERS,
};

static const char *const stress_op_names[] = {
    "none", "attach", "start barrier", "acquire", "release", "waiters",
};

typedef struct stress_config {
    const stress_lock_t *lock;
    const rdlm_bench_lock_ops_t *ops; /* lock->ops */
    unsigned procs;
    uint64_t iters;
    unsigned cs_spin;
    unsigned cs_yield_pct;
    unsigned think_spin;
    uint64_t cs_hold_ns;
    uint64_t max_wait_ns; /* 0: the bounded-wait check is off */
    unsigned max_bypass;
    int strict_bypass;
    uint64_t timeout_ns;
    uint64_t seed;
    enum stress_expect expect;
    int verbose;
    char job[40];
} stress_config_t;

/** One acquire as the acquiring process saw it. */
typedef struct stress_episode {
    uint64_t arrival; /* grant_seq read just before calling acquire */
    uint64_t grant;   /* grant_seq taken inside the CS; STRESS_NO_GRANT if shared */
    uint64_t token;
    uint64_t wait_ns; /* from calling acquire to holding, CLOCK_MONOTONIC */
} stress_episode_t;

/** One exclusive grant, indexed by grant sequence number; written by its holder. */
typedef struct stress_grant {
    int32_t owner;    /* process index */
    uint32_t waiters; /* requests queued behind the holder, seen inside the CS */
    uint64_t start;   /* logical clock when the request called acquire */
    uint64_t seen_at; /* logical clock right after the holder counted waiters */
} stress_grant_t;

/** What one child reports. */
typedef struct stress_proc_result {
    int32_t status; /* first failing adapter code (ops->error_name) */
    int32_t failed_op;
    uint64_t failed_iter;
    uint64_t done;
    uint64_t writes;
    uint64_t reads;
    rdlm_stats_t stats;
} stress_proc_result_t;

/** The shared mapping. Fixed part, then results[], episodes[], log[], grants[]. */
typedef struct stress_shared {
    /* start line */
    _Atomic uint32_t ready;
    _Atomic uint32_t go;
    _Atomic uint32_t running;
    /* logical clock for the FIFO check: request starts and waiter counts */
    _Atomic uint64_t clock;
    /* detectors: atomic, so that they cannot lose updates themselves */
    _Atomic uint32_t writers_inside;
    _Atomic uint32_t readers_inside;
    _Atomic uint32_t max_readers_inside;
    _Atomic uint64_t excl_violations;   /* writer saw a writer or reader inside */
    _Atomic uint64_t shared_violations; /* reader saw a writer inside */
    _Atomic uint32_t first_violation_claimed;
    char first_violation[192];
    /* the protected state: plain memory, written only by the lock holder */
    alignas(64) uint64_t counter;
    uint64_t log_len;
    /* read at arrival (outside the lock), so atomic; written only inside the CS */
    _Atomic uint64_t grant_seq;
    /* the lock's own words (ops->shared_size), set up before fork */
    alignas(64) unsigned char lock_words[STRESS_LOCK_WORDS];
} stress_shared_t;

typedef struct stress_run {
    stress_config_t cfg;
    stress_shared_t *sh;
    size_t map_size;
    stress_proc_result_t *results; /* [procs] */
    stress_episode_t *episodes;    /* [procs * iters] */
    uint64_t *log;                 /* [procs * iters] */
    stress_grant_t *grants;        /* [procs * iters] */
    uint64_t slots;                /* procs * iters */
} stress_run_t;

typedef struct stress_child_arg {
    stress_run_t *run;
    unsigned index;
} stress_child_arg_t;

/* ---- the critical sections ------------------------------------------------------ */

static uint64_t stress_rand(uint64_t *state)
{
    /* xorshift64* */
    uint64_t x = *state;

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 2685821657736338717ull;
}

/** The "tiny pause" inside a critical section, held at least --cs-hold-us; sometimes
 *  a yield, so the holder loses the CPU and a queue builds up behind it. */
static void stress_cs_pause(const stress_config_t *cfg, uint64_t *rng)
{
    stress_cpu_pause(cfg->cs_spin);
    if (cfg->cs_hold_ns > 0) {
        uint64_t until = stress_now_ns() + cfg->cs_hold_ns;

        while (stress_now_ns() < until) {
            stress_cpu_pause(16);
        }
    }
    if (cfg->cs_yield_pct > 0 && stress_rand(rng) % 100 < cfg->cs_yield_pct) {
        sched_yield();
    }
}

static void stress_note_violation(stress_shared_t *sh, unsigned proc, uint64_t iter,
                                  const char *what)
{
    uint32_t expected = 0;

    if (atomic_compare_exchange_strong(&sh->first_violation_claimed, &expected, 1)) {
        snprintf(sh->first_violation, sizeof(sh->first_violation),
                 "process %u, iteration %" PRIu64 ": %s", proc, iter, what);
    }
}

/** Exclusive CS: the detector checks, then the plain protected updates. Returns
 *  the waiters op's code (0 when not asked). */
static int stress_writer_cs(stress_run_t *run, void *lock, unsigned proc, uint64_t iter,
                            stress_episode_t *ep, uint64_t start, uint64_t *rng)
{
    stress_shared_t *sh = run->sh;
    const rdlm_bench_lock_ops_t *ops = run->cfg.ops;
    int st = 0;
    uint64_t value;
    uint64_t len;
    uint64_t seq;

    if (atomic_fetch_add(&sh->writers_inside, 1) != 0) {
        atomic_fetch_add(&sh->excl_violations, 1);
        stress_note_violation(sh, proc, iter, "writer entered while another writer inside");
    }
    if (atomic_load(&sh->readers_inside) != 0) {
        atomic_fetch_add(&sh->excl_violations, 1);
        stress_note_violation(sh, proc, iter, "writer entered while readers inside");
    }

    /* Grant sequence: only the holder writes it. */
    seq = atomic_load_explicit(&sh->grant_seq, memory_order_relaxed);
    atomic_store_explicit(&sh->grant_seq, seq + 1, memory_order_relaxed);
    ep->grant = seq;
    if (seq < run->slots) {
        stress_grant_t *g = &run->grants[seq];

        g->owner = (int32_t)proc;
        g->start = start;
        if (run->cfg.lock->fifo) {
            st = ops->waiters(lock, &g->waiters);
            g->seen_at = atomic_fetch_add(&sh->clock, 1);
        }
    }

    /* Lost-update counter: read, pause, write. */
    value = sh->counter;
    stress_cs_pause(&run->cfg, rng);
    sh->counter = value + 1;

    /* Token log. */
    len = sh->log_len;
    if (len < run->slots) {
        run->log[len] = ep->token;
    }
    __asm__ __volatile__("" ::: "memory");
    sh->log_len = len + 1;

    if (atomic_load(&sh->readers_inside) != 0) {
        atomic_fetch_add(&sh->excl_violations, 1);
        stress_note_violation(sh, proc, iter, "reader entered while writer inside");
    }
    if (atomic_fetch_sub(&sh->writers_inside, 1) != 1) {
        atomic_fetch_add(&sh->excl_violations, 1);
        stress_note_violation(sh, proc, iter, "another writer inside at writer exit");
    }
    return st;
}

/** Shared CS: no writer may be inside, and the counter must not move under us. */
static void stress_reader_cs(stress_run_t *run, unsigned proc, uint64_t iter,
                             uint64_t *rng)
{
    stress_shared_t *sh = run->sh;
    uint32_t inside = atomic_fetch_add(&sh->readers_inside, 1) + 1;
    uint32_t max = atomic_load(&sh->max_readers_inside);
    uint64_t before;
    uint64_t after;

    while (inside > max &&
           !atomic_compare_exchange_weak(&sh->max_readers_inside, &max, inside)) {
    }
    if (atomic_load(&sh->writers_inside) != 0) {
        atomic_fetch_add(&sh->shared_violations, 1);
        stress_note_violation(sh, proc, iter, "reader entered while writer inside");
    }
    before = sh->counter;
    stress_cs_pause(&run->cfg, rng);
    __asm__ __volatile__("" ::: "memory");
    after = sh->counter;
    if (before != after) {
        atomic_fetch_add(&sh->shared_violations, 1);
        stress_note_violation(sh, proc, iter, "counter changed under a reader");
    }
    if (atomic_load(&sh->writers_inside) != 0) {
        atomic_fetch_add(&sh->shared_violations, 1);
        stress_note_violation(sh, proc, iter, "writer inside while reader inside");
    }
    atomic_fetch_sub(&sh->readers_inside, 1);
}

/* ---- child ---------------------------------------------------------------------- */

static int stress_child_fail(stress_proc_result_t *res, enum stress_failed_op op, int code,
                             uint64_t iter)
{
    res->status = code;
    res->failed_op = op;
    res->failed_iter = iter;
    return 1;
}

/** One acquire in mode, timed into ep (the token into ep->token when exclusive). */
static int stress_acquire(const rdlm_bench_lock_ops_t *ops, void *lock, int shared,
                          stress_episode_t *ep)
{
    uint64_t t0 = stress_now_ns();
    int rc = shared ? ops->read_acquire(lock) : ops->acquire(lock, &ep->token);

    ep->wait_ns = stress_now_ns() - t0;
    return rc;
}

static int stress_release(const rdlm_bench_lock_ops_t *ops, void *lock, int shared)
{
    return shared ? ops->read_release(lock) : ops->release(lock);
}

static int stress_child(void *argp)
{
    stress_child_arg_t *arg = argp;
    stress_run_t *run = arg->run;
    const stress_config_t *cfg = &run->cfg;
    const rdlm_bench_lock_ops_t *ops = cfg->ops;
    stress_shared_t *sh = run->sh;
    stress_proc_result_t *res = &run->results[arg->index];
    stress_episode_t *eps = &run->episodes[arg->index * cfg->iters];
    uint64_t rng = cfg->seed * 0x9E3779B97F4A7C15ull + arg->index + 1;
    uint64_t start_deadline;
    char err[160] = "";
    void *lock;
    int st;
    int rc = 0;

    if (ops->attach(sh->lock_words, cfg->job, &lock, err, sizeof(err)) != 0) {
        fprintf(stderr, "process %u: attach: %s\n", arg->index, err);
        return stress_child_fail(res, STRESS_OP_ATTACH, 0, 0);
    }

    /* Start together, so that every process contends from the first iteration:
     * wait for the parent's go, then until every process is running its loop. */
    atomic_fetch_add(&sh->ready, 1);
    start_deadline = stress_now_ns() + 30 * STRESS_NSEC_PER_SEC;
    while (atomic_load(&sh->go) == 0) {
        if (stress_now_ns() > start_deadline) {
            rc = stress_child_fail(res, STRESS_OP_START, 0, 0);
            goto out_detach;
        }
        sched_yield();
    }
    atomic_fetch_add(&sh->running, 1);
    while (atomic_load(&sh->running) < cfg->procs && stress_now_ns() < start_deadline) {
        sched_yield();
    }

    for (uint64_t i = 0; i < cfg->iters; i++) {
        stress_episode_t *ep = &eps[i];
        int shared =
            cfg->lock->read_pct > 0 && stress_rand(&rng) % 100 < cfg->lock->read_pct;
        uint64_t start;

        ep->grant = STRESS_NO_GRANT;
        ep->arrival = atomic_load_explicit(&sh->grant_seq, memory_order_relaxed);
        start = atomic_fetch_add(&sh->clock, 1);
        st = stress_acquire(ops, lock, shared, ep);
        if (st != 0) {
            rc = stress_child_fail(res, STRESS_OP_ACQUIRE, st, i);
            break;
        }
        if (!shared) {
            st = stress_writer_cs(run, lock, arg->index, i, ep, start, &rng);
            res->writes++;
        } else {
            stress_reader_cs(run, arg->index, i, &rng);
            res->reads++;
        }
        if (st != 0) {
            rc = stress_child_fail(res, STRESS_OP_WAITERS, st, i);
            stress_release(ops, lock, shared);
            break;
        }
        st = stress_release(ops, lock, shared);
        if (st != 0) {
            rc = stress_child_fail(res, STRESS_OP_RELEASE, st, i);
            break;
        }
        res->done++;
        if (cfg->think_spin > 0) {
            stress_cpu_pause((unsigned)(stress_rand(&rng) % cfg->think_spin));
        }
    }
    ops->stats(lock, &res->stats); /* left zero when the lock keeps none */

out_detach:
    ops->detach(lock);
    return rc;
}

/* ---- checks --------------------------------------------------------------------- */

typedef struct stress_verdict {
    int run_failed;
    int safety_violations; /* checks 1-3 */
    int fifo_violations;   /* check 4 (and the bypass bound with --strict-bypass) */
    int wait_violations;   /* check 6 */
} stress_verdict_t;

static void stress_check(const char *name, int ok, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void stress_check(const char *name, int ok, const char *fmt, ...)
{
    va_list ap;

    printf("  [%s] %-28s ", ok ? " ok " : "FAIL", name);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
}

static void stress_check_children(stress_run_t *run, const int *statuses, int killed,
                                  stress_verdict_t *v)
{
    const stress_config_t *cfg = &run->cfg;
    unsigned bad = 0;
    char text[32];

    for (unsigned p = 0; p < cfg->procs; p++) {
        const stress_proc_result_t *res = &run->results[p];

        if (!stress_exited_ok(statuses[p]) || res->done != cfg->iters) {
            if (bad++ < 8) {
                printf("  process %u: %s, %" PRIu64 "/%" PRIu64 " iterations, "
                       "failed in %s at iteration %" PRIu64 ": %s\n",
                       p, stress_status_text(statuses[p], text, sizeof(text)), res->done,
                       cfg->iters, stress_op_names[res->failed_op], res->failed_iter,
                       res->status != 0 ? cfg->ops->error_name(res->status)
                                        : "-"); /* 0: attach (why on stderr), start line */
            }
        }
    }
    stress_check("processes completed", bad == 0 && killed == 0,
                 "%u/%u clean, %d killed at the deadline", cfg->procs - bad, cfg->procs,
                 killed);
    if (bad != 0 || killed != 0) {
        v->run_failed = 1;
    }
}

static void stress_check_state(stress_run_t *run, stress_verdict_t *v)
{
    const stress_config_t *cfg = &run->cfg;
    stress_shared_t *sh = run->sh;
    uint64_t writes = 0;
    uint64_t reads = 0;
    uint64_t excl = atomic_load(&sh->excl_violations);
    uint64_t shared = atomic_load(&sh->shared_violations);
    uint64_t len = sh->log_len;
    uint64_t backwards = 0;
    uint64_t first_bad = 0;
    int ok;

    for (unsigned p = 0; p < cfg->procs; p++) {
        writes += run->results[p].writes;
        reads += run->results[p].reads;
    }

    ok = sh->counter == writes;
    stress_check("counter (lost updates)", ok,
                 "counter %" PRIu64 ", exclusive acquires %" PRIu64 " (lost %" PRId64 ")",
                 sh->counter, writes, (int64_t)(writes - sh->counter));
    v->safety_violations += !ok;

    if (cfg->ops->caps & RDLM_BENCH_LOCK_CAP_TOKENS) {
        uint64_t n = len < run->slots ? len : run->slots;

        for (uint64_t i = 1; i < n; i++) {
            if (run->log[i] <= run->log[i - 1]) {
                if (backwards++ == 0) {
                    first_bad = i;
                }
            }
        }
        ok = len == writes && backwards == 0;
        stress_check("token log", ok,
                     "%" PRIu64 " entries for %" PRIu64 " acquires, %" PRIu64
                     " not strictly increasing",
                     len, writes, backwards);
        if (backwards != 0) {
            printf("         first: log[%" PRIu64 "] = %#" PRIx64 " after %#" PRIx64 "\n",
                   first_bad, run->log[first_bad], run->log[first_bad - 1]);
        }
        v->safety_violations += !ok;
    }

    ok = excl == 0;
    stress_check("writers alone", ok, "%" PRIu64 " overlaps seen by writers", excl);
    v->safety_violations += !ok;
    if (cfg->lock->read_pct > 0) {
        ok = shared == 0;
        stress_check("readers never beside writer", ok,
                     "%" PRIu64 " overlaps seen by readers; %" PRIu64
                     " shared acquires, at most %u readers inside at once",
                     shared, reads, atomic_load(&sh->max_readers_inside));
        v->safety_violations += !ok;
    }
    if (atomic_load(&sh->first_violation_claimed)) {
        printf("         first overlap: %s\n", sh->first_violation);
    }
}

/*
 * Check 4, queue order: after the holder of grant g counted w waiters at clock T,
 * grants g+1 .. g+w must all go to requests that started before T.
 */
static void stress_check_queue_order(stress_run_t *run, stress_verdict_t *v)
{
    uint64_t total = atomic_load(&run->sh->grant_seq);
    uint64_t overtakes = 0;
    uint64_t queued = 0;
    uint64_t max_waiters = 0;
    int printed = 0;

    if (total > run->slots) {
        total = run->slots;
    }
    for (uint64_t g = 0; g < total; g++) {
        const stress_grant_t *holder = &run->grants[g];

        queued += holder->waiters;
        if (holder->waiters > max_waiters) {
            max_waiters = holder->waiters;
        }
        for (uint64_t k = g + 1; k <= g + holder->waiters && k < total; k++) {
            const stress_grant_t *next = &run->grants[k];

            if (next->start > holder->seen_at) {
                overtakes++;
                if (printed++ < 5) {
                    printf("         grant %" PRIu64 " (process %d) saw %u queued at clock %"
                           PRIu64 ", but grant %" PRIu64 " went to process %d whose "
                           "request started later, at clock %" PRIu64 "\n",
                           g, holder->owner, holder->waiters, holder->seen_at, k,
                           next->owner, next->start);
                }
                break;
            }
        }
    }
    stress_check("FIFO (queue order)", overtakes == 0,
                 "%" PRIu64 " of %" PRIu64 " grants overtaken by a later request; "
                 "%" PRIu64 " queued waiters seen by holders, at most %" PRIu64 " at once",
                 overtakes, total, queued, max_waiters);
    v->fifo_violations += overtakes != 0;
    if (queued == 0) {
        stress_check("contention", 0, "no holder ever saw a waiter: the run proved "
                     "nothing about FIFO");
        v->run_failed = 1;
    }
}

/*
 * Bounded bypass (informational unless --strict-bypass): for each exclusive episode
 * of process p with arrival sequence a and grant sequence g, the grants a .. g-1 went
 * to other processes; how many to any one of them?
 */
static void stress_check_bypass(stress_run_t *run, stress_verdict_t *v)
{
    const stress_config_t *cfg = &run->cfg;
    uint64_t total = atomic_load(&run->sh->grant_seq);
    uint64_t hist[4] = {0, 0, 0, 0};
    uint64_t over = 0;
    uint64_t checked = 0;
    unsigned worst = 0;
    unsigned count[STRESS_MAX_PROCS];
    int printed = 0;

    if (total > run->slots) {
        total = run->slots;
    }
    for (unsigned p = 0; p < cfg->procs; p++) {
        for (uint64_t i = 0; i < run->results[p].done; i++) {
            const stress_episode_t *ep = &run->episodes[p * cfg->iters + i];
            unsigned max = 0;
            unsigned max_q = 0;

            if (ep->grant == STRESS_NO_GRANT) {
                continue;
            }
            checked++;
            memset(count, 0, sizeof(count));
            for (uint64_t s = ep->arrival; s < ep->grant && s < total; s++) {
                int32_t q = run->grants[s].owner;

                if (q < 0 || (unsigned)q >= cfg->procs || (unsigned)q == p) {
                    continue;
                }
                if (++count[q] > max) {
                    max = count[q];
                    max_q = (unsigned)q;
                }
            }
            hist[max < 3 ? max : 3]++;
            if (max > worst) {
                worst = max;
            }
            if (max > cfg->max_bypass) {
                over++;
                if (cfg->strict_bypass && printed++ < 5) {
                    printf("         process %u iteration %" PRIu64 ": arrived at grant %"
                           PRIu64 ", granted %" PRIu64 "; process %u was granted %u times "
                           "meanwhile\n",
                           p, i, ep->arrival, ep->grant, max_q, max);
                }
            }
        }
    }
    if (cfg->strict_bypass) {
        stress_check("bounded bypass (strict)", over == 0,
                     "%" PRIu64 " of %" PRIu64 " waits bypassed more than %u times by one "
                     "process; worst %u; per-wait max 0/1/2/>2: %" PRIu64 "/%" PRIu64
                     "/%" PRIu64 "/%" PRIu64,
                     over, checked, cfg->max_bypass, worst, hist[0], hist[1], hist[2],
                     hist[3]);
        v->fifo_violations += over != 0;
    } else {
        printf("  [info] %-28s per-wait max bypass by one process 0/1/2/>2: %" PRIu64
               "/%" PRIu64 "/%" PRIu64 "/%" PRIu64 "; worst %u (not asserted, see "
               "--strict-bypass)\n",
               "bounded bypass", hist[0], hist[1], hist[2], hist[3], worst);
    }
}

static int stress_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a;
    uint64_t y = *(const uint64_t *)b;

    return (x > y) - (x < y);
}

/* Nearest rank: the smallest wait with at least q of the sorted n at or below it. */
static uint64_t stress_rank(const uint64_t *sorted, uint64_t n, double q)
{
    uint64_t rank = (uint64_t)(q * (double)n + 0.999999);

    return sorted[(rank < 1 ? 1 : rank > n ? n : rank) - 1];
}

/*
 * Check 6, bounded wait: p50, p99.9 and the maximum of every completed acquire's wait,
 * over all processes; asserted (max <= --max-wait-ms) only when the bound is given.
 */
static void stress_check_waits(stress_run_t *run, stress_verdict_t *v)
{
    const stress_config_t *cfg = &run->cfg;
    uint64_t *waits = malloc(sizeof(uint64_t) * (run->slots ? run->slots : 1));
    uint64_t n = 0;
    uint64_t over = 0;
    uint64_t max = 0;
    unsigned max_p = 0;
    uint64_t max_i = 0;

    if (waits == NULL) {
        stress_check("bounded wait", 0, "out of memory");
        v->run_failed = 1;
        return;
    }
    for (unsigned p = 0; p < cfg->procs; p++) {
        for (uint64_t i = 0; i < run->results[p].done; i++) {
            uint64_t w = run->episodes[p * cfg->iters + i].wait_ns;

            waits[n++] = w;
            over += cfg->max_wait_ns > 0 && w > cfg->max_wait_ns;
            if (w > max) {
                max = w;
                max_p = p;
                max_i = i;
            }
        }
    }
    if (n == 0) {
        printf("  [info] %-28s no acquire completed\n", "wait in acquire");
        free(waits);
        return;
    }
    qsort(waits, n, sizeof(*waits), stress_cmp_u64);
    if (cfg->max_wait_ns > 0) {
        stress_check(
            "bounded wait", over == 0,
            "%" PRIu64 " of %" PRIu64 " acquires waited more than %.0f ms; "
            "p50 %.3f ms, p99.9 %.3f ms, max %.3f ms (process %u, iteration %" PRIu64 ")",
            over, n, (double)cfg->max_wait_ns / 1e6, (double)waits[n / 2] / 1e6,
            (double)stress_rank(waits, n, 0.999) / 1e6, (double)max / 1e6, max_p, max_i);
        v->wait_violations += over != 0;
    } else {
        printf("  [info] %-28s p50 %.3f ms, p99.9 %.3f ms, max %.3f ms (process %u, "
               "iteration %" PRIu64 ") over %" PRIu64 " acquires (not asserted, see "
               "--max-wait-ms)\n",
               "wait in acquire", (double)waits[n / 2] / 1e6,
               (double)stress_rank(waits, n, 0.999) / 1e6, (double)max / 1e6, max_p, max_i,
               n);
    }
    free(waits);
}

/* ---- driver --------------------------------------------------------------------- */

static void stress_usage(FILE *out)
{
    fprintf(out,
            "usage: rdlm_stress_validator --adapter NAME [--procs N] [--iters N]\n"
            "         [--cs-spin N] [--cs-yield-pct N] [--think-spin N] [--max-bypass N]\n"
            "         [--strict-bypass] [--timeout-sec N]\n"
            "         [--cs-hold-us N] [--max-wait-ms N] [--seed N]\n"
            "         [--expect-failure | --expect-fifo-failure | --expect-wait-failure]\n"
            "         [--verbose]\n"
            "adapters:");
    for (const stress_lock_t *l = stress_locks; l->name != NULL; l++) {
        fprintf(out, " %s", l->name);
    }
    fprintf(out, "\nenvironment: RDLMTEST_STRESS_ITERS, RDLMTEST_STRESS_SCALE, "
                 "RDLMTEST_STRESS_TIMEOUT_SEC\n");
}

static int stress_parse_u64(const char *s, uint64_t *v)
{
    char *end;

    if (s == NULL || *s == '\0') {
        return -1;
    }
    *v = strtoull(s, &end, 10);
    return *end == '\0' ? 0 : -1;
}

static int stress_parse_args(int argc, char **argv, stress_config_t *cfg)
{
    uint64_t v;

    *cfg = (stress_config_t){
        .procs = 2,
        .iters = 1000,
        .cs_spin = 20,
        .cs_yield_pct = 5,
        .think_spin = 50,
        .max_bypass = 2,
        .timeout_ns = 100 * STRESS_NSEC_PER_SEC,
        .seed = 1,
    };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;

        if (strcmp(a, "--expect-failure") == 0) {
            cfg->expect = STRESS_EXPECT_SAFETY_FAILURE;
            continue;
        }
        if (strcmp(a, "--expect-fifo-failure") == 0) {
            cfg->expect = STRESS_EXPECT_FIFO_FAILURE;
            continue;
        }
        if (strcmp(a, "--expect-wait-failure") == 0) {
            cfg->expect = STRESS_EXPECT_WAIT_FAILURE;
            continue;
        }
        if (strcmp(a, "--strict-bypass") == 0) {
            cfg->strict_bypass = 1;
            continue;
        }
        if (strcmp(a, "--verbose") == 0) {
            cfg->verbose = 1;
            continue;
        }
        if (strcmp(a, "--help") == 0) {
            stress_usage(stdout);
            exit(0);
        }
        if (strcmp(a, "--adapter") == 0 && val != NULL) {
            cfg->lock = stress_lock_find(val);
            if (cfg->lock == NULL) {
                fprintf(stderr, "unknown adapter %s\n", val);
                return -1;
            }
            cfg->ops = cfg->lock->ops;
            i++;
            continue;
        }
        if (stress_parse_u64(val, &v) != 0) {
            fprintf(stderr, "bad or missing value for %s\n", a);
            return -1;
        }
        i++;
        if (strcmp(a, "--procs") == 0) {
            cfg->procs = (unsigned)v;
        } else if (strcmp(a, "--iters") == 0) {
            cfg->iters = v;
        } else if (strcmp(a, "--cs-spin") == 0) {
            cfg->cs_spin = (unsigned)v;
        } else if (strcmp(a, "--cs-yield-pct") == 0) {
            cfg->cs_yield_pct = (unsigned)v;
        } else if (strcmp(a, "--think-spin") == 0) {
            cfg->think_spin = (unsigned)v;
        } else if (strcmp(a, "--cs-hold-us") == 0) {
            cfg->cs_hold_ns = v * 1000u;
        } else if (strcmp(a, "--max-wait-ms") == 0) {
            cfg->max_wait_ns = v * STRESS_NSEC_PER_MSEC;
        } else if (strcmp(a, "--max-bypass") == 0) {
            cfg->max_bypass = (unsigned)v;
        } else if (strcmp(a, "--timeout-sec") == 0) {
            cfg->timeout_ns = v * STRESS_NSEC_PER_SEC;
        } else if (strcmp(a, "--seed") == 0) {
            cfg->seed = v;
        } else {
            fprintf(stderr, "unknown option %s\n", a);
            return -1;
        }
    }
    if (cfg->ops == NULL) {
        fprintf(stderr, "--adapter is required\n");
        return -1;
    }
    cfg->iters = stress_env_u64("RDLMTEST_STRESS_ITERS", cfg->iters);
    cfg->iters *= stress_env_u64("RDLMTEST_STRESS_SCALE", 1);
    cfg->timeout_ns = stress_env_u64("RDLMTEST_STRESS_TIMEOUT_SEC",
                                     cfg->timeout_ns / STRESS_NSEC_PER_SEC) *
                      STRESS_NSEC_PER_SEC;
    if (cfg->ops->shared_size > STRESS_LOCK_WORDS) {
        fprintf(stderr, "%s needs %zu bytes of lock words, more than %d\n", cfg->lock->name,
                cfg->ops->shared_size, STRESS_LOCK_WORDS);
        return -1;
    }
    if (cfg->procs < 1 || cfg->procs > STRESS_MAX_PROCS || cfg->iters < 1) {
        fprintf(stderr, "need 1 <= procs <= %d and iters >= 1\n", STRESS_MAX_PROCS);
        return -1;
    }
    if (cfg->expect == STRESS_EXPECT_FIFO_FAILURE && !cfg->lock->fifo) {
        fprintf(stderr, "--expect-fifo-failure needs an adapter with a FIFO check\n");
        return -1;
    }
    if (cfg->expect == STRESS_EXPECT_WAIT_FAILURE && cfg->max_wait_ns == 0) {
        fprintf(stderr, "--expect-wait-failure needs --max-wait-ms\n");
        return -1;
    }
    stress_job_name(cfg->job, sizeof(cfg->job), cfg->lock->name);
    return 0;
}

static int stress_map(stress_run_t *run)
{
    const stress_config_t *cfg = &run->cfg;
    size_t off = sizeof(stress_shared_t);
    size_t results_off;
    size_t episodes_off;
    size_t log_off;
    size_t grants_off;
    unsigned char *base;

    run->slots = (uint64_t)cfg->procs * cfg->iters;
    off = (off + 63) & ~(size_t)63;
    results_off = off;
    off += sizeof(stress_proc_result_t) * cfg->procs;
    off = (off + 63) & ~(size_t)63;
    episodes_off = off;
    off += sizeof(stress_episode_t) * run->slots;
    log_off = off;
    off += sizeof(uint64_t) * run->slots;
    grants_off = off;
    off += sizeof(stress_grant_t) * run->slots;
    run->map_size = off;

    base = stress_shared_alloc(run->map_size);
    if (base == NULL) {
        perror("mmap");
        return -1;
    }
    run->sh = (stress_shared_t *)base;
    run->results = (stress_proc_result_t *)(base + results_off);
    run->episodes = (stress_episode_t *)(base + episodes_off);
    run->log = (uint64_t *)(base + log_off);
    run->grants = (stress_grant_t *)(base + grants_off);
    for (uint64_t s = 0; s < run->slots; s++) {
        run->grants[s].owner = -1;
    }
    return 0;
}

static void stress_print_stats(const stress_run_t *run)
{
    rdlm_stats_t sum = {0};

    for (unsigned p = 0; p < run->cfg.procs; p++) {
        const rdlm_stats_t *s = &run->results[p].stats;

        sum.acquires += s->acquires;
        sum.contended += s->contended;
        sum.parks += s->parks;
        sum.wakes += s->wakes;
        sum.timeouts += s->timeouts;
        sum.recoveries += s->recoveries;
        sum.skips += s->skips;
    }
    printf("  [info] rdlm stats: acquires %" PRIu64 " contended %" PRIu64 " parks %" PRIu64
           " wakes %" PRIu64 " timeouts %" PRIu64 " recoveries %" PRIu64 " skips %" PRIu64
           "\n",
           sum.acquires, sum.contended, sum.parks, sum.wakes, sum.timeouts, sum.recoveries,
           sum.skips);
}

static int stress_verdict_exit(const stress_config_t *cfg, const stress_verdict_t *v)
{
    switch (cfg->expect) {
    case STRESS_EXPECT_SAFETY_FAILURE:
        if (v->run_failed) {
            printf("RESULT: FAIL (the run did not complete, so the checker proved nothing)\n");
            return STRESS_EXIT_VIOLATION;
        }
        if (v->safety_violations > 0) {
            printf("RESULT: PASS (the validator caught the %s lock: %d safety check(s) "
                   "fired)\n",
                   cfg->lock->name, v->safety_violations);
            return STRESS_EXIT_PASS;
        }
        printf("RESULT: FAIL (the validator did NOT catch the %s lock)\n", cfg->lock->name);
        return STRESS_EXIT_VIOLATION;
    case STRESS_EXPECT_FIFO_FAILURE:
        if (v->run_failed || v->safety_violations > 0) {
            printf("RESULT: FAIL (expected a clean run with only FIFO violations)\n");
            return STRESS_EXIT_VIOLATION;
        }
        if (v->fifo_violations > 0) {
            printf("RESULT: PASS (the FIFO check caught the %s lock)\n", cfg->lock->name);
            return STRESS_EXIT_PASS;
        }
        printf("RESULT: FAIL (the FIFO check did NOT catch the %s lock)\n",
               cfg->lock->name);
        return STRESS_EXIT_VIOLATION;
    case STRESS_EXPECT_WAIT_FAILURE:
        if (v->run_failed || v->safety_violations > 0 || v->fifo_violations > 0) {
            printf(
                "RESULT: FAIL (expected a clean run with only bounded-wait violations)\n");
            return STRESS_EXIT_VIOLATION;
        }
        if (v->wait_violations > 0) {
            printf("RESULT: PASS (the bounded-wait check caught the %s lock)\n",
                   cfg->lock->name);
            return STRESS_EXIT_PASS;
        }
        printf("RESULT: FAIL (the bounded-wait check did NOT catch the %s lock)\n",
               cfg->lock->name);
        return STRESS_EXIT_VIOLATION;
    case STRESS_EXPECT_PASS:
        break;
    }
    if (v->run_failed) {
        printf("RESULT: FAIL (run failed)\n");
        return STRESS_EXIT_RUN_FAILED;
    }
    if (v->safety_violations > 0 || v->fifo_violations > 0 || v->wait_violations > 0) {
        printf("RESULT: FAIL (%d safety, %d FIFO, %d bounded-wait violation(s))\n",
               v->safety_violations, v->fifo_violations, v->wait_violations);
        return STRESS_EXIT_VIOLATION;
    }
    printf("RESULT: PASS\n");
    return STRESS_EXIT_PASS;
}

int main(int argc, char **argv)
{
    static const char *const expect_text[] = {
        "",
        ", expecting the safety checks to fire",
        ", expecting the FIFO check to fire",
        ", expecting the bounded-wait check to fire",
    };
    stress_run_t run = {0};
    stress_verdict_t v = {0};
    pid_t pids[STRESS_MAX_PROCS] = {0};
    int statuses[STRESS_MAX_PROCS] = {0};
    stress_child_arg_t args[STRESS_MAX_PROCS];
    char seg_path[128];
    struct stat st;
    uint64_t t0;
    int killed;
    int rc;

    setvbuf(stdout, NULL, _IOLBF, 0);
    if (stress_parse_args(argc, argv, &run.cfg) != 0) {
        stress_usage(stderr);
        return STRESS_EXIT_RUN_FAILED;
    }
    if (stress_map(&run) != 0) {
        return STRESS_EXIT_RUN_FAILED;
    }
    printf("adapter %s (%s): %u processes x %" PRIu64 " iterations, job %s%s\n",
           run.cfg.lock->name, run.cfg.ops->description, run.cfg.procs, run.cfg.iters,
           run.cfg.job, expect_text[run.cfg.expect]);

    if (run.cfg.ops->shared_init(run.sh->lock_words) != 0) {
        fprintf(stderr, "%s: shared_init failed\n", run.cfg.lock->name);
        stress_shared_free(run.sh, run.map_size);
        return STRESS_EXIT_RUN_FAILED;
    }
    t0 = stress_now_ns();
    for (unsigned p = 0; p < run.cfg.procs; p++) {
        args[p] = (stress_child_arg_t){.run = &run, .index = p};
        pids[p] = stress_fork(stress_child, &args[p]);
        if (pids[p] < 0) {
            perror("fork");
            pids[p] = 0;
            v.run_failed = 1;
            break;
        }
    }
    /* Release them together once all are attached (or the start deadline passes:
     * the children then report STRESS_OP_START). */
    while (!v.run_failed && atomic_load(&run.sh->ready) < run.cfg.procs &&
           stress_now_ns() < t0 + 30 * STRESS_NSEC_PER_SEC) {
        stress_sleep_ns(STRESS_NSEC_PER_MSEC);
    }
    atomic_store(&run.sh->go, 1);
    killed = stress_wait_children(pids, statuses, (int)run.cfg.procs,
                                  t0 + run.cfg.timeout_ns);
    printf("finished in %.3f s\n", (double)(stress_now_ns() - t0) / 1e9);
    run.cfg.ops->shared_fini(run.sh->lock_words);

    stress_check_children(&run, statuses, killed, &v);
    stress_check_state(&run, &v);
    if (run.cfg.lock->fifo) {
        stress_check_queue_order(&run, &v);
    } else {
        printf("  [info] %-28s not checked: %s\n", "FIFO",
               run.cfg.lock->planted
                   ? "not claimed by this lock"
                   : "no way to count queued waiters (rdlm has no rwlock query)");
    }
    if (run.cfg.lock->read_pct == 0) {
        stress_check_bypass(&run, &v);
    }
    stress_check_waits(&run, &v);
    if (run.cfg.verbose) {
        stress_print_stats(&run);
    }

    /* The last rdlm_ctx_destroy removes the segment. */
    stress_segment_path(seg_path, sizeof(seg_path), run.cfg.job);
    if (stat(seg_path, &st) == 0) {
        stress_check("segment removed", 0, "%s still exists after every process "
                     "detached", seg_path);
        v.run_failed = 1;
        stress_segment_cleanup(run.cfg.job);
    }

    rc = stress_verdict_exit(&run.cfg, &v);
    stress_shared_free(run.sh, run.map_size);
    return rc;
}
