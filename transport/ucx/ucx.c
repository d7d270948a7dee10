/*
 * The UCX backend: one ucp context and one worker per rdlm transport context.
 *
 * - Context: ucp_config_read("RDLM", ...) so RDLM_UCX_* tunes rdlm's UCX apart from
 *   MPI's; features AMO64 | RMA | AM | WAKEUP.
 * - Worker: when the caller asked for MULTI or a progress thread runs, the worker is
 *   SERIALIZED and every worker call goes through ctx->lock (recursive, sleeping),
 *   never UCX's MULTI mode, whose spinning lock collapses with more threads than
 *   cores (see rdlm_ucx_open); this also works with a UCX built without
 *   --enable-mt. ucp_worker_query tells what UCX granted (logged at debug).
 * - Wire-up: worker addresses are allgathered through the bootstrap at open;
 *   endpoints are created on first use per peer.
 * - Completion: every blocking call progresses the worker until its request is done;
 *   the optional progress thread sleeps on the worker's event fd (ucp_worker_arm +
 *   poll) and handles peers' emulated atomics and messages while the owner computes.
 * - Capabilities: read from the endpoint lanes (ucp_ep_print_info): an "amo" lane on
 *   a shared-memory or self transport means CPU atomics; on a NIC transport, device
 *   atomics; no amo lane means UCP emulates atomics with messages that the target
 *   executes (with CPU atomics) inside its progress.
 * - Dead peers (peer.c): endpoints to peers not reached through shared memory use
 *   UCP_ERR_HANDLING_MODE_PEER; a dead peer gives RDLM_ERR_PEER_DEAD, at once after
 *   it was found dead, and every wait on such a peer is bounded.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "ucx_internal.h"

#define RDLM_UCX_RKEY_MAGIC 0x52444c55u /* "RDLU" */
#define RDLM_UCX_AM_MAX 1024u           /* payload bytes: eager on every transport */

/* A packed key as rdlm sends it: this header, then ucp_rkey_pack's bytes. */
typedef struct rdlm_ucx_rkey_wire {
    uint32_t magic;
    uint32_t ucp_len;
    uint64_t base;
    uint64_t len;
} rdlm_ucx_rkey_wire_t;

struct rdlm_tl_mem {
    rdlm_tl_region_t region; /* first: addr, len, the context's list */
    ucp_mem_h memh;
};

rdlm_status_t rdlm_ucx_status(ucs_status_t s)
{
    switch (s) {
    case UCS_OK:
        return RDLM_OK;
    case UCS_INPROGRESS:
        return RDLM_INPROGRESS;
    case UCS_ERR_NO_MEMORY:
        return RDLM_ERR_NO_MEMORY;
    case UCS_ERR_INVALID_PARAM:
        return RDLM_ERR_INVALID_ARG;
    case UCS_ERR_UNSUPPORTED:
        return RDLM_ERR_UNSUPPORTED;
    case UCS_ERR_TIMED_OUT:
        return RDLM_ERR_TIMEOUT;
    case UCS_ERR_NO_RESOURCE:
        return RDLM_ERR_NO_RESOURCE;
    case UCS_ERR_UNREACHABLE:
    case UCS_ERR_CONNECTION_RESET:
    case UCS_ERR_ENDPOINT_TIMEOUT:
    case UCS_ERR_CANCELED:
        return RDLM_ERR_PEER_DEAD;
    default:
        return RDLM_ERR_IO;
    }
}

static unsigned rdlm_ucx_progress(rdlm_tl_ctx_h ctx)
{
    rdlm_ucx_ctx_t *c = (rdlm_ucx_ctx_t *)ctx;
    unsigned n;

    rdlm_ucx_lock(c);
    n = ucp_worker_progress(c->worker);
    rdlm_ucx_unlock(c);
    rdlm_ucx_reap_marked(c);
    rdlm_tl_stat_add(&c->super.stats.progress, 1);
    return n;
}

/* The progress thread's pause while another thread progresses the worker: from 50 us,
 * doubling up to 1 ms while that goes on (it wakes the CPU the poller needs as seldom
 * as it can, and takes over within 1 ms once the poller stops). */
#define RDLM_UCX_YIELD_NS 50000ull
#define RDLM_UCX_YIELD_MAX_NS 1000000ull
/* The progress thread keeps polling this long after it handled an event. */
#define RDLM_UCX_LINGER_NS 100000ull

static uint64_t rdlm_ucx_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Slow path of rdlm_ucx_ep: create the endpoint to peer (once), or RDLM_ERR_PEER_DEAD
 * once the peer is dead (its endpoint closed). */
static __attribute__((noinline)) rdlm_status_t
rdlm_ucx_ep_create(rdlm_ucx_ctx_t *c, uint32_t peer, ucp_ep_h *ep_p)
{
    ucp_ep_params_t p;
    ucp_ep_h ep;
    ucs_status_t s;

    if (peer >= c->super.size)
        return RDLM_ERR_INVALID_ARG;
    pthread_mutex_lock(&c->lock);
    if (rdlm_ucx_is_dead(c, peer)) {
        pthread_mutex_unlock(&c->lock);
        return RDLM_ERR_PEER_DEAD; /* logged when it was found dead */
    }
    ep = atomic_load_explicit(&c->eps[peer], memory_order_relaxed);
    if (ep == NULL) {
        p = (ucp_ep_params_t){
            .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
            .address = (const ucp_address_t *)(c->addrs + (size_t)peer * c->addr_len),
        };
        rdlm_ucx_peer_ep_params(c, peer, &p);
        s = ucp_ep_create(c->worker, &p, &ep);
        if (s != UCS_OK) {
            char env[RDLM_UCX_ENV_BYTES];

            pthread_mutex_unlock(&c->lock);
            rdlm_ucx_env_describe(env, sizeof(env));
            rdlm_error("ucx: endpoint to rank %u: %s%s; in effect: %s", peer,
                       ucs_status_string(s),
                       c->peers[peer].watched
                           ? " (it is watched for failure, which needs a transport with a "
                             "peer-failure handler, such as tcp: see RDLM_PEER_FAILURE)"
                           : "",
                       env);
            return rdlm_ucx_status(s);
        }
        atomic_store_explicit(&c->eps[peer], ep, memory_order_release);
    }
    pthread_mutex_unlock(&c->lock);
    *ep_p = ep;
    return RDLM_OK;
}

/* The endpoint to peer, created on first use; the common case is one load, inline. */
static inline rdlm_status_t rdlm_ucx_ep(rdlm_ucx_ctx_t *c, uint32_t peer, ucp_ep_h *ep_p)
{
    ucp_ep_h ep;

    if (__builtin_expect(peer < c->super.size, 1)) {
        ep = atomic_load_explicit(&c->eps[peer], memory_order_acquire);
        if (__builtin_expect(ep != NULL, 1)) {
            *ep_p = ep;
            return RDLM_OK;
        }
    }
    return rdlm_ucx_ep_create(c, peer, ep_p);
}

/* ---- capabilities from the endpoint lanes ---------------------------------------------
 */

/* Transports whose atomics are CPU atomics on the target's memory. */
static int rdlm_ucx_tl_is_cpu(const char *tl, size_t n)
{
    static const char *const cpu[] = {"self", "posix", "sysv", "xpmem", "knem", "cma"};
    size_t i;

    for (i = 0; i < sizeof(cpu) / sizeof(cpu[0]); i++)
        if (strlen(cpu[i]) == n && strncmp(tl, cpu[i], n) == 0)
            return 1;
    return 0;
}

/* An endpoint's lanes as UCX prints them, one per line:
 * "lane[0]:  1:sysv/memory.0 md[1] -> ... amo#0 am am_bw#0". The text is malloc'ed
 * (free it); NULL without memory. */
