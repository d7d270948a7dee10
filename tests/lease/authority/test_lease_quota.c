/* Quotas per identity (core/lease/authority/sm.c, server.c; docs/lease-authority.md
 * "Quotas").
 *
 * Proves, on the state machine: one identity ((uid, job) namespace, or source
 * address) at its session quota is refused while another still opens; its queued
 * ACQUIREs are capped over all its sessions; counted OPENs leave the reserve to
 * uncounted ones (the daemon's own, so the lock homes' sessions), and the global cap
 * still holds; uncounted sessions (entries logged before identities) are not
 * limited; identities survive a snapshot, and a version-1 snapshot restores with its
 * sessions uncounted. And with a real replica and its client port on 127.0.0.1: OPENs
 * from 127.0.0.2 stop at the quota, one from 127.0.0.3 and one from the replica's own
 * address still succeed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <ftw.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <uv.h>

#include "byteorder.h"
#include "job_authority_addr.h"
#include "lease_test.h"
#include "replica.h"
#include "server.h"
#include "sm.h"
#include "wire.h"

#define IP(a, b, c, d)                                                                     \
    ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

/* ---- the state machine ---- */

/* OPEN of identity (uid, ns, src), counted or not (as the server logs it). */
/* The quota the last refused command named (rdlmd's log line says it). */
static const char *last_quota;

static rdlm_status_t open_as(rdlm_lease_sm_t *sm, uint64_t nonce, uint32_t uid,
                             const char *ns, uint32_t src, int counted, uint64_t *id_p)
{
    rdlm_lease_cmd_t c = lt_cmd(RDLM_LEASE_OP_OPEN, 0, 0, ns[0] != '\0' ? ns : NULL);
    rdlm_lease_result_t r;

    c.nonce = nonce;
    c.uid = uid;
    c.token = src;
    c.flags = counted ? RDLM_LEASE_OPEN_COUNTED : 0;
    r = lt_apply(sm, &c);
    last_quota = r.quota;
    if (id_p != NULL) {
        *id_p = r.session;
    }
    return r.status;
}

/* What the leader's check and then apply answer (they must agree on a refusal). */
static rdlm_status_t check_apply(rdlm_lease_sm_t *sm, const rdlm_lease_cmd_t *c)
{
    rdlm_lease_result_t res;
    rdlm_status_t checked = rdlm_lease_sm_check(sm, c, &res);
    rdlm_status_t applied = lt_apply(sm, c).status;

    if (checked != RDLM_OK) {
        assert_int_equal(applied, checked);
    }
    assert_true((checked == RDLM_ERR_QUOTA) == (res.quota != NULL));
    last_quota = res.quota;
    return applied;
}

/* A counted OPEN refused with RDLM_ERR_QUOTA, by check and apply, changing nothing. */
static void assert_open_refused(rdlm_lease_sm_t *sm, uint64_t nonce, uint32_t uid,
                                const char *ns, uint32_t src, const char *quota)
{
    rdlm_lease_cmd_t c = lt_cmd(RDLM_LEASE_OP_OPEN, 0, 0, ns[0] != '\0' ? ns : NULL);
    uint64_t h = rdlm_lease_sm_hash(sm);

    c.nonce = nonce;
    c.uid = uid;
    c.token = src;
    c.flags = RDLM_LEASE_OPEN_COUNTED;
    assert_int_equal(check_apply(sm, &c), RDLM_ERR_QUOTA);
    assert_string_equal(last_quota, quota);
    assert_true(rdlm_lease_sm_hash(sm) == h);
}

static rdlm_status_t acquire(rdlm_lease_sm_t *sm, uint64_t ses, uint64_t seq,
                             const char *name)
{
    rdlm_lease_cmd_t c = lt_cmd(RDLM_LEASE_OP_ACQUIRE, ses, seq, name);

    c.timeout_ms = 1000;
    return check_apply(sm, &c);
}

