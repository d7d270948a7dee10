/*
 * cas-pingpong: the floor of an on-node hand-off. Two processes, each pinned to its
 * own CPU, pass a turn back and forth; figure: ns per one-way hand-off (round trip /
 * 2), p50/p99 over 100-round-trip batches. Two ways of passing it, alternating in
 * every round:
 *
 *   cas   one 64-bit word holds whose turn it is (0 or 1): wait (load, pause) until it
 *         holds this process's rank, then compare-and-swap it to the other's. Rank 0:
 *         CAS 0->1, wait for 0; rank 1: CAS 1->0, wait for 1. A CAS that fails means
 *         the word changed during a turn: the run fails.
 *   rdlm  one rdlm lock: acquire; one critical section of lock_bench.h (counter++,
 *         last_rank); release. A section after the other process's is this process's
 *         turn, a hand-off of the lock; one after its own is out of turn, and it goes
 *         again. The counter must equal the sections run.
 *
 * cas is the hardware's floor under any on-node lock hand-off: one cache line moving
 * between two cores, twice per round trip, with the waiters' spin pause rdlm's
 * waiters use too. The comparison is rdlm / cas; target (issue 18) <= 1.6.
 *
 *   data mapping:  [ cs: 1 cache line (lock_bench.h) ][ turn word: 1 line ]
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "benchmarks.h"
#include "clock.h"
#include "lock_bench.h"
#include "rounds.h"
#include "workload.h"

#define RDLM_BENCH_PP_ITERATIONS 500000u
#define RDLM_BENCH_PP_WARMUP 10000u
#define RDLM_BENCH_PP_BATCH 100u
#define RDLM_BENCH_PP_SAMPLES 4096u

static const uint32_t rdlm_bench_pp_procs[] = {2};

/* cas's word, on a line of its own after lock_bench's data. */
typedef struct rdlm_bench_pp_word {
    _Alignas(64) _Atomic uint64_t turn; /* the rank whose turn it is */
} rdlm_bench_pp_word_t;

/* One process's side of the ping-pong. */
typedef struct rdlm_bench_pp_side {
    rdlm_bench_worker_t *w;
    void *lock;             /* rdlm: the lock adapter's handle; cas: NULL */
    rdlm_bench_cs_t *cs;    /* rdlm */
    _Atomic uint64_t *turn; /* cas */
    uint64_t taken;         /* turns taken, warm-up and out-of-turn sections included */
} rdlm_bench_pp_side_t;

typedef struct rdlm_bench_pp_ops {
    const char *name;
    const char *description;
    /** Per worker: 0 with side filled, or -1 after rdlm_bench_worker_fail. */
    int (*attach)(rdlm_bench_worker_t *w, rdlm_bench_pp_side_t *side);
    /** Wait for this process's turn, take it, pass it on: 0, or -1 after recording why. */
    int (*turn)(rdlm_bench_worker_t *w, rdlm_bench_pp_side_t *side);
    void (*detach)(rdlm_bench_worker_t *w, rdlm_bench_pp_side_t *side);
    /** data_check of the run: the shared state agrees with the turns taken. */
    int (*check)(void *data, const void *arg, const rdlm_bench_outcome_t *out, char *why,
                 size_t whylen);
} rdlm_bench_pp_ops_t;

/* Parameters of one run (copied into the workers by fork). */
typedef struct rdlm_bench_pp_arg {
    rdlm_bench_lock_arg_t lock; /* first: the lock helpers read it; ops: rdlm's lock */
    const rdlm_bench_pp_ops_t *ops;
} rdlm_bench_pp_arg_t;

static rdlm_bench_pp_word_t *rdlm_bench_pp_word(void *data, const rdlm_bench_pp_arg_t *a)
{
    return (rdlm_bench_pp_word_t *)((char *)data + rdlm_bench_lock_data_size(&a->lock));
}

/* ---- cas: one word ------------------------------------------------------------------ */

static int rdlm_bench_pp_cas_attach(rdlm_bench_worker_t *w, rdlm_bench_pp_side_t *side)
{
    side->turn = &rdlm_bench_pp_word(w->data, w->arg)->turn;
    return 0;
}

