/*
 * services: rdlm's network locks against the classic lock services on loopback, in
 * the same run: Redis (SET NX PX + compare-and-delete), etcd (v3 Lock API),
 * ZooKeeper (ephemeral sequential recipe) beside rdlm's own lease authority (rdlmd,
 * rdlm_session_lock) and the lock homes its replicas host (rdlmd-homes,
 * rdlm_lock_acquire with RDLM_AUTHORITY: remote atomics, no Raft entry), and rdlm's
 * on-node lock, measured for scale and compared with none of them. The adapters
 * are in lock_redis.c, lock_etcd.c, lock_zk.c, lock_rdlmd.c and lock_svc.c;
 * bench/services/services.sh starts the servers and exports RDLMBENCH_REDIS /
 * RDLMBENCH_ETCD / RDLMBENCH_ZK / RDLMBENCH_RDLMD (both rdlmd adapters use the last).
 *
 *   latency:    1 process, uncontended acquire+release, us per pair; rdlm in
 *               100-pair batches as lock-latency, a service pair by pair with each
 *               measurement also ending after RDLM_BENCH_SVC_CAP_MS
 *   contended:  2 processes loop { acquire; counter++; release } for -d ms,
 *               kops/s and hand-offs/s; the counter must equal the critical
 *               sections run (lost updates fail the run, services included)
 *
 * Comparisons, like with like: the lock homes against every other service; the
 * authority's lock against the services that also write every operation to a
 * replicated log synced to disk (etcd, ZooKeeper).
 *
 * A service is skipped, with a note saying why, when its client library was not
 * found at configure time, its variable is unset, or one acquire+release through
 * it fails (a probe in a child process before the rounds; rdlmd-homes' also fails
 * when the rdlmd replicas host no lock home). With no service available the
 * benchmark measures nothing and only says why.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "benchmarks.h"
#include "clock.h"
#include "lock_bench.h"
#include "lock_services.h"
#include "rounds.h"

#define RDLM_BENCH_SVC_RDLM_ITERATIONS 200000u
#define RDLM_BENCH_SVC_RDLM_WARMUP 10000u
#define RDLM_BENCH_SVC_ITERATIONS 2000u /* per measurement, at most */
#define RDLM_BENCH_SVC_WARMUP 20u
#define RDLM_BENCH_SVC_CAP_MS 300u /* a service's latency measurement, at most */
#define RDLM_BENCH_SVC_RDLM_BATCH 100u
#define RDLM_BENCH_SVC_SAMPLES 65536u
#define RDLM_BENCH_SVC_CONT_WARMUP 5u
#define RDLM_BENCH_SVC_CONT_MS 300u
#define RDLM_BENCH_SVC_RDLM_SAMPLE_EVERY 16u /* power of two; a service: every acquire */
#define RDLM_BENCH_SVC_PROBE_S 20u
#define RDLM_BENCH_SVC_MAX 6 /* rdlm + 5 services */

static const uint32_t rdlm_bench_svc_procs[] = {2};

typedef struct rdlm_bench_service {
    const char *name;
    const char *env;
    const rdlm_bench_lock_ops_t *ops; /* NULL: not built */
    const char *library;              /* what was missing at configure time */
    int logged; /* every lock operation a write to a replicated log synced to disk */
} rdlm_bench_service_t;

static const rdlm_bench_service_t rdlm_bench_services[] = {
    {"redis", RDLM_BENCH_ENV_REDIS,
#if RDLM_BENCH_HAVE_REDIS
     &rdlm_bench_lock_redis,
#else
     NULL,
#endif
     "hiredis (libhiredis-dev)", 0},
    {"etcd", RDLM_BENCH_ENV_ETCD,
#if RDLM_BENCH_HAVE_ETCD
     &rdlm_bench_lock_etcd,
#else
     NULL,
#endif
     "libcurl (libcurl4-openssl-dev)", 1},
    {"zookeeper", RDLM_BENCH_ENV_ZK,
#if RDLM_BENCH_HAVE_ZK
     &rdlm_bench_lock_zk,
#else
     NULL,
#endif
     "the ZooKeeper C client (libzookeeper-mt-dev)", 1},
    {"rdlmd", RDLM_BENCH_ENV_RDLMD, &rdlm_bench_lock_rdlmd, "librdlm", 1},
    {"rdlmd-homes", RDLM_BENCH_ENV_RDLMD, &rdlm_bench_lock_rdlmd_homes, "librdlm", 0},
};
#define RDLM_BENCH_NSERVICES (sizeof(rdlm_bench_services) / sizeof(rdlm_bench_services[0]))

