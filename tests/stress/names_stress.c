/*
 * rdlm_names_stress — far more lock names than the object table holds.
 *
 * P forked processes share one node segment of a small capacity (RDLM_CAPACITY 64 by
 * default) and go through a sliding window of names: each round takes a name a few
 * places ahead of a shared cursor (so processes meet on the same names, and the
 * names used over a run are many times the capacity), opens it (even names as a
 * lock, odd ones as a reader-writer lock, write side), acquires it, checks in shared
 * memory that nobody else is inside that name and that its fencing token is above
 * every token seen for the name before, and releases and closes it. One round in
 * four keeps the handle open and takes the same name again in the next round, while
 * the others close theirs: the entry must stay the name's while any handle is open.
 *
 * The checked state is per name index, in a MAP_SHARED mapping made before fork:
 * `inside` (atomic: 1 after the holder's increment, else two holders overlap) and
 * `last` (the largest token seen, written only by a holder).
 *
 * Exit status: 0 pass; 1 a violation (overlap or a token not above the name's last);
 * 2 the run failed (an rdlm error, a crash, the deadline). With --expect-failure: 0
 * iff a violation was reported (the planted bugs RDLMTEST_TABLE_NO_FLOOR and
 * RDLMTEST_TABLE_RETIRE_OPEN, core/local/segment.h), else 1.
 *
 * Tunables (environment): RDLMTEST_NAMES_PROCS (4), RDLMTEST_NAMES_ITERS (rounds per
 * process, 20000), RDLMTEST_NAMES_COUNT (name indexes, 100000), RDLMTEST_NAMES_CAPACITY
 * (64), RDLMTEST_NAMES_TIMEOUT_SEC (60).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <rdlm.h>

#include "stress_util.h"

#define NAMES_MAX_PROCS 32
#define NAMES_WINDOW 8      /* names ahead of the cursor a round picks from */
#define NAMES_CURSOR_STEP 4 /* rounds (of all processes) per step of the window */
#define NAMES_REPORTS 5     /* violations printed */

typedef struct names_slot {
    atomic_uint inside;
    uint64_t last; /* largest token of the name seen so far (its holder writes it) */
} names_slot_t;

typedef struct names_shared {
    atomic_ulong cursor;
    atomic_uint violations;
    atomic_uint failures;
    names_slot_t slots[];
} names_shared_t;

typedef struct names_config {
    unsigned procs;
    uint64_t iters;
    uint64_t count;
    uint32_t capacity;
    char job[40];
    names_shared_t *shared;
} names_config_t;

/* One handle of name index i: a lock (even i) or a rwlock (odd i). */
typedef struct names_handle {
    uint64_t i;
    rdlm_lock_h lock;
    rdlm_rwlock_h rw;
} names_handle_t;

static names_config_t cfg;
static unsigned names_me;

static void names_violation(const char *fmt, unsigned long long a, unsigned long long b,
                            unsigned long long c)
{
    if (atomic_fetch_add(&cfg.shared->violations, 1) < NAMES_REPORTS) {
        fprintf(stderr, "names_stress: process %u: ", names_me);
        fprintf(stderr, fmt, a, b, c);
        fputc('\n', stderr);
    }
}

static int names_fail(const char *what, uint64_t i, rdlm_status_t st)
{
    if (atomic_fetch_add(&cfg.shared->failures, 1) < NAMES_REPORTS) {
        fprintf(stderr, "names_stress: process %u: %s of name %llu: %s\n", names_me, what,
                (unsigned long long)i, rdlm_status_str(st));
    }
    return 2;
}

static rdlm_status_t names_open(rdlm_ctx_h ctx, uint64_t i, names_handle_t *h)
{
    char name[32];

    snprintf(name, sizeof(name), "n%llu", (unsigned long long)i);
    h->i = i;
    return i % 2 == 0 ? rdlm_lock_open(ctx, name, &h->lock)
                      : rdlm_rwlock_open(ctx, name, &h->rw);
}

static void names_close(names_handle_t *h)
{
    if (h->i % 2 == 0) {
        rdlm_lock_close(h->lock);
    } else {
        rdlm_rwlock_close(h->rw);
    }
}

/* Acquire, check and release name h->i once. 0, or 2 on an rdlm error. */
static int names_hold(names_handle_t *h)
{
    names_slot_t *slot = &cfg.shared->slots[h->i];
    uint64_t timeout = 10 * STRESS_NSEC_PER_SEC, token = 0;
    rdlm_status_t st = h->i % 2 == 0 ? rdlm_lock_acquire(h->lock, timeout, &token)
                                     : rdlm_rwlock_write_acquire(h->rw, timeout, &token);
    unsigned inside;

    if (st != RDLM_OK) {
        return names_fail("acquire", h->i, st);
    }
    inside = atomic_fetch_add(&slot->inside, 1) + 1;
    if (inside != 1) {
        names_violation("name %llu: %llu holders inside (token %llu)", h->i, inside, token);
    }
    if (token <= slot->last) {
        names_violation("name %llu: token %llu not above %llu", h->i, token, slot->last);
    } else {
        slot->last = token;
    }
    stress_cpu_pause(200);
    atomic_fetch_sub(&slot->inside, 1);
    st = h->i % 2 == 0 ? rdlm_lock_release(h->lock) : rdlm_rwlock_write_release(h->rw);
    return st == RDLM_OK ? 0 : names_fail("release", h->i, st);
}

