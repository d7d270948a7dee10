/*
 * Public API: the node segment behind contexts.
 *
 * Proves: two contexts of one process attach to one segment and see the same
 * objects; rdlm_ctx_segment_info reports who created it, how many objects are used
 * and the creator's capacity; the segment file is /dev/shm/rdlm-<uid>/<job>.seg (or in
 * RDLM_SHM_DIR, created 0700; a relative one is RDLM_ERR_BAD_CONFIG) with
 * mode 0600 and disappears with the last rdlm_ctx_destroy; a segment whose processes
 * all died (exit without destroy, or SIGKILL while holding a lock) is replaced by the
 * next create, with replaced_stale == 1 and a larger epoch, so fencing tokens keep
 * increasing across incarnations, as they do across a clean removal and re-creation
 * in the same second (the host's epoch file); what a process killed alone leaves in
 * its directory is removed by the next context of any job; a live segment is never
 * replaced; a segment file with group/other permission bits is refused; a full object table
 * and full process slots are reported (RDLM_ERR_TABLE_FULL, RDLM_ERR_NO_RESOURCE) without
 * harm to what exists; one context uses far more distinct lock and rwlock names than
 * the capacity over its life (closed ones are retired and their entries reused),
 * with tokens that keep growing per name; a segment whose header looks corrupt (zeroed
 * magic, another layout version, a huge slot high-water mark, a wild entries offset) while
 * a process is attached and holds a lock is refused with RDLM_ERR_CORRUPT, not replaced,
 * and the attached process keeps working, destroys its context without crashing and removes
 * the files; once its processes were killed, such a segment is replaced. A child forked
 * (without exec) while another thread attaches or detaches holds up no attach or
 * detach of the job, and one forked while another thread opens and closes handles
 * creates a context of its own.
 *
 * Children report through shared memory and exit codes; only the parent asserts.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api_util.h"
#include "layout.h" /* the header's fields, to corrupt them */

/* RDLM_SHM_DIR of every test here but those that set their own (main). */
static char segment_dir[64];

static void test_two_contexts_in_one_process_share_objects(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_ctx_params_t params = api_params(fx->job);
    rdlm_segment_info_t ia;
    rdlm_segment_info_t ib;
    rdlm_ctx_h a;
    rdlm_ctx_h b;
    rdlm_counter_h ca;
    rdlm_counter_h cb;
    rdlm_lock_h la;
    int64_t v;

    a = api_ctx(fx, 0);
    assert_status(rdlm_ctx_segment_info(a, &ia), RDLM_OK);
    assert_int_equal(ia.created, 1);
    assert_int_equal(ia.replaced_stale, 0);
    assert_int_equal(ia.capacity, params.capacity);
    assert_int_equal(ia.used, 0);
    assert_true(ia.live_procs >= 1);
    assert_true(ia.max_procs >= 2);
    assert_true(ia.bytes > 0);

    /* Only the creator's capacity counts. */
    params.capacity = 2 * params.capacity;
    assert_status(rdlm_ctx_create(&params, &fx->ctx[1]), RDLM_OK);
    b = fx->ctx[1];
    assert_status(rdlm_ctx_segment_info(b, &ib), RDLM_OK);
    assert_int_equal(ib.created, 0);
    assert_int_equal(ib.replaced_stale, 0);
    assert_int_equal(ib.capacity, ia.capacity);
    assert_int_equal(ib.epoch, ia.epoch);
    assert_int_equal(ib.bytes, ia.bytes);

    assert_status(rdlm_counter_open(a, "shared", &ca), RDLM_OK);
    assert_status(rdlm_counter_fetch_add(ca, 42, NULL), RDLM_OK);
    assert_status(rdlm_counter_open(b, "shared", &cb), RDLM_OK);
    assert_status(rdlm_counter_read(cb, &v), RDLM_OK);
    assert_int_equal(v, 42);
    assert_status(rdlm_ctx_segment_info(b, &ib), RDLM_OK);
    assert_int_equal(ib.used, 1); /* opening an existing object creates nothing */

    assert_status(rdlm_lock_open(a, "lock", &la), RDLM_OK);
    assert_status(rdlm_ctx_segment_info(a, &ia), RDLM_OK);
    assert_int_equal(ia.used, 2);
}

static void test_segment_file_is_private_and_removed_by_last_destroy(void **state)
{
    api_fixture_t *fx = *state;
    char path[128];
    char lock_path[160];
    struct stat st;

    api_segment_path(path, sizeof(path), fx->job);
    api_lock_path(lock_path, sizeof(lock_path), fx->job);
    assert_false(api_path_exists(path));

    api_ctx(fx, 0);
    api_ctx(fx, 1);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    assert_int_equal(st.st_uid, getuid());

    api_ctx_destroy(fx, 0);
    assert_true(api_path_exists(path)); /* the other context is still attached */
    api_ctx_destroy(fx, 1);
    assert_false(api_path_exists(path));
    assert_false(api_path_exists(lock_path));
}

