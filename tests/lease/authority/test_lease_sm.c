/* The lease state machine: FIFO grants and fencing tokens, ownership, EXPIRE/CLOSE/
 * CANCEL, de-duplication, quotas, totality (garbage, unknown sessions, allocation
 * failures leave the state unchanged), canonical snapshots that refuse every
 * truncation and corruption, and a randomized differential run in which a replica
 * that restored a snapshot midway ends with the same state. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lease_test.h"
#include "sm.h"

/* ---- allocation failure injection (-Wl,--wrap=malloc,calloc,realloc) ---- */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);

static long fail_countdown = -1; /* the allocation that meets 0 fails; -1: none */

static int fail_now(void)
{
    return fail_countdown >= 0 && fail_countdown-- == 0;
}

void *__wrap_malloc(size_t n)
{
    return fail_now() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
    return fail_now() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
    return fail_now() ? NULL : __real_realloc(p, n);
}

/* ---- helpers ---- */

typedef struct grant {
    uint64_t session, seq, token;
    int broken;
    char name[RDLM_LEASE_NAME_MAX + 1];
} grant_t;

typedef struct grants {
    grant_t g[64];
    int n;
} grants_t;

static void record_grant(void *arg, uint64_t session, uint64_t seq, const char *name,
                         uint64_t token, int broken)
{
    grants_t *gs = arg;
    grant_t *g = &gs->g[gs->n++ % 64];

    g->session = session;
    g->seq = seq;
    g->token = token;
    g->broken = broken;
    snprintf(g->name, sizeof(g->name), "%s", name);
}

static rdlm_lease_sm_t *new_sm(const rdlm_lease_limits_t *limits, grants_t *gs)
{
    rdlm_lease_sm_t *sm = NULL;

    assert_int_equal(rdlm_lease_sm_create(limits, &sm), RDLM_OK);
    if (gs != NULL) {
        memset(gs, 0, sizeof(*gs));
        rdlm_lease_sm_set_grant_cb(sm, record_grant, gs);
    }
    return sm;
}

static rdlm_lease_result_t open_nonce(rdlm_lease_sm_t *sm, uint64_t nonce, uint32_t uid)
{
    rdlm_lease_cmd_t c = lt_cmd(RDLM_LEASE_OP_OPEN, 0, 0, "ns");
    c.nonce = nonce;
    c.uid = uid;
    return lt_apply(sm, &c);
}

static uint64_t open_session(rdlm_lease_sm_t *sm, uint64_t nonce)
{
    rdlm_lease_result_t r = open_nonce(sm, nonce, 1000);
    assert_int_equal(r.status, RDLM_OK);
    assert_true(r.session != 0);
    return r.session;
}

static rdlm_lease_result_t acquire(rdlm_lease_sm_t *sm, uint64_t ses, uint64_t seq,
                                   const char *name, unsigned flags)
{
    rdlm_lease_cmd_t c = lt_cmd(RDLM_LEASE_OP_ACQUIRE, ses, seq, name);
    c.flags = (uint8_t)flags;
    c.timeout_ms = 1000;
    return lt_apply(sm, &c);
}

static rdlm_lease_result_t release(rdlm_lease_sm_t *sm, uint64_t ses, uint64_t seq,
                                   const char *name, uint64_t token)
{
    rdlm_lease_cmd_t c = lt_cmd(RDLM_LEASE_OP_RELEASE, ses, seq, name);
    c.token = token;
    return lt_apply(sm, &c);
}

static rdlm_lease_result_t cancel(rdlm_lease_sm_t *sm, uint64_t ses, uint64_t seq,
                                  const char *name)
{
    rdlm_lease_cmd_t c = lt_cmd(RDLM_LEASE_OP_CANCEL, ses, seq, name);
    return lt_apply(sm, &c);
}

/* CLOSE, EPOCH, EXPIRE. */
static rdlm_lease_result_t plain(rdlm_lease_sm_t *sm, unsigned op, uint64_t ses,
                                 uint64_t seq)
{
    rdlm_lease_cmd_t c = lt_cmd(op, ses, seq, NULL);
    return lt_apply(sm, &c);
}

static uint64_t holder_of(const rdlm_lease_sm_t *sm, const char *name, size_t *waiters_p)
{
    uint64_t holder, token;
    size_t waiters;

    if (rdlm_lease_sm_lock_info(sm, name, &holder, &token, &waiters) != RDLM_OK) {
        return 0;
    }
    if (waiters_p != NULL) {
        *waiters_p = waiters;
    }
    return holder;
}

/* Applying c answers status and leaves the state exactly as it was. */
static void assert_refused_unchanged(rdlm_lease_sm_t *sm, const rdlm_lease_cmd_t *c,
                                     rdlm_status_t status)
{
    uint64_t before = rdlm_lease_sm_hash(sm);
    rdlm_lease_result_t r = lt_apply(sm, c);

    assert_int_equal(r.status, status);
    assert_true(rdlm_lease_sm_hash(sm) == before);
}

/* ---- grants, queues, tokens ---- */

static void free_lock_is_granted_and_waiters_follow_in_fifo_order(void **state)
{
    grants_t gs;
    rdlm_lease_sm_t *sm = new_sm(NULL, &gs);
    uint64_t a = open_session(sm, 1), b = open_session(sm, 2), c = open_session(sm, 3);
    rdlm_lease_result_t ra, rb, rc;
    size_t waiters = 0;

    (void)state;
    assert_true(a == 1 && b == 2 && c == 3);
    ra = acquire(sm, a, 1, "x", 0);
    assert_int_equal(ra.status, RDLM_OK);
    assert_true(ra.token == (UINT64_C(1) << 40 | 1));
    assert_int_equal(ra.broken, 0);
    rb = acquire(sm, b, 1, "x", 0);
    rc = acquire(sm, c, 1, "x", 0);
    assert_int_equal(rb.status, RDLM_INPROGRESS);
    assert_int_equal(rc.status, RDLM_INPROGRESS);
    assert_true(holder_of(sm, "x", &waiters) == a);
    assert_int_equal(waiters, 2);
    assert_int_equal(gs.n, 0); /* the immediate grant is in the result only */

    assert_int_equal(release(sm, a, 2, "x", ra.token).status, RDLM_OK);
    assert_int_equal(gs.n, 1);
    assert_true(gs.g[0].session == b && gs.g[0].seq == 1 && gs.g[0].token > ra.token);
    assert_string_equal(gs.g[0].name, "x");
    assert_int_equal(gs.g[0].broken, 0);
    assert_true(holder_of(sm, "x", NULL) == b);

    assert_int_equal(release(sm, b, 2, "x", gs.g[0].token).status, RDLM_OK);
    assert_int_equal(gs.n, 2);
    assert_true(gs.g[1].session == c && gs.g[1].token > gs.g[0].token);
    assert_int_equal(release(sm, c, 2, "x", gs.g[1].token).status, RDLM_OK);
    assert_int_equal(gs.n, 2);
    assert_int_equal(rdlm_lease_sm_lock_count(sm), 0);
    assert_true(holder_of(sm, "x", NULL) == 0);
    rdlm_lease_sm_destroy(sm);
}

