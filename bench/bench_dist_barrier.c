/*
 * dist-barrier: rdlm's collective barrier (rdlm_ctx_barrier of a distributed context)
 * beside MPI_Barrier, both measured by rdlm-mpi-barrier-bench (mpi_barrier_bench.c,
 * which documents the measurement) in the same mpirun, on the same ranks, in
 * alternating rounds; figure: max over ranks of us per barrier, median over rounds.
 * Targets and rows (issue 5):
 *
 *   B1  on-node, 2 ranks on one node (RDLM_VIRTUAL_NODES=1), Open MPI over shared
 *       memory (pml ob1, btl self,vader)                 rdlm <= 0.8 x MPI_Barrier
 *   B2  cross-node, N ranks as N virtual nodes (default N = 2 and 4), everything over
 *       TCP (UCX_TLS=tcp,self; pml ob1, btl self,tcp)    rdlm <= 1.0 x MPI_Barrier
 *       and messages per barrier per node leader (rdlm_ctx_stats) = ceil(log2 N)
 *   B3  split phase, in the first B2 job: arrive + compute 20 us + wait against
 *       MPI_Ibarrier + compute + MPI_Wait (no target; exposed time and overlap)
 *   B5  an unmodified MPI_Barrier loop (the same program, --impls mpi) with
 *       librdlm_pmpi.so preloaded against without, on-node, 2 ranks; one mpirun per
 *       side and round, alternating (no target)
 *
 * In the default run (no benchmark named) only B1 runs, a few seconds; named
 * (-b dist-barrier), all of them.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_dist.h"
#include "benchmarks.h"
#include "rounds.h"

#define RDLM_BENCH_DB_ITER_SHM 10000u
#define RDLM_BENCH_DB_WARMUP_SHM 1000u
#define RDLM_BENCH_DB_ITER_TCP 2000u
#define RDLM_BENCH_DB_WARMUP_TCP 200u
#define RDLM_BENCH_DB_CAP_MS 2000u
#define RDLM_BENCH_DB_COMPUTE_US 20u
#define RDLM_BENCH_DB_ON_NODE_TARGET 0.8
#define RDLM_BENCH_DB_CROSS_TARGET 1.0
#define RDLM_BENCH_DB_NIMPL 4u

#if defined(RDLM_BENCH_PMPI_LIB)
static const char *const rdlm_bench_db_pmpi_lib = RDLM_BENCH_PMPI_LIB;
#else
static const char *const rdlm_bench_db_pmpi_lib = NULL;
#endif

/* Cross-node rank counts (each rank its own virtual node), replaced by -p. */
static const uint32_t rdlm_bench_db_procs[] = {2, 4};

static const char *const rdlm_bench_db_mca_shm[] = {"pml", "ob1", "btl", "self,vader",
                                                    NULL};
static const char *const rdlm_bench_db_mca_tcp[] = {"pml", "ob1", "btl", "self,tcp", NULL};
static const char *const rdlm_bench_db_unset_env[] = {"RDLM_UCX_TLS", "LD_PRELOAD", NULL};

/* The program's implementations (its --impls names) and ours in the report; the
 * metric is the setup's. */
static const rdlm_bench_dist_impl_t rdlm_bench_db_impls[RDLM_BENCH_DB_NIMPL] = {
    {"rdlm", "rdlm", NULL},
    {"mpi", "MPI_Barrier", NULL},
    {"rdlm_split", "rdlm split", NULL},
    {"mpi_ibarrier", "MPI_Ibarrier", NULL},
};

enum { RDLM_BENCH_DB_RDLM, RDLM_BENCH_DB_MPI, RDLM_BENCH_DB_SPLIT, RDLM_BENCH_DB_IBARRIER };

/* One mpirun of the program with rdlm and MPI alternating. */
typedef struct rdlm_bench_db_setup {
    const char *metric; /* of the barrier rows */
    uint32_t procs;
    uint32_t nodes; /* RDLM_VIRTUAL_NODES */
    int tcp;        /* everything over TCP, else shared memory */
    int split;      /* also the split-phase impls */
    double target;  /* rdlm / MPI_Barrier at most */
} rdlm_bench_db_setup_t;

