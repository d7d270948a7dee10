/*
 * The leader's lease timers (core/lease/authority/timers.c), as pure functions of (timers,
 * state machine, now), with the times given by the test.
 *
 * Proves: a session renewed at t is not due before t + TTL and is due then, once, in
 * session order, its renewals refused from then on; a ready leader arms every session
 * for a full TTL from the moment it is ready, and arming again never moves a deadline;
 * nothing expires while the leader may not log; an EXPIRE not submitted is due again
 * at the time given, one that did not commit at once, and one that committed drops the
 * timer; a committed OPEN arms its session, and a session without a timer cannot renew.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lease_test.h"
#include "timers.h"

#define TTL 5000u /* lt_cmd's OPEN */
#define CAP 16

typedef struct due {
    unsigned n;
    uint64_t session[CAP];
    rdlm_lease_timers_t *retry_in; /* not NULL: the EXPIRE is "not submitted" */
    uint64_t retry_ms;
} due_t;

static void record_due(void *arg, uint64_t session, uint64_t now_ms)
{
    due_t *d = arg;

    d->session[d->n++] = session;
    if (d->retry_in != NULL) {
        rdlm_lease_timers_retry(d->retry_in, session, now_ms + d->retry_ms);
    }
}

/* Sessions due at now (can_log 1), recorded in *d (emptied first). */
static unsigned scan(rdlm_lease_timers_t *tm, uint64_t now, due_t *d)
{
    d->n = 0;
    rdlm_lease_timers_scan(tm, now, 1, record_due, d);
    return d->n;
}

static uint64_t open_session(rdlm_lease_sm_t *sm, uint64_t nonce)
{
    rdlm_lease_cmd_t c = lt_cmd(RDLM_LEASE_OP_OPEN, 0, 0, "ns");
    rdlm_lease_result_t r;

    c.nonce = nonce;
    c.uid = 1000;
    r = lt_apply(sm, &c);
    assert_int_equal(r.status, RDLM_OK);
    return r.session;
}

/* A state machine with n sessions and timers with room for CAP, none armed. */
static rdlm_lease_sm_t *setup(rdlm_lease_timers_t *tm, unsigned n, uint64_t *sessions)
{
    rdlm_lease_sm_t *sm = NULL;

    assert_int_equal(rdlm_lease_sm_create(NULL, &sm), RDLM_OK);
    for (unsigned i = 0; i < n; i++) {
        sessions[i] = open_session(sm, 100 + i);
    }
    assert_int_equal(rdlm_lease_timers_init(tm, CAP), RDLM_OK);
    return sm;
}

static void teardown(rdlm_lease_timers_t *tm, rdlm_lease_sm_t *sm)
{
    rdlm_lease_timers_free(tm);
    rdlm_lease_sm_destroy(sm);
}

static void a_renewed_session_is_not_due_before_its_ttl_then_due_once(void **state)
{
    rdlm_lease_timers_t tm;
    uint64_t s[2];
    rdlm_lease_sm_t *sm = setup(&tm, 2, s);
    uint32_t ttl = 0;
    due_t d = {0};

    (void)state;
    rdlm_lease_timers_lead(&tm, sm, 1000);
    assert_int_equal(rdlm_lease_timers_renew(&tm, sm, s[1], 3000, &ttl), RDLM_OK);
    assert_int_equal(ttl, TTL);
    assert_int_equal(scan(&tm, 1000 + TTL - 1, &d), 0);
    assert_int_equal(scan(&tm, 1000 + TTL, &d), 1);
    assert_true(d.session[0] == s[0]);
    assert_int_equal(scan(&tm, 3000 + TTL - 1, &d), 0);
    assert_int_equal(scan(&tm, 3000 + TTL, &d), 1);
    assert_true(d.session[0] == s[1]);
    /* in flight: due no more, and too late to renew */
    assert_int_equal(scan(&tm, 100000, &d), 0);
    assert_int_equal(rdlm_lease_timers_renew(&tm, sm, s[0], 100000, &ttl),
                     RDLM_ERR_LEASE_EXPIRED);
    teardown(&tm, sm);
}

static void a_new_leader_arms_every_session_for_a_full_ttl(void **state)
{
    rdlm_lease_timers_t tm;
    uint64_t s[3];
    rdlm_lease_sm_t *sm = setup(&tm, 3, s);
    uint32_t ttl;
    due_t d = {0};

    (void)state;
    rdlm_lease_timers_lead(&tm, sm, 0);
    rdlm_lease_timers_clear(&tm); /* stepped down 4 s later, led again at 4 s */
    rdlm_lease_timers_lead(&tm, sm, 4000);
    assert_int_equal(scan(&tm, 4000 + TTL - 1, &d), 0);
    /* leading again moves no deadline */
    assert_int_equal(rdlm_lease_timers_renew(&tm, sm, s[2], 6000, &ttl), RDLM_OK);
    rdlm_lease_timers_lead(&tm, sm, 7000);
    assert_int_equal(scan(&tm, 4000 + TTL, &d), 2);
    assert_true(d.session[0] == s[0] && d.session[1] == s[1]);
    assert_int_equal(scan(&tm, 6000 + TTL - 1, &d), 0);
    assert_int_equal(scan(&tm, 6000 + TTL, &d), 1);
    assert_true(d.session[0] == s[2]);
    teardown(&tm, sm);
}

