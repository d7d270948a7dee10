/*
 * The lease client's public API (rdlm/lease.h) against three real rdlmd replicas on
 * 127.0.0.1 (free ports, temporary data directories, --auth none): sessions, tokens,
 * try/blocking/FIFO/timeout acquires, NOT_OWNER, lease expiry (the test hook
 * RDLMTEST_LEASE_NO_RENEW stops a session's renewals) handing the lock on with
 * RDLM_OWNER_DEAD, epochs, STATUS, a closed session's handle refused, and a kill -9 of
 * the leader. Skipped when rdlmd is not built (RDLM_TEST_RDLMD empty). Every wait is
 * bounded; the replicas are killed and their directories removed at the end whatever
 * happened.
 *
 * Tunable: RDLMTEST_LEASE_ROUNDS (lock/unlock rounds of the token test, default 20).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rdlm.h>
#include <rdlm/lease.h>

#include "lease_session.h"
#include "rdlmd_cluster.h"

/* A lock call made on another thread; the main thread checks the outcome. */
typedef struct waiter {
    rdlm_session_h s;
    const char *name;
    uint64_t timeout_ns;
    uint64_t hold_ms;   /* then unlock */
    atomic_uint *order; /* grant counter shared by the waiters */
    pthread_t thread;
    rdlm_status_t status, unlock_status;
    uint64_t token, granted_at;
    unsigned rank; /* value of *order at the grant */
    atomic_int done;
} waiter_t;

static void *waiter_main(void *arg)
{
    waiter_t *w = arg;

    w->status = rdlm_session_lock(w->s, w->name, w->timeout_ns, &w->token);
    w->granted_at = now_ns();
    if (w->order != NULL && (w->status == RDLM_OK || w->status == RDLM_OWNER_DEAD))
        w->rank = atomic_fetch_add(w->order, 1) + 1;
    if (w->hold_ms > 0 && (w->status == RDLM_OK || w->status == RDLM_OWNER_DEAD)) {
        sleep_ms((unsigned)w->hold_ms);
        w->unlock_status = rdlm_session_unlock(w->s, w->name, w->token);
    }
    atomic_store(&w->done, 1);
    return NULL;
}

/* A waiter on the heap (left allocated if its thread cannot be joined, so a failed
 * test never frees what the thread still uses). */
static waiter_t *waiter_new(const char *name, uint64_t timeout_ns)
{
    waiter_t *w = calloc(1, sizeof(*w));

    assert_non_null(w);
    w->name = name;
    w->timeout_ns = timeout_ns;
    w->s = lease_session_open(5000, 1, NULL, NULL);
    return w;
}

static void waiter_start(waiter_t *w)
{
    assert_int_equal(pthread_create(&w->thread, NULL, waiter_main, w), 0);
}

static void waiter_join(waiter_t *w, unsigned limit_ms)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += limit_ms / 1000 + 1;
    assert_int_equal(pthread_timedjoin_np(w->thread, NULL, &ts), 0);
}

static void waiter_free(waiter_t *w)
{
    rdlm_session_close(w->s);
    free(w);
}

static void sessions_open_and_close(void **state)
{
    rdlm_session_h a, b;

    (void)state;
    need_rdlmd();
    a = lease_session_open(2000, 1, NULL, NULL);
    b = lease_session_open(2000, 1, NULL, NULL);
    assert_true(rdlm_session_id(a) != 0);
    assert_true(rdlm_session_id(b) != rdlm_session_id(a));
    assert_int_equal(rdlm_session_check(a), RDLM_OK);
    assert_true(rdlm_session_valid_until(a) > now_ns());
    /* Renewals keep it valid past its TTL. */
    sleep_ms(2500);
    assert_int_equal(rdlm_session_check(a), RDLM_OK);
    assert_int_equal(rdlm_session_check(b), RDLM_OK);
    rdlm_session_close(a);
    rdlm_session_close(b);
}

/* Calls through a closed session's handle are refused without touching its memory
 * (found from outside: renew read the freed session and sent on its closed socket,
 * and could renew another session that reused the memory): RDLM_ERR_BAD_HANDLE, 0 for
 * the id and the validity, and a second close does nothing. Under ASan (this label
 * runs in the ASan leg) a read of the freed session would fail the test. */
