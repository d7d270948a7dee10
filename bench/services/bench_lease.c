/*
 * lease-renew: what one lease renewal at rdlm's authority costs, beside what keeping
 * a TTL alive costs at the other services and a bare loopback round trip, all in the
 * same run (alternating rounds, medians over rounds). Adapters: renew_ops.h.
 *
 *   rdlmd-renew     rdlm_session_renew at the rdlmd leader (RDLMBENCH_RDLMD)
 *   etcd-keepalive  etcd's LeaseKeepAlive through its HTTP gateway (RDLMBENCH_ETCD)
 *   redis-pexpire   PEXPIRE of a key (RDLMBENCH_REDIS)
 *   tcp-echo        a RENEW's request and reply sizes against an echo thread: the
 *                   loopback floor
 *
 *   latency  1 process: -x warm-up requests (20), then up to -i requests (2,000) and
 *            at most 300 ms, each one timed; us per request, percentiles per request
 *   disk     after the rounds, 1 process holding two sessions (rdlmd-renew's and
 *            one for locks): R renewals (R = the -i count), then R/20
 *            rdlm_session_lock + rdlm_session_unlock pairs; around each phase the
 *            leader's last applied log index (STATUS) and the write_bytes of every
 *            replica (/proc/PID/io of RDLMBENCH_RDLMD_PIDS, when set), read after
 *            RDLM_BENCH_LEASE_SETTLE_MS so that followers have written what came
 *            before. Per renewal and per lock pair: log entries, bytes written.
 *            Target (issue 6: no disk write for a renewal): renewal / lock pair <= 0.
 *
 * Without RDLMBENCH_RDLMD the benchmark only says why it measured nothing. A
 * baseline is skipped, with a note, when its client library was missing at
 * configure time, its variable is unset, or a probe (one request in a worker) fails.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdlm.h>
#include <rdlm/lease.h>

#include "benchmarks.h"
#include "clock.h"
#include "lock_services.h"
#include "renew_ops.h"
#include "rounds.h"
#include "workers.h"

#define RDLM_BENCH_LEASE_ITERATIONS 2000u /* per measurement, at most */
#define RDLM_BENCH_LEASE_WARMUP 20u
#define RDLM_BENCH_LEASE_CAP_MS 300u /* one measurement, at most */
#define RDLM_BENCH_LEASE_SAMPLES 65536u
#define RDLM_BENCH_LEASE_PAIRS_PER 20u  /* disk: renewals per lock pair */
#define RDLM_BENCH_LEASE_SETTLE_MS 500u /* disk: before reading the counters */
#define RDLM_BENCH_LEASE_MAX 4          /* rdlmd + 3 baselines */

/* The implementations in round order; [0] is rdlmd's, the one compared. */
static const rdlm_bench_renew_ops_t *const rdlm_bench_lease_all[] = {
    &rdlm_bench_renew_rdlmd,
#if RDLM_BENCH_HAVE_ETCD
    &rdlm_bench_renew_etcd,
#endif
#if RDLM_BENCH_HAVE_REDIS
    &rdlm_bench_renew_redis,
#endif
    &rdlm_bench_renew_echo,
};
#define RDLM_BENCH_LEASE_NALL                                                              \
    (sizeof(rdlm_bench_lease_all) / sizeof(rdlm_bench_lease_all[0]))

typedef struct rdlm_bench_lease_arg {
    const rdlm_bench_renew_ops_t *ops;
    uint64_t iterations;
    uint64_t warmup;
    uint64_t cap_ns; /* end the measurement after this long (0: never) */
} rdlm_bench_lease_arg_t;

/* ---- latency ---------------------------------------------------------------------- */

