/*
 * The raw verbs baseline (raw_verbs.h): one RC queue pair per side, connected by hand,
 * and blocking compare-and-swaps on the target's word.
 */
#include "raw_verbs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RDLM_BENCH_IBV_PORT 1
#define RDLM_BENCH_IBV_ACCESS                                                              \
    (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |           \
     IBV_ACCESS_REMOTE_ATOMIC)
/* A completion that takes longer is an error (a lost peer), not a slow atomic: under
 * software emulation one atomic costs up to about 0.4 ms. */
#define RDLM_BENCH_IBV_COMPLETION_NS 10000000000ull
/* INIT -> RTR tries while RoCE cannot resolve the peer's GID yet (a fresh link-local
 * address), as rdlm's verbs backend does. */
#define RDLM_BENCH_IBV_RTR_TRIES 10
#define RDLM_BENCH_IBV_RTR_PAUSE_US 200000

static int rdlm_bench_ibv_fail(char *why, size_t whylen, const char *what, int err)
{
    snprintf(why, whylen, "raw verbs: %s: %s", what, strerror(err));
    return -1;
}

/* The GID to route by, as rdlm's verbs backend connects by default (librdmacm on the
 * port's first IPv4 address): the first IPv4-mapped GID (::ffff:a.b.c.d), of RoCE v2
 * where sysfs says which; none (InfiniBand): index 0. */
static int rdlm_bench_ibv_gid_index(rdlm_bench_ibv_t *r, union ibv_gid *gid_p)
{
    static const uint8_t v4_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    union ibv_gid gid;
    int first_v4 = -1;

    for (int i = 0; i < r->port.gid_tbl_len; i++) {
        char path[256], type[16] = "";
        FILE *f;

        if (ibv_query_gid(r->dev, RDLM_BENCH_IBV_PORT, i, &gid) != 0 ||
            memcmp(gid.raw, v4_prefix, sizeof(v4_prefix)) != 0) {
            continue;
        }
        if (first_v4 < 0) {
            first_v4 = i;
        }
        snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%d/gid_attrs/types/%d",
                 ibv_get_device_name(r->dev->device), RDLM_BENCH_IBV_PORT, i);
        if ((f = fopen(path, "r")) != NULL) {
            if (fgets(type, sizeof(type), f) == NULL) {
                type[0] = 0;
            }
            fclose(f);
        }
        if (strncmp(type, "RoCE v2", 7) == 0) {
            first_v4 = i;
            break;
        }
    }
    if (first_v4 < 0) {
        first_v4 = 0;
    }
    if (ibv_query_gid(r->dev, RDLM_BENCH_IBV_PORT, first_v4, gid_p) != 0) {
        return -1;
    }
    return first_v4;
}

int rdlm_bench_ibv_available(void)
{
    int n = 0;
    struct ibv_device **list = ibv_get_device_list(&n);

    if (list != NULL) {
        ibv_free_device_list(list);
    }
    return n > 0;
}

static int rdlm_bench_ibv_open_device(rdlm_bench_ibv_t *r, char *why, size_t whylen)
{
    int n = 0;
    struct ibv_device **list = ibv_get_device_list(&n);

    if (list == NULL || n == 0) {
        if (list != NULL) {
            ibv_free_device_list(list);
        }
        snprintf(why, whylen, "raw verbs: no RDMA device (ibv_get_device_list found none)");
        return -1;
    }
    r->dev = ibv_open_device(list[0]);
    ibv_free_device_list(list);
    if (r->dev == NULL) {
        return rdlm_bench_ibv_fail(why, whylen, "ibv_open_device", errno);
    }
    return 0;
}

/* A page-aligned zeroed 8-byte buffer registered with access; -1 on failure. */
static int rdlm_bench_ibv_buffer(rdlm_bench_ibv_t *r, uint64_t **buf_p,
                                 struct ibv_mr **mr_p, char *why, size_t whylen)
{
    void *p = NULL;
    int rc = posix_memalign(&p, 4096, 4096);

    if (rc != 0) {
        return rdlm_bench_ibv_fail(why, whylen, "posix_memalign", rc);
    }
    memset(p, 0, 4096);
    *buf_p = p;
    *mr_p = ibv_reg_mr(r->pd, p, sizeof(uint64_t), RDLM_BENCH_IBV_ACCESS);
    if (*mr_p == NULL) {
        return rdlm_bench_ibv_fail(why, whylen, "ibv_reg_mr", errno);
    }
    return 0;
}

