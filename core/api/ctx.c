/* Contexts: rdlm_ctx_create / destroy / stats / segment info, and the version. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "launch.h"
#include "leftovers.h"
#include "log.h"
#include "table.h"

#define RDLM_CTX_STATS_TEXT 640 /* bytes of a statistics line's counters */
#define RDLM_CTX_RENDEZVOUS_TIMEOUT_MS 30000u /* PMIx's part, as the TCP bootstrap's */

const char *rdlm_get_version(void)
{
    return RDLM_VERSION_STRING;
}

/* The job name: params, then RDLM_JOB, then the launcher's (launch.h), then
 * "default". */
static rdlm_status_t rdlm_ctx_job(const rdlm_ctx_params_t *params, const rdlm_config_t *cfg,
                                  char *job)
{
    if (params != NULL && (params->field_mask & RDLM_CTX_FIELD_JOB)) {
        if (params->job == NULL || !rdlm_config_job_valid(params->job)) {
            rdlm_error("rdlm_ctx_create: job name must be 1-%d of [A-Za-z0-9._-]",
                       RDLM_JOB_MAX);
            return RDLM_ERR_INVALID_ARG;
        }
        strcpy(job, params->job); /* validated: <= RDLM_JOB_MAX */
    } else {
        (void)rdlm_config_job_effective(cfg, job);
    }
    return RDLM_OK;
}

/* Allocate a context and read the configuration and job name into it. On
 * RDLM_ERR_BAD_CONFIG, *bad_cfg (if not NULL) gets the configuration with the defaults
 * in place of the bad values (rdlm_config_parse). */
static rdlm_status_t rdlm_ctx_alloc(const rdlm_ctx_params_t *params, char *job,
                                    rdlm_ctx_h *ctx_p, rdlm_config_t *bad_cfg)
{
    rdlm_status_t status;
    rdlm_ctx_h ctx = calloc(1, sizeof(*ctx));

    if (ctx == NULL) {
        rdlm_error("rdlm_ctx_create: out of memory");
        return RDLM_ERR_NO_MEMORY;
    }
    ctx->ops = &rdlm_obj_local_ops; /* until a distributed or service part opens */
    status = rdlm_config_load(&ctx->config);
    if (status == RDLM_OK && ctx->config.job_authority &&
        ctx->config.authority[0] != '\0') {
        rdlm_error("rdlm_ctx_create: RDLM_JOB_AUTHORITY=1 runs the job's own lease "
                   "authority; RDLM_AUTHORITY names another one: set one of them");
        status = RDLM_ERR_BAD_CONFIG;
    }
    if (status == RDLM_OK) {
        status = rdlm_ctx_job(params, &ctx->config, job);
    }
    if (status == RDLM_OK) {
        snprintf(ctx->job, sizeof(ctx->job), "%s", job);
    }
    if (status == RDLM_OK && params != NULL &&
        (params->field_mask & RDLM_CTX_FIELD_CAPACITY)) {
        const rdlm_config_entry_t *range = rdlm_config_entry(RDLM_CONFIG_INDEX_capacity);

        if (params->capacity < range->min || params->capacity > range->max) {
            rdlm_error("rdlm_ctx_create: capacity %u outside %s (as %s)", params->capacity,
                       range->allowed, range->var);
            status = RDLM_ERR_INVALID_ARG;
        } else {
            ctx->config.capacity = params->capacity;
        }
    }
    if (status != RDLM_OK) {
        if (status == RDLM_ERR_BAD_CONFIG && bad_cfg != NULL) {
            *bad_cfg = ctx->config;
        }
        free(ctx);
        return status;
    }
    ctx->local.policy.spin = ctx->config.spin;
    ctx->local.policy.yield = ctx->config.yield;
    ctx->local.policy.park_slice_ns = (uint64_t)ctx->config.park_slice_ms * 1000000ull;
    ctx->local.bypass_ns = (uint64_t)ctx->config.lock_bypass_us * 1000ull;
    ctx->local.cpus = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN);
    ctx->local.oversubscribed = ctx->config.oversubscribed;
    pthread_mutex_init(&ctx->objs_lock, NULL);
    rdlm_ctx_live_add(ctx);
    *ctx_p = ctx;
    return RDLM_OK;
}