static void tokens_strictly_increase_across_locks_epochs_and_removed_records(void **state)
{
    grants_t gs;
    rdlm_lease_sm_t *sm = new_sm(NULL, &gs);
    uint64_t a = open_session(sm, 1), b = open_session(sm, 2);
    uint64_t seq_a = 1, seq_b = 1, last = 0;
    const char *names[] = {"p", "q", "r"};

    (void)state;
    for (int round = 0; round < 30; round++) {
        const char *n = names[round % 3];
        rdlm_lease_result_t r = acquire(sm, a, seq_a++, n, 0);
        assert_int_equal(r.status, RDLM_OK);
        assert_true(r.token > last);
        assert_true(r.token >> 40 == rdlm_lease_sm_epoch(sm));
        last = r.token;
        if (round % 2) { /* pass it through a waiter */
            assert_int_equal(acquire(sm, b, seq_b++, n, 0).status, RDLM_INPROGRESS);
            assert_int_equal(release(sm, a, seq_a++, n, r.token).status, RDLM_OK);
            assert_true(gs.g[(gs.n - 1) % 64].token > last);
            last = gs.g[(gs.n - 1) % 64].token;
            assert_int_equal(release(sm, b, seq_b++, n, last).status, RDLM_OK);
        } else { /* the record disappears */
            assert_int_equal(release(sm, a, seq_a++, n, r.token).status, RDLM_OK);
        }
        assert_int_equal(rdlm_lease_sm_lock_count(sm), 0);
        if (round % 5 == 4) {
            rdlm_lease_result_t e = plain(sm, RDLM_LEASE_OP_EPOCH, b, seq_b++);
            assert_int_equal(e.status, RDLM_OK);
            assert_true(e.epoch == rdlm_lease_sm_epoch(sm));
            assert_true(e.epoch == 1 + (uint64_t)(round + 1) / 5);
        }
    }
    rdlm_lease_sm_destroy(sm);
}

/* EPOCH with a floor (its token): the epoch becomes max(epoch + 1, floor), so it
 * still strictly increases; a retry is answered from the state whatever its floor; a
 * floor past EPOCH_MAX is not a command at all. */
static rdlm_lease_result_t epoch_above(rdlm_lease_sm_t *sm, uint64_t ses, uint64_t seq,
                                       uint64_t floor)
{
    rdlm_lease_cmd_t c = lt_cmd(RDLM_LEASE_OP_EPOCH, ses, seq, NULL);

    c.token = floor;
    return lt_apply(sm, &c);
}

static void epoch_rises_to_its_floor_and_never_falls(void **state)
{
    const uint64_t epoch_max = (UINT64_C(1) << 24) - 1;
    const uint64_t floors[] = {0, 1000, 500, 1002, epoch_max};
    const uint64_t want[] = {2, 1000, 1001, 1002, epoch_max};
    rdlm_lease_sm_t *sm = new_sm(NULL, NULL);
    uint64_t a = open_session(sm, 1), seq = 0, before;
    uint8_t buf[RDLM_LEASE_CMD_MAX];
    rdlm_lease_result_t r;
    rdlm_lease_cmd_t c;
    size_t n;

    (void)state;
    for (size_t i = 0; i < sizeof(floors) / sizeof(floors[0]); i++) {
        r = epoch_above(sm, a, ++seq, floors[i]);
        assert_int_equal(r.status, RDLM_OK);
        assert_true(r.epoch == want[i] && rdlm_lease_sm_epoch(sm) == want[i]);
        c = lt_cmd(RDLM_LEASE_OP_EPOCH, a, seq, NULL);
        c.token = epoch_max;
        assert_refused_unchanged(sm, &c, RDLM_OK); /* a retry: answered, not applied */
        if (want[i] == 1000) {
            r = acquire(sm, a, ++seq, "x", 0);
            assert_true(r.status == RDLM_OK && r.token >> 40 == 1000);
            assert_int_equal(release(sm, a, ++seq, "x", r.token).status, RDLM_OK);
        }
    }
    c = lt_cmd(RDLM_LEASE_OP_EPOCH, a, ++seq, NULL);
    assert_refused_unchanged(sm, &c, RDLM_ERR_QUOTA);
    c.token = epoch_max;
    n = lt_encode(&c, buf);
    buf[47] = 0x01; /* the floor's fourth byte: above EPOCH_MAX */
    before = rdlm_lease_sm_hash(sm);
    rdlm_lease_sm_apply(sm, buf, n, &r);
    assert_int_equal(r.status, RDLM_ERR_PROTOCOL);
    assert_true(rdlm_lease_sm_hash(sm) == before);
    rdlm_lease_sm_destroy(sm);
}

static void try_on_a_held_lock_is_busy_and_changes_nothing(void **state)
{
    rdlm_lease_sm_t *sm = new_sm(NULL, NULL);
    uint64_t a = open_session(sm, 1), b = open_session(sm, 2);
    rdlm_lease_cmd_t try_b = lt_cmd(RDLM_LEASE_OP_ACQUIRE, b, 1, "x");
    rdlm_lease_result_t ra;

    (void)state;
    try_b.flags = RDLM_LEASE_ACQ_TRY;
    ra = acquire(sm, a, 1, "x", RDLM_LEASE_ACQ_TRY);
    assert_int_equal(ra.status, RDLM_OK);
    assert_refused_unchanged(sm, &try_b, RDLM_ERR_BUSY);
    assert_int_equal(release(sm, a, 2, "x", ra.token).status, RDLM_OK);
    /* The refused seq was not consumed: the same request now succeeds. */
    assert_int_equal(lt_apply(sm, &try_b).status, RDLM_OK);
    rdlm_lease_sm_destroy(sm);
}

static void release_by_non_owner_or_twice_is_not_owner_and_changes_nothing(void **state)
{
    rdlm_lease_sm_t *sm = new_sm(NULL, NULL);
    uint64_t a = open_session(sm, 1), b = open_session(sm, 2);
    rdlm_lease_result_t ra = acquire(sm, a, 1, "x", 0);
    rdlm_lease_cmd_t c;

    (void)state;
    c = lt_cmd(RDLM_LEASE_OP_RELEASE, b, 1, "x");
    c.token = ra.token; /* right token, wrong session */
    assert_refused_unchanged(sm, &c, RDLM_ERR_NOT_OWNER);
    c = lt_cmd(RDLM_LEASE_OP_RELEASE, a, 2, "x");
    c.token = ra.token + 1; /* right session, wrong token */
    assert_refused_unchanged(sm, &c, RDLM_ERR_NOT_OWNER);
    c = lt_cmd(RDLM_LEASE_OP_RELEASE, a, 2, "never");
    assert_refused_unchanged(sm, &c, RDLM_ERR_NOT_OWNER);
    assert_int_equal(release(sm, a, 2, "x", ra.token).status, RDLM_OK);
    c = lt_cmd(RDLM_LEASE_OP_RELEASE, a, 3, "x");
    c.token = ra.token; /* double release */
    assert_refused_unchanged(sm, &c, RDLM_ERR_NOT_OWNER);
    rdlm_lease_sm_destroy(sm);
}

/* ---- session end ---- */

