/*
 * The verbs backend's queue pairs connected by hand: every QP with
 * RDLM_VERBS_CONNECT=exchange, and the QP to ourselves (loopback) in both modes.
 *
 * Exchange: one RC QP per peer and one to ourselves, all created at open, because the
 * only out-of-band channel is the bootstrap, whose collectives exist only at open and
 * destroy. QPN, LID, GID, PSN, MTU and the outstanding-atomic limits go through one
 * bootstrap allgather; QPs go RESET -> INIT -> RTR -> RTS with ibv_modify_qp, with
 * IBV_ACCESS_REMOTE_ATOMIC (and read/write) at INIT and max_dest_rd_atomic /
 * max_rd_atomic from the device limits (>= 1: 0 would refuse every atomic and read).
 *
 * Loopback: librdmacm cannot connect a QP to itself (a CM connection joins two QPs), so
 * the cm path connects the QP to ourselves here too, from our own record.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "verbs_internal.h"

/* INIT -> RTR attempts while the kernel cannot resolve the peer's GID yet. */
#define RDLM_VERBS_RTR_TRIES 10
#define RDLM_VERBS_RTR_PAUSE_US 200000

/* What each process sends for each peer through the allgather: fixed-size fields,
 * host byte order (peers of one job are assumed to share it). */
typedef struct rdlm_verbs_conn {
    uint32_t qpn;
    uint32_t psn;
    uint16_t lid;
    uint8_t link_layer;
    uint8_t mtu;          /* enum ibv_mtu of the sender's port */
    uint8_t resp_rd_atom; /* sender's max_dest_rd_atomic */
    uint8_t init_rd_atom; /* sender's max_rd_atomic ceiling */
    uint8_t pad[2];
    uint8_t gid[16];
} rdlm_verbs_conn_t;

/* Our RC QP to peer, moved to INIT with remote read/write/atomic access. */
static rdlm_status_t rdlm_verbs_qp_create(rdlm_verbs_ctx_t *c, uint32_t peer)
{
    struct ibv_qp_init_attr qa;
    struct ibv_qp_attr a = {
        .qp_state = IBV_QPS_INIT,
        .pkey_index = 0,
        .port_num = c->port,
        .qp_access_flags = RDLM_VERBS_ACCESS,
    };

    rdlm_verbs_qp_init_attr(c, &qa);
    c->peers[peer].qp = ibv_create_qp(c->pd, &qa);
    if (c->peers[peer].qp == NULL) {
        rdlm_error("verbs: ibv_create_qp for rank %u: %s", peer, strerror(errno));
        return RDLM_ERR_NO_RESOURCE;
    }
    if (ibv_modify_qp(c->peers[peer].qp, &a,
                      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                          IBV_QP_ACCESS_FLAGS) != 0) {
        rdlm_error("verbs: QP for rank %u: RESET -> INIT: %s", peer, strerror(errno));
        return RDLM_ERR_IO;
    }
    return RDLM_OK;
}

static uint32_t rdlm_verbs_psn(uint32_t qpn, uint32_t rank)
{
    return (qpn * 2654435761u + rank) & 0xffffffu;
}

/* What we tell peer about our QP to it. The PSN peer must expect from us is the
 * sq_psn rdlm_verbs_connect sets. */
static void rdlm_verbs_conn_record(const rdlm_verbs_ctx_t *c, uint32_t peer,
                                   rdlm_verbs_conn_t *rec_p)
{
    *rec_p = (rdlm_verbs_conn_t){
        .qpn = c->peers[peer].qp->qp_num,
        .psn = rdlm_verbs_psn(c->peers[peer].qp->qp_num, peer),
        .lid = c->port_attr.lid,
        .link_layer = c->port_attr.link_layer,
        .mtu = (uint8_t)c->port_attr.active_mtu,
        .resp_rd_atom = c->resp_rd_atom,
        .init_rd_atom = c->init_rd_atom,
    };
    memcpy(rec_p->gid, c->gid.raw, 16);
}

