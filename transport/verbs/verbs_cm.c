/*
 * The verbs backend's librdmacm connection path (RDLM_VERBS_CONNECT=cm, the default).
 *
 * - Device: rdma_cm ids live on librdmacm's own ibv_context of each device (it opens
 *   them itself), and rdma_create_qp refuses a PD of another context (EINVAL). So in
 *   this mode the context does not open the device: it takes librdmacm's context of the
 *   same device from rdma_get_devices(), and its PD, CQ and regions live there.
 * - Listen: each rank binds one rdma_cm_id to its address on the device, port 0
 *   (ephemeral), and listens. The address is RDLM_VERBS_ADDR or else the first
 *   IPv4-mapped GID (::ffff:a.b.c.d) of the port: RoCE fills the GID table from the
 *   addresses of the port's network interface. InfiniBand GIDs are not IP addresses:
 *   there RDLM_VERBS_ADDR must name the IPoIB address. An id bound (or resolved) to
 *   another device than the one the context opened is an error saying so.
 * - Exchange: the bound address and port, the device's outstanding read/atomic limits
 *   and a random nonce go through one bootstrap allgather (a rank that could not
 *   listen publishes port 0, so that every rank fails at once instead of timing out).
 * - Connect: rank i connects to every rank j > i (rdma_resolve_addr from its own
 *   address, rdma_resolve_route, rdma_create_qp on the context's PD and CQ,
 *   rdma_connect) and accepts every j < i. A request's private data carries the
 *   sender's rank and nonce; the acceptor checks them against the allgather (not an
 *   authentication: it keeps stray or duplicate requests out). A bad request is
 *   rejected, destroyed and logged, and the wire-up goes on: the real rank may still
 *   come. The QP to ourselves is not made here (a CM connection joins two QPs):
 *   verbs_exchange.c connects it by hand.
 * - Wait: every id shares one event channel, made non-blocking and drained by one
 *   loop that poll()s its fd with one deadline for the whole wire-up
 *   (RDLM_VERBS_TIMEOUT_MS). Past it: RDLM_ERR_TIMEOUT, with a log line naming each
 *   rank not connected.
 * - Parameters: rdma_conn_param is never zeroed. responder_resources and
 *   initiator_depth are this device's limits (>= 1) clamped to the peer's (from the
 *   allgather when connecting, from the request when accepting), retry_count and
 *   rnr_retry_count are 7.
 *
 * Access flags of a CM-made QP, as read in rdma-core (librdmacm/cma.c) and Linux
 * (drivers/infiniband/core/cma.c and cm.c): rdma_create_qp moves the new QP to INIT
 * with the attributes rdma_init_qp_attr() returns, then rdma_accept (passive side) and
 * the processing of the connect response inside rdma_get_cm_event (active side) re-read
 * the INIT attributes and move the QP to RTR and RTS themselves (ucma_modify_qp_rtr,
 * ucma_modify_qp_rts), with max_dest_rd_atomic / max_rd_atomic set to the negotiated
 * responder_resources / initiator_depth. rdma_init_qp_attr() only asks the kernel
 * (UCMA INIT_QP_ATTR), so the access flags are decided there: before the CM connection
 * exists (at rdma_create_qp) they are 0; once it exists the IB CM
 * (cm_init_qp_init_attr, also used by RoCE) gives IB_ACCESS_REMOTE_WRITE, plus
 * REMOTE_READ and REMOTE_ATOMIC only if the connection's responder_resources is not 0.
 * A zeroed rdma_conn_param would therefore leave a QP that refuses every remote atomic
 * and read. (iWARP's CM, iw_cm.c, gives write and read, never atomic.) rdlm cannot pass
 * the flags itself, so after ESTABLISHED it reads them back (ibv_query_qp) and a QP
 * without remote read/write (and atomic, when the device has atomics) access fails the
 * open. On soft-RoCE they read back as 0xe (remote write, read, atomic), with 128
 * outstanding reads/atomics each way (rxe's limits).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "verbs_internal.h"

#define RDLM_VERBS_CM_MAGIC 0x52444c43u /* "RDLC" */
/** Bound of each rdma_resolve_addr / rdma_resolve_route (ms). */
#define RDLM_VERBS_CM_RESOLVE_MS 2000
/** No rank (the listener's own id, a request not accepted yet). */
#define RDLM_VERBS_CM_NO_RANK UINT32_MAX

