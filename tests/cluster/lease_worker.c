/*
 * lease_worker: a client of the lease authority that writes to a fenced_store under
 * an authority lock, and records what it saw as JSON lines (worker_log.h) for the
 * checkers (check_locks.py, check_fencing.py).
 *
 *   lease_worker --authority A:P,B:P,C:P --store A:P --client NAME --lock NAME
 *                [--key KEY (default: the lock name)] [--ttl-ms 5000] [--iters 1]
 *                [--hold-ms 0] [--check-every-ms 0] [--lock-timeout-ms 30000]
 *                [--stop-after-acquire [--write-after-resume] [--park-max-ms 120000]]
 *                [--start-file PATH [--start-max-ms 60000]] [--new-epoch]
 *                [--pause-ms 0] [--stop-file PATH] [--ctx-lock] [--history FILE]
 *
 * Each iteration: lock -> write(token) -> hold (hold-ms, with a "check" record every
 * check-every-ms) -> write(token) again if it held for a while -> unlock, then sleep
 * pause-ms. A failed lock is recorded and counted, and the next iteration follows.
 *
 * Two ways to take the lock (worker_lock_ops_t, one implementation each):
 *   default      rdlm_session_open at --authority; the lock is the authority's own
 *                (rdlm_session_lock / rdlm_session_unlock: one Raft entry each).
 *   --ctx-lock   RDLM_AUTHORITY = --authority and RDLM_LEASE_TTL_MS = --ttl-ms in the
 *                environment, rdlm_ctx_create(NULL), rdlm_lock_open; the lock is
 *                rdlm_lock_acquire / rdlm_lock_release (a lock homed at an rdlmd
 *                replica). Acquire records carry "home" (rdlm_lock_query's home_node:
 *                the replica's index in the strcmp order of the client addresses).
 *                The context's lease (rdlm_ctx_session) has no lease-lost callback,
 *                so no "lease_lost" record.
 * Lease checks are rdlm_session_check / rdlm_session_valid_until on the session in
 * both modes. The last record before "close" is "stats": the requests this process
 * sent to the authority (renewals apart: rdlm_session_stats, rdlm_ctx_stats) and the
 * acquires it was granted, so a script can check that the lock path of --ctx-lock
 * sends none.
 *
 *   --stop-after-acquire   after the first lock and write, record "parked" and wait
 *                          (at most park-max-ms) to be SIGSTOPped or killed; with
 *                          check-every-ms, record a lease check that often meanwhile.
 *   --write-after-resume   when a SIGCONT arrives while parked: record "resumed",
 *                          write with the old token (the store must say STALE), call
 *                          rdlm_session_check and rdlm_session_lock (both must say
 *                          RDLM_ERR_LEASE_EXPIRED), try to unlock, and exit.
 *   --start-file PATH      open the session and the store connection, then wait for
 *                          PATH to exist before the first lock (the harness starts
 *                          the worker early and releases it at a chosen instant).
 *   --stop-file PATH       end the iterations early once PATH exists (checked before
 *                          each lock; a "stopped" record).
 *
 * What t_ns means in each record (the checkers rely on it):
 *   acquire   when the lock call returned (t_call_ns: when it was called)
 *   write     before the request was sent (the store's decision comes later)
 *   check     before rdlm_session_check was called
 *   release   before the unlock call (one record per try: a release refused with
 *             RDLM_ERR_NO_SPACE leaves the lock held and is tried again)
 * so [acquire.t_ns, release.t_ns] lies inside the interval in which the authority
 * let this client hold the lock, and a check or write stamped t happened after t.
 *
 * Exit: 0 every iteration acquired, wrote and released (or the resume sequence ran);
 * 3 the lease was lost; 1 other failures (all recorded); 2 usage.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdlm.h>
#include <rdlm/lease.h>

#include "common.h"
#include "fenced_store_client.h"
#include "worker_log.h"

#define WORKER_STORE_TIMEOUT_MS 2000
/* A release refused with RDLM_ERR_NO_SPACE is tried again this often, this many times
 * (60 s in all). */
#define WORKER_UNLOCK_RETRY_MS 100
#define WORKER_UNLOCK_RETRIES 600

typedef struct worker_lock_ops worker_lock_ops_t;

