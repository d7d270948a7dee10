/*
 * The verbs backend's context, shared by verbs.c (open, wire-up, completion, setup ops)
 * and verbs_ops.c (memory, atomics, put/get).
 *
 * UNTESTED: no RDMA device (and no soft-RoCE) exists on the development machines, so
 * everything past device discovery has been compiled and reviewed, never run.
 */
#ifndef RDLM_TL_VERBS_INTERNAL_H
#define RDLM_TL_VERBS_INTERNAL_H

#include <infiniband/verbs.h>
#include <pthread.h>

#include "tl_internal.h"

/* Scratch region (registered with every access flag), in 8-byte words:
 *   [0] result of the one fetching atomic in flight (ops are serialised by ctx->lock)
 *   [1] discarded result of posted fetch-adds (written concurrently, never read)
 *   [2] target word of the byte-order probe at open (loopback atomics)
 * then, from byte RDLM_VERBS_BOUNCE_OFF, the bounce buffer for put/get, because the
 * caller's buffers of put/get are not registered. */
#define RDLM_VERBS_RES_WORD 0
#define RDLM_VERBS_DISCARD_WORD 1
#define RDLM_VERBS_PROBE_WORD 2
#define RDLM_VERBS_BOUNCE_OFF 64u
#define RDLM_VERBS_BOUNCE_LEN (64u * 1024u)

/** Send-queue depth per QP (capped by the device's max_qp_wr and by max_cqe / size). */
#define RDLM_VERBS_SQ_DEPTH 64u
/** Bound for one blocking wait on the CQ (ms); past it: RDLM_ERR_TIMEOUT and the QP is
 *  moved to the error state. */
#define RDLM_VERBS_TIMEOUT_MS 10000u

typedef struct rdlm_verbs_peer {
    struct ibv_qp *qp;
    uint32_t outstanding; /* signalled WRs posted and not yet completed */
    rdlm_status_t err;    /* RDLM_OK, or why the QP is unusable (sticky) */
} rdlm_verbs_peer_t;

struct rdlm_tl_mem {
    struct ibv_mr *mr;
    void *addr;
    size_t len;
    int allocated;                   /* reg(NULL): freed at dereg */
    struct rdlm_tl_mem *prev, *next; /* the context's regions, released at destroy */
};

typedef struct rdlm_verbs_ctx {
    rdlm_tl_ctx_t super;
    rdlm_tl_bootstrap_t boot;
    struct ibv_context *dev;
    char devname[IBV_SYSFS_NAME_MAX];
    struct ibv_device_attr attr;
    struct ibv_port_attr port_attr;
    uint8_t port;
    int gid_index;
    union ibv_gid gid;
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    uint32_t sq_depth;
    uint8_t init_rd_atom; /* our max_rd_atomic ceiling (max_qp_init_rd_atom, >= 1) */
    uint8_t resp_rd_atom; /* our max_dest_rd_atomic (max_qp_rd_atom, >= 1) */
    rdlm_verbs_peer_t *peers; /* size entries; peers[rank] is the loopback QP */
    uint64_t *scratch;
    struct ibv_mr *scratch_mr;
    uint32_t seq;
    int swap_results; /* 1: atomic results arrive byte-swapped (big-endian) */
    int loopback;     /* 1: the loopback QP reached RTS */
    rdlm_tl_atomic_domain_t domain;
    rdlm_tl_thread_mode_t thread_mode;
    pthread_mutex_t lock; /* every post and every CQ poll; the region list */
    rdlm_tl_rkey_table_t rkeys;
    struct rdlm_tl_mem *mems;
} rdlm_verbs_ctx_t;

/* verbs.c: with ctx->lock held. */
rdlm_status_t rdlm_verbs_post(rdlm_verbs_ctx_t *c, uint32_t peer, struct ibv_send_wr *wr,
                              uint64_t *wr_id_p);
rdlm_status_t rdlm_verbs_wait(rdlm_verbs_ctx_t *c, uint32_t peer, uint64_t wr_id);
rdlm_status_t rdlm_verbs_drain(rdlm_verbs_ctx_t *c, uint32_t peer);
uint64_t rdlm_verbs_result(const rdlm_verbs_ctx_t *c, uint64_t raw);

/* verbs_ops.c */
extern const rdlm_tl_mem_ops_t rdlm_verbs_mem_ops;
extern const rdlm_tl_amo_ops_t rdlm_verbs_amo_ops;
extern const rdlm_tl_rma_ops_t rdlm_verbs_rma_ops;
rdlm_status_t rdlm_verbs_mem_dereg(rdlm_tl_ctx_h ctx, rdlm_tl_mem_h mem);
rdlm_status_t rdlm_verbs_atomic(rdlm_verbs_ctx_t *c, uint32_t peer, enum ibv_wr_opcode op,
                                uint64_t raddr, uint32_t rkey, uint64_t compare_add,
                                uint64_t swap, uint64_t *old_p);

#endif