/* What each rank publishes through the bootstrap allgather. */
typedef struct rdlm_verbs_cm_addr {
    uint32_t ip;          /* network order */
    uint16_t port;        /* network order; 0: this rank could not listen */
    uint8_t resp_rd_atom; /* its max_dest_rd_atomic ceiling (responder resources) */
    uint8_t init_rd_atom; /* its max_rd_atomic ceiling (initiator depth) */
    uint64_t nonce;
} rdlm_verbs_cm_addr_t;

/* The private data of a connection request (and of its acceptance). */
typedef struct rdlm_verbs_cm_hello {
    uint32_t magic;
    uint32_t rank;
    uint64_t nonce; /* the sender's nonce from the allgather */
} rdlm_verbs_cm_hello_t;

/* The wire-up in progress. */
typedef struct rdlm_verbs_cm_wire {
    rdlm_verbs_ctx_t *c;
    const rdlm_verbs_cm_addr_t *all; /* every rank's record */
    struct sockaddr_in src;          /* our address, port 0: the source of our connects */
    rdlm_verbs_cm_hello_t hello;     /* our private data */
    uint8_t *up;                     /* per rank: ESTABLISHED */
    uint32_t pending;                /* connections not established yet */
} rdlm_verbs_cm_wire_t;

/* An id's context holds rank + 1 (0: no rank). */
static void *rdlm_verbs_cm_tag(uint32_t rank)
{
    return (void *)(uintptr_t)(rank + 1u);
}

static uint32_t rdlm_verbs_cm_rank(const struct rdma_cm_id *id)
{
    return id->context == NULL ? RDLM_VERBS_CM_NO_RANK
                               : (uint32_t)((uintptr_t)id->context - 1u);
}

rdlm_status_t rdlm_verbs_cm_device(rdlm_verbs_ctx_t *c)
{
    int n = 0, i;

    c->cm_devs = rdma_get_devices(&n);
    if (c->cm_devs == NULL) {
        rdlm_error("verbs: librdmacm lists no device (rdma_get_devices: %s; is the "
                   "rdma_ucm module loaded?); RDLM_VERBS_CONNECT=exchange does without it",
                   strerror(errno));
        return RDLM_ERR_UNSUPPORTED;
    }
    for (i = 0; i < n; i++)
        if (strcmp(ibv_get_device_name(c->cm_devs[i]->device), c->devname) == 0) {
            c->dev = c->cm_devs[i];
            return RDLM_OK;
        }
    rdlm_error("verbs: librdmacm does not list %s (%d other devices)", c->devname, n);
    return RDLM_ERR_UNSUPPORTED;
}

/* RDLM_OK if id (bound, resolved or requested) is on the device c opened. */
static rdlm_status_t rdlm_verbs_cm_check_device(const rdlm_verbs_ctx_t *c,
                                                const struct rdma_cm_id *id, uint32_t rank)
{
    char what[48];

    if (id->verbs == c->dev)
        return RDLM_OK;
    if (rank == RDLM_VERBS_CM_NO_RANK)
        snprintf(what, sizeof(what), "the listening address");
    else
        snprintf(what, sizeof(what), "the connection with rank %u", rank);
    rdlm_error(
        "verbs: rdma_cm: %s is on %s, but this context uses %s (the first "
        "device): set RDLM_VERBS_ADDR to an address of %s's interface",
        what, id->verbs != NULL ? ibv_get_device_name(id->verbs->device) : "no RDMA device",
        c->devname, c->devname);
    return RDLM_ERR_UNSUPPORTED;
}

/* The first IPv4 address in the port's GID table (network order), 0 if none. */
static uint32_t rdlm_verbs_cm_gid_ip(const rdlm_verbs_ctx_t *c)
{
    static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    union ibv_gid g;
    uint32_t ip;
    int i;

    for (i = 0; i < c->port_attr.gid_tbl_len; i++)
        if (ibv_query_gid(c->dev, c->port, i, &g) == 0 &&
            memcmp(g.raw, v4mapped, sizeof(v4mapped)) == 0) {
            memcpy(&ip, g.raw + 12, 4);
            return ip;
        }
    return 0;
}