static int rdlm_bench_pp_cas_turn(rdlm_bench_worker_t *w, rdlm_bench_pp_side_t *side)
{
    uint64_t mine = w->rank;

    while (atomic_load_explicit(side->turn, memory_order_acquire) != mine) {
        rdlm_bench_pause();
    }
    if (!atomic_compare_exchange_strong_explicit(
            side->turn, &mine, mine ^ 1u, memory_order_acq_rel, memory_order_relaxed)) {
        return rdlm_bench_worker_fail(
            w, "cas: the word changed to %" PRIu64 " during rank %u's turn", mine, w->rank);
    }
    side->taken++;
    return 0;
}

static void rdlm_bench_pp_cas_detach(rdlm_bench_worker_t *w, rdlm_bench_pp_side_t *side)
{
    (void)w;
    (void)side;
}

/* Both ranks took as many turns, rank 0 first, so rank 1 passed last: the word is 0. */
static int rdlm_bench_pp_cas_check(void *data, const void *arg,
                                   const rdlm_bench_outcome_t *out, char *why,
                                   size_t whylen)
{
    uint64_t turn = atomic_load(&rdlm_bench_pp_word(data, arg)->turn);

    (void)out;
    if (turn != 0) {
        snprintf(why, whylen, "cas: the word ends at %" PRIu64 ", not 0", turn);
        return -1;
    }
    return 0;
}

static const rdlm_bench_pp_ops_t rdlm_bench_pp_cas = {
    .name = "cas",
    .description = "one 64-bit word, wait (load, pause) for my rank, CAS it to the "
                   "other's",
    .attach = rdlm_bench_pp_cas_attach,
    .turn = rdlm_bench_pp_cas_turn,
    .detach = rdlm_bench_pp_cas_detach,
    .check = rdlm_bench_pp_cas_check,
};

/* ---- rdlm: one lock ------------------------------------------------------------------ */

static int rdlm_bench_pp_lock_attach(rdlm_bench_worker_t *w, rdlm_bench_pp_side_t *side)
{
    const rdlm_bench_pp_arg_t *a = w->arg;

    side->cs = rdlm_bench_lock_cs(w->data, &a->lock);
    return rdlm_bench_lock_attach(w, &side->lock);
}

/* Sections until one comes after the other process's (a hand-off). */
static int rdlm_bench_pp_lock_turn(rdlm_bench_worker_t *w, rdlm_bench_pp_side_t *side)
{
    const rdlm_bench_pp_arg_t *a = w->arg;
    int rc;

    do {
        rc = rdlm_bench_lock_section(w, a->lock.ops, side->lock, side->cs);
        side->taken++;
    } while (rc == 0);
    return rc < 0 ? -1 : 0;
}

static void rdlm_bench_pp_lock_detach(rdlm_bench_worker_t *w, rdlm_bench_pp_side_t *side)
{
    const rdlm_bench_pp_arg_t *a = w->arg;

    a->lock.ops->detach(side->lock);
}

static const rdlm_bench_pp_ops_t rdlm_bench_pp_rdlm = {
    .name = "rdlm",
    .description = "rdlm_lock_acquire/release of one lock, a section after the other's "
                   "is a turn",
    .attach = rdlm_bench_pp_lock_attach,
    .turn = rdlm_bench_pp_lock_turn,
    .detach = rdlm_bench_pp_lock_detach,
    .check = rdlm_bench_lock_check, /* values[0]: sections beyond the measured turns */
};

static const rdlm_bench_pp_ops_t *const rdlm_bench_pp_impls[] = {&rdlm_bench_pp_rdlm,
                                                                 &rdlm_bench_pp_cas};
#define RDLM_BENCH_PP_NIMPL (sizeof(rdlm_bench_pp_impls) / sizeof(rdlm_bench_pp_impls[0]))

/* ---- the measurement --------------------------------------------------------------- */

/* One turn of side's process (the cycle of rdlm_bench_batches). */
static int rdlm_bench_pp_turn(void *self)
{
    rdlm_bench_pp_side_t *side = self;
    const rdlm_bench_pp_arg_t *a = side->w->arg;

    return a->ops->turn(side->w, side);
}

