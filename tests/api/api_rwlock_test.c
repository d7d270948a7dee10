/*
 * Public API: reader-writer locks.
 *
 * Proves: readers hold together and exclude writers (in one process with several
 * contexts, and across processes); a writer that timed out waiting for readers
 * leaves nothing behind that blocks later readers; a waiting writer is not overtaken
 * by a reader that arrives after it (writers are not starved); write tokens strictly
 * increase; running out of shared-hold records (RDLM_ERR_NO_RESOURCE) harms nothing;
 * the reader count of a reader that died is reset by the next writer, exactly.
 *
 * "The writer is queued" is observed through the API itself: once a writer waits,
 * a try-read must fail with RDLM_ERR_BUSY (requests are served in arrival order), so
 * the parent polls try-read until it does. Children report through shared memory
 * and exit codes; only the parent asserts.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#include "api_util.h"

#define RW_NAME "rw"

static void test_readers_share_and_exclude_writers(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_rwlock_h ra;
    rdlm_rwlock_h rb;
    rdlm_rwlock_h rc;

    api_rwlock_trio(fx, RW_NAME, &ra, &rb, &rc);

    assert_status(rdlm_rwlock_read_acquire(ra, 0), RDLM_OK);
    assert_status(rdlm_rwlock_read_acquire(rb, 0), RDLM_OK); /* readers share */
    assert_status(rdlm_rwlock_write_acquire(rc, 0, NULL), RDLM_ERR_BUSY);
    assert_status(rdlm_rwlock_read_release(ra), RDLM_OK);
    assert_status(rdlm_rwlock_write_acquire(rc, 0, NULL), RDLM_ERR_BUSY); /* b still reads */
    assert_status(rdlm_rwlock_read_release(rb), RDLM_OK);

    assert_status(rdlm_rwlock_write_acquire(rc, 0, NULL), RDLM_OK);
    assert_status(rdlm_rwlock_read_acquire(ra, 0), RDLM_ERR_BUSY);
    assert_status(rdlm_rwlock_write_acquire(rb, 0, NULL), RDLM_ERR_BUSY);
    assert_status(rdlm_rwlock_read_acquire(ra, 10 * API_NSEC_PER_MSEC), RDLM_ERR_TIMEOUT);
    assert_status(rdlm_rwlock_write_release(rc), RDLM_OK);
    assert_status(rdlm_rwlock_read_acquire(ra, 0), RDLM_OK);
    assert_status(rdlm_rwlock_read_release(ra), RDLM_OK);
}

static void test_writer_timed_out_behind_readers_leaves_nothing_behind(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_rwlock_h ra;
    rdlm_rwlock_h rb;
    rdlm_rwlock_h rc;
    uint64_t t0;

    api_rwlock_trio(fx, RW_NAME, &ra, &rb, &rc);

    assert_status(rdlm_rwlock_read_acquire(ra, 0), RDLM_OK);
    t0 = api_now_ns();
    assert_status(rdlm_rwlock_write_acquire(rb, 10 * API_NSEC_PER_MSEC, NULL),
                  RDLM_ERR_TIMEOUT);
    assert_true(api_now_ns() - t0 >= 10 * API_NSEC_PER_MSEC);
    /* The timed-out writer must not keep later readers out. */
    assert_status(rdlm_rwlock_read_acquire(rc, 0), RDLM_OK);
    assert_status(rdlm_rwlock_read_release(rc), RDLM_OK);
    assert_status(rdlm_rwlock_read_release(ra), RDLM_OK);
    /* Nor later writers. */
    t0 = api_now_ns();
    assert_status(rdlm_rwlock_write_acquire(rb, 5 * API_NSEC_PER_SEC, NULL), RDLM_OK);
    assert_true(api_now_ns() - t0 < API_NSEC_PER_SEC);
    assert_status(rdlm_rwlock_write_release(rb), RDLM_OK);
}

