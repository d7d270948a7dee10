/*
 * Public API: bad input and misuse.
 *
 * Every call with a bad argument or made at the wrong time returns its documented
 * status, and leaves the object as it was: after each misuse the lock still reports
 * the same state through rdlm_lock_query, and acquire/release still succeed.
 *
 * Where rdlm.h names no status for a case (NULL name, NULL output pointer), the
 * test accepts RDLM_ERR_INVALID_ARG, the status for "invalid argument" (and, for a
 * NULL name, RDLM_ERR_NAME_TOO_LONG, whose text covers "name empty").
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdlm/lease.h>

#include "api_util.h"

/** A name of exactly len bytes. */
static void make_name(char *buf, size_t len, char fill)
{
    memset(buf, fill, len);
    buf[len] = '\0';
}

static void test_status_strings_and_version_are_constant_text(void **state)
{
    (void)state;
    assert_string_equal(rdlm_status_name(RDLM_ERR_TIMEOUT), "RDLM_ERR_TIMEOUT");
    assert_string_equal(rdlm_status_str(RDLM_ERR_TIMEOUT), "timed out");
    assert_string_equal(rdlm_status_name(RDLM_OK), "RDLM_OK");
    assert_string_equal(rdlm_status_name(RDLM_OWNER_DEAD), "RDLM_OWNER_DEAD");
    assert_string_equal(rdlm_status_str((rdlm_status_t)-9999), "unknown status");
    assert_string_equal(rdlm_status_name((rdlm_status_t)-9999), "RDLM_?");
    assert_string_equal(rdlm_get_version(), RDLM_VERSION_STRING);
}

static void test_ctx_create_rejects_bad_job_names(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_ctx_h sentinel = (rdlm_ctx_h)(uintptr_t)0x5eed;
    rdlm_ctx_h ctx = sentinel;
    rdlm_ctx_params_t params = api_params(fx->job);
    char job[64];
    char path[128];

    params.job = "bad/job";
    assert_status(rdlm_ctx_create(&params, &ctx), RDLM_ERR_INVALID_ARG);
    assert_ptr_equal(ctx, sentinel); /* untouched on error */

    params.job = "bad job";
    assert_status(rdlm_ctx_create(&params, &ctx), RDLM_ERR_INVALID_ARG);

    make_name(job, 33, 'j');
    params.job = job;
    assert_status(rdlm_ctx_create(&params, &ctx), RDLM_ERR_INVALID_ARG);
    assert_ptr_equal(ctx, sentinel);

    /* Exactly 32 bytes is allowed. */
    snprintf(job, sizeof(job), "t-%ld-", (long)getpid());
    memset(job + strlen(job), 'x', 32 - strlen(job));
    job[32] = '\0';
    assert_int_equal(strlen(job), 32);
    assert_status(rdlm_ctx_create(&params, &ctx), RDLM_OK);
    assert_ptr_not_equal(ctx, sentinel);
    rdlm_ctx_destroy(ctx);
    api_segment_path(path, sizeof(path), job);
    assert_false(api_path_exists(path));
}

static void test_ctx_create_rejects_bad_capacity_and_null_output(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_ctx_h sentinel = (rdlm_ctx_h)(uintptr_t)0x5eed;
    rdlm_ctx_h ctx = sentinel;
    rdlm_ctx_params_t params = api_params(fx->job);

    params.capacity = 0;
    assert_status(rdlm_ctx_create(&params, &ctx), RDLM_ERR_INVALID_ARG);
    assert_ptr_equal(ctx, sentinel);
    /* RDLM_CAPACITY's range (it took up to 134217727 here, 16777216 there) */
    params.capacity = 16777217;
    assert_status(rdlm_ctx_create(&params, &ctx), RDLM_ERR_INVALID_ARG);
    assert_ptr_equal(ctx, sentinel);

    params = api_params(fx->job);
    assert_status(rdlm_ctx_create(&params, NULL), RDLM_ERR_INVALID_ARG);
}

static void test_ctx_create_rejects_bad_environment(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_ctx_h sentinel = (rdlm_ctx_h)(uintptr_t)0x5eed;
    rdlm_ctx_h ctx = sentinel;
    rdlm_ctx_params_t params = {.field_mask = RDLM_CTX_FIELD_JOB, .job = fx->job};
    rdlm_status_t st;

    /* Job taken from $RDLM_JOB when the field is not set. */
    setenv("RDLM_JOB", "bad/job", 1);
    st = rdlm_ctx_create(NULL, &ctx);
    unsetenv("RDLM_JOB");
    assert_status(st, RDLM_ERR_BAD_CONFIG);
    assert_ptr_equal(ctx, sentinel);

    /* Capacity taken from $RDLM_CAPACITY when the field is not set. */
    setenv("RDLM_CAPACITY", "lots", 1);
    st = rdlm_ctx_create(&params, &ctx);
    unsetenv("RDLM_CAPACITY");
    assert_status(st, RDLM_ERR_BAD_CONFIG);
    assert_ptr_equal(ctx, sentinel);
}

