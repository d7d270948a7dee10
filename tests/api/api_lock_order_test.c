/*
 * The order of an on-node exclusive lock (rdlm_lock_open_params): the default
 * bounded-bypass lock lets a running process take a free lock before a sleeping
 * waiter, until that waiter has waited RDLM_LOCK_BYPASS_US and reserved it; a FIFO
 * lock never does. Also the parameter checks and order mismatches. (FIFO order
 * itself: api.lock, test_fifo_waiters_are_granted_in_arrival_order.)
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api_util.h"

#define LOCK_NAME "order"

static const rdlm_lock_params_t fifo_params = {.field_mask = RDLM_LOCK_FIELD_ORDER,
                                               .order = RDLM_LOCK_ORDER_FIFO};
static const rdlm_lock_params_t bounded_params = {.field_mask = RDLM_LOCK_FIELD_ORDER,
                                                  .order = RDLM_LOCK_ORDER_BOUNDED};

typedef struct waiter_shared {
    _Atomic int32_t status;
    _Atomic uint64_t token;
    _Atomic uint64_t reservations;
    _Atomic uint32_t granted; /* grants so far (order test) */
    _Atomic int32_t order[8]; /* ids in grant order (order test) */
} waiter_shared_t;

typedef struct waiter_arg {
    const char *job;
    const rdlm_lock_params_t *params;
    waiter_shared_t *sh;
    int id;           /* order test: recorded in sh->order */
    unsigned hold_ms; /* order test: held this long */
} waiter_arg_t;

/* Acquire LOCK_NAME once (20 s timeout), record status, token and the context's
 * reservations, release; exit 0 if granted. */
static int waiter_child(void *argp)
{
    waiter_arg_t *arg = argp;
    rdlm_ctx_h ctx;
    rdlm_lock_h lock;
    rdlm_stats_t stats;
    uint64_t token = 0;
    rdlm_status_t st;

    if (api_ctx_create(arg->job, &ctx) != RDLM_OK ||
        rdlm_lock_open_params(ctx, LOCK_NAME, arg->params, &lock) != RDLM_OK) {
        return 10;
    }
    st = rdlm_lock_acquire(lock, 20 * API_NSEC_PER_SEC, &token);
    if (st == RDLM_OK) {
        uint32_t n = atomic_fetch_add(&arg->sh->granted, 1);

        if (n < 8) {
            atomic_store(&arg->sh->order[n], arg->id);
        }
        api_sleep_ms(arg->hold_ms);
    }
    atomic_store(&arg->sh->token, token);
    if (rdlm_ctx_stats(ctx, &stats) == RDLM_OK) {
        atomic_store(&arg->sh->reservations, stats.reservations);
    }
    atomic_store(&arg->sh->status, st);
    if (st == RDLM_OK && rdlm_lock_release(lock) != RDLM_OK) {
        st = RDLM_ERR_NOT_OWNER;
    }
    rdlm_ctx_destroy(ctx);
    return st == RDLM_OK ? 0 : 1;
}

/* Poll the lock until its reservation state is `reserved` (bounded); 0 on success. */
static int wait_reserved(rdlm_lock_h lock, int reserved, uint64_t timeout_ns)
{
    uint64_t deadline = api_now_ns() + timeout_ns;
    rdlm_lock_info_t info;

    while (api_now_ns() < deadline) {
        if (rdlm_lock_query(lock, &info) == RDLM_OK && info.reserved == reserved) {
            return 0;
        }
        api_sleep_ms(1);
    }
    return -1;
}

/* SIGSTOP pid and wait (bounded) until it is stopped; 0 on success. */
static int stop_child(pid_t pid)
{
    char path[64];
    char stat[256];
    uint64_t deadline = api_now_ns() + 10 * API_NSEC_PER_SEC;

    if (kill(pid, SIGSTOP) != 0) {
        return -1;
    }
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    while (api_now_ns() < deadline) {
        FILE *f = fopen(path, "r");
        char *close_paren = NULL;

        if (f != NULL) {
            close_paren = fgets(stat, sizeof(stat), f) ? strrchr(stat, ')') : NULL;
            fclose(f);
        }
        if (close_paren != NULL && close_paren[1] == ' ' && close_paren[2] == 'T') {
            return 0;
        }
        api_sleep_ms(1);
    }
    return -1;
}

