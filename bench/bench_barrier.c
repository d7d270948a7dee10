/*
 * barrier: N processes each run `iterations` rdlm barrier waits, stamping the clock
 * after every one. Figure: max over processes of elapsed / iterations (us per
 * barrier); p99: max over processes of each one's p99 of single barriers. Baseline:
 * MPI_Barrier on N ranks (Open MPI, shared memory), measured the same way by
 * rdlm-mpi-barrier-bench --impls mpi under mpirun, alternating with rdlm round by
 * round.
 * Target (issue): 2 processes, rdlm <= 1.0 x MPI_Barrier.
 *
 * Time caps (2 s measured, 0.5 s warm-up; the MPI baseline has the same): a barrier
 * whose waiters spin while their peer is descheduled costs a whole timeslice, so on
 * a busy machine 10,000 of them can take minutes. Every 100 barriers rank 0 checks
 * the clock and, past the cap, writes "stop" into the data mapping before its next
 * wait; everyone reads that word right after that wait (the barrier orders the write
 * before the read), so all stop after the same barrier.
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_dist.h"
#include "benchmarks.h"
#include "clock.h"
#include "rounds.h"
#include "workers.h"

#define RDLM_BENCH_BAR_ITERATIONS 10000u
#define RDLM_BENCH_BAR_WARMUP 1000u
#define RDLM_BENCH_BAR_SAMPLES 16384u
#define RDLM_BENCH_BAR_NAME "bench.barrier"
#define RDLM_BENCH_BAR_CHUNK 100u      /* barriers between stop decisions (>= 2) */
#define RDLM_BENCH_BAR_CAP_NS 2000000000ull       /* per measurement */
#define RDLM_BENCH_BAR_WARMUP_CAP_NS 500000000ull /* per warm-up */

static const uint32_t rdlm_bench_bar_procs[] = {2};

typedef struct rdlm_bench_bar_arg {
    uint64_t iterations;
    uint64_t warmup;
} rdlm_bench_bar_arg_t;

/* The data mapping: rank 0's stop decisions, one word per phase, written only before
 * a chunk-boundary wait and read only after one. */
typedef struct rdlm_bench_bar_data {
    _Alignas(64) _Atomic uint32_t stop_warmup;
    _Atomic uint32_t stop_measure;
} rdlm_bench_bar_data_t;

/*
 * Up to n barriers, ended early at a chunk boundary once rank 0 has spent cap_ns in
 * this phase. stop is this phase's own word. With sampler, the time from the previous
 * stamp (start: *t_prev_p) to the end of each barrier is sampled. Returns the number
 * of barriers done, or -1 with *st_p set.
 */
static int64_t rdlm_bench_bar_phase(rdlm_bench_worker_t *w, rdlm_barrier_h barrier,
                                    uint64_t n, uint64_t cap_ns, _Atomic uint32_t *stop,
                                    rdlm_bench_sampler_t *sampler, uint64_t *t_prev_p,
                                    rdlm_status_t *st_p)
{
    uint64_t t0 = *t_prev_p;
    uint64_t t_prev = t0;
    uint64_t t;
    uint64_t k;
    int boundary;

    for (k = 0; k < n; k++) {
        boundary = (k + 1) % RDLM_BENCH_BAR_CHUNK == 0;
        if (boundary && w->rank == 0 && t_prev - t0 > cap_ns) {
            atomic_store_explicit(stop, 1, memory_order_relaxed); /* ordered by the wait */
        }
        if ((*st_p = rdlm_barrier_wait(barrier, RDLM_TIMEOUT_INFINITE)) != RDLM_OK) {
            return -1;
        }
        if (sampler != NULL || w->rank == 0) {
            t = rdlm_bench_now_ns();
            if (sampler != NULL) {
                rdlm_bench_sampler_add(sampler, t - t_prev);
            }
            t_prev = t;
        }
        if (boundary && atomic_load_explicit(stop, memory_order_relaxed) != 0) {
            k++;
            break;
        }
    }
    *t_prev_p = t_prev;
    return (int64_t)k;
}