static void test_null_handles_are_bad_handle(void **state)
{
    rdlm_lock_info_t info;
    rdlm_stats_t stats;
    rdlm_segment_info_t seg;
    rdlm_lock_h lock;
    rdlm_rwlock_h rw;
    rdlm_counter_h counter;
    rdlm_barrier_h barrier;
    int64_t v;

    (void)state;
    assert_status(rdlm_lock_open(NULL, "x", &lock), RDLM_ERR_BAD_HANDLE);
    assert_status(rdlm_rwlock_open(NULL, "x", &rw), RDLM_ERR_BAD_HANDLE);
    assert_status(rdlm_counter_open(NULL, "x", &counter), RDLM_ERR_BAD_HANDLE);
    assert_status(rdlm_barrier_open(NULL, "x", 2, &barrier), RDLM_ERR_BAD_HANDLE);
    assert_status(rdlm_lock_acquire(NULL, 0, NULL), RDLM_ERR_BAD_HANDLE);
    assert_status(rdlm_lock_release(NULL), RDLM_ERR_BAD_HANDLE);
    assert_status(rdlm_lock_query(NULL, &info), RDLM_ERR_BAD_HANDLE);
    assert_status(rdlm_lock_close(NULL), RDLM_ERR_BAD_HANDLE);
    assert_status(rdlm_rwlock_read_acquire(NULL, 0), RDLM_ERR_BAD_HANDLE);
    assert_status(rdlm_rwlock_read_release(NULL), RDLM_ERR_BAD_HANDLE);
    assert_status(rdlm_rwlock_write_acquire(NULL, 0, NULL), RDLM_ERR_BAD_HANDLE);
    assert_status(rdlm_rwlock_write_release(NULL), RDLM_ERR_BAD_HANDLE);
    assert_status(rdlm_rwlock_close(NULL), RDLM_ERR_BAD_HANDLE);
    assert_status(rdlm_counter_fetch_add(NULL, 1, &v), RDLM_ERR_BAD_HANDLE);
    assert_status(rdlm_counter_read(NULL, &v), RDLM_ERR_BAD_HANDLE);
    assert_status(rdlm_counter_close(NULL), RDLM_ERR_BAD_HANDLE);
    assert_status(rdlm_barrier_wait(NULL, 0), RDLM_ERR_BAD_HANDLE);
    assert_status(rdlm_barrier_close(NULL), RDLM_ERR_BAD_HANDLE);
    assert_status(rdlm_ctx_stats(NULL, &stats), RDLM_ERR_BAD_HANDLE);
    assert_status(rdlm_ctx_segment_info(NULL, &seg), RDLM_ERR_BAD_HANDLE);
    rdlm_ctx_destroy(NULL); /* ignored */
}

static void test_null_output_pointers_are_invalid_arg(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_ctx_h ctx = api_ctx(fx, 0);
    rdlm_lock_h lock;
    rdlm_counter_h counter;
    rdlm_lock_info_t before;

    assert_status(rdlm_lock_open(ctx, "lock", NULL), RDLM_ERR_INVALID_ARG);
    assert_status(rdlm_lock_open(ctx, "lock", &lock), RDLM_OK);
    assert_status(rdlm_lock_query(lock, &before), RDLM_OK);
    assert_status(rdlm_lock_query(lock, NULL), RDLM_ERR_INVALID_ARG);
    assert_status(rdlm_ctx_stats(ctx, NULL), RDLM_ERR_INVALID_ARG);
    assert_status(rdlm_ctx_segment_info(ctx, NULL), RDLM_ERR_INVALID_ARG);
    assert_status(rdlm_counter_open(ctx, "counter", &counter), RDLM_OK);
    assert_status(rdlm_counter_read(counter, NULL), RDLM_ERR_INVALID_ARG);
    /* fetch_add's old_p is optional. */
    assert_status(rdlm_counter_fetch_add(counter, 1, NULL), RDLM_OK);
    api_assert_lock_unchanged_and_usable(lock, &before);
}

static void test_open_rejects_bad_names(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_ctx_h ctx = api_ctx(fx, 0);
    char name[RDLM_NAME_MAX + 2];
    rdlm_lock_h lock;
    rdlm_lock_h longest;
    rdlm_rwlock_h rw;
    rdlm_counter_h counter;
    rdlm_barrier_h barrier;
    rdlm_lock_info_t before;
    rdlm_segment_info_t seg;
    rdlm_status_t st;

    assert_status(rdlm_lock_open(ctx, "lock", &lock), RDLM_OK);
    assert_status(rdlm_lock_query(lock, &before), RDLM_OK);

    st = rdlm_lock_open(ctx, NULL, &longest);
    assert_true(st == RDLM_ERR_INVALID_ARG || st == RDLM_ERR_NAME_TOO_LONG);
    assert_status(rdlm_lock_open(ctx, "", &longest), RDLM_ERR_NAME_TOO_LONG);

    make_name(name, RDLM_NAME_MAX + 1, 'n');
    assert_status(rdlm_lock_open(ctx, name, &longest), RDLM_ERR_NAME_TOO_LONG);
    assert_status(rdlm_rwlock_open(ctx, name, &rw), RDLM_ERR_NAME_TOO_LONG);
    assert_status(rdlm_counter_open(ctx, name, &counter), RDLM_ERR_NAME_TOO_LONG);
    assert_status(rdlm_barrier_open(ctx, name, 1, &barrier), RDLM_ERR_NAME_TOO_LONG);
    /* Failed opens create nothing. */
    assert_status(rdlm_ctx_segment_info(ctx, &seg), RDLM_OK);
    assert_int_equal(seg.used, 1);

    /* Exactly RDLM_NAME_MAX bytes works, and is a different object from its prefix. */
    make_name(name, RDLM_NAME_MAX, 'n');
    assert_status(rdlm_lock_open(ctx, name, &longest), RDLM_OK);
    assert_status(rdlm_lock_acquire(longest, 0, NULL), RDLM_OK);
    name[RDLM_NAME_MAX - 1] = '\0';
    assert_status(rdlm_lock_open(ctx, name, &lock), RDLM_OK);
    assert_status(rdlm_lock_acquire(lock, 0, NULL), RDLM_OK);
    assert_status(rdlm_lock_release(lock), RDLM_OK);
    assert_status(rdlm_lock_release(longest), RDLM_OK);

    /* And the first lock was not disturbed. */
    assert_status(rdlm_lock_open(ctx, "lock", &lock), RDLM_OK);
    api_assert_lock_unchanged_and_usable(lock, &before);
}

