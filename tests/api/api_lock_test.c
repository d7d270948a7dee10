/*
 * Public API: exclusive locks.
 *
 * Proves: try-acquire of a held lock is RDLM_ERR_BUSY; a timed acquire times out no
 * earlier than asked, is not counted as a waiter afterwards, and does not stall
 * later acquirers (also when it sat in the middle of the queue); locks are not
 * recursive; waiters are granted in arrival order (FIFO, checked deterministically:
 * each waiter starts only after rdlm_lock_query shows the previous one queued);
 * fencing tokens strictly increase across processes and across contexts; closing a
 * handle or destroying a context hands a held lock over normally; closing one of a
 * context's handles of a name another of them holds keeps the hold (locks, rwlocks).
 *
 * Children report through shared memory and exit codes; only the parent asserts.
 * Tunable: RDLMTEST_API_TOKEN_ITERS (acquires per process in the token test, 250).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"

#define LOCK_NAME "lock"

static void test_try_acquire_on_held_lock_is_busy(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_lock_h la;
    rdlm_lock_h lb;
    rdlm_lock_info_t info;
    uint64_t token;

    api_lock_pair(fx, LOCK_NAME, &la, &lb);
    assert_status(rdlm_lock_acquire(la, 0, &token), RDLM_OK);
    for (int i = 0; i < 3; i++) {
        assert_status(rdlm_lock_acquire(lb, 0, NULL), RDLM_ERR_BUSY);
    }
    assert_status(rdlm_lock_query(la, &info), RDLM_OK);
    assert_int_equal(info.held, 1);
    assert_int_equal(info.held_by_me, 1);
    assert_int_equal(info.waiters, 0); /* a failed try queues nothing */
    assert_int_equal(info.last_token, token);
    assert_status(rdlm_lock_release(la), RDLM_OK);
    assert_status(rdlm_lock_acquire(lb, 0, NULL), RDLM_OK);
    assert_status(rdlm_lock_release(lb), RDLM_OK);
}

static void test_timed_acquire_on_held_lock_times_out_and_later_acquires_work(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_lock_h la;
    rdlm_lock_h lb;
    rdlm_lock_info_t info;
    uint64_t token_a;
    uint64_t token_b;
    uint64_t t0;
    uint64_t dt;

    api_lock_pair(fx, LOCK_NAME, &la, &lb);
    assert_status(rdlm_lock_acquire(la, 0, &token_a), RDLM_OK);

    for (int i = 0; i < 3; i++) {
        t0 = api_now_ns();
        assert_status(rdlm_lock_acquire(lb, 10 * API_NSEC_PER_MSEC, NULL), RDLM_ERR_TIMEOUT);
        dt = api_now_ns() - t0;
        assert_true(dt >= 10 * API_NSEC_PER_MSEC);
        assert_true(dt < 2 * API_NSEC_PER_SEC);
        assert_status(rdlm_lock_query(la, &info), RDLM_OK);
        assert_int_equal(info.held_by_me, 1);
        assert_int_equal(info.last_token, token_a);
    }

    /* The abandoned tickets do not stall the next acquirer. */
    assert_status(rdlm_lock_release(la), RDLM_OK);
    t0 = api_now_ns();
    assert_status(rdlm_lock_acquire(lb, 5 * API_NSEC_PER_SEC, &token_b), RDLM_OK);
    assert_true(api_now_ns() - t0 < API_NSEC_PER_SEC);
    assert_true(token_b > token_a);
    assert_status(rdlm_lock_release(lb), RDLM_OK);
    assert_status(rdlm_lock_query(la, &info), RDLM_OK);
    assert_int_equal(info.waiters, 0);
    assert_int_equal(info.held, 0);
}

/*
 * rdlm.h: "A timed-out request leaves nothing queued", and waiters counts "requests
 * queued behind the holder"; so while the holder keeps the lock, a request that
 * timed out must not show as a waiter.
 */