static void closed_session_handle_is_refused(void **state)
{
    rdlm_session_stats_t st;
    rdlm_session_h s;
    uint64_t token = 0, epoch = 0;

    (void)state;
    need_rdlmd();
    s = lease_session_open(2000, 1, NULL, NULL);
    rdlm_session_close(s);
    assert_int_equal(rdlm_session_renew(s), RDLM_ERR_BAD_HANDLE);
    assert_int_equal(rdlm_session_check(s), RDLM_ERR_BAD_HANDLE);
    assert_int_equal(rdlm_session_lock(s, "closed-handle", 0, &token), RDLM_ERR_BAD_HANDLE);
    assert_int_equal(rdlm_session_unlock(s, "closed-handle", 1), RDLM_ERR_BAD_HANDLE);
    assert_int_equal(rdlm_session_new_epoch(s, &epoch), RDLM_ERR_BAD_HANDLE);
    assert_int_equal(rdlm_session_stats(s, &st), RDLM_ERR_BAD_HANDLE);
    assert_int_equal(rdlm_session_id(s), 0);
    assert_int_equal(rdlm_session_valid_until(s), 0);
    rdlm_session_close(s);
    assert_int_equal(token, 0);
    assert_int_equal(epoch, 0);
}

/* The authority by host name: "localhost:port" for every replica; a list in which no
 * name resolves fails at once (not after the connect timeout), one that does not
 * among others only warns. */
static void authority_reached_by_host_name(void **state)
{
    rdlm_session_params_t p = {.field_mask = RDLM_SESSION_FIELD_TIMEOUT,
                               .connect_timeout_ms = 15000};
    char names[3 * 40], mixed[sizeof(names) + 40], first[40];
    rdlm_authority_status_t st;
    rdlm_session_h s = NULL;
    uint64_t t0;
    size_t at = 0;

    (void)state;
    need_rdlmd();
    for (int i = 0; i < N_REPLICAS; i++) {
        at += (size_t)snprintf(names + at, sizeof(names) - at, "%slocalhost:%s",
                               i > 0 ? "," : "", strrchr(C.r[i].client, ':') + 1);
    }
    assert_int_equal(rdlm_session_open(names, &p, &s), RDLM_OK);
    rdlm_session_close(s);
    snprintf(mixed, sizeof(mixed), "no-such-host.invalid:1,%s", names);
    assert_int_equal(rdlm_session_open(mixed, &p, &s), RDLM_OK);
    rdlm_session_close(s);
    snprintf(first, sizeof(first), "%.*s", (int)strcspn(names, ","), names);
    assert_int_equal(rdlm_authority_status(first, 2000, &st), RDLM_OK);
    t0 = now_ns();
    s = NULL;
    assert_int_equal(rdlm_session_open("no-such-host.invalid:1", &p, &s),
                     RDLM_ERR_BAD_CONFIG);
    assert_null(s);
    assert_true(now_ns() - t0 < 2000 * MS);
}

static void tokens_strictly_increase(void **state)
{
    const char *e = getenv("RDLMTEST_LEASE_ROUNDS");
    int rounds = e != NULL ? atoi(e) : 20;
    rdlm_session_h s;
    uint64_t last = 0, token;

    (void)state;
    need_rdlmd();
    s = lease_session_open(5000, 1, NULL, NULL);
    for (int i = 0; i < rounds; i++) {
        const char *name = i % 2 ? "tok-a" : "tok-b";

        assert_int_equal(rdlm_session_lock(s, name, i % 3 ? 0 : 1000 * MS, &token),
                         RDLM_OK);
        assert_true(token > last);
        last = token;
        assert_int_equal(rdlm_session_unlock(s, name, token), RDLM_OK);
    }
    rdlm_session_close(s);
}

static void second_session_try_is_busy(void **state)
{
    rdlm_session_h a, b;
    uint64_t ta, tb;

    (void)state;
    need_rdlmd();
    a = lease_session_open(5000, 1, NULL, NULL);
    b = lease_session_open(5000, 1, NULL, NULL);
    assert_int_equal(rdlm_session_lock(a, "busy", 0, &ta), RDLM_OK);
    assert_int_equal(rdlm_session_lock(b, "busy", 0, &tb), RDLM_ERR_BUSY);
    assert_int_equal(rdlm_session_unlock(a, "busy", ta), RDLM_OK);
    assert_int_equal(rdlm_session_lock(b, "busy", 0, &tb), RDLM_OK);
    assert_true(tb > ta);
    assert_int_equal(rdlm_session_unlock(b, "busy", tb), RDLM_OK);
    rdlm_session_close(a);
    rdlm_session_close(b);
}