static void expire_passes_held_locks_as_broken_and_drops_waits(void **state)
{
    grants_t gs;
    rdlm_lease_sm_t *sm = new_sm(NULL, &gs);
    uint64_t a = open_session(sm, 1), b = open_session(sm, 2), c = open_session(sm, 3);
    rdlm_lease_result_t r;
    size_t waiters = 9;

    (void)state;
    assert_int_equal(acquire(sm, a, 1, "x", 0).status, RDLM_OK);
    assert_int_equal(acquire(sm, a, 2, "solo", 0).status, RDLM_OK);
    assert_int_equal(acquire(sm, c, 1, "y", 0).status, RDLM_OK);
    assert_int_equal(acquire(sm, b, 1, "x", 0).status, RDLM_INPROGRESS);
    assert_int_equal(acquire(sm, a, 3, "y", 0).status, RDLM_INPROGRESS);

    r = plain(sm, RDLM_LEASE_OP_EXPIRE, a, 0);
    assert_int_equal(r.status, RDLM_OK);
    assert_int_equal(gs.n, 1);
    assert_true(gs.g[0].session == b && gs.g[0].seq == 1);
    assert_int_equal(gs.g[0].broken, 1);
    assert_true(holder_of(sm, "x", &waiters) == b);
    assert_int_equal(waiters, 0);
    assert_true(holder_of(sm, "y", &waiters) == c);
    assert_int_equal(waiters, 0);                  /* a's wait is gone */
    assert_true(holder_of(sm, "solo", NULL) == 0); /* nobody waited: record removed */
    assert_int_equal(rdlm_lease_sm_session_count(sm), 2);
    /* b re-sending its acquire learns it holds the lock, broken. */
    r = acquire(sm, b, 1, "x", 0);
    assert_int_equal(r.status, RDLM_OK);
    assert_true(r.token == gs.g[0].token);
    assert_int_equal(r.broken, 1);
    /* Everything a sends now is refused: its lease is gone. */
    assert_int_equal(acquire(sm, a, 4, "z", 0).status, RDLM_ERR_LEASE_EXPIRED);
    rdlm_lease_sm_destroy(sm);
}

static void expire_or_ops_on_an_unknown_session_change_nothing(void **state)
{
    rdlm_lease_sm_t *sm = new_sm(NULL, NULL);
    uint64_t a = open_session(sm, 1);
    rdlm_lease_cmd_t c;

    (void)state;
    assert_int_equal(acquire(sm, a, 1, "x", 0).status, RDLM_OK);
    c = lt_cmd(RDLM_LEASE_OP_EXPIRE, 77, 0, NULL);
    assert_refused_unchanged(sm, &c, RDLM_ERR_LEASE_EXPIRED);
    c = lt_cmd(RDLM_LEASE_OP_CLOSE, 77, 1, NULL);
    assert_refused_unchanged(sm, &c, RDLM_ERR_LEASE_EXPIRED);
    c = lt_cmd(RDLM_LEASE_OP_ACQUIRE, 77, 1, "x");
    assert_refused_unchanged(sm, &c, RDLM_ERR_LEASE_EXPIRED);
    c = lt_cmd(RDLM_LEASE_OP_CANCEL, 77, 1, "x");
    assert_refused_unchanged(sm, &c, RDLM_ERR_LEASE_EXPIRED);
    c = lt_cmd(RDLM_LEASE_OP_EPOCH, 77, 1, NULL);
    assert_refused_unchanged(sm, &c, RDLM_ERR_LEASE_EXPIRED);
    assert_int_equal(plain(sm, RDLM_LEASE_OP_EXPIRE, a, 0).status, RDLM_OK);
    c = lt_cmd(RDLM_LEASE_OP_EXPIRE, a, 0, NULL); /* a second EXPIRE */
    assert_refused_unchanged(sm, &c, RDLM_ERR_LEASE_EXPIRED);
    rdlm_lease_sm_destroy(sm);
}

static void only_the_opening_nonce_owns_a_session(void **state)
{
    rdlm_lease_sm_t *sm = new_sm(NULL, NULL);
    uint64_t a = open_session(sm, 0x1111), b = open_session(sm, 0x2222);

    (void)state;
    assert_int_equal(rdlm_lease_sm_session_owner(sm, a, 0x1111), RDLM_OK);
    assert_int_equal(rdlm_lease_sm_session_owner(sm, b, 0x2222), RDLM_OK);
    assert_int_equal(rdlm_lease_sm_session_owner(sm, a, 0x2222), RDLM_ERR_AUTH);
    assert_int_equal(rdlm_lease_sm_session_owner(sm, a, 0), RDLM_ERR_AUTH);
    assert_int_equal(rdlm_lease_sm_session_owner(sm, b + 1, 0x2222),
                     RDLM_ERR_LEASE_EXPIRED);
    rdlm_lease_sm_destroy(sm);
}

static void close_passes_held_locks_unbroken(void **state)
{
    grants_t gs;
    rdlm_lease_sm_t *sm = new_sm(NULL, &gs);
    uint64_t a = open_session(sm, 1), b = open_session(sm, 2);
    uint32_t ttl = 0;

    (void)state;
    assert_int_equal(acquire(sm, a, 1, "x", 0).status, RDLM_OK);
    assert_int_equal(acquire(sm, b, 1, "x", 0).status, RDLM_INPROGRESS);
    assert_int_equal(plain(sm, RDLM_LEASE_OP_CLOSE, a, 2).status, RDLM_OK);
    assert_int_equal(gs.n, 1);
    assert_true(gs.g[0].session == b);
    assert_int_equal(gs.g[0].broken, 0);
    assert_int_equal(rdlm_lease_sm_session_ttl(sm, a, &ttl, NULL), 0);
    assert_int_equal(rdlm_lease_sm_session_ttl(sm, b, &ttl, NULL), 1);
    assert_int_equal(ttl, 5000);
    /* FATE: ended (ids are not reused), open, never opened. */
    assert_int_equal(rdlm_lease_sm_session_fate(sm, a, NULL), RDLM_ERR_LEASE_EXPIRED);
    assert_int_equal(rdlm_lease_sm_session_fate(sm, b, NULL), RDLM_OK);
    assert_int_equal(rdlm_lease_sm_session_fate(sm, b + 1, NULL), RDLM_ERR_NOT_FOUND);
    assert_int_equal(rdlm_lease_sm_session_fate(sm, 0, NULL), RDLM_ERR_NOT_FOUND);
    /* Closing the last holder removes the record. */
    assert_int_equal(plain(sm, RDLM_LEASE_OP_CLOSE, b, 2).status, RDLM_OK);
    assert_int_equal(rdlm_lease_sm_lock_count(sm), 0);
    assert_int_equal(rdlm_lease_sm_session_count(sm), 0);
    rdlm_lease_sm_destroy(sm);
}