/* ---- probe ------------------------------------------------------------------------ */

/* One attach + acquire + release + detach in a worker process (so no client library
 * state or thread is left in rdlm-bench), within RDLM_BENCH_SVC_PROBE_S. 0, or -1
 * with why (also on stderr). */
static int rdlm_bench_svc_probe(const rdlm_bench_lock_ops_t *ops, char *why, size_t whylen)
{
    rdlm_bench_lock_arg_t arg = {.ops = ops, .warmup = 1};
    rdlm_bench_run_params_t p = {
        .nprocs = 1,
        .timeout_s = RDLM_BENCH_SVC_PROBE_S,
        .body = rdlm_bench_lock_pairs_body,
        .failure = why,
        .failure_len = whylen,
    };
    rdlm_bench_outcome_t out;

    if (rdlm_bench_lock_run(&p, &arg, 0, &out) != 0) {
        return -1;
    }
    rdlm_bench_outcome_free(&out);
    return 0;
}

/* ---- measurements ----------------------------------------------------------------- */

typedef struct rdlm_bench_svc_ctx {
    rdlm_bench_report_t *report;
    const rdlm_bench_lock_ops_t *impls[RDLM_BENCH_SVC_MAX]; /* [0] rdlm */
    /* impls[k] logs every operation to disk (etcd, ZooKeeper, rdlmd) */
    int logged[RDLM_BENCH_SVC_MAX];
    uint32_t nimpl;
    uint32_t nprocs;      /* contended */
    uint32_t duration_ms; /* contended */
    rdlm_bench_measure_t *measure[RDLM_BENCH_SVC_MAX];
    rdlm_bench_measure_t *handoffs[RDLM_BENCH_SVC_MAX];
    uint64_t pairs[RDLM_BENCH_SVC_MAX]; /* latency: pairs measured, over rounds */
} rdlm_bench_svc_ctx_t;

/* Iteration and warm-up counts of impl (0 is rdlm) under the command line. */
static void rdlm_bench_svc_counts(const rdlm_bench_opts_t *o, uint32_t impl,
                                  rdlm_bench_lock_arg_t *a)
{
    int rdlm = impl == 0;

    a->iterations = rdlm_bench_opts_iterations(o, rdlm ? RDLM_BENCH_SVC_RDLM_ITERATIONS
                                                       : RDLM_BENCH_SVC_ITERATIONS);
    a->warmup = rdlm_bench_opts_warmup(o, rdlm ? RDLM_BENCH_SVC_RDLM_WARMUP
                                               : RDLM_BENCH_SVC_WARMUP);
    a->batch =
        rdlm && a->iterations >= RDLM_BENCH_SVC_RDLM_BATCH ? RDLM_BENCH_SVC_RDLM_BATCH : 1;
    a->cap_ns = rdlm ? 0 : (uint64_t)RDLM_BENCH_SVC_CAP_MS * 1000000u;
}