int rdlm_bench_ibv_open(rdlm_bench_ibv_t *r, char *why, size_t whylen)
{
    union ibv_gid gid;
    struct ibv_qp_init_attr qa = {
        .qp_type = IBV_QPT_RC,
        .sq_sig_all = 1,
        .cap = {.max_send_wr = 4, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1},
    };
    struct ibv_qp_attr a = {
        .qp_state = IBV_QPS_INIT,
        .port_num = RDLM_BENCH_IBV_PORT,
        .qp_access_flags = RDLM_BENCH_IBV_ACCESS,
    };

    memset(r, 0, sizeof(*r));
    if (rdlm_bench_ibv_open_device(r, why, whylen) != 0) {
        return -1;
    }
    if (ibv_query_port(r->dev, RDLM_BENCH_IBV_PORT, &r->port) != 0 ||
        (r->gid_index = rdlm_bench_ibv_gid_index(r, &gid)) < 0) {
        return rdlm_bench_ibv_fail(why, whylen, "querying port 1 and its GIDs", errno);
    }
    r->pd = ibv_alloc_pd(r->dev);
    r->cq = r->pd != NULL ? ibv_create_cq(r->dev, 8, NULL, NULL, 0) : NULL;
    if (r->cq == NULL) {
        return rdlm_bench_ibv_fail(why, whylen, "ibv_alloc_pd / ibv_create_cq", errno);
    }
    if (rdlm_bench_ibv_buffer(r, &r->word, &r->word_mr, why, whylen) != 0 ||
        rdlm_bench_ibv_buffer(r, &r->reply, &r->reply_mr, why, whylen) != 0) {
        return -1;
    }
    qa.send_cq = r->cq;
    qa.recv_cq = r->cq;
    r->qp = ibv_create_qp(r->pd, &qa);
    if (r->qp == NULL) {
        return rdlm_bench_ibv_fail(why, whylen, "ibv_create_qp", errno);
    }
    if (ibv_modify_qp(r->qp, &a,
                      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                          IBV_QP_ACCESS_FLAGS) != 0) {
        return rdlm_bench_ibv_fail(why, whylen, "QP RESET -> INIT", errno);
    }
    r->self = (rdlm_bench_ibv_rec_t){
        .addr = (uint64_t)(uintptr_t)r->word,
        .rkey = r->word_mr->rkey,
        .qpn = r->qp->qp_num,
        .psn = r->qp->qp_num & 0xffffffu,
        .lid = r->port.lid,
        .link_layer = r->port.link_layer,
        .mtu = (uint8_t)r->port.active_mtu,
    };
    memcpy(r->self.gid, gid.raw, sizeof(r->self.gid));
    return 0;
}

/* INIT -> RTR towards peer, trying again while RoCE cannot resolve its GID yet. */
static int rdlm_bench_ibv_rtr(rdlm_bench_ibv_t *r, const rdlm_bench_ibv_rec_t *peer,
                              char *why, size_t whylen)
{
    struct ibv_qp_attr a = {
        .qp_state = IBV_QPS_RTR,
        .path_mtu = (enum ibv_mtu)peer->mtu < r->port.active_mtu ? (enum ibv_mtu)peer->mtu
                                                                 : r->port.active_mtu,
        .dest_qp_num = peer->qpn,
        .rq_psn = peer->psn,
        .max_dest_rd_atomic = 1,
        .min_rnr_timer = 12,
        .ah_attr = {.dlid = peer->lid, .port_num = RDLM_BENCH_IBV_PORT},
    };

    if (peer->link_layer == IBV_LINK_LAYER_ETHERNET || peer->lid == 0) {
        a.ah_attr.is_global = 1;
        memcpy(a.ah_attr.grh.dgid.raw, peer->gid, sizeof(peer->gid));
        a.ah_attr.grh.sgid_index = (uint8_t)r->gid_index;
        a.ah_attr.grh.hop_limit = 64;
    }
    for (int tries = 1;; tries++) {
        if (ibv_modify_qp(r->qp, &a,
                          IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                              IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
                              IBV_QP_MIN_RNR_TIMER) == 0) {
            return 0;
        }
        if (errno != ETIMEDOUT || tries == RDLM_BENCH_IBV_RTR_TRIES) {
            return rdlm_bench_ibv_fail(why, whylen, "QP INIT -> RTR", errno);
        }
        usleep(RDLM_BENCH_IBV_RTR_PAUSE_US);
    }
}

