/*
 * Baseline: the single-instance Redis lock, through hiredis.
 *
 *   acquire:  SET rdlmbench:<job> <token> NX PX 30000   "OK": held; nil: taken,
 *             sleep (50 us doubling to 1 ms) and retry, as Redis lock clients poll
 *   release:  EVALSHA <sha1 of the script> 1 rdlmbench:<job> <token>
 *             script: if redis.call('get',KEYS[1])==ARGV[1] then
 *                       return redis.call('del',KEYS[1]) else return 0 end
 *             1: released; 0: the key expired or is someone else's (an error here)
 *
 * The token is unique per acquire: 16 random hex digits per process and a counter.
 * The script is loaded once per connection (SCRIPT LOAD), as clients do; EVALSHA
 * sends the same script by its digest. One connection per worker process.
 *
 * And lease-renew's baseline (renew_ops.h), a TTL kept alive the Redis way:
 *
 *   open:     SETNX rdlmbench:renew:<job> 1, then once()
 *   once:     PEXPIRE rdlmbench:renew:<job> 30000       1: renewed
 *   close:    DEL the key
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "clock.h"
#include "lock_services.h"
#include "renew_ops.h"

#define RDLM_BENCH_REDIS_BACKOFF_MIN_NS 50000u
#define RDLM_BENCH_REDIS_BACKOFF_MAX_NS 1000000u

static const char rdlm_bench_redis_script[] =
    "if redis.call('get',KEYS[1])==ARGV[1] then return redis.call('del',KEYS[1]) "
    "else return 0 end";

typedef struct rdlm_bench_redis_lock {
    redisContext *c;
    char key[64];
    char sha[48];
    char prefix[24]; /* random per process */
    char token[48];  /* the current holder's token */
    uint64_t seq;
} rdlm_bench_redis_lock_t;

/* A connection to the Redis of RDLMBENCH_REDIS, every wait bounded, and key
 * rdlmbench:<what><job>: the state (addr_p: the server's address), or NULL with why
 * in err. */
static rdlm_bench_redis_lock_t *rdlm_bench_redis_connect(const char *what, const char *job,
                                                         rdlm_bench_service_addr_t *addr_p,
                                                         char *err, size_t errlen)
{
    struct timeval tv = {.tv_sec = RDLM_BENCH_SERVICE_WAIT_MS / 1000};
    rdlm_bench_redis_lock_t *l;

    l = rdlm_bench_service_new(RDLM_BENCH_ENV_REDIS, sizeof(*l), addr_p, err, errlen);
    if (l == NULL) {
        return NULL;
    }
    l->c = redisConnectWithTimeout(addr_p->host, addr_p->port, tv);
    if (l->c == NULL || l->c->err) {
        snprintf(err, errlen, "redis at %s: connect: %s", addr_p->text,
                 l->c ? l->c->errstr : "out of memory");
        goto err_free;
    }
    if (redisSetTimeout(l->c, tv) != REDIS_OK) {
        snprintf(err, errlen, "redis at %s: set timeout: %s", addr_p->text, l->c->errstr);
        goto err_free;
    }
    snprintf(l->key, sizeof(l->key), "rdlmbench:%s%s", what, job);
    return l;

err_free:
    if (l->c != NULL) {
        redisFree(l->c);
    }
    free(l);
    return NULL;
}

static void rdlm_bench_redis_detach(void *lock)
{
    rdlm_bench_redis_lock_t *l = lock;

    redisFree(l->c);
    free(l);
}

