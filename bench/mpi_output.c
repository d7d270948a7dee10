/* See mpi_output.h. */
#include "mpi_output.h"

#include <inttypes.h>
#include <math.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdlm/version.h>

#include "clock.h"
#include "fields.h"
#include "options.h"
#include "stats.h"

#define RDLM_BENCH_OUT_PROGRESS_AFTER_NS 3000000000ull
#define RDLM_BENCH_OUT_PROGRESS_EVERY_NS 2000000000ull

static const char rdlm_bench_out_csv_header[] =
    "size,impl,unit,median,min,max,p50_us,p90_us,p99_us,ops,rounds\n";

/* The table's column header. */
static void rdlm_bench_out_columns(const rdlm_bench_out_t *o)
{
    printf("# %-8s %-16s %14s %s", o->size, "Impl", "Median", o->full ? "Unit   " : "Unit");
    if (o->full) {
        printf(" %12s %12s %10s %10s %10s %12s", "Min", "Max", "p50(us)", "p90(us)",
               "p99(us)", "Ops");
    }
    printf("\n");
}

void rdlm_bench_out_begin(rdlm_bench_out_t *o, const char *what, int ranks, uint32_t nodes,
                          const char *const *notes, uint32_t nnotes)
{
    uint32_t k;

    o->nrows = 0;
    switch (o->format) {
    case RDLM_BENCH_OUT_CSV:
        fputs(rdlm_bench_out_csv_header, stdout);
        return;
    case RDLM_BENCH_OUT_JSON:
        printf("{");
        rdlm_bench_json_kv(stdout, "benchmark", what, 1);
        rdlm_bench_json_kv(stdout, "rdlm_version", RDLM_VERSION_STRING, 1);
        rdlm_bench_json_kn(stdout, "ranks", ranks, 1);
        rdlm_bench_json_kn(stdout, "nodes", nodes, 1);
        rdlm_bench_json_kv(stdout, "size", o->size, 1);
        printf("\"notes\": [");
        for (k = 0; k < nnotes; k++) {
            printf("%s", k ? ", " : "");
            rdlm_bench_json_str(stdout, notes[k]);
        }
        printf("],\n \"rows\": [");
        return;
    default:
        printf("# rdlm %s benchmark v%s\n", what, RDLM_VERSION_STRING);
        printf("# ranks %d, nodes %u\n", ranks, nodes);
        for (k = 0; k < nnotes; k++) {
            printf("# %s\n", notes[k]);
        }
        rdlm_bench_out_columns(o);
        return;
    }
}

static void rdlm_bench_out_csv_row(const rdlm_bench_out_row_t *row)
{
    const double nums[6] = {row->median, row->min, row->max, row->p50, row->p90, row->p99};
    uint32_t k;

    printf("%" PRIu64 ",", row->size);
    rdlm_bench_csv_field(stdout, row->impl);
    fputc(',', stdout);
    rdlm_bench_csv_field(stdout, row->unit);
    for (k = 0; k < 6; k++) {
        fputc(',', stdout);
        rdlm_bench_csv_num(stdout, nums[k]);
    }
    printf(",%" PRIu64 ",%u\n", row->ops, row->rounds);
}

static void rdlm_bench_out_json_row(const rdlm_bench_out_t *o,
                                    const rdlm_bench_out_row_t *row)
{
    printf("%s\n  {", o->nrows ? "," : "");
    rdlm_bench_json_kn(stdout, "size", (double)row->size, 1);
    rdlm_bench_json_kv(stdout, "impl", row->impl, 1);
    rdlm_bench_json_kv(stdout, "unit", row->unit, 1);
    rdlm_bench_json_kn(stdout, "median", row->median, 1);
    rdlm_bench_json_kn(stdout, "min", row->min, 1);
    rdlm_bench_json_kn(stdout, "max", row->max, 1);
    rdlm_bench_json_kn(stdout, "p50_us", row->p50, 1);
    rdlm_bench_json_kn(stdout, "p90_us", row->p90, 1);
    rdlm_bench_json_kn(stdout, "p99_us", row->p99, 1);
    rdlm_bench_json_kn(stdout, "ops", (double)row->ops, 1);
    rdlm_bench_json_kn(stdout, "rounds", row->rounds, 0);
    fputc('}', stdout);
}

