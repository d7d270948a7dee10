/*
 * The raw verbs baseline of rdlm-mpi-lock-bench's uncontended mode: the floor of an
 * acquire + release over an RDMA adapter's atomics, with none of rdlm's code. Two
 * processes, each with its own verbs context on the first device (the one rdlm's
 * verbs backend takes), port 1, routed by the GID rdlm's backend connects by (its
 * first IPv4 address, RoCE v2 where sysfs tells; index 0 on InfiniBand), so that both
 * take the same path; one RC queue pair each, connected to the other's by hand
 * (RESET -> INIT -> RTR -> RTS, remote atomics allowed, one outstanding atomic each
 * way); the target registers one 8-byte word with
 * IBV_ACCESS_REMOTE_ATOMIC; the initiator posts IBV_WR_ATOMIC_CMP_AND_SWP on that
 * word and polls its completion queue until the result is back: one signalled
 * atomic at a time, blocking, as rdlm's verbs backend completes its own. The target's
 * CPU does nothing (the adapter answers).
 *
 *   both                          target                       initiator
 *   rdlm_bench_ibv_open           (exchange the records: the caller's messages)
 *   rdlm_bench_ibv_connect(peer's record)
 *                                 idle                         rdlm_bench_ibv_cswap
 *   rdlm_bench_ibv_close (after the caller's barrier)
 *
 * Results are in host byte order (mlx5 answers atomics big-endian: normalised by the
 * value the word is known to hold after open, as rdlm's verbs backend does).
 * Errors: -1 with why filled (the caller reports it).
 */
#ifndef RDLM_BENCH_RAW_VERBS_H
#define RDLM_BENCH_RAW_VERBS_H

#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

/** What one side tells the other (sent as bytes; peers share a byte order). */
typedef struct rdlm_bench_ibv_rec {
    uint64_t addr; /**< the word (target) or 0 */
    uint32_t rkey; /**< its remote key (target) or 0 */
    uint32_t qpn;
    uint32_t psn;
    uint16_t lid;
    uint8_t link_layer;
    uint8_t mtu;
    uint8_t gid[16];
} rdlm_bench_ibv_rec_t;

typedef struct rdlm_bench_ibv {
    struct ibv_context *dev;
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    struct ibv_qp *qp;
    struct ibv_mr *word_mr;  /**< the 8-byte word (target's is the remote one) */
    struct ibv_mr *reply_mr; /**< the initiator's result buffer */
    uint64_t *word;
    uint64_t *reply;
    struct ibv_port_attr port;
    int swap_results; /**< 1 once the adapter is found to answer big-endian */
    int gid_index;    /**< the GID routed by */
    rdlm_bench_ibv_rec_t self;
    rdlm_bench_ibv_rec_t peer;
} rdlm_bench_ibv_t;

/** 1 if a verbs device is present (the baseline can run), else 0. */
int rdlm_bench_ibv_available(void);

/** Device, protection domain, CQ, QP (INIT), the zeroed word; fills r->self. */
int rdlm_bench_ibv_open(rdlm_bench_ibv_t *r, char *why, size_t whylen);

/** QP to RTR and RTS towards peer (its record, as it filled its self). */
int rdlm_bench_ibv_connect(rdlm_bench_ibv_t *r, const rdlm_bench_ibv_rec_t *peer, char *why,
                           size_t whylen);

/** Initiator: compare-and-swap the peer's word (compare -> swap), blocking until the
 *  completion; *old_p the word's value before. */
int rdlm_bench_ibv_cswap(rdlm_bench_ibv_t *r, uint64_t compare, uint64_t swap,
                         uint64_t *old_p, char *why, size_t whylen);

/** Everything open released; a zeroed r is fine. */
void rdlm_bench_ibv_close(rdlm_bench_ibv_t *r);

#endif
