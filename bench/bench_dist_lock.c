/*
 * dist-lock, dist-contended, dist-memory: rdlm's cross-node exclusive lock, measured by
 * rdlm-mpi-lock-bench (mpi_lock_bench.c, which documents the measurements) under
 * mpirun on one machine split into 2 virtual nodes (RDLM_VIRTUAL_NODES=2; dist-memory:
 * one node per rank), over TCP for everything: rdlm's and the raw baseline's UCX
 * (UCX_TLS=tcp,self) and Open MPI's one-sided baselines (pml ob1, btl self,tcp, osc pt2pt).
 * Targets (issue 4):
 *
 *   dist-lock       rdlm acquire+release, lock homed on the other node
 *                     <= 1.2 x two raw fetching ucp atomics (SWAP + CSWAP)
 *                     <= 1.2 x two raw verbs CASes on a queue pair of their own
 *                       (where a device exists: the soft-RoCE VM of tests/rxe with
 *                       RDLM_TRANSPORT=verbs; issue 17)
 *                     <= 1/3 x MPI_Win_lock(EXCLUSIVE) + MPI_Fetch_and_op + unlock
 *                     <= 1/2 x an MPI_Compare_and_swap spinlock
 *                   hand-off inside the node (its cohort holds the global word)
 *                     <= 1.5 x the same hand-off on a node-only rdlm lock,
 *                     with 0 remote operations in those acquires
 *   dist-contended  throughput of N ranks (default 4 = 2 nodes x 2) on one lock:
 *                     RDLM_COHORT_BOUND default (64) >= 2 x RDLM_COHORT_BOUND=1;
 *                     home-side remote operations per acquire+release reported
 *   dist-memory     (reported, no target) home bytes per lock; resident growth of
 *                     rdlm_mpi_ctx_create and after using locks homed on more nodes
 *
 * dist-lock is one mpirun, which alternates rdlm and the baselines round by round
 * itself. The cohort bound is read at context creation, so dist-contended runs one
 * mpirun per round and bound, alternating the bounds (default, 1), (1, default), ...
 *
 * What these share with dist-counter (bench_dist_counter.c) is in bench_dist.c.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench_dist.h"
#include "benchmarks.h"
#include "mpi_result.h"
#include "rounds.h"

#define RDLM_BENCH_DL_ITERATIONS 1000u
#define RDLM_BENCH_DL_WARMUP 100u
#define RDLM_BENCH_DL_CAP_MS 2000u
#define RDLM_BENCH_DC_DURATION_MS 500u
#define RDLM_BENCH_DC_WARMUP 100u
#define RDLM_BENCH_DC_TIMEOUT_S 60u
#define RDLM_BENCH_DC_COHORT_TARGET 2.0
#define RDLM_BENCH_DL_NIMPL 8u

enum {
    RDLM_BENCH_DL_RDLM,
    RDLM_BENCH_DL_UCP,
    RDLM_BENCH_DL_UCP_WAKE,
    RDLM_BENCH_DL_WIN,
    RDLM_BENCH_DL_CAS,
    RDLM_BENCH_DL_COHORT,
    RDLM_BENCH_DL_NODE,
    RDLM_BENCH_DL_VERBS
};

/* The program's implementations: its name, ours in the report, the metric. */
static const rdlm_bench_dist_impl_t rdlm_bench_dl_impls[RDLM_BENCH_DL_NIMPL] = {
    {"rdlm", "rdlm", "acq+rel remote home"},
    {"ucp_amo", "ucp SWAP+CSWAP", "acq+rel remote home"},
    {"ucp_amo_wake", "ucp, target fd", "acq+rel remote home"},
    {"mpi_win_lock", "MPI_Win_lock", "acq+rel remote home"},
    {"mpi_cas_spin", "MPI CAS spin", "acq+rel remote home"},
    {"rdlm_cohort", "rdlm", "hand-off in node"},
    {"rdlm_node", "rdlm node-only", "hand-off in node"},
    {"verbs_amo", "verbs CAS+CAS", "acq+rel remote home"},
};

#define RDLM_BENCH_DL_NO_PARTNER "no second rank on rank 0's node"

