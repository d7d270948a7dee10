/*
 * Helpers for the public-API tests: a per-test fixture (unique job name, contexts
 * and child processes cleaned up even when an assertion fails), forking children
 * that report through exit codes or shared memory (children never call cmocka),
 * bounded waits, and lock-state assertions.
 */
#ifndef RDLM_API_UTIL_H
#define RDLM_API_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cmocka.h>

#include <rdlm.h>

#define API_NSEC_PER_MSEC 1000000ull
#define API_NSEC_PER_SEC 1000000000ull
#define API_MAX_CTX 4
#define API_MAX_CHILDREN 16

/** Per-test state: cmocka setup creates it, teardown undoes whatever is left. */
typedef struct api_fixture {
    char job[40];
    rdlm_ctx_h ctx[API_MAX_CTX];
    pid_t children[API_MAX_CHILDREN];
    void *shared;
    size_t shared_size;
} api_fixture_t;

/** cmocka group/test setup and teardown for api_fixture_t. */
int api_setup(void **state);
int api_teardown(void **state);

/** Context parameters for job with a small capacity (tests create many segments). */
rdlm_ctx_params_t api_params(const char *job);

/** rdlm_ctx_create with api_params(job) into *ctx_p; returns its status and asserts
 *  nothing (children may call it). */
rdlm_status_t api_ctx_create(const char *job, rdlm_ctx_h *ctx_p);

/** Create fx->ctx[i] in the fixture's job; asserts success. */
rdlm_ctx_h api_ctx(api_fixture_t *fx, int i);

/** Create contexts 0 and 1 and open the lock name in each (the same lock seen by two
 *  owners); asserts success. */
void api_lock_pair(api_fixture_t *fx, const char *name, rdlm_lock_h *la_p,
                   rdlm_lock_h *lb_p);

/** Create contexts 0, 1 and 2 and open the rwlock name in each; asserts success. */
void api_rwlock_trio(api_fixture_t *fx, const char *name, rdlm_rwlock_h *ra_p,
                     rdlm_rwlock_h *rb_p, rdlm_rwlock_h *rc_p);

/** Destroy fx->ctx[i] now (NULL is fine). */
void api_ctx_destroy(api_fixture_t *fx, int i);

/** Zeroed shared anonymous mapping owned by the fixture (one per test). */
void *api_shared(api_fixture_t *fx, size_t size);

/** Fork a child running fn(arg), registered for cleanup; the child _exits with fn's
 *  return value, gets SIGKILL if the test process dies and SIGALRM after 60 s; a
 *  crash (SIGSEGV, SIGBUS, ...) kills it rather than entering cmocka's handler. */
pid_t api_fork(api_fixture_t *fx, int (*fn)(void *arg), void *arg);

/** Wait up to timeout_ns for child pid; returns its exit code, or -1 (killed: it
 *  ran too long or died by a signal). */
int api_wait_child(api_fixture_t *fx, pid_t pid, uint64_t timeout_ns);

uint64_t api_now_ns(void);
void api_sleep_ms(unsigned ms);

/** Poll rdlm_lock_query until waiters == n (bounded); 0 on success. */
int api_wait_waiters(rdlm_lock_h lock, uint32_t n, uint64_t timeout_ns);

/** Path of a job's segment and of its lock file: in RDLM_SHM_DIR if set, else in the
 *  default directory /dev/shm/rdlm-<uid> (docs/local-locks.md). */
void api_segment_path(char *buf, size_t size, const char *job);

/** Remove job's segment and lock file (the fixture's job: at teardown). */
void api_segment_cleanup(const char *job);
void api_lock_path(char *buf, size_t size, const char *job);
int api_path_exists(const char *path);

/** Parse a tunable from the environment (iteration counts). */
uint64_t api_env_u64(const char *name, uint64_t dflt);

/**
 * Assert that lock still reports the state in before (held, held_by_me, waiters,
 * last_token) and, if it is free, that it still works: acquire returns RDLM_OK with
 * a larger token and release returns RDLM_OK.
 */
void api_assert_lock_unchanged_and_usable(rdlm_lock_h lock, const rdlm_lock_info_t *before);

/** Assert a status, printing both names on mismatch. */
#define assert_status(actual, expected)                                                  \
    api_assert_status_((actual), (expected), #actual, __FILE__, __LINE__)
void api_assert_status_(rdlm_status_t actual, rdlm_status_t expected, const char *expr,
                        const char *file, int line);

#endif
