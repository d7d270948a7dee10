/*
 * Fixture, process and assertion helpers for the public-API tests; see api_util.h.
 */
#include "api_util.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static unsigned api_test_seq;

uint64_t api_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * API_NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

void api_sleep_ms(unsigned ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* The directory of this user's segments: RDLM_SHM_DIR, else the default. */
static void api_place_path(char *buf, size_t size, const char *job, const char *suffix)
{
    const char *dir = getenv("RDLM_SHM_DIR");

    if (dir != NULL && dir[0] != '\0') {
        snprintf(buf, size, "%s/%s.%s", dir, job, suffix);
    } else {
        snprintf(buf, size, "/dev/shm/rdlm-%lu/%s.%s", (unsigned long)geteuid(), job,
                 suffix);
    }
}

void api_segment_path(char *buf, size_t size, const char *job)
{
    api_place_path(buf, size, job, "seg");
}

void api_lock_path(char *buf, size_t size, const char *job)
{
    api_place_path(buf, size, job, "lock");
}

int api_path_exists(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0;
}

void api_segment_cleanup(const char *job)
{
    char path[128];
    char lock_path[160];

    api_segment_path(path, sizeof(path), job);
    api_lock_path(lock_path, sizeof(lock_path), job);
    unlink(path);
    unlink(lock_path);
}

int api_setup(void **state)
{
    api_fixture_t *fx = calloc(1, sizeof(*fx));

    if (fx == NULL) {
        return -1;
    }
    /* "t-api<n>-<pid>": unique per test and per process tree. */
    snprintf(fx->job, sizeof(fx->job), "t-api%u-%ld", ++api_test_seq, (long)getpid());
    *state = fx;
    return 0;
}

int api_teardown(void **state)
{
    api_fixture_t *fx = *state;

    for (int i = 0; i < API_MAX_CHILDREN; i++) {
        if (fx->children[i] > 0) {
            kill(fx->children[i], SIGKILL);
            waitpid(fx->children[i], NULL, 0);
        }
    }
    for (int i = 0; i < API_MAX_CTX; i++) {
        rdlm_ctx_destroy(fx->ctx[i]);
    }
    if (fx->shared != NULL) {
        munmap(fx->shared, fx->shared_size);
    }
    api_segment_cleanup(fx->job);
    free(fx);
    return 0;
}

rdlm_ctx_params_t api_params(const char *job)
{
    return (rdlm_ctx_params_t){
        .field_mask = RDLM_CTX_FIELD_JOB | RDLM_CTX_FIELD_CAPACITY,
        .job = job,
        .capacity = 128,
    };
}

rdlm_status_t api_ctx_create(const char *job, rdlm_ctx_h *ctx_p)
{
    rdlm_ctx_params_t params = api_params(job);

    return rdlm_ctx_create(&params, ctx_p);
}

rdlm_ctx_h api_ctx(api_fixture_t *fx, int i)
{
    assert_true(i >= 0 && i < API_MAX_CTX);
    assert_null(fx->ctx[i]);
    assert_status(api_ctx_create(fx->job, &fx->ctx[i]), RDLM_OK);
    assert_non_null(fx->ctx[i]);
    return fx->ctx[i];
}

void api_lock_pair(api_fixture_t *fx, const char *name, rdlm_lock_h *la_p,
                   rdlm_lock_h *lb_p)
{
    assert_status(rdlm_lock_open(api_ctx(fx, 0), name, la_p), RDLM_OK);
    assert_status(rdlm_lock_open(api_ctx(fx, 1), name, lb_p), RDLM_OK);
}

void api_rwlock_trio(api_fixture_t *fx, const char *name, rdlm_rwlock_h *ra_p,
                     rdlm_rwlock_h *rb_p, rdlm_rwlock_h *rc_p)
{
    assert_status(rdlm_rwlock_open(api_ctx(fx, 0), name, ra_p), RDLM_OK);
    assert_status(rdlm_rwlock_open(api_ctx(fx, 1), name, rb_p), RDLM_OK);
    assert_status(rdlm_rwlock_open(api_ctx(fx, 2), name, rc_p), RDLM_OK);
}

void api_ctx_destroy(api_fixture_t *fx, int i)
{
    rdlm_ctx_destroy(fx->ctx[i]);
    fx->ctx[i] = NULL;
}

void *api_shared(api_fixture_t *fx, size_t size)
{
    void *p;

    assert_null(fx->shared);
    p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert_true(p != MAP_FAILED);
    fx->shared = p;
    fx->shared_size = size;
    return p;
}

pid_t api_fork(api_fixture_t *fx, int (*fn)(void *arg), void *arg)
{
    pid_t parent = getpid();
    pid_t pid;
    int slot = -1;

    for (int i = 0; i < API_MAX_CHILDREN; i++) {
        if (fx->children[i] <= 0) {
            slot = i;
            break;
        }
    }
    assert_true(slot >= 0);
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        /* A crash kills the child (the parent sees -1) instead of landing in cmocka's
         * handler, which would run the rest of the group in the child. */
        signal(SIGSEGV, SIG_DFL);
        signal(SIGBUS, SIG_DFL);
        signal(SIGILL, SIG_DFL);
        signal(SIGFPE, SIG_DFL);
        if (getppid() != parent) {
            _exit(99);
        }
        alarm(60);
        _exit(fn(arg));
    }
    fx->children[slot] = pid;
    return pid;
}

