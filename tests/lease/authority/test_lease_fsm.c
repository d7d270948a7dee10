/* libraft glue: the struct raft_fsm calls (apply through a raft_buffer, snapshot in
 * raft_malloc'd buffers, restore that owns the buffer only when it succeeds), then a
 * 3-server raft/fixture.h cluster in which a server cut off while the others
 * compact their logs catches up through a snapshot and ends in the same state. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <raft/fixture.h>

#include "lease_test.h"
#include "raft_fsm.h"

/* A raft_malloc'd copy of c's encoding, as libraft hands entries to apply. */
static struct raft_buffer entry(const rdlm_lease_cmd_t *c)
{
    uint8_t buf[RDLM_LEASE_CMD_MAX];
    struct raft_buffer b;

    b.len = lt_encode(c, buf);
    b.base = raft_malloc(b.len);
    assert_non_null(b.base);
    memcpy(b.base, buf, b.len);
    return b;
}

static rdlm_lease_result_t *fsm_apply(struct raft_fsm *fsm, const rdlm_lease_cmd_t *c)
{
    struct raft_buffer b = entry(c);
    void *result = NULL;

    assert_int_equal(fsm->apply(fsm, &b, &result), 0);
    raft_free(b.base);
    assert_non_null(result);
    return result;
}

static void init_fills_a_version_1_fsm(void **state)
{
    rdlm_lease_raft_fsm_t a;
    struct raft_fsm fsm;

    (void)state;
    assert_int_equal(rdlm_lease_raft_fsm_init(&a, &fsm, NULL), RDLM_OK);
    assert_int_equal(fsm.version, 1);
    assert_ptr_equal(fsm.data, &a);
    assert_non_null(fsm.apply);
    assert_non_null(fsm.snapshot);
    assert_non_null(fsm.restore);
    assert_true(a.applied == 0 && rdlm_lease_sm_epoch(a.sm) == 1);
    rdlm_lease_raft_fsm_close(&a);
}

static void apply_returns_zero_and_points_at_the_adapters_result(void **state)
{
    rdlm_lease_raft_fsm_t a;
    struct raft_fsm fsm;
    rdlm_lease_cmd_t c = lt_cmd(RDLM_LEASE_OP_OPEN, 0, 0, NULL);
    rdlm_lease_result_t *r;
    struct raft_buffer junk = {.base = (void *)"junk", .len = 4};
    void *result = NULL;

    (void)state;
    assert_int_equal(rdlm_lease_raft_fsm_init(&a, &fsm, NULL), RDLM_OK);
    c.nonce = 7;
    r = fsm_apply(&fsm, &c);
    assert_ptr_equal(r, &a.last);
    assert_int_equal(r->status, RDLM_OK);
    assert_true(r->session == 1);
    c = lt_cmd(RDLM_LEASE_OP_ACQUIRE, 1, 1, "x");
    r = fsm_apply(&fsm, &c);
    assert_int_equal(r->status, RDLM_OK);
    assert_true(r->token == (UINT64_C(1) << 40 | 1));
    /* An entry that does not decode is an answer, not a libraft error. */
    assert_int_equal(fsm.apply(&fsm, &junk, &result), 0);
    assert_ptr_equal(result, &a.last);
    assert_int_equal(a.last.status, RDLM_ERR_PROTOCOL);
    assert_true(a.applied == 3);
    rdlm_lease_raft_fsm_close(&a);
}

static void snapshot_and_restore_move_the_state_in_raft_buffers(void **state)
{
    rdlm_lease_raft_fsm_t a, b;
    struct raft_fsm fa, fb;
    struct raft_buffer *bufs = NULL, bad;
    unsigned n_bufs = 0;
    rdlm_lease_cmd_t c = lt_cmd(RDLM_LEASE_OP_OPEN, 0, 0, "ns");
    uint64_t hb;

    (void)state;
    assert_int_equal(rdlm_lease_raft_fsm_init(&a, &fa, NULL), RDLM_OK);
    assert_int_equal(rdlm_lease_raft_fsm_init(&b, &fb, NULL), RDLM_OK);
    c.nonce = 1;
    fsm_apply(&fa, &c);
    c = lt_cmd(RDLM_LEASE_OP_ACQUIRE, 1, 1, "x");
    fsm_apply(&fa, &c);
    c = lt_cmd(RDLM_LEASE_OP_EPOCH, 1, 2, NULL);
    fsm_apply(&fa, &c);

    assert_int_equal(fa.snapshot(&fa, &bufs, &n_bufs), 0);
    assert_int_equal(n_bufs, 1);
    assert_non_null(bufs);
    /* A damaged copy is refused and stays the caller's (libraft frees it). */
    bad.len = bufs[0].len;
    bad.base = raft_malloc(bad.len);
    assert_non_null(bad.base);
    memcpy(bad.base, bufs[0].base, bad.len);
    ((uint8_t *)bad.base)[bad.len / 2] ^= 0x40;
    hb = rdlm_lease_sm_hash(b.sm);
    assert_int_equal(fb.restore(&fb, &bad), RAFT_MALFORMED);
    assert_true(rdlm_lease_sm_hash(b.sm) == hb);
    raft_free(bad.base);
    /* The good one is taken: restore frees its base, the array is ours. */
    assert_int_equal(fb.restore(&fb, &bufs[0]), 0);
    raft_free(bufs);
    assert_true(rdlm_lease_sm_hash(b.sm) == rdlm_lease_sm_hash(a.sm));
    assert_true(rdlm_lease_sm_epoch(b.sm) == 2);
    rdlm_lease_raft_fsm_close(&a);
    rdlm_lease_raft_fsm_close(&b);
}

