/*
 * The verbs backend's context, shared by verbs.c (open, completion, setup ops),
 * verbs_exchange.c (QPs connected by hand: the bootstrap exchange and the loopback QP),
 * verbs_cm.c (QPs connected by librdmacm) and verbs_ops.c (memory, atomics, put/get).
 *
 * Run on soft-RoCE (rdma_rxe, in the VM of tests/rxe/rxe_vm.sh), never on an RDMA
 * adapter: see verbs.c.
 */
#ifndef RDLM_TL_VERBS_INTERNAL_H
#define RDLM_TL_VERBS_INTERNAL_H

#include <infiniband/verbs.h>
#include <pthread.h>
#include <rdma/rdma_cma.h>

#include "config.h"
#include "tl_internal.h"

/* Scratch region (registered with every access flag), in 8-byte words:
 *   [0] result of the one fetching atomic in flight (ops are serialised by ctx->lock)
 *   [1] discarded result of posted fetch-adds (written concurrently, never read)
 *   [2] target word of the byte-order probe at open (loopback atomics)
 *   [8 .. 8 + RDLM_VERBS_POSTS) results of the posted compare-and-swaps in flight
 * then, from byte RDLM_VERBS_BOUNCE_OFF, the bounce buffer for put/get, because the
 * caller's buffers of put/get are not registered. */
#define RDLM_VERBS_RES_WORD 0
#define RDLM_VERBS_DISCARD_WORD 1
#define RDLM_VERBS_PROBE_WORD 2
#define RDLM_VERBS_POST_WORD 8
#define RDLM_VERBS_POSTS 16u
#define RDLM_VERBS_BOUNCE_OFF 256u
#define RDLM_VERBS_BOUNCE_LEN (64u * 1024u)

/** Access of every memory region and QP: remote atomics, reads and writes. */
#define RDLM_VERBS_ACCESS                                                                  \
    (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |           \
     IBV_ACCESS_REMOTE_ATOMIC)

/** Send-queue depth per QP (capped by the device's max_qp_wr and by max_cqe / size). */
#define RDLM_VERBS_SQ_DEPTH 64u
/** Bound for one blocking wait on the CQ (ms); past it: RDLM_ERR_TIMEOUT and the QP is
 *  moved to the error state. */
#define RDLM_VERBS_TIMEOUT_MS 10000u

typedef struct rdlm_verbs_peer {
    struct ibv_qp *qp;
    struct rdma_cm_id *cm_id; /* connected by librdmacm: the id owns qp; else NULL */
    uint32_t outstanding;     /* signalled WRs posted and not yet completed */
    rdlm_status_t err;        /* RDLM_OK, or why the QP is unusable (sticky) */
} rdlm_verbs_peer_t;

struct rdlm_tl_mem {
    rdlm_tl_region_t region; /* first: addr, len, the context's list */
    struct ibv_mr *mr;
    int allocated; /* reg(NULL): freed at dereg */
};

/* A posted compare-and-swap in flight: its WR's id (0: the slot is free) and op. */
typedef struct rdlm_verbs_posted {
    uint64_t wr_id;
    rdlm_tl_op_t *op;
} rdlm_verbs_posted_t;

typedef struct rdlm_verbs_ctx {
    rdlm_tl_ctx_t super;
    rdlm_tl_bootstrap_t boot;
    struct ibv_context *dev;      /* with cm_devs: librdmacm's context of the device */
    struct ibv_context **cm_devs; /* RDLM_VERBS_CONNECT=cm: rdma_get_devices(); else NULL */
    struct rdma_event_channel *cm_channel;
    struct rdma_cm_id *cm_listen;
    char devname[IBV_SYSFS_NAME_MAX];
    struct ibv_device_attr attr;
    struct ibv_port_attr port_attr;
    rdlm_verbs_connect_t connect; /* RDLM_VERBS_CONNECT */
    uint8_t port;
    int gid_index;
    union ibv_gid gid;
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    uint32_t sq_depth;
    uint8_t init_rd_atom;     /* our max_rd_atomic ceiling (max_qp_init_rd_atom, >= 1) */
    uint8_t resp_rd_atom;     /* our max_dest_rd_atomic (max_qp_rd_atom, >= 1) */
    rdlm_verbs_peer_t *peers; /* size entries; peers[rank] is the loopback QP */
    uint64_t *scratch;
    struct ibv_mr *scratch_mr;
    uint32_t seq;
    int swap_results; /* 1: atomic results arrive byte-swapped (big-endian) */
    int loopback;     /* 1: the loopback QP reached RTS */
    rdlm_tl_atomic_domain_t domain;
    rdlm_tl_thread_mode_t thread_mode;
    pthread_mutex_t lock; /* every post and every CQ poll; the region list; posts */
    rdlm_verbs_posted_t posts[RDLM_VERBS_POSTS];
    uint32_t posts_n;
    /* The progress thread (verbs_progress.c): the descriptor that wakes it (a post
     * while it sleeps long, or destroy), its long sleep (under lock), the stop flag. */
    int stop_fd;
    int thread_sleeps_long;
    pthread_t thread;
    int thread_running;
    rdlm_atomic_u32_t stop;
    rdlm_tl_rkey_table_t rkeys;
    rdlm_tl_region_t *mems;
} rdlm_verbs_ctx_t;