/* RDLM_SHM_DIR puts the segment and its lock file in that directory (created 0700),
 * where the job's next context finds them; a relative one is RDLM_ERR_BAD_CONFIG. */
static void test_rdlm_shm_dir_holds_the_segment(void **state)
{
    api_fixture_t *fx = *state;
    char dir[96], path[160], default_path[128];
    rdlm_segment_info_t info;
    struct stat st;
    rdlm_ctx_h ctx;

    snprintf(dir, sizeof(dir), "/dev/shm/%s-dir", fx->job);
    snprintf(path, sizeof(path), "%s/%s.seg", dir, fx->job);
    api_segment_path(default_path, sizeof(default_path), fx->job);
    setenv("RDLM_SHM_DIR", dir, 1);
    api_ctx(fx, 0);
    api_ctx(fx, 1);
    setenv("RDLM_SHM_DIR", segment_dir, 1);
    assert_int_equal(lstat(dir, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(st.st_mode & 07777, 0700);
    assert_true(api_path_exists(path));
    assert_false(api_path_exists(default_path));
    assert_status(rdlm_ctx_segment_info(fx->ctx[1], &info), RDLM_OK);
    assert_int_equal(info.created, 0);
    api_ctx_destroy(fx, 0);
    api_ctx_destroy(fx, 1);
    assert_false(api_path_exists(path));
    assert_int_equal(rmdir(dir), 0); /* the lock file went too */
    setenv("RDLM_SHM_DIR", "relative/dir", 1);
    assert_status(api_ctx_create(fx->job, &ctx), RDLM_ERR_BAD_CONFIG);
    setenv("RDLM_SHM_DIR", segment_dir, 1);
}

typedef struct stale_shared {
    _Atomic uint32_t epoch;
    _Atomic uint64_t token;
    _Atomic int32_t status;
    _Atomic int32_t ready;
    _Atomic int32_t created;
    _Atomic int32_t replaced_stale;
} stale_shared_t;

typedef struct stale_arg {
    const char *job;
    stale_shared_t *sh;
    int hold_lock; /* acquire a lock and wait to be killed, instead of _exit */
} stale_arg_t;

/* Attach, report the epoch, then die without rdlm_ctx_destroy. */
static int stale_child(void *argp)
{
    stale_arg_t *arg = argp;
    rdlm_segment_info_t info;
    rdlm_ctx_h ctx;
    rdlm_lock_h lock;
    uint64_t token = 0;
    rdlm_status_t st;

    st = api_ctx_create(arg->job, &ctx);
    if (st == RDLM_OK) {
        st = rdlm_ctx_segment_info(ctx, &info);
    }
    if (st == RDLM_OK && arg->hold_lock) {
        st = rdlm_lock_open(ctx, "lock", &lock);
        if (st == RDLM_OK) {
            st = rdlm_lock_acquire(lock, 0, &token);
        }
    }
    if (st == RDLM_OK) {
        atomic_store(&arg->sh->epoch, info.epoch);
        atomic_store(&arg->sh->created, info.created);
        atomic_store(&arg->sh->replaced_stale, info.replaced_stale);
    }
    atomic_store(&arg->sh->token, token);
    atomic_store(&arg->sh->status, st);
    atomic_store(&arg->sh->ready, 1);
    if (arg->hold_lock && st == RDLM_OK) {
        for (;;) {
            pause(); /* until SIGKILL */
        }
    }
    return st == RDLM_OK ? 0 : 1; /* _exit: no rdlm_ctx_destroy */
}

static void check_replaced(api_fixture_t *fx, const stale_shared_t *sh)
{
    rdlm_segment_info_t info;
    char path[128];
    rdlm_ctx_h ctx;

    api_segment_path(path, sizeof(path), fx->job);
    assert_true(api_path_exists(path)); /* left behind by the dead process */

    ctx = api_ctx(fx, 0);
    assert_status(rdlm_ctx_segment_info(ctx, &info), RDLM_OK);
    assert_int_equal(info.created, 1);
    assert_int_equal(info.replaced_stale, 1);
    assert_true(info.epoch > atomic_load(&sh->epoch));
    assert_int_equal(info.used, 0); /* a fresh segment */

    api_ctx_destroy(fx, 0);
    assert_false(api_path_exists(path));
}

static void test_segment_left_by_exit_without_destroy_is_replaced(void **state)
{
    api_fixture_t *fx = *state;
    stale_shared_t *sh = api_shared(fx, sizeof(*sh));
    stale_arg_t arg = {.job = fx->job, .sh = sh, .hold_lock = 0};
    pid_t pid;

    pid = api_fork(fx, stale_child, &arg);
    assert_int_equal(api_wait_child(fx, pid, 10 * API_NSEC_PER_SEC), 0);
    assert_status((rdlm_status_t)atomic_load(&sh->status), RDLM_OK);
    assert_int_equal(atomic_load(&sh->created), 1);
    check_replaced(fx, sh);
}

static void test_segment_left_by_killed_holder_is_replaced_and_tokens_grow(void **state)
{
    api_fixture_t *fx = *state;
    stale_shared_t *sh = api_shared(fx, sizeof(*sh));
    stale_arg_t arg = {.job = fx->job, .sh = sh, .hold_lock = 1};
    uint64_t deadline = api_now_ns() + 10 * API_NSEC_PER_SEC;
    rdlm_segment_info_t info;
    rdlm_ctx_h ctx;
    rdlm_lock_h lock;
    uint64_t token = 0;
    pid_t pid;

    pid = api_fork(fx, stale_child, &arg);
    while (!atomic_load(&sh->ready) && api_now_ns() < deadline) {
        api_sleep_ms(1);
    }
    assert_int_equal(atomic_load(&sh->ready), 1);
    assert_status((rdlm_status_t)atomic_load(&sh->status), RDLM_OK);
    kill(pid, SIGKILL);
    assert_int_equal(api_wait_child(fx, pid, 10 * API_NSEC_PER_SEC), -1);

    ctx = api_ctx(fx, 0);
    assert_status(rdlm_ctx_segment_info(ctx, &info), RDLM_OK);
    assert_int_equal(info.replaced_stale, 1);
    assert_true(info.epoch > atomic_load(&sh->epoch));
    /* A new incarnation: the lock is free, and its tokens exceed the old ones. */
    assert_status(rdlm_lock_open(ctx, "lock", &lock), RDLM_OK);
    assert_status(rdlm_lock_acquire(lock, 0, &token), RDLM_OK);
    assert_true(token > atomic_load(&sh->token));
    assert_status(rdlm_lock_release(lock), RDLM_OK);
}

/* A job that ran to its end (its segment removed by the last destroy), then another
 * of the same name right after, within the same second: the second's tokens exceed
 * the first's (both epochs come from the host's epoch file; with the clock minute of
 * before they were equal whenever both started in the same minute). */
static void test_segment_recreated_at_once_gives_larger_tokens(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_segment_info_t info;
    uint64_t first = 0, second = 0;
    uint32_t first_epoch;
    char path[128];
    rdlm_ctx_h ctx;
    rdlm_lock_h lock;

    api_segment_path(path, sizeof(path), fx->job);
    ctx = api_ctx(fx, 0);
    assert_status(rdlm_ctx_segment_info(ctx, &info), RDLM_OK);
    first_epoch = info.epoch;
    assert_status(rdlm_lock_open(ctx, "lock", &lock), RDLM_OK);
    for (int i = 0; i < 3; i++) {
        assert_status(rdlm_lock_acquire(lock, 0, &first), RDLM_OK);
        assert_status(rdlm_lock_release(lock), RDLM_OK);
    }
    api_ctx_destroy(fx, 0);
    assert_false(api_path_exists(path)); /* removed: the next create starts afresh */

    ctx = api_ctx(fx, 0);
    assert_status(rdlm_ctx_segment_info(ctx, &info), RDLM_OK);
    assert_int_equal(info.created, 1);
    assert_int_equal(info.replaced_stale, 0);
    assert_true(info.epoch > first_epoch);
    assert_status(rdlm_lock_open(ctx, "lock", &lock), RDLM_OK);
    assert_status(rdlm_lock_acquire(lock, 0, &second), RDLM_OK);
    assert_true(second > first);
    assert_status(rdlm_lock_release(lock), RDLM_OK);
}

/* A process killed while alone on its node (nobody detached) leaves its segment and
 * lock file in /dev/shm/rdlm-<uid>; the next context created by this user, of any job,
 * removes them (they piled up before), and leaves a live job's alone. */
static void test_files_of_a_killed_lone_process_are_swept(void **state)
{
    api_fixture_t *fx = *state;
    stale_shared_t *sh = api_shared(fx, sizeof(*sh));
    char other[sizeof(fx->job) + 8], path[128], lock_path[160], live_path[128];
    stale_arg_t arg = {.job = other, .sh = sh, .hold_lock = 1};
    uint64_t deadline = api_now_ns() + 10 * API_NSEC_PER_SEC;
    rdlm_ctx_params_t live_params;
    rdlm_ctx_h live;
    pid_t pid;

    snprintf(other, sizeof(other), "%s-gone", fx->job);
    api_segment_path(path, sizeof(path), other);
    api_lock_path(lock_path, sizeof(lock_path), other);
    pid = api_fork(fx, stale_child, &arg);
    while (!atomic_load(&sh->ready) && api_now_ns() < deadline) {
        api_sleep_ms(1);
    }
    assert_status((rdlm_status_t)atomic_load(&sh->status), RDLM_OK);
    kill(pid, SIGKILL);
    assert_int_equal(api_wait_child(fx, pid, 10 * API_NSEC_PER_SEC), -1);
    assert_true(api_path_exists(path) && api_path_exists(lock_path));

    snprintf(other, sizeof(other), "%s-live", fx->job);
    live_params = api_params(other);
    assert_status(rdlm_ctx_create(&live_params, &live), RDLM_OK); /* sweeps */
    assert_false(api_path_exists(path));
    assert_false(api_path_exists(lock_path));
    api_segment_path(live_path, sizeof(live_path), other);
    api_ctx(fx, 0);                          /* sweeps again */
    assert_true(api_path_exists(live_path)); /* attached: kept */
    rdlm_ctx_destroy(live);
    assert_false(api_path_exists(live_path));
}

static void test_live_segment_is_not_replaced(void **state)
{
    api_fixture_t *fx = *state;
    stale_shared_t *sh = api_shared(fx, sizeof(*sh));
    stale_arg_t arg = {.job = fx->job, .sh = sh, .hold_lock = 0};
    rdlm_segment_info_t info;
    rdlm_ctx_h ctx = api_ctx(fx, 0);
    rdlm_counter_h counter;
    int64_t v;
    pid_t pid;

    assert_status(rdlm_ctx_segment_info(ctx, &info), RDLM_OK);
    assert_status(rdlm_counter_open(ctx, "c", &counter), RDLM_OK);
    assert_status(rdlm_counter_fetch_add(counter, 1, NULL), RDLM_OK);

    /* The child attaches to ours (and exits without destroy: our slot keeps the
     * segment live). */
    pid = api_fork(fx, stale_child, &arg);
    assert_int_equal(api_wait_child(fx, pid, 10 * API_NSEC_PER_SEC), 0);
    assert_status((rdlm_status_t)atomic_load(&sh->status), RDLM_OK);
    assert_int_equal(atomic_load(&sh->created), 0);
    assert_int_equal(atomic_load(&sh->replaced_stale), 0);
    assert_int_equal(atomic_load(&sh->epoch), info.epoch);

    /* A second context of ours attaches to the same, intact segment. */
    ctx = api_ctx(fx, 1);
    assert_status(rdlm_ctx_segment_info(ctx, &info), RDLM_OK);
    assert_int_equal(info.created, 0);
    assert_int_equal(info.replaced_stale, 0);
    assert_status(rdlm_counter_open(ctx, "c", &counter), RDLM_OK);
    assert_status(rdlm_counter_read(counter, &v), RDLM_OK);
    assert_int_equal(v, 1);
}

static void test_segment_with_group_or_other_bits_is_refused(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_ctx_h sentinel = (rdlm_ctx_h)(uintptr_t)0x5eed;
    rdlm_ctx_h ctx = sentinel;
    char path[128];
    int fd;

    api_segment_path(path, sizeof(path), fx->job);
    fd = open(path, O_CREAT | O_EXCL | O_RDWR, 0600);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, 4096), 0);
    assert_int_equal(fchmod(fd, 0644), 0);
    close(fd);

    assert_status(api_ctx_create(fx->job, &ctx), RDLM_ERR_PERMISSION);
    assert_ptr_equal(ctx, sentinel);
    assert_true(api_path_exists(path)); /* refused, not replaced */
    /* teardown removes the file */
}

