/*
 * The transport layer: one small const ops table per concern, filled by each backend
 * from its own functions and, where it has none, from the stubs in stubs.c, which
 * return RDLM_ERR_UNSUPPORTED. No entry is ever NULL (rdlm_tl_open checks), so a
 * caller never tests a function pointer; it asks query() what is supported instead.
 *
 *   setup   query / progress / flush / destroy
 *   mem     register (or allocate) memory, pack its remote key, unpack a peer's key,
 *           release both
 *   amo     remote 64-bit atomics: fetching cswap64 / fadd64 / swap64 / for64, posted
 *           fadd64
 *   rma     put / get
 *   am      small active messages (notifications, small RPCs)
 *
 * Internal to the library: not installed, not exported. Upper layers (core/global) call
 * the tables through the inline wrappers at the end of this file.
 *
 * Threading: a context is used by one thread at a time unless it was opened with
 * RDLM_TL_THREAD_MULTI; then every entry may be called concurrently. A progress thread
 * (params.progress_thread) runs in the background in either case and is serialised
 * with the callers by the backend.
 *
 * Remote addressing: a remote word is (rkey, offset), where offset is relative to the
 * start of the region the peer registered. Offsets are bounds- and alignment-checked
 * (RDLM_ERR_INVALID_ARG), so a bad offset never reaches the fabric.
 */
#ifndef RDLM_TRANSPORT_H
#define RDLM_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <rdlm/status.h>

#include "atomics.h"
#include "bootstrap.h"
#include "config.h"
#include "shared.h"

/** Largest packed remote key any backend produces (bytes); fixed so that keys can be
 *  exchanged with a fixed-size allgather. */
#define RDLM_TL_RKEY_MAX 1024u
/** Active-message ids are 0 .. RDLM_TL_AM_ID_MAX-1. */
#define RDLM_TL_AM_ID_MAX 32u

typedef struct rdlm_tl_ctx rdlm_tl_ctx_t;
typedef rdlm_tl_ctx_t *rdlm_tl_ctx_h;
/** A registered local region (owned by the process that registered it). */
typedef struct rdlm_tl_mem *rdlm_tl_mem_h;
/** An unpacked remote key: a peer's region. A generation-checked handle, so a
 *  released or never-issued key gives RDLM_ERR_BAD_HANDLE, not a crash. 0 is never
 *  valid. */
typedef uint64_t rdlm_tl_rkey_h;

/** Which atomics a remote atomic is atomic with (design invariant 3). */
typedef enum rdlm_tl_atomic_domain {
    RDLM_TL_ATOMIC_NONE = 0, /**< no remote atomics */
    RDLM_TL_ATOMIC_CPU,      /**< coherent with CPU atomics on the target word */
    RDLM_TL_ATOMIC_DEVICE    /**< only with other transport atomics on that word */
} rdlm_tl_atomic_domain_t;

typedef enum rdlm_tl_thread_mode {
    RDLM_TL_THREAD_SINGLE = 0, /**< one thread at a time calls the context */
    RDLM_TL_THREAD_MULTI       /**< any thread, concurrently */
} rdlm_tl_thread_mode_t;

/* Capability flags (rdlm_tl_caps_t.flags). */
#define RDLM_TL_CAP_AMO64 (1u << 0) /**< fetching cswap64 / fadd64 / swap64 / for64 */
#define RDLM_TL_CAP_AMO64_POST (1u << 1) /**< posted (non-fetching) fadd64 */
#define RDLM_TL_CAP_RMA (1u << 2)        /**< put / get */
#define RDLM_TL_CAP_AM (1u << 3)         /**< active messages */
#define RDLM_TL_CAP_LOOPBACK (1u << 4)   /**< ops on one's own region via the fabric */
/** Dead peers are reported: once a watched peer dies (params.peer_failure decides which
 *  are watched: with auto, those not reached through shared memory), every operation
 *  on it, a flush of it and a flush of all return RDLM_ERR_PEER_DEAD, within
 *  params.peer_timeout_ms of its death at the latest, never hanging; the context stays
 *  usable for the other peers. Set unless some process of the context turned it off. */
#define RDLM_TL_CAP_PEER_FAILURE (1u << 5)