static void rdlm_ctx_free(rdlm_ctx_h ctx)
{
    rdlm_ctx_live_remove(ctx);
    pthread_mutex_destroy(&ctx->objs_lock);
    free(ctx);
}

/* Attach the node segment of job. */
/* The node segment of job; a distributed context's carries the job's token epoch
 * (its entries start from it), a node-only one takes a new host epoch. */
static rdlm_status_t rdlm_ctx_attach(rdlm_ctx_h ctx, const char *job)
{
    rdlm_segment_params_t seg_params = {
        .job = job,
        .dir = ctx->config.shm_dir,
        .capacity = ctx->config.capacity,
        .max_procs = ctx->config.max_procs,
        .epoch = ctx->dist != NULL ? ctx->dist->epoch : 0,
    };

    return rdlm_segment_attach(&seg_params, &ctx->local.seg);
}

/* Rank and size of the standalone rendezvous: params, else RDLM_RANK/RDLM_SIZE if
 * RDLM_SIZE is set, else the launcher's (launch.h); where from, at debug. */
static void rdlm_ctx_standalone_peers(const rdlm_ctx_params_t *params,
                                      const rdlm_config_t *cfg,
                                      rdlm_tl_boot_tcp_params_t *bp)
{
    const char *source = "RDLM_RANK/RDLM_SIZE";

    if (params != NULL && (params->field_mask & RDLM_CTX_FIELD_PEERS)) {
        bp->rank = params->rank;
        bp->size = params->size;
        source = "params";
    } else if (cfg->size != 0 || !rdlm_launch_peers((const char *const *)environ, &bp->rank,
                                                    &bp->size, &source)) {
        bp->rank = cfg->rank;
        bp->size = cfg->size;
    }
    rdlm_debug("rdlm_ctx_create: rank %u of %u (from %s)", bp->rank, bp->size, source);
}

/* Rank 0's host and port from addr: "host:port", ":port" with the host from srun, or
 * "launcher" (launch.h; rank 0 then may get a listening socket in bp->listen_fd).
 * RDLM_ERR_INVALID_ARG (not logged) if addr is none of them. */
static rdlm_status_t rdlm_ctx_rendezvous(const char *addr, const char *job,
                                         rdlm_tl_boot_tcp_params_t *bp, char *host)
{
    const char *const *envp = (const char *const *)environ;
    rdlm_launch_rendezvous_t rv;
    rdlm_status_t status;
    uint32_t port;

    if (addr != NULL && strcmp(addr, RDLM_LAUNCH_RENDEZVOUS) == 0) {
        status = rdlm_launch_rendezvous(envp, job, bp->rank, bp->size,
                                        RDLM_CTX_RENDEZVOUS_TIMEOUT_MS, &rv);
        if (status == RDLM_OK) {
            strcpy(host, rv.host);
            bp->port = rv.port;
            bp->listen_fd = rv.listen_fd;
            rdlm_debug("rdlm_ctx_create: rendezvous %s:%u (from %s)", host,
                       (unsigned)bp->port, rv.source);
        }
        return status;
    }
    if (addr != NULL && addr[0] == ':' &&
        rdlm_config_uint_parse(addr + 1, 1, 65535, &port)) {
        bp->port = (uint16_t)port;
        return rdlm_launch_rendezvous_host(envp, bp->rank, host);
    }
    return addr != NULL && rdlm_config_hostport_parse(addr, host, &bp->port)
               ? RDLM_OK
               : RDLM_ERR_INVALID_ARG;
}

