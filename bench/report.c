/* Measurements, comparisons and notes of rdlm-bench, and their text tables. */
#include "report.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

void rdlm_bench_measure_round(rdlm_bench_measure_t *m, double value,
                              const rdlm_bench_summary_t *pct_us)
{
    if (m->nrounds == RDLM_BENCH_MAX_ROUNDS) {
        return;
    }
    m->round[m->nrounds] = value;
    m->round_pct[m->nrounds][0] = pct_us ? pct_us->p50 : NAN;
    m->round_pct[m->nrounds][1] = pct_us ? pct_us->p90 : NAN;
    m->round_pct[m->nrounds][2] = pct_us ? pct_us->p99 : NAN;
    m->nrounds++;
}

/* Median over rounds of column c of round_pct, ignoring NAN. */
static double rdlm_bench_pct_median(const rdlm_bench_measure_t *m, int c)
{
    double v[RDLM_BENCH_MAX_ROUNDS];
    size_t n = 0;
    uint32_t k;

    for (k = 0; k < m->nrounds; k++) {
        if (!isnan(m->round_pct[k][c])) {
            v[n++] = m->round_pct[k][c];
        }
    }
    return rdlm_bench_median(v, n);
}

void rdlm_bench_measure_finish(rdlm_bench_measure_t *m)
{
    double v[RDLM_BENCH_MAX_ROUNDS];
    rdlm_bench_summary_t s;

    memcpy(v, m->round, m->nrounds * sizeof(double));
    rdlm_bench_summarize(v, m->nrounds, &s);
    m->min = s.min;
    m->max = s.max;
    m->median = rdlm_bench_median(v, m->nrounds);
    m->p50 = rdlm_bench_pct_median(m, 0);
    m->p90 = rdlm_bench_pct_median(m, 1);
    m->p99 = rdlm_bench_pct_median(m, 2);
}

rdlm_bench_measure_t *rdlm_bench_report_measure(rdlm_bench_report_t *r, const char *bench,
                                                const char *metric, const char *impl,
                                                uint32_t procs, const char *unit)
{
    rdlm_bench_measure_t *m;

    if (r->nmeasures == RDLM_BENCH_MAX_MEASURES) {
        return NULL;
    }
    m = &r->measures[r->nmeasures++];
    memset(m, 0, sizeof(*m));
    snprintf(m->bench, sizeof(m->bench), "%s", bench);
    snprintf(m->metric, sizeof(m->metric), "%s", metric);
    snprintf(m->impl, sizeof(m->impl), "%s", impl);
    snprintf(m->unit, sizeof(m->unit), "%s", unit);
    m->procs = procs;
    m->median = m->min = m->max = NAN;
    m->p50 = m->p90 = m->p99 = NAN;
    return m;
}

rdlm_bench_measure_t *rdlm_bench_report_figure(rdlm_bench_report_t *r, const char *bench,
                                               const char *metric, const char *impl,
                                               uint32_t procs, const char *unit,
                                               double value)
{
    rdlm_bench_measure_t *m =
        rdlm_bench_report_measure(r, bench, metric, impl, procs, unit);

    if (m != NULL) {
        rdlm_bench_measure_round(m, value, NULL);
        rdlm_bench_measure_finish(m);
    }
    return m;
}

void rdlm_bench_measures_finish(rdlm_bench_measure_t *const *m, uint32_t n)
{
    for (uint32_t k = 0; k < n; k++) {
        rdlm_bench_measure_finish(m[k]);
    }
}

const rdlm_bench_compare_t *rdlm_bench_report_compare(rdlm_bench_report_t *r,
                                                      const rdlm_bench_measure_t *ours,
                                                      const rdlm_bench_measure_t *base,
                                                      const char *label,
                                                      enum rdlm_bench_target kind,
                                                      double target)
{
    return rdlm_bench_report_compare_as(r, NULL, ours, base, label, kind, target);
}