typedef struct worker_opts {
    const char *authority, *store, *client, *lock, *key, *history, *start_file, *stop_file;
    uint32_t ttl_ms;
    long iters, hold_ms, check_every_ms, lock_timeout_ms, park_max_ms, start_max_ms,
        pause_ms;
    int stop_after_acquire, write_after_resume, new_epoch;
    const worker_lock_ops_t *ops; /* how the lock is taken (--ctx-lock or not) */
} worker_opts_t;

typedef struct worker {
    const worker_opts_t *o;
    rdlm_session_h session; /* the lease: our own, or the context's (not ours to close) */
    rdlm_ctx_h ctx;         /* --ctx-lock only */
    rdlm_lock_h lock;       /* --ctx-lock only */
    fstore_client_t *store; /* NULL after an I/O error: reconnect on the next write */
    uint64_t granted;       /* acquires that returned RDLM_OK or RDLM_OWNER_DEAD */
} worker_t;

/*
 * How the worker holds the lock. Everything else (writes, lease checks through
 * w->session, the records) is common to both implementations.
 *   open    set w->session (and whatever the lock needs); nothing to undo on error
 *   lock    acquire o->lock, blocking up to timeout_ns; *token_p on success
 *   unlock  release the lock acquired with token
 *   home    the lock's home replica; RDLM_ERR_UNSUPPORTED where there is none (the
 *           acquire record then has no "home" field)
 *   stats   requests sent to the authority, renewals apart
 *   close   undo open
 */
struct worker_lock_ops {
    rdlm_status_t (*open)(worker_t *w);
    rdlm_status_t (*lock)(worker_t *w, uint64_t timeout_ns, uint64_t *token_p);
    rdlm_status_t (*unlock)(worker_t *w, uint64_t token);
    rdlm_status_t (*home)(worker_t *w, int32_t *home_p);
    rdlm_status_t (*stats)(worker_t *w, uint64_t *requests_p, uint64_t *renewals_p);
    void (*close)(worker_t *w);
};

static volatile sig_atomic_t worker_resumed;

static void worker_on_sigcont(int sig)
{
    (void)sig;
    worker_resumed = 1;
}

static void worker_on_lease_lost(void *arg, rdlm_session_h session)
{
    (void)arg;
    worker_log(worker_now_ns(), "lease_lost", ",\"valid_until_ns\":%" PRIu64,
               rdlm_session_valid_until(session));
}

static void worker_sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Write "client-i" to the key with token and record the store's decision. */
static rdlm_status_t worker_write(worker_t *w, uint64_t token, long iter)
{
    const worker_opts_t *o = w->o;
    uint64_t t = worker_now_ns(), max = 0;
    rdlm_status_t status = RDLM_OK;
    char value[FSTORE_CLIENT_MAX + 24];

    snprintf(value, sizeof(value), "%s-%ld", o->client, iter);
    if (w->store == NULL) {
        status =
            fstore_client_open(o->store, o->client, WORKER_STORE_TIMEOUT_MS, &w->store);
    }
    if (status == RDLM_OK) {
        status = fstore_client_write(w->store, o->key, token, value, &max);
    }
    if (status == RDLM_ERR_IO || status == RDLM_ERR_PROTOCOL) {
        fstore_client_close(w->store);
        w->store = NULL;
    }
    worker_log(t, "write",
               ",\"lock\":\"%s\",\"key\":\"%s\",\"token\":%" PRIu64
               ",\"status\":\"%s\",\"result\":\"%s\",\"max\":%" PRIu64,
               o->lock, o->key, token, rdlm_status_name(status),
               status == RDLM_OK                ? "ok"
               : status == RDLM_ERR_STALE_TOKEN ? "stale"
                                                : "error",
               max);
    return status;
}

static rdlm_status_t worker_check(worker_t *w, uint64_t token)
{
    uint64_t t = worker_now_ns();
    rdlm_status_t status = rdlm_session_check(w->session);

    worker_log(t, "check",
               ",\"lock\":\"%s\",\"token\":%" PRIu64
               ",\"status\":\"%s\",\"valid_until_ns\":%" PRIu64,
               w->o->lock, token, rdlm_status_name(status),
               rdlm_session_valid_until(w->session));
    return status;
}

/* ---- the authority's own lock (rdlm_session_lock) ---------------------------------- */