/* Event channel (non-blocking) and listening id bound to addr (or the GID table's
 * address), port 0. *mine_p gets the bound address and port. */
static rdlm_status_t rdlm_verbs_cm_listen(rdlm_verbs_ctx_t *c, const char *addr,
                                          rdlm_verbs_cm_addr_t *mine_p)
{
    /* The address does not work here: a configuration error if the user chose it. */
    rdlm_status_t bad_addr = addr[0] != '\0' ? RDLM_ERR_BAD_CONFIG : RDLM_ERR_UNSUPPORTED;
    struct sockaddr_in sin = {.sin_family = AF_INET};
    char text[INET_ADDRSTRLEN];
    int flags;

    if (addr[0] == '\0' || inet_pton(AF_INET, addr, &sin.sin_addr) != 1)
        sin.sin_addr.s_addr = rdlm_verbs_cm_gid_ip(c);
    if (sin.sin_addr.s_addr == 0) {
        rdlm_error("verbs: %s port %u has no IPv4 address in its GID table (on "
                   "InfiniBand, set RDLM_VERBS_ADDR to this host's IPoIB address; or use "
                   "RDLM_VERBS_CONNECT=exchange)",
                   c->devname, c->port);
        return RDLM_ERR_UNSUPPORTED;
    }
    inet_ntop(AF_INET, &sin.sin_addr, text, sizeof(text));
    c->cm_channel = rdma_create_event_channel();
    if (c->cm_channel == NULL) {
        rdlm_error("verbs: rdma_create_event_channel: %s", strerror(errno));
        return RDLM_ERR_IO;
    }
    flags = fcntl(c->cm_channel->fd, F_GETFL);
    if (flags < 0 || fcntl(c->cm_channel->fd, F_SETFL, flags | O_NONBLOCK) != 0) {
        rdlm_error("verbs: rdma_cm: making the event channel non-blocking: %s",
                   strerror(errno));
        return RDLM_ERR_IO;
    }
    if (rdma_create_id(c->cm_channel, &c->cm_listen, NULL, RDMA_PS_TCP) != 0) {
        c->cm_listen = NULL;
        rdlm_error("verbs: rdma_create_id: %s", strerror(errno));
        return RDLM_ERR_NO_RESOURCE;
    }
    if (rdma_bind_addr(c->cm_listen, (struct sockaddr *)&sin) != 0) {
        rdlm_error("verbs: rdma_cm: cannot bind to %s%s: %s", text,
                   addr[0] != '\0' ? " (RDLM_VERBS_ADDR)" : " (from the GID table)",
                   strerror(errno));
        return bad_addr;
    }
    if (rdlm_verbs_cm_check_device(c, c->cm_listen, RDLM_VERBS_CM_NO_RANK) != RDLM_OK)
        return bad_addr;
    if (rdma_listen(c->cm_listen, (int)c->super.size) != 0) {
        rdlm_error("verbs: rdma_listen on %s: %s", text, strerror(errno));
        return RDLM_ERR_IO;
    }
    mine_p->ip = sin.sin_addr.s_addr;
    mine_p->port = rdma_get_src_port(c->cm_listen);
    rdlm_debug("verbs: rdma_cm: rank %u listens on %s:%u (%s)", c->super.rank, text,
               ntohs(mine_p->port), c->devname);
    return RDLM_OK;
}

/* Our connection parameters towards rank: never zeroed (see the top comment).
 * resp_cap / init_cap: what the peer can take (its initiator depth, its responder
 * resources). */
