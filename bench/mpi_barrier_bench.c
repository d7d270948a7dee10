/*
 * rdlm-mpi-barrier-bench: rdlm's collective barrier against MPI_Barrier, in one MPI
 * job, on the same ranks, in alternating rounds (A B ..., then ... B A). Run by
 * rdlm-bench (-b dist-barrier; and, with --impls mpi, as the MPI_Barrier baseline of
 * -b barrier); by a user like osu_barrier ("mpirun -np 2 rdlm-mpi-barrier-bench"), or
 * on one machine as 2 virtual nodes over TCP:
 *
 *   OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np 2 \
 *     --oversubscribe --bind-to none --mca pml ob1 --mca btl self,tcp \
 *     -x UCX_TLS=tcp,self -x RDLM_VIRTUAL_NODES=2 \
 *     rdlm-mpi-barrier-bench [--impls LIST] [-i N] [-x N] [-r N] [-t MS] [-c US] [-f]
 *     [--csv | --json] [--result-lines]
 *
 *   impl          one iteration
 *   rdlm          rdlm_ctx_barrier(ctx)  (ctx: rdlm_mpi_ctx_create(MPI_COMM_WORLD))
 *   mpi           MPI_Barrier(MPI_COMM_WORLD)  (the symbol, so a preloaded
 *                 replacement such as librdlm_pmpi.so is what runs)
 *   rdlm_split    rdlm_ctx_barrier_arrive; compute -c us; rdlm_ctx_barrier_wait
 *   mpi_ibarrier  MPI_Ibarrier; compute -c us; MPI_Wait
 *   pmpi          PMPI_Barrier(MPI_COMM_WORLD): MPI's own, beside a preloaded
 *                 replacement's MPI_Barrier in the same run (the table then compares
 *                 rdlm and mpi with it)
 *
 * "compute" spins on the clock and calls no library: whatever overlaps it progresses
 * on its own. A phase: -x warm-up iterations (at most 0.5 s), then -i iterations (at
 * most -t ms), every rank stamping the clock after each. Every 100 iterations rank 0
 * decides whether its time is up and broadcasts it (PMPI_Bcast, not timed), so all
 * ranks stop after the same one. Figure of a rank: its timed time / iterations; the
 * round's figure is the MAXIMUM over ranks (us_max; us_avg and us_min, osu_barrier's
 * figures, are printed too); pXX_us: max over ranks of each rank's percentile of
 * single iterations.
 *
 * The harness never uses a barrier under test: phases are separated by PMPI_Ibarrier
 * + PMPI_Test (yielding), results are gathered with PMPI_Reduce, and rdlm phases make
 * no MPI call at all. For rdlm impls, rdlm_ctx_stats gives the messages every node
 * leader sent per barrier (design: ceil(log2 nodes)).
 *
 * Output of rank 0 (mpi_output.h): '#' header lines, one row per impl, '#' notes (each
 * impl against its MPI counterpart, overlap, messages); --csv or --json: the rows only.
 * With --result-lines, first the lines rdlm-bench reads (mpi_result.h):
 *
 *   info nodes, barrier_lib (the library that defines the MPI_Barrier this program
 *        calls)
 *   <impl> value (us_max), p50_us, p90_us, p99_us, ops (iterations timed, fewer than
 *        -i at the cap): one per round
 *   <impl> barriers, leader_msgs_min, leader_msgs_max (per barrier, over node
 *        leaders), nonleader_msgs: rdlm impls, summed over ranks and rounds
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdlm.h>
#include <rdlm/mpi.h>

#include "clock.h"
#include "mpi_cli.h"
#include "mpi_output.h"
#include "mpi_result.h"
#include "options.h"
#include "rounds.h"
#include "stats.h"

#define RDLM_MBB_TOOL "rdlm-mpi-barrier-bench"
#define RDLM_MBB_SAMPLES 65536u
#define RDLM_MBB_CHUNK 100u /* iterations between stop decisions */
#define RDLM_MBB_WARMUP_CAP_NS 500000000ull

enum rdlm_mbb_impl {
    RDLM_MBB_RDLM,
    RDLM_MBB_MPI,
    RDLM_MBB_RDLM_SPLIT,
    RDLM_MBB_MPI_IBARRIER,
    RDLM_MBB_PMPI,
    RDLM_MBB_NIMPL
};