static rdlm_status_t worker_session_open(worker_t *w)
{
    rdlm_session_params_t params = {.field_mask =
                                        RDLM_SESSION_FIELD_TTL | RDLM_SESSION_FIELD_LOST_CB,
                                    .ttl_ms = w->o->ttl_ms,
                                    .lost_cb = worker_on_lease_lost};

    return rdlm_session_open(w->o->authority, &params, &w->session);
}

static rdlm_status_t worker_session_lock(worker_t *w, uint64_t timeout_ns,
                                         uint64_t *token_p)
{
    return rdlm_session_lock(w->session, w->o->lock, timeout_ns, token_p);
}

static rdlm_status_t worker_session_unlock(worker_t *w, uint64_t token)
{
    return rdlm_session_unlock(w->session, w->o->lock, token);
}

static rdlm_status_t worker_session_home(worker_t *w, int32_t *home_p)
{
    (void)w;
    (void)home_p;
    return RDLM_ERR_UNSUPPORTED;
}

static rdlm_status_t worker_session_stats(worker_t *w, uint64_t *requests_p,
                                          uint64_t *renewals_p)
{
    rdlm_session_stats_t s;
    rdlm_status_t status = rdlm_session_stats(w->session, &s);

    if (status == RDLM_OK) {
        *requests_p = s.requests;
        *renewals_p = s.renewals;
    }
    return status;
}

static void worker_session_close(worker_t *w)
{
    rdlm_session_close(w->session);
    w->session = NULL;
}

static const worker_lock_ops_t worker_session_ops = {
    .open = worker_session_open,
    .lock = worker_session_lock,
    .unlock = worker_session_unlock,
    .home = worker_session_home,
    .stats = worker_session_stats,
    .close = worker_session_close,
};

/* ---- a context's lock (--ctx-lock: rdlm_lock_acquire, homed at a replica) ---------- */

static rdlm_status_t worker_ctx_open(worker_t *w)
{
    char ttl[16];
    rdlm_status_t status;

    snprintf(ttl, sizeof(ttl), "%" PRIu32, w->o->ttl_ms);
    if (setenv("RDLM_AUTHORITY", w->o->authority, 1) != 0 ||
        setenv("RDLM_LEASE_TTL_MS", ttl, 1) != 0) {
        return RDLM_ERR_NO_MEMORY;
    }
    status = rdlm_ctx_create(NULL, &w->ctx);
    if (status != RDLM_OK) {
        return status;
    }
    w->session = rdlm_ctx_session(w->ctx);
    if (w->session == NULL) {
        fprintf(stderr, "lease_worker: the context holds no lease (RDLM_AUTHORITY)\n");
        status = RDLM_ERR_BAD_CONFIG;
        goto err_destroy_ctx;
    }
    status = rdlm_lock_open(w->ctx, w->o->lock, &w->lock);
    if (status != RDLM_OK) {
        goto err_destroy_ctx;
    }
    return RDLM_OK;

err_destroy_ctx:
    rdlm_ctx_destroy(w->ctx);
    w->ctx = NULL;
    w->session = NULL;
    return status;
}

static rdlm_status_t worker_ctx_lock(worker_t *w, uint64_t timeout_ns, uint64_t *token_p)
{
    return rdlm_lock_acquire(w->lock, timeout_ns, token_p);
}

static rdlm_status_t worker_ctx_unlock(worker_t *w, uint64_t token)
{
    (void)token; /* the handle knows its hold */
    return rdlm_lock_release(w->lock);
}

static rdlm_status_t worker_ctx_home(worker_t *w, int32_t *home_p)
{
    rdlm_lock_info_t info;
    rdlm_status_t status = rdlm_lock_query(w->lock, &info);

    *home_p = status == RDLM_OK ? info.home_node : -1;
    return RDLM_OK;
}

static rdlm_status_t worker_ctx_stats(worker_t *w, uint64_t *requests_p,
                                      uint64_t *renewals_p)
{
    rdlm_stats_t s;
    rdlm_status_t status = rdlm_ctx_stats(w->ctx, &s);

    if (status == RDLM_OK) {
        *requests_p = s.authority_requests;
        *renewals_p = s.authority_renewals;
    }
    return status;
}

static void worker_ctx_close(worker_t *w)
{
    rdlm_ctx_destroy(w->ctx); /* closes the lock handle and the context's lease */
    w->ctx = NULL;
    w->lock = NULL;
    w->session = NULL;
}

