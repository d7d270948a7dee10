/* Plumbing shared by the lock benchmarks; see lock_bench.h. */
#include "lock_bench.h"

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

int rdlm_bench_lock_pairs_body(rdlm_bench_worker_t *w)
{
    const rdlm_bench_lock_arg_t *a = w->arg;
    const rdlm_bench_lock_ops_t *ops = a->ops;
    uint64_t batch = a->batch ? a->batch : 1;
    rdlm_stats_t before;
    rdlm_stats_t after;
    uint64_t done;
    uint64_t t_prev;
    uint64_t t;
    uint64_t n;
    int have_stats;
    void *lock;

    if (rdlm_bench_lock_attach(w, &lock) != 0) {
        return -1;
    }
    if (rdlm_bench_lock_pairs(w, ops, lock, a->warmup) != 0) {
        goto err_detach;
    }
    have_stats = ops->stats(lock, &before) == 0;
    if (rdlm_bench_worker_start(w) != 0) {
        goto err_detach;
    }
    t_prev = w->slot->t_start_ns;
    for (done = 0; done < a->iterations; done += n) {
        n = a->iterations - done < batch ? a->iterations - done : batch;
        if (rdlm_bench_lock_pairs(w, ops, lock, n) != 0) {
            goto err_detach;
        }
        t = rdlm_bench_now_ns();
        if (n == batch) {
            rdlm_bench_sampler_add(&w->sampler, t - t_prev);
        }
        t_prev = t;
        if (a->cap_ns && t - w->slot->t_start_ns >= a->cap_ns) {
            done += n;
            break;
        }
    }
    rdlm_bench_worker_end(w, done);
    if (have_stats && ops->stats(lock, &after) == 0) {
        rdlm_bench_worker_stats(w, &before, &after);
    }
    ops->detach(lock);
    return 0;

err_detach:
    ops->detach(lock);
    return -1;
}

/* The contended workload with its choices constant, so each body's loop is
 * compiled without them (hot path). */
static inline int rdlm_bench_lock_window(rdlm_bench_worker_t *w, int waits, int local_work,
                                         int permit)
{
    const rdlm_bench_lock_arg_t *a = w->arg;
    const rdlm_bench_lock_ops_t *ops = a->ops;
    rdlm_bench_cs_t *cs = rdlm_bench_lock_cs(w->data, a);
    uint64_t sink = w->rank + 1;
    rdlm_stats_t before;
    rdlm_stats_t after;
    uint64_t ops_done = 0;
    uint64_t handoffs = 0;
    uint64_t max_wait = 0;
    uint64_t wait;
    int have_stats;
    void *lock;
    uint64_t k;
    int rc;

    if (rdlm_bench_lock_attach(w, &lock) != 0) {
        return -1;
    }
    for (k = 0; k < a->warmup; k++) {
        if (rdlm_bench_lock_section(w, ops, lock, cs, 0, NULL, permit) < 0) {
            goto err_detach;
        }
        sink = local_work ? rdlm_bench_local_work(sink) : sink;
    }
    have_stats = ops->stats(lock, &before) == 0;
    if (rdlm_bench_worker_start(w) != 0) {
        goto err_detach;
    }
    while (!rdlm_bench_worker_stopped(w)) {
        if (waits) {
            rc = rdlm_bench_lock_section(w, ops, lock, cs, 1, &wait, permit);
            max_wait = wait > max_wait ? wait : max_wait;
        } else {
            rc = rdlm_bench_lock_section(w, ops, lock, cs, (ops_done & a->sample_mask) == 0,
                                         NULL, permit);
        }
        if (rc < 0) {
            goto err_detach;
        }
        handoffs += (uint64_t)rc;
        sink = local_work ? rdlm_bench_local_work(sink) : sink;
        ops_done++;
    }
    rdlm_bench_worker_end(w, ops_done);
    w->slot->values[0] = (double)a->warmup;
    w->slot->values[1] = (double)(sink & 0xff); /* keeps the local work alive */
    w->slot->values[2] = (double)handoffs;
    w->slot->values[3] = (double)max_wait;
    if (have_stats && ops->stats(lock, &after) == 0) {
        rdlm_bench_worker_stats(w, &before, &after);
    }
    ops->detach(lock);
    return 0;

err_detach:
    ops->detach(lock);
    return -1;
}

int rdlm_bench_lock_window_body(rdlm_bench_worker_t *w)
{
    return rdlm_bench_lock_window(w, 0, 1, 0);
}

int rdlm_bench_lock_waits_body(rdlm_bench_worker_t *w)
{
    return rdlm_bench_lock_window(w, 1, 1, 0);
}

int rdlm_bench_lock_bare_window_body(rdlm_bench_worker_t *w)
{
    return rdlm_bench_lock_window(w, 0, 0, 0);
}

int rdlm_bench_lock_permit_window_body(rdlm_bench_worker_t *w)
{
    return rdlm_bench_lock_window(w, 0, 1, 1);
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