static int rdlm_bench_svc_lat_round(uint32_t impl, uint32_t round, void *ctx)
{
    rdlm_bench_svc_ctx_t *c = ctx;
    rdlm_bench_lock_arg_t arg = {.ops = c->impls[impl]};
    rdlm_bench_run_params_t p = {
        .nprocs = 1,
        .sample_cap = RDLM_BENCH_SVC_SAMPLES,
        .timeout_s = 60,
        .body = rdlm_bench_lock_pairs_body,
        .verbose = c->report->opts->verbose,
    };
    rdlm_bench_outcome_t out;
    rdlm_bench_summary_t pct;
    double us;

    rdlm_bench_svc_counts(c->report->opts, impl, &arg);
    if (rdlm_bench_lock_run(&p, &arg, 0, &out) != 0) {
        return -1;
    }
    if (out.ops == 0) {
        fprintf(stderr, "rdlm-bench: services: %s measured no pair\n", arg.ops->name);
        rdlm_bench_outcome_free(&out);
        return -1;
    }
    us = (double)out.max_elapsed_ns / (double)out.ops / 1000.0;
    rdlm_bench_outcome_percentiles(&out, 1.0 / (1000.0 * arg.batch), 0, &pct);
    rdlm_bench_measure_round(c->measure[impl], us, &pct);
    c->pairs[impl] += out.ops;
    rdlm_bench_report_round(c->report, round,
                            "%-14s %.3f us per pair (%" PRIu64 " pairs)\n", arg.ops->name,
                            us, out.ops);
    rdlm_bench_outcome_free(&out);
    return 0;
}

static int rdlm_bench_svc_cont_round(uint32_t impl, uint32_t round, void *ctx)
{
    rdlm_bench_svc_ctx_t *c = ctx;
    const rdlm_bench_opts_t *o = c->report->opts;
    rdlm_bench_lock_arg_t arg = {
        .ops = c->impls[impl],
        .warmup = rdlm_bench_opts_warmup(o, RDLM_BENCH_SVC_CONT_WARMUP),
        .sample_mask = impl == 0 ? RDLM_BENCH_SVC_RDLM_SAMPLE_EVERY - 1 : 0,
    };
    rdlm_bench_run_params_t p = {
        .nprocs = c->nprocs,
        .duration_ms = c->duration_ms,
        .sample_cap = RDLM_BENCH_SVC_SAMPLES,
        .timeout_s = 60 + c->duration_ms / 1000,
        .data_check = rdlm_bench_lock_check,
        .body = rdlm_bench_lock_bare_window_body,
        .verbose = o->verbose,
    };
    rdlm_bench_outcome_t out;
    rdlm_bench_summary_t pct;
    double kops;
    double handoffs;

    if (rdlm_bench_lock_run(&p, &arg, 0, &out) != 0) {
        return -1;
    }
    handoffs = rdlm_bench_outcome_sum(&out, 2);
    kops = out.window_ns > 0 ? (double)out.ops * 1e6 / (double)out.window_ns : 0.0;
    rdlm_bench_outcome_percentiles(&out, 1.0 / 1000.0, 0, &pct);
    rdlm_bench_measure_round(c->measure[impl], kops, &pct);
    rdlm_bench_measure_round(
        c->handoffs[impl], out.window_ns > 0 ? handoffs * 1e6 / (double)out.window_ns : 0.0,
        NULL);
    rdlm_bench_report_round(
        c->report, round,
        "%-14s %2u procs %.2f kops/s (%" PRIu64 " ops, %.0f hand-offs in %.1f ms)\n",
        arg.ops->name, c->nprocs, kops, out.ops, handoffs, (double)out.window_ns / 1e6);
    rdlm_bench_outcome_free(&out);
    return 0;
}

/* Decide which services run; SKIP notes for the others. Returns how many run. */
static uint32_t rdlm_bench_svc_select(rdlm_bench_report_t *r, const char *bench,
                                      rdlm_bench_svc_ctx_t *c)
{
    char why[200];
    uint32_t k;

    c->impls[0] = &rdlm_bench_lock_rdlm;
    c->nimpl = 1;
    for (k = 0; k < RDLM_BENCH_NSERVICES; k++) {
        const rdlm_bench_service_t *s = &rdlm_bench_services[k];
        const char *addr = getenv(s->env);

        if (s->ops == NULL) {
            rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_SKIP,
                                   "%s: built without %s; install it and re-run cmake",
                                   s->name, s->library);
            continue;
        }
        if (addr == NULL || addr[0] == '\0') {
            rdlm_bench_report_note(
                r, bench, RDLM_BENCH_NOTE_SKIP, "%s: %s not set (%s)", s->name, s->env,
                rdlm_bench_service_skip_reason(
                    s->env, "start the servers: bench/services/services.sh "
                            "run -- rdlm-bench -b services"));
            continue;
        }
        if (rdlm_bench_svc_probe(s->ops, why, sizeof(why)) != 0) {
            rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_SKIP, "%s: %s", s->name, why);
            continue;
        }
        rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_PARAMS, "%s at %s: %s", s->name,
                               addr, s->ops->description);
        c->logged[c->nimpl] = s->logged;
        c->impls[c->nimpl++] = s->ops;
    }
    return c->nimpl - 1;
}