/* Iterations and warm-up: -i and -x, else the defaults of the transport. */
static void rdlm_bench_db_counts(const rdlm_bench_opts_t *o, int tcp, char *iters,
                                 char *warm, size_t len)
{
    snprintf(iters, len, "%" PRIu64,
             o->iterations
                 ? o->iterations
                 : (uint64_t)(tcp ? RDLM_BENCH_DB_ITER_TCP : RDLM_BENCH_DB_ITER_SHM));
    snprintf(warm, len, "%" PRIu64,
             o->warmup != UINT64_MAX
                 ? o->warmup
                 : (uint64_t)(tcp ? RDLM_BENCH_DB_WARMUP_TCP : RDLM_BENCH_DB_WARMUP_SHM));
}

/* A figure measured once, beside its design value (target: at most that). */
static void rdlm_bench_db_design_row(rdlm_bench_report_t *r, const char *metric,
                                     uint32_t procs, double ours, double design)
{
    const char *bench = rdlm_bench_def_dist_barrier.name;
    rdlm_bench_measure_t *m =
        rdlm_bench_report_measure(r, bench, metric, "rdlm", procs, "msgs");
    rdlm_bench_measure_t *d =
        rdlm_bench_report_measure(r, bench, metric, "ceil(log2 N)", procs, "msgs");

    if (m == NULL || d == NULL) {
        return;
    }
    rdlm_bench_measure_round(m, ours, NULL);
    rdlm_bench_measure_finish(m);
    rdlm_bench_measure_round(d, design, NULL);
    rdlm_bench_measure_finish(d);
    rdlm_bench_report_compare(r, m, d, NULL, RDLM_BENCH_TARGET_AT_MOST, 1.0);
}

/* The messages node leaders sent per barrier against ceil(log2 nodes): 0, or -1 if
 * any rank sent another number (a correctness failure, not a missed target). */
static int rdlm_bench_db_msgs(rdlm_bench_report_t *r, const char *out,
                              const rdlm_bench_db_setup_t *s)
{
    const char *bench = rdlm_bench_def_dist_barrier.name;
    double design = ceil(log2((double)s->nodes));
    const char *cursor = NULL;
    const char *line;
    double lo, hi, off, barriers;
    char key[32];
    int rc = 0;
    int equal;

    while ((line = rdlm_bench_mpi_result(out, "stats", &cursor)) != NULL) {
        if (rdlm_bench_mpi_field_str(line, "impl", key, sizeof(key)) != 0 ||
            rdlm_bench_mpi_field(line, "leader_msgs_per_barrier_min", &lo) != 0 ||
            rdlm_bench_mpi_field(line, "leader_msgs_per_barrier_max", &hi) != 0 ||
            rdlm_bench_mpi_field(line, "nonleader_msgs", &off) != 0 ||
            rdlm_bench_mpi_field(line, "barriers", &barriers) != 0) {
            continue;
        }
        equal = lo == design && hi == design && off == 0;
        if (!equal) {
            fprintf(stderr,
                    "rdlm-bench: dist-barrier: %s, %u nodes: node leaders sent %.2f..%.2f "
                    "messages per barrier, other ranks %.0f; design %.0f\n",
                    key, s->nodes, lo, hi, off, design);
            rc = -1;
        }
        rdlm_bench_report_note(
            r, bench, RDLM_BENCH_NOTE_INFO,
            "%s, %u ranks on %u node(s): each node leader sent %.2f..%.2f "
            "messages per barrier (%.0f barriers, summed over ranks), "
            "other ranks %.0f; design ceil(log2 %u) = %.0f: %s",
            key, s->procs, s->nodes, lo, hi, barriers, off, s->nodes, design,
            equal ? "equal" : "NO");
        if (strcmp(key, "rdlm") == 0 && s->nodes > 1) {
            rdlm_bench_db_design_row(r, "msgs/barrier/leader", s->procs, hi, design);
        }
    }
    return rc;
}

/* B3: time exposed beside the compute, and the share of the barrier it hid. */
static void rdlm_bench_db_overlap(rdlm_bench_report_t *r, rdlm_bench_measure_t *const *m,
                                  uint32_t procs)
{
    static const uint32_t pairs[2][2] = {{RDLM_BENCH_DB_SPLIT, RDLM_BENCH_DB_RDLM},
                                         {RDLM_BENCH_DB_IBARRIER, RDLM_BENCH_DB_MPI}};
    double exposed;
    uint32_t k;

    for (k = 0; k < 2; k++) {
        const rdlm_bench_measure_t *split = m[pairs[k][0]], *plain = m[pairs[k][1]];

        if (split == NULL || plain == NULL || split->nrounds == 0 || plain->nrounds == 0) {
            continue;
        }
        exposed = split->median - RDLM_BENCH_DB_COMPUTE_US;
        rdlm_bench_report_note(r, rdlm_bench_def_dist_barrier.name, RDLM_BENCH_NOTE_INFO,
                               "split phase, %u ranks: %s %.2f us per iteration = %u us "
                               "compute + %.2f us exposed; overlap %.0f%% of the %.2f us "
                               "%s barrier (osu_ibarrier: 100%% = fully hidden)",
                               procs, split->impl, split->median, RDLM_BENCH_DB_COMPUTE_US,
                               exposed, 100.0 * (1.0 - exposed / plain->median),
                               plain->median, plain->impl);
    }
}