typedef struct rdlm_tl_caps {
    const char *backend;                   /**< "ucx", "verbs"; static string */
    uint32_t flags;                        /**< RDLM_TL_CAP_* */
    rdlm_tl_atomic_domain_t atomic_domain; /**< see the enum */
    /** 1 if a remote atomic completes only while the target calls progress (UCX over
     *  TCP emulates atomics with messages). Conservative: 1 when unsure. */
    int amo_needs_target_progress;
    /** What the context supports: MULTI if the backend granted it or rdlm
     *  serialises calls itself (serialized_by_rdlm). */
    rdlm_tl_thread_mode_t thread_mode;
    /** 1 if rdlm serialises calls into the backend with its own lock (UCX: always
     *  when several threads may call, see ucx.c). */
    int serialized_by_rdlm;
    int progress_thread;   /**< 1 if a progress thread is running */
    size_t am_max_payload; /**< bytes; 0 without RDLM_TL_CAP_AM */
    uint32_t rank;         /**< this process */
    uint32_t size;         /**< processes in the context */
} rdlm_tl_caps_t;

/** Counters per context (relaxed atomics; read with rdlm_tl_stats_read). */
typedef struct rdlm_tl_stats {
    uint64_t amo;      /**< remote atomics issued (fetching and posted) */
    uint64_t puts;     /**< put calls */
    uint64_t gets;     /**< get calls */
    uint64_t am_sent;  /**< active messages sent */
    uint64_t am_recv;  /**< active messages delivered to a handler */
    uint64_t bytes;    /**< payload bytes of puts, gets and messages sent */
    uint64_t progress; /**< progress calls */
} rdlm_tl_stats_t;

/**
 * Active-message handler. Runs inside progress (of the calling thread or of the
 * progress thread), with the payload valid only during the call. It must not block
 * and must not call the transport. src is the sender's rank.
 */
typedef void (*rdlm_tl_am_handler_func_t)(void *arg, uint32_t src, const void *data,
                                          size_t len);

/* ---- setup / query / progress / flush / destroy ----------------------------------- */

/** Fill *caps_p. Non-blocking, thread-safe. */
typedef rdlm_status_t (*rdlm_tl_query_func_t)(rdlm_tl_ctx_h ctx, rdlm_tl_caps_t *caps_p);
/** Make progress once; returns the number of events handled (>= 0). Non-blocking. */
typedef unsigned (*rdlm_tl_progress_func_t)(rdlm_tl_ctx_h ctx);
/** Blocking: every operation posted by this process to peer (or to every peer when
 *  peer == RDLM_TL_PEER_ALL) before the call is complete at the target on return. */
typedef rdlm_status_t (*rdlm_tl_flush_func_t)(rdlm_tl_ctx_h ctx, uint32_t peer);
/** Collective over the bootstrap: flush, wait for every peer (progressing meanwhile,
 *  so peers' emulated atomics on our memory finish), close endpoints, free. Regions
 *  and keys still held are released. ctx == NULL is a no-op. */
typedef void (*rdlm_tl_destroy_func_t)(rdlm_tl_ctx_h ctx);
/** 1 if the backend found peer dead (RDLM_TL_CAP_PEER_FAILURE: a watched peer that
 *  died; sticky), else 0 (alive, or not known). Non-blocking, thread-safe. */
typedef int (*rdlm_tl_peer_dead_func_t)(rdlm_tl_ctx_h ctx, uint32_t peer);
/** For a waiter with nothing to do but progress, on a host with more processes than
 *  CPUs: give the CPU up until the backend may have an event for this process, or
 *  timeout_ns passed. The backend arms its event fd, then calls done(arg): if that
 *  says 1 (what the caller waits for happened meanwhile, in another thread's
 *  progress) it returns at once; otherwise it sleeps on the fd. Returns at once when
 *  events are pending. Backends without an event fd yield the CPU once. Progress is
 *  the caller's: call progress after. */
typedef void (*rdlm_tl_sleep_func_t)(rdlm_tl_ctx_h ctx, uint64_t timeout_ns,
                                     int (*done)(void *arg), void *arg);