/* Standalone rendezvous: rank, size and address from params, RDLM_* or the launcher. */
static rdlm_status_t rdlm_ctx_create_standalone(const rdlm_ctx_params_t *params,
                                                const rdlm_config_t *cfg, const char *job,
                                                unsigned flags, rdlm_ctx_h *ctx_p)
{
    int given = params != NULL && (params->field_mask & RDLM_CTX_FIELD_PEERS);
    const char *addr = given ? params->rendezvous : cfg->rendezvous;
    rdlm_tl_boot_tcp_params_t bp = {.listen_fd = -1};
    char host[RDLM_HOST_MAX + 1];
    rdlm_tl_boot_tcp_t *boot;
    rdlm_status_t status;

    rdlm_ctx_standalone_peers(params, cfg, &bp);
    status = bp.size == 0 || bp.rank >= bp.size ? RDLM_ERR_INVALID_ARG
                                                : rdlm_ctx_rendezvous(addr, job, &bp, host);
    if (status == RDLM_ERR_INVALID_ARG) {
        rdlm_error("rdlm_ctx_create: peers need rank < size (RDLM_RANK/RDLM_SIZE, or "
                   "OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/SIZE, SLURM_PROCID/SLURM_NTASKS, "
                   "PMIx) and a rendezvous host:port, :port or launcher (rank %u size %u "
                   "rendezvous \"%s\")",
                   bp.rank, bp.size, addr != NULL ? addr : "(null)");
    }
    if (status != RDLM_OK) {
        return status;
    }
    rdlm_log_set_rank((int)bp.rank); /* this process's lines say which rank wrote them */
    bp.host = host;
    bp.what = given ? "rdlm_ctx_create: rendezvous" : "RDLM_RENDEZVOUS";
    status = rdlm_tl_boot_tcp_create(&bp, &boot);
    if (bp.listen_fd >= 0) {
        close(bp.listen_fd); /* the bootstrap accepted every peer, or gave up */
    }
    if (status != RDLM_OK) {
        return status;
    }
    return rdlm_ctx_create_dist(params, rdlm_tl_boot_tcp_get(boot), NULL, flags,
                                (rdlm_ctx_fini_func_t)rdlm_tl_boot_tcp_destroy, boot,
                                ctx_p);
}

rdlm_status_t rdlm_ctx_create(const rdlm_ctx_params_t *params, rdlm_ctx_h *ctx_p)
{
    const int peers = params != NULL && (params->field_mask & RDLM_CTX_FIELD_PEERS);
    char job[RDLM_JOB_MAX + 1];
    rdlm_config_t cfg = {0};
    rdlm_status_t status;
    rdlm_ctx_h ctx;

    if (ctx_p == NULL) {
        rdlm_error("rdlm_ctx_create: NULL ctx_p");
        return RDLM_ERR_INVALID_ARG;
    }
    status = rdlm_ctx_alloc(params, job, &ctx, &cfg);
    if (status == RDLM_ERR_BAD_CONFIG && (peers || cfg.rendezvous[0] != '\0') &&
        rdlm_ctx_job(params, &cfg, job) == RDLM_OK) {
        /* still meet the others: the create's vote fails them all at once */
        (void)rdlm_ctx_create_standalone(params, &cfg, job, RDLM_CTX_DIST_BAD_CONFIG,
                                         ctx_p);
        return RDLM_ERR_BAD_CONFIG;
    }
    if (status != RDLM_OK) {
        return status;
    }
    if (peers || ctx->config.rendezvous[0] != '\0') {
        cfg = ctx->config;
        rdlm_ctx_free(ctx);
        return rdlm_ctx_create_standalone(params, &cfg, job, 0, ctx_p);
    }
    if (ctx->config.job_authority) {
        rdlm_warn("rdlm_ctx_create: RDLM_JOB_AUTHORITY=1 needs a distributed context "
                  "(rdlm_mpi_ctx_create, or peers): this node-only one holds no lease");
    }
    status = rdlm_ctx_lease_open(ctx, job, ctx->config.authority);
    if (status == RDLM_OK) {
        status = rdlm_ctx_attach(ctx, job);
        if (status == RDLM_OK) {
            status = rdlm_ctx_svc_open(ctx); /* the service's lock homes, if any */
            if (status != RDLM_OK) {
                rdlm_segment_detach(&ctx->local.seg);
            }
        }
        if (status != RDLM_OK) {
            rdlm_ctx_lease_close(ctx);
        }
    }
    if (status != RDLM_OK) {
        rdlm_ctx_free(ctx);
        return status;
    }
    *ctx_p = ctx;
    return RDLM_OK;
}