/* One mpirun of s: the rows of every impl, the comparisons, the notes. */
static int rdlm_bench_db_job(rdlm_bench_report_t *r, const rdlm_bench_db_setup_t *s)
{
    const rdlm_bench_opts_t *o = r->opts;
    const char *bench = rdlm_bench_def_dist_barrier.name;
    char iters[24], warm[24], rounds[16], cap[16], compute[16];
    char nodes_env[40], split_metric[32], cmd[512];
    const char *const args[] = {
        "--impls", s->split ? "rdlm,mpi,rdlm_split,mpi_ibarrier" : "rdlm,mpi",
        "-i",      iters,
        "-x",      warm,
        "-r",      rounds,
        "-t",      cap,
        "-c",      compute,
        NULL};
    const char *const env_tcp[] = {"UCX_TLS=tcp,self", nodes_env, NULL};
    const char *const env_shm[] = {nodes_env, NULL};
    uint32_t nimpl = s->split ? RDLM_BENCH_DB_NIMPL : 2;
    rdlm_bench_mpi_job_t job = {
        .program = rdlm_bench_mpi_barrier_program(),
        .nprocs = s->procs,
        .args = args,
        .mca = s->tcp ? rdlm_bench_db_mca_tcp : rdlm_bench_db_mca_shm,
        .env = s->tcp ? env_tcp : env_shm,
        .unset_env = rdlm_bench_db_unset_env,
        /* worst case: every phase hits its caps */
        .timeout_s = 60 + o->rounds * nimpl * (RDLM_BENCH_DB_CAP_MS / 1000 + 2),
        .verbose = o->verbose,
    };
    rdlm_bench_measure_t *m[RDLM_BENCH_DB_NIMPL] = {NULL};
    const char *cursor = NULL;
    const char *info;
    double nodes = -1;
    char *out;
    uint32_t k;
    int rc;

    rdlm_bench_db_counts(o, s->tcp, iters, warm, sizeof(iters));
    snprintf(rounds, sizeof(rounds), "%u", o->rounds);
    snprintf(cap, sizeof(cap), "%u", RDLM_BENCH_DB_CAP_MS);
    snprintf(compute, sizeof(compute), "%u", RDLM_BENCH_DB_COMPUTE_US);
    snprintf(nodes_env, sizeof(nodes_env), "RDLM_VIRTUAL_NODES=%u", s->nodes);
    snprintf(split_metric, sizeof(split_metric), "split, compute %u us",
             RDLM_BENCH_DB_COMPUTE_US);
    rdlm_bench_mpi_command(&job, cmd, sizeof(cmd));
    rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_PARAMS, "%s", cmd);
    for (k = 0; k < nimpl; k++) {
        m[k] = rdlm_bench_report_measure(r, bench, k < 2 ? s->metric : split_metric,
                                         rdlm_bench_db_impls[k].impl, s->procs, "us");
        if (m[k] == NULL) {
            return -1;
        }
    }
    if ((out = rdlm_bench_dist_run(bench, &job)) == NULL) {
        return -1;
    }
    info = rdlm_bench_mpi_result(out, "info", &cursor);
    if (info == NULL || rdlm_bench_mpi_field(info, "nodes", &nodes) != 0 ||
        nodes != (double)s->nodes) {
        fprintf(stderr,
                "rdlm-bench: dist-barrier: expected %u rdlm nodes, the job has %.0f "
                "(RDLM_VIRTUAL_NODES not applied?): %.600s\n",
                s->nodes, nodes, out);
        free(out);
        return -1;
    }
    rdlm_bench_dist_rounds(out, rdlm_bench_db_impls, nimpl, NULL, o->verbose, m);
    for (k = 0; k < nimpl; k++) {
        rdlm_bench_measure_finish(m[k]);
    }
    if (m[RDLM_BENCH_DB_RDLM]->nrounds == 0 || m[RDLM_BENCH_DB_MPI]->nrounds == 0) {
        fprintf(stderr, "rdlm-bench: dist-barrier: no rounds in the output: %.600s\n", out);
        free(out);
        return -1;
    }
    rdlm_bench_report_compare(r, m[RDLM_BENCH_DB_RDLM], m[RDLM_BENCH_DB_MPI], NULL,
                              RDLM_BENCH_TARGET_AT_MOST, s->target);
    if (s->split && m[RDLM_BENCH_DB_SPLIT]->nrounds > 0 &&
        m[RDLM_BENCH_DB_IBARRIER]->nrounds > 0) {
        rdlm_bench_report_compare(r, m[RDLM_BENCH_DB_SPLIT], m[RDLM_BENCH_DB_IBARRIER],
                                  NULL, RDLM_BENCH_TARGET_NONE, 0);
        rdlm_bench_db_overlap(r, m, s->procs);
    }
    rc = rdlm_bench_db_msgs(r, out, s);
    free(out);
    return rc;
}

