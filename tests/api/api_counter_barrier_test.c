/*
 * Public API: counters and barriers.
 *
 * Proves: fetch_add returns the previous value, wraps, and is shared by every
 * context; concurrent increments from several processes are exact and every
 * returned old value is distinct; a barrier makes each participant's writes from
 * before a round visible to all after it, for many rounds; a barrier wait that
 * times out withdraws its arrival, so a later complete round works.
 *
 * Tunables: RDLMTEST_API_COUNTER_ITERS (increments per process, 10000),
 * RDLMTEST_API_BARRIER_ROUNDS (rounds, 1000). Children report through shared memory
 * and exit codes; only the parent asserts.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "api_util.h"

#define NPROCS 4

static void test_counter_fetch_add_returns_old_value_and_wraps(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_ctx_h a = api_ctx(fx, 0);
    rdlm_ctx_h b = api_ctx(fx, 1);
    rdlm_counter_h ca;
    rdlm_counter_h cb;
    int64_t old = -1;
    int64_t v = -1;

    assert_status(rdlm_counter_open(a, "counter", &ca), RDLM_OK);
    assert_status(rdlm_counter_read(ca, &v), RDLM_OK);
    assert_int_equal(v, 0);
    assert_status(rdlm_counter_fetch_add(ca, 5, &old), RDLM_OK);
    assert_int_equal(old, 0);
    assert_status(rdlm_counter_fetch_add(ca, -2, &old), RDLM_OK);
    assert_int_equal(old, 5);

    assert_status(rdlm_counter_open(b, "counter", &cb), RDLM_OK);
    assert_status(rdlm_counter_read(cb, &v), RDLM_OK);
    assert_int_equal(v, 3);
    assert_status(rdlm_counter_fetch_add(cb, INT64_MAX - 3, &old), RDLM_OK);
    assert_int_equal(old, 3);
    assert_status(rdlm_counter_fetch_add(ca, 1, &old), RDLM_OK);
    assert_true(old == INT64_MAX);
    assert_status(rdlm_counter_read(cb, &v), RDLM_OK);
    assert_true(v == INT64_MIN); /* wrapped */
    assert_status(rdlm_counter_fetch_add(cb, 0, &old), RDLM_OK);
    assert_true(old == INT64_MIN);

    /* Distinct names are distinct counters. */
    assert_status(rdlm_counter_open(b, "counter2", &cb), RDLM_OK);
    assert_status(rdlm_counter_read(cb, &v), RDLM_OK);
    assert_int_equal(v, 0);
}

typedef struct counter_arg {
    const char *job;
    int64_t *olds; /* [iters] for this process, in the shared mapping */
    uint64_t iters;
} counter_arg_t;

static int counter_child(void *argp)
{
    counter_arg_t *arg = argp;
    rdlm_ctx_h ctx;
    rdlm_counter_h counter;
    int rc = 0;

    if (api_ctx_create(arg->job, &ctx) != RDLM_OK) {
        return 10;
    }
    if (rdlm_counter_open(ctx, "counter", &counter) != RDLM_OK) {
        rc = 11;
    }
    for (uint64_t i = 0; rc == 0 && i < arg->iters; i++) {
        if (rdlm_counter_fetch_add(counter, 1, &arg->olds[i]) != RDLM_OK) {
            rc = 12;
        }
    }
    rdlm_ctx_destroy(ctx);
    return rc;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a;
    int64_t y = *(const int64_t *)b;

    return (x > y) - (x < y);
}

