/*
 * dist-counter: rdlm's cross-node counter (and semaphore) throughput beside Open MPI's
 * MPI_Fetch_and_op, measured by rdlm-mpi-lock-bench --mode counter (mpi_lock_bench.c,
 * which documents the measurement) in one mpirun that alternates them round by round,
 * on one machine split into 2 virtual nodes (RDLM_VIRTUAL_NODES=2), everything over
 * TCP (UCX_TLS=tcp,self; pml ob1, btl self,tcp, osc pt2pt). Every rank loops one
 * operation for a window; figure: all ranks' operations per second. Issue 5:
 *
 *   C1  rdlm_counter_fetch_add(c, 1)  >= 3 x  MPI_Fetch_and_op(1, MPI_SUM) +
 *       MPI_Win_flush on a word at one rank (MPI_Win_lock_all epoch), with rdlm's home
 *       operations per fetch-add and the requests served combined (rdlm_ctx_stats
 *       summed over ranks): node-level combining
 *   C2  the same on a sharded counter, beside the same baseline (no target)
 *   C3  rdlm_sem_acquire(1) + rdlm_sem_release(1), 2 permits: at most 3 home
 *       operations per acquire + release (issue 17)
 *   and (issue 17) the off-node ranks' fetch-adds >= 1.0 x MPI_Fetch_and_op's
 *
 * The program fails the run if a counter differs from the fetch-adds made, if two
 * fetch-adds got the same old value, or if the semaphore let a third holder in.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench_dist.h"
#include "benchmarks.h"
#include "mpi_result.h"

#define RDLM_BENCH_DK_DURATION_MS 500u
#define RDLM_BENCH_DK_WARMUP 100u
#define RDLM_BENCH_DK_TARGET 3.0         /* rdlm / MPI_Fetch_and_op, at least */
#define RDLM_BENCH_DK_OFFNODE_TARGET 1.0 /* the same, off the counter's node */
#define RDLM_BENCH_DK_SEM_HOME_OPS 3.0   /* per acquire + release, at most */
#define RDLM_BENCH_DK_NIMPL 4u

enum {
    RDLM_BENCH_DK_FADD,
    RDLM_BENCH_DK_MPI,
    RDLM_BENCH_DK_SHARDED,
    RDLM_BENCH_DK_SEM,
    RDLM_BENCH_DK_OFF_FADD, /* the part of [FADD] and [MPI] made off the counter's node */
    RDLM_BENCH_DK_OFF_MPI,
    RDLM_BENCH_DK_NROWS
};

static const rdlm_bench_dist_impl_t rdlm_bench_dk_impls[RDLM_BENCH_DK_NIMPL] = {
    {"rdlm_fadd", "rdlm", "fetch-add"},
    {"mpi_fetch_op", "MPI_Fetch_and_op", "fetch-add"},
    {"rdlm_sharded", "rdlm", "sharded fetch-add"},
    {"rdlm_sem", "rdlm", "sem acq+rel, N=2"},
};

static const rdlm_bench_dist_cmp_t rdlm_bench_dk_cmps[] = {
    {RDLM_BENCH_DK_FADD, RDLM_BENCH_DK_MPI, RDLM_BENCH_TARGET_AT_LEAST,
     RDLM_BENCH_DK_TARGET, NULL},
    {RDLM_BENCH_DK_OFF_FADD, RDLM_BENCH_DK_OFF_MPI, RDLM_BENCH_TARGET_AT_LEAST,
     RDLM_BENCH_DK_OFFNODE_TARGET, NULL},
    {RDLM_BENCH_DK_SHARDED, RDLM_BENCH_DK_MPI, RDLM_BENCH_TARGET_NONE, 0, NULL},
    {RDLM_BENCH_DK_SEM, -1, RDLM_BENCH_TARGET_NONE, 0, NULL},
};

/* Every implementation's "value", then the part of the fetch-add figures ([0] and
 * [1]) made by the ranks off the node of the counter word (rdlm's and MPI's are in
 * the same process): what crossed nodes. rdlm's fetch-add rounds are required. */
static const rdlm_bench_dist_table_t rdlm_bench_dk_table = {
    .impls = rdlm_bench_dk_impls,
    .figs = {{NULL, NULL, RDLM_BENCH_DK_NIMPL}, {"offnode_kops", "fetch-add off-node", 2}},
    .nrequired = 1,
    .cmps = rdlm_bench_dk_cmps,
    .ncmps = sizeof(rdlm_bench_dk_cmps) / sizeof(rdlm_bench_dk_cmps[0]),
    .unit = "kops/s"};

/* The rows of rdlm's remote operations per operation of implementation k: home
 * operations, then (counters) requests served combined. */
static const char *const rdlm_bench_dk_ops_metrics[RDLM_BENCH_DK_NIMPL][2] = {
    [RDLM_BENCH_DK_FADD] = {"home ops/fetch-add", "combined/fetch-add"},
    [RDLM_BENCH_DK_SHARDED] = {"sharded home ops/op", "sharded combined/op"},
    [RDLM_BENCH_DK_SEM] = {"sem home ops/acq+rel", NULL},
};

