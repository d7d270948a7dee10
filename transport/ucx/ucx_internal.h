/*
 * What the files of the UCX backend share: the context and its per-peer failure state
 * (ucx.c: setup and operations; peer.c: dead peers and bounded waits).
 *
 * Endpoint pointers: eps[r] goes from NULL to an endpoint once (created on first use,
 * under ctx->lock) and back to NULL once, when peer r died and its endpoint was
 * force-closed (rdlm_ucx_reap, after peers[r].dead was set). So an endpoint loaded
 * without the worker lock is still open while, under the worker lock (or on the only
 * thread of an unserialised context), its peer is not dead.
 */
#ifndef RDLM_UCX_INTERNAL_H
#define RDLM_UCX_INTERNAL_H

#include <pthread.h>

#include <ucp/api/ucp.h>

#include "tl_internal.h"

typedef struct rdlm_ucx_ctx rdlm_ucx_ctx_t;

typedef struct rdlm_ucx_am_slot {
    rdlm_ucx_ctx_t *ctx;
    rdlm_tl_am_handler_func_t func;
    void *arg;
} rdlm_ucx_am_slot_t;

/* One peer as the failure handling sees it. */
typedef struct rdlm_ucx_peer {
    rdlm_ucx_ctx_t *ctx; /* the error handler's way back */
    uint32_t rank;
    int watched;            /* its endpoint uses UCP_ERR_HANDLING_MODE_PEER */
    rdlm_atomic_u32_t dead; /* sticky: set once, never cleared */
    /* for64 to it: 0 not decided yet, 1 by UCX's OR, 2 by a compare-and-swap loop */
    rdlm_atomic_u32_t or_path;
} rdlm_ucx_peer_t;

struct rdlm_ucx_ctx {
    rdlm_tl_ctx_t super;
    rdlm_tl_bootstrap_t boot;
    ucp_context_h context;
    ucp_worker_h worker;
    int efd; /* the worker's event fd (ucp_worker_get_efd) */
    char *addrs; /* size records of addr_len bytes: the peers' worker addresses */
    size_t addr_len;
    _Atomic(ucp_ep_h) *eps;
    pthread_mutex_t lock; /* recursive: endpoint creation; every worker call if serialize */
    int serialize;
    ucs_thread_mode_t granted;
    rdlm_tl_atomic_domain_t domain;
    int needs_progress;
    rdlm_tl_rkey_table_t rkeys;
    rdlm_tl_region_t *mems; /* registered regions (guarded by lock) */
    rdlm_ucx_am_slot_t am[RDLM_TL_AM_ID_MAX];
    pthread_t thread;
    int thread_running;
    rdlm_atomic_u32_t stop;
    rdlm_ucx_peer_t *peers; /* [size] */
    int watching;           /* every process left peer-failure detection on */
    uint64_t timeout_ns;    /* bound of a wait on a watched peer */
    rdlm_atomic_u32_t reap; /* a dead watched peer's endpoint is still open */
    char peer_label[RDLM_TL_PEER_LABEL_MAX]; /* params.peer_label, or "" */
};

/** How the logs name peer: "rank N", or "<peer_label> (rank N)"; in buf (at least
 *  RDLM_TL_PEER_LABEL_MAX + 24 bytes). */
const char *rdlm_ucx_peer_name(const rdlm_ucx_ctx_t *c, uint32_t peer, char *buf,
                               size_t len);

#define RDLM_UCX_PEER_NAME_MAX (RDLM_TL_PEER_LABEL_MAX + 24)

/* Inside a wait loop: after RDLM_UCX_SPINS rounds without completion, give the CPU
 * away on every round. With more processes than cores (and a progress thread per
 * process), the target that must run our emulated atomic often waits for our CPU. */
#define RDLM_UCX_SPINS 64

static inline void rdlm_ucx_lock(rdlm_ucx_ctx_t *c)
{
    if (c->serialize)
        pthread_mutex_lock(&c->lock);
}

static inline void rdlm_ucx_unlock(rdlm_ucx_ctx_t *c)
{
    if (c->serialize)
        pthread_mutex_unlock(&c->lock);
}

/* ucx.c */

