/*
 * Semaphores on one node: arguments and ownership, a timeout takes nothing, a large
 * request waiting at the gate is not overtaken by a later small one, several
 * processes never hold more than N permits at once (a shared gauge), and a waiter
 * past the bypass bound reserves the next permits against a stream of fast-path
 * takers.
 */
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "api_util.h"

static void test_arguments_and_ownership(void **state)
{
    api_fixture_t *f = *state;
    rdlm_ctx_h ctx = api_ctx(f, 0);
    rdlm_sem_h sem, other;
    uint32_t avail;

    assert_status(rdlm_sem_open(ctx, "s", 0, &sem), RDLM_ERR_INVALID_ARG);
    assert_status(rdlm_sem_open(ctx, "s", 3, NULL), RDLM_ERR_INVALID_ARG);
    assert_status(rdlm_sem_open(ctx, "s", 3, &sem), RDLM_OK);
    assert_status(rdlm_sem_open(ctx, "s", 4, &other), RDLM_ERR_MISMATCH);
    assert_status(rdlm_sem_acquire(sem, 0, 0), RDLM_ERR_INVALID_ARG);
    assert_status(rdlm_sem_acquire(sem, 4, 0), RDLM_ERR_INVALID_ARG);
    assert_status(rdlm_sem_release(sem, 1), RDLM_ERR_NOT_OWNER);
    assert_status(rdlm_sem_acquire(sem, 2, 0), RDLM_OK);
    assert_status(rdlm_sem_available(sem, &avail), RDLM_OK);
    assert_int_equal(avail, 1);
    assert_status(rdlm_sem_acquire(sem, 2, 0), RDLM_ERR_BUSY);
    assert_status(rdlm_sem_acquire(sem, 2, 10 * API_NSEC_PER_MSEC), RDLM_ERR_TIMEOUT);
    assert_status(rdlm_sem_available(sem, &avail), RDLM_OK);
    assert_int_equal(avail, 1); /* the timeout took nothing */
    assert_status(rdlm_sem_release(sem, 3), RDLM_ERR_NOT_OWNER);
    assert_status(rdlm_sem_release(sem, 1), RDLM_OK);
    assert_status(rdlm_sem_close(sem), RDLM_OK); /* gives the other permit back */
    assert_status(rdlm_sem_open(ctx, "s", 3, &sem), RDLM_OK);
    assert_status(rdlm_sem_available(sem, &avail), RDLM_OK);
    assert_int_equal(avail, 3);
    assert_status(rdlm_sem_acquire(NULL, 1, 0), RDLM_ERR_BAD_HANDLE);
}

typedef struct fifo_shared {
    char job[40];
    atomic_int order; /* next position */
    atomic_int big_pos, small_pos;
    atomic_int big_waiting;
} fifo_shared_t;

/* Child: take n permits, record the order in which it got them. */
static int fifo_child(fifo_shared_t *sh, uint32_t n, atomic_int *pos)
{
    rdlm_ctx_h ctx;
    rdlm_sem_h sem;

    if (api_ctx_create(sh->job, &ctx) != RDLM_OK || rdlm_sem_open(ctx, "fifo", 3, &sem) != RDLM_OK) {
        return 10;
    }
    if (n == 3) {
        atomic_store(&sh->big_waiting, 1);
    }
    if (rdlm_sem_acquire(sem, n, 10 * API_NSEC_PER_SEC) != RDLM_OK) {
        return 11;
    }
    atomic_store(pos, atomic_fetch_add(&sh->order, 1));
    rdlm_sem_release(sem, n);
    rdlm_ctx_destroy(ctx);
    return 0;
}

static int fifo_big(void *arg)
{
    fifo_shared_t *sh = arg;
    return fifo_child(sh, 3, &sh->big_pos);
}

static int fifo_small(void *arg)
{
    fifo_shared_t *sh = arg;
    return fifo_child(sh, 1, &sh->small_pos);
}

static void test_fifo_big_request_not_overtaken(void **state)
{
    api_fixture_t *f = *state;
    fifo_shared_t *sh = api_shared(f, sizeof(*sh));
    rdlm_ctx_h ctx = api_ctx(f, 0);
    rdlm_sem_h sem;
    pid_t big, small;

    strcpy(sh->job, f->job);
    assert_status(rdlm_sem_open(ctx, "fifo", 3, &sem), RDLM_OK);
    assert_status(rdlm_sem_acquire(sem, 2, 0), RDLM_OK); /* 1 left: the big one waits */
    big = api_fork(f, fifo_big, sh);
    for (int i = 0; i < 1000 && !atomic_load(&sh->big_waiting); i++) {
        api_sleep_ms(1);
    }
    api_sleep_ms(50); /* the big request is queued at the gate */
    small = api_fork(f, fifo_small, sh);
    api_sleep_ms(50); /* 1 permit is free, but the big request came first */
    assert_int_equal(atomic_load(&sh->order), 0);
    assert_status(rdlm_sem_release(sem, 2), RDLM_OK);
    assert_int_equal(api_wait_child(f, big, 10 * API_NSEC_PER_SEC), 0);
    assert_int_equal(api_wait_child(f, small, 10 * API_NSEC_PER_SEC), 0);
    assert_int_equal(atomic_load(&sh->big_pos), 0);
    assert_int_equal(atomic_load(&sh->small_pos), 1);
}

typedef struct gauge_shared {
    char job[40];
    atomic_int held, worst, errors;
} gauge_shared_t;

#define GAUGE_PERMITS 2
#define GAUGE_ROUNDS 2000

