/* Forked worker processes for one measurement; see workers.h. */
#include "workers.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "options.h"

#define RDLM_BENCH_CACHE_LINE 64
#define RDLM_BENCH_DEFAULT_TIMEOUT_S 120

/* The control mapping: start barrier, flags each on its own line, then the slots
 * (nprocs) and the sample buffers (nprocs * sample_cap). */
struct rdlm_bench_ctl {
    pthread_barrier_t start;
    _Alignas(RDLM_BENCH_CACHE_LINE) _Atomic uint32_t abort;
    _Alignas(RDLM_BENCH_CACHE_LINE) _Atomic uint32_t started;
    _Alignas(RDLM_BENCH_CACHE_LINE) _Atomic uint32_t stop;
    _Alignas(RDLM_BENCH_CACHE_LINE) char job[RDLM_BENCH_JOB_MAX + 1];
};

static size_t rdlm_bench_round_up(size_t n, size_t to)
{
    return (n + to - 1) / to * to;
}

static size_t rdlm_bench_slots_offset(void)
{
    return rdlm_bench_round_up(sizeof(struct rdlm_bench_ctl), RDLM_BENCH_CACHE_LINE);
}

static size_t rdlm_bench_slot_stride(void)
{
    return rdlm_bench_round_up(sizeof(rdlm_bench_slot_t), RDLM_BENCH_CACHE_LINE);
}

static rdlm_bench_slot_t *rdlm_bench_ctl_slot(struct rdlm_bench_ctl *ctl, uint32_t k)
{
    return (rdlm_bench_slot_t *)((char *)ctl + rdlm_bench_slots_offset() +
                                 (size_t)k * rdlm_bench_slot_stride());
}

static uint32_t *rdlm_bench_ctl_samples(struct rdlm_bench_ctl *ctl, uint32_t nprocs)
{
    return (uint32_t *)((char *)ctl + rdlm_bench_slots_offset() +
                        (size_t)nprocs * rdlm_bench_slot_stride());
}

static size_t rdlm_bench_ctl_size(uint32_t nprocs, uint32_t sample_cap)
{
    return rdlm_bench_slots_offset() + (size_t)nprocs * rdlm_bench_slot_stride() +
           (size_t)nprocs * sample_cap * sizeof(uint32_t);
}

static void *rdlm_bench_map_shared(size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

    return p == MAP_FAILED ? NULL : p;
}

/* ---- worker side ------------------------------------------------------------------ */

int rdlm_bench_worker_fail(rdlm_bench_worker_t *w, const char *fmt, ...)
{
    va_list ap;

    if (!w->slot->failed) { /* keep the first reason */
        va_start(ap, fmt);
        vsnprintf(w->slot->error, sizeof(w->slot->error), fmt, ap);
        va_end(ap);
        w->slot->failed = 1;
    }
    return -1;
}

int rdlm_bench_worker_start(rdlm_bench_worker_t *w)
{
    struct rdlm_bench_ctl *ctl = w->ctl;

    if (w->started) {
        return rdlm_bench_worker_fail(w, "worker started twice (benchmark bug)");
    }
    w->started = 1;
    if (w->slot->failed) {
        /* Published before arriving, so every worker sees it after the barrier. */
        atomic_store_explicit(&ctl->abort, 1, memory_order_seq_cst);
    }
    pthread_barrier_wait(&ctl->start);
    if (atomic_load_explicit(&ctl->abort, memory_order_seq_cst) != 0) {
        return -1;
    }
    w->slot->t_start_ns = rdlm_bench_now_ns();
    atomic_fetch_add_explicit(&ctl->started, 1, memory_order_release);
    return 0;
}

void rdlm_bench_worker_end(rdlm_bench_worker_t *w, uint64_t ops)
{
    w->slot->t_end_ns = rdlm_bench_now_ns();
    w->slot->ops = ops;
    w->slot->nsamples = w->sampler.len;
}

void rdlm_bench_stats_add(rdlm_stats_t *sum, const rdlm_stats_t *x, uint64_t sign)
{
    sum->acquires += sign * x->acquires;
    sum->contended += sign * x->contended;
    sum->parks += sign * x->parks;
    sum->wakes += sign * x->wakes;
    sum->timeouts += sign * x->timeouts;
    sum->recoveries += sign * x->recoveries;
    sum->skips += sign * x->skips;
}

void rdlm_bench_worker_stats(rdlm_bench_worker_t *w, const rdlm_stats_t *before,
                             const rdlm_stats_t *after)
{
    w->slot->stats = *after;
    rdlm_bench_stats_add(&w->slot->stats, before, UINT64_MAX); /* minus before */
    w->slot->has_stats = 1;
}

