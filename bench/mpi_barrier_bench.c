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
 * With --result-lines, first the lines rdlm-bench parses:
 *
 *   RESULT info nprocs=N nodes=K transport=T progress_thread=0|1
 *          ucx_tls=.. compute_us=X iters=I barrier_lib=FILE (the library that
 *          defines the MPI_Barrier this program calls)
 *   RESULT round impl=I round=R value=U unit=us us_avg= us_min= p50_us= p90_us= p99_us=
 *          done= (value = us_max; done: iterations timed, fewer than -i at the cap)
 *   RESULT stats impl=I barriers= msgs= leader_msgs_per_barrier_min= ..._max=
 *          nonleader_msgs=      (rdlm impls; summed over ranks and rounds)
 *   RESULT done
 */
#include <dlfcn.h>
#include <getopt.h>
#include <inttypes.h>
#include <mpi.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdlm.h>
#include <rdlm/mpi.h>

#include "cli.h"
#include "clock.h"
#include "mpi_output.h"
#include "options.h"
#include "rounds.h"
#include "stats.h"

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

static const struct {
    const char *key;   /* in --impls and RESULT lines */
    const char *label; /* in the table */
    int rdlm;          /* needs the rdlm context */
    int peer;          /* the impl it is compared with in the table */
} rdlm_mbb_impls[RDLM_MBB_NIMPL] = {
    {"rdlm", "rdlm_ctx_barrier", 1, RDLM_MBB_MPI},
    {"mpi", "MPI_Barrier", 0, RDLM_MBB_MPI},
    {"rdlm_split", "rdlm arrive+wait", 1, RDLM_MBB_MPI_IBARRIER},
    {"mpi_ibarrier", "MPI_Ibarrier+Wait", 0, RDLM_MBB_MPI_IBARRIER},
    {"pmpi", "PMPI_Barrier", 0, RDLM_MBB_PMPI},
};

/* One rank's figures of one phase, reduced over ranks in this order. */
enum { RDLM_MBB_F_US, RDLM_MBB_F_P50, RDLM_MBB_F_P90, RDLM_MBB_F_P99, RDLM_MBB_NF };

typedef struct rdlm_mbb_round {
    double us_max, us_avg, us_min;
    double pct[3]; /* p50, p90, p99: max over ranks */
    uint64_t done;
} rdlm_mbb_round_t;

typedef struct rdlm_mbb {
    /* options */
    uint64_t iterations;
    uint64_t warmup;
    uint32_t rounds;
    uint64_t cap_ns;
    uint64_t compute_ns;
    int result_lines;              /* --result-lines: the RESULT lines rdlm-bench parses */
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
    rdlm_mbb_round_t res[RDLM_MBB_NIMPL][RDLM_BENCH_MAX_ROUNDS];
    uint64_t barriers[RDLM_MBB_NIMPL]; /* rdlm impls: at every rank, summed */
    uint64_t msgs[RDLM_MBB_NIMPL];     /* ... sent by leaders, summed */
    uint64_t off_msgs[RDLM_MBB_NIMPL]; /* ... sent by other ranks (must stay 0) */
    double per_min[RDLM_MBB_NIMPL];    /* leaders' msgs / barriers, min and max */
    double per_max[RDLM_MBB_NIMPL];
    uint32_t phases; /* run so far, for the progress line */
} rdlm_mbb_t;

/* End the job: what failed and why, from this rank (no rank may hang). */
static void rdlm_mbb_fail(const rdlm_mbb_t *b, const char *what, const char *why)
    __attribute__((noreturn));

