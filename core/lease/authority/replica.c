/*
 * One lease-authority replica on libraft/raft_uv (replica.h): setup and shutdown,
 * the leadership sample, the submit path, and the leader's lease timers (timers.h,
 * given this clock's time).
 *
 * Entry framing: raft_uv 0.15 stores and sends entry data in 8-byte units (its segment
 * writer asserts len % 8 == 0 and, with assertions compiled out as Debian ships it,
 * misplaces every later entry of a batch on disk and on the wire). Each command is
 * therefore padded to a multiple of 8 with n bytes of value n (1..8), and the
 * padding is stripped before the state machine sees the entry; an entry that is not
 * framed so reaches the state machine whole, which refuses it like any bad entry.
 *
 */
#include "replica.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <raft.h>
#include <raft/uv.h>

#include "append_guard.h"
#include "clock.h"
#include "confirm.h"
#include "disk.h"
#include "log.h"
#include "raft_fsm.h"
#include "tcp.h"
#include "timers.h"

/* How often the leadership is sampled and the deadlines looked at. */
#define RDLM_LEASE_TICK_MS 10u
/* The data directory is sampled every this many ticks (disk.h). */
#define RDLM_LEASE_DISK_TICKS 10u
/* A ready leader asks a confirmation round every this many samples, so that it hears
 * of another replica's full disk without renewals too. */
#define RDLM_LEASE_DISK_PEER_SAMPLES 5u
/* A snapshot sent to a follower and not acknowledged within this many election
 * timeouts is sent again. */
#define RDLM_LEASE_INSTALL_SNAPSHOT_ETS 5u

struct rdlm_lease_replica {
    struct raft raft;
    rdlm_lease_append_guard_t io; /* libraft's uv io, its appends guarded */
    rdlm_lease_tcp_t transport;
    struct raft_fsm fsm;
    rdlm_lease_raft_fsm_t adapter;
    int (*fsm_apply)(struct raft_fsm *fsm, const struct raft_buffer *buf, void **result);
    uv_timer_t tick;
    struct raft_barrier barrier;
    struct raft_transfer transfer; /* leadership handed over when stopping */
    rdlm_lease_confirm_t *confirm; /* NULL with one replica */
    int closes_left;               /* raft_close, the tick timer's uv_close, confirm */

    rdlm_lease_peer_t peers[RDLM_LEASE_PEERS_MAX];
    unsigned n_peers;
    unsigned heartbeat_ms;
    const rdlm_lease_replica_ops_t *ops;
    void *ops_arg;

    uint64_t seen_term, seen_leader; /* last logged "leader= term=" */
    int leading;                     /* sampled as leader of lead_term */
    uint64_t lead_term;
    int barrier_pending;
    int ready;

    rdlm_lease_timers_t timers; /* room for limits.max_sessions */

    rdlm_lease_disk_t disk; /* sampled every RDLM_LEASE_DISK_TICKS ticks */
    unsigned disk_ticks, disk_samples;
    const char *peer_full;     /* another replica said its disk is full (confirm.h) */
    uint64_t disk_warned_term; /* "cannot become ready" was logged for this term */
    int unsafe;                /* data directory gone: serves nothing */
    int unavailable_logged;    /* libraft stopped it (RAFT_UNAVAILABLE), said once */
    rdlm_lease_fault_func_t on_fault;
    void *fault_arg;
    /* Test hook RDLMTEST_LEASE_LOSE_ANSWER=name: the first ACQUIRE of name this
     * replica applies as leader is answered as if its apply had failed. */
    const char *lose_answer;
};

/* One entry on its way through raft_apply. */
typedef struct rdlm_lease_submit {
    struct raft_apply req;
    rdlm_lease_replica_t *rep;
    rdlm_lease_done_func_t done;
    void *arg;
    uint8_t op;
    uint64_t session;
    int lose_answer; /* the test hook picked this entry */
} rdlm_lease_submit_t;

static void rdlm_lease_stub_leading(void *arg, int ready)
{
    (void)arg;
    (void)ready;
}

static void rdlm_lease_stub_granted(void *arg, uint64_t session, uint64_t seq,
                                    const char *name, uint64_t token, int broken)
{
    (void)arg;
    (void)session;
    (void)seq;
    (void)name;
    (void)token;
    (void)broken;
}

static void rdlm_lease_stub_confirmed(void *arg, uint64_t round, int confirmed)
{
    (void)arg;
    (void)round;
    (void)confirmed;
}

static void rdlm_lease_stub_gone(void *arg, uint64_t session)
{
    (void)arg;
    (void)session;
}

static const rdlm_lease_replica_ops_t rdlm_lease_stub_ops = {
    .leading = rdlm_lease_stub_leading,
    .granted = rdlm_lease_stub_granted,
    .session_gone = rdlm_lease_stub_gone,
    .confirmed = rdlm_lease_stub_confirmed,
};

static uint64_t rdlm_lease_now_ms(void)
{
    return rdlm_clock_now_ns() / 1000000u;
}

