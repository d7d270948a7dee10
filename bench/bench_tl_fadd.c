/*
 * tl-fadd: remote fetch-add latency through rdlm's transport (rdlm_tl_fadd64 on a word
 * at rank 0) against a raw ucp_atomic_op_nbx(UCP_ATOMIC_OP_ADD, fetching) issued by the
 * same process, once per UCX transport setting (UCX_TLS=posix,sysv,self and
 * UCX_TLS=tcp,self). Target (issue 3): rdlm <= 1.10 x raw UCX on each.
 *
 *   rank 0 (target)                       rank 1 (initiator)
 *   rdlm ctx "ucx" + raw ucp context      rdlm ctx "ucx" + raw ucp context
 *   one word in each (UCX-allocated),     unpack both keys, create the raw endpoint
 *   keys allgathered
 *   -------------- start barrier (engine) ------------------------------------------
 *   progress the context named by         rounds, alternating (rdlm, raw), (raw, rdlm):
 *   data->phase (over TCP the target        set phase; warm-up; time `iterations`
 *   runs emulated atomics in its            fetch-adds, checking every old value;
 *   progress; over shared memory it         store us/op and batch percentiles
 *   naps between calls) until DONE
 *   -------------- close the raw endpoint, barriers, destroy both contexts --------
 *
 * The raw side is a second, minimal ucp context in the same processes (same features
 * as rdlm's, worker thread mode single, same UCX_TLS): the transport keeps its ucp
 * endpoint private, and UCX's shared-memory atomics need UCX-allocated memory, so the
 * two sides use one word each, allocated the same way. The two processes meet through
 * the TCP bootstrap (transport's bootstrap.h) on a socket the parent already listens on
 * at 127.0.0.1.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "benchmarks.h"
#include "clock.h"
#include "raw_ucp.h"
#include "rounds.h"
#include "transport.h"
#include "workers.h"

#define RDLM_BENCH_TLF_ITER_SHM 20000u /* per round and implementation */
#define RDLM_BENCH_TLF_ITER_TCP 2000u
#define RDLM_BENCH_TLF_WARMUP 500u     /* before each timed loop */
#define RDLM_BENCH_TLF_BATCH 10u       /* fetch-adds per percentile sample */
#define RDLM_BENCH_TLF_KEY_MAX (RDLM_TL_RKEY_MAX - 24u)
#define RDLM_BENCH_TLF_NIMPL 2u
#define RDLM_BENCH_TLF_TARGET 1.10

enum { RDLM_BENCH_TLF_RDLM = 0, RDLM_BENCH_TLF_RAW = 1 };

/* What rank 0 progresses (data->phase). */
enum {
    RDLM_BENCH_TLF_PHASE_BOTH = 0,
    RDLM_BENCH_TLF_PHASE_RDLM,
    RDLM_BENCH_TLF_PHASE_RAW,
    RDLM_BENCH_TLF_PHASE_DONE
};

static const char *const rdlm_bench_tlf_impl_names[RDLM_BENCH_TLF_NIMPL] = {
    "rdlm_tl_fadd64", "ucp_atomic_op_nbx"};

/* One transport setting. */
typedef struct rdlm_bench_tlf_arg {
    const char *label; /* "shm", "tcp" */
    const char *tls;   /* UCX_TLS for both contexts */
    uint64_t iterations;
    uint64_t warmup;
    uint32_t rounds;
    int listen_fd; /* rank 0's rendezvous socket, listening before the fork */
    uint16_t port;
    struct rdlm_bench_tlf_data *result; /* parent: data_check copies the mapping here */
} rdlm_bench_tlf_arg_t;