static void test_open_as_another_kind_is_kind_mismatch(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_ctx_h a = api_ctx(fx, 0);
    rdlm_ctx_h b = api_ctx(fx, 1);
    rdlm_lock_h lock;
    rdlm_rwlock_h rw;
    rdlm_counter_h counter;
    rdlm_barrier_h barrier;
    rdlm_lock_info_t before;

    assert_status(rdlm_lock_open(a, "kind", &lock), RDLM_OK);
    assert_status(rdlm_lock_acquire(lock, 0, NULL), RDLM_OK);
    assert_status(rdlm_lock_query(lock, &before), RDLM_OK);

    assert_status(rdlm_counter_open(a, "kind", &counter), RDLM_ERR_KIND_MISMATCH);
    assert_status(rdlm_rwlock_open(a, "kind", &rw), RDLM_ERR_KIND_MISMATCH);
    assert_status(rdlm_barrier_open(a, "kind", 2, &barrier), RDLM_ERR_KIND_MISMATCH);
    assert_status(rdlm_counter_open(b, "kind", &counter), RDLM_ERR_KIND_MISMATCH);

    api_assert_lock_unchanged_and_usable(lock, &before);
    assert_status(rdlm_lock_release(lock), RDLM_OK);
    before.held = 0;
    before.held_by_me = 0;
    api_assert_lock_unchanged_and_usable(lock, &before);

    /* The other direction: a counter's name opened as a lock. */
    assert_status(rdlm_counter_open(a, "count", &counter), RDLM_OK);
    assert_status(rdlm_lock_open(b, "count", &lock), RDLM_ERR_KIND_MISMATCH);
}

static void test_barrier_open_with_other_nprocs_is_mismatch(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_ctx_h a = api_ctx(fx, 0);
    rdlm_ctx_h b = api_ctx(fx, 1);
    rdlm_barrier_h b2;
    rdlm_barrier_h other;

    assert_status(rdlm_barrier_open(a, "bar", 0, &b2), RDLM_ERR_INVALID_ARG);
    assert_status(rdlm_barrier_open(a, "bar", 2, &b2), RDLM_OK);
    assert_status(rdlm_barrier_open(b, "bar", 3, &other), RDLM_ERR_MISMATCH);
    assert_status(rdlm_barrier_open(a, "bar", 1, &other), RDLM_ERR_MISMATCH);
    assert_status(rdlm_barrier_open(b, "bar", 2, &other), RDLM_OK);
    /* The failed opens left no arrival behind: one participant alone times out. */
    assert_status(rdlm_barrier_wait(other, 10 * API_NSEC_PER_MSEC), RDLM_ERR_TIMEOUT);
}

static void test_release_without_holding_is_not_owner(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_ctx_h ctx = api_ctx(fx, 0);
    rdlm_lock_h lock;
    rdlm_lock_info_t before;

    assert_status(rdlm_lock_open(ctx, "lock", &lock), RDLM_OK);
    assert_status(rdlm_lock_query(lock, &before), RDLM_OK);
    assert_int_equal(before.held, 0);

    /* Never held. */
    assert_status(rdlm_lock_release(lock), RDLM_ERR_NOT_OWNER);
    api_assert_lock_unchanged_and_usable(lock, &before);

    /* Double release. */
    assert_status(rdlm_lock_acquire(lock, 0, NULL), RDLM_OK);
    assert_status(rdlm_lock_release(lock), RDLM_OK);
    assert_status(rdlm_lock_query(lock, &before), RDLM_OK);
    assert_status(rdlm_lock_release(lock), RDLM_ERR_NOT_OWNER);
    api_assert_lock_unchanged_and_usable(lock, &before);
}

static void test_rwlock_release_in_wrong_mode_is_not_owner(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_ctx_h ctx = api_ctx(fx, 0);
    rdlm_rwlock_h rw;

    assert_status(rdlm_rwlock_open(ctx, "rw", &rw), RDLM_OK);
    assert_status(rdlm_rwlock_read_release(rw), RDLM_ERR_NOT_OWNER);
    assert_status(rdlm_rwlock_write_release(rw), RDLM_ERR_NOT_OWNER);

    /* Holding shared is not holding exclusive, and the other way round. */
    assert_status(rdlm_rwlock_read_acquire(rw, 0), RDLM_OK);
    assert_status(rdlm_rwlock_write_release(rw), RDLM_ERR_NOT_OWNER);
    assert_status(rdlm_rwlock_read_release(rw), RDLM_OK);
    assert_status(rdlm_rwlock_read_release(rw), RDLM_ERR_NOT_OWNER);

    assert_status(rdlm_rwlock_write_acquire(rw, 0, NULL), RDLM_OK);
    assert_status(rdlm_rwlock_read_release(rw), RDLM_ERR_NOT_OWNER);
    assert_status(rdlm_rwlock_write_release(rw), RDLM_OK);
    assert_status(rdlm_rwlock_write_release(rw), RDLM_ERR_NOT_OWNER);

    /* Still works both ways. */
    assert_status(rdlm_rwlock_write_acquire(rw, 0, NULL), RDLM_OK);
    assert_status(rdlm_rwlock_write_release(rw), RDLM_OK);
    assert_status(rdlm_rwlock_read_acquire(rw, 0), RDLM_OK);
    assert_status(rdlm_rwlock_read_release(rw), RDLM_OK);
}