static void test_write_tokens_strictly_increase(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_ctx_h a = api_ctx(fx, 0);
    rdlm_ctx_h b = api_ctx(fx, 1);
    rdlm_rwlock_h rw[2];
    uint64_t last = 0;
    uint64_t token;

    assert_status(rdlm_rwlock_open(a, RW_NAME, &rw[0]), RDLM_OK);
    assert_status(rdlm_rwlock_open(b, RW_NAME, &rw[1]), RDLM_OK);
    for (int i = 0; i < 50; i++) {
        rdlm_rwlock_h h = rw[i % 2];

        assert_status(rdlm_rwlock_write_acquire(h, API_NSEC_PER_SEC, &token), RDLM_OK);
        assert_true(token > last);
        last = token;
        assert_status(rdlm_rwlock_write_release(h), RDLM_OK);
        assert_status(rdlm_rwlock_read_acquire(rw[(i + 1) % 2], API_NSEC_PER_SEC), RDLM_OK);
        assert_status(rdlm_rwlock_read_release(rw[(i + 1) % 2]), RDLM_OK);
    }
}

/*
 * rdlm.h allows RDLM_ERR_NO_RESOURCE when a context holds too many shared locks at
 * once. Wherever that limit lies, hitting it must change nothing: the shared locks
 * already held stay held (writers are kept out), and releasing one makes room.
 */
static void test_too_many_shared_holds_is_no_resource_and_harmless(void **state)
{
    enum { N = 64 };
    api_fixture_t *fx = *state;
    rdlm_ctx_h a = api_ctx(fx, 0);
    rdlm_ctx_h b = api_ctx(fx, 1);
    rdlm_rwlock_h mine[N];
    rdlm_rwlock_h theirs;
    rdlm_status_t st = RDLM_OK;
    char name[32];
    int held = 0;

    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof(name), "rw%d", i);
        assert_status(rdlm_rwlock_open(a, name, &mine[i]), RDLM_OK);
    }
    while (held < N) {
        st = rdlm_rwlock_read_acquire(mine[held], 0);
        if (st != RDLM_OK) {
            break;
        }
        held++;
    }
    if (held == N) {
        skip(); /* no limit below N: nothing more to check */
    }
    assert_status(st, RDLM_ERR_NO_RESOURCE);
    assert_true(held >= 1);
    print_message("      a context holds at most %d shared locks at once\n", held);

    /* The held ones are still held: a writer in another context is kept out. */
    snprintf(name, sizeof(name), "rw%d", held - 1);
    assert_status(rdlm_rwlock_open(b, name, &theirs), RDLM_OK);
    assert_status(rdlm_rwlock_write_acquire(theirs, 0, NULL), RDLM_ERR_BUSY);
    /* The refused one is not held: a writer gets it. */
    snprintf(name, sizeof(name), "rw%d", held);
    assert_status(rdlm_rwlock_open(b, name, &theirs), RDLM_OK);
    assert_status(rdlm_rwlock_write_acquire(theirs, 0, NULL), RDLM_OK);
    assert_status(rdlm_rwlock_write_release(theirs), RDLM_OK);
    assert_status(rdlm_rwlock_read_release(mine[held]), RDLM_ERR_NOT_OWNER);

    /* Releasing one makes room for the refused one. */
    assert_status(rdlm_rwlock_read_release(mine[0]), RDLM_OK);
    assert_status(rdlm_rwlock_read_acquire(mine[held], 0), RDLM_OK);
    for (int i = 1; i <= held; i++) {
        assert_status(rdlm_rwlock_read_release(mine[i]), RDLM_OK);
    }
}

/* ---- writer not starved, across processes --------------------------------------- */

enum { RW_R1 = 0, RW_R2 = 1, RW_W = 2, RW_R3 = 3, RW_ROLES = 4 };

typedef struct rw_shared {
    _Atomic int32_t holding[RW_ROLES];  /* 1 while the role holds */
    _Atomic int32_t started[RW_ROLES];  /* 1 just before the role's acquire */
    _Atomic int32_t status[RW_ROLES];   /* status of the acquire */
    _Atomic int32_t release_readers;    /* command: R1 and R2 release */
    _Atomic uint32_t next_slot;
    _Atomic int32_t order[RW_ROLES];    /* grant order of W and R3 */
    _Atomic int32_t overlaps;           /* a writer and a reader held together */
} rw_shared_t;

typedef struct rw_child_arg {
    const char *job;
    rw_shared_t *sh;
    int role;
} rw_child_arg_t;

