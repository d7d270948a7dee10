/*
 * rdlm-bench: the benchmark engine's entry point. Parses the command line, prints
 * the header, runs the selected benchmark definitions in order (on stderr a line as
 * each starts, the progress lines of the MPI programs it runs, and a line as it ends),
 * prints each one's section and the final comparison table on stdout, and writes the
 * CSV and JSON files.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchmarks.h"
#include "clock.h"
#include "noise.h"
#include "options.h"
#include "report.h"

/* Say how much other work shared the machine during one benchmark (a note in its
 * section) and return that share, or -1 if unknown. */
static double rdlm_bench_noise_note(rdlm_bench_report_t *report, const char *bench,
                                    const rdlm_bench_noise_snap_t *from)
{
    rdlm_bench_noise_snap_t to;
    double steal;
    double others;

    rdlm_bench_noise_take(&to);
    others = rdlm_bench_noise_others(from, &to, &steal);
    if (others < 0) {
        rdlm_bench_report_note(report, bench, RDLM_BENCH_NOTE_INFO,
                               "machine: other processes' CPU use not known (benchmark "
                               "shorter than 1 s)");
        return -1;
    }
    rdlm_bench_report_note(report, bench, RDLM_BENCH_NOTE_INFO,
                           "machine: other processes used %.0f%% of the CPUs (hypervisor "
                           "steal %.0f%%) during this benchmark%s",
                           others * 100.0, steal * 100.0,
                           others + steal > 0.10 ? ": NOISY, re-run on a quiet machine"
                                                 : "");
    return others + steal;
}

static const rdlm_bench_def_t *const rdlm_bench_defs[] = {
    &rdlm_bench_def_lock_latency,
    &rdlm_bench_def_lock_contended,
    &rdlm_bench_def_try_lock,
    &rdlm_bench_def_rwlock_ratio,
    &rdlm_bench_def_sem,
    &rdlm_bench_def_cas_pingpong,
    &rdlm_bench_def_barrier,
    &rdlm_bench_def_dist_barrier,
    &rdlm_bench_def_memory,
#if RDLM_BENCH_HAVE_UCX
    &rdlm_bench_def_tl_fadd,
#endif
    &rdlm_bench_def_services,
    &rdlm_bench_def_lease_renew,
    &rdlm_bench_def_dist_lock,
    &rdlm_bench_def_dist_contended,
    &rdlm_bench_def_dist_sweep,
    &rdlm_bench_def_dist_memory,
    &rdlm_bench_def_dist_counter,
};
#define RDLM_BENCH_NDEFS (sizeof(rdlm_bench_defs) / sizeof(rdlm_bench_defs[0]))

/* 1 if d runs: named on the command line, or nothing named and d not opt-in. */
static int rdlm_bench_runs(const rdlm_bench_opts_t *opts, const rdlm_bench_def_t *d)
{
    return rdlm_bench_opts_selects(opts, d->name) && (opts->nselected > 0 || !d->opt_in);
}

/* Append to buf (len bytes, used so far in *used_p); text that does not fit is cut,
 * and *used_p never passes len - 1. */