static void test_release_by_other_context_is_not_owner(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_lock_h la;
    rdlm_lock_h lb;
    rdlm_lock_info_t before;
    rdlm_lock_info_t seen_by_b;

    api_lock_pair(fx, "lock", &la, &lb);
    assert_status(rdlm_lock_acquire(la, 0, NULL), RDLM_OK);
    assert_status(rdlm_lock_query(la, &before), RDLM_OK);
    assert_int_equal(before.held_by_me, 1);

    assert_status(rdlm_lock_release(lb), RDLM_ERR_NOT_OWNER);
    assert_status(rdlm_lock_query(lb, &seen_by_b), RDLM_OK);
    assert_int_equal(seen_by_b.held, 1);
    assert_int_equal(seen_by_b.held_by_me, 0);
    assert_status(rdlm_lock_acquire(lb, 0, NULL), RDLM_ERR_BUSY);
    api_assert_lock_unchanged_and_usable(la, &before);

    assert_status(rdlm_lock_release(la), RDLM_OK);
    assert_status(rdlm_lock_acquire(lb, 0, NULL), RDLM_OK);
    assert_status(rdlm_lock_release(lb), RDLM_OK);
}

typedef struct foreign_release_arg {
    const char *job;
} foreign_release_arg_t;

/* Child: exit 0 iff release of a lock held by the parent says NOT_OWNER and a try
 * says BUSY. */
static int foreign_release_child(void *argp)
{
    foreign_release_arg_t *arg = argp;
    rdlm_ctx_h ctx;
    rdlm_lock_h lock;
    int rc = 0;

    if (api_ctx_create(arg->job, &ctx) != RDLM_OK) {
        return 10;
    }
    if (rdlm_lock_open(ctx, "lock", &lock) != RDLM_OK) {
        rc = 11;
    } else if (rdlm_lock_release(lock) != RDLM_ERR_NOT_OWNER) {
        rc = 12;
    } else if (rdlm_lock_acquire(lock, 0, NULL) != RDLM_ERR_BUSY) {
        rc = 13;
    }
    rdlm_ctx_destroy(ctx);
    return rc;
}

static void test_release_by_other_process_is_not_owner(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_ctx_h ctx = api_ctx(fx, 0);
    foreign_release_arg_t arg = {.job = fx->job};
    rdlm_lock_h lock;
    rdlm_lock_info_t before;
    pid_t pid;

    assert_status(rdlm_lock_open(ctx, "lock", &lock), RDLM_OK);
    assert_status(rdlm_lock_acquire(lock, 0, NULL), RDLM_OK);
    assert_status(rdlm_lock_query(lock, &before), RDLM_OK);

    pid = api_fork(fx, foreign_release_child, &arg);
    assert_int_equal(api_wait_child(fx, pid, 10 * API_NSEC_PER_SEC), 0);

    api_assert_lock_unchanged_and_usable(lock, &before);
    assert_status(rdlm_lock_release(lock), RDLM_OK);
}

static void test_closed_lock_handle_returns_closed(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_ctx_h ctx = api_ctx(fx, 0);
    rdlm_lock_h lock;
    rdlm_lock_h again;
    rdlm_lock_info_t info;
    rdlm_lock_info_t before;
    uint64_t token;

    assert_status(rdlm_lock_open(ctx, "lock", &lock), RDLM_OK);
    assert_status(rdlm_lock_acquire(lock, 0, &token), RDLM_OK);
    /* Closing a held lock releases it first. */
    assert_status(rdlm_lock_close(lock), RDLM_OK);

    assert_status(rdlm_lock_acquire(lock, 0, NULL), RDLM_ERR_CLOSED);
    assert_status(rdlm_lock_release(lock), RDLM_ERR_CLOSED);
    assert_status(rdlm_lock_query(lock, &info), RDLM_ERR_CLOSED);
    assert_status(rdlm_lock_close(lock), RDLM_ERR_CLOSED);

    assert_status(rdlm_lock_open(ctx, "lock", &again), RDLM_OK);
    before =
        (rdlm_lock_info_t){.waiters = 0, .held = 0, .held_by_me = 0, .last_token = token};
    api_assert_lock_unchanged_and_usable(again, &before);
}