/* ---- B5: MPI_Barrier replaced by a preloaded librdlm_pmpi.so ------------------------- */

enum { RDLM_BENCH_DB_PRELOAD, RDLM_BENCH_DB_PLAIN, RDLM_BENCH_DB_NPMPI };

typedef struct rdlm_bench_db_pmpi_ctx {
    rdlm_bench_report_t *report;
    rdlm_bench_measure_t *measure[RDLM_BENCH_DB_NPMPI];
    char cmd[512];
} rdlm_bench_db_pmpi_ctx_t;

/* One mpirun of the MPI_Barrier loop, with or without the replacement preloaded; the
 * MPI_Barrier the program called must come from the library expected. */
static int rdlm_bench_db_pmpi_round(uint32_t impl, uint32_t round, void *arg)
{
    rdlm_bench_db_pmpi_ctx_t *c = arg;
    const rdlm_bench_opts_t *o = c->report->opts;
    char iters[24], warm[24], cap[16], preload[1100], lib[128] = "?";
    const char *const args[] = {"--impls", "mpi", "-r", "1", "-i", iters,
                                "-x",      warm,  "-t", cap, NULL};
    const char *const env_preload[] = {"RDLM_VIRTUAL_NODES=1", preload, NULL};
    const char *const env_plain[] = {"RDLM_VIRTUAL_NODES=1", NULL};
    rdlm_bench_mpi_job_t job = {
        .program = rdlm_bench_mpi_barrier_program(),
        .nprocs = 2,
        .args = args,
        .mca = rdlm_bench_db_mca_shm,
        .env = impl == RDLM_BENCH_DB_PRELOAD ? env_preload : env_plain,
        .unset_env = rdlm_bench_db_unset_env,
        .timeout_s = 60,
        .verbose = o->verbose,
    };
    rdlm_bench_summary_t pct;
    const char *cursor = NULL;
    const char *info, *line;
    double value;
    char *out;
    int replaced;

    rdlm_bench_db_counts(o, 0, iters, warm, sizeof(iters));
    snprintf(cap, sizeof(cap), "%u", RDLM_BENCH_DB_CAP_MS);
    snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", rdlm_bench_db_pmpi_lib);
    if (round == 0 && impl == RDLM_BENCH_DB_PLAIN) {
        rdlm_bench_mpi_command(&job, c->cmd, sizeof(c->cmd));
    }
    if ((out = rdlm_bench_dist_run("dist-barrier (preload)", &job)) == NULL) {
        return -1;
    }
    info = rdlm_bench_mpi_result(out, "info", &cursor);
    line = rdlm_bench_mpi_result(out, "round", &cursor);
    if (info == NULL || line == NULL ||
        rdlm_bench_mpi_field_str(info, "barrier_lib", lib, sizeof(lib)) != 0 ||
        rdlm_bench_mpi_round(line, &value, &pct) != 0) {
        fprintf(stderr, "rdlm-bench: dist-barrier (preload): malformed output: %.600s\n",
                out);
        free(out);
        return -1;
    }
    free(out);
    replaced = strstr(lib, "rdlm_pmpi") != NULL;
    if (replaced != (impl == RDLM_BENCH_DB_PRELOAD)) {
        fprintf(stderr, "rdlm-bench: dist-barrier (preload): MPI_Barrier came from %s\n",
                lib);
        return -1;
    }
    rdlm_bench_measure_round(c->measure[impl], value, &pct);
    if (o->verbose) {
        fprintf(stderr,
                "rdlm-bench:   round %u MPI_Barrier from %s: %.3f us, p99 %.2f us\n",
                round + 1, lib, value, pct.p99);
    }
    return 0;
}

