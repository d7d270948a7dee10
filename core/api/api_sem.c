/* Public semaphore calls, over the context's ops. */
#include "api.h"
#include "log.h"

rdlm_status_t rdlm_sem_open(rdlm_ctx_h ctx, const char *name, uint32_t permits,
                            rdlm_sem_h *sem_p)
{
    rdlm_obj_t *obj;
    rdlm_status_t status;

    if (sem_p == NULL || permits == 0 || permits > RDLM_SEM_PERMITS_MAX) {
        rdlm_warn("rdlm_sem_open: %s", sem_p == NULL ? "NULL sem_p"
                                                     : "permits must be 1..2^31-1");
        return RDLM_ERR_INVALID_ARG;
    }
    status = rdlm_obj_open_sized(ctx, name, RDLM_KIND_SEMAPHORE, permits, &obj);
    if (status == RDLM_OK) {
        *sem_p = (rdlm_sem_h)(void *)obj;
    }
    return status;
}

/* Validate a handle and a permit count k against the semaphore's size. */
static rdlm_status_t rdlm_sem_check(rdlm_sem_h sem, uint32_t k, const char *func)
{
    rdlm_status_t status = rdlm_obj_check(sem, RDLM_KIND_SEMAPHORE, func);
    uint32_t permits;

    if (status != RDLM_OK) {
        return status;
    }
    permits =
        rdlm_load(&RDLM_OBJ(sem)->ctx->local.seg.entries[RDLM_OBJ(sem)->index].sem_permits,
                  RDLM_RELAXED);
    if (k == 0 || k > permits) {
        rdlm_warn("%s: k = %u, must be 1..%u", func, k, permits);
        return RDLM_ERR_INVALID_ARG;
    }
    return RDLM_OK;
}

rdlm_status_t rdlm_sem_acquire(rdlm_sem_h sem, uint32_t k, uint64_t timeout_ns)
{
    rdlm_status_t status = rdlm_sem_check(sem, k, __func__);
    rdlm_obj_t *obj = RDLM_OBJ(sem);

    if (status != RDLM_OK) {
        return status;
    }
    status = obj->ctx->ops->sem_acquire(obj, k, timeout_ns);
    if (status == RDLM_OK) {
        rdlm_fetch_add(&obj->held, k, RDLM_RELAXED);
    }
    return status;
}

rdlm_status_t rdlm_sem_release(rdlm_sem_h sem, uint32_t k)
{
    rdlm_status_t status = rdlm_sem_check(sem, k, __func__);
    rdlm_obj_t *obj = RDLM_OBJ(sem);
    uint64_t held;

    if (status != RDLM_OK) {
        return status;
    }
    held = rdlm_load(&obj->held, RDLM_RELAXED);
    do {
        if (held < k) {
            rdlm_warn("rdlm_sem_release: this handle holds %llu permits, not %u",
                      (unsigned long long)held, k);
            return RDLM_ERR_NOT_OWNER;
        }
    } while (!rdlm_cas(&obj->held, &held, held - k, RDLM_ACQ_REL));
    return obj->ctx->ops->sem_release(obj, k);
}

rdlm_status_t rdlm_sem_available(rdlm_sem_h sem, uint32_t *available_p)
{
    rdlm_status_t status = rdlm_obj_check(sem, RDLM_KIND_SEMAPHORE, __func__);
    rdlm_obj_t *obj = RDLM_OBJ(sem);

    if (status != RDLM_OK) {
        return status;
    }
    if (available_p == NULL) {
        rdlm_warn("rdlm_sem_available: NULL available_p");
        return RDLM_ERR_INVALID_ARG;
    }
    return obj->ctx->ops->sem_available(obj, available_p);
}

rdlm_status_t rdlm_sem_close(rdlm_sem_h sem)
{
    return rdlm_obj_close(sem, RDLM_KIND_SEMAPHORE, __func__);
}