static char *rdlm_ucx_ep_lanes(ucp_ep_h ep)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);

    if (f == NULL)
        return NULL;
    ucp_ep_print_info(ep, f);
    fclose(f);
    return text;
}

/* The transport name of a lane line that serves use (" amo#", " am "), in *tl_p with
 * its length; 0 if the line is no lane or serves no such use. */
static size_t rdlm_ucx_lane_tl(const char *line, const char *use, const char **tl_p)
{
    const char *tl = strstr(line, "]:"), *slash;
    char padded[512];

    snprintf(padded, sizeof(padded), "%s ", line); /* so a use at the end matches too */
    if (strstr(line, "lane[") == NULL || tl == NULL || strstr(padded, use) == NULL)
        return 0;
    tl = strchr(tl + 2, ':');
    slash = tl != NULL ? strchr(tl + 1, '/') : NULL;
    if (slash == NULL)
        return 0;
    *tl_p = tl + 1;
    return (size_t)(slash - (tl + 1));
}

/* Read one endpoint's atomic lanes: whether it has one, and whether one is a NIC's. */
static void rdlm_ucx_inspect_ep(ucp_ep_h ep, int *has_amo_p, int *device_p)
{
    char *text = rdlm_ucx_ep_lanes(ep), *line, *save = NULL;

    *has_amo_p = 0;
    for (line = text != NULL ? strtok_r(text, "\n", &save) : NULL; line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        const char *tl;
        size_t n = rdlm_ucx_lane_tl(line, " amo#", &tl);

        if (n == 0)
            continue;
        *has_amo_p = 1;
        if (!rdlm_ucx_tl_is_cpu(tl, n))
            *device_p = 1;
    }
    free(text);
}

/* setup->peer_tcp: the endpoint's active-message lane is UCX's tcp. */
static int rdlm_ucx_peer_tcp(rdlm_tl_ctx_h ctx, uint32_t peer)
{
    rdlm_ucx_ctx_t *c = (rdlm_ucx_ctx_t *)ctx;
    char *text, *line, *save = NULL;
    ucp_ep_h ep;
    int tcp = 0;

    if (peer == c->super.rank || rdlm_ucx_ep(c, peer, &ep) != RDLM_OK)
        return 0;
    rdlm_ucx_lock(c);
    text = rdlm_ucx_ep_lanes(ep);
    rdlm_ucx_unlock(c);
    for (line = text != NULL ? strtok_r(text, "\n", &save) : NULL; line != NULL && !tcp;
         line = strtok_r(NULL, "\n", &save)) {
        const char *tl;

        tcp = rdlm_ucx_lane_tl(line, " am ", &tl) == 3 && strncmp(tl, "tcp", 3) == 0;
    }
    free(text);
    return tcp;
}

/* Resources are listed as "#      resource 1  :  md 1  dev 1  flags -- tcp/lo". When
 * the list cannot be had (no memory), the answer is 1: the conservative one for both
 * callers (target progress needed; shared memory kept). */
int rdlm_ucx_context_has(rdlm_ucx_ctx_t *c, const char *const *tls)
{
    char *text = NULL, pat[32];
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    int found = 0;

    if (f == NULL)
        return 1;
    ucp_context_print_info(c->context, f);
    fclose(f);
    for (; *tls != NULL && !found; tls++) {
        snprintf(pat, sizeof(pat), " %s/", *tls);
        found = text != NULL && strstr(text, pat) != NULL;
    }
    free(text);
    return found;
}

/* Conservative: device atomics if any endpoint looked at uses a NIC for them; target
 * progress needed if one emulates them, or if the context could reach some peer over
 * TCP (which has no hardware atomics). */
static rdlm_status_t rdlm_ucx_detect_caps(rdlm_ucx_ctx_t *c)
{
    static const char *const tcp[] = {"tcp", NULL};
    uint32_t peers[2] = {c->super.rank, (c->super.rank + 1) % c->super.size};
    int device = 0, needs = 0, i;

    for (i = 0; i < 2; i++) {
        ucp_ep_h ep;
        int has_amo;
        rdlm_status_t st = rdlm_ucx_ep(c, peers[i], &ep);

        if (st != RDLM_OK)
            return st;
        rdlm_ucx_lock(c);
        rdlm_ucx_inspect_ep(ep, &has_amo, &device);
        rdlm_ucx_unlock(c);
        if (!has_amo)
            needs = 1;
    }
    if (c->super.size > 1 && rdlm_ucx_context_has(c, tcp))
        needs = 1;
    c->domain = device ? RDLM_TL_ATOMIC_DEVICE : RDLM_TL_ATOMIC_CPU;
    c->needs_progress = needs;
    return RDLM_OK;
}

/* ---- setup ops
 * --------------------------------------------------------------------------- */

static rdlm_status_t rdlm_ucx_query(rdlm_tl_ctx_h ctx, rdlm_tl_caps_t *caps_p)
{
    rdlm_ucx_ctx_t *c = (rdlm_ucx_ctx_t *)ctx;

    *caps_p = (rdlm_tl_caps_t){
        .backend = "ucx",
        .flags = RDLM_TL_CAP_AMO64 | RDLM_TL_CAP_AMO64_POST | RDLM_TL_CAP_RMA |
                 RDLM_TL_CAP_AM | RDLM_TL_CAP_LOOPBACK |
                 (c->watching ? RDLM_TL_CAP_PEER_FAILURE : 0),
        .atomic_domain = c->domain,
        .amo_needs_target_progress = c->needs_progress,
        .thread_mode = c->granted == UCS_THREAD_MODE_MULTI || c->serialize
                           ? RDLM_TL_THREAD_MULTI
                           : RDLM_TL_THREAD_SINGLE,
        .serialized_by_rdlm = c->serialize,
        .progress_thread = c->thread_running,
        .am_max_payload = RDLM_UCX_AM_MAX,
        .rank = c->super.rank,
        .size = c->super.size,
    };
    return RDLM_OK;
}

/* Issue the flush of the endpoint to peer: *req_p is its request (NULL when there is
 * no endpoint yet: nothing was posted). RDLM_ERR_PEER_DEAD once peer is dead. */
static rdlm_status_t rdlm_ucx_flush_post(rdlm_ucx_ctx_t *c, uint32_t peer,
                                         ucs_status_ptr_t *req_p)
{
    ucp_request_param_t p = {.op_attr_mask = 0};
    ucp_ep_h ep;

    *req_p = NULL;
    if (!rdlm_ucx_lock_live(c, peer))
        return RDLM_ERR_PEER_DEAD;
    ep = atomic_load_explicit(&c->eps[peer], memory_order_acquire);
    if (ep != NULL)
        *req_p = ucp_ep_flush_nbx(ep, &p);
    rdlm_ucx_unlock(c);
    return RDLM_OK;
}

/* RDLM_TL_PEER_ALL: every endpoint's flush is issued before the first is waited for;
 * a dead peer makes the answer RDLM_ERR_PEER_DEAD (what was posted to it cannot be
 * complete), after the live ones were flushed. */
