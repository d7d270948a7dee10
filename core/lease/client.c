/*
 * Lease sessions at the replicated authority (rdlm/lease.h).
 *
 * Requests
 *   A link is one connection at a time to one replica. A request is sent there and
 *   its reply awaited; NOT_LEADER (or a leader answering UNAVAILABLE) moves the link
 *   to the leader address the reply names, else to the next address round robin; a
 *   connection that fails, times out or sends garbage is closed, so the one reply read
 *   on a connection is always that of the request just sent on it. Attempts repeat,
 *   with a backoff of 10..200 ms, until the request's deadline. Every attempt re-sends
 *   the same command: the same seq (the authority de-duplicates, and answers a
 *   duplicate ACQUIRE from its state), for OPEN the same nonce (a lost reply does not
 *   create a second session) with a fresh MUNGE credential (munged refuses a replayed
 *   one), for a queued ACQUIRE the time left until the wait should end.
 *
 * Threads
 *   Calls on a session hold call_lock and use the call link. Renewals have their own
 *   link, taken by one at a time (renewing), so a long queued ACQUIRE never delays
 *   one: the renewal thread's, every TTL/3 (a failed round, no answer before the next
 *   period or the end of the validity, is retried after TTL/24), and
 *   rdlm_session_renew's, which waits for an in-flight renewal of the thread at most
 *   until its own deadline. Both send the same RENEW (rdlm_session_renew_on) and only
 *   move the validity forward.
 *   rdlm_session_close stops the thread before sending CLOSE; when called from the
 *   lost callback, the thread detaches itself instead of being joined.
 *
 * Validity
 *   valid_until = t + TTL * (1 - drift), t being the time the last successful RENEW
 *   (or the OPEN) was first sent: the authority restarted its timer when it received
 *   the request, later. It is 0 once lost: when it passes, when the authority answers
 *   RDLM_ERR_LEASE_EXPIRED, or when rdlm_session_check saw it pass. Lost is final: the
 *   renewal thread stops renewing, calls the lost callback once, and every call
 *   returns RDLM_ERR_LEASE_EXPIRED before doing anything. Every wait for a reply ends
 *   at valid_until too.
 *
 * Queued ACQUIRE
 *   The authority keeps the waiter for timeout_ms (the time left, in chunks of at most
 *   RDLM_LEASE_CHUNK_MS for long or infinite waits: a chunk that ends re-queues with a
 *   new seq, since a seq whose wait the authority cancelled is answered from its state
 *   and not queued again) and then answers RDLM_ERR_TIMEOUT, having cancelled the
 *   wait. The client waits RDLM_LEASE_SLACK_NS longer; if it gives up without an
 *   answer, it sends CANCEL of that seq so nothing stays queued or held.
 *
 * Test hook: with RDLMTEST_LEASE_NO_RENEW set in the environment when
 * rdlm_session_open is called, that session's renewal thread never renews (it only
 * waits for the validity to pass), so tests can make a session expire; the session
 * renews when rdlm_session_renew is called.
 */
#include <rdlm.h>
#include <rdlm/lease.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "atomics.h"
#include "auth.h"
#include "client_internal.h"
#include "clock.h"
#include "cmd.h"
#include "config.h"
#include "conn.h"
#include "live.h"
#include "log.h"
#include "wire.h"

#define RDLM_LEASE_MS 1000000ull
#define RDLM_LEASE_DEFAULT_TTL_MS 5000u
#define RDLM_LEASE_DEFAULT_DRIFT_PPM 100000u
#define RDLM_LEASE_MAX_DRIFT_PPM 500000u /* keeps TTL/3 inside TTL * (1 - drift) */
#define RDLM_LEASE_DEFAULT_CONNECT_MS 10000u
#define RDLM_LEASE_BACKOFF_MIN_NS (10 * RDLM_LEASE_MS)
#define RDLM_LEASE_BACKOFF_MAX_NS (200 * RDLM_LEASE_MS)
/** Longest wait for one reply to a request that is not a queued ACQUIRE. */
#define RDLM_LEASE_ATTEMPT_NS (2000 * RDLM_LEASE_MS)
/** Longest wait for CLOSE and for the CANCEL of an abandoned ACQUIRE. */
#define RDLM_LEASE_CLEANUP_NS (2000 * RDLM_LEASE_MS)
/** How long after the authority's end of a queued wait its answer may arrive. */
#define RDLM_LEASE_SLACK_NS (2000 * RDLM_LEASE_MS)
/** Longest wait one queued ACQUIRE asks the authority for. */
#define RDLM_LEASE_CHUNK_MS 3600000u

typedef struct rdlm_lease_link {
    const rdlm_lease_addrs_t *addrs;
    unsigned next;                       /* next address of the round robin */
    char target[RDLM_WIRE_ADDR_MAX + 1]; /* replica in use or to try first; "": next */
    int fd;                              /* connection to target, -1 if none */
} rdlm_lease_link_t;

/* One request and its answer. */
typedef struct rdlm_lease_call {
    rdlm_lease_cmd_t cmd;
    uint64_t deadline;    /* give up when no answer came before this */
    uint64_t attempt_ns;  /* longest wait for one reply before trying again */
    uint64_t serve_until; /* queued ACQUIRE: when the authority should stop waiting */
    uint64_t first_send;  /* out: when the first attempt's frame went out (0: none) */
    int answered;         /* out: reply holds the authority's answer */
    int fail_fast;        /* give up once every address refused connections twice */
    int connect_err;      /* out: the last attempt's connection error (errno), or 0 */
    unsigned refusals;    /* out: attempts in a row whose connection was refused */
    rdlm_lease_reply_t reply;
} rdlm_lease_call_t;

struct rdlm_session {
    rdlm_lease_addrs_t addrs;
    char authority[RDLM_LEASE_ADDRS_MAX * (RDLM_ADDR_MAX + 1)]; /* for messages */
    uint64_t id;
    uint64_t nonce; /* the OPEN's; every later request carries it (cmd.h) */
    uint64_t ns_id; /* the OPEN's answer: rdlm_lease_session_namespace */
    uint64_t authority_id; /* STATUS's answer: what the credential is bound to */
    uint32_t ttl_ms, drift_ppm, lock_delay_ms, connect_timeout_ms;
    rdlm_lease_lost_func_t lost_cb;
    void *lost_arg;
    char job[RDLM_JOB_MAX + 1];
    int auth;  /* send a MUNGE credential with OPEN */
    int renew; /* 0: test hook RDLMTEST_LEASE_NO_RENEW */
    /* Test hook RDLMTEST_LEASE_STOP_IN_DELAY: the process stops itself (SIGSTOP) as
     * the lock delay starts, for a test to hold it there until its lease ended. */
    int stop_in_delay;