/* The semaphore's home operations per acquire + release: at most 3 (issue 17). */
static const rdlm_bench_dist_base_t rdlm_bench_dk_sem_base = {
    "3 (issue 17)", RDLM_BENCH_DK_SEM_HOME_OPS, RDLM_BENCH_TARGET_AT_MOST, 1.0};

/* rdlm's remote operations per operation of implementation k, from its statistics
 * (timed operations only, all ranks and rounds): rows and a note. */
static void rdlm_bench_dk_remote_ops(rdlm_bench_report_t *r, const char *out,
                                     uint32_t procs, uint32_t k)
{
    const char *bench = rdlm_bench_def_dist_counter.name;
    const rdlm_bench_dist_impl_t *d = &rdlm_bench_dk_impls[k];
    const char *const *metric = rdlm_bench_dk_ops_metrics[k];
    double s[RDLM_BENCH_NSTATS];
    double ops, home, peer, combined;

    if (rdlm_bench_dist_stats(out, d->key, s) != 0 || s[RDLM_BENCH_ST_OPS] <= 0) {
        rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_SKIP, "%s %s: no statistics",
                               d->impl, d->metric);
        return;
    }
    ops = s[RDLM_BENCH_ST_OPS];
    home = s[RDLM_BENCH_ST_HOME] / ops;
    peer = s[RDLM_BENCH_ST_PEER] / ops;
    combined = s[RDLM_BENCH_ST_COMBINED] / ops;
    rdlm_bench_dist_once(r, bench, procs, metric[0], "ops", home,
                         k == RDLM_BENCH_DK_SEM ? &rdlm_bench_dk_sem_base : NULL);
    if (metric[1] == NULL) {
        rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_INFO,
                               "%s %s: %.0f timed, each %.3f home and %.3f peer operations",
                               d->impl, d->metric, ops, home, peer);
        return;
    }
    rdlm_bench_dist_once(r, bench, procs, metric[1], "ops", combined, NULL);
    rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_INFO,
                           "%s %s: %.0f timed; each %.3f home operations and %.3f requests "
                           "served in another rank's combined one (%.3f together; no "
                           "combining: 1 and 0)",
                           d->impl, d->metric, ops, home, combined, home + combined);
}

static int rdlm_bench_dk_procs(rdlm_bench_report_t *r, uint32_t procs)
{
    const rdlm_bench_opts_t *o = r->opts;
    const char *bench = rdlm_bench_def_dist_counter.name;
    uint32_t dur_ms = rdlm_bench_opts_duration_ms(o, RDLM_BENCH_DK_DURATION_MS);
    rdlm_bench_dist_args_t args = {0};
    /* every phase: its window, at most 0.5 s of warm-up, the checks */
    rdlm_bench_mpi_job_t job = rdlm_bench_dist_job_2nodes(
        o, procs, args.argv, 60 + o->rounds * RDLM_BENCH_DK_NIMPL * (dur_ms / 1000 + 3));
    rdlm_bench_measure_t *m[RDLM_BENCH_DK_NROWS];
    char *out;

    rdlm_bench_dist_arg(&args, "--mode", "counter");
    rdlm_bench_dist_arg(&args, "-r", "%u", o->rounds);
    rdlm_bench_dist_window(&args, o, RDLM_BENCH_DK_DURATION_MS, RDLM_BENCH_DK_WARMUP);
    if (rdlm_bench_dist_job(r, bench, &job, &rdlm_bench_dk_table, procs, m, &out) != 0) {
        return -1;
    }
    rdlm_bench_dk_remote_ops(r, out, procs, RDLM_BENCH_DK_FADD);
    rdlm_bench_dk_remote_ops(r, out, procs, RDLM_BENCH_DK_SHARDED);
    rdlm_bench_dk_remote_ops(r, out, procs, RDLM_BENCH_DK_SEM);
    rdlm_bench_dist_notes(r, bench, out); /* the run's facts, the checks it made */
    free(out);
    return 0;
}

static int rdlm_bench_dk_run(rdlm_bench_report_t *r)
{
    return rdlm_bench_dist_each(
        r, &rdlm_bench_def_dist_counter, 2,
        "one machine as 2 nodes; every rank loops one operation for the window; rdlm and "
        "MPI alternate in every round inside one mpirun; figure: all ranks' operations / "
        "longest elapsed; p99: one operation in 16",
        rdlm_bench_dk_procs);
}

const rdlm_bench_def_t rdlm_bench_def_dist_counter = {
    .name = "dist-counter",
    .title = "cross-node counter throughput (2 virtual nodes, TCP) vs MPI_Fetch_and_op; "
             "sharded counter; semaphore",
    .default_procs = rdlm_bench_dist_procs,
    .ndefault_procs = sizeof(rdlm_bench_dist_procs) / sizeof(rdlm_bench_dist_procs[0]),
    .opt_in = 1,
    .run = rdlm_bench_dk_run,
};
