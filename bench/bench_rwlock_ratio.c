/*
 * rwlock-ratio: N processes (default 2) on one reader-writer lock, each choosing per
 * iteration to read (with the sweep's probability) or write, from a generator seeded
 * per process, so every implementation and round runs the same sequence. A reader
 * reads the counter of the critical section's cache line; a writer increments it
 * (the lock benchmarks' section). Figure: all processes' iterations / (last end -
 * first start), Mops/s. After every run the counter must equal the write sections
 * run. rdlm_rwlock_* against a process-shared pthread_rwlock_t; target (issue 18):
 * rdlm >= 0.8x pthread_rwlock at every read ratio.
 */
#include <inttypes.h>
#include <stdio.h>

#include "benchmarks.h"
#include "lock_bench.h"
#include "rounds.h"

#define RDLM_BENCH_RW_ITERATIONS 100000u
#define RDLM_BENCH_RW_WARMUP 1000u
#define RDLM_BENCH_RW_TARGET 0.8 /* issue 18: >= 0.8x pthread_rwlock */
#define RDLM_BENCH_RW_SEED UINT64_C(0x9e3779b97f4a7c15)

static const uint32_t rdlm_bench_rw_procs[] = {2};
static const uint32_t rdlm_bench_rw_read_pct[] = {0, 50, 90, 99};
#define RDLM_BENCH_RW_NRATIO (sizeof(rdlm_bench_rw_read_pct) / sizeof(uint32_t))

static const rdlm_bench_lock_ops_t *const rdlm_bench_rw_impls[] = {
    &rdlm_bench_lock_rdlm_rwlock, &rdlm_bench_lock_prwlock};
#define RDLM_BENCH_RW_NIMPL (sizeof(rdlm_bench_rw_impls) / sizeof(rdlm_bench_rw_impls[0]))

typedef struct rdlm_bench_rw_arg {
    rdlm_bench_lock_arg_t lock; /* first: the lock helpers read it */
    uint32_t read_pct;
} rdlm_bench_rw_arg_t;

/* xorshift64*: the per-process choice of read or write. */
static inline uint64_t rdlm_bench_rw_next(uint64_t *state)
{
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return *state * UINT64_C(2685821657736338717);
}

/* n iterations, each a read or a write section; adds the writes to *writes_p and
 * what readers saw to *sink_p. 0, or -1 after recording why. */
static int rdlm_bench_rw_loop(rdlm_bench_worker_t *w, const rdlm_bench_rw_arg_t *a,
                              void *lock, uint64_t *state, uint64_t n, uint64_t *writes_p,
                              uint64_t *sink_p)
{
    rdlm_bench_cs_t *cs = rdlm_bench_lock_cs(w->data, &a->lock);
    uint64_t k;
    int rc;

    for (k = 0; k < n; k++) {
        if (rdlm_bench_rw_next(state) % 100 >= a->read_pct) {
            if (rdlm_bench_lock_section(w, a->lock.ops, lock, cs) < 0) {
                return -1;
            }
            (*writes_p)++;
            continue;
        }
        if ((rc = a->lock.ops->read_acquire(lock)) != 0) {
            return rdlm_bench_lock_failed(w, "read_acquire", rc);
        }
        *sink_p += cs->counter;
        if ((rc = a->lock.ops->read_release(lock)) != 0) {
            return rdlm_bench_lock_failed(w, "read_release", rc);
        }
    }
    return 0;
}

static int rdlm_bench_rw_body(rdlm_bench_worker_t *w)
{
    const rdlm_bench_rw_arg_t *a = w->arg;
    uint64_t state = RDLM_BENCH_RW_SEED * (w->rank + 1);
    uint64_t writes = 0;
    uint64_t sink = 0;
    void *lock;

    if (rdlm_bench_lock_attach(w, &lock) != 0) {
        return -1;
    }
    if (rdlm_bench_rw_loop(w, a, lock, &state, a->lock.warmup, &writes, &sink) != 0 ||
        rdlm_bench_worker_start(w) != 0 ||
        rdlm_bench_rw_loop(w, a, lock, &state, a->lock.iterations, &writes, &sink) != 0) {
        goto err_detach;
    }
    rdlm_bench_worker_end(w, a->lock.iterations);
    w->slot->values[0] = (double)writes; /* warm-up included, as the counter */
    w->slot->values[1] = (double)(sink & 0xff);
    a->lock.ops->detach(lock);
    return 0;

err_detach:
    a->lock.ops->detach(lock);
    return -1;
}