static void test_timed_out_request_is_not_counted_as_waiter(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_lock_h la;
    rdlm_lock_h lb;
    rdlm_lock_info_t info;

    api_lock_pair(fx, LOCK_NAME, &la, &lb);
    assert_status(rdlm_lock_acquire(la, 0, NULL), RDLM_OK);
    assert_status(rdlm_lock_acquire(lb, 10 * API_NSEC_PER_MSEC, NULL), RDLM_ERR_TIMEOUT);
    assert_status(rdlm_lock_query(la, &info), RDLM_OK);
    assert_int_equal(info.held_by_me, 1);
    if (info.waiters != 0) {
        print_error("the holder's query shows %u waiter(s) after the only other request "
                    "timed out\n", info.waiters);
    }
    assert_int_equal(info.waiters, 0);
    assert_status(rdlm_lock_release(la), RDLM_OK);
}

typedef struct queue_shared {
    _Atomic uint32_t next_slot;
    _Atomic int32_t order[8];
    _Atomic int32_t status[8];
    _Atomic uint64_t elapsed_ns[8];
    _Atomic uint64_t grant_ns[8];
} queue_shared_t;

typedef struct queue_child_arg {
    const char *job;
    queue_shared_t *sh;
    int id;
    uint64_t timeout_ns;
    int fifo; /* open the lock as RDLM_LOCK_ORDER_FIFO */
} queue_child_arg_t;

/* Open LOCK_NAME, FIFO if asked (else in the default order). */
static rdlm_status_t queue_lock_open(rdlm_ctx_h ctx, int fifo, rdlm_lock_h *lock_p)
{
    rdlm_lock_params_t params = {.field_mask = RDLM_LOCK_FIELD_ORDER,
                                 .order = RDLM_LOCK_ORDER_FIFO};

    return rdlm_lock_open_params(ctx, LOCK_NAME, fifo ? &params : NULL, lock_p);
}

/* Acquire once; record status, time and grant order; exit 0 if granted. */
static int queue_child(void *argp)
{
    queue_child_arg_t *arg = argp;
    rdlm_ctx_h ctx;
    rdlm_lock_h lock;
    rdlm_status_t st;
    uint64_t t0;

    if (api_ctx_create(arg->job, &ctx) != RDLM_OK) {
        return 10;
    }
    if (queue_lock_open(ctx, arg->fifo, &lock) != RDLM_OK) {
        return 11;
    }
    t0 = api_now_ns();
    st = rdlm_lock_acquire(lock, arg->timeout_ns, NULL);
    atomic_store(&arg->sh->grant_ns[arg->id], api_now_ns());
    atomic_store(&arg->sh->elapsed_ns[arg->id], api_now_ns() - t0);
    atomic_store(&arg->sh->status[arg->id], st);
    if (st == RDLM_OK) {
        uint32_t slot = atomic_fetch_add(&arg->sh->next_slot, 1);

        if (slot < 8) {
            atomic_store(&arg->sh->order[slot], arg->id);
        }
        if (rdlm_lock_release(lock) != RDLM_OK) {
            st = RDLM_ERR_NOT_OWNER;
        }
    }
    rdlm_ctx_destroy(ctx);
    return st == RDLM_OK ? 0 : 1;
}