static rdlm_status_t rdlm_verbs_cm_param(const rdlm_verbs_ctx_t *c, uint32_t rank,
                                         const rdlm_verbs_cm_hello_t *hello,
                                         uint8_t resp_cap, uint8_t init_cap,
                                         struct rdma_conn_param *param_p)
{
    *param_p = (struct rdma_conn_param){
        .private_data = hello,
        .private_data_len = sizeof(*hello),
        .responder_resources = c->resp_rd_atom < resp_cap ? c->resp_rd_atom : resp_cap,
        .initiator_depth = c->init_rd_atom < init_cap ? c->init_rd_atom : init_cap,
        .retry_count = 7,
        .rnr_retry_count = 7,
    };
    if (param_p->responder_resources == 0 || param_p->initiator_depth == 0) {
        rdlm_error("verbs: rdma_cm: rank %u allows no outstanding reads and atomics "
                   "(initiator depth %u, responder resources %u): refusing a "
                   "connection without remote atomics",
                   rank, resp_cap, init_cap);
        return RDLM_ERR_UNSUPPORTED;
    }
    return RDLM_OK;
}

/* The QP of id (connection with rank) on the context's PD and CQ. */
static rdlm_status_t rdlm_verbs_cm_qp(rdlm_verbs_ctx_t *c, struct rdma_cm_id *id,
                                      uint32_t rank)
{
    struct ibv_qp_init_attr qa;
    rdlm_status_t st = rdlm_verbs_cm_check_device(c, id, rank);

    if (st != RDLM_OK)
        return st;
    rdlm_verbs_qp_init_attr(c, &qa);
    if (rdma_create_qp(id, c->pd, &qa) != 0) {
        rdlm_error("verbs: rdma_create_qp for rank %u: %s", rank, strerror(errno));
        return RDLM_ERR_NO_RESOURCE;
    }
    c->peers[rank].qp = id->qp;
    return RDLM_OK;
}

/* Active side, first step: an id for rank, resolving its address from ours. */
static rdlm_status_t rdlm_verbs_cm_dial(rdlm_verbs_cm_wire_t *w, uint32_t rank)
{
    rdlm_verbs_ctx_t *c = w->c;
    struct sockaddr_in dst = {.sin_family = AF_INET,
                              .sin_port = w->all[rank].port,
                              .sin_addr.s_addr = w->all[rank].ip};
    struct rdma_cm_id *id;

    if (rdma_create_id(c->cm_channel, &id, rdlm_verbs_cm_tag(rank), RDMA_PS_TCP) != 0) {
        rdlm_error("verbs: rdma_create_id for rank %u: %s", rank, strerror(errno));
        return RDLM_ERR_NO_RESOURCE;
    }
    c->peers[rank].cm_id = id;
    if (rdma_resolve_addr(id, (struct sockaddr *)&w->src, (struct sockaddr *)&dst,
                          RDLM_VERBS_CM_RESOLVE_MS) != 0) {
        rdlm_error("verbs: rdma_resolve_addr for rank %u: %s", rank, strerror(errno));
        return RDLM_ERR_IO;
    }
    return RDLM_OK;
}

/* Active side, route resolved: QP, then the connection request. */
static rdlm_status_t rdlm_verbs_cm_connect(rdlm_verbs_cm_wire_t *w, uint32_t rank)
{
    rdlm_verbs_ctx_t *c = w->c;
    struct rdma_conn_param param;
    rdlm_status_t st = rdlm_verbs_cm_qp(c, c->peers[rank].cm_id, rank);

    if (st == RDLM_OK)
        st = rdlm_verbs_cm_param(c, rank, &w->hello, w->all[rank].init_rd_atom,
                                 w->all[rank].resp_rd_atom, &param);
    if (st == RDLM_OK && rdma_connect(c->peers[rank].cm_id, &param) != 0) {
        rdlm_error("verbs: rdma_connect to rank %u: %s", rank, strerror(errno));
        st = RDLM_ERR_IO;
    }
    return st;
}

/* Passive side: check the request, then QP and accept. A bad request is rejected and
 * handed back in *drop_p (destroyed once its event is acknowledged). */
static rdlm_status_t rdlm_verbs_cm_accept(rdlm_verbs_cm_wire_t *w,
                                          const struct rdma_cm_event *ev,
                                          struct rdma_cm_id **drop_p)
{
    rdlm_verbs_ctx_t *c = w->c;
    const struct rdma_conn_param *req = &ev->param.conn;
    struct rdma_cm_id *id = ev->id;
    rdlm_verbs_cm_hello_t h = {0};
    struct rdma_conn_param param;
    const char *why = NULL;
    rdlm_status_t st;

