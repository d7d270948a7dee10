/*
 * The verbs backend: libibverbs RC queue pairs, remote atomics in the adapter.
 *
 * Run on soft-RoCE only. The development machines have no RDMA adapter; the
 * conformance suite (tests/transport, --backend verbs) passes with 2 to 4 ranks on
 * rdma_rxe inside the VM of tests/rxe/rxe_vm.sh, over both connection paths
 * (RDLM_VERBS_CONNECT=cm and exchange). Reviewed but never exercised: adapters (the
 * mlx5 byte order, InfiniBand LIDs and IPoIB addresses), failed or timed-out
 * operations (QP errors, CQ timeouts) and a failing loopback probe.
 *
 * - Device: the first one ibv_get_device_list returns, its first ACTIVE port, GID
 *   index 0. (Choosing the device, port and GID index — RoCE v2 often needs another
 *   index — are future configuration knobs, e.g. RDLM_VERBS_DEVICE; not read today.)
 * - Limits: ibv_query_device gives atomic_cap (GLOB: coherent with CPU atomics ->
 *   RDLM_TL_ATOMIC_CPU; HCA: only with this adapter's atomics -> RDLM_TL_ATOMIC_DEVICE;
 *   NONE: no atomics), max_qp_rd_atom and max_qp_init_rd_atom, which set the QP's
 *   max_dest_rd_atomic / max_rd_atomic (clamped to >= 1: 0 would disable atomics and
 *   reads). soft-RoCE (rxe) does atomics in the kernel under its own lock, not
 *   coherently with user-space CPU atomics: never reported as CPU-coherent.
 * - Connections (RDLM_VERBS_CONNECT, read from the environment at open): one RC QP per
 *   peer, all made at open, because the only out-of-band channel is the bootstrap,
 *   whose collectives exist only at open and destroy; N processes hold N QPs each.
 *   `cm` (default): librdmacm resolves addresses and routes and connects each pair of
 *   ranks (verbs_cm.c); `exchange`: QP records through one bootstrap allgather, QPs
 *   moved to RTS by hand (verbs_exchange.c). In both modes the QP to ourselves
 *   (loopback) is connected by hand (verbs_exchange.c), because a CM connection always
 *   joins two QPs. Never a zeroed limit: max_dest_rd_atomic / max_rd_atomic (or the
 *   CM's responder_resources / initiator_depth) come from the device limits, >= 1.
 * - Completion: every WR is signalled; wr_id = (sequence << 32 | peer). Blocking calls
 *   poll the one CQ until their own wr_id completes, bounded by RDLM_VERBS_TIMEOUT_MS.
 *   A failed or timed-out WR leaves its QP unusable (RC QPs go to the error state):
 *   later calls to that peer return the recorded error; there is no reconnection.
 * - Byte order of atomic results: mlx5 returns them big-endian (Open MPI issues 1077,
 *   1148). At open a loopback probe runs a fetch-add and a compare-and-swap on a known
 *   word and checks both the returned values and the memory; without a loopback QP the
 *   results are assumed big-endian on devices named mlx5* and host order otherwise.
 * - Threads: one mutex serialises every post and poll (and the QP table). Posting and
 *   polling are thread-safe in libibverbs, but the shared scratch result word and the
 *   bounce buffer are not; simple first, finer later if measured.
 * - Posted compare-and-swap and the progress thread (RDLM_PROGRESS=thread, the default
 *   of distributed contexts): verbs_progress.c. The thread finishes posted CASes and
 *   runs the owner's hook while the owner's threads are elsewhere (core/global's
 *   posted release needs it); it polls the CQ every 1 ms while posted CASes are in
 *   flight, every 100 ms otherwise.
 * - Active messages: not implemented (SEND/RECV would need posted receive buffers and
 *   progress): the am table is the stub table and query() leaves RDLM_TL_CAP_AM clear.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "verbs_internal.h"

#define RDLM_VERBS_NO_DEVICE                                                               \
    "no RDMA device: to test on one machine, load rdma_rxe and run "                       \
    "`rdma link add rxe0 type rxe netdev eth0`"

/* IBV_ATOMIC_GLOB: coherent with CPU atomics; IBV_ATOMIC_HCA: only with atomics of
 * the same adapter (soft-RoCE does atomics in the kernel: not CPU-coherent either). */