/** 1 if active messages to peer travel over a TCP socket (UCX's tcp transport), so
 *  that a socket of the caller's own to that peer is no slower; 0 if not, or not
 *  known. May create the endpoint to peer. Optional (NULL: never TCP). */
typedef int (*rdlm_tl_peer_tcp_func_t)(rdlm_tl_ctx_h ctx, uint32_t peer);

#define RDLM_TL_PEER_ALL UINT32_MAX

typedef struct rdlm_tl_setup_ops {
    rdlm_tl_query_func_t query;
    rdlm_tl_progress_func_t progress;
    rdlm_tl_flush_func_t flush;
    rdlm_tl_destroy_func_t destroy;
    rdlm_tl_peer_dead_func_t peer_dead;
    rdlm_tl_sleep_func_t sleep;
    rdlm_tl_peer_tcp_func_t peer_tcp; /* optional */
} rdlm_tl_setup_ops_t;

/* ---- memory registration and remote keys ------------------------------------------ */

/** Register len bytes at addr for remote access (read, write, atomics); addr == NULL
 *  lets the backend allocate memory suited to remote atomics (zeroed; UCX needs this
 *  for shared-memory atomics). Blocking, thread-safe, not on a hot path. */
typedef rdlm_status_t (*rdlm_tl_mem_reg_func_t)(rdlm_tl_ctx_h ctx, void *addr, size_t len,
                                                rdlm_tl_mem_h *mem_p);
/** Local address and length of a region. */
typedef rdlm_status_t (*rdlm_tl_mem_addr_func_t)(rdlm_tl_ctx_h ctx, rdlm_tl_mem_h mem,
                                                 void **addr_p, size_t *len_p);
/** Pack a region's remote key into buf (at most buf_len bytes, RDLM_TL_RKEY_MAX
 *  always suffices); *len_p receives the size used. */
typedef rdlm_status_t (*rdlm_tl_rkey_pack_func_t)(rdlm_tl_ctx_h ctx, rdlm_tl_mem_h mem,
                                                  void *buf, size_t buf_len, size_t *len_p);
/** Unpack a key packed by peer's process into a handle usable for ops to peer.
 *  A malformed blob gives RDLM_ERR_INVALID_ARG. Blocking (may connect to peer). */
typedef rdlm_status_t (*rdlm_tl_rkey_unpack_func_t)(rdlm_tl_ctx_h ctx, uint32_t peer,
                                                    const void *buf, size_t len,
                                                    rdlm_tl_rkey_h *rkey_p);
/** Release an unpacked key; the handle becomes invalid (later use: BAD_HANDLE). */
typedef rdlm_status_t (*rdlm_tl_rkey_release_func_t)(rdlm_tl_ctx_h ctx,
                                                     rdlm_tl_rkey_h rkey);
/** Deregister (and free, if allocated by reg) a region. Peers' keys to it become
 *  dangling: the caller must make sure no peer uses them (a barrier). */
typedef rdlm_status_t (*rdlm_tl_mem_dereg_func_t)(rdlm_tl_ctx_h ctx, rdlm_tl_mem_h mem);

typedef struct rdlm_tl_mem_ops {
    rdlm_tl_mem_reg_func_t reg;
    rdlm_tl_mem_addr_func_t addr;
    rdlm_tl_rkey_pack_func_t rkey_pack;
    rdlm_tl_rkey_unpack_func_t rkey_unpack;
    rdlm_tl_rkey_release_func_t rkey_release;
    rdlm_tl_mem_dereg_func_t dereg;
} rdlm_tl_mem_ops_t;

/* ---- remote atomics ---------------------------------------------------------------- */
/* Operands are 64-bit words at 8-byte-aligned offsets. Fetching calls block until the
 * old value is back (progressing meanwhile) and are atomic with respect to every other
 * transport atomic on the word, and with CPU atomics only if query() reports
 * RDLM_TL_ATOMIC_CPU. Results are host byte order. */

/** if (*w == compare) *w = swap; *old_p = previous *w. */
typedef rdlm_status_t (*rdlm_tl_cswap64_func_t)(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey,
                                                uint64_t offset, uint64_t compare,
                                                uint64_t swap, uint64_t *old_p);
