/*
 * The public API's objects: a context (one attach to the node segment) and the
 * handles opened in it. Handles stay allocated until the context is destroyed, so a
 * closed handle answers RDLM_ERR_CLOSED instead of touching freed memory; once more
 * than RDLM_OBJ_CLOSED_KEEP handles are closed, an open reuses the one closed first.
 */
#ifndef RDLM_API_H
#define RDLM_API_H

#include <pthread.h>
#include <stdint.h>

#include <rdlm.h>
#include <rdlm/lease.h>

#include "bootstrap.h"
#include "client_internal.h"
#include "config.h"
#include "ctx_dist.h"
#include "global.h"
#include "live.h"
#include "local.h"
#include "obj_ops.h"

#define RDLM_OBJ_MAGIC_OPEN 0x6f626a31u   /* "obj1" */
#define RDLM_OBJ_MAGIC_CLOSED 0x636c7364u /* "clsd" */
/* Closed handles a context keeps answering RDLM_ERR_CLOSED before reusing them. */
#define RDLM_OBJ_CLOSED_KEEP 1024u

typedef struct rdlm_obj {
    uint32_t magic;
    unsigned kind; /* enum rdlm_kind */
    uint32_t index;
    /* A bounded-bypass lock of a node-only context without a lease: an acquire and a
     * release are the mutex's and nothing else (decided at open). */
    uint32_t mutex_only;
    struct rdlm_ctx *ctx;
    rdlm_local_t *local;   /* &ctx->local */
    struct rdlm_obj *next; /* the context's list */
    struct rdlm_obj *closed_next; /* the context's queue of closed handles */
    rdlm_atomic_u64_t held; /* semaphore permits this handle holds */
} rdlm_obj_t;

/* A public handle (rdlm_lock_h, ...) is an rdlm_obj_t. */
#define RDLM_OBJ(h) ((rdlm_obj_t *)(void *)(h))

struct rdlm_ctx {
    rdlm_local_t local;
    rdlm_config_t config;
    char job[RDLM_JOB_MAX + 1]; /* its job's name (the statistics lines say it) */
    pthread_mutex_t objs_lock; /* guards objs and the closed queue */
    rdlm_obj_t *objs;
    rdlm_obj_t *closed_head, *closed_tail; /* closed handles, first closed first */
    uint32_t closed_count;
    rdlm_global_t *dist;       /* NULL for a node-only context */
    const rdlm_obj_ops_t *ops; /* what its objects do (obj_ops.h) */
    rdlm_ctx_fini_func_t fini;
    void *fini_arg;
    rdlm_session_h session; /* the lease at the authority, or NULL */
    struct rdlm_svc *svc;   /* the service's lock homes (ctx_svc.c), or NULL */
    struct {                /* node-local holders fenced by their lease (ctx_svc.c) */
        rdlm_atomic_u32_t owner;       /* the holder last seen holding long */
        rdlm_atomic_u64_t next_ask_ns; /* when to ask the authority about it */
        rdlm_atomic_u64_t ended;       /* a session the authority said ended */
    } fenced;
    uint64_t *peer_sessions; /* every rank's session id, for lock recovery, or NULL */
    struct {                /* the authority the job runs itself (ctx_authority.c) */
        const rdlm_tl_bootstrap_t *bs;  /* NULL without; outlives dist (fini frees it) */
        struct rdlm_job_authority *replica; /* the replica this process runs, or NULL */
    } authority;
    rdlm_live_node_t live; /* on the set of live contexts (ctx_live.c) */
};

/* ---- live contexts (ctx_live.c) --------------------------------------------------- */

/** Enter ctx in the process's list of live contexts (when ctx.c allocates it). */
void rdlm_ctx_live_add(rdlm_ctx_h ctx);

/** Take ctx off the list (before its memory is freed); no-op if it is not on it. */
void rdlm_ctx_live_remove(rdlm_ctx_h ctx);