    if (req->private_data != NULL && req->private_data_len >= sizeof(h))
        memcpy(&h, req->private_data, sizeof(h));
    if (h.magic != RDLM_VERBS_CM_MAGIC)
        why = "no rdlm rank in its private data";
    else if (h.rank >= c->super.rank)
        why = "only lower ranks of this job connect to this one";
    else if (h.nonce != w->all[h.rank].nonce)
        why = "its nonce is not the one that rank published";
    else if (c->peers[h.rank].cm_id != NULL)
        why = "that rank is connected already";
    if (why != NULL) {
        rdlm_error("verbs: rdma_cm: rank %u rejected a connection request that claims "
                   "rank %u: %s",
                   c->super.rank, h.rank, why);
        (void)rdma_reject(id, NULL, 0);
        *drop_p = id;
        return RDLM_OK;
    }
    c->peers[h.rank].cm_id = id;
    id->context = rdlm_verbs_cm_tag(h.rank);
    /* The request's values are from our side already: its responder_resources is the
     * requester's initiator depth, and the other way round. */
    st = rdlm_verbs_cm_qp(c, id, h.rank);
    if (st == RDLM_OK)
        st = rdlm_verbs_cm_param(c, h.rank, &w->hello, req->responder_resources,
                                 req->initiator_depth, &param);
    if (st == RDLM_OK && rdma_accept(id, &param) != 0) {
        rdlm_error("verbs: rdma_accept from rank %u: %s", h.rank, strerror(errno));
        st = RDLM_ERR_IO;
    }
    if (st != RDLM_OK)
        (void)rdma_reject(id, NULL, 0);
    return st;
}

/* Both sides: the QP to rank is in RTS. Check what the CM gave it. */
static rdlm_status_t rdlm_verbs_cm_established(rdlm_verbs_cm_wire_t *w, uint32_t rank)
{
    rdlm_verbs_ctx_t *c = w->c;
    unsigned need = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |
                    (c->domain != RDLM_TL_ATOMIC_NONE ? IBV_ACCESS_REMOTE_ATOMIC : 0u);
    struct ibv_qp_init_attr ia;
    struct ibv_qp_attr a;

    if (rank == RDLM_VERBS_CM_NO_RANK || w->up[rank])
        return RDLM_OK; /* not ours, or told twice */
    if (ibv_query_qp(c->peers[rank].qp, &a,
                     IBV_QP_ACCESS_FLAGS | IBV_QP_MAX_DEST_RD_ATOMIC |
                         IBV_QP_MAX_QP_RD_ATOMIC,
                     &ia) != 0) {
        rdlm_error("verbs: ibv_query_qp of the QP to rank %u: %s", rank, strerror(errno));
        return RDLM_ERR_IO;
    }
    if ((a.qp_access_flags & need) != need || a.max_dest_rd_atomic == 0 ||
        a.max_rd_atomic == 0) {
        rdlm_error("verbs: rdma_cm: the QP to rank %u allows remote access 0x%x (needs "
                   "0x%x), max_dest_rd_atomic %u, max_rd_atomic %u: RDLM_VERBS_CONNECT="
                   "exchange sets them itself",
                   rank, a.qp_access_flags, need, a.max_dest_rd_atomic, a.max_rd_atomic);
        return RDLM_ERR_UNSUPPORTED;
    }
    rdlm_debug("verbs: rdma_cm: rank %u connected with rank %u (qp %u, access 0x%x, "
               "rd_atomic %u in / %u out)",
               c->super.rank, rank, c->peers[rank].qp->qp_num, a.qp_access_flags,
               a.max_dest_rd_atomic, a.max_rd_atomic);
    w->up[rank] = 1;
    w->pending--;
    return RDLM_OK;
}

