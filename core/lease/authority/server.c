/*
 * The client port of a lease-authority replica (server.h).
 *
 * A connection's life: READING (a frame arrives) -> one of
 *   WRITING         answered at once (STATUS, refusals, errors)
 *   CONFIRMING      a RENEW, waiting for a round of leadership confirmation that began
 *                   after it arrived (confirm.h); answered when the round ends
 *   DEFERRED        on a leader that is not ready yet; dispatched again when it is
 *   AUTHENTICATING  an OPEN whose MUNGE credential is verified in libuv's thread pool;
 *                   dispatched again (verified) or refused when that is done
 *   APPLYING        submitted; the replica's done callback answers
 *   PARKED          a queued ACQUIRE: its grant answers it, or its timer cancels it
 *   CANCELLING      the timer's CANCEL is in flight; RDLM_ERR_TIMEOUT once applied
 * -> WRITING -> READING. Reading stops at each complete frame, except while parked:
 * then it goes on so that a closed connection is noticed (and cancels), holding at
 * most the next frame's header until the answer is written. A closed connection stays
 * allocated while entries it submitted or a verification it waits for are in flight
 * (refs: its two handles, one per submitted entry, one while queued for or in a
 * verification).
 *
 * The connection's timer serves one state at a time: READING with nothing of a frame
 * yet, the idle timeout; READING from a frame's first byte, or WRITING (the client
 * must take its reply), the frame timeout; PARKED, the ACQUIRE's timeout. The others
 * wait for the authority, not for the client: no timer (a confirmation round ends
 * within an election timeout).
 *
 * Identities (sm.h "Identity quotas"): an OPEN is logged with its client's IPv4
 * address (without authentication) and counted against its identity's quotas unless
 * it is the daemon's own identity (rdlm_lease_conn_own_identity), so the state
 * machine decides the quotas alike on every replica and across leader changes.
 *
 * MUNGE verifications block a thread for a round trip to munged (about 10 s when it
 * hangs). At most RDLM_LEASE_AUTH_INFLIGHT run at once, the rest wait in FIFO order:
 * libraft's disk writes use the same thread pool (4 threads unless UV_THREADPOOL_SIZE
 * says otherwise) and must keep threads of their own.
 */
#include "server.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>

#include "auth.h"
#include "clock.h"
#include "cmd.h"
#include "hash.h"
#include "log.h"
#include "resolve.h"
#include "wire.h"

#define RDLM_LEASE_LISTEN_BACKLOG 128
#define RDLM_LEASE_KEEPALIVE_S 60
#define RDLM_LEASE_AUTH_INFLIGHT 2      /* verifications in the thread pool at once */
#define RDLM_LEASE_WARNS_PER_S 10       /* warn lines about clients, daemon-wide */
#define RDLM_LEASE_WARN_REPORT_MS 10000 /* suppressed ones are counted this long */

typedef enum rdlm_lease_conn_state {
    RDLM_CONN_READING,
    RDLM_CONN_WRITING,
    RDLM_CONN_CONFIRMING,
    RDLM_CONN_DEFERRED,
    RDLM_CONN_AUTHENTICATING,
    RDLM_CONN_APPLYING,
    RDLM_CONN_PARKED,
    RDLM_CONN_CANCELLING
} rdlm_lease_conn_state_t;

typedef struct rdlm_lease_conn rdlm_lease_conn_t;

struct rdlm_lease_server {
    rdlm_lease_replica_t *rep;
    uv_tcp_t listener;
    uv_timer_t warn_timer; /* reports the warn lines that went to debug */
    rdlm_lease_auth_mode_t auth;
    uint64_t authority_id; /* rdlm_lease_server_params_t.authority_id */
    unsigned max_conns, max_per_peer, n_conns; /* n_conns: clients', not replicas' */
    uint64_t idles; /* connections that became idle so far: their order */
    unsigned frame_timeout_ms, idle_timeout_ms;
    rdlm_lease_homes_func_t homes;
    void *homes_arg;
    int epoch_seed;           /* rdlm_lease_server_params_t.epoch_seed */
    int full_logged;          /* the connection limit was hit and said so */
    /* the replicas' IPv4 addresses (host order): the daemon's own identity */
    uint32_t own_ips[2 * RDLM_LEASE_PEERS_MAX];
    unsigned n_own_ips;
    rdlm_lease_conn_t *conns; /* open connections (closed ones are unlinked) */
    /* MUNGE verifications: running, and waiting for a turn (each holds a ref) */
    unsigned auth_running;
    rdlm_lease_conn_t *auth_head, *auth_tail;
    /* warn lines about clients: at most RDLM_LEASE_WARNS_PER_S a second */
    uint64_t warn_window;     /* uv_now when the current second began */
    unsigned warns;           /* warn lines in it */
    unsigned long suppressed; /* logged at debug instead, not yet reported */
};

struct rdlm_lease_conn {
    rdlm_lease_server_t *srv;
    rdlm_lease_conn_t *prev, *next;
    uv_tcp_t tcp;
    uv_timer_t timer; /* idle, frame or parked ACQUIRE timeout (top of the file) */
    uv_write_t wreq;
    rdlm_lease_conn_state_t state;
    int refs;
    int closing;
    int warned;       /* a line about this client's misbehaviour was logged */
    int authed;       /* the OPEN in cmd carries its verified uid, gid and namespace */
    uint32_t peer_ip; /* network order; 0 if unknown */
    /* peer_ip is a replica's host: outside max_connections */
    int replica;
    /* when it last became idle (READING, nothing read): srv->idles then */
    uint64_t idle_order;
    char peer[32];
    /* A verification: written by the thread pool, read on the loop once it is done. */
    uv_work_t auth_work;
    rdlm_lease_conn_t *auth_next; /* waiting for a turn */
    rdlm_status_t auth_status;
    uint32_t auth_uid, auth_gid;
    char auth_job[RDLM_LEASE_JOB_MAX + 1];
    char auth_why[RDLM_LEASE_AUTH_WHY_MAX]; /* why it was refused ("": logged) */
    size_t have, want;    /* bytes of the frame being read, and its full length */
    rdlm_lease_cmd_t cmd; /* the request, as it is (or would be) logged */
    uint64_t round;       /* CONFIRMING: the confirmation round that answers it */
    uint8_t in[RDLM_WIRE_HEADER + RDLM_WIRE_MAX_PAYLOAD];
    uint8_t out[RDLM_WIRE_HEADER + RDLM_WIRE_REPLY_FIXED + RDLM_WIRE_ADDR_MAX];
};

static void rdlm_lease_conn_close(rdlm_lease_conn_t *c);
static void rdlm_lease_conn_frame(rdlm_lease_conn_t *c);

/* ---- connection bookkeeping ------------------------------------------------------ */