/* The benchmark's shared mapping. */
typedef struct rdlm_bench_tlf_data {
    _Atomic uint32_t phase;
    uint32_t nrounds;                                         /* rounds measured */
    double us[RDLM_BENCH_TLF_NIMPL][RDLM_BENCH_MAX_ROUNDS];   /* per fetch-add */
    double pct[RDLM_BENCH_TLF_NIMPL][RDLM_BENCH_MAX_ROUNDS][3]; /* p50/p90/p99 us */
    uint64_t issued[RDLM_BENCH_TLF_NIMPL]; /* by rank 1, warm-ups included */
    uint64_t final[RDLM_BENCH_TLF_NIMPL];  /* the words at rank 0 at the end */
    int domain;                            /* rdlm_tl_atomic_domain_t, rank 1's query */
    int needs_progress;
    rdlm_tl_stats_t stats; /* rank 1's rdlm transport counters */
} rdlm_bench_tlf_data_t;

/* Everything one worker holds. */
typedef struct rdlm_bench_tlf_proc {
    rdlm_bench_worker_t *w;
    const rdlm_bench_tlf_arg_t *a;
    rdlm_bench_tlf_data_t *d;
    rdlm_tl_boot_tcp_t *boot;
    const rdlm_tl_bootstrap_t *b;
    rdlm_tl_ctx_h ctx;
    rdlm_tl_mem_h mem;
    rdlm_tl_rkey_h rkey;
    volatile uint64_t *rdlm_word; /* rank 0: its own word, read at the end */
    rdlm_bench_ucp_t raw;
    double *batch; /* rank 1: batch samples of one timed loop */
} rdlm_bench_tlf_proc_t;

/* The key blob allgathered for each side: address, length, packed key. */
typedef struct rdlm_bench_tlf_key {
    uint64_t addr;
    uint64_t len;
    uint64_t key_len;
    unsigned char key[RDLM_BENCH_TLF_KEY_MAX];
} rdlm_bench_tlf_key_t;

/* Idle callback of the bootstrap's collectives: progress both sides. */
static int rdlm_bench_tlf_idle(void *arg)
{
    rdlm_bench_tlf_proc_t *p = arg;
    int n = 0;

    if (p->ctx != NULL)
        n += (int)rdlm_tl_progress(p->ctx);
    if (p->raw.worker != NULL)
        n += (int)ucp_worker_progress(p->raw.worker);
    return n;
}

/* Raw side set-up (raw_ucp.h), wired up through the bootstrap: worker addresses,
 * rank 0's word and its key. */
static int rdlm_bench_tlf_raw_open(rdlm_bench_tlf_proc_t *p)
{
    rdlm_bench_ucp_t *r = &p->raw;
    rdlm_tl_idle_t idle = {rdlm_bench_tlf_idle, p};
    rdlm_bench_tlf_key_t mine, *keys = NULL;
    uint64_t lens[2], alen;
    char *addrs = NULL, *rec = NULL;
    char why[200] = "raw UCX wire-up through the bootstrap failed";
    size_t key_len;
    int rc = -1;

    if (rdlm_bench_ucp_open(r, why, sizeof(why)) != 0)
        return rdlm_bench_worker_fail(p->w, "%s", why);
    alen = r->address_len;
    if (p->b->allgather(p->b->arg, &alen, lens, sizeof(alen), &idle) != RDLM_OK)
        goto out;
    alen = lens[0] > lens[1] ? lens[0] : lens[1];
    rec = calloc(1, alen);
    addrs = malloc(2 * alen);
    keys = malloc(2 * sizeof(*keys));
    if (rec == NULL || addrs == NULL || keys == NULL)
        goto out;
    memcpy(rec, r->address, r->address_len);
    if (p->b->allgather(p->b->arg, rec, addrs, alen, &idle) != RDLM_OK)
        goto out;
    memset(&mine, 0, sizeof(mine));
    if (p->w->rank == 0) {
        if (rdlm_bench_ucp_map_word(r, mine.key, sizeof(mine.key), &key_len, &mine.addr, why,
                                    sizeof(why)) != 0)
            goto out;
        mine.len = RDLM_BENCH_UCP_WORD_BYTES;
        mine.key_len = key_len;
    }
    if (p->b->allgather(p->b->arg, &mine, keys, sizeof(mine), &idle) != RDLM_OK)
        goto out;
    if (p->w->rank == 1 &&
        rdlm_bench_ucp_connect(r, addrs /* rank 0's record */, keys[0].key, keys[0].addr,
                               why, sizeof(why)) != 0)
        goto out;
    rc = 0;
out:
    if (rc != 0)
        rdlm_bench_worker_fail(p->w, "%s", why);
    free(keys);
    free(addrs);
    free(rec);
    return rc;
}