static rdlm_status_t rdlm_lease_raft_status(int rv)
{
    switch (rv) {
    case 0:
        return RDLM_OK;
    case RAFT_NOTLEADER:
    case RAFT_LEADERSHIPLOST:
    case RAFT_SHUTDOWN:
        return RDLM_ERR_NOT_LEADER;
    case RAFT_NOMEM:
        return RDLM_ERR_NO_MEMORY;
    default:
        return RDLM_ERR_IO;
    }
}

static const rdlm_lease_peer_t *rdlm_lease_peer(const rdlm_lease_replica_t *rep,
                                                uint64_t id)
{
    for (unsigned i = 0; i < rep->n_peers; i++) {
        if (rep->peers[i].id == id) {
            return &rep->peers[i];
        }
    }
    return NULL;
}

/* Ready leader right now: the sample may be up to a tick old, libraft is not. */
static int rdlm_lease_is_ready(const rdlm_lease_replica_t *rep)
{
    struct raft *r = (struct raft *)&rep->raft; /* libraft's getters are not const */

    return rep->ready && !rep->unsafe && raft_state(r) == RAFT_LEADER &&
           r->current_term == rep->lead_term;
}

/* 1 if this replica's data directory was ok at the last sample (disk.h). */
static int rdlm_lease_disk_ok(const rdlm_lease_replica_t *rep)
{
    return rep->disk.state == RDLM_LEASE_DISK_OK;
}

/* 1 if this leader may log entries now: its own disk is ok and no other replica said
 * lately that its disk is full (it would have to write them too, and libraft 0.15 has
 * no safe path for a follower's failed write either). */
static int rdlm_lease_writes_ok(const rdlm_lease_replica_t *rep)
{
    return rdlm_lease_disk_ok(rep) && rep->peer_full == NULL;
}

/* ---- lease timers ---------------------------------------------------------------- */

/* The EXPIRE of session (arg) was applied, or not: only a committed one says the
 * session expired (a leader stopped past its term and resumed proposes EXPIREs of
 * sessions its successor kept, and they fail). The bookkeeping is in
 * rdlm_lease_replica_applied_cb. */
static void rdlm_lease_expire_done(void *arg, rdlm_status_t status,
                                   const rdlm_lease_result_t *res)
{
    unsigned long long session = (unsigned long long)(uintptr_t)arg;

    (void)res;
    if (status == RDLM_OK) {
        rdlm_warn("lease: session %llu expired (not renewed for its TTL)", session);
    } else {
        rdlm_info("lease: the expiry of session %llu was not committed (%s): this replica "
                  "no longer leads, or could not write",
                  session, rdlm_status_name(status));
    }
}

/* rdlm_lease_timers_scan's callback: submit the EXPIRE of session (its deadline
 * passed), or retry a heartbeat later. */
static void rdlm_lease_timer_expire(void *arg, uint64_t session, uint64_t now_ms)
{
    rdlm_lease_replica_t *rep = arg;
    rdlm_lease_cmd_t cmd = {.op = RDLM_LEASE_OP_EXPIRE, .session = session};
    rdlm_status_t s;

    rdlm_debug("lease: session %llu not renewed for its TTL: proposing its expiry",
               (unsigned long long)session);
    s = rdlm_lease_replica_submit(rep, &cmd, rdlm_lease_expire_done,
                                  (void *)(uintptr_t)session);
    if (s != RDLM_OK) {
        rdlm_warn("lease: cannot submit the EXPIRE of session %llu (%s); retrying",
                  (unsigned long long)session, rdlm_status_name(s));
        rdlm_lease_timers_retry(&rep->timers, session, now_ms + rep->heartbeat_ms);
    }
}

/* ---- leadership ---------------------------------------------------------------- */

static void rdlm_lease_barrier_cb(struct raft_barrier *req, int status)
{
    rdlm_lease_replica_t *rep = req->data;

    rep->barrier_pending = 0;
    if (status != 0 || !rep->leading || rep->raft.current_term != rep->lead_term) {
        return; /* stepped down: the tick notices */
    }
    rep->ready = 1;
    rdlm_lease_timers_lead(&rep->timers, rep->adapter.sm, rdlm_lease_now_ms());
    rdlm_info("lease: leader ready in term %llu: %zu sessions armed for a full TTL",
              (unsigned long long)rep->lead_term, rep->timers.n);
    rep->ops->leading(rep->ops_arg, 1);
}

/* Submit the barrier after which the new leader is ready (retried by the tick). */
static void rdlm_lease_barrier_submit(rdlm_lease_replica_t *rep)
{
    int rv = raft_barrier(&rep->raft, &rep->barrier, rdlm_lease_barrier_cb);

    if (rv != 0) {
        rdlm_debug("lease: raft_barrier: %s (retrying)", raft_strerror(rv));
        return;
    }
    rep->barrier_pending = 1;
}

