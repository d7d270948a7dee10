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
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "clock.h"
#include "lock_services.h"

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

static int rdlm_bench_redis_attach(void *shared, const char *job, void **lock_p, char *err,
                                   size_t errlen)
{
    rdlm_bench_service_addr_t addr;
    struct timeval tv = {.tv_sec = RDLM_BENCH_SERVICE_WAIT_MS / 1000};
    rdlm_bench_redis_lock_t *l;
    redisReply *reply;
    uint64_t rnd;

    (void)shared;
    l = rdlm_bench_service_new(RDLM_BENCH_ENV_REDIS, sizeof(*l), &addr, err, errlen);
    if (l == NULL) {
        return -1;
    }
    l->c = redisConnectWithTimeout(addr.host, addr.port, tv);
    if (l->c == NULL || l->c->err) {
        snprintf(err, errlen, "redis at %s: connect: %s", addr.text,
                 l->c ? l->c->errstr : "out of memory");
        goto err_free;
    }
    if (redisSetTimeout(l->c, tv) != REDIS_OK) {
        snprintf(err, errlen, "redis at %s: set timeout: %s", addr.text, l->c->errstr);
        goto err_free;
    }
    reply = redisCommand(l->c, "SCRIPT LOAD %s", rdlm_bench_redis_script);
    if (reply == NULL || reply->type != REDIS_REPLY_STRING ||
        reply->len >= (int)sizeof(l->sha)) {
        snprintf(err, errlen, "redis at %s: SCRIPT LOAD: %s", addr.text,
                 reply == NULL                      ? l->c->errstr
                 : reply->type == REDIS_REPLY_ERROR ? reply->str
                                                    : "unexpected reply");
        freeReplyObject(reply);
        goto err_free;
    }
    memcpy(l->sha, reply->str, (size_t)reply->len);
    freeReplyObject(reply);
    if (getrandom(&rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
        rnd = rdlm_bench_now_ns() ^ ((uint64_t)getpid() << 32);
    }
    snprintf(l->prefix, sizeof(l->prefix), "%016" PRIx64, rnd);
    snprintf(l->key, sizeof(l->key), "rdlmbench:%s", job);
    *lock_p = l;
    return 0;

err_free:
    if (l->c != NULL) {
        redisFree(l->c);
    }
    free(l);
    return -1;
}

static void rdlm_bench_redis_sleep(uint64_t ns)
{
    struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)ns};

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static int rdlm_bench_redis_acquire(void *lock)
{
    rdlm_bench_redis_lock_t *l = lock;
    uint64_t backoff = RDLM_BENCH_REDIS_BACKOFF_MIN_NS;
    uint64_t deadline = 0;
    redisReply *reply;
    int held;

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

static void rdlm_bench_redis_detach(void *lock)
{
    rdlm_bench_redis_lock_t *l = lock;

    redisFree(l->c);
    free(l);
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