static void rdlm_lease_conn_unref(rdlm_lease_conn_t *c)
{
    if (--c->refs == 0) {
        free(c);
    }
}

static void rdlm_lease_conn_handle_closed(uv_handle_t *handle)
{
    rdlm_lease_conn_unref(handle->data);
}

static void rdlm_lease_conn_close_handles(rdlm_lease_conn_t *c)
{
    uv_close((uv_handle_t *)&c->tcp, rdlm_lease_conn_handle_closed);
    uv_close((uv_handle_t *)&c->timer, rdlm_lease_conn_handle_closed);
}

static void rdlm_lease_server_warn_report(uv_timer_t *timer)
{
    rdlm_lease_server_t *srv = timer->data;

    rdlm_warn("lease: %lu more warnings about clients went to debug (at most %d a "
              "second at warn)",
              srv->suppressed, RDLM_LEASE_WARNS_PER_S);
    srv->suppressed = 0;
}

/* The level of a line about a misbehaving client: warn while this second has had
 * fewer than RDLM_LEASE_WARNS_PER_S, else debug, counted and reported (at warn) at
 * most RDLM_LEASE_WARN_REPORT_MS later. */
static rdlm_log_level_t rdlm_lease_server_warn_level(rdlm_lease_server_t *srv)
{
    uint64_t now = uv_now(srv->listener.loop);

    if (now - srv->warn_window >= 1000) {
        srv->warn_window = now;
        srv->warns = 0;
    }
    if (srv->warns < RDLM_LEASE_WARNS_PER_S) {
        srv->warns++;
        return RDLM_LOG_WARN;
    }
    if (srv->suppressed++ == 0) {
        uv_timer_start(&srv->warn_timer, rdlm_lease_server_warn_report,
                       RDLM_LEASE_WARN_REPORT_MS, 0);
    }
    return RDLM_LOG_DEBUG;
}

/* The level of a line about something c's client did wrong: warn the first time
 * (within the daemon-wide limit), then only debug. */
static rdlm_log_level_t rdlm_lease_conn_offence_level(rdlm_lease_conn_t *c)
{
    if (c->warned) {
        return RDLM_LOG_DEBUG;
    }
    c->warned = 1;
    return rdlm_lease_server_warn_level(c->srv);
}

static void rdlm_lease_conn_bad_frame(rdlm_lease_conn_t *c, const char *what)
{
    rdlm_log_level_t level = rdlm_lease_conn_offence_level(c);

    rdlm_log(level, "lease: client %s: %s", c->peer, what);
}

static void rdlm_lease_conn_timed_out(uv_timer_t *timer)
{
    rdlm_lease_conn_t *c = timer->data;
    rdlm_log_level_t level;

    if (c->state == RDLM_CONN_READING && c->have == 0) {
        /* a client's right: its next request reconnects */
        rdlm_debug("lease: client %s: idle for %u ms: connection closed", c->peer,
                   c->srv->idle_timeout_ms);
    } else {
        level = rdlm_lease_conn_offence_level(c);
        rdlm_log(level, "lease: client %s: %s within %u ms: connection closed", c->peer,
                 c->state == RDLM_CONN_WRITING ? "reply not taken" : "frame not complete",
                 c->srv->frame_timeout_ms);
    }
    rdlm_lease_conn_close(c);
}

/* Start c's timer for its state (READING or WRITING; top of the file). */
static void rdlm_lease_conn_arm(rdlm_lease_conn_t *c)
{
    int idle = c->state == RDLM_CONN_READING && c->have == 0;

    if (idle) {
        c->idle_order = ++c->srv->idles;
    }
    uv_timer_start(&c->timer, rdlm_lease_conn_timed_out,
                   idle ? c->srv->idle_timeout_ms : c->srv->frame_timeout_ms, 0);
}

static void rdlm_lease_conn_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf)
{
    rdlm_lease_conn_t *c = handle->data;

    (void)suggested;
    *buf = uv_buf_init((char *)c->in + c->have, (unsigned)(c->want - c->have));
}

static void rdlm_lease_conn_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    rdlm_lease_conn_t *c = stream->data;
    int started = c->have == 0 && nread > 0;

    (void)buf;
    if (nread < 0) {
        if (nread != UV_EOF) {
            rdlm_debug("lease: client %s: read: %s", c->peer, uv_strerror((int)nread));
        }
        rdlm_lease_conn_close(c);
        return;
    }
    c->have += (size_t)nread;
    if (started && c->state == RDLM_CONN_READING) {
        rdlm_lease_conn_arm(c); /* no longer idle: the frame must complete in time */
    }
    if (c->have < c->want) {
        return;
    }
    if (c->state != RDLM_CONN_READING) {
        uv_read_stop(stream); /* the next header, held until the answer is written */
        return;
    }
    rdlm_lease_conn_frame(c);
}

static void rdlm_lease_conn_read_start(rdlm_lease_conn_t *c)
{
    uv_read_start((uv_stream_t *)&c->tcp, rdlm_lease_conn_alloc, rdlm_lease_conn_read);
}

/* ---- replies ---------------------------------------------------------------- */

static void rdlm_lease_conn_written(uv_write_t *req, int status)
{
    rdlm_lease_conn_t *c = req->data;

    if (c->closing) {
        return;
    }
    if (status < 0) {
        rdlm_debug("lease: client %s: write: %s", c->peer, uv_strerror(status));
        rdlm_lease_conn_close(c);
        return;
    }
    c->state = RDLM_CONN_READING;
    rdlm_lease_conn_arm(c);
    if (c->have == c->want) {
        rdlm_lease_conn_frame(c); /* a header that arrived while parked */
    } else {
        rdlm_lease_conn_read_start(c);
    }
}

/* A reply with status and what every reply carries: the replica's term and leader,
 * the current epoch, the request's seq and session. */
static rdlm_lease_reply_t rdlm_lease_reply_base(const rdlm_lease_conn_t *c,
                                                rdlm_status_t status)
{
    rdlm_lease_role_t role;
    rdlm_lease_reply_t r = {.status = status, .seq = c->cmd.seq, .session = c->cmd.session};

    rdlm_lease_replica_role(c->srv->rep, &role);
    r.is_leader = (uint8_t)role.is_leader;
    r.term = role.term;
    r.leader_id = role.leader_id;
    snprintf(r.leader_addr, sizeof(r.leader_addr), "%s", role.leader_client_addr);
    r.epoch = rdlm_lease_sm_epoch(rdlm_lease_replica_sm(c->srv->rep));
    return r;
}

/* 1 once this replica found that another applied different entries (witness.h):
 * it then answers every request but STATUS with RDLM_ERR_UNAVAILABLE. */
static int rdlm_lease_server_diverged(const rdlm_lease_server_t *srv)
{
    return rdlm_lease_witness_diverged(rdlm_lease_replica_witness(srv->rep));
}