static void rdlm_lease_step_down(rdlm_lease_replica_t *rep)
{
    rdlm_warn("lease: replica %llu stepping down (was leader of term %llu)",
              (unsigned long long)rep->raft.id, (unsigned long long)rep->lead_term);
    rep->leading = 0;
    rep->ready = 0;
    rdlm_lease_timers_clear(&rep->timers);
    rep->ops->leading(rep->ops_arg, 0);
}

/* The replica's data directory is gone (disk.c said so): its log with it. It serves
 * nothing more, and its owner is told once (on_fault). */
static void rdlm_lease_fault(rdlm_lease_replica_t *rep)
{
    if (rep->leading) {
        rdlm_lease_step_down(rep);
    }
    rep->unsafe = 1;
    uv_timer_stop(&rep->tick);
    if (rep->on_fault != NULL) {
        rep->on_fault(rep->fault_arg);
    }
}

/* What a ready leader hears about the other replicas' disks: a change is logged. */
static void rdlm_lease_disk_peers(rdlm_lease_replica_t *rep)
{
    const char *full;

    if (rep->confirm == NULL || !rdlm_lease_is_ready(rep)) {
        rep->peer_full = NULL; /* asked again once it leads */
        return;
    }
    if (++rep->disk_samples % RDLM_LEASE_DISK_PEER_SAMPLES == 0) {
        rdlm_lease_confirm_ask(rep->confirm, rep->lead_term);
    }
    full = rdlm_lease_confirm_full_peer(rep->confirm);
    if (full != NULL && rep->peer_full == NULL) {
        rdlm_warn("lease: replica at %s says its data disk is full: writes refused with "
                  "RDLM_ERR_NO_SPACE until it has space",
                  full);
    } else if (full == NULL && rep->peer_full != NULL) {
        rdlm_info("lease: no replica says its data disk is full any more: writes resume");
    }
    rep->peer_full = full;
}

/* Sample the data directory every RDLM_LEASE_DISK_TICKS ticks. 0 if it is gone. */
static int rdlm_lease_disk_tick(rdlm_lease_replica_t *rep)
{
    if (++rep->disk_ticks < RDLM_LEASE_DISK_TICKS) {
        return 1;
    }
    rep->disk_ticks = 0;
    rdlm_lease_disk_peers(rep);
    return rdlm_lease_disk_sample(&rep->disk) != RDLM_LEASE_DISK_GONE;
}

/* A new leader's barrier is one small entry into a segment libraft already
 * preallocated: a low disk allows it (so that renewals are served), a read-only one
 * does not (said once per term). */
static void rdlm_lease_barrier_try(rdlm_lease_replica_t *rep)
{
    if (rep->disk.state != RDLM_LEASE_DISK_READONLY) {
        rdlm_lease_barrier_submit(rep);
    } else if (rep->disk_warned_term != rep->lead_term) {
        rep->disk_warned_term = rep->lead_term;
        rdlm_warn("lease: leader of term %llu cannot become ready: data directory %s is "
                  "read-only",
                  (unsigned long long)rep->lead_term, rep->disk.dir);
    }
}

static void rdlm_lease_tick(uv_timer_t *handle)
{
    rdlm_lease_replica_t *rep = handle->data;
    struct raft *r = &rep->raft;
    int state = raft_state(r);
    raft_id leader;
    const char *addr;

    if (!rdlm_lease_disk_tick(rep)) {
        rdlm_lease_fault(rep);
        return;
    }
    if (state == RAFT_UNAVAILABLE && !rep->unavailable_logged) {
        /* libraft stopped it (a failed write, or entries that contradict the
         * leader's): it still answers STATUS, so the leader can compare marks */
        rep->unavailable_logged = 1;
        rdlm_error("lease: libraft stopped replica %llu (%s): it serves only STATUS now; "
                   "restart it",
                   (unsigned long long)r->id, raft_errmsg(r));
    }
    raft_leader(r, &leader, &addr);
    if (leader != rep->seen_leader || r->current_term != rep->seen_term) {
        rep->seen_leader = leader;
        rep->seen_term = r->current_term;
        rdlm_info("rdlmd id=%llu leader=%llu term=%llu", (unsigned long long)r->id,
                  (unsigned long long)leader, (unsigned long long)r->current_term);
    }
    if (rep->leading && (state != RAFT_LEADER || r->current_term != rep->lead_term)) {
        rdlm_lease_step_down(rep);
    }
    if (!rep->leading && state == RAFT_LEADER) {
        rep->leading = 1;
        rep->lead_term = r->current_term;
        rdlm_info("lease: replica %llu becoming leader of term %llu",
                  (unsigned long long)r->id, (unsigned long long)rep->lead_term);
    }
    if (rep->leading && !rep->ready && !rep->barrier_pending) {
        rdlm_lease_barrier_try(rep);
    }
    if (rep->ready) {
        rdlm_lease_timers_scan(&rep->timers, rdlm_lease_now_ms(), rdlm_lease_writes_ok(rep),
                               rdlm_lease_timer_expire, rep);
    }
}

