/*
 * The lease authority a job runs inside its ranks (RDLM_JOB_AUTHORITY): the node leaders
 * (local rank 0) of the first 3 nodes each run a replica on a thread of their own
 * (core/lease/authority/include/job_authority.h); with 1 or 2 nodes the first node's leader
 * runs the only one (a 2-replica Raft group tolerates no failure either, and needs both for
 * every entry). Every process of the context then holds a session there, exactly as with
 * RDLM_AUTHORITY (ctx_lease.c).
 *
 * Start (collective over the context's bootstrap, after rdlm_global_create):
 *   1. replica ranks reserve their ports                 allgather {status, addresses}
 *   2. replica ranks start with the full list            allgather {status}
 *   3. every rank opens its session; rank 0 commits      allgather {status, epoch}
 *      max(previous + 1, its clock epoch)
 *   4. every rank installs rank 0's epoch as its token epoch
 * Each allgather carries every rank's status, so a failure anywhere fails the create
 * on every rank at the same step, and every rank then cleans up alike (no rank is
 * left waiting in a collective the others skipped).
 *
 * Stop (rdlm_ctx_destroy, after the session is closed): a barrier, so that no replica
 * stops while a process still closes its session, then the replicas stop (a leader
 * hands over first) and remove their data directories.
 *
 * Data directories: ${TMPDIR:-/tmp}/rdlm-<uid>-<job>-<pid>-<n>, n counting the
 * replicas this process started: unique among the live processes of a host, whatever
 * the contexts (two over disjoint communicators of one job have equal names and rank
 * numbers). A killed process (or an aborted job) leaves its directory; the next
 * replica started on the host removes those whose process is gone
 * (rdlm_job_authority_sweep).
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "job_authority.h"
#include "log.h"

#define RDLM_CTX_AUTHORITY_REPLICAS 3u
#define RDLM_CTX_AUTHORITY_ELECTION_MS 1000u
#define RDLM_CTX_AUTHORITY_HEARTBEAT_MS 100u

/* Replicas this process started (names their data directories). */
static rdlm_atomic_u32_t rdlm_ctx_authority_started;

/* What the ranks exchange at each step; every record starts with the rank's status. */
typedef struct rdlm_ctx_authority_addrs {
    int32_t status;
    rdlm_job_authority_addrs_t addrs;
} rdlm_ctx_authority_addrs_t;

typedef struct rdlm_ctx_authority_epoch {
    int32_t status;
    uint32_t epoch;
} rdlm_ctx_authority_epoch_t;

/* Allgather every rank's record (len bytes starting with its int32_t status) into a
 * malloc'd *all_p (freed by the caller, also on error). Returns the first failure in
 * rank order, or the allgather's own. */
static rdlm_status_t rdlm_ctx_authority_gather(const rdlm_tl_bootstrap_t *bs,
                                               const void *mine, size_t len,
                                               const char *step, void **all_p)
{
    char *all = calloc(bs->size, len);
    rdlm_status_t s =
        all != NULL ? bs->allgather(bs->arg, mine, all, len, NULL) : RDLM_ERR_NO_MEMORY;

    for (uint32_t r = 0; s == RDLM_OK && r < bs->size; r++) {
        int32_t st;

        memcpy(&st, all + (size_t)r * len, sizeof(st));
        s = (rdlm_status_t)st;
        if (s != RDLM_OK && r != bs->rank) {
            rdlm_info("in-job authority: %s failed on rank %u: %s", step, r,
                      rdlm_status_str(s));
        }
    }
    *all_p = all;
    return s;
}

/* A new replica's data directory (see the top); those that replicas of ended
 * processes left beside it are removed first. */
static rdlm_status_t rdlm_ctx_authority_dir(const rdlm_global_t *d, char *dir, size_t len)
{
    const char *tmp = getenv("TMPDIR");
    char prefix[32];
    int n;

    if (tmp == NULL || tmp[0] == '\0') {
        tmp = "/tmp";
    }
    snprintf(prefix, sizeof(prefix), "rdlm-%u-", (unsigned)geteuid());
    rdlm_job_authority_sweep(tmp, prefix);
    n = snprintf(dir, len, "%s/%s%s-%d-%u", tmp, prefix, d->job, (int)getpid(),
                 rdlm_fetch_add(&rdlm_ctx_authority_started, 1, RDLM_RELAXED));
    if (n < 0 || (size_t)n >= len) {
        rdlm_error("in-job authority: TMPDIR=%s is too long for a data directory", tmp);
        return RDLM_ERR_INVALID_ARG;
    }
    return RDLM_OK;
}

/* Steps 1 and 2: the replicas of the first n nodes start; every rank learns their
 * client addresses ("a:p,b:p,c:p" into authority). */