static void rdlm_lease_conn_send(rdlm_lease_conn_t *c, const rdlm_lease_reply_t *r)
{
    rdlm_lease_reply_t refused;
    size_t len;

    if (c->cmd.op != RDLM_LEASE_OP_STATUS && rdlm_lease_server_diverged(c->srv)) {
        /* Fail closed: no token, epoch or grant leaves a diverged replica. */
        refused = rdlm_lease_reply_base(c, RDLM_ERR_UNAVAILABLE);
        refused.epoch = 0;
        r = &refused;
    }
    len = rdlm_wire_reply_encode(r, c->out + RDLM_WIRE_HEADER,
                                 sizeof(c->out) - RDLM_WIRE_HEADER);
    uv_buf_t buf = uv_buf_init((char *)c->out, (unsigned)(RDLM_WIRE_HEADER + len));
    int rv = UV_EINVAL;

    if (c->closing) {
        return;
    }
    rdlm_wire_header_encode(c->out, RDLM_WIRE_REPLY, (uint32_t)len);
    c->state = RDLM_CONN_WRITING;
    rdlm_lease_conn_arm(c);
    c->wreq.data = c;
    if (len != 0) {
        rv = uv_write(&c->wreq, (uv_stream_t *)&c->tcp, &buf, 1, rdlm_lease_conn_written);
    }
    if (rv != 0) {
        rdlm_debug("lease: client %s: reply not sent: %s", c->peer, uv_strerror(rv));
        rdlm_lease_conn_close(c);
    }
}

static void rdlm_lease_conn_reply(rdlm_lease_conn_t *c, rdlm_status_t status)
{
    rdlm_lease_reply_t r = rdlm_lease_reply_base(c, status);

    rdlm_lease_conn_send(c, &r);
}

/* HOMES: the home's description as a BLOB frame, written from the home's own buffer
 * (it does not change while the server runs), or a REPLY with the reason. */
static void rdlm_lease_conn_reply_homes(rdlm_lease_conn_t *c)
{
    const uint8_t *blob = NULL;
    size_t len = 0;
    rdlm_status_t s = c->srv->homes != NULL ? c->srv->homes(c->srv->homes_arg, &blob, &len)
                                            : RDLM_ERR_UNSUPPORTED;
    uv_buf_t bufs[2];
    int rv;

    if (s != RDLM_OK || len > RDLM_WIRE_MAX_PAYLOAD) {
        rdlm_lease_conn_reply(c, s != RDLM_OK ? s : RDLM_ERR_UNSUPPORTED);
        return;
    }
    if (c->closing) {
        return;
    }
    rdlm_wire_header_encode(c->out, RDLM_WIRE_BLOB, (uint32_t)len);
    bufs[0] = uv_buf_init((char *)c->out, RDLM_WIRE_HEADER);
    bufs[1] = uv_buf_init((char *)(uintptr_t)blob, (unsigned)len);
    c->state = RDLM_CONN_WRITING;
    rdlm_lease_conn_arm(c);
    c->wreq.data = c;
    rv = uv_write(&c->wreq, (uv_stream_t *)&c->tcp, bufs, 2, rdlm_lease_conn_written);
    if (rv != 0) {
        rdlm_debug("lease: client %s: HOMES not sent: %s", c->peer, uv_strerror(rv));
        rdlm_lease_conn_close(c);
    }
}

/* The reply to a logged request: its applied result, or a check's refusal. */
static void rdlm_lease_conn_reply_result(rdlm_lease_conn_t *c,
                                         const rdlm_lease_result_t *res)
{
    rdlm_lease_reply_t r = rdlm_lease_reply_base(c, res->status);

    r.session = res->session;
    r.token = res->token;
    r.broken = res->broken;
    r.epoch = res->epoch;
    if (c->cmd.op == RDLM_LEASE_OP_OPEN && res->status == RDLM_OK) {
        char ns[RDLM_LEASE_NAME_MAX + 1] = "";

        rdlm_lease_sm_session_ttl(rdlm_lease_replica_sm(c->srv->rep), res->session,
                                  &r.ttl_ms, ns);
        r.token = ns[0] != '\0' ? rdlm_hash_name(ns) : 0;
    }
    rdlm_lease_conn_send(c, &r);
}

/* STATUS; with token = n (another replica's confirmation round), also this replica's
 * chain at mark n, or, if it has not applied that far, at its newest mark (session =
 * the mark's n, token = its chain; session 0: none known). A replica that stopped
 * behind (libraft stops one whose committed entries the leader's contradict) thus
 * still shows what it applied. RDLM_ERR_CORRUPT from a replica that found a
 * divergence; RDLM_ERR_NO_SPACE from one whose data disk refuses writes (disk.h). */
static void rdlm_lease_conn_reply_status(rdlm_lease_conn_t *c)
{
    const rdlm_lease_sm_t *sm = rdlm_lease_replica_sm(c->srv->rep);
    rdlm_lease_witness_t *w = rdlm_lease_replica_witness(c->srv->rep);
    rdlm_lease_mark_t newest;
    rdlm_lease_reply_t r = rdlm_lease_reply_base(
        c, rdlm_lease_witness_diverged(w)             ? RDLM_ERR_CORRUPT
           : rdlm_lease_replica_disk_low(c->srv->rep) ? RDLM_ERR_NO_SPACE
                                                      : RDLM_OK);
    uint64_t chain;

    r.sessions = rdlm_lease_sm_session_count(sm);
    r.locks = (uint32_t)rdlm_lease_sm_lock_count(sm);
    r.commit = rdlm_lease_replica_applied(c->srv->rep);
    r.session = 0;
    if (c->cmd.token == 0) {
        r.token = c->srv->authority_id;
    } else if (rdlm_lease_witness_lookup(w, c->cmd.token, &chain)) {
        r.session = c->cmd.token;
        r.token = chain;
    } else if (c->cmd.token != 0 && rdlm_lease_witness_newest(w, &newest) &&
               newest.n < c->cmd.token) {
        r.session = newest.n;
        r.token = newest.chain;
    }
    rdlm_lease_conn_send(c, &r);
}

static void rdlm_lease_conn_reply_renew(rdlm_lease_conn_t *c)
{
    uint32_t ttl_ms = 0;
    rdlm_status_t s = rdlm_lease_replica_renew(c->srv->rep, c->cmd.session, &ttl_ms);
    rdlm_lease_reply_t r = rdlm_lease_reply_base(c, s);

    r.ttl_ms = ttl_ms;
    rdlm_lease_conn_send(c, &r);
}

/* FATE: another session's, if it is in the asker's namespace (or gone: ids are not
 * reused, so that says nothing about any job). */