int rdlm_bench_cpu_of(uint32_t rank, uint32_t nprocs)
{
    cpu_set_t set;
    uint32_t seen = 0;

    if (sched_getaffinity(0, sizeof(set), &set) != 0 ||
        (uint32_t)CPU_COUNT(&set) < nprocs) {
        return -1;
    }
    for (int k = 0; k < CPU_SETSIZE; k++) {
        if (CPU_ISSET(k, &set) && seen++ == rank) {
            return k;
        }
    }
    return -1;
}

/* Pin worker w to its CPU, if the run's workers fit the CPUs: 0, or -1 after
 * recording why. */
static int rdlm_bench_pin(rdlm_bench_worker_t *w)
{
    int cpu = rdlm_bench_cpu_of(w->rank, w->nprocs);
    cpu_set_t set;

    if (cpu < 0) {
        return 0;
    }
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof(set), &set) != 0) {
        return rdlm_bench_worker_fail(w, "sched_setaffinity(CPU %d): %s", cpu,
                                      strerror(errno));
    }
    return 0;
}

static void rdlm_bench_child(const rdlm_bench_run_params_t *params,
                             struct rdlm_bench_ctl *ctl, void *data, uint32_t rank,
                             pid_t parent)
{
    rdlm_bench_worker_t w = {
        .rank = rank,
        .nprocs = params->nprocs,
        .job = ctl->job,
        .data = data,
        .arg = params->arg,
        .slot = rdlm_bench_ctl_slot(ctl, rank),
        .sampler = {.buf = rdlm_bench_ctl_samples(ctl, params->nprocs) +
                           (size_t)rank * params->sample_cap,
                    .cap = params->sample_cap,
                    .rng = 0x9e3779b97f4a7c15ull * (rank + 1)},
        .stop = &ctl->stop,
        .ctl = ctl,
    };
    int rc;

    /* Die with the parent; and if it died before prctl took effect, leave now. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) {
        _exit(3);
    }
    rc = rdlm_bench_pin(&w) == 0 ? params->body(&w) : -1;
    if (!w.started) { /* failed before the start: release the other workers */
        if (rc == 0) {
            rdlm_bench_worker_fail(&w, "benchmark body never started (benchmark bug)");
        }
        rdlm_bench_worker_start(&w);
        rc = -1;
    }
    _exit(rc == 0 ? 0 : 1);
}

/* ---- parent side ------------------------------------------------------------------ */

/* SIGALRM only interrupts waitpid (no SA_RESTART); the deadline is re-checked. */
static void rdlm_bench_on_alarm(int sig)
{
    (void)sig;
}

static void rdlm_bench_kill_all(const pid_t *pids, const int *alive, uint32_t n)
{
    uint32_t k;

    for (k = 0; k < n; k++) {
        if (alive[k]) {
            kill(pids[k], SIGKILL);
        }
    }
}

static int rdlm_bench_index_of(const pid_t *pids, uint32_t n, pid_t pid)
{
    uint32_t k;

    for (k = 0; k < n; k++) {
        if (pids[k] == pid) {
            return (int)k;
        }
    }
    return -1;
}

/* Note a reaped worker; returns 0 if it exited cleanly. A worker that failed by
 * itself explains in its slot; why gets crashes and odd exit statuses only. */
static int rdlm_bench_reaped(const rdlm_bench_run_params_t *params, uint32_t k,
                             int status, char *why, size_t whylen)
{
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        return 0;
    }
    if (why[0] != '\0') {
        return -1; /* keep the first reason */
    }
    if (WIFSIGNALED(status)) {
        snprintf(why, whylen, "worker %u of %u killed by signal %d (%s)", k,
                 params->nprocs, WTERMSIG(status), strsignal(WTERMSIG(status)));
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 1) {
        snprintf(why, whylen, "worker %u of %u exited with status %d", k, params->nprocs,
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
    return -1;
}

/* Wait for every worker to pass the start barrier, polling every millisecond (only
 * while the workers set up and warm up, never during the measured phase). */
static int rdlm_bench_await_start(const rdlm_bench_run_params_t *params,
                                  struct rdlm_bench_ctl *ctl, pid_t *pids, int *alive,
                                  uint32_t *nalive, uint64_t deadline_ns, char *why,
                                  size_t whylen)
{
    const struct timespec tick = {.tv_sec = 0, .tv_nsec = 1000000};
    int status;
    pid_t pid;
    int k;

    while (atomic_load_explicit(&ctl->started, memory_order_acquire) < params->nprocs) {
        pid = waitpid(-1, &status, WNOHANG);
        if (pid > 0 && (k = rdlm_bench_index_of(pids, params->nprocs, pid)) >= 0) {
            alive[k] = 0;
            (*nalive)--;
            if (rdlm_bench_reaped(params, (uint32_t)k, status, why, whylen) != 0) {
                return -1;
            }
            if (atomic_load(&ctl->started) < params->nprocs && *nalive == 0) {
                break; /* everyone ended: nothing more will start */
            }
            continue;
        }
        if (rdlm_bench_now_ns() > deadline_ns) {
            snprintf(why, whylen, "workers did not start within %u s",
                     params->timeout_s ? params->timeout_s : RDLM_BENCH_DEFAULT_TIMEOUT_S);
            return -1;
        }
        nanosleep(&tick, NULL);
    }
    return 0;
}

static void rdlm_bench_sleep_ms(uint32_t ms)
{
    struct timespec until = rdlm_bench_deadline_ts(CLOCK_MONOTONIC, ms);

    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR) {
    }
}