static void test_timed_out_waiter_in_the_middle_of_the_queue_is_passed_over(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_ctx_h ctx = api_ctx(fx, 0);
    queue_shared_t *sh = api_shared(fx, sizeof(*sh));
    queue_child_arg_t t_arg = {.job = fx->job, .sh = sh, .id = 0,
                               .timeout_ns = 300 * API_NSEC_PER_MSEC};
    queue_child_arg_t c_arg = {.job = fx->job, .sh = sh, .id = 1,
                               .timeout_ns = 20 * API_NSEC_PER_SEC};
    rdlm_lock_h lock;
    rdlm_lock_info_t info;
    pid_t t_pid;
    pid_t c_pid;
    uint64_t t_release;

    assert_status(rdlm_lock_open(ctx, LOCK_NAME, &lock), RDLM_OK);
    assert_status(rdlm_lock_acquire(lock, 0, NULL), RDLM_OK);

    /* T queues first and will time out while we hold; C queues behind T. */
    t_pid = api_fork(fx, queue_child, &t_arg);
    assert_int_equal(api_wait_waiters(lock, 1, 10 * API_NSEC_PER_SEC), 0);
    c_pid = api_fork(fx, queue_child, &c_arg);
    assert_int_equal(api_wait_waiters(lock, 2, 10 * API_NSEC_PER_SEC), 0);

    assert_int_equal(api_wait_child(fx, t_pid, 10 * API_NSEC_PER_SEC), 1);
    assert_status((rdlm_status_t)atomic_load(&sh->status[0]), RDLM_ERR_TIMEOUT);
    assert_true(atomic_load(&sh->elapsed_ns[0]) >= 300 * API_NSEC_PER_MSEC);

    t_release = api_now_ns();
    assert_status(rdlm_lock_release(lock), RDLM_OK);
    assert_int_equal(api_wait_child(fx, c_pid, 20 * API_NSEC_PER_SEC), 0);
    assert_status((rdlm_status_t)atomic_load(&sh->status[1]), RDLM_OK);
    assert_true(atomic_load(&sh->grant_ns[1]) - t_release < API_NSEC_PER_SEC);

    assert_status(rdlm_lock_query(lock, &info), RDLM_OK);
    assert_int_equal(info.waiters, 0);
    assert_int_equal(info.held, 0);
}

static void test_lock_is_not_recursive(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_ctx_h ctx = api_ctx(fx, 0);
    rdlm_lock_h lock;
    rdlm_lock_h second;
    rdlm_lock_info_t info;
    uint64_t t0;

    assert_status(rdlm_lock_open(ctx, LOCK_NAME, &lock), RDLM_OK);
    assert_status(rdlm_lock_open(ctx, LOCK_NAME, &second), RDLM_OK);
    assert_status(rdlm_lock_acquire(lock, 0, NULL), RDLM_OK);
    assert_status(rdlm_lock_acquire(lock, 0, NULL), RDLM_ERR_BUSY);
    t0 = api_now_ns();
    assert_status(rdlm_lock_acquire(lock, 10 * API_NSEC_PER_MSEC, NULL), RDLM_ERR_TIMEOUT);
    assert_true(api_now_ns() - t0 >= 10 * API_NSEC_PER_MSEC);
    /* A second handle in the same context is the same owner: also waits for itself. */
    assert_status(rdlm_lock_acquire(second, 0, NULL), RDLM_ERR_BUSY);
    assert_status(rdlm_lock_query(lock, &info), RDLM_OK);
    assert_int_equal(info.held_by_me, 1);
    assert_status(rdlm_lock_release(lock), RDLM_OK);
    assert_status(rdlm_lock_release(lock), RDLM_ERR_NOT_OWNER);
    /* The self-inflicted timeout left the lock usable. */
    assert_status(rdlm_lock_acquire(second, API_NSEC_PER_SEC, NULL), RDLM_OK);
    assert_status(rdlm_lock_release(second), RDLM_OK);
}

static void test_fifo_waiters_are_granted_in_arrival_order(void **state)
{
    enum { K = 4 };
    api_fixture_t *fx = *state;
    rdlm_ctx_h ctx = api_ctx(fx, 0);
    queue_shared_t *sh = api_shared(fx, sizeof(*sh));
    queue_child_arg_t args[K + 1];
    pid_t pids[K + 1];
    rdlm_lock_h lock;
    rdlm_lock_info_t info;

    assert_status(queue_lock_open(ctx, 1, &lock), RDLM_OK);
    assert_status(rdlm_lock_acquire(lock, 0, NULL), RDLM_OK);
    for (int i = 1; i <= K; i++) {
        args[i] = (queue_child_arg_t){.job = fx->job, .sh = sh, .id = i,
                                      .timeout_ns = 20 * API_NSEC_PER_SEC, .fifo = 1};
        pids[i] = api_fork(fx, queue_child, &args[i]);
        /* Start the next one only once this one is queued. */
        assert_int_equal(api_wait_waiters(lock, (uint32_t)i, 10 * API_NSEC_PER_SEC), 0);
    }
    assert_status(rdlm_lock_release(lock), RDLM_OK);
    for (int i = 1; i <= K; i++) {
        assert_int_equal(api_wait_child(fx, pids[i], 20 * API_NSEC_PER_SEC), 0);
    }
    assert_int_equal(atomic_load(&sh->next_slot), K);
    for (int slot = 0; slot < K; slot++) {
        if (atomic_load(&sh->order[slot]) != slot + 1) {
            print_error("grant order:");
            for (int j = 0; j < K; j++) {
                print_error(" %d", (int)atomic_load(&sh->order[j]));
            }
            print_error(" (want 1..%d)\n", K);
        }
        assert_int_equal(atomic_load(&sh->order[slot]), slot + 1);
    }
    assert_status(rdlm_lock_query(lock, &info), RDLM_OK);
    assert_int_equal(info.waiters, 0);
    assert_int_equal(info.held, 0);
}