static const worker_lock_ops_t worker_ctx_ops = {
    .open = worker_ctx_open,
    .lock = worker_ctx_lock,
    .unlock = worker_ctx_unlock,
    .home = worker_ctx_home,
    .stats = worker_ctx_stats,
    .close = worker_ctx_close,
};

/* ---- the records, over either implementation ------------------------------------- */

static rdlm_status_t worker_lock(worker_t *w, uint64_t timeout_ns, uint64_t *token_p)
{
    uint64_t t0 = worker_now_ns(), token = 0;
    rdlm_status_t status = w->o->ops->lock(w, timeout_ns, &token);
    uint64_t t1 = worker_now_ns();
    int held = status == RDLM_OK || status == RDLM_OWNER_DEAD;
    int32_t home;
    char home_field[32] = "";

    if (w->o->ops->home(w, &home) == RDLM_OK) {
        snprintf(home_field, sizeof(home_field), ",\"home\":%" PRId32, home);
    }
    worker_log(t1, "acquire",
               ",\"lock\":\"%s\",\"token\":%" PRIu64 ",\"status\":\"%s\""
               ",\"t_call_ns\":%" PRIu64 ",\"wait_ms\":%.3f%s",
               w->o->lock, held ? token : 0, rdlm_status_name(status), t0,
               (double)(t1 - t0) / 1e6, home_field);
    w->granted += held;
    *token_p = held ? token : 0;
    return status;
}

static rdlm_status_t worker_unlock(worker_t *w, uint64_t token)
{
    uint64_t t = worker_now_ns();
    rdlm_status_t status = w->o->ops->unlock(w, token);

    worker_log(t, "release", ",\"lock\":\"%s\",\"token\":%" PRIu64 ",\"status\":\"%s\"",
               w->o->lock, token, rdlm_status_name(status));
    return status;
}

/* The final counts: what the lock path cost at the authority. */
static void worker_log_stats(worker_t *w)
{
    uint64_t requests = 0, renewals = 0;
    rdlm_status_t status = w->o->ops->stats(w, &requests, &renewals);

    worker_log(worker_now_ns(), "stats",
               ",\"status\":\"%s\",\"authority_requests\":%" PRIu64
               ",\"authority_renewals\":%" PRIu64 ",\"acquires\":%" PRIu64,
               rdlm_status_name(status), requests, renewals, w->granted);
}

/* Hold the lock for hold_ms, checking the lease every check_every_ms. RDLM_OK, or
 * RDLM_ERR_LEASE_EXPIRED as soon as a check says so. */
static rdlm_status_t worker_hold(worker_t *w, uint64_t token)
{
    const worker_opts_t *o = w->o;
    uint64_t end = worker_now_ns() + (uint64_t)o->hold_ms * 1000000u;
    long step = o->check_every_ms > 0 ? o->check_every_ms : o->hold_ms;

    while (worker_now_ns() < end) {
        uint64_t left_ms = (end - worker_now_ns()) / 1000000u;

        worker_sleep_ms(step < (long)left_ms ? step : (long)left_ms);
        if (o->check_every_ms > 0 && worker_check(w, token) != RDLM_OK) {
            return RDLM_ERR_LEASE_EXPIRED;
        }
    }
    return RDLM_OK;
}

/* Parked holder (--stop-after-acquire). Returns the exit code. */
static int worker_park(worker_t *w, uint64_t token)
{
    const worker_opts_t *o = w->o;
    uint64_t end = worker_now_ns() + (uint64_t)o->park_max_ms * 1000000u, t2;

    worker_log(worker_now_ns(), "parked", ",\"lock\":\"%s\",\"token\":%" PRIu64, o->lock,
               token);
    for (long slept = 0;
         worker_now_ns() < end && !(o->write_after_resume && worker_resumed); slept += 10) {
        worker_sleep_ms(10);
        if (o->check_every_ms > 0 && slept % o->check_every_ms == 0) {
            worker_check(w, token); /* the lease as the parked holder sees it */
        }
    }
    if (!worker_resumed || !o->write_after_resume) {
        worker_log(worker_now_ns(), "park_timeout", NULL);
        worker_unlock(w, token);
        return 1;
    }
    worker_log(worker_now_ns(), "resumed", ",\"lock\":\"%s\",\"token\":%" PRIu64, o->lock,
               token);
    worker_write(w, token, 0); /* the late write with the old token */
    worker_check(w, token);
    worker_lock(w, 1000000000u, &t2);
    worker_unlock(w, t2 != 0 ? t2 : token);
    return 0;
}