static void test_table_full_after_capacity_objects(void **state)
{
    enum { CAPACITY = 16 }; /* the smallest allowed */
    api_fixture_t *fx = *state;
    rdlm_ctx_params_t params = api_params(fx->job);
    rdlm_counter_h counters[CAPACITY];
    rdlm_counter_h extra;
    rdlm_lock_h lock;
    rdlm_segment_info_t info;
    char name[32];
    int64_t v;

    params.capacity = CAPACITY;
    assert_status(rdlm_ctx_create(&params, &fx->ctx[0]), RDLM_OK);
    for (int i = 0; i < CAPACITY; i++) {
        snprintf(name, sizeof(name), "c%d", i);
        assert_status(rdlm_counter_open(fx->ctx[0], name, &counters[i]), RDLM_OK);
        assert_status(rdlm_counter_fetch_add(counters[i], i + 1, NULL), RDLM_OK);
    }
    assert_status(rdlm_counter_open(fx->ctx[0], "one-too-many", &extra),
                  RDLM_ERR_TABLE_FULL);
    assert_status(rdlm_lock_open(fx->ctx[0], "another", &lock), RDLM_ERR_TABLE_FULL);
    assert_status(rdlm_ctx_segment_info(fx->ctx[0], &info), RDLM_OK);
    assert_int_equal(info.used, CAPACITY);

    /* Every object is still its own (names that collide in the hash stay apart),
     * and existing names still open when the table is full. */
    for (int i = 0; i < CAPACITY; i++) {
        snprintf(name, sizeof(name), "c%d", i);
        assert_status(rdlm_counter_read(counters[i], &v), RDLM_OK);
        assert_int_equal(v, i + 1);
        assert_status(rdlm_counter_open(fx->ctx[0], name, &extra), RDLM_OK);
        assert_status(rdlm_counter_read(extra, &v), RDLM_OK);
        assert_int_equal(v, i + 1);
    }
}