/* The comparisons of dist-lock: ours, baseline, target (ratio at most). */
static const rdlm_bench_dist_cmp_t rdlm_bench_dl_cmps[] = {
    {RDLM_BENCH_DL_RDLM, RDLM_BENCH_DL_UCP, RDLM_BENCH_TARGET_AT_MOST, 1.2,
     RDLM_BENCH_DL_NO_PARTNER},
    {RDLM_BENCH_DL_RDLM, RDLM_BENCH_DL_UCP_WAKE, RDLM_BENCH_TARGET_NONE, 0,
     RDLM_BENCH_DL_NO_PARTNER},
    {RDLM_BENCH_DL_RDLM, RDLM_BENCH_DL_WIN, RDLM_BENCH_TARGET_AT_MOST, 1.0 / 3.0,
     RDLM_BENCH_DL_NO_PARTNER},
    {RDLM_BENCH_DL_RDLM, RDLM_BENCH_DL_CAS, RDLM_BENCH_TARGET_AT_MOST, 0.5,
     RDLM_BENCH_DL_NO_PARTNER},
    {RDLM_BENCH_DL_COHORT, RDLM_BENCH_DL_NODE, RDLM_BENCH_TARGET_AT_MOST, 1.5,
     RDLM_BENCH_DL_NO_PARTNER},
    /* issue 17, where a device exists */
    {RDLM_BENCH_DL_RDLM, RDLM_BENCH_DL_VERBS, RDLM_BENCH_TARGET_AT_MOST, 1.2,
     "no RDMA device, or built without verbs"},
};

/* Every implementation's "value"; rdlm's and the raw ucp one's rounds are required. */
static const rdlm_bench_dist_table_t rdlm_bench_dl_table = {
    .impls = rdlm_bench_dl_impls,
    .figs = {{NULL, NULL, RDLM_BENCH_DL_NIMPL}},
    .nrequired = 2,
    .cmps = rdlm_bench_dl_cmps,
    .ncmps = sizeof(rdlm_bench_dl_cmps) / sizeof(rdlm_bench_dl_cmps[0]),
    .unit = "us"};

/* ---- dist-lock -------------------------------------------------------------------- */

/* The program's findings (the run's facts), then rdlm's remote operations, as notes. */
static void rdlm_bench_dl_notes(rdlm_bench_report_t *r, const char *out, uint32_t procs)
{
    const char *bench = rdlm_bench_def_dist_lock.name;
    double s[RDLM_BENCH_NSTATS];

    rdlm_bench_dist_notes(r, bench, out);
    if (rdlm_bench_dist_stats(out, "rdlm", s) == 0 && s[RDLM_BENCH_ST_ACQ] > 0) {
        double per = (s[RDLM_BENCH_ST_HOME] + s[RDLM_BENCH_ST_PEER]) / s[RDLM_BENCH_ST_ACQ];
        double waited = per - s[RDLM_BENCH_ST_POSTED] / s[RDLM_BENCH_ST_ACQ];

        rdlm_bench_report_note(
            r, bench, RDLM_BENCH_NOTE_INFO,
            "rdlm remote home: %.2f remote operations per acquire+release "
            "(home %.0f, of them posted %.0f, peer %.0f over %.0f cycles; design: 2, "
            "1 waited for over UCX), global acquires %.0f",
            per, s[RDLM_BENCH_ST_HOME], s[RDLM_BENCH_ST_POSTED], s[RDLM_BENCH_ST_PEER],
            s[RDLM_BENCH_ST_ACQ], s[RDLM_BENCH_ST_GLOBAL]);
        rdlm_bench_dist_once(r, bench, procs, "remote ops/acq+rel", "ops", per, NULL);
        rdlm_bench_dist_once(
            r, bench, procs, "waited ops/acq+rel", "ops", waited,
            &(rdlm_bench_dist_base_t){"1 (issue 17)", 1.0, RDLM_BENCH_TARGET_AT_MOST, 1.0});
    }
    if (rdlm_bench_dist_stats(out, "rdlm_cohort", s) == 0) {
        double local = s[RDLM_BENCH_ST_CHECK_LOCAL];
        double rest = s[RDLM_BENCH_ST_CHECK_HANDOFFS] - local;

        rdlm_bench_report_note(
            r, bench, RDLM_BENCH_NOTE_INFO,
            "rdlm hand-off in node: %.0f acquires taken over inside the "
            "node made %.0f remote operations (must be 0: %s); %.0f other "
            "hand-offs went through the global word (cohort bound), mean "
            "%.1f us, not in the figure",
            local, s[RDLM_BENCH_ST_CHECK_REMOTE],
            s[RDLM_BENCH_ST_CHECK_REMOTE] == 0 && local > 0 ? "yes" : "NO", rest,
            rest > 0 ? s[RDLM_BENCH_ST_GLOBAL_NS] / rest / 1000.0 : 0.0);
        rdlm_bench_dist_once(r, bench, procs, "remote ops/handoff", "ops",
                             local > 0 ? s[RDLM_BENCH_ST_CHECK_REMOTE] / local : -1, NULL);
    }
}