static void test_closed_handles_of_other_kinds_return_closed(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_ctx_h ctx = api_ctx(fx, 0);
    rdlm_rwlock_h rw;
    rdlm_counter_h counter;
    rdlm_barrier_h barrier;
    int64_t v = 0;

    assert_status(rdlm_rwlock_open(ctx, "rw", &rw), RDLM_OK);
    assert_status(rdlm_rwlock_read_acquire(rw, 0), RDLM_OK);
    assert_status(rdlm_rwlock_close(rw), RDLM_OK); /* releases the shared hold */
    assert_status(rdlm_rwlock_read_acquire(rw, 0), RDLM_ERR_CLOSED);
    assert_status(rdlm_rwlock_read_release(rw), RDLM_ERR_CLOSED);
    assert_status(rdlm_rwlock_write_acquire(rw, 0, NULL), RDLM_ERR_CLOSED);
    assert_status(rdlm_rwlock_write_release(rw), RDLM_ERR_CLOSED);
    assert_status(rdlm_rwlock_close(rw), RDLM_ERR_CLOSED);
    assert_status(rdlm_rwlock_open(ctx, "rw", &rw), RDLM_OK);
    assert_status(rdlm_rwlock_write_acquire(rw, 0, NULL), RDLM_OK); /* no reader left */
    assert_status(rdlm_rwlock_write_release(rw), RDLM_OK);

    assert_status(rdlm_counter_open(ctx, "counter", &counter), RDLM_OK);
    assert_status(rdlm_counter_fetch_add(counter, 7, NULL), RDLM_OK);
    assert_status(rdlm_counter_close(counter), RDLM_OK);
    assert_status(rdlm_counter_fetch_add(counter, 1, &v), RDLM_ERR_CLOSED);
    assert_status(rdlm_counter_read(counter, &v), RDLM_ERR_CLOSED);
    assert_status(rdlm_counter_close(counter), RDLM_ERR_CLOSED);
    assert_status(rdlm_counter_open(ctx, "counter", &counter), RDLM_OK);
    assert_status(rdlm_counter_read(counter, &v), RDLM_OK);
    assert_int_equal(v, 7);

    assert_status(rdlm_barrier_open(ctx, "barrier", 1, &barrier), RDLM_OK);
    assert_status(rdlm_barrier_close(barrier), RDLM_OK);
    assert_status(rdlm_barrier_wait(barrier, 0), RDLM_ERR_CLOSED);
    assert_status(rdlm_barrier_close(barrier), RDLM_ERR_CLOSED);
    assert_status(rdlm_barrier_open(ctx, "barrier", 1, &barrier), RDLM_OK);
    assert_status(rdlm_barrier_wait(barrier, API_NSEC_PER_SEC), RDLM_OK);
}

/* A destroyed context's handle answers RDLM_ERR_BAD_HANDLE in every call that takes a
 * context (no use of its freed memory: run under ASan), a second destroy is ignored,
 * and its object handles answer RDLM_ERR_CLOSED. Other contexts are not disturbed. */
static void test_destroyed_context_handle_is_bad_handle(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_ctx_h live = api_ctx(fx, 1), stale = api_ctx(fx, 0);
    rdlm_lock_h lock, sentinel = (rdlm_lock_h)(uintptr_t)0x5eed, out = sentinel;
    rdlm_rwlock_h rw;
    rdlm_counter_h counter;
    rdlm_sem_h sem;
    rdlm_barrier_h barrier;
    rdlm_stats_t stats;
    rdlm_segment_info_t seg;
    rdlm_ctx_dist_info_t di;
    rdlm_transport_stats_t ts;

    assert_status(rdlm_lock_open(stale, "lock", &lock), RDLM_OK);
    api_ctx_destroy(fx, 0);
    assert_status(rdlm_lock_open(stale, "lock", &out), RDLM_ERR_BAD_HANDLE);
    assert_ptr_equal(out, sentinel);
    assert_status(rdlm_rwlock_open(stale, "rw", &rw), RDLM_ERR_BAD_HANDLE);
    assert_status(rdlm_counter_open(stale, "c", &counter), RDLM_ERR_BAD_HANDLE);
    assert_status(rdlm_counter_open_sharded(stale, "cs", &counter), RDLM_ERR_BAD_HANDLE);
    assert_status(rdlm_sem_open(stale, "sem", 2, &sem), RDLM_ERR_BAD_HANDLE);
    assert_status(rdlm_barrier_open(stale, "b", 1, &barrier), RDLM_ERR_BAD_HANDLE);
    assert_status(rdlm_ctx_stats(stale, &stats), RDLM_ERR_BAD_HANDLE);
    assert_status(rdlm_ctx_segment_info(stale, &seg), RDLM_ERR_BAD_HANDLE);
    assert_status(rdlm_ctx_dist_info(stale, &di), RDLM_ERR_BAD_HANDLE);
    assert_status(rdlm_ctx_transport_stats(stale, &ts), RDLM_ERR_BAD_HANDLE);
    assert_status(rdlm_ctx_barrier(stale), RDLM_ERR_BAD_HANDLE);
    assert_status(rdlm_ctx_barrier_arrive(stale), RDLM_ERR_BAD_HANDLE);
    assert_status(rdlm_ctx_barrier_wait(stale), RDLM_ERR_BAD_HANDLE);
    assert_null(rdlm_ctx_session(stale));
    rdlm_ctx_destroy(stale); /* ignored */
    assert_status(rdlm_lock_acquire(lock, 0, NULL), RDLM_ERR_CLOSED);
    assert_status(rdlm_lock_release(lock), RDLM_ERR_CLOSED);

    assert_status(rdlm_lock_open(live, "lock", &lock), RDLM_OK);
    assert_status(rdlm_lock_acquire(lock, 0, NULL), RDLM_OK);
    assert_status(rdlm_lock_release(lock), RDLM_OK);
    assert_status(rdlm_ctx_stats(live, &stats), RDLM_OK);
}

/* Every kind of wait of a node-only context, while another context holds. */
enum destroy_wait {
    WAIT_LOCK,        /* bounded-bypass lock */
    WAIT_FIFO,        /* FIFO lock */
    WAIT_WRITE_GATE,  /* rwlock writer behind a writer */
    WAIT_READ_GATE,   /* rwlock reader behind a writer */
    WAIT_WRITE_DRAIN, /* rwlock writer behind a reader */
    WAIT_SEM,
    WAIT_BARRIER,
    WAIT_KINDS
};