/* One context opens, takes, releases and closes RDLMTEST_API_NAMES distinct lock
 * names and as many rwlock names, twice over, in a table of
 * RDLMTEST_API_NAMES_CAPACITY objects (0: the default capacity): nothing fails, the
 * table never holds more than a few entries, every name's tokens of the second
 * round are above its first round's (the floor of retired entries), and closed
 * handles are reused (the first one comes back). */
static void test_names_beyond_capacity_are_reused_and_tokens_grow(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_ctx_params_t params = api_params(fx->job);
    uint32_t names = (uint32_t)api_env_u64("RDLMTEST_API_NAMES", 3000);
    uint64_t *first = calloc(names, sizeof(*first));
    uint32_t max_used = 0;
    rdlm_segment_info_t info;
    char name[32];
    void *first_handle = NULL;
    int first_reused = 0;

    assert_non_null(first);
    params.capacity = (uint32_t)api_env_u64("RDLMTEST_API_NAMES_CAPACITY", 64);
    if (params.capacity == 0) {
        params.field_mask &= ~(uint64_t)RDLM_CTX_FIELD_CAPACITY; /* $RDLM_CAPACITY */
    }
    assert_status(rdlm_ctx_create(&params, &fx->ctx[0]), RDLM_OK);
    for (int round = 0; round < 2; round++) {
        for (uint32_t i = 0; i < names; i++) {
            rdlm_lock_h lock;
            rdlm_rwlock_h rw;
            uint64_t token = 0, wtoken = 0;

            snprintf(name, sizeof(name), "name-%u", i);
            assert_status(rdlm_lock_open(fx->ctx[0], name, &lock), RDLM_OK);
            first_reused |= i > 0 && (void *)lock == first_handle;
            first_handle = first_handle == NULL ? (void *)lock : first_handle;
            assert_status(rdlm_lock_acquire(lock, 0, &token), RDLM_OK);
            assert_status(rdlm_lock_release(lock), RDLM_OK);
            assert_status(rdlm_lock_close(lock), RDLM_OK);
            snprintf(name, sizeof(name), "rw-%u", i);
            assert_status(rdlm_rwlock_open(fx->ctx[0], name, &rw), RDLM_OK);
            assert_status(rdlm_rwlock_read_acquire(rw, 0), RDLM_OK);
            assert_status(rdlm_rwlock_read_release(rw), RDLM_OK);
            assert_status(rdlm_rwlock_write_acquire(rw, 0, &wtoken), RDLM_OK);
            assert_status(rdlm_rwlock_write_release(rw), RDLM_OK);
            assert_status(rdlm_rwlock_close(rw), RDLM_OK);
            if (round == 0) {
                first[i] = token;
            } else if (token <= first[i]) {
                fail_msg("%s: token %llu after %llu", name, (unsigned long long)token,
                         (unsigned long long)first[i]);
            }
            assert_status(rdlm_ctx_segment_info(fx->ctx[0], &info), RDLM_OK);
            max_used = info.used > max_used ? info.used : max_used;
        }
    }
    assert_true(max_used <= 4);
    /* Closed handles are reused once more than 1,024 are closed (names > 512). */
    assert_true(names <= 512 || first_reused);
    free(first);
}