static int rdlm_bench_dl_procs(rdlm_bench_report_t *r, uint32_t procs)
{
    const rdlm_bench_opts_t *o = r->opts;
    const char *bench = rdlm_bench_def_dist_lock.name;
    rdlm_bench_dist_args_t args = {0};
    /* worst case: every measurement hits its cap */
    rdlm_bench_mpi_job_t job = rdlm_bench_dist_job_2nodes(
        o, procs, args.argv,
        60 + o->rounds * RDLM_BENCH_DL_NIMPL * (RDLM_BENCH_DL_CAP_MS / 1000 + 2));
    rdlm_bench_measure_t *m[RDLM_BENCH_DL_NIMPL];
    char *out;

    rdlm_bench_dist_arg(&args, "--mode", "uncontended");
    rdlm_bench_dist_counts(&args, o, RDLM_BENCH_DL_ITERATIONS, RDLM_BENCH_DL_WARMUP);
    rdlm_bench_dist_arg(&args, "-r", "%u", o->rounds);
    rdlm_bench_dist_arg(&args, "-t", "%u", RDLM_BENCH_DL_CAP_MS);
    if (rdlm_bench_dist_job(r, bench, &job, &rdlm_bench_dl_table, procs, m, &out) != 0) {
        return -1;
    }
    rdlm_bench_dl_notes(r, out, procs);
    free(out);
    return 0;
}

static int rdlm_bench_dl_run(rdlm_bench_report_t *r)
{
    return rdlm_bench_dist_each(
        r, &rdlm_bench_def_dist_lock, 2,
        "one machine as 2 nodes; rdlm and baselines alternate in every "
        "round inside one mpirun; single-origin figures: us per cycle, "
        "p99 over 10-cycle batches; hand-off: mean release-to-acquire "
        "latency of the pair on rank 0's node, p99 over single hand-offs",
        rdlm_bench_dl_procs);
}

const rdlm_bench_def_t rdlm_bench_def_dist_lock = {
    .name = "dist-lock",
    .title = "cross-node lock (2 virtual nodes, TCP) vs raw ucp atomics, MPI_Win_lock, MPI "
             "CAS spinlock; hand-off in node vs node-only lock",
    .default_procs = rdlm_bench_dist_procs,
    .ndefault_procs = sizeof(rdlm_bench_dist_procs) / sizeof(rdlm_bench_dist_procs[0]),
    .opt_in = 1,
    .run = rdlm_bench_dl_run,
};

/* ---- dist-contended ------------------------------------------------------------------ */

enum { RDLM_BENCH_DC_DEFAULT, RDLM_BENCH_DC_BOUND1, RDLM_BENCH_DC_NIMPL };

typedef struct rdlm_bench_dc_ctx {
    rdlm_bench_report_t *report;
    uint32_t procs;
    rdlm_bench_measure_t *measure[RDLM_BENCH_DC_NIMPL];
    rdlm_bench_measure_t *handoffs[RDLM_BENCH_DC_NIMPL];  /* hand-offs per second */
    double stats[RDLM_BENCH_DC_NIMPL][RDLM_BENCH_NSTATS]; /* summed over rounds */
    double bound[RDLM_BENCH_DC_NIMPL];                    /* as the program reported it */
    char cmd[512];
} rdlm_bench_dc_ctx_t;