typedef struct destroy_waits {
    rdlm_lock_h lock, fifo;
    rdlm_rwlock_h rw_written, rw_read;
    rdlm_sem_h sem;
    rdlm_barrier_h barrier;
} destroy_waits_t;

typedef struct destroy_waiter {
    const destroy_waits_t *h;
    enum destroy_wait kind;
    rdlm_status_t status;
} destroy_waiter_t;

static void *destroy_waiter(void *argp)
{
    destroy_waiter_t *w = argp;
    const destroy_waits_t *h = w->h;

    switch (w->kind) {
    case WAIT_LOCK:
        w->status = rdlm_lock_acquire(h->lock, RDLM_TIMEOUT_INFINITE, NULL);
        break;
    case WAIT_FIFO:
        w->status = rdlm_lock_acquire(h->fifo, RDLM_TIMEOUT_INFINITE, NULL);
        break;
    case WAIT_WRITE_GATE:
        w->status = rdlm_rwlock_write_acquire(h->rw_written, RDLM_TIMEOUT_INFINITE, NULL);
        break;
    case WAIT_READ_GATE:
        w->status = rdlm_rwlock_read_acquire(h->rw_written, RDLM_TIMEOUT_INFINITE);
        break;
    case WAIT_WRITE_DRAIN:
        w->status = rdlm_rwlock_write_acquire(h->rw_read, RDLM_TIMEOUT_INFINITE, NULL);
        break;
    case WAIT_SEM:
        w->status = rdlm_sem_acquire(h->sem, 1, RDLM_TIMEOUT_INFINITE);
        break;
    default:
        w->status = rdlm_barrier_wait(h->barrier, RDLM_TIMEOUT_INFINITE);
        break;
    }
    return NULL;
}

static rdlm_status_t destroy_open(rdlm_ctx_h ctx, destroy_waits_t *h)
{
    rdlm_lock_params_t fifo = {.field_mask = RDLM_LOCK_FIELD_ORDER,
                               .order = RDLM_LOCK_ORDER_FIFO};
    rdlm_status_t s[6] = {rdlm_lock_open(ctx, "lock", &h->lock),
                          rdlm_lock_open_params(ctx, "fifo", &fifo, &h->fifo),
                          rdlm_rwlock_open(ctx, "rw-written", &h->rw_written),
                          rdlm_rwlock_open(ctx, "rw-read", &h->rw_read),
                          rdlm_sem_open(ctx, "sem", 1, &h->sem),
                          rdlm_barrier_open(ctx, "barrier", 2, &h->barrier)};

    for (int i = 0; i < 6; i++) {
        if (s[i] != RDLM_OK) {
            return s[i];
        }
    }
    return RDLM_OK;
}

/* The child: context b holds everything, a thread per kind of wait waits in context
 * a, a is destroyed. Exit: the number of waits that did not end in RDLM_ERR_CLOSED,
 * plus one if b cannot take everything again once it released (a place left behind). */
static int destroy_waits_child(void *argp)
{
    const char *job = argp;
    destroy_waiter_t w[WAIT_KINDS];
    pthread_t th[WAIT_KINDS];
    destroy_waits_t ha, hb;
    rdlm_ctx_h a, b;
    int failed = 0;

    if (api_ctx_create(job, &a) != RDLM_OK || api_ctx_create(job, &b) != RDLM_OK ||
        destroy_open(a, &ha) != RDLM_OK || destroy_open(b, &hb) != RDLM_OK ||
        rdlm_lock_acquire(hb.lock, 0, NULL) != RDLM_OK ||
        rdlm_lock_acquire(hb.fifo, 0, NULL) != RDLM_OK ||
        rdlm_rwlock_write_acquire(hb.rw_written, 0, NULL) != RDLM_OK ||
        rdlm_rwlock_read_acquire(hb.rw_read, 0) != RDLM_OK ||
        rdlm_sem_acquire(hb.sem, 1, 0) != RDLM_OK) {
        return 100;
    }
    for (int k = 0; k < WAIT_KINDS; k++) {
        w[k] = (destroy_waiter_t){.h = &ha, .kind = (enum destroy_wait)k, .status = 1};
        pthread_create(&th[k], NULL, destroy_waiter, &w[k]);
    }
    api_sleep_ms(200); /* they wait (past the spinning) */
    rdlm_ctx_destroy(a);
    for (int k = 0; k < WAIT_KINDS; k++) {
        pthread_join(th[k], NULL);
        if (w[k].status != RDLM_ERR_CLOSED) {
            fprintf(stderr, "wait %d of the destroyed context returned %s\n", k,
                    rdlm_status_name(w[k].status));
            failed++;
        }
    }
    if (rdlm_lock_release(hb.lock) != RDLM_OK || rdlm_lock_release(hb.fifo) != RDLM_OK ||
        rdlm_rwlock_write_release(hb.rw_written) != RDLM_OK ||
        rdlm_rwlock_read_release(hb.rw_read) != RDLM_OK ||
        rdlm_sem_release(hb.sem, 1) != RDLM_OK ||
        rdlm_lock_acquire(hb.lock, API_NSEC_PER_SEC, NULL) != RDLM_OK ||
        rdlm_lock_acquire(hb.fifo, API_NSEC_PER_SEC, NULL) != RDLM_OK ||
        rdlm_rwlock_write_acquire(hb.rw_written, API_NSEC_PER_SEC, NULL) != RDLM_OK ||
        rdlm_rwlock_write_acquire(hb.rw_read, API_NSEC_PER_SEC, NULL) != RDLM_OK ||
        rdlm_sem_acquire(hb.sem, 1, API_NSEC_PER_SEC) != RDLM_OK ||
        rdlm_barrier_wait(hb.barrier, 0) != RDLM_ERR_TIMEOUT) {
        fprintf(stderr, "context b cannot take everything again after the destroy\n");
        failed++;
    }
    rdlm_ctx_destroy(b);
    return failed;
}

