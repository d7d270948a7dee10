/*
 * Service-wide exclusive locks for a context with RDLM_AUTHORITY (core/svc): the
 * node-local lock first (core/local ticket.c: one process of the node at a time), then
 * the lock word at the home an rdlmd hosts. The token is the home's.
 */
#include "api.h"
#include "clock.h"
#include "log.h"
#include "svc.h"

static uint64_t rdlm_ctx_svc_id(const rdlm_obj_t *obj)
{
    return rdlm_svc_lock_id(
        obj->ctx->svc,
        rdlm_load(&obj->ctx->local.seg.entries[obj->index].key, RDLM_RELAXED));
}

/* The node-local lock, then the home's word: RDLM_OK or RDLM_OWNER_DEAD with *token_p
 * (the home's token), else neither is held. */
static rdlm_status_t rdlm_ctx_svc_take(rdlm_obj_t *obj, uint64_t timeout_ns,
                                       uint64_t *token_p)
{
    uint64_t deadline = rdlm_clock_deadline(timeout_ns), local_token;
    rdlm_status_t local =
        rdlm_ticket_acquire(&obj->ctx->local, obj->index, timeout_ns, &local_token);
    rdlm_status_t global;

    if (local < 0) {
        return local;
    }
    global = rdlm_svc_lock_acquire(obj->ctx->svc, rdlm_ctx_svc_id(obj), deadline,
                                   timeout_ns == 0, token_p);
    if (global < 0) {
        rdlm_ticket_release(&obj->ctx->local, obj->index);
        rdlm_local_lock_ungrant(&obj->ctx->local, global);
        return global;
    }
    return local == RDLM_OWNER_DEAD ? local : global;
}

static rdlm_status_t rdlm_ctx_svc_release(rdlm_obj_t *obj)
{
    rdlm_status_t global = rdlm_svc_lock_release(obj->ctx->svc, rdlm_ctx_svc_id(obj));
    rdlm_status_t local = rdlm_ticket_release(&obj->ctx->local, obj->index);

    return global != RDLM_OK ? global : local;
}

/* The undone hold is left as a dead holder's: the home's word to the session's end
 * (rdlm_svc_lock_abandon), the node-local lock to RDLM_OWNER_DIED. */
static rdlm_status_t rdlm_ctx_svc_undo_dead(rdlm_obj_t *obj)
{
    rdlm_status_t global, local;

    if (obj->kind != RDLM_KIND_LOCK) {
        return rdlm_ops_local_undo_dead(obj);
    }
    global = rdlm_svc_lock_abandon(obj->ctx->svc, rdlm_ctx_svc_id(obj));
    local = rdlm_ticket_release_to(&obj->ctx->local, obj->index, RDLM_OWNER_DIED);
    return global != RDLM_OK ? global : local;
}

/* An acquire that may wait counts itself for the destroy (rdlm_local_wait_enter),
 * which frees the homes' links and the service's state once no call is counted; the
 * destroy's closing flag ends the wait at the home (rdlm_svc_open), and a lock granted
 * while the context closes is given back, as the destroy would release it under the
 * caller (rdlm.h, rdlm_ctx_destroy). A try is not counted: it must not run beside the
 * destroy. */
static rdlm_status_t rdlm_ctx_svc_acquire(rdlm_obj_t *obj, uint64_t timeout_ns,
                                          uint64_t *token_p)
{
    rdlm_local_t *lc = &obj->ctx->local;
    uint64_t token;
    rdlm_status_t st;

    if (timeout_ns != 0 && rdlm_local_wait_enter(lc) != RDLM_OK) {
        return RDLM_ERR_CLOSED;
    }
    st = rdlm_ctx_svc_take(obj, timeout_ns, &token);
    if (timeout_ns != 0 && st >= 0 && rdlm_load(&lc->closing, RDLM_SEQ_CST)) {
        rdlm_ctx_svc_release(obj);
        rdlm_local_lock_ungrant(lc, RDLM_ERR_CLOSED);
        st = RDLM_ERR_CLOSED;
    }
    if (st >= 0 && token_p != NULL) {
        *token_p = token;
    }
    return timeout_ns != 0 ? rdlm_local_wait_leave(lc, st) : st;
}

/* A closed handle of an exclusive lock: the service may forget the lock's state in
 * this process (rdlm_svc_lock_forget keeps it while held or in a call). */
static void rdlm_ctx_svc_close_obj(rdlm_obj_t *obj)
{
    if (obj->kind == RDLM_KIND_LOCK) {
        rdlm_svc_lock_forget(obj->ctx->svc, rdlm_ctx_svc_id(obj));
    }
}

