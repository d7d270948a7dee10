/* Public exclusive-lock and reader-writer-lock calls, over the context's ops. */
#include <inttypes.h>

#include "api.h"
#include "log.h"

/* The table request (kind | order bits) for params in ctx; logs what it refuses.
 * A distributed or service context's on-node part is always the FIFO ticket lock
 * (the cohort hand-off and the service gate use it). */
static rdlm_status_t rdlm_lock_kind(rdlm_ctx_h ctx, const rdlm_lock_params_t *params,
                                    unsigned *kind_p)
{
    rdlm_lock_order_t order = RDLM_LOCK_ORDER_DEFAULT;
    int node_only;

    if (params != NULL && (params->field_mask & ~(uint64_t)RDLM_LOCK_FIELD_ORDER) != 0) {
        rdlm_warn("rdlm_lock_open_params: unknown field_mask bits 0x%" PRIx64,
                  params->field_mask & ~(uint64_t)RDLM_LOCK_FIELD_ORDER);
        return RDLM_ERR_INVALID_ARG;
    }
    if (params != NULL && (params->field_mask & RDLM_LOCK_FIELD_ORDER)) {
        order = params->order;
    }
    if (order != RDLM_LOCK_ORDER_DEFAULT && order != RDLM_LOCK_ORDER_BOUNDED &&
        order != RDLM_LOCK_ORDER_FIFO) {
        rdlm_warn("rdlm_lock_open_params: unknown order %d", (int)order);
        return RDLM_ERR_INVALID_ARG;
    }
    node_only = ctx->ops == &rdlm_obj_local_ops;
    if (!node_only && order == RDLM_LOCK_ORDER_BOUNDED) {
        rdlm_warn("rdlm_lock_open_params: bounded-bypass order is for node-only contexts; "
                  "this context's locks are FIFO on the node");
        return RDLM_ERR_UNSUPPORTED;
    }
    *kind_p = RDLM_KIND_LOCK;
    if (!node_only || order == RDLM_LOCK_ORDER_FIFO) {
        *kind_p |= RDLM_META_FIFO | RDLM_META_ORDER_SET;
    } else if (order == RDLM_LOCK_ORDER_BOUNDED) {
        *kind_p |= RDLM_META_ORDER_SET;
    }
    return RDLM_OK;
}

rdlm_status_t rdlm_lock_open_params(rdlm_ctx_h ctx, const char *name,
                                    const rdlm_lock_params_t *params, rdlm_lock_h *lock_p)
{
    rdlm_obj_t *obj;
    rdlm_status_t status;
    unsigned kind;

    if (lock_p == NULL) {
        rdlm_warn("rdlm_lock_open: NULL lock_p");
        return RDLM_ERR_INVALID_ARG;
    }
    status = rdlm_ctx_check(ctx, "open");
    if (status != RDLM_OK) {
        return status;
    }
    status = rdlm_lock_kind(ctx, params, &kind);
    if (status != RDLM_OK) {
        return status;
    }
    status = rdlm_obj_open(ctx, name, kind, 0, &obj);
    if (status == RDLM_OK) {
        *lock_p = (rdlm_lock_h)(void *)obj;
    }
    return status;
}

rdlm_status_t rdlm_lock_open(rdlm_ctx_h ctx, const char *name, rdlm_lock_h *lock_p)
{
    return rdlm_lock_open_params(ctx, name, NULL, lock_p);
}

/* An acquire that took the lock over from a dead holder (RDLM_OWNER_DEAD) first waits
 * out the lock delay. One that succeeded while the context's lease was lost (it
 * expired during the wait or the delay) is undone: the caller gets
 * RDLM_ERR_LEASE_EXPIRED, never a success. An undone RDLM_OWNER_DEAD of an exclusive
 * hold is given up with undo_dead (not NULL then), so that the next holder is told
 * (am_lease.pml -DPAUSE found it lost with a plain release); a shared hold's has been
 * told to this reader already and goes with it (docs/distributed-locks.md, Limits).
 * Only a success sets *token_p (if not NULL) to the acquire's token. A failure touches
 * nothing: after RDLM_ERR_CLOSED the context may be gone (the destroy waited for the
 * wait only), so the caller took release and undo_dead from the ops table before the
 * acquire. */
