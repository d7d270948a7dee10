/* Plumbing shared by the lock benchmarks; see lock_bench.h. */
#include "lock_bench.h"
#include "workload.h"

#include <inttypes.h>
#include <stdio.h>

#define RDLM_BENCH_LINE 64

static size_t rdlm_bench_cs_offset(const rdlm_bench_lock_arg_t *arg)
{
    return (arg->ops->shared_size + 2 * RDLM_BENCH_LINE - 1) / (2 * RDLM_BENCH_LINE) *
           (2 * RDLM_BENCH_LINE); /* two lines apart: no adjacent-line prefetch pairing */
}

size_t rdlm_bench_lock_data_size(const rdlm_bench_lock_arg_t *arg)
{
    return rdlm_bench_cs_offset(arg) + sizeof(rdlm_bench_cs_t);
}

int rdlm_bench_lock_data_init(void *data, const void *arg)
{
    const rdlm_bench_lock_arg_t *a = arg;

    if (a->ops->caps & RDLM_BENCH_LOCK_CAP_PERMITS) {
        ((rdlm_bench_lock_permits_t *)data)->permits = a->permits;
    }
    return a->ops->shared_init(data);
}

void rdlm_bench_lock_data_fini(void *data, const void *arg)
{
    const rdlm_bench_lock_arg_t *a = arg;

    a->ops->shared_fini(data);
}

rdlm_bench_cs_t *rdlm_bench_lock_cs(void *data, const rdlm_bench_lock_arg_t *arg)
{
    return (rdlm_bench_cs_t *)((char *)data + rdlm_bench_cs_offset(arg));
}

int rdlm_bench_lock_attach(rdlm_bench_worker_t *w, void **lock_p)
{
    const rdlm_bench_lock_arg_t *a = w->arg;
    char err[160] = "";

    if (a->ops->attach(w->data, w->job, lock_p, err, sizeof(err)) != 0) {
        return rdlm_bench_worker_fail(w, "%s attach: %s", a->ops->name,
                                      err[0] ? err : "failed");
    }
    return 0;
}

int rdlm_bench_lock_failed(rdlm_bench_worker_t *w, const char *what, int code)
{
    const rdlm_bench_lock_arg_t *a = w->arg;

    return rdlm_bench_worker_fail(w, "%s %s: %s (%d)", a->ops->name, what,
                                  a->ops->error_name(code), code);
}

int rdlm_bench_lock_check_count(void *data, const void *arg, uint64_t expected, char *why,
                                size_t whylen)
{
    const rdlm_bench_cs_t *cs = rdlm_bench_lock_cs(data, arg);

    if (cs->counter != expected) {
        snprintf(why, whylen,
                 "%s: counter %" PRIu64 " != %" PRIu64 " critical sections: lost updates",
                 ((const rdlm_bench_lock_arg_t *)arg)->ops->name, cs->counter, expected);
        return -1;
    }
    return 0;
}

int rdlm_bench_lock_check(void *data, const void *arg, const rdlm_bench_outcome_t *out,
                          char *why, size_t whylen)
{
    uint64_t expected = 0;
    uint32_t k;

    for (k = 0; k < out->nprocs; k++) {
        expected += out->slots[k].ops + (uint64_t)out->slots[k].values[0];
    }
    return rdlm_bench_lock_check_count(data, arg, expected, why, whylen);
}

/* One run of p's workload (window: up to n loops; else n cycles): 0, or -1 after
 * recording the failed step. */
static inline int rdlm_bench_lock_workload(rdlm_bench_worker_t *w,
                                           const rdlm_bench_part_t *p, int window,
                                           uint64_t n, rdlm_bench_tally_t *t)
{
    int rc = window ? rdlm_bench_window(p, n, t) : rdlm_bench_batches(p, n, t);

    return rc == 0 ? 0 : rdlm_bench_lock_failed(w, t->failed, rc);
}

/* Every lock body, p's choices set by the caller: attach, warm up (untimed), start,
 * the measured run (window: until the stop flag; else a->iterations cycles, at most
 * a->cap_ns), end, rdlm's statistics over it, detach. */