int rdlm_bench_ibv_connect(rdlm_bench_ibv_t *r, const rdlm_bench_ibv_rec_t *peer, char *why,
                           size_t whylen)
{
    struct ibv_qp_attr a = {
        .qp_state = IBV_QPS_RTS,
        .timeout = 14, /* 4.096 us * 2^14 = 67 ms per try */
        .retry_cnt = 7,
        .rnr_retry = 7,
        .sq_psn = r->self.psn,
        .max_rd_atomic = 1,
    };

    r->peer = *peer;
    if (rdlm_bench_ibv_rtr(r, peer, why, whylen) != 0) {
        return -1;
    }
    if (ibv_modify_qp(r->qp, &a,
                      IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                          IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC) != 0) {
        return rdlm_bench_ibv_fail(why, whylen, "QP RTR -> RTS", errno);
    }
    return 0;
}

static uint64_t rdlm_bench_ibv_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int rdlm_bench_ibv_cswap(rdlm_bench_ibv_t *r, uint64_t compare, uint64_t swap,
                         uint64_t *old_p, char *why, size_t whylen)
{
    struct ibv_sge sge = {
        .addr = (uint64_t)(uintptr_t)r->reply,
        .length = sizeof(uint64_t),
        .lkey = r->reply_mr->lkey,
    };
    struct ibv_send_wr wr = {
        .sg_list = &sge,
        .num_sge = 1,
        .opcode = IBV_WR_ATOMIC_CMP_AND_SWP,
        .send_flags = IBV_SEND_SIGNALED,
        .wr.atomic = {.remote_addr = r->peer.addr,
                      .compare_add = compare,
                      .swap = swap,
                      .rkey = r->peer.rkey},
    };
    struct ibv_send_wr *bad = NULL;
    struct ibv_wc wc;
    uint64_t t0 = 0, raw;
    int rc = ibv_post_send(r->qp, &wr, &bad), n;

    if (rc != 0) {
        return rdlm_bench_ibv_fail(why, whylen, "ibv_post_send", rc);
    }
    while ((n = ibv_poll_cq(r->cq, 1, &wc)) == 0) {
        if (t0 == 0) {
            t0 = rdlm_bench_ibv_now_ns();
        } else if (rdlm_bench_ibv_now_ns() - t0 > RDLM_BENCH_IBV_COMPLETION_NS) {
            snprintf(why, whylen, "raw verbs: no completion within %.0f s",
                     RDLM_BENCH_IBV_COMPLETION_NS / 1e9);
            return -1;
        }
    }
    if (n < 0 || wc.status != IBV_WC_SUCCESS) {
        snprintf(why, whylen, "raw verbs: compare-and-swap completed with %s",
                 n < 0 ? "a failed ibv_poll_cq" : ibv_wc_status_str(wc.status));
        return -1;
    }
    raw = *r->reply; /* written by the adapter before the completion */
    /* A big-endian answer shows as the byte-swapped compare value when it matched. */
    if (!r->swap_results && raw != compare && raw == __builtin_bswap64(compare)) {
        r->swap_results = 1;
    }
    *old_p = r->swap_results ? __builtin_bswap64(raw) : raw;
    return 0;
}

void rdlm_bench_ibv_close(rdlm_bench_ibv_t *r)
{
    if (r->qp != NULL) {
        ibv_destroy_qp(r->qp);
    }
    if (r->word_mr != NULL) {
        ibv_dereg_mr(r->word_mr);
    }
    if (r->reply_mr != NULL) {
        ibv_dereg_mr(r->reply_mr);
    }
    free(r->word);
    free(r->reply);
    if (r->cq != NULL) {
        ibv_destroy_cq(r->cq);
    }
    if (r->pd != NULL) {
        ibv_dealloc_pd(r->pd);
    }
    if (r->dev != NULL) {
        ibv_close_device(r->dev);
    }
    memset(r, 0, sizeof(*r));
}