static void test_ctx_create_with_all_process_slots_used_is_no_resource(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_ctx_params_t params = api_params(fx->job);
    rdlm_ctx_h sentinel = (rdlm_ctx_h)(uintptr_t)0x5eed;
    rdlm_ctx_h ctx = sentinel;
    rdlm_segment_info_t info;
    rdlm_status_t st;

    setenv("RDLM_MAX_PROCS", "2", 1);
    st = rdlm_ctx_create(&params, &fx->ctx[0]);
    if (st == RDLM_OK) {
        st = rdlm_ctx_create(&params, &fx->ctx[1]);
    }
    if (st == RDLM_OK) {
        st = rdlm_ctx_create(&params, &ctx);
    }
    unsetenv("RDLM_MAX_PROCS");
    assert_non_null(fx->ctx[0]);
    assert_non_null(fx->ctx[1]);
    assert_status(st, RDLM_ERR_NO_RESOURCE);
    assert_ptr_equal(ctx, sentinel);
    assert_status(rdlm_ctx_segment_info(fx->ctx[0], &info), RDLM_OK);
    assert_int_equal(info.max_procs, 2);

    /* A slot freed by destroy is reused. */
    api_ctx_destroy(fx, 1);
    api_ctx(fx, 1);
}

typedef struct corrupt_shared {
    _Atomic int32_t ready;
    _Atomic int32_t go;
    _Atomic int32_t a_status; /* create + open + acquire of the holder */
    _Atomic int32_t a_release;
    _Atomic int32_t a_reacquire;
    _Atomic int32_t b_create;
    _Atomic int32_t b_acquire;
    _Atomic uint64_t a_token;
    _Atomic uint64_t b_token;
} corrupt_shared_t;

