/* Waiting: the spin phase ends with one CHECK, a deadline gives TIMEDOUT, a sleeper is
 * woken by a change of the word, and a wake with nobody parked makes no system call
 * (wakes counter unchanged). Uses a thread as the other party. Whether waiters count
 * the host as oversubscribed (they then yield at once): by the processes attached or
 * known on the host against the CPUs, unless RDLM_OVERSUBSCRIBED says on or off. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include <string.h>

#include "clock.h"
#include "local.h"
#include "wait.h"

static rdlm_wait_policy_t policy = {.spin = 10, .yield = 2, .park_slice_ns = 5000000};
static rdlm_wait_stats_t stats;
static rdlm_atomic_u32_t word, parked;

static void spin_phase_ends_with_one_check(void **state)
{
    rdlm_wait_t w;
    int checks = 0;

    (void)state;
    rdlm_wait_init(&w, &policy, &stats, UINT64_MAX);
    for (uint32_t i = 0; i < policy.spin; i++) {
        checks +=
            rdlm_wait_step(&w, &word, 0, RDLM_WAIT_ALL_BITS, &parked) == RDLM_WAIT_CHECK;
    }
    assert_int_equal(checks, 1);
}

static void deadline_gives_timedout(void **state)
{
    rdlm_wait_t w;
    uint64_t start = rdlm_clock_now_ns();
    rdlm_wait_result_t r = RDLM_WAIT_AGAIN;

    (void)state;
    rdlm_wait_init(&w, &policy, &stats, 20000000);
    for (int i = 0; i < 100000 && r != RDLM_WAIT_TIMEDOUT; i++) {
        r = rdlm_wait_step(&w, &word, 0, RDLM_WAIT_ALL_BITS, &parked);
    }
    assert_int_equal(r, RDLM_WAIT_TIMEDOUT);
    assert_true(rdlm_clock_now_ns() - start >= 20000000);
    assert_int_equal(rdlm_load(&parked, RDLM_RELAXED), 0);
}

static void *changer(void *arg)
{
    struct timespec ts = {0, 30000000};

    (void)arg;
    nanosleep(&ts, NULL);
    rdlm_store(&word, 1, RDLM_SEQ_CST);
    rdlm_wait_wake(&word, RDLM_WAIT_ALL_BITS, &parked, &stats);
    return NULL;
}

static void sleeper_is_woken_by_change(void **state)
{
    rdlm_wait_policy_t long_slices = {
        .spin = 1, .yield = 0, .park_slice_ns = 10000000000ull};
    uint64_t parks_before = rdlm_load(&stats.parks, RDLM_RELAXED);
    uint64_t start = rdlm_clock_now_ns();
    pthread_t t;
    rdlm_wait_t w;
    int steps = 0;

    (void)state;
    rdlm_store(&word, 0, RDLM_RELAXED);
    assert_int_equal(pthread_create(&t, NULL, changer, NULL), 0);
    rdlm_wait_init(&w, &long_slices, &stats, UINT64_MAX);
    while (rdlm_load(&word, RDLM_ACQUIRE) == 0 && steps++ < 1000) {
        rdlm_wait_step(&w, &word, 0, RDLM_WAIT_ALL_BITS, &parked);
    }
    pthread_join(t, NULL);
    assert_int_equal(rdlm_load(&word, RDLM_RELAXED), 1);
    assert_true(rdlm_load(&stats.parks, RDLM_RELAXED) > parks_before);
    assert_true(rdlm_clock_now_ns() - start < 5000000000ull); /* not the 10 s slice */
}

static void wake_without_sleepers_is_free(void **state)
{
    uint64_t wakes = rdlm_load(&stats.wakes, RDLM_RELAXED);

    (void)state;
    rdlm_store(&parked, 0, RDLM_RELAXED);
    rdlm_wait_wake(&word, RDLM_WAIT_ALL_BITS, &parked, &stats);
    assert_int_equal(rdlm_load(&stats.wakes, RDLM_RELAXED), wakes);
}

static void oversubscribed_by_counts_unless_set(void **state)
{
    rdlm_seg_header_t hdr;
    rdlm_local_t lc;

    (void)state;
    memset(&hdr, 0, sizeof(hdr));
    memset(&lc, 0, sizeof(lc));
    lc.seg.hdr = &hdr;
    lc.cpus = 2;
    rdlm_store(&hdr.attached, 2, RDLM_RELAXED);
    assert_false(rdlm_local_oversubscribed(&lc)); /* auto: 2 processes, 2 CPUs */
    lc.host_procs = 4;                            /* another virtual node's two */
    assert_true(rdlm_local_oversubscribed(&lc));
    lc.host_procs = 0;
    rdlm_store(&hdr.attached, 3, RDLM_RELAXED);
    assert_true(rdlm_local_oversubscribed(&lc));
    lc.oversubscribed = RDLM_SWITCH_OFF; /* whatever the counts say */
    assert_false(rdlm_local_oversubscribed(&lc));
    lc.host_procs = 64;
    assert_false(rdlm_local_oversubscribed(&lc));
    lc.oversubscribed = RDLM_SWITCH_ON;
    lc.host_procs = 0;
    rdlm_store(&hdr.attached, 1, RDLM_RELAXED);
    assert_true(rdlm_local_oversubscribed(&lc));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(spin_phase_ends_with_one_check),
        cmocka_unit_test(deadline_gives_timedout),
        cmocka_unit_test(sleeper_is_woken_by_change),
        cmocka_unit_test(wake_without_sleepers_is_free),
        cmocka_unit_test(oversubscribed_by_counts_unless_set),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