/* The leader applies an ACQUIRE and then answers it as a failed apply (test hook
 * RDLMTEST_LEASE_LOSE_ANSWER, set for the replicas in main): the outcome is unknown to
 * the client, which must learn it by retrying the same seq. Before, the leader answered
 * RDLM_ERR_IO, the caller saw that, and the session held the lock unknowingly: every
 * later ACQUIRE of it was RDLM_ERR_INVALID_ARG. */
static void acquire_whose_answer_was_lost_is_learnt_by_retrying(void **state)
{
    rdlm_session_h s;
    uint64_t t1, t2;

    (void)state;
    need_rdlmd();
    s = lease_session_open(5000, 1, NULL, NULL);
    assert_int_equal(rdlm_session_lock(s, "lost-answer", 2000 * MS, &t1), RDLM_OK);
    assert_int_equal(rdlm_session_unlock(s, "lost-answer", t1), RDLM_OK);
    assert_int_equal(rdlm_session_lock(s, "lost-answer", 0, &t2), RDLM_OK);
    assert_true(t2 > t1);
    assert_int_equal(rdlm_session_unlock(s, "lost-answer", t2), RDLM_OK);
    rdlm_session_close(s);
}

static void blocking_acquire_is_granted_after_unlock(void **state)
{
    rdlm_session_h a;
    waiter_t *w;
    uint64_t ta, unlocked_at;

    (void)state;
    need_rdlmd();
    a = lease_session_open(5000, 1, NULL, NULL);
    w = waiter_new("block", 15000 * MS);
    assert_int_equal(rdlm_session_lock(a, "block", 0, &ta), RDLM_OK);
    waiter_start(w);
    sleep_ms(500);
    assert_int_equal(atomic_load(&w->done), 0); /* still queued */
    unlocked_at = now_ns();
    assert_int_equal(rdlm_session_unlock(a, "block", ta), RDLM_OK);
    waiter_join(w, 16000);
    assert_int_equal(w->status, RDLM_OK);
    assert_true(w->token > ta);
    assert_true(w->granted_at >= unlocked_at);
    assert_int_equal(rdlm_session_unlock(w->s, "block", w->token), RDLM_OK);
    waiter_free(w);
    rdlm_session_close(a);
}

static void waiters_are_granted_in_fifo_order(void **state)
{
    static atomic_uint order;
    rdlm_session_h a;
    waiter_t *w[3];
    uint64_t ta;

    (void)state;
    need_rdlmd();
    atomic_store(&order, 0);
    a = lease_session_open(5000, 1, NULL, NULL);
    assert_int_equal(rdlm_session_lock(a, "fifo", 0, &ta), RDLM_OK);
    for (int i = 0; i < 3; i++) {
        w[i] = waiter_new("fifo", 20000 * MS);
        w[i]->hold_ms = 100;
        w[i]->order = &order;
        waiter_start(w[i]);
        sleep_ms(400); /* queued before the next one starts */
    }
    assert_int_equal(rdlm_session_unlock(a, "fifo", ta), RDLM_OK);
    for (int i = 0; i < 3; i++)
        waiter_join(w[i], 21000);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(w[i]->status, RDLM_OK);
        assert_int_equal(w[i]->unlock_status, RDLM_OK);
        assert_int_equal(w[i]->rank, (unsigned)i + 1);
        assert_true(w[i]->token > (i ? w[i - 1]->token : ta));
    }
    for (int i = 0; i < 3; i++)
        waiter_free(w[i]);
    rdlm_session_close(a);
}

