/* Contexts: rdlm_ctx_create / destroy / stats / segment info, and the version. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "log.h"

const char *rdlm_get_version(void)
{
    return RDLM_VERSION_STRING;
}

/* The job name: params, then RDLM_JOB, then the launcher's job id, then "default". */
static rdlm_status_t rdlm_ctx_job(const rdlm_ctx_params_t *params, const rdlm_config_t *cfg,
                                  char *job)
{
    static const char *const launcher_vars[] = {"SLURM_JOB_ID", "OMPI_MCA_ess_base_jobid",
                                                "PMIX_NAMESPACE"};
    const char *name = NULL;

    if (params != NULL && (params->field_mask & RDLM_CTX_FIELD_JOB)) {
        if (params->job == NULL || !rdlm_config_job_valid(params->job)) {
            rdlm_error("rdlm_ctx_create: job name must be 1-%d of [A-Za-z0-9._-]",
                       RDLM_JOB_MAX);
            return RDLM_ERR_INVALID_ARG;
        }
        name = params->job;
    } else if (cfg->job[0] != '\0') {
        name = cfg->job;
    } else {
        for (size_t i = 0; i < sizeof(launcher_vars) / sizeof(launcher_vars[0]); i++) {
            const char *v = getenv(launcher_vars[i]);
            if (v != NULL && rdlm_config_job_valid(v)) {
                name = v;
                break;
            }
        }
    }
    strcpy(job, name != NULL ? name : "default"); /* validated: <= RDLM_JOB_MAX */
    return RDLM_OK;
}

rdlm_status_t rdlm_ctx_create(const rdlm_ctx_params_t *params, rdlm_ctx_h *ctx_p)
{
    rdlm_segment_params_t seg_params;
    char job[RDLM_JOB_MAX + 1];
    rdlm_status_t status;
    rdlm_ctx_h ctx;

    if (ctx_p == NULL) {
        rdlm_error("rdlm_ctx_create: NULL ctx_p");
        return RDLM_ERR_INVALID_ARG;
    }
    ctx = calloc(1, sizeof(*ctx));
    if (ctx == NULL) {
        rdlm_error("rdlm_ctx_create: out of memory");
        return RDLM_ERR_NO_MEMORY;
    }
    status = rdlm_config_load(&ctx->config);
    if (status != RDLM_OK) {
        goto err_free;
    }
    status = rdlm_ctx_job(params, &ctx->config, job);
    if (status != RDLM_OK) {
        goto err_free;
    }
    seg_params.job = job;
    seg_params.capacity = ctx->config.capacity;
    seg_params.max_procs = ctx->config.max_procs;
    if (params != NULL && (params->field_mask & RDLM_CTX_FIELD_CAPACITY)) {
        if (params->capacity < 16 || params->capacity > RDLM_ENTRY_INDEX_MAX / 2) {
            rdlm_error("rdlm_ctx_create: capacity %u outside 16..%u", params->capacity,
                       RDLM_ENTRY_INDEX_MAX / 2);
            status = RDLM_ERR_INVALID_ARG;
            goto err_free;
        }
        seg_params.capacity = params->capacity;
    }
    ctx->local.policy.spin = ctx->config.spin;
    ctx->local.policy.yield = ctx->config.yield;
    ctx->local.policy.park_slice_ns = (uint64_t)ctx->config.park_slice_ms * 1000000ull;
    ctx->local.cpus = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN);
    status = rdlm_segment_attach(&seg_params, &ctx->local.seg);
    if (status != RDLM_OK) {
        goto err_free;
    }
    pthread_mutex_init(&ctx->objs_lock, NULL);
    *ctx_p = ctx;
    return RDLM_OK;

err_free:
    free(ctx);
    return status;
}

static void rdlm_ctx_print_stats(rdlm_ctx_h ctx)
{
    rdlm_stats_t s;

    rdlm_ctx_stats(ctx, &s);
    fprintf(stderr,
            "rdlm[%d] stats: acquires %" PRIu64 " contended %" PRIu64 " parks %" PRIu64
            " wakes %" PRIu64 " timeouts %" PRIu64 " recoveries %" PRIu64 " skips %" PRIu64
            "\n",
            (int)getpid(), s.acquires, s.contended, s.parks, s.wakes, s.timeouts,
            s.recoveries, s.skips);
}

void rdlm_ctx_destroy(rdlm_ctx_h ctx)
{
    if (ctx == NULL) {
        return;
    }
    if (ctx->config.stats) {
        rdlm_ctx_print_stats(ctx);
    }
    while (ctx->objs != NULL) {
        rdlm_obj_t *obj = ctx->objs;

        ctx->objs = obj->next;
        if (obj->magic == RDLM_OBJ_MAGIC_OPEN) {
            rdlm_obj_release_held(obj);
        }
        free(obj);
    }
    rdlm_segment_detach(&ctx->local.seg);
    pthread_mutex_destroy(&ctx->objs_lock);
    free(ctx);
}

rdlm_status_t rdlm_ctx_stats(rdlm_ctx_h ctx, rdlm_stats_t *stats_p)
{
    const rdlm_local_stats_t *s;

    if (ctx == NULL || stats_p == NULL) {
        rdlm_warn("rdlm_ctx_stats: NULL argument");
        return ctx == NULL ? RDLM_ERR_BAD_HANDLE : RDLM_ERR_INVALID_ARG;
    }
    s = &ctx->local.stats;
    stats_p->acquires = rdlm_load(&s->acquires, RDLM_RELAXED);
    stats_p->contended = rdlm_load(&s->contended, RDLM_RELAXED);
    stats_p->parks = rdlm_load(&s->wait.parks, RDLM_RELAXED);
    stats_p->wakes = rdlm_load(&s->wait.wakes, RDLM_RELAXED);
    stats_p->timeouts = rdlm_load(&s->timeouts, RDLM_RELAXED);
    stats_p->recoveries = rdlm_load(&s->recoveries, RDLM_RELAXED);
    stats_p->skips = rdlm_load(&s->skips, RDLM_RELAXED);
    return RDLM_OK;
}

rdlm_status_t rdlm_ctx_segment_info(rdlm_ctx_h ctx, rdlm_segment_info_t *info_p)
{
    const rdlm_segment_t *seg;

    if (ctx == NULL || info_p == NULL) {
        rdlm_warn("rdlm_ctx_segment_info: NULL argument");
        return ctx == NULL ? RDLM_ERR_BAD_HANDLE : RDLM_ERR_INVALID_ARG;
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
