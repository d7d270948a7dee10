/* The CSV and JSON files of rdlm-bench; the columns are described in README.md. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fields.h"
#include "report.h"

/* Text fields, each followed by a comma. */
static void rdlm_bench_csv_texts(FILE *f, const char *const *texts, unsigned n)
{
    unsigned k;

    for (k = 0; k < n; k++) {
        rdlm_bench_csv_field(f, texts[k]);
        fputc(',', f);
    }
}

static void rdlm_bench_csv_measure(FILE *f, const rdlm_bench_measure_t *m)
{
    const char *const names[2] = {m->bench, m->metric};
    const char *const labels[2] = {m->impl, m->unit};
    const double nums[6] = {m->median, m->min, m->max, m->p50, m->p90, m->p99};
    unsigned k;

    rdlm_bench_csv_texts(f, names, 2);
    fprintf(f, "%u,", m->procs);
    rdlm_bench_csv_texts(f, labels, 2);
    for (k = 0; k < 6; k++) {
        rdlm_bench_csv_num(f, nums[k]);
        fputc(',', f);
    }
    fprintf(f, "%u", m->nrounds);
}

static FILE *rdlm_bench_open_out(const char *path)
{
    FILE *f = fopen(path, "w");

    if (f == NULL) {
        fprintf(stderr, "rdlm-bench: cannot write %s: %s\n", path, strerror(errno));
    }
    return f;
}

static int rdlm_bench_close_out(FILE *f, const char *path)
{
    if (ferror(f) | (fclose(f) != 0)) {
        fprintf(stderr, "rdlm-bench: writing %s failed\n", path);
        return -1;
    }
    return 0;
}

int rdlm_bench_report_write_csv(const rdlm_bench_report_t *r, const char *path)
{
    FILE *f = rdlm_bench_open_out(path);
    char t[32];
    uint32_t k;

    if (f == NULL) {
        return -1;
    }
    fprintf(f, "record,bench,metric,procs,impl,unit,median,min,max,p50_us,p90_us,p99_us,"
               "rounds,baseline,baseline_procs,baseline_median,baseline_p99_us,ratio,"
               "target,met\n");
    for (k = 0; k < r->nmeasures; k++) {
        fputs("measure,", f);
        rdlm_bench_csv_measure(f, &r->measures[k]);
        fputs(",,,,,,,\n", f);
    }
    for (k = 0; k < r->ncompares; k++) {
        const rdlm_bench_compare_t *c = &r->compares[k];

        fputs("compare,", f);
        rdlm_bench_csv_measure(f, c->ours);
        if (c->base != NULL) {
            fputc(',', f);
            rdlm_bench_csv_field(f, c->base_label);
            fprintf(f, ",%u,", c->base->procs);
            rdlm_bench_csv_num(f, c->base->median);
            fputc(',', f);
            rdlm_bench_csv_num(f, c->base->p99);
        } else {
            fputs(",,,,", f);
        }
        fputc(',', f);
        rdlm_bench_csv_num(f, c->ratio);
        fprintf(f, ",%s,%s\n",
                c->kind != RDLM_BENCH_TARGET_NONE ? rdlm_bench_target_text(c, t, sizeof(t))
                                                  : "",
                c->met < 0 ? "" : c->met ? "yes" : "no");
    }
    return rdlm_bench_close_out(f, path);
}

/* ---- JSON -------------------------------------------------------------------------- */