static int names_child(void *arg)
{
    rdlm_ctx_params_t params = {.field_mask = RDLM_CTX_FIELD_JOB | RDLM_CTX_FIELD_CAPACITY,
                                .job = cfg.job,
                                .capacity = cfg.capacity};
    unsigned seed = 0x9e3779b9u * (names_me = (unsigned)(uintptr_t)arg + 1);
    names_handle_t kept = {0}, h;
    int have_kept = 0, rc = 0;
    rdlm_ctx_h ctx;
    rdlm_status_t st = rdlm_ctx_create(&params, &ctx);

    if (st != RDLM_OK) {
        return names_fail("rdlm_ctx_create", 0, st);
    }
    for (uint64_t round = 0; round < cfg.iters && rc == 0; round++) {
        if (have_kept) {
            h = kept; /* the same name again, through the handle kept open */
            have_kept = 0;
        } else {
            uint64_t step = atomic_fetch_add(&cfg.shared->cursor, 1) / NAMES_CURSOR_STEP;

            st = names_open(
                ctx, (step + (unsigned)rand_r(&seed) % NAMES_WINDOW) % cfg.count, &h);
            if (st != RDLM_OK) {
                rc = names_fail("open", h.i, st);
                break;
            }
        }
        rc = names_hold(&h);
        if (rand_r(&seed) % 4 == 0 && h.i != kept.i) {
            kept = h;
            have_kept = 1;
        } else {
            names_close(&h);
        }
    }
    if (have_kept) {
        names_close(&kept);
    }
    rdlm_ctx_destroy(ctx);
    return rc;
}

int main(int argc, char **argv)
{
    int expect_failure = argc > 1 && strcmp(argv[1], "--expect-failure") == 0;
    uint64_t deadline;
    pid_t pids[NAMES_MAX_PROCS];
    int statuses[NAMES_MAX_PROCS], failed = 0;
    size_t bytes;
    unsigned violations;

    cfg.procs = (unsigned)stress_env_u64("RDLMTEST_NAMES_PROCS", 4);
    cfg.iters = stress_env_u64("RDLMTEST_NAMES_ITERS", 20000);
    cfg.count = stress_env_u64("RDLMTEST_NAMES_COUNT", 100000);
    cfg.capacity = (uint32_t)stress_env_u64("RDLMTEST_NAMES_CAPACITY", 64);
    deadline = stress_now_ns() +
               stress_env_u64("RDLMTEST_NAMES_TIMEOUT_SEC", 60) * STRESS_NSEC_PER_SEC;
    if (cfg.procs < 1 || cfg.procs > NAMES_MAX_PROCS || cfg.count < NAMES_WINDOW) {
        fprintf(stderr, "names_stress: 1..%d processes and at least %d names\n",
                NAMES_MAX_PROCS, NAMES_WINDOW);
        return 2;
    }
    stress_job_name(cfg.job, sizeof(cfg.job), "names");
    bytes = sizeof(names_shared_t) + cfg.count * sizeof(names_slot_t);
    cfg.shared = stress_shared_alloc(bytes);
    if (cfg.shared == NULL) {
        return 2;
    }
    for (unsigned p = 0; p < cfg.procs; p++) {
        pids[p] = stress_fork(names_child, (void *)(uintptr_t)p);
        failed |= pids[p] < 0;
    }
    if (failed || stress_wait_children(pids, statuses, (int)cfg.procs, deadline) > 0) {
        fprintf(stderr, "names_stress: a process could not start or missed the deadline\n");
        failed = 1;
    }
    for (unsigned p = 0; p < cfg.procs && !failed; p++) {
        failed = !stress_exited_ok(statuses[p]);
    }
    violations = atomic_load(&cfg.shared->violations);
    printf("names_stress: %u processes x %llu rounds, %llu name steps, capacity %u: "
           "%u violations, run %s\n",
           cfg.procs, (unsigned long long)cfg.iters,
           (unsigned long long)(atomic_load(&cfg.shared->cursor) / NAMES_CURSOR_STEP),
           cfg.capacity, violations, failed ? "failed" : "completed");
    stress_shared_free(cfg.shared, bytes);
    stress_segment_cleanup(cfg.job);
    if (expect_failure) {
        return violations > 0 ? 0 : 1;
    }
    return violations > 0 ? 1 : failed ? 2 : 0;
}