/* The index in c->impls of ops, or 0 (rdlm's, never a service's) if it did not run. */
static uint32_t rdlm_bench_svc_index(const rdlm_bench_svc_ctx_t *c,
                                     const rdlm_bench_lock_ops_t *ops)
{
    uint32_t k;

    for (k = 1; k < c->nimpl; k++) {
        if (c->impls[k] == ops) {
            return k;
        }
    }
    return 0;
}

/*
 * The comparison rows of one metric (m: c->measure), like with like: the lock homes
 * ("home" in the table) against every other service but the authority, the
 * authority's Raft-kept lock ("raft") against the other logged services. rdlm's
 * on-node lock (m[0]) is compared with none: shared memory against a network round
 * trip says nothing about either.
 */
static void rdlm_bench_svc_compare(rdlm_bench_report_t *r, const rdlm_bench_svc_ctx_t *c,
                                   rdlm_bench_measure_t *const *m)
{
    uint32_t homes = rdlm_bench_svc_index(c, &rdlm_bench_lock_rdlmd_homes);
    uint32_t authority = rdlm_bench_svc_index(c, &rdlm_bench_lock_rdlmd);

    for (uint32_t k = 1; k < c->nimpl; k++) {
        if (homes != 0 && k != homes && k != authority) {
            rdlm_bench_report_compare_as(r, "home", m[homes], m[k], NULL,
                                         RDLM_BENCH_TARGET_NONE, 0);
        }
    }
    for (uint32_t k = 1; k < c->nimpl; k++) {
        if (authority != 0 && k != authority && c->logged[k]) {
            rdlm_bench_report_compare_as(r, "raft", m[authority], m[k], NULL,
                                         RDLM_BENCH_TARGET_NONE, 0);
        }
    }
}

static int rdlm_bench_svc_latency(rdlm_bench_report_t *r, const char *bench,
                                  rdlm_bench_svc_ctx_t *c)
{
    const rdlm_bench_opts_t *o = r->opts;
    char text[256] = "";
    size_t used = 0;
    uint32_t k;

    if (rdlm_bench_lock_measures(r, bench, "acquire+release", c->impls, c->nimpl, 1, "us",
                                 c->measure) != 0 ||
        rdlm_bench_alternate(c->nimpl, o->rounds, rdlm_bench_svc_lat_round, c) != 0) {
        return -1;
    }
    rdlm_bench_measures_finish(c->measure, c->nimpl);
    for (k = 1; k < c->nimpl; k++) {
        if (used < sizeof(text)) {
            used += (size_t)snprintf(text + used, sizeof(text) - used,
                                     "%s%s %" PRIu64, k > 1 ? ", " : "",
                                     c->impls[k]->name, c->pairs[k]);
        }
    }
    rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_INFO,
                           "uncontended acquire+release, pairs measured: %s", text);
    rdlm_bench_svc_compare(r, c, c->measure);
    return 0;
}