/* Pin, attach, warm up, then time the turns in batches (one round trip each). */
static int rdlm_bench_pp_body(rdlm_bench_worker_t *w)
{
    const rdlm_bench_pp_arg_t *a = w->arg;
    const rdlm_bench_pp_ops_t *ops = a->ops;
    rdlm_bench_pp_side_t side = {.w = w};
    rdlm_bench_part_t p = {.self = &side,
                           .cycle = rdlm_bench_pp_turn,
                           .batch = RDLM_BENCH_PP_BATCH,
                           .deadline_ns = UINT64_MAX};
    rdlm_bench_tally_t t = {0};
    rdlm_stats_t before;
    rdlm_stats_t after;
    int have_stats;
    uint64_t taken_before;

    if (ops->attach(w, &side) != 0) {
        return -1;
    }
    if (rdlm_bench_batches(&p, a->lock.warmup, &t) != 0) {
        goto err_detach;
    }
    have_stats = side.lock != NULL && a->lock.ops->stats(side.lock, &before) == 0;
    if (rdlm_bench_worker_start(w) != 0) {
        goto err_detach;
    }
    taken_before = side.taken;
    t.ops = 0;
    p.sampler = &w->sampler;
    if (rdlm_bench_batches(&p, a->lock.iterations, &t) != 0) {
        goto err_detach;
    }
    rdlm_bench_worker_end(w, t.ops);
    w->slot->values[0] = (double)(side.taken - a->lock.iterations);
    w->slot->values[1] = (double)(side.taken - taken_before - a->lock.iterations);
    if (have_stats && a->lock.ops->stats(side.lock, &after) == 0) {
        rdlm_bench_worker_stats(w, &before, &after);
    }
    ops->detach(w, &side);
    return 0;

err_detach:
    ops->detach(w, &side);
    return -1;
}

typedef struct rdlm_bench_pp_ctx {
    rdlm_bench_report_t *report;
    rdlm_bench_pp_arg_t arg; /* ops set per round */
    rdlm_bench_measure_t *measure[RDLM_BENCH_PP_NIMPL];
    rdlm_stats_t rdlm_stats; /* summed over rounds and processes */
    uint64_t out_of_turn;    /* rdlm's measured sections after its own, over rounds */
} rdlm_bench_pp_ctx_t;

static int rdlm_bench_pp_round(uint32_t impl, uint32_t round, void *ctx)
{
    rdlm_bench_pp_ctx_t *c = ctx;
    rdlm_bench_pp_arg_t arg = c->arg;
    rdlm_bench_run_params_t p = {
        .nprocs = 2,
        .sample_cap = RDLM_BENCH_PP_SAMPLES,
        .body = rdlm_bench_pp_body,
        .verbose = c->report->opts->verbose,
    };
    rdlm_bench_outcome_t out;
    rdlm_bench_summary_t pct;
    uint64_t iterations = arg.lock.iterations;
    double ns;

    arg.ops = rdlm_bench_pp_impls[impl];
    p.data_check = arg.ops->check;
    if (rdlm_bench_lock_run(&p, &arg, sizeof(rdlm_bench_pp_word_t), &out) != 0) {
        return -1;
    }
    ns = (double)(out.slots[0].t_end_ns - out.slots[0].t_start_ns) /
         (2.0 * (double)iterations);
    rdlm_bench_outcome_percentiles(&out, 1.0 / (2000.0 * RDLM_BENCH_PP_BATCH), 0, &pct);
    rdlm_bench_measure_round(c->measure[impl], ns, &pct);
    if (out.has_stats) {
        rdlm_bench_stats_add(&c->rdlm_stats, &out.stats, 1);
        c->out_of_turn += (uint64_t)rdlm_bench_outcome_sum(&out, 1);
    }
    rdlm_bench_report_round(c->report, round, "%-5s %.1f ns per hand-off, p99 %.1f ns\n",
                            arg.ops->name, ns, pct.p99 * 1000.0);
    rdlm_bench_outcome_free(&out);
    return 0;
}