static void test_counter_concurrent_increments_are_exact_and_distinct(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_ctx_h ctx = api_ctx(fx, 0);
    uint64_t iters = api_env_u64("RDLMTEST_API_COUNTER_ITERS", 10000);
    uint64_t total = iters * NPROCS;
    int64_t *olds = api_shared(fx, total * sizeof(int64_t));
    counter_arg_t args[NPROCS];
    pid_t pids[NPROCS];
    rdlm_counter_h counter;
    int64_t v;
    int64_t *sorted;

    assert_status(rdlm_counter_open(ctx, "counter", &counter), RDLM_OK);
    for (int p = 0; p < NPROCS; p++) {
        args[p] = (counter_arg_t){.job = fx->job, .olds = olds + p * iters, .iters = iters};
        pids[p] = api_fork(fx, counter_child, &args[p]);
    }
    for (int p = 0; p < NPROCS; p++) {
        assert_int_equal(api_wait_child(fx, pids[p], 60 * API_NSEC_PER_SEC), 0);
    }
    assert_status(rdlm_counter_read(counter, &v), RDLM_OK);
    assert_int_equal(v, (int64_t)total);

    /* The old values are exactly 0 .. total-1: each seen once. */
    sorted = malloc(total * sizeof(int64_t));
    assert_non_null(sorted);
    for (uint64_t i = 0; i < total; i++) {
        sorted[i] = olds[i];
    }
    qsort(sorted, total, sizeof(int64_t), cmp_i64);
    for (uint64_t i = 0; i < total; i++) {
        if (sorted[i] != (int64_t)i) {
            print_error("sorted old values: [%llu] = %lld\n", (unsigned long long)i,
                        (long long)sorted[i]);
            free(sorted);
            fail();
        }
    }
    free(sorted);
    /* And each process saw its own old values increase. */
    for (int p = 0; p < NPROCS; p++) {
        for (uint64_t i = 1; i < iters; i++) {
            assert_true(args[p].olds[i] > args[p].olds[i - 1]);
        }
    }
}

typedef struct barrier_shared {
    _Atomic uint64_t round[NPROCS]; /* each participant's last round written */
    _Atomic uint64_t stale_reads;   /* a participant saw another behind the round */
    _Atomic uint64_t ahead_reads;   /* ... or more than one round ahead */
    _Atomic int32_t bad_status;
} barrier_shared_t;

typedef struct barrier_arg {
    const char *job;
    barrier_shared_t *sh;
    int me;
    uint64_t rounds;
} barrier_arg_t;

static int barrier_child(void *argp)
{
    barrier_arg_t *arg = argp;
    barrier_shared_t *sh = arg->sh;
    rdlm_ctx_h ctx;
    rdlm_barrier_h barrier;
    int rc = 0;

    if (api_ctx_create(arg->job, &ctx) != RDLM_OK) {
        return 10;
    }
    if (rdlm_barrier_open(ctx, "barrier", NPROCS, &barrier) != RDLM_OK) {
        rc = 11;
    }
    for (uint64_t r = 1; rc == 0 && r <= arg->rounds; r++) {
        rdlm_status_t st;

        /* Relaxed: only the barrier may order these writes before the reads. */
        atomic_store_explicit(&sh->round[arg->me], r, memory_order_relaxed);
        st = rdlm_barrier_wait(barrier, 20 * API_NSEC_PER_SEC);
        if (st != RDLM_OK) {
            atomic_store(&sh->bad_status, st);
            rc = 12;
            break;
        }
        for (int q = 0; q < NPROCS; q++) {
            uint64_t seen = atomic_load_explicit(&sh->round[q], memory_order_relaxed);

            if (seen < r) {
                atomic_fetch_add(&sh->stale_reads, 1);
            } else if (seen > r + 1) {
                atomic_fetch_add(&sh->ahead_reads, 1);
            }
        }
    }
    rdlm_ctx_destroy(ctx);
    return rc;
}