/** RDLM_ERR_BAD_HANDLE (logged, naming func) unless ctx is a live context: NULL and
 *  destroyed ones are refused without touching their memory. Every public call that
 *  takes an rdlm_ctx_h starts with it. A mutex, no system call when uncontended. */
rdlm_status_t rdlm_ctx_check(const struct rdlm_ctx *ctx, const char *func);

/** rdlm_ctx_check, then RDLM_ERR_INVALID_ARG (logged) if the output pointer is NULL. */
rdlm_status_t rdlm_ctx_check_out(const struct rdlm_ctx *ctx, const void *out,
                                 const char *func);

/** Why h is not an open handle of kind (logged, naming func). */
rdlm_status_t rdlm_obj_check_failed(const void *h, unsigned kind, const char *func);

/** Validate h as an open handle of kind. Logs and returns an error otherwise. Inline:
 *  every lock operation starts with it. */
static inline rdlm_status_t rdlm_obj_check_handle(const void *h, unsigned kind,
                                                  const char *func)
{
    const rdlm_obj_t *obj = h;

    if (obj != NULL && obj->magic == RDLM_OBJ_MAGIC_OPEN && obj->kind == kind) {
        return RDLM_OK;
    }
    return rdlm_obj_check_failed(h, kind, func);
}

/** Open the context's lease at authority ("a:p[,b:p...]"; job: the session's job).
 *  RDLM_OK without a lease for "". Errors of rdlm_session_open. */
rdlm_status_t rdlm_ctx_lease_open(rdlm_ctx_h ctx, const char *job, const char *authority);

/** A new token epoch committed at the authority, at least floor (0 without a lease),
 *  fitting the bits above the token sequence. Blocking. */
rdlm_status_t rdlm_ctx_lease_epoch(rdlm_ctx_h ctx, uint32_t floor, uint32_t *epoch_p);

/**
 * RDLM_JOB_AUTHORITY (ctx_authority.c): start the authority the job runs itself and
 * give the context its lease there. Collective over the context's bootstrap, once
 * ctx->dist exists and before any token is issued: replicas start on the node leaders
 * of the first nodes, every process opens its session (ctx->session), and rank 0's
 * epoch, committed above the clock epoch, becomes every process's token epoch. A
 * failure anywhere is returned on every process (the first failing rank's status),
 * after everything this call started was stopped again (ctx->session and
 * ctx->authority.bs are NULL then). Errors: RDLM_ERR_BAD_CONFIG (no address in
 * RDLM_JOB_AUTHORITY_NET), RDLM_ERR_INVALID_ARG (TMPDIR too long), RDLM_ERR_IO (ports,
 * data directory, libraft), RDLM_ERR_NO_MEMORY, RDLM_ERR_NO_RESOURCE,
 * RDLM_ERR_UNAVAILABLE (no leader in time), RDLM_ERR_UNSUPPORTED (built without the
 * authority), the bootstrap's errors.
 */
rdlm_status_t rdlm_ctx_authority_start(rdlm_ctx_h ctx, const char *job);

/** At rdlm_ctx_destroy, after every process closed its session: collective (a
 *  barrier, then the replicas stop and remove their data). No-op without the job's
 *  authority. */
void rdlm_ctx_authority_stop(rdlm_ctx_h ctx);

/** Collective over the distributed context's bootstrap, after its lease is open (or
 *  known absent): exchange session ids; if every process holds a lease, let waiters
 *  break the global locks of dead processes whose lease the authority ended
 *  (ctx_recovery.c). Errors: RDLM_ERR_NO_MEMORY, the bootstrap's. */
rdlm_status_t rdlm_ctx_recovery_start(rdlm_ctx_h ctx);

/** Free what rdlm_ctx_recovery_start kept (after the distributed layer is gone). */
void rdlm_ctx_recovery_free(rdlm_ctx_h ctx);