/* ---- entry framing ---------------------------------------------------------------- */

/* Bytes of padding after len bytes of command (1..8: the framing is never empty). */
static size_t rdlm_lease_frame_pad(size_t len)
{
    return 8u - len % 8u;
}

/* The adapter's apply on the command inside a framed entry. */
static int rdlm_lease_frame_apply(struct raft_fsm *fsm, const struct raft_buffer *buf,
                                  void **result)
{
    rdlm_lease_replica_t *rep =
        (rdlm_lease_replica_t *)((char *)fsm - offsetof(rdlm_lease_replica_t, fsm));
    const uint8_t *bytes = buf->base;
    struct raft_buffer cmd = *buf;

    if (buf->len % 8u == 0 && buf->len > 0 && bytes[buf->len - 1] >= 1 &&
        bytes[buf->len - 1] <= 8) {
        cmd.len -= bytes[buf->len - 1];
    }
    return rep->fsm_apply(fsm, &cmd, result);
}

/* ---- submit path ---------------------------------------------------------------- */

/*
 * The answer to an entry whose apply ended with rv. A failure other than a lost
 * leadership (or memory) leaves the outcome unknown: the entry may still be committed,
 * here or by a later leader. It is answered RDLM_ERR_UNAVAILABLE, on which the client
 * retries the same seq, and the state machine answers that from its state whether or
 * not the entry took effect. (An answer the client takes as final would strand it: an
 * ACQUIRE granted unbeknown to the client makes every later one of that lock invalid.)
 */
static rdlm_status_t rdlm_lease_apply_status(const rdlm_lease_submit_t *sub, int rv)
{
    rdlm_status_t status = rdlm_lease_raft_status(rv);

    if (status == RDLM_ERR_IO) {
        rdlm_warn("lease: %s of session %llu: %s: outcome unknown, answered %s",
                  rdlm_lease_op_name(sub->op), (unsigned long long)sub->session,
                  raft_strerror(rv), rdlm_status_name(RDLM_ERR_UNAVAILABLE));
        status = RDLM_ERR_UNAVAILABLE;
    }
    return status;
}

static void rdlm_lease_replica_applied_cb(struct raft_apply *req, int rv, void *result)
{
    rdlm_lease_submit_t *sub = req->data;
    rdlm_lease_replica_t *rep = sub->rep;
    const rdlm_lease_result_t *res = rv == 0 ? result : NULL;
    rdlm_status_t status;

    if (rdlm_lease_timers_applied(&rep->timers, rep->adapter.sm, sub->op, sub->session, res,
                                  rdlm_lease_now_ms())) {
        rep->ops->session_gone(rep->ops_arg, sub->session);
    }
    if (sub->lose_answer) {
        rv = RAFT_IOERR; /* applied, but answered as a failed apply */
    }
    status = rdlm_lease_apply_status(sub, rv);
    sub->done(sub->arg, status, status == RDLM_OK ? res : NULL);
    free(sub);
}

rdlm_status_t rdlm_lease_replica_submit(rdlm_lease_replica_t *rep,
                                        const rdlm_lease_cmd_t *cmd,
                                        rdlm_lease_done_func_t done, void *arg)
{
    uint8_t enc[RDLM_LEASE_CMD_MAX];
    size_t len = rdlm_lease_cmd_encode(cmd, enc, sizeof(enc));
    size_t pad = rdlm_lease_frame_pad(len);
    struct raft_buffer buf;
    rdlm_lease_submit_t *sub;
    int rv;

    if (!rdlm_lease_is_ready(rep)) {
        return RDLM_ERR_NOT_LEADER;
    }
    if (len == 0 || !rdlm_lease_op_is_logged(cmd->op)) {
        return RDLM_ERR_INVALID_ARG;
    }
    if (!rdlm_lease_writes_ok(rep)) {
        return RDLM_ERR_NO_SPACE; /* said once by the disk sample, not per request */
    }
    sub = malloc(sizeof(*sub));
    buf.base = raft_malloc(len + pad);
    buf.len = len + pad;
    if (sub == NULL || buf.base == NULL) {
        free(sub);
        raft_free(buf.base);
        return RDLM_ERR_NO_MEMORY;
    }
    memcpy(buf.base, enc, len);
    memset((uint8_t *)buf.base + len, (int)pad, pad);
    *sub = (rdlm_lease_submit_t){
        .rep = rep, .done = done, .arg = arg, .op = cmd->op, .session = cmd->session};
    if (rep->lose_answer != NULL && cmd->op == RDLM_LEASE_OP_ACQUIRE &&
        strcmp(cmd->name, rep->lose_answer) == 0) {
        sub->lose_answer = 1;
        rep->lose_answer = NULL; /* once */
    }
    sub->req.data = sub;
    rv = raft_apply(&rep->raft, &sub->req, &buf, 1, rdlm_lease_replica_applied_cb);
    if (rv != 0) {
        rdlm_debug("lease: raft_apply of %s: %s", rdlm_lease_op_name(cmd->op),
                   raft_strerror(rv));
        raft_free(buf.base);
        free(sub);
        return rdlm_lease_raft_status(rv);
    }
    return RDLM_OK;
}