/* A raft heap whose n-th allocation from now fails (-1: none). */
static long heap_countdown = -1;

static void *failing_malloc(void *data, size_t size)
{
    (void)data;
    return heap_countdown >= 0 && heap_countdown-- == 0 ? NULL : malloc(size);
}

static void heap_free(void *data, void *ptr)
{
    (void)data;
    free(ptr);
}

static void *heap_calloc(void *data, size_t nmemb, size_t size)
{
    (void)data;
    return calloc(nmemb, size);
}

static void *heap_realloc(void *data, void *ptr, size_t size)
{
    (void)data;
    return realloc(ptr, size);
}

static void *heap_aligned_alloc(void *data, size_t alignment, size_t size)
{
    (void)data;
    return aligned_alloc(alignment, size);
}

static void heap_aligned_free(void *data, size_t alignment, void *ptr)
{
    (void)data;
    (void)alignment;
    free(ptr);
}

static void snapshot_without_memory_is_nomem_and_leaks_nothing(void **state)
{
    struct raft_heap heap = {.malloc = failing_malloc,
                             .free = heap_free,
                             .calloc = heap_calloc,
                             .realloc = heap_realloc,
                             .aligned_alloc = heap_aligned_alloc,
                             .aligned_free = heap_aligned_free};
    rdlm_lease_raft_fsm_t a;
    struct raft_fsm fsm;
    struct raft_buffer *bufs = NULL;
    unsigned n_bufs = 0;
    rdlm_lease_cmd_t c = lt_cmd(RDLM_LEASE_OP_OPEN, 0, 0, NULL);

    (void)state;
    assert_int_equal(rdlm_lease_raft_fsm_init(&a, &fsm, NULL), RDLM_OK);
    c.nonce = 3;
    fsm_apply(&fsm, &c);
    raft_heap_set(&heap);
    for (long k = 0; k < 2; k++) { /* the buffer array, then the bytes */
        heap_countdown = k;
        assert_int_equal(fsm.snapshot(&fsm, &bufs, &n_bufs), RAFT_NOMEM);
    }
    heap_countdown = -1;
    assert_int_equal(fsm.snapshot(&fsm, &bufs, &n_bufs), 0);
    raft_heap_set_default();
    raft_free(bufs[0].base);
    raft_free(bufs);
    rdlm_lease_raft_fsm_close(&a);
}

/* ---- a simulated cluster (raft/fixture.h) ---- */

#define N_SERVERS 3

typedef struct cluster {
    struct raft_fixture f;
    rdlm_lease_raft_fsm_t adapters[N_SERVERS];
    struct raft_fsm fsms[N_SERVERS];
    int answered, failed;
} cluster_t;

static void applied_cb(struct raft_apply *req, int status, void *result)
{
    cluster_t *cl = req->data;
    const rdlm_lease_result_t *r = result;

    if (status != 0) {
        cl->failed++;
    } else {
        assert_true(r->status == RDLM_OK || r->status == RDLM_INPROGRESS);
        cl->answered++;
    }
    free(req);
}

/* Propose c at the leader. */
static void propose(cluster_t *cl, const rdlm_lease_cmd_t *c)
{
    struct raft *leader = raft_fixture_get(&cl->f, raft_fixture_leader_index(&cl->f));
    struct raft_apply *req = malloc(sizeof(*req));
    struct raft_buffer b = entry(c);

    assert_non_null(req);
    req->data = cl;
    assert_int_equal(raft_apply(leader, req, &b, 1, applied_cb), 0);
}