const rdlm_bench_compare_t *rdlm_bench_report_compare_as(rdlm_bench_report_t *r,
                                                         const char *ours_label,
                                                         const rdlm_bench_measure_t *ours,
                                                         const rdlm_bench_measure_t *base,
                                                         const char *label,
                                                         enum rdlm_bench_target kind,
                                                         double target)
{
    rdlm_bench_compare_t *c;

    if (r->ncompares == RDLM_BENCH_MAX_COMPARES || ours == NULL) {
        return NULL;
    }
    c = &r->compares[r->ncompares++];
    snprintf(c->ours_label, sizeof(c->ours_label), "%s", ours_label ? ours_label : "");
    c->ours = ours;
    c->base = base;
    snprintf(c->base_label, sizeof(c->base_label), "%s",
             label ? label : base ? base->impl : "-");
    c->ratio = base != NULL && base->median > 0 ? ours->median / base->median : NAN;
    c->kind = kind;
    c->target = target;
    switch (kind) {
    case RDLM_BENCH_TARGET_AT_MOST:
        c->met = !isnan(c->ratio) && c->ratio <= target;
        break;
    case RDLM_BENCH_TARGET_AT_LEAST:
        c->met = !isnan(c->ratio) && c->ratio >= target;
        break;
    default:
        c->met = -1;
        break;
    }
    return c;
}

void rdlm_bench_report_note(rdlm_bench_report_t *r, const char *bench,
                            enum rdlm_bench_note_kind kind, const char *fmt, ...)
{
    rdlm_bench_note_t scratch;
    rdlm_bench_note_t *n = r->nnotes < RDLM_BENCH_MAX_NOTES ? &r->notes[r->nnotes++]
                                                             : &scratch;
    va_list ap;

    snprintf(n->bench, sizeof(n->bench), "%s", bench);
    n->kind = kind;
    va_start(ap, fmt);
    vsnprintf(n->text, sizeof(n->text), fmt, ap);
    va_end(ap);
}