rdlm_status_t rdlm_lease_replica_renew(rdlm_lease_replica_t *rep, uint64_t session,
                                       uint32_t *ttl_ms_p)
{
    if (!rdlm_lease_is_ready(rep)) {
        return RDLM_ERR_NOT_LEADER;
    }
    return rdlm_lease_timers_renew(&rep->timers, rep->adapter.sm, session,
                                   rdlm_lease_now_ms(), ttl_ms_p);
}

rdlm_status_t rdlm_lease_replica_confirm(rdlm_lease_replica_t *rep, uint64_t *round_p)
{
    if (!rdlm_lease_is_ready(rep)) {
        return RDLM_ERR_NOT_LEADER;
    }
    *round_p =
        rep->confirm != NULL ? rdlm_lease_confirm_ask(rep->confirm, rep->lead_term) : 0;
    return RDLM_OK;
}

static void rdlm_lease_confirmed(void *arg, uint64_t round, int confirmed)
{
    rdlm_lease_replica_t *rep = arg;

    rep->ops->confirmed(rep->ops_arg, round, confirmed);
}

/* ---- queries ---------------------------------------------------------------- */

void rdlm_lease_replica_role(const rdlm_lease_replica_t *rep, rdlm_lease_role_t *role_p)
{
    struct raft *r = (struct raft *)&rep->raft; /* libraft's getters are not const */
    const rdlm_lease_peer_t *leader;
    raft_id id;
    const char *addr;

    raft_leader(r, &id, &addr);
    leader = rdlm_lease_peer(rep, id);
    role_p->is_leader = raft_state(r) == RAFT_LEADER;
    role_p->ready = rdlm_lease_is_ready(rep);
    role_p->starting = rep->leading && !rep->ready && role_p->is_leader &&
                       r->current_term == rep->lead_term;
    role_p->term = r->current_term;
    role_p->leader_id = id;
    role_p->leader_client_addr = leader != NULL ? leader->client_addr : "";
}

int rdlm_lease_replica_disk_low(const rdlm_lease_replica_t *rep)
{
    return !rdlm_lease_disk_ok(rep);
}

const rdlm_lease_sm_t *rdlm_lease_replica_sm(const rdlm_lease_replica_t *rep)
{
    return rep->adapter.sm;
}

const rdlm_lease_peer_t *rdlm_lease_replica_peers(const rdlm_lease_replica_t *rep,
                                                  unsigned *n_p)
{
    *n_p = rep->n_peers;
    return rep->peers;
}

rdlm_lease_witness_t *rdlm_lease_replica_witness(rdlm_lease_replica_t *rep)
{
    return &rep->adapter.witness;
}

uint64_t rdlm_lease_replica_applied(const rdlm_lease_replica_t *rep)
{
    return raft_last_applied((struct raft *)&rep->raft);
}

void rdlm_lease_replica_set_ops(rdlm_lease_replica_t *rep,
                                const rdlm_lease_replica_ops_t *ops, void *arg)
{
    rep->ops = ops;
    rep->ops_arg = arg;
    rdlm_lease_sm_set_grant_cb(rep->adapter.sm, ops->granted, arg);
}

/* ---- lifecycle ---------------------------------------------------------------- */

static void rdlm_lease_replica_free_if_closed(rdlm_lease_replica_t *rep)
{
    if (--rep->closes_left > 0) {
        return;
    }
    raft_uv_close(&rep->io.io);
    rdlm_lease_tcp_close(&rep->transport);
    rdlm_lease_raft_fsm_close(&rep->adapter);
    rdlm_lease_disk_close(&rep->disk);
    rdlm_lease_timers_free(&rep->timers);
    free(rep);
}

static void rdlm_lease_raft_closed(struct raft *r)
{
    rdlm_lease_replica_free_if_closed(r->data);
}

static void rdlm_lease_tick_closed(uv_handle_t *handle)
{
    rdlm_lease_replica_free_if_closed(handle->data);
}

static void rdlm_lease_confirm_closed(void *arg)
{
    rdlm_lease_replica_free_if_closed(arg);
}

static void rdlm_lease_replica_close(rdlm_lease_replica_t *rep)
{
    rep->closes_left = rep->confirm != NULL ? 3 : 2;
    uv_close((uv_handle_t *)&rep->tick, rdlm_lease_tick_closed);
    if (rep->confirm != NULL) {
        rdlm_lease_confirm_stop(rep->confirm, rdlm_lease_confirm_closed, rep);
    }
    raft_close(&rep->raft, rdlm_lease_raft_closed);
}

static void rdlm_lease_transfer_done(struct raft_transfer *req)
{
    rdlm_lease_replica_t *rep = req->data;
    raft_id leader;
    const char *addr;

    raft_leader(&rep->raft, &leader, &addr);
    rdlm_info("lease: replica %llu: leader now %llu; closing",
              (unsigned long long)rep->raft.id, (unsigned long long)leader);
    rdlm_lease_replica_close(rep);
}