static void rdlm_bench_json_measure(FILE *f, const rdlm_bench_measure_t *m)
{
    uint32_t k;

    fputc('{', f);
    rdlm_bench_json_kv(f, "bench", m->bench, 1);
    rdlm_bench_json_kv(f, "metric", m->metric, 1);
    rdlm_bench_json_kv(f, "impl", m->impl, 1);
    rdlm_bench_json_kn(f, "procs", m->procs, 1);
    rdlm_bench_json_kv(f, "unit", m->unit, 1);
    rdlm_bench_json_kn(f, "median", m->median, 1);
    rdlm_bench_json_kn(f, "min", m->min, 1);
    rdlm_bench_json_kn(f, "max", m->max, 1);
    rdlm_bench_json_kn(f, "p50_us", m->p50, 1);
    rdlm_bench_json_kn(f, "p90_us", m->p90, 1);
    rdlm_bench_json_kn(f, "p99_us", m->p99, 1);
    fputs("\"rounds\": [", f);
    for (k = 0; k < m->nrounds; k++) {
        if (k) {
            fputs(", ", f);
        }
        rdlm_bench_json_num(f, m->round[k]);
    }
    fputs("]}", f);
}

int rdlm_bench_report_write_json(const rdlm_bench_report_t *r, const char *path)
{
    const rdlm_bench_header_t *h = &r->header;
    FILE *f = rdlm_bench_open_out(path);
    uint32_t k;

    if (f == NULL) {
        return -1;
    }
    fputs("{\n  \"header\": {", f);
    rdlm_bench_json_kv(f, "rdlm_version", h->version, 1);
    rdlm_bench_json_kv(f, "transport", h->transport, 1);
    rdlm_bench_json_kv(f, "waiting", h->waiting, 1);
    rdlm_bench_json_kv(f, "processes", h->processes, 1);
    rdlm_bench_json_kn(f, "rounds", h->rounds, 1);
    rdlm_bench_json_kv(f, "date", h->date, 1);
    rdlm_bench_json_kv(f, "host", h->host, 1);
    rdlm_bench_json_kv(f, "command", h->command, 1);
    rdlm_bench_json_kn(f, "other_load_max", r->noise_max < 0 ? NAN : r->noise_max, 0);
    fputs("},\n  \"measurements\": [", f);
    for (k = 0; k < r->nmeasures; k++) {
        fputs(k ? ",\n    " : "\n    ", f);
        rdlm_bench_json_measure(f, &r->measures[k]);
    }
    fputs("\n  ],\n  \"comparisons\": [", f);
    for (k = 0; k < r->ncompares; k++) {
        const rdlm_bench_compare_t *c = &r->compares[k];

        fputs(k ? ",\n    {" : "\n    {", f);
        fputs("\"ours\": ", f);
        rdlm_bench_json_measure(f, c->ours);
        fputs(", \"baseline\": ", f);
        if (c->base != NULL) {
            rdlm_bench_json_measure(f, c->base);
        } else {
            fputs("null", f);
        }
        fputs(", ", f);
        rdlm_bench_json_kv(f, "baseline_label", c->base_label, 1);
        rdlm_bench_json_kn(f, "ratio", c->ratio, 1);
        rdlm_bench_json_kv(f, "target_kind",
                           c->kind == RDLM_BENCH_TARGET_AT_MOST    ? "at_most"
                           : c->kind == RDLM_BENCH_TARGET_AT_LEAST ? "at_least"
                                                                   : "none",
                           1);
        rdlm_bench_json_kn(f, "target", c->kind == RDLM_BENCH_TARGET_NONE ? NAN : c->target,
                           1);
        fputs("\"met\": ", f);
        fputs(c->met < 0 ? "null" : c->met ? "true" : "false", f);
        fputc('}', f);
    }
    fputs("\n  ],\n  \"notes\": [", f);
    for (k = 0; k < r->nnotes; k++) {
        fputs(k ? ",\n    {" : "\n    {", f);
        rdlm_bench_json_kv(f, "bench", r->notes[k].bench, 1);
        rdlm_bench_json_kv(f, "kind",
                           r->notes[k].kind == RDLM_BENCH_NOTE_PARAMS  ? "params"
                           : r->notes[k].kind == RDLM_BENCH_NOTE_SKIP ? "skip"
                                                                      : "info",
                           1);
        rdlm_bench_json_kv(f, "text", r->notes[k].text, 0);
        fputc('}', f);
    }
    fputs("\n  ]\n}\n", f);
    return rdlm_bench_close_out(f, path);
}
