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