static int rdlm_bench_db_pmpi(rdlm_bench_report_t *r)
{
    const char *bench = rdlm_bench_def_dist_barrier.name;
    rdlm_bench_db_pmpi_ctx_t c = {.report = r};

    if (rdlm_bench_db_pmpi_lib == NULL) {
        rdlm_bench_report_note(
            r, bench, RDLM_BENCH_NOTE_SKIP,
            "MPI_Barrier replaced by LD_PRELOAD: librdlm_pmpi.so not built "
            "(RDLM_WITH_PMPI=OFF)");
        return 0;
    }
    c.measure[RDLM_BENCH_DB_PRELOAD] =
        rdlm_bench_report_measure(r, bench, "MPI_Barrier loop", "rdlm LD_PRELOAD", 2, "us");
    c.measure[RDLM_BENCH_DB_PLAIN] =
        rdlm_bench_report_measure(r, bench, "MPI_Barrier loop", "MPI_Barrier", 2, "us");
    if (c.measure[0] == NULL || c.measure[1] == NULL ||
        rdlm_bench_alternate(RDLM_BENCH_DB_NPMPI, r->opts->rounds, rdlm_bench_db_pmpi_round,
                             &c) != 0) {
        return -1;
    }
    rdlm_bench_measure_finish(c.measure[RDLM_BENCH_DB_PRELOAD]);
    rdlm_bench_measure_finish(c.measure[RDLM_BENCH_DB_PLAIN]);
    rdlm_bench_report_compare(r, c.measure[RDLM_BENCH_DB_PRELOAD],
                              c.measure[RDLM_BENCH_DB_PLAIN], NULL, RDLM_BENCH_TARGET_NONE,
                              0);
    rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_PARAMS, "%s", c.cmd);
    rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_PARAMS,
                           "MPI_Barrier loop: the line above, and the same with -x "
                           "LD_PRELOAD=%s; one mpirun per side and round, alternating",
                           rdlm_bench_db_pmpi_lib);
    return 0;
}

/* ---- the benchmark ------------------------------------------------------------------- */

static int rdlm_bench_db_run(rdlm_bench_report_t *r)
{
    const char *bench = rdlm_bench_def_dist_barrier.name;
    const int all = r->opts->nselected > 0; /* named: not only the default run's B1 */
    rdlm_bench_db_setup_t s = {
        .metric = "barrier on-node",
        .procs = 2,
        .nodes = 1,
        .target = RDLM_BENCH_DB_ON_NODE_TARGET,
    };
    const uint32_t *procs;
    uint32_t n, k;
    char why[256];
    int rc;

    if (!rdlm_bench_mpi_can_run(rdlm_bench_mpi_barrier_program(), why, sizeof(why))) {
        rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_SKIP, "not measured: %s", why);
        return 0;
    }
    rdlm_bench_report_note(
        r, bench, RDLM_BENCH_NOTE_PARAMS,
        "rdlm and MPI alternate in every round inside one mpirun; us per "
        "barrier: max over ranks of elapsed/iterations, median over "
        "rounds; p99 of single barriers, max over ranks%s",
        all ? "" : "; default run: on-node only (-b dist-barrier: all)");
    rc = rdlm_bench_db_job(r, &s);
    if (!all) {
        return rc;
    }
    s.metric = "barrier cross-node";
    s.tcp = 1;
    s.split = 1; /* in the first cross-node job only */
    s.target = RDLM_BENCH_DB_CROSS_TARGET;
    n = rdlm_bench_opts_procs(r->opts, rdlm_bench_db_procs,
                              sizeof(rdlm_bench_db_procs) / sizeof(uint32_t), &procs);
    for (k = 0; k < n; k++) {
        if (procs[k] < 2) {
            rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_SKIP,
                                   "cross-node, %u processes: needs at least 2", procs[k]);
            continue;
        }
        s.procs = s.nodes = procs[k];
        rc |= rdlm_bench_db_job(r, &s);
        s.split = 0;
    }
    return rc | rdlm_bench_db_pmpi(r);
}

const rdlm_bench_def_t rdlm_bench_def_dist_barrier = {
    .name = "dist-barrier",
    .title =
        "collective barrier (rdlm_ctx_barrier) vs MPI_Barrier: on-node (shared memory) "
        "and N virtual nodes (TCP); split phase; MPI_Barrier replaced by LD_PRELOAD",
    .default_procs = rdlm_bench_db_procs,
    .ndefault_procs = sizeof(rdlm_bench_db_procs) / sizeof(rdlm_bench_db_procs[0]),
    .run = rdlm_bench_db_run,
};