/* Hold the lock, start a waiter with params, wait until it is queued. */
static pid_t start_waiter(api_fixture_t *fx, rdlm_lock_h lock, waiter_arg_t *arg,
                          const rdlm_lock_params_t *params)
{
    pid_t pid;

    *arg = (waiter_arg_t){.job = fx->job, .params = params,
                          .sh = api_shared(fx, sizeof(waiter_shared_t))};
    assert_status(rdlm_lock_acquire(lock, 0, NULL), RDLM_OK);
    pid = api_fork(fx, waiter_child, arg);
    assert_int_equal(api_wait_waiters(lock, 1, 10 * API_NSEC_PER_SEC), 0);
    return pid;
}

static void test_open_checks_params_and_order(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_ctx_h ctx = api_ctx(fx, 0);
    rdlm_lock_params_t bad_field = {.field_mask = 1u << 7};
    rdlm_lock_params_t bad_order = {.field_mask = RDLM_LOCK_FIELD_ORDER, .order = 3};
    rdlm_lock_h lock;

    assert_status(rdlm_lock_open_params(ctx, "p", &bad_field, &lock), RDLM_ERR_INVALID_ARG);
    assert_status(rdlm_lock_open_params(ctx, "p", &bad_order, &lock), RDLM_ERR_INVALID_ARG);
    assert_status(rdlm_lock_open_params(ctx, "p", &fifo_params, NULL), RDLM_ERR_INVALID_ARG);
    assert_status(rdlm_lock_open_params(NULL, "p", &fifo_params, &lock), RDLM_ERR_BAD_HANDLE);
    /* The first open fixes the order; an explicit other order is a mismatch, the
     * default order accepts either. */
    assert_status(rdlm_lock_open_params(ctx, "fifo", &fifo_params, &lock), RDLM_OK);
    assert_status(rdlm_lock_open_params(ctx, "fifo", &bounded_params, &lock),
                  RDLM_ERR_KIND_MISMATCH);
    assert_status(rdlm_lock_open(ctx, "fifo", &lock), RDLM_OK);
    assert_status(rdlm_lock_open_params(ctx, "bounded", NULL, &lock), RDLM_OK);
    assert_status(rdlm_lock_open_params(ctx, "bounded", &fifo_params, &lock),
                  RDLM_ERR_KIND_MISMATCH);
    assert_status(rdlm_lock_open_params(ctx, "bounded", &bounded_params, &lock), RDLM_OK);
    assert_status(rdlm_lock_acquire(lock, 0, NULL), RDLM_OK);
    assert_status(rdlm_lock_release(lock), RDLM_OK);
}

/* Before the bound a running process may take the lock back from a waiter that is
 * not running (what makes the default lock fast with more processes than cores); a
 * FIFO lock gives it to the waiter. */
static void test_releaser_takes_back_before_the_bound_only_without_fifo(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_ctx_h ctx = api_ctx(fx, 0);
    rdlm_lock_h lock;
    waiter_arg_t arg;
    pid_t pid;

    setenv("RDLM_LOCK_BYPASS_US", "10000000", 1); /* the waiter's: 10 s */
    assert_status(rdlm_lock_open_params(ctx, LOCK_NAME, &bounded_params, &lock), RDLM_OK);
    pid = start_waiter(fx, lock, &arg, &bounded_params);
    /* Stopped, the waiter cannot take the lock before our try does. */
    assert_int_equal(stop_child(pid), 0);
    assert_status(rdlm_lock_release(lock), RDLM_OK);
    assert_status(rdlm_lock_acquire(lock, 0, NULL), RDLM_OK); /* bypass */
    assert_int_equal(kill(pid, SIGCONT), 0);
    assert_status(rdlm_lock_release(lock), RDLM_OK);
    assert_int_equal(api_wait_child(fx, pid, 30 * API_NSEC_PER_SEC), 0);
    assert_status((rdlm_status_t)atomic_load(&arg.sh->status), RDLM_OK);
    assert_int_equal(atomic_load(&arg.sh->reservations), 0);
    unsetenv("RDLM_LOCK_BYPASS_US");
}

