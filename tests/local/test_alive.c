/* The slots' liveness by pidfd (core/local/alive.c): it answers as rdlm_proc_alive
 * does -- a running child is alive, a killed one is dead before it is reaped (a
 * zombie) and after, a wrong start time is dead -- keeps one descriptor per slot for
 * a confirmed running process and none for a refused or ended one, replaces a slot's
 * descriptor when another process takes the slot, keeps no more than its budget
 * (and still answers beyond it), and closes them all when destroyed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alive.h"
#include "proc.h"

/* A child that sleeps until killed. */
static pid_t child_start(void)
{
    pid_t pid = fork();

    assert_true(pid >= 0);
    if (pid == 0) {
        for (int i = 0; i < 600; i++) { /* bounded: 60 s */
            usleep(100000);
        }
        _exit(0);
    }
    return pid;
}

/* Open descriptors of this process. */
static int fds_open(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;

    assert_non_null(d);
    while (readdir(d) != NULL) {
        n++;
    }
    closedir(d);
    return n;
}

/* Start time of pid, waiting for /proc to show the child. */
static uint64_t start_of(pid_t pid)
{
    uint64_t st = 0;

    for (int i = 0; i < 1000 && st == 0; i++) {
        st = rdlm_proc_start_time(pid);
    }
    assert_true(st != 0);
    return st;
}

/* Both the cache and the plain check say want, twice (the second from the pidfd). */
static void expect(rdlm_alive_t *a, uint32_t slot, pid_t pid, uint64_t st, int want)
{
    assert_int_equal(rdlm_alive_check(a, slot, pid, st), want);
    assert_int_equal(rdlm_alive_check(a, slot, pid, st), want);
    assert_int_equal(rdlm_alive_check(NULL, slot, pid, st), want);
    assert_int_equal(rdlm_proc_alive(pid, st), want);
}

static void test_running_then_zombie_then_reaped(void **state)
{
    rdlm_alive_t *a = rdlm_alive_create(4, 4);
    pid_t pid = child_start();
    uint64_t st = start_of(pid);
    int before = fds_open();

    (void)state;
    assert_non_null(a);
    expect(a, 1, pid, st, 1);
    assert_int_equal(fds_open(), before + 1); /* one pidfd, kept */
    for (int i = 0; i < 100; i++) {
        assert_int_equal(rdlm_alive_check(a, 1, pid, st), 1);
    }
    assert_int_equal(fds_open(), before + 1);
    assert_int_equal(kill(pid, SIGKILL), 0);
    /* not reaped: a zombie, whose pidfd is readable */
    for (int i = 0; i < 1000 && rdlm_alive_check(a, 1, pid, st); i++) {
        usleep(1000);
    }
    expect(a, 1, pid, st, 0);
    assert_int_equal(fds_open(), before); /* ended: its descriptor was closed */
    assert_int_equal(waitpid(pid, NULL, 0), pid);
    expect(a, 1, pid, st, 0);
    assert_int_equal(fds_open(), before);
    rdlm_alive_destroy(a);
    assert_int_equal(fds_open(), before);
}

static void test_wrong_start_time_is_not_kept(void **state)
{
    rdlm_alive_t *a = rdlm_alive_create(4, 4);
    pid_t pid = child_start();
    uint64_t st = start_of(pid);
    int before = fds_open();

    (void)state;
    /* Another process with this pid (a start time that is not its): dead, and its
     * pidfd must not answer for it later. */
    expect(a, 2, pid, st + 1, 0);
    assert_int_equal(fds_open(), before);
    expect(a, 2, pid, st, 1);
    expect(a, 2, pid, st + 1, 0);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    rdlm_alive_destroy(a);
}

static void test_slot_taken_by_another_process(void **state)
{
    rdlm_alive_t *a = rdlm_alive_create(4, 4);
    pid_t p1 = child_start(), p2 = child_start();
    uint64_t s1 = start_of(p1), s2 = start_of(p2);
    int before = fds_open();

    (void)state;
    expect(a, 0, p1, s1, 1);
    kill(p1, SIGKILL);
    waitpid(p1, NULL, 0);
    expect(a, 0, p1, s1, 0);
    expect(a, 0, p2, s2, 1); /* the slot's next process: its own pidfd */
    assert_int_equal(fds_open(), before + 1);
    kill(p2, SIGKILL);
    waitpid(p2, NULL, 0);
    expect(a, 0, p2, s2, 0);
    /* slots out of range and bad pids go to /proc */
    assert_int_equal(rdlm_alive_check(a, 4, getpid(), start_of(getpid())), 1);
    assert_int_equal(rdlm_alive_check(a, 0, 0, 1), 0);
    rdlm_alive_destroy(a);
    assert_int_equal(fds_open(), before);
}

static void test_budget(void **state)
{
    rdlm_alive_t *a = rdlm_alive_create(4, 2);
    pid_t p[3] = {child_start(), child_start(), child_start()};
    uint64_t st[3] = {start_of(p[0]), start_of(p[1]), start_of(p[2])};
    int before = fds_open();

    (void)state;
    expect(a, 0, p[0], st[0], 1);
    expect(a, 1, p[1], st[1], 1);
    assert_int_equal(fds_open(), before + 2);
    /* past the budget: answered from /proc, no descriptor kept */
    expect(a, 2, p[2], st[2], 1);
    assert_int_equal(fds_open(), before + 2);
    kill(p[2], SIGKILL);
    waitpid(p[2], NULL, 0);
    expect(a, 2, p[2], st[2], 0);
    /* an ended process gives its descriptor back: the next slot gets one */
    kill(p[0], SIGKILL);
    waitpid(p[0], NULL, 0);
    expect(a, 0, p[0], st[0], 0);
    assert_int_equal(fds_open(), before + 1);
    p[2] = child_start();
    st[2] = start_of(p[2]);
    expect(a, 3, p[2], st[2], 1);
    assert_int_equal(fds_open(), before + 2);
    for (int i = 1; i < 3; i++) {
        kill(p[i], SIGKILL);
        waitpid(p[i], NULL, 0);
    }
    rdlm_alive_destroy(a);
    assert_int_equal(fds_open(), before);
    assert_true(rdlm_alive_fd_budget() <= 64);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_running_then_zombie_then_reaped),
        cmocka_unit_test(test_wrong_start_time_is_not_kept),
        cmocka_unit_test(test_slot_taken_by_another_process),
        cmocka_unit_test(test_budget),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