/* data_check: the counter must equal the write sections of all processes. */
static int rdlm_bench_rw_check(void *data, const void *arg, const rdlm_bench_outcome_t *out,
                               char *why, size_t whylen)
{
    uint64_t writes = 0;
    uint32_t k;

    for (k = 0; k < out->nprocs; k++) {
        writes += (uint64_t)out->slots[k].values[0];
    }
    return rdlm_bench_lock_check_count(data, arg, writes, why, whylen);
}

typedef struct rdlm_bench_rw_ctx {
    rdlm_bench_report_t *report;
    uint32_t nprocs;
    uint32_t read_pct;
    uint64_t iterations;
    uint64_t warmup;
    rdlm_bench_measure_t *measure[RDLM_BENCH_RW_NIMPL];
} rdlm_bench_rw_ctx_t;

static int rdlm_bench_rw_round(uint32_t impl, uint32_t round, void *ctx)
{
    rdlm_bench_rw_ctx_t *c = ctx;
    rdlm_bench_rw_arg_t arg = {
        .lock = {.ops = rdlm_bench_rw_impls[impl],
                 .iterations = c->iterations,
                 .warmup = c->warmup},
        .read_pct = c->read_pct,
    };
    rdlm_bench_run_params_t p = {
        .nprocs = c->nprocs,
        .data_check = rdlm_bench_rw_check,
        .body = rdlm_bench_rw_body,
        .verbose = c->report->opts->verbose,
    };
    rdlm_bench_outcome_t out;
    double mops;

    if (rdlm_bench_lock_run(&p, &arg, 0, &out) != 0) {
        return -1;
    }
    mops = out.window_ns > 0 ? (double)out.ops * 1000.0 / (double)out.window_ns : 0.0;
    rdlm_bench_measure_round(c->measure[impl], mops, NULL);
    rdlm_bench_report_round(c->report, round, "%-14s %2u procs %3u%% reads %.3f Mops/s\n",
                            arg.lock.ops->name, c->nprocs, c->read_pct, mops);
    rdlm_bench_outcome_free(&out);
    return 0;
}

static int rdlm_bench_rw_run(rdlm_bench_report_t *r)
{
    const rdlm_bench_opts_t *o = r->opts;
    const char *bench = rdlm_bench_def_rwlock_ratio.name;
    const uint32_t *procs;
    uint32_t nprocs;
    uint32_t n;
    uint32_t q;
    char metric[32];

    nprocs = rdlm_bench_opts_procs(o, rdlm_bench_rw_procs,
                                   sizeof(rdlm_bench_rw_procs) / sizeof(uint32_t), &procs);
    for (n = 0; n < nprocs; n++) {
        for (q = 0; q < RDLM_BENCH_RW_NRATIO; q++) {
            rdlm_bench_rw_ctx_t c = {
                .report = r,
                .nprocs = procs[n],
                .read_pct = rdlm_bench_rw_read_pct[q],
                .iterations = rdlm_bench_opts_iterations(o, RDLM_BENCH_RW_ITERATIONS),
                .warmup = rdlm_bench_opts_warmup(o, RDLM_BENCH_RW_WARMUP),
            };

            if (n == 0 && q == 0) {
                rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_PARAMS,
                                       "%" PRIu64 " iterations per process after %" PRIu64
                                       " warm-up, %u rounds; Mops/s over all processes; "
                                       "read or write per iteration, seeded per process",
                                       c.iterations, c.warmup, o->rounds);
            }
            snprintf(metric, sizeof(metric), "throughput %u%% reads", c.read_pct);
            if (rdlm_bench_lock_measures(r, bench, metric, rdlm_bench_rw_impls,
                                         RDLM_BENCH_RW_NIMPL, procs[n], "Mops/s",
                                         c.measure) != 0 ||
                rdlm_bench_alternate(RDLM_BENCH_RW_NIMPL, o->rounds, rdlm_bench_rw_round,
                                     &c) != 0) {
                return -1;
            }
            rdlm_bench_measures_finish(c.measure, RDLM_BENCH_RW_NIMPL);
            /* [0] rdlm, [1] pthread_rwlock */
            rdlm_bench_report_compare(r, c.measure[0], c.measure[1], NULL,
                                      RDLM_BENCH_TARGET_AT_LEAST, RDLM_BENCH_RW_TARGET);
        }
    }
    return 0;
}

const rdlm_bench_def_t rdlm_bench_def_rwlock_ratio = {
    .name = "rwlock-ratio",
    .title = "N processes on one rwlock, read ratio 0/50/90/99%: rdlm vs pshared "
             "pthread_rwlock",
    .default_procs = rdlm_bench_rw_procs,
    .ndefault_procs = sizeof(rdlm_bench_rw_procs) / sizeof(rdlm_bench_rw_procs[0]),
    .run = rdlm_bench_rw_run,
};