static rdlm_tl_atomic_domain_t rdlm_verbs_domain(enum ibv_atomic_cap cap, const char *name)
{
    switch (cap) {
    case IBV_ATOMIC_GLOB:
        return strncmp(name, "rxe", 3) == 0 ? RDLM_TL_ATOMIC_DEVICE : RDLM_TL_ATOMIC_CPU;
    case IBV_ATOMIC_HCA:
        return RDLM_TL_ATOMIC_DEVICE;
    default:
        return RDLM_TL_ATOMIC_NONE;
    }
}

static uint64_t rdlm_verbs_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static rdlm_status_t rdlm_verbs_wc_status(enum ibv_wc_status s)
{
    switch (s) {
    case IBV_WC_SUCCESS:
        return RDLM_OK;
    case IBV_WC_RETRY_EXC_ERR:
    case IBV_WC_RNR_RETRY_EXC_ERR:
    case IBV_WC_WR_FLUSH_ERR:
    case IBV_WC_REM_ABORT_ERR:
        return RDLM_ERR_PEER_DEAD;
    case IBV_WC_REM_ACCESS_ERR: /* the peer's key or bounds were refused */
    case IBV_WC_REM_INV_REQ_ERR:
        return RDLM_ERR_INVALID_ARG;
    default:
        return RDLM_ERR_IO;
    }
}

uint64_t rdlm_verbs_result(const rdlm_verbs_ctx_t *c, uint64_t raw)
{
    return c->swap_results ? __builtin_bswap64(raw) : raw;
}

/* Move a peer's QP to the error state (its outstanding WRs then complete with
 * IBV_WC_WR_FLUSH_ERR) and record why. */
static void rdlm_verbs_break(rdlm_verbs_ctx_t *c, uint32_t peer, rdlm_status_t why)
{
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};

    if (c->peers[peer].err == RDLM_OK)
        c->peers[peer].err = why;
    if (c->peers[peer].qp != NULL)
        (void)ibv_modify_qp(c->peers[peer].qp, &a, IBV_QP_STATE);
}

int rdlm_verbs_poll(rdlm_verbs_ctx_t *c, uint64_t want, int *found_p,
                    rdlm_status_t *want_st_p)
{
    struct ibv_wc wc[16];
    int n = ibv_poll_cq(c->cq, 16, wc), i;

    if (n < 0) {
        rdlm_error("verbs: ibv_poll_cq failed (%d)", n);
        return -1;
    }
    for (i = 0; i < n; i++) {
        uint32_t peer = (uint32_t)wc[i].wr_id;
        rdlm_status_t st = rdlm_verbs_wc_status(wc[i].status);

        if (peer >= c->super.size)
            continue; /* not ours: cannot happen, every WR carries a peer */
        if (c->peers[peer].outstanding > 0)
            c->peers[peer].outstanding--;
        if (st != RDLM_OK) {
            if (wc[i].status != IBV_WC_WR_FLUSH_ERR || c->peers[peer].err == RDLM_OK)
                rdlm_error("verbs: operation to rank %u failed: %s (vendor error 0x%x)",
                           peer, ibv_wc_status_str(wc[i].status), wc[i].vendor_err);
            rdlm_verbs_break(c, peer, st);
        }
        if (wc[i].wr_id == want) {
            *found_p = 1;
            *want_st_p = st;
        }
        if (c->posts_n > 0)
            rdlm_verbs_post_done(c, wc[i].wr_id, st);
    }
    return n;
}

/* Post one signalled WR to peer, first waiting for room in its send queue. Lock
 * held. */
rdlm_status_t rdlm_verbs_post(rdlm_verbs_ctx_t *c, uint32_t peer, struct ibv_send_wr *wr,
                              uint64_t *wr_id_p)
{
    rdlm_verbs_peer_t *p = &c->peers[peer];
    struct ibv_send_wr *bad = NULL;
    uint64_t deadline = 0;
    int found = 0, rc;
    rdlm_status_t dummy;

    while (p->err == RDLM_OK && p->outstanding >= c->sq_depth) {
        if (deadline == 0)
            deadline = rdlm_verbs_now_ms() + RDLM_VERBS_TIMEOUT_MS;
        if (rdlm_verbs_poll(c, 0, &found, &dummy) < 0)
            return RDLM_ERR_IO;
        if (rdlm_verbs_now_ms() > deadline) {
            rdlm_error("verbs: send queue to rank %u stayed full for %u ms", peer,
                       RDLM_VERBS_TIMEOUT_MS);
            rdlm_verbs_break(c, peer, RDLM_ERR_TIMEOUT);
        }
    }
    if (p->err != RDLM_OK)
        return p->err;
    c->seq++;
    if (c->seq == 0)
        c->seq = 1; /* wr_id 0 (want == 0 in rdlm_verbs_poll) is never used */
    wr->wr_id = (uint64_t)c->seq << 32 | peer;
    wr->send_flags |= IBV_SEND_SIGNALED;
    wr->next = NULL;
    rc = ibv_post_send(p->qp, wr, &bad);
    if (rc != 0) {
        rdlm_error("verbs: ibv_post_send to rank %u: %s", peer, strerror(rc));
        return rc == ENOMEM ? RDLM_ERR_NO_RESOURCE : RDLM_ERR_IO;
    }
    p->outstanding++;
    *wr_id_p = wr->wr_id;
    return RDLM_OK;
}