typedef struct corrupt_arg {
    const char *job;
    corrupt_shared_t *sh;
} corrupt_arg_t;

/* Child A: hold "lock" until told to go on, then release, acquire again and destroy. */
static int corrupt_holder_child(void *argp)
{
    corrupt_arg_t *arg = argp;
    uint64_t deadline, token = 0;
    rdlm_ctx_h ctx = NULL;
    rdlm_lock_h lock;
    rdlm_status_t st;

    st = api_ctx_create(arg->job, &ctx);
    if (st == RDLM_OK) {
        st = rdlm_lock_open(ctx, "lock", &lock);
    }
    if (st == RDLM_OK) {
        st = rdlm_lock_acquire(lock, 0, &token);
    }
    atomic_store(&arg->sh->a_token, token);
    atomic_store(&arg->sh->a_status, st);
    atomic_store(&arg->sh->ready, 1);
    deadline = api_now_ns() + 10 * API_NSEC_PER_SEC;
    while (!atomic_load(&arg->sh->go) && api_now_ns() < deadline) {
        api_sleep_ms(1);
    }
    if (st == RDLM_OK) {
        atomic_store(&arg->sh->a_release, rdlm_lock_release(lock));
        st = rdlm_lock_acquire(lock, 0, NULL);
        atomic_store(&arg->sh->a_reacquire, st);
        if (st == RDLM_OK) {
            rdlm_lock_release(lock);
        }
    }
    rdlm_ctx_destroy(ctx);
    return 0;
}

/* Child B: a fresh attach to the job; if it succeeds, take "lock" too. */
static int corrupt_prober_child(void *argp)
{
    corrupt_arg_t *arg = argp;
    uint64_t token = 0;
    rdlm_ctx_h ctx;
    rdlm_lock_h lock;
    rdlm_status_t st;

    st = api_ctx_create(arg->job, &ctx);
    atomic_store(&arg->sh->b_create, st);
    if (st != RDLM_OK) {
        return 0;
    }
    st = rdlm_lock_open(ctx, "lock", &lock);
    if (st == RDLM_OK) {
        st = rdlm_lock_acquire(lock, 0, &token);
    }
    atomic_store(&arg->sh->b_token, token);
    atomic_store(&arg->sh->b_acquire, st);
    rdlm_ctx_destroy(ctx);
    return 0;
}

typedef void (*corrupt_func_t)(rdlm_seg_header_t *hdr);