static void rdlm_lease_conn_reply_fate(rdlm_lease_conn_t *c)
{
    const rdlm_lease_sm_t *sm = rdlm_lease_replica_sm(c->srv->rep);
    char mine[RDLM_LEASE_NAME_MAX + 1], theirs[RDLM_LEASE_NAME_MAX + 1];
    uint32_t ttl_ms;
    rdlm_status_t s = rdlm_lease_sm_session_fate(sm, c->cmd.token, theirs);

    rdlm_lease_reply_t r;

    if (s == RDLM_OK && (!rdlm_lease_sm_session_ttl(sm, c->cmd.session, &ttl_ms, mine) ||
                         strcmp(mine, theirs) != 0)) {
        s = RDLM_ERR_NOT_FOUND;
    }
    /* Ended is an answer, not the asker's loss: RDLM_OK with broken = 1. */
    r = rdlm_lease_reply_base(c, s == RDLM_ERR_NOT_FOUND ? s : RDLM_OK);
    r.broken = s == RDLM_ERR_LEASE_EXPIRED;
    rdlm_lease_conn_send(c, &r);
}

/* A RENEW is answered once leadership is confirmed (at once with one replica). */
static void rdlm_lease_conn_confirm(rdlm_lease_conn_t *c)
{
    rdlm_status_t s = rdlm_lease_replica_confirm(c->srv->rep, &c->round);

    if (s != RDLM_OK) {
        rdlm_lease_conn_reply(c, s);
    } else if (c->round == 0) {
        rdlm_lease_conn_reply_renew(c);
    } else {
        c->state = RDLM_CONN_CONFIRMING;
    }
}

/* ---- logged requests ---------------------------------------------------------- */

static void rdlm_lease_conn_applied(void *arg, rdlm_status_t status,
                                    const rdlm_lease_result_t *res);

/* Submit cmd for c; the connection stays allocated until it is applied or failed. */
static rdlm_status_t rdlm_lease_conn_submit(rdlm_lease_conn_t *c,
                                            const rdlm_lease_cmd_t *cmd)
{
    rdlm_status_t s =
        rdlm_lease_replica_submit(c->srv->rep, cmd, rdlm_lease_conn_applied, c);

    if (s == RDLM_OK) {
        c->refs++;
    }
    return s;
}

/* Submit the CANCEL of c's parked ACQUIRE (same session, seq and logged name). */
static rdlm_status_t rdlm_lease_conn_cancel(rdlm_lease_conn_t *c)
{
    rdlm_lease_cmd_t cancel = {.op = RDLM_LEASE_OP_CANCEL,
                               .session = c->cmd.session,
                               .seq = c->cmd.seq,
                               .name_len = c->cmd.name_len};

    memcpy(cancel.name, c->cmd.name, sizeof(cancel.name));
    uv_timer_stop(&c->timer);
    return rdlm_lease_conn_submit(c, &cancel);
}

static void rdlm_lease_conn_park_expired(uv_timer_t *timer)
{
    rdlm_lease_conn_t *c = timer->data;
    rdlm_status_t s = rdlm_lease_conn_cancel(c);

    if (s != RDLM_OK) {
        rdlm_lease_conn_reply(c, s);
        return;
    }
    c->state = RDLM_CONN_CANCELLING;
}

static void rdlm_lease_conn_park(rdlm_lease_conn_t *c)
{
    c->state = RDLM_CONN_PARKED;
    uv_timer_start(&c->timer, rdlm_lease_conn_park_expired, c->cmd.timeout_ms, 0);
    rdlm_lease_conn_read_start(c);
}

static void rdlm_lease_conn_applied(void *arg, rdlm_status_t status,
                                    const rdlm_lease_result_t *res)
{
    rdlm_lease_conn_t *c = arg;

    if (c->closing) {
        /* nobody to answer (a closed connection's CANCEL, or its request) */
    } else if (status != RDLM_OK) {
        rdlm_lease_conn_reply(c, status);
    } else if (c->state == RDLM_CONN_CANCELLING) {
        rdlm_lease_conn_reply(c, res->status == RDLM_OK ? RDLM_ERR_TIMEOUT : res->status);
    } else if (c->cmd.op == RDLM_LEASE_OP_ACQUIRE && res->status == RDLM_INPROGRESS) {
        rdlm_lease_conn_park(c);
    } else {
        rdlm_lease_conn_reply_result(c, res);
    }
    rdlm_lease_conn_unref(c); /* the submit's reference */
}

/* ---- MUNGE verification ------------------------------------------------------- */

static void rdlm_lease_conn_dispatch(rdlm_lease_conn_t *c);

/* In the thread pool: only the auth fields are written; cmd.cred points into c->in,
 * which nothing writes while the connection is AUTHENTICATING (reading stopped). */
static void rdlm_lease_conn_verify(uv_work_t *req)
{
    rdlm_lease_conn_t *c = req->data;

    c->auth_status = rdlm_lease_auth_verify(
        c->cmd.cred, c->cmd.cred_len, c->srv->authority_id, c->cmd.nonce, &c->auth_uid,
        &c->auth_gid, c->auth_job, c->auth_why);
}

static void rdlm_lease_conn_verified(uv_work_t *req, int status);

/* Start waiting verifications while fewer than RDLM_LEASE_AUTH_INFLIGHT run; those of
 * connections closed meanwhile are dropped. */
static void rdlm_lease_server_auth_run(rdlm_lease_server_t *srv)
{
    rdlm_lease_conn_t *c;

    while (srv->auth_running < RDLM_LEASE_AUTH_INFLIGHT && srv->auth_head != NULL) {
        c = srv->auth_head;
        srv->auth_head = c->auth_next;
        if (srv->auth_head == NULL) {
            srv->auth_tail = NULL;
        }
        c->auth_next = NULL;
        if (c->closing) {
            rdlm_lease_conn_unref(c); /* the verification's reference */
            continue;
        }
        c->auth_work.data = c;
        /* fails only without a work callback */
        (void)uv_queue_work(srv->listener.loop, &c->auth_work, rdlm_lease_conn_verify,
                            rdlm_lease_conn_verified);
        srv->auth_running++;
    }
}

/* Queue the verification of c's credential; c is AUTHENTICATING until it is done. */
static void rdlm_lease_conn_verify_start(rdlm_lease_conn_t *c)
{
    rdlm_lease_server_t *srv = c->srv;

    c->refs++; /* the verification's reference, until it is done or dropped */
    c->state = RDLM_CONN_AUTHENTICATING;
    if (srv->auth_tail != NULL) {
        srv->auth_tail->auth_next = c;
    } else {
        srv->auth_head = c;
    }
    srv->auth_tail = c;
    rdlm_lease_server_auth_run(srv);
}