static int rw_child(void *argp)
{
    rw_child_arg_t *arg = argp;
    rw_shared_t *sh = arg->sh;
    int writer = arg->role == RW_W;
    rdlm_ctx_h ctx;
    rdlm_rwlock_h rw;
    rdlm_status_t st;
    uint64_t deadline;

    if (api_ctx_create(arg->job, &ctx) != RDLM_OK) {
        return 10;
    }
    if (rdlm_rwlock_open(ctx, RW_NAME, &rw) != RDLM_OK) {
        return 11;
    }
    atomic_store(&sh->started[arg->role], 1);
    st = writer ? rdlm_rwlock_write_acquire(rw, 20 * API_NSEC_PER_SEC, NULL)
                : rdlm_rwlock_read_acquire(rw, 20 * API_NSEC_PER_SEC);
    atomic_store(&sh->status[arg->role], st);
    if (st != RDLM_OK) {
        return 12;
    }
    atomic_store(&sh->holding[arg->role], 1);
    if (arg->role == RW_W || arg->role == RW_R3) {
        atomic_store(&sh->order[atomic_fetch_add(&sh->next_slot, 1) % RW_ROLES], arg->role);
    }
    if (writer) {
        for (int i = 0; i < 50; i++) { /* hold ~50 ms, watching for readers */
            if (atomic_load(&sh->holding[RW_R1]) || atomic_load(&sh->holding[RW_R2]) ||
                atomic_load(&sh->holding[RW_R3])) {
                atomic_fetch_add(&sh->overlaps, 1);
            }
            api_sleep_ms(1);
        }
    } else if (arg->role == RW_R3) {
        if (atomic_load(&sh->holding[RW_W])) {
            atomic_fetch_add(&sh->overlaps, 1);
        }
    } else {
        deadline = api_now_ns() + 30 * API_NSEC_PER_SEC;
        while (!atomic_load(&sh->release_readers) && api_now_ns() < deadline) {
            api_sleep_ms(1);
        }
    }
    atomic_store(&sh->holding[arg->role], 0);
    st = writer ? rdlm_rwlock_write_release(rw) : rdlm_rwlock_read_release(rw);
    rdlm_ctx_destroy(ctx);
    return st == RDLM_OK ? 0 : 13;
}

/** Poll try-read until it reports BUSY (a writer waits or holds); 0 on success. */
static int rw_wait_writer_queued(rdlm_rwlock_h rw, uint64_t timeout_ns)
{
    uint64_t deadline = api_now_ns() + timeout_ns;

    while (api_now_ns() < deadline) {
        rdlm_status_t st = rdlm_rwlock_read_acquire(rw, 0);

        if (st == RDLM_ERR_BUSY) {
            return 0;
        }
        if (st == RDLM_OK) {
            rdlm_rwlock_read_release(rw);
        }
        api_sleep_ms(1);
    }
    return -1;
}