static int rdlm_bench_lease_lat_body(rdlm_bench_worker_t *w)
{
    const rdlm_bench_lease_arg_t *a = w->arg;
    const rdlm_bench_renew_ops_t *ops = a->ops;
    char err[200];
    uint64_t done = 0;
    uint64_t t_prev;
    uint64_t t;
    uint64_t k;
    void *h;

    if (ops->open(w->job, &h, err, sizeof(err)) != 0) {
        return rdlm_bench_worker_fail(w, "%s: %s", ops->name, err);
    }
    for (k = 0; k < a->warmup; k++) {
        if (ops->once(h) != 0) {
            goto err_close;
        }
    }
    if (rdlm_bench_worker_start(w) != 0) {
        ops->close(h);
        return -1;
    }
    t_prev = w->slot->t_start_ns;
    while (done < a->iterations) {
        if (ops->once(h) != 0) {
            goto err_close;
        }
        t = rdlm_bench_now_ns();
        rdlm_bench_sampler_add(&w->sampler, t - t_prev);
        t_prev = t;
        done++;
        if (a->cap_ns && t - w->slot->t_start_ns >= a->cap_ns) {
            break;
        }
    }
    rdlm_bench_worker_end(w, done);
    ops->close(h);
    return 0;

err_close:
    ops->close(h);
    return rdlm_bench_worker_fail(w, "%s: request failed (reason on stderr)", ops->name);
}

typedef struct rdlm_bench_lease_ctx {
    rdlm_bench_report_t *report;
    const rdlm_bench_renew_ops_t *impls[RDLM_BENCH_LEASE_MAX];
    uint32_t nimpl;
    rdlm_bench_measure_t *measure[RDLM_BENCH_LEASE_MAX];
    uint64_t requests[RDLM_BENCH_LEASE_MAX]; /* measured, over rounds */
} rdlm_bench_lease_ctx_t;

/* One measurement of ops in one worker: 0 with *out_p (free it), or -1 (why on
 * stderr). */
static int rdlm_bench_lease_measure(const rdlm_bench_opts_t *o,
                                    const rdlm_bench_renew_ops_t *ops, uint64_t iterations,
                                    uint64_t warmup, rdlm_bench_outcome_t *out_p)
{
    rdlm_bench_lease_arg_t arg = {
        .ops = ops,
        .iterations = iterations,
        .warmup = warmup,
        .cap_ns = (uint64_t)RDLM_BENCH_LEASE_CAP_MS * 1000000u,
    };
    rdlm_bench_run_params_t p = {
        .nprocs = 1,
        .sample_cap = RDLM_BENCH_LEASE_SAMPLES,
        .timeout_s = 60,
        .body = rdlm_bench_lease_lat_body,
        .arg = &arg,
        .verbose = o->verbose,
    };

    return rdlm_bench_run(&p, out_p);
}

static int rdlm_bench_lease_round(uint32_t impl, uint32_t round, void *ctx)
{
    rdlm_bench_lease_ctx_t *c = ctx;
    const rdlm_bench_opts_t *o = c->report->opts;
    rdlm_bench_outcome_t out;
    rdlm_bench_summary_t pct;
    double us;

    if (rdlm_bench_lease_measure(
            o, c->impls[impl], rdlm_bench_opts_iterations(o, RDLM_BENCH_LEASE_ITERATIONS),
            rdlm_bench_opts_warmup(o, RDLM_BENCH_LEASE_WARMUP), &out) != 0) {
        return -1;
    }
    if (out.ops == 0) {
        fprintf(stderr, "rdlm-bench: lease-renew: %s measured no request\n",
                c->impls[impl]->name);
        rdlm_bench_outcome_free(&out);
        return -1;
    }
    us = (double)out.max_elapsed_ns / (double)out.ops / 1000.0;
    rdlm_bench_outcome_percentiles(&out, 1.0 / 1000.0, 0, &pct);
    rdlm_bench_measure_round(c->measure[impl], us, &pct);
    c->requests[impl] += out.ops;
    rdlm_bench_report_round(c->report, round, "%-15s %.2f us per request (%" PRIu64 ")\n",
                            c->impls[impl]->name, us, out.ops);
    rdlm_bench_outcome_free(&out);
    return 0;
}

/* Decide which implementations run (rdlmd's first); SKIP notes for the others.
 * Returns 0 when rdlmd's cannot run. */