/* On the loop: the OPEN goes on with the verified identity, or is refused. */
static void rdlm_lease_conn_verified(uv_work_t *req, int status)
{
    rdlm_lease_conn_t *c = req->data;
    rdlm_lease_server_t *srv = c->srv;
    rdlm_lease_cmd_t *cmd = &c->cmd;

    (void)status; /* never cancelled */
    srv->auth_running--;
    if (c->closing) {
        /* nobody to answer */
    } else if (c->auth_status != RDLM_OK) {
        if (c->auth_why[0] != '\0') {
            rdlm_log_level_t level = rdlm_lease_conn_offence_level(c);

            rdlm_log(level, "lease: client %s: OPEN refused (%s): %s", c->peer,
                     rdlm_status_name(c->auth_status), c->auth_why);
        }
        rdlm_lease_conn_reply(c, c->auth_status);
    } else {
        cmd->uid = c->auth_uid;
        cmd->gid = c->auth_gid;
        cmd->name_len = (uint16_t)snprintf(cmd->name, sizeof(cmd->name), "%u/%s", cmd->uid,
                                           c->auth_job);
        c->authed = 1;
        rdlm_lease_conn_dispatch(c);
    }
    rdlm_lease_conn_unref(c); /* the verification's reference */
    rdlm_lease_server_auth_run(srv);
}

/* Whether ip (network order) is one of the replicas' addresses in --peers. */
static int rdlm_lease_server_replica_ip(const rdlm_lease_server_t *srv, uint32_t ip)
{
    for (unsigned i = 0; i < srv->n_own_ips; i++) {
        if (srv->own_ips[i] == ntohl(ip)) {
            return 1;
        }
    }
    return 0;
}

/* Whether c's client is the daemon's own identity, which the identity quotas do not
 * count (sm.h): under munge, this process's uid; without authentication, a replica's
 * address (the lock homes connect from there). */
static int rdlm_lease_conn_own_identity(const rdlm_lease_conn_t *c)
{
    if (c->srv->auth == RDLM_LEASE_AUTH_MUNGE) {
        return c->auth_uid == (uint32_t)geteuid();
    }
    return rdlm_lease_server_replica_ip(c->srv, c->peer_ip);
}

/* OPEN as it is logged: uid, gid and namespace from the verified credential (munge;
 * RDLM_INPROGRESS while it is being verified) or none; the identity's address and
 * whether it is counted (cmd.h). */
static rdlm_status_t rdlm_lease_conn_authenticate(rdlm_lease_conn_t *c)
{
    rdlm_lease_cmd_t *cmd = &c->cmd;

    if (c->srv->auth == RDLM_LEASE_AUTH_MUNGE && !c->authed) {
        rdlm_lease_conn_verify_start(c);
        return RDLM_INPROGRESS;
    }
    if (c->srv->auth == RDLM_LEASE_AUTH_NONE) {
        cmd->uid = 0;
        cmd->gid = 0;
        cmd->name_len = 0;
        cmd->name[0] = '\0';
    }
    cmd->cred = NULL;
    cmd->cred_len = 0;
    cmd->flags = rdlm_lease_conn_own_identity(c) ? 0 : RDLM_LEASE_OPEN_COUNTED;
    cmd->token = c->srv->auth == RDLM_LEASE_AUTH_NONE ? ntohl(c->peer_ip) : 0;
    return RDLM_OK;
}

/* ---- dispatch ----------------------------------------------------------------- */

/* The floor an EPOCH is logged with: the server's, never more than one step past the
 * committed epoch or this leader's clock epoch, whatever the client asked (one EPOCH
 * with floor 2^24-1 used to end the epoch space for good). Only the first EPOCH of a
 * fresh in-job authority (epoch_seed) keeps a larger floor: rank 0's host epoch,
 * which orders the job after earlier jobs of that host. */
static void rdlm_lease_conn_epoch_floor(rdlm_lease_conn_t *c)
{
    uint64_t clock = rdlm_clock_epoch(time(NULL)), asked = c->cmd.token;
    int seed =
        c->srv->epoch_seed && rdlm_lease_sm_epoch(rdlm_lease_replica_sm(c->srv->rep)) == 1;

    c->cmd.token = seed && asked > clock ? asked : clock;
    if (asked > c->cmd.token) {
        rdlm_debug("lease: EPOCH of session %llu asked for floor %llu: logged with %llu",
                   (unsigned long long)c->cmd.session, (unsigned long long)asked,
                   (unsigned long long)c->cmd.token);
    }
}

/* The request as it is logged: OPEN authenticated (RDLM_INPROGRESS: being verified),
 * EPOCH with the server's floor, lock names in the namespace. */
static rdlm_status_t rdlm_lease_conn_rewrite(rdlm_lease_conn_t *c)
{
    rdlm_lease_cmd_t *cmd = &c->cmd;
    char ns[RDLM_LEASE_NAME_MAX + 1];
    uint32_t ttl_ms;
    size_t ns_len;

    if (cmd->op == RDLM_LEASE_OP_OPEN) {
        return rdlm_lease_conn_authenticate(c);
    }
    if (cmd->op == RDLM_LEASE_OP_EPOCH) {
        rdlm_lease_conn_epoch_floor(c);
        return RDLM_OK;
    }
    if ((cmd->op != RDLM_LEASE_OP_ACQUIRE && cmd->op != RDLM_LEASE_OP_RELEASE &&
         cmd->op != RDLM_LEASE_OP_CANCEL) ||
        !rdlm_lease_sm_session_ttl(rdlm_lease_replica_sm(c->srv->rep), cmd->session,
                                   &ttl_ms, ns)) {
        return RDLM_OK; /* no name, or no session: the check answers */
    }
    ns_len = strlen(ns);
    if (ns_len == 0) {
        return RDLM_OK;
    }
    if (ns_len + 1 + cmd->name_len > RDLM_LEASE_NAME_MAX) {
        return RDLM_ERR_NAME_TOO_LONG;
    }
    memmove(cmd->name + ns_len + 1, cmd->name, cmd->name_len + 1u);
    memcpy(cmd->name, ns, ns_len);
    cmd->name[ns_len] = '/';
    cmd->name_len = (uint16_t)(cmd->name_len + ns_len + 1);
    return RDLM_OK;
}

/* Whether c may have the home's description: always under --auth none; under munge
 * only within a session it opened (its nonce), as this replica applied it:
 * RDLM_ERR_NOT_FOUND while this replica has not applied the session's OPEN yet (the
 * client asks again), RDLM_ERR_LEASE_EXPIRED once it ended, RDLM_ERR_AUTH with none
 * or another's (logged). */