/* A failure event on a connection: log it, naming the rank. */
static rdlm_status_t rdlm_verbs_cm_failed(const rdlm_verbs_cm_wire_t *w,
                                          const struct rdma_cm_event *ev, uint32_t rank)
{
    const char *detail = ev->status < 0 ? strerror(-ev->status) : "";

    if (rank == RDLM_VERBS_CM_NO_RANK) {
        rdlm_error("verbs: rdma_cm: rank %u: %s on the listening id (status %d)",
                   w->c->super.rank, rdma_event_str(ev->event), ev->status);
        return RDLM_ERR_IO;
    }
    if (ev->event == RDMA_CM_EVENT_REJECTED)
        rdlm_error("verbs: rdma_cm: rank %u rejected rank %u's connection (reject reason "
                   "%d: 8 means nothing listens at its address, 28 that it refused or was "
                   "closing)",
                   rank, w->c->super.rank, ev->status);
    else
        rdlm_error("verbs: rdma_cm: connection between ranks %u and %u: %s (status %d%s%s)",
                   w->c->super.rank, rank, rdma_event_str(ev->event), ev->status,
                   detail[0] ? ": " : "", detail);
    if (ev->status == -ETIMEDOUT)
        return RDLM_ERR_TIMEOUT;
    return ev->event == RDMA_CM_EVENT_ADDR_ERROR || ev->event == RDMA_CM_EVENT_ROUTE_ERROR
               ? RDLM_ERR_IO
               : RDLM_ERR_PEER_DEAD;
}

/* One event of the channel. *drop_p: an id to destroy after the acknowledgement. */
static rdlm_status_t rdlm_verbs_cm_event(rdlm_verbs_cm_wire_t *w,
                                         const struct rdma_cm_event *ev,
                                         struct rdma_cm_id **drop_p)
{
    uint32_t rank = rdlm_verbs_cm_rank(ev->id);
    rdlm_status_t st;

    switch (ev->event) {
    case RDMA_CM_EVENT_CONNECT_REQUEST:
        return rdlm_verbs_cm_accept(w, ev, drop_p);
    case RDMA_CM_EVENT_ADDR_RESOLVED:
        st = rdlm_verbs_cm_check_device(w->c, ev->id, rank);
        if (st == RDLM_OK && rdma_resolve_route(ev->id, RDLM_VERBS_CM_RESOLVE_MS) != 0) {
            rdlm_error("verbs: rdma_resolve_route for rank %u: %s", rank, strerror(errno));
            st = RDLM_ERR_IO;
        }
        return st;
    case RDMA_CM_EVENT_ROUTE_RESOLVED:
        return rdlm_verbs_cm_connect(w, rank);
    case RDMA_CM_EVENT_ESTABLISHED:
        return rdlm_verbs_cm_established(w, rank);
    case RDMA_CM_EVENT_ADDR_ERROR:
    case RDMA_CM_EVENT_ROUTE_ERROR:
    case RDMA_CM_EVENT_CONNECT_ERROR:
    case RDMA_CM_EVENT_UNREACHABLE:
    case RDMA_CM_EVENT_REJECTED:
    case RDMA_CM_EVENT_DISCONNECTED:
    case RDMA_CM_EVENT_DEVICE_REMOVAL:
        return rdlm_verbs_cm_failed(w, ev, rank);
    default:
        rdlm_debug("verbs: rdma_cm: %s ignored during the wire-up",
                   rdma_event_str(ev->event));
        return RDLM_OK;
    }
}

/* Log every rank the wire-up is still waiting for. */
static void rdlm_verbs_cm_log_missing(const rdlm_verbs_cm_wire_t *w)
{
    const rdlm_verbs_ctx_t *c = w->c;
    uint32_t me = c->super.rank, p;

    for (p = 0; p < c->super.size; p++)
        if (p != me && !w->up[p])
            rdlm_error("verbs: rdma_cm: rank %u has no connection with rank %u after %u "
                       "ms (%s)",
                       me, p, RDLM_VERBS_TIMEOUT_MS,
                       p > me                      ? "it did not complete ours"
                       : c->peers[p].cm_id == NULL ? "no connection request came from it"
                                                   : "it did not confirm our acceptance");
}