static uint32_t rdlm_bench_lease_select(rdlm_bench_report_t *r, const char *bench,
                                        rdlm_bench_lease_ctx_t *c)
{
    rdlm_bench_outcome_t out;
    uint32_t k;

    for (k = 0; k < RDLM_BENCH_LEASE_NALL; k++) {
        const rdlm_bench_renew_ops_t *ops = rdlm_bench_lease_all[k];
        const char *addr = ops->env != NULL ? getenv(ops->env) : NULL;

        if (ops->env != NULL && (addr == NULL || addr[0] == '\0')) {
            rdlm_bench_report_note(
                r, bench, RDLM_BENCH_NOTE_SKIP, "%s: %s not set (%s)", ops->name, ops->env,
                rdlm_bench_service_skip_reason(
                    ops->env, "start the servers: bench/services/services.sh "
                              "run -- rdlm-bench -b lease-renew"));
        } else if (rdlm_bench_lease_measure(r->opts, ops, 1, 0, &out) != 0) {
            rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_SKIP,
                                   "%s: one request failed (reason on stderr)", ops->name);
        } else {
            rdlm_bench_outcome_free(&out);
            rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_PARAMS, "%s%s%s: %s",
                                   ops->name, addr ? " at " : "", addr ? addr : "",
                                   ops->description);
            c->impls[c->nimpl++] = ops;
            continue;
        }
        if (k == 0) {
            return 0; /* nothing to compare the baselines with */
        }
    }
    return c->nimpl;
}

static int rdlm_bench_lease_latency(rdlm_bench_report_t *r, const char *bench,
                                    rdlm_bench_lease_ctx_t *c)
{
    char text[200];
    size_t used = 0;
    uint32_t k;

    for (k = 0; k < c->nimpl; k++) {
        c->measure[k] =
            rdlm_bench_report_measure(r, bench, "renewal", c->impls[k]->name, 1, "us");
        if (c->measure[k] == NULL) {
            return -1;
        }
    }
    if (rdlm_bench_alternate(c->nimpl, r->opts->rounds, rdlm_bench_lease_round, c) != 0) {
        return -1;
    }
    text[0] = '\0';
    for (k = 0; k < c->nimpl; k++) {
        rdlm_bench_measure_finish(c->measure[k]);
        if (k > 0) {
            rdlm_bench_report_compare(r, c->measure[0], c->measure[k], NULL,
                                      RDLM_BENCH_TARGET_NONE, 0);
        }
        if (used < sizeof(text)) {
            used += (size_t)snprintf(text + used, sizeof(text) - used, "%s%s %" PRIu64,
                                     k ? ", " : "", c->impls[k]->name, c->requests[k]);
        }
    }
    rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_INFO, "requests measured: %s", text);
    return 0;
}

/* ---- disk ------------------------------------------------------------------------- */

/* What the disk worker reports in its slot's values. */
enum rdlm_bench_lease_value {
    RDLM_BENCH_LEASE_V_RENEW_ENTRIES,
    RDLM_BENCH_LEASE_V_RENEW_BYTES, /* NAN: no RDLMBENCH_RDLMD_PIDS */
    RDLM_BENCH_LEASE_V_PAIR_ENTRIES,
    RDLM_BENCH_LEASE_V_PAIR_BYTES,
};

/* The sum of write_bytes (/proc/PID/io) over the processes of RDLMBENCH_RDLMD_PIDS;
 * NAN when it is unset or a process cannot be read. */
static double rdlm_bench_lease_written(void)
{
    const char *list = getenv(RDLM_BENCH_ENV_RDLMD_PIDS);
    unsigned long long bytes;
    double total = 0;
    char path[64];
    char line[128];
    const char *p;
    char *end;
    long pid;
    FILE *f;
    int found;

    if (list == NULL || list[0] == '\0') {
        return NAN;
    }
    for (p = list; *p != '\0'; p = end) {
        pid = strtol(p, &end, 10);
        if (end == p) {
            end = (char *)p + 1; /* a separator */
            continue;
        }
        snprintf(path, sizeof(path), "/proc/%ld/io", pid);
        f = fopen(path, "r");
        if (f == NULL) {
            return NAN;
        }
        found = 0;
        while (!found && fgets(line, sizeof(line), f) != NULL) {
            found = sscanf(line, "write_bytes: %llu", &bytes) == 1;
        }
        fclose(f);
        if (!found) {
            return NAN;
        }
        total += (double)bytes;
    }
    return total;
}

/* Wait for the followers, then read the leader's applied index and the bytes written:
 * 0, or -1 after saying why on stderr. */
