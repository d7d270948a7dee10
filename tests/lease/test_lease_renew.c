/*
 * rdlm_session_renew (rdlm/lease.h) against three real rdlmd replicas on 127.0.0.1
 * (the fixture tests/common/rdlmd_cluster.c): a renewal on demand moves the validity
 * to t_send + TTL * (1 - drift) and counts one renewal; it alone keeps a session alive
 * at the authority; a lost lease stays lost; NULL is refused; a lock the session waits
 * for in another thread does not hold a renewal up; two threads renewing beside a
 * third taking locks and the renewal thread leave the session consistent.
 * The test hook
 * RDLMTEST_LEASE_NO_RENEW stops a session's renewal thread from renewing, so that
 * only the calls of the test renew it. Skipped when rdlmd is not built. Every wait is
 * bounded.
 *
 * Tunable: RDLMTEST_RENEW_MS (how long the threads of the concurrent test call, back to
 * back; default 500).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include <rdlm.h>
#include <rdlm/lease.h>

#include "lease_session.h"
#include "rdlmd_cluster.h"

#define DRIFT_PPM 100000u /* the default: valid for TTL * 0.9 after t_send */

static uint64_t valid_ns(uint32_t ttl_ms)
{
    return (uint64_t)ttl_ms * MS / 1000000u * (1000000u - DRIFT_PPM);
}

static rdlm_session_stats_t stats_of(rdlm_session_h s)
{
    rdlm_session_stats_t st;

    assert_int_equal(rdlm_session_stats(s, &st), RDLM_OK);
    return st;
}

static void renew_moves_valid_until_to_send_time_plus_ttl_and_counts_one(void **state)
{
    const uint32_t ttl_ms = 30000;
    rdlm_session_h s;
    rdlm_session_stats_t before, after;
    uint64_t vu0, vu1, t0, t1;

    (void)state;
    need_rdlmd();
    s = lease_session_open(ttl_ms, 0, NULL, NULL);
    vu0 = rdlm_session_valid_until(s);
    before = stats_of(s);
    sleep_ms(20); /* so that a renewal now ends later than the OPEN's validity */
    t0 = now_ns();
    assert_int_equal(rdlm_session_renew(s), RDLM_OK);
    t1 = now_ns();
    vu1 = rdlm_session_valid_until(s);
    after = stats_of(s);
    assert_true(vu1 > vu0);
    assert_true(vu1 >= t0 + valid_ns(ttl_ms));
    assert_true(vu1 <= t1 + valid_ns(ttl_ms));
    assert_int_equal(after.renewals, before.renewals + 1);
    assert_int_equal(after.requests, before.requests);
    rdlm_session_close(s);
}

/* With its thread not renewing, a session of TTL 1 s lives 3 s on the calls alone:
 * the authority restarted its timer at each (it would have expired it, and given its
 * lock away, after 1 s). */
static void renew_alone_keeps_the_session_alive_at_the_authority(void **state)
{
    const uint32_t ttl_ms = 1000;
    rdlm_session_h s;
    uint64_t token, end;

    (void)state;
    need_rdlmd();
    s = lease_session_open(ttl_ms, 0, NULL, NULL);
    assert_int_equal(rdlm_session_lock(s, "renew-alive", 0, &token), RDLM_OK);
    end = now_ns() + 3000 * MS;
    while (now_ns() < end) {
        sleep_ms(200);
        assert_int_equal(rdlm_session_renew(s), RDLM_OK);
    }
    assert_int_equal(rdlm_session_check(s), RDLM_OK);
    assert_int_equal(rdlm_session_unlock(s, "renew-alive", token), RDLM_OK);
    rdlm_session_close(s);
}

static void renew_after_the_lease_is_lost_is_lease_expired(void **state)
{
    static atomic_int lost;
    rdlm_session_stats_t before;
    rdlm_session_h s;
    uint64_t end;

    (void)state;
    need_rdlmd();
    atomic_store(&lost, 0);
    s = lease_session_open(500, 0, lease_session_count_lost, &lost);
    end = now_ns() + 5000 * MS;
    while (atomic_load(&lost) == 0 && now_ns() < end)
        sleep_ms(10);
    assert_int_equal(atomic_load(&lost), 1);
    before = stats_of(s);
    assert_int_equal(rdlm_session_renew(s), RDLM_ERR_LEASE_EXPIRED);
    assert_int_equal(rdlm_session_valid_until(s), 0);
    assert_int_equal(rdlm_session_check(s), RDLM_ERR_LEASE_EXPIRED);
    assert_int_equal(stats_of(s).renewals, before.renewals); /* nothing sent */
    sleep_ms(100);
    assert_int_equal(atomic_load(&lost), 1); /* once */
    rdlm_session_close(s);
}

