/*
 * Live contexts (api.h): a process-wide list of the contexts created and not yet
 * destroyed, so that a call through the handle of a destroyed context answers
 * RDLM_ERR_BAD_HANDLE instead of touching freed memory. A handle is looked up by
 * address; only the contexts on the list are dereferenced (for their live_next). The
 * lookup is a mutex and a walk over the few contexts of the process, never a system
 * call when uncontended, and only the calls that take an rdlm_ctx_h make it: opens,
 * statistics, information and the collective barrier, never an object's operations.
 */
#include "api.h"
#include "log.h"

static pthread_mutex_t rdlm_ctx_live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rdlm_ctx *rdlm_ctx_live_head;

void rdlm_ctx_live_add(rdlm_ctx_h ctx)
{
    pthread_mutex_lock(&rdlm_ctx_live_lock);
    ctx->live_next = rdlm_ctx_live_head;
    rdlm_ctx_live_head = ctx;
    pthread_mutex_unlock(&rdlm_ctx_live_lock);
}

void rdlm_ctx_live_remove(rdlm_ctx_h ctx)
{
    struct rdlm_ctx **p;

    pthread_mutex_lock(&rdlm_ctx_live_lock);
    for (p = &rdlm_ctx_live_head; *p != NULL && *p != ctx; p = &(*p)->live_next) {
    }
    if (*p != NULL) {
        *p = ctx->live_next;
    }
    pthread_mutex_unlock(&rdlm_ctx_live_lock);
}

static int rdlm_ctx_is_live(const struct rdlm_ctx *ctx)
{
    const struct rdlm_ctx *c;

    pthread_mutex_lock(&rdlm_ctx_live_lock);
    for (c = rdlm_ctx_live_head; c != NULL && c != ctx; c = c->live_next) {
    }
    pthread_mutex_unlock(&rdlm_ctx_live_lock);
    return c != NULL;
}

rdlm_status_t rdlm_ctx_check(const struct rdlm_ctx *ctx, const char *func)
{
    if (ctx == NULL) {
        rdlm_warn("%s: NULL context", func);
        return RDLM_ERR_BAD_HANDLE;
    }
    if (!rdlm_ctx_is_live(ctx)) {
        rdlm_warn("%s: not a live context (destroyed already?)", func);
        return RDLM_ERR_BAD_HANDLE;
    }
    return RDLM_OK;
}

rdlm_status_t rdlm_ctx_check_out(const struct rdlm_ctx *ctx, const void *out,
                                 const char *func)
{
    rdlm_status_t status = rdlm_ctx_check(ctx, func);

    if (status == RDLM_OK && out == NULL) {
        rdlm_warn("%s: NULL output pointer", func);
        status = RDLM_ERR_INVALID_ARG;
    }
    return status;
}