static int rdlm_bench_lease_counters(uint64_t *index_p, double *bytes_p)
{
    struct timespec ts = {.tv_sec = RDLM_BENCH_LEASE_SETTLE_MS / 1000,
                          .tv_nsec = (long)(RDLM_BENCH_LEASE_SETTLE_MS % 1000) * 1000000L};

    nanosleep(&ts, NULL);
    *bytes_p = rdlm_bench_lease_written();
    return rdlm_bench_rdlmd_applied(index_p);
}

/* Lock pairs of the disk phase beside renewals renewals. */
static uint64_t rdlm_bench_lease_pairs(uint64_t renewals)
{
    return renewals >= RDLM_BENCH_LEASE_PAIRS_PER ? renewals / RDLM_BENCH_LEASE_PAIRS_PER
                                                  : 1;
}

/* The disk phase (arg: rdlm_bench_lease_arg_t, iterations = renewals). */
static int rdlm_bench_lease_disk_body(rdlm_bench_worker_t *w)
{
    const rdlm_bench_lease_arg_t *a = w->arg;
    const rdlm_bench_renew_ops_t *ops = &rdlm_bench_renew_rdlmd;
    rdlm_session_params_t params = {.field_mask = RDLM_SESSION_FIELD_TTL,
                                    .ttl_ms = RDLM_BENCH_SERVICE_TTL_MS};
    uint64_t pairs = rdlm_bench_lease_pairs(a->iterations);
    uint64_t index[3];
    double bytes[3];
    char name[64];
    char err[200];
    rdlm_session_h s;
    rdlm_status_t st = RDLM_OK;
    uint64_t token;
    uint64_t k;
    void *h;

    if (ops->open(w->job, &h, err, sizeof(err)) != 0) {
        return rdlm_bench_worker_fail(w, "%s: %s", ops->name, err);
    }
    st = rdlm_session_open(getenv(RDLM_BENCH_ENV_RDLMD), &params, &s);
    if (st != RDLM_OK) {
        ops->close(h);
        return rdlm_bench_worker_fail(w, "rdlm_session_open: %s", rdlm_status_name(st));
    }
    snprintf(name, sizeof(name), "rdlmbench:disk:%s", w->job);
    if (rdlm_bench_worker_start(w) != 0) {
        goto err_close;
    }
    if (rdlm_bench_lease_counters(&index[0], &bytes[0]) != 0) {
        goto err_fail;
    }
    for (k = 0; k < a->iterations; k++) {
        if (ops->once(h) != 0) {
            goto err_fail;
        }
    }
    if (rdlm_bench_lease_counters(&index[1], &bytes[1]) != 0) {
        goto err_fail;
    }
    for (k = 0; k < pairs && st == RDLM_OK; k++) {
        st = rdlm_session_lock(s, name, (uint64_t)RDLM_BENCH_SERVICE_WAIT_MS * 1000000u,
                               &token);
        if (st == RDLM_OK) {
            st = rdlm_session_unlock(s, name, token);
        }
    }
    if (st != RDLM_OK) {
        fprintf(stderr, "rdlm-bench: lease-renew: lock pair: %s\n", rdlm_status_name(st));
        goto err_fail;
    }
    if (rdlm_bench_lease_counters(&index[2], &bytes[2]) != 0) {
        goto err_fail;
    }
    rdlm_bench_worker_end(w, a->iterations);
    w->slot->values[RDLM_BENCH_LEASE_V_RENEW_ENTRIES] =
        (double)(index[1] - index[0]) / (double)a->iterations;
    w->slot->values[RDLM_BENCH_LEASE_V_RENEW_BYTES] =
        (bytes[1] - bytes[0]) / (double)a->iterations;
    w->slot->values[RDLM_BENCH_LEASE_V_PAIR_ENTRIES] =
        (double)(index[2] - index[1]) / (double)pairs;
    w->slot->values[RDLM_BENCH_LEASE_V_PAIR_BYTES] = (bytes[2] - bytes[1]) / (double)pairs;
    rdlm_session_close(s);
    ops->close(h);
    return 0;

err_fail:
    rdlm_bench_worker_fail(w, "lease-renew disk phase failed (reason on stderr)");
err_close:
    rdlm_session_close(s);
    ops->close(h);
    return -1;
}