static void cancel_drops_a_wait_or_releases_the_hold_of_that_acquire(void **state)
{
    grants_t gs;
    rdlm_lease_sm_t *sm = new_sm(NULL, &gs);
    uint64_t a = open_session(sm, 1), b = open_session(sm, 2), c = open_session(sm, 3);
    rdlm_lease_cmd_t cmd;
    size_t waiters = 0;

    (void)state;
    assert_int_equal(acquire(sm, a, 1, "x", 0).status, RDLM_OK);
    assert_int_equal(acquire(sm, b, 5, "x", 0).status, RDLM_INPROGRESS);
    assert_int_equal(acquire(sm, c, 1, "x", 0).status, RDLM_INPROGRESS);
    /* A cancel naming another seq, or another lock, does nothing. */
    cmd = lt_cmd(RDLM_LEASE_OP_CANCEL, b, 4, "x");
    assert_refused_unchanged(sm, &cmd, RDLM_OK);
    cmd = lt_cmd(RDLM_LEASE_OP_CANCEL, b, 5, "other");
    assert_refused_unchanged(sm, &cmd, RDLM_OK);
    /* b's wait goes; cancelling again is harmless. */
    assert_int_equal(cancel(sm, b, 5, "x").status, RDLM_OK);
    assert_true(holder_of(sm, "x", &waiters) == a);
    assert_int_equal(waiters, 1);
    cmd = lt_cmd(RDLM_LEASE_OP_CANCEL, b, 5, "x");
    assert_refused_unchanged(sm, &cmd, RDLM_OK);
    /* b's re-sent acquire is refused: it is gone, not waiting. */
    assert_int_equal(acquire(sm, b, 5, "x", 0).status, RDLM_ERR_INVALID_ARG);
    /* a's cancel of the acquire that got the lock releases it to c. */
    assert_int_equal(cancel(sm, a, 1, "x").status, RDLM_OK);
    assert_int_equal(gs.n, 1);
    assert_true(gs.g[0].session == c && gs.g[0].seq == 1 && gs.g[0].broken == 0);
    assert_true(holder_of(sm, "x", &waiters) == c);
    assert_int_equal(waiters, 0);
    /* c holds it with seq 1: a cancel of seq 2 leaves it, and the ACQUIRE with seq 2
     * that commits after its cancel (a client that gave up) is never queued. */
    assert_int_equal(cancel(sm, c, 2, "y").status, RDLM_OK);
    assert_true(holder_of(sm, "x", NULL) == c);
    assert_int_equal(acquire(sm, c, 2, "y", 0).status, RDLM_ERR_INVALID_ARG);
    assert_int_equal(rdlm_lease_sm_lock_info(sm, "y", &(uint64_t){0}, &(uint64_t){0},
                                             &waiters),
                     RDLM_ERR_NOT_FOUND);
    rdlm_lease_sm_destroy(sm);
}

/* ---- de-duplication ---- */

static void every_op_is_deduplicated_by_seq_and_open_by_nonce(void **state)
{
    rdlm_lease_sm_t *sm = new_sm(NULL, NULL);
    uint64_t a = open_session(sm, 0xaaaa), b = open_session(sm, 0xbbbb);
    rdlm_lease_result_t r, ra;
    rdlm_lease_cmd_t c;

    (void)state;
    /* OPEN: the same nonce gives the same session; from another uid it is refused. */
    r = open_nonce(sm, 0xaaaa, 1000);
    assert_int_equal(r.status, RDLM_OK);
    assert_true(r.session == a);
    assert_int_equal(rdlm_lease_sm_session_count(sm), 2);
    c = lt_cmd(RDLM_LEASE_OP_OPEN, 0, 0, "ns");
    c.nonce = 0xaaaa;
    c.uid = 1001;
    assert_refused_unchanged(sm, &c, RDLM_ERR_AUTH);
    /* ACQUIRE: held -> OK and the same token; waiting -> INPROGRESS. */
    ra = acquire(sm, a, 1, "x", 0);
    r = acquire(sm, a, 1, "x", 0);
    assert_int_equal(r.status, RDLM_OK);
    assert_true(r.token == ra.token);
    assert_int_equal(acquire(sm, b, 1, "x", 0).status, RDLM_INPROGRESS);
    c = lt_cmd(RDLM_LEASE_OP_ACQUIRE, b, 1, "x");
    assert_refused_unchanged(sm, &c, RDLM_INPROGRESS);
    /* A new acquire by the holder, or by a session already waiting, is refused. */
    c = lt_cmd(RDLM_LEASE_OP_ACQUIRE, a, 2, "x");
    assert_refused_unchanged(sm, &c, RDLM_ERR_INVALID_ARG);
    c = lt_cmd(RDLM_LEASE_OP_ACQUIRE, b, 2, "x");
    assert_refused_unchanged(sm, &c, RDLM_ERR_INVALID_ARG);
    /* RELEASE: the same seq again is OK and changes nothing; an older one is refused. */
    assert_int_equal(acquire(sm, a, 2, "y", 0).status, RDLM_OK);
    assert_int_equal(release(sm, a, 3, "x", ra.token).status, RDLM_OK);
    c = lt_cmd(RDLM_LEASE_OP_RELEASE, a, 3, "x");
    c.token = ra.token;
    assert_refused_unchanged(sm, &c, RDLM_OK);
    c.seq = 2;
    assert_refused_unchanged(sm, &c, RDLM_ERR_INVALID_ARG);
    /* EPOCH: bumped once. */
    r = plain(sm, RDLM_LEASE_OP_EPOCH, a, 4);
    assert_true(r.status == RDLM_OK && r.epoch == 2);
    c = lt_cmd(RDLM_LEASE_OP_EPOCH, a, 4, NULL);
    assert_refused_unchanged(sm, &c, RDLM_OK);
    assert_true(rdlm_lease_sm_epoch(sm) == 2);
    /* seq 0 is never a request. */
    c = lt_cmd(RDLM_LEASE_OP_EPOCH, a, 0, NULL);
    assert_refused_unchanged(sm, &c, RDLM_ERR_INVALID_ARG);
    c = lt_cmd(RDLM_LEASE_OP_ACQUIRE, a, 0, "z");
    assert_refused_unchanged(sm, &c, RDLM_ERR_INVALID_ARG);
    /* CLOSE: the same seq again is OK while the session lives... it does not. */
    c = lt_cmd(RDLM_LEASE_OP_CLOSE, b, 1, NULL); /* b's last seq is 1 (the acquire) */
    assert_refused_unchanged(sm, &c, RDLM_OK);
    assert_int_equal(plain(sm, RDLM_LEASE_OP_CLOSE, b, 2).status, RDLM_OK);
    c = lt_cmd(RDLM_LEASE_OP_CLOSE, b, 2, NULL);
    assert_refused_unchanged(sm, &c, RDLM_ERR_LEASE_EXPIRED);
    /* After CLOSE the nonce is free again and opens a new session. */
    r = open_nonce(sm, 0xbbbb, 1000);
    assert_int_equal(r.status, RDLM_OK);
    assert_true(r.session == 3);
    rdlm_lease_sm_destroy(sm);
}

/* ---- limits and totality ---- */