static void timed_out_acquire_leaves_nothing_queued(void **state)
{
    rdlm_session_h a, b, c;
    uint64_t ta, tb, tc, t0, dt;

    (void)state;
    need_rdlmd();
    a = lease_session_open(5000, 1, NULL, NULL);
    b = lease_session_open(5000, 1, NULL, NULL);
    c = lease_session_open(5000, 1, NULL, NULL);
    assert_int_equal(rdlm_session_lock(a, "tmo", 0, &ta), RDLM_OK);
    t0 = now_ns();
    assert_int_equal(rdlm_session_lock(b, "tmo", 300 * MS, &tb), RDLM_ERR_TIMEOUT);
    dt = now_ns() - t0;
    if (dt < 300 * MS || dt >= 5000 * MS)
        print_message("the 300 ms acquire returned RDLM_ERR_TIMEOUT after %.1f ms\n",
                      (double)dt / (double)MS);
    assert_true(dt >= 300 * MS && dt < 5000 * MS);
    assert_int_equal(rdlm_session_unlock(a, "tmo", ta), RDLM_OK);
    /* Had b stayed queued, the unlock would have handed it the lock. */
    assert_int_equal(rdlm_session_lock(c, "tmo", 0, &tc), RDLM_OK);
    assert_true(tc > ta);
    assert_int_equal(rdlm_session_unlock(c, "tmo", tc), RDLM_OK);
    assert_int_equal(rdlm_session_lock(b, "tmo", 0, &tb), RDLM_OK);
    assert_int_equal(rdlm_session_unlock(b, "tmo", tb), RDLM_OK);
    rdlm_session_close(a);
    rdlm_session_close(b);
    rdlm_session_close(c);
}

static void second_unlock_is_not_owner(void **state)
{
    rdlm_session_h a, b;
    uint64_t t;

    (void)state;
    need_rdlmd();
    a = lease_session_open(5000, 1, NULL, NULL);
    b = lease_session_open(5000, 1, NULL, NULL);
    assert_int_equal(rdlm_session_lock(a, "twice", 0, &t), RDLM_OK);
    assert_int_equal(rdlm_session_unlock(a, "twice", t + 1), RDLM_ERR_NOT_OWNER);
    assert_int_equal(rdlm_session_unlock(b, "twice", t), RDLM_ERR_NOT_OWNER);
    assert_int_equal(rdlm_session_unlock(a, "twice", t), RDLM_OK);
    assert_int_equal(rdlm_session_unlock(a, "twice", t), RDLM_ERR_NOT_OWNER);
    assert_int_equal(rdlm_session_unlock(a, "never-held", 1), RDLM_ERR_NOT_OWNER);
    rdlm_session_close(a);
    rdlm_session_close(b);
}

static void expired_session_hands_the_lock_on_as_owner_dead(void **state)
{
    static atomic_int lost;
    rdlm_session_h dying;
    waiter_t *w;
    uint64_t td, t, end;

    (void)state;
    need_rdlmd();
    atomic_store(&lost, 0);
    dying = lease_session_open(1000, 0, lease_session_count_lost, &lost);
    assert_int_equal(rdlm_session_lock(dying, "dead", 0, &td), RDLM_OK);
    w = waiter_new("dead", 20000 * MS);
    waiter_start(w);
    end = now_ns() + 5000 * MS;
    while (atomic_load(&lost) == 0 && now_ns() < end)
        sleep_ms(10);
    assert_int_equal(atomic_load(&lost), 1);
    assert_int_equal(rdlm_session_check(dying), RDLM_ERR_LEASE_EXPIRED);
    assert_int_equal(rdlm_session_lock(dying, "other", 0, &t), RDLM_ERR_LEASE_EXPIRED);
    assert_int_equal(rdlm_session_unlock(dying, "dead", td), RDLM_ERR_LEASE_EXPIRED);
    waiter_join(w, 21000);
    assert_int_equal(w->status, RDLM_OWNER_DEAD);
    assert_true(w->token > td);
    assert_int_equal(rdlm_session_unlock(w->s, "dead", w->token), RDLM_OK);
    assert_int_equal(atomic_load(&lost), 1); /* once */
    rdlm_session_close(dying);
    waiter_free(w);
}

static void epochs_strictly_increase(void **state)
{
    rdlm_session_h a, b;
    uint64_t last = 0, e;

    (void)state;
    need_rdlmd();
    a = lease_session_open(5000, 1, NULL, NULL);
    b = lease_session_open(5000, 1, NULL, NULL);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(rdlm_session_new_epoch(i % 2 ? a : b, &e), RDLM_OK);
        assert_true(e > last);
        last = e;
    }
    rdlm_session_close(a);
    rdlm_session_close(b);
}