static void one_identity_at_its_session_quota_does_not_stop_another(void **state)
{
    const rdlm_lease_limits_t lim = {.max_sessions = 64, .max_sessions_per_identity = 3};
    rdlm_lease_sm_t *sm = NULL;
    rdlm_lease_cmd_t close_a1;
    uint64_t a1;

    (void)state;
    assert_int_equal(rdlm_lease_sm_create(&lim, &sm), RDLM_OK);
    /* Without authentication: the source address. */
    assert_int_equal(open_as(sm, 1, 0, "", IP(10, 0, 0, 2), 1, &a1), RDLM_OK);
    assert_int_equal(open_as(sm, 2, 0, "", IP(10, 0, 0, 2), 1, NULL), RDLM_OK);
    assert_int_equal(open_as(sm, 3, 0, "", IP(10, 0, 0, 2), 1, NULL), RDLM_OK);
    assert_open_refused(sm, 4, 0, "", IP(10, 0, 0, 2), "--max-sessions-per-identity");
    assert_int_equal(open_as(sm, 5, 0, "", IP(10, 0, 0, 3), 1, NULL), RDLM_OK);
    /* A re-sent OPEN (same nonce) is its session, not a new one. */
    assert_int_equal(open_as(sm, 3, 0, "", IP(10, 0, 0, 2), 1, NULL), RDLM_OK);
    /* Under MUNGE: uid and job. */
    for (uint64_t n = 10; n < 13; n++) {
        assert_int_equal(open_as(sm, n, 1000, "1000/jobA", 0, 1, NULL), RDLM_OK);
    }
    assert_open_refused(sm, 13, 1000, "1000/jobA", 0, "--max-sessions-per-identity");
    assert_int_equal(open_as(sm, 14, 1000, "1000/jobB", 0, 1, NULL), RDLM_OK);
    assert_int_equal(open_as(sm, 15, 1001, "1001/jobA", 0, 1, NULL), RDLM_OK);
    /* A closed session gives its identity room again. */
    close_a1 = lt_cmd(RDLM_LEASE_OP_CLOSE, a1, 1, NULL);
    assert_int_equal(lt_apply(sm, &close_a1).status, RDLM_OK);
    assert_int_equal(open_as(sm, 4, 0, "", IP(10, 0, 0, 2), 1, NULL), RDLM_OK);
    rdlm_lease_sm_destroy(sm);
}

static void counted_opens_leave_the_reserve_and_the_global_cap_holds(void **state)
{
    const rdlm_lease_limits_t lim = {.max_sessions = 24, .max_sessions_per_identity = 100};
    rdlm_lease_sm_t *sm = NULL;
    uint64_t n = 1;

    (void)state;
    assert_int_equal(rdlm_lease_sm_create(&lim, &sm), RDLM_OK);
    /* Many identities together: counted ones stop RDLM_LEASE_SESSIONS_RESERVED short. */
    for (; n <= 24 - RDLM_LEASE_SESSIONS_RESERVED; n++) {
        assert_int_equal(open_as(sm, n, 0, "", IP(10, 0, 1, (unsigned)n), 1, NULL),
                         RDLM_OK);
    }
    assert_open_refused(sm, n, 0, "", IP(10, 0, 2, 1),
                        "--max-sessions (less the reserve for rdlmd's own sessions)");
    /* The daemon's own (uncounted) OPENs use the reserve, up to max_sessions. */
    for (; n <= 24; n++) {
        assert_int_equal(open_as(sm, n, 0, "", IP(127, 0, 0, 1), 0, NULL), RDLM_OK);
    }
    assert_int_equal(open_as(sm, n, 0, "", IP(127, 0, 0, 1), 0, NULL), RDLM_ERR_QUOTA);
    assert_string_equal(last_quota, "--max-sessions");
    assert_int_equal(rdlm_lease_sm_session_count(sm), 24);
    rdlm_lease_sm_destroy(sm);
}

static void uncounted_sessions_have_no_identity_quota(void **state)
{
    const rdlm_lease_limits_t lim = {
        .max_sessions = 64, .max_sessions_per_identity = 2, .max_waits_per_identity = 1};
    rdlm_lease_sm_t *sm = NULL;
    uint64_t ids[4], holder;

    (void)state;
    assert_int_equal(rdlm_lease_sm_create(&lim, &sm), RDLM_OK);
    assert_int_equal(open_as(sm, 100, 0, "", IP(10, 0, 0, 9), 1, &holder), RDLM_OK);
    assert_int_equal(acquire(sm, holder, 1, "l"), RDLM_OK);
    for (int i = 0; i < 4; i++) { /* as logged before identities existed: flags 0 */
        assert_int_equal(open_as(sm, (uint64_t)i + 1, 0, "", 0, 0, &ids[i]), RDLM_OK);
        assert_int_equal(acquire(sm, ids[i], 1, "l"), RDLM_INPROGRESS);
    }
    rdlm_lease_sm_destroy(sm);
}

