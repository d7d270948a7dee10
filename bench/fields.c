/* See fields.h. */
#include "fields.h"

#include <math.h>
#include <string.h>

void rdlm_bench_csv_field(FILE *f, const char *text)
{
    const char *p;

    if (strpbrk(text, ",\"\r\n") == NULL) {
        fputs(text, f);
        return;
    }
    fputc('"', f);
    for (p = text; *p != '\0'; p++) {
        if (*p == '"') {
            fputc('"', f);
        }
        fputc(*p, f);
    }
    fputc('"', f);
}

void rdlm_bench_csv_num(FILE *f, double v)
{
    if (!isnan(v)) {
        fprintf(f, "%.6g", v);
    }
}

void rdlm_bench_json_str(FILE *f, const char *text)
{
    const unsigned char *p;

    fputc('"', f);
    for (p = (const unsigned char *)text; *p != '\0'; p++) {
        if (*p == '"' || *p == '\\') {
            fprintf(f, "\\%c", *p);
        } else if (*p < 0x20) {
            fprintf(f, "\\u%04x", *p);
        } else {
            fputc(*p, f);
        }
    }
    fputc('"', f);
}

void rdlm_bench_json_num(FILE *f, double v)
{
    if (isnan(v) || isinf(v)) {
        fputs("null", f);
    } else {
        fprintf(f, "%.6g", v);
    }
}

void rdlm_bench_json_kv(FILE *f, const char *key, const char *text, int comma)
{
    rdlm_bench_json_str(f, key);
    fputs(": ", f);
    rdlm_bench_json_str(f, text);
    if (comma) {
        fputs(", ", f);
    }
}

void rdlm_bench_json_kn(FILE *f, const char *key, double v, int comma)
{
    rdlm_bench_json_str(f, key);
    fputs(": ", f);
    rdlm_bench_json_num(f, v);
    if (comma) {
        fputs(", ", f);
    }
}
