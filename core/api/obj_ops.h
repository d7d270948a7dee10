/*
 * What a context's objects do, picked once when the context is made instead of
 * branching on its kind in every call: the node-local layer (ops_local.c), the
 * cross-node layer (ops_dist.c), or node-local objects whose exclusive locks also take
 * the service's home (ctx_svc.c). ctx->ops starts as the node-local table
 * (rdlm_ctx_alloc); rdlm_ctx_create_dist and rdlm_ctx_svc_open replace it before the
 * context is returned to the caller.
 *
 * Every op takes a handle that passed its checks (open, of the op's kind, lease
 * valid for the acquires) and returns the layer's status; api_*.c add the lease
 * handling around it. No op is NULL.
 */
#ifndef RDLM_OBJ_OPS_H
#define RDLM_OBJ_OPS_H

#include <stdint.h>

#include <rdlm.h>

struct rdlm_ctx;
struct rdlm_obj;

typedef struct rdlm_obj_ops {
    /** 1 if the table entries of kind (without order bits) that ctx opens are never
     *  retired (rdlm_table_open's keep): the layer keys state beyond the segment by
     *  them. */
    int (*keeps)(const struct rdlm_ctx *ctx, unsigned kind);
    /** After the table entry index of kind (without order bits) was found or made in
     *  ctx, before a handle is made for it. */
    rdlm_status_t (*open)(struct rdlm_ctx *ctx, unsigned kind, uint32_t index);
    /** A handle is being closed (what it held was released), before its table entry
     *  is. Non-blocking. */
    void (*close)(struct rdlm_obj *obj);
    rdlm_status_t (*lock_acquire)(struct rdlm_obj *obj, uint64_t timeout_ns,
                                  uint64_t *token_p);
    rdlm_status_t (*lock_release)(struct rdlm_obj *obj);
    /** rdlm_lock_info_t's home_node and node_holds_global. */
    void (*lock_home)(const struct rdlm_obj *obj, rdlm_lock_info_t *info_p);
    rdlm_status_t (*read_acquire)(struct rdlm_obj *obj, uint64_t timeout_ns);
    rdlm_status_t (*read_release)(struct rdlm_obj *obj);
    rdlm_status_t (*write_acquire)(struct rdlm_obj *obj, uint64_t timeout_ns,
                                   uint64_t *token_p);
    rdlm_status_t (*write_release)(struct rdlm_obj *obj);
    /** Give up an exclusive hold (a lock, or an rwlock's write side) whose acquire was
     *  granted RDLM_OWNER_DEAD and is undone because the context's lease was lost
     *  before it returned (api_lock.c): as a holder that died would, so that the next
     *  holder gets RDLM_OWNER_DEAD (nobody repaired what the dead one left). */
    rdlm_status_t (*undo_dead)(struct rdlm_obj *obj);
    rdlm_status_t (*fetch_add)(struct rdlm_obj *obj, int64_t delta, int64_t *old_p);
    rdlm_status_t (*counter_read)(struct rdlm_obj *obj, int64_t *value_p);
    rdlm_status_t (*sem_acquire)(struct rdlm_obj *obj, uint32_t k, uint64_t timeout_ns);
    rdlm_status_t (*sem_release)(struct rdlm_obj *obj, uint32_t k);
    rdlm_status_t (*sem_available)(struct rdlm_obj *obj, uint32_t *available_p);
    rdlm_status_t (*barrier_wait)(struct rdlm_obj *obj, uint64_t timeout_ns);
} rdlm_obj_ops_t;

/** Objects of a node-only context (core/local). */
extern const rdlm_obj_ops_t rdlm_obj_local_ops;
/** Objects of a distributed context (core/global). */
extern const rdlm_obj_ops_t rdlm_obj_dist_ops;

/* The node-local ops one by one, for tables that keep most of them (ctx_svc.c). A
 * node-only lock has no home: lock_home says home_node -1, node_holds_global 0. */
int rdlm_ops_local_keeps(const struct rdlm_ctx *ctx, unsigned kind);
rdlm_status_t rdlm_ops_local_open(struct rdlm_ctx *ctx, unsigned kind, uint32_t index);
void rdlm_ops_local_close(struct rdlm_obj *obj);
rdlm_status_t rdlm_ops_local_lock_acquire(struct rdlm_obj *obj, uint64_t timeout_ns,
                                          uint64_t *token_p);
rdlm_status_t rdlm_ops_local_lock_release(struct rdlm_obj *obj);
void rdlm_ops_local_lock_home(const struct rdlm_obj *obj, rdlm_lock_info_t *info_p);
rdlm_status_t rdlm_ops_local_read_acquire(struct rdlm_obj *obj, uint64_t timeout_ns);
rdlm_status_t rdlm_ops_local_read_release(struct rdlm_obj *obj);
rdlm_status_t rdlm_ops_local_write_acquire(struct rdlm_obj *obj, uint64_t timeout_ns,
                                           uint64_t *token_p);
rdlm_status_t rdlm_ops_local_write_release(struct rdlm_obj *obj);
rdlm_status_t rdlm_ops_local_undo_dead(struct rdlm_obj *obj);
rdlm_status_t rdlm_ops_local_fetch_add(struct rdlm_obj *obj, int64_t delta, int64_t *old_p);
rdlm_status_t rdlm_ops_local_counter_read(struct rdlm_obj *obj, int64_t *value_p);
rdlm_status_t rdlm_ops_local_sem_acquire(struct rdlm_obj *obj, uint32_t k,
                                         uint64_t timeout_ns);
rdlm_status_t rdlm_ops_local_sem_release(struct rdlm_obj *obj, uint32_t k);
rdlm_status_t rdlm_ops_local_sem_available(struct rdlm_obj *obj, uint32_t *available_p);
rdlm_status_t rdlm_ops_local_barrier_wait(struct rdlm_obj *obj, uint64_t timeout_ns);

#endif