/* Handle events until every connection is established, bounded. */
static rdlm_status_t rdlm_verbs_cm_wait(rdlm_verbs_cm_wire_t *w)
{
    uint64_t deadline = rdlm_clock_deadline((uint64_t)RDLM_VERBS_TIMEOUT_MS * 1000000u);
    struct pollfd pfd = {.fd = w->c->cm_channel->fd, .events = POLLIN};
    struct rdma_cm_event *ev;
    struct rdma_cm_id *drop;
    rdlm_status_t st = RDLM_OK;
    uint64_t now;

    while (w->pending > 0 && st == RDLM_OK) {
        if (rdma_get_cm_event(w->c->cm_channel, &ev) == 0) {
            drop = NULL;
            st = rdlm_verbs_cm_event(w, ev, &drop);
            (void)rdma_ack_cm_event(ev); /* before destroy: it waits for the acks */
            if (drop != NULL)
                (void)rdma_destroy_id(drop);
            continue;
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            rdlm_error("verbs: rdma_get_cm_event: %s", strerror(errno));
            return RDLM_ERR_IO;
        }
        now = rdlm_clock_now_ns();
        if (now >= deadline) {
            rdlm_verbs_cm_log_missing(w);
            return RDLM_ERR_TIMEOUT;
        }
        if (poll(&pfd, 1, (int)((deadline - now) / 1000000u) + 1) < 0 && errno != EINTR) {
            rdlm_error("verbs: poll on the rdma_cm channel: %s", strerror(errno));
            return RDLM_ERR_IO;
        }
    }
    return st;
}

rdlm_status_t rdlm_verbs_cm_wireup(rdlm_verbs_ctx_t *c, const char *addr)
{
    const rdlm_tl_bootstrap_t *b = &c->boot;
    uint32_t n = c->super.size, me = c->super.rank, p;
    rdlm_verbs_cm_wire_t w = {.c = c, .pending = n - 1};
    rdlm_verbs_cm_addr_t mine = {.resp_rd_atom = c->resp_rd_atom,
                                 .init_rd_atom = c->init_rd_atom};
    rdlm_verbs_cm_addr_t *all;
    rdlm_status_t st, gst;

    all = calloc(n, sizeof(*all));
    w.up = calloc(n, 1);
    if (all == NULL || w.up == NULL) {
        st = RDLM_ERR_NO_MEMORY;
        goto out;
    }
    mine.nonce = (rdlm_clock_now_ns() ^ ((uint64_t)getpid() << 32)) * 0x9e3779b97f4a7c15ull;
    st = rdlm_verbs_cm_listen(c, addr, &mine);
    if (st != RDLM_OK)
        mine.port = 0; /* tells the others not to wait for us */
    gst = b->allgather(b->arg, &mine, all, sizeof(mine), NULL);
    if (st != RDLM_OK)
        goto out;
    if (gst != RDLM_OK) {
        rdlm_error("verbs: rdma_cm address exchange failed: %s", rdlm_status_str(gst));
        st = gst;
        goto out;
    }
    for (p = 0; p < n; p++)
        if (all[p].port == 0) {
            rdlm_error("verbs: rdma_cm: rank %u could not listen (its log says why)", p);
            st = RDLM_ERR_PEER_DEAD;
            goto out;
        }
    w.all = all;
    w.src = (struct sockaddr_in){.sin_family = AF_INET, .sin_addr.s_addr = mine.ip};
    w.hello = (rdlm_verbs_cm_hello_t){RDLM_VERBS_CM_MAGIC, me, mine.nonce};
    for (p = me + 1; p < n && st == RDLM_OK; p++)
        st = rdlm_verbs_cm_dial(&w, p);
    if (st == RDLM_OK)
        st = rdlm_verbs_cm_wait(&w);
out:
    free(all);
    free(w.up);
    return st;
}

void rdlm_verbs_cm_free(rdlm_verbs_ctx_t *c)
{
    uint32_t i;

    for (i = 0; c->peers != NULL && i < c->super.size; i++) {
        struct rdma_cm_id *id = c->peers[i].cm_id;

        if (id == NULL)
            continue;
        if (id->qp != NULL)
            rdma_destroy_qp(id);
        if (rdma_destroy_id(id) != 0)
            rdlm_warn("verbs: rdma_destroy_id (rank %u): %s", i, strerror(errno));
        c->peers[i].cm_id = NULL;
        c->peers[i].qp = NULL;
    }
    if (c->cm_listen != NULL)
        (void)rdma_destroy_id(c->cm_listen);
    c->cm_listen = NULL;
    if (c->cm_channel != NULL)
        rdma_destroy_event_channel(c->cm_channel);
    c->cm_channel = NULL;
}