/* One mpirun: the default bound or RDLM_COHORT_BOUND=1. */
static int rdlm_bench_dc_round(uint32_t impl, uint32_t round, void *arg)
{
    rdlm_bench_dc_ctx_t *c = arg;
    const rdlm_bench_opts_t *o = c->report->opts;
    rdlm_bench_dist_args_t args = {0};
    static const char *const env_bound1[] = {"UCX_TLS=tcp,self", "RDLM_VIRTUAL_NODES=2",
                                             "RDLM_COHORT_BOUND=1", NULL};
    static const char *const unset_env[] = {"RDLM_UCX_TLS", "RDLM_COHORT_BOUND", NULL};
    rdlm_bench_mpi_job_t job =
        rdlm_bench_dist_job_2nodes(o, c->procs, args.argv, RDLM_BENCH_DC_TIMEOUT_S);
    double s[RDLM_BENCH_NSTATS], bound = -1;
    char *out;
    int k;

    rdlm_bench_dist_arg(&args, "--mode", "contended");
    rdlm_bench_dist_arg(&args, "--impls", "rdlm");
    rdlm_bench_dist_arg(&args, "-r", "1");
    rdlm_bench_dist_window(&args, o, RDLM_BENCH_DC_DURATION_MS, RDLM_BENCH_DC_WARMUP);
    job.env = impl == RDLM_BENCH_DC_DEFAULT ? job.env : env_bound1;
    job.unset_env = unset_env;
    if (round == 0 && impl == RDLM_BENCH_DC_DEFAULT) {
        rdlm_bench_mpi_command(&job, c->cmd, sizeof(c->cmd));
    }
    if ((out = rdlm_bench_dist_run("dist-contended", &job)) == NULL) {
        return -1;
    }
    if (rdlm_bench_result_get1(out, "info", "cohort_bound", &bound) != 0 ||
        rdlm_bench_dist_stats(out, "rdlm", s) != 0 ||
        rdlm_bench_dist_rounds(out, "rdlm", "value", c->measure[impl]) != 1 ||
        rdlm_bench_dist_rounds(out, "rdlm", "handoff_kops", c->handoffs[impl]) != 1) {
        fprintf(stderr, "rdlm-bench: dist-contended: malformed output: %.600s\n", out);
        free(out);
        return -1;
    }
    if (impl == RDLM_BENCH_DC_BOUND1 && bound != 1) {
        fprintf(stderr,
                "rdlm-bench: dist-contended: RDLM_COHORT_BOUND=1 was not applied "
                "(the ranks report %.0f)\n",
                bound);
        free(out);
        return -1;
    }
    c->bound[impl] = bound;
    for (k = 0; k < RDLM_BENCH_NSTATS; k++) {
        c->stats[impl][k] += s[k];
    }
    free(out);
    return 0;
}