/* Raw side tear-down; rank 1 closes its endpoint while rank 0 progresses (phase). */
static void rdlm_bench_tlf_raw_close(rdlm_bench_tlf_proc_t *p)
{
    rdlm_tl_idle_t idle = {rdlm_bench_tlf_idle, p};

    rdlm_bench_ucp_disconnect(&p->raw);
    if (p->raw.worker != NULL)
        (void)p->b->barrier(p->b->arg, &idle);
    rdlm_bench_ucp_close(&p->raw);
}

/* rdlm side set-up: a context, rank 0's word, its key at rank 1. */
static int rdlm_bench_tlf_rdlm_open(rdlm_bench_tlf_proc_t *p)
{
    rdlm_tl_params_t tp = {.bootstrap = p->b, .thread_mode = RDLM_TL_THREAD_SINGLE};
    rdlm_tl_idle_t idle = {rdlm_bench_tlf_idle, p};
    rdlm_bench_tlf_key_t mine, keys[2];
    rdlm_status_t st;
    size_t len = 0;
    void *addr;
    size_t alen;

    st = rdlm_tl_open("ucx", &tp, &p->ctx);
    if (st != RDLM_OK)
        return rdlm_bench_worker_fail(p->w, "rdlm_tl_open(ucx): %s", rdlm_status_str(st));
    memset(&mine, 0, sizeof(mine));
    if (p->w->rank == 0) {
        st = p->ctx->mem->reg(p->ctx, NULL, 64, &p->mem);
        if (st == RDLM_OK)
            st = p->ctx->mem->addr(p->ctx, p->mem, &addr, &alen);
        if (st == RDLM_OK)
            st = p->ctx->mem->rkey_pack(p->ctx, p->mem, mine.key, sizeof(mine.key), &len);
        if (st != RDLM_OK)
            return rdlm_bench_worker_fail(p->w, "rdlm register/pack: %s",
                                          rdlm_status_str(st));
        p->rdlm_word = addr;
        mine.key_len = len;
    }
    st = p->b->allgather(p->b->arg, &mine, keys, sizeof(mine), &idle);
    if (st != RDLM_OK)
        return rdlm_bench_worker_fail(p->w, "bootstrap allgather: %s", rdlm_status_str(st));
    if (p->w->rank == 1) {
        rdlm_tl_caps_t caps;

        st = p->ctx->mem->rkey_unpack(p->ctx, 0, keys[0].key, keys[0].key_len, &p->rkey);
        if (st == RDLM_OK)
            st = p->ctx->setup->query(p->ctx, &caps);
        if (st != RDLM_OK)
            return rdlm_bench_worker_fail(p->w, "rdlm unpack/query: %s",
                                          rdlm_status_str(st));
        p->d->domain = (int)caps.atomic_domain;
        p->d->needs_progress = caps.amo_needs_target_progress;
    }
    return 0;
}

/* Rank 1: one timed loop of impl in round; the figure and batch percentiles go to the
 * data mapping. */