static int rdlm_bench_bar_body(rdlm_bench_worker_t *w)
{
    const rdlm_bench_bar_arg_t *a = w->arg;
    rdlm_bench_bar_data_t *data = w->data;
    rdlm_ctx_params_t cp = {.field_mask = RDLM_CTX_FIELD_JOB, .job = w->job};
    rdlm_barrier_h barrier;
    rdlm_stats_t before;
    rdlm_stats_t after;
    rdlm_status_t st;
    rdlm_ctx_h ctx;
    uint64_t t_prev;
    int64_t done;

    st = rdlm_ctx_create(&cp, &ctx);
    if (st != RDLM_OK) {
        return rdlm_bench_worker_fail(w, "rdlm_ctx_create(job %s): %s", w->job,
                                      rdlm_status_name(st));
    }
    st = rdlm_barrier_open(ctx, RDLM_BENCH_BAR_NAME, w->nprocs, &barrier);
    if (st != RDLM_OK) {
        rdlm_bench_worker_fail(w, "rdlm_barrier_open: %s", rdlm_status_name(st));
        goto err_destroy_ctx;
    }
    t_prev = rdlm_bench_now_ns();
    if (rdlm_bench_bar_phase(w, barrier, a->warmup, RDLM_BENCH_BAR_WARMUP_CAP_NS,
                             &data->stop_warmup, NULL, &t_prev, &st) < 0) {
        goto err_wait;
    }
    rdlm_ctx_stats(ctx, &before);
    if (rdlm_bench_worker_start(w) != 0) {
        goto err_close;
    }
    t_prev = w->slot->t_start_ns;
    done = rdlm_bench_bar_phase(w, barrier, a->iterations, RDLM_BENCH_BAR_CAP_NS,
                                &data->stop_measure, &w->sampler, &t_prev, &st);
    if (done < 0) {
        goto err_wait;
    }
    rdlm_bench_worker_end(w, (uint64_t)done);
    if (rdlm_ctx_stats(ctx, &after) == RDLM_OK) {
        rdlm_bench_worker_stats(w, &before, &after);
    }
    rdlm_barrier_close(barrier);
    rdlm_ctx_destroy(ctx);
    return 0;

err_wait:
    rdlm_bench_worker_fail(w, "rdlm_barrier_wait: %s", rdlm_status_name(st));
err_close:
    rdlm_barrier_close(barrier);
err_destroy_ctx:
    rdlm_ctx_destroy(ctx);
    return -1;
}

enum { RDLM_BENCH_BAR_RDLM, RDLM_BENCH_BAR_MPI, RDLM_BENCH_BAR_NIMPL };

typedef struct rdlm_bench_bar_ctx {
    rdlm_bench_report_t *report;
    uint32_t nprocs;
    rdlm_bench_bar_arg_t arg;
    int have_mpi;
    rdlm_bench_measure_t *measure[RDLM_BENCH_BAR_NIMPL];
    rdlm_stats_t rdlm_stats;
    uint32_t capped;     /* rdlm rounds stopped by the time cap */
    uint32_t mpi_capped; /* MPI rounds stopped by the time cap */
    uint64_t min_done; /* fewest barriers in such a round */
} rdlm_bench_bar_ctx_t;

static int rdlm_bench_bar_rdlm_round(rdlm_bench_bar_ctx_t *c, uint32_t round)
{
    rdlm_bench_run_params_t p = {
        .nprocs = c->nprocs,
        .sample_cap = RDLM_BENCH_BAR_SAMPLES,
        .data_size = sizeof(rdlm_bench_bar_data_t),
        .body = rdlm_bench_bar_body,
        .arg = &c->arg,
        .verbose = c->report->opts->verbose,
    };
    rdlm_bench_outcome_t out;
    rdlm_bench_summary_t pct;
    double us;

    if (rdlm_bench_run(&p, &out) != 0) {
        return -1;
    }
    if (out.slots[0].ops == 0) {
        fprintf(stderr, "rdlm-bench: rdlm barrier: no barrier completed\n");
        rdlm_bench_outcome_free(&out);
        return -1;
    }
    if (out.slots[0].ops < c->arg.iterations) {
        c->capped++;
        c->min_done = c->min_done && c->min_done < out.slots[0].ops ? c->min_done
                                                                     : out.slots[0].ops;
    }
    us = (double)out.max_elapsed_ns / (double)out.slots[0].ops / 1000.0;
    rdlm_bench_outcome_percentiles(&out, 1.0 / 1000.0, 1, &pct);
    rdlm_bench_measure_round(c->measure[RDLM_BENCH_BAR_RDLM], us, &pct);
    rdlm_bench_stats_add(&c->rdlm_stats, &out.stats, 1); /* zero without stats */
    rdlm_bench_report_round(c->report, round,
                            "rdlm barrier %2u procs %.3f us, p99 %.2f us\n", c->nprocs, us,
                            pct.p99);
    rdlm_bench_outcome_free(&out);
    return 0;
}

