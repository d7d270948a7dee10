/* Public counter and barrier calls, over the context's ops. */
#include "api.h"
#include "log.h"

/* A counter, plain (sharded 0) or sharded: which one is fixed by the first open. */
static rdlm_status_t rdlm_counter_open_as(rdlm_ctx_h ctx, const char *name, uint32_t sharded,
                                          rdlm_counter_h *counter_p, const char *func)
{
    rdlm_obj_t *obj;
    rdlm_status_t status;

    if (counter_p == NULL) {
        rdlm_warn("%s: NULL counter_p", func);
        return RDLM_ERR_INVALID_ARG;
    }
    status = rdlm_obj_open_sized(ctx, name, RDLM_KIND_COUNTER, sharded, &obj);
    if (status == RDLM_OK) {
        *counter_p = (rdlm_counter_h)(void *)obj;
    }
    return status;
}

rdlm_status_t rdlm_counter_open(rdlm_ctx_h ctx, const char *name, rdlm_counter_h *counter_p)
{
    return rdlm_counter_open_as(ctx, name, 0, counter_p, __func__);
}

rdlm_status_t rdlm_counter_open_sharded(rdlm_ctx_h ctx, const char *name,
                                        rdlm_counter_h *counter_p)
{
    return rdlm_counter_open_as(ctx, name, RDLM_GLOBAL_COUNTER_SHARDED, counter_p,
                                __func__);
}

rdlm_status_t rdlm_counter_fetch_add(rdlm_counter_h counter, int64_t delta, int64_t *old_p)
{
    rdlm_status_t status = rdlm_obj_check(counter, RDLM_KIND_COUNTER, __func__);
    int64_t old;

    if (status != RDLM_OK) {
        return status;
    }
    status = RDLM_OBJ(counter)->ctx->ops->fetch_add(RDLM_OBJ(counter), delta, &old);
    if (old_p != NULL && status == RDLM_OK) {
        *old_p = old;
    }
    return status;
}

rdlm_status_t rdlm_counter_read(rdlm_counter_h counter, int64_t *value_p)
{
    rdlm_status_t status = rdlm_obj_check(counter, RDLM_KIND_COUNTER, __func__);

    if (status != RDLM_OK) {
        return status;
    }
    if (value_p == NULL) {
        rdlm_warn("rdlm_counter_read: NULL value_p");
        return RDLM_ERR_INVALID_ARG;
    }
    return RDLM_OBJ(counter)->ctx->ops->counter_read(RDLM_OBJ(counter), value_p);
}

rdlm_status_t rdlm_counter_close(rdlm_counter_h counter)
{
    return rdlm_obj_close(counter, RDLM_KIND_COUNTER, __func__);
}

rdlm_status_t rdlm_barrier_open(rdlm_ctx_h ctx, const char *name, uint32_t nprocs,
                                rdlm_barrier_h *barrier_p)
{
    rdlm_obj_t *obj;
    rdlm_status_t status;

    if (barrier_p == NULL || nprocs == 0) {
        rdlm_warn("rdlm_barrier_open: %s", nprocs == 0 ? "nprocs is 0" : "NULL barrier_p");
        return RDLM_ERR_INVALID_ARG;
    }
    status = rdlm_obj_open_sized(ctx, name, RDLM_KIND_BARRIER, nprocs, &obj);
    if (status == RDLM_OK) {
        *barrier_p = (rdlm_barrier_h)(void *)obj;
    }
    return status;
}

rdlm_status_t rdlm_barrier_wait(rdlm_barrier_h barrier, uint64_t timeout_ns)
{
    rdlm_status_t status = rdlm_obj_check(barrier, RDLM_KIND_BARRIER, __func__);

    if (status != RDLM_OK) {
        return status;
    }
    return RDLM_OBJ(barrier)->ctx->ops->barrier_wait(RDLM_OBJ(barrier), timeout_ns);
}

rdlm_status_t rdlm_barrier_close(rdlm_barrier_h barrier)
{
    return rdlm_obj_close(barrier, RDLM_KIND_BARRIER, __func__);
}