/* A phase's figures (rdlm_bench_fig_keys), then osu_barrier's: the VALUE is the
 * max over ranks of each rank's mean, the percentiles the max over ranks, OPS the
 * iterations timed; AVG and MIN: the mean's average and minimum over ranks. */
enum { RDLM_MBB_F_AVG = RDLM_BENCH_FIG_N, RDLM_MBB_F_MIN, RDLM_MBB_NF };

typedef struct rdlm_mbb {
    /* options */
    uint64_t iterations;
    uint64_t warmup;
    uint32_t rounds;
    uint64_t cap_ns;
    uint64_t compute_ns;
    int result_lines;              /* --result-lines: the lines rdlm-bench reads */
    rdlm_bench_out_t out;          /* its format and -f */
    uint32_t impl[RDLM_MBB_NIMPL]; /* the impls run, in --impls order */
    uint32_t nimpl;
    /* the job */
    int rank;
    int size;
    rdlm_ctx_h ctx; /* NULL unless an rdlm impl runs */
    rdlm_ctx_dist_info_t info;
    uint32_t *samples;
    double *scratch;
    /* results (rank 0) */
    rdlm_bench_rounds_t fig[RDLM_MBB_NIMPL][RDLM_MBB_NF];
    uint64_t barriers[RDLM_MBB_NIMPL]; /* rdlm impls: at every rank, summed */
    uint64_t off_msgs[RDLM_MBB_NIMPL]; /* ... sent by other ranks (must stay 0) */
    double per_min[RDLM_MBB_NIMPL];    /* leaders' msgs / barriers, min and max */
    double per_max[RDLM_MBB_NIMPL];
    uint32_t phases; /* run so far, for the progress line */
} rdlm_mbb_t;

/* The harness's own synchronisation: never the barrier under test. */
static void rdlm_mbb_sync(void)
{
    MPI_Request req;
    int done = 0;

    PMPI_Ibarrier(MPI_COMM_WORLD, &req);
    for (;;) {
        PMPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (done) {
            return;
        }
        sched_yield(); /* oversubscribed: let the others (and progress threads) run */
    }
}

/* Spin on the clock for ns: work that calls no library. */
static void rdlm_mbb_compute(uint64_t ns)
{
    uint64_t end = rdlm_bench_now_ns() + ns;

    while (rdlm_bench_now_ns() < end) {
        rdlm_bench_pause();
    }
}

/* End the job unless st is RDLM_OK (what: the call), from this rank. */
#define rdlm_mbb_check(b, st, what) rdlm_bench_out_check(RDLM_MBB_TOOL, (b)->rank, st, what)

/* One iteration of each implementation: its adapter, so the loop is written once. */
static void rdlm_mbb_rdlm(const rdlm_mbb_t *b)
{
    rdlm_mbb_check(b, rdlm_ctx_barrier(b->ctx), "rdlm_ctx_barrier");
}

static void rdlm_mbb_mpi(const rdlm_mbb_t *b)
{
    (void)b;
    MPI_Barrier(MPI_COMM_WORLD);
}

static void rdlm_mbb_pmpi(const rdlm_mbb_t *b)
{
    (void)b;
    PMPI_Barrier(MPI_COMM_WORLD);
}

static void rdlm_mbb_rdlm_split(const rdlm_mbb_t *b)
{
    rdlm_mbb_check(b, rdlm_ctx_barrier_arrive(b->ctx), "rdlm_ctx_barrier_arrive");
    rdlm_mbb_compute(b->compute_ns);
    rdlm_mbb_check(b, rdlm_ctx_barrier_wait(b->ctx), "rdlm_ctx_barrier_wait");
}

static void rdlm_mbb_mpi_ibarrier(const rdlm_mbb_t *b)
{
    MPI_Request req;

    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    rdlm_mbb_compute(b->compute_ns);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
}