static int rdlm_bench_tlf_round(uint32_t impl, uint32_t round, void *arg)
{
    rdlm_bench_tlf_proc_t *p = arg;
    rdlm_bench_tlf_data_t *d = p->d;
    uint64_t n = p->a->warmup + p->a->iterations;
    uint64_t expect = d->issued[impl];
    uint64_t nbatch = 0, t0 = 0, tb = 0, k, old = 0;
    rdlm_bench_summary_t sum;
    int bad = 0;

    atomic_store_explicit(&d->phase,
                          impl == RDLM_BENCH_TLF_RDLM ? RDLM_BENCH_TLF_PHASE_RDLM
                                                      : RDLM_BENCH_TLF_PHASE_RAW,
                          memory_order_relaxed);
    for (k = 0; k < n; k++) {
        if (k == p->a->warmup)
            t0 = tb = rdlm_bench_now_ns();
        if (impl == RDLM_BENCH_TLF_RDLM) {
            rdlm_status_t st = rdlm_tl_fadd64(p->ctx, p->rkey, 0, 1, &old);

            if (st != RDLM_OK)
                return rdlm_bench_worker_fail(p->w, "rdlm_tl_fadd64: %s",
                                              rdlm_status_str(st));
        } else {
            ucs_status_t s = rdlm_bench_ucp_amo(&p->raw, UCP_ATOMIC_OP_ADD, 1, &old);

            if (s != UCS_OK)
                return rdlm_bench_worker_fail(p->w, "ucp_atomic_op_nbx: %s",
                                              ucs_status_string(s));
        }
        bad |= old != expect + k;
        if (k >= p->a->warmup && (k - p->a->warmup + 1) % RDLM_BENCH_TLF_BATCH == 0) {
            uint64_t t = rdlm_bench_now_ns();

            p->batch[nbatch++] = (double)(t - tb) / RDLM_BENCH_TLF_BATCH / 1000.0;
            tb = t;
        }
    }
    d->us[impl][round] = (double)(rdlm_bench_now_ns() - t0) / (double)p->a->iterations / 1000.0;
    d->issued[impl] += n;
    if (bad)
        return rdlm_bench_worker_fail(p->w, "%s returned a wrong old value",
                                      rdlm_bench_tlf_impl_names[impl]);
    rdlm_bench_summarize(p->batch, nbatch, &sum);
    d->pct[impl][round][0] = sum.p50;
    d->pct[impl][round][1] = sum.p90;
    d->pct[impl][round][2] = sum.p99;
    return 0;
}

static int rdlm_bench_tlf_body(rdlm_bench_worker_t *w)
{
    rdlm_bench_tlf_proc_t p = {.w = w, .a = w->arg, .d = w->data};
    rdlm_tl_boot_tcp_params_t bp = {
        .rank = w->rank,
        .size = 2,
        .host = "127.0.0.1",
        .port = p.a->port,
        .listen_fd = w->rank == 0 ? p.a->listen_fd : -1,
        .timeout_ms = 20000,
    };
    rdlm_status_t st;
    int rc = -1;

    /* Before any UCX context exists: both contexts see the same transports. */
    setenv("UCX_TLS", p.a->tls, 1);
    unsetenv("RDLM_UCX_TLS");
    if (w->rank == 1)
        close(p.a->listen_fd);
    st = rdlm_tl_boot_tcp_create(&bp, &p.boot);
    if (st != RDLM_OK) {
        rdlm_bench_worker_fail(w, "TCP bootstrap: %s", rdlm_status_str(st));
        goto out;
    }
    p.b = rdlm_tl_boot_tcp_get(p.boot);
    if (rdlm_bench_tlf_rdlm_open(&p) != 0 || rdlm_bench_tlf_raw_open(&p) != 0)
        goto out_contexts;
    if (w->rank == 1) {
        p.batch = malloc(sizeof(*p.batch) * (p.a->iterations / RDLM_BENCH_TLF_BATCH + 1));
        if (p.batch == NULL) {
            rdlm_bench_worker_fail(w, "out of memory");
            goto out_contexts;
        }
    }
    if (rdlm_bench_worker_start(w) != 0)
        goto out_contexts;
    if (w->rank == 1) {
        rc = rdlm_bench_alternate(RDLM_BENCH_TLF_NIMPL, p.a->rounds, rdlm_bench_tlf_round,
                                  &p);
        p.d->nrounds = rc == 0 ? p.a->rounds : 0;
        rdlm_tl_stats_read(p.ctx, &p.d->stats);
        atomic_store_explicit(&p.d->phase, RDLM_BENCH_TLF_PHASE_DONE, memory_order_release);
        rdlm_bench_worker_end(w, (uint64_t)p.a->rounds * RDLM_BENCH_TLF_NIMPL *
                                     p.a->iterations);
    } else {
        uint32_t ph;
        /* Where the atomics need no progress here (shared memory), the target sleeps:
         * a spinning target shares the machine with the initiator (on 2 SMT threads,
         * one core) and slows both sides' loops. */
        const struct timespec nap = {.tv_sec = 0, .tv_nsec = 200000};
        int nap_ok = !p.d->needs_progress;

        while ((ph = atomic_load_explicit(&p.d->phase, memory_order_acquire)) !=
               RDLM_BENCH_TLF_PHASE_DONE) {
            if (ph != RDLM_BENCH_TLF_PHASE_RAW)
                rdlm_tl_progress(p.ctx);
            if (ph != RDLM_BENCH_TLF_PHASE_RDLM)
                ucp_worker_progress(p.raw.worker);
            if (nap_ok)
                nanosleep(&nap, NULL);
        }
        p.d->final[RDLM_BENCH_TLF_RDLM] = *p.rdlm_word;
        p.d->final[RDLM_BENCH_TLF_RAW] = *(volatile uint64_t *)p.raw.word;
        rdlm_bench_worker_end(w, 0);
        rc = 0;
    }

out_contexts:
    /* Collective in both processes, also after a failure of the other one (the
     * bootstrap's timeout bounds it). */
    rdlm_bench_tlf_raw_close(&p); /* ends with a barrier: rank 1 is done with both words */
    if (p.mem != NULL)
        (void)p.ctx->mem->dereg(p.ctx, p.mem); /* ucx's destroy leaves regions mapped */
    rdlm_tl_destroy(p.ctx);
    rdlm_tl_boot_tcp_destroy(p.boot);
out:
    free(p.batch);
    return rc;
}