static void renew_of_null_is_invalid_arg(void **state)
{
    (void)state;
    assert_int_equal(rdlm_session_renew(NULL), RDLM_ERR_INVALID_ARG);
}

/* A thread of the next test and what it did: done is set when its call returned (the
 * waiter) or before it began (the releaser); st is the call's status. */
typedef struct party {
    rdlm_session_h s;
    pthread_t thread;
    atomic_int done;
    rdlm_status_t st;
    uint64_t token;
} party_t;

/* Session B's blocking lock of the name A holds. */
static void *waiter_main(void *arg)
{
    party_t *w = arg;

    w->st = rdlm_session_lock(w->s, "renew-queued", 20000 * MS, &w->token);
    atomic_store(&w->done, 1);
    return NULL;
}

/* A unlocks after 5 s, so that a renewal that waits behind B's queued lock (the
 * defect) ends too, and the test sees the order. */
static void *releaser_main(void *arg)
{
    party_t *r = arg;

    sleep_ms(5000);
    atomic_store(&r->done, 1);
    r->st = rdlm_session_unlock(r->s, "renew-queued", r->token);
    return NULL;
}

/* Session A holds a lock; a thread of session B waits for it at the authority (its
 * ACQUIRE sent, the call holding B's call path); rdlm_session_renew(B) then returns
 * RDLM_OK at once, before A releases (found from outside: it waited behind the queued
 * ACQUIRE, without bound with an infinite timeout). */
static void renew_is_not_held_up_by_a_lock_the_session_waits_for(void **state)
{
    const uint32_t ttl_ms = 30000;
    party_t r = {0}, w = {0};
    rdlm_session_h a, b;
    uint64_t end, sent;

    (void)state;
    need_rdlmd();
    a = lease_session_open(ttl_ms, 1, NULL, NULL);
    b = lease_session_open(ttl_ms, 1, NULL, NULL);
    assert_int_equal(rdlm_session_lock(a, "renew-queued", 0, &r.token), RDLM_OK);
    r.s = a;
    w.s = b;
    sent = stats_of(b).requests;
    assert_int_equal(pthread_create(&w.thread, NULL, waiter_main, &w), 0);
    end = now_ns() + 5000 * MS;
    while (stats_of(b).requests == sent && now_ns() < end)
        sleep_ms(1);
    assert_true(stats_of(b).requests > sent); /* B's ACQUIRE is on its way */
    sleep_ms(100);                            /* and queued at the authority */
    assert_int_equal(atomic_load(&w.done), 0);
    assert_int_equal(pthread_create(&r.thread, NULL, releaser_main, &r), 0);
    assert_int_equal(rdlm_session_renew(b), RDLM_OK);
    assert_int_equal(atomic_load(&r.done), 0); /* before A let go */
    assert_int_equal(atomic_load(&w.done), 0);
    assert_int_equal(pthread_join(r.thread, NULL), 0);
    assert_int_equal(pthread_join(w.thread, NULL), 0);
    assert_int_equal(r.st, RDLM_OK);
    assert_int_equal(w.st, RDLM_OK);
    assert_int_equal(rdlm_session_unlock(b, "renew-queued", w.token), RDLM_OK);
    rdlm_session_close(b);
    rdlm_session_close(a);
}

/* A thread of the concurrent test: what it saw, checked by the main thread. */
typedef struct worker {
    rdlm_session_h s;
    uint32_t ttl_ms;
    uint64_t end; /* call until then */
    int locks;    /* 1: try-lock + unlock pairs; 0: rdlm_session_renew */
    pthread_t thread;
    unsigned ok, failed;     /* calls (pairs) that returned RDLM_OK / anything else */
    rdlm_status_t first_bad; /* the first status other than RDLM_OK */
    unsigned short_after;    /* renewals after which valid_until < t_send + TTL*0.9 */
} worker_t;

