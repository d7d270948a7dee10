/*
 * Baseline: the ZooKeeper lock recipe (the one in ZooKeeper's "Recipes and
 * Solutions" and Curator's InterProcessMutex), with the C client's synchronous
 * calls (libzookeeper_mt: an I/O thread and a completion thread per handle).
 *
 *   attach:   connect (session timeout 30 s), create /rdlmbench (persistent) and
 *             /rdlmbench/<job> (a container: the server removes it some time after
 *             its last child, as Curator's lock dirs; "exists" is fine)
 *   acquire:  create /rdlmbench/<job>/lock-  EPHEMERAL|SEQUENTIAL  -> lock-0000000042
 *             (no such dir: the container went, create it again and retry once)
 *             loop: get_children; ours lowest: held
 *                   else exists(predecessor, watch): gone: loop again;
 *                   else wait for the watch (deleted), then loop again
 *   release:  delete our node
 *
 * Uncontended: 3 round trips, 2 of them writes (the create and the delete), which
 * the server logs to disk before answering (fsync per transaction, its default).
 */
#define THREADED 1 /* the synchronous API of zookeeper.h */

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zookeeper/zookeeper.h>

#include "clock.h"
#include "lock_services.h"

#define RDLM_BENCH_ZK_ROOT "/rdlmbench"
#define RDLM_BENCH_ZK_PATH_MAX 160

typedef struct rdlm_bench_zk_lock {
    zhandle_t *zh;
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    int connected; /* under mutex: the session is up */
    int fired;     /* under mutex: the predecessor watch fired */
    char dir[RDLM_BENCH_ZK_PATH_MAX];
    char node[RDLM_BENCH_ZK_PATH_MAX]; /* ours while held (full path) */
} rdlm_bench_zk_lock_t;

/* Session events (the completion thread). */
static void rdlm_bench_zk_session_watcher(zhandle_t *zh, int type, int state,
                                          const char *path, void *ctx)
{
    rdlm_bench_zk_lock_t *l = ctx;

    (void)zh;
    (void)path;
    if (type != ZOO_SESSION_EVENT) {
        return;
    }
    pthread_mutex_lock(&l->mutex);
    l->connected = state == ZOO_CONNECTED_STATE;
    pthread_cond_broadcast(&l->cond);
    pthread_mutex_unlock(&l->mutex);
}

/* The predecessor's watch (the completion thread): any event means look again. */
static void rdlm_bench_zk_pred_watcher(zhandle_t *zh, int type, int state, const char *path,
                                       void *ctx)
{
    rdlm_bench_zk_lock_t *l = ctx;

    (void)zh;
    (void)type;
    (void)state;
    (void)path;
    pthread_mutex_lock(&l->mutex);
    l->fired = 1;
    pthread_cond_broadcast(&l->cond);
    pthread_mutex_unlock(&l->mutex);
}

static int rdlm_bench_zk_mkdir(rdlm_bench_zk_lock_t *l, const char *path, int mode,
                               char *err, size_t errlen)
{
    int rc = zoo_create(l->zh, path, "", 0, &ZOO_OPEN_ACL_UNSAFE, mode, NULL, 0);

    if (rc != ZOK && rc != ZNODEEXISTS) {
        snprintf(err, errlen, "zookeeper create %s: %s", path, zerror(rc));
        return -1;
    }
    return 0;
}

static int rdlm_bench_zk_attach(void *shared, const char *job, void **lock_p, char *err,
                                size_t errlen)
{
    rdlm_bench_service_addr_t addr;
    rdlm_bench_zk_lock_t *l;
    struct timespec until;
    int rc = 0;

    (void)shared;
    l = rdlm_bench_service_new(RDLM_BENCH_ENV_ZK, sizeof(*l), &addr, err, errlen);
    if (l == NULL) {
        return -1;
    }
    pthread_mutex_init(&l->mutex, NULL);
    pthread_cond_init(&l->cond, NULL);
    zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
    l->zh = zookeeper_init(addr.text, rdlm_bench_zk_session_watcher,
                           RDLM_BENCH_SERVICE_TTL_MS, NULL, l, 0);
    if (l->zh == NULL) {
        snprintf(err, errlen, "zookeeper_init(%s): %s", addr.text, strerror(errno));
        goto err_free;
    }
    until = rdlm_bench_deadline_ts(CLOCK_REALTIME, 5000);
    pthread_mutex_lock(&l->mutex);
    while (!l->connected && rc != ETIMEDOUT) {
        rc = pthread_cond_timedwait(&l->cond, &l->mutex, &until);
    }
    pthread_mutex_unlock(&l->mutex);
    if (rc == ETIMEDOUT) {
        snprintf(err, errlen, "zookeeper at %s: no session within 5 s", addr.text);
        goto err_close;
    }
    snprintf(l->dir, sizeof(l->dir), RDLM_BENCH_ZK_ROOT "/%s", job);
    if (rdlm_bench_zk_mkdir(l, RDLM_BENCH_ZK_ROOT, ZOO_PERSISTENT, err, errlen) != 0 ||
        rdlm_bench_zk_mkdir(l, l->dir, ZOO_CONTAINER, err, errlen) != 0) {
        goto err_close;
    }
    *lock_p = l;
    return 0;

err_close:
    zookeeper_close(l->zh);
err_free:
    pthread_cond_destroy(&l->cond);
    pthread_mutex_destroy(&l->mutex);
    free(l);
    return -1;
}

static int rdlm_bench_zk_failed(const char *what, const char *path, int rc)
{
    fprintf(stderr, "rdlm-bench: zookeeper %s %s: %s\n", what, path, zerror(rc));
    return rc == ZOPERATIONTIMEOUT ? RDLM_BENCH_SERVICE_ETIME : RDLM_BENCH_SERVICE_ECONN;
}