/* ---- parent --------------------------------------------------------------------- */

static int rdlm_bench_tlf_check(void *data, const void *arg,
                                const struct rdlm_bench_outcome *out, char *why,
                                size_t whylen)
{
    const rdlm_bench_tlf_data_t *d = data;
    const rdlm_bench_tlf_arg_t *a = arg;
    uint32_t k;

    (void)out;
    *a->result = *d;
    for (k = 0; k < RDLM_BENCH_TLF_NIMPL; k++) {
        if (d->final[k] != d->issued[k]) {
            snprintf(why, whylen, "%s: word at rank 0 is %" PRIu64 " after %" PRIu64
                     " fetch-adds", rdlm_bench_tlf_impl_names[k], d->final[k], d->issued[k]);
            return -1;
        }
    }
    return 0;
}

/* A rendezvous socket on 127.0.0.1, port chosen by the kernel. */
static int rdlm_bench_tlf_listen(uint16_t *port_p)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
    socklen_t salen = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 4) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &salen) != 0) {
        perror("rdlm-bench: tl-fadd: rendezvous socket");
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *port_p = ntohs(sa.sin_port);
    return fd;
}

static int rdlm_bench_tlf_setting(rdlm_bench_report_t *r, const char *label, const char *tls,
                                  uint64_t default_iterations, rdlm_bench_tlf_data_t *result)
{
    const rdlm_bench_opts_t *o = r->opts;
    const char *bench = rdlm_bench_def_tl_fadd.name;
    rdlm_bench_tlf_arg_t a = {
        .label = label,
        .tls = tls,
        .iterations = rdlm_bench_opts_iterations(o, default_iterations),
        .warmup = rdlm_bench_opts_warmup(o, RDLM_BENCH_TLF_WARMUP),
        .rounds = o->rounds,
        .result = result,
    };
    rdlm_bench_run_params_t rp = {
        .nprocs = 2,
        .timeout_s = 60,
        .data_size = sizeof(rdlm_bench_tlf_data_t),
        .data_check = rdlm_bench_tlf_check,
        .body = rdlm_bench_tlf_body,
        .arg = &a,
        .verbose = o->verbose,
    };
    rdlm_bench_measure_t *m[RDLM_BENCH_TLF_NIMPL];
    const rdlm_bench_tlf_data_t *d;
    rdlm_bench_outcome_t out;
    char metric[32];
    uint32_t k, round;
    int rc;

    snprintf(metric, sizeof(metric), "fetch-add %s", label);
    for (k = 0; k < RDLM_BENCH_TLF_NIMPL; k++) {
        m[k] = rdlm_bench_report_measure(r, bench, metric, rdlm_bench_tlf_impl_names[k], 2,
                                         "us");
        if (m[k] == NULL)
            return -1;
    }
    a.listen_fd = rdlm_bench_tlf_listen(&a.port);
    if (a.listen_fd < 0)
        return -1;
    rc = rdlm_bench_run(&rp, &out);
    close(a.listen_fd);
    if (rc != 0) {
        rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_SKIP,
                               "UCX_TLS=%s: measurement failed (reason on stderr)", tls);
        return -1;
    }
    rdlm_bench_outcome_free(&out);
    d = a.result;
    for (round = 0; round < d->nrounds; round++) {
        for (k = 0; k < RDLM_BENCH_TLF_NIMPL; k++) {
            rdlm_bench_summary_t pct = {.p50 = d->pct[k][round][0],
                                        .p90 = d->pct[k][round][1],
                                        .p99 = d->pct[k][round][2]};

            rdlm_bench_measure_round(m[k], d->us[k][round], &pct);
            rdlm_bench_report_round(r, round, "%-4s %-18s %.3f us\n", label,
                                    rdlm_bench_tlf_impl_names[k], d->us[k][round]);
        }
    }
    rdlm_bench_measures_finish(m, RDLM_BENCH_TLF_NIMPL);
    rdlm_bench_report_compare(r, m[RDLM_BENCH_TLF_RDLM], m[RDLM_BENCH_TLF_RAW], NULL,
                              RDLM_BENCH_TARGET_AT_MOST, RDLM_BENCH_TLF_TARGET);
    rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_INFO,
                           "UCX_TLS=%s: rdlm atomics %s, target progress %s; %" PRIu64
                           " fetch-adds each, final words exact; rank 1 transport "
                           "counters: amo %" PRIu64 " progress %" PRIu64,
                           tls, rdlm_tl_atomic_domain_str((rdlm_tl_atomic_domain_t)d->domain),
                           d->needs_progress ? "needed" : "not needed",
                           d->issued[RDLM_BENCH_TLF_RDLM], d->stats.amo, d->stats.progress);
    return 0;
}