/** *old_p = *w; *w += add (mod 2^64). */
typedef rdlm_status_t (*rdlm_tl_fadd64_func_t)(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey,
                                               uint64_t offset, uint64_t add,
                                               uint64_t *old_p);
/** *old_p = *w; *w = value. */
typedef rdlm_status_t (*rdlm_tl_swap64_func_t)(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey,
                                               uint64_t offset, uint64_t value,
                                               uint64_t *old_p);
/** *old_p = *w; *w |= bits. */
typedef rdlm_status_t (*rdlm_tl_for64_func_t)(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey,
                                              uint64_t offset, uint64_t bits,
                                              uint64_t *old_p);
/** Posted *w += add: returns once issued; complete at the target after flush. */
typedef rdlm_status_t (*rdlm_tl_fadd64_post_func_t)(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey,
                                                    uint64_t offset, uint64_t add);

/** A posted fetching atomic: owned by the caller from the post until done is 1. */
typedef struct rdlm_tl_op {
    rdlm_atomic_u32_t done; /* set (release) once status and old are final */
    rdlm_status_t status;   /* RDLM_OK: old holds the word's previous value */
    uint64_t old;
} rdlm_tl_op_t;

/** Posted CAS: returns once issued. op->done becomes 1 while some thread progresses
 *  the context (the caller, or the progress thread), with op->old = the previous *w
 *  (swapped iff it equals compare), or op->status an error (a peer that died: its
 *  requests complete with an error at the latest when the context is destroyed).
 *  On an error return nothing was issued and op is not touched again. Optional
 *  (NULL: rdlm_tl_cswap64_post runs cswap64). */
typedef rdlm_status_t (*rdlm_tl_cswap64_post_func_t)(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey,
                                                     uint64_t offset, uint64_t compare,
                                                     uint64_t swap, rdlm_tl_op_t *op);

typedef struct rdlm_tl_amo_ops {
    rdlm_tl_cswap64_func_t cswap64;
    rdlm_tl_fadd64_func_t fadd64;
    rdlm_tl_swap64_func_t swap64;
    rdlm_tl_for64_func_t for64;
    rdlm_tl_fadd64_post_func_t fadd64_post;
    rdlm_tl_cswap64_post_func_t cswap64_post;
} rdlm_tl_amo_ops_t;

/* ---- put / get ---------------------------------------------------------------------- */

/** Write len bytes; returns when buf may be reused; visible at the target after flush.
 *  Puts are not atomic with respect to atomics on the same bytes. */
typedef rdlm_status_t (*rdlm_tl_put_func_t)(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey,
                                            uint64_t offset, const void *buf, size_t len);
/** Read len bytes into buf; blocking until the data is in buf. */
typedef rdlm_status_t (*rdlm_tl_get_func_t)(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey,
                                            uint64_t offset, void *buf, size_t len);

typedef struct rdlm_tl_rma_ops {
    rdlm_tl_put_func_t put;
    rdlm_tl_get_func_t get;
} rdlm_tl_rma_ops_t;

/* ---- active messages ------------------------------------------------------------------
 */

/** Install (or with func == NULL remove) the handler of id. Set handlers before peers
 *  may send (e.g. before a barrier); a message for an id without a handler is dropped
 *  with a debug log. Thread-safe, not on a hot path. */
typedef rdlm_status_t (*rdlm_tl_am_set_handler_func_t)(rdlm_tl_ctx_h ctx, unsigned id,
                                                       rdlm_tl_am_handler_func_t func,
                                                       void *arg);
/** Send len <= am_max_payload bytes to peer's handler id. Returns when data may be
 *  reused (the payload is copied); delivered once, intact, some time later while the
 *  peer progresses. No ordering between messages is promised (stamp them). */
typedef rdlm_status_t (*rdlm_tl_am_send_func_t)(rdlm_tl_ctx_h ctx, uint32_t peer,
                                                unsigned id, const void *data, size_t len);

typedef struct rdlm_tl_am_ops {
    rdlm_tl_am_set_handler_func_t set_handler;
    rdlm_tl_am_send_func_t send;
} rdlm_tl_am_ops_t;