/* Block until every worker ended, or the deadline; on any failure kill the rest. */
static int rdlm_bench_reap_all(const rdlm_bench_run_params_t *params, pid_t *pids,
                               int *alive, uint32_t *nalive, int failed,
                               uint64_t deadline_ns, char *why, size_t whylen)
{
    struct sigaction sa = {.sa_handler = rdlm_bench_on_alarm}; /* no SA_RESTART */
    struct sigaction old;
    uint64_t now;
    int status;
    pid_t pid;
    int k;

    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, &old);
    if (failed) {
        rdlm_bench_kill_all(pids, alive, params->nprocs);
    }
    while (*nalive > 0) {
        if (!failed) {
            now = rdlm_bench_now_ns();
            if (now >= deadline_ns) {
                snprintf(why, whylen, "timed out after %u s; workers killed",
                         params->timeout_s ? params->timeout_s
                                           : RDLM_BENCH_DEFAULT_TIMEOUT_S);
                failed = 1;
                rdlm_bench_kill_all(pids, alive, params->nprocs);
            } else {
                alarm((unsigned)((deadline_ns - now) / 1000000000u) + 1);
            }
        }
        pid = waitpid(-1, &status, 0);
        alarm(0);
        if (pid < 0) {
            if (errno == EINTR) {
                continue;
            }
            break; /* ECHILD: nothing left */
        }
        k = rdlm_bench_index_of(pids, params->nprocs, pid);
        if (k < 0 || !alive[k]) {
            continue;
        }
        alive[k] = 0;
        (*nalive)--;
        if (rdlm_bench_reaped(params, (uint32_t)k, status, why, whylen) != 0 && !failed) {
            failed = 1;
            rdlm_bench_kill_all(pids, alive, params->nprocs);
        }
    }
    sigaction(SIGALRM, &old, NULL);
    return failed ? -1 : 0;
}

/* A run that failed may leave its segment behind; attaching and detaching replaces
 * and removes a stale one. Best effort. */
static void rdlm_bench_cleanup_job(const char *job)
{
    rdlm_ctx_params_t cp = {.field_mask = RDLM_CTX_FIELD_JOB, .job = job};
    rdlm_ctx_h ctx;

    if (rdlm_ctx_create(&cp, &ctx) == RDLM_OK) {
        rdlm_ctx_destroy(ctx);
    }
}

/* The first worker's own reason, then the crash or timeout, if any; the first of
 * them also into params->failure. */
static void rdlm_bench_report_failure(const rdlm_bench_run_params_t *params,
                                      struct rdlm_bench_ctl *ctl, const char *why)
{
    const char *first = NULL;
    uint32_t k;

    for (k = 0; k < params->nprocs && first == NULL; k++) {
        const rdlm_bench_slot_t *s = rdlm_bench_ctl_slot(ctl, k);

        if (s->failed) {
            fprintf(stderr, "rdlm-bench: run %s failed: worker %u of %u: %s\n", ctl->job,
                    k, params->nprocs, s->error);
            first = s->error;
        }
    }
    if (why[0] != '\0' || first == NULL) {
        fprintf(stderr, "rdlm-bench: run %s failed: %s\n", ctl->job,
                why[0] != '\0' ? why : "a worker failed");
        first = first != NULL ? first : why[0] != '\0' ? why : "a worker failed";
    }
    if (params->failure != NULL) {
        snprintf(params->failure, params->failure_len, "%s", first);
    }
}