static rdlm_status_t rdlm_lease_conn_homes_allowed(rdlm_lease_conn_t *c)
{
    const rdlm_lease_sm_t *sm = rdlm_lease_replica_sm(c->srv->rep);
    rdlm_status_t s;

    if (c->srv->auth == RDLM_LEASE_AUTH_NONE) {
        return RDLM_OK;
    }
    if (c->cmd.session == 0) {
        rdlm_lease_conn_bad_frame(c, "HOMES without a session: refused (--auth munge)");
        return RDLM_ERR_AUTH;
    }
    s = rdlm_lease_sm_session_owner(sm, c->cmd.session, c->cmd.nonce);
    if (s == RDLM_ERR_LEASE_EXPIRED) {
        return rdlm_lease_sm_session_fate(sm, c->cmd.session, NULL);
    }
    if (s == RDLM_ERR_AUTH) {
        rdlm_lease_conn_bad_frame(c, "HOMES names a session it did not open: refused");
    }
    return s;
}

/* The line about a request refused with RDLM_ERR_QUOTA (an operator may have to
 * raise a limit, or find the client that hoards). */
static void rdlm_lease_conn_quota_refused(rdlm_lease_conn_t *c, const char *quota)
{
    rdlm_log_level_t level = rdlm_lease_conn_offence_level(c);

    rdlm_log(level, "lease: client %s: %s refused: quota reached: %s", c->peer,
             rdlm_lease_op_name(c->cmd.op), quota != NULL ? quota : "?");
}

/* Answer or start c's request (READING, DEFERRED once the leader is ready, or
 * AUTHENTICATING once verified). */
static void rdlm_lease_conn_dispatch(rdlm_lease_conn_t *c)
{
    rdlm_lease_role_t role;
    rdlm_lease_result_t res;
    rdlm_status_t s;

    if (c->cmd.op == RDLM_LEASE_OP_STATUS) {
        rdlm_lease_conn_reply_status(c);
        return;
    }
    if (c->cmd.op == RDLM_LEASE_OP_HOMES) {
        s = rdlm_lease_conn_homes_allowed(c);
        if (s == RDLM_OK) {
            rdlm_lease_conn_reply_homes(c);
        } else {
            rdlm_lease_conn_reply(c, s);
        }
        return;
    }
    if (rdlm_lease_server_diverged(c->srv)) {
        rdlm_lease_conn_reply(c, RDLM_ERR_UNAVAILABLE);
        return;
    }
    rdlm_lease_replica_role(c->srv->rep, &role);
    if (role.starting) {
        c->state = RDLM_CONN_DEFERRED;
        return;
    }
    if (!role.ready) {
        rdlm_lease_conn_reply(c, RDLM_ERR_NOT_LEADER);
        return;
    }
    if (c->cmd.op != RDLM_LEASE_OP_OPEN) {
        s = rdlm_lease_sm_session_owner(rdlm_lease_replica_sm(c->srv->rep), c->cmd.session,
                                        c->cmd.nonce);
        if (s == RDLM_ERR_AUTH) {
            rdlm_lease_conn_bad_frame(c, "request names a session it did not open");
        }
        if (s != RDLM_OK) {
            rdlm_lease_conn_reply(c, s);
            return;
        }
    }
    if (c->cmd.op == RDLM_LEASE_OP_RENEW) {
        rdlm_lease_conn_confirm(c);
        return;
    }
    if (c->cmd.op == RDLM_LEASE_OP_FATE) {
        rdlm_lease_conn_reply_fate(c);
        return;
    }
    s = rdlm_lease_conn_rewrite(c);
    if (s == RDLM_INPROGRESS) {
        return; /* AUTHENTICATING: dispatched again once verified */
    }
    if (s != RDLM_OK) {
        rdlm_lease_conn_reply(c, s);
        return;
    }
    s = rdlm_lease_sm_check(rdlm_lease_replica_sm(c->srv->rep), &c->cmd, &res);
    if (s == RDLM_INPROGRESS && c->cmd.op == RDLM_LEASE_OP_ACQUIRE) {
        rdlm_lease_conn_park(c); /* a retry of an ACQUIRE still queued */
        return;
    }
    if (s == RDLM_ERR_QUOTA) {
        rdlm_lease_conn_quota_refused(c, res.quota);
    }
    if (s != RDLM_OK) {
        rdlm_lease_conn_reply_result(c, &res);
        return;
    }
    s = rdlm_lease_conn_submit(c, &c->cmd);
    if (s != RDLM_OK) {
        rdlm_lease_conn_reply(c, s);
        return;
    }
    c->state = RDLM_CONN_APPLYING;
}

/* c->have == c->want while READING: a header to check, or a whole frame. */
static void rdlm_lease_conn_frame(rdlm_lease_conn_t *c)
{
    size_t len;
    uint32_t payload;

    if (c->want == RDLM_WIRE_HEADER) {
        if (rdlm_wire_header_decode(c->in, RDLM_WIRE_REQUEST, &payload) != RDLM_OK) {
            rdlm_lease_conn_bad_frame(c, "bad frame header: connection closed");
            rdlm_lease_conn_close(c);
            return;
        }
        c->want += payload;
        if (payload > 0) {
            rdlm_lease_conn_read_start(c);
            return;
        }
    }
    uv_read_stop((uv_stream_t *)&c->tcp);
    uv_timer_stop(&c->timer); /* the authority's turn: no timeout */
    len = c->want - RDLM_WIRE_HEADER;
    c->have = 0;
    c->want = RDLM_WIRE_HEADER;
    c->authed = 0;
    if (rdlm_lease_cmd_decode(c->in + RDLM_WIRE_HEADER, len, &c->cmd) != RDLM_OK ||
        c->cmd.op == RDLM_LEASE_OP_EXPIRE) {
        memset(&c->cmd, 0, sizeof(c->cmd));
        rdlm_lease_conn_bad_frame(c, "request does not decode (or is an EXPIRE): "
                                     "answered RDLM_ERR_PROTOCOL");
        rdlm_lease_conn_reply(c, RDLM_ERR_PROTOCOL);
        return;
    }
    rdlm_lease_conn_dispatch(c);
}

static void rdlm_lease_conn_close(rdlm_lease_conn_t *c)
{
    rdlm_lease_server_t *srv = c->srv;

    if (c->closing) {
        return;
    }
    if (c->state == RDLM_CONN_PARKED && rdlm_lease_conn_cancel(c) != RDLM_OK) {
        rdlm_debug("lease: client %s closed while queued; its wait stays queued "
                   "(no leader to cancel it)",
                   c->peer);
    }
    c->closing = 1;
    if (c->prev != NULL) {
        c->prev->next = c->next;
    } else {
        srv->conns = c->next;
    }
    if (c->next != NULL) {
        c->next->prev = c->prev;
    }
    srv->n_conns -= !c->replica;
    rdlm_lease_conn_close_handles(c);
}

/* ---- the replica's callbacks ---------------------------------------------------- */