/* Poll until wr_id completes; bounded. Lock held. */
rdlm_status_t rdlm_verbs_wait(rdlm_verbs_ctx_t *c, uint32_t peer, uint64_t wr_id)
{
    uint64_t deadline = rdlm_verbs_now_ms() + RDLM_VERBS_TIMEOUT_MS;
    rdlm_status_t st = RDLM_OK;
    unsigned spins = 0;
    int found = 0;

    while (!found) {
        if (rdlm_verbs_poll(c, wr_id, &found, &st) < 0)
            return RDLM_ERR_IO;
        if (!found && (++spins & 1023u) == 0 && rdlm_verbs_now_ms() > deadline) {
            rdlm_error("verbs: no completion from rank %u within %u ms", peer,
                       RDLM_VERBS_TIMEOUT_MS);
            rdlm_verbs_break(c, peer, RDLM_ERR_TIMEOUT);
            (void)rdlm_verbs_drain(c, peer); /* collect the flushed WRs */
            return RDLM_ERR_TIMEOUT;
        }
    }
    return st;
}

/* Poll until nothing is outstanding to peer (flush); bounded. Lock held. */
rdlm_status_t rdlm_verbs_drain(rdlm_verbs_ctx_t *c, uint32_t peer)
{
    uint64_t deadline = rdlm_verbs_now_ms() + RDLM_VERBS_TIMEOUT_MS;
    rdlm_status_t dummy;
    int found = 0;

    while (c->peers[peer].outstanding > 0) {
        if (rdlm_verbs_poll(c, 0, &found, &dummy) < 0)
            return RDLM_ERR_IO;
        if (rdlm_verbs_now_ms() > deadline) {
            rdlm_error("verbs: %u operations to rank %u still incomplete after %u ms",
                       c->peers[peer].outstanding, peer, RDLM_VERBS_TIMEOUT_MS);
            if (c->peers[peer].err == RDLM_OK) {
                rdlm_verbs_break(c, peer, RDLM_ERR_TIMEOUT);
                deadline = rdlm_verbs_now_ms() + RDLM_VERBS_TIMEOUT_MS;
                continue; /* once more, for the flushed completions */
            }
            c->peers[peer].outstanding = 0; /* give up on them */
            rdlm_verbs_posts_fail(c, peer, RDLM_ERR_TIMEOUT);
            return RDLM_ERR_TIMEOUT;
        }
    }
    return c->peers[peer].err;
}

/* ---- setup ops ---------------------------------------------------------------------- */

static rdlm_status_t rdlm_verbs_query(rdlm_tl_ctx_h ctx, rdlm_tl_caps_t *caps_p)
{
    rdlm_verbs_ctx_t *c = (rdlm_verbs_ctx_t *)ctx;
    uint32_t flags = RDLM_TL_CAP_RMA;

    if (c->domain != RDLM_TL_ATOMIC_NONE)
        flags |= RDLM_TL_CAP_AMO64 | RDLM_TL_CAP_AMO64_POST;
    if (c->loopback)
        flags |= RDLM_TL_CAP_LOOPBACK;
    *caps_p = (rdlm_tl_caps_t){
        .backend = "verbs",
        .flags = flags,
        .atomic_domain = c->domain,
        .amo_needs_target_progress = 0, /* the target's adapter executes them */
        .thread_mode = c->thread_mode,
        .serialized_by_rdlm = c->thread_mode == RDLM_TL_THREAD_MULTI,
        .progress_thread = c->thread_running,
        .am_max_payload = 0,
        .rank = c->super.rank,
        .size = c->super.size,
    };
    return RDLM_OK;
}