static int gauge_child(void *arg)
{
    gauge_shared_t *sh = arg;
    rdlm_ctx_h ctx;
    rdlm_sem_h sem;

    if (api_ctx_create(sh->job, &ctx) != RDLM_OK ||
        rdlm_sem_open(ctx, "gauge", GAUGE_PERMITS, &sem) != RDLM_OK) {
        return 10;
    }
    for (int i = 0; i < GAUGE_ROUNDS; i++) {
        uint32_t k = 1 + (uint32_t)(i % 2);
        int now;

        if (rdlm_sem_acquire(sem, k, 10 * API_NSEC_PER_SEC) != RDLM_OK) {
            atomic_fetch_add(&sh->errors, 1);
            break;
        }
        now = atomic_fetch_add(&sh->held, (int)k) + (int)k;
        for (int w = atomic_load(&sh->worst); now > w;) {
            if (atomic_compare_exchange_weak(&sh->worst, &w, now)) {
                break;
            }
        }
        atomic_fetch_sub(&sh->held, (int)k);
        rdlm_sem_release(sem, k);
    }
    rdlm_ctx_destroy(ctx);
    return 0;
}

static void test_never_more_than_n_permits_held(void **state)
{
    api_fixture_t *f = *state;
    gauge_shared_t *sh = api_shared(f, sizeof(*sh));
    pid_t kids[4];

    strcpy(sh->job, f->job);
    for (int i = 0; i < 4; i++) {
        kids[i] = api_fork(f, gauge_child, sh);
    }
    for (int i = 0; i < 4; i++) {
        assert_int_equal(api_wait_child(f, kids[i], 60 * API_NSEC_PER_SEC), 0);
    }
    assert_int_equal(atomic_load(&sh->errors), 0);
    assert_true(atomic_load(&sh->worst) <= GAUGE_PERMITS);
    assert_true(atomic_load(&sh->worst) >= 1);
}

typedef struct rsv_shared {
    char job[40];
    atomic_int ready;
    atomic_long takes, busy;
} rsv_shared_t;

#define RSV_MAX_TRIES 200000000L
#define RSV_BUSY_RUN 100

/* The stream: always holds at least one of the 2 permits (takes a second, then gives
 * the older back), so a request for 2 can never find both free by the fast path. Only
 * a reservation closes the fast path (BUSY); after RSV_BUSY_RUN of those in a row it
 * gives its permit back. Bounded by RSV_MAX_TRIES (then exit 2). */
static int rsv_stream(void *arg)
{
    rsv_shared_t *sh = arg;
    long run = 0;
    rdlm_ctx_h ctx;
    rdlm_sem_h sem;

    if (api_ctx_create(sh->job, &ctx) != RDLM_OK || rdlm_sem_open(ctx, "rsv", 2, &sem) != RDLM_OK ||
        rdlm_sem_acquire(sem, 1, API_NSEC_PER_SEC) != RDLM_OK) {
        return 10;
    }
    atomic_store(&sh->ready, 1);
    for (long i = 0; i < RSV_MAX_TRIES && run < RSV_BUSY_RUN; i++) {
        rdlm_status_t st = rdlm_sem_acquire(sem, 1, 0);

        if (st == RDLM_OK) {
            rdlm_sem_release(sem, 1);
            atomic_fetch_add(&sh->takes, 1);
            run = 0;
        } else if (st == RDLM_ERR_BUSY) {
            atomic_fetch_add(&sh->busy, 1);
            run++;
        } else {
            return 11;
        }
    }
    rdlm_sem_release(sem, 1);
    rdlm_ctx_destroy(ctx);
    return run >= RSV_BUSY_RUN ? 0 : 2;
}

/* A waiter past the bypass bound reserves: a stream of fast-path takers that never
 * leaves both permits free is shut out (its tries fail) and the request for 2 gets
 * them, instead of waiting without bound. */
static void test_reservation_beats_fast_path_stream(void **state)
{
    api_fixture_t *f = *state;
    rsv_shared_t *sh = api_shared(f, sizeof(*sh));
    rdlm_ctx_h ctx = api_ctx(f, 0);
    rdlm_sem_h sem;
    long before;
    pid_t pid;

    strcpy(sh->job, f->job);
    assert_status(rdlm_sem_open(ctx, "rsv", 2, &sem), RDLM_OK);
    pid = api_fork(f, rsv_stream, sh);
    for (int i = 0; i < 10000 && atomic_load(&sh->takes) < 100; i++) {
        api_sleep_ms(1);
    }
    before = atomic_load(&sh->takes);
    assert_true(before >= 100);
    assert_int_equal(atomic_load(&sh->busy), 0);
    assert_status(rdlm_sem_acquire(sem, 2, 10 * API_NSEC_PER_SEC), RDLM_OK);
    assert_true(atomic_load(&sh->busy) >= RSV_BUSY_RUN); /* the fast path was closed */
    assert_status(rdlm_sem_release(sem, 2), RDLM_OK);
    assert_int_equal(api_wait_child(f, pid, 10 * API_NSEC_PER_SEC), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_arguments_and_ownership, api_setup, api_teardown),
        cmocka_unit_test_setup_teardown(test_fifo_big_request_not_overtaken, api_setup,
                                        api_teardown),
        cmocka_unit_test_setup_teardown(test_never_more_than_n_permits_held, api_setup,
                                        api_teardown),
        cmocka_unit_test_setup_teardown(test_reservation_beats_fast_path_stream, api_setup,
                                        api_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
