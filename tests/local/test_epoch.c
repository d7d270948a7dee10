/* Token epochs without an authority (core/local/epoch.c): each one taken from a host's
 * epoch file is larger than every one before, whatever the clock does (a stepped-back
 * clock is a smaller floor), also between processes taking them at once; a file that
 * is not this user's, is shared, is a symlink, or holds no epoch is refused and left
 * as it was; a take waits for another process holding the file's lock. Tunable:
 * RDLMTEST_EPOCH_PROCS x RDLMTEST_EPOCH_TAKES for the race. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "epoch.h"

static char dir[64], path[96];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/rdlm-test-epoch-XXXXXX");
    if (mkdtemp(dir) == NULL) {
        return -1;
    }
    snprintf(path, sizeof(path), "%s/epoch", dir);
    return 0;
}

static int teardown(void **state)
{
    char link[112];

    (void)state;
    snprintf(link, sizeof(link), "%s/link", dir);
    unlink(link);
    unlink(path);
    return rmdir(dir);
}

static uint32_t env_or(const char *name, uint32_t dflt)
{
    const char *v = getenv(name);
    return v != NULL ? (uint32_t)strtoul(v, NULL, 10) : dflt;
}

static void write_file(const char *text, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    assert_int_equal(fchmod(fd, mode), 0);
    close(fd);
}

static void read_file(char *buf, size_t len)
{
    FILE *f = fopen(path, "r");

    assert_non_null(f);
    memset(buf, 0, len);
    assert_true(fread(buf, 1, len - 1, f) > 0);
    fclose(f);
}

static void next_epoch_is_above_the_last_and_the_clock(void **state)
{
    (void)state;
    assert_int_equal(rdlm_epoch_after(0, 100), 100);
    assert_int_equal(rdlm_epoch_after(100, 100), 101); /* two jobs in one minute */
    assert_int_equal(rdlm_epoch_after(101, 50), 102);  /* the clock stepped back */
    assert_int_equal(rdlm_epoch_after(102, 200), 200); /* the clock moved on */
    assert_int_equal(rdlm_epoch_after(RDLM_EPOCH_MAX - 1, 1), RDLM_EPOCH_MAX);
    assert_int_equal(rdlm_epoch_after(RDLM_EPOCH_MAX, 1), 0); /* used up */
}

static void clock_epoch_counts_minutes_since_2024(void **state)
{
    (void)state;
    assert_int_equal(rdlm_clock_epoch(1704067200), 1);
    assert_int_equal(rdlm_clock_epoch(1704067200 + 59), 1);
    assert_int_equal(rdlm_clock_epoch(1704067200 + 60), 2);
    assert_int_equal(rdlm_clock_epoch(0), 1); /* a clock before 2024 */
}

static void taken_epochs_grow_across_a_stepped_back_clock(void **state)
{
    const uint32_t floors[] = {1000, 1000, 1000, 10, 5000};
    const uint32_t want[] = {1000, 1001, 1002, 1003, 5000};
    char text[32];
    uint32_t e;

    (void)state;
    for (size_t i = 0; i < sizeof(floors) / sizeof(floors[0]); i++) {
        assert_int_equal(rdlm_epoch_take(path, floors[i], &e), RDLM_OK);
        assert_int_equal(e, want[i]);
    }
    read_file(text, sizeof(text));
    assert_string_equal(text, "5000\n"); /* recorded before it was handed out */
}

static void epochs_taken_by_racing_processes_are_all_distinct(void **state)
{
    uint32_t procs = env_or("RDLMTEST_EPOCH_PROCS", 4);
    uint32_t takes = env_or("RDLMTEST_EPOCH_TAKES", 50);
    char text[32];

    (void)state;
    for (uint32_t p = 0; p < procs; p++) {
        if (fork() == 0) {
            uint32_t e, last = 0;
            for (uint32_t i = 0; i < takes; i++) {
                if (rdlm_epoch_take(path, 1, &e) != RDLM_OK || e <= last) {
                    _exit(1);
                }
                last = e;
            }
            _exit(0);
        }
    }
    for (uint32_t p = 0; p < procs; p++) {
        int st = 0;
        assert_true(wait(&st) > 0);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    /* Every take moved the file by exactly one: none was lost to a race. */
    read_file(text, sizeof(text));
    assert_int_equal(strtoul(text, NULL, 10), (unsigned long)procs * takes);
}

/* Another process holds the file's lock for a while (mid-take): the take waits for it
 * (bounded: 5 s, then RDLM_ERR_BUSY) instead of failing at once. */
static void take_waits_for_a_holder_of_the_lock(void **state)
{
    struct flock whole = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    int ready[2], st = 0;
    uint32_t e = 0;
    char c;
    pid_t pid;

    (void)state;
    write_file("41\n", 0600);
    assert_int_equal(pipe(ready), 0);
    pid = fork();
    if (pid == 0) {
        int fd = open(path, O_RDWR);

        if (fd < 0 || fcntl(fd, F_SETLK, &whole) != 0 || write(ready[1], "x", 1) != 1) {
            _exit(1);
        }
        usleep(200000);
        _exit(0); /* the lock goes with the process */
    }
    assert_int_equal(read(ready[0], &c, 1), 1);
    assert_int_equal(rdlm_epoch_take(path, 1, &e), RDLM_OK);
    assert_int_equal(e, 42);
    assert_true(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    close(ready[0]);
    close(ready[1]);
}

static void bad_files_are_refused_and_left_alone(void **state)
{
    char text[32], link[112];
    uint32_t e = 7;

    (void)state;
    write_file("12x\n", 0600);
    assert_int_equal(rdlm_epoch_take(path, 1, &e), RDLM_ERR_CORRUPT);
    assert_int_equal(e, 0);
    read_file(text, sizeof(text));
    assert_string_equal(text, "12x\n");
    write_file("99999999\n", 0600); /* past RDLM_EPOCH_MAX */
    assert_int_equal(rdlm_epoch_take(path, 1, &e), RDLM_ERR_CORRUPT);
    write_file("12\n", 0644); /* readable by others: someone else may write it too */
    assert_int_equal(rdlm_epoch_take(path, 1, &e), RDLM_ERR_PERMISSION);
    snprintf(link, sizeof(link), "%s/link", dir);
    assert_int_equal(symlink(path, link), 0);
    assert_int_equal(rdlm_epoch_take(link, 1, &e), RDLM_ERR_PERMISSION);
    write_file("8388607\n", 0600);
    assert_int_equal(rdlm_epoch_take(path, 1, &e), RDLM_ERR_QUOTA);
    read_file(text, sizeof(text));
    assert_string_equal(text, "8388607\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(next_epoch_is_above_the_last_and_the_clock),
        cmocka_unit_test(clock_epoch_counts_minutes_since_2024),
        cmocka_unit_test_setup_teardown(taken_epochs_grow_across_a_stepped_back_clock,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(epochs_taken_by_racing_processes_are_all_distinct,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(take_waits_for_a_holder_of_the_lock, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(bad_files_are_refused_and_left_alone, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