/* ---- the context ------------------------------------------------------------------------
 */

/** Common head of every backend context (a backend embeds it first). */
struct rdlm_tl_ctx {
    const rdlm_tl_setup_ops_t *setup;
    const rdlm_tl_mem_ops_t *mem;
    const rdlm_tl_amo_ops_t *amo;
    const rdlm_tl_rma_ops_t *rma;
    const rdlm_tl_am_ops_t *am;
    const char *backend;
    uint32_t rank;
    uint32_t size;
    rdlm_tl_stats_t stats; /* updated with relaxed atomic adds */
    /** Print the counters at rdlm_tl_destroy (params.print_stats; set by rdlm_tl_open
     *  after the backend's open, so backends need not copy it). */
    int print_stats;
    /** params.after_progress and its argument, copied by the backend's open before its
     *  progress thread starts. */
    void (*after_progress)(void *arg);
    void *after_progress_arg;
};

typedef struct rdlm_tl_params {
    /** Collectives used at open (address exchange) and destroy; must stay valid until
     *  destroy returns. */
    const rdlm_tl_bootstrap_t *bootstrap;
    rdlm_tl_thread_mode_t thread_mode; /**< requested */
    /** Run a progress thread that sleeps on the backend's event fd when idle
     *  (RDLM_PROGRESS=thread). */
    int progress_thread;
    /** Capacity of the unpacked-key table (0: 1024). */
    uint32_t max_rkeys;
    /** Print the statistics on stderr at rdlm_tl_destroy (RDLM_STATS=1). */
    int print_stats;
    /** Which peers are watched for failure (RDLM_PEER_FAILURE; 0 is auto). */
    rdlm_switch_t peer_failure;
    /** A watched peer that leaves an operation unanswered this long counts as dead
     *  (RDLM_PEER_TIMEOUT_MS; 0: 10000, that variable's default). */
    uint32_t peer_timeout_ms;
    /** Called by the progress thread after each of its progress calls (not from a
     *  completion callback: it may call any operation), or NULL: the owner of posted
     *  operations finishes them there while its own threads are busy elsewhere. */
    void (*after_progress)(void *arg);
    void *after_progress_arg;
    /** The context only answers its peers' operations and never starts one itself (the
     *  server of a relay bootstrap: rdlmd's lock home). The UCX backend then sends
     *  nothing of its own to a peer: UCX's keepalive is off (ucx.c says why). */
    int answer_only;
    /** How the transport's log lines name its peers, or NULL: "rank N". A context whose
     *  peers are no job's ranks says what they are ("the lock home of replica 2 at
     *  192.0.2.2:7001", "a client"); lines then read "<label> (rank N)". Copied at
     *  open (at most RDLM_TL_PEER_LABEL_MAX - 1 bytes kept). */
    const char *peer_label;
} rdlm_tl_params_t;

/** Room for rdlm_tl_params_t.peer_label, with its NUL. */
#define RDLM_TL_PEER_LABEL_MAX 96

/** Set the fields of *params_p that the RDLM_* configuration decides:
 *  progress_thread (RDLM_PROGRESS=thread), print_stats (RDLM_STATS=1), peer_failure
 *  (RDLM_PEER_FAILURE) and peer_timeout_ms (RDLM_PEER_TIMEOUT_MS). The other fields are
 *  left as they are. */
RDLM_SHARED void rdlm_tl_params_from_config(const struct rdlm_config *cfg,
                                            rdlm_tl_params_t *params_p);

typedef rdlm_status_t (*rdlm_tl_open_func_t)(const rdlm_tl_params_t *params,
                                             rdlm_tl_ctx_h *ctx_p);

/** A backend compiled into the library. */
typedef struct rdlm_tl_backend {
    const char *name;
    rdlm_tl_open_func_t open;
} rdlm_tl_backend_t;

/** The compiled backends, NULL-terminated (static). */
RDLM_SHARED const rdlm_tl_backend_t *const *rdlm_tl_backends(void);

/**
 * Collective: open the backend called name over params->bootstrap. RDLM_ERR_NOT_FOUND
 * if not compiled in; RDLM_ERR_UNSUPPORTED (logged with the reason) if compiled in but
 * unusable here (no device); RDLM_ERR_CORRUPT if a backend left an ops entry NULL.
 */