static void quotas_refuse_with_quota_and_change_nothing(void **state)
{
    const rdlm_lease_limits_t lim = {.max_sessions = 3,
                                     .max_locks = 3,
                                     .max_held_per_session = 2,
                                     .max_waits_per_session = 1};
    rdlm_lease_sm_t *sm = new_sm(&lim, NULL);
    uint64_t a = open_session(sm, 1), b = open_session(sm, 2), c = open_session(sm, 3);
    rdlm_lease_cmd_t cmd;

    (void)state;
    cmd = lt_cmd(RDLM_LEASE_OP_OPEN, 0, 0, NULL);
    cmd.nonce = 4;
    assert_refused_unchanged(sm, &cmd, RDLM_ERR_QUOTA); /* sessions */
    assert_int_equal(acquire(sm, a, 1, "l1", 0).status, RDLM_OK);
    assert_int_equal(acquire(sm, a, 2, "l2", 0).status, RDLM_OK);
    cmd = lt_cmd(RDLM_LEASE_OP_ACQUIRE, a, 3, "l3");
    assert_refused_unchanged(sm, &cmd, RDLM_ERR_QUOTA); /* held per session */
    assert_int_equal(acquire(sm, b, 1, "l3", 0).status, RDLM_OK);
    cmd = lt_cmd(RDLM_LEASE_OP_ACQUIRE, c, 1, "l4");
    assert_refused_unchanged(sm, &cmd, RDLM_ERR_QUOTA); /* locks */
    assert_int_equal(acquire(sm, c, 1, "l1", 0).status, RDLM_INPROGRESS);
    cmd = lt_cmd(RDLM_LEASE_OP_ACQUIRE, c, 2, "l2");
    assert_refused_unchanged(sm, &cmd, RDLM_ERR_QUOTA); /* waits per session */
    /* held + waiting counts against the held quota: a later grant cannot exceed it. */
    assert_int_equal(acquire(sm, b, 2, "l1", 0).status, RDLM_INPROGRESS);
    cmd = lt_cmd(RDLM_LEASE_OP_ACQUIRE, b, 3, "l2");
    assert_refused_unchanged(sm, &cmd, RDLM_ERR_QUOTA);
    /* A refused request did not consume its seq. */
    assert_int_equal(plain(sm, RDLM_LEASE_OP_CLOSE, a, 3).status, RDLM_OK);
    assert_true(holder_of(sm, "l1", NULL) == c);
    assert_int_equal(acquire(sm, c, 2, "l2", 0).status, RDLM_OK);
    cmd = lt_cmd(RDLM_LEASE_OP_ACQUIRE, c, 3, "l4");
    assert_refused_unchanged(sm, &cmd, RDLM_ERR_QUOTA); /* held per session, again */
    rdlm_lease_sm_destroy(sm);
}

static void garbage_entries_are_protocol_errors_and_change_nothing(void **state)
{
    rdlm_lease_sm_t *sm = new_sm(NULL, NULL);
    uint64_t a = open_session(sm, 1);
    uint64_t rng = lt_seed("garbage_entries");
    uint8_t buf[RDLM_LEASE_CMD_MAX];
    rdlm_lease_result_t r;
    rdlm_lease_cmd_t c;
    uint64_t h;

    (void)state;
    assert_int_equal(acquire(sm, a, 1, "x", 0).status, RDLM_OK);
    h = rdlm_lease_sm_hash(sm);
    rdlm_lease_sm_apply(sm, NULL, 0, &r);
    assert_int_equal(r.status, RDLM_ERR_PROTOCOL);
    /* Client-only ops are not log entries. */
    c = lt_cmd(RDLM_LEASE_OP_RENEW, a, 2, NULL);
    assert_refused_unchanged(sm, &c, RDLM_ERR_PROTOCOL);
    c = lt_cmd(RDLM_LEASE_OP_STATUS, 0, 0, NULL);
    assert_refused_unchanged(sm, &c, RDLM_ERR_PROTOCOL);
    for (long i = 0; i < lt_iterations(100000) / 10; i++) {
        size_t len = (size_t)lt_below(&rng, sizeof(buf));
        for (size_t k = 0; k < len; k++) {
            buf[k] = (uint8_t)lt_rand(&rng);
        }
        rdlm_lease_sm_apply(sm, buf, len, &r);
        assert_int_equal(r.status, RDLM_ERR_PROTOCOL);
    }
    assert_true(rdlm_lease_sm_hash(sm) == h);
    rdlm_lease_sm_destroy(sm);
}

/* Every allocation of an apply fails in turn: NO_MEMORY and nothing changed, until
 * the apply needs no more than were allowed. */
static void assert_allocation_failures_change_nothing(rdlm_lease_sm_t *sm,
                                                      const rdlm_lease_cmd_t *c,
                                                      rdlm_status_t final)
{
    for (long k = 0;; k++) {
        uint64_t h = rdlm_lease_sm_hash(sm);
        rdlm_lease_result_t r;
        fail_countdown = k;
        r = lt_apply(sm, c);
        fail_countdown = -1;
        if (r.status != RDLM_ERR_NO_MEMORY) {
            assert_int_equal(r.status, final);
            return;
        }
        assert_true(rdlm_lease_sm_hash(sm) == h);
    }
}

static void allocation_failures_in_apply_and_restore_change_nothing(void **state)
{
    rdlm_lease_sm_t *sm = new_sm(NULL, NULL), *other = new_sm(NULL, NULL);
    rdlm_lease_cmd_t c;
    void *snap = NULL;
    size_t len = 0;
    uint64_t h;

    (void)state;
    c = lt_cmd(RDLM_LEASE_OP_OPEN, 0, 0, NULL);
    c.nonce = 1;
    assert_allocation_failures_change_nothing(sm, &c, RDLM_OK); /* session array */
    c.nonce = 2;
    assert_allocation_failures_change_nothing(sm, &c, RDLM_OK);
    c = lt_cmd(RDLM_LEASE_OP_ACQUIRE, 1, 1, "x");
    assert_allocation_failures_change_nothing(sm, &c, RDLM_OK); /* lock array, record */
    c = lt_cmd(RDLM_LEASE_OP_ACQUIRE, 2, 1, "x");
    assert_allocation_failures_change_nothing(sm, &c, RDLM_INPROGRESS); /* waiters */
    /* Snapshot and restore. */
    fail_countdown = 0;
    assert_int_equal(rdlm_lease_sm_snapshot(sm, &snap, &len), RDLM_ERR_NO_MEMORY);
    fail_countdown = -1;
    assert_int_equal(rdlm_lease_sm_snapshot(sm, &snap, &len), RDLM_OK);
    assert_int_equal(open_session(other, 9), 1);
    h = rdlm_lease_sm_hash(other);
    for (long k = 0;; k++) {
        rdlm_status_t s;
        fail_countdown = k;
        s = rdlm_lease_sm_restore(other, snap, len);
        fail_countdown = -1;
        if (s == RDLM_OK) {
            break;
        }
        assert_int_equal(s, RDLM_ERR_NO_MEMORY);
        assert_true(rdlm_lease_sm_hash(other) == h);
    }
    assert_true(rdlm_lease_sm_hash(other) == rdlm_lease_sm_hash(sm));
    free(snap);
    rdlm_lease_sm_destroy(other);
    rdlm_lease_sm_destroy(sm);
}

/* ---- snapshots ---- */

/* A state with a bit of everything: sessions with namespaces, held locks, queues,
 * a broken grant, a bumped epoch, removed sessions (gaps in the ids). */