static rdlm_status_t rdlm_ucx_flush(rdlm_tl_ctx_h ctx, uint32_t peer)
{
    rdlm_ucx_ctx_t *c = (rdlm_ucx_ctx_t *)ctx;
    rdlm_status_t st, first = RDLM_OK;
    ucs_status_ptr_t req, *reqs;
    uint32_t r;

    if (peer != RDLM_TL_PEER_ALL) {
        if (peer >= c->super.size)
            return RDLM_ERR_INVALID_ARG;
        st = rdlm_ucx_flush_post(c, peer, &req);
        return st != RDLM_OK ? st : rdlm_ucx_wait(c, peer, req, "flush");
    }
    reqs = calloc(c->super.size, sizeof(*reqs));
    if (reqs == NULL)
        return RDLM_ERR_NO_MEMORY;
    for (r = 0; r < c->super.size; r++) {
        st = rdlm_ucx_flush_post(c, r, &reqs[r]);
        first = first != RDLM_OK ? first : st;
    }
    for (r = 0; r < c->super.size; r++) {
        st = rdlm_ucx_wait(c, r, reqs[r], "flush");
        first = first != RDLM_OK ? first : st;
    }
    free(reqs);
    return first;
}

static void *rdlm_ucx_progress_main(void *arg)
{
    rdlm_ucx_ctx_t *c = arg;
    ucs_status_t s;

    uint64_t seen = rdlm_load(&c->super.stats.progress, RDLM_RELAXED);
    uint64_t pause = RDLM_UCX_YIELD_NS, busy_until = 0;
    unsigned events;

    while (!rdlm_load(&c->stop, RDLM_ACQUIRE)) {
        struct pollfd pfd = {.fd = c->efd, .events = POLLIN};
        uint64_t now = rdlm_load(&c->super.stats.progress, RDLM_RELAXED);

        /* Another thread is progressing the worker (a caller waiting in a blocking
         * rdlm call): stay out of its way instead of contending for the worker and
         * the CPU; take over once it stops. */
        if (now != seen) {
            struct timespec ts = {0, (long)pause};

            seen = now;
            nanosleep(&ts, NULL);
            pause = pause * 2 < RDLM_UCX_YIELD_MAX_NS ? pause * 2 : RDLM_UCX_YIELD_MAX_NS;
            continue;
        }
        pause = RDLM_UCX_YIELD_NS;
        events = rdlm_ucx_progress(&c->super);
        if (c->super.after_progress != NULL)
            c->super.after_progress(c->super.after_progress_arg);
        /* our own progress calls, the hook's included */
        seen = rdlm_load(&c->super.stats.progress, RDLM_RELAXED);
        if (events != 0) {
            busy_until = rdlm_ucx_now_ns() + RDLM_UCX_LINGER_NS;
            continue;
        }
        /* Operations come in bursts (an acquire, then its release a few microseconds
         * later): keep polling briefly after one before sleeping, so the next one
         * does not pay a wake-up. */
        if (rdlm_ucx_now_ns() < busy_until) {
            sched_yield();
            continue;
        }
        rdlm_ucx_lock(c);
        s = ucp_worker_arm(c->worker);
        rdlm_ucx_unlock(c);
        if (s == UCS_ERR_BUSY)
            continue; /* events arrived meanwhile: progress again */
        if (s != UCS_OK) {
            rdlm_error("ucx: progress thread: ucp_worker_arm: %s", ucs_status_string(s));
            break;
        }
        /* Sleep until the worker has an event or destroy signals; the timeout only
         * bounds a lost wake-up. */
        if (poll(&pfd, 1, 100) < 0 && errno != EINTR) {
            rdlm_error("ucx: progress thread: poll: %s", strerror(errno));
            break;
        }
    }
    return NULL;
}

static void rdlm_ucx_release_rkey(void *backend, void *arg)
{
    (void)arg;
    ucp_rkey_destroy(backend);
}

/* Close every endpoint: issue all closes, then progress until each completes (a close
 * may need the peer's progress, so they must not wait one after another). */
static void rdlm_ucx_close_eps(rdlm_ucx_ctx_t *c)
{
    ucp_request_param_t p = {.op_attr_mask = 0}; /* flush mode: FORCE needs PEER mode */
    ucs_status_ptr_t *reqs;
    uint32_t r;

    if (c->eps == NULL || c->peers == NULL)
        return; /* no endpoint was created */
    /* Dead watched peers' endpoints are force-closed; the others flushed and closed. */
    rdlm_ucx_reap(c);
    reqs = calloc(c->super.size, sizeof(*reqs));
    for (r = 0; r < c->super.size; r++) {
        ucp_ep_h ep = atomic_load_explicit(&c->eps[r], memory_order_relaxed);
        ucs_status_ptr_t req;

        if (ep == NULL)
            continue;
        atomic_store_explicit(&c->eps[r], NULL, memory_order_relaxed);
        rdlm_ucx_lock(c);
        req = ucp_ep_close_nbx(ep, &p);
        rdlm_ucx_unlock(c);
        if (reqs != NULL)
            reqs[r] = req;
        else
            rdlm_ucx_wait_close(c, r, req);
    }
    if (reqs == NULL)
        return;
    for (r = 0; r < c->super.size; r++)
        rdlm_ucx_wait_close(c, r, reqs[r]);
    free(reqs);
}

static rdlm_status_t rdlm_ucx_mem_dereg(rdlm_tl_ctx_h ctx, rdlm_tl_mem_h mem);

/* Tear down whatever exists (also for a half-opened context). Keys go before the
 * endpoints they were unpacked on; regions the caller left registered go before the
 * context (UCX aborts on a context with regions in use). */