static void rdlm_bench_dc_finish(rdlm_bench_dc_ctx_t *c)
{
    rdlm_bench_report_t *r = c->report;
    const char *bench = rdlm_bench_def_dist_contended.name;
    double per[RDLM_BENCH_DC_NIMPL];
    uint32_t k;

    rdlm_bench_measures_finish(c->measure, RDLM_BENCH_DC_NIMPL);
    rdlm_bench_measures_finish(c->handoffs, RDLM_BENCH_DC_NIMPL);
    rdlm_bench_report_compare(r, c->measure[RDLM_BENCH_DC_DEFAULT],
                              c->measure[RDLM_BENCH_DC_BOUND1], "rdlm bound=1",
                              RDLM_BENCH_TARGET_AT_LEAST, RDLM_BENCH_DC_COHORT_TARGET);
    rdlm_bench_report_compare(r, c->handoffs[RDLM_BENCH_DC_DEFAULT],
                              c->handoffs[RDLM_BENCH_DC_BOUND1], "rdlm bound=1",
                              RDLM_BENCH_TARGET_NONE, 0);
    for (k = 0; k < RDLM_BENCH_DC_NIMPL; k++) {
        const double *s = c->stats[k];
        double acq = s[RDLM_BENCH_ST_ACQ] > 0 ? s[RDLM_BENCH_ST_ACQ] : 1;

        per[k] = s[RDLM_BENCH_ST_HOME] / acq;
        rdlm_bench_report_note(
            r, bench, RDLM_BENCH_NOTE_INFO,
            "%u ranks, cohort bound %.0f: home ops per acquire+release "
            "%.3f, peer ops %.3f; acquires %.0f: global %.0f%%, local "
            "hand-offs %.0f%%; critical sections after another rank's %.0f%%",
            c->procs, c->bound[k], per[k], s[RDLM_BENCH_ST_PEER] / acq,
            s[RDLM_BENCH_ST_ACQ], 100.0 * s[RDLM_BENCH_ST_GLOBAL] / acq,
            100.0 * s[RDLM_BENCH_ST_LOCAL] / acq, 100.0 * s[RDLM_BENCH_ST_HANDOFFS] / acq);
    }
    rdlm_bench_dist_once(
        r, bench, c->procs, "home ops/acq+rel", "ops", per[RDLM_BENCH_DC_DEFAULT],
        &(rdlm_bench_dist_base_t){"rdlm bound=1", per[RDLM_BENCH_DC_BOUND1],
                                  RDLM_BENCH_TARGET_NONE, 0});
}

static int rdlm_bench_dc_procs(rdlm_bench_report_t *r, uint32_t procs)
{
    const char *bench = rdlm_bench_def_dist_contended.name;
    rdlm_bench_dc_ctx_t *c = calloc(1, sizeof(*c));

    if (c == NULL) {
        return -1;
    }
    c->report = r;
    c->procs = procs;
    c->measure[RDLM_BENCH_DC_DEFAULT] =
        rdlm_bench_report_measure(r, bench, "throughput", "rdlm", procs, "kops/s");
    c->measure[RDLM_BENCH_DC_BOUND1] =
        rdlm_bench_report_measure(r, bench, "throughput", "rdlm bound=1", procs, "kops/s");
    c->handoffs[RDLM_BENCH_DC_DEFAULT] =
        rdlm_bench_report_measure(r, bench, "hand-offs", "rdlm", procs, "kops/s");
    c->handoffs[RDLM_BENCH_DC_BOUND1] =
        rdlm_bench_report_measure(r, bench, "hand-offs", "rdlm bound=1", procs, "kops/s");
    if (c->measure[0] == NULL || c->measure[1] == NULL || c->handoffs[0] == NULL ||
        c->handoffs[1] == NULL ||
        rdlm_bench_alternate(RDLM_BENCH_DC_NIMPL, r->opts->rounds, rdlm_bench_dc_round,
                             c) != 0) {
        free(c);
        return -1;
    }
    rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_PARAMS,
                           "per round and bound: %s; second run with -x "
                           "RDLM_COHORT_BOUND=1",
                           c->cmd);
    rdlm_bench_dc_finish(c);
    free(c);
    return 0;
}

static int rdlm_bench_dc_run(rdlm_bench_report_t *r)
{
    /* 4: 2 nodes x 2 ranks, so that hand-offs inside a node can happen */
    return rdlm_bench_dist_each(r, &rdlm_bench_def_dist_contended, 4, NULL,
                                rdlm_bench_dc_procs);
}

const rdlm_bench_def_t rdlm_bench_def_dist_contended = {
    .name = "dist-contended",
    .title = "cross-node lock throughput, 2 virtual nodes (TCP): cohort bound 64 vs 1",
    .default_procs = rdlm_bench_dist_procs,
    .ndefault_procs = sizeof(rdlm_bench_dist_procs) / sizeof(rdlm_bench_dist_procs[0]),
    .opt_in = 1,
    .run = rdlm_bench_dc_run,
};

/* ---- dist-memory --------------------------------------------------------------------- */

/* A home slot is [tag 8 | word 8] (RDLM_GLOBAL_SLOT_BYTES, core/global's global.h; 24 with
 * the holder word of contexts with leases, not used here); the public API does not
 * expose it, so this is the design's figure, not a measurement. */