/* row's figures over the n rounds of fig (rdlm_bench_out_row). */
static void rdlm_bench_out_over_rounds(rdlm_bench_out_row_t *row,
                                       const rdlm_bench_rounds_t *fig, uint32_t n)
{
    double v[RDLM_BENCH_MAX_ROUNDS];
    double *median[] = {&row->median, &row->p50, &row->p90, &row->p99};
    uint32_t k, f;

    n = n < RDLM_BENCH_MAX_ROUNDS ? n : RDLM_BENCH_MAX_ROUNDS;
    row->min = row->max = n ? fig[RDLM_BENCH_FIG_VALUE][0] : NAN;
    row->ops = 0;
    for (k = 0; k < n; k++) {
        row->min = fig[RDLM_BENCH_FIG_VALUE][k] < row->min ? fig[RDLM_BENCH_FIG_VALUE][k]
                                                           : row->min;
        row->max = fig[RDLM_BENCH_FIG_VALUE][k] > row->max ? fig[RDLM_BENCH_FIG_VALUE][k]
                                                           : row->max;
        row->ops += (uint64_t)fig[RDLM_BENCH_FIG_OPS][k];
    }
    for (f = RDLM_BENCH_FIG_VALUE; f <= RDLM_BENCH_FIG_P99; f++) {
        memcpy(v, fig[f], sizeof(double) * n);
        *median[f] = rdlm_bench_median(v, n);
    }
    row->rounds = n;
}

void rdlm_bench_out_row(rdlm_bench_out_t *o, rdlm_bench_out_row_t *row,
                        const rdlm_bench_rounds_t *fig, uint32_t n)
{
    rdlm_bench_out_over_rounds(row, fig, n);
    switch (o->format) {
    case RDLM_BENCH_OUT_CSV:
        rdlm_bench_out_csv_row(row);
        break;
    case RDLM_BENCH_OUT_JSON:
        rdlm_bench_out_json_row(o, row);
        break;
    default:
        printf("  %-8" PRIu64 " %-16s %14.3f %-*s", row->size, row->impl, row->median,
               o->full ? 7 : 0, row->unit);
        if (o->full) {
            printf(" %12.3f %12.3f %10.3f %10.3f %10.3f %12" PRIu64, row->min, row->max,
                   row->p50, row->p90, row->p99, row->ops);
        }
        printf("\n");
        break;
    }
    o->nrows++;
    fflush(stdout);
}

void rdlm_bench_out_end(rdlm_bench_out_t *o)
{
    if (o->format == RDLM_BENCH_OUT_JSON) {
        printf("\n ]}\n");
    }
    fflush(stdout);
}

void rdlm_bench_out_die(const char *tool, int rank, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "%s: rank %d: ", tool, rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    fflush(stderr);
    PMPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

void rdlm_bench_out_check(const char *tool, int rank, rdlm_status_t st, const char *what)
{
    if (st != RDLM_OK) {
        rdlm_bench_out_die(tool, rank, "%s: %s", what, rdlm_status_str(st));
    }
}

void rdlm_bench_out_start(rdlm_bench_out_t *o)
{
    o->t0_ns = o->last_ns = rdlm_bench_now_ns();
}

void rdlm_bench_out_progress(rdlm_bench_out_t *o, const char *tool, uint32_t done,
                             uint32_t total, const char *impl)
{
    uint64_t now = rdlm_bench_now_ns();

    if (now - o->t0_ns < RDLM_BENCH_OUT_PROGRESS_AFTER_NS ||
        now - o->last_ns < RDLM_BENCH_OUT_PROGRESS_EVERY_NS) {
        return;
    }
    o->last_ns = now;
    fprintf(stderr, "%s: %u/%u" RDLM_BENCH_OUT_PROGRESS_MARK "%s), %.1f s\n", tool, done,
            total, impl, (double)(now - o->t0_ns) / 1e9);
}