/* Collective, the first of a distributed create: every process's status so far (its
 * configuration, its lease). A process that failed alone would leave the others
 * waiting in the next collective until the bootstrap's timeout (30 s); so one that
 * failed still takes part, and then every process fails with the lowest failing
 * rank's status. */
static rdlm_status_t rdlm_ctx_vote(const rdlm_tl_bootstrap_t *bootstrap, rdlm_status_t mine)
{
    int32_t me = (int32_t)mine, *all = calloc(bootstrap->size, sizeof(*all));
    rdlm_status_t s;

    if (all == NULL) {
        rdlm_error("rdlm_ctx_create: out of memory for %u statuses", bootstrap->size);
        return RDLM_ERR_NO_MEMORY; /* the others' collective times out (bounded) */
    }
    s = bootstrap->allgather(bootstrap->arg, &me, all, sizeof(me), NULL);
    for (uint32_t r = 0; s == RDLM_OK && mine == RDLM_OK && r < bootstrap->size; r++) {
        if (all[r] != RDLM_OK) {
            s = (rdlm_status_t)all[r];
            rdlm_error("rdlm_ctx_create: rank %u could not create its part of the context "
                       "(%s; its log says why): no process creates it",
                       r, rdlm_status_name(s));
        }
    }
    free(all);
    return mine != RDLM_OK ? mine : s;
}

