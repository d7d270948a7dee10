/*
 * Dead peers in the UCX backend: which endpoints are watched, the sticky per-peer
 * state, and the bounded waits (ucx_internal.h has the contracts).
 *
 * Which endpoints are watched. UCX reports a peer's failure only on endpoints created
 * with UCP_ERR_HANDLING_MODE_PEER, and that mode keeps only transports that have a
 * peer-failure handler. In UCX 1.13 posix and sysv have none (unless
 * UCX_POSIX_ERROR_HANDLING / UCX_SYSV_ERROR_HANDLING=y), so a PEER endpoint to a
 * process on the same host runs over tcp instead of shared memory: emulated atomics,
 * 10-20 us instead of 50 ns. At open every process publishes its host as UCX sees it
 * for shared memory (ucs_get_system_id, the boot id that uct_iface_local_is_reachable
 * compares, and the PID namespace, which must match too), its RDLM_PEER_FAILURE and
 * whether its context has a posix, sysv or xpmem resource. The endpoint between two
 * processes is watched when neither says off, and one says on, or they are on
 * different hosts, or one of them has no such transport (UCX_TLS=tcp,self: nothing to
 * lose). The rule is symmetric, so both ends agree; a forced close needs PEER mode at
 * both ends (ucp.h).
 *
 * Detection. A watched peer is marked dead (sticky, one error line naming its rank)
 *  - by UCX's error handler, inside worker progress: when the peer's process dies its
 *    kernel closes its connections, UCX sees that on the next progress (about 1 ms
 *    here) and completes our requests to it with an error;
 *  - by an operation that fails with a status meaning a lost peer;
 *  - by the bound: a request to it still unanswered after timeout_ns (a stopped
 *    process, or a vanished host, whose TCP connection would only time out after
 *    minutes of retransmissions: TCP keepalive does not probe while data is unacked).
 * Its endpoint is then force-closed (UCP_EP_CLOSE_FLAG_FORCE), never inside the
 * callback: that completes every request still on it with UCS_ERR_CANCELED, so no
 * reply is written into a buffer after its wait returned, and later operations find
 * no endpoint and return RDLM_ERR_PEER_DEAD at once.
 *
 * Unwatched endpoints (same-host shared memory, RDLM_PEER_FAILURE=off) behave as
 * before: UCX does not complete their requests when the peer is gone, so their waits
 * are not bounded (returning would leave a buffer for UCX to write). A dead process on
 * the same host is the on-node layer's business; its shared-memory words stay mapped.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <ucs/sys/uid.h>

#include "clock.h"
#include "log.h"
#include "ucx_internal.h"

#define RDLM_UCX_TIMEOUT_MS_DEFAULT 10000u /* RDLM_PEER_TIMEOUT_MS's default */

/* What each process tells the others at open (same build everywhere). */
typedef struct rdlm_ucx_ident {
    uint64_t system_id; /* ucs_get_system_id() */
    uint64_t pid_ns;    /* inode of /proc/self/ns/pid; 0 if unknown */
    uint32_t policy;    /* rdlm_switch_t */
    uint32_t has_shm;   /* a posix, sysv or xpmem resource */
} rdlm_ucx_ident_t;