static void test_waiting_writer_is_not_overtaken_by_later_reader(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_ctx_h ctx = api_ctx(fx, 0);
    rw_shared_t *sh = api_shared(fx, sizeof(*sh));
    rw_child_arg_t args[RW_ROLES];
    pid_t pids[RW_ROLES];
    rdlm_rwlock_h rw;
    uint64_t deadline;

    assert_status(rdlm_rwlock_open(ctx, RW_NAME, &rw), RDLM_OK);
    for (int r = 0; r < RW_ROLES; r++) {
        args[r] = (rw_child_arg_t){.job = fx->job, .sh = sh, .role = r};
    }

    /* Two readers hold at the same time. */
    pids[RW_R1] = api_fork(fx, rw_child, &args[RW_R1]);
    pids[RW_R2] = api_fork(fx, rw_child, &args[RW_R2]);
    deadline = api_now_ns() + 10 * API_NSEC_PER_SEC;
    while (!(atomic_load(&sh->holding[RW_R1]) && atomic_load(&sh->holding[RW_R2])) &&
           api_now_ns() < deadline) {
        api_sleep_ms(1);
    }
    assert_int_equal(atomic_load(&sh->holding[RW_R1]), 1);
    assert_int_equal(atomic_load(&sh->holding[RW_R2]), 1);

    /* W queues behind them. */
    pids[RW_W] = api_fork(fx, rw_child, &args[RW_W]);
    assert_int_equal(rw_wait_writer_queued(rw, 10 * API_NSEC_PER_SEC), 0);
    assert_int_equal(atomic_load(&sh->holding[RW_W]), 0);

    /* R3 arrives after W: it must wait although only readers hold. */
    pids[RW_R3] = api_fork(fx, rw_child, &args[RW_R3]);
    deadline = api_now_ns() + 10 * API_NSEC_PER_SEC;
    while (!atomic_load(&sh->started[RW_R3]) && api_now_ns() < deadline) {
        api_sleep_ms(1);
    }
    assert_int_equal(atomic_load(&sh->started[RW_R3]), 1);
    api_sleep_ms(200);
    assert_int_equal(atomic_load(&sh->holding[RW_R3]), 0);
    assert_int_equal(atomic_load(&sh->next_slot), 0);

    atomic_store(&sh->release_readers, 1);
    for (int r = 0; r < RW_ROLES; r++) {
        assert_int_equal(api_wait_child(fx, pids[r], 30 * API_NSEC_PER_SEC), 0);
    }
    assert_int_equal(atomic_load(&sh->next_slot), 2);
    assert_int_equal(atomic_load(&sh->order[0]), RW_W);
    assert_int_equal(atomic_load(&sh->order[1]), RW_R3);
    assert_int_equal(atomic_load(&sh->overlaps), 0);
}


/* A child that takes a shared hold and dies without releasing it. */
static int rw_dead_reader_child(void *argp)
{
    rdlm_rwlock_h rw;
    rdlm_ctx_h ctx;

    if (api_ctx_create((const char *)argp, &ctx) != RDLM_OK || rdlm_rwlock_open(ctx, RW_NAME, &rw) != RDLM_OK ||
        rdlm_rwlock_read_acquire(rw, API_NSEC_PER_SEC) != RDLM_OK) {
        return 1;
    }
    _exit(0); /* dies holding it: its unit stays in the reader count */
}

/* The reader count of a dead reader is reset by the next writer (no live READ record
 * left), and afterwards the count is exact: a read and its release leave the lock
 * free for a try-write, and no reader is reported. */
static void test_dead_reader_count_is_reset_by_writer(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_rwlock_info_t info;
    rdlm_rwlock_h rw;

    assert_int_equal(rdlm_rwlock_open(api_ctx(fx, 0), RW_NAME, &rw), RDLM_OK);
    for (int round = 0; round < 2; round++) {
        pid_t pid = api_fork(fx, rw_dead_reader_child, fx->job);

        assert_int_equal(api_wait_child(fx, pid, 10 * API_NSEC_PER_SEC), 0);
        assert_int_equal(rdlm_rwlock_write_acquire(rw, 5 * API_NSEC_PER_SEC, NULL), RDLM_OK);
        assert_int_equal(rdlm_rwlock_write_release(rw), RDLM_OK);
        assert_int_equal(rdlm_rwlock_read_acquire(rw, 0), RDLM_OK);
        assert_int_equal(rdlm_rwlock_read_release(rw), RDLM_OK);
        assert_int_equal(rdlm_rwlock_write_acquire(rw, 0, NULL), RDLM_OK);
        assert_int_equal(rdlm_rwlock_query(rw, &info), RDLM_OK);
        assert_int_equal(info.readers, 0);
        assert_int_equal(rdlm_rwlock_write_release(rw), RDLM_OK);
    }
}

#define API_TEST(f) cmocka_unit_test_setup_teardown(f, api_setup, api_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        API_TEST(test_readers_share_and_exclude_writers),
        API_TEST(test_writer_timed_out_behind_readers_leaves_nothing_behind),
        API_TEST(test_write_tokens_strictly_increase),
        API_TEST(test_too_many_shared_holds_is_no_resource_and_harmless),
        API_TEST(test_waiting_writer_is_not_overtaken_by_later_reader),
        API_TEST(test_dead_reader_count_is_reset_by_writer),
    };

    return cmocka_run_group_tests_name("api.rwlock", tests, NULL, NULL);
}