/* Wait for the harness's start file. 0, or -1 after start_max_ms. */
static int worker_wait_start(const worker_opts_t *o)
{
    uint64_t end = worker_now_ns() + (uint64_t)o->start_max_ms * 1000000u;

    while (access(o->start_file, F_OK) != 0) {
        if (worker_now_ns() >= end) {
            return -1;
        }
        worker_sleep_ms(5);
    }
    worker_log(worker_now_ns(), "started", NULL);
    return 0;
}

/* One iteration: lock, write, hold, write, unlock. -1 to go on (a failure counted in
 * *failures_p), or the exit code to end with (parked holder, lease lost). */
static int worker_iteration(worker_t *w, long i, int *failures_p)
{
    const worker_opts_t *o = w->o;
    uint64_t token;
    rdlm_status_t status = worker_lock(w, (uint64_t)o->lock_timeout_ms * 1000000u, &token);

    if (status == RDLM_ERR_LEASE_EXPIRED) {
        return 3;
    }
    if (status != RDLM_OK && status != RDLM_OWNER_DEAD) {
        (*failures_p)++;
        return -1;
    }
    *failures_p += worker_write(w, token, i) != RDLM_OK;
    if (o->stop_after_acquire) {
        return worker_park(w, token);
    }
    if (o->hold_ms > 0) {
        if (worker_hold(w, token) != RDLM_OK) {
            worker_write(w, token, i); /* recorded: the store decides */
            worker_unlock(w, token);
            return 3;
        }
        *failures_p += worker_write(w, token, i) != RDLM_OK;
    }
    status = worker_unlock(w, token);
    /* A release the authority refused for its disk leaves the lock held: retried, as
     * rdlm_session_unlock's contract says, until the space returns (bounded). */
    for (int retry = 0; status == RDLM_ERR_NO_SPACE && retry < WORKER_UNLOCK_RETRIES;
         retry++) {
        worker_sleep_ms(WORKER_UNLOCK_RETRY_MS);
        status = worker_unlock(w, token);
    }
    if (status == RDLM_ERR_LEASE_EXPIRED) {
        return 3;
    }
    *failures_p += status != RDLM_OK;
    return -1;
}

static int worker_run(worker_t *w)
{
    const worker_opts_t *o = w->o;
    int failures = 0, rc;

    for (long i = 1; i <= o->iters; i++) {
        if (o->stop_file != NULL && access(o->stop_file, F_OK) == 0) {
            worker_log(worker_now_ns(), "stopped", ",\"iter\":%ld", i);
            break;
        }
        rc = worker_iteration(w, i, &failures);
        if (rc >= 0) {
            return rc;
        }
        if (o->pause_ms > 0 && i < o->iters) {
            worker_sleep_ms(o->pause_ms);
        }
    }
    return failures == 0 ? 0 : 1;
}

static void worker_usage(void)
{
    fprintf(stderr,
            "usage: lease_worker --authority A:P[,B:P...] --store A:P --client NAME "
            "--lock NAME [--key KEY] [--ttl-ms MS] [--iters N] [--hold-ms MS] "
            "[--check-every-ms MS] [--lock-timeout-ms MS] [--stop-after-acquire "
            "[--write-after-resume] [--park-max-ms MS]] [--start-file PATH "
            "[--start-max-ms MS]] [--new-epoch] [--pause-ms MS] [--stop-file PATH] "
            "[--ctx-lock] [--history FILE]\n");
}

