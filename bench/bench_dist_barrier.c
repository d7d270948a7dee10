/*
 * dist-barrier: rdlm's collective barrier (rdlm_ctx_barrier of a distributed context)
 * beside MPI_Barrier, both measured by rdlm-mpi-barrier-bench (mpi_barrier_bench.c,
 * which documents the measurement) in the same mpirun, on the same ranks, in
 * alternating rounds; figure: max over ranks of us per barrier, median over rounds.
 * With librdlm_pmpi.so built, every job preloads it, so one run holds rdlm_ctx_barrier,
 * MPI_Barrier as an unmodified program gets it (the shim, which picks rdlm's or MPI's
 * per communicator) and PMPI_Barrier (MPI's own). Targets (issue 17), in each of
 * 2 and 4 ranks on 1 node (Open MPI over shared memory: pml ob1, btl self,vader),
 * and 2 ranks on 2 virtual nodes, 4 on 2 and 4, 8 on 4 (everything over TCP:
 * UCX_TLS=tcp,self; pml ob1, btl self,tcp):
 *
 *   rdlm_ctx_barrier              <= 0.8 x PMPI_Barrier
 *   the shim's MPI_Barrier        <= 0.8 x PMPI_Barrier, and never above 1.05 x
 *   messages per barrier per node leader (rdlm_ctx_stats) = ceil(log2 nodes)
 *   split phase (first cross-node job): arrive + compute 20 us + wait beside
 *   MPI_Ibarrier + compute + MPI_Wait (no target; exposed time and overlap)
 *
 * In the default run (no benchmark named) only the first job runs, a few seconds;
 * named (-b dist-barrier), all of them. -p N,M replaces the cross-node jobs with N
 * ranks on N virtual nodes, M on M.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_dist.h"
#include "benchmarks.h"
#include "mpi_result.h"
#include "rounds.h"

#define RDLM_BENCH_DB_ITER_SHM 10000u
#define RDLM_BENCH_DB_WARMUP_SHM 1000u
#define RDLM_BENCH_DB_ITER_TCP 2000u
#define RDLM_BENCH_DB_WARMUP_TCP 200u
#define RDLM_BENCH_DB_CAP_MS 2000u
#define RDLM_BENCH_DB_COMPUTE_US 20u
#define RDLM_BENCH_DB_TARGET 0.8
#define RDLM_BENCH_DB_NEVER_SLOWER 1.05
#define RDLM_BENCH_DB_NIMPL 5u

/* The jobs: ranks and (virtual) nodes; the cross-node ones are replaced by -p. */
typedef struct rdlm_bench_db_shape {
    uint32_t procs;
    uint32_t nodes;
} rdlm_bench_db_shape_t;

static const rdlm_bench_db_shape_t rdlm_bench_db_on_node[] = {{2, 1}, {4, 1}};
static const rdlm_bench_db_shape_t rdlm_bench_db_cross[] = {{2, 2}, {4, 2}, {4, 4}, {8, 4}};
static const uint32_t rdlm_bench_db_procs[] = {2, 4, 8};

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
    {"pmpi", "PMPI_Barrier", NULL},
};

enum {
    RDLM_BENCH_DB_RDLM,
    RDLM_BENCH_DB_MPI,
    RDLM_BENCH_DB_SPLIT,
    RDLM_BENCH_DB_IBARRIER,
    RDLM_BENCH_DB_PMPI
};

/* One mpirun of the program with rdlm and MPI alternating. */
typedef struct rdlm_bench_db_setup {
    uint32_t procs;
    uint32_t nodes; /* RDLM_VIRTUAL_NODES */
    int tcp;        /* everything over TCP, else shared memory */
    int split;      /* also the split-phase impls */
} rdlm_bench_db_setup_t;

/* The messages node leaders sent per barrier against ceil(log2 nodes), for every rdlm
 * impl that ran: 0, or -1 if any rank sent another number (a correctness failure,
 * not a missed target). */