static unsigned rdlm_verbs_progress(rdlm_tl_ctx_h ctx)
{
    rdlm_verbs_ctx_t *c = (rdlm_verbs_ctx_t *)ctx;
    rdlm_status_t dummy;
    int found = 0, n;

    pthread_mutex_lock(&c->lock);
    n = rdlm_verbs_poll(c, 0, &found, &dummy);
    pthread_mutex_unlock(&c->lock);
    rdlm_tl_stat_add(&c->super.stats.progress, 1);
    return n > 0 ? (unsigned)n : 0u;
}

/* RC completions arrive in order per QP and only after the responder acknowledged:
 * once nothing is outstanding, every earlier WR is done at the target. */
static rdlm_status_t rdlm_verbs_flush(rdlm_tl_ctx_h ctx, uint32_t peer)
{
    rdlm_verbs_ctx_t *c = (rdlm_verbs_ctx_t *)ctx;
    rdlm_status_t st = RDLM_OK, s;
    uint32_t p;

    if (peer != RDLM_TL_PEER_ALL && peer >= c->super.size)
        return RDLM_ERR_INVALID_ARG;
    pthread_mutex_lock(&c->lock);
    for (p = 0; p < c->super.size; p++) {
        if (peer != RDLM_TL_PEER_ALL && p != peer)
            continue;
        s = rdlm_verbs_drain(c, p);
        if (st == RDLM_OK)
            st = s;
    }
    pthread_mutex_unlock(&c->lock);
    return st;
}

static void rdlm_verbs_release_rkey(void *backend, void *arg)
{
    (void)backend;
    (void)arg;
}