rdlm_status_t rdlm_ctx_create_dist(const rdlm_ctx_params_t *params,
                                   const rdlm_tl_bootstrap_t *bootstrap, const char *hostkey,
                                   unsigned flags, rdlm_ctx_fini_func_t fini, void *fini_arg,
                                   rdlm_ctx_h *ctx_p)
{
    rdlm_global_params_t dp;
    uint32_t epoch = 0;
    char job[RDLM_JOB_MAX + 1], node_job[RDLM_JOB_MAX + 24];
    rdlm_status_t status;
    rdlm_ctx_h ctx = NULL;

    status = flags & RDLM_CTX_DIST_BAD_CONFIG ? RDLM_ERR_BAD_CONFIG
                                              : rdlm_ctx_alloc(params, job, &ctx, NULL);
    if (status == RDLM_OK && (flags & RDLM_CTX_DIST_NO_LEASE)) {
        ctx->config.authority[0] = '\0';
        ctx->config.job_authority = 0;
    }
    if (status == RDLM_OK) {
        status = rdlm_ctx_lease_open(ctx, job, ctx->config.authority);
        if (status == RDLM_OK && bootstrap->rank == 0) {
            /* rank 0's is the job's; the authority alone decides it (no floor) */
            status = rdlm_ctx_lease_epoch(ctx, 0, &epoch);
        }
    }
    status = rdlm_ctx_vote(bootstrap, status);
    if (status == RDLM_OK) {
        memset(&dp, 0, sizeof(dp));
        dp.epoch = epoch;
        dp.bootstrap = bootstrap;
        dp.transport = ctx->config.transport;
        rdlm_tl_params_from_config(&ctx->config, &dp.tl);
        dp.tl.progress_thread = ctx->config.progress == RDLM_PROGRESS_THREAD ||
                                (ctx->config.progress == RDLM_PROGRESS_AUTO &&
                                 !(flags & RDLM_CTX_DIST_BARRIER_ONLY));
        dp.barrier_only = (flags & RDLM_CTX_DIST_BARRIER_ONLY) != 0;
        dp.virtual_nodes = ctx->config.virtual_nodes;
        dp.cohort_bound = ctx->config.cohort_bound;
        dp.lock_am = ctx->config.lock_am;
        dp.barrier_links = ctx->config.barrier_links;
        dp.home_slots = ctx->config.capacity;
        dp.job = job;
        dp.hostkey = hostkey;
        dp.holder_words = ctx->config.authority[0] != '\0' || ctx->config.job_authority;
        status = rdlm_global_create(&dp, &ctx->dist);
    }
    if (status == RDLM_OK) {
        ctx->ops = &rdlm_obj_dist_ops;
        /* One segment per (virtual) node and context, named after rank 0's job and its
         * random id of the context. */
        rdlm_leftovers_node_job(node_job, sizeof(node_job), ctx->dist->job,
                                ctx->dist->ctx_id, ctx->dist->nodes.node);
        status = rdlm_ctx_attach(ctx, node_job);
        if (status == RDLM_OK) {
            status = rdlm_global_attach_node(ctx->dist, &ctx->local);
            if (status == RDLM_OK && ctx->config.job_authority) {
                status = rdlm_ctx_authority_start(ctx, job); /* the lease, the epoch */
            }
            if (status == RDLM_OK && !(flags & RDLM_CTX_DIST_NO_LEASE)) {
                status = rdlm_ctx_recovery_start(ctx);
                if (status != RDLM_OK) {
                    rdlm_ctx_lease_close(ctx);
                    rdlm_ctx_authority_stop(ctx);
                }
            }
            if (status != RDLM_OK) {
                /* The progress thread reads the segment (rdlm_global_rw_sweep) until
                 * the quiesce: that first, the detach after. */
                rdlm_global_quiesce(ctx->dist);
                rdlm_segment_detach(&ctx->local.seg);
            }
        }
        if (status != RDLM_OK) {
            rdlm_global_quiesce(ctx->dist);
            rdlm_global_destroy(ctx->dist);
        }
    }
    if (status != RDLM_OK) {
        if (ctx != NULL) {
            rdlm_ctx_lease_close(ctx);
            rdlm_ctx_free(ctx);
        }
        if (fini != NULL) {
            fini(fini_arg);
        }
        return status;
    }
    ctx->fini = fini;
    ctx->fini_arg = fini_arg;
    *ctx_p = ctx;
    return RDLM_OK;
}

/* The counters of s as the text of a statistics line (names and order are parsed by
 * scripts: keep them). */
static void rdlm_ctx_stats_text(const rdlm_stats_t *s, char *buf, size_t len)
{
    snprintf(buf, len,
             "acquires %" PRIu64 " contended %" PRIu64 " parks %" PRIu64 " wakes %" PRIu64
             " timeouts %" PRIu64 " recoveries %" PRIu64 " skips %" PRIu64
             " global_acquires %" PRIu64 " local_handoffs %" PRIu64 " home_ops %" PRIu64
             " (posted %" PRIu64 ") peer_ops %" PRIu64 " combined %" PRIu64
             " barriers %" PRIu64 " barrier_msgs %" PRIu64 " authority_requests %" PRIu64
             " authority_renewals %" PRIu64 " reservations %" PRIu64,
             s->acquires, s->contended, s->parks, s->wakes, s->timeouts, s->recoveries,
             s->skips, s->global_acquires, s->local_handoffs, s->home_ops,
             s->home_ops_posted, s->peer_ops, s->combined, s->barriers, s->barrier_msgs,
             s->authority_requests, s->authority_renewals, s->reservations);
}

/* "rdlm[PID] stats (job J[, rank R]): COUNTERS" on stderr (a process may have contexts
 * of several jobs, or several of one job's ranks). */
