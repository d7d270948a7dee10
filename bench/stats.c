/* Order statistics for rdlm-bench; see stats.h. */
#include "stats.h"

#include <math.h>
#include <stdlib.h>

static int rdlm_bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a;
    double y = *(const double *)b;

    return (x > y) - (x < y);
}

/* Nearest rank: the smallest value with at least q of the set at or below it. */
static double rdlm_bench_rank(const double *sorted, size_t count, double q)
{
    size_t rank = (size_t)ceil(q * (double)count);

    if (rank < 1) {
        rank = 1;
    }
    return sorted[rank - 1];
}

void rdlm_bench_summarize(double *values, size_t count, rdlm_bench_summary_t *summary_p)
{
    rdlm_bench_summary_t s = {.count = count,
                              .min = NAN,
                              .max = NAN,
                              .p50 = NAN,
                              .p90 = NAN,
                              .p99 = NAN,
                              .p999 = NAN};

    if (count > 0) {
        qsort(values, count, sizeof(*values), rdlm_bench_cmp_double);
        s.min = values[0];
        s.max = values[count - 1];
        s.p50 = rdlm_bench_rank(values, count, 0.50);
        s.p90 = rdlm_bench_rank(values, count, 0.90);
        s.p99 = rdlm_bench_rank(values, count, 0.99);
        s.p999 = rdlm_bench_rank(values, count, 0.999);
    }
    *summary_p = s;
}

double rdlm_bench_median(double *values, size_t count)
{
    if (count == 0) {
        return NAN;
    }
    qsort(values, count, sizeof(*values), rdlm_bench_cmp_double);
    if (count % 2 == 1) {
        return values[count / 2];
    }
    return (values[count / 2 - 1] + values[count / 2]) / 2.0;
}
