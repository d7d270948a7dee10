/* rdlm-bench's side of its MPI programs; see bench_dist.h. */
#include "bench_dist.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_result.h"

void rdlm_bench_dist_arg(rdlm_bench_dist_args_t *a, const char *flag, const char *fmt, ...)
{
    va_list ap;

    if (a->n + (fmt != NULL) >= RDLM_BENCH_DIST_ARGS_MAX) {
        return;
    }
    a->argv[a->n++] = flag;
    if (fmt != NULL) {
        va_start(ap, fmt);
        vsnprintf(a->text[a->n], sizeof(a->text[a->n]), fmt, ap);
        va_end(ap);
        a->argv[a->n] = a->text[a->n];
        a->n++;
    }
    a->argv[a->n] = NULL;
}

void rdlm_bench_dist_counts(rdlm_bench_dist_args_t *a, const rdlm_bench_opts_t *o,
                            uint64_t iterations, uint64_t warmup)
{
    rdlm_bench_dist_arg(a, "-i", "%" PRIu64, rdlm_bench_opts_iterations(o, iterations));
    rdlm_bench_dist_arg(a, "-x", "%" PRIu64, rdlm_bench_opts_warmup(o, warmup));
}

void rdlm_bench_dist_window(rdlm_bench_dist_args_t *a, const rdlm_bench_opts_t *o,
                            uint32_t duration_ms, uint64_t warmup)
{
    rdlm_bench_dist_arg(a, "--duration", "%u", rdlm_bench_opts_duration_ms(o, duration_ms));
    rdlm_bench_dist_arg(a, "-x", "%" PRIu64, rdlm_bench_opts_warmup(o, warmup));
    if (o->iterations) {
        rdlm_bench_dist_arg(a, "-i", "%" PRIu64, o->iterations);
    }
}

const uint32_t rdlm_bench_dist_procs[1] = {4};

/* Everything over TCP: Open MPI's one-sided operations through ob1/tcp and the
 * pt2pt component (Debian's openmpi-mca-params.conf disables it: named here). */
static const char *const rdlm_bench_dist_mca[] = {"pml", "ob1",   "btl", "self,tcp",
                                                  "osc", "pt2pt", NULL};
static const char *const rdlm_bench_dist_env[] = {"UCX_TLS=tcp,self",
                                                  "RDLM_VIRTUAL_NODES=2", NULL};
static const char *const rdlm_bench_dist_unset_env[] = {"RDLM_UCX_TLS", NULL};

int rdlm_bench_dist_stats(const char *out, const char *key, double *v)
{
    int k;

    for (k = 0; k < RDLM_BENCH_NSTATS; k++) {
        if (rdlm_bench_result_get1(out, key, rdlm_bench_stat_keys[k], &v[k]) != 0) {
            return -1;
        }
    }
    return 0;
}

void rdlm_bench_dist_notes(rdlm_bench_report_t *r, const char *bench, const char *out)
{
    const char *text;
    size_t len;

    while ((text = rdlm_bench_result_next(&out, "note", "info", &len)) != NULL) {
        rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_INFO, "%.*s", (int)len, text);
    }
}

rdlm_bench_mpi_job_t rdlm_bench_dist_job_2nodes(const rdlm_bench_opts_t *o, uint32_t procs,
                                                const char *const *args, uint32_t timeout_s)
{
    return (rdlm_bench_mpi_job_t){
        .program = rdlm_bench_mpi_find(RDLM_BENCH_MPI_LOCK_BENCH),
        .nprocs = procs,
        .args = args,
        .mca = rdlm_bench_dist_mca,
        .env = rdlm_bench_dist_env,
        .unset_env = rdlm_bench_dist_unset_env,
        .timeout_s = timeout_s,
        .verbose = o->verbose,
    };
}

char *rdlm_bench_dist_run(const char *what, const rdlm_bench_mpi_job_t *job)
{
    const char *line;
    char why[1024];
    char *out;

    if (rdlm_bench_mpi_run(job, &out, why, sizeof(why)) != 0) {
        fprintf(stderr, "rdlm-bench: %s: %s\n", what, why);
        return NULL;
    }
    for (line = strstr(out, "RESULT "); job->verbose && line != NULL;
         line = strstr(line + 1, "RESULT ")) {
        fprintf(stderr, "rdlm-bench:   %.*s\n", (int)strcspn(line, "\n"), line);
    }
    return out;
}