    pthread_mutex_t call_lock; /* serialises calls: link, seq */
    rdlm_lease_link_t link;
    uint64_t seq;

    rdlm_atomic_u64_t valid_until; /* 0 once lost */
    rdlm_atomic_u64_t requests;    /* rdlm_session_stats */
    rdlm_atomic_u64_t renewals;
    pthread_mutex_t state_lock; /* with state_cond: stop and loss reach the thread, */
    pthread_cond_t state_cond;  /* and the end of a renewal its next one */
    int stop;
    int renewing; /* a renewal is on renew_link (state_lock) */
    pthread_t renewer;
    rdlm_lease_link_t renew_link;
    rdlm_live_node_t live; /* on rdlm_session_live from open to close */
};

/* The process's open sessions: a call through a closed one's handle is refused
 * (RDLM_ERR_BAD_HANDLE) instead of touching freed memory (live.h). */
static rdlm_live_set_t rdlm_session_live = RDLM_LIVE_SET_INIT;

/* 1 if session is open (on rdlm_session_live); 0 for NULL, and for a closed one,
 * logged naming func. session is not dereferenced unless it is open. */
static int rdlm_session_open_handle(rdlm_session_h session, const char *func)
{
    if (session == NULL)
        return 0;
    if (!rdlm_live_has(&rdlm_session_live, &session->live)) {
        rdlm_warn("%s: not an open session (closed already?)", func);
        return 0;
    }
    return 1;
}

static uint64_t rdlm_lease_add(uint64_t t, uint64_t d)
{
    return d > UINT64_MAX - t ? UINT64_MAX : t + d;
}

