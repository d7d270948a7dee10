/*
 * memory: what locks cost in memory, in one process.
 *   1. bytes per lock: segment bytes / capacity for the default capacity
 *      (rdlm_ctx_segment_info), beside sizeof(pthread_mutex_t) for scale;
 *   2. a context with capacity 1,000,000 (its own job): its segment must be
 *      <= 128 MiB (issue target);
 *   3. resident memory growth (/proc/self/status VmRSS, split into RssAnon and
 *      RssShmem) when 10,000 locks are opened in a fresh segment.
 * Sizes are deterministic: one round.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchmarks.h"
#include "clock.h"
#include "workers.h"

#define RDLM_BENCH_MEM_LOCKS 10000u
#define RDLM_BENCH_MEM_BIG_CAPACITY 1000000u
#define RDLM_BENCH_MEM_LIMIT_MIB 128.0

enum {
    RDLM_BENCH_MEM_CAPACITY,  /* default capacity */
    RDLM_BENCH_MEM_BYTES,     /* its segment bytes */
    RDLM_BENCH_MEM_BIG_BYTES, /* segment bytes at capacity 1,000,000 */
    RDLM_BENCH_MEM_BIG_CAP,   /* capacity the big segment reports */
    RDLM_BENCH_MEM_RSS_KB,    /* VmRSS growth over the opens */
    RDLM_BENCH_MEM_ANON_KB,   /* RssAnon growth */
    RDLM_BENCH_MEM_SHMEM_KB,  /* RssShmem growth */
    RDLM_BENCH_MEM_OPEN_US,   /* mean rdlm_lock_open time */
};

/* kB values of VmRSS, RssAnon, RssShmem from /proc/self/status; 0 or -1. */
static int rdlm_bench_mem_rss(long kb[3])
{
    static const char *const keys[3] = {"VmRSS:", "RssAnon:", "RssShmem:"};
    char line[256];
    FILE *f = fopen("/proc/self/status", "r");
    int found = 0;
    int k;

    if (f == NULL) {
        return -1;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        for (k = 0; k < 3; k++) {
            size_t len = strlen(keys[k]);

            if (strncmp(line, keys[k], len) == 0) {
                kb[k] = strtol(line + len, NULL, 10);
                found++;
            }
        }
    }
    fclose(f);
    return found == 3 ? 0 : -1;
}

static int rdlm_bench_mem_open_many(rdlm_bench_worker_t *w, rdlm_ctx_h ctx)
{
    rdlm_lock_h *locks = calloc(RDLM_BENCH_MEM_LOCKS, sizeof(*locks));
    long before[3];
    long after[3];
    char name[RDLM_NAME_MAX + 1];
    rdlm_status_t st = RDLM_OK;
    uint64_t t0;
    uint32_t k;
    uint32_t opened = 0;
    int rc = 0;

    if (locks == NULL) {
        return rdlm_bench_worker_fail(w, "out of memory");
    }
    if (rdlm_bench_mem_rss(before) != 0) {
        free(locks);
        return rdlm_bench_worker_fail(w, "cannot read /proc/self/status");
    }
    t0 = rdlm_bench_now_ns();
    for (k = 0; k < RDLM_BENCH_MEM_LOCKS; k++, opened++) {
        snprintf(name, sizeof(name), "mem.lock.%05u", k);
        st = rdlm_lock_open(ctx, name, &locks[k]);
        if (st != RDLM_OK) {
            rc = rdlm_bench_worker_fail(w, "rdlm_lock_open #%u: %s", k, rdlm_status_name(st));
            break;
        }
    }
    w->slot->values[RDLM_BENCH_MEM_OPEN_US] =
        (double)(rdlm_bench_now_ns() - t0) / RDLM_BENCH_MEM_LOCKS / 1000.0;
    if (rc == 0 && rdlm_bench_mem_rss(after) == 0) {
        w->slot->values[RDLM_BENCH_MEM_RSS_KB] = (double)(after[0] - before[0]);
        w->slot->values[RDLM_BENCH_MEM_ANON_KB] = (double)(after[1] - before[1]);
        w->slot->values[RDLM_BENCH_MEM_SHMEM_KB] = (double)(after[2] - before[2]);
    }
    for (k = 0; k < opened; k++) {
        rdlm_lock_close(locks[k]);
    }
    free(locks);
    return rc;
}

static int rdlm_bench_mem_body(rdlm_bench_worker_t *w)
{
    char big_job[RDLM_BENCH_JOB_MAX + 1];
    rdlm_ctx_params_t cp = {.field_mask = RDLM_CTX_FIELD_JOB, .job = w->job};
    rdlm_segment_info_t info;
    rdlm_status_t st;
    rdlm_ctx_h ctx;
    int rc;

    if (rdlm_bench_worker_start(w) != 0) {
        return -1;
    }
    st = rdlm_ctx_create(&cp, &ctx);
    if (st != RDLM_OK) {
        return rdlm_bench_worker_fail(w, "rdlm_ctx_create(job %s): %s", w->job,
                                      rdlm_status_name(st));
    }
    st = rdlm_ctx_segment_info(ctx, &info);
    if (st != RDLM_OK) {
        rdlm_ctx_destroy(ctx);
        return rdlm_bench_worker_fail(w, "rdlm_ctx_segment_info: %s", rdlm_status_name(st));
    }
    w->slot->values[RDLM_BENCH_MEM_CAPACITY] = info.capacity;
    w->slot->values[RDLM_BENCH_MEM_BYTES] = (double)info.bytes;
    rc = rdlm_bench_mem_open_many(w, ctx);
    rdlm_ctx_destroy(ctx);
    if (rc != 0) {
        return -1;
    }

    snprintf(big_job, sizeof(big_job), "%s-1m", w->job);
    cp = (rdlm_ctx_params_t){.field_mask = RDLM_CTX_FIELD_JOB | RDLM_CTX_FIELD_CAPACITY,
                             .job = big_job,
                             .capacity = RDLM_BENCH_MEM_BIG_CAPACITY};
    st = rdlm_ctx_create(&cp, &ctx);
    if (st != RDLM_OK) {
        return rdlm_bench_worker_fail(w, "rdlm_ctx_create(capacity %u): %s",
                                      RDLM_BENCH_MEM_BIG_CAPACITY, rdlm_status_name(st));
    }
    st = rdlm_ctx_segment_info(ctx, &info);
    rdlm_ctx_destroy(ctx);
    if (st != RDLM_OK) {
        return rdlm_bench_worker_fail(w, "rdlm_ctx_segment_info: %s", rdlm_status_name(st));
    }
    w->slot->values[RDLM_BENCH_MEM_BIG_BYTES] = (double)info.bytes;
    w->slot->values[RDLM_BENCH_MEM_BIG_CAP] = info.capacity;
    rdlm_bench_worker_end(w, 1);
    return 0;
}