static void rdlm_ctx_print_stats(rdlm_ctx_h ctx, const rdlm_stats_t *s)
{
    char text[RDLM_CTX_STATS_TEXT], rank[32] = "";

    if (ctx->dist != NULL) {
        snprintf(rank, sizeof(rank), ", rank %u", ctx->dist->rank);
    }
    rdlm_ctx_stats_text(s, text, sizeof(text));
    fprintf(stderr, "rdlm[%d] stats (job %s%s): %s\n", (int)getpid(), ctx->job, rank, text);
}

/* Every counter of rdlm_stats_t (all uint64_t) summed over n processes' copies. */
static rdlm_stats_t rdlm_ctx_stats_sum(const rdlm_stats_t *all, uint32_t n)
{
    enum { FIELDS = sizeof(rdlm_stats_t) / sizeof(uint64_t) };
    _Static_assert(sizeof(rdlm_stats_t) == FIELDS * sizeof(uint64_t),
                   "rdlm_stats_t holds only uint64_t counters");
    uint64_t sum[FIELDS] = {0};
    rdlm_stats_t total;

    for (uint32_t r = 0; r < n; r++) {
        uint64_t v[FIELDS];

        memcpy(v, &all[r], sizeof(v));
        for (unsigned i = 0; i < FIELDS; i++) {
            sum[i] += v[i];
        }
    }
    memcpy(&total, sum, sizeof(total));
    return total;
}

/* Collective, the first part of a distributed context's destroy (rdlm_global_leave):
 * gather every process's counters mine (taken when destroy began) whatever RDLM_STATS
 * says, so that processes with different settings still meet; rank 0 prints their
 * sum when its RDLM_STATS=1. No sum when a process is dead (it would miss one). */
static void rdlm_ctx_stats_total(rdlm_ctx_h ctx, const rdlm_stats_t *mine)
{
    uint32_t size = ctx->dist->bootstrap->size;
    rdlm_stats_t *all = calloc(size, sizeof(*all)), total;
    char text[RDLM_CTX_STATS_TEXT];

    if (all == NULL) {
        rdlm_error("rdlm_ctx_destroy: out of memory for the statistics of %u processes: "
                   "the others wait for them until the bootstrap's timeout",
                   size);
        (void)rdlm_global_leave(ctx->dist, NULL, NULL, 0);
        return;
    }
    if (rdlm_global_leave(ctx->dist, mine, all, sizeof(*mine)) == RDLM_OK &&
        ctx->config.stats && ctx->dist->rank == 0) {
        total = rdlm_ctx_stats_sum(all, size);
        rdlm_ctx_stats_text(&total, text, sizeof(text));
        fprintf(stderr, "rdlm stats total (job %s, %u ranks): %s\n", ctx->job, size, text);
    }
    free(all);
}

void rdlm_ctx_destroy(rdlm_ctx_h ctx)
{
    rdlm_stats_t stats;

    if (ctx == NULL || rdlm_ctx_check(ctx, __func__) != RDLM_OK) {
        return;
    }
    rdlm_ctx_stats(ctx, &stats);
    if (ctx->config.stats) {
        rdlm_ctx_print_stats(ctx, &stats);
    }
    if (ctx->dist != NULL) {
        rdlm_global_quiesce(ctx->dist); /* closes the on-node waits too, after its own */
    }
    rdlm_local_quiesce(&ctx->local);
    while (ctx->objs != NULL) {
        rdlm_obj_t *obj = ctx->objs;

        ctx->objs = obj->next;
        if (obj->magic == RDLM_OBJ_MAGIC_OPEN) {
            rdlm_obj_release_held(obj, 1);
            rdlm_table_close(&ctx->local.seg, obj->index);
        }
        rdlm_obj_retire(obj);
    }
    if (ctx->dist != NULL) {
        rdlm_ctx_stats_total(ctx, &stats); /* collective */
    }
    rdlm_global_destroy(ctx->dist); /* collective */
    rdlm_ctx_svc_close(ctx);
    rdlm_ctx_recovery_free(ctx);
    rdlm_segment_detach(&ctx->local.seg);
    rdlm_ctx_lease_close(ctx);
    rdlm_ctx_authority_stop(ctx); /* collective with the job's own authority */
    if (ctx->fini != NULL) {
        ctx->fini(ctx->fini_arg);
    }
    rdlm_ctx_free(ctx);
}

