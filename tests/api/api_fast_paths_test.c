/*
 * Public API: the uncontended paths of a node-only context read no clock.
 *
 * A clock read costs two to three times an uncontended lock cycle on the test VMs
 * (about 20 ns against 8), so a fast path that reads it early loses the lock's speed
 * without any test failing: the rwlock's write side did, and ran 63-78 ns per acquire
 * and release against 8-12 ns for the exclusive lock (rdlm-bench -b rwlock-ratio,
 * 0% reads: 0.43-0.53x pthread_rwlock). This program defines clock_gettime, so the
 * library's calls come here and are counted (per thread: only this thread's calls);
 * every kind's acquire and release, with a finite timeout and with
 * RDLM_TIMEOUT_INFINITE, on a free object must make none. Contended waits read the
 * clock (deadlines, bypass bounds): checked too, so the count is known to work.
 */
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "api_util.h"

#define CYCLES 1000u
#define TIMEOUT_NS (10 * API_NSEC_PER_SEC)

static __thread unsigned long clock_reads;

/* The library's clock: counted, then read through the system call. */
int clock_gettime(clockid_t id, struct timespec *ts)
{
    clock_reads++;
    return (int)syscall(SYS_clock_gettime, id, ts);
}

typedef rdlm_status_t (*cycle_fn)(void *h, uint64_t timeout_ns);

static rdlm_status_t lock_cycle(void *h, uint64_t timeout_ns)
{
    rdlm_status_t s = rdlm_lock_acquire(h, timeout_ns, NULL);
    return s != RDLM_OK ? s : rdlm_lock_release(h);
}

static rdlm_status_t write_cycle(void *h, uint64_t timeout_ns)
{
    uint64_t token;
    rdlm_status_t s = rdlm_rwlock_write_acquire(h, timeout_ns, &token);
    return s != RDLM_OK ? s : rdlm_rwlock_write_release(h);
}

static rdlm_status_t read_cycle(void *h, uint64_t timeout_ns)
{
    rdlm_status_t s = rdlm_rwlock_read_acquire(h, timeout_ns);
    return s != RDLM_OK ? s : rdlm_rwlock_read_release(h);
}

static rdlm_status_t sem_cycle(void *h, uint64_t timeout_ns)
{
    rdlm_status_t s = rdlm_sem_acquire(h, 1, timeout_ns);
    return s != RDLM_OK ? s : rdlm_sem_release(h, 1);
}

/* CYCLES cycles with each timeout; the clock reads they made. */
static unsigned long reads_in(cycle_fn cycle, void *h)
{
    const uint64_t timeouts[] = {TIMEOUT_NS, RDLM_TIMEOUT_INFINITE};
    unsigned long before = clock_reads;

    for (unsigned t = 0; t < 2; t++) {
        for (unsigned i = 0; i < CYCLES; i++) {
            assert_status(cycle(h, timeouts[t]), RDLM_OK);
        }
    }
    return clock_reads - before;
}

static void test_free_objects_read_no_clock(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_ctx_h ctx = api_ctx(fx, 0);
    rdlm_lock_params_t fifo = {.field_mask = RDLM_LOCK_FIELD_ORDER,
                               .order = RDLM_LOCK_ORDER_FIFO};
    rdlm_lock_h lock, fifo_lock;
    rdlm_rwlock_h rw;
    rdlm_sem_h sem;

    assert_status(rdlm_lock_open(ctx, "fast-lock", &lock), RDLM_OK);
    assert_status(rdlm_lock_open_params(ctx, "fast-fifo", &fifo, &fifo_lock), RDLM_OK);
    assert_status(rdlm_rwlock_open(ctx, "fast-rw", &rw), RDLM_OK);
    assert_status(rdlm_sem_open(ctx, "fast-sem", 2, &sem), RDLM_OK);

    assert_int_equal(reads_in(lock_cycle, lock), 0);
    assert_int_equal(reads_in(lock_cycle, fifo_lock), 0);
    assert_int_equal(reads_in(write_cycle, rw), 0);
    assert_int_equal(reads_in(read_cycle, rw), 0);
    assert_int_equal(reads_in(sem_cycle, sem), 0);
}

/* The count sees the library's reads: a write that waits for a reader to time out
 * reads the clock (its deadline). */
static void test_a_wait_reads_the_clock(void **state)
{
    api_fixture_t *fx = *state;
    rdlm_ctx_h a = api_ctx(fx, 0), b = api_ctx(fx, 1);
    rdlm_rwlock_h ra, rb;
    unsigned long before;

    assert_status(rdlm_rwlock_open(a, "fast-rw", &ra), RDLM_OK);
    assert_status(rdlm_rwlock_open(b, "fast-rw", &rb), RDLM_OK);
    assert_status(rdlm_rwlock_read_acquire(ra, 0), RDLM_OK);
    before = clock_reads;
    assert_status(rdlm_rwlock_write_acquire(rb, API_NSEC_PER_MSEC, NULL), RDLM_ERR_TIMEOUT);
    assert_true(clock_reads > before);
    assert_status(rdlm_rwlock_read_release(ra), RDLM_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_free_objects_read_no_clock, api_setup,
                                        api_teardown),
        cmocka_unit_test_setup_teardown(test_a_wait_reads_the_clock, api_setup,
                                        api_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