static const struct {
    const char *key;   /* in --impls and the result lines */
    const char *label; /* in the table */
    int rdlm;          /* needs the rdlm context */
    int peer;          /* the impl it is compared with in the table */
    void (*once)(const rdlm_mbb_t *b);
} rdlm_mbb_impls[RDLM_MBB_NIMPL] = {
    [RDLM_MBB_RDLM] = {"rdlm", "rdlm_ctx_barrier", 1, RDLM_MBB_MPI, rdlm_mbb_rdlm},
    [RDLM_MBB_MPI] = {"mpi", "MPI_Barrier", 0, RDLM_MBB_MPI, rdlm_mbb_mpi},
    [RDLM_MBB_RDLM_SPLIT] = {"rdlm_split", "rdlm arrive+wait", 1, RDLM_MBB_MPI_IBARRIER,
                             rdlm_mbb_rdlm_split},
    [RDLM_MBB_MPI_IBARRIER] = {"mpi_ibarrier", "MPI_Ibarrier+Wait", 0,
                               RDLM_MBB_MPI_IBARRIER, rdlm_mbb_mpi_ibarrier},
    [RDLM_MBB_PMPI] = {"pmpi", "PMPI_Barrier", 0, RDLM_MBB_PMPI, rdlm_mbb_pmpi},
};

/* Up to n iterations of impl, ended at a chunk boundary once rank 0 has spent cap_ns
 * (decided by rank 0, broadcast, not timed). With sampler, every iteration is sampled.
 * Returns the number done; *busy_ns_p gets their total time. */
static uint64_t rdlm_mbb_loop(const rdlm_mbb_t *b, uint32_t impl, uint64_t n,
                              uint64_t cap_ns, rdlm_bench_sampler_t *sampler,
                              uint64_t *busy_ns_p)
{
    uint64_t t_prev = rdlm_bench_now_ns();
    uint64_t busy = 0;
    uint64_t t;
    uint64_t k;
    int stop;

    for (k = 0; k < n;) {
        rdlm_mbb_impls[impl].once(b);
        t = rdlm_bench_now_ns();
        if (sampler != NULL) {
            rdlm_bench_sampler_add(sampler, t - t_prev);
        }
        busy += t - t_prev;
        t_prev = t;
        if (++k % RDLM_MBB_CHUNK == 0 && k < n) {
            stop = b->rank == 0 && busy > cap_ns;
            PMPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
            if (stop) {
                break;
            }
            t_prev = rdlm_bench_now_ns();
        }
    }
    *busy_ns_p = busy;
    return k;
}

/* The statistics of the rdlm context (zeros without one). */
static void rdlm_mbb_stats(const rdlm_mbb_t *b, rdlm_stats_t *s)
{
    memset(s, 0, sizeof(*s));
    if (b->ctx != NULL) {
        rdlm_mbb_check(b, rdlm_ctx_stats(b->ctx, s), "rdlm_ctx_stats");
    }
}