rdlm_status_t rdlm_ctx_stats(rdlm_ctx_h ctx, rdlm_stats_t *stats_p)
{
    const rdlm_local_stats_t *s;
    rdlm_status_t status = rdlm_ctx_check_out(ctx, stats_p, __func__);

    if (status != RDLM_OK) {
        return status;
    }
    s = &ctx->local.stats;
    stats_p->acquires = rdlm_load(&s->acquires, RDLM_RELAXED);
    stats_p->contended = rdlm_load(&s->contended, RDLM_RELAXED);
    stats_p->parks = rdlm_load(&s->wait.parks, RDLM_RELAXED);
    stats_p->wakes = rdlm_load(&s->wait.wakes, RDLM_RELAXED);
    stats_p->timeouts = rdlm_load(&s->timeouts, RDLM_RELAXED);
    stats_p->recoveries = rdlm_load(&s->recoveries, RDLM_RELAXED);
    stats_p->skips = rdlm_load(&s->skips, RDLM_RELAXED);
    stats_p->reservations = rdlm_load(&s->reservations, RDLM_RELAXED);
    stats_p->combined = 0;
    stats_p->barriers = 0;
    stats_p->barrier_msgs = 0;
    stats_p->global_acquires = 0;
    stats_p->local_handoffs = 0;
    stats_p->home_ops = rdlm_ctx_svc_home_ops(ctx);
    stats_p->peer_ops = 0;
    stats_p->home_ops_posted = 0;
    stats_p->authority_requests = 0;
    stats_p->authority_renewals = 0;
    if (ctx->session != NULL) {
        rdlm_session_stats_t ls;

        rdlm_session_stats(ctx->session, &ls);
        stats_p->authority_requests = ls.requests;
        stats_p->authority_renewals = ls.renewals;
    }
    if (ctx->dist != NULL) {
        const rdlm_global_stats_t *d = &ctx->dist->stats;

        stats_p->combined = rdlm_load(&d->combined, RDLM_RELAXED);
        stats_p->barriers = rdlm_load(&d->barriers, RDLM_RELAXED);
        stats_p->barrier_msgs = rdlm_load(&d->barrier_msgs, RDLM_RELAXED);
        stats_p->global_acquires = rdlm_load(&d->global_acquires, RDLM_RELAXED);
        stats_p->local_handoffs = rdlm_load(&d->local_handoffs, RDLM_RELAXED);
        stats_p->home_ops = rdlm_load(&d->home_ops, RDLM_RELAXED);
        stats_p->peer_ops = rdlm_load(&d->peer_ops, RDLM_RELAXED);
        stats_p->home_ops_posted = rdlm_load(&d->home_ops_posted, RDLM_RELAXED);
    }
    return RDLM_OK;
}

/* ctx is a distributed context (for the calls that only those have). */
static rdlm_status_t rdlm_ctx_check_dist(rdlm_ctx_h ctx, const char *func)
{
    rdlm_status_t status = rdlm_ctx_check(ctx, func);

    if (status != RDLM_OK) {
        return status;
    }
    if (ctx->dist == NULL) {
        rdlm_warn("%s: needs a distributed context (rdlm_mpi_ctx_create, or peers); "
                  "a node-only one has neither a collective barrier nor a transport", func);
        return RDLM_ERR_UNSUPPORTED;
    }
    return RDLM_OK;
}

rdlm_status_t rdlm_ctx_barrier_arrive(rdlm_ctx_h ctx)
{
    rdlm_status_t s = rdlm_ctx_check_dist(ctx, __func__);

    return s != RDLM_OK ? s : rdlm_global_barrier_arrive(ctx->dist, &ctx->local);
}