/** Close the lease (releases nothing else). */
void rdlm_ctx_lease_close(rdlm_ctx_h ctx);

/** RDLM_ERR_LEASE_EXPIRED if the context has a lease and it is lost, else RDLM_OK.
 *  Non-blocking: one clock read with a lease, none without. */
static inline rdlm_status_t rdlm_ctx_lease_check(const struct rdlm_ctx *ctx)
{
    return ctx->session == NULL ? RDLM_OK : rdlm_lease_session_valid(ctx->session);
}

/** The answer of an operation that completed (a release): status, or
 *  RDLM_ERR_LEASE_EXPIRED in place of a success once the lease is lost. */
static inline rdlm_status_t rdlm_ctx_lease_answer(const struct rdlm_ctx *ctx,
                                                  rdlm_status_t status)
{
    if (status < 0) {
        return status;
    }
    return rdlm_ctx_lease_check(ctx) != RDLM_OK ? RDLM_ERR_LEASE_EXPIRED : status;
}

/** rdlm_obj_check_handle, then the context's lease: RDLM_ERR_LEASE_EXPIRED once it is
 *  lost. Every operation but releases and closes starts with it. */
static inline rdlm_status_t rdlm_obj_check(const void *h, unsigned kind, const char *func)
{
    rdlm_status_t status = rdlm_obj_check_handle(h, kind, func);

    return status == RDLM_OK ? rdlm_ctx_lease_check(((const rdlm_obj_t *)h)->ctx) : status;
}

/** Wait out the context's lock delay (RDLM_LOCK_DELAY_MS; no-op without a lease):
 *  before an acquire returns RDLM_OWNER_DEAD. Blocking (a sleep). */
void rdlm_ctx_lease_lock_delay(const struct rdlm_ctx *ctx);

/** Open name as kind (size as in rdlm_table_open) and return its handle. */
rdlm_status_t rdlm_obj_open(rdlm_ctx_h ctx, const char *name, unsigned kind, uint32_t size,
                            rdlm_obj_t **obj_p);

/** Open name as kind with a size fixed by the first open (the entry's size: barrier
 *  participants, semaphore permits, counter sharding): another size is
 *  RDLM_ERR_MISMATCH (logged, handle closed). */
rdlm_status_t rdlm_obj_open_sized(rdlm_ctx_h ctx, const char *name, unsigned kind,
                                  uint32_t size, rdlm_obj_t **obj_p);

/** Release what the context holds on obj, mark it closed. Handle errors as check. */
rdlm_status_t rdlm_obj_close(void *h, unsigned kind, const char *func);

/** At context destroy: mark obj closed and keep it for reuse (never freed), so that
 *  stale handles answer RDLM_ERR_CLOSED. */
void rdlm_obj_retire(rdlm_obj_t *obj);

/** Release what obj holds (a semaphore's permits taken through it) and, if
 *  context_too, what its context holds of obj's name (a lock, an rwlock's sides):
 *  those belong to the context, which its other open handles of the name still use
 *  (at close only with the last of them; at destroy always). */
void rdlm_obj_release_held(rdlm_obj_t *obj, int context_too);

/* ---- service-wide locks (ctx_svc.c; ctx_svc_none.c without UCX) ------------------ */

/** A node-only context with a lease (RDLM_AUTHORITY): open the lock homes of the service
 *  (core/svc/include/svc.h) and make ctx->ops the table whose exclusive locks take them.
 *  RDLM_OK also when it hosts none (ctx->svc stays NULL: locks are node-local then, logged
 *  at info). */
rdlm_status_t rdlm_ctx_svc_open(rdlm_ctx_h ctx);

void rdlm_ctx_svc_close(rdlm_ctx_h ctx);

/** Remote operations the context's service-wide locks sent to the homes (0 without). */
uint64_t rdlm_ctx_svc_home_ops(rdlm_ctx_h ctx);

#endif