static int rdlm_bench_db_msgs(rdlm_bench_report_t *r, const char *out,
                              const rdlm_bench_db_setup_t *s)
{
    static const char *const keys[] = {"rdlm", "rdlm_split"};
    const char *bench = rdlm_bench_def_dist_barrier.name;
    double design = ceil(log2((double)s->nodes));
    double lo, hi, off, barriers;
    int rc = 0;
    int equal;
    uint32_t k;

    for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
        if (rdlm_bench_result_get1(out, keys[k], "leader_msgs_min", &lo) != 0 ||
            rdlm_bench_result_get1(out, keys[k], "leader_msgs_max", &hi) != 0 ||
            rdlm_bench_result_get1(out, keys[k], "nonleader_msgs", &off) != 0 ||
            rdlm_bench_result_get1(out, keys[k], "barriers", &barriers) != 0) {
            continue;
        }
        equal = lo == design && hi == design && off == 0;
        if (!equal) {
            fprintf(stderr,
                    "rdlm-bench: dist-barrier: %s, %u nodes: node leaders sent %.2f..%.2f "
                    "messages per barrier, other ranks %.0f; design %.0f\n",
                    keys[k], s->nodes, lo, hi, off, design);
            rc = -1;
        }
        rdlm_bench_report_note(
            r, bench, RDLM_BENCH_NOTE_INFO,
            "%s, %u ranks on %u node(s): each node leader sent %.2f..%.2f "
            "messages per barrier (%.0f barriers, summed over ranks), "
            "other ranks %.0f; design ceil(log2 %u) = %.0f: %s",
            keys[k], s->procs, s->nodes, lo, hi, barriers, off, s->nodes, design,
            equal ? "equal" : "NO");
        if (k == 0 && s->nodes > 1) {
            rdlm_bench_dist_once(r, bench, s->procs, "msgs/barrier/leader", "msgs", hi,
                                 &(rdlm_bench_dist_base_t){"ceil(log2 N)", design,
                                                           RDLM_BENCH_TARGET_AT_MOST, 1.0});
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

/* The shim's MPI_Barrier against PMPI_Barrier: at most 0.8, and never above 1.05. */
static void rdlm_bench_db_compare_shim(rdlm_bench_report_t *r,
                                       rdlm_bench_measure_t *const *m)
{
    rdlm_bench_report_compare(r, m[RDLM_BENCH_DB_MPI], m[RDLM_BENCH_DB_PMPI], NULL,
                              RDLM_BENCH_TARGET_AT_MOST, RDLM_BENCH_DB_TARGET);
    rdlm_bench_report_compare(r, m[RDLM_BENCH_DB_MPI], m[RDLM_BENCH_DB_PMPI],
                              "PMPI (never >)", RDLM_BENCH_TARGET_AT_MOST,
                              RDLM_BENCH_DB_NEVER_SLOWER);
}

/* With the shim preloaded, the program's MPI_Barrier must be the shim's: 0, or -1. */
static int rdlm_bench_db_check_lib(int preload, const char *out)
{
    char lib[128] = "?";

    return rdlm_bench_result_get_word(out, "info", "barrier_lib", lib, sizeof(lib)) == 0 &&
                   (strstr(lib, "rdlm_pmpi") != NULL) == preload
               ? 0
               : -1;
}

/* One mpirun of s: the rows of every impl, the comparisons, the notes. */
static int rdlm_bench_db_job(rdlm_bench_report_t *r, const rdlm_bench_db_setup_t *s)
{
    const rdlm_bench_opts_t *o = r->opts;
    const char *bench = rdlm_bench_def_dist_barrier.name;
    const char *pmpi_lib = rdlm_bench_mpi_find(RDLM_BENCH_PMPI_LIB);
    const int preload = pmpi_lib != NULL;
    char nodes_env[40], preload_env[1100], metric[32], shim_metric[32], split_metric[40];
    rdlm_bench_dist_args_t args = {0};
    const char *const env_tcp[] = {"UCX_TLS=tcp,self", nodes_env, preload_env, NULL};
    const char *const env_shm[] = {nodes_env, preload_env, NULL};
    const uint32_t order[] = {RDLM_BENCH_DB_RDLM, RDLM_BENCH_DB_MPI, RDLM_BENCH_DB_PMPI,
                              RDLM_BENCH_DB_SPLIT, RDLM_BENCH_DB_IBARRIER};
    const uint32_t nimpl = (preload ? 3u : 2u) + (s->split ? 2u : 0u);
    rdlm_bench_mpi_job_t job = {
        .program = rdlm_bench_mpi_find(RDLM_BENCH_MPI_BARRIER_BENCH),
        .nprocs = s->procs,
        .args = args.argv,
        .mca = s->tcp ? rdlm_bench_db_mca_tcp : rdlm_bench_db_mca_shm,
        .env = s->tcp ? env_tcp : env_shm,
        .unset_env = rdlm_bench_db_unset_env,
        /* worst case: every phase hits its caps */
        .timeout_s = 60 + o->rounds * nimpl * (RDLM_BENCH_DB_CAP_MS / 1000 + 2),
        .verbose = o->verbose,
    };
    rdlm_bench_measure_t *m[RDLM_BENCH_DB_NIMPL] = {NULL}, *mk[RDLM_BENCH_DB_NIMPL];
    rdlm_bench_dist_impl_t impl[RDLM_BENCH_DB_NIMPL];
    /* every implementation's "value"; rdlm's ([0] in order) rounds are required */
    const rdlm_bench_dist_table_t table = {
        .impls = impl, .figs = {{NULL, NULL, nimpl}}, .nrequired = 1, .unit = "us"};
    double nodes = -1;
    char *out;
    uint32_t k;
    int rc;

    rdlm_bench_dist_arg(&args, "--impls", "rdlm,mpi%s%s", preload ? ",pmpi" : "",
                        s->split ? ",rdlm_split,mpi_ibarrier" : "");
    rdlm_bench_dist_counts(&args, o,
                           s->tcp ? RDLM_BENCH_DB_ITER_TCP : RDLM_BENCH_DB_ITER_SHM,
                           s->tcp ? RDLM_BENCH_DB_WARMUP_TCP : RDLM_BENCH_DB_WARMUP_SHM);
    rdlm_bench_dist_arg(&args, "-r", "%u", o->rounds);
    rdlm_bench_dist_arg(&args, "-t", "%u", RDLM_BENCH_DB_CAP_MS);
    rdlm_bench_dist_arg(&args, "-c", "%u", RDLM_BENCH_DB_COMPUTE_US);
    snprintf(nodes_env, sizeof(nodes_env), "RDLM_VIRTUAL_NODES=%u", s->nodes);
    /* without the shim an empty LD_PRELOAD (the caller's is unset) */
    snprintf(preload_env, sizeof(preload_env), "LD_PRELOAD=%s", preload ? pmpi_lib : "");
    snprintf(metric, sizeof(metric), "barrier %u node%s", s->nodes,
             s->nodes > 1 ? "s" : "");
    snprintf(shim_metric, sizeof(shim_metric), "shim, %u node%s", s->nodes,
             s->nodes > 1 ? "s" : "");
    snprintf(split_metric, sizeof(split_metric), "split, %u nodes", s->nodes);
    for (k = 0; k < nimpl; k++) {
        int split = order[k] == RDLM_BENCH_DB_SPLIT || order[k] == RDLM_BENCH_DB_IBARRIER;

        impl[k] = rdlm_bench_db_impls[order[k]];
        impl[k].metric = split                                      ? split_metric
                         : order[k] == RDLM_BENCH_DB_MPI && preload ? shim_metric
                                                                    : metric;
    }
    if (rdlm_bench_dist_job(r, bench, &job, &table, s->procs, mk, &out) != 0) {
        return -1;
    }
    for (k = 0; k < nimpl; k++) {
        m[order[k]] = mk[k];
    }
    if (rdlm_bench_result_get1(out, "info", "nodes", &nodes) != 0 ||
        nodes != (double)s->nodes || rdlm_bench_db_check_lib(preload, out) != 0) {
        fprintf(stderr,
                "rdlm-bench: dist-barrier: expected %u rdlm nodes (the job has %.0f; "
                "RDLM_VIRTUAL_NODES not applied?) and MPI_Barrier %s: %.600s\n",
                s->nodes, nodes, preload ? "from the shim" : "MPI's own", out);
        free(out);
        return -1;
    }
    rdlm_bench_report_compare(r, m[RDLM_BENCH_DB_RDLM],
                              m[preload ? RDLM_BENCH_DB_PMPI : RDLM_BENCH_DB_MPI], NULL,
                              RDLM_BENCH_TARGET_AT_MOST, RDLM_BENCH_DB_TARGET);
    if (preload) {
        rdlm_bench_db_compare_shim(r, m);
    }
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

/* ---- the benchmark ------------------------------------------------------------------- */

static int rdlm_bench_db_run(rdlm_bench_report_t *r)
{
    const char *bench = rdlm_bench_def_dist_barrier.name;
    const int all = r->opts->nselected > 0; /* named: not only the default run's first */
    const uint32_t *procs = NULL;
    rdlm_bench_db_shape_t shapes[16];
    uint32_t n = 0, k;
    char why[256];
    int rc = 0;

    if (!rdlm_bench_mpi_can_run(rdlm_bench_mpi_find(RDLM_BENCH_MPI_BARRIER_BENCH), why,
                                sizeof(why))) {
        rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_SKIP, "not measured: %s", why);
        return 0;
    }
    rdlm_bench_report_note(
        r, bench, RDLM_BENCH_NOTE_PARAMS,
        "rdlm and MPI alternate in every round inside one mpirun%s; us per "
        "barrier: max over ranks of elapsed/iterations, median over "
        "rounds; p99 of single barriers, max over ranks%s",
        rdlm_bench_mpi_find(RDLM_BENCH_PMPI_LIB) != NULL
            ? ", librdlm_pmpi.so preloaded (MPI_Barrier shim: what an unmodified "
              "program gets; PMPI_Barrier: MPI's own)"
            : "; librdlm_pmpi.so not built (RDLM_WITH_PMPI=OFF) or not found: no shim rows",
        all ? "" : "; default run: 2 ranks on 1 node only (-b dist-barrier: all)");
    for (k = 0; k < sizeof(rdlm_bench_db_on_node) / sizeof(rdlm_bench_db_on_node[0]); k++) {
        shapes[n++] = rdlm_bench_db_on_node[k];
    }
    if (r->opts->nprocs_count > 0) {
        uint32_t np = rdlm_bench_opts_procs(r->opts, rdlm_bench_db_procs, 0, &procs);

        for (k = 0; k < np && n < 16; k++) {
            shapes[n++] = (rdlm_bench_db_shape_t){procs[k], procs[k]};
        }
    } else {
        for (k = 0; k < sizeof(rdlm_bench_db_cross) / sizeof(rdlm_bench_db_cross[0]); k++) {
            shapes[n++] = rdlm_bench_db_cross[k];
        }
    }
    for (k = 0; k < (all ? n : 1); k++) {
        const rdlm_bench_db_shape_t *sh = &shapes[k];
        rdlm_bench_db_setup_t s = {.procs = sh->procs, .nodes = sh->nodes};

        if (sh->nodes > 1) {
            s.tcp = 1;
            s.split = k == sizeof(rdlm_bench_db_on_node) / sizeof(rdlm_bench_db_on_node[0]);
        }
        if (sh->procs < 2) {
            rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_SKIP,
                                   "%u processes: a barrier needs at least 2", sh->procs);
            continue;
        }
        rc |= rdlm_bench_db_job(r, &s);
    }
    return rc;
}

const rdlm_bench_def_t rdlm_bench_def_dist_barrier = {
    .name = "dist-barrier",
    .title = "collective barrier (rdlm_ctx_barrier) and the preloaded MPI_Barrier shim vs "
             "PMPI_Barrier: 1 node (shared memory) and virtual nodes (TCP); split phase",
    .default_procs = rdlm_bench_db_procs,
    .ndefault_procs = sizeof(rdlm_bench_db_procs) / sizeof(rdlm_bench_db_procs[0]),
    .run = rdlm_bench_db_run,
};