RDLM_SHARED rdlm_status_t rdlm_tl_open(const char *name, const rdlm_tl_params_t *params,
                                       rdlm_tl_ctx_h *ctx_p);

/** Collective (as setup->destroy): print the statistics first if ctx was opened with
 *  print_stats, then destroy. ctx == NULL is a no-op. Prefer this to calling
 *  ctx->setup->destroy directly. */
RDLM_SHARED void rdlm_tl_destroy(rdlm_tl_ctx_h ctx);

/** 1 if every entry of every table of ctx is non-NULL. */
int rdlm_tl_ops_complete(const rdlm_tl_ctx_t *ctx);

/** Snapshot of the counters (each read with a relaxed load: a consistent total per
 *  counter, not across counters while other threads run). Thread-safe. */
RDLM_SHARED void rdlm_tl_stats_read(const rdlm_tl_ctx_t *ctx, rdlm_tl_stats_t *stats_p);

/** One line "rdlm[pid] transport ucx rank r/n stats: amo .. puts .. gets .. am_sent ..
 *  am_recv .. bytes .. progress .." on out. Thread-safe; not for hot paths. */
void rdlm_tl_stats_print(const rdlm_tl_ctx_t *ctx, FILE *out);

/** "none", "cpu", "device". */
RDLM_SHARED const char *rdlm_tl_atomic_domain_str(rdlm_tl_atomic_domain_t domain);

/** A bootstrap of one process (rank 0, size 1): allgather copies send to recv, barrier
 *  returns at once. For opening a context alone (rdlm_info, loopback tests). Static;
 *  thread-safe. */
RDLM_SHARED const rdlm_tl_bootstrap_t *rdlm_tl_bootstrap_self(void);

/** A bootstrap idle callback that calls ctx's progress: pass
 *  {rdlm_tl_progress_idle, ctx} so that collectives progress the transport. */
int rdlm_tl_progress_idle(void *ctx);

/* ---- wrappers -------------------------------------------------------------------------
 */

static inline rdlm_status_t rdlm_tl_fadd64(rdlm_tl_ctx_h c, rdlm_tl_rkey_h k, uint64_t off,
                                           uint64_t add, uint64_t *old_p)
{
    return c->amo->fadd64(c, k, off, add, old_p);
}

static inline rdlm_status_t rdlm_tl_cswap64(rdlm_tl_ctx_h c, rdlm_tl_rkey_h k, uint64_t off,
                                            uint64_t compare, uint64_t swap,
                                            uint64_t *old_p)
{
    return c->amo->cswap64(c, k, off, compare, swap, old_p);
}

static inline rdlm_status_t rdlm_tl_for64(rdlm_tl_ctx_h c, rdlm_tl_rkey_h k, uint64_t off,
                                          uint64_t bits, uint64_t *old_p)
{
    return c->amo->for64(c, k, off, bits, old_p);
}

/** The posted CAS of the backend, or a blocking one that is done at return. */
static inline rdlm_status_t rdlm_tl_cswap64_post(rdlm_tl_ctx_h c, rdlm_tl_rkey_h k,
                                                 uint64_t off, uint64_t compare,
                                                 uint64_t swap, rdlm_tl_op_t *op)
{
    if (c->amo->cswap64_post != NULL) {
        return c->amo->cswap64_post(c, k, off, compare, swap, op);
    }
    op->status = c->amo->cswap64(c, k, off, compare, swap, &op->old);
    if (op->status == RDLM_OK) {
        rdlm_store(&op->done, 1, RDLM_RELEASE);
    }
    return op->status;
}

static inline unsigned rdlm_tl_progress(rdlm_tl_ctx_h c)
{
    return c->setup->progress(c);
}

static inline int rdlm_tl_peer_dead(rdlm_tl_ctx_h c, uint32_t peer)
{
    return c->setup->peer_dead(c, peer);
}

static inline int rdlm_tl_peer_tcp(rdlm_tl_ctx_h c, uint32_t peer)
{
    return c->setup->peer_tcp != NULL && c->setup->peer_tcp(c, peer);
}

#endif