void rdlm_lease_replica_stop(rdlm_lease_replica_t *rep)
{
    rdlm_info("lease: replica %llu stopping", (unsigned long long)rep->raft.id);
    uv_timer_stop(&rep->tick); /* no more timers, barriers or announcements */
    rep->ready = 0;
    rep->transfer.data = rep;
    if (raft_state(&rep->raft) == RAFT_LEADER &&
        raft_transfer(&rep->raft, &rep->transfer, 0, rdlm_lease_transfer_done) == 0) {
        rdlm_info("lease: replica %llu handing leadership over before closing",
                  (unsigned long long)rep->raft.id);
        return; /* libraft calls back once another leads, or after an election timeout */
    }
    rdlm_lease_replica_close(rep);
}

/* The entry of p->id among p's peers, or NULL. */
static const rdlm_lease_peer_t *rdlm_lease_params_self(const rdlm_lease_replica_params_t *p)
{
    for (unsigned i = 0; i < p->n_peers; i++) {
        if (p->peers[i].id == p->id) {
            return &p->peers[i];
        }
    }
    return NULL;
}

/* 1 if a and b are one address: one IPv4 address and port however written
 * ("127.0.0.1:021001" is "127.0.0.1:21001"), or one host name (in any case) and port.
 * Nothing is looked up: a name and an address of one host are two addresses here. */
static int rdlm_lease_addr_same(const char *a, const char *b)
{
    char host_a[RDLM_HOST_MAX + 1], host_b[RDLM_HOST_MAX + 1];
    uint32_t ip_a, ip_b;
    uint16_t port_a, port_b;

    if (rdlm_config_addr_parse(a, &ip_a, &port_a) &&
        rdlm_config_addr_parse(b, &ip_b, &port_b)) {
        return ip_a == ip_b && port_a == port_b;
    }
    if (rdlm_config_hostport_parse(a, host_a, &port_a) &&
        rdlm_config_hostport_parse(b, host_b, &port_b)) {
        return strcasecmp(host_a, host_b) == 0 && port_a == port_b;
    }
    return strcmp(a, b) == 0;
}

/* Peer i's Raft or client address if an earlier address in the peers (one of peers
 * 0..i-1's two, or peer i's Raft address for its client address) is the same, with in
 * *other_p the id of the peer that has it; NULL if both of peer i's are new. */
static const char *rdlm_lease_params_shared_addr(const rdlm_lease_replica_params_t *p,
                                                 unsigned i, uint64_t *other_p)
{
    const rdlm_lease_peer_t *me = &p->peers[i];

    for (unsigned k = 0; k < 2 * i + 1; k++) {
        const rdlm_lease_peer_t *them = &p->peers[k / 2];
        const char *addr = k % 2 ? them->client_addr : them->raft_addr;

        *other_p = them->id;
        if (k < 2 * i && rdlm_lease_addr_same(addr, me->raft_addr)) {
            return addr;
        }
        if (rdlm_lease_addr_same(addr, me->client_addr)) {
            return addr;
        }
    }
    return NULL;
}

rdlm_status_t rdlm_lease_replica_params_check(const rdlm_lease_replica_params_t *p)
{
    const char *shared;
    uint64_t other;

    if (p->n_peers == 0 || p->n_peers > RDLM_LEASE_PEERS_MAX || p->data_dir == NULL) {
        rdlm_error("lease: %u peers and %s data directory: want 1-%u peers and one",
                   p->n_peers, p->data_dir == NULL ? "no" : "a", RDLM_LEASE_PEERS_MAX);
        return RDLM_ERR_INVALID_ARG;
    }
    if (p->heartbeat_ms == 0 || 2 * p->heartbeat_ms >= p->election_timeout_ms) {
        rdlm_error("lease: heartbeat %u ms: want above 0 and below half the election "
                   "timeout (%u ms)",
                   p->heartbeat_ms, p->election_timeout_ms);
        return RDLM_ERR_INVALID_ARG;
    }
    if (p->snapshot_threshold == 0 || p->limits.max_sessions == 0) {
        rdlm_error("lease: snapshot threshold and max sessions must be above 0");
        return RDLM_ERR_INVALID_ARG;
    }
    for (unsigned i = 0; i < p->n_peers; i++) {
        for (unsigned j = 0; j < i; j++) {
            if (p->peers[j].id == p->peers[i].id) {
                rdlm_error("lease: replica id %llu appears twice among the peers",
                           (unsigned long long)p->peers[i].id);
                return RDLM_ERR_INVALID_ARG;
            }
        }
        shared = rdlm_lease_params_shared_addr(p, i, &other);
        if (shared != NULL) {
            rdlm_error("lease: address %s is replica %llu's and replica %llu's: every Raft "
                       "and client address in the peers must differ",
                       shared, (unsigned long long)other,
                       (unsigned long long)p->peers[i].id);
            return RDLM_ERR_INVALID_ARG;
        }
        if (p->peers[i].id == 0) {
            rdlm_error("lease: a peer has id 0 (ids start at 1)");
            return RDLM_ERR_INVALID_ARG;
        }
    }
    if (rdlm_lease_params_self(p) == NULL) {
        rdlm_error("lease: replica id %llu is not among the peers",
                   (unsigned long long)p->id);
        return RDLM_ERR_INVALID_ARG;
    }
    return RDLM_OK;
}