static int rdlm_bench_lease_disk(rdlm_bench_report_t *r, const char *bench)
{
    const rdlm_bench_opts_t *o = r->opts;
    rdlm_bench_lease_arg_t arg = {
        .iterations = rdlm_bench_opts_iterations(o, RDLM_BENCH_LEASE_ITERATIONS)};
    rdlm_bench_run_params_t p = {
        .nprocs = 1,
        .timeout_s = 120,
        .body = rdlm_bench_lease_disk_body,
        .arg = &arg,
        .verbose = o->verbose,
    };
    rdlm_bench_measure_t *renew;
    rdlm_bench_measure_t *pair;
    rdlm_bench_outcome_t out;
    const double *v;
    int bytes;

    if (rdlm_bench_run(&p, &out) != 0) {
        return -1;
    }
    v = out.slots[0].values;
    bytes = !isnan(v[RDLM_BENCH_LEASE_V_RENEW_BYTES]) &&
            !isnan(v[RDLM_BENCH_LEASE_V_PAIR_BYTES]);
    renew = rdlm_bench_report_figure(r, bench, "log entries/op", "rdlmd-renew", 1, "count",
                                     v[RDLM_BENCH_LEASE_V_RENEW_ENTRIES]);
    pair = rdlm_bench_report_figure(r, bench, "log entries/op", "rdlmd-lock-pair", 1,
                                    "count", v[RDLM_BENCH_LEASE_V_PAIR_ENTRIES]);
    rdlm_bench_report_compare(r, renew, pair, NULL, RDLM_BENCH_TARGET_AT_MOST, 0);
    if (bytes) {
        renew = rdlm_bench_report_figure(r, bench, "disk writes/op", "rdlmd-renew", 1,
                                         "bytes", v[RDLM_BENCH_LEASE_V_RENEW_BYTES]);
        pair = rdlm_bench_report_figure(r, bench, "disk writes/op", "rdlmd-lock-pair", 1,
                                        "bytes", v[RDLM_BENCH_LEASE_V_PAIR_BYTES]);
        rdlm_bench_report_compare(r, renew, pair, NULL, RDLM_BENCH_TARGET_AT_MOST, 0);
    }
    rdlm_bench_report_note(
        r, bench, RDLM_BENCH_NOTE_INFO,
        "disk: %" PRIu64 " renewals, then %" PRIu64 " rdlm_session_lock+unlock pairs "
        "(lock-pair); entries: the leader's applied index; bytes: write_bytes of %s",
        arg.iterations, rdlm_bench_lease_pairs(arg.iterations),
        bytes ? "every replica (/proc/PID/io)"
              : "- (RDLMBENCH_RDLMD_PIDS unset or unreadable: not measured)");
    rdlm_bench_outcome_free(&out);
    return 0;
}

/* ---- the benchmark ---------------------------------------------------------------- */

static int rdlm_bench_lease_run(rdlm_bench_report_t *r)
{
    const rdlm_bench_opts_t *o = r->opts;
    const char *bench = rdlm_bench_def_lease_renew.name;
    rdlm_bench_lease_ctx_t c = {.report = r};

    if (rdlm_bench_lease_select(r, bench, &c) == 0) {
        rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_SKIP,
                               "no lease authority: nothing measured");
        return 0;
    }
    rdlm_bench_report_note(
        r, bench, RDLM_BENCH_NOTE_PARAMS,
        "latency: 1 process, %u rounds, each up to %" PRIu64
        " requests or %u ms after %" PRIu64
        " warm-up ones; us per request (p99 per request)",
        o->rounds, rdlm_bench_opts_iterations(o, RDLM_BENCH_LEASE_ITERATIONS),
        RDLM_BENCH_LEASE_CAP_MS, rdlm_bench_opts_warmup(o, RDLM_BENCH_LEASE_WARMUP));
    if (rdlm_bench_lease_latency(r, bench, &c) != 0 ||
        rdlm_bench_lease_disk(r, bench) != 0) {
        return -1;
    }
    return 0;
}

const rdlm_bench_def_t rdlm_bench_def_lease_renew = {
    .name = "lease-renew",
    .title = "one lease renewal at the rdlmd leader vs etcd keepalive, Redis PEXPIRE, "
             "a loopback round trip",
    .run = rdlm_bench_lease_run,
};