static void rdlm_ucx_free(rdlm_ucx_ctx_t *c)
{
    if (c->thread_running) {
        rdlm_store(&c->stop, 1, RDLM_RELEASE);
        ucp_worker_signal(c->worker);
        pthread_join(c->thread, NULL);
        c->thread_running = 0;
    }
    rdlm_tl_rkey_table_fini(&c->rkeys, rdlm_ucx_release_rkey, c);
    rdlm_ucx_close_eps(c);
    if (c->worker != NULL)
        ucp_worker_destroy(c->worker);
    while (c->mems != NULL) /* regions the caller did not deregister */
        rdlm_ucx_mem_dereg(&c->super, rdlm_tl_region_mem(c->mems));
    if (c->context != NULL)
        ucp_cleanup(c->context);
    free(c->eps);
    free(c->peers);
    free(c->addrs);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static int rdlm_ucx_peer_dead(rdlm_tl_ctx_h ctx, uint32_t peer)
{
    rdlm_ucx_ctx_t *c = (rdlm_ucx_ctx_t *)ctx;

    return c->peers != NULL && peer < c->boot.size && rdlm_ucx_is_dead(c, peer);
}

/* Collective. Two barriers, both progressing the worker: the first lets peers finish
 * their (possibly emulated) operations on our memory; the second keeps every worker
 * alive until every peer has closed its endpoints to it. */
/* The destroy barriers' idle: progress, and give up (-1: the barrier ends with
 * RDLM_ERR_PEER_DEAD) once a peer is known dead, as it will never arrive. */
static int rdlm_ucx_destroy_idle(void *arg)
{
    rdlm_ucx_ctx_t *c = arg;

    for (uint32_t r = 0; c->peers != NULL && r < c->boot.size; r++) {
        if (rdlm_ucx_is_dead(c, r)) {
            return -1;
        }
    }
    return rdlm_tl_progress_idle(c);
}

/* One of destroy's barriers; a failure is said (at debug when a dead process made
 * the bootstrap give it up: the caller has said that already) and destroy goes on. */
static void rdlm_ucx_destroy_barrier(rdlm_ucx_ctx_t *c, const rdlm_tl_idle_t *idle,
                                     const char *when)
{
    rdlm_status_t s = c->boot.barrier(c->boot.arg, idle);

    if (s == RDLM_ERR_PEER_DEAD) {
        rdlm_debug("ucx: destroy: no barrier %s: a process is dead", when);
    } else if (s != RDLM_OK) {
        rdlm_warn("ucx: destroy: bootstrap barrier %s failed (%s); closing anyway", when,
                  rdlm_status_name(s));
    }
}

static void rdlm_ucx_destroy(rdlm_tl_ctx_h ctx)
{
    rdlm_ucx_ctx_t *c = (rdlm_ucx_ctx_t *)ctx;
    rdlm_tl_idle_t idle = {rdlm_ucx_destroy_idle, ctx};

    if (c == NULL)
        return;
    (void)rdlm_ucx_flush(ctx, RDLM_TL_PEER_ALL);
    rdlm_ucx_destroy_barrier(c, &idle, "before closing endpoints");
    rdlm_tl_rkey_table_fini(&c->rkeys, rdlm_ucx_release_rkey, c);
    rdlm_ucx_close_eps(c);
    rdlm_ucx_destroy_barrier(c, &idle, "after closing endpoints");
    rdlm_ucx_free(c);
}

/* ---- memory
 * ------------------------------------------------------------------------------- */

static rdlm_status_t rdlm_ucx_mem_reg(rdlm_tl_ctx_h ctx, void *addr, size_t len,
                                      rdlm_tl_mem_h *mem_p)
{
    rdlm_ucx_ctx_t *c = (rdlm_ucx_ctx_t *)ctx;
    ucp_mem_map_params_t p = {
        .field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                      UCP_MEM_MAP_PARAM_FIELD_FLAGS,
        .address = addr,
        .length = len,
        .flags = addr == NULL ? UCP_MEM_MAP_ALLOCATE : 0,
    };
    ucp_mem_attr_t attr = {.field_mask =
                               UCP_MEM_ATTR_FIELD_ADDRESS | UCP_MEM_ATTR_FIELD_LENGTH};
    struct rdlm_tl_mem *m;
    ucs_status_t s;

    if (len == 0 || mem_p == NULL)
        return RDLM_ERR_INVALID_ARG;
    m = calloc(1, sizeof(*m));
    if (m == NULL)
        return RDLM_ERR_NO_MEMORY;
    s = ucp_mem_map(c->context, &p, &m->memh);
    if (s != UCS_OK)
        goto err_free;
    s = ucp_mem_query(m->memh, &attr);
    if (s != UCS_OK)
        goto err_unmap;
    if (addr == NULL)
        memset(attr.address, 0, len);
    rdlm_tl_region_add(&c->mems, &c->lock, &m->region, attr.address, len);
    *mem_p = m;
    return RDLM_OK;

err_unmap:
    ucp_mem_unmap(c->context, m->memh);
err_free:
    free(m);
    rdlm_error("ucx: registering %zu bytes: %s", len, ucs_status_string(s));
    return rdlm_ucx_status(s);
}

static rdlm_status_t rdlm_ucx_rkey_pack(rdlm_tl_ctx_h ctx, rdlm_tl_mem_h mem, void *buf,
                                        size_t buf_len, size_t *len_p)
{
    rdlm_ucx_ctx_t *c = (rdlm_ucx_ctx_t *)ctx;
    rdlm_ucx_rkey_wire_t w;
    void *packed = NULL;
    size_t plen = 0;
    ucs_status_t s;

    if (mem == NULL)
        return RDLM_ERR_BAD_HANDLE;
#if UCP_API_VERSION >= UCP_VERSION(1, 14)
    {
        ucp_memh_pack_params_t pp = {.field_mask = 0};
        s = ucp_memh_pack(mem->memh, &pp, &packed, &plen);
    }
#else
    s = ucp_rkey_pack(c->context, mem->memh, &packed, &plen);
#endif
    if (s != UCS_OK) {
        rdlm_error("ucx: packing a remote key: %s", ucs_status_string(s));
        return rdlm_ucx_status(s);
    }
    if (sizeof(w) + plen > buf_len) {
        rdlm_error("ucx: packed remote key needs %zu bytes, buffer has %zu",
                   sizeof(w) + plen, buf_len);
#if UCP_API_VERSION >= UCP_VERSION(1, 14)
        ucp_memh_buffer_release(packed, &(ucp_memh_buffer_release_params_t){0});
#else
        ucp_rkey_buffer_release(packed);
#endif
        return RDLM_ERR_NO_RESOURCE;
    }
    (void)c;
    w = (rdlm_ucx_rkey_wire_t){RDLM_UCX_RKEY_MAGIC, (uint32_t)plen,
                               (uint64_t)(uintptr_t)mem->region.addr, mem->region.len};
    memcpy(buf, &w, sizeof(w));
    memcpy((char *)buf + sizeof(w), packed, plen);
#if UCP_API_VERSION >= UCP_VERSION(1, 14)
    ucp_memh_buffer_release(packed, &(ucp_memh_buffer_release_params_t){0});
#else
    ucp_rkey_buffer_release(packed);
#endif
    *len_p = sizeof(w) + plen;
    return RDLM_OK;
}

static rdlm_status_t rdlm_ucx_rkey_unpack(rdlm_tl_ctx_h ctx, uint32_t peer, const void *buf,
                                          size_t len, rdlm_tl_rkey_h *rkey_p)
{
    rdlm_ucx_ctx_t *c = (rdlm_ucx_ctx_t *)ctx;
    rdlm_ucx_rkey_wire_t w;
    ucp_rkey_h rkey;
    ucp_ep_h ep;
    ucs_status_t s;
    rdlm_status_t st;

    if (buf == NULL || rkey_p == NULL || peer >= c->super.size)
        return RDLM_ERR_INVALID_ARG;
    if (len < sizeof(w))
        goto bad;
    memcpy(&w, buf, sizeof(w));
    if (w.magic != RDLM_UCX_RKEY_MAGIC || w.ucp_len == 0 || w.ucp_len > len - sizeof(w) ||
        w.len == 0)
        goto bad;
    st = rdlm_ucx_ep(c, peer, &ep);
    if (st != RDLM_OK)
        return st;
    if (!rdlm_ucx_lock_live(c, peer))
        return RDLM_ERR_PEER_DEAD;
    s = ucp_ep_rkey_unpack(ep, (const char *)buf + sizeof(w), &rkey);
    rdlm_ucx_unlock(c);
    if (s != UCS_OK) {
        rdlm_error("ucx: unpacking rank %u's remote key: %s", peer, ucs_status_string(s));
        return rdlm_ucx_status(s);
    }
    st = rdlm_tl_rkey_table_add(&c->rkeys, peer, w.base, w.len, rkey, rkey_p);
    if (st != RDLM_OK)
        ucp_rkey_destroy(rkey);
    return st;
bad:
    rdlm_error("ucx: rank %u's remote key is malformed (%zu bytes)", peer, len);
    return RDLM_ERR_INVALID_ARG;
}

static rdlm_status_t rdlm_ucx_rkey_release(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey)
{
    rdlm_ucx_ctx_t *c = (rdlm_ucx_ctx_t *)ctx;
    void *backend;
    rdlm_status_t st = rdlm_tl_rkey_table_remove(&c->rkeys, rkey, &backend);

    if (st != RDLM_OK)
        return st;
    rdlm_ucx_lock(c);
    ucp_rkey_destroy(backend);
    rdlm_ucx_unlock(c);
    return RDLM_OK;
}

static rdlm_status_t rdlm_ucx_mem_dereg(rdlm_tl_ctx_h ctx, rdlm_tl_mem_h mem)
{
    rdlm_ucx_ctx_t *c = (rdlm_ucx_ctx_t *)ctx;
    ucs_status_t s;

    if (mem == NULL)
        return RDLM_ERR_BAD_HANDLE;
    rdlm_tl_region_remove(&c->mems, &c->lock, &mem->region);
    s = ucp_mem_unmap(c->context, mem->memh);
    free(mem);
    if (s != UCS_OK) {
        rdlm_error("ucx: deregistering: %s", ucs_status_string(s));
        return rdlm_ucx_status(s);
    }
    return RDLM_OK;
}

/* ---- atomics ----------------------------------------------------------------------------
 */

/* Where an operation on (rkey, offset) goes. */
typedef struct rdlm_ucx_dest {
    uint32_t peer;
    ucp_ep_h ep;
    uint64_t raddr;
    ucp_rkey_h rkey;
} rdlm_ucx_dest_t;

/* Resolve (rkey, offset) to the peer, its endpoint, the remote address and ucp key. */
static inline rdlm_status_t rdlm_ucx_target(rdlm_ucx_ctx_t *c, rdlm_tl_rkey_h h,
                                            uint64_t offset, uint64_t len, uint64_t align,
                                            rdlm_ucx_dest_t *d)
{
    rdlm_tl_rkey_slot_t *s;
    rdlm_status_t st = rdlm_tl_rkey_lookup(&c->rkeys, h, offset, len, align, &s);

    if (st != RDLM_OK)
        return st;
    st = rdlm_ucx_ep(c, s->peer, &d->ep);
    if (st != RDLM_OK)
        return st;
    d->peer = s->peer;
    d->raddr = s->base + offset;
    d->rkey = s->backend;
    return RDLM_OK;
}

/* Fetching atomics. For CSWAP, operand is the compare value and the reply buffer holds
 * the swap value on input and the old value on output (ucp.h). *old_p is written only
 * on success.
 *
 * Whether worker calls need rdlm's lock is decided at open (c->serialize, constant
 * afterwards): the hot path checks it once and, in the usual case (a MULTI worker or a
 * single-threaded context), makes no lock call at all. The reply buffer is a local and
 * UCP_OP_ATTR_FLAG_NO_IMM_CMPL is off, so over shared memory ucp_atomic_op_nbx
 * typically completes at once (returns NULL); otherwise rdlm_ucx_wait progresses until
 * the request is done (bounded on a watched peer; the reply is written before it
 * returns, whatever happens to the peer). */

/* Serialised variant: every worker call under c->lock (recursive). */
static __attribute__((noinline)) rdlm_status_t
rdlm_ucx_amo_serialized(rdlm_ucx_ctx_t *c, ucp_atomic_op_t op, const rdlm_ucx_dest_t *d,
                        uint64_t operand, uint64_t reply_in, uint64_t *old_p)
{
    uint64_t reply = reply_in;
    ucp_request_param_t p = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_REPLY_BUFFER,
        .datatype = ucp_dt_make_contig(sizeof(uint64_t)),
        .reply_buffer = &reply,
    };
    ucs_status_ptr_t req;
    rdlm_status_t st;

    if (!rdlm_ucx_lock_live(c, d->peer))
        return RDLM_ERR_PEER_DEAD;
    req = ucp_atomic_op_nbx(d->ep, op, &operand, 1, d->raddr, d->rkey, &p);
    rdlm_ucx_unlock(c);
    st = rdlm_ucx_wait(c, d->peer, req, "remote atomic");
    if (st == RDLM_OK)
        *old_p = reply;
    return st;
}