static void test_barrier_rounds_publish_every_participants_writes(void **state)
{
    api_fixture_t *fx = *state;
    uint64_t rounds = api_env_u64("RDLMTEST_API_BARRIER_ROUNDS", 1000);
    barrier_shared_t *sh = api_shared(fx, sizeof(*sh));
    barrier_arg_t args[NPROCS];
    pid_t pids[NPROCS];

    for (int p = 0; p < NPROCS; p++) {
        args[p] = (barrier_arg_t){.job = fx->job, .sh = sh, .me = p, .rounds = rounds};
        pids[p] = api_fork(fx, barrier_child, &args[p]);
    }
    for (int p = 0; p < NPROCS; p++) {
        int rc = api_wait_child(fx, pids[p], 90 * API_NSEC_PER_SEC);

        if (rc != 0) {
            print_error("participant %d: exit %d, barrier status %s\n", p, rc,
                        rdlm_status_name((rdlm_status_t)atomic_load(&sh->bad_status)));
        }
        assert_int_equal(rc, 0);
    }
    assert_int_equal(atomic_load(&sh->stale_reads), 0);
    assert_int_equal(atomic_load(&sh->ahead_reads), 0);
    for (int p = 0; p < NPROCS; p++) {
        assert_int_equal(atomic_load(&sh->round[p]), rounds);
    }
}

typedef struct partner_arg {
    const char *job;
    _Atomic int32_t *status;
} partner_arg_t;

/* The second participant of a 2-barrier: two complete rounds. */
static int barrier_partner(void *argp)
{
    partner_arg_t *arg = argp;
    rdlm_ctx_h ctx;
    rdlm_barrier_h barrier;
    rdlm_status_t st;

    if (api_ctx_create(arg->job, &ctx) != RDLM_OK) {
        return 10;
    }
    st = rdlm_barrier_open(ctx, "pair", 2, &barrier);
    if (st == RDLM_OK) {
        st = rdlm_barrier_wait(barrier, 10 * API_NSEC_PER_SEC);
    }
    if (st == RDLM_OK) {
        st = rdlm_barrier_wait(barrier, 10 * API_NSEC_PER_SEC);
    }
    atomic_store(arg->status, st);
    rdlm_ctx_destroy(ctx);
    return st == RDLM_OK ? 0 : 1;
}

static void test_barrier_timeout_withdraws_the_arrival(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_ctx_h ctx = api_ctx(fx, 0);
    _Atomic int32_t *partner_status = api_shared(fx, sizeof(*partner_status));
    partner_arg_t arg = {.job = fx->job, .status = partner_status};
    rdlm_barrier_h barrier;
    pid_t pid;
    uint64_t t0;

    assert_status(rdlm_barrier_open(ctx, "pair", 2, &barrier), RDLM_OK);
    /* Alone, twice: had the first arrival stayed, the second would complete it. */
    for (int i = 0; i < 2; i++) {
        t0 = api_now_ns();
        assert_status(rdlm_barrier_wait(barrier, 10 * API_NSEC_PER_MSEC), RDLM_ERR_TIMEOUT);
        assert_true(api_now_ns() - t0 >= 10 * API_NSEC_PER_MSEC);
    }

    atomic_store(partner_status, 1);
    pid = api_fork(fx, barrier_partner, &arg);
    assert_status(rdlm_barrier_wait(barrier, 10 * API_NSEC_PER_SEC), RDLM_OK);
    assert_status(rdlm_barrier_wait(barrier, 10 * API_NSEC_PER_SEC), RDLM_OK);
    assert_int_equal(api_wait_child(fx, pid, 20 * API_NSEC_PER_SEC), 0);
    assert_status((rdlm_status_t)atomic_load(partner_status), RDLM_OK);
}

static void test_barrier_of_one_never_waits(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_ctx_h ctx = api_ctx(fx, 0);
    rdlm_barrier_h barrier;

    assert_status(rdlm_barrier_open(ctx, "solo", 1, &barrier), RDLM_OK);
    for (int i = 0; i < 100; i++) {
        assert_status(rdlm_barrier_wait(barrier, 0), RDLM_OK);
    }
}

#define API_TEST(f) cmocka_unit_test_setup_teardown(f, api_setup, api_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        API_TEST(test_counter_fetch_add_returns_old_value_and_wraps),
        API_TEST(test_counter_concurrent_increments_are_exact_and_distinct),
        API_TEST(test_barrier_rounds_publish_every_participants_writes),
        API_TEST(test_barrier_timeout_withdraws_the_arrival),
        API_TEST(test_barrier_of_one_never_waits),
    };

    return cmocka_run_group_tests_name("api.counter_barrier", tests, NULL, NULL);
}