static void authority_status_describes_the_replicas(void **state)
{
    rdlm_authority_status_t st[N_REPLICAS];
    rdlm_session_h s;
    uint64_t epoch;
    int leader, leaders = 0;

    (void)state;
    need_rdlmd();
    s = lease_session_open(5000, 1, NULL, NULL);
    assert_int_equal(rdlm_session_new_epoch(s, &epoch), RDLM_OK);
    leader = find_leader(10000);
    assert_true(leader >= 0);
    for (int i = 0; i < N_REPLICAS; i++) {
        assert_int_equal(rdlm_authority_status(C.r[i].client, 2000, &st[i]), RDLM_OK);
        leaders += st[i].is_leader;
    }
    assert_int_equal(leaders, 1);
    assert_true(st[leader].is_leader);
    assert_string_equal(st[leader].leader_addr, C.r[leader].client);
    assert_int_equal(st[leader].leader_id, (uint64_t)leader + 1);
    assert_true(st[leader].term >= 1);
    assert_true(st[leader].sessions >= 1);
    assert_true(st[leader].epoch >= epoch);
    assert_true(st[leader].commit >= 1);
    for (int i = 0; i < N_REPLICAS; i++)
        assert_true(st[i].term <= st[leader].term);
    rdlm_session_close(s);
}

static void operations_continue_after_the_leader_is_killed(void **state)
{
    rdlm_session_h s;
    uint64_t t1, t2, e1, e2;
    int leader, next;

    (void)state;
    need_rdlmd();
    s = lease_session_open(5000, 1, NULL, NULL);
    assert_int_equal(rdlm_session_lock(s, "failover", 0, &t1), RDLM_OK);
    assert_int_equal(rdlm_session_unlock(s, "failover", t1), RDLM_OK);
    assert_int_equal(rdlm_session_new_epoch(s, &e1), RDLM_OK);
    leader = find_leader(10000);
    assert_true(leader >= 0);
    replica_kill(&C.r[leader], SIGKILL);
    assert_int_equal(rdlm_session_lock(s, "failover", 10000 * MS, &t2), RDLM_OK);
    assert_true(t2 > t1);
    assert_int_equal(rdlm_session_unlock(s, "failover", t2), RDLM_OK);
    assert_int_equal(rdlm_session_new_epoch(s, &e2), RDLM_OK);
    assert_true(e2 > e1);
    assert_int_equal(rdlm_session_check(s), RDLM_OK);
    next = find_leader(10000);
    assert_true(next >= 0 && next != leader);
    /* The killed replica comes back with its data and catches up. */
    replica_start(&C.r[leader], leader + 1);
    assert_int_equal(rdlm_session_lock(s, "failover", 0, &t1), RDLM_OK);
    assert_true(t1 > t2);
    assert_int_equal(rdlm_session_unlock(s, "failover", t1), RDLM_OK);
    rdlm_session_close(s);
}

/* ---- contexts with RDLM_AUTHORITY ---- */

/* Point new contexts at the test authority (ttl_ms; renew 0: the test hook stops
 * renewals) under a job name of their own. */
static void ctx_env_set(const char *tag, unsigned ttl_ms, int renew)
{
    char job[64], ttl[16];

    snprintf(job, sizeof(job), "t-lease-%s-%d", tag, (int)getpid());
    snprintf(ttl, sizeof(ttl), "%u", ttl_ms);
    setenv("RDLM_JOB", job, 1);
    setenv("RDLM_AUTHORITY", C.authority, 1);
    setenv("RDLM_LEASE_TTL_MS", ttl, 1);
    if (!renew)
        setenv("RDLMTEST_LEASE_NO_RENEW", "1", 1);
}

static void ctx_env_clear(void)
{
    unsetenv("RDLM_JOB");
    unsetenv("RDLM_AUTHORITY");
    unsetenv("RDLM_LEASE_TTL_MS");
    unsetenv("RDLMTEST_LEASE_NO_RENEW");
}

