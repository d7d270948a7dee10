/*
 * The lease client (core/lease/client.c) against scripted fake replicas on loopback:
 * leader following, retries that reuse the seq and the OPEN nonce, renewals, loss of
 * the lease (validity passing, LEASE_EXPIRED answers), abandoned acquires cancelled,
 * the lock delay, STATUS fields. A fake replica is one thread polling its listener
 * and connections; each request is logged and answered by the test's script (reply,
 * drop the connection, or stay silent). cmocka asserts on the main thread only.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rdlm.h>
#include <rdlm/lease.h>

#include "atomics.h"
#include "clock.h"
#include "cmd.h"
#include "conn.h"
#include "wire.h"

#define MS 1000000ull
#define FAKE_LOG 256
#define FAKE_CONNS 8

typedef enum { FAKE_REPLY, FAKE_DROP, FAKE_SILENT } fake_action_t;

/* A request as the fake received it. */
typedef struct fake_req {
    rdlm_lease_cmd_t cmd; /* cred not kept */
    uint64_t cred_hash;   /* FNV-1a of the credential, 0 if none */
    uint64_t at;          /* arrival time */
} fake_req_t;

struct fake;
/* Answer the n-th request (0-based, over all connections) of the fake. */
typedef fake_action_t (*fake_script_t)(struct fake *f, unsigned n,
                                       const rdlm_lease_cmd_t *cmd, rdlm_lease_reply_t *r);

typedef struct fake {
    int lfd;
    char addr[32];
    fake_script_t script;
    char leader[32]; /* for scripts that redirect */
    pthread_t thread;
    rdlm_atomic_u32_t stop;
    pthread_mutex_t mu;
    fake_req_t log[FAKE_LOG];
    unsigned n_log;
    int conns[FAKE_CONNS];
} fake_t;

static uint64_t fnv(const uint8_t *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return n == 0 ? 0 : h;
}

static void fake_serve(fake_t *f, int k)
{
    uint8_t buf[RDLM_WIRE_MAX_PAYLOAD];
    rdlm_lease_reply_t r;
    rdlm_lease_cmd_t cmd;
    fake_action_t act;
    uint32_t len;
    unsigned n;

    if (rdlm_lease_conn_recv(f->conns[k], RDLM_WIRE_REQUEST, buf, &len,
                             rdlm_clock_deadline(1000 * MS)) != RDLM_OK ||
        rdlm_lease_cmd_decode(buf, len, &cmd) != RDLM_OK) {
        goto drop;
    }
    memset(&r, 0, sizeof(r));
    r.seq = cmd.seq;
    r.is_leader = 1;
    r.ttl_ms = cmd.ttl_ms;
    pthread_mutex_lock(&f->mu);
    n = f->n_log;
    if (n < FAKE_LOG) {
        f->log[n] = (fake_req_t){.cmd = cmd,
                                 .cred_hash = fnv(cmd.cred, cmd.cred_len),
                                 .at = rdlm_clock_now_ns()};
        f->log[n].cmd.cred = NULL;
        f->n_log++;
    }
    act = f->script(f, n, &cmd, &r);
    pthread_mutex_unlock(&f->mu);
    if (act == FAKE_SILENT)
        return;
    if (act == FAKE_REPLY) {
        len = (uint32_t)rdlm_wire_reply_encode(&r, buf, sizeof(buf));
        if (len != 0 && rdlm_lease_conn_send(f->conns[k], RDLM_WIRE_REPLY, buf, len,
                                             rdlm_clock_deadline(1000 * MS)) == RDLM_OK)
            return;
    }
drop:
    close(f->conns[k]);
    f->conns[k] = -1;
}