/* Tear down whatever exists (also for a half-opened context). */
static void rdlm_verbs_free(rdlm_verbs_ctx_t *c)
{
    uint32_t i;

    rdlm_verbs_thread_stop(c);
    rdlm_verbs_posts_fail(c, RDLM_TL_PEER_ALL, RDLM_ERR_CLOSED); /* none after a flush */
    if (c->rkeys.slots != NULL) /* verbs keys are plain numbers: nothing to release */
        rdlm_tl_rkey_table_fini(&c->rkeys, rdlm_verbs_release_rkey, NULL);
    rdlm_verbs_cm_free(c); /* its QPs, ids and channel */
    if (c->peers != NULL)
        for (i = 0; i < c->super.size; i++)
            if (c->peers[i].qp != NULL && ibv_destroy_qp(c->peers[i].qp) != 0)
                rdlm_warn("verbs: destroying the QP to rank %u failed", i);
    while (c->mems != NULL) /* regions the caller did not deregister */
        (void)rdlm_verbs_mem_dereg(&c->super, rdlm_tl_region_mem(c->mems));
    if (c->scratch_mr != NULL)
        (void)ibv_dereg_mr(c->scratch_mr);
    free(c->scratch);
    if (c->cq != NULL)
        (void)ibv_destroy_cq(c->cq);
    if (c->stop_fd >= 0)
        close(c->stop_fd);
    if (c->pd != NULL)
        (void)ibv_dealloc_pd(c->pd);
    if (c->cm_devs != NULL)
        rdma_free_devices(c->cm_devs); /* c->dev is one of them */
    else if (c->dev != NULL)
        (void)ibv_close_device(c->dev);
    free(c->peers);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

/* Collective: flush, then a barrier so that no peer still has operations in flight
 * on our memory when our QPs and regions go. */
static void rdlm_verbs_destroy(rdlm_tl_ctx_h ctx)
{
    rdlm_verbs_ctx_t *c = (rdlm_verbs_ctx_t *)ctx;

    if (c == NULL)
        return;
    rdlm_verbs_thread_stop(c); /* first: its hook may still issue operations */
    (void)rdlm_verbs_flush(ctx, RDLM_TL_PEER_ALL);
    if (c->boot.barrier(c->boot.arg, NULL) != RDLM_OK)
        rdlm_warn("verbs: destroy: bootstrap barrier failed; closing anyway");
    rdlm_verbs_free(c);
}

static const rdlm_tl_setup_ops_t rdlm_verbs_setup_ops = {
    .query = rdlm_verbs_query,
    .progress = rdlm_verbs_progress,
    .flush = rdlm_verbs_flush,
    .destroy = rdlm_verbs_destroy,
    .peer_dead = rdlm_tl_stub_peer_dead,
    .sleep = rdlm_tl_stub_sleep,
};

/* ---- open: device, port, QPs ------------------------------------------------------- */

static uint8_t rdlm_verbs_clamp_rd_atom(int v)
{
    return (uint8_t)(v < 1 ? 1 : v > 255 ? 255 : v);
}

/* Open device d (with librdmacm: take librdmacm's context of it), query it and pick
 * its first active port. */
static rdlm_status_t rdlm_verbs_open_device(rdlm_verbs_ctx_t *c, struct ibv_device *d)
{
    rdlm_status_t st;
    uint8_t p;

    snprintf(c->devname, sizeof(c->devname), "%s", ibv_get_device_name(d));
    if (c->connect == RDLM_VERBS_CONNECT_CM) {
        st = rdlm_verbs_cm_device(c);
        if (st != RDLM_OK)
            return st;
    } else {
        c->dev = ibv_open_device(d);
        if (c->dev == NULL) {
            rdlm_error("verbs: cannot open %s: %s", c->devname, strerror(errno));
            return RDLM_ERR_UNSUPPORTED;
        }
    }
    if (ibv_query_device(c->dev, &c->attr) != 0) {
        rdlm_error("verbs: cannot query %s", c->devname);
        return RDLM_ERR_UNSUPPORTED;
    }
    for (p = 1; p <= c->attr.phys_port_cnt; p++)
        if (ibv_query_port(c->dev, p, &c->port_attr) == 0 &&
            c->port_attr.state == IBV_PORT_ACTIVE)
            break;
    if (p > c->attr.phys_port_cnt) {
        rdlm_error("verbs: %s has no active port", c->devname);
        return RDLM_ERR_UNSUPPORTED;
    }
    c->port = p;
    c->gid_index = 0;
    if (ibv_query_gid(c->dev, p, c->gid_index, &c->gid) != 0) {
        rdlm_error("verbs: %s port %u: cannot read GID %d", c->devname, p, c->gid_index);
        return RDLM_ERR_UNSUPPORTED;
    }
    c->domain = rdlm_verbs_domain(c->attr.atomic_cap, c->devname);
    c->resp_rd_atom = rdlm_verbs_clamp_rd_atom(c->attr.max_qp_rd_atom);
    c->init_rd_atom = rdlm_verbs_clamp_rd_atom(c->attr.max_qp_init_rd_atom);
    if (c->attr.max_qp_rd_atom < 1 || c->attr.max_qp_init_rd_atom < 1)
        rdlm_warn("verbs: %s reports max_qp_rd_atom %d, max_qp_init_rd_atom %d: using 1 "
                  "(0 would disable remote atomics and reads)",
                  c->devname, c->attr.max_qp_rd_atom, c->attr.max_qp_init_rd_atom);
    rdlm_debug("verbs: %s port %u (%s), atomic_cap %d (%s), max_qp_rd_atom %d, "
               "max_qp_init_rd_atom %d",
               c->devname, p,
               c->port_attr.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet/RoCE" : "IB",
               (int)c->attr.atomic_cap, rdlm_tl_atomic_domain_str(c->domain),
               c->attr.max_qp_rd_atom, c->attr.max_qp_init_rd_atom);
    return RDLM_OK;
}

/* PD, CQ and scratch region (the QPs come with the connections). */
static rdlm_status_t rdlm_verbs_create_resources(rdlm_verbs_ctx_t *c)
{
    uint32_t n = c->super.size, depth, cqe;

    depth = RDLM_VERBS_SQ_DEPTH;
    if (c->attr.max_qp_wr > 0 && (uint32_t)c->attr.max_qp_wr < depth)
        depth = (uint32_t)c->attr.max_qp_wr;
    if (c->attr.max_cqe > 0 && (uint64_t)depth * n > (uint64_t)c->attr.max_cqe)
        depth = (uint32_t)c->attr.max_cqe / n;
    if (depth == 0) {
        rdlm_error("verbs: %s: a CQ of %d entries cannot serve %u QPs", c->devname,
                   c->attr.max_cqe, n);
        return RDLM_ERR_NO_RESOURCE;
    }
    c->sq_depth = depth;
    cqe = depth * n; /* every WR is signalled: at most depth outstanding per QP */

    c->pd = ibv_alloc_pd(c->dev);
    if (c->pd == NULL) {
        rdlm_error("verbs: ibv_alloc_pd: %s", strerror(errno));
        return RDLM_ERR_NO_RESOURCE;
    }
    c->cq = ibv_create_cq(c->dev, (int)cqe, NULL, NULL, 0);
    if (c->cq == NULL) {
        rdlm_error("verbs: ibv_create_cq(%u): %s", cqe, strerror(errno));
        return RDLM_ERR_NO_RESOURCE;
    }
    if (posix_memalign((void **)&c->scratch, 64,
                       RDLM_VERBS_BOUNCE_OFF + RDLM_VERBS_BOUNCE_LEN) != 0) {
        c->scratch = NULL;
        return RDLM_ERR_NO_MEMORY;
    }
    memset(c->scratch, 0, RDLM_VERBS_BOUNCE_OFF + RDLM_VERBS_BOUNCE_LEN);
    c->scratch_mr =
        ibv_reg_mr(c->pd, c->scratch, RDLM_VERBS_BOUNCE_OFF + RDLM_VERBS_BOUNCE_LEN,
                   RDLM_VERBS_ACCESS);
    if (c->scratch_mr == NULL) {
        rdlm_error("verbs: registering the scratch region: %s", strerror(errno));
        return RDLM_ERR_NO_RESOURCE;
    }
    return RDLM_OK;
}

void rdlm_verbs_qp_init_attr(const rdlm_verbs_ctx_t *c, struct ibv_qp_init_attr *qa_p)
{
    *qa_p = (struct ibv_qp_init_attr){
        .send_cq = c->cq,
        .recv_cq = c->cq,
        .cap = {.max_send_wr = c->sq_depth,
                .max_recv_wr = 1,
                .max_send_sge = 1,
                .max_recv_sge = 1,
                .max_inline_data = 0},
        .qp_type = IBV_QPT_RC,
        .sq_sig_all = 1,
    };
}

/* Collective: connect every QP, then a barrier, so that nobody sends before every
 * peer's QPs are ready. With librdmacm the QP to ourselves is still connected by hand
 * (a CM connection always joins two QPs). */
static rdlm_status_t rdlm_verbs_wireup(rdlm_verbs_ctx_t *c, const char *addr)
{
    rdlm_status_t st;

    if (c->connect == RDLM_VERBS_CONNECT_EXCHANGE) {
        st = rdlm_verbs_exchange_wireup(c);
    } else {
        st = rdlm_verbs_loopback_wireup(c);
        if (st == RDLM_OK)
            st = rdlm_verbs_cm_wireup(c, addr);
    }
    if (st == RDLM_OK)
        c->loopback = 1; /* the QP to ourselves is in RTS too */
    if (st == RDLM_OK)
        st = c->boot.barrier(c->boot.arg, NULL);
    return st;
}

/* Byte order of atomic results, by loopback atomics on scratch word PROBE: a fetch-add
 * of 1 on a known value (result and memory), then a compare-and-swap with the new
 * value (result and memory). */
static void rdlm_verbs_probe_byte_order(rdlm_verbs_ctx_t *c)
{
    const uint64_t k = 0x0102030405060708ull, k2 = 0x1112131415161718ull;
    volatile uint64_t *w = &c->scratch[RDLM_VERBS_PROBE_WORD];
    uint64_t raddr = (uint64_t)(uintptr_t)&c->scratch[RDLM_VERBS_PROBE_WORD], raw = 0;
    uint32_t me = c->super.rank;
    rdlm_status_t st;
    int mlx5 = strncmp(c->devname, "mlx5", 4) == 0;

    if (c->domain == RDLM_TL_ATOMIC_NONE)
        return;
    c->swap_results = 0;
    *w = k;
    st = rdlm_verbs_atomic(c, me, IBV_WR_ATOMIC_FETCH_AND_ADD, raddr, c->scratch_mr->rkey,
                           1, 0, &raw); /* raw: as delivered (swap_results == 0) */
    if (st == RDLM_OK && *w == k + 1 && (raw == k || raw == __builtin_bswap64(k))) {
        c->swap_results = raw != k;
        st = rdlm_verbs_atomic(c, me, IBV_WR_ATOMIC_CMP_AND_SWP, raddr, c->scratch_mr->rkey,
                               k + 1, k2, &raw);
        if (st == RDLM_OK && *w == k2 && raw == k + 1) {
            rdlm_debug("verbs: %s returns atomic results in %s byte order", c->devname,
                       c->swap_results ? "swapped (big-endian)" : "host");
            return;
        }
    }
    if (st == RDLM_OK) {
        /* The adapter read or wrote memory inconsistently with the CPU: unusable. */
        rdlm_error("verbs: %s: loopback atomic probe gave inconsistent results "
                   "(memory 0x%llx): remote atomics disabled",
                   c->devname, (unsigned long long)*w);
        c->domain = RDLM_TL_ATOMIC_NONE;
        return;
    }
    /* The loopback QP failed (some RoCE setups cannot loop back). */
    c->loopback = 0; /* the QP to ourselves stays in the error state, unused */
    c->swap_results = mlx5;
    rdlm_warn("verbs: loopback probe failed on %s; assuming %s atomic results", c->devname,
              mlx5 ? "big-endian (mlx5)" : "host-order");
}

static rdlm_status_t rdlm_verbs_open(const rdlm_tl_params_t *params, rdlm_tl_ctx_h *ctx_p)
{
    const rdlm_tl_bootstrap_t *b = params->bootstrap;
    struct ibv_device **list;
    rdlm_config_t cfg;
    rdlm_verbs_ctx_t *c;
    rdlm_status_t st;
    int n = 0;

    list = ibv_get_device_list(&n);
    if (list == NULL || n == 0) {
        if (list != NULL)
            ibv_free_device_list(list);
        rdlm_error("verbs: " RDLM_VERBS_NO_DEVICE);
        return RDLM_ERR_UNSUPPORTED;
    }
    /* RDLM_VERBS_CONNECT and RDLM_VERBS_ADDR (a bad value is logged by the parser). */
    st = rdlm_config_parse((const char *const *)environ, &cfg);
    if (st != RDLM_OK) {
        ibv_free_device_list(list);
        return st;
    }
    c = calloc(1, sizeof(*c));
    if (c == NULL) {
        ibv_free_device_list(list);
        return RDLM_ERR_NO_MEMORY;
    }
    c->super = (rdlm_tl_ctx_t){.setup = &rdlm_verbs_setup_ops,
                               .mem = &rdlm_verbs_mem_ops,
                               .amo = &rdlm_verbs_amo_ops,
                               .rma = &rdlm_verbs_rma_ops,
                               .am = &rdlm_tl_stub_am_ops,
                               .backend = "verbs",
                               .rank = b->rank,
                               .size = b->size};
    c->boot = *b;
    c->thread_mode = params->thread_mode;
    c->connect = cfg.verbs_connect;
    c->stop_fd = -1;
    c->super.after_progress = params->after_progress;
    c->super.after_progress_arg = params->after_progress_arg;
    pthread_mutex_init(&c->lock, NULL);
    c->peers = calloc(b->size, sizeof(*c->peers));
    st = c->peers ? rdlm_tl_rkey_table_init(&c->rkeys, params->max_rkeys)
                  : RDLM_ERR_NO_MEMORY;
    if (st == RDLM_OK)
        st = rdlm_verbs_open_device(c, list[0]); /* first device; see the top comment */
    ibv_free_device_list(list);
    if (st == RDLM_OK)
        st = rdlm_verbs_create_resources(c);
    if (st == RDLM_OK)
        st = rdlm_verbs_wireup(c, cfg.verbs_addr);
    if (st != RDLM_OK) {
        /* Not collective on failure: free without the destroy barrier. */
        rdlm_verbs_free(c);
        return st;
    }
    pthread_mutex_lock(&c->lock);
    rdlm_verbs_probe_byte_order(c);
    pthread_mutex_unlock(&c->lock);
    if (params->progress_thread)
        (void)rdlm_verbs_thread_start(c); /* without it (logged), posts finish in calls */
    /* A warning on adapters until the suite has run on one (see the top comment). */
    rdlm_log(strncmp(c->devname, "rxe", 3) == 0 ? RDLM_LOG_INFO : RDLM_LOG_WARN,
             "verbs: rank %u/%u on %s port %u, connected by %s, atomics %s (this backend "
             "has run on soft-RoCE only, never on an RDMA adapter)",
             c->super.rank, c->super.size, c->devname, c->port,
             rdlm_config_verbs_connect_name(c->connect),
             rdlm_tl_atomic_domain_str(c->domain));
    *ctx_p = &c->super;
    return RDLM_OK;
}

const rdlm_tl_backend_t rdlm_tl_verbs_backend = {.name = "verbs", .open = rdlm_verbs_open};