/* n acquire/release rounds of lock send nothing to the authority. */
static void lock_rounds_cost_no_authority_request(rdlm_ctx_h ctx, rdlm_lock_h lock, int n)
{
    rdlm_stats_t before, after;
    uint64_t token;

    assert_int_equal(rdlm_ctx_stats(ctx, &before), RDLM_OK);
    assert_true(before.authority_requests > 0); /* the lease was opened there */
    for (int i = 0; i < n; i++) {
        assert_int_equal(rdlm_lock_acquire(lock, RDLM_TIMEOUT_INFINITE, &token), RDLM_OK);
        assert_int_equal(rdlm_lock_release(lock), RDLM_OK);
    }
    assert_int_equal(rdlm_ctx_stats(ctx, &after), RDLM_OK);
    assert_true(after.authority_requests == before.authority_requests);
}

static void context_operations_fail_once_its_lease_is_lost(void **state)
{
    rdlm_lock_h held, other;
    rdlm_lock_info_t info;
    rdlm_ctx_h ctx = NULL;
    uint64_t token, until;

    (void)state;
    need_rdlmd();
    ctx_env_set("lost", 1000, 0);
    assert_int_equal(rdlm_ctx_create(NULL, &ctx), RDLM_OK);
    ctx_env_clear();
    assert_non_null(rdlm_ctx_session(ctx));
    assert_int_equal(rdlm_lock_open(ctx, "held", &held), RDLM_OK);
    assert_int_equal(rdlm_lock_open(ctx, "other", &other), RDLM_OK);
    lock_rounds_cost_no_authority_request(ctx, other, 100);
    assert_int_equal(rdlm_lock_acquire(held, 0, &token), RDLM_OK);
    /* Not renewed: the lease ends at its validity, within TTL (bounded wait). */
    until = rdlm_session_valid_until(rdlm_ctx_session(ctx));
    for (int i = 0; i < 300 && rdlm_session_check(rdlm_ctx_session(ctx)) == RDLM_OK; i++)
        sleep_ms(10);
    assert_true(now_ns() >= until);
    assert_int_equal(rdlm_lock_acquire(other, 0, &token), RDLM_ERR_LEASE_EXPIRED);
    /* A release still releases, and says the lease is gone. */
    assert_int_equal(rdlm_lock_release(held), RDLM_ERR_LEASE_EXPIRED);
    assert_int_equal(rdlm_lock_query(held, &info), RDLM_ERR_LEASE_EXPIRED);
    rdlm_ctx_destroy(ctx);
}

static void distributed_context_takes_its_epoch_from_the_authority(void **state)
{
    char rendezvous[32];
    rdlm_ctx_params_t p = {
        .field_mask = RDLM_CTX_FIELD_PEERS, .rank = 0, .size = 1, .rendezvous = rendezvous};
    rdlm_ctx_dist_info_t info;
    rdlm_session_h s;
    rdlm_ctx_h ctx = NULL;
    unsigned ports[2 * N_REPLICAS];
    uint64_t before, token;
    rdlm_status_t st;
    rdlm_lock_h lock;

    (void)state;
    need_rdlmd();
    s = lease_session_open(5000, 1, NULL, NULL);
    assert_int_equal(rdlm_session_new_epoch(s, &before), RDLM_OK);
    free_ports(ports);
    snprintf(rendezvous, sizeof(rendezvous), "127.0.0.1:%u", ports[0]);
    ctx_env_set("epoch", 5000, 1);
    st = rdlm_ctx_create(&p, &ctx);
    ctx_env_clear();
    if (st == RDLM_ERR_NOT_FOUND) {
        rdlm_session_close(s);
        print_message(
            "skipped: no distributed transport in this build (RDLM_WITH_UCX=OFF)\n");
        skip();
    }
    assert_int_equal(st, RDLM_OK);
    assert_int_equal(rdlm_ctx_dist_info(ctx, &info), RDLM_OK);
    assert_int_equal(info.distributed, 1);
    assert_true(info.token_epoch > before); /* committed after ours */
    /* and above the clock epoch (minutes since 2024), like a job without authority */
    assert_true(info.token_epoch > ((uint64_t)time(NULL) - 1704067200u) / 60);
    assert_int_equal(rdlm_lock_open(ctx, "epoch", &lock), RDLM_OK);
    assert_int_equal(rdlm_lock_acquire(lock, RDLM_TIMEOUT_INFINITE, &token), RDLM_OK);
    assert_true(token >> 40 == info.token_epoch);
    assert_int_equal(rdlm_lock_release(lock), RDLM_OK);
    lock_rounds_cost_no_authority_request(ctx, lock, 100);
    rdlm_ctx_destroy(ctx);
    rdlm_session_close(s);
}