static void rdlm_bench_collect(const rdlm_bench_run_params_t *params,
                               struct rdlm_bench_ctl *ctl, rdlm_bench_outcome_t *out)
{
    uint64_t first_start = UINT64_MAX;
    uint64_t last_end = 0;
    uint32_t k;

    for (k = 0; k < params->nprocs; k++) {
        const rdlm_bench_slot_t *s = rdlm_bench_ctl_slot(ctl, k);

        out->slots[k] = *s;
        out->ops += s->ops;
        first_start = s->t_start_ns < first_start ? s->t_start_ns : first_start;
        last_end = s->t_end_ns > last_end ? s->t_end_ns : last_end;
        if (s->t_end_ns - s->t_start_ns > out->max_elapsed_ns) {
            out->max_elapsed_ns = s->t_end_ns - s->t_start_ns;
        }
        if (s->has_stats) {
            out->has_stats = 1;
            rdlm_bench_stats_add(&out->stats, &s->stats, 1);
        }
    }
    out->window_ns = last_end > first_start ? last_end - first_start : 0;
    if (params->sample_cap > 0) {
        memcpy(out->samples, rdlm_bench_ctl_samples(ctl, params->nprocs),
               (size_t)params->nprocs * params->sample_cap * sizeof(uint32_t));
    }
}

int rdlm_bench_run(const rdlm_bench_run_params_t *params, rdlm_bench_outcome_t *out_p)
{
    static unsigned run_seq;
    uint32_t timeout_s = params->timeout_s ? params->timeout_s : RDLM_BENCH_DEFAULT_TIMEOUT_S;
    uint64_t deadline_ns = rdlm_bench_now_ns() + (uint64_t)timeout_s * 1000000000u;
    size_t ctl_size = rdlm_bench_ctl_size(params->nprocs, params->sample_cap);
    rdlm_bench_outcome_t out = {.nprocs = params->nprocs, .sample_cap = params->sample_cap};
    pid_t pids[RDLM_BENCH_MAX_PROCS] = {0};
    int alive[RDLM_BENCH_MAX_PROCS] = {0};
    pthread_barrierattr_t battr;
    struct rdlm_bench_ctl *ctl;
    char why[320] = "";
    uint32_t nalive = 0;
    void *data = NULL;
    pid_t self = getpid();
    int failed = 0;
    uint32_t k;
    int rc;

    if (params->nprocs < 1 || params->nprocs > RDLM_BENCH_MAX_PROCS) {
        fprintf(stderr, "rdlm-bench: process count %u out of range\n", params->nprocs);
        return -1;
    }
    ctl = rdlm_bench_map_shared(ctl_size);
    if (ctl == NULL) {
        fprintf(stderr, "rdlm-bench: mmap of %zu bytes: %s\n", ctl_size, strerror(errno));
        return -1;
    }
    snprintf(ctl->job, sizeof(ctl->job), "rb%ld-%u", (long)self, ++run_seq);
    pthread_barrierattr_init(&battr);
    pthread_barrierattr_setpshared(&battr, PTHREAD_PROCESS_SHARED);
    rc = pthread_barrier_init(&ctl->start, &battr, params->nprocs);
    pthread_barrierattr_destroy(&battr);
    if (rc != 0) {
        fprintf(stderr, "rdlm-bench: pthread_barrier_init: %s\n", strerror(rc));
        goto err_unmap_ctl;
    }
    if (params->data_size > 0) {
        data = rdlm_bench_map_shared(params->data_size);
        if (data == NULL) {
            fprintf(stderr, "rdlm-bench: mmap of %zu bytes: %s\n", params->data_size,
                    strerror(errno));
            goto err_destroy_barrier;
        }
    }
    if (params->data_init != NULL && params->data_init(data, params->arg) != 0) {
        fprintf(stderr, "rdlm-bench: setting up the shared data failed\n");
        goto err_unmap_data;
    }
    out.slots = calloc(params->nprocs, sizeof(*out.slots));
    out.samples = calloc((size_t)params->nprocs * params->sample_cap + 1, sizeof(uint32_t));
    if (out.slots == NULL || out.samples == NULL) {
        fprintf(stderr, "rdlm-bench: out of memory\n");
        goto err_free_out;
    }

    fflush(NULL); /* the children _exit, but never print a copy of our buffers */
    for (k = 0; k < params->nprocs; k++) {
        pid_t pid = fork();

        if (pid == 0) {
            rdlm_bench_child(params, ctl, data, k, self);
        }
        if (pid < 0) {
            snprintf(why, sizeof(why), "fork: %s", strerror(errno));
            atomic_store(&ctl->abort, 1);
            failed = 1;
            break;
        }
        pids[k] = pid;
        alive[k] = 1;
        nalive++;
    }
    if (params->verbose) {
        fprintf(stderr, "rdlm-bench:   run %s: %u worker(s) forked, %s\n", ctl->job, nalive,
                rdlm_bench_cpu_of(0, params->nprocs) >= 0
                    ? "pinned one per CPU"
                    : "not pinned (more workers than CPUs allowed)");
    }
    if (!failed && rdlm_bench_await_start(params, ctl, pids, alive, &nalive, deadline_ns,
                                          why, sizeof(why)) != 0) {
        failed = 1;
    }
    if (!failed && params->duration_ms > 0) {
        rdlm_bench_sleep_ms(params->duration_ms);
        atomic_store_explicit(&ctl->stop, 1, memory_order_relaxed);
    }
    if (rdlm_bench_reap_all(params, pids, alive, &nalive, failed, deadline_ns, why,
                            sizeof(why)) != 0) {
        failed = 1;
    }
    if (failed) {
        rdlm_bench_report_failure(params, ctl, why);
        rdlm_bench_cleanup_job(ctl->job);
        goto err_free_out;
    }
    rdlm_bench_collect(params, ctl, &out);
    if (params->data_check != NULL &&
        params->data_check(data, params->arg, &out, why, sizeof(why)) != 0) {
        fprintf(stderr, "rdlm-bench: run %s failed its check: %s\n", ctl->job, why);
        goto err_free_out;
    }
    if (params->data_fini != NULL) {
        params->data_fini(data, params->arg);
    }
    if (data != NULL) {
        munmap(data, params->data_size);
    }
    pthread_barrier_destroy(&ctl->start);
    munmap(ctl, ctl_size);
    *out_p = out;
    return 0;

err_free_out:
    free(out.slots);
    free(out.samples);
    if (params->data_fini != NULL) {
        params->data_fini(data, params->arg);
    }
err_unmap_data:
    if (data != NULL) {
        munmap(data, params->data_size);
    }
err_destroy_barrier:
    pthread_barrier_destroy(&ctl->start);
err_unmap_ctl:
    munmap(ctl, ctl_size);
    return -1;
}