/** The rdlm status of a UCX status (the peer's death: RDLM_ERR_PEER_DEAD). */
rdlm_status_t rdlm_ucx_status(ucs_status_t s);
/** 1 if the context has a resource of one of the transports in tls (NULL-terminated
 *  names such as "tcp"), from ucp_context_print_info. */
int rdlm_ucx_context_has(rdlm_ucx_ctx_t *c, const char *const *tls);

/* peer.c */

/** At open, after the address exchange (collective): decide which peers are watched
 *  (params->peer_failure of every process, hosts, shared-memory transports) and the
 *  wait bound. RDLM_ERR_NO_MEMORY or the bootstrap's error. */
rdlm_status_t rdlm_ucx_peers_open(rdlm_ucx_ctx_t *c, const rdlm_tl_params_t *params);
/** Set the error mode and handler of the endpoint to peer in *p. */
void rdlm_ucx_peer_ep_params(rdlm_ucx_ctx_t *c, uint32_t peer, ucp_ep_params_t *p);

/** 1 once peer is known dead (sticky). Under the worker lock, 0 also means that an
 *  endpoint loaded earlier is still open. */
static inline int rdlm_ucx_is_dead(rdlm_ucx_ctx_t *c, uint32_t peer)
{
    return rdlm_load(&c->peers[peer].dead, RDLM_ACQUIRE) != 0;
}

/** Take the worker lock (if serialised) for an operation on the endpoint to peer,
 *  loaded earlier; 0, without the lock, once peer is dead (that endpoint may be
 *  closed): the caller returns RDLM_ERR_PEER_DEAD. */
static inline int rdlm_ucx_lock_live(rdlm_ucx_ctx_t *c, uint32_t peer)
{
    rdlm_ucx_lock(c);
    if (!rdlm_ucx_is_dead(c, peer))
        return 1;
    rdlm_ucx_unlock(c);
    return 0;
}

/** Force-close the endpoints of dead watched peers. Never from a UCX callback. */
void rdlm_ucx_reap(rdlm_ucx_ctx_t *c);

/** After a worker progress: close what the error handler marked, if anything. */
static inline void rdlm_ucx_reap_marked(rdlm_ucx_ctx_t *c)
{
    if (__builtin_expect(rdlm_load(&c->reap, RDLM_RELAXED) != 0, 0))
        rdlm_ucx_reap(c);
}

/** An operation on peer (what: "remote atomic", ...) ended with s != UCS_OK: the
 *  rdlm status, with one log line (a death is logged once per peer, by
 *  rdlm_ucx_peer_dead). */
rdlm_status_t rdlm_ucx_failed(rdlm_ucx_ctx_t *c, uint32_t peer, ucs_status_t s,
                              const char *what);

/** Blocking: progress until req (a request for an operation on peer, NULL or an error
 *  pointer included) completes, then free it. On a watched peer at most
 *  c->timeout_ns: then the peer counts as dead, its endpoint is force-closed, which
 *  completes req (UCS_ERR_CANCELED), and RDLM_ERR_PEER_DEAD is returned. Whatever
 *  req writes (a reply buffer) is written before this returns. */
rdlm_status_t rdlm_ucx_wait(rdlm_ucx_ctx_t *c, uint32_t peer, ucs_status_ptr_t req,
                            const char *what);

/** Bytes of rdlm_ucx_env_describe's text. */
#define RDLM_UCX_ENV_BYTES 512

/** Write into buf (len bytes, truncated to fit) the UCX variables that choose rdlm's
 *  transports and devices, as in effect for its context (RDLM_UCX_* read before
 *  UCX_*): "UCX_TLS=tcp, UCX_NET_DEVICES unset (all)", then the names of other
 *  RDLM_UCX_* set. For the error lines of a failed UCX setup. Thread-safe as getenv. */
void rdlm_ucx_env_describe(char *buf, size_t len);

/** Blocking: progress until an endpoint close request completes and free it, giving
 *  up after c->timeout_ns (a warning; the request is released when UCX finishes it,
 *  at the latest when the worker is destroyed). */
void rdlm_ucx_wait_close(rdlm_ucx_ctx_t *c, uint32_t peer, ucs_status_ptr_t req);

#endif