/* The shared body of cswap64 / fadd64 / swap64 / for64; op is a constant in each
 * caller. */
static inline __attribute__((always_inline)) rdlm_status_t
rdlm_ucx_amo(rdlm_tl_ctx_h ctx, ucp_atomic_op_t op, rdlm_tl_rkey_h h, uint64_t offset,
             uint64_t operand, uint64_t reply_in, uint64_t *old_p)
{
    rdlm_ucx_ctx_t *c = (rdlm_ucx_ctx_t *)ctx;
    uint64_t reply = reply_in;
    ucp_request_param_t p = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_REPLY_BUFFER,
        .datatype = ucp_dt_make_contig(sizeof(uint64_t)),
        .reply_buffer = &reply,
    };
    ucs_status_ptr_t req;
    rdlm_ucx_dest_t d;
    rdlm_status_t st = rdlm_ucx_target(c, h, offset, 8, 8, &d);

    if (__builtin_expect(st != RDLM_OK, 0))
        return st;
    rdlm_tl_stat_add(&c->super.stats.amo, 1);
    if (__builtin_expect(c->serialize, 0))
        return rdlm_ucx_amo_serialized(c, op, &d, operand, reply_in, old_p);
    req = ucp_atomic_op_nbx(d.ep, op, &operand, 1, d.raddr, d.rkey, &p);
    if (__builtin_expect(req != NULL, 0)) { /* NULL: completed at once (UCS_OK) */
        st = rdlm_ucx_wait(c, d.peer, req, "remote atomic");
        if (st != RDLM_OK)
            return st;
    }
    *old_p = reply;
    return RDLM_OK;
}

static rdlm_status_t rdlm_ucx_cswap64(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey,
                                      uint64_t offset, uint64_t compare, uint64_t swap,
                                      uint64_t *old_p)
{
    return rdlm_ucx_amo(ctx, UCP_ATOMIC_OP_CSWAP, rkey, offset, compare, swap, old_p);
}

static rdlm_status_t rdlm_ucx_fadd64(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey,
                                     uint64_t offset, uint64_t add, uint64_t *old_p)
{
    return rdlm_ucx_amo(ctx, UCP_ATOMIC_OP_ADD, rkey, offset, add, 0, old_p);
}

static rdlm_status_t rdlm_ucx_swap64(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey,
                                     uint64_t offset, uint64_t value, uint64_t *old_p)
{
    return rdlm_ucx_amo(ctx, UCP_ATOMIC_OP_SWAP, rkey, offset, value, 0, old_p);
}

/* UCX 1.13's fetching OR is wrong where the endpoint has an atomic lane of its own
 * (measured with a plain ucp program and tl_conformance: over self, and over posix or
 * sysv to memory UCX allocated, AND and OR leave the word as it was and XOR does an
 * AND); emulated through active messages (tcp) it is right. So a peer whose endpoint
 * has an atomic lane (this process's own too) is or-ed by a compare-and-swap loop; the
 * endpoint's lanes are read once per peer. */
static rdlm_status_t rdlm_ucx_for64(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey, uint64_t offset,
                                    uint64_t bits, uint64_t *old_p)
{
    rdlm_ucx_ctx_t *c = (rdlm_ucx_ctx_t *)ctx;
    rdlm_ucx_dest_t d;
    rdlm_status_t st = rdlm_ucx_target(c, rkey, offset, 8, 8, &d);
    uint32_t path;

    if (st != RDLM_OK)
        return st;
    path = rdlm_load(&c->peers[d.peer].or_path, RDLM_ACQUIRE);
    if (path == 0) {
        int has_amo = 0, device = 0;

        rdlm_ucx_lock(c);
        rdlm_ucx_inspect_ep(d.ep, &has_amo, &device);
        rdlm_ucx_unlock(c);
        path = has_amo || d.peer == ctx->rank ? 2 : 1;
        rdlm_debug("ucx: for64 to rank %u by %s", d.peer,
                   path == 2 ? "a compare-and-swap loop" : "UCX's OR");
        rdlm_store(&c->peers[d.peer].or_path, path, RDLM_RELEASE);
    }
    if (path == 2)
        return rdlm_tl_cas_loop(ctx, rkey, offset, bits, 1, old_p);
    return rdlm_ucx_amo(ctx, UCP_ATOMIC_OP_OR, rkey, offset, bits, 0, old_p);
}

/* Before a posted atomic on (rkey, offset): its destination, the atomic counted, and
 * rdlm's worker lock taken if the peer is live (the caller unlocks after issuing). */