/* INIT -> RTR -> RTS of our QP to peer, given what peer sent for us. */
static rdlm_status_t rdlm_verbs_connect(rdlm_verbs_ctx_t *c, uint32_t peer,
                                        const rdlm_verbs_conn_t *r)
{
    struct ibv_qp *qp = c->peers[peer].qp;
    enum ibv_mtu mtu = c->port_attr.active_mtu < (enum ibv_mtu)r->mtu
                           ? c->port_attr.active_mtu
                           : (enum ibv_mtu)r->mtu;
    uint8_t rd = c->init_rd_atom < r->resp_rd_atom ? c->init_rd_atom : r->resp_rd_atom;
    struct ibv_qp_attr a = {
        .qp_state = IBV_QPS_RTR,
        .path_mtu = mtu,
        .dest_qp_num = r->qpn,
        .rq_psn = r->psn,
        .max_dest_rd_atomic = c->resp_rd_atom, /* >= 1: 0 would refuse every atomic */
        .min_rnr_timer = 12,
        .ah_attr = {.dlid = r->lid, .sl = 0, .src_path_bits = 0, .port_num = c->port},
    };

    /* RoCE has no LIDs: always route by GID. On IB a GRH is needed only across
     * subnets; used whenever the peer has no LID. */
    if (r->link_layer == IBV_LINK_LAYER_ETHERNET || r->lid == 0) {
        a.ah_attr.is_global = 1;
        memcpy(a.ah_attr.grh.dgid.raw, r->gid, 16);
        a.ah_attr.grh.sgid_index = (uint8_t)c->gid_index;
        a.ah_attr.grh.hop_limit = 64;
    }
    /* On RoCE the kernel resolves the destination GID to a MAC address here, and
     * answers ETIMEDOUT while it cannot yet (seen: a link-local GID still tentative
     * just after the interface came up); the QP stays in INIT, so try again. */
    for (int tries = 1;; tries++) {
        if (ibv_modify_qp(qp, &a,
                          IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                              IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
                              IBV_QP_MIN_RNR_TIMER) == 0)
            break;
        if (errno != ETIMEDOUT || tries == RDLM_VERBS_RTR_TRIES) {
            rdlm_error("verbs: QP to rank %u: INIT -> RTR: %s", peer, strerror(errno));
            return RDLM_ERR_IO;
        }
        rdlm_info("verbs: QP to rank %u: INIT -> RTR timed out resolving its address; "
                  "trying again (%d of %d)",
                  peer, tries + 1, RDLM_VERBS_RTR_TRIES);
        usleep(RDLM_VERBS_RTR_PAUSE_US);
    }
    a = (struct ibv_qp_attr){
        .qp_state = IBV_QPS_RTS,
        .timeout = 14, /* 4.096 us * 2^14 = 67 ms per try */
        .retry_cnt = 7,
        .rnr_retry = 7,
        .sq_psn = rdlm_verbs_psn(qp->qp_num, peer),
        .max_rd_atomic = rd < 1 ? 1 : rd, /* >= 1: 0 would refuse every atomic */
    };
    if (ibv_modify_qp(qp, &a,
                      IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                          IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC) != 0) {
        rdlm_error("verbs: QP to rank %u: RTR -> RTS: %s", peer, strerror(errno));
        return RDLM_ERR_IO;
    }
    return RDLM_OK;
}

rdlm_status_t rdlm_verbs_exchange_wireup(rdlm_verbs_ctx_t *c)
{
    const rdlm_tl_bootstrap_t *b = &c->boot;
    uint32_t n = c->super.size, me = c->super.rank, p;
    rdlm_verbs_conn_t *mine, *all;
    rdlm_status_t st = RDLM_OK;

    for (p = 0; p < n && st == RDLM_OK; p++)
        st = rdlm_verbs_qp_create(c, p);
    if (st != RDLM_OK)
        return st;
    mine = calloc(n, sizeof(*mine));
    all = calloc((size_t)n * n, sizeof(*all));
    if (mine == NULL || all == NULL) {
        st = RDLM_ERR_NO_MEMORY;
        goto out;
    }
    for (p = 0; p < n; p++)
        rdlm_verbs_conn_record(c, p, &mine[p]);
    st = b->allgather(b->arg, mine, all, (size_t)n * sizeof(*mine), NULL);
    if (st != RDLM_OK) {
        rdlm_error("verbs: connection exchange failed: %s", rdlm_status_str(st));
        goto out;
    }
    for (p = 0; p < n && st == RDLM_OK; p++)
        st = rdlm_verbs_connect(c, p, &all[(size_t)p * n + me]);
out:
    free(mine);
    free(all);
    return st;
}

rdlm_status_t rdlm_verbs_loopback_wireup(rdlm_verbs_ctx_t *c)
{
    uint32_t me = c->super.rank;
    rdlm_verbs_conn_t self;
    rdlm_status_t st = rdlm_verbs_qp_create(c, me);

    if (st != RDLM_OK)
        return st;
    rdlm_verbs_conn_record(c, me, &self);
    return rdlm_verbs_connect(c, me, &self);
}