static rdlm_lease_sm_t *rich_state(void)
{
    rdlm_lease_sm_t *sm = new_sm(NULL, NULL);
    uint64_t s[6];

    for (int i = 0; i < 6; i++) {
        s[i] = open_session(sm, 100 + (uint64_t)i);
    }
    assert_int_equal(plain(sm, RDLM_LEASE_OP_EPOCH, s[0], 1).status, RDLM_OK);
    assert_int_equal(acquire(sm, s[0], 2, "alpha", 0).status, RDLM_OK);
    assert_int_equal(acquire(sm, s[1], 1, "alpha", 0).status, RDLM_INPROGRESS);
    assert_int_equal(acquire(sm, s[2], 1, "alpha", 0).status, RDLM_INPROGRESS);
    assert_int_equal(acquire(sm, s[3], 1, "beta", 0).status, RDLM_OK);
    assert_int_equal(acquire(sm, s[4], 1, "beta", 0).status, RDLM_INPROGRESS);
    assert_int_equal(acquire(sm, s[4], 2, "gamma/1", 0).status, RDLM_OK);
    assert_int_equal(acquire(sm, s[5], 1, "delta", 0).status, RDLM_OK);
    assert_int_equal(plain(sm, RDLM_LEASE_OP_EXPIRE, s[3], 0).status, RDLM_OK);
    assert_int_equal(plain(sm, RDLM_LEASE_OP_CLOSE, s[5], 2).status, RDLM_OK);
    return sm;
}

typedef struct seen_sessions {
    uint64_t ids[8];
    int n;
} seen_sessions_t;

static void collect_session(void *arg, uint64_t session, uint32_t ttl_ms)
{
    seen_sessions_t *seen = arg;

    assert_int_equal(ttl_ms, 5000);
    seen->ids[seen->n++ % 8] = session;
}

static void snapshot_restore_round_trip_gives_the_same_state(void **state)
{
    seen_sessions_t seen = {.n = 0};
    rdlm_lease_sm_t *sm = rich_state(), *copy = new_sm(NULL, NULL);
    void *a, *b;
    size_t alen, blen;
    uint64_t holder, token;
    size_t waiters;
    char ns[RDLM_LEASE_NAME_MAX + 1];
    uint32_t ttl;

    (void)state;
    assert_int_equal(rdlm_lease_sm_snapshot(sm, &a, &alen), RDLM_OK);
    assert_int_equal(rdlm_lease_sm_restore(copy, a, alen), RDLM_OK);
    assert_true(rdlm_lease_sm_hash(copy) == rdlm_lease_sm_hash(sm));
    assert_int_equal(rdlm_lease_sm_snapshot(copy, &b, &blen), RDLM_OK);
    assert_int_equal(alen, blen);
    assert_memory_equal(a, b, alen);
    assert_int_equal(rdlm_lease_sm_session_count(copy), 4);
    assert_int_equal(rdlm_lease_sm_lock_count(copy), 3);
    assert_true(rdlm_lease_sm_epoch(copy) == 2);
    assert_int_equal(rdlm_lease_sm_lock_info(copy, "beta", &holder, &token, &waiters),
                     RDLM_OK);
    assert_true(holder == 5 && waiters == 0 && token >> 40 == 2);
    assert_int_equal(rdlm_lease_sm_session_ttl(copy, 2, &ttl, ns), 1);
    assert_string_equal(ns, "ns");
    assert_int_equal(ttl, 5000);
    rdlm_lease_sm_foreach_session(copy, collect_session, &seen);
    assert_int_equal(seen.n, 4);
    assert_true(seen.ids[0] == 1 && seen.ids[1] == 2 && seen.ids[2] == 3 &&
                seen.ids[3] == 5); /* id order; 4 expired, 6 closed */
    /* Both go on identically: the next token and the next session id. */
    assert_true(acquire(copy, 1, 9, "new", 0).token == acquire(sm, 1, 9, "new", 0).token);
    assert_true(open_session(copy, 555) == open_session(sm, 555));
    assert_true(rdlm_lease_sm_hash(copy) == rdlm_lease_sm_hash(sm));
    /* The derived counts were rebuilt: s[4] holds 2, waits 0 (quota arithmetic). */
    assert_int_equal(plain(copy, RDLM_LEASE_OP_CLOSE, 5, 3).status, RDLM_OK);
    assert_int_equal(plain(sm, RDLM_LEASE_OP_CLOSE, 5, 3).status, RDLM_OK);
    assert_true(rdlm_lease_sm_hash(copy) == rdlm_lease_sm_hash(sm));
    free(a);
    free(b);
    rdlm_lease_sm_destroy(copy);
    rdlm_lease_sm_destroy(sm);
}

/* The snapshot's trailing FNV-1a, recomputed after a deliberate change so that the
 * checks behind it are reached. */
static void reseal(uint8_t *b, size_t len)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);

    for (size_t i = 0; i < len - 8; i++) {
        h = (h ^ b[i]) * UINT64_C(0x100000001b3);
    }
    for (int i = 0; i < 8; i++) {
        b[len - 8 + (size_t)i] = (uint8_t)(h >> (8 * i));
    }
}

/* sm's state with the header's u64 at offset (8: epoch, 16: grant_seq) set to v. */
static rdlm_status_t restore_patched(rdlm_lease_sm_t *sm, size_t offset, uint64_t v)
{
    uint8_t *snap;
    size_t len;
    rdlm_status_t s;

    assert_int_equal(rdlm_lease_sm_snapshot(sm, (void **)&snap, &len), RDLM_OK);
    for (int i = 0; i < 8; i++) {
        snap[offset + (size_t)i] = (uint8_t)(v >> (8 * i));
    }
    reseal(snap, len);
    s = rdlm_lease_sm_restore(sm, snap, len);
    free(snap);
    return s;
}

static void epoch_and_grant_counters_refuse_before_tokens_would_overflow(void **state)
{
    const uint64_t epoch_max = (UINT64_C(1) << 24) - 1, seq_max = (UINT64_C(1) << 40) - 1;
    rdlm_lease_sm_t *sm = new_sm(NULL, NULL);
    uint64_t a = open_session(sm, 1), b = open_session(sm, 2);
    rdlm_lease_result_t r;
    rdlm_lease_cmd_t c;

    (void)state;
    assert_int_equal(restore_patched(sm, 8, epoch_max + 1), RDLM_ERR_PROTOCOL);
    assert_int_equal(restore_patched(sm, 8, 0), RDLM_ERR_PROTOCOL);
    assert_int_equal(restore_patched(sm, 8, epoch_max - 1), RDLM_OK);
    assert_int_equal(plain(sm, RDLM_LEASE_OP_EPOCH, a, 1).status, RDLM_OK);
    c = lt_cmd(RDLM_LEASE_OP_EPOCH, a, 2, NULL);
    assert_refused_unchanged(sm, &c, RDLM_ERR_QUOTA);
    assert_int_equal(restore_patched(sm, 16, seq_max + 1), RDLM_ERR_PROTOCOL);
    assert_int_equal(restore_patched(sm, 16, seq_max - 2), RDLM_OK);
    r = acquire(sm, a, 2, "x", 0);
    assert_int_equal(r.status, RDLM_OK);
    assert_true(r.token == (epoch_max << 40 | (seq_max - 1)));
    /* One token left: b may queue for it, and then nothing else may be granted. */
    assert_int_equal(acquire(sm, b, 1, "x", 0).status, RDLM_INPROGRESS);
    c = lt_cmd(RDLM_LEASE_OP_ACQUIRE, b, 2, "y");
    assert_refused_unchanged(sm, &c, RDLM_ERR_QUOTA);
    assert_int_equal(release(sm, a, 3, "x", r.token).status, RDLM_OK);
    r = acquire(sm, b, 1, "x", 0);
    assert_true(r.status == RDLM_OK && r.token == UINT64_MAX);
    assert_refused_unchanged(sm, &c, RDLM_ERR_QUOTA);
    rdlm_lease_sm_destroy(sm);
}