static rdlm_status_t rdlm_lock_keep(rdlm_obj_t *obj, rdlm_status_t status, uint64_t token,
                                    uint64_t *token_p,
                                    rdlm_status_t (*release)(rdlm_obj_t *obj),
                                    rdlm_status_t (*undo_dead)(rdlm_obj_t *obj),
                                    const char *func)
{
    if (status < 0) {
        return status;
    }
    if (status == RDLM_OWNER_DEAD) {
        rdlm_ctx_lease_lock_delay(obj->ctx);
    }
    if (rdlm_ctx_lease_check(obj->ctx) != RDLM_OK) {
        if (status == RDLM_OWNER_DEAD && undo_dead != NULL) {
            undo_dead(obj);
            rdlm_warn("%s: the lease expired while acquiring; given up as its dead holder "
                      "would be: the next holder gets RDLM_OWNER_DEAD",
                      func);
        } else {
            release(obj);
            rdlm_warn("%s: the lease expired while acquiring; released", func);
        }
        return RDLM_ERR_LEASE_EXPIRED;
    }
    if (token_p != NULL) {
        *token_p = token;
    }
    return status;
}

/* The handle is open and mutex_only: its acquire and release are the mutex's. */
static inline int rdlm_lock_mutex_only(const rdlm_obj_t *obj)
{
    return obj != NULL && obj->magic == RDLM_OBJ_MAGIC_OPEN && obj->mutex_only;
}

/* Every acquire but a mutex_only handle's (out of line, so that an uncontended
 * acquire and a failed try of those stay a few instructions). */
static __attribute__((noinline)) rdlm_status_t
rdlm_lock_acquire_any(rdlm_lock_h lock, uint64_t timeout_ns, uint64_t *token_p)
{
    rdlm_status_t status = rdlm_obj_check(lock, RDLM_KIND_LOCK, "rdlm_lock_acquire");
    rdlm_obj_t *obj = RDLM_OBJ(lock);
    const rdlm_obj_ops_t *ops;
    uint64_t token = 0;

    if (status != RDLM_OK) {
        return status;
    }
    ops = obj->ctx->ops;
    status = ops->lock_acquire(obj, timeout_ns, &token);
    return rdlm_lock_keep(obj, status, token, token_p, ops->lock_release, ops->undo_dead,
                          "rdlm_lock_acquire");
}

rdlm_status_t rdlm_lock_acquire(rdlm_lock_h lock, uint64_t timeout_ns, uint64_t *token_p)
{
    const rdlm_obj_t *obj = RDLM_OBJ(lock);

    if (rdlm_lock_mutex_only(obj)) {
        return rdlm_mutex_acquire(obj->local, obj->index, timeout_ns, token_p);
    }
    return rdlm_lock_acquire_any(lock, timeout_ns, token_p);
}

rdlm_status_t rdlm_lock_release(rdlm_lock_h lock)
{
    rdlm_status_t status;

    if (rdlm_lock_mutex_only(RDLM_OBJ(lock))) {
        return rdlm_mutex_release(RDLM_OBJ(lock)->local, RDLM_OBJ(lock)->index);
    }
    status = rdlm_obj_check_handle(lock, RDLM_KIND_LOCK, __func__);
    if (status != RDLM_OK) {
        return status;
    }
    status = RDLM_OBJ(lock)->ctx->ops->lock_release(RDLM_OBJ(lock));
    return rdlm_ctx_lease_answer(RDLM_OBJ(lock)->ctx, status);
}

rdlm_status_t rdlm_lock_close(rdlm_lock_h lock)
{
    return rdlm_obj_close(lock, RDLM_KIND_LOCK, __func__);
}

rdlm_status_t rdlm_lock_query(rdlm_lock_h lock, rdlm_lock_info_t *info_p)
{
    rdlm_status_t status = rdlm_obj_check(lock, RDLM_KIND_LOCK, __func__);
    rdlm_lock_snapshot_t snap;

    if (status != RDLM_OK) {
        return status;
    }
    if (info_p == NULL) {
        rdlm_warn("rdlm_lock_query: NULL info_p");
        return RDLM_ERR_INVALID_ARG;
    }
    rdlm_ticket_snapshot(&RDLM_OBJ(lock)->ctx->local, RDLM_OBJ(lock)->index, &snap);
    info_p->waiters = snap.waiters;
    info_p->held = snap.held;
    info_p->held_by_me = snap.held_by_me;
    info_p->last_token = snap.last_token;
    info_p->reserved = snap.reserved;
    RDLM_OBJ(lock)->ctx->ops->lock_home(RDLM_OBJ(lock), info_p);
    return RDLM_OK;
}