static int rdlm_bench_redis_attach(void *shared, const char *job, void **lock_p, char *err,
                                   size_t errlen)
{
    rdlm_bench_service_addr_t addr;
    rdlm_bench_redis_lock_t *l;
    redisReply *reply;
    uint64_t rnd;

    (void)shared;
    l = rdlm_bench_redis_connect("", job, &addr, err, errlen);
    if (l == NULL) {
        return -1;
    }
    reply = redisCommand(l->c, "SCRIPT LOAD %s", rdlm_bench_redis_script);
    if (reply == NULL || reply->type != REDIS_REPLY_STRING ||
        reply->len >= (int)sizeof(l->sha)) {
        snprintf(err, errlen, "redis at %s: SCRIPT LOAD: %s", addr.text,
                 reply == NULL                      ? l->c->errstr
                 : reply->type == REDIS_REPLY_ERROR ? reply->str
                                                    : "unexpected reply");
        freeReplyObject(reply);
        rdlm_bench_redis_detach(l);
        return -1;
    }
    memcpy(l->sha, reply->str, (size_t)reply->len);
    freeReplyObject(reply);
    if (getrandom(&rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
        rnd = rdlm_bench_now_ns() ^ ((uint64_t)getpid() << 32);
    }
    snprintf(l->prefix, sizeof(l->prefix), "%016" PRIx64, rnd);
    *lock_p = l;
    return 0;
}

static void rdlm_bench_redis_sleep(uint64_t ns)
{
    struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)ns};

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* token_p: not filled (the service's own token stays inside the adapter). */
static int rdlm_bench_redis_acquire(void *lock, uint64_t *token_p)
{
    rdlm_bench_redis_lock_t *l = lock;
    uint64_t backoff = RDLM_BENCH_REDIS_BACKOFF_MIN_NS;
    uint64_t deadline = 0;
    redisReply *reply;
    int held;

    (void)token_p;
    snprintf(l->token, sizeof(l->token), "%s-%" PRIu64, l->prefix, ++l->seq);
    for (;;) {
        reply = redisCommand(l->c, "SET %s %s NX PX %d", l->key, l->token,
                             RDLM_BENCH_SERVICE_TTL_MS);
        if (reply == NULL) {
            fprintf(stderr, "rdlm-bench: redis SET: %s\n", l->c->errstr);
            return RDLM_BENCH_SERVICE_ECONN;
        }
        if (reply->type == REDIS_REPLY_STATUS && strcmp(reply->str, "OK") == 0) {
            held = 1;
        } else if (reply->type == REDIS_REPLY_NIL) {
            held = 0;
        } else {
            fprintf(stderr, "rdlm-bench: redis SET: %s\n",
                    reply->type == REDIS_REPLY_ERROR ? reply->str : "unexpected reply");
            freeReplyObject(reply);
            return RDLM_BENCH_SERVICE_EREPLY;
        }
        freeReplyObject(reply);
        if (held) {
            return 0;
        }
        if (deadline == 0) {
            deadline =
                rdlm_bench_now_ns() + (uint64_t)RDLM_BENCH_SERVICE_WAIT_MS * 1000000u;
        } else if (rdlm_bench_now_ns() > deadline) {
            return RDLM_BENCH_SERVICE_ETIME;
        }
        rdlm_bench_redis_sleep(backoff);
        if (backoff < RDLM_BENCH_REDIS_BACKOFF_MAX_NS) {
            backoff *= 2;
        }
    }
}

static int rdlm_bench_redis_release(void *lock)
{
    rdlm_bench_redis_lock_t *l = lock;
    redisReply *reply;
    int rc;

    reply = redisCommand(l->c, "EVALSHA %s 1 %s %s", l->sha, l->key, l->token);
    if (reply == NULL) {
        fprintf(stderr, "rdlm-bench: redis EVALSHA: %s\n", l->c->errstr);
        return RDLM_BENCH_SERVICE_ECONN;
    }
    if (reply->type != REDIS_REPLY_INTEGER) {
        fprintf(stderr, "rdlm-bench: redis EVALSHA: %s\n",
                reply->type == REDIS_REPLY_ERROR ? reply->str : "unexpected reply");
        rc = RDLM_BENCH_SERVICE_EREPLY;
    } else {
        rc = reply->integer == 1 ? 0 : RDLM_BENCH_SERVICE_ELOST;
    }
    freeReplyObject(reply);
    return rc;
}

const rdlm_bench_lock_ops_t rdlm_bench_lock_redis = {
    .name = "redis",
    .description = "Redis SET NX PX + compare-and-delete script (hiredis, loopback)",
    .shared_size = 0,
    .shared_init = rdlm_bench_lock_nop_init,
    .shared_fini = rdlm_bench_lock_nop_fini,
    .attach = rdlm_bench_redis_attach,
    .acquire = rdlm_bench_redis_acquire,
    .release = rdlm_bench_redis_release,
    .try_acquire = rdlm_bench_lock_no_try,
    .error_name = rdlm_bench_service_error_name,
    .stats = rdlm_bench_lock_no_stats,
    .detach = rdlm_bench_redis_detach,
};

/* ---- lease-renew: a TTL kept alive ------------------------------------------------- */

/* Run one command on l (a printf-style format for hiredis) that must answer the
 * integer 1; 0, or -1 after saying why on stderr. */
static int rdlm_bench_redis_one(rdlm_bench_redis_lock_t *l, const char *what,
                                const char *format, ...)
{
    redisReply *reply;
    va_list ap;
    int rc;

    va_start(ap, format);
    reply = redisvCommand(l->c, format, ap);
    va_end(ap);
    if (reply == NULL) {
        fprintf(stderr, "rdlm-bench: redis %s: %s\n", what, l->c->errstr);
        return -1;
    }
    rc = reply->type == REDIS_REPLY_INTEGER && reply->integer == 1 ? 0 : -1;
    if (rc != 0) {
        fprintf(stderr, "rdlm-bench: redis %s: %s\n", what,
                reply->type == REDIS_REPLY_ERROR ? reply->str : "key gone (expired?)");
    }
    freeReplyObject(reply);
    return rc;
}

static int rdlm_bench_redis_pexpire(void *h)
{
    rdlm_bench_redis_lock_t *l = h;

    return rdlm_bench_redis_one(l, "PEXPIRE", "PEXPIRE %s %d", l->key,
                                RDLM_BENCH_SERVICE_TTL_MS);
}

static int rdlm_bench_redis_renew_open(const char *job, void **h_p, char *err,
                                       size_t errlen)
{
    rdlm_bench_service_addr_t addr;
    rdlm_bench_redis_lock_t *l =
        rdlm_bench_redis_connect("renew:", job, &addr, err, errlen);

    if (l == NULL) {
        return -1;
    }
    if (rdlm_bench_redis_one(l, "SETNX", "SETNX %s 1", l->key) != 0 ||
        rdlm_bench_redis_pexpire(l) != 0) {
        snprintf(err, errlen, "redis at %s: could not set %s (reason on stderr)", addr.text,
                 l->key);
        rdlm_bench_redis_detach(l);
        return -1;
    }
    *h_p = l;
    return 0;
}

static void rdlm_bench_redis_renew_close(void *h)
{
    rdlm_bench_redis_lock_t *l = h;

    (void)rdlm_bench_redis_one(l, "DEL", "DEL %s", l->key);
    rdlm_bench_redis_detach(l);
}

const rdlm_bench_renew_ops_t rdlm_bench_renew_redis = {
    .name = "redis-pexpire",
    .description = "Redis PEXPIRE of a key, 30 s (hiredis, loopback)",
    .env = RDLM_BENCH_ENV_REDIS,
    .open = rdlm_bench_redis_renew_open,
    .once = rdlm_bench_redis_pexpire,
    .close = rdlm_bench_redis_renew_close,
};