static inline int rdlm_bench_lock_body(rdlm_bench_worker_t *w, rdlm_bench_part_t p,
                                       int window)
{
    const rdlm_bench_lock_arg_t *a = w->arg;
    rdlm_bench_tally_t t = {.sink = w->rank + 1};
    rdlm_stats_t before;
    rdlm_stats_t after;
    int have_stats;

    if (rdlm_bench_lock_attach(w, &p.self) != 0) {
        return -1;
    }
    p.acquire = a->ops->acquire;
    p.release = a->ops->release;
    p.batch = a->batch;
    p.deadline_ns = UINT64_MAX;
    p.cs = rdlm_bench_lock_cs(w->data, a);
    p.rank = w->rank;
    p.sample_mask = a->sample_mask;
    if (rdlm_bench_lock_workload(w, &p, window, a->warmup, &t) != 0) {
        goto err_detach;
    }
    have_stats = a->ops->stats(p.self, &before) == 0;
    if (rdlm_bench_worker_start(w) != 0) {
        goto err_detach;
    }
    t = (rdlm_bench_tally_t){.sink = t.sink};
    p.sampler = &w->sampler;
    p.stop = w->stop;
    p.deadline_ns = !window && a->cap_ns ? w->slot->t_start_ns + a->cap_ns : UINT64_MAX;
    if (rdlm_bench_lock_workload(w, &p, window, window ? UINT64_MAX : a->iterations, &t) !=
        0) {
        goto err_detach;
    }
    rdlm_bench_worker_end(w, t.ops);
    if (window) {
        w->slot->values[0] = (double)a->warmup;
        w->slot->values[1] = (double)(t.sink & 0xff); /* keeps the local work alive */
        w->slot->values[2] = (double)t.handoffs;
        w->slot->values[3] = (double)t.max_wait_ns;
    }
    if (have_stats && a->ops->stats(p.self, &after) == 0) {
        rdlm_bench_worker_stats(w, &before, &after);
    }
    a->ops->detach(p.self);
    return 0;

err_detach:
    a->ops->detach(p.self);
    return -1;
}

int rdlm_bench_lock_pairs_body(rdlm_bench_worker_t *w)
{
    return rdlm_bench_lock_body(w, (rdlm_bench_part_t){0}, 0);
}

int rdlm_bench_lock_window_body(rdlm_bench_worker_t *w)
{
    rdlm_bench_part_t p = {.section = RDLM_BENCH_SECTION_CS, .local_work = 1};

    return rdlm_bench_lock_body(w, p, 1);
}

int rdlm_bench_lock_bare_window_body(rdlm_bench_worker_t *w)
{
    rdlm_bench_part_t p = {.section = RDLM_BENCH_SECTION_CS};

    return rdlm_bench_lock_body(w, p, 1);
}

int rdlm_bench_lock_permit_window_body(rdlm_bench_worker_t *w)
{
    rdlm_bench_part_t p = {.section = RDLM_BENCH_SECTION_PERMIT, .local_work = 1};

    return rdlm_bench_lock_body(w, p, 1);
}

double rdlm_bench_outcome_sum(const rdlm_bench_outcome_t *out, uint32_t k)
{
    double sum = 0;

    for (uint32_t p = 0; p < out->nprocs; p++) {
        sum += out->slots[p].values[k];
    }
    return sum;
}

int rdlm_bench_lock_measures(rdlm_bench_report_t *r, const char *bench, const char *metric,
                             const rdlm_bench_lock_ops_t *const *impls, uint32_t n,
                             uint32_t procs, const char *unit, rdlm_bench_measure_t **m)
{
    for (uint32_t k = 0; k < n; k++) {
        m[k] = rdlm_bench_report_measure(r, bench, metric, impls[k]->name, procs, unit);
        if (m[k] == NULL) {
            return -1;
        }
    }
    return 0;
}

int rdlm_bench_lock_run(rdlm_bench_run_params_t *p, const void *arg, size_t extra,
                        rdlm_bench_outcome_t *out_p)
{
    p->data_size = rdlm_bench_lock_data_size(arg) + extra;
    p->data_init = rdlm_bench_lock_data_init;
    p->data_fini = rdlm_bench_lock_data_fini;
    p->arg = arg;
    return rdlm_bench_run(p, out_p);
}