static void queued_acquires_are_capped_per_identity_over_its_sessions(void **state)
{
    const rdlm_lease_limits_t lim = {.max_sessions = 64, .max_waits_per_identity = 2};
    rdlm_lease_sm_t *sm = NULL;
    uint64_t h, a[3], b, hash;
    rdlm_lease_cmd_t cancel;

    (void)state;
    assert_int_equal(rdlm_lease_sm_create(&lim, &sm), RDLM_OK);
    assert_int_equal(open_as(sm, 1, 0, "", IP(10, 0, 0, 1), 1, &h), RDLM_OK);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(open_as(sm, (uint64_t)i + 2, 1000, "1000/j", 0, 1, &a[i]),
                         RDLM_OK);
    }
    assert_int_equal(open_as(sm, 9, 1001, "1001/j", 0, 1, &b), RDLM_OK);
    assert_int_equal(acquire(sm, h, 1, "l1"), RDLM_OK);
    assert_int_equal(acquire(sm, h, 2, "l2"), RDLM_OK);
    assert_int_equal(acquire(sm, a[0], 1, "l1"), RDLM_INPROGRESS);
    assert_int_equal(acquire(sm, a[1], 1, "l2"), RDLM_INPROGRESS);
    hash = rdlm_lease_sm_hash(sm);
    assert_int_equal(acquire(sm, a[2], 1, "l1"), RDLM_ERR_QUOTA); /* a third wait */
    assert_string_equal(last_quota, "--max-parked-per-identity");
    assert_true(rdlm_lease_sm_hash(sm) == hash);
    assert_int_equal(acquire(sm, a[2], 1, "free"), RDLM_OK);    /* a grant is no wait */
    assert_int_equal(acquire(sm, b, 1, "l1"), RDLM_INPROGRESS); /* another identity */
    cancel = lt_cmd(RDLM_LEASE_OP_CANCEL, a[0], 1, "l1");
    assert_int_equal(lt_apply(sm, &cancel).status, RDLM_OK);
    assert_int_equal(acquire(sm, a[2], 2, "l1"), RDLM_INPROGRESS);
    rdlm_lease_sm_destroy(sm);
}

static void identities_survive_a_snapshot(void **state)
{
    const rdlm_lease_limits_t lim = {.max_sessions = 64, .max_sessions_per_identity = 2};
    rdlm_lease_sm_t *sm = NULL, *copy = NULL;
    void *snap;
    size_t len;

    (void)state;
    assert_int_equal(rdlm_lease_sm_create(&lim, &sm), RDLM_OK);
    assert_int_equal(rdlm_lease_sm_create(&lim, &copy), RDLM_OK);
    assert_int_equal(open_as(sm, 1, 0, "", IP(10, 0, 0, 2), 1, NULL), RDLM_OK);
    assert_int_equal(open_as(sm, 2, 0, "", IP(10, 0, 0, 2), 1, NULL), RDLM_OK);
    assert_int_equal(open_as(sm, 3, 0, "", IP(10, 0, 0, 2), 0, NULL), RDLM_OK);
    assert_int_equal(rdlm_lease_sm_snapshot(sm, &snap, &len), RDLM_OK);
    assert_int_equal(rdlm_lease_sm_restore(copy, snap, len), RDLM_OK);
    free(snap);
    assert_true(rdlm_lease_sm_hash(copy) == rdlm_lease_sm_hash(sm));
    assert_open_refused(copy, 4, 0, "", IP(10, 0, 0, 2), "--max-sessions-per-identity");
    assert_int_equal(open_as(copy, 5, 0, "", IP(10, 0, 0, 3), 1, NULL), RDLM_OK);
    rdlm_lease_sm_destroy(sm);
    rdlm_lease_sm_destroy(copy);
}

static uint64_t fnv(const uint8_t *p, size_t n)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);

    for (size_t i = 0; i < n; i++) {
        h = (h ^ p[i]) * UINT64_C(0x100000001b3);
    }
    return h;
}