static int worker_parse(int argc, char **argv, worker_opts_t *o)
{
    *o = (worker_opts_t){.ttl_ms = 5000,
                         .iters = 1,
                         .lock_timeout_ms = 30000,
                         .park_max_ms = 120000,
                         .start_max_ms = 60000,
                         .ops = &worker_session_ops};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long *num = NULL;

        if (strcmp(a, "--stop-after-acquire") == 0) {
            o->stop_after_acquire = 1;
            continue;
        } else if (strcmp(a, "--write-after-resume") == 0) {
            o->write_after_resume = 1;
            continue;
        } else if (strcmp(a, "--new-epoch") == 0) {
            o->new_epoch = 1;
            continue;
        } else if (strcmp(a, "--ctx-lock") == 0) {
            o->ops = &worker_ctx_ops;
            continue;
        } else if (v == NULL) {
            return -1;
        } else if (strcmp(a, "--authority") == 0) {
            o->authority = v;
        } else if (strcmp(a, "--store") == 0) {
            o->store = v;
        } else if (strcmp(a, "--client") == 0) {
            o->client = v;
        } else if (strcmp(a, "--lock") == 0) {
            o->lock = v;
        } else if (strcmp(a, "--key") == 0) {
            o->key = v;
        } else if (strcmp(a, "--history") == 0) {
            o->history = v;
        } else if (strcmp(a, "--start-file") == 0) {
            o->start_file = v;
        } else if (strcmp(a, "--stop-file") == 0) {
            o->stop_file = v;
        } else if (strcmp(a, "--ttl-ms") == 0) {
            o->ttl_ms = (uint32_t)strtoul(v, NULL, 10);
        } else if (strcmp(a, "--iters") == 0) {
            num = &o->iters;
        } else if (strcmp(a, "--hold-ms") == 0) {
            num = &o->hold_ms;
        } else if (strcmp(a, "--check-every-ms") == 0) {
            num = &o->check_every_ms;
        } else if (strcmp(a, "--lock-timeout-ms") == 0) {
            num = &o->lock_timeout_ms;
        } else if (strcmp(a, "--park-max-ms") == 0) {
            num = &o->park_max_ms;
        } else if (strcmp(a, "--start-max-ms") == 0) {
            num = &o->start_max_ms;
        } else if (strcmp(a, "--pause-ms") == 0) {
            num = &o->pause_ms;
        } else {
            return -1;
        }
        if (num != NULL) {
            char *end;

            *num = strtol(v, &end, 10);
            if (*end != '\0' || *num < 0) {
                return -1;
            }
        }
        i++;
    }
    if (o->key == NULL) {
        o->key = o->lock;
    }
    /* Names go into JSON unescaped: keep them to the store's alphabet. */
    if (o->authority == NULL || o->store == NULL || o->client == NULL || o->lock == NULL ||
        !fstore_name_ok(o->client, strlen(o->client), FSTORE_CLIENT_MAX) ||
        !fstore_name_ok(o->lock, strlen(o->lock), RDLM_NAME_MAX) ||
        !fstore_name_ok(o->key, strlen(o->key), FSTORE_KEY_MAX)) {
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    worker_opts_t o;
    worker_t w = {.o = &o};
    struct sigaction sa = {.sa_handler = worker_on_sigcont, .sa_flags = SA_RESTART};
    rdlm_status_t status;
    uint64_t t;
    int rc;

    if (worker_parse(argc, argv, &o) != 0) {
        worker_usage();
        return 2;
    }
    if (worker_log_open(o.history, o.client) != 0) {
        return 1;
    }
    sigaction(SIGCONT, &sa, NULL);
    t = worker_now_ns();
    status = o.ops->open(&w);
    if (status == RDLM_OK) {
        worker_log_set_session(rdlm_session_id(w.session));
    }
    worker_log(worker_now_ns(), "open",
               ",\"status\":\"%s\",\"ttl_ms\":%" PRIu32 ",\"t_call_ns\":%" PRIu64,
               rdlm_status_name(status), o.ttl_ms, t);
    if (status != RDLM_OK) {
        return 1;
    }
    if (o.new_epoch) {
        uint64_t epoch = 0;

        t = worker_now_ns();
        status = rdlm_session_new_epoch(w.session, &epoch);
        worker_log(t, "epoch", ",\"status\":\"%s\",\"epoch\":%" PRIu64,
                   rdlm_status_name(status), epoch);
    }
    status = fstore_client_open(o.store, o.client, WORKER_STORE_TIMEOUT_MS, &w.store);
    if (status != RDLM_OK) {
        w.store = NULL; /* retried by the first write, which records the error */
    }
    if (o.start_file != NULL && worker_wait_start(&o) != 0) {
        worker_log(worker_now_ns(), "start_timeout", NULL);
        rc = 1;
    } else {
        rc = worker_run(&w);
    }
    worker_log_stats(&w);
    t = worker_now_ns();
    o.ops->close(&w);
    fstore_client_close(w.store);
    worker_log(t, "close", ",\"rc\":%d", rc);
    return rc;
}