static void cluster_start(cluster_t *cl)
{
    struct raft_configuration conf;

    memset(cl, 0, sizeof(*cl));
    assert_int_equal(raft_fixture_initialize(&cl->f), 0);
    for (unsigned i = 0; i < N_SERVERS; i++) {
        assert_int_equal(rdlm_lease_raft_fsm_init(&cl->adapters[i], &cl->fsms[i], NULL),
                         RDLM_OK);
        assert_int_equal(raft_fixture_grow(&cl->f, &cl->fsms[i]), 0);
        raft_set_snapshot_threshold(raft_fixture_get(&cl->f, i), 16);
        raft_set_snapshot_trailing(raft_fixture_get(&cl->f, i), 4);
    }
    assert_int_equal(raft_fixture_configuration(&cl->f, N_SERVERS, &conf), 0);
    assert_int_equal(raft_fixture_bootstrap(&cl->f, &conf), 0);
    raft_configuration_close(&conf);
    assert_int_equal(raft_fixture_start(&cl->f), 0);
    assert_true(raft_fixture_step_until_has_leader(&cl->f, 10000));
}

static void cluster_stop(cluster_t *cl)
{
    raft_fixture_close(&cl->f);
    for (unsigned i = 0; i < N_SERVERS; i++) {
        rdlm_lease_raft_fsm_close(&cl->adapters[i]);
    }
}

static void lagging_server_catches_up_by_snapshot_to_the_same_state(void **state)
{
    static cluster_t cl;
    unsigned leader, lagger;
    uint64_t seq = 0;
    rdlm_lease_cmd_t c;

    (void)state;
    cluster_start(&cl);
    leader = raft_fixture_leader_index(&cl.f);
    lagger = (leader + 1) % N_SERVERS;
    c = lt_cmd(RDLM_LEASE_OP_OPEN, 0, 0, "job");
    c.nonce = 1;
    propose(&cl, &c);
    c.nonce = 2;
    propose(&cl, &c);
    assert_true(raft_fixture_step_until_applied(
        &cl.f, N_SERVERS, raft_last_index(raft_fixture_get(&cl.f, leader)), 5000));
    /* Cut the lagger off; the others apply enough to snapshot and drop the log. */
    for (unsigned i = 0; i < N_SERVERS; i++) {
        if (i != lagger) {
            raft_fixture_disconnect(&cl.f, lagger, i);
            raft_fixture_disconnect(&cl.f, i, lagger);
        }
    }
    for (int round = 0; round < 20; round++) {
        char name[16];
        snprintf(name, sizeof(name), "lock%d", round / 2);
        /* Session 1 takes lock<k>, session 2 queues behind it. */
        c = lt_cmd(RDLM_LEASE_OP_ACQUIRE, 1 + (uint64_t)(round % 2), ++seq, name);
        propose(&cl, &c);
        c = lt_cmd(RDLM_LEASE_OP_EPOCH, 1, ++seq, NULL);
        propose(&cl, &c);
    }
    leader = raft_fixture_leader_index(&cl.f);
    assert_true(raft_fixture_step_until_applied(
        &cl.f, leader, raft_last_index(raft_fixture_get(&cl.f, leader)), 10000));
    /* Back online: it can only catch up through a snapshot. */
    for (unsigned i = 0; i < N_SERVERS; i++) {
        if (i != lagger) {
            raft_fixture_reconnect(&cl.f, lagger, i);
            raft_fixture_reconnect(&cl.f, i, lagger);
        }
    }
    assert_true(raft_fixture_step_until_applied(
        &cl.f, N_SERVERS, raft_last_index(raft_fixture_get(&cl.f, leader)), 20000));
    assert_int_equal(cl.failed, 0);
    assert_int_equal(cl.answered, 42);
    for (unsigned i = 0; i < N_SERVERS; i++) {
        assert_true(rdlm_lease_sm_hash(cl.adapters[i].sm) ==
                    rdlm_lease_sm_hash(cl.adapters[leader].sm));
    }
    assert_true(rdlm_lease_sm_epoch(cl.adapters[lagger].sm) == 21);
    /* It skipped entries: they reached it inside a snapshot. */
    assert_true(cl.adapters[lagger].applied < cl.adapters[leader].applied);
    cluster_stop(&cl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(init_fills_a_version_1_fsm),
        cmocka_unit_test(apply_returns_zero_and_points_at_the_adapters_result),
        cmocka_unit_test(snapshot_and_restore_move_the_state_in_raft_buffers),
        cmocka_unit_test(snapshot_without_memory_is_nomem_and_leaks_nothing),
        cmocka_unit_test(lagging_server_catches_up_by_snapshot_to_the_same_state),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