/* raft_bootstrap with every peer as a voter: RAFT_CANTBOOTSTRAP (already done) is 0. */
static int rdlm_lease_bootstrap(rdlm_lease_replica_t *rep)
{
    struct raft_configuration conf;
    int rv = 0;

    raft_configuration_init(&conf);
    for (unsigned i = 0; i < rep->n_peers && rv == 0; i++) {
        rv = raft_configuration_add(&conf, rep->peers[i].id, rep->peers[i].raft_addr,
                                    RAFT_VOTER);
    }
    if (rv == 0) {
        rv = raft_bootstrap(&rep->raft, &conf);
        if (rv == 0) {
            rdlm_info("lease: bootstrapped a new data directory with %u replicas",
                      rep->n_peers);
        }
    }
    raft_configuration_close(&conf);
    return rv == RAFT_CANTBOOTSTRAP ? 0 : rv;
}

/* 1 if server srv of libraft's configuration is a voter among the peers, at its
 * Raft address. */
static int rdlm_lease_member_known(const rdlm_lease_replica_t *rep,
                                   const struct raft_server *srv)
{
    for (unsigned i = 0; i < rep->n_peers; i++) {
        if (rep->peers[i].id == srv->id) {
            return srv->role == RAFT_VOTER &&
                   strcmp(srv->address, rep->peers[i].raft_addr) == 0;
        }
    }
    return 0;
}

/* 1 if libraft's configuration (loaded from the data directory by raft_start, or just
 * bootstrapped) is the peers: the same ids, voters, at the same Raft addresses; else
 * 0, logged with both lists. */
static int rdlm_lease_members_match(const rdlm_lease_replica_t *rep, const char *data_dir)
{
    const struct raft_configuration *c = &rep->raft.configuration;
    char had[RDLM_LEASE_PEERS_MAX * (RDLM_ADDR_MAX + 24)] = "";
    char want[sizeof(had)] = "";
    int same = c->n == rep->n_peers;

    for (unsigned i = 0; i < c->n; i++) {
        same = same && rdlm_lease_member_known(rep, &c->servers[i]);
        snprintf(had + strlen(had), sizeof(had) - strlen(had), "%s%llu=%s",
                 i == 0 ? "" : ",", (unsigned long long)c->servers[i].id,
                 c->servers[i].address);
    }
    if (same) {
        return 1;
    }
    for (unsigned i = 0; i < rep->n_peers; i++) {
        snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s%llu=%s",
                 i == 0 ? "" : ",", (unsigned long long)rep->peers[i].id,
                 rep->peers[i].raft_addr);
    }
    rdlm_error("lease: data directory %s holds the replicas %s, --peers gives %s: start "
               "every replica with the --peers its directory was made with",
               data_dir, had, want);
    return 0;
}

/* The Raft port accepts connections from the peers' Raft hosts only (tcp.h). */
static rdlm_status_t rdlm_lease_replica_allow(rdlm_lease_replica_t *rep)
{
    const char *addrs[RDLM_LEASE_PEERS_MAX];

    for (unsigned i = 0; i < rep->n_peers; i++) {
        addrs[i] = rep->peers[i].raft_addr;
    }
    return rdlm_lease_tcp_allow(&rep->transport, addrs, rep->n_peers);
}