void rdlm_bench_report_round(const rdlm_bench_report_t *r, uint32_t round, const char *fmt,
                             ...)
{
    va_list ap;

    if (!r->opts->verbose) {
        return;
    }
    fprintf(stderr, "rdlm-bench:   round %u ", round + 1);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

static void rdlm_bench_print_notes(const rdlm_bench_report_t *r, const char *bench,
                                   int params, FILE *out)
{
    uint32_t k;

    for (k = 0; k < r->nnotes; k++) {
        const rdlm_bench_note_t *n = &r->notes[k];

        if (strcmp(n->bench, bench) != 0 || (n->kind == RDLM_BENCH_NOTE_PARAMS) != params) {
            continue;
        }
        fprintf(out, "# %s%s\n", n->kind == RDLM_BENCH_NOTE_SKIP ? "SKIP: " : "", n->text);
    }
}

/* "%*.2f", or "-" for NAN. */
static const char *rdlm_bench_fmt(char *buf, size_t len, int width, double v)
{
    if (isnan(v)) {
        snprintf(buf, len, "%*s", width, "-");
    } else {
        snprintf(buf, len, "%*.2f", width, v);
    }
    return buf;
}

/* A ratio: as rdlm_bench_fmt, but below 0.01 in two significant digits ("3.1e-05":
 * rdlm against a lock service is thousands of times faster). */
static const char *rdlm_bench_fmt_ratio(char *buf, size_t len, int width, double v)
{
    if (!isnan(v) && v > 0 && v < 0.01) {
        snprintf(buf, len, "%*.2g", width, v);
        return buf;
    }
    return rdlm_bench_fmt(buf, len, width, v);
}

void rdlm_bench_report_section(const rdlm_bench_report_t *r, const char *bench,
                               const char *title, FILE *out)
{
    const rdlm_bench_opts_t *o = r->opts;
    char a[32], b[32], c[32], d[32], e[32], f[32];
    uint32_t k;

    fprintf(out, "#\n# == %s: %s ==\n", bench, title);
    rdlm_bench_print_notes(r, bench, 1, out);
    fprintf(out, "# %-15s %5s %-20s %10s %-7s %8s", "impl", "procs", "metric", "median",
            "unit", "p99 us");
    if (o->full) {
        fprintf(out, " %10s %10s", "min", "max");
    }
    if (o->percentiles) {
        fprintf(out, " %8s %8s %8s", "p50 us", "p90 us", "p99 us");
    }
    fprintf(out, "\n");
    for (k = 0; k < r->nmeasures; k++) {
        const rdlm_bench_measure_t *m = &r->measures[k];

        if (strcmp(m->bench, bench) != 0) {
            continue;
        }
        fprintf(out, "  %-15s %5u %-20s %s %-7s %s", m->impl, m->procs, m->metric,
                rdlm_bench_fmt(a, sizeof(a), 10, m->median), m->unit,
                rdlm_bench_fmt(b, sizeof(b), 8, m->p99));
        if (o->full) {
            fprintf(out, " %s %s", rdlm_bench_fmt(c, sizeof(c), 10, m->min),
                    rdlm_bench_fmt(d, sizeof(d), 10, m->max));
        }
        if (o->percentiles) {
            fprintf(out, " %s %s %s", rdlm_bench_fmt(e, sizeof(e), 8, m->p50),
                    rdlm_bench_fmt(f, sizeof(f), 8, m->p90),
                    rdlm_bench_fmt(b, sizeof(b), 8, m->p99));
        }
        if (strcmp(m->unit, "us") == 0 && !isnan(m->median) && m->median < 10) {
            fprintf(out, "   (%.1f ns)", m->median * 1000.0);
        }
        fprintf(out, "\n");
    }
    rdlm_bench_print_notes(r, bench, 0, out);
}

const char *rdlm_bench_target_text(const rdlm_bench_compare_t *c, char *buf, size_t len)
{
    switch (c->kind) {
    case RDLM_BENCH_TARGET_AT_MOST:
        snprintf(buf, len, "<=%.2f", c->target);
        break;
    case RDLM_BENCH_TARGET_AT_LEAST:
        snprintf(buf, len, ">=%.2f", c->target);
        break;
    default:
        snprintf(buf, len, "-");
        break;
    }
    return buf;
}

void rdlm_bench_report_table(const rdlm_bench_report_t *r, FILE *out)
{
    char a[32], b[32], c[32], d[32], e[32], t[32], m[64];
    uint32_t met = 0;
    uint32_t targets = 0;
    uint32_t k;

    fprintf(out, "#\n# Comparison: ratio = rdlm / baseline, medians over %u rounds; "
                 "targets from the issue\n"
                 "# p99 (us): lock-latency per pair in 100-pair batches; lock-contended wait "
                 "in acquire; barrier one barrier, max over processes\n",
            r->header.rounds);
    fprintf(out, "# %-14s %5s %-20s %-6s %9s %8s | %-16s %9s %8s | %6s %7s %4s\n",
            "benchmark", "procs", "metric", "unit", "rdlm", "p99", "baseline", "value",
            "p99", "ratio", "target", "met");
    for (k = 0; k < r->ncompares; k++) {
        const rdlm_bench_compare_t *cmp = &r->compares[k];

        snprintf(m, sizeof(m), "%s%s%s", cmp->ours_label, cmp->ours_label[0] ? " " : "",
                 cmp->ours->metric);
        fprintf(out, "  %-14s %5u %-20s %-6s %s %s | %-16s %s %s | %s %7s %4s\n",
                cmp->ours->bench, cmp->ours->procs, m, cmp->ours->unit,
                rdlm_bench_fmt(a, sizeof(a), 9, cmp->ours->median),
                rdlm_bench_fmt(b, sizeof(b), 8, cmp->ours->p99), cmp->base_label,
                rdlm_bench_fmt(c, sizeof(c), 9, cmp->base ? cmp->base->median : NAN),
                rdlm_bench_fmt(d, sizeof(d), 8, cmp->base ? cmp->base->p99 : NAN),
                rdlm_bench_fmt_ratio(e, sizeof(e), 6, cmp->ratio),
                rdlm_bench_target_text(cmp, t, sizeof(t)),
                cmp->met < 0 ? "-" : cmp->met ? "yes" : "NO");
        if (cmp->met >= 0) {
            targets++;
            met += (uint32_t)cmp->met;
        }
    }
    for (k = 0; k < r->nnotes; k++) {
        if (r->notes[k].kind == RDLM_BENCH_NOTE_SKIP) {
            fprintf(out, "  %-14s SKIP: %s\n", r->notes[k].bench, r->notes[k].text);
        }
    }
    fprintf(out, "# Targets met: %u of %u\n", met, targets);
    if (r->noise_max > 0.10) {
        fprintf(out, "# WARNING: other processes used up to %.0f%% of the CPUs (during %s): "
                     "these figures are not representative; re-run on a quiet machine\n",
                r->noise_max * 100.0, r->noise_bench);
    } else if (r->noise_max >= 0) {
        fprintf(out, "# Machine quiet: other processes used at most %.0f%% of the CPUs\n",
                r->noise_max * 100.0);
    }
}