/* 1 once every replica but the one at index keep is stopped (state T in /proc),
 * waiting up to 5 s. */
static int others_stopped(int keep)
{
    uint64_t end = now_ns() + 5000 * MS;

    for (int i = 0; i < N_REPLICAS; i++) {
        char path[64], buf[256], *p;
        FILE *f;

        if (i == keep)
            continue;
        snprintf(path, sizeof(path), "/proc/%d/stat", (int)C.r[i].pid);
        for (;;) {
            f = fopen(path, "r");
            assert_non_null(f);
            p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
            fclose(f);
            if (p != NULL && p[1] == ' ' && p[2] == 'T')
                break;
            if (now_ns() > end)
                return 0;
            sleep_ms(1);
        }
    }
    return 1;
}

/* The leader's followers are stopped: from then on the leader may not grant a
 * renewal (a RENEW waits for a majority to confirm its term, confirm.h). libraft alone
 * would let it answer for up to an election timeout (1 s here): with renewals every
 * 500 ms, at least one would have been sent after the stop and granted. */
static void a_leader_without_its_majority_renews_nothing(void **state)
{
    const uint32_t ttl_ms = 1500;
    const uint64_t valid_ns = ttl_ms * MS / 10 * 9; /* the default drift, 10 % */
    uint64_t t_stop, vu, max_vu = 0, end;
    rdlm_session_h s;
    int leader;

    (void)state;
    need_rdlmd();
    s = lease_session_open(ttl_ms, 1, NULL, NULL);
    leader = find_leader(10000);
    assert_true(leader >= 0);
    sleep_ms(700); /* some renewals granted first */
    for (int i = 0; i < N_REPLICAS; i++)
        if (i != leader)
            kill(C.r[i].pid, SIGSTOP);
    assert_true(others_stopped(leader));
    t_stop = now_ns();
    end = t_stop + 5000 * MS;
    /* Until the lease as the client sees it has surely ended (bounded). */
    while ((vu = rdlm_session_valid_until(s)) != 0 && now_ns() < end) {
        max_vu = vu > max_vu ? vu : max_vu;
        sleep_ms(5);
    }
    for (int i = 0; i < N_REPLICAS; i++)
        if (i != leader)
            kill(C.r[i].pid, SIGCONT);
    print_message("last granted renewal sent %+.1f ms from the stop; lease %s\n",
                  ((double)max_vu - (double)valid_ns - (double)t_stop) / 1e6,
                  vu == 0 ? "lost" : "still valid");
    assert_true(max_vu - valid_ns < t_stop);
    assert_int_equal(vu, 0);
    assert_int_equal(rdlm_session_check(s), RDLM_ERR_LEASE_EXPIRED);
    rdlm_session_close(s);
    assert_true(find_leader(10000) >= 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sessions_open_and_close),
        cmocka_unit_test(closed_session_handle_is_refused),
        cmocka_unit_test(authority_reached_by_host_name),
        cmocka_unit_test(tokens_strictly_increase),
        cmocka_unit_test(second_session_try_is_busy),
        cmocka_unit_test(acquire_whose_answer_was_lost_is_learnt_by_retrying),
        cmocka_unit_test(blocking_acquire_is_granted_after_unlock),
        cmocka_unit_test(waiters_are_granted_in_fifo_order),
        cmocka_unit_test(timed_out_acquire_leaves_nothing_queued),
        cmocka_unit_test(second_unlock_is_not_owner),
        cmocka_unit_test(expired_session_hands_the_lock_on_as_owner_dead),
        cmocka_unit_test(epochs_strictly_increase),
        cmocka_unit_test(authority_status_describes_the_replicas),
        cmocka_unit_test(context_operations_fail_once_its_lease_is_lost),
        cmocka_unit_test(distributed_context_takes_its_epoch_from_the_authority),
        cmocka_unit_test(operations_continue_after_the_leader_is_killed),
        cmocka_unit_test(a_leader_without_its_majority_renews_nothing),
    };
    /* Inherited by the replicas cluster_up starts (only this test's lock name). */
    setenv("RDLMTEST_LEASE_LOSE_ANSWER", "lost-answer", 1);
    return cmocka_run_group_tests(tests, cluster_up, cluster_down);
}