static rdlm_status_t rdlm_ctx_authority_replicas(rdlm_ctx_h ctx, uint32_t n,
                                                 char authority[RDLM_ADDRS_MAX])
{
    const rdlm_global_t *d = ctx->dist;
    const rdlm_tl_bootstrap_t *bs = ctx->authority.bs;
    rdlm_ctx_authority_addrs_t mine = {.status = RDLM_OK}, *all;
    rdlm_job_authority_addrs_t replicas[RDLM_CTX_AUTHORITY_REPLICAS];
    int32_t started = RDLM_OK;
    char dir[PATH_MAX];
    void *gathered = NULL;
    rdlm_status_t s;
    size_t at = 0;

    if (d->nodes.local_rank == 0 && d->nodes.node < n) {
        mine.status = rdlm_job_authority_create(ctx->config.job_authority_net,
                                                &ctx->authority.replica, &mine.addrs);
    }
    s = rdlm_ctx_authority_gather(bs, &mine, sizeof(mine), "reserving replica ports",
                                  &gathered);
    all = gathered;
    for (uint32_t i = 0; s == RDLM_OK && i < n; i++) {
        replicas[i] = all[d->nodes.leader_of[i]].addrs;
        at += (size_t)snprintf(authority + at, RDLM_ADDRS_MAX - at, "%s%s", i ? "," : "",
                               replicas[i].client);
    }
    free(all);
    if (s != RDLM_OK) {
        return s;
    }
    if (ctx->authority.replica != NULL) {
        rdlm_job_authority_params_t ep = {
            .replicas = replicas,
            .n_replicas = n,
            .self = d->nodes.node,
            .data_dir = dir,
            .election_timeout_ms = RDLM_CTX_AUTHORITY_ELECTION_MS,
            .heartbeat_ms = RDLM_CTX_AUTHORITY_HEARTBEAT_MS,
            .max_clients = bs->size,
        };

        started = rdlm_ctx_authority_dir(d, dir, sizeof(dir));
        if (started == RDLM_OK) {
            started = rdlm_job_authority_start(ctx->authority.replica, &ep);
        }
    }
    s = rdlm_ctx_authority_gather(bs, &started, sizeof(started), "starting replicas",
                                  &gathered);
    free(gathered);
    return s;
}

/* Step 3 and 4: sessions, and rank 0's epoch for everyone. */
static rdlm_status_t rdlm_ctx_authority_join(rdlm_ctx_h ctx, const char *job,
                                             const char *authority)
{
    rdlm_global_t *d = ctx->dist;
    rdlm_ctx_authority_epoch_t mine = {.status = RDLM_OK}, *all;
    void *gathered = NULL;
    rdlm_status_t s;

    mine.status = rdlm_ctx_lease_open(ctx, job, authority);
    if (mine.status == RDLM_OK && d->rank == 0) {
        mine.status = rdlm_ctx_lease_epoch(ctx, d->epoch, &mine.epoch);
    }
    s = rdlm_ctx_authority_gather(ctx->authority.bs, &mine, sizeof(mine),
                                  "opening sessions", &gathered);
    all = gathered;
    if (s == RDLM_OK) {
        rdlm_global_set_epoch(d, all[0].epoch);
        if (d->rank == 0) {
            rdlm_info("in-job authority at %s: token epoch %u", authority, all[0].epoch);
        }
    }
    free(all);
    return s;
}

rdlm_status_t rdlm_ctx_authority_start(rdlm_ctx_h ctx, const char *job)
{
    uint32_t n = ctx->dist->nodes.nodes >= RDLM_CTX_AUTHORITY_REPLICAS
                     ? RDLM_CTX_AUTHORITY_REPLICAS
                     : 1;
    char authority[RDLM_ADDRS_MAX];
    rdlm_status_t s;

    ctx->authority.bs = ctx->dist->bootstrap;
    s = rdlm_ctx_authority_replicas(ctx, n, authority);
    if (s == RDLM_OK) {
        s = rdlm_ctx_authority_join(ctx, job, authority);
    }
    if (s != RDLM_OK) {
        rdlm_ctx_lease_close(ctx);
        rdlm_ctx_authority_stop(ctx);
    }
    return s;
}

void rdlm_ctx_authority_stop(rdlm_ctx_h ctx)
{
    const rdlm_tl_bootstrap_t *bs = ctx->authority.bs;
    rdlm_status_t s;

    if (bs == NULL) {
        return;
    }
    s = bs->barrier(bs->arg, NULL);
    if (s != RDLM_OK) {
        rdlm_warn("in-job authority: barrier before stopping the replicas: %s",
                  rdlm_status_str(s));
    }
    rdlm_job_authority_stop(ctx->authority.replica);
    ctx->authority.replica = NULL;
    ctx->authority.bs = NULL;
}