int rdlm_bench_dist_rounds(const char *out, const char *key, const char *fig,
                           rdlm_bench_measure_t *m)
{
    double v[RDLM_BENCH_MAX_ROUNDS], p[3][RDLM_BENCH_MAX_ROUNDS];
    int n = rdlm_bench_result_get(out, key, fig, v, RDLM_BENCH_MAX_ROUNDS);
    int pct = strcmp(fig, "value") == 0;
    int k;

    for (k = 0; k < 3 && pct; k++) {
        pct = rdlm_bench_result_get(out, key, rdlm_bench_fig_keys[RDLM_BENCH_FIG_P50 + k],
                                    p[k], RDLM_BENCH_MAX_ROUNDS) == n;
    }
    for (k = 0; k < n; k++) {
        rdlm_bench_summary_t s = {
            .p50 = pct ? p[0][k] : 0, .p90 = pct ? p[1][k] : 0, .p99 = pct ? p[2][k] : 0};

        rdlm_bench_measure_round(m, v[k], pct ? &s : NULL);
    }
    return n;
}

/* Compare the rows of c, or note why not when one has no rounds (c->why). */
static void rdlm_bench_dist_compare(rdlm_bench_report_t *r, const char *bench,
                                    rdlm_bench_measure_t *const *m,
                                    const rdlm_bench_dist_cmp_t *c)
{
    const rdlm_bench_measure_t *ours = m[c->ours], *base = c->base >= 0 ? m[c->base] : NULL;

    if (c->why != NULL && (ours->nrounds == 0 || base->nrounds == 0)) {
        rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_SKIP,
                               "%s vs %s: not measured (%s)", ours->metric, base->impl,
                               c->why);
        return;
    }
    rdlm_bench_report_compare(r, ours, base, NULL, c->kind, c->target);
}

int rdlm_bench_dist_job(rdlm_bench_report_t *r, const char *bench,
                        const rdlm_bench_mpi_job_t *job, const rdlm_bench_dist_table_t *t,
                        uint32_t procs, rdlm_bench_measure_t **m, char **out_p)
{
    const rdlm_bench_dist_impl_t *impl;
    uint32_t f, k, n = 0;
    char cmd[512];
    char *out;

    rdlm_bench_mpi_command(job, cmd, sizeof(cmd));
    rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_PARAMS, "%s", cmd);
    if ((out = rdlm_bench_dist_run(bench, job)) == NULL) {
        return -1;
    }
    for (f = 0; f < 2; f++) {
        for (k = 0; k < t->figs[f].nimpl; k++, n++) {
            impl = &t->impls[k];
            m[n] = rdlm_bench_report_measure(
                r, bench, t->figs[f].metric ? t->figs[f].metric : impl->metric, impl->impl,
                procs, t->unit);
            if (m[n] == NULL) {
                goto free_out;
            }
            rdlm_bench_dist_rounds(out, impl->key,
                                   t->figs[f].key ? t->figs[f].key : "value", m[n]);
            rdlm_bench_measure_finish(m[n]);
        }
    }
    for (k = 0; k < t->nrequired; k++) {
        if (m[k]->nrounds == 0) {
            fprintf(stderr, "rdlm-bench: %s: no rounds of %s in the output: %.600s\n",
                    bench, t->impls[k].key, out);
            goto free_out;
        }
    }
    for (k = 0; k < t->ncmps; k++) {
        rdlm_bench_dist_compare(r, bench, m, &t->cmps[k]);
    }
    *out_p = out;
    return 0;
free_out:
    free(out);
    return -1;
}

void rdlm_bench_dist_once(rdlm_bench_report_t *r, const char *bench, uint32_t procs,
                          const char *metric, const char *unit, double value,
                          const rdlm_bench_dist_base_t *base)
{
    rdlm_bench_measure_t *m =
        rdlm_bench_report_figure(r, bench, metric, "rdlm", procs, unit, value);
    rdlm_bench_measure_t *b = base != NULL
                                  ? rdlm_bench_report_figure(r, bench, metric, base->label,
                                                             procs, unit, base->value)
                                  : NULL;

    if (m != NULL && (base == NULL || b != NULL)) {
        rdlm_bench_report_compare(r, m, b, NULL,
                                  base != NULL ? base->kind : RDLM_BENCH_TARGET_NONE,
                                  base != NULL ? base->target : 0);
    }
}

int rdlm_bench_dist_each(rdlm_bench_report_t *r, const rdlm_bench_def_t *def,
                         uint32_t min_procs, const char *params,
                         int (*run_procs)(rdlm_bench_report_t *r, uint32_t procs))
{
    const char *bench = def->name;
    const uint32_t *procs;
    uint32_t n, k;
    char why[256];
    int rc = 0;

    if (!rdlm_bench_mpi_can_run(rdlm_bench_mpi_find(RDLM_BENCH_MPI_LOCK_BENCH), why,
                                sizeof(why))) {
        rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_SKIP, "not measured: %s", why);
        return 0;
    }
    if (params != NULL) {
        rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_PARAMS, "%s", params);
    }
    n = rdlm_bench_opts_procs(r->opts, def->default_procs, def->ndefault_procs, &procs);
    for (k = 0; k < n; k++) {
        if (procs[k] < min_procs) {
            rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_SKIP,
                                   "%u processes: needs at least %u", procs[k], min_procs);
            continue;
        }
        rc |= run_procs(r, procs[k]);
    }
    return rc;
}