static void rdlm_lease_server_leading(void *arg, int ready)
{
    rdlm_lease_server_t *srv = arg;
    rdlm_lease_conn_t *c, *next;

    for (c = srv->conns; c != NULL; c = next) {
        next = c->next;
        if (ready && c->state == RDLM_CONN_DEFERRED) {
            rdlm_lease_conn_dispatch(c);
        } else if (!ready &&
                   (c->state == RDLM_CONN_DEFERRED || c->state == RDLM_CONN_PARKED ||
                    c->state == RDLM_CONN_CONFIRMING)) {
            uv_timer_stop(&c->timer);
            rdlm_lease_conn_reply(c, RDLM_ERR_NOT_LEADER);
        }
    }
}

static void rdlm_lease_server_granted(void *arg, uint64_t session, uint64_t seq,
                                      const char *name, uint64_t token, int broken)
{
    rdlm_lease_server_t *srv = arg;
    rdlm_lease_conn_t *c, *next;

    (void)name; /* (session, seq) names the ACQUIRE */
    for (c = srv->conns; c != NULL; c = next) {
        next = c->next;
        if (c->state == RDLM_CONN_PARKED && c->cmd.session == session &&
            c->cmd.seq == seq) {
            rdlm_lease_reply_t r = rdlm_lease_reply_base(c, RDLM_OK);

            uv_timer_stop(&c->timer);
            r.token = token;
            r.broken = (uint8_t)broken;
            rdlm_lease_conn_send(c, &r);
        }
    }
}

static void rdlm_lease_server_session_gone(void *arg, uint64_t session)
{
    rdlm_lease_server_t *srv = arg;
    rdlm_lease_conn_t *c, *next;

    for (c = srv->conns; c != NULL; c = next) {
        next = c->next;
        if (c->state == RDLM_CONN_PARKED && c->cmd.session == session) {
            uv_timer_stop(&c->timer);
            rdlm_lease_conn_reply(c, RDLM_ERR_LEASE_EXPIRED);
        }
    }
}

static void rdlm_lease_server_confirmed(void *arg, uint64_t round, int confirmed)
{
    rdlm_lease_server_t *srv = arg;
    rdlm_lease_conn_t *c, *next;

    for (c = srv->conns; c != NULL; c = next) {
        next = c->next;
        if (c->state != RDLM_CONN_CONFIRMING || c->round > round) {
            continue;
        }
        if (confirmed) {
            rdlm_lease_conn_reply_renew(c); /* checks that it still leads */
        } else {
            rdlm_lease_conn_reply(c, RDLM_ERR_NOT_LEADER);
        }
    }
}

static const rdlm_lease_replica_ops_t rdlm_lease_server_ops = {
    .leading = rdlm_lease_server_leading,
    .granted = rdlm_lease_server_granted,
    .session_gone = rdlm_lease_server_session_gone,
    .confirmed = rdlm_lease_server_confirmed,
};

/* ---- listener ---------------------------------------------------------------- */

static void rdlm_lease_conn_name_peer(rdlm_lease_conn_t *c)
{
    struct sockaddr_storage ss;
    struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
    int n = (int)sizeof(ss);
    char ip[INET_ADDRSTRLEN];

    if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&ss, &n) == 0 &&
        ss.ss_family == AF_INET && uv_ip4_name(sin, ip, sizeof(ip)) == 0) {
        snprintf(c->peer, sizeof(c->peer), "%s:%u", ip, (unsigned)ntohs(sin->sin_port));
        c->peer_ip = sin->sin_addr.s_addr;
        c->replica = rdlm_lease_server_replica_ip(c->srv, c->peer_ip);
    } else {
        snprintf(c->peer, sizeof(c->peer), "?");
    }
}

/* Open connections from the address ip (one scan per accepted connection). */
static unsigned rdlm_lease_server_peer_conns(const rdlm_lease_server_t *srv, uint32_t ip)
{
    unsigned n = 0;

    for (const rdlm_lease_conn_t *c = srv->conns; c != NULL; c = c->next) {
        n += c->peer_ip == ip;
    }
    return n;
}

/* The connection idle for longest (READING, no byte of a frame, nothing outstanding)
 * from the address ip, or (any_address) from any client's; NULL if none is idle. */
static rdlm_lease_conn_t *rdlm_lease_server_oldest_idle(const rdlm_lease_server_t *srv,
                                                        uint32_t ip, int any_address)
{
    rdlm_lease_conn_t *oldest = NULL;

    for (rdlm_lease_conn_t *c = srv->conns; c != NULL; c = c->next) {
        if (c->state == RDLM_CONN_READING && c->have == 0 &&
            (any_address ? !c->replica : c->peer_ip == ip) &&
            (oldest == NULL || c->idle_order < oldest->idle_order)) {
            oldest = c;
        }
    }
    return oldest;
}

/* Make room for c by closing the oldest idle connection of its address (any_address
 * 0) or of any client (1); 0 if none is idle. */
static int rdlm_lease_server_evict(rdlm_lease_server_t *srv, const rdlm_lease_conn_t *c,
                                   int any_address)
{
    rdlm_lease_conn_t *victim = rdlm_lease_server_oldest_idle(srv, c->peer_ip, any_address);

    if (victim == NULL) {
        return 0;
    }
    rdlm_debug("lease: client %s: the oldest idle: closed for a new connection from %s",
               victim->peer, c->peer);
    rdlm_lease_conn_close(victim);
    return 1;
}

/* 1 if c may stay open: within max_per_peer of its address, and (unless it comes
 * from a replica's host) within max_connections; at a limit, the oldest idle
 * connection of the address (or of any client) is closed for it. Refusals, when none
 * is idle, are logged (the first of a full port, each of a peer's excess within the
 * daemon-wide warn limit); so is the first eviction of a full port. */
static int rdlm_lease_server_admit(rdlm_lease_server_t *srv, const rdlm_lease_conn_t *c)
{
    rdlm_log_level_t level;
    unsigned n = rdlm_lease_server_peer_conns(srv, c->peer_ip);

    if (n >= srv->max_per_peer && !rdlm_lease_server_evict(srv, c, 0)) {
        level = rdlm_lease_server_warn_level(srv);
        rdlm_log(level,
                 "lease: client %s: %u connections open from its address, none idle: "
                 "refused",
                 c->peer, n);
        return 0;
    }
    if (c->replica || srv->n_conns < srv->max_conns) {
        srv->full_logged = 0;
        return 1;
    }
    if (!srv->full_logged) {
        rdlm_warn("lease: %u client connections open: closing the oldest idle one for "
                  "each new one (refused while none is idle)",
                  srv->n_conns);
        srv->full_logged = 1;
    }
    return rdlm_lease_server_evict(srv, c, 1);
}