static int rdlm_bench_pp_run(rdlm_bench_report_t *r)
{
    const rdlm_bench_opts_t *o = r->opts;
    const char *bench = rdlm_bench_def_cas_pingpong.name;
    rdlm_bench_pp_ctx_t c = {
        .report = r,
        .arg.lock = {.ops = &rdlm_bench_lock_rdlm,
                     .iterations = rdlm_bench_opts_iterations(o, RDLM_BENCH_PP_ITERATIONS),
                     .warmup = rdlm_bench_opts_warmup(o, RDLM_BENCH_PP_WARMUP)},
    };
    const rdlm_bench_measure_t *rdlm;
    const rdlm_bench_measure_t *cas;
    uint32_t k;

    int cpu[2] = {rdlm_bench_cpu_of(0, 2), rdlm_bench_cpu_of(1, 2)}; /* workers' pins */

    if (cpu[1] < 0) {
        rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_SKIP,
                               "fewer than 2 CPUs to run on (sched_getaffinity): two "
                               "spinning processes on one CPU take turns by time slices");
        return 0;
    }
    rdlm_bench_report_note(
        r, bench, RDLM_BENCH_NOTE_PARAMS,
        "2 processes pinned to CPUs %d and %d (sched_setaffinity); %" PRIu64
        " round trips after %" PRIu64 " warm-up, %u rounds; ns per "
        "one-way hand-off = round trip / 2; p50/p99 over %u-round-trip "
        "batches",
        cpu[0], cpu[1], c.arg.lock.iterations, c.arg.lock.warmup, o->rounds,
        RDLM_BENCH_PP_BATCH);
    for (k = 0; k < RDLM_BENCH_PP_NIMPL; k++) {
        rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_PARAMS, "%s: %s",
                               rdlm_bench_pp_impls[k]->name,
                               rdlm_bench_pp_impls[k]->description);
        c.measure[k] = rdlm_bench_report_measure(r, bench, "one-way hand-off",
                                                 rdlm_bench_pp_impls[k]->name, 2, "ns");
        if (c.measure[k] == NULL) {
            return -1;
        }
    }
    if (rdlm_bench_alternate(RDLM_BENCH_PP_NIMPL, o->rounds, rdlm_bench_pp_round, &c) !=
        0) {
        return -1;
    }
    rdlm_bench_measures_finish(c.measure, RDLM_BENCH_PP_NIMPL);
    /* [0] is rdlm, [1] cas */
    rdlm = c.measure[0];
    cas = c.measure[1];
    rdlm_bench_report_compare(r, rdlm, cas, "cas floor", RDLM_BENCH_TARGET_AT_MOST, 1.6);
    rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_INFO,
                           "one-way hand-off, ns, p50 / p99 of batches: rdlm %.1f / %.1f, "
                           "cas %.1f / %.1f; rdlm hand-off / CAS ping-pong floor %.2f",
                           rdlm->p50 * 1000.0, rdlm->p99 * 1000.0, cas->p50 * 1000.0,
                           cas->p99 * 1000.0, rdlm->median / cas->median);
    rdlm_bench_report_note(
        r, bench, RDLM_BENCH_NOTE_INFO,
        "rdlm statistics over all rounds: acquires %" PRIu64 ", contended %" PRIu64
        ", parks %" PRIu64 "; sections out of turn %" PRIu64 " (%.3f per hand-off)",
        c.rdlm_stats.acquires, c.rdlm_stats.contended, c.rdlm_stats.parks, c.out_of_turn,
        (double)c.out_of_turn / (2.0 * (double)c.arg.lock.iterations * (double)o->rounds));
    return 0;
}

const rdlm_bench_def_t rdlm_bench_def_cas_pingpong = {
    .name = "cas-pingpong",
    .title = "one-way hand-off between 2 pinned processes: rdlm lock vs CAS ping-pong "
             "(the floor)",
    .default_procs = rdlm_bench_pp_procs,
    .ndefault_procs = sizeof(rdlm_bench_pp_procs) / sizeof(rdlm_bench_pp_procs[0]),
    .run = rdlm_bench_pp_run,
};