static uint64_t rdlm_ucx_pid_ns(void)
{
    struct stat st;

    return stat("/proc/self/ns/pid", &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/* The symmetric rule of the header comment. */
static int rdlm_ucx_watch(const rdlm_ucx_ident_t *a, const rdlm_ucx_ident_t *b)
{
    if (a->policy == RDLM_SWITCH_OFF || b->policy == RDLM_SWITCH_OFF)
        return 0;
    if (a->policy == RDLM_SWITCH_ON || b->policy == RDLM_SWITCH_ON)
        return 1;
    return a->system_id != b->system_id || a->pid_ns != b->pid_ns || !a->has_shm ||
           !b->has_shm;
}

rdlm_status_t rdlm_ucx_peers_open(rdlm_ucx_ctx_t *c, const rdlm_tl_params_t *params)
{
    static const char *const shm[] = {"posix", "sysv", "xpmem", NULL};
    const rdlm_tl_bootstrap_t *b = &c->boot;
    uint32_t ms =
        params->peer_timeout_ms ? params->peer_timeout_ms : RDLM_UCX_TIMEOUT_MS_DEFAULT;
    rdlm_ucx_ident_t me = {.system_id = ucs_get_system_id(),
                           .pid_ns = rdlm_ucx_pid_ns(),
                           .policy = params->peer_failure,
                           .has_shm = (uint32_t)rdlm_ucx_context_has(c, shm)};
    rdlm_ucx_ident_t *all = calloc(b->size, sizeof(*all));
    uint32_t r, watched = 0;
    rdlm_status_t st = RDLM_ERR_NO_MEMORY;

    c->timeout_ns = (uint64_t)ms * 1000000u;
    snprintf(c->peer_label, sizeof(c->peer_label), "%s",
             params->peer_label != NULL ? params->peer_label : "");
    c->peers = calloc(b->size, sizeof(*c->peers));
    if (all == NULL || c->peers == NULL)
        goto out;
    st = b->allgather(b->arg, &me, all, sizeof(me), NULL);
    if (st != RDLM_OK) {
        rdlm_error("ucx: exchanging host identities failed: %s", rdlm_status_str(st));
        goto out;
    }
    c->watching = 1;
    for (r = 0; r < b->size; r++) {
        c->peers[r].ctx = c;
        c->peers[r].rank = r;
        c->peers[r].watched = r != b->rank && rdlm_ucx_watch(&me, &all[r]);
        watched += (uint32_t)c->peers[r].watched;
        if (all[r].policy == RDLM_SWITCH_OFF)
            c->watching = 0;
    }
    rdlm_debug("ucx: rank %u watches %u of %u peers for failure (RDLM_PEER_FAILURE=%s, "
               "bound %u ms)",
               b->rank, watched, b->size - 1, rdlm_config_switch_name(me.policy), ms);
out:
    free(all);
    return st;
}

/* Mark peer dead; 1 if this call did (the caller then logs the one line). Safe inside
 * UCX callbacks. */
static int rdlm_ucx_mark_dead(rdlm_ucx_ctx_t *c, uint32_t peer)
{
    uint32_t alive = 0;

    if (!rdlm_cas(&c->peers[peer].dead, &alive, 1, RDLM_ACQ_REL))
        return 0;
    if (c->peers[peer].watched)
        rdlm_store(&c->reap, 1, RDLM_RELEASE);
    return 1;
}

/* The end of the one line that reports a lost peer. */
static const char *rdlm_ucx_dead_tail(const rdlm_ucx_peer_t *p)
{
    return p->watched ? "its operations return RDLM_ERR_PEER_DEAD from now on"
                      : "new operations on it return RDLM_ERR_PEER_DEAD, but one already "
                        "in flight may never end (its endpoint is not watched: "
                        "RDLM_PEER_FAILURE)";
}

const char *rdlm_ucx_peer_name(const rdlm_ucx_ctx_t *c, uint32_t peer, char *buf,
                               size_t len)
{
    if (c->peer_label[0] == '\0')
        snprintf(buf, len, "rank %u", peer);
    else
        snprintf(buf, len, "%s (rank %u)", c->peer_label, peer);
    return buf;
}

/* UCX's error handler: runs inside ucp_worker_progress, so it only marks. */
static void rdlm_ucx_ep_error(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    rdlm_ucx_peer_t *p = arg;

    char name[RDLM_UCX_PEER_NAME_MAX];

    (void)ep;
    if (rdlm_ucx_mark_dead(p->ctx, p->rank))
        rdlm_error("ucx: lost %s (UCX: %s); %s",
                   rdlm_ucx_peer_name(p->ctx, p->rank, name, sizeof(name)),
                   ucs_status_string(status), rdlm_ucx_dead_tail(p));
}

void rdlm_ucx_peer_ep_params(rdlm_ucx_ctx_t *c, uint32_t peer, ucp_ep_params_t *p)
{
    p->field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER;
    p->err_mode =
        c->peers[peer].watched ? UCP_ERR_HANDLING_MODE_PEER : UCP_ERR_HANDLING_MODE_NONE;
    p->err_handler = (ucp_err_handler_t){.cb = rdlm_ucx_ep_error, .arg = &c->peers[peer]};
}

void rdlm_ucx_reap(rdlm_ucx_ctx_t *c)
{
    ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
                             .flags = UCP_EP_CLOSE_FLAG_FORCE};
    uint32_t r;

    rdlm_ucx_lock(c);
    rdlm_store(&c->reap, 0, RDLM_RELAXED);
    for (r = 0; r < c->super.size; r++) {
        ucp_ep_h ep = atomic_load_explicit(&c->eps[r], memory_order_relaxed);
        ucs_status_ptr_t req;

        if (ep == NULL || !c->peers[r].watched || !rdlm_ucx_is_dead(c, r))
            continue;
        atomic_store_explicit(&c->eps[r], NULL, memory_order_release);
        req = ucp_ep_close_nbx(ep, &p);
        if (UCS_PTR_IS_PTR(req))
            ucp_request_free(req); /* UCX releases it when done */
    }
    rdlm_ucx_unlock(c);
}

rdlm_status_t rdlm_ucx_failed(rdlm_ucx_ctx_t *c, uint32_t peer, ucs_status_t s,
                              const char *what)
{
    rdlm_status_t st = rdlm_ucx_status(s);
    char name[RDLM_UCX_PEER_NAME_MAX];

    rdlm_ucx_peer_name(c, peer, name, sizeof(name));
    if (st != RDLM_ERR_PEER_DEAD && !rdlm_ucx_is_dead(c, peer)) {
        rdlm_error("ucx: %s to %s failed: %s", what, name, ucs_status_string(s));
        return st;
    }
    if (rdlm_ucx_mark_dead(c, peer))
        rdlm_error("ucx: lost %s (a %s failed: %s); %s", name, what, ucs_status_string(s),
                   rdlm_ucx_dead_tail(&c->peers[peer]));
    rdlm_ucx_reap_marked(c);
    return RDLM_ERR_PEER_DEAD;
}

/* A request on a watched peer known dead, its endpoint closed, that has not ended
 * this long after: abandoned (rdlm_ucx_progress_until). UCX ends such requests with an
 * error as a rule; an emulated atomic posted while the peer was dying has been seen to
 * stay pending for ever (its wait, and rdlm_ctx_destroy's goodbye, hung). */
#define RDLM_UCX_DEAD_GRACE_NS 100000000ull

/* Progress until req completes (then free it and return its status) or, with
 * timeout_ns != 0, until timeout_ns after the first RDLM_UCX_SPINS rounds (a clock is
 * read only in a wait that long): then UCS_INPROGRESS, req still live. A request to a
 * watched peer (peer < size) that is known dead is abandoned RDLM_UCX_DEAD_GRACE_NS
 * after that was seen: freed (UCX releases it if it ever ends; its endpoint is closed,
 * so nothing more lands in its buffers), UCS_ERR_CANCELED. */
static ucs_status_t rdlm_ucx_progress_until(rdlm_ucx_ctx_t *c, uint32_t peer,
                                            ucs_status_ptr_t req, uint64_t timeout_ns)
{
    const int watched = peer < c->super.size && c->peers[peer].watched;
    uint64_t deadline = 0, dead_at = 0;
    unsigned spins = 0;
    ucs_status_t s;

    if (req == NULL)
        return UCS_OK;
    if (UCS_PTR_IS_ERR(req))
        return UCS_PTR_STATUS(req);
    for (;;) {
        rdlm_ucx_lock(c);
        ucp_worker_progress(c->worker);
        s = ucp_request_check_status(req);
        if (s != UCS_INPROGRESS)
            ucp_request_free(req);
        rdlm_ucx_unlock(c);
        if (s != UCS_INPROGRESS)
            return s;
        rdlm_ucx_reap_marked(c);
        if (++spins <= RDLM_UCX_SPINS)
            continue;
        if (watched && rdlm_ucx_is_dead(c, peer)) {
            uint64_t now = rdlm_clock_now_ns();

            if (dead_at == 0) {
                dead_at = now;
            } else if (now - dead_at >= RDLM_UCX_DEAD_GRACE_NS) {
                rdlm_warn("ucx: an operation on rank %u, which is dead, did not end %llu "
                          "ms after: abandoned",
                          peer, RDLM_UCX_DEAD_GRACE_NS / 1000000ull);
                rdlm_ucx_lock(c);
                ucp_request_free(req);
                rdlm_ucx_unlock(c);
                return UCS_ERR_CANCELED;
            }
        }
        if (timeout_ns != 0) {
            uint64_t now = rdlm_clock_now_ns();

            if (deadline == 0)
                deadline = now + timeout_ns;
            else if (now >= deadline)
                return UCS_INPROGRESS;
        }
        sched_yield();
    }
}

rdlm_status_t rdlm_ucx_wait(rdlm_ucx_ctx_t *c, uint32_t peer, ucs_status_ptr_t req,
                            const char *what)
{
    ucs_status_t s =
        rdlm_ucx_progress_until(c, peer, req, c->peers[peer].watched ? c->timeout_ns : 0);

    char name[RDLM_UCX_PEER_NAME_MAX];

    if (s == UCS_INPROGRESS) {
        if (rdlm_ucx_mark_dead(c, peer))
            rdlm_error("ucx: lost %s (a %s unanswered for %llu ms); %s",
                       rdlm_ucx_peer_name(c, peer, name, sizeof(name)), what,
                       (unsigned long long)(c->timeout_ns / 1000000u),
                       rdlm_ucx_dead_tail(&c->peers[peer]));
        rdlm_ucx_reap(c);
        s = rdlm_ucx_progress_until(c, peer, req, 0); /* the forced close ends it */
    }
    return s == UCS_OK ? RDLM_OK : rdlm_ucx_failed(c, peer, s, what);
}

void rdlm_ucx_wait_close(rdlm_ucx_ctx_t *c, uint32_t peer, ucs_status_ptr_t req)
{
    ucs_status_t s = rdlm_ucx_progress_until(c, peer, req, c->timeout_ns);

    if (s == UCS_INPROGRESS) {
        rdlm_warn("ucx: closing the endpoint to rank %u did not finish within %llu ms; "
                  "leaving it to the worker's destruction",
                  peer, (unsigned long long)(c->timeout_ns / 1000000u));
        rdlm_ucx_lock(c);
        ucp_request_free(req);
        rdlm_ucx_unlock(c);
    } else if (s != UCS_OK) {
        rdlm_debug("ucx: closing the endpoint to rank %u: %s", peer, ucs_status_string(s));
    }
}
