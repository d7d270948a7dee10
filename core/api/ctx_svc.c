/*
 * Service-wide exclusive locks for a context with RDLM_AUTHORITY (core/svc): the
 * node-local lock first (core/local ticket.c: one process of the node at a time), then
 * the lock word at the home an rdlmd hosts. The token is the home's.
 */
#include "api.h"
#include "clock.h"
#include "log.h"
#include "svc.h"

static uint64_t rdlm_ctx_svc_id(const rdlm_obj_t *obj)
{
    return rdlm_svc_lock_id(
        obj->ctx->svc,
        rdlm_load(&obj->ctx->local.seg.entries[obj->index].key, RDLM_RELAXED));
}

/* The node-local lock, then the home's word: RDLM_OK or RDLM_OWNER_DEAD with *token_p
 * (the home's token), else neither is held. */
static rdlm_status_t rdlm_ctx_svc_take(rdlm_obj_t *obj, uint64_t timeout_ns,
                                       uint64_t *token_p)
{
    uint64_t deadline = rdlm_clock_deadline(timeout_ns), local_token;
    rdlm_status_t local =
        rdlm_ticket_acquire(&obj->ctx->local, obj->index, timeout_ns, &local_token);
    rdlm_status_t global;

    if (local < 0) {
        return local;
    }
    global = rdlm_svc_lock_acquire(obj->ctx->svc, rdlm_ctx_svc_id(obj), deadline,
                                   timeout_ns == 0, token_p);
    if (global < 0) {
        rdlm_ticket_release(&obj->ctx->local, obj->index);
        rdlm_local_lock_ungrant(&obj->ctx->local, global);
        return global;
    }
    return local == RDLM_OWNER_DEAD ? local : global;
}

static rdlm_status_t rdlm_ctx_svc_release(rdlm_obj_t *obj)
{
    rdlm_status_t global = rdlm_svc_lock_release(obj->ctx->svc, rdlm_ctx_svc_id(obj));
    rdlm_status_t local = rdlm_ticket_release(&obj->ctx->local, obj->index);

    return global != RDLM_OK ? global : local;
}

/* The undone hold is left as a dead holder's: the home's word to the session's end
 * (rdlm_svc_lock_abandon), the node-local lock to RDLM_OWNER_DIED. */
static rdlm_status_t rdlm_ctx_svc_undo_dead(rdlm_obj_t *obj)
{
    rdlm_status_t global, local;

    if (obj->kind != RDLM_KIND_LOCK) {
        return rdlm_ops_local_undo_dead(obj);
    }
    global = rdlm_svc_lock_abandon(obj->ctx->svc, rdlm_ctx_svc_id(obj));
    local = rdlm_ticket_release_to(&obj->ctx->local, obj->index, RDLM_OWNER_DIED);
    return global != RDLM_OK ? global : local;
}

/* An acquire that may wait counts itself for the destroy (rdlm_local_wait_enter),
 * which frees the homes' links and the service's state once no call is counted; the
 * destroy's closing flag ends the wait at the home (rdlm_svc_open), and a lock granted
 * while the context closes is given back, as the destroy would release it under the
 * caller (rdlm.h, rdlm_ctx_destroy). A try is not counted: it must not run beside the
 * destroy. */
static rdlm_status_t rdlm_ctx_svc_acquire(rdlm_obj_t *obj, uint64_t timeout_ns,
                                          uint64_t *token_p)
{
    rdlm_local_t *lc = &obj->ctx->local;
    uint64_t token;
    rdlm_status_t st;

    if (timeout_ns != 0 && rdlm_local_wait_enter(lc) != RDLM_OK) {
        return RDLM_ERR_CLOSED;
    }
    st = rdlm_ctx_svc_take(obj, timeout_ns, &token);
    if (timeout_ns != 0 && st >= 0 && rdlm_load(&lc->closing, RDLM_SEQ_CST)) {
        rdlm_ctx_svc_release(obj);
        rdlm_local_lock_ungrant(lc, RDLM_ERR_CLOSED);
        st = RDLM_ERR_CLOSED;
    }
    if (st >= 0 && token_p != NULL) {
        *token_p = token;
    }
    return timeout_ns != 0 ? rdlm_local_wait_leave(lc, st) : st;
}

/* A closed handle of an exclusive lock: the service may forget the lock's state in
 * this process (rdlm_svc_lock_forget keeps it while held or in a call). */
static void rdlm_ctx_svc_close_obj(rdlm_obj_t *obj)
{
    if (obj->kind == RDLM_KIND_LOCK) {
        rdlm_svc_lock_forget(obj->ctx->svc, rdlm_ctx_svc_id(obj));
    }
}

uint64_t rdlm_ctx_svc_home_ops(rdlm_ctx_h ctx)
{
    return ctx->svc != NULL ? rdlm_svc_home_ops(ctx->svc) : 0;
}

/* The home: the index of the lock's rdlmd in the sorted authority addresses. */
static void rdlm_ctx_svc_lock_home(const rdlm_obj_t *obj, rdlm_lock_info_t *info_p)
{
    info_p->home_node = (int32_t)rdlm_svc_home_of(obj->ctx->svc, rdlm_ctx_svc_id(obj));
    info_p->node_holds_global = 0;
}

/* Exclusive locks take the home's word too; everything else is node-local. */
static const rdlm_obj_ops_t rdlm_obj_svc_ops = {
    .keeps = rdlm_ops_local_keeps,
    .open = rdlm_ops_local_open,
    .close = rdlm_ctx_svc_close_obj,
    .lock_acquire = rdlm_ctx_svc_acquire,
    .lock_release = rdlm_ctx_svc_release,
    .lock_home = rdlm_ctx_svc_lock_home,
    .read_acquire = rdlm_ops_local_read_acquire,
    .read_release = rdlm_ops_local_read_release,
    .write_acquire = rdlm_ops_local_write_acquire,
    .write_release = rdlm_ops_local_write_release,
    .undo_dead = rdlm_ctx_svc_undo_dead,
    .fetch_add = rdlm_ops_local_fetch_add,
    .counter_read = rdlm_ops_local_counter_read,
    .sem_acquire = rdlm_ops_local_sem_acquire,
    .sem_release = rdlm_ops_local_sem_release,
    .sem_available = rdlm_ops_local_sem_available,
    .barrier_wait = rdlm_ops_local_barrier_wait,
};

rdlm_status_t rdlm_ctx_svc_open(rdlm_ctx_h ctx)
{
    rdlm_status_t st;

    if (ctx->session == NULL) {
        return RDLM_OK;
    }
    st = rdlm_svc_open(ctx->config.authority, ctx->session, &ctx->config,
                       &ctx->local.closing, &ctx->svc);
    if (st == RDLM_OK && ctx->svc != NULL) {
        ctx->ops = &rdlm_obj_svc_ops;
    }
    return st == RDLM_ERR_UNSUPPORTED ? RDLM_OK : st;
}

void rdlm_ctx_svc_close(rdlm_ctx_h ctx)
{
    rdlm_svc_close(ctx->svc);
    ctx->svc = NULL;
}
