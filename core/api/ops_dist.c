/* The objects of a distributed context: core/global (obj_ops.h). */
#include "api.h"

/* The homes' slots and words are keyed by the entries, which are kept; but a lock of a
 * context on one node is the node-local lock alone (no home slot), retired as a
 * node-only context's is. */
static int rdlm_ops_dist_keeps(const struct rdlm_ctx *ctx, unsigned kind)
{
    return kind != RDLM_KIND_LOCK || !rdlm_global_one_node(ctx->dist);
}

static rdlm_status_t rdlm_ops_dist_open(rdlm_ctx_h ctx, unsigned kind, uint32_t index)
{
    switch (kind) {
    case RDLM_KIND_LOCK:
        return rdlm_global_lock_open(ctx->dist, &ctx->local, index);
    case RDLM_KIND_RWLOCK:
        return rdlm_global_rwlock_open(ctx->dist, &ctx->local, index);
    case RDLM_KIND_COUNTER:
        return rdlm_global_counter_open(ctx->dist, &ctx->local, index);
    case RDLM_KIND_BARRIER:
        return rdlm_global_nbarrier_open(ctx->dist, &ctx->local, index);
    default:
        return rdlm_global_sem_open(ctx->dist, &ctx->local, index);
    }
}

static rdlm_status_t rdlm_ops_dist_lock_acquire(rdlm_obj_t *obj, uint64_t timeout_ns,
                                                uint64_t *token_p)
{
    return rdlm_global_lock_acquire(obj->ctx->dist, obj->local, obj->index, timeout_ns,
                                    token_p);
}

static rdlm_status_t rdlm_ops_dist_lock_release(rdlm_obj_t *obj)
{
    return rdlm_global_lock_release(obj->ctx->dist, obj->local, obj->index, 0);
}

static void rdlm_ops_dist_lock_home(const rdlm_obj_t *obj, rdlm_lock_info_t *info_p)
{
    uint64_t id = rdlm_load(&obj->local->seg.entries[obj->index].key, RDLM_RELAXED);

    info_p->home_node = (int32_t)rdlm_global_home_node(obj->ctx->dist, id);
    info_p->node_holds_global = rdlm_global_lock_node_holds(obj->local, obj->index);
}

static rdlm_status_t rdlm_ops_dist_read_acquire(rdlm_obj_t *obj, uint64_t timeout_ns)
{
    return rdlm_global_rwlock_read_acquire(obj->ctx->dist, obj->local, obj->index,
                                           timeout_ns);
}

static rdlm_status_t rdlm_ops_dist_read_release(rdlm_obj_t *obj)
{
    return rdlm_global_rwlock_read_release(obj->ctx->dist, obj->local, obj->index);
}

static rdlm_status_t rdlm_ops_dist_write_acquire(rdlm_obj_t *obj, uint64_t timeout_ns,
                                                 uint64_t *token_p)
{
    return rdlm_global_rwlock_write_acquire(obj->ctx->dist, obj->local, obj->index,
                                            timeout_ns, token_p);
}

static rdlm_status_t rdlm_ops_dist_write_release(rdlm_obj_t *obj)
{
    return rdlm_global_rwlock_write_release(obj->ctx->dist, obj->local, obj->index, 0);
}

static rdlm_status_t rdlm_ops_dist_undo_dead(rdlm_obj_t *obj)
{
    return obj->kind == RDLM_KIND_LOCK
               ? rdlm_global_lock_release(obj->ctx->dist, obj->local, obj->index, 1)
               : rdlm_global_rwlock_write_release(obj->ctx->dist, obj->local, obj->index,
                                                  1);
}

static rdlm_status_t rdlm_ops_dist_fetch_add(rdlm_obj_t *obj, int64_t delta, int64_t *old_p)
{
    return rdlm_global_counter_fetch_add(obj->ctx->dist, obj->local, obj->index, delta,
                                         old_p);
}

static rdlm_status_t rdlm_ops_dist_counter_read(rdlm_obj_t *obj, int64_t *value_p)
{
    return rdlm_global_counter_read(obj->ctx->dist, obj->local, obj->index, value_p);
}

static rdlm_status_t rdlm_ops_dist_sem_acquire(rdlm_obj_t *obj, uint32_t k,
                                               uint64_t timeout_ns)
{
    return rdlm_global_sem_acquire(obj->ctx->dist, obj->local, obj->index, k, timeout_ns);
}

static rdlm_status_t rdlm_ops_dist_sem_release(rdlm_obj_t *obj, uint32_t k)
{
    return rdlm_global_sem_release(obj->ctx->dist, obj->local, obj->index, k);
}

static rdlm_status_t rdlm_ops_dist_sem_available(rdlm_obj_t *obj, uint32_t *available_p)
{
    return rdlm_global_sem_available(obj->ctx->dist, obj->local, obj->index, available_p);
}

static rdlm_status_t rdlm_ops_dist_barrier_wait(rdlm_obj_t *obj, uint64_t timeout_ns)
{
    return rdlm_global_nbarrier_wait(obj->ctx->dist, obj->local, obj->index, timeout_ns);
}

const rdlm_obj_ops_t rdlm_obj_dist_ops = {
    .keeps = rdlm_ops_dist_keeps,
    .open = rdlm_ops_dist_open,
    .close = rdlm_ops_local_close,
    .lock_acquire = rdlm_ops_dist_lock_acquire,
    .lock_release = rdlm_ops_dist_lock_release,
    .lock_home = rdlm_ops_dist_lock_home,
    .read_acquire = rdlm_ops_dist_read_acquire,
    .read_release = rdlm_ops_dist_read_release,
    .write_acquire = rdlm_ops_dist_write_acquire,
    .write_release = rdlm_ops_dist_write_release,
    .undo_dead = rdlm_ops_dist_undo_dead,
    .fetch_add = rdlm_ops_dist_fetch_add,
    .counter_read = rdlm_ops_dist_counter_read,
    .sem_acquire = rdlm_ops_dist_sem_acquire,
    .sem_release = rdlm_ops_dist_sem_release,
    .sem_available = rdlm_ops_dist_sem_available,
    .barrier_wait = rdlm_ops_dist_barrier_wait,
};
