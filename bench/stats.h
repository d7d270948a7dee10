/*
 * Summaries of measurements: percentiles of a sample set, and a reservoir sampler
 * that keeps a uniform sample of unbounded per-operation timings in a fixed buffer.
 */
#ifndef RDLM_BENCH_STATS_H
#define RDLM_BENCH_STATS_H

#include <stddef.h>
#include <stdint.h>

/** Order statistics of a set of values; all NAN when count is 0. */
typedef struct rdlm_bench_summary {
    size_t count;
    double min;
    double max;
    double p50; /**< the median */
    double p90;
    double p99;
    double p999; /**< the 99.9th percentile */
} rdlm_bench_summary_t;

/** Sort values in place and fill *summary_p (nearest-rank percentiles). */
void rdlm_bench_summarize(double *values, size_t count, rdlm_bench_summary_t *summary_p);

/** Median of values (sorted in place); NAN when count is 0. */
double rdlm_bench_median(double *values, size_t count);

/** Keeps a uniform random sample (Vitter's algorithm R) of the values added. */
typedef struct rdlm_bench_sampler {
    uint32_t *buf; /**< cap slots, in the caller's memory */
    uint32_t cap;
    uint32_t len;  /**< slots filled */
    uint64_t seen; /**< values offered */
    uint64_t rng;  /**< xorshift state, never 0 */
} rdlm_bench_sampler_t;

/** Offer one value (saturated to 32 bits). No system call, no allocation. */
static inline void rdlm_bench_sampler_add(rdlm_bench_sampler_t *s, uint64_t value)
{
    uint32_t v = value > UINT32_MAX ? UINT32_MAX : (uint32_t)value;
    uint64_t j;

    s->seen++;
    if (s->len < s->cap) {
        s->buf[s->len++] = v;
        return;
    }
    s->rng ^= s->rng << 13;
    s->rng ^= s->rng >> 7;
    s->rng ^= s->rng << 17;
    j = s->rng % s->seen;
    if (j < s->cap) {
        s->buf[j] = v;
    }
}

#endif