static void rdlm_mbb_fail(const rdlm_mbb_t *b, const char *what, const char *why)
{
    fprintf(stderr, "rdlm-mpi-barrier-bench: rank %d: %s: %s\n", b->rank, what, why);
    fflush(stderr);
    PMPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

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

static void rdlm_mbb_check(const rdlm_mbb_t *b, rdlm_status_t st, const char *what)
{
    if (st != RDLM_OK) {
        rdlm_mbb_fail(b, what, rdlm_status_str(st));
    }
}

/* One iteration of impl. */
static void rdlm_mbb_once(const rdlm_mbb_t *b, uint32_t impl)
{
    MPI_Request req;

    switch (impl) {
    case RDLM_MBB_RDLM:
        rdlm_mbb_check(b, rdlm_ctx_barrier(b->ctx), "rdlm_ctx_barrier");
        break;
    case RDLM_MBB_MPI:
        MPI_Barrier(MPI_COMM_WORLD);
        break;
    case RDLM_MBB_PMPI:
        PMPI_Barrier(MPI_COMM_WORLD);
        break;
    case RDLM_MBB_RDLM_SPLIT:
        rdlm_mbb_check(b, rdlm_ctx_barrier_arrive(b->ctx), "rdlm_ctx_barrier_arrive");
        rdlm_mbb_compute(b->compute_ns);
        rdlm_mbb_check(b, rdlm_ctx_barrier_wait(b->ctx), "rdlm_ctx_barrier_wait");
        break;
    default:
        MPI_Ibarrier(MPI_COMM_WORLD, &req);
        rdlm_mbb_compute(b->compute_ns);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        break;
    }
}

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
        rdlm_mbb_once(b, impl);
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
    uint64_t mine[3] = {barriers, leader ? msgs : 0, leader ? 0 : msgs}, sum[3];
    double per = barriers ? (double)msgs / (double)barriers : 0;
    double lo = leader ? per : 1e300, hi = leader ? per : -1, per_min, per_max;

    PMPI_Reduce(mine, sum, 3, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
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
    b->msgs[impl] += sum[1];
    b->off_msgs[impl] += sum[2];
}

/* One phase of impl: warm-up, the timed loop, the figures reduced at rank 0. */
static int rdlm_mbb_phase(uint32_t slot, uint32_t round, void *arg)
{
    rdlm_mbb_t *b = arg;
    uint32_t impl = b->impl[slot];
    rdlm_bench_sampler_t sampler = {.buf = b->samples,
                                    .cap = RDLM_MBB_SAMPLES,
                                    .rng = 0x9e3779b97f4a7c15ull * (uint64_t)(b->rank + 1)};
    double mine[RDLM_MBB_NF], hi[RDLM_MBB_NF], lo, sum;
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
    mine[RDLM_MBB_F_US] = (double)busy / (double)(done ? done : 1) / 1000.0;
    mine[RDLM_MBB_F_P50] = s.p50;
    mine[RDLM_MBB_F_P90] = s.p90;
    mine[RDLM_MBB_F_P99] = s.p99;
    PMPI_Reduce(mine, hi, RDLM_MBB_NF, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    PMPI_Reduce(&mine[RDLM_MBB_F_US], &lo, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    PMPI_Reduce(&mine[RDLM_MBB_F_US], &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rdlm_mbb_impls[impl].rdlm) {
        rdlm_mbb_msgs(b, impl, &before, &after);
    }
    if (b->rank == 0) {
        rdlm_bench_out_progress(&b->out, "rdlm-mpi-barrier-bench", ++b->phases,
                                b->nimpl * b->rounds, rdlm_mbb_impls[impl].key);
        b->res[impl][round] = (rdlm_mbb_round_t){
            .us_max = hi[RDLM_MBB_F_US],
            .us_avg = sum / b->size,
            .us_min = lo,
            .pct = {hi[RDLM_MBB_F_P50], hi[RDLM_MBB_F_P90], hi[RDLM_MBB_F_P99]},
            .done = done,
        };
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
    "  --result-lines also the RESULT lines rdlm-bench parses\n"
    "Latency: max over ranks of each rank's mean, median over rounds; Size: ranks.\n"
    "Progress on stderr for runs over 3 s.\n"
    "Exit: 0 ran or printed help/version; 2 bad command line (one line on stderr).\n";

/* A decimal count, the whole of text, at least min; 0 or -1. */
static int rdlm_mbb_parse_u64(const char *text, uint64_t min, uint64_t *value_p)
{
    char tail;

    return text[0] >= '0' && text[0] <= '9' &&
                   sscanf(text, "%" SCNu64 "%c", value_p, &tail) == 1 && *value_p >= min
               ? 0
               : -1;
}

/* --impls: 0, or -1 for an unknown or repeated name. */
static int rdlm_mbb_parse_impls(rdlm_mbb_t *b, const char *list)
{
    char buf[128];
    char *save = NULL;
    char *tok;
    uint32_t k, j;

    if (strlen(list) >= sizeof(buf)) {
        return -1;
    }
    strcpy(buf, list);
    b->nimpl = 0;
    for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        for (k = 0; k < RDLM_MBB_NIMPL && strcmp(tok, rdlm_mbb_impls[k].key) != 0; k++) {
        }
        for (j = 0; j < b->nimpl && b->impl[j] != k; j++) {
        }
        if (k == RDLM_MBB_NIMPL || j < b->nimpl) {
            return -1;
        }
        b->impl[b->nimpl++] = k;
    }
    return b->nimpl > 0 ? 0 : -1;
}

/* -1 to run, else the exit status (help, version or one error line printed by
 * rank 0). */
static int rdlm_mbb_options(rdlm_mbb_t *b, int argc, char **argv)
{
    static const char tool[] = "rdlm-mpi-barrier-bench";
    static const struct option longopts[] = {
        {"impls", required_argument, NULL, 'm'},
        {"csv", no_argument, NULL, 'C'},
        {"json", no_argument, NULL, 'J'},
        {"result-lines", no_argument, NULL, 'R'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    static const char optstring[] = ":m:i:x:r:t:c:fhvV";
    uint64_t rounds = 5, cap_ms = 2000, compute_us = 20;
    int ok = 1;
    int c;

    b->iterations = 10000;
    b->warmup = 1000;
    b->impl[0] = RDLM_MBB_RDLM;
    b->impl[1] = RDLM_MBB_MPI;
    b->nimpl = 2;
    opterr = 0; /* rank 0 reports, in one line */
    while (ok && (c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
        switch (c) {
        case 'm':
            ok = rdlm_mbb_parse_impls(b, optarg) == 0;
            break;
        case 'i':
            ok = rdlm_mbb_parse_u64(optarg, 1, &b->iterations) == 0;
            break;
        case 'x':
            ok = rdlm_mbb_parse_u64(optarg, 0, &b->warmup) == 0;
            break;
        case 'r':
            ok = rdlm_mbb_parse_u64(optarg, 1, &rounds) == 0 &&
                 rounds <= RDLM_BENCH_MAX_ROUNDS;
            break;
        case 't':
            ok = rdlm_mbb_parse_u64(optarg, 1, &cap_ms) == 0;
            break;
        case 'c':
            ok = rdlm_mbb_parse_u64(optarg, 0, &compute_us) == 0;
            break;
        case 'f':
            b->out.full = 1;
            break;
        case 'C':
        case 'J':
            b->out.format = c == 'C' ? RDLM_BENCH_OUT_CSV : RDLM_BENCH_OUT_JSON;
            break;
        case 'R':
            b->result_lines = 1;
            break;
        case 'h':
            if (b->rank == 0) {
                fputs(rdlm_mbb_usage, stdout);
            }
            return 0;
        case 'v': /* osu_*'s -v */
        case 'V':
            return b->rank == 0 ? rdlm_cli_version(tool) : 0;
        default:
            return b->rank == 0 ? rdlm_cli_bad_option(tool, c, optstring, argv)
                                : RDLM_CLI_EXIT_USAGE;
        }
        if (!ok) {
            return b->rank == 0 ? rdlm_cli_bad_value(tool, c, longopts, optarg)
                                : RDLM_CLI_EXIT_USAGE;
        }
    }
    if (optind != argc) {
        return b->rank == 0
                   ? rdlm_cli_usage_error(tool, "unexpected argument '%s'", argv[optind])
                   : RDLM_CLI_EXIT_USAGE;
    }
    b->rounds = (uint32_t)rounds;
    b->cap_ns = cap_ms * 1000000ull;
    b->compute_ns = compute_us * 1000ull;
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

/* The median over rounds of one figure of impl. */
static double rdlm_mbb_median(const rdlm_mbb_t *b, uint32_t impl, size_t offset)
{
    double v[RDLM_BENCH_MAX_ROUNDS];
    uint32_t k;

    for (k = 0; k < b->rounds; k++) {
        v[k] = *(const double *)((const char *)&b->res[impl][k] + offset);
    }
    return rdlm_bench_median(v, b->rounds);
}

/* The fewest iterations timed in a round of impl (fewer than -i: the cap ended it). */
static uint64_t rdlm_mbb_fewest(const rdlm_mbb_t *b, uint32_t impl)
{
    uint64_t fewest = UINT64_MAX;
    uint32_t k;

    for (k = 0; k < b->rounds; k++) {
        fewest = b->res[impl][k].done < fewest ? b->res[impl][k].done : fewest;
    }
    return fewest;
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
    double us[RDLM_BENCH_MAX_ROUNDS], pct[RDLM_BENCH_MAX_ROUNDS][3];
    rdlm_bench_out_row_t row = {
        .size = (uint64_t)b->size, .impl = rdlm_mbb_impls[impl].key, .unit = "us"};
    uint32_t k;

    for (k = 0; k < b->rounds; k++) {
        us[k] = b->res[impl][k].us_max;
        memcpy(pct[k], b->res[impl][k].pct, sizeof(pct[k]));
        row.ops += b->res[impl][k].done;
    }
    rdlm_bench_out_over_rounds(&row, us, (const double(*)[3])pct, b->rounds);
    rdlm_bench_out_row(&b->out, &row);
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
        us = rdlm_mbb_median(b, impl, offsetof(rdlm_mbb_round_t, us_max));
        printf("# %s (%s): %.2f us", rdlm_mbb_impls[impl].key, rdlm_mbb_impls[impl].label,
               us);
        if (b->out.full) {
            printf(", avg %.2f, min %.2f over ranks, fewest iterations %" PRIu64,
                   rdlm_mbb_median(b, impl, offsetof(rdlm_mbb_round_t, us_avg)),
                   rdlm_mbb_median(b, impl, offsetof(rdlm_mbb_round_t, us_min)),
                   rdlm_mbb_fewest(b, impl));
        }
        against = rdlm_mbb_against(b, impl);
        if (against >= 0 && (uint32_t)against != impl) {
            peer =
                rdlm_mbb_median(b, (uint32_t)against, offsetof(rdlm_mbb_round_t, us_max));
            printf(", %.2fx %s", us / peer, rdlm_mbb_impls[against].label);
        }
        printf("\n");
    }
    for (impl = RDLM_MBB_RDLM; impl <= RDLM_MBB_MPI; impl++) {
        uint32_t split = impl + RDLM_MBB_RDLM_SPLIT; /* its split-phase form */

        if (rdlm_mbb_runs(b, impl) && rdlm_mbb_runs(b, split)) {
            us = rdlm_mbb_median(b, split, offsetof(rdlm_mbb_round_t, us_max));
            peer = rdlm_mbb_median(b, impl, offsetof(rdlm_mbb_round_t, us_max));
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

/* osu_barrier's output: the header, one row per impl (Latency: max over ranks), the
 * notes (table format only). */
static void rdlm_mbb_table(rdlm_mbb_t *b)
{
    char lib[160], run[160];
    const char *notes[3] = {lib, run,
                            "Latency: max over ranks of each rank's mean; median over "
                            "rounds; Size: ranks"};
    uint32_t k;

    snprintf(lib, sizeof(lib), "MPI_Barrier from %s; rdlm node(s) %u",
             rdlm_mbb_barrier_lib(), b->ctx != NULL ? b->info.nodes : 0);
    snprintf(run, sizeof(run),
             "%" PRIu64 " iterations (at most %.1f s), %" PRIu64 " warm-up, %u rounds, "
             "compute %.1f us in split impls",
             b->iterations, b->cap_ns / 1e9, b->warmup, b->rounds, b->compute_ns / 1e3);
    b->out.size = "Ranks";
    rdlm_bench_out_begin(&b->out, "barrier", b->size, b->ctx != NULL ? b->info.nodes : 0,
                         notes, 3);
    for (k = 0; k < b->nimpl; k++) {
        rdlm_mbb_row(b, b->impl[k]);
    }
    rdlm_bench_out_end(&b->out);
    if (b->out.format == RDLM_BENCH_OUT_TABLE) {
        rdlm_mbb_notes(b);
    }
}

/* The RESULT lines rdlm-bench parses (--result-lines). */
static void rdlm_mbb_result_lines(const rdlm_mbb_t *b)
{
    const char *tls = getenv("UCX_TLS");
    const rdlm_mbb_round_t *r;
    uint32_t k, impl, round;

    printf("RESULT info nprocs=%d nodes=%u transport=%s progress_thread=%d "
           "ucx_tls=%s compute_us=%.3f iters=%" PRIu64 " barrier_lib=%s\n",
           b->size, b->info.nodes, b->info.transport ? b->info.transport : "-",
           b->info.progress_thread, tls ? tls : "(unset)", b->compute_ns / 1e3,
           b->iterations, rdlm_mbb_barrier_lib());
    for (k = 0; k < b->nimpl; k++) {
        impl = b->impl[k];
        for (round = 0; round < b->rounds; round++) {
            r = &b->res[impl][round];
            printf("RESULT round impl=%s round=%u value=%.6f unit=us us_avg=%.6f "
                   "us_min=%.6f p50_us=%.6f p90_us=%.6f p99_us=%.6f done=%" PRIu64 "\n",
                   rdlm_mbb_impls[impl].key, round, r->us_max, r->us_avg, r->us_min,
                   r->pct[0], r->pct[1], r->pct[2], r->done);
        }
        if (rdlm_mbb_impls[impl].rdlm) {
            printf("RESULT stats impl=%s barriers=%" PRIu64 " msgs=%" PRIu64
                   " leader_msgs_per_barrier_min=%.6f leader_msgs_per_barrier_max=%.6f "
                   "nonleader_msgs=%" PRIu64 "\n",
                   rdlm_mbb_impls[impl].key, b->barriers[impl], b->msgs[impl],
                   b->per_min[impl], b->per_max[impl], b->off_msgs[impl]);
        }
    }
    printf("RESULT done\n");
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
        rdlm_mbb_fail(b, "malloc", "out of memory");
    }
    for (k = 0; k < b->nimpl; k++) {
        need_ctx |= rdlm_mbb_impls[b->impl[k]].rdlm;
    }
    if (need_ctx) { /* collective; PMPI only inside */
        st = rdlm_mpi_ctx_create(MPI_COMM_WORLD, NULL, &b->ctx);
        rdlm_mbb_check(b, st, "rdlm_mpi_ctx_create");
        st = rdlm_ctx_dist_info(b->ctx, &b->info);
        rdlm_mbb_check(b, st, "rdlm_ctx_dist_info");
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