static rdlm_status_t lock_pair(rdlm_session_h s)
{
    uint64_t token;
    rdlm_status_t st = rdlm_session_lock(s, "renew-beside", 0, &token);

    return st == RDLM_OK ? rdlm_session_unlock(s, "renew-beside", token) : st;
}

static void *worker_main(void *arg)
{
    worker_t *w = arg;

    while (now_ns() < w->end) {
        uint64_t t0 = now_ns();
        rdlm_status_t st = w->locks ? lock_pair(w->s) : rdlm_session_renew(w->s);

        if (st != RDLM_OK) {
            w->first_bad = w->failed++ == 0 ? st : w->first_bad;
            continue;
        }
        w->ok++;
        if (!w->locks && rdlm_session_valid_until(w->s) < t0 + valid_ns(w->ttl_ms))
            w->short_after++;
    }
    return NULL;
}

/* Two threads renew back to back and a third takes and releases a lock, on one session
 * whose renewal thread renews every 100 ms (TTL 300 ms): every call succeeds, the
 * validity after each renewal is at least what it gave, each request was sent once
 * (serialised calls share one connection: a reply read by the wrong call would be
 * retried, and counted twice), renewals are counted as renewals (the thread's too:
 * more than the calls), and the lease is valid at the end. */
static void
renew_from_two_threads_beside_locks_and_the_renewal_thread_is_consistent(void **state)
{
    const char *env = getenv("RDLMTEST_RENEW_MS");
    const uint64_t run_ms = env != NULL ? strtoull(env, NULL, 10) : 500;
    const uint32_t ttl_ms = 300;
    worker_t w[3] = {{0}};
    rdlm_session_stats_t before, after;
    struct timespec limit;
    rdlm_session_h s;

    (void)state;
    need_rdlmd();
    s = lease_session_open(ttl_ms, 1, NULL, NULL);
    before = stats_of(s);
    for (int i = 0; i < 3; i++) {
        w[i] = (worker_t){
            .s = s, .ttl_ms = ttl_ms, .end = now_ns() + run_ms * MS, .locks = i == 2};
        assert_int_equal(pthread_create(&w[i].thread, NULL, worker_main, &w[i]), 0);
    }
    clock_gettime(CLOCK_REALTIME, &limit);
    limit.tv_sec += (time_t)(run_ms / 1000) + 60; /* a call waits 15 s at most */
    for (int i = 0; i < 3; i++)
        assert_int_equal(pthread_timedjoin_np(w[i].thread, NULL, &limit), 0);
    after = stats_of(s);
    print_message("renewals: %u + %u by the threads, %llu counted; lock pairs %u, "
                  "requests %llu\n",
                  w[0].ok, w[1].ok, (unsigned long long)(after.renewals - before.renewals),
                  w[2].ok, (unsigned long long)(after.requests - before.requests));
    for (int i = 0; i < 3; i++) {
        if (w[i].failed != 0)
            print_message("thread %d: %u failed, first %s\n", i, w[i].failed,
                          rdlm_status_name(w[i].first_bad));
        assert_int_equal(w[i].failed, 0);
        assert_true(w[i].ok > 0);
        assert_int_equal(w[i].short_after, 0);
    }
    assert_true(after.renewals - before.renewals > w[0].ok + w[1].ok);
    assert_int_equal(after.requests - before.requests, 2 * (uint64_t)w[2].ok);
    assert_int_equal(rdlm_session_check(s), RDLM_OK);
    rdlm_session_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(renew_moves_valid_until_to_send_time_plus_ttl_and_counts_one),
        cmocka_unit_test(renew_alone_keeps_the_session_alive_at_the_authority),
        cmocka_unit_test(renew_after_the_lease_is_lost_is_lease_expired),
        cmocka_unit_test(renew_of_null_is_invalid_arg),
        cmocka_unit_test(renew_is_not_held_up_by_a_lock_the_session_waits_for),
        cmocka_unit_test(
            renew_from_two_threads_beside_locks_and_the_renewal_thread_is_consistent),
    };
    return cmocka_run_group_tests(tests, cluster_up, cluster_down);
}