#define RDLM_BENCH_DM_HOME_BYTES 16.0

static int rdlm_bench_dm_procs(rdlm_bench_report_t *r, uint32_t procs)
{
    const rdlm_bench_opts_t *o = r->opts;
    const char *bench = rdlm_bench_def_dist_memory.name;
    static const char *const args[] = {"--mode", "memory", NULL};
    char nodes_env[40], cmd[512];
    const char *const env[] = {"UCX_TLS=tcp,self", nodes_env, NULL};
    rdlm_bench_mpi_job_t job = rdlm_bench_dist_job_2nodes(o, procs, args, 0);
    double ctx = -1, ctx_max = -1, kib[RDLM_BENCH_RESULT_MAX], home[RDLM_BENCH_RESULT_MAX];
    int used, k;
    char *out;

    snprintf(nodes_env, sizeof(nodes_env), "RDLM_VIRTUAL_NODES=%u", procs);
    job.env = env; /* one node per rank */
    rdlm_bench_mpi_command(&job, cmd, sizeof(cmd));
    rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_PARAMS, "%s", cmd);
    if ((out = rdlm_bench_dist_run(bench, &job)) == NULL) {
        return -1;
    }
    used = rdlm_bench_result_get(out, "rdlm_remote", "kib", kib, RDLM_BENCH_RESULT_MAX);
    if (rdlm_bench_result_get1(out, "rdlm_ctx", "kib", &ctx) != 0 ||
        rdlm_bench_result_get1(out, "rdlm_ctx_max", "kib", &ctx_max) != 0 ||
        rdlm_bench_result_get(out, "rdlm_remote", "home_node", home,
                              RDLM_BENCH_RESULT_MAX) != used) {
        fprintf(stderr, "rdlm-bench: dist-memory: malformed output: %.600s\n", out);
        free(out);
        return -1;
    }
    for (k = 0; k < used; k++) {
        rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_INFO,
                               "%u ranks, %u nodes: rank 0 after using locks homed on %d "
                               "remote node(s) (last: node %.0f): +%.0f KiB since its "
                               "context was created",
                               procs, procs, k + 1, home[k], kib[k]);
    }
    free(out);
    rdlm_bench_report_note(
        r, bench, RDLM_BENCH_NOTE_INFO,
        "home memory per lock: %.0f bytes by design (a home slot, [tag 8 "
        "| word 8]); the API does not expose it: not a measurement",
        RDLM_BENCH_DM_HOME_BYTES);
    rdlm_bench_dist_once(r, bench, procs, "home bytes/lock", "B", RDLM_BENCH_DM_HOME_BYTES,
                         NULL);
    rdlm_bench_dist_once(r, bench, procs, "ctx create, max rank", "KiB", ctx_max, NULL);
    if (used > 0) {
        char metric[32];

        snprintf(metric, sizeof(metric), "+after %d rem. nodes", used);
        rdlm_bench_dist_once(r, bench, procs, metric, "KiB", kib[used - 1], NULL);
    }
    rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_INFO,
                           "resident growth across rdlm_mpi_ctx_create: rank 0 %.0f KiB, "
                           "largest over ranks %.0f KiB",
                           ctx, ctx_max);
    return 0;
}

static int rdlm_bench_dm_run(rdlm_bench_report_t *r)
{
    return rdlm_bench_dist_each(r, &rdlm_bench_def_dist_memory, 2,
                                "one machine, every rank its own virtual node; VmRSS from "
                                "/proc/self/status; one run (sizes do not need rounds)",
                                rdlm_bench_dm_procs);
}

const rdlm_bench_def_t rdlm_bench_def_dist_memory = {
    .name = "dist-memory",
    .title =
        "cross-node lock memory: home bytes per lock, resident memory against nodes used",
    .default_procs = rdlm_bench_dist_procs,
    .ndefault_procs = sizeof(rdlm_bench_dist_procs) / sizeof(rdlm_bench_dist_procs[0]),
    .opt_in = 1,
    .run = rdlm_bench_dm_run,
};
