/* Public exclusive-lock and reader-writer-lock calls over core/local. */
#include "api.h"
#include "log.h"

rdlm_status_t rdlm_lock_open(rdlm_ctx_h ctx, const char *name, rdlm_lock_h *lock_p)
{
    rdlm_obj_t *obj;
    rdlm_status_t status;

    if (lock_p == NULL) {
        rdlm_warn("rdlm_lock_open: NULL lock_p");
        return RDLM_ERR_INVALID_ARG;
    }
    status = rdlm_obj_open(ctx, name, RDLM_KIND_LOCK, 0, &obj);
    if (status == RDLM_OK) {
        *lock_p = (rdlm_lock_h)(void *)obj;
    }
    return status;
}

rdlm_status_t rdlm_lock_acquire(rdlm_lock_h lock, uint64_t timeout_ns, uint64_t *token_p)
{
    rdlm_status_t status = rdlm_obj_check(lock, RDLM_KIND_LOCK, __func__);

    if (status != RDLM_OK) {
        return status;
    }
    return rdlm_qlock_acquire(&RDLM_OBJ(lock)->ctx->local, RDLM_OBJ(lock)->index,
                              timeout_ns, token_p);
}

rdlm_status_t rdlm_lock_release(rdlm_lock_h lock)
{
    rdlm_status_t status = rdlm_obj_check(lock, RDLM_KIND_LOCK, __func__);

    if (status != RDLM_OK) {
        return status;
    }
    return rdlm_qlock_release(&RDLM_OBJ(lock)->ctx->local, RDLM_OBJ(lock)->index);
}

rdlm_status_t rdlm_lock_close(rdlm_lock_h lock)
{
    return rdlm_obj_close(lock, RDLM_KIND_LOCK, __func__);
}

rdlm_status_t rdlm_lock_query(rdlm_lock_h lock, rdlm_lock_info_t *info_p)
{
    rdlm_status_t status = rdlm_obj_check(lock, RDLM_KIND_LOCK, __func__);
    const rdlm_entry_t *e;
    uint64_t w;
    uint16_t queued;

    if (status != RDLM_OK) {
        return status;
    }
    if (info_p == NULL) {
        rdlm_warn("rdlm_lock_query: NULL info_p");
        return RDLM_ERR_INVALID_ARG;
    }
    e = &RDLM_OBJ(lock)->ctx->local.seg.entries[RDLM_OBJ(lock)->index];
    w = rdlm_load(&e->word, RDLM_ACQUIRE);
    info_p->held = !RDLM_OWNER_IS_NOBODY(RDLM_WORD_OWNER(w));
    info_p->held_by_me = RDLM_WORD_OWNER(w) == RDLM_OBJ(lock)->ctx->local.seg.self_owner;
    /* Tickets handed out and not yet served, less the holder's own. */
    queued = (uint16_t)(RDLM_WORD_NEXT(w) - RDLM_WORD_SERVING(w));
    info_p->waiters = (queued > 0) ? queued - 1u : 0;
    info_p->last_token = rdlm_load(&e->token, RDLM_ACQUIRE);
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

    if (status != RDLM_OK) {
        return status;
    }
    return rdlm_rwlock_local_read_acquire(&RDLM_OBJ(rw)->ctx->local, RDLM_OBJ(rw)->index,
                                         timeout_ns);
}

rdlm_status_t rdlm_rwlock_read_release(rdlm_rwlock_h rw)
{
    rdlm_status_t status = rdlm_obj_check(rw, RDLM_KIND_RWLOCK, __func__);

    if (status != RDLM_OK) {
        return status;
    }
    return rdlm_rwlock_local_read_release(&RDLM_OBJ(rw)->ctx->local, RDLM_OBJ(rw)->index);
}

rdlm_status_t rdlm_rwlock_write_acquire(rdlm_rwlock_h rw, uint64_t timeout_ns,
                                        uint64_t *token_p)
{
    rdlm_status_t status = rdlm_obj_check(rw, RDLM_KIND_RWLOCK, __func__);

    if (status != RDLM_OK) {
        return status;
    }
    return rdlm_rwlock_local_write_acquire(&RDLM_OBJ(rw)->ctx->local, RDLM_OBJ(rw)->index,
                                          timeout_ns, token_p);
}

rdlm_status_t rdlm_rwlock_write_release(rdlm_rwlock_h rw)
{
    rdlm_status_t status = rdlm_obj_check(rw, RDLM_KIND_RWLOCK, __func__);

    if (status != RDLM_OK) {
        return status;
    }
    return rdlm_qlock_release(&RDLM_OBJ(rw)->ctx->local, RDLM_OBJ(rw)->index);
}

rdlm_status_t rdlm_rwlock_close(rdlm_rwlock_h rw)
{
    return rdlm_obj_close(rw, RDLM_KIND_RWLOCK, __func__);
}