static void rdlm_bench_append(char *buf, size_t len, size_t *used_p, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void rdlm_bench_append(char *buf, size_t len, size_t *used_p, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (*used_p + 1 >= len) {
        return;
    }
    va_start(ap, fmt);
    n = vsnprintf(buf + *used_p, len - *used_p, fmt, ap);
    va_end(ap);
    if (n > 0) {
        *used_p = *used_p + (size_t)n < len ? *used_p + (size_t)n : len - 1;
    }
}

/* "lock-latency 1; lock-contended 2,16; ..." for the selected benchmarks. */
static void rdlm_bench_processes_text(const rdlm_bench_opts_t *opts, char *buf, size_t len)
{
    const uint32_t *procs;
    uint32_t nprocs;
    size_t used = 0;
    uint32_t k;
    uint32_t j;

    buf[0] = '\0';
    for (k = 0; k < RDLM_BENCH_NDEFS; k++) {
        const rdlm_bench_def_t *d = rdlm_bench_defs[k];

        if (!rdlm_bench_runs(opts, d)) {
            continue;
        }
        rdlm_bench_append(buf, len, &used, "%s%s ", used ? "; " : "", d->name);
        if (d->default_procs == NULL) {
            rdlm_bench_append(buf, len, &used, "1");
            continue;
        }
        nprocs = rdlm_bench_opts_procs(opts, d->default_procs, d->ndefault_procs, &procs);
        for (j = 0; j < nprocs; j++) {
            rdlm_bench_append(buf, len, &used, "%s%u", j ? "," : "", procs[j]);
        }
    }
}

int main(int argc, char **argv)
{
    const char *names[RDLM_BENCH_NDEFS + 1];
    rdlm_bench_report_t *report;
    rdlm_bench_opts_t opts;
    char processes[512];
    uint32_t selected = 0;
    uint32_t done = 0;
    int failed = 0;
    rdlm_bench_noise_snap_t snap;
    double noise;
    uint64_t t0;
    uint32_t k;

    for (k = 0; k < RDLM_BENCH_NDEFS; k++) {
        names[k] = rdlm_bench_defs[k]->name;
    }
    names[RDLM_BENCH_NDEFS] = NULL;
    switch (rdlm_bench_opts_parse(argc, argv, names, &opts)) {
    case RDLM_BENCH_PARSE_HELP:
        return 0;
    case RDLM_BENCH_PARSE_USAGE:
        return 2;
    default:
        break;
    }
    report = calloc(1, sizeof(*report));
    if (report == NULL) {
        fprintf(stderr, "rdlm-bench: out of memory\n");
        return 1;
    }
    report->opts = &opts;
    report->noise_max = -1;
    rdlm_bench_processes_text(&opts, processes, sizeof(processes));
    rdlm_bench_header_fill(&report->header, &opts, argc, argv, processes);
    rdlm_bench_header_print(&report->header, stdout);

    for (k = 0; k < RDLM_BENCH_NDEFS; k++) {
        selected += (uint32_t)rdlm_bench_runs(&opts, rdlm_bench_defs[k]);
    }
    for (k = 0; k < RDLM_BENCH_NDEFS; k++) {
        const rdlm_bench_def_t *d = rdlm_bench_defs[k];
        int rc;

        if (!rdlm_bench_runs(&opts, d)) {
            continue;
        }
        fflush(stdout);
        fprintf(stderr, "rdlm-bench: [%u/%u] %-15s ...\n", ++done, selected, d->name);
        t0 = rdlm_bench_now_ns();
        rdlm_bench_noise_take(&snap);
        rc = d->run(report);
        noise = rdlm_bench_noise_note(report, d->name, &snap);
        if (noise > report->noise_max) {
            report->noise_max = noise;
            snprintf(report->noise_bench, sizeof(report->noise_bench), "%s", d->name);
        }
        fprintf(stderr, "rdlm-bench:   %s in %.1f s", rc == 0 ? "done" : "FAILED",
                (double)(rdlm_bench_now_ns() - t0) / 1e9);
        if (noise >= 0) {
            fprintf(stderr, ", other load %.0f%%%s", noise * 100.0,
                    noise > 0.10 ? " (noisy)" : "");
        }
        fprintf(stderr, "\n");
        if (rc != 0) {
            failed = 1;
            rdlm_bench_report_note(report, d->name, RDLM_BENCH_NOTE_SKIP,
                                   "measurement failed (reason on stderr)");
        }
        rdlm_bench_report_section(report, d->name, d->title, stdout);
    }
    rdlm_bench_report_table(report, stdout);
    fflush(stdout);
    if (opts.csv_path != NULL && rdlm_bench_report_write_csv(report, opts.csv_path) != 0) {
        failed = 1;
    }
    if (opts.json_path != NULL && rdlm_bench_report_write_json(report, opts.json_path) != 0) {
        failed = 1;
    }
    free(report);
    return failed ? 1 : 0;
}
