/* See csv.h. */
#include "csv.h"

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