static void *fake_main(void *arg)
{
    fake_t *f = arg;

    while (!rdlm_load(&f->stop, RDLM_ACQUIRE)) {
        struct pollfd p[FAKE_CONNS + 1] = {{.fd = f->lfd, .events = POLLIN}};

        for (int k = 0; k < FAKE_CONNS; k++)
            p[k + 1] = (struct pollfd){.fd = f->conns[k], .events = POLLIN};
        if (poll(p, FAKE_CONNS + 1, 20) <= 0)
            continue;
        if (p[0].revents & POLLIN) {
            int fd = accept4(f->lfd, NULL, NULL, SOCK_NONBLOCK);
            for (int k = 0; fd >= 0 && k < FAKE_CONNS; k++) {
                if (f->conns[k] < 0) {
                    f->conns[k] = fd;
                    fd = -1;
                }
            }
            if (fd >= 0)
                close(fd);
        }
        for (int k = 0; k < FAKE_CONNS; k++) {
            if (f->conns[k] >= 0 && (p[k + 1].revents & (POLLIN | POLLHUP | POLLERR)))
                fake_serve(f, k);
        }
    }
    return NULL;
}

static fake_t *fake_start(fake_script_t script)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001)};
    socklen_t sl = sizeof(sa);
    fake_t *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    f->script = script;
    f->lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    assert_true(f->lfd >= 0);
    assert_int_equal(bind(f->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(getsockname(f->lfd, (struct sockaddr *)&sa, &sl), 0);
    assert_int_equal(listen(f->lfd, 16), 0);
    snprintf(f->addr, sizeof(f->addr), "127.0.0.1:%u", (unsigned)ntohs(sa.sin_port));
    for (int k = 0; k < FAKE_CONNS; k++)
        f->conns[k] = -1;
    pthread_mutex_init(&f->mu, NULL);
    assert_int_equal(pthread_create(&f->thread, NULL, fake_main, f), 0);
    return f;
}

static void fake_stop(fake_t *f)
{
    rdlm_store(&f->stop, 1, RDLM_RELEASE);
    pthread_join(f->thread, NULL);
    for (int k = 0; k < FAKE_CONNS; k++) {
        if (f->conns[k] >= 0)
            close(f->conns[k]);
    }
    close(f->lfd);
    pthread_mutex_destroy(&f->mu);
    free(f);
}

/* Copy of the requests with op (all ops if 0) logged so far; returns how many. */
static unsigned fake_requests(fake_t *f, unsigned op, fake_req_t *out, unsigned cap)
{
    unsigned m = 0;

    pthread_mutex_lock(&f->mu);
    for (unsigned i = 0; i < f->n_log; i++) {
        if ((op == 0 || f->log[i].cmd.op == op) && m < cap)
            out[m++] = f->log[i];
    }
    pthread_mutex_unlock(&f->mu);
    return m;
}

static unsigned fake_count(fake_t *f, unsigned op)
{
    fake_req_t tmp[FAKE_LOG];
    return fake_requests(f, op, tmp, FAKE_LOG);
}

/* Session ids the scripts hand out. */
#define SID 42

/* A leader that answers everything OK: OPEN -> SID, EPOCH -> 7, ACQUIRE -> token. */
static fake_action_t script_ok(fake_t *f, unsigned n, const rdlm_lease_cmd_t *cmd,
                               rdlm_lease_reply_t *r)
{
    (void)f;
    (void)n;
    r->status = RDLM_OK;
    r->session = cmd->op == RDLM_LEASE_OP_OPEN ? SID : cmd->session;
    r->epoch = 7;
    r->token = 1000 + cmd->seq;
    return FAKE_REPLY;
}

/* A follower: NOT_LEADER naming f->leader; STATUS answered, as every replica does. */
static fake_action_t script_follower(fake_t *f, unsigned n, const rdlm_lease_cmd_t *cmd,
                                     rdlm_lease_reply_t *r)
{
    if (cmd->op == RDLM_LEASE_OP_STATUS)
        return script_ok(f, n, cmd, r);
    r->status = RDLM_ERR_NOT_LEADER;
    r->is_leader = 0;
    snprintf(r->leader_addr, sizeof(r->leader_addr), "%s", f->leader);
    return FAKE_REPLY;
}

static rdlm_session_params_t params_ttl(uint32_t ttl_ms)
{
    return (rdlm_session_params_t){.field_mask =
                                       RDLM_SESSION_FIELD_TTL | RDLM_SESSION_FIELD_TIMEOUT,
                                   .ttl_ms = ttl_ms,
                                   .connect_timeout_ms = 3000};
}

/* params_ttl(ttl_ms) with the lost callback cb(arg). */
static rdlm_session_params_t params_lost(uint32_t ttl_ms, rdlm_lease_lost_func_t cb,
                                         void *arg)
{
    rdlm_session_params_t p = params_ttl(ttl_ms);

    p.field_mask |= RDLM_SESSION_FIELD_LOST_CB;
    p.lost_cb = cb;
    p.lost_arg = arg;
    return p;
}

static void wait_until_count(fake_t *f, unsigned op, unsigned n, uint64_t limit_ns)
{
    uint64_t end = rdlm_clock_deadline(limit_ns);

    while (fake_count(f, op) < n && rdlm_clock_now_ns() < end)
        usleep(5000);
}

static void open_follows_not_leader_to_the_leader(void **state)
{
    fake_t *leader = fake_start(script_ok), *follower = fake_start(script_follower);
    rdlm_session_params_t p = params_ttl(600);
    fake_req_t req[FAKE_LOG];
    char authority[80];
    rdlm_session_h s;
    uint64_t epoch = 0;

    (void)state;
    snprintf(follower->leader, sizeof(follower->leader), "%s", leader->addr);
    snprintf(authority, sizeof(authority), "%s,%s", follower->addr, leader->addr);
    assert_int_equal(rdlm_session_open(authority, &p, &s), RDLM_OK);
    assert_int_equal(rdlm_session_id(s), SID);
    assert_int_equal(rdlm_session_check(s), RDLM_OK);
    assert_int_equal(rdlm_session_new_epoch(s, &epoch), RDLM_OK);
    assert_int_equal(epoch, 7);
    /* Renewals (every TTL/3) go to the leader as well. */
    wait_until_count(leader, RDLM_LEASE_OP_RENEW, 2, 2000 * MS);
    assert_true(fake_count(leader, RDLM_LEASE_OP_RENEW) >= 2);
    assert_int_equal(fake_requests(leader, RDLM_LEASE_OP_RENEW, req, FAKE_LOG) > 0, 1);
    assert_int_equal(req[0].cmd.session, SID);
    assert_int_equal(req[0].cmd.seq, 0);
    assert_int_equal(rdlm_session_check(s), RDLM_OK);
    rdlm_session_close(s);
    /* Only the OPEN went to the follower (beside the STATUS asking for the authority
     * id, with MUNGE: a credential is bound to it). */
    assert_int_equal(fake_count(follower, 0) - fake_count(follower, RDLM_LEASE_OP_STATUS),
                     1);
    assert_int_equal(fake_requests(leader, RDLM_LEASE_OP_CLOSE, req, FAKE_LOG), 1);
    assert_int_equal(req[0].cmd.session, SID);
    fake_stop(leader);
    fake_stop(follower);
}

/* Requests with op logged so far, the current one included (f->mu held: scripts). */
static unsigned count_locked(const fake_t *f, unsigned op)
{
    unsigned m = 0;

    for (unsigned i = 0; i < f->n_log; i++)
        m += f->log[i].cmd.op == op;
    return m;
}

/* Drops the connection at the first OPEN and at the first RELEASE. */
static fake_action_t script_lose_firsts(fake_t *f, unsigned n, const rdlm_lease_cmd_t *cmd,
                                        rdlm_lease_reply_t *r)
{
    if ((cmd->op == RDLM_LEASE_OP_OPEN || cmd->op == RDLM_LEASE_OP_RELEASE) &&
        count_locked(f, cmd->op) == 1)
        return FAKE_DROP;
    return script_ok(f, n, cmd, r);
}

static void lost_replies_are_retried_with_the_same_nonce_and_seq(void **state)
{
    fake_t *f = fake_start(script_lose_firsts);
    rdlm_session_params_t p = params_ttl(5000);
    fake_req_t req[FAKE_LOG];
    rdlm_session_h s;
    uint64_t epoch;

    (void)state;
    assert_int_equal(rdlm_session_open(f->addr, &p, &s), RDLM_OK);
    assert_int_equal(fake_requests(f, RDLM_LEASE_OP_OPEN, req, FAKE_LOG), 2);
    assert_true(req[0].cmd.nonce != 0);
    assert_int_equal(req[0].cmd.nonce, req[1].cmd.nonce);
    assert_int_equal(req[0].cmd.ttl_ms, 5000);
    if (req[0].cred_hash != 0) /* a fresh credential per attempt: munged refuses replays */
        assert_true(req[0].cred_hash != req[1].cred_hash);
    else
        print_message("note: no MUNGE credential here (munged not running?)\n");
    assert_int_equal(rdlm_session_unlock(s, "res", 1234), RDLM_OK);
    assert_int_equal(fake_requests(f, RDLM_LEASE_OP_RELEASE, req, FAKE_LOG), 2);
    assert_true(req[0].cmd.seq != 0);
    assert_int_equal(req[0].cmd.seq, req[1].cmd.seq);
    assert_int_equal(req[1].cmd.token, 1234);
    assert_string_equal(req[1].cmd.name, "res");
    assert_int_equal(rdlm_session_new_epoch(s, &epoch), RDLM_OK);
    assert_int_equal(fake_requests(f, RDLM_LEASE_OP_EPOCH, req + 2, FAKE_LOG - 2), 1);
    assert_int_equal(req[2].cmd.seq, req[0].cmd.seq + 1);
    rdlm_session_close(s);
    fake_stop(f);
}

/* NOT_LEADER without a leader address: the client goes round robin. STATUS is
 * answered, as every replica does. */
static fake_action_t script_lost_follower(fake_t *f, unsigned n,
                                          const rdlm_lease_cmd_t *cmd,
                                          rdlm_lease_reply_t *r)
{
    if (cmd->op == RDLM_LEASE_OP_STATUS)
        return script_ok(f, n, cmd, r);
    r->status = RDLM_ERR_NOT_LEADER;
    r->is_leader = 0;
    return FAKE_REPLY;
}

static void not_leader_without_address_tries_the_next_replica(void **state)
{
    fake_t *a = fake_start(script_lost_follower), *b = fake_start(script_ok);
    rdlm_session_params_t p = params_ttl(5000);
    char authority[80];
    rdlm_session_h s;

    (void)state;
    snprintf(authority, sizeof(authority), "%s,%s", a->addr, b->addr);
    assert_int_equal(rdlm_session_open(authority, &p, &s), RDLM_OK);
    assert_int_equal(fake_count(a, RDLM_LEASE_OP_OPEN), 1);
    assert_int_equal(fake_count(b, RDLM_LEASE_OP_OPEN), 1);
    rdlm_session_close(s);
    fake_stop(a);
    fake_stop(b);
}

typedef struct lost_record {
    rdlm_atomic_u32_t calls;
    rdlm_atomic_u64_t at;
} lost_record_t;

static void on_lost(void *arg, rdlm_session_h s)
{
    lost_record_t *rec = arg;

    (void)s;
    rdlm_store(&rec->at, rdlm_clock_now_ns(), RDLM_RELAXED);
    rdlm_fetch_add(&rec->calls, 1, RDLM_RELEASE);
}

static void wait_lost(lost_record_t *rec, uint64_t limit_ns)
{
    uint64_t end = rdlm_clock_deadline(limit_ns);

    while (rdlm_load(&rec->calls, RDLM_ACQUIRE) == 0 && rdlm_clock_now_ns() < end)
        usleep(2000);
}

static fake_action_t script_renew_expired(fake_t *f, unsigned n,
                                          const rdlm_lease_cmd_t *cmd,
                                          rdlm_lease_reply_t *r)
{
    fake_action_t act = script_ok(f, n, cmd, r);

    if (cmd->op == RDLM_LEASE_OP_RENEW)
        r->status = RDLM_ERR_LEASE_EXPIRED;
    return act;
}

static void expired_answer_loses_the_lease_for_good(void **state)
{
    fake_t *f = fake_start(script_renew_expired);
    rdlm_session_params_t p;
    lost_record_t rec = {0};
    uint64_t token = 0, epoch = 0;
    rdlm_session_h s;

    (void)state;
    p = params_lost(300, on_lost, &rec);
    assert_int_equal(rdlm_session_open(f->addr, &p, &s), RDLM_OK);
    wait_lost(&rec, 3000 * MS);
    assert_int_equal(rdlm_load(&rec.calls, RDLM_ACQUIRE), 1);
    assert_int_equal(rdlm_session_check(s), RDLM_ERR_LEASE_EXPIRED);
    assert_int_equal(rdlm_session_valid_until(s), 0);
    assert_int_equal(rdlm_session_lock(s, "x", 0, &token), RDLM_ERR_LEASE_EXPIRED);
    assert_int_equal(rdlm_session_unlock(s, "x", 1), RDLM_ERR_LEASE_EXPIRED);
    assert_int_equal(rdlm_session_new_epoch(s, &epoch), RDLM_ERR_LEASE_EXPIRED);
    assert_int_equal(fake_count(f, RDLM_LEASE_OP_ACQUIRE) +
                         fake_count(f, RDLM_LEASE_OP_EPOCH) +
                         fake_count(f, RDLM_LEASE_OP_RELEASE),
                     0);
    usleep(200000);
    assert_int_equal(rdlm_load(&rec.calls, RDLM_ACQUIRE), 1);
    rdlm_session_close(s);
    assert_int_equal(fake_count(f, RDLM_LEASE_OP_CLOSE),
                     0); /* it expires, it is not closed */
    fake_stop(f);
}

static fake_action_t script_renew_silent(fake_t *f, unsigned n, const rdlm_lease_cmd_t *cmd,
                                         rdlm_lease_reply_t *r)
{
    return cmd->op == RDLM_LEASE_OP_RENEW ? FAKE_SILENT : script_ok(f, n, cmd, r);
}

/* No renewal answered: lost when TTL * (1 - drift) after the OPEN was sent has passed,
 * not before, and soon after. */
static void validity_passes_without_answered_renewals(void **state)
{
    fake_t *f = fake_start(script_renew_silent);
    rdlm_session_params_t p;
    lost_record_t rec = {0};
    rdlm_session_h s;
    uint64_t t0, valid, lost_at;

    (void)state;
    p = params_lost(300, on_lost, &rec);
    p.field_mask |= RDLM_SESSION_FIELD_DRIFT;
    p.drift_ppm = 100000;
    t0 = rdlm_clock_now_ns();
    assert_int_equal(rdlm_session_open(f->addr, &p, &s), RDLM_OK);
    valid = rdlm_session_valid_until(s);
    assert_true(valid >= t0 + 270 * MS && valid <= rdlm_clock_now_ns() + 270 * MS);
    wait_lost(&rec, 3000 * MS);
    lost_at = rdlm_load(&rec.at, RDLM_RELAXED);
    assert_int_equal(rdlm_load(&rec.calls, RDLM_ACQUIRE), 1);
    assert_true(lost_at >= valid);
    assert_true(lost_at < valid + 500 * MS);
    assert_true(fake_count(f, RDLM_LEASE_OP_RENEW) >= 1);
    rdlm_session_close(s);
    fake_stop(f);
}

static void test_hook_stops_renewals(void **state)
{
    fake_t *f = fake_start(script_ok);
    rdlm_session_params_t p;
    lost_record_t rec = {0};
    rdlm_session_h s;

    (void)state;
    p = params_lost(300, on_lost, &rec);
    setenv("RDLMTEST_LEASE_NO_RENEW", "1", 1);
    assert_int_equal(rdlm_session_open(f->addr, &p, &s), RDLM_OK);
    unsetenv("RDLMTEST_LEASE_NO_RENEW");
    wait_lost(&rec, 3000 * MS);
    assert_int_equal(rdlm_load(&rec.calls, RDLM_ACQUIRE), 1);
    assert_int_equal(fake_count(f, RDLM_LEASE_OP_RENEW), 0);
    rdlm_session_close(s);
    fake_stop(f);
}

static void close_in_lost(void *arg, rdlm_session_h s)
{
    rdlm_session_close(s);
    rdlm_store((rdlm_atomic_u32_t *)arg, 1, RDLM_RELEASE);
}

/* The lost callback may close its session (the renewal thread detaches itself). */
static void session_can_be_closed_from_its_lost_callback(void **state)
{
    fake_t *f = fake_start(script_renew_expired);
    rdlm_session_params_t p;
    rdlm_atomic_u32_t closed = 0;
    rdlm_session_h s;
    uint64_t end;

    (void)state;
    p = params_lost(300, close_in_lost, &closed);
    assert_int_equal(rdlm_session_open(f->addr, &p, &s), RDLM_OK);
    end = rdlm_clock_deadline(3000 * MS);
    while (!rdlm_load(&closed, RDLM_ACQUIRE) && rdlm_clock_now_ns() < end)
        usleep(2000);
    assert_int_equal(rdlm_load(&closed, RDLM_ACQUIRE), 1);
    usleep(50000); /* the detached thread returns */
    fake_stop(f);
}

/* Queued ACQUIREs are never answered; CANCEL is answered if f->leader is "cancel". */
static fake_action_t script_acquire_silent(fake_t *f, unsigned n,
                                           const rdlm_lease_cmd_t *cmd,
                                           rdlm_lease_reply_t *r)
{
    if (cmd->op == RDLM_LEASE_OP_ACQUIRE)
        return FAKE_SILENT;
    if (cmd->op == RDLM_LEASE_OP_CANCEL && strcmp(f->leader, "cancel") != 0)
        return FAKE_SILENT;
    return script_ok(f, n, cmd, r);
}

static void abandoned_acquire_is_cancelled(void **state)
{
    fake_t *f = fake_start(script_acquire_silent);
    rdlm_session_params_t p = params_ttl(5000);
    fake_req_t acq[FAKE_LOG], can[FAKE_LOG];
    uint64_t token = 0, t0, dt;
    rdlm_session_h s;

    (void)state;
    snprintf(f->leader, sizeof(f->leader), "cancel");
    assert_int_equal(rdlm_session_open(f->addr, &p, &s), RDLM_OK);
    t0 = rdlm_clock_now_ns();
    assert_int_equal(rdlm_session_lock(s, "q", 100 * MS, &token), RDLM_ERR_TIMEOUT);
    dt = rdlm_clock_now_ns() - t0;
    assert_true(dt >= 100 * MS && dt < 5000 * MS); /* timeout + the client's slack */
    assert_int_equal(fake_requests(f, RDLM_LEASE_OP_ACQUIRE, acq, FAKE_LOG), 1);
    assert_int_equal(acq[0].cmd.flags, 0);
    assert_true(acq[0].cmd.timeout_ms >= 1 && acq[0].cmd.timeout_ms <= 100);
    assert_int_equal(fake_requests(f, RDLM_LEASE_OP_CANCEL, can, FAKE_LOG), 1);
    assert_int_equal(can[0].cmd.seq, acq[0].cmd.seq);
    assert_string_equal(can[0].cmd.name, "q");
    assert_int_equal(can[0].cmd.session, SID);
    /* Unsure whether the cancel was applied: not RDLM_ERR_TIMEOUT. */
    snprintf(f->leader, sizeof(f->leader), "silent");
    assert_int_equal(rdlm_session_lock(s, "q", 50 * MS, &token), RDLM_ERR_UNAVAILABLE);
    assert_int_equal(fake_count(f, RDLM_LEASE_OP_CANCEL), 2);
    rdlm_session_close(s);
    fake_stop(f);
}

/* ACQUIRE: a try answers BUSY; a queued one is first answered INPROGRESS (a duplicate
 * still waiting), then granted with broken = 1 (the holder expired). */
static fake_action_t script_acquire(fake_t *f, unsigned n, const rdlm_lease_cmd_t *cmd,
                                    rdlm_lease_reply_t *r)
{
    fake_action_t act = script_ok(f, n, cmd, r);

    if (cmd->op != RDLM_LEASE_OP_ACQUIRE)
        return act;
    if (cmd->flags & RDLM_LEASE_ACQ_TRY)
        r->status = RDLM_ERR_BUSY;
    else if (count_locked(f, RDLM_LEASE_OP_ACQUIRE) == 2)
        r->status = RDLM_INPROGRESS;
    else
        r->broken = 1;
    return act;
}

static void acquire_answers_reach_the_caller(void **state)
{
    fake_t *f = fake_start(script_acquire);
    rdlm_session_params_t p = params_ttl(5000);
    fake_req_t acq[FAKE_LOG];
    uint64_t token = 0, t0;
    rdlm_session_h s;

    (void)state;
    p.field_mask |= RDLM_SESSION_FIELD_LOCK_DELAY;
    p.lock_delay_ms = 100;
    assert_int_equal(rdlm_session_open(f->addr, &p, &s), RDLM_OK);
    assert_int_equal(rdlm_session_lock(s, "a", 0, &token), RDLM_ERR_BUSY);
    t0 = rdlm_clock_now_ns();
    assert_int_equal(rdlm_session_lock(s, "a", 10000 * MS, &token), RDLM_OWNER_DEAD);
    assert_true(rdlm_clock_now_ns() - t0 >= 100 * MS); /* the lock delay */
    assert_int_equal(fake_requests(f, RDLM_LEASE_OP_ACQUIRE, acq, FAKE_LOG), 3);
    assert_int_equal(acq[0].cmd.flags, RDLM_LEASE_ACQ_TRY);
    assert_int_equal(acq[0].cmd.timeout_ms, 0);
    assert_int_equal(acq[1].cmd.flags, 0);
    assert_true(acq[1].cmd.timeout_ms > 9000 && acq[1].cmd.timeout_ms <= 10000);
    assert_int_equal(acq[1].cmd.seq, acq[2].cmd.seq); /* polled with the same seq */
    assert_true(acq[2].cmd.timeout_ms <= acq[1].cmd.timeout_ms);
    assert_int_equal(token, 1000 + acq[2].cmd.seq);
    assert_int_equal(rdlm_session_lock(s, "", 0, &token), RDLM_ERR_NAME_TOO_LONG);
    assert_int_equal(rdlm_session_lock(
                         s, "0123456789012345678901234567890123456789012345678", 0, &token),
                     RDLM_ERR_NAME_TOO_LONG);
    assert_int_equal(rdlm_session_lock(s, "tab\there", 0, &token), RDLM_ERR_INVALID_ARG);
    rdlm_session_close(s);
    fake_stop(f);
}

static fake_action_t script_status(fake_t *f, unsigned n, const rdlm_lease_cmd_t *cmd,
                                   rdlm_lease_reply_t *r)
{
    (void)f;
    (void)n;
    (void)cmd;
    *r = (rdlm_lease_reply_t){.status = RDLM_OK,
                              .is_leader = 0,
                              .term = 5,
                              .leader_id = 3,
                              .epoch = 9,
                              .sessions = 11,
                              .locks = 13,
                              .commit = 17,
                              .leader_addr = "10.1.2.3:7001"};
    return FAKE_REPLY;
}

static void authority_status_reports_the_replica_fields(void **state)
{
    fake_t *f = fake_start(script_status);
    rdlm_authority_status_t st;

    (void)state;
    assert_int_equal(rdlm_authority_status(f->addr, 1000, &st), RDLM_OK);
    assert_int_equal(st.is_leader, 0);
    assert_int_equal(st.term, 5);
    assert_int_equal(st.leader_id, 3);
    assert_string_equal(st.leader_addr, "10.1.2.3:7001");
    assert_int_equal(st.epoch, 9);
    assert_int_equal(st.sessions, 11);
    assert_int_equal(st.locks, 13);
    assert_int_equal(st.commit, 17);
    assert_int_equal(fake_count(f, RDLM_LEASE_OP_STATUS), 1);
    assert_int_equal(rdlm_authority_status("no-address", 1000, &st), RDLM_ERR_INVALID_ARG);
    fake_stop(f);
}

/* A port nobody listens on (bound, not listening: connects are refused). */
static int refused_port(char addr[32])
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001)};
    socklen_t sl = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
    snprintf(addr, 32, "127.0.0.1:%u", (unsigned)ntohs(sa.sin_port));
    return fd;
}

