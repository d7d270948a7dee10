/*
 * What backends share and callers do not see: the stub tables, the generation-checked
 * table of unpacked remote keys, the list of registered regions, and the statistics
 * increments.
 */
#ifndef RDLM_TL_INTERNAL_H
#define RDLM_TL_INTERNAL_H

#include <pthread.h>

#include "atomics.h"
#include "transport.h"

/* Stub tables: every entry returns RDLM_ERR_UNSUPPORTED (destroy: frees nothing). A
 * backend points a whole concern it lacks at one of these, and fills the entries it
 * lacks within a concern from the rdlm_tl_stub_* functions. */
extern const rdlm_tl_setup_ops_t rdlm_tl_stub_setup_ops;
extern const rdlm_tl_mem_ops_t rdlm_tl_stub_mem_ops;
extern const rdlm_tl_amo_ops_t rdlm_tl_stub_amo_ops;
extern const rdlm_tl_rma_ops_t rdlm_tl_stub_rma_ops;
extern const rdlm_tl_am_ops_t rdlm_tl_stub_am_ops;

/* Swap (bitwise_or 0: write value) or fetch-or (1: write old | value) as a loop of the
 * backend's cswap64, guessing 0 first and then the value last seen: linearisable (the
 * successful cswap is the operation), one round trip per interference, at most 2^24
 * tries (RDLM_ERR_TIMEOUT, logged). For a backend without the atomic, or a path of
 * one whose atomic is wrong. */
rdlm_status_t rdlm_tl_cas_loop(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey, uint64_t offset,
                               uint64_t value, int bitwise_or, uint64_t *old_p);

rdlm_status_t rdlm_tl_stub_query(rdlm_tl_ctx_h ctx, rdlm_tl_caps_t *caps_p);
unsigned rdlm_tl_stub_progress(rdlm_tl_ctx_h ctx);
rdlm_status_t rdlm_tl_stub_flush(rdlm_tl_ctx_h ctx, uint32_t peer);
void rdlm_tl_stub_destroy(rdlm_tl_ctx_h ctx);
int rdlm_tl_stub_peer_dead(rdlm_tl_ctx_h ctx, uint32_t peer);
rdlm_status_t rdlm_tl_stub_mem_reg(rdlm_tl_ctx_h ctx, void *addr, size_t len,
                                   rdlm_tl_mem_h *mem_p);
rdlm_status_t rdlm_tl_stub_mem_addr(rdlm_tl_ctx_h ctx, rdlm_tl_mem_h mem, void **addr_p,
                                    size_t *len_p);
rdlm_status_t rdlm_tl_stub_rkey_pack(rdlm_tl_ctx_h ctx, rdlm_tl_mem_h mem, void *buf,
                                     size_t buf_len, size_t *len_p);
rdlm_status_t rdlm_tl_stub_rkey_unpack(rdlm_tl_ctx_h ctx, uint32_t peer, const void *buf,
                                       size_t len, rdlm_tl_rkey_h *rkey_p);
rdlm_status_t rdlm_tl_stub_rkey_release(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey);
rdlm_status_t rdlm_tl_stub_mem_dereg(rdlm_tl_ctx_h ctx, rdlm_tl_mem_h mem);
rdlm_status_t rdlm_tl_stub_cswap64(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey, uint64_t offset,
                                   uint64_t compare, uint64_t swap, uint64_t *old_p);
rdlm_status_t rdlm_tl_stub_fadd64(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey, uint64_t offset,
                                  uint64_t add, uint64_t *old_p);
rdlm_status_t rdlm_tl_stub_swap64(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey, uint64_t offset,
                                  uint64_t value, uint64_t *old_p);
rdlm_status_t rdlm_tl_stub_for64(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey, uint64_t offset,
                                 uint64_t bits, uint64_t *old_p);
rdlm_status_t rdlm_tl_stub_fadd64_post(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey,
                                       uint64_t offset, uint64_t add);
rdlm_status_t rdlm_tl_stub_put(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey, uint64_t offset,
                               const void *buf, size_t len);
rdlm_status_t rdlm_tl_stub_get(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey, uint64_t offset,
                               void *buf, size_t len);
rdlm_status_t rdlm_tl_stub_am_set_handler(rdlm_tl_ctx_h ctx, unsigned id,
                                          rdlm_tl_am_handler_func_t func, void *arg);
/** sleep without an event fd: one sched_yield. */
void rdlm_tl_stub_sleep(rdlm_tl_ctx_h ctx, uint64_t timeout_ns, int (*done)(void *arg),
                        void *arg);
rdlm_status_t rdlm_tl_stub_am_send(rdlm_tl_ctx_h ctx, uint32_t peer, unsigned id,
                                   const void *data, size_t len);