/* One round of the MPI_Barrier baseline: rdlm-mpi-barrier-bench --impls mpi over
 * shared memory, -i, -x and the time cap as rdlm's. */
static int rdlm_bench_bar_mpi_round(rdlm_bench_bar_ctx_t *c, uint32_t round)
{
    static const char *const mca[] = {"pml", "ob1", "btl", "self,vader", NULL};
    rdlm_bench_measure_t *m = c->measure[RDLM_BENCH_BAR_MPI];
    rdlm_bench_dist_args_t args = {0};
    rdlm_bench_mpi_job_t job = {.program =
                                    rdlm_bench_mpi_find(RDLM_BENCH_MPI_BARRIER_BENCH),
                                .nprocs = c->nprocs,
                                .args = args.argv,
                                .mca = mca,
                                .verbose = c->report->opts->verbose};
    double done = 0;
    char *out;

    rdlm_bench_dist_arg(&args, "--impls", "mpi");
    rdlm_bench_dist_arg(&args, "-r", "1");
    rdlm_bench_dist_arg(&args, "-i", "%" PRIu64, c->arg.iterations);
    rdlm_bench_dist_arg(&args, "-x", "%" PRIu64, c->arg.warmup);
    rdlm_bench_dist_arg(&args, "-t", "%u", (uint32_t)(RDLM_BENCH_BAR_CAP_NS / 1000000u));
    if ((out = rdlm_bench_dist_run("MPI_Barrier baseline", &job)) == NULL) {
        return -1;
    }
    if (rdlm_bench_result_get1(out, "mpi", "ops", &done) != 0 ||
        rdlm_bench_dist_rounds(out, "mpi", "value", m) != 1) {
        fprintf(stderr, "rdlm-bench: MPI_Barrier baseline: no result lines: %.600s\n", out);
        free(out);
        return -1;
    }
    free(out);
    if (done < (double)c->arg.iterations) {
        c->mpi_capped++;
    }
    rdlm_bench_report_round(c->report, round,
                            "MPI_Barrier  %2u procs %.3f us, p99 %.2f us\n", c->nprocs,
                            m->round[m->nrounds - 1], m->round_pct[m->nrounds - 1][2]);
    return 0;
}

static int rdlm_bench_bar_round(uint32_t impl, uint32_t round, void *ctx)
{
    rdlm_bench_bar_ctx_t *c = ctx;

    if (impl == RDLM_BENCH_BAR_RDLM) {
        return rdlm_bench_bar_rdlm_round(c, round);
    }
    return c->have_mpi ? rdlm_bench_bar_mpi_round(c, round) : 0;
}