static void version_1_snapshot_restores_with_its_sessions_uncounted(void **state)
{
    const rdlm_lease_limits_t lim = {.max_sessions = 64, .max_sessions_per_identity = 1};
    rdlm_lease_sm_t *sm = NULL;
    uint8_t v1[128], *p = v1;

    (void)state;
    /* Header: "RDLS", version 1, epoch 1, grant_seq 0, next_session 2, 1 session, no
     * lock; the session: id 1, nonce 7, last_seq 0, ttl 5000, uid 0, gid 0, ns "". */
    p = rdlm_le_put32(p, 0x534c4452u);
    p = rdlm_le_put16(p, 1);
    p = rdlm_le_put16(p, 0);
    p = rdlm_le_put64(p, 1);
    p = rdlm_le_put64(p, 0);
    p = rdlm_le_put64(p, 2);
    p = rdlm_le_put32(p, 1);
    p = rdlm_le_put32(p, 0);
    p = rdlm_le_put64(p, 1);
    p = rdlm_le_put64(p, 7);
    p = rdlm_le_put64(p, 0);
    p = rdlm_le_put32(p, 5000);
    p = rdlm_le_put32(p, 0);
    p = rdlm_le_put32(p, 0);
    p = rdlm_le_put16(p, 0);
    p = rdlm_le_put64(p, fnv(v1, (size_t)(p - v1)));
    assert_int_equal(rdlm_lease_sm_create(&lim, &sm), RDLM_OK);
    assert_int_equal(rdlm_lease_sm_restore(sm, v1, (size_t)(p - v1)), RDLM_OK);
    assert_int_equal(rdlm_lease_sm_session_count(sm), 1);
    /* Its session has identity (0, "", 0) but is uncounted: that identity opens one. */
    assert_int_equal(open_as(sm, 8, 0, "", 0, 1, NULL), RDLM_OK);
    assert_open_refused(sm, 9, 0, "", 0, "--max-sessions-per-identity");
    rdlm_lease_sm_destroy(sm);
}

/* ---- a replica and its client port ---- */

typedef struct authority {
    uv_loop_t loop;
    uv_async_t stop;
    rdlm_lease_replica_t *rep;
    rdlm_lease_server_t *srv;
    pthread_t thread;
    char dir[64];
    rdlm_lease_peer_t peer;
} authority_t;

static void authority_stop_cb(uv_async_t *async)
{
    authority_t *a = async->data;

    rdlm_lease_server_stop(a->srv);
    rdlm_lease_replica_stop(a->rep);
    uv_close((uv_handle_t *)async, NULL);
}

static void *authority_main(void *arg)
{
    authority_t *a = arg;

    uv_run(&a->loop, UV_RUN_DEFAULT);
    return NULL;
}

