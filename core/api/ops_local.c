/* The objects of a node-only context: core/local alone (obj_ops.h). */
#include "api.h"

int rdlm_ops_local_keeps(const struct rdlm_ctx *ctx, unsigned kind)
{
    (void)ctx;
    (void)kind;
    return 0; /* nothing beyond the segment is keyed by an entry */
}

rdlm_status_t rdlm_ops_local_open(rdlm_ctx_h ctx, unsigned kind, uint32_t index)
{
    (void)ctx;
    (void)kind;
    (void)index;
    return RDLM_OK;
}

void rdlm_ops_local_close(rdlm_obj_t *obj)
{
    (void)obj;
}

rdlm_status_t rdlm_ops_local_lock_acquire(rdlm_obj_t *obj, uint64_t timeout_ns,
                                          uint64_t *token_p)
{
    return rdlm_local_lock_acquire(obj->local, obj->index, timeout_ns, token_p);
}

rdlm_status_t rdlm_ops_local_lock_release(rdlm_obj_t *obj)
{
    return rdlm_local_lock_release(obj->local, obj->index);
}

void rdlm_ops_local_lock_home(const rdlm_obj_t *obj, rdlm_lock_info_t *info_p)
{
    (void)obj;
    info_p->home_node = -1;
    info_p->node_holds_global = 0;
}

rdlm_status_t rdlm_ops_local_read_acquire(rdlm_obj_t *obj, uint64_t timeout_ns)
{
    return rdlm_rwlock_local_read_acquire(obj->local, obj->index, timeout_ns);
}

rdlm_status_t rdlm_ops_local_read_release(rdlm_obj_t *obj)
{
    return rdlm_rwlock_local_read_release(obj->local, obj->index);
}

rdlm_status_t rdlm_ops_local_write_acquire(rdlm_obj_t *obj, uint64_t timeout_ns,
                                           uint64_t *token_p)
{
    return rdlm_rwlock_local_write_acquire(obj->local, obj->index, timeout_ns, token_p);
}

rdlm_status_t rdlm_ops_local_write_release(rdlm_obj_t *obj)
{
    return rdlm_rwlock_local_write_release(obj->local, obj->index);
}

rdlm_status_t rdlm_ops_local_undo_dead(rdlm_obj_t *obj)
{
    return obj->kind == RDLM_KIND_LOCK
               ? rdlm_local_lock_release_to(obj->local, obj->index, RDLM_OWNER_DIED)
               : rdlm_rwlock_local_write_release_to(obj->local, obj->index,
                                                    RDLM_OWNER_DIED);
}

rdlm_status_t rdlm_ops_local_fetch_add(rdlm_obj_t *obj, int64_t delta, int64_t *old_p)
{
    *old_p = rdlm_counter_local_fetch_add(obj->local, obj->index, delta);
    return RDLM_OK;
}

rdlm_status_t rdlm_ops_local_counter_read(rdlm_obj_t *obj, int64_t *value_p)
{
    *value_p = rdlm_counter_local_read(obj->local, obj->index);
    return RDLM_OK;
}

rdlm_status_t rdlm_ops_local_sem_acquire(rdlm_obj_t *obj, uint32_t k, uint64_t timeout_ns)
{
    return rdlm_sem_local_acquire(obj->local, obj->index, k, timeout_ns);
}

rdlm_status_t rdlm_ops_local_sem_release(rdlm_obj_t *obj, uint32_t k)
{
    rdlm_sem_local_release(obj->local, obj->index, k);
    return RDLM_OK;
}

rdlm_status_t rdlm_ops_local_sem_available(rdlm_obj_t *obj, uint32_t *available_p)
{
    *available_p = rdlm_sem_local_available(obj->local, obj->index);
    return RDLM_OK;
}

rdlm_status_t rdlm_ops_local_barrier_wait(rdlm_obj_t *obj, uint64_t timeout_ns)
{
    return rdlm_barrier_local_wait(obj->local, obj->index, timeout_ns);
}

const rdlm_obj_ops_t rdlm_obj_local_ops = {
    .keeps = rdlm_ops_local_keeps,
    .open = rdlm_ops_local_open,
    .close = rdlm_ops_local_close,
    .lock_acquire = rdlm_ops_local_lock_acquire,
    .lock_release = rdlm_ops_local_lock_release,
    .lock_home = rdlm_ops_local_lock_home,
    .read_acquire = rdlm_ops_local_read_acquire,
    .read_release = rdlm_ops_local_read_release,
    .write_acquire = rdlm_ops_local_write_acquire,
    .write_release = rdlm_ops_local_write_release,
    .undo_dead = rdlm_ops_local_undo_dead,
    .fetch_add = rdlm_ops_local_fetch_add,
    .counter_read = rdlm_ops_local_counter_read,
    .sem_acquire = rdlm_ops_local_sem_acquire,
    .sem_release = rdlm_ops_local_sem_release,
    .sem_available = rdlm_ops_local_sem_available,
    .barrier_wait = rdlm_ops_local_barrier_wait,
};
