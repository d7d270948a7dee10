/* Handles: open, validate, close (see api.h). */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "fork_guard.h"
#include "log.h"
#include "table.h"

rdlm_status_t rdlm_obj_check_failed(const void *h, unsigned kind, const char *func)
{
    const rdlm_obj_t *obj = h;

    if (obj == NULL) {
        rdlm_warn("%s: NULL handle", func);
        return RDLM_ERR_BAD_HANDLE;
    }
    if (obj->magic == RDLM_OBJ_MAGIC_CLOSED) {
        rdlm_warn("%s: handle was closed", func);
        return RDLM_ERR_CLOSED;
    }
    if (obj->magic != RDLM_OBJ_MAGIC_OPEN || obj->kind != kind) {
        rdlm_warn("%s: not a handle of this kind", func);
        return RDLM_ERR_BAD_HANDLE;
    }
    return RDLM_OK;
}

static rdlm_status_t rdlm_obj_check_name(const char *name, const char *func)
{
    size_t len;

    if (name == NULL) {
        rdlm_warn("%s: NULL name", func);
        return RDLM_ERR_INVALID_ARG;
    }
    len = strnlen(name, RDLM_NAME_MAX + 1);
    if (len == 0 || len > RDLM_NAME_MAX) {
        rdlm_warn("%s: name must be 1..%d bytes", func, RDLM_NAME_MAX);
        return RDLM_ERR_NAME_TOO_LONG;
    }
    return RDLM_OK;
}

/* Handles of destroyed contexts: kept (closed) for the life of the process, so that a
 * call through a stale handle answers RDLM_ERR_CLOSED instead of touching freed
 * memory, and reused by later opens (the list never grows past the most handles ever
 * open at once). */
static pthread_mutex_t rdlm_obj_retired_lock = PTHREAD_MUTEX_INITIALIZER;
static rdlm_obj_t *rdlm_obj_retired;

void rdlm_obj_retire(rdlm_obj_t *obj)
{
    pthread_mutex_lock(&rdlm_obj_retired_lock);
    obj->magic = RDLM_OBJ_MAGIC_CLOSED;
    obj->ctx = NULL;
    obj->next = rdlm_obj_retired;
    rdlm_obj_retired = obj;
    pthread_mutex_unlock(&rdlm_obj_retired_lock);
}

/* At unload (dlclose of librdlm.so, or of a plugin linking it) and at exit: the
 * handles retired so far go back to malloc, else each load and unload would leave them
 * behind, unreachable. No rdlm call runs then: a program calls none past exit, nor
 * into a library it unloaded. */
__attribute__((destructor)) static void rdlm_obj_retired_free(void)
{
    pthread_mutex_lock(&rdlm_obj_retired_lock);
    while (rdlm_obj_retired != NULL) {
        rdlm_obj_t *obj = rdlm_obj_retired;

        rdlm_obj_retired = obj->next;
        free(obj);
    }
    pthread_mutex_unlock(&rdlm_obj_retired_lock);
}

static rdlm_obj_t *rdlm_obj_new(void)
{
    rdlm_obj_t *obj;

    rdlm_fork_guard(&rdlm_obj_retired_lock); /* a forked child opens its own handles */
    pthread_mutex_lock(&rdlm_obj_retired_lock);
    obj = rdlm_obj_retired;
    if (obj != NULL) {
        rdlm_obj_retired = obj->next;
    }
    pthread_mutex_unlock(&rdlm_obj_retired_lock);
    return obj != NULL ? obj : calloc(1, sizeof(*obj));
}

/* A handle for an open, the objects lock held: the closed handle closed first once
 * more than RDLM_OBJ_CLOSED_KEEP are closed, else a new one on the context's list.
 * NULL: out of memory. */
static rdlm_obj_t *rdlm_obj_take(rdlm_ctx_h ctx)
{
    rdlm_obj_t *obj = ctx->closed_head;

    if (ctx->closed_count > RDLM_OBJ_CLOSED_KEEP) {
        ctx->closed_head = obj->closed_next;
        ctx->closed_count--;
        return obj;
    }
    obj = rdlm_obj_new();
    if (obj != NULL) {
        obj->next = ctx->objs;
        ctx->objs = obj;
    }
    return obj;
}