static void rdlm_lease_server_accept(uv_stream_t *listener, int status)
{
    rdlm_lease_server_t *srv = listener->data;
    rdlm_log_level_t level;
    rdlm_lease_conn_t *c;

    if (status < 0) {
        level = rdlm_lease_server_warn_level(srv);
        rdlm_log(level, "lease: accepting a client: %s", uv_strerror(status));
        return;
    }
    c = calloc(1, sizeof(*c));
    if (c == NULL) {
        rdlm_error("lease: no memory for a client connection");
        return;
    }
    c->srv = srv;
    c->refs = 2;
    uv_tcp_init(listener->loop, &c->tcp);
    uv_timer_init(listener->loop, &c->timer);
    c->tcp.data = c;
    c->timer.data = c;
    if (uv_accept(listener, (uv_stream_t *)&c->tcp) != 0) {
        rdlm_lease_conn_close_handles(c);
        return;
    }
    rdlm_lease_conn_name_peer(c);
    if (!rdlm_lease_server_admit(srv, c)) {
        rdlm_lease_conn_close_handles(c);
        return;
    }
    c->next = srv->conns;
    if (srv->conns != NULL) {
        srv->conns->prev = c;
    }
    srv->conns = c;
    srv->n_conns += !c->replica;
    uv_tcp_nodelay(&c->tcp, 1);
    uv_tcp_keepalive(&c->tcp, 1, RDLM_LEASE_KEEPALIVE_S);
    c->state = RDLM_CONN_READING;
    c->want = RDLM_WIRE_HEADER;
    rdlm_lease_conn_arm(c); /* idle */
    rdlm_lease_conn_read_start(c);
}

uint64_t rdlm_lease_server_authority_id(const rdlm_lease_peer_t *peers, unsigned n)
{
    char text[RDLM_LEASE_PEERS_MAX * (2 * RDLM_ADDR_MAX + 24)] = "";
    size_t used = 0;
    uint64_t last = 0;

    for (unsigned k = 0; k < n; k++) {
        const rdlm_lease_peer_t *next = NULL;

        for (unsigned i = 0; i < n; i++) {
            if (peers[i].id > last && (next == NULL || peers[i].id < next->id)) {
                next = &peers[i];
            }
        }
        if (next == NULL) {
            break;
        }
        used += (size_t)snprintf(text + used, sizeof(text) - used, "%llu=%s=%s,",
                                 (unsigned long long)next->id, next->raft_addr,
                                 next->client_addr);
        last = next->id;
    }
    return rdlm_hash_name(text);
}

static void rdlm_lease_server_free_on_close(uv_handle_t *handle)
{
    free(handle->data);
}

/* The IPv4 literals among the replicas' Raft and client addresses. */
static void rdlm_lease_server_own_ips(rdlm_lease_server_t *srv)
{
    unsigned n;
    const rdlm_lease_peer_t *peers = rdlm_lease_replica_peers(srv->rep, &n);

    for (unsigned i = 0; i < 2 * n; i++) {
        const char *addr = i % 2 ? peers[i / 2].client_addr : peers[i / 2].raft_addr;
        char host[RDLM_HOST_MAX + 1];
        struct in_addr ip;
        uint16_t port;

        if (rdlm_config_hostport_parse(addr, host, &port) &&
            inet_pton(AF_INET, host, &ip) == 1) {
            srv->own_ips[srv->n_own_ips++] = ntohl(ip.s_addr);
        }
    }
}

rdlm_status_t rdlm_lease_server_start(uv_loop_t *loop, rdlm_lease_replica_t *rep,
                                      const rdlm_lease_server_params_t *params,
                                      rdlm_lease_server_t **srv_p)
{
    char host[RDLM_HOST_MAX + 1];
    struct sockaddr_in sa;
    rdlm_lease_server_t *srv;
    rdlm_status_t st;
    uint16_t port;
    int rv;

    if (!rdlm_config_hostport_parse(params->client_addr, host, &port)) {
        rdlm_error("lease: client address '%s' is not host:port", params->client_addr);
        return RDLM_ERR_INVALID_ARG;
    }
    st = rdlm_addr_resolve("lease: client address", host, port, RDLM_LOG_ERROR, &sa);
    if (st != RDLM_OK) {
        return st;
    }
    if (params->max_connections == 0 || params->max_connections_per_peer == 0 ||
        params->frame_timeout_ms == 0 || params->idle_timeout_ms == 0) {
        rdlm_error("lease: client port limits and timeouts must be > 0");
        return RDLM_ERR_INVALID_ARG;
    }
    if (params->auth == RDLM_LEASE_AUTH_MUNGE && !rdlm_lease_auth_available()) {
        rdlm_error("lease: MUNGE authentication asked for, but this build has no MUNGE");
        return RDLM_ERR_INVALID_ARG;
    }
    if (params->auth == RDLM_LEASE_AUTH_MUNGE && params->authority_id == 0) {
        rdlm_error("lease: MUNGE authentication needs the authority's id");
        return RDLM_ERR_INVALID_ARG;
    }
    srv = calloc(1, sizeof(*srv));
    if (srv == NULL) {
        rdlm_error("lease: no memory for the client port");
        return RDLM_ERR_NO_MEMORY;
    }
    srv->rep = rep;
    srv->auth = params->auth;
    srv->authority_id = params->authority_id;
    srv->max_conns = params->max_connections;
    srv->max_per_peer = params->max_connections_per_peer;
    srv->frame_timeout_ms = params->frame_timeout_ms;
    srv->idle_timeout_ms = params->idle_timeout_ms;
    srv->homes = params->homes;
    srv->homes_arg = params->homes_arg;
    srv->epoch_seed = params->epoch_seed;
    rdlm_lease_server_own_ips(srv);
    uv_tcp_init(loop, &srv->listener);
    srv->listener.data = srv;
    rv = uv_tcp_bind(&srv->listener, (const struct sockaddr *)&sa, 0);
    if (rv == 0) {
        rv = uv_listen((uv_stream_t *)&srv->listener, RDLM_LEASE_LISTEN_BACKLOG,
                       rdlm_lease_server_accept);
    }
    if (rv != 0) {
        rdlm_error("lease: client port %s: %s", params->client_addr, uv_strerror(rv));
        uv_close((uv_handle_t *)&srv->listener, rdlm_lease_server_free_on_close);
        return RDLM_ERR_IO;
    }
    uv_timer_init(loop, &srv->warn_timer);
    srv->warn_timer.data = srv;
    rdlm_lease_replica_set_ops(rep, &rdlm_lease_server_ops, srv);
    *srv_p = srv;
    return RDLM_OK;
}

void rdlm_lease_server_stop(rdlm_lease_server_t *srv)
{
    uv_close((uv_handle_t *)&srv->listener, NULL);
    if (srv->suppressed > 0) {
        rdlm_lease_server_warn_report(&srv->warn_timer);
    }
    uv_close((uv_handle_t *)&srv->warn_timer, NULL);
    while (srv->conns != NULL) {
        rdlm_lease_conn_close(srv->conns);
    }
}

void rdlm_lease_server_destroy(rdlm_lease_server_t *srv)
{
    free(srv);
}