static int rdlm_bench_bar_run(rdlm_bench_report_t *r)
{
    const rdlm_bench_opts_t *o = r->opts;
    const char *bench = rdlm_bench_def_barrier.name;
    const uint32_t *procs;
    uint32_t nprocs;
    char why[256];
    int have_mpi = rdlm_bench_mpi_can_run(rdlm_bench_mpi_find(RDLM_BENCH_MPI_BARRIER_BENCH),
                                          why, sizeof(why));
    uint32_t n;

    nprocs = rdlm_bench_opts_procs(o, rdlm_bench_bar_procs,
                                   sizeof(rdlm_bench_bar_procs) / sizeof(uint32_t), &procs);
    rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_PARAMS,
                           "%" PRIu64 " barriers after %" PRIu64
                           " warm-up, %u rounds; us per "
                           "barrier = max over processes of elapsed/iterations",
                           rdlm_bench_opts_iterations(o, RDLM_BENCH_BAR_ITERATIONS),
                           rdlm_bench_opts_warmup(o, RDLM_BENCH_BAR_WARMUP), o->rounds);
    if (have_mpi) {
        rdlm_bench_report_note(
            r, bench, RDLM_BENCH_NOTE_PARAMS,
            "baseline: mpirun -np N --oversubscribe --bind-to none --mca "
            "pml ob1 --mca btl self,vader rdlm-mpi-barrier-bench --impls "
            "mpi (rdlm processes are not bound either)");
    } else {
        rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_SKIP,
                               "MPI_Barrier baseline not measured: %s", why);
    }
    for (n = 0; n < nprocs; n++) {
        rdlm_bench_bar_ctx_t c = {
            .report = r,
            .nprocs = procs[n],
            .arg = {.iterations = rdlm_bench_opts_iterations(o, RDLM_BENCH_BAR_ITERATIONS),
                    .warmup = rdlm_bench_opts_warmup(o, RDLM_BENCH_BAR_WARMUP)},
            .have_mpi = have_mpi,
        };

        c.measure[RDLM_BENCH_BAR_RDLM] =
            rdlm_bench_report_measure(r, bench, "barrier", "rdlm", procs[n], "us");
        if (have_mpi) {
            c.measure[RDLM_BENCH_BAR_MPI] =
                rdlm_bench_report_measure(r, bench, "barrier", "MPI_Barrier", procs[n], "us");
        }
        if (c.measure[RDLM_BENCH_BAR_RDLM] == NULL ||
            (have_mpi && c.measure[RDLM_BENCH_BAR_MPI] == NULL)) {
            return -1;
        }
        if (rdlm_bench_alternate(RDLM_BENCH_BAR_NIMPL, o->rounds, rdlm_bench_bar_round,
                                 &c) != 0) {
            return -1;
        }
        rdlm_bench_measure_finish(c.measure[RDLM_BENCH_BAR_RDLM]);
        if (have_mpi) {
            rdlm_bench_measure_finish(c.measure[RDLM_BENCH_BAR_MPI]);
            rdlm_bench_report_compare(r, c.measure[RDLM_BENCH_BAR_RDLM],
                                      c.measure[RDLM_BENCH_BAR_MPI], NULL,
                                      procs[n] == 2 ? RDLM_BENCH_TARGET_AT_MOST
                                                    : RDLM_BENCH_TARGET_NONE,
                                      1.0);
        } else {
            rdlm_bench_report_compare(r, c.measure[RDLM_BENCH_BAR_RDLM], NULL, NULL,
                                      RDLM_BENCH_TARGET_NONE, 0);
        }
        if (c.capped > 0) {
            rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_INFO,
                                   "rdlm, %u procs: %u of %u rounds hit the %.0f s time cap "
                                   "(as few as %" PRIu64 " barriers): slow barrier or busy "
                                   "machine",
                                   procs[n], c.capped, o->rounds,
                                   RDLM_BENCH_BAR_CAP_NS / 1e9, c.min_done);
        }
        if (c.mpi_capped > 0) {
            rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_INFO,
                                   "MPI_Barrier, %u procs: %u of %u rounds hit the %.0f s "
                                   "time cap",
                                   procs[n], c.mpi_capped, o->rounds,
                                   RDLM_BENCH_BAR_CAP_NS / 1e9);
        }
        rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_INFO,
                               "rdlm statistics, %u procs, summed over processes and rounds: "
                               "contended %" PRIu64 ", parks %" PRIu64
                               ", wakes %" PRIu64,
                               procs[n], c.rdlm_stats.contended, c.rdlm_stats.parks,
                               c.rdlm_stats.wakes);
    }
    return 0;
}

const rdlm_bench_def_t rdlm_bench_def_barrier = {
    .name = "barrier",
    .title = "rdlm barrier vs MPI_Barrier (Open MPI, shared memory)",
    .default_procs = rdlm_bench_bar_procs,
    .ndefault_procs = sizeof(rdlm_bench_bar_procs) / sizeof(rdlm_bench_bar_procs[0]),
    .run = rdlm_bench_bar_run,
};