static rdlm_status_t rdlm_ucx_post_begin(rdlm_ucx_ctx_t *c, rdlm_tl_rkey_h rkey,
                                         uint64_t offset, rdlm_ucx_dest_t *d)
{
    rdlm_status_t st = rdlm_ucx_target(c, rkey, offset, 8, 8, d);

    if (st != RDLM_OK)
        return st;
    rdlm_tl_stat_add(&c->super.stats.amo, 1);
    return rdlm_ucx_lock_live(c, d->peer) ? RDLM_OK : RDLM_ERR_PEER_DEAD;
}

/* Posted: UCP copies the 8-byte operand when the request is created, so the request
 * is released at once (UCX frees it when it completes); flush completes it. */
static rdlm_status_t rdlm_ucx_fadd64_post(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey,
                                          uint64_t offset, uint64_t add)
{
    rdlm_ucx_ctx_t *c = (rdlm_ucx_ctx_t *)ctx;
    ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE,
                             .datatype = ucp_dt_make_contig(sizeof(uint64_t))};
    ucs_status_ptr_t req;
    rdlm_ucx_dest_t d;
    rdlm_status_t st = rdlm_ucx_post_begin(c, rkey, offset, &d);

    if (st != RDLM_OK)
        return st;
    req = ucp_atomic_op_nbx(d.ep, UCP_ATOMIC_OP_ADD, &add, 1, d.raddr, d.rkey, &p);
    if (UCS_PTR_IS_PTR(req))
        ucp_request_free(req);
    rdlm_ucx_unlock(c);
    if (UCS_PTR_IS_ERR(req))
        return rdlm_ucx_failed(c, d.peer, UCS_PTR_STATUS(req), "posted atomic");
    return RDLM_OK;
}

/* A posted CAS completed (in ucp_worker_progress, whichever thread called it). */
static void rdlm_ucx_op_done(void *request, ucs_status_t status, void *user_data)
{
    rdlm_tl_op_t *op = user_data;

    op->status = rdlm_ucx_status(status);
    rdlm_store(&op->done, 1, RDLM_RELEASE);
    ucp_request_free(request);
}

/* Posted CAS: the reply buffer is op->old (the swap value on input, ucp.h), the
 * request is freed by its callback; over shared memory it may complete at once. */
static rdlm_status_t rdlm_ucx_cswap64_post(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey,
                                           uint64_t offset, uint64_t compare, uint64_t swap,
                                           rdlm_tl_op_t *op)
{
    rdlm_ucx_ctx_t *c = (rdlm_ucx_ctx_t *)ctx;
    ucp_request_param_t p = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_REPLY_BUFFER |
                        UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
        .datatype = ucp_dt_make_contig(sizeof(uint64_t)),
        .reply_buffer = &op->old,
        .cb.send = rdlm_ucx_op_done,
        .user_data = op,
    };
    ucs_status_ptr_t req;
    rdlm_ucx_dest_t d;
    rdlm_status_t st;

    op->old = swap;
    op->status = RDLM_OK;
    rdlm_store(&op->done, 0, RDLM_RELAXED);
    st = rdlm_ucx_post_begin(c, rkey, offset, &d);
    if (st != RDLM_OK)
        return st;
    req = ucp_atomic_op_nbx(d.ep, UCP_ATOMIC_OP_CSWAP, &compare, 1, d.raddr, d.rkey, &p);
    rdlm_ucx_unlock(c);
    if (req == NULL) {
        rdlm_store(&op->done, 1, RDLM_RELEASE); /* completed at once: no callback */
        return RDLM_OK;
    }
    if (UCS_PTR_IS_ERR(req))
        return rdlm_ucx_failed(c, d.peer, UCS_PTR_STATUS(req), "posted atomic");
    return RDLM_OK;
}

/* ---- put / get ----------------------------------------------------------------------- */

/* One RMA transfer: put (is_put) or get, counted, progressed to completion. */
static rdlm_status_t rdlm_ucx_rma(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey, uint64_t offset,
                                  void *buf, size_t len, int is_put)
{
    rdlm_ucx_ctx_t *c = (rdlm_ucx_ctx_t *)ctx;
    ucp_request_param_t p = {.op_attr_mask = 0};
    ucs_status_ptr_t req;
    rdlm_ucx_dest_t d;
    rdlm_status_t st = rdlm_ucx_target(c, rkey, offset, len, 1, &d);

    if (st != RDLM_OK)
        return st;
    rdlm_tl_stat_add(is_put ? &c->super.stats.puts : &c->super.stats.gets, 1);
    rdlm_tl_stat_add(&c->super.stats.bytes, len);
    if (!rdlm_ucx_lock_live(c, d.peer))
        return RDLM_ERR_PEER_DEAD;
    req = is_put ? ucp_put_nbx(d.ep, buf, len, d.raddr, d.rkey, &p)
                 : ucp_get_nbx(d.ep, buf, len, d.raddr, d.rkey, &p);
    rdlm_ucx_unlock(c);
    return rdlm_ucx_wait(c, d.peer, req, is_put ? "put" : "get");
}

static rdlm_status_t rdlm_ucx_put(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey, uint64_t offset,
                                  const void *buf, size_t len)
{
    /* ucp_put_nbx only reads buf; the shared helper takes it non-const for get. */
    return rdlm_ucx_rma(ctx, rkey, offset, (void *)(uintptr_t)buf, len, 1);
}

static rdlm_status_t rdlm_ucx_get(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey, uint64_t offset,
                                  void *buf, size_t len)
{
    return rdlm_ucx_rma(ctx, rkey, offset, buf, len, 0);
}

/* ---- active messages
 * --------------------------------------------------------------------- */

/* The header of every message carries the sender's rank. */
static ucs_status_t rdlm_ucx_am_recv(void *arg, const void *header, size_t header_length,
                                     void *data, size_t length,
                                     const ucp_am_recv_param_t *param)
{
    rdlm_ucx_am_slot_t *slot = arg;
    uint32_t src;

    if (header_length != sizeof(src) || (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
        rdlm_warn("ucx: dropped a malformed active message (%zu-byte header)",
                  header_length);
        return UCS_OK;
    }
    memcpy(&src, header, sizeof(src));
    if (slot->func == NULL) {
        rdlm_debug("ucx: dropped a message from rank %u: no handler", src);
        return UCS_OK;
    }
    rdlm_tl_stat_add(&slot->ctx->super.stats.am_recv, 1);
    slot->func(slot->arg, src, data, length);
    return UCS_OK;
}

static rdlm_status_t rdlm_ucx_am_set_handler(rdlm_tl_ctx_h ctx, unsigned id,
                                             rdlm_tl_am_handler_func_t func, void *arg)
{
    rdlm_ucx_ctx_t *c = (rdlm_ucx_ctx_t *)ctx;
    ucp_am_handler_param_t p = {
        .field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                      UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS,
        .id = id,
        .cb = rdlm_ucx_am_recv,
        .arg = &c->am[id < RDLM_TL_AM_ID_MAX ? id : 0],
        .flags = UCP_AM_FLAG_WHOLE_MSG,
    };
    ucs_status_t s;

    if (id >= RDLM_TL_AM_ID_MAX)
        return RDLM_ERR_INVALID_ARG;
    /* The slot is written before the worker call, which takes the worker's lock (or
     * ours); the receive callback runs under the same lock. */
    pthread_mutex_lock(&c->lock);
    c->am[id].func = func;
    c->am[id].arg = arg;
    pthread_mutex_unlock(&c->lock);
    rdlm_ucx_lock(c);
    s = ucp_worker_set_am_recv_handler(c->worker, &p);
    rdlm_ucx_unlock(c);
    if (s != UCS_OK) {
        rdlm_error("ucx: setting handler %u: %s", id, ucs_status_string(s));
        return rdlm_ucx_status(s);
    }
    return RDLM_OK;
}

static rdlm_status_t rdlm_ucx_am_send(rdlm_tl_ctx_h ctx, uint32_t peer, unsigned id,
                                      const void *data, size_t len)
{
    rdlm_ucx_ctx_t *c = (rdlm_ucx_ctx_t *)ctx;
    uint32_t src = c->super.rank;
    ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
                             .flags = UCP_AM_SEND_FLAG_EAGER};
    ucs_status_ptr_t req;
    ucp_ep_h ep;
    rdlm_status_t st;

    if (id >= RDLM_TL_AM_ID_MAX || len > RDLM_UCX_AM_MAX || (data == NULL && len > 0))
        return RDLM_ERR_INVALID_ARG;
    st = rdlm_ucx_ep(c, peer, &ep);
    if (st != RDLM_OK)
        return st;
    rdlm_tl_stat_add(&c->super.stats.am_sent, 1);
    rdlm_tl_stat_add(&c->super.stats.bytes, len);
    if (!rdlm_ucx_lock_live(c, peer))
        return RDLM_ERR_PEER_DEAD;
    req = ucp_am_send_nbx(ep, id, &src, sizeof(src), data, len, &p);
    rdlm_ucx_unlock(c);
    return rdlm_ucx_wait(c, peer, req, "active message");
}