uint64_t rdlm_ctx_svc_home_ops(rdlm_ctx_h ctx)
{
    return ctx->svc != NULL ? rdlm_svc_home_ops(ctx->svc) : 0;
}

/* The home: the index of the lock's rdlmd in the sorted authority addresses. */
static void rdlm_ctx_svc_lock_home(const rdlm_obj_t *obj, rdlm_lock_info_t *info_p)
{
    info_p->home_node = (int32_t)rdlm_svc_home_of(obj->ctx->svc, rdlm_ctx_svc_id(obj));
    info_p->node_holds_global = 0;
}

/* Exclusive locks take the home's word too; everything else is node-local. */
static const rdlm_obj_ops_t rdlm_obj_svc_ops = {
    .keeps = rdlm_ops_local_keeps,
    .open = rdlm_ops_local_open,
    .close = rdlm_ctx_svc_close_obj,
    .lock_acquire = rdlm_ctx_svc_acquire,
    .lock_release = rdlm_ctx_svc_release,
    .lock_home = rdlm_ctx_svc_lock_home,
    .read_acquire = rdlm_ops_local_read_acquire,
    .read_release = rdlm_ops_local_read_release,
    .write_acquire = rdlm_ops_local_write_acquire,
    .write_release = rdlm_ops_local_write_release,
    .undo_dead = rdlm_ctx_svc_undo_dead,
    .fetch_add = rdlm_ops_local_fetch_add,
    .counter_read = rdlm_ops_local_counter_read,
    .sem_acquire = rdlm_ops_local_sem_acquire,
    .sem_release = rdlm_ops_local_sem_release,
    .sem_available = rdlm_ops_local_sem_available,
    .barrier_wait = rdlm_ops_local_barrier_wait,
};

/* rdlm_local_t.holder_fenced: whether the live process of `owner`, holding the
 * node-local lock in front of a service-wide lock (this context waits behind it), has
 * lost its lease: stopped or cut off, its home word is broken by whoever gets there
 * (slock.c), but nobody of its job on this host would get there. The authority is
 * asked only about a holder this context has seen holding for a TTL, then every TTL/8:
 * hand-offs send nothing. Races between threads cost at most a repeated question. */
static int rdlm_ctx_svc_holder_fenced(void *arg, uint32_t owner, uint64_t session)
{
    rdlm_ctx_h ctx = arg;
    uint64_t now = rdlm_clock_now_ns(), ttl = (uint64_t)ctx->config.lease_ttl_ms * 1000000u;
    uint64_t ask = rdlm_load(&ctx->fenced.next_ask_ns, RDLM_ACQUIRE);
    int ended;

    if (rdlm_load(&ctx->fenced.ended, RDLM_ACQUIRE) == session) {
        return 1;
    }
    if (rdlm_exchange(&ctx->fenced.owner, owner, RDLM_ACQ_REL) != owner) {
        rdlm_store(&ctx->fenced.next_ask_ns, now + ttl, RDLM_RELEASE); /* a new holder */
        return 0;
    }
    if (now < ask ||
        !rdlm_cas(&ctx->fenced.next_ask_ns, &ask, now + ttl / 8 + 1, RDLM_ACQ_REL)) {
        return 0;
    }
    ended = rdlm_lease_session_ended(ctx->session, session);
    if (ended != 1) {
        return 0;
    }
    rdlm_store(&ctx->fenced.ended, session, RDLM_RELEASE);
    rdlm_warn("svc: a process of this job on this host holds a lock's node-local part "
              "but its lease session %llu ended (stopped or cut off): passing over it",
              (unsigned long long)session);
    return 1;
}

rdlm_status_t rdlm_ctx_svc_open(rdlm_ctx_h ctx)
{
    rdlm_status_t st;

    if (ctx->session == NULL) {
        return RDLM_OK;
    }
    st = rdlm_svc_open(ctx->config.authority, ctx->session, &ctx->config,
                       &ctx->local.closing, &ctx->svc);
    if (st == RDLM_OK && ctx->svc != NULL) {
        ctx->ops = &rdlm_obj_svc_ops;
        rdlm_segment_set_session(&ctx->local.seg, rdlm_lease_session_id(ctx->session));
        ctx->local.holder_fenced_arg = ctx;
        ctx->local.holder_fenced = rdlm_ctx_svc_holder_fenced;
    }
    return st == RDLM_ERR_UNSUPPORTED ? RDLM_OK : st;
}

void rdlm_ctx_svc_close(rdlm_ctx_h ctx)
{
    rdlm_svc_close(ctx->svc);
    ctx->svc = NULL;
}