/* verbs.c */
/** The attributes of every RC QP of c (send depth, the one CQ, signalled WRs). */
void rdlm_verbs_qp_init_attr(const rdlm_verbs_ctx_t *c, struct ibv_qp_init_attr *qa_p);

/* verbs.c: with ctx->lock held. */
rdlm_status_t rdlm_verbs_post(rdlm_verbs_ctx_t *c, uint32_t peer, struct ibv_send_wr *wr,
                              uint64_t *wr_id_p);
rdlm_status_t rdlm_verbs_wait(rdlm_verbs_ctx_t *c, uint32_t peer, uint64_t wr_id);
rdlm_status_t rdlm_verbs_drain(rdlm_verbs_ctx_t *c, uint32_t peer);
uint64_t rdlm_verbs_result(const rdlm_verbs_ctx_t *c, uint64_t raw);

/* verbs.c: with ctx->lock held. Poll the CQ once (up to 16 completions), finishing
 * posted CASes; *found_p set if wr_id `want` completed, its status in *want_st_p. The
 * number of completions, or -1 if ibv_poll_cq failed. */
int rdlm_verbs_poll(rdlm_verbs_ctx_t *c, uint64_t want, int *found_p,
                    rdlm_status_t *want_st_p);

/* verbs_progress.c: the posted CASes (with ctx->lock held) and the progress thread. */
/** Slot i (free) now tracks WR wr_id for op; wakes the progress thread from its long
 *  sleep. */
void rdlm_verbs_posts_track(rdlm_verbs_ctx_t *c, uint32_t i, uint64_t wr_id,
                            rdlm_tl_op_t *op);
/** WR wr_id completed with st: if a slot tracks it, its op is finished (old, status,
 *  done) and the slot freed. */
void rdlm_verbs_post_done(rdlm_verbs_ctx_t *c, uint64_t wr_id, rdlm_status_t st);
/** Finish with st every tracked op to peer (RDLM_TL_PEER_ALL: every one). */
void rdlm_verbs_posts_fail(rdlm_verbs_ctx_t *c, uint32_t peer, rdlm_status_t st);
/** Start the thread (open, once the QPs are connected): RDLM_OK, or an error (logged;
 *  the context runs without it). thread_running says if it runs. */
rdlm_status_t rdlm_verbs_thread_start(rdlm_verbs_ctx_t *c);
/** Stop and join it, if it runs. */
void rdlm_verbs_thread_stop(rdlm_verbs_ctx_t *c);

/* verbs_exchange.c (open: after the PD, CQ and scratch region exist) */
/** Collective: a QP per peer and to ourselves, records exchanged with one bootstrap
 *  allgather, every QP moved INIT -> RTR -> RTS by hand. */
rdlm_status_t rdlm_verbs_exchange_wireup(rdlm_verbs_ctx_t *c);
/** Local: the QP to ourselves (peers[rank]), connected to itself by hand. */
rdlm_status_t rdlm_verbs_loopback_wireup(rdlm_verbs_ctx_t *c);

/* verbs_cm.c */
/** Set c->dev to librdmacm's context of the device called c->devname (rdma_cm ids are
 *  bound to librdmacm's own contexts: QPs and PDs must live there). */
rdlm_status_t rdlm_verbs_cm_device(rdlm_verbs_ctx_t *c);
/** Collective: connect every pair of distinct ranks with librdmacm, listening on addr
 *  (IPv4 text; "" = from the GID table). Bounded by RDLM_VERBS_TIMEOUT_MS. */
rdlm_status_t rdlm_verbs_cm_wireup(rdlm_verbs_ctx_t *c, const char *addr);
/** Destroy the CM-owned QPs (clearing their peers[].qp), the ids and the channel. */
void rdlm_verbs_cm_free(rdlm_verbs_ctx_t *c);

/* verbs_ops.c */
extern const rdlm_tl_mem_ops_t rdlm_verbs_mem_ops;
extern const rdlm_tl_amo_ops_t rdlm_verbs_amo_ops;
extern const rdlm_tl_rma_ops_t rdlm_verbs_rma_ops;
rdlm_status_t rdlm_verbs_mem_dereg(rdlm_tl_ctx_h ctx, rdlm_tl_mem_h mem);
rdlm_status_t rdlm_verbs_atomic(rdlm_verbs_ctx_t *c, uint32_t peer, enum ibv_wr_opcode op,
                                uint64_t raddr, uint32_t rkey, uint64_t compare_add,
                                uint64_t swap, uint64_t *old_p);

#endif