/* ---- tables and open -------------------------------------------------------------------
 */

/* Arm, ask done, then poll the event fd: an event that another thread's progress
 * handled before the arm has run its handler (the arm waits for the lock), so done
 * sees it; one after the arm makes the fd readable. */
static void rdlm_ucx_sleep(rdlm_tl_ctx_h ctx, uint64_t timeout_ns, int (*done)(void *arg),
                           void *arg)
{
    rdlm_ucx_ctx_t *c = (rdlm_ucx_ctx_t *)ctx;
    struct timespec ts = {.tv_sec = (time_t)(timeout_ns / 1000000000ull),
                          .tv_nsec = (long)(timeout_ns % 1000000000ull)};
    struct pollfd pfd = {.fd = c->efd, .events = POLLIN};
    ucs_status_t s;

    rdlm_ucx_lock(c);
    s = ucp_worker_arm(c->worker);
    rdlm_ucx_unlock(c);
    if (s != UCS_OK || done(arg)) {
        return; /* UCS_ERR_BUSY: events are pending */
    }
    if (ppoll(&pfd, 1, &ts, NULL) < 0 && errno != EINTR) {
        rdlm_debug("ucx: sleep: ppoll: %s", strerror(errno));
    }
}

static const rdlm_tl_setup_ops_t rdlm_ucx_setup_ops = {
    .query = rdlm_ucx_query,
    .progress = rdlm_ucx_progress,
    .flush = rdlm_ucx_flush,
    .destroy = rdlm_ucx_destroy,
    .peer_dead = rdlm_ucx_peer_dead,
    .sleep = rdlm_ucx_sleep,
    .peer_tcp = rdlm_ucx_peer_tcp,
};

static const rdlm_tl_mem_ops_t rdlm_ucx_mem_ops = {
    .reg = rdlm_ucx_mem_reg,
    .addr = rdlm_tl_region_addr,
    .rkey_pack = rdlm_ucx_rkey_pack,
    .rkey_unpack = rdlm_ucx_rkey_unpack,
    .rkey_release = rdlm_ucx_rkey_release,
    .dereg = rdlm_ucx_mem_dereg,
};

static const rdlm_tl_amo_ops_t rdlm_ucx_amo_ops = {
    .cswap64 = rdlm_ucx_cswap64,
    .fadd64 = rdlm_ucx_fadd64,
    .swap64 = rdlm_ucx_swap64,
    .for64 = rdlm_ucx_for64,
    .fadd64_post = rdlm_ucx_fadd64_post,
    .cswap64_post = rdlm_ucx_cswap64_post,
};

static const rdlm_tl_rma_ops_t rdlm_ucx_rma_ops = {
    .put = rdlm_ucx_put,
    .get = rdlm_ucx_get,
};

static const rdlm_tl_am_ops_t rdlm_ucx_am_ops = {
    .set_handler = rdlm_ucx_am_set_handler,
    .send = rdlm_ucx_am_send,
};

static const char *rdlm_ucx_thread_mode_str(ucs_thread_mode_t m)
{
    return m == UCS_THREAD_MODE_MULTI        ? "multi"
           : m == UCS_THREAD_MODE_SERIALIZED ? "serialized"
                                             : "single";
}

/* One error line of a failed UCX setup step: UCX's status, the variables that chose
 * the transports and devices, and where to look. */
static void rdlm_ucx_setup_error(const char *step, ucs_status_t s)
{
    char env[RDLM_UCX_ENV_BYTES];

    rdlm_ucx_env_describe(env, sizeof(env));
    rdlm_error("ucx: %s: %s; in effect: %s; 'ucx_info -d' lists the transports and "
               "devices of this host (rdlm reads RDLM_UCX_* before UCX_*)",
               step, ucs_status_string(s), env);
}

/*
 * An answering context (params.answer_only: rdlmd's lock home) runs without UCX's
 * keepalive. Over tcp a peer's get, fetching atomic or put is answered from inside the
 * target's progress (ucp_get_req_handler, ucp_atomic_req_handler, ucp_put_handler in
 * UCX's rma_sw.c / amo_sw.c), through ucp_request_send, and ucp_request_try_send
 * (ucp_request.inl) aborts the process when that send fails with anything but
 * UCS_ERR_NO_RESOURCE: "Fatal: unexpected error: Endpoint timeout" (uct's tcp turns a
 * failed send() into UCS_ERR_ENDPOINT_TIMEOUT, and an endpoint already marked failed
 * has lanes that return it). That is so in 1.13.1 and still on UCX's master; no error
 * mode or handler changes it, and the home's endpoints are made by UCX from the
 * clients' wire-up, with their error mode (PEER).
 * It happens when a client died with a request of its own unanswered (the home was
 * stopped, or slow): its exit closes its sockets, and the first thing the home sends
 * on the connection afterwards makes the client's kernel answer with a reset, which
 * fails the next send. A request's answer alone is the first send and succeeds; the
 * home's receive then sees the close and UCX drops the endpoint (so a client keeps one
 * request at a time on a home: core/svc/svc_internal.h). But UCX's keepalive
 * (UCX_KEEPALIVE_INTERVAL, 20 s, on endpoints in PEER mode) sends a probe to every
 * client from the home's progress: after a stop longer than its interval, the probe
 * went out first on resume and the answer to the dead client's request aborted
 * rdlmd (7 runs of 15 for a user). A home has no use for the probe: it never waits on
 * a client (clients watch the home, and leases, not connections, free a dead client's
 * locks). So it is off there, whatever RDLM_UCX_* or UCX_* say.
 */
static rdlm_status_t rdlm_ucx_answer_only(ucp_config_t *config)
{
    ucs_status_t s = ucp_config_modify(config, "KEEPALIVE_INTERVAL", "inf");

    if (s != UCS_OK) {
        rdlm_ucx_setup_error("turning UCX's keepalive off (UCX_KEEPALIVE_INTERVAL)", s);
        return RDLM_ERR_BAD_CONFIG;
    }
    return RDLM_OK;
}

/* The UCX context and worker of c (without keepalive if answer_only). RDLM_ERR_BAD_CONFIG
 * (a variable UCX refuses), RDLM_ERR_UNSUPPORTED (no transport or device UCX may use
 * works here), or the worker's error; one line each (rdlm_ucx_setup_error). */
