/* The MPI programs' result lines; see mpi_result.h. */
#include "mpi_result.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rdlm_bench_result_put(const char *impl, const char *key, const double *v, uint32_t n)
{
    uint32_t k;

    printf("RESULT %s %s", impl, key);
    for (k = 0; k < n; k++) {
        printf(" %.6f", v[k]);
    }
    printf("\n");
}

const char *const rdlm_bench_fig_keys[RDLM_BENCH_FIG_N] = {"value", "p50_us", "p90_us",
                                                           "p99_us", "ops"};

#define RDLM_BENCH_STAT_KEY(e, s) s,
const char *const rdlm_bench_stat_keys[RDLM_BENCH_NSTATS] = {
    RDLM_BENCH_STATS(RDLM_BENCH_STAT_KEY)};

void rdlm_bench_result_figs(const char *impl, const rdlm_bench_rounds_t *fig,
                            const char *const *keys, uint32_t nfig, uint32_t rounds)
{
    uint32_t f;

    for (f = 0; f < nfig; f++) {
        rdlm_bench_result_put(impl, keys[f], fig[f], rounds);
    }
}

void rdlm_bench_result_put1(const char *impl, const char *key, double v)
{
    rdlm_bench_result_put(impl, key, &v, 1);
}

void rdlm_bench_result_word(const char *impl, const char *key, const char *word)
{
    printf("RESULT %s %s %s\n", impl, key, word);
}

void rdlm_bench_result_note(const char *fmt, ...)
{
    va_list ap;

    printf("RESULT note info ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
}

const char *rdlm_bench_result_next(const char **pos_p, const char *impl, const char *key,
                                   size_t *len_p)
{
    size_t ilen = strlen(impl), klen = strlen(key);
    const char *p, *q;

    for (p = strstr(*pos_p, "RESULT "); p != NULL; p = strstr(p + 1, "RESULT ")) {
        q = p + 7;
        if ((p == *pos_p || p[-1] == '\n') && strncmp(q, impl, ilen) == 0 &&
            q[ilen] == ' ' && strncmp(q + ilen + 1, key, klen) == 0 &&
            q[ilen + 1 + klen] == ' ') {
            q += ilen + 1 + klen + 1;
            *len_p = strcspn(q, "\n");
            *pos_p = q + *len_p;
            return q;
        }
    }
    return NULL;
}

int rdlm_bench_result_get(const char *out, const char *impl, const char *key, double *v,
                          uint32_t cap)
{
    size_t len;
    const char *p = rdlm_bench_result_next(&out, impl, key, &len);
    uint32_t n = 0;
    char *end;

    if (p == NULL) {
        return -1;
    }
    while (n < cap && *p != '\n' && *p != '\0') {
        v[n] = strtod(p, &end);
        if (end == p) {
            break;
        }
        n++;
        p = end;
    }
    return (int)n;
}

int rdlm_bench_result_get1(const char *out, const char *impl, const char *key, double *v_p)
{
    double v;

    if (rdlm_bench_result_get(out, impl, key, &v, 1) != 1) {
        return -1;
    }
    *v_p = v;
    return 0;
}

int rdlm_bench_result_get_word(const char *out, const char *impl, const char *key,
                               char *buf, size_t len)
{
    size_t n;
    const char *p = rdlm_bench_result_next(&out, impl, key, &n);

    if (p == NULL || len == 0) {
        return -1;
    }
    n = strcspn(p, " \n");
    n = n < len ? n : len - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return 0;
}