rdlm_status_t rdlm_rwlock_open(rdlm_ctx_h ctx, const char *name, rdlm_rwlock_h *rw_p)
{
    rdlm_obj_t *obj;
    rdlm_status_t status;

    if (rw_p == NULL) {
        rdlm_warn("rdlm_rwlock_open: NULL rw_p");
        return RDLM_ERR_INVALID_ARG;
    }
    status = rdlm_obj_open(ctx, name, RDLM_KIND_RWLOCK, 0, &obj);
    if (status == RDLM_OK) {
        *rw_p = (rdlm_rwlock_h)(void *)obj;
    }
    return status;
}

rdlm_status_t rdlm_rwlock_read_acquire(rdlm_rwlock_h rw, uint64_t timeout_ns)
{
    rdlm_status_t status = rdlm_obj_check(rw, RDLM_KIND_RWLOCK, __func__);
    rdlm_obj_t *obj = RDLM_OBJ(rw);
    const rdlm_obj_ops_t *ops;

    if (status != RDLM_OK) {
        return status;
    }
    ops = obj->ctx->ops;
    status = ops->read_acquire(obj, timeout_ns);
    return rdlm_lock_keep(obj, status, 0, NULL, ops->read_release, NULL, __func__);
}

rdlm_status_t rdlm_rwlock_read_release(rdlm_rwlock_h rw)
{
    rdlm_status_t status = rdlm_obj_check_handle(rw, RDLM_KIND_RWLOCK, __func__);

    if (status != RDLM_OK) {
        return status;
    }
    status = RDLM_OBJ(rw)->ctx->ops->read_release(RDLM_OBJ(rw));
    return rdlm_ctx_lease_answer(RDLM_OBJ(rw)->ctx, status);
}

rdlm_status_t rdlm_rwlock_write_acquire(rdlm_rwlock_h rw, uint64_t timeout_ns,
                                        uint64_t *token_p)
{
    rdlm_status_t status = rdlm_obj_check(rw, RDLM_KIND_RWLOCK, __func__);
    rdlm_obj_t *obj = RDLM_OBJ(rw);
    const rdlm_obj_ops_t *ops;
    uint64_t token = 0;

    if (status != RDLM_OK) {
        return status;
    }
    ops = obj->ctx->ops;
    status = ops->write_acquire(obj, timeout_ns, &token);
    return rdlm_lock_keep(obj, status, token, token_p, ops->write_release, ops->undo_dead,
                          __func__);
}

rdlm_status_t rdlm_rwlock_write_release(rdlm_rwlock_h rw)
{
    rdlm_status_t status = rdlm_obj_check_handle(rw, RDLM_KIND_RWLOCK, __func__);

    if (status != RDLM_OK) {
        return status;
    }
    status = RDLM_OBJ(rw)->ctx->ops->write_release(RDLM_OBJ(rw));
    return rdlm_ctx_lease_answer(RDLM_OBJ(rw)->ctx, status);
}

rdlm_status_t rdlm_rwlock_query(rdlm_rwlock_h rw, rdlm_rwlock_info_t *info_p)
{
    rdlm_status_t status = rdlm_obj_check(rw, RDLM_KIND_RWLOCK, __func__);
    rdlm_lock_snapshot_t snap;

    if (status != RDLM_OK) {
        return status;
    }
    if (info_p == NULL) {
        rdlm_warn("rdlm_rwlock_query: NULL info_p");
        return RDLM_ERR_INVALID_ARG;
    }
    rdlm_ticket_snapshot(&RDLM_OBJ(rw)->ctx->local, RDLM_OBJ(rw)->index, &snap);
    info_p->waiters = snap.waiters;
    info_p->readers = snap.readers;
    info_p->reads_held_by_me = snap.reads_held_by_me;
    /* Readers hold the gate only while passing it; a writer keeps it. */
    info_p->write_held = snap.held;
    info_p->write_held_by_me = snap.held_by_me;
    info_p->last_token = snap.last_token;
    return RDLM_OK;
}

rdlm_status_t rdlm_rwlock_close(rdlm_rwlock_h rw)
{
    return rdlm_obj_close(rw, RDLM_KIND_RWLOCK, __func__);
}