static void test_fifo_lock_goes_to_the_waiter(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_ctx_h ctx = api_ctx(fx, 0);
    rdlm_lock_h lock;
    waiter_arg_t arg;
    pid_t pid;

    assert_status(rdlm_lock_open_params(ctx, LOCK_NAME, &fifo_params, &lock), RDLM_OK);
    pid = start_waiter(fx, lock, &arg, &fifo_params);
    assert_int_equal(stop_child(pid), 0);
    assert_status(rdlm_lock_release(lock), RDLM_OK);
    /* The stopped waiter's ticket is served: a try finds the lock handed to it. */
    assert_status(rdlm_lock_acquire(lock, 0, NULL), RDLM_ERR_BUSY);
    assert_int_equal(kill(pid, SIGCONT), 0);
    assert_int_equal(api_wait_child(fx, pid, 30 * API_NSEC_PER_SEC), 0);
    assert_status((rdlm_status_t)atomic_load(&arg.sh->status), RDLM_OK);
}

/* A waiter past the bound reserves the lock: the releaser's immediate try then
 * fails, the waiter gets the lock next with the next token. */
static void test_waiter_past_the_bound_reserves_the_lock(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_ctx_h ctx = api_ctx(fx, 0);
    rdlm_lock_info_t info;
    rdlm_lock_h lock;
    waiter_arg_t arg;
    uint64_t token;
    pid_t pid;

    setenv("RDLM_LOCK_BYPASS_US", "2000", 1);
    assert_status(rdlm_lock_open(ctx, LOCK_NAME, &lock), RDLM_OK);
    pid = start_waiter(fx, lock, &arg, NULL);
    api_sleep_ms(50); /* past the bound */
    assert_int_equal(wait_reserved(lock, 1, 10 * API_NSEC_PER_SEC), 0);
    assert_status(rdlm_lock_query(lock, &info), RDLM_OK);
    token = info.last_token;
    assert_status(rdlm_lock_release(lock), RDLM_OK);
    assert_status(rdlm_lock_acquire(lock, 0, NULL), RDLM_ERR_BUSY);
    assert_int_equal(api_wait_child(fx, pid, 30 * API_NSEC_PER_SEC), 0);
    assert_status((rdlm_status_t)atomic_load(&arg.sh->status), RDLM_OK);
    assert_int_equal(atomic_load(&arg.sh->token), token + 1);
    assert_int_equal(atomic_load(&arg.sh->reservations), 1);
    assert_int_equal(wait_reserved(lock, 0, API_NSEC_PER_SEC), 0);
    unsetenv("RDLM_LOCK_BYPASS_US");
}

/* Waiters past the bound are served in the order they reached it: each holder that
 * waited past it passes the reservation to the oldest (without that, the later ones
 * race for it at their next bound and come in any order). */