/* Whether our node is the lowest child; else the predecessor's name (the largest
 * child below ours) into pred. 1 held, 0 not, -1 our node is missing. */
static int rdlm_bench_zk_lowest(const struct String_vector *kids, const char *mine,
                                char *pred, size_t predlen)
{
    const char *best = NULL;
    int found = 0;
    int32_t k;

    for (k = 0; k < kids->count; k++) {
        const char *c = kids->data[k];
        int cmp = strcmp(c, mine); /* same prefix, 10-digit sequence: strcmp orders */

        if (cmp == 0) {
            found = 1;
        } else if (cmp < 0 && (best == NULL || strcmp(c, best) > 0)) {
            best = c;
        }
    }
    if (!found) {
        return -1;
    }
    if (best == NULL) {
        return 1;
    }
    snprintf(pred, predlen, "%s", best);
    return 0;
}

/* token_p: not filled (the service's own token stays inside the adapter). */
static int rdlm_bench_zk_acquire(void *lock, uint64_t *token_p)
{
    rdlm_bench_zk_lock_t *l = lock;
    struct String_vector kids;
    char path[2 * RDLM_BENCH_ZK_PATH_MAX + 8]; /* dir/child */
    char pred[RDLM_BENCH_ZK_PATH_MAX];
    struct timespec until;
    const char *mine;
    struct Stat st;
    int held;
    int rc;

    (void)token_p;
    snprintf(path, sizeof(path), "%s/lock-", l->dir);
    rc = zoo_create(l->zh, path, "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL_SEQUENTIAL,
                    l->node, (int)sizeof(l->node));
    if (rc == ZNONODE) {
        char err[200];

        if (rdlm_bench_zk_mkdir(l, RDLM_BENCH_ZK_ROOT, ZOO_PERSISTENT, err, sizeof(err)) !=
                0 ||
            rdlm_bench_zk_mkdir(l, l->dir, ZOO_CONTAINER, err, sizeof(err)) != 0) {
            fprintf(stderr, "rdlm-bench: %s\n", err);
            return RDLM_BENCH_SERVICE_ECONN;
        }
        rc = zoo_create(l->zh, path, "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL_SEQUENTIAL,
                        l->node, (int)sizeof(l->node));
    }
    if (rc != ZOK) {
        return rdlm_bench_zk_failed("create", path, rc);
    }
    mine = l->node + strlen(l->dir) + 1;
    until = rdlm_bench_deadline_ts(CLOCK_REALTIME, RDLM_BENCH_SERVICE_WAIT_MS);
    for (;;) {
        rc = zoo_get_children(l->zh, l->dir, 0, &kids);
        if (rc != ZOK) {
            return rdlm_bench_zk_failed("get_children", l->dir, rc);
        }
        held = rdlm_bench_zk_lowest(&kids, mine, pred, sizeof(pred));
        deallocate_String_vector(&kids);
        if (held == 1) {
            return 0;
        }
        if (held < 0) {
            fprintf(stderr, "rdlm-bench: zookeeper: our node %s vanished\n", l->node);
            return RDLM_BENCH_SERVICE_ELOST;
        }
        snprintf(path, sizeof(path), "%s/%s", l->dir, pred);
        pthread_mutex_lock(&l->mutex);
        l->fired = 0;
        pthread_mutex_unlock(&l->mutex);
        rc = zoo_wexists(l->zh, path, rdlm_bench_zk_pred_watcher, l, &st);
        if (rc == ZNONODE) {
            continue; /* gone already: look again */
        }
        if (rc != ZOK) {
            return rdlm_bench_zk_failed("exists", path, rc);
        }
        rc = 0;
        pthread_mutex_lock(&l->mutex);
        while (!l->fired && rc != ETIMEDOUT) {
            rc = pthread_cond_timedwait(&l->cond, &l->mutex, &until);
        }
        pthread_mutex_unlock(&l->mutex);
        if (rc == ETIMEDOUT) {
            (void)zoo_delete(l->zh, l->node, -1);
            return RDLM_BENCH_SERVICE_ETIME;
        }
    }
}

static int rdlm_bench_zk_release(void *lock)
{
    rdlm_bench_zk_lock_t *l = lock;
    int rc = zoo_delete(l->zh, l->node, -1);

    if (rc == ZNONODE) {
        return RDLM_BENCH_SERVICE_ELOST;
    }
    return rc == ZOK ? 0 : rdlm_bench_zk_failed("delete", l->node, rc);
}

static void rdlm_bench_zk_detach(void *lock)
{
    rdlm_bench_zk_lock_t *l = lock;

    zookeeper_close(l->zh); /* the dir is a container: the server removes it */
    pthread_cond_destroy(&l->cond);
    pthread_mutex_destroy(&l->mutex);
    free(l);
}

const rdlm_bench_lock_ops_t rdlm_bench_lock_zk = {
    .name = "zookeeper",
    .description = "ZooKeeper lock recipe: ephemeral sequential node, watch predecessor "
                   "(C client, loopback)",
    .shared_size = 0,
    .shared_init = rdlm_bench_lock_nop_init,
    .shared_fini = rdlm_bench_lock_nop_fini,
    .attach = rdlm_bench_zk_attach,
    .acquire = rdlm_bench_zk_acquire,
    .release = rdlm_bench_zk_release,
    .try_acquire = rdlm_bench_lock_no_try,
    .error_name = rdlm_bench_service_error_name,
    .stats = rdlm_bench_lock_no_stats,
    .detach = rdlm_bench_zk_detach,
};