typedef struct token_shared {
    uint64_t next; /* protected by the lock */
    _Atomic int32_t failures;
    uint64_t tokens[]; /* [procs * iters], in grant order */
} token_shared_t;

typedef struct token_child_arg {
    const char *job;
    token_shared_t *sh;
    uint64_t iters;
    uint64_t capacity;
} token_child_arg_t;

static int token_child(void *argp)
{
    token_child_arg_t *arg = argp;
    rdlm_ctx_h ctx;
    rdlm_lock_h lock;
    int rc = 0;

    if (api_ctx_create(arg->job, &ctx) != RDLM_OK) {
        return 10;
    }
    if (rdlm_lock_open(ctx, LOCK_NAME, &lock) != RDLM_OK) {
        rdlm_ctx_destroy(ctx);
        return 11;
    }
    for (uint64_t i = 0; i < arg->iters; i++) {
        uint64_t token = 0;
        uint64_t slot;

        if (rdlm_lock_acquire(lock, 10 * API_NSEC_PER_SEC, &token) != RDLM_OK) {
            rc = 12;
            break;
        }
        slot = arg->sh->next;
        if (slot < arg->capacity) {
            arg->sh->tokens[slot] = token;
        }
        arg->sh->next = slot + 1;
        if (rdlm_lock_release(lock) != RDLM_OK) {
            rc = 13;
            break;
        }
    }
    rdlm_ctx_destroy(ctx);
    return rc;
}

static void test_tokens_strictly_increase_across_processes(void **state)
{
    enum { PROCS = 4 };
    api_fixture_t *fx = *state;
    rdlm_ctx_h ctx = api_ctx(fx, 0); /* keeps the segment alive for the final query */
    uint64_t iters = api_env_u64("RDLMTEST_API_TOKEN_ITERS", 250);
    uint64_t total = iters * PROCS;
    token_shared_t *sh = api_shared(fx, sizeof(*sh) + total * sizeof(uint64_t));
    token_child_arg_t arg = {.job = fx->job, .sh = sh, .iters = iters, .capacity = total};
    pid_t pids[PROCS];
    rdlm_lock_h lock;
    rdlm_lock_info_t info;

    assert_status(rdlm_lock_open(ctx, LOCK_NAME, &lock), RDLM_OK);
    for (int p = 0; p < PROCS; p++) {
        pids[p] = api_fork(fx, token_child, &arg);
    }
    for (int p = 0; p < PROCS; p++) {
        assert_int_equal(api_wait_child(fx, pids[p], 60 * API_NSEC_PER_SEC), 0);
    }
    assert_int_equal(sh->next, total);
    for (uint64_t i = 1; i < total; i++) {
        if (sh->tokens[i] <= sh->tokens[i - 1]) {
            print_error("token[%llu] = %#llx after %#llx\n", (unsigned long long)i,
                        (unsigned long long)sh->tokens[i],
                        (unsigned long long)sh->tokens[i - 1]);
        }
        assert_true(sh->tokens[i] > sh->tokens[i - 1]);
    }
    assert_status(rdlm_lock_query(lock, &info), RDLM_OK);
    assert_int_equal(info.last_token, sh->tokens[total - 1]);
}