static void nothing_expires_while_the_leader_may_not_log(void **state)
{
    rdlm_lease_timers_t tm;
    uint64_t s[1];
    rdlm_lease_sm_t *sm = setup(&tm, 1, s);
    due_t d = {0};

    (void)state;
    rdlm_lease_timers_lead(&tm, sm, 0);
    rdlm_lease_timers_scan(&tm, 10 * TTL, 0, record_due, &d);
    assert_int_equal(d.n, 0);
    assert_int_equal(scan(&tm, 10 * TTL, &d), 1);
    assert_true(d.session[0] == s[0]);
    teardown(&tm, sm);
}

static void an_expire_not_sent_or_not_committed_is_due_again(void **state)
{
    rdlm_lease_timers_t tm;
    uint64_t s[1];
    rdlm_lease_sm_t *sm = setup(&tm, 1, s);
    due_t d = {.retry_in = &tm, .retry_ms = 100};
    rdlm_lease_cmd_t expire = lt_cmd(RDLM_LEASE_OP_EXPIRE, s[0], 0, NULL);
    rdlm_lease_result_t res;
    uint32_t ttl;

    (void)state;
    rdlm_lease_timers_lead(&tm, sm, 0);
    assert_int_equal(scan(&tm, TTL, &d), 1); /* not submitted: retried 100 ms later */
    assert_int_equal(scan(&tm, TTL + 99, &d), 0);
    d.retry_in = NULL;
    assert_int_equal(scan(&tm, TTL + 100, &d), 1); /* submitted */
    assert_int_equal(
        rdlm_lease_timers_applied(&tm, sm, RDLM_LEASE_OP_EXPIRE, s[0], NULL, TTL + 150), 0);
    assert_int_equal(scan(&tm, TTL + 150, &d), 1); /* did not commit: again at once */
    res = lt_apply(sm, &expire);
    assert_int_equal(res.status, RDLM_OK);
    assert_int_equal(
        rdlm_lease_timers_applied(&tm, sm, RDLM_LEASE_OP_EXPIRE, s[0], &res, TTL + 200), 1);
    assert_int_equal(tm.n, 0);
    assert_int_equal(scan(&tm, 100000, &d), 0);
    assert_int_equal(rdlm_lease_timers_renew(&tm, sm, s[0], 100000, &ttl),
                     RDLM_ERR_LEASE_EXPIRED);
    teardown(&tm, sm);
}

static void a_committed_open_arms_and_a_close_drops(void **state)
{
    rdlm_lease_timers_t tm;
    uint64_t s[1];
    rdlm_lease_sm_t *sm = setup(&tm, 1, s);
    rdlm_lease_cmd_t open = lt_cmd(RDLM_LEASE_OP_OPEN, 0, 0, "ns");
    rdlm_lease_cmd_t close = lt_cmd(RDLM_LEASE_OP_CLOSE, s[0], 1, NULL);
    rdlm_lease_result_t res;
    uint32_t ttl;
    due_t d = {0};

    (void)state;
    /* s[0] was opened before this leader's timers knew of it: no timer, no renewal */
    assert_int_equal(rdlm_lease_timers_renew(&tm, sm, s[0], 0, &ttl),
                     RDLM_ERR_LEASE_EXPIRED);
    open.nonce = 7;
    open.uid = 1000;
    res = lt_apply(sm, &open);
    assert_int_equal(res.status, RDLM_OK);
    assert_int_equal(rdlm_lease_timers_applied(&tm, sm, RDLM_LEASE_OP_OPEN, 0, &res, 2000),
                     0);
    assert_int_equal(rdlm_lease_timers_renew(&tm, sm, res.session, 2500, &ttl), RDLM_OK);
    assert_int_equal(scan(&tm, 2500 + TTL - 1, &d), 0);
    rdlm_lease_timers_lead(&tm, sm, 3000); /* s[0] armed, the new one left as it is */
    assert_int_equal(tm.n, 2);
    res = lt_apply(sm, &close);
    assert_int_equal(res.status, RDLM_OK);
    assert_int_equal(
        rdlm_lease_timers_applied(&tm, sm, RDLM_LEASE_OP_CLOSE, s[0], &res, 3100), 1);
    assert_int_equal(tm.n, 1);
    assert_int_equal(scan(&tm, 2500 + TTL, &d), 1);
    assert_true(d.session[0] != s[0]);
    teardown(&tm, sm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_renewed_session_is_not_due_before_its_ttl_then_due_once),
        cmocka_unit_test(a_new_leader_arms_every_session_for_a_full_ttl),
        cmocka_unit_test(nothing_expires_while_the_leader_may_not_log),
        cmocka_unit_test(an_expire_not_sent_or_not_committed_is_due_again),
        cmocka_unit_test(a_committed_open_arms_and_a_close_drops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