static rdlm_status_t rdlm_ucx_setup(rdlm_ucx_ctx_t *c, const ucp_params_t *up,
                                    const ucp_worker_params_t *wp, int answer_only)
{
    ucp_config_t *config;
    ucs_status_t s;
    rdlm_status_t st;

    /* "RDLM": UCX reads RDLM_UCX_* (over UCX_*) for this context. */
    s = ucp_config_read("RDLM", NULL, &config);
    if (s != UCS_OK) {
        rdlm_ucx_setup_error("reading RDLM_UCX_* and UCX_* configuration", s);
        return RDLM_ERR_BAD_CONFIG;
    }
    if (answer_only) {
        st = rdlm_ucx_answer_only(config);
        if (st != RDLM_OK) {
            ucp_config_release(config);
            return st;
        }
    }
    s = ucp_init(up, config, &c->context);
    ucp_config_release(config);
    if (s != UCS_OK) {
        rdlm_ucx_setup_error("ucp_init", s);
        return RDLM_ERR_UNSUPPORTED;
    }
    s = ucp_worker_create(c->context, wp, &c->worker);
    if (s != UCS_OK) {
        rdlm_ucx_setup_error("ucp_worker_create", s);
        return rdlm_ucx_status(s);
    }
    return RDLM_OK;
}

/* Allgather the worker addresses: first their lengths, then padded records. */
static rdlm_status_t rdlm_ucx_wireup(rdlm_ucx_ctx_t *c)
{
    const rdlm_tl_bootstrap_t *b = &c->boot;
    ucp_worker_attr_t attr = {.field_mask = UCP_WORKER_ATTR_FIELD_ADDRESS};
    uint64_t mine, *lens = NULL;
    char *rec = NULL;
    rdlm_status_t st;
    ucs_status_t s;
    uint32_t r;

    s = ucp_worker_query(c->worker, &attr);
    if (s != UCS_OK) {
        rdlm_error("ucx: worker address: %s", ucs_status_string(s));
        return rdlm_ucx_status(s);
    }
    mine = attr.address_length;
    lens = malloc(sizeof(*lens) * b->size);
    if (lens == NULL) {
        st = RDLM_ERR_NO_MEMORY;
        goto out;
    }
    st = b->allgather(b->arg, &mine, lens, sizeof(mine), NULL);
    if (st != RDLM_OK)
        goto out;
    c->addr_len = 0;
    for (r = 0; r < b->size; r++)
        if (lens[r] > c->addr_len)
            c->addr_len = lens[r];
    rec = calloc(1, c->addr_len);
    c->addrs = malloc(c->addr_len * b->size);
    if (rec == NULL || c->addrs == NULL) {
        st = RDLM_ERR_NO_MEMORY;
        goto out;
    }
    memcpy(rec, attr.address, mine);
    st = b->allgather(b->arg, rec, c->addrs, c->addr_len, NULL);
out:
    if (st != RDLM_OK && st != RDLM_ERR_NO_MEMORY)
        rdlm_error("ucx: worker address exchange failed: %s", rdlm_status_str(st));
    free(rec);
    free(lens);
    ucp_worker_release_address(c->worker, attr.address);
    return st;
}

static rdlm_status_t rdlm_ucx_open(const rdlm_tl_params_t *params, rdlm_tl_ctx_h *ctx_p)
{
    const rdlm_tl_bootstrap_t *b = params->bootstrap;
    int want_multi = params->thread_mode == RDLM_TL_THREAD_MULTI || params->progress_thread;
    ucp_params_t up = {
        .field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED |
                      UCP_PARAM_FIELD_NAME,
        .features =
            UCP_FEATURE_AMO64 | UCP_FEATURE_RMA | UCP_FEATURE_AM | UCP_FEATURE_WAKEUP,
        .mt_workers_shared = 0,
        .name = "rdlm",
    };
    ucp_worker_params_t wp = {
        .field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
        /* Several threads (callers, the progress thread): rdlm serialises worker
         * calls with its own sleeping mutex rather than asking UCX for MULTI, whose
         * worker lock spins. With more threads than cores a spinner waits for a
         * preempted holder: a 2-rank barrier over TCP on 2 cores had a p99 of 8 ms
         * with MULTI and 0.1 ms serialised (tests/global barrier mode). */
        .thread_mode = want_multi ? UCS_THREAD_MODE_SERIALIZED : UCS_THREAD_MODE_SINGLE,
    };
    ucp_worker_attr_t wa = {.field_mask = UCP_WORKER_ATTR_FIELD_THREAD_MODE};
    pthread_mutexattr_t ma;
    rdlm_ucx_ctx_t *c;
    rdlm_status_t st;
    ucs_status_t s;
    unsigned i;

    c = calloc(1, sizeof(*c));
    if (c == NULL)
        return RDLM_ERR_NO_MEMORY;
    c->super = (rdlm_tl_ctx_t){.setup = &rdlm_ucx_setup_ops,
                               .mem = &rdlm_ucx_mem_ops,
                               .amo = &rdlm_ucx_amo_ops,
                               .rma = &rdlm_ucx_rma_ops,
                               .am = &rdlm_ucx_am_ops,
                               .backend = "ucx",
                               .rank = b->rank,
                               .size = b->size};
    c->boot = *b;
    for (i = 0; i < RDLM_TL_AM_ID_MAX; i++)
        c->am[i].ctx = c;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&c->lock, &ma);
    pthread_mutexattr_destroy(&ma);
    c->eps = calloc(b->size, sizeof(*c->eps));
    st =
        c->eps ? rdlm_tl_rkey_table_init(&c->rkeys, params->max_rkeys) : RDLM_ERR_NO_MEMORY;
    if (st != RDLM_OK)
        goto err;

    st = rdlm_ucx_setup(c, &up, &wp, params->answer_only);
    if (st != RDLM_OK)
        goto err;
    s = ucp_worker_get_efd(c->worker, &c->efd);
    if (s != UCS_OK) {
        rdlm_error("ucx: ucp_worker_get_efd: %s", ucs_status_string(s));
        st = rdlm_ucx_status(s);
        goto err;
    }
    s = ucp_worker_query(c->worker, &wa);
    c->granted = s == UCS_OK ? wa.thread_mode : UCS_THREAD_MODE_SINGLE;
    if (want_multi) {
        c->serialize = 1;
        rdlm_debug("ucx: worker '%s', calls serialised by rdlm",
                   rdlm_ucx_thread_mode_str(c->granted));
    }
    st = rdlm_ucx_wireup(c);
    if (st != RDLM_OK)
        goto err;
    st = rdlm_ucx_peers_open(c, params);
    if (st != RDLM_OK)
        goto err;
    st = rdlm_ucx_detect_caps(c);
    if (st != RDLM_OK)
        goto err;
    c->super.after_progress = params->after_progress;
    c->super.after_progress_arg = params->after_progress_arg;
    if (params->progress_thread) {
        if (pthread_create(&c->thread, NULL, rdlm_ucx_progress_main, c) != 0) {
            rdlm_error("ucx: cannot start the progress thread: %s", strerror(errno));
            st = RDLM_ERR_NO_RESOURCE;
            goto err;
        }
        c->thread_running = 1;
    }
    rdlm_debug("ucx: rank %u/%u up: atomics %s%s, worker thread mode %s", c->super.rank,
               c->super.size, rdlm_tl_atomic_domain_str(c->domain),
               c->needs_progress ? " (target progress needed)" : "",
               rdlm_ucx_thread_mode_str(c->granted));
    *ctx_p = &c->super;
    return RDLM_OK;

err:
    /* Not collective on failure: free without the destroy barrier. */
    rdlm_ucx_free(c);
    return st;
}

const rdlm_tl_backend_t rdlm_tl_ucx_backend = {.name = "ucx", .open = rdlm_ucx_open};