rdlm_status_t rdlm_obj_open(rdlm_ctx_h ctx, const char *name, unsigned kind, uint32_t size,
                            rdlm_obj_t **obj_p)
{
    rdlm_status_t status;
    rdlm_obj_t *obj;
    uint32_t index;

    status = rdlm_ctx_check(ctx, "open");
    if (status != RDLM_OK) {
        return status;
    }
    status = rdlm_obj_check_name(name, "open");
    if (status != RDLM_OK) {
        return status;
    }
    status = rdlm_table_open(&ctx->local.seg, name, kind, size,
                             ctx->ops->keeps(ctx, kind & RDLM_META_KIND), &index);
    if (status != RDLM_OK) {
        return status;
    }
    kind &= RDLM_META_KIND; /* without a lock's order bits */
    status = ctx->ops->open(ctx, kind, index);
    if (status == RDLM_ERR_MISMATCH || status == RDLM_ERR_KIND_MISMATCH) {
        rdlm_table_discard(&ctx->local.seg, index); /* job-wide another kind or size */
        return status;
    }
    if (status != RDLM_OK) {
        goto err_unpin;
    }
    pthread_mutex_lock(&ctx->objs_lock);
    obj = rdlm_obj_take(ctx);
    if (obj == NULL) {
        pthread_mutex_unlock(&ctx->objs_lock);
        rdlm_error("open \"%s\": out of memory", name);
        status = RDLM_ERR_NO_MEMORY;
        goto err_unpin;
    }
    obj->kind = kind;
    obj->index = index;
    rdlm_store(&obj->held, 0, RDLM_RELAXED);
    obj->ctx = ctx;
    obj->local = &ctx->local;
    obj->mutex_only = kind == RDLM_KIND_LOCK && ctx->ops == &rdlm_obj_local_ops &&
                      ctx->session == NULL && !rdlm_local_lock_is_fifo(&ctx->local, index);
    obj->magic = RDLM_OBJ_MAGIC_OPEN;
    pthread_mutex_unlock(&ctx->objs_lock);
    *obj_p = obj;
    return RDLM_OK;

err_unpin:
    rdlm_table_close(&ctx->local.seg, index);
    return status;
}

rdlm_status_t rdlm_obj_open_sized(rdlm_ctx_h ctx, const char *name, unsigned kind,
                                  uint32_t size, rdlm_obj_t **obj_p)
{
    rdlm_status_t status = rdlm_obj_open(ctx, name, kind, size, obj_p);
    uint32_t fixed;

    if (status != RDLM_OK) {
        return status;
    }
    fixed = rdlm_load(&ctx->local.seg.entries[(*obj_p)->index].fixed_size, RDLM_ACQUIRE);
    if (fixed != size) {
        rdlm_error("\"%s\" exists with size %u, opened with %u", name, fixed, size);
        rdlm_obj_close(*obj_p, kind, __func__);
        return RDLM_ERR_MISMATCH;
    }
    return RDLM_OK;
}

void rdlm_obj_release_held(rdlm_obj_t *obj, int context_too)
{
    const rdlm_obj_ops_t *ops = obj->ctx->ops;
    rdlm_local_t *lc = &obj->ctx->local;
    uint64_t permits = rdlm_exchange(&obj->held, 0, RDLM_ACQ_REL);

    if (obj->kind == RDLM_KIND_SEMAPHORE && permits != 0) {
        ops->sem_release(obj, (uint32_t)permits);
    }
    if (!context_too) {
        return;
    }
    if (obj->kind == RDLM_KIND_RWLOCK) {
        for (uint32_t n = rdlm_rwlock_local_reads_held(lc, obj->index); n > 0; n--) {
            ops->read_release(obj);
        }
    }
    if ((obj->kind == RDLM_KIND_LOCK || obj->kind == RDLM_KIND_RWLOCK) &&
        rdlm_ticket_held_by_me(lc, obj->index)) {
        (obj->kind == RDLM_KIND_LOCK ? ops->lock_release : ops->write_release)(obj);
    }
}

/* 1 if ctx has another open handle of obj's entry (the objects lock held). */
static int rdlm_obj_name_open_elsewhere(rdlm_ctx_h ctx, const rdlm_obj_t *obj)
{
    for (const rdlm_obj_t *o = ctx->objs; o != NULL; o = o->next) {
        if (o != obj && o->magic == RDLM_OBJ_MAGIC_OPEN && o->index == obj->index) {
            return 1;
        }
    }
    return 0;
}

rdlm_status_t rdlm_obj_close(void *h, unsigned kind, const char *func)
{
    rdlm_obj_t *obj = h;
    rdlm_status_t status = rdlm_obj_check_handle(h, kind, func);
    rdlm_ctx_h ctx;
    int last;

    if (status != RDLM_OK) {
        return status;
    }
    ctx = obj->ctx;
    /* A lock the context holds through another handle of the name stays held: closing
     * a thread's handle released another thread's hold (an outside user: two holders
     * at once, and RDLM_ERR_NOT_OWNER at the other's release). */
    pthread_mutex_lock(&ctx->objs_lock);
    last = !rdlm_obj_name_open_elsewhere(ctx, obj);
    pthread_mutex_unlock(&ctx->objs_lock);
    rdlm_obj_release_held(obj, last);
    pthread_mutex_lock(&ctx->objs_lock);
    obj->magic = RDLM_OBJ_MAGIC_CLOSED; /* before its entry may go to another name */
    pthread_mutex_unlock(&ctx->objs_lock);
    ctx->ops->close(obj);
    rdlm_table_close(&ctx->local.seg, obj->index);
    pthread_mutex_lock(&ctx->objs_lock); /* reusable from now on */
    obj->closed_next = NULL;
    if (ctx->closed_count++ == 0) {
        ctx->closed_head = obj;
    } else {
        ctx->closed_tail->closed_next = obj;
    }
    ctx->closed_tail = obj;
    pthread_mutex_unlock(&ctx->objs_lock);
    return RDLM_OK;
}