static void restore_refuses_every_truncation_and_corruption(void **state)
{
    rdlm_lease_sm_t *src = rich_state(), *dst = new_sm(NULL, NULL), *probe;
    uint64_t rng = lt_seed("snapshot_corruption");
    uint8_t *snap, *bad, *again;
    size_t len, alen;
    long accepted = 0, iters = lt_iterations(100000) / 10;
    uint64_t h;

    (void)state;
    assert_int_equal(open_session(dst, 7), 1);
    assert_int_equal(acquire(dst, 1, 1, "mine", 0).status, RDLM_OK);
    h = rdlm_lease_sm_hash(dst);
    assert_int_equal(rdlm_lease_sm_snapshot(src, (void **)&snap, &len), RDLM_OK);
    bad = malloc(len + 1);
    assert_non_null(bad);
    for (size_t n = 0; n < len; n++) {
        memcpy(bad, snap, n); /* exactly n bytes: ASan sees any read past them */
        assert_int_equal(rdlm_lease_sm_restore(dst, bad, n), RDLM_ERR_PROTOCOL);
    }
    assert_true(rdlm_lease_sm_hash(dst) == h);
    for (long i = 0; i < iters; i++) {
        int flips = 1 + (int)lt_below(&rng, 4);
        int sealed = (int)(i & 1);
        memcpy(bad, snap, len);
        for (int f = 0; f < flips; f++) {
            size_t at = (size_t)lt_below(&rng, len - (sealed ? 8 : 0));
            bad[at] ^= (uint8_t)(1 + lt_below(&rng, 255));
        }
        if (!sealed) {
            assert_int_equal(rdlm_lease_sm_restore(dst, bad, len), RDLM_ERR_PROTOCOL);
            continue;
        }
        /* Past the checksum: refused with dst unchanged, or accepted only if the
         * bytes are the canonical snapshot of the state they describe. */
        reseal(bad, len);
        probe = new_sm(NULL, NULL);
        if (rdlm_lease_sm_restore(probe, bad, len) == RDLM_OK) {
            accepted++;
            assert_int_equal(rdlm_lease_sm_snapshot(probe, (void **)&again, &alen),
                             RDLM_OK);
            assert_int_equal(alen, len);
            assert_memory_equal(again, bad, len);
            free(again);
        } else {
            assert_int_equal(rdlm_lease_sm_restore(dst, bad, len), RDLM_ERR_PROTOCOL);
        }
        rdlm_lease_sm_destroy(probe);
    }
    assert_true(rdlm_lease_sm_hash(dst) == h);
    fprintf(stderr, "snapshot_corruption: %ld of %ld resealed corruptions were valid\n",
            accepted, iters / 2);
    free(bad);
    free(snap);
    rdlm_lease_sm_destroy(dst);
    rdlm_lease_sm_destroy(src);
}

/* ---- randomized differential run ---- */

#define DIFF_CLIENTS 6
#define DIFF_NAMES 5

typedef struct diff_client {
    uint64_t session, seq;
} diff_client_t;

typedef struct diff_grants {
    uint64_t last_token; /* grants of any kind strictly increase */
    uint64_t tokens[16];
    uint64_t fingerprint; /* of the grant notifications, in order */
} diff_grants_t;

static void diff_token(diff_grants_t *g, uint64_t token)
{
    assert_true(token > g->last_token);
    g->last_token = token;
    g->tokens[token % 16] = token;
}

static void diff_grant(void *arg, uint64_t session, uint64_t seq, const char *name,
                       uint64_t token, int broken)
{
    diff_grants_t *g = arg;

    diff_token(g, token);
    g->fingerprint = (g->fingerprint ^ session ^ seq << 8 ^ token ^ (uint64_t)broken ^
                      (uint64_t)(unsigned char)name[0]) *
                     UINT64_C(0x100000001b3);
}

/* A random entry: mostly plausible requests (some duplicates, stale tokens,
 * dead sessions, releases by the holder), some garbage. */
static size_t diff_entry(uint64_t *rng, diff_client_t *cl, const diff_grants_t *g,
                         const rdlm_lease_sm_t *sm, uint64_t *next_seq, uint8_t *buf)
{
    static const char *const names[DIFF_NAMES] = {"a", "b", "c", "dir/d", "e"};
    diff_client_t *c = &cl[lt_below(rng, DIFF_CLIENTS)];
    unsigned pick = (unsigned)lt_below(rng, 100);
    const char *name = names[lt_below(rng, DIFF_NAMES)];
    uint64_t seq = lt_below(rng, 8) == 0 && c->seq > 1 ? c->seq - lt_below(rng, 2)
                                                       : (c->seq = ++*next_seq);
    rdlm_lease_cmd_t cmd;

    if (pick < 3) {
        size_t len = (size_t)lt_below(rng, 80);
        for (size_t k = 0; k < len; k++) {
            buf[k] = (uint8_t)lt_rand(rng);
        }
        return len;
    }
    if (pick < 10 || c->session == 0) {
        cmd = lt_cmd(RDLM_LEASE_OP_OPEN, 0, 0, (c - cl) % 2 ? "ns" : NULL);
        cmd.nonce = (uint64_t)(c - cl) + 1;
        cmd.uid = lt_below(rng, 10) == 0 ? 1 : 0;
    } else if (pick < 45) {
        cmd = lt_cmd(RDLM_LEASE_OP_ACQUIRE, c->session, seq, name);
        cmd.flags = lt_below(rng, 4) == 0 ? RDLM_LEASE_ACQ_TRY : 0;
    } else if (pick < 75) {
        uint64_t holder = 0;
        size_t waiters;
        cmd = lt_cmd(RDLM_LEASE_OP_RELEASE, c->session, seq, name);
        cmd.token = g->tokens[lt_below(rng, 16)];
        if (lt_below(rng, 2)) { /* the holder's own token, sent by the holder */
            rdlm_lease_sm_lock_info(sm, name, &holder, &cmd.token, &waiters);
            cmd.session = holder != 0 ? holder : cmd.session;
        }
    } else if (pick < 85) {
        cmd = lt_cmd(RDLM_LEASE_OP_CANCEL, c->session, c->seq - lt_below(rng, 4), name);
    } else if (pick < 90) {
        cmd = lt_cmd(RDLM_LEASE_OP_EPOCH, c->session, seq, NULL);
    } else if (pick < 95) {
        cmd = lt_cmd(RDLM_LEASE_OP_CLOSE, c->session, seq, NULL);
    } else {
        cmd = lt_cmd(RDLM_LEASE_OP_EXPIRE, c->session, 0, NULL);
    }
    if (cmd.op != RDLM_LEASE_OP_OPEN && lt_below(rng, 20) == 0) {
        cmd.session += 1 + lt_below(rng, 3); /* someone else's, or nobody's */
    }
    return lt_encode(&cmd, buf);
}