/* Scribble on the header of job's segment through a mapping of our own. */
static void corrupt_header(const char *job, corrupt_func_t corrupt)
{
    rdlm_seg_header_t *hdr;
    char path[128];
    int fd;

    api_segment_path(path, sizeof(path), job);
    fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    hdr = mmap(NULL, sizeof(*hdr), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    assert_true(hdr != MAP_FAILED);
    corrupt(hdr);
    munmap(hdr, sizeof(*hdr));
}

/* Fork A holding "lock" and corrupt the header; returns A's pid. */
static pid_t corrupt_under_holder(api_fixture_t *fx, corrupt_arg_t *arg,
                                  corrupt_func_t corrupt)
{
    uint64_t deadline = api_now_ns() + 5 * API_NSEC_PER_SEC;
    pid_t a = api_fork(fx, corrupt_holder_child, arg);

    while (!atomic_load(&arg->sh->ready) && api_now_ns() < deadline) {
        api_sleep_ms(1);
    }
    assert_int_equal(atomic_load(&arg->sh->ready), 1);
    assert_status((rdlm_status_t)atomic_load(&arg->sh->a_status), RDLM_OK);
    corrupt_header(fx->job, corrupt);
    return a;
}

static void check_corrupt_segment_refused_while_held(api_fixture_t *fx,
                                                     corrupt_func_t corrupt)
{
    corrupt_shared_t *sh = api_shared(fx, sizeof(*sh));
    corrupt_arg_t arg = {.job = fx->job, .sh = sh};
    rdlm_segment_info_t info;
    char path[128];
    pid_t a, b;

    a = corrupt_under_holder(fx, &arg, corrupt);
    b = api_fork(fx, corrupt_prober_child, &arg);
    assert_int_equal(api_wait_child(fx, b, 5 * API_NSEC_PER_SEC), 0); /* no signal */
    if (atomic_load(&sh->b_create) == RDLM_OK) {
        print_error("B attached and acquired the lock A holds: %s, token %#llx (A's "
                    "%#llx)\n",
                    rdlm_status_name((rdlm_status_t)atomic_load(&sh->b_acquire)),
                    (unsigned long long)atomic_load(&sh->b_token),
                    (unsigned long long)atomic_load(&sh->a_token));
    }
    assert_status((rdlm_status_t)atomic_load(&sh->b_create), RDLM_ERR_CORRUPT);

    /* A, attached before, keeps its own view: it works and detaches cleanly, and as
     * the last process it removes the files. */
    atomic_store(&sh->go, 1);
    assert_int_equal(api_wait_child(fx, a, 5 * API_NSEC_PER_SEC), 0);
    assert_status((rdlm_status_t)atomic_load(&sh->a_release), RDLM_OK);
    assert_status((rdlm_status_t)atomic_load(&sh->a_reacquire), RDLM_OK);
    api_segment_path(path, sizeof(path), fx->job);
    assert_false(api_path_exists(path));
    assert_status(rdlm_ctx_segment_info(api_ctx(fx, 0), &info), RDLM_OK);
    assert_int_equal(info.created, 1);
}

static void zero_magic(rdlm_seg_header_t *hdr)
{
    rdlm_store(&hdr->magic, 0, RDLM_SEQ_CST);
}

static void other_layout(rdlm_seg_header_t *hdr)
{
    hdr->layout = RDLM_SEG_LAYOUT + 1;
}

static void huge_slot_hwm(rdlm_seg_header_t *hdr)
{
    rdlm_store(&hdr->slot_hwm, UINT32_MAX, RDLM_SEQ_CST);
}

static void wild_entries_offset(rdlm_seg_header_t *hdr)
{
    hdr->entries_offset = 1ull << 40;
}

static void test_zeroed_magic_while_held_is_corrupt_not_replaced(void **state)
{
    check_corrupt_segment_refused_while_held(*state, zero_magic);
}

static void test_other_layout_while_held_is_corrupt_not_replaced(void **state)
{
    check_corrupt_segment_refused_while_held(*state, other_layout);
}

static void test_huge_slot_hwm_while_held_is_corrupt_and_crashes_nobody(void **state)
{
    check_corrupt_segment_refused_while_held(*state, huge_slot_hwm);
}

static void test_wild_entries_offset_while_held_is_corrupt_and_crashes_nobody(void **state)
{
    check_corrupt_segment_refused_while_held(*state, wild_entries_offset);
}

static void test_corrupt_segment_of_killed_holder_is_replaced(void **state)
{
    api_fixture_t *fx = *state;
    corrupt_shared_t *sh = api_shared(fx, sizeof(*sh));
    corrupt_arg_t arg = {.job = fx->job, .sh = sh};
    rdlm_segment_info_t info;
    rdlm_lock_h lock;
    pid_t a;

    a = corrupt_under_holder(fx, &arg, zero_magic);
    kill(a, SIGKILL);
    assert_int_equal(api_wait_child(fx, a, 5 * API_NSEC_PER_SEC), -1);

    assert_status(rdlm_ctx_segment_info(api_ctx(fx, 0), &info), RDLM_OK);
    assert_int_equal(info.created, 1);
    assert_int_equal(info.replaced_stale, 1);
    assert_int_equal(info.used, 0);
    assert_status(rdlm_lock_open(fx->ctx[0], "lock", &lock), RDLM_OK);
    assert_status(rdlm_lock_acquire(lock, 0, NULL), RDLM_OK);
    assert_status(rdlm_lock_release(lock), RDLM_OK);
}

/* A thread that creates and destroys contexts of job until stop is set. */
typedef struct churn {
    const char *job;
    atomic_int stop;
    atomic_long rounds;
    atomic_int failed; /* a create that did not return RDLM_OK */
} churn_t;

static void *churn_contexts(void *p)
{
    churn_t *c = p;

    while (!atomic_load(&c->stop)) {
        rdlm_ctx_h ctx;

        if (api_ctx_create(c->job, &ctx) != RDLM_OK) {
            atomic_store(&c->failed, 1);
            return NULL;
        }
        rdlm_ctx_destroy(ctx);
        atomic_fetch_add(&c->rounds, 1);
    }
    return NULL;
}

/* Forks (no exec; the child makes no rdlm call and lives 1 s) while another thread
 * creates and destroys contexts of the job: that thread goes on while each child lives.
 * Before, a child forked while the thread held the job's lock file kept its flock (the
 * open file is shared), and every attach and detach waited for the child's exit (an
 * outside user: 4 of 5 forks). */
static void test_a_child_forked_during_attach_holds_up_nobody(void **state)
{
    api_fixture_t *fx = *state;
    churn_t c = {.job = fx->job};
    pthread_t t;
    int stalled = 0;

    (void)api_ctx(fx, 0); /* keeps the segment */
    assert_int_equal(pthread_create(&t, NULL, churn_contexts, &c), 0);
    for (int fork_n = 0; fork_n < 5; fork_n++) {
        long before;
        pid_t pid;
        int st;

        for (int i = 0; i < 500 && atomic_load(&c.rounds) < 10 * (fork_n + 1); i++) {
            usleep(1000);
        }
        pid = fork();
        if (pid == 0) {
            usleep(1000000);
            _exit(0);
        }
        assert_true(pid > 0);
        usleep(50000); /* a create or destroy under way at the fork ends */
        before = atomic_load(&c.rounds);
        usleep(300000); /* the child lives on */
        stalled += atomic_load(&c.rounds) == before;
        assert_int_equal(waitpid(pid, &st, 0), pid);
    }
    atomic_store(&c.stop, 1);
    pthread_join(t, NULL);
    assert_int_equal(atomic_load(&c.failed), 0);
    assert_int_equal(stalled, 0);
}

/* A thread that opens and closes handles of job's context ctx until stop is set. */
typedef struct opener {
    rdlm_ctx_h ctx;
    atomic_int stop;
    atomic_int failed;
} opener_t;

static void *open_and_close(void *p)
{
    opener_t *o = p;

    while (!atomic_load(&o->stop)) {
        rdlm_lock_h l;
        rdlm_stats_t stats;

        if (rdlm_lock_open(o->ctx, "forked", &l) != RDLM_OK ||
            rdlm_lock_close(l) != RDLM_OK || rdlm_ctx_stats(o->ctx, &stats) != RDLM_OK) {
            atomic_store(&o->failed, 1);
            return NULL;
        }
    }
    return NULL;
}

/* Forks while another thread opens and closes handles: each child (no exec) creates
 * a context of its own, takes and releases a lock, destroys it and exits 0 within
 * its alarm. Before, a child forked while that thread held one of rdlm's process-wide
 * mutexes (the live contexts', the retired handles') waited on it for ever (an outside
 * user: within 2-17 forks; here 1 or 2 of 100 forks in 2 of 3 runs). */
static void test_a_child_forked_while_threads_call_rdlm_creates_its_own(void **state)
{
    api_fixture_t *fx = *state;
    opener_t o = {.ctx = api_ctx(fx, 0)};
    pthread_t t;
    int failed = 0;

    assert_int_equal(pthread_create(&t, NULL, open_and_close, &o), 0);
    for (int n = 0; n < 100; n++) {
        pid_t pid = fork();
        int st;

        if (pid == 0) {
            rdlm_ctx_h ctx;
            rdlm_lock_h l;

            alarm(5);
            if (api_ctx_create(fx->job, &ctx) != RDLM_OK ||
                rdlm_lock_open(ctx, "child", &l) != RDLM_OK ||
                rdlm_lock_acquire(l, 0, NULL) != RDLM_OK ||
                rdlm_lock_release(l) != RDLM_OK) {
                _exit(1);
            }
            rdlm_ctx_destroy(ctx);
            _exit(0);
        }
        assert_true(pid > 0);
        assert_int_equal(waitpid(pid, &st, 0), pid);
        failed += !WIFEXITED(st) || WEXITSTATUS(st) != 0;
        usleep(1000);
    }
    atomic_store(&o.stop, 1);
    pthread_join(t, NULL);
    assert_int_equal(atomic_load(&o.failed), 0);
    assert_int_equal(failed, 0);
}

#define API_TEST(f) cmocka_unit_test_setup_teardown(f, api_setup, api_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        API_TEST(test_two_contexts_in_one_process_share_objects),
        API_TEST(test_a_child_forked_during_attach_holds_up_nobody),
        API_TEST(test_a_child_forked_while_threads_call_rdlm_creates_its_own),
        API_TEST(test_segment_file_is_private_and_removed_by_last_destroy),
        API_TEST(test_rdlm_shm_dir_holds_the_segment),
        API_TEST(test_segment_left_by_exit_without_destroy_is_replaced),
        API_TEST(test_segment_left_by_killed_holder_is_replaced_and_tokens_grow),
        API_TEST(test_segment_recreated_at_once_gives_larger_tokens),
        API_TEST(test_files_of_a_killed_lone_process_are_swept),
        API_TEST(test_live_segment_is_not_replaced),
        API_TEST(test_segment_with_group_or_other_bits_is_refused),
        API_TEST(test_table_full_after_capacity_objects),
        API_TEST(test_names_beyond_capacity_are_reused_and_tokens_grow),
        API_TEST(test_ctx_create_with_all_process_slots_used_is_no_resource),
        API_TEST(test_zeroed_magic_while_held_is_corrupt_not_replaced),
        API_TEST(test_other_layout_while_held_is_corrupt_not_replaced),
        API_TEST(test_huge_slot_hwm_while_held_is_corrupt_and_crashes_nobody),
        API_TEST(test_wild_entries_offset_while_held_is_corrupt_and_crashes_nobody),
        API_TEST(test_corrupt_segment_of_killed_holder_is_replaced),
    };

    int failed;

    /* A directory of its own: a context created by any other process of this user
     * sweeps the default one (leftovers.c), so under ctest -j the segments of this
     * file's killed processes went before the test looked (two tests failed now and
     * then). */
    snprintf(segment_dir, sizeof(segment_dir), "/dev/shm/t-api-segment-%ld",
             (long)getpid());
    setenv("RDLM_SHM_DIR", segment_dir, 1);
    failed = cmocka_run_group_tests_name("api.segment", tests, NULL, NULL);
    if (rmdir(segment_dir) != 0) {
        fprintf(stderr, "api.segment: %s is not empty at the end\n", segment_dir);
        failed = 1;
    }
    return failed;
}