/* ---- unpacked remote keys ---------------------------------------------------------- */
/* A handle is (generation << 32 | index + 1). A slot's generation is odd while in use
 * and is bumped on release, so a released handle never matches again (until 2^31
 * reuses of one slot). */

typedef struct rdlm_tl_rkey_slot {
    rdlm_atomic_u32_t gen;
    uint32_t peer;
    uint64_t base;  /* remote virtual address of offset 0 */
    uint64_t len;   /* bytes registered */
    void *backend;  /* the backend's unpacked key (ucp_rkey_h, verbs rkey...) */
} rdlm_tl_rkey_slot_t;

typedef struct rdlm_tl_rkey_table {
    rdlm_tl_rkey_slot_t *slots;
    uint32_t capacity;
    pthread_mutex_t lock; /* add / remove */
} rdlm_tl_rkey_table_t;

rdlm_status_t rdlm_tl_rkey_table_init(rdlm_tl_rkey_table_t *t, uint32_t capacity);
/** Calls release(backend, arg) for every slot still in use, then frees. */
void rdlm_tl_rkey_table_fini(rdlm_tl_rkey_table_t *t, void (*release)(void *, void *),
                             void *arg);
rdlm_status_t rdlm_tl_rkey_table_add(rdlm_tl_rkey_table_t *t, uint32_t peer, uint64_t base,
                                     uint64_t len, void *backend, rdlm_tl_rkey_h *rkey_p);
/** Invalidate h; *backend_p receives the backend key to free. BAD_HANDLE if stale. */
rdlm_status_t rdlm_tl_rkey_table_remove(rdlm_tl_rkey_table_t *t, rdlm_tl_rkey_h h,
                                        void **backend_p);

/** Hot path: the slot of h if h is live and [offset, offset + len) lies inside the
 *  region and is aligned to align bytes. */
static inline rdlm_status_t rdlm_tl_rkey_lookup(rdlm_tl_rkey_table_t *t, rdlm_tl_rkey_h h,
                                                uint64_t offset, uint64_t len,
                                                uint64_t align,
                                                rdlm_tl_rkey_slot_t **slot_p)
{
    uint32_t idx = (uint32_t)h - 1u;
    rdlm_tl_rkey_slot_t *s;

    if (idx >= t->capacity)
        return RDLM_ERR_BAD_HANDLE;
    s = &t->slots[idx];
    if (((h >> 32) & 1u) == 0 || rdlm_load(&s->gen, RDLM_ACQUIRE) != (uint32_t)(h >> 32))
        return RDLM_ERR_BAD_HANDLE;
    if (offset > s->len || len > s->len - offset || (offset & (align - 1)) != 0)
        return RDLM_ERR_INVALID_ARG;
    *slot_p = s;
    return RDLM_OK;
}

/* ---- registered regions ------------------------------------------------------------ */
/* Every backend's struct rdlm_tl_mem begins with an rdlm_tl_region_t: where the region
 * is, and its place in the context's list of regions, which destroy walks to release
 * those the caller did not deregister. The list is guarded by a lock of the context. */

typedef struct rdlm_tl_region {
    void *addr;
    size_t len;
    struct rdlm_tl_region *prev, *next;
} rdlm_tl_region_t;

/** The handle of the backend's region that begins with r. */
static inline rdlm_tl_mem_h rdlm_tl_region_mem(rdlm_tl_region_t *r)
{
    return (rdlm_tl_mem_h)(void *)r;
}

/** Records where r is (addr, len bytes) and puts it at the head of *head, under lock. */
void rdlm_tl_region_add(rdlm_tl_region_t **head, pthread_mutex_t *lock, rdlm_tl_region_t *r,
                        void *addr, size_t len);
/** Takes r out of *head, under lock. */
void rdlm_tl_region_remove(rdlm_tl_region_t **head, pthread_mutex_t *lock,
                           rdlm_tl_region_t *r);
/** The mem ops' addr entry of every backend: *addr_p and *len_p (each if not NULL) of a
 *  region. BAD_HANDLE if mem is NULL. */
rdlm_status_t rdlm_tl_region_addr(rdlm_tl_ctx_h ctx, rdlm_tl_mem_h mem, void **addr_p,
                                  size_t *len_p);

/* ---- statistics --------------------------------------------------------------------- */

/* A relaxed load and store, not a read-modify-write: a locked add costs a sizeable
 * share of a shared-memory remote atomic (about 60 ns here). Counts stay exact while
 * one thread at a time uses the context; with concurrent callers (THREAD_MULTI, the
 * progress thread's progress count) an increment can be lost, never torn. */
static inline void rdlm_tl_stat_add(uint64_t *counter, uint64_t n)
{
    __atomic_store_n(counter, __atomic_load_n(counter, __ATOMIC_RELAXED) + n,
                     __ATOMIC_RELAXED);
}

#endif