/* Apply to sm; check() agreed beforehand, and an error changed nothing. */
static rdlm_lease_result_t diff_apply(rdlm_lease_sm_t *sm, const uint8_t *buf, size_t len,
                                      diff_grants_t *g)
{
    uint64_t before = rdlm_lease_sm_hash(sm);
    rdlm_lease_result_t res, chk;
    rdlm_lease_cmd_t cmd;
    int decoded = rdlm_lease_cmd_decode(buf, len, &cmd) == RDLM_OK;
    rdlm_status_t verdict = decoded ? rdlm_lease_sm_check(sm, &cmd, &chk) : RDLM_OK;

    rdlm_lease_sm_apply(sm, buf, len, &res);
    if (!decoded) {
        assert_int_equal(res.status, RDLM_ERR_PROTOCOL);
    } else if (verdict == RDLM_OK) {
        assert_true(res.status == RDLM_OK || res.status == RDLM_INPROGRESS);
    } else {
        assert_int_equal(res.status, verdict);
    }
    if (res.status < 0) {
        assert_true(rdlm_lease_sm_hash(sm) == before);
    }
    if (decoded && cmd.op == RDLM_LEASE_OP_ACQUIRE && res.status == RDLM_OK &&
        rdlm_lease_sm_hash(sm) != before) { /* a grant, not a duplicate's answer */
        diff_token(g, res.token);
    }
    return res;
}

/* A fresh state machine restored from sm's snapshot has sm's hash and snapshots to
 * the same bytes. */
static void assert_snapshot_round_trips(const rdlm_lease_sm_t *sm)
{
    rdlm_lease_sm_t *copy = new_sm(NULL, NULL);
    void *a, *b;
    size_t alen, blen;

    assert_int_equal(rdlm_lease_sm_snapshot(sm, &a, &alen), RDLM_OK);
    assert_int_equal(rdlm_lease_sm_restore(copy, a, alen), RDLM_OK);
    assert_true(rdlm_lease_sm_hash(copy) == rdlm_lease_sm_hash(sm));
    assert_int_equal(rdlm_lease_sm_snapshot(copy, &b, &blen), RDLM_OK);
    assert_int_equal(alen, blen);
    assert_memory_equal(a, b, alen);
    free(a);
    free(b);
    rdlm_lease_sm_destroy(copy);
}

/* Clients learn their session from OPEN (nonce = client + 1) and forget it once it
 * is closed or expired. */
static void diff_track(diff_client_t *cl, const uint8_t *buf, size_t len,
                       const rdlm_lease_result_t *r)
{
    rdlm_lease_cmd_t cmd;

    if (r->status != RDLM_OK || rdlm_lease_cmd_decode(buf, len, &cmd) != RDLM_OK) {
        return;
    }
    if (cmd.op == RDLM_LEASE_OP_OPEN) {
        cl[cmd.nonce - 1].session = r->session;
    }
    for (int i = 0; i < DIFF_CLIENTS; i++) {
        if ((cmd.op == RDLM_LEASE_OP_CLOSE || cmd.op == RDLM_LEASE_OP_EXPIRE) &&
            cl[i].session == cmd.session) {
            cl[i].session = 0;
        }
    }
}

static void replica_restored_midway_ends_in_the_same_state(void **state)
{
    const rdlm_lease_limits_t lim = {.max_sessions = 5,
                                     .max_locks = 4,
                                     .max_held_per_session = 3,
                                     .max_waits_per_session = 2};
    uint64_t rng = lt_seed("differential");
    long steps = lt_iterations(100000) / 5;
    diff_client_t cl[DIFF_CLIENTS];
    diff_grants_t ga, gb;
    rdlm_lease_sm_t *a, *b;
    uint8_t buf[RDLM_LEASE_CMD_MAX];
    long counts[3] = {0, 0, 0};
    uint64_t next_seq = 0; /* one counter: every session's seqs increase */

    (void)state;
    memset(cl, 0, sizeof(cl));
    memset(&ga, 0, sizeof(ga));
    memset(&gb, 0, sizeof(gb));
    a = new_sm(&lim, NULL);
    b = new_sm(&lim, NULL);
    rdlm_lease_sm_set_grant_cb(a, diff_grant, &ga);
    rdlm_lease_sm_set_grant_cb(b, diff_grant, &gb);
    for (long i = 0; i < steps; i++) {
        size_t len = diff_entry(&rng, cl, &ga, a, &next_seq, buf);
        rdlm_lease_result_t ra = diff_apply(a, buf, len, &ga);
        if (i == steps / 2) { /* b catches up by snapshot */
            void *snap;
            size_t slen;
            assert_int_equal(rdlm_lease_sm_snapshot(a, &snap, &slen), RDLM_OK);
            assert_int_equal(rdlm_lease_sm_restore(b, snap, slen), RDLM_OK);
            free(snap);
            gb = ga;
        } else if (i > steps / 2) {
            rdlm_lease_result_t rb = diff_apply(b, buf, len, &gb);
            assert_int_equal(ra.status, rb.status);
            assert_true(ra.session == rb.session && ra.token == rb.token);
            assert_true(ra.epoch == rb.epoch && ra.broken == rb.broken);
            assert_true(ga.fingerprint == gb.fingerprint);
        }
        counts[ra.status == RDLM_OK ? 0 : ra.status == RDLM_INPROGRESS ? 1 : 2]++;
        diff_track(cl, buf, len, &ra);
        if (i % 997 == 0) {
            assert_snapshot_round_trips(a);
        }
    }
    assert_true(rdlm_lease_sm_hash(a) == rdlm_lease_sm_hash(b));
    fprintf(stderr,
            "differential: %ld steps: %ld ok, %ld queued, %ld refused; "
            "%zu sessions, %zu locks, epoch %" PRIu64 "\n",
            steps, counts[0], counts[1], counts[2], rdlm_lease_sm_session_count(a),
            rdlm_lease_sm_lock_count(a), rdlm_lease_sm_epoch(a));
    rdlm_lease_sm_destroy(a);
    rdlm_lease_sm_destroy(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(free_lock_is_granted_and_waiters_follow_in_fifo_order),
        cmocka_unit_test(tokens_strictly_increase_across_locks_epochs_and_removed_records),
        cmocka_unit_test(epoch_rises_to_its_floor_and_never_falls),
        cmocka_unit_test(try_on_a_held_lock_is_busy_and_changes_nothing),
        cmocka_unit_test(release_by_non_owner_or_twice_is_not_owner_and_changes_nothing),
        cmocka_unit_test(expire_passes_held_locks_as_broken_and_drops_waits),
        cmocka_unit_test(expire_or_ops_on_an_unknown_session_change_nothing),
        cmocka_unit_test(only_the_opening_nonce_owns_a_session),
        cmocka_unit_test(close_passes_held_locks_unbroken),
        cmocka_unit_test(cancel_drops_a_wait_or_releases_the_hold_of_that_acquire),
        cmocka_unit_test(every_op_is_deduplicated_by_seq_and_open_by_nonce),
        cmocka_unit_test(quotas_refuse_with_quota_and_change_nothing),
        cmocka_unit_test(garbage_entries_are_protocol_errors_and_change_nothing),
        cmocka_unit_test(allocation_failures_in_apply_and_restore_change_nothing),
        cmocka_unit_test(snapshot_restore_round_trip_gives_the_same_state),
        cmocka_unit_test(restore_refuses_every_truncation_and_corruption),
        cmocka_unit_test(epoch_and_grant_counters_refuse_before_tokens_would_overflow),
        cmocka_unit_test(replica_restored_midway_ends_in_the_same_state),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