static int rdlm_bench_svc_contended(rdlm_bench_report_t *r, const char *bench,
                                    rdlm_bench_svc_ctx_t *c)
{
    const rdlm_bench_opts_t *o = r->opts;
    const uint32_t *procs;
    uint32_t nprocs;
    uint32_t n;
    uint32_t k;

    nprocs = rdlm_bench_opts_procs(o, rdlm_bench_svc_procs,
                                   sizeof(rdlm_bench_svc_procs) / sizeof(uint32_t), &procs);
    for (n = 0; n < nprocs; n++) {
        c->nprocs = procs[n];
        for (k = 0; k < c->nimpl; k++) { /* each implementation's two rows together */
            if (rdlm_bench_lock_measures(r, bench, "throughput", &c->impls[k], 1, procs[n],
                                         "kops/s", &c->measure[k]) != 0 ||
                rdlm_bench_lock_measures(r, bench, "hand-offs", &c->impls[k], 1, procs[n],
                                         "k/s", &c->handoffs[k]) != 0) {
                return -1;
            }
        }
        if (rdlm_bench_alternate(c->nimpl, o->rounds, rdlm_bench_svc_cont_round, c) != 0) {
            return -1;
        }
        rdlm_bench_measures_finish(c->measure, c->nimpl);
        rdlm_bench_measures_finish(c->handoffs, c->nimpl);
        rdlm_bench_svc_compare(r, c, c->measure);
        rdlm_bench_svc_compare(r, c, c->handoffs); /* how often a waiter got in */
    }
    return 0;
}

static int rdlm_bench_svc_run(rdlm_bench_report_t *r)
{
    const rdlm_bench_opts_t *o = r->opts;
    const char *bench = rdlm_bench_def_services.name;
    rdlm_bench_svc_ctx_t c = {
        .report = r,
        .duration_ms = rdlm_bench_opts_duration_ms(o, RDLM_BENCH_SVC_CONT_MS),
    };

    if (rdlm_bench_svc_select(r, bench, &c) == 0) {
        rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_SKIP,
                               "no lock service available: nothing measured");
        return 0;
    }
    rdlm_bench_report_note(
        r, bench, RDLM_BENCH_NOTE_PARAMS,
        "latency: 1 process, %u rounds; rdlm %" PRIu64 " pairs (p99 over %u-pair batches), "
        "a service up to %" PRIu64 " pairs or %u ms (p99 per pair), us per pair",
        o->rounds, rdlm_bench_opts_iterations(o, RDLM_BENCH_SVC_RDLM_ITERATIONS),
        RDLM_BENCH_SVC_RDLM_BATCH, rdlm_bench_opts_iterations(o, RDLM_BENCH_SVC_ITERATIONS),
        RDLM_BENCH_SVC_CAP_MS);
    rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_PARAMS,
                           "contended: %u ms window, loop { acquire; counter++; release }; "
                           "kops/s over all processes; p99: wait in acquire (rdlm 1 in %u, "
                           "a service every one); hand-offs: sections after another's",
                           c.duration_ms, RDLM_BENCH_SVC_RDLM_SAMPLE_EVERY);
    if (rdlm_bench_svc_latency(r, bench, &c) != 0 ||
        rdlm_bench_svc_contended(r, bench, &c) != 0) {
        return -1;
    }
    rdlm_bench_report_note(
        r, bench, RDLM_BENCH_NOTE_INFO,
        "durability: redis as started by bench/services/services.sh keeps no "
        "log (no fsync); etcd, ZooKeeper (their defaults) and rdlmd "
        "sync every write to disk: a lock's acquire and release each "
        "wait for the disk");
    if (rdlm_bench_svc_index(&c, &rdlm_bench_lock_rdlmd_homes) != 0) {
        rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_INFO,
                               "rdlmd-homes: the lock words live in the homes' memory, "
                               "nothing is written per acquire or release; a home that "
                               "restarts takes a new epoch (larger tokens), its locks are "
                               "lost with it");
    }
    return 0;
}

const rdlm_bench_def_t rdlm_bench_def_services = {
    .name = "services",
    .title = "rdlm's network locks (rdlmd: lock homes, authority lock) vs lock services "
             "on loopback: Redis, etcd, ZooKeeper; rdlm's on-node lock for scale",
    .default_procs = rdlm_bench_svc_procs,
    .ndefault_procs = sizeof(rdlm_bench_svc_procs) / sizeof(rdlm_bench_svc_procs[0]),
    .run = rdlm_bench_svc_run,
};