static void test_waiters_past_the_bound_are_served_in_order(void **state)
{
    enum { K = 4 };
    api_fixture_t *fx = *state;
    rdlm_ctx_h ctx = api_ctx(fx, 0);
    waiter_shared_t *sh = api_shared(fx, sizeof(*sh));
    waiter_arg_t args[K];
    pid_t pids[K];
    rdlm_lock_h lock;

    setenv("RDLM_LOCK_BYPASS_US", "2000", 1);
    assert_status(rdlm_lock_open(ctx, LOCK_NAME, &lock), RDLM_OK);
    assert_status(rdlm_lock_acquire(lock, 0, NULL), RDLM_OK);
    for (int i = 0; i < K; i++) {
        args[i] = (waiter_arg_t){.job = fx->job, .sh = sh, .id = i, .hold_ms = 20};
        pids[i] = api_fork(fx, waiter_child, &args[i]);
        assert_int_equal(api_wait_waiters(lock, (uint32_t)i + 1, 10 * API_NSEC_PER_SEC), 0);
        api_sleep_ms(30); /* past its bound before the next one starts */
    }
    assert_status(rdlm_lock_release(lock), RDLM_OK);
    for (int i = 0; i < K; i++) {
        assert_int_equal(api_wait_child(fx, pids[i], 30 * API_NSEC_PER_SEC), 0);
    }
    for (int i = 0; i < K; i++) {
        if (atomic_load(&sh->order[i]) != i) {
            print_error("grant order: %d %d %d %d\n", (int)atomic_load(&sh->order[0]),
                        (int)atomic_load(&sh->order[1]), (int)atomic_load(&sh->order[2]),
                        (int)atomic_load(&sh->order[3]));
        }
        assert_int_equal(atomic_load(&sh->order[i]), i);
    }
    unsetenv("RDLM_LOCK_BYPASS_US");
}

/* A waiter that dies holding a reservation does not keep the lock from others: a
 * try's dead-holder check drops the reservation (stats.skips) within its interval. */
static void test_dead_waiters_reservation_is_dropped(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_ctx_h ctx = api_ctx(fx, 0);
    rdlm_stats_t before, after;
    rdlm_lock_h lock;
    waiter_arg_t arg;
    rdlm_status_t st = RDLM_ERR_BUSY;
    uint64_t deadline;
    pid_t pid;

    setenv("RDLM_LOCK_BYPASS_US", "2000", 1);
    assert_status(rdlm_lock_open(ctx, LOCK_NAME, &lock), RDLM_OK);
    pid = start_waiter(fx, lock, &arg, NULL);
    assert_int_equal(wait_reserved(lock, 1, 10 * API_NSEC_PER_SEC), 0);
    assert_int_equal(kill(pid, SIGKILL), 0);
    assert_int_equal(api_wait_child(fx, pid, 10 * API_NSEC_PER_SEC), -1);
    assert_status(rdlm_ctx_stats(ctx, &before), RDLM_OK);
    assert_status(rdlm_lock_release(lock), RDLM_OK);
    deadline = api_now_ns() + 5 * API_NSEC_PER_SEC;
    while (st == RDLM_ERR_BUSY && api_now_ns() < deadline) {
        st = rdlm_lock_acquire(lock, 0, NULL);
        if (st == RDLM_ERR_BUSY) {
            api_sleep_ms(1);
        }
    }
    assert_status(st, RDLM_OK);
    assert_status(rdlm_ctx_stats(ctx, &after), RDLM_OK);
    assert_int_equal(after.skips, before.skips + 1);
    assert_status(rdlm_lock_release(lock), RDLM_OK);
    unsetenv("RDLM_LOCK_BYPASS_US");
}

#define API_TEST(f) cmocka_unit_test_setup_teardown(f, api_setup, api_teardown)

int main(void)
{
    /* Waiters that never spin: a spinning waiter reserves the lock while it spins,
     * for as long as a loaded machine stretches its spin phase. */
    setenv("RDLM_SPIN", "0", 1);
    const struct CMUnitTest tests[] = {
        API_TEST(test_open_checks_params_and_order),
        API_TEST(test_releaser_takes_back_before_the_bound_only_without_fifo),
        API_TEST(test_fifo_lock_goes_to_the_waiter),
        API_TEST(test_waiter_past_the_bound_reserves_the_lock),
        API_TEST(test_waiters_past_the_bound_are_served_in_order),
        API_TEST(test_dead_waiters_reservation_is_dropped),
    };

    return cmocka_run_group_tests_name("api.lock_order", tests, NULL, NULL);
}