static void test_tokens_strictly_increase_across_contexts(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_ctx_h ctx[2] = {api_ctx(fx, 0), api_ctx(fx, 1)};
    rdlm_lock_h lock[2];
    rdlm_lock_info_t info;
    uint64_t last = 0;
    uint64_t token;

    for (int c = 0; c < 2; c++) {
        assert_status(rdlm_lock_open(ctx[c], LOCK_NAME, &lock[c]), RDLM_OK);
    }
    for (int i = 0; i < 100; i++) {
        int c = i % 2;

        assert_status(rdlm_lock_acquire(lock[c], API_NSEC_PER_SEC, &token), RDLM_OK);
        assert_true(token > last);
        last = token;
        assert_status(rdlm_lock_query(lock[1 - c], &info), RDLM_OK);
        assert_int_equal(info.last_token, token);
        assert_int_equal(info.held_by_me, 0);
        assert_status(rdlm_lock_release(lock[c]), RDLM_OK);
    }
    /* A fresh handle, and a fresh context, continue the sequence. */
    assert_status(rdlm_lock_close(lock[0]), RDLM_OK);
    api_ctx_destroy(fx, 0);
    ctx[0] = api_ctx(fx, 0);
    assert_status(rdlm_lock_open(ctx[0], LOCK_NAME, &lock[0]), RDLM_OK);
    assert_status(rdlm_lock_acquire(lock[0], API_NSEC_PER_SEC, &token), RDLM_OK);
    assert_true(token > last);
    assert_status(rdlm_lock_release(lock[0]), RDLM_OK);
}

static void test_close_and_destroy_hand_a_held_lock_over_normally(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_ctx_h a = api_ctx(fx, 0);
    rdlm_ctx_h b = api_ctx(fx, 1);
    rdlm_ctx_h c = api_ctx(fx, 2);
    rdlm_lock_h la;
    rdlm_lock_h lb;
    rdlm_lock_h lc;
    rdlm_rwlock_h rwb;
    rdlm_rwlock_h rwc;

    assert_status(rdlm_lock_open(a, LOCK_NAME, &la), RDLM_OK);
    assert_status(rdlm_lock_open(b, LOCK_NAME, &lb), RDLM_OK);
    assert_status(rdlm_lock_open(c, LOCK_NAME, &lc), RDLM_OK);

    assert_status(rdlm_lock_acquire(la, 0, NULL), RDLM_OK);
    assert_status(rdlm_lock_close(la), RDLM_OK);
    assert_status(rdlm_lock_acquire(lb, 0, NULL), RDLM_OK); /* not RDLM_OWNER_DEAD */
    assert_status(rdlm_lock_release(lb), RDLM_OK);

    assert_status(rdlm_rwlock_open(b, "rw", &rwb), RDLM_OK);
    assert_status(rdlm_rwlock_open(c, "rw", &rwc), RDLM_OK);
    assert_status(rdlm_lock_acquire(lc, 0, NULL), RDLM_OK);
    assert_status(rdlm_rwlock_read_acquire(rwc, 0), RDLM_OK);
    assert_status(rdlm_rwlock_write_acquire(rwb, 0, NULL), RDLM_ERR_BUSY);
    api_ctx_destroy(fx, 2);
    assert_status(rdlm_lock_acquire(lb, 0, NULL), RDLM_OK);
    assert_status(rdlm_lock_release(lb), RDLM_OK);
    assert_status(rdlm_rwlock_write_acquire(rwb, 0, NULL), RDLM_OK);
    assert_status(rdlm_rwlock_write_release(rwb), RDLM_OK);
}

/* A context's holds belong to the context, which sees a name through all its handles
 * (threads often open one each): closing one handle while another holds leaves the
 * hold (before, the close released it: another context then took the lock beside the
 * holder, whose release said RDLM_ERR_NOT_OWNER; an outside user's threads); closing
 * the last handle releases it. Also an rwlock's write and read sides, in both
 * orders of open. */