void rdlm_bench_outcome_free(rdlm_bench_outcome_t *out)
{
    if (out == NULL) {
        return;
    }
    free(out->slots);
    free(out->samples);
    out->slots = NULL;
    out->samples = NULL;
}

void rdlm_bench_outcome_percentiles(const rdlm_bench_outcome_t *out, double scale,
                                    int per_process_max, rdlm_bench_summary_t *summary_p)
{
    rdlm_bench_summary_t all = {0};
    rdlm_bench_summary_t one;
    size_t total = 0;
    double *v;
    uint32_t k;
    uint32_t j;

    for (k = 0; k < out->nprocs; k++) {
        total += out->slots[k].nsamples;
    }
    v = malloc((total + 1) * sizeof(*v));
    if (v == NULL) {
        rdlm_bench_summarize(NULL, 0, summary_p);
        return;
    }
    if (per_process_max) {
        rdlm_bench_summarize(NULL, 0, &all);
        for (k = 0; k < out->nprocs; k++) {
            const uint32_t *s = out->samples + (size_t)k * out->sample_cap;

            for (j = 0; j < out->slots[k].nsamples; j++) {
                v[j] = s[j] * scale;
            }
            rdlm_bench_summarize(v, out->slots[k].nsamples, &one);
            if (one.count == 0) {
                continue;
            }
            if (all.count == 0) {
                all = one;
                continue;
            }
            all.count += one.count;
            all.min = one.min < all.min ? one.min : all.min;
            all.max = one.max > all.max ? one.max : all.max;
            all.p50 = one.p50 > all.p50 ? one.p50 : all.p50;
            all.p90 = one.p90 > all.p90 ? one.p90 : all.p90;
            all.p99 = one.p99 > all.p99 ? one.p99 : all.p99;
            all.p999 = one.p999 > all.p999 ? one.p999 : all.p999;
        }
    } else {
        size_t n = 0;

        for (k = 0; k < out->nprocs; k++) {
            const uint32_t *s = out->samples + (size_t)k * out->sample_cap;

            for (j = 0; j < out->slots[k].nsamples; j++) {
                v[n++] = s[j] * scale;
            }
        }
        rdlm_bench_summarize(v, n, &all);
    }
    free(v);
    *summary_p = all;
}