static int rdlm_bench_tlf_run(rdlm_bench_report_t *r)
{
    const char *bench = rdlm_bench_def_tl_fadd.name;
    const rdlm_bench_opts_t *o = r->opts;
    rdlm_bench_tlf_data_t *result = calloc(1, sizeof(*result));
    int rc = 0;

    if (result == NULL)
        return -1;
    rdlm_bench_report_note(
        r, bench, RDLM_BENCH_NOTE_PARAMS,
        "2 processes over the TCP bootstrap on 127.0.0.1; rank 1 fetch-adds a word at "
        "rank 0, which progresses; %u rounds alternating rdlm/raw; per round %" PRIu64
        " (shm) / %" PRIu64 " (tcp) fetch-adds after %" PRIu64 " warm-up; figure: "
        "elapsed / count; percentiles over %u-op batches; raw: a second ucp context in "
        "the same processes",
        o->rounds, rdlm_bench_opts_iterations(o, RDLM_BENCH_TLF_ITER_SHM),
        rdlm_bench_opts_iterations(o, RDLM_BENCH_TLF_ITER_TCP),
        rdlm_bench_opts_warmup(o, RDLM_BENCH_TLF_WARMUP), RDLM_BENCH_TLF_BATCH);
    memset(result, 0, sizeof(*result));
    rc |= rdlm_bench_tlf_setting(r, "shm", "posix,sysv,self", RDLM_BENCH_TLF_ITER_SHM, result);
    memset(result, 0, sizeof(*result));
    rc |= rdlm_bench_tlf_setting(r, "tcp", "tcp,self", RDLM_BENCH_TLF_ITER_TCP, result);
    free(result);
    return rc;
}

const rdlm_bench_def_t rdlm_bench_def_tl_fadd = {
    .name = "tl-fadd",
    .title = "remote fetch-add latency: rdlm transport (UCX) vs raw ucp_atomic_op_nbx",
    .default_procs = NULL,
    .run = rdlm_bench_tlf_run,
};