static uint64_t rdlm_lease_min(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

static void rdlm_lease_sleep_until(uint64_t t)
{
    uint64_t now = rdlm_clock_now_ns();

    if (now < t) {
        uint64_t d = t - now;
        nanosleep(
            &(struct timespec){(time_t)(d / 1000000000ull), (long)(d % 1000000000ull)},
            NULL);
    }
}

/* ---- validity ---------------------------------------------------------------- */

/* Mark the lease lost (final) and wake the renewal thread to report it. */
static void rdlm_session_lose(rdlm_session_h s)
{
    pthread_mutex_lock(&s->state_lock);
    rdlm_store(&s->valid_until, 0, RDLM_RELEASE);
    pthread_cond_broadcast(&s->state_cond);
    pthread_mutex_unlock(&s->state_lock);
}

/* Extend the validity to until, unless the lease is lost or its validity passed (a
 * reply that comes after that instant revives nothing: the lease is lost). */
static void rdlm_session_extend(rdlm_session_h s, uint64_t until)
{
    uint64_t old = rdlm_load(&s->valid_until, RDLM_ACQUIRE);
    uint64_t now = rdlm_clock_now_ns();

    while (old > now && old < until &&
           !rdlm_cas(&s->valid_until, &old, until, RDLM_ACQ_REL))
        ;
}

/* Validity end of a lease renewed by a request first sent at t. */
static uint64_t rdlm_session_validity(const struct rdlm_session *s, uint64_t t)
{
    uint64_t ttl_ns = (uint64_t)s->ttl_ms * RDLM_LEASE_MS;

    return t + ttl_ns - ttl_ns / 1000000u * s->drift_ppm;
}

/* ---- requests ---------------------------------------------------------------- */

/* RDLM_OK while s's lease is valid, else RDLM_ERR_LEASE_EXPIRED (marking it lost when
 * its validity just passed). */
static rdlm_status_t rdlm_session_valid(rdlm_session_h s)
{
    uint64_t valid = rdlm_load(&s->valid_until, RDLM_ACQUIRE);

    if (valid != 0 && rdlm_clock_now_ns() < valid)
        return RDLM_OK;
    if (valid != 0)
        rdlm_session_lose(s);
    return RDLM_ERR_LEASE_EXPIRED;
}

/* Close the link's connection; the next attempt goes to hint ("": the next address). */
static void rdlm_lease_link_drop(rdlm_lease_link_t *link, const char *hint)
{
    rdlm_lease_conn_close(link->fd);
    link->fd = -1;
    snprintf(link->target, sizeof(link->target), "%s", hint);
}

/* Encode call->cmd for one attempt: OPEN gets a fresh credential, a queued ACQUIRE
 * the time left until serve_until. Returns the length, 0 if the command is invalid. */
static size_t rdlm_lease_encode_attempt(rdlm_session_h s, const rdlm_lease_call_t *call,
                                        uint8_t buf[RDLM_LEASE_CMD_MAX])
{
    rdlm_lease_cmd_t cmd = call->cmd;
    uint8_t cred[RDLM_LEASE_CRED_MAX];

    if (cmd.op == RDLM_LEASE_OP_OPEN && s->auth) {
        size_t len;
        rdlm_status_t st = rdlm_lease_auth_create(s->authority_id, cmd.nonce, s->job, cred,
                                                  sizeof(cred), &len);

        if (st == RDLM_OK) {
            cmd.cred = cred;
            cmd.cred_len = (uint16_t)len;
        } else {
            rdlm_debug("lease: no credential (%s): opening without one",
                       rdlm_status_name(st));
            s->auth = 0;
        }
    }
    if (call->serve_until != 0) {
        uint64_t now = rdlm_clock_now_ns();
        uint64_t ms = call->serve_until > now
                          ? (call->serve_until - now + RDLM_LEASE_MS - 1) / RDLM_LEASE_MS
                          : 1;
        cmd.timeout_ms = (uint32_t)rdlm_lease_min(ms, RDLM_LEASE_CHUNK_MS);
    }
    return rdlm_lease_cmd_encode(&cmd, buf, RDLM_LEASE_CMD_MAX);
}

/* Wait for a reply on link until wait_end, or until the validity of s passes. */
static rdlm_status_t rdlm_lease_wait_reply(rdlm_session_h s, rdlm_lease_link_t *link,
                                           uint64_t wait_end)
{
    for (;;) {
        uint64_t valid = s != NULL ? rdlm_load(&s->valid_until, RDLM_ACQUIRE) : UINT64_MAX;
        rdlm_status_t st;

        if (valid == 0 || rdlm_clock_now_ns() >= valid)
            return RDLM_ERR_LEASE_EXPIRED;
        st = rdlm_lease_conn_wait(link->fd, rdlm_lease_min(wait_end, valid));
        if (st != RDLM_ERR_TIMEOUT || rdlm_clock_now_ns() >= wait_end)
            return st;
    }
}

/*
 * One attempt of call on link's current replica: connect if needed, send, wait for
 * the reply until call->deadline or attempt_ns after sending, and not past the
 * validity of s (NULL: no session). RDLM_OK with call->reply (any status); else the
 * connection is closed and the result is RDLM_ERR_TIMEOUT, _UNAVAILABLE, _PROTOCOL,
 * _IO, _LEASE_EXPIRED or _INVALID_ARG (the command does not encode; logged).
 */
static rdlm_status_t rdlm_lease_attempt(rdlm_session_h s, rdlm_lease_link_t *link,
                                        rdlm_lease_call_t *call)
{
    uint8_t buf[RDLM_WIRE_MAX_PAYLOAD];
    uint64_t wait_end;
    uint32_t len;
    size_t n;
    rdlm_status_t st;

    if (s != NULL && rdlm_session_valid(s) != RDLM_OK)
        return RDLM_ERR_LEASE_EXPIRED;
    n = rdlm_lease_encode_attempt(s, call, buf);
    if (n == 0) {
        rdlm_error("lease: %s request not valid (name '%s')",
                   rdlm_lease_op_name(call->cmd.op), call->cmd.name);
        return RDLM_ERR_INVALID_ARG;
    }
    if (link->fd < 0) {
        if (link->target[0] == '\0') {
            snprintf(link->target, sizeof(link->target), "%s",
                     link->addrs->addr[link->next]);
            link->next = (link->next + 1) % link->addrs->count;
        }
        st = rdlm_lease_conn_open(
            link->target,
            rdlm_lease_min(call->deadline, rdlm_clock_deadline(RDLM_LEASE_ATTEMPT_NS)),
            &link->fd);
        if (st != RDLM_OK) {
            call->connect_err = st == RDLM_ERR_UNAVAILABLE ? errno : 0;
            goto err_drop;
        }
    }
    wait_end = rdlm_lease_min(call->deadline, rdlm_clock_deadline(call->attempt_ns));
    if (call->first_send == 0)
        call->first_send = rdlm_clock_now_ns();
    st = rdlm_lease_conn_send(link->fd, RDLM_WIRE_REQUEST, buf, (uint32_t)n, wait_end);
    if (st == RDLM_OK)
        st = rdlm_lease_wait_reply(s, link, wait_end);
    if (st == RDLM_OK)
        st = rdlm_lease_conn_recv(link->fd, RDLM_WIRE_REPLY, buf, &len, wait_end);
    if (st == RDLM_OK && (rdlm_wire_reply_decode(buf, len, &call->reply) != RDLM_OK ||
                          call->reply.seq != call->cmd.seq)) {
        rdlm_warn("lease: malformed reply to %s from %s", rdlm_lease_op_name(call->cmd.op),
                  link->target);
        st = RDLM_ERR_PROTOCOL;
    }
    if (st == RDLM_OK)
        return RDLM_OK;
err_drop:
    rdlm_debug("lease: %s at %s: %s", rdlm_lease_op_name(call->cmd.op), link->target,
               rdlm_status_name(st));
    rdlm_lease_link_drop(link, "");
    return st;
}

/* What a refused connection is called in messages; NULL for an error that does not
 * say nobody listens there (a timeout, a reset: the replica may be slow or busy). */
static const char *rdlm_lease_refusal(int err)
{
    switch (err) {
    case ECONNREFUSED:
        return "connection refused";
    case ENETUNREACH:
        return "network unreachable";
    case EHOSTUNREACH:
        return "host unreachable";
    default:
        return NULL;
    }
}

/* 1 if call gave up early: with fail_fast, every address of link refused twice in a
 * row (nothing listens there: misconfigured, or rdlmd not running). */
static int rdlm_lease_refused_all(const rdlm_lease_link_t *link,
                                  const rdlm_lease_call_t *call)
{
    return call->fail_fast && call->refusals >= 2 * link->addrs->count;
}

/*
 * Send call until a replica that is the leader answers it, or call->deadline passes.
 * RDLM_OK with call->answered and call->reply; RDLM_ERR_LEASE_EXPIRED (validity of s
 * passed), RDLM_ERR_INVALID_ARG; RDLM_ERR_TIMEOUT (given up while the leader had the
 * request and did not answer) or RDLM_ERR_UNAVAILABLE (no leader reached; with
 * call->fail_fast, at once when rdlm_lease_refused_all). Logs at debug only: whether
 * giving up is an error is the caller's decision.
 */
static rdlm_status_t rdlm_lease_rpc(rdlm_session_h s, rdlm_lease_link_t *link,
                                    rdlm_lease_call_t *call)
{
    uint64_t backoff = RDLM_LEASE_BACKOFF_MIN_NS;
    rdlm_status_t last = RDLM_ERR_UNAVAILABLE;
    int redirected = 0;

    call->answered = 0;
    for (;;) {
        rdlm_status_t st;
        int32_t answer;

        rdlm_fetch_add(call->cmd.op == RDLM_LEASE_OP_RENEW ? &s->renewals : &s->requests, 1,
                       RDLM_RELAXED);
        call->connect_err = 0;
        st = rdlm_lease_attempt(s, link, call);
        answer = call->reply.status;
        call->refusals = rdlm_lease_refusal(call->connect_err) ? call->refusals + 1 : 0;
        if (rdlm_lease_refused_all(link, call))
            return RDLM_ERR_UNAVAILABLE;

        if (st == RDLM_ERR_LEASE_EXPIRED || st == RDLM_ERR_INVALID_ARG)
            return st;
        if (st == RDLM_OK && answer != RDLM_ERR_NOT_LEADER &&
            answer != RDLM_ERR_UNAVAILABLE && answer != RDLM_INPROGRESS) {
            call->answered = 1;
            return RDLM_OK;
        }
        if (st == RDLM_OK && answer == RDLM_INPROGRESS) {
            last = RDLM_ERR_TIMEOUT; /* queued at the leader: poll it again */
        } else if (st == RDLM_OK) {
            int follow = call->reply.leader_addr[0] != '\0' &&
                         strcmp(call->reply.leader_addr, link->target) != 0;

            rdlm_lease_link_drop(link, follow ? call->reply.leader_addr : "");
            if (follow && !redirected) {
                redirected = 1;
                continue;
            }
            last = RDLM_ERR_UNAVAILABLE;
        } else {
            last = st == RDLM_ERR_TIMEOUT ? RDLM_ERR_TIMEOUT : RDLM_ERR_UNAVAILABLE;
        }
        if (rdlm_clock_now_ns() >= call->deadline)
            return last;
        rdlm_lease_sleep_until(
            rdlm_lease_min(call->deadline, rdlm_clock_deadline(backoff)));
        backoff = rdlm_lease_min(2 * backoff, RDLM_LEASE_BACKOFF_MAX_NS);
        redirected = 0;
        if (rdlm_clock_now_ns() >= call->deadline)
            return last;
    }
}

/* A request of a call on s (call_lock held): the authority's answer, or why there is
 * none (call->answered 0; giving up is logged). An RDLM_ERR_LEASE_EXPIRED answer
 * marks the lease lost. */
static rdlm_status_t rdlm_session_request(rdlm_session_h s, rdlm_lease_call_t *call)
{
    rdlm_status_t st;

    call->cmd.session = s->id;
    if (call->cmd.op != RDLM_LEASE_OP_OPEN) {
        call->cmd.nonce = s->nonce;
    }
    st = rdlm_lease_rpc(s, &s->link, call);
    if (st == RDLM_OK)
        st = (rdlm_status_t)call->reply.status;
    if (st == RDLM_ERR_LEASE_EXPIRED)
        rdlm_session_lose(s);
    else if (rdlm_lease_refused_all(&s->link, call))
        rdlm_error("lease: %s: %s at %s (is rdlmd running? RDLM_AUTHORITY names its "
                   "client ports)",
                   rdlm_lease_op_name(call->cmd.op), rdlm_lease_refusal(call->connect_err),
                   s->authority);
    else if (!call->answered && st != RDLM_ERR_INVALID_ARG)
        rdlm_warn("lease: %s '%s' at %s: no answer from a leader (%s)",
                  rdlm_lease_op_name(call->cmd.op), call->cmd.name, s->authority,
                  rdlm_status_name(st));
    return st;
}

/* A call of op with the default deadline, the name (may be NULL) and, for the ops the
 * authority de-duplicates, a new seq (call_lock held). */
static rdlm_lease_call_t rdlm_session_call(rdlm_session_h s, unsigned op, const char *name)
{
    int numbered = op != RDLM_LEASE_OP_OPEN && op != RDLM_LEASE_OP_CANCEL &&
                   op != RDLM_LEASE_OP_STATUS;
    rdlm_lease_call_t call = {
        .cmd = {.op = (uint8_t)op, .seq = numbered ? ++s->seq : 0},
        .deadline = rdlm_clock_deadline((uint64_t)s->connect_timeout_ms * RDLM_LEASE_MS),
        .attempt_ns = RDLM_LEASE_ATTEMPT_NS,
        /* A new session's first contact: refusals everywhere mean nothing listens
         * there. Later, they are replicas restarting: wait for them. */
        .fail_fast = op == RDLM_LEASE_OP_OPEN};

    if (name != NULL) {
        call.cmd.name_len = (uint16_t)strlen(name);
        memcpy(call.cmd.name, name, call.cmd.name_len + 1u);
    }
    return call;
}

/* ---- renewal thread ------------------------------------------------------------ */

/* Wait on state_cond (state_lock held) until woken or until (> now), whichever first. */
static void rdlm_session_wait_until(rdlm_session_h s, uint64_t now, uint64_t until)
{
    uint64_t d = until - now;
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    d += (uint64_t)ts.tv_nsec;
    ts.tv_sec += (time_t)(d / 1000000000ull);
    ts.tv_nsec = (long)(d % 1000000000ull);
    pthread_cond_timedwait(&s->state_cond, &s->state_lock, &ts);
}

/* Sleep until t, a stop, or a loss. Returns 1 if the thread should stop. */
static int rdlm_renewer_sleep(rdlm_session_h s, uint64_t t)
{
    int stop;

    pthread_mutex_lock(&s->state_lock);
    for (;;) {
        uint64_t now = rdlm_clock_now_ns(),
                 valid = rdlm_load(&s->valid_until, RDLM_ACQUIRE);
        uint64_t until = rdlm_lease_min(t, valid);

        if (s->stop || valid == 0 || now >= until)
            break;
        rdlm_session_wait_until(s, now, until);
    }
    stop = s->stop;
    pthread_mutex_unlock(&s->state_lock);
    return stop;
}

/* Take renew_link for one renewal: wait while another renewal is on it, until deadline
 * (UINT64_MAX: none) or the session's stop. 1 if taken (rdlm_session_renewal_end
 * gives it back). */
static int rdlm_session_renewal_begin(rdlm_session_h s, uint64_t deadline)
{
    int taken;

    pthread_mutex_lock(&s->state_lock);
    for (;;) {
        uint64_t now = rdlm_clock_now_ns();

        if (!s->renewing || s->stop || now >= deadline)
            break;
        /* in slices of 1 s: deadline may be UINT64_MAX */
        rdlm_session_wait_until(s, now, rdlm_lease_min(deadline, now + RDLM_LEASE_MS * 1000));
    }
    taken = !s->renewing && !s->stop;
    if (taken)
        s->renewing = 1;
    pthread_mutex_unlock(&s->state_lock);
    return taken;
}

static void rdlm_session_renewal_end(rdlm_session_h s)
{
    pthread_mutex_lock(&s->state_lock);
    s->renewing = 0;
    pthread_cond_broadcast(&s->state_cond);
    pthread_mutex_unlock(&s->state_lock);
}

/*
 * One RENEW of s on link, begun at t0 and given up at deadline or when the validity
 * passes (each attempt waits TTL/6 for its reply). The authority's RDLM_OK moves the
 * validity to rdlm_session_validity(s, t0) (rdlm_session_extend: not once passed);
 * RDLM_ERR_LEASE_EXPIRED (its answer, or the validity passed) marks the lease lost.
 * Else why no answer came (RDLM_ERR_TIMEOUT, RDLM_ERR_UNAVAILABLE) or the authority's
 * other answer. Sent on renew_link (taken: rdlm_session_renewal_begin).
 */
static rdlm_status_t rdlm_session_renew_on(rdlm_session_h s, uint64_t t0,
                                           uint64_t deadline)
{
    rdlm_lease_call_t call = {
        .cmd = {.op = RDLM_LEASE_OP_RENEW, .session = s->id, .nonce = s->nonce},
        .deadline = rdlm_lease_min(deadline, rdlm_load(&s->valid_until, RDLM_ACQUIRE)),
        .attempt_ns = (uint64_t)s->ttl_ms * RDLM_LEASE_MS / 6};
    rdlm_status_t st = rdlm_lease_rpc(s, &s->renew_link, &call);

    if (st == RDLM_OK)
        st = (rdlm_status_t)call.reply.status;
    if (st == RDLM_OK)
        rdlm_session_extend(s, rdlm_session_validity(s, t0));
    else if (st == RDLM_ERR_LEASE_EXPIRED)
        rdlm_session_lose(s);
    return st;
}

static void *rdlm_renewer_main(void *arg)
{
    rdlm_session_h s = arg;
    uint64_t period = (uint64_t)s->ttl_ms * RDLM_LEASE_MS / 3;
    uint64_t next = s->renew ? rdlm_clock_now_ns() + period : UINT64_MAX;

    while (!rdlm_renewer_sleep(s, next)) {
        uint64_t t0 = rdlm_clock_now_ns();
        rdlm_status_t st;

        if (rdlm_session_valid(s) != RDLM_OK)
            break;
        if (!rdlm_session_renewal_begin(s, UINT64_MAX))
            break; /* stopped */
        st = rdlm_session_renew_on(s, t0, t0 + period);
        rdlm_session_renewal_end(s);
        if (st == RDLM_OK) {
            next = t0 + period;
        } else if (st == RDLM_ERR_LEASE_EXPIRED) {
            break;
        } else {
            rdlm_debug("lease: session %llu: renewal failed (%s), retrying",
                       (unsigned long long)s->id, rdlm_status_name(st));
            next = rdlm_clock_now_ns() + period / 8;
        }
    }
    if (rdlm_load(&s->valid_until, RDLM_ACQUIRE) == 0) {
        rdlm_warn("lease: session %llu at %s lost its lease", (unsigned long long)s->id,
                  s->authority);
        if (s->lost_cb != NULL)
            s->lost_cb(s->lost_arg, s);
    }
    return NULL;
}

/* ---- sessions ------------------------------------------------------------------ */

/* Fill s from params (NULL: defaults). RDLM_ERR_INVALID_ARG, RDLM_ERR_BAD_CONFIG. */
static rdlm_status_t rdlm_session_configure(rdlm_session_h s,
                                            const rdlm_session_params_t *params)
{
    const uint64_t known = RDLM_SESSION_FIELD_TTL | RDLM_SESSION_FIELD_DRIFT |
                           RDLM_SESSION_FIELD_LOST_CB | RDLM_SESSION_FIELD_JOB |
                           RDLM_SESSION_FIELD_LOCK_DELAY | RDLM_SESSION_FIELD_TIMEOUT;
    uint64_t mask = params != NULL ? params->field_mask : 0;
    const char *job = NULL;

    if (mask & ~known) {
        rdlm_error("lease: unknown session field_mask bits 0x%llx",
                   (unsigned long long)(mask & ~known));
        return RDLM_ERR_INVALID_ARG;
    }

    s->ttl_ms = mask & RDLM_SESSION_FIELD_TTL ? params->ttl_ms : RDLM_LEASE_DEFAULT_TTL_MS;
    s->drift_ppm =
        mask & RDLM_SESSION_FIELD_DRIFT ? params->drift_ppm : RDLM_LEASE_DEFAULT_DRIFT_PPM;
    s->lock_delay_ms = mask & RDLM_SESSION_FIELD_LOCK_DELAY ? params->lock_delay_ms : 0;
    s->connect_timeout_ms = mask & RDLM_SESSION_FIELD_TIMEOUT
                                ? params->connect_timeout_ms
                                : RDLM_LEASE_DEFAULT_CONNECT_MS;
    if (mask & RDLM_SESSION_FIELD_LOST_CB) {
        s->lost_cb = params->lost_cb;
        s->lost_arg = params->lost_arg;
    }
    if (mask & RDLM_SESSION_FIELD_JOB)
        job = params->job != NULL ? params->job : "";
    if (s->ttl_ms < RDLM_LEASE_TTL_MIN_MS || s->ttl_ms > RDLM_LEASE_TTL_MAX_MS ||
        s->drift_ppm > RDLM_LEASE_MAX_DRIFT_PPM || s->connect_timeout_ms == 0 ||
        (job != NULL && job[0] != '\0' && !rdlm_config_job_valid(job))) {
        rdlm_error("lease: session parameters out of range (ttl_ms %u in %u..%u, "
                   "drift_ppm %u <= %u, connect_timeout_ms %u > 0, job a valid name)",
                   s->ttl_ms, RDLM_LEASE_TTL_MIN_MS, RDLM_LEASE_TTL_MAX_MS, s->drift_ppm,
                   RDLM_LEASE_MAX_DRIFT_PPM, s->connect_timeout_ms);
        return RDLM_ERR_INVALID_ARG;
    }
    s->auth = rdlm_lease_auth_available();
    if (s->auth && job == NULL) {
        rdlm_config_t cfg;
        rdlm_status_t st = rdlm_config_load(&cfg);

        if (st != RDLM_OK)
            return st;
        snprintf(s->job, sizeof(s->job), "%s", cfg.job);
    } else if (job != NULL) {
        snprintf(s->job, sizeof(s->job), "%s", job);
    }
    s->renew = getenv("RDLMTEST_LEASE_NO_RENEW") == NULL;
    s->stop_in_delay = getenv("RDLMTEST_LEASE_STOP_IN_DELAY") != NULL;
    return RDLM_OK;
}

/* The authority's id that a credential is bound to (auth.h), from the first replica
 * that answers STATUS (call link); every replica of one authority tells the same. */
static rdlm_status_t rdlm_session_authority_id(rdlm_session_h s)
{
    rdlm_lease_call_t call = rdlm_session_call(s, RDLM_LEASE_OP_STATUS, NULL);
    rdlm_status_t st;

    call.fail_fast = 1; /* as the OPEN that follows: nothing listening is an answer */
    st = rdlm_session_request(s, &call);
    if (call.answered) {
        s->authority_id = call.reply.token; /* told by a diverged replica too */
        return RDLM_OK;
    }
    return st == RDLM_ERR_TIMEOUT ? RDLM_ERR_UNAVAILABLE : st;
}

/* Open the session at the authority (call link). */
static rdlm_status_t rdlm_session_open_remote(rdlm_session_h s)
{
    rdlm_lease_call_t call = rdlm_session_call(s, RDLM_LEASE_OP_OPEN, NULL);
    rdlm_status_t st;

    if (s->auth) {
        st = rdlm_session_authority_id(s);
        if (st != RDLM_OK)
            return st;
    }

    do {
        if (getrandom(&call.cmd.nonce, sizeof(call.cmd.nonce), 0) !=
            sizeof(call.cmd.nonce)) {
            rdlm_error("lease: getrandom: %s", strerror(errno));
            return RDLM_ERR_IO;
        }
    } while (call.cmd.nonce == 0);
    call.cmd.ttl_ms = s->ttl_ms;
    st = rdlm_session_request(s, &call);
    if (st != RDLM_OK) {
        if (call.answered)
            rdlm_error("lease: the authority at %s refused the session: %s", s->authority,
                       rdlm_status_str(st));
        return st == RDLM_ERR_TIMEOUT ? RDLM_ERR_UNAVAILABLE : st;
    }
    if (call.reply.session == 0 ||
        (call.reply.ttl_ms != 0 && call.reply.ttl_ms < RDLM_LEASE_TTL_MIN_MS)) {
        rdlm_error("lease: the authority at %s answered OPEN without a session",
                   s->authority);
        return RDLM_ERR_PROTOCOL;
    }
    s->id = call.reply.session;
    s->nonce = call.cmd.nonce;
    s->ns_id = call.reply.token;
    if (call.reply.ttl_ms != 0 && call.reply.ttl_ms < s->ttl_ms)
        s->ttl_ms = call.reply.ttl_ms; /* the authority's TTL, if shorter, rules */
    /* The lease began when the authority took the first OPEN frame (a retry carries
     * the same nonce and gets the same session), not before it was sent: the MUNGE
     * credential and the connection come first, and libmunge alone may take seconds. */
    rdlm_store(&s->valid_until, rdlm_session_validity(s, call.first_send), RDLM_RELEASE);
    return RDLM_OK;
}

/* Destroy what rdlm_session_alloc set up. */
static void rdlm_session_free(rdlm_session_h s)
{
    rdlm_lease_conn_close(s->link.fd);
    rdlm_lease_conn_close(s->renew_link.fd);
    pthread_cond_destroy(&s->state_cond);
    pthread_mutex_destroy(&s->state_lock);
    pthread_mutex_destroy(&s->call_lock);
    free(s);
}

static rdlm_status_t rdlm_session_alloc(const char *authority, rdlm_session_h *s_p)
{
    rdlm_session_h s = calloc(1, sizeof(*s));
    pthread_condattr_t ca;
    rdlm_status_t st;

    if (s == NULL) {
        rdlm_error("lease: out of memory for a session");
        return RDLM_ERR_NO_MEMORY;
    }
    st = rdlm_lease_addrs_parse(authority, &s->addrs);
    if (st == RDLM_OK) {
        st = rdlm_lease_addrs_check(&s->addrs);
    }
    if (st != RDLM_OK) {
        free(s);
        return st;
    }
    snprintf(s->authority, sizeof(s->authority), "%s", authority);
    s->link = (rdlm_lease_link_t){.addrs = &s->addrs, .fd = -1};
    s->renew_link = s->link;
    rdlm_store(&s->valid_until, UINT64_MAX, RDLM_RELAXED); /* until OPEN answers */
    pthread_mutex_init(&s->call_lock, NULL);
    pthread_mutex_init(&s->state_lock, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->state_cond, &ca);
    pthread_condattr_destroy(&ca);
    *s_p = s;
    return RDLM_OK;
}

/* Best-effort CLOSE (call_lock held). */
static void rdlm_session_close_remote(rdlm_session_h s)
{
    rdlm_lease_call_t call = rdlm_session_call(s, RDLM_LEASE_OP_CLOSE, NULL);

    call.deadline = rdlm_clock_deadline(rdlm_lease_min(
        (uint64_t)s->connect_timeout_ms * RDLM_LEASE_MS, RDLM_LEASE_CLEANUP_NS));
    (void)rdlm_session_request(s, &call);
}

RDLM_EXPORT rdlm_status_t rdlm_session_open(const char *authority,
                                            const rdlm_session_params_t *params,
                                            rdlm_session_h *session_p)
{
    rdlm_session_h s;
    rdlm_status_t st;
    int err;

    if (session_p == NULL)
        return RDLM_ERR_INVALID_ARG;
    st = rdlm_session_alloc(authority, &s);
    if (st != RDLM_OK)
        return st;
    st = rdlm_session_configure(s, params);
    if (st != RDLM_OK)
        goto err_free;
    st = rdlm_session_open_remote(s);
    if (st != RDLM_OK)
        goto err_free;
    snprintf(s->renew_link.target, sizeof(s->renew_link.target), "%s", s->link.target);
    rdlm_live_add(&rdlm_session_live, &s->live); /* before the lost callback can run */
    err = pthread_create(&s->renewer, NULL, rdlm_renewer_main, s);
    if (err != 0) {
        rdlm_error("lease: cannot start the renewal thread: %s", strerror(err));
        (void)rdlm_live_remove(&rdlm_session_live, &s->live);
        st = RDLM_ERR_NO_RESOURCE;
        goto err_close;
    }
    rdlm_debug("lease: session %llu open at %s (ttl %u ms)", (unsigned long long)s->id,
               s->link.target, s->ttl_ms);
    *session_p = s;
    return RDLM_OK;

err_close:
    rdlm_session_close_remote(s);
err_free:
    rdlm_session_free(s);
    return st;
}

RDLM_EXPORT void rdlm_session_close(rdlm_session_h session)
{
    if (session == NULL)
        return;
    if (!rdlm_live_remove(&rdlm_session_live, &session->live)) {
        rdlm_warn("rdlm_session_close: not an open session (closed already?)");
        return;
    }
    /* The renewal thread stops first: a renewal reaching the authority after the
     * CLOSE would be answered RDLM_ERR_LEASE_EXPIRED, reported as a lost lease. */
    pthread_mutex_lock(&session->state_lock);
    session->stop = 1;
    pthread_cond_broadcast(&session->state_cond);
    pthread_mutex_unlock(&session->state_lock);
    if (pthread_equal(pthread_self(), session->renewer))
        pthread_detach(session->renewer); /* from the lost callback: it returns next */
    else
        pthread_join(session->renewer, NULL);
    pthread_mutex_lock(&session->call_lock);
    if (rdlm_session_valid(session) == RDLM_OK)
        rdlm_session_close_remote(session);
    pthread_mutex_unlock(&session->call_lock);
    rdlm_session_free(session);
}

RDLM_EXPORT uint64_t rdlm_session_id(rdlm_session_h session)
{
    return rdlm_session_open_handle(session, __func__) ? session->id : 0;
}

RDLM_EXPORT rdlm_status_t rdlm_session_check(rdlm_session_h session)
{
    if (session == NULL)
        return RDLM_ERR_INVALID_ARG;
    return rdlm_session_open_handle(session, __func__) ? rdlm_session_valid(session)
                                                      : RDLM_ERR_BAD_HANDLE;
}

RDLM_EXPORT uint64_t rdlm_session_valid_until(rdlm_session_h session)
{
    return rdlm_session_open_handle(session, __func__)
               ? rdlm_load(&session->valid_until, RDLM_ACQUIRE)
               : 0;
}

RDLM_EXPORT rdlm_status_t rdlm_session_renew(rdlm_session_h session)
{
    uint64_t t0, deadline;
    rdlm_status_t st;

    if (session == NULL)
        return RDLM_ERR_INVALID_ARG;
    if (!rdlm_session_open_handle(session, __func__))
        return RDLM_ERR_BAD_HANDLE;
    t0 = rdlm_clock_now_ns();
    deadline = rdlm_clock_deadline((uint64_t)session->connect_timeout_ms * RDLM_LEASE_MS);
    /* Not call_lock: a queued ACQUIRE of another thread may hold it for as long as it
     * waits. An in-flight renewal of the renewal thread is waited for until deadline. */
    if (!rdlm_session_renewal_begin(session, deadline)) {
        st = rdlm_session_valid(session) == RDLM_OK ? RDLM_ERR_UNAVAILABLE
                                                     : RDLM_ERR_LEASE_EXPIRED;
    } else {
        st = rdlm_session_valid(session);
        if (st == RDLM_OK)
            st = rdlm_session_renew_on(session, t0, deadline);
        rdlm_session_renewal_end(session);
    }
    if (st != RDLM_ERR_LEASE_EXPIRED && rdlm_session_valid(session) != RDLM_OK)
        st = RDLM_ERR_LEASE_EXPIRED; /* it passed while the request was under way */
    else if (st == RDLM_ERR_TIMEOUT || st == RDLM_ERR_UNAVAILABLE) {
        st = RDLM_ERR_UNAVAILABLE;
        rdlm_warn("lease: RENEW of session %llu at %s: no answer from a leader within "
                  "%u ms (the lease is still valid)",
                  (unsigned long long)session->id, session->authority,
                  session->connect_timeout_ms);
    }
    return st;
}

/* Cancel the ACQUIRE with seq that was abandoned without an answer (call_lock held).
 * RDLM_OK once the authority applied it. */
static rdlm_status_t rdlm_session_cancel(rdlm_session_h s, const char *name, uint64_t seq)
{
    rdlm_lease_call_t call = rdlm_session_call(s, RDLM_LEASE_OP_CANCEL, name);
    rdlm_status_t st;

    call.cmd.seq = seq;
    call.deadline = rdlm_clock_deadline(RDLM_LEASE_CLEANUP_NS);
    st = rdlm_session_request(s, &call);
    if (st != RDLM_OK && call.answered)
        rdlm_warn("lease: CANCEL of '%s' refused: %s", name, rdlm_status_name(st));
    return st;
}

/* Acquire name (call_lock held): try once (timeout_ns 0) or wait at the authority, in
 * chunks, until timeout_ns passes. The answer's status, with call->reply; an
 * acquire given up without an answer is cancelled, and is RDLM_ERR_TIMEOUT only if
 * the cancel was applied (nothing left queued), else RDLM_ERR_UNAVAILABLE. */
static rdlm_status_t rdlm_session_acquire(rdlm_session_h s, const char *name,
                                          uint64_t timeout_ns, rdlm_lease_call_t *call)
{
    uint64_t deadline = rdlm_clock_deadline(timeout_ns);

    for (;;) {
        uint64_t chunk_end = rdlm_lease_min(
            deadline, rdlm_clock_deadline((uint64_t)RDLM_LEASE_CHUNK_MS * RDLM_LEASE_MS));
        rdlm_status_t st;

        *call = rdlm_session_call(s, RDLM_LEASE_OP_ACQUIRE, name);
        if (timeout_ns == 0) {
            call->cmd.flags = RDLM_LEASE_ACQ_TRY;
        } else {
            call->serve_until = chunk_end;
            call->deadline = rdlm_lease_add(chunk_end, RDLM_LEASE_SLACK_NS);
            call->attempt_ns = UINT64_MAX;
        }
        st = rdlm_session_request(s, call);
        if (!call->answered && st != RDLM_ERR_LEASE_EXPIRED && st != RDLM_ERR_INVALID_ARG) {
            /* It may be queued, or even granted: make sure it is neither. */
            rdlm_status_t cst = rdlm_session_cancel(s, name, call->cmd.seq);
            return st == RDLM_ERR_TIMEOUT && cst == RDLM_OK && timeout_ns != 0
                       ? RDLM_ERR_TIMEOUT
                       : RDLM_ERR_UNAVAILABLE;
        }
        if (st != RDLM_ERR_TIMEOUT || timeout_ns == 0 || chunk_end >= deadline)
            return st;
    }
}

RDLM_EXPORT rdlm_status_t rdlm_session_lock(rdlm_session_h session, const char *name,
                                            uint64_t timeout_ns, uint64_t *token_p)
{
    rdlm_lease_call_t call;
    rdlm_status_t st;

    if (session == NULL || name == NULL || token_p == NULL)
        return RDLM_ERR_INVALID_ARG;
    if (!rdlm_session_open_handle(session, __func__))
        return RDLM_ERR_BAD_HANDLE;
    if (name[0] == '\0' || strlen(name) > RDLM_NAME_MAX)
        return RDLM_ERR_NAME_TOO_LONG;
    pthread_mutex_lock(&session->call_lock);
    st = rdlm_session_valid(session);
    if (st == RDLM_OK)
        st = rdlm_session_acquire(session, name, timeout_ns, &call);
    if (st == RDLM_OK && call.reply.broken) {
        rdlm_lease_session_lock_delay(session);
        st = RDLM_OWNER_DEAD;
    }
    if ((st == RDLM_OK || st == RDLM_OWNER_DEAD) && rdlm_session_valid(session) != RDLM_OK)
        st = RDLM_ERR_LEASE_EXPIRED; /* granted, but not safely held any more */
    if (st == RDLM_OK || st == RDLM_OWNER_DEAD)
        *token_p = call.reply.token;
    pthread_mutex_unlock(&session->call_lock);
    return st;
}

/* One request of op (name may be NULL) carrying token, on a session whose lease holds:
 * the authority's answer, with its reply in *reply_p (may be NULL). A request that
 * found no leader in time is RDLM_ERR_UNAVAILABLE. */
static rdlm_status_t rdlm_session_token_request(rdlm_session_h session, unsigned op,
                                                const char *name, uint64_t token,
                                                rdlm_lease_reply_t *reply_p)
{
    rdlm_lease_call_t call;
    rdlm_status_t st;

    pthread_mutex_lock(&session->call_lock);
    st = rdlm_session_valid(session);
    if (st == RDLM_OK) {
        call = rdlm_session_call(session, op, name);
        call.cmd.token = token;
        st = rdlm_session_request(session, &call);
        if (reply_p != NULL)
            *reply_p = call.reply;
    }
    pthread_mutex_unlock(&session->call_lock);
    return st == RDLM_ERR_TIMEOUT ? RDLM_ERR_UNAVAILABLE : st;
}

RDLM_EXPORT rdlm_status_t rdlm_session_unlock(rdlm_session_h session, const char *name,
                                              uint64_t token)
{
    if (session == NULL || name == NULL)
        return RDLM_ERR_INVALID_ARG;
    if (!rdlm_session_open_handle(session, __func__))
        return RDLM_ERR_BAD_HANDLE;
    if (name[0] == '\0' || strlen(name) > RDLM_NAME_MAX)
        return RDLM_ERR_NAME_TOO_LONG;
    return rdlm_session_token_request(session, RDLM_LEASE_OP_RELEASE, name, token, NULL);
}

uint64_t rdlm_lease_session_namespace(rdlm_session_h session)
{
    return session != NULL ? session->ns_id : 0;
}

uint64_t rdlm_lease_session_nonce(rdlm_session_h session)
{
    return session != NULL ? session->nonce : 0;
}

rdlm_status_t rdlm_lease_session_valid(rdlm_session_h session)
{
    return session != NULL ? rdlm_session_valid(session) : RDLM_ERR_INVALID_ARG;
}

uint64_t rdlm_lease_session_id(rdlm_session_h session)
{
    return session != NULL ? session->id : 0;
}

void rdlm_lease_session_lock_delay(rdlm_session_h session)
{
    if (session != NULL && session->stop_in_delay)
        raise(SIGSTOP);
    if (session != NULL && session->lock_delay_ms != 0)
        rdlm_lease_sleep_until(
            rdlm_clock_deadline((uint64_t)session->lock_delay_ms * RDLM_LEASE_MS));
}

int rdlm_lease_session_ended(rdlm_session_h session, uint64_t other)
{
    rdlm_lease_reply_t reply;
    rdlm_status_t st;

    if (session == NULL || other == 0)
        return RDLM_ERR_INVALID_ARG;
    st = rdlm_session_token_request(session, RDLM_LEASE_OP_FATE, NULL, other, &reply);
    return st == RDLM_OK ? reply.broken : st;
}

rdlm_status_t rdlm_lease_session_new_epoch_above(rdlm_session_h session, uint64_t floor,
                                                 uint64_t *epoch_p)
{
    rdlm_lease_reply_t reply;
    rdlm_status_t st;

    if (session == NULL || epoch_p == NULL || floor > RDLM_LEASE_EPOCH_MAX)
        return RDLM_ERR_INVALID_ARG;
    st = rdlm_session_token_request(session, RDLM_LEASE_OP_EPOCH, NULL, floor, &reply);
    if (st == RDLM_OK)
        *epoch_p = reply.epoch;
    return st;
}

RDLM_EXPORT rdlm_status_t rdlm_session_new_epoch(rdlm_session_h session, uint64_t *epoch_p)
{
    if (session != NULL && !rdlm_session_open_handle(session, __func__))
        return RDLM_ERR_BAD_HANDLE;
    return rdlm_lease_session_new_epoch_above(session, 0, epoch_p);
}

RDLM_EXPORT rdlm_status_t rdlm_authority_status(const char *address, uint32_t timeout_ms,
                                                rdlm_authority_status_t *status_p)
{
    rdlm_lease_addrs_t addrs = {.count = 1};
    rdlm_lease_link_t link = {.addrs = &addrs, .fd = -1};
    rdlm_lease_call_t call = {.cmd = {.op = RDLM_LEASE_OP_STATUS},
                              .deadline =
                                  rdlm_clock_deadline((uint64_t)timeout_ms * RDLM_LEASE_MS),
                              .attempt_ns = UINT64_MAX};
    rdlm_status_t st;

    if (status_p == NULL) {
        rdlm_error("lease: status: NULL status_p");
        return RDLM_ERR_INVALID_ARG;
    }
    if (address == NULL || !rdlm_config_hostport_parse(address, NULL, NULL)) {
        rdlm_error("lease: status: '%s' is not host:port", address ? address : "(null)");
        return RDLM_ERR_INVALID_ARG;
    }
    snprintf(addrs.addr[0], sizeof(addrs.addr[0]), "%s", address);
    st = rdlm_lease_attempt(NULL, &link, &call);
    rdlm_lease_conn_close(link.fd);
    if (st == RDLM_OK)
        st = (rdlm_status_t)call.reply.status;
    if (st != RDLM_OK && st != RDLM_ERR_NO_SPACE) {
        /* The caller (rdlmctl) reports unreachable replicas itself. */
        rdlm_debug("lease: status of %s: %s", address, rdlm_status_name(st));
        return st == RDLM_ERR_PROTOCOL || st == RDLM_ERR_CORRUPT ? st
                                                                 : RDLM_ERR_UNAVAILABLE;
    }
    *status_p = (rdlm_authority_status_t){.is_leader = call.reply.is_leader,
                                          .term = call.reply.term,
                                          .leader_id = call.reply.leader_id,
                                          .epoch = call.reply.epoch,
                                          .sessions = call.reply.sessions,
                                          .locks = call.reply.locks,
                                          .commit = call.reply.commit};
    snprintf(status_p->leader_addr, sizeof(status_p->leader_addr), "%s",
             call.reply.leader_addr);
    return st; /* RDLM_ERR_NO_SPACE: answered, and its disk refuses writes */
}

rdlm_status_t rdlm_session_stats(rdlm_session_h session, rdlm_session_stats_t *stats_p)
{
    if (session == NULL || stats_p == NULL) {
        rdlm_warn("rdlm_session_stats: NULL argument");
        return RDLM_ERR_INVALID_ARG;
    }
    if (!rdlm_session_open_handle(session, __func__))
        return RDLM_ERR_BAD_HANDLE;
    stats_p->requests = rdlm_load(&session->requests, RDLM_RELAXED);
    stats_p->renewals = rdlm_load(&session->renewals, RDLM_RELAXED);
    return RDLM_OK;
}