int api_wait_child(api_fixture_t *fx, pid_t pid, uint64_t timeout_ns)
{
    uint64_t deadline = api_now_ns() + timeout_ns;
    int status = 0;
    int done = 0;

    while (!done && api_now_ns() < deadline) {
        pid_t r = waitpid(pid, &status, WNOHANG);

        if (r == pid) {
            done = 1;
        } else {
            api_sleep_ms(1);
        }
    }
    if (!done) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    for (int i = 0; i < API_MAX_CHILDREN; i++) {
        if (fx->children[i] == pid) {
            fx->children[i] = 0;
        }
    }
    if (done && WIFEXITED(status)) {
        return WEXITSTATUS(status);
    }
    return -1;
}

int api_wait_waiters(rdlm_lock_h lock, uint32_t n, uint64_t timeout_ns)
{
    uint64_t deadline = api_now_ns() + timeout_ns;
    rdlm_lock_info_t info;

    while (api_now_ns() < deadline) {
        if (rdlm_lock_query(lock, &info) == RDLM_OK && info.waiters == n) {
            return 0;
        }
        api_sleep_ms(1);
    }
    return -1;
}

uint64_t api_env_u64(const char *name, uint64_t dflt)
{
    const char *s = getenv(name);
    char *end;
    unsigned long long v;

    if (s == NULL || *s == '\0') {
        return dflt;
    }
    v = strtoull(s, &end, 10);
    return *end == '\0' ? v : dflt;
}

void api_assert_status_(rdlm_status_t actual, rdlm_status_t expected, const char *expr,
                        const char *file, int line)
{
    if (actual != expected) {
        print_error("%s:%d: %s returned %s (%d), expected %s (%d)\n", file, line, expr,
                    rdlm_status_name(actual), (int)actual, rdlm_status_name(expected),
                    (int)expected);
        _fail(file, line);
    }
}

void api_assert_lock_unchanged_and_usable(rdlm_lock_h lock, const rdlm_lock_info_t *before)
{
    rdlm_lock_info_t now;
    uint64_t token = 0;

    assert_status(rdlm_lock_query(lock, &now), RDLM_OK);
    assert_int_equal(now.held, before->held);
    assert_int_equal(now.held_by_me, before->held_by_me);
    assert_int_equal(now.waiters, before->waiters);
    assert_int_equal(now.last_token, before->last_token);
    if (!now.held) {
        assert_status(rdlm_lock_acquire(lock, API_NSEC_PER_SEC, &token), RDLM_OK);
        assert_true(token > before->last_token);
        assert_status(rdlm_lock_release(lock), RDLM_OK);
    }
}