/* Every address refusing the connection: the OPEN gives up at once, not at its
 * deadline (nothing listens there). */
static void refusing_replicas_make_open_unavailable_at_once(void **state)
{
    rdlm_session_params_t p = params_ttl(5000);
    rdlm_authority_status_t st;
    rdlm_session_h s = NULL;
    char addr[32], two[72];
    int fd = refused_port(addr);
    uint64_t t0 = rdlm_clock_now_ns(), dt;

    (void)state;
    p.connect_timeout_ms = 3000;
    assert_int_equal(rdlm_session_open(addr, &p, &s), RDLM_ERR_UNAVAILABLE);
    dt = rdlm_clock_now_ns() - t0;
    assert_true(dt < 1000 * MS);
    assert_null(s);
    snprintf(two, sizeof(two), "%s,%s", addr, addr);
    t0 = rdlm_clock_now_ns();
    assert_int_equal(rdlm_session_open(two, &p, &s), RDLM_ERR_UNAVAILABLE);
    assert_true(rdlm_clock_now_ns() - t0 < 1000 * MS);
    assert_null(s);
    assert_int_equal(rdlm_authority_status(addr, 300, &st), RDLM_ERR_UNAVAILABLE);
    close(fd);
}

static void bad_parameters_are_refused(void **state)
{
    rdlm_session_params_t p = params_ttl(50);
    rdlm_session_h s = NULL;

    (void)state;
    assert_int_equal(rdlm_session_open("127.0.0.1:1", &p, &s), RDLM_ERR_INVALID_ARG);
    p = params_ttl(5000);
    p.field_mask |= RDLM_SESSION_FIELD_DRIFT;
    p.drift_ppm = 900000;
    assert_int_equal(rdlm_session_open("127.0.0.1:1", &p, &s), RDLM_ERR_INVALID_ARG);
    p = params_ttl(5000);
    p.field_mask |= RDLM_SESSION_FIELD_JOB;
    p.job = "a/b";
    assert_int_equal(rdlm_session_open("127.0.0.1:1", &p, &s), RDLM_ERR_INVALID_ARG);
    p = params_ttl(5000);
    p.field_mask |= RDLM_SESSION_FIELD_TIMEOUT;
    p.connect_timeout_ms = 0;
    assert_int_equal(rdlm_session_open("127.0.0.1:1", &p, &s), RDLM_ERR_INVALID_ARG);
    p = params_ttl(5000);
    p.field_mask |= 1u << 20; /* no such field */
    assert_int_equal(rdlm_session_open("127.0.0.1:1", &p, &s), RDLM_ERR_INVALID_ARG);
    assert_int_equal(rdlm_session_open("127.0.0.1", NULL, &s), RDLM_ERR_INVALID_ARG);
    assert_int_equal(rdlm_session_open(NULL, NULL, &s), RDLM_ERR_INVALID_ARG);
    assert_null(s);
    assert_int_equal(rdlm_session_check(NULL), RDLM_ERR_INVALID_ARG);
    rdlm_session_close(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(open_follows_not_leader_to_the_leader),
        cmocka_unit_test(not_leader_without_address_tries_the_next_replica),
        cmocka_unit_test(lost_replies_are_retried_with_the_same_nonce_and_seq),
        cmocka_unit_test(expired_answer_loses_the_lease_for_good),
        cmocka_unit_test(validity_passes_without_answered_renewals),
        cmocka_unit_test(test_hook_stops_renewals),
        cmocka_unit_test(session_can_be_closed_from_its_lost_callback),
        cmocka_unit_test(abandoned_acquire_is_cancelled),
        cmocka_unit_test(acquire_answers_reach_the_caller),
        cmocka_unit_test(authority_status_reports_the_replica_fields),
        cmocka_unit_test(refusing_replicas_make_open_unavailable_at_once),
        cmocka_unit_test(bad_parameters_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