static void test_closing_another_handle_of_a_held_name_keeps_the_hold(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_ctx_h a = api_ctx(fx, 0);
    rdlm_ctx_h b = api_ctx(fx, 1);
    rdlm_lock_h held, other, lb;
    rdlm_rwlock_h rw_held, rw_other, rwb;
    rdlm_lock_info_t info;

    assert_status(rdlm_lock_open(a, LOCK_NAME, &held), RDLM_OK);
    assert_status(rdlm_lock_open(a, LOCK_NAME, &other), RDLM_OK);
    assert_status(rdlm_lock_open(b, LOCK_NAME, &lb), RDLM_OK);
    assert_status(rdlm_lock_acquire(held, 0, NULL), RDLM_OK);
    assert_status(rdlm_lock_close(other), RDLM_OK);
    assert_status(rdlm_lock_query(held, &info), RDLM_OK);
    assert_true(info.held && info.held_by_me);
    assert_status(rdlm_lock_acquire(lb, 0, NULL), RDLM_ERR_BUSY);
    assert_status(rdlm_lock_release(held), RDLM_OK);
    assert_status(rdlm_lock_acquire(lb, 0, NULL), RDLM_OK);
    assert_status(rdlm_lock_release(lb), RDLM_OK);

    assert_status(rdlm_rwlock_open(a, "rw", &rw_other), RDLM_OK);
    assert_status(rdlm_rwlock_open(a, "rw", &rw_held), RDLM_OK);
    assert_status(rdlm_rwlock_open(b, "rw", &rwb), RDLM_OK);
    assert_status(rdlm_rwlock_write_acquire(rw_held, 0, NULL), RDLM_OK);
    assert_status(rdlm_rwlock_close(rw_other), RDLM_OK);
    assert_status(rdlm_rwlock_read_acquire(rwb, 0), RDLM_ERR_BUSY);
    assert_status(rdlm_rwlock_write_release(rw_held), RDLM_OK);
    assert_status(rdlm_rwlock_open(a, "rw", &rw_other), RDLM_OK);
    assert_status(rdlm_rwlock_read_acquire(rw_held, 0), RDLM_OK);
    assert_status(rdlm_rwlock_close(rw_other), RDLM_OK);
    assert_status(rdlm_rwlock_write_acquire(rwb, 0, NULL), RDLM_ERR_BUSY);
    assert_status(rdlm_rwlock_read_release(rw_held), RDLM_OK);

    /* The last handle's close releases what the context holds. */
    assert_status(rdlm_lock_acquire(held, 0, NULL), RDLM_OK);
    assert_status(rdlm_lock_close(held), RDLM_OK);
    assert_status(rdlm_lock_acquire(lb, 0, NULL), RDLM_OK);
    assert_status(rdlm_lock_release(lb), RDLM_OK);
    assert_status(rdlm_rwlock_read_acquire(rw_held, 0), RDLM_OK);
    assert_status(rdlm_rwlock_close(rw_held), RDLM_OK);
    assert_status(rdlm_rwlock_write_acquire(rwb, 0, NULL), RDLM_OK);
    assert_status(rdlm_rwlock_write_release(rwb), RDLM_OK);
}

#define API_TEST(f) cmocka_unit_test_setup_teardown(f, api_setup, api_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        API_TEST(test_try_acquire_on_held_lock_is_busy),
        API_TEST(test_timed_acquire_on_held_lock_times_out_and_later_acquires_work),
        API_TEST(test_timed_out_request_is_not_counted_as_waiter),
        API_TEST(test_timed_out_waiter_in_the_middle_of_the_queue_is_passed_over),
        API_TEST(test_lock_is_not_recursive),
        API_TEST(test_fifo_waiters_are_granted_in_arrival_order),
        API_TEST(test_tokens_strictly_increase_across_processes),
        API_TEST(test_tokens_strictly_increase_across_contexts),
        API_TEST(test_close_and_destroy_hand_a_held_lock_over_normally),
        API_TEST(test_closing_another_handle_of_a_held_name_keeps_the_hold),
    };

    return cmocka_run_group_tests_name("api.lock", tests, NULL, NULL);
}