rdlm_status_t rdlm_lease_replica_start(uv_loop_t *loop,
                                       const rdlm_lease_replica_params_t *params,
                                       rdlm_lease_replica_t **rep_p)
{
    const rdlm_lease_peer_t *self;
    rdlm_lease_replica_t *rep;
    rdlm_status_t s;
    int rv;

    if (rdlm_lease_replica_params_check(params) != RDLM_OK) {
        return RDLM_ERR_INVALID_ARG;
    }
    self = rdlm_lease_params_self(params);
    rep = calloc(1, sizeof(*rep));
    if (rep == NULL ||
        rdlm_lease_timers_init(&rep->timers, params->limits.max_sessions) != RDLM_OK) {
        s = RDLM_ERR_NO_MEMORY;
        goto err_free;
    }
    memcpy(rep->peers, params->peers, params->n_peers * sizeof(rep->peers[0]));
    rep->n_peers = params->n_peers;
    rep->heartbeat_ms = params->heartbeat_ms;
    rep->ops = &rdlm_lease_stub_ops;
    rep->barrier.data = rep;
    rep->on_fault = params->on_fault;
    rep->fault_arg = params->fault_arg;
    rep->lose_answer = getenv("RDLMTEST_LEASE_LOSE_ANSWER");
    s = rdlm_lease_disk_open(&rep->disk, params->data_dir);
    if (s != RDLM_OK) {
        goto err_free; /* logged there */
    }
    s = rdlm_lease_disk_own(&rep->disk, params->id);
    if (s != RDLM_OK) {
        goto err_disk; /* logged there */
    }
    s = rdlm_lease_raft_fsm_init(&rep->adapter, &rep->fsm, &params->limits);
    if (s != RDLM_OK) {
        goto err_disk;
    }
    rep->fsm_apply = rep->fsm.apply;
    rep->fsm.apply = rdlm_lease_frame_apply;
    rv = rdlm_lease_tcp_init(&rep->transport, loop);
    if (rv != 0) {
        rdlm_error("lease: raft_uv_tcp_init: %s", raft_strerror(rv));
        s = rdlm_lease_raft_status(rv);
        goto err_fsm;
    }
    s = rdlm_lease_replica_allow(rep);
    if (s != RDLM_OK) {
        goto err_transport;
    }
    rv = raft_uv_init(&rep->io.io, loop, params->data_dir, &rep->transport.uv);
    if (rv != 0) {
        rdlm_error("lease: data directory %s: %s", params->data_dir, rep->io.io.errmsg);
        s = RDLM_ERR_IO;
        goto err_transport;
    }
    raft_uv_set_segment_size(&rep->io.io, RDLM_LEASE_DISK_SEGMENT);
    rdlm_lease_append_guard(&rep->io, rep->disk.dir);
    rv = raft_init(&rep->raft, &rep->io.io, &rep->fsm, params->id, self->raft_addr);
    if (rv != 0) {
        rdlm_error("lease: raft_init: %s", raft_errmsg(&rep->raft));
        s = rdlm_lease_raft_status(rv);
        goto err_io;
    }
    rep->raft.data = rep;
    /* libraft waits a random time in [base, 2 base) before standing for election:
     * base = half the configured timeout, so a follower stands within it. */
    raft_set_election_timeout(&rep->raft, params->election_timeout_ms / 2);
    raft_set_pre_vote(&rep->raft, true);
    raft_set_heartbeat_timeout(&rep->raft, params->heartbeat_ms);
    raft_set_snapshot_threshold(&rep->raft, params->snapshot_threshold);
    raft_set_snapshot_trailing(&rep->raft, params->snapshot_threshold / 8);
    /* libraft's default (30 s) leaves a restarted follower whose first snapshot was
     * lost that long behind; the state's snapshot is at most a few MB */
    raft_set_install_snapshot_timeout(&rep->raft, RDLM_LEASE_INSTALL_SNAPSHOT_ETS *
                                                      params->election_timeout_ms);
    rv = rdlm_lease_bootstrap(rep);
    if (rv != 0) {
        rdlm_error("lease: bootstrapping %s: %s (%s)", params->data_dir, raft_strerror(rv),
                   rep->io.io.errmsg);
    } else if ((rv = raft_start(&rep->raft)) != 0) {
        rdlm_error("lease: starting raft (listening on %s): %s", self->raft_addr,
                   raft_strerror(rv));
    } else if (!rdlm_lease_members_match(rep, params->data_dir)) {
        rv = -1; /* logged there; the replica does not start */
    } else if (params->n_peers > 1 &&
               rdlm_lease_confirm_start(loop, params->peers, params->n_peers, params->id,
                                        params->election_timeout_ms, &rep->adapter.witness,
                                        rdlm_lease_confirmed, rep,
                                        &rep->confirm) != RDLM_OK) {
        rv = -1; /* logged there; the replica does not start */
    }
    if (rv != 0) {
        rep->closes_left = 1;
        raft_close(&rep->raft, rdlm_lease_raft_closed);
        return RDLM_ERR_IO;
    }
    uv_timer_init(loop, &rep->tick);
    rep->tick.data = rep;
    uv_timer_start(&rep->tick, rdlm_lease_tick, RDLM_LEASE_TICK_MS, RDLM_LEASE_TICK_MS);
    rdlm_info("lease: replica %llu: raft %s, client %s, data %s, election %u ms, "
              "heartbeat %u ms",
              (unsigned long long)params->id, self->raft_addr, self->client_addr,
              params->data_dir, params->election_timeout_ms, params->heartbeat_ms);
    *rep_p = rep;
    return RDLM_OK;

err_io:
    raft_uv_close(&rep->io.io);
err_transport:
    rdlm_lease_tcp_close(&rep->transport);
err_fsm:
    rdlm_lease_raft_fsm_close(&rep->adapter);
err_disk:
    rdlm_lease_disk_close(&rep->disk);
err_free:
    if (s == RDLM_ERR_NO_MEMORY) {
        rdlm_error("lease: no memory for the replica");
    }
    if (rep != NULL) {
        rdlm_lease_timers_free(&rep->timers);
    }
    free(rep);
    return s;
}