/* rdlm impls: what the node leaders sent per barrier, reduced at rank 0. */
static void rdlm_mbb_msgs(rdlm_mbb_t *b, uint32_t impl, const rdlm_stats_t *before,
                          const rdlm_stats_t *after)
{
    int leader = b->info.local_rank == 0;
    uint64_t barriers = after->barriers - before->barriers;
    uint64_t msgs = after->barrier_msgs - before->barrier_msgs;
    uint64_t mine[2] = {barriers, leader ? 0 : msgs}, sum[2];
    double per = barriers ? (double)msgs / (double)barriers : 0;
    double lo = leader ? per : 1e300, hi = leader ? per : -1, per_min, per_max;

    PMPI_Reduce(mine, sum, 2, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    PMPI_Reduce(&lo, &per_min, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    PMPI_Reduce(&hi, &per_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (b->rank != 0) {
        return;
    }
    if (b->barriers[impl] == 0 || per_min < b->per_min[impl]) {
        b->per_min[impl] = per_min;
    }
    if (b->barriers[impl] == 0 || per_max > b->per_max[impl]) {
        b->per_max[impl] = per_max;
    }
    b->barriers[impl] += sum[0];
    b->off_msgs[impl] += sum[1];
}

/* One phase of impl: warm-up, the timed loop, the figures reduced at rank 0. */
static int rdlm_mbb_phase(uint32_t slot, uint32_t round, void *arg)
{
    rdlm_mbb_t *b = arg;
    uint32_t impl = b->impl[slot];
    rdlm_bench_sampler_t sampler = {.buf = b->samples,
                                    .cap = RDLM_MBB_SAMPLES,
                                    .rng = 0x9e3779b97f4a7c15ull * (uint64_t)(b->rank + 1)};
    double mine[RDLM_BENCH_FIG_OPS], hi[RDLM_BENCH_FIG_OPS], lo, sum;
    rdlm_stats_t before, after;
    rdlm_bench_summary_t s;
    uint64_t busy, done, k;

    rdlm_mbb_sync();
    rdlm_mbb_loop(b, impl, b->warmup, RDLM_MBB_WARMUP_CAP_NS, NULL, &busy);
    rdlm_mbb_sync();
    rdlm_mbb_stats(b, &before);
    done = rdlm_mbb_loop(b, impl, b->iterations, b->cap_ns, &sampler, &busy);
    rdlm_mbb_stats(b, &after);
    for (k = 0; k < sampler.len; k++) {
        b->scratch[k] = b->samples[k] / 1000.0;
    }
    rdlm_bench_summarize(b->scratch, sampler.len, &s);
    mine[RDLM_BENCH_FIG_VALUE] = (double)busy / (double)(done ? done : 1) / 1000.0;
    mine[RDLM_BENCH_FIG_P50] = s.p50;
    mine[RDLM_BENCH_FIG_P90] = s.p90;
    mine[RDLM_BENCH_FIG_P99] = s.p99;
    PMPI_Reduce(mine, hi, RDLM_BENCH_FIG_OPS, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    PMPI_Reduce(mine, &lo, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    PMPI_Reduce(mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rdlm_mbb_impls[impl].rdlm) {
        rdlm_mbb_msgs(b, impl, &before, &after);
    }
    if (b->rank == 0) {
        rdlm_bench_out_progress(&b->out, RDLM_MBB_TOOL, ++b->phases, b->nimpl * b->rounds,
                                rdlm_mbb_impls[impl].key);
        for (k = 0; k < RDLM_BENCH_FIG_OPS; k++) {
            b->fig[impl][k][round] = hi[k];
        }
        b->fig[impl][RDLM_BENCH_FIG_OPS][round] = (double)done;
        b->fig[impl][RDLM_MBB_F_AVG][round] = sum / b->size;
        b->fig[impl][RDLM_MBB_F_MIN][round] = lo;
    }
    return 0;
}

/* ---- options ------------------------------------------------------------------------ */

static const char rdlm_mbb_usage[] =
    "Usage: mpirun -np N rdlm-mpi-barrier-bench [--impls LIST] [-i ITER] [-x WARMUP]\n"
    "         [-r ROUNDS] [-t CAP_MS] [-c COMPUTE_US] [-f] [--csv | --json]\n"
    "         [--result-lines]\n"
    "       rdlm-mpi-barrier-bench -v|-V|--version | -h|--help\n"
    "  --impls LIST   comma-separated, in this order in a round (default rdlm,mpi):\n"
    "                 rdlm          rdlm_ctx_barrier\n"
    "                 mpi           MPI_Barrier\n"
    "                 rdlm_split    rdlm_ctx_barrier_arrive, compute, _wait\n"
    "                 mpi_ibarrier  MPI_Ibarrier, compute, MPI_Wait\n"
    "                 pmpi          PMPI_Barrier (MPI's own beside a preloaded shim)\n"
    "  -i ITER        timed iterations per phase (10000), at most -t ms (2000)\n"
    "  -x WARMUP      warm-up iterations per phase (1000), at most 0.5 s\n"
    "  -r ROUNDS      rounds, each running every impl once, alternating order (5)\n"
    "  -c COMPUTE_US  compute between arrive and wait of the split impls (20)\n"
    "  -f             full statistics: min and max over rounds, p50/p90/p99, ops; avg\n"
    "                 and min over ranks in the '#' lines below the rows\n"
    "  --csv, --json  rows as CSV (RFC 4180) or JSON instead of the '#' table\n"
    "  --result-lines also the RESULT lines rdlm-bench reads\n"
    "Latency: max over ranks of each rank's mean, median over rounds; Size: ranks.\n"
    "Progress on stderr for runs over 3 s.\n"
    "Exit: 0 ran or printed help/version; 2 bad command line (one line on stderr).\n";

/* This program's own option: -c COMPUTE_US. */
static int rdlm_mbb_option(void *ctx, int c, const char *arg)
{
    rdlm_mbb_t *b = ctx;
    uint64_t us;

    (void)c;
    if (rdlm_bench_mpi_u64(arg, 0, &us) != 0) {
        return -1;
    }
    b->compute_ns = us * 1000ull;
    return 0;
}

/* -1 to run, else the exit status (help, version or one error line printed by
 * rank 0). */
static int rdlm_mbb_options(rdlm_mbb_t *b, int argc, char **argv)
{
    static const struct option longopts[] = {RDLM_BENCH_MPI_LONGOPTS, {NULL, 0, NULL, 0}};
    const char *names[RDLM_MBB_NIMPL];
    rdlm_bench_mpi_opts_t o = {.iterations = 10000,
                               .warmup = 1000,
                               .rounds = 5,
                               .cap_ms = 2000,
                               .impls = "rdlm,mpi"};
    uint32_t k;
    int rc, n;

    b->compute_ns = 20000;
    rc = rdlm_bench_mpi_parse(argc, argv, b->rank, RDLM_MBB_TOOL, rdlm_mbb_usage,
                              RDLM_BENCH_MPI_OPTSTRING "c:", longopts, &o, &b->out,
                              rdlm_mbb_option, b);
    if (rc >= 0) {
        return rc;
    }
    for (k = 0; k < RDLM_MBB_NIMPL; k++) {
        names[k] = rdlm_mbb_impls[k].key;
    }
    if ((n = rdlm_bench_mpi_select(o.impls, names, RDLM_MBB_NIMPL, b->impl)) < 0) {
        return rdlm_bench_mpi_usage_error(b->rank, RDLM_MBB_TOOL,
                                          "--impls: unknown or repeated names");
    }
    b->nimpl = (uint32_t)n;
    b->iterations = o.iterations;
    b->warmup = o.warmup;
    b->rounds = (uint32_t)o.rounds;
    b->cap_ns = o.cap_ms * 1000000ull;
    b->result_lines = o.result_lines;
    return -1;
}

/* ---- output ------------------------------------------------------------------------- */

/* The file that defines the MPI_Barrier this program calls (a preloaded replacement
 * shows here), without its directory. */
static const char *rdlm_mbb_barrier_lib(void)
{
    Dl_info dl;
    const char *slash;

    if (dladdr((void *)MPI_Barrier, &dl) == 0 || dl.dli_fname == NULL) {
        return "?";
    }
    slash = strrchr(dl.dli_fname, '/');
    return slash != NULL ? slash + 1 : dl.dli_fname;
}

/* The median over rounds of figure f of impl. */
static double rdlm_mbb_median(const rdlm_mbb_t *b, uint32_t impl, uint32_t f)
{
    double v[RDLM_BENCH_MAX_ROUNDS];

    memcpy(v, b->fig[impl][f], sizeof(double) * b->rounds);
    return rdlm_bench_median(v, b->rounds);
}

/* The fewest iterations timed in a round of impl (fewer than -i: the cap ended it). */
static uint64_t rdlm_mbb_fewest(const rdlm_mbb_t *b, uint32_t impl)
{
    double fewest = b->fig[impl][RDLM_BENCH_FIG_OPS][0];
    uint32_t k;

    for (k = 1; k < b->rounds; k++) {
        fewest = b->fig[impl][RDLM_BENCH_FIG_OPS][k] < fewest
                     ? b->fig[impl][RDLM_BENCH_FIG_OPS][k]
                     : fewest;
    }
    return (uint64_t)fewest;
}

static int rdlm_mbb_runs(const rdlm_mbb_t *b, uint32_t impl)
{
    uint32_t k;

    for (k = 0; k < b->nimpl && b->impl[k] != impl; k++) {
    }
    return k < b->nimpl;
}

/* The impl impl is compared with in the notes: its MPI counterpart, or MPI's own
 * barrier when it runs beside a preloaded replacement; -1 when it does not run. */
static int rdlm_mbb_against(const rdlm_mbb_t *b, uint32_t impl)
{
    uint32_t against = (uint32_t)rdlm_mbb_impls[impl].peer;

    if (against == RDLM_MBB_MPI && rdlm_mbb_runs(b, RDLM_MBB_PMPI)) {
        against = RDLM_MBB_PMPI;
    }
    return rdlm_mbb_runs(b, against) ? (int)against : -1;
}

/* One row of impl: us_max over rounds, the percentiles, the iterations timed. */
static void rdlm_mbb_row(rdlm_mbb_t *b, uint32_t impl)
{
    rdlm_bench_out_row_t row = {
        .size = (uint64_t)b->size, .impl = rdlm_mbb_impls[impl].key, .unit = "us"};

    rdlm_bench_out_row(&b->out, &row, b->fig[impl], b->rounds);
}

/* The '#' lines under the table: each impl against its MPI counterpart (-f: with avg
 * and min over ranks), the split phase's overlap, the node leaders' messages. */
static void rdlm_mbb_notes(const rdlm_mbb_t *b)
{
    uint32_t k, impl;
    double us, peer;
    int against;

    for (k = 0; k < b->nimpl; k++) {
        impl = b->impl[k];
        us = rdlm_mbb_median(b, impl, RDLM_BENCH_FIG_VALUE);
        printf("# %s (%s): %.2f us", rdlm_mbb_impls[impl].key, rdlm_mbb_impls[impl].label,
               us);
        if (b->out.full) {
            printf(", avg %.2f, min %.2f over ranks, fewest iterations %" PRIu64,
                   rdlm_mbb_median(b, impl, RDLM_MBB_F_AVG),
                   rdlm_mbb_median(b, impl, RDLM_MBB_F_MIN), rdlm_mbb_fewest(b, impl));
        }
        against = rdlm_mbb_against(b, impl);
        if (against >= 0 && (uint32_t)against != impl) {
            peer = rdlm_mbb_median(b, (uint32_t)against, RDLM_BENCH_FIG_VALUE);
            printf(", %.2fx %s", us / peer, rdlm_mbb_impls[against].label);
        }
        printf("\n");
    }
    for (impl = RDLM_MBB_RDLM; impl <= RDLM_MBB_MPI; impl++) {
        uint32_t split = impl + RDLM_MBB_RDLM_SPLIT; /* its split-phase form */

        if (rdlm_mbb_runs(b, impl) && rdlm_mbb_runs(b, split)) {
            us = rdlm_mbb_median(b, split, RDLM_BENCH_FIG_VALUE);
            peer = rdlm_mbb_median(b, impl, RDLM_BENCH_FIG_VALUE);
            printf("# %s: %.2f us exposed beside %.1f us of compute, overlap %.0f%% of "
                   "the %.2f us barrier\n",
                   rdlm_mbb_impls[split].label, us - b->compute_ns / 1e3,
                   b->compute_ns / 1e3, 100.0 * (1.0 - (us - b->compute_ns / 1e3) / peer),
                   peer);
        }
    }
    for (impl = 0; impl < RDLM_MBB_NIMPL; impl++) {
        if (b->barriers[impl] > 0) {
            printf("# %s: node leaders sent %.2f..%.2f messages per barrier "
                   "(design ceil(log2 %u))\n",
                   rdlm_mbb_impls[impl].label, b->per_min[impl], b->per_max[impl],
                   b->info.nodes);
        }
    }
}

/* The hosts of MPI_COMM_WORLD (MPI's shared-memory split), for the header when no
 * impl needs an rdlm context to say its nodes. Collective. */
static uint32_t rdlm_mbb_hosts(void)
{
    MPI_Comm shared;
    int local, leaders = 0, one;

    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
    MPI_Comm_rank(shared, &local);
    one = local == 0;
    MPI_Allreduce(&one, &leaders, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Comm_free(&shared);
    return (uint32_t)leaders;
}

/* osu_barrier's output: the header, one row per impl (Latency: max over ranks), the
 * notes (table format only). */
static void rdlm_mbb_table(rdlm_mbb_t *b)
{
    char lib[160], run[160];
    const char *notes[3] = {lib, run,
                            "Latency: max over ranks of each rank's mean; median over "
                            "rounds; Size: ranks"};
    uint32_t k;

    snprintf(lib, sizeof(lib), "MPI_Barrier from %s; %s %u", rdlm_mbb_barrier_lib(),
             b->ctx != NULL ? "rdlm node(s)" : "no rdlm impl chosen; host(s)",
             b->info.nodes);
    snprintf(run, sizeof(run),
             "%" PRIu64 " iterations (at most %.1f s), %" PRIu64 " warm-up, %u rounds, "
             "compute %.1f us in split impls",
             b->iterations, b->cap_ns / 1e9, b->warmup, b->rounds, b->compute_ns / 1e3);
    b->out.size = "Ranks";
    rdlm_bench_out_begin(&b->out, "barrier", b->size, b->info.nodes, notes, 3);
    for (k = 0; k < b->nimpl; k++) {
        rdlm_mbb_row(b, b->impl[k]);
    }
    rdlm_bench_out_end(&b->out);
    if (b->out.format == RDLM_BENCH_OUT_TABLE) {
        rdlm_mbb_notes(b);
    }
}

/* The result lines rdlm-bench reads (--result-lines, mpi_result.h). */
static void rdlm_mbb_result_lines(const rdlm_mbb_t *b)
{
    uint32_t k, impl;

    rdlm_bench_result_put1("info", "nodes", b->info.nodes);
    rdlm_bench_result_word("info", "barrier_lib", rdlm_mbb_barrier_lib());
    for (k = 0; k < b->nimpl; k++) {
        impl = b->impl[k];
        rdlm_bench_result_figs(rdlm_mbb_impls[impl].key, b->fig[impl], rdlm_bench_fig_keys,
                               RDLM_BENCH_FIG_N, b->rounds);
        if (rdlm_mbb_impls[impl].rdlm) {
            rdlm_bench_result_put1(rdlm_mbb_impls[impl].key, "barriers", b->barriers[impl]);
            rdlm_bench_result_put1(rdlm_mbb_impls[impl].key, "leader_msgs_min",
                                   b->per_min[impl]);
            rdlm_bench_result_put1(rdlm_mbb_impls[impl].key, "leader_msgs_max",
                                   b->per_max[impl]);
            rdlm_bench_result_put1(rdlm_mbb_impls[impl].key, "nonleader_msgs",
                                   b->off_msgs[impl]);
        }
    }
}

static void rdlm_mbb_print(rdlm_mbb_t *b)
{
    if (b->result_lines) {
        rdlm_mbb_result_lines(b);
    }
    rdlm_mbb_table(b);
}

int main(int argc, char **argv)
{
    rdlm_mbb_t *b = calloc(1, sizeof(*b));
    rdlm_status_t st;
    uint32_t k;
    int need_ctx = 0;
    int rc;

    MPI_Init(&argc, &argv);
    if (b == NULL) {
        fprintf(stderr, "rdlm-mpi-barrier-bench: out of memory\n");
        PMPI_Abort(MPI_COMM_WORLD, 1);
        return 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &b->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &b->size);
    rc = rdlm_mbb_options(b, argc, argv);
    if (rc >= 0) {
        MPI_Finalize();
        free(b);
        return rc;
    }
    b->samples = malloc(sizeof(*b->samples) * RDLM_MBB_SAMPLES);
    b->scratch = malloc(sizeof(*b->scratch) * RDLM_MBB_SAMPLES);
    if (b->samples == NULL || b->scratch == NULL) {
        rdlm_bench_out_die(RDLM_MBB_TOOL, b->rank, "malloc: out of memory");
    }
    for (k = 0; k < b->nimpl; k++) {
        need_ctx |= rdlm_mbb_impls[b->impl[k]].rdlm;
    }
    if (need_ctx) { /* collective; PMPI only inside */
        st = rdlm_mpi_ctx_create(MPI_COMM_WORLD, NULL, &b->ctx);
        rdlm_mbb_check(b, st, "rdlm_mpi_ctx_create");
        st = rdlm_ctx_dist_info(b->ctx, &b->info);
        rdlm_mbb_check(b, st, "rdlm_ctx_dist_info");
    } else {
        b->info.nodes = rdlm_mbb_hosts(); /* no rdlm context: MPI's hosts */
    }
    rdlm_bench_out_start(&b->out);
    rdlm_bench_alternate(b->nimpl, b->rounds, rdlm_mbb_phase, b);
    if (b->rank == 0) {
        rdlm_mbb_print(b);
    }
    if (b->ctx != NULL) {
        rdlm_ctx_destroy(b->ctx); /* collective */
    }
    free(b->scratch);
    free(b->samples);
    free(b);
    MPI_Finalize();
    return 0;
}