static int rdlm_bench_mem_run(rdlm_bench_report_t *r)
{
    const char *bench = rdlm_bench_def_memory.name;
    rdlm_bench_run_params_t p = {.nprocs = 1, .body = rdlm_bench_mem_body,
                                 .verbose = r->opts->verbose};
    rdlm_bench_measure_t *per_lock, *mutex, *big, *limit, *rss;
    rdlm_bench_outcome_t out;
    const double *v;

    rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_PARAMS,
                           "one process, one round (sizes are deterministic); RSS from "
                           "/proc/self/status around %u rdlm_lock_open calls",
                           RDLM_BENCH_MEM_LOCKS);
    if (rdlm_bench_run(&p, &out) != 0) {
        return -1;
    }
    v = out.slots[0].values;
    per_lock =
        rdlm_bench_report_figure(r, bench, "segment bytes/lock", "rdlm", 1, "B",
                                 v[RDLM_BENCH_MEM_BYTES] / v[RDLM_BENCH_MEM_CAPACITY]);
    mutex = rdlm_bench_report_figure(r, bench, "segment bytes/lock", "pthread_mutex_t", 1,
                                     "B", (double)sizeof(pthread_mutex_t));
    big = rdlm_bench_report_figure(r, bench, "segment, 1e6 locks", "rdlm", 1, "MiB",
                                   v[RDLM_BENCH_MEM_BIG_BYTES] / (1024.0 * 1024.0));
    limit = rdlm_bench_report_figure(r, bench, "segment, 1e6 locks", "limit", 1, "MiB",
                                     RDLM_BENCH_MEM_LIMIT_MIB);
    rss =
        rdlm_bench_report_figure(r, bench, "RSS per 10k opened", "rdlm", 1, "KiB",
                                 v[RDLM_BENCH_MEM_RSS_KB] * 10000.0 / RDLM_BENCH_MEM_LOCKS);
    if (per_lock == NULL || mutex == NULL || big == NULL || limit == NULL || rss == NULL) {
        rdlm_bench_outcome_free(&out);
        return -1;
    }
    rdlm_bench_report_compare(r, per_lock, mutex, NULL, RDLM_BENCH_TARGET_NONE, 0);
    rdlm_bench_report_compare(r, big, limit, "limit (128 MiB)", RDLM_BENCH_TARGET_AT_MOST,
                              1.0);
    rdlm_bench_report_compare(r, rss, NULL, NULL, RDLM_BENCH_TARGET_NONE, 0);
    rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_INFO,
                           "default capacity %.0f: segment %.0f bytes (%.2f MiB), %.1f B/lock",
                           v[RDLM_BENCH_MEM_CAPACITY], v[RDLM_BENCH_MEM_BYTES],
                           v[RDLM_BENCH_MEM_BYTES] / (1024.0 * 1024.0),
                           v[RDLM_BENCH_MEM_BYTES] / v[RDLM_BENCH_MEM_CAPACITY]);
    rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_INFO,
                           "capacity 1,000,000 (segment reports %.0f): %.0f bytes = %.2f MiB "
                           "(limit 128 MiB)",
                           v[RDLM_BENCH_MEM_BIG_CAP], v[RDLM_BENCH_MEM_BIG_BYTES],
                           v[RDLM_BENCH_MEM_BIG_BYTES] / (1024.0 * 1024.0));
    rdlm_bench_report_note(r, bench, RDLM_BENCH_NOTE_INFO,
                           "%u locks opened: RSS +%.0f KiB (anonymous +%.0f KiB, shared "
                           "segment +%.0f KiB) = %.1f B/lock; %.2f us per rdlm_lock_open",
                           RDLM_BENCH_MEM_LOCKS, v[RDLM_BENCH_MEM_RSS_KB],
                           v[RDLM_BENCH_MEM_ANON_KB], v[RDLM_BENCH_MEM_SHMEM_KB],
                           v[RDLM_BENCH_MEM_RSS_KB] * 1024.0 / RDLM_BENCH_MEM_LOCKS,
                           v[RDLM_BENCH_MEM_OPEN_US]);
    rdlm_bench_outcome_free(&out);
    return 0;
}

const rdlm_bench_def_t rdlm_bench_def_memory = {
    .name = "memory",
    .title = "bytes per lock, 1,000,000-lock segment, resident growth per 10,000 locks",
    .run = rdlm_bench_mem_run,
};