rdlm_status_t rdlm_ctx_barrier_wait(rdlm_ctx_h ctx)
{
    rdlm_status_t s = rdlm_ctx_check_dist(ctx, __func__);

    return s != RDLM_OK ? s : rdlm_global_barrier_wait(ctx->dist, &ctx->local);
}

rdlm_status_t rdlm_ctx_barrier(rdlm_ctx_h ctx)
{
    rdlm_status_t s = rdlm_ctx_check_dist(ctx, __func__);

    if (s == RDLM_OK) {
        s = rdlm_global_barrier_arrive(ctx->dist, &ctx->local);
    }
    return s != RDLM_OK ? s : rdlm_global_barrier_wait(ctx->dist, &ctx->local);
}

rdlm_status_t rdlm_ctx_set_barrier_idle(rdlm_ctx_h ctx, void (*idle)(void *arg), void *arg)
{
    rdlm_status_t s = rdlm_ctx_check_dist(ctx, __func__);

    if (s == RDLM_OK) {
        ctx->dist->barrier_idle_arg = arg;
        ctx->dist->barrier_idle = idle;
    }
    return s;
}

rdlm_status_t rdlm_ctx_transport_stats(rdlm_ctx_h ctx, rdlm_transport_stats_t *stats_p)
{
    rdlm_tl_stats_t t;
    rdlm_status_t s = rdlm_ctx_check_dist(ctx, __func__);

    if (s != RDLM_OK) {
        return s;
    }
    if (stats_p == NULL) {
        rdlm_warn("rdlm_ctx_transport_stats: NULL stats_p");
        return RDLM_ERR_INVALID_ARG;
    }
    rdlm_tl_stats_read(ctx->dist->tl, &t);
    *stats_p = (rdlm_transport_stats_t){.amo = t.amo,
                                        .puts = t.puts,
                                        .gets = t.gets,
                                        .am_sent = t.am_sent,
                                        .am_recv = t.am_recv,
                                        .bytes = t.bytes,
                                        .progress = t.progress};
    return RDLM_OK;
}

rdlm_status_t rdlm_ctx_dist_info(rdlm_ctx_h ctx, rdlm_ctx_dist_info_t *info_p)
{
    const rdlm_global_t *d;
    rdlm_status_t status = rdlm_ctx_check_out(ctx, info_p, __func__);

    if (status != RDLM_OK) {
        return status;
    }
    memset(info_p, 0, sizeof(*info_p));
    d = ctx->dist;
    if (d == NULL) {
        return RDLM_OK;
    }
    info_p->distributed = 1;
    info_p->rank = d->rank;
    info_p->size = d->nodes.size;
    info_p->node = d->nodes.node;
    info_p->nodes = d->nodes.nodes;
    info_p->local_rank = d->nodes.local_rank;
    info_p->local_size = d->nodes.local_size;
    info_p->cohort_bound = rdlm_global_cohort_bound(d);
    info_p->token_epoch = d->epoch;
    info_p->transport = d->caps.backend;
    info_p->progress_thread = d->caps.progress_thread;
    info_p->lock_protocol = d->am_lock ? "am" : "atomic";
    return RDLM_OK;
}

rdlm_status_t rdlm_ctx_segment_info(rdlm_ctx_h ctx, rdlm_segment_info_t *info_p)
{
    const rdlm_segment_t *seg;
    rdlm_status_t status = rdlm_ctx_check_out(ctx, info_p, __func__);

    if (status != RDLM_OK) {
        return status;
    }
    seg = &ctx->local.seg;
    info_p->capacity = seg->hdr->capacity;
    info_p->used = rdlm_load(&seg->hdr->used, RDLM_RELAXED);
    info_p->max_procs = seg->hdr->max_procs;
    info_p->live_procs = rdlm_segment_live_procs(seg);
    info_p->bytes = seg->hdr->bytes;
    info_p->epoch = seg->hdr->epoch;
    info_p->created = seg->created;
    info_p->replaced_stale = seg->replaced_stale;
    return RDLM_OK;
}