/* One replica on 127.0.0.1 with limits, its client port without authentication. */
static void authority_start(authority_t *a, const rdlm_lease_limits_t *limits)
{
    rdlm_lease_port_t raft, client;
    rdlm_lease_replica_params_t rp = {.id = 1,
                                      .peers = &a->peer,
                                      .n_peers = 1,
                                      .data_dir = a->dir,
                                      .election_timeout_ms = 200,
                                      .heartbeat_ms = 20,
                                      .snapshot_threshold = 1024,
                                      .limits = *limits};
    rdlm_lease_server_params_t sp = {.client_addr = a->peer.client_addr,
                                     .auth = RDLM_LEASE_AUTH_NONE,
                                     .max_connections = 64,
                                     .max_connections_per_peer = 64,
                                     .frame_timeout_ms = 5000,
                                     .idle_timeout_ms = 60000};

    snprintf(a->dir, sizeof(a->dir), "/tmp/rdlm-quota.XXXXXX");
    assert_non_null(mkdtemp(a->dir));
    assert_int_equal(rdlm_lease_port_reserve("127.0.0.1", &raft), RDLM_OK);
    assert_int_equal(rdlm_lease_port_reserve("127.0.0.1", &client), RDLM_OK);
    a->peer.id = 1;
    snprintf(a->peer.raft_addr, sizeof(a->peer.raft_addr), "%s", raft.addr);
    snprintf(a->peer.client_addr, sizeof(a->peer.client_addr), "%s", client.addr);
    assert_int_equal(uv_loop_init(&a->loop), 0);
    assert_int_equal(rdlm_lease_replica_start(&a->loop, &rp, &a->rep), RDLM_OK);
    assert_int_equal(rdlm_lease_server_start(&a->loop, a->rep, &sp, &a->srv), RDLM_OK);
    rdlm_lease_port_release(&raft);
    rdlm_lease_port_release(&client);
    assert_int_equal(uv_async_init(&a->loop, &a->stop, authority_stop_cb), 0);
    a->stop.data = a;
    assert_int_equal(pthread_create(&a->thread, NULL, authority_main, a), 0);
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void authority_stop(authority_t *a)
{
    uv_async_send(&a->stop);
    pthread_join(a->thread, NULL);
    rdlm_lease_server_destroy(a->srv);
    assert_int_equal(uv_loop_close(&a->loop), 0);
    nftw(a->dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/* Read n bytes (bounded by the socket's receive timeout). */
static void recv_all(int fd, uint8_t *buf, size_t n)
{
    for (size_t got = 0; got < n;) {
        ssize_t k = recv(fd, buf + got, n - got, 0);
        assert_true(k > 0);
        got += (size_t)k;
    }
}

/* One request from source address src to a's client port; the reply's status. */
static rdlm_status_t request_from(const authority_t *a, const char *src,
                                  const rdlm_lease_cmd_t *cmd)
{
    uint8_t out[RDLM_WIRE_HEADER + RDLM_LEASE_CMD_MAX];
    uint8_t in[RDLM_WIRE_HEADER + RDLM_WIRE_MAX_PAYLOAD];
    size_t n = rdlm_lease_cmd_encode(cmd, out + RDLM_WIRE_HEADER, RDLM_LEASE_CMD_MAX);
    struct sockaddr_in me = {.sin_family = AF_INET}, to = {.sin_family = AF_INET};
    struct timeval tv = {.tv_sec = 5};
    char host[32];
    unsigned port;
    rdlm_lease_reply_t r;
    uint32_t len;
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    assert_true(fd >= 0 && n > 0);
    assert_int_equal(sscanf(a->peer.client_addr, "%31[^:]:%u", host, &port), 2);
    assert_int_equal(inet_pton(AF_INET, src, &me.sin_addr), 1);
    assert_int_equal(inet_pton(AF_INET, host, &to.sin_addr), 1);
    to.sin_port = htons((uint16_t)port);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    assert_int_equal(bind(fd, (struct sockaddr *)&me, sizeof(me)), 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&to, sizeof(to)), 0);
    rdlm_wire_header_encode(out, RDLM_WIRE_REQUEST, (uint32_t)n);
    assert_int_equal(send(fd, out, RDLM_WIRE_HEADER + n, MSG_NOSIGNAL),
                     (ssize_t)(RDLM_WIRE_HEADER + n));
    recv_all(fd, in, RDLM_WIRE_HEADER);
    assert_int_equal(rdlm_wire_header_decode(in, RDLM_WIRE_REPLY, &len), RDLM_OK);
    recv_all(fd, in + RDLM_WIRE_HEADER, len);
    close(fd);
    assert_int_equal(rdlm_wire_reply_decode(in + RDLM_WIRE_HEADER, len, &r), RDLM_OK);
    return (rdlm_status_t)r.status;
}

/* OPEN from src with nonce, retried (same nonce: the same session) while the replica
 * is not a ready leader yet, for at most 5 s. */
static rdlm_status_t open_from(const authority_t *a, const char *src, uint64_t nonce)
{
    rdlm_lease_cmd_t c = lt_cmd(RDLM_LEASE_OP_OPEN, 0, 0, NULL);
    rdlm_status_t s = RDLM_ERR_NOT_LEADER;

    c.nonce = nonce;
    for (int i = 0; i < 100 && (s == RDLM_ERR_NOT_LEADER || s == RDLM_ERR_UNAVAILABLE);
         i++) {
        s = request_from(a, src, &c);
        if (s == RDLM_ERR_NOT_LEADER || s == RDLM_ERR_UNAVAILABLE) {
            nanosleep(&(struct timespec){.tv_nsec = 50000000}, NULL);
        }
    }
    return s;
}

static void server_counts_sessions_per_source_address(void **state)
{
    const rdlm_lease_limits_t lim = {.max_sessions = 32, .max_sessions_per_identity = 4};
    authority_t a;
    uint64_t nonce = 1;

    (void)state;
    memset(&a, 0, sizeof(a));
    authority_start(&a, &lim);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(open_from(&a, "127.0.0.2", nonce++), RDLM_OK);
    }
    assert_int_equal(open_from(&a, "127.0.0.2", nonce++), RDLM_ERR_QUOTA);
    assert_int_equal(open_from(&a, "127.0.0.3", nonce++), RDLM_OK);
    /* The replica's own address (where the lock homes connect from) is not counted. */
    for (int i = 0; i < 6; i++) {
        assert_int_equal(open_from(&a, "127.0.0.1", nonce++), RDLM_OK);
    }
    authority_stop(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_identity_at_its_session_quota_does_not_stop_another),
        cmocka_unit_test(counted_opens_leave_the_reserve_and_the_global_cap_holds),
        cmocka_unit_test(uncounted_sessions_have_no_identity_quota),
        cmocka_unit_test(queued_acquires_are_capped_per_identity_over_its_sessions),
        cmocka_unit_test(identities_survive_a_snapshot),
        cmocka_unit_test(version_1_snapshot_restores_with_its_sessions_uncounted),
        cmocka_unit_test(server_counts_sessions_per_source_address),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