/* rdlm_ctx_destroy of a node-only context ends every wait of its other threads with
 * RDLM_ERR_CLOSED and leaves no place behind. Before, it unmapped the segment under
 * them (the child crashed: an outside program, 1 run of 1), and nothing told them to
 * give up. In a child, so that a crash is a failed exit. */
static void test_destroy_ends_every_wait_of_a_node_only_context(void **state)
{
    api_fixture_t *fx = *state;
    pid_t pid = api_fork(fx, destroy_waits_child, fx->job);

    assert_int_equal(api_wait_child(fx, pid, 30 * API_NSEC_PER_SEC), 0);
}

/* The holder's side of a round of the race below: once context a is closing (its
 * probe returned), release everything 0-1 ms later. */
typedef struct race_round {
    rdlm_ctx_h a;
    destroy_waiter_t probe;
} race_round_t;

static void *race_destroyer(void *argp)
{
    rdlm_ctx_destroy(((race_round_t *)argp)->a);
    return NULL;
}

/* A grant that reaches a waiter while its node-only context is being destroyed is
 * given back: the waiter returns RDLM_ERR_CLOSED, never RDLM_OK (the destroy would
 * release what it got under it), and the holder takes everything again. Rounds of: b
 * holds a lock, a FIFO lock, an rwlock and a semaphore's permit; a thread of a waits
 * on each; another thread destroys a; once a probe waiter of a has returned (a is
 * closing), b releases all, 0-1 ms later, varied by round. */
static void test_a_grant_racing_the_destroy_is_given_back(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_ctx_h b = api_ctx(fx, 1);
    destroy_waits_t hb;
    rdlm_lock_h probe_b;

    assert_status(destroy_open(b, &hb), RDLM_OK);
    assert_status(rdlm_lock_open(b, "probe", &probe_b), RDLM_OK);
    for (unsigned round = 0; round < 40; round++) {
        destroy_waiter_t w[WAIT_BARRIER];
        pthread_t th[WAIT_BARRIER], probe_th, destroyer;
        race_round_t r = {.probe = {.kind = WAIT_LOCK, .status = 1}};
        destroy_waits_t ha;
        destroy_waits_t hp;

        assert_status(api_ctx_create(fx->job, &r.a), RDLM_OK);
        assert_status(destroy_open(r.a, &ha), RDLM_OK);
        assert_status(rdlm_lock_open(r.a, "probe", &hp.lock), RDLM_OK);
        r.probe.h = &hp;
        /* (not tries: abandoned FIFO places of the last round may wait for recovery) */
        assert_status(rdlm_lock_acquire(hb.lock, API_NSEC_PER_SEC, NULL), RDLM_OK);
        assert_status(rdlm_lock_acquire(hb.fifo, API_NSEC_PER_SEC, NULL), RDLM_OK);
        assert_status(rdlm_rwlock_write_acquire(hb.rw_written, API_NSEC_PER_SEC, NULL),
                      RDLM_OK);
        assert_status(rdlm_sem_acquire(hb.sem, 1, API_NSEC_PER_SEC), RDLM_OK);
        assert_status(rdlm_lock_acquire(probe_b, API_NSEC_PER_SEC, NULL), RDLM_OK);
        for (int k = 0; k < WAIT_BARRIER; k++) {
            w[k] = (destroy_waiter_t){.h = &ha, .kind = (enum destroy_wait)k, .status = 1};
            if (k != WAIT_WRITE_DRAIN) {
                pthread_create(&th[k], NULL, destroy_waiter, &w[k]);
            }
        }
        pthread_create(&probe_th, NULL, destroy_waiter, &r.probe);
        api_sleep_ms(20); /* they wait */
        pthread_create(&destroyer, NULL, race_destroyer, &r);
        pthread_join(probe_th, NULL); /* a is closing */
        usleep((round * 389u) % 1000u);
        assert_status(rdlm_lock_release(hb.lock), RDLM_OK);
        assert_status(rdlm_lock_release(hb.fifo), RDLM_OK);
        assert_status(rdlm_rwlock_write_release(hb.rw_written), RDLM_OK);
        assert_status(rdlm_sem_release(hb.sem, 1), RDLM_OK);
        assert_status(rdlm_lock_release(probe_b), RDLM_OK);
        pthread_join(destroyer, NULL);
        assert_status(r.probe.status, RDLM_ERR_CLOSED);
        for (int k = 0; k < WAIT_BARRIER; k++) {
            if (k != WAIT_WRITE_DRAIN) {
                pthread_join(th[k], NULL);
                if (w[k].status != RDLM_ERR_CLOSED) {
                    fail_msg("round %u: wait %d returned %s", round, k,
                             rdlm_status_name(w[k].status));
                }
            }
        }
    }
}

/* A wait that times out counts one timeout and no acquire, whatever it waited in (an
 * outside user's program: a shared wait counted 2 timeouts, its gate and itself; a
 * semaphore's counted its gate's grant as an acquire). */
static void test_a_timed_out_wait_counts_one_timeout_and_no_acquire(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_ctx_h a = api_ctx(fx, 0), b = api_ctx(fx, 1);
    rdlm_rwlock_h rwa, rwb;
    rdlm_sem_h sema, semb;
    rdlm_stats_t before, after;

    assert_status(rdlm_rwlock_open(a, "rw", &rwa), RDLM_OK);
    assert_status(rdlm_rwlock_open(b, "rw", &rwb), RDLM_OK);
    assert_status(rdlm_sem_open(a, "sem", 1, &sema), RDLM_OK);
    assert_status(rdlm_sem_open(b, "sem", 1, &semb), RDLM_OK);
    assert_status(rdlm_rwlock_write_acquire(rwb, 0, NULL), RDLM_OK);
    assert_status(rdlm_sem_acquire(semb, 1, 0), RDLM_OK);
    assert_status(rdlm_ctx_stats(a, &before), RDLM_OK);
    assert_status(rdlm_rwlock_read_acquire(rwa, 10 * API_NSEC_PER_MSEC), RDLM_ERR_TIMEOUT);
    assert_status(rdlm_rwlock_write_acquire(rwa, 10 * API_NSEC_PER_MSEC, NULL),
                  RDLM_ERR_TIMEOUT);
    assert_status(rdlm_sem_acquire(sema, 1, 10 * API_NSEC_PER_MSEC), RDLM_ERR_TIMEOUT);
    assert_status(rdlm_ctx_stats(a, &after), RDLM_OK);
    assert_int_equal(after.timeouts - before.timeouts, 3);
    assert_int_equal(after.acquires - before.acquires, 0);
    assert_status(rdlm_rwlock_write_release(rwb), RDLM_OK);
    assert_status(rdlm_sem_release(semb, 1), RDLM_OK);
}

/* RDLM_STATS=1: each context's destroy prints one line that names its job (a process
 * with contexts of two jobs can tell them apart). */
static void test_stats_lines_name_their_job(void **state)
{
    api_fixture_t *fx = *state;
    char other[48], path[64], lines[4096], want[128];
    rdlm_lock_h lock;
    ssize_t n;
    int fd, saved = dup(STDERR_FILENO);

    snprintf(other, sizeof(other), "%s-b", fx->job);
    setenv("RDLM_STATS", "1", 1);
    api_ctx(fx, 0);
    assert_status(api_ctx_create(other, &fx->ctx[1]), RDLM_OK);
    unsetenv("RDLM_STATS");
    assert_status(rdlm_lock_open(fx->ctx[0], "l", &lock), RDLM_OK);
    assert_status(rdlm_lock_acquire(lock, 0, NULL), RDLM_OK);
    assert_status(rdlm_lock_release(lock), RDLM_OK);

    snprintf(path, sizeof(path), "/tmp/rdlm_api_stats.%d.log", (int)getpid());
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0 && saved >= 0);
    dup2(fd, STDERR_FILENO);
    api_ctx_destroy(fx, 1);
    api_ctx_destroy(fx, 0);
    dup2(saved, STDERR_FILENO);
    close(saved);
    n = pread(fd, lines, sizeof(lines) - 1, 0);
    close(fd);
    unlink(path);
    api_segment_cleanup(other);
    lines[n > 0 ? n : 0] = '\0';
    fputs(lines, stderr);

    snprintf(want, sizeof(want), "rdlm[%d] stats (job %s): acquires 1 ", (int)getpid(),
             fx->job);
    assert_non_null(strstr(lines, want));
    snprintf(want, sizeof(want), "rdlm[%d] stats (job %s): acquires 0 ", (int)getpid(),
             other);
    assert_non_null(strstr(lines, want));
}

#define API_TEST(f) cmocka_unit_test_setup_teardown(f, api_setup, api_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        API_TEST(test_status_strings_and_version_are_constant_text),
        API_TEST(test_ctx_create_rejects_bad_job_names),
        API_TEST(test_ctx_create_rejects_bad_capacity_and_null_output),
        API_TEST(test_ctx_create_rejects_bad_environment),
        API_TEST(test_null_handles_are_bad_handle),
        API_TEST(test_null_output_pointers_are_invalid_arg),
        API_TEST(test_open_rejects_bad_names),
        API_TEST(test_open_as_another_kind_is_kind_mismatch),
        API_TEST(test_barrier_open_with_other_nprocs_is_mismatch),
        API_TEST(test_release_without_holding_is_not_owner),
        API_TEST(test_rwlock_release_in_wrong_mode_is_not_owner),
        API_TEST(test_release_by_other_context_is_not_owner),
        API_TEST(test_release_by_other_process_is_not_owner),
        API_TEST(test_closed_lock_handle_returns_closed),
        API_TEST(test_closed_handles_of_other_kinds_return_closed),
        API_TEST(test_destroyed_context_handle_is_bad_handle),
        API_TEST(test_destroy_ends_every_wait_of_a_node_only_context),
        API_TEST(test_a_grant_racing_the_destroy_is_given_back),
        API_TEST(test_a_timed_out_wait_counts_one_timeout_and_no_acquire),
        API_TEST(test_stats_lines_name_their_job),
    };

    return cmocka_run_group_tests_name("api.args", tests, NULL, NULL);
}
