/* Shared segment: create then attach, private mode, stale replacement with a larger
 * epoch, replacement of a corrupt file, refusal of an unsafe one, removal at the last
 * detach, dead process slots reclaimed, slot exhaustion. */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "segment.h"

static char job[32];

static rdlm_segment_params_t params(const char *tag, uint32_t max_procs)
{
    snprintf(job, sizeof(job), "ut-%d-%s", (int)getpid(), tag);
    return (rdlm_segment_params_t){.job = job, .capacity = 64, .max_procs = max_procs};
}

static int shm_exists(void)
{
    char path[96];
    struct stat st;

    snprintf(path, sizeof(path), "/dev/shm/rdlm-%u-%s", (unsigned)geteuid(), job);
    return stat(path, &st) == 0;
}

static void first_attach_creates_second_attaches_last_detach_removes(void **state)
{
    rdlm_segment_params_t p = params("life", 4);
    rdlm_segment_t a, b;
    char path[96];
    struct stat st;

    (void)state;
    assert_int_equal(rdlm_segment_attach(&p, &a), RDLM_OK);
    assert_int_equal(rdlm_segment_attach(&p, &b), RDLM_OK);
    assert_true(a.created);
    assert_false(b.created);
    assert_int_not_equal(a.self_owner, b.self_owner);
    assert_int_equal(a.hdr->epoch, b.hdr->epoch);
    snprintf(path, sizeof(path), "/dev/shm/rdlm-%u-%s", (unsigned)geteuid(), job);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(rdlm_segment_live_procs(&a), 2);
    rdlm_segment_detach(&b);
    assert_true(shm_exists());
    rdlm_segment_detach(&a);
    assert_false(shm_exists());
}

static void segment_of_dead_job_is_replaced_with_larger_epoch(void **state)
{
    rdlm_segment_params_t p = params("stale", 4);
    rdlm_segment_t seg;
    int pipefd[2], status;
    uint32_t old_epoch = 0;
    pid_t child;

    (void)state;
    assert_int_equal(pipe(pipefd), 0);
    child = fork();
    if (child == 0) {
        if (rdlm_segment_attach(&p, &seg) != RDLM_OK) {
            _exit(1);
        }
        (void)!write(pipefd[1], &seg.hdr->epoch, sizeof(uint32_t));
        _exit(0); /* dies attached: the segment is now stale */
    }
    assert_int_equal(read(pipefd[0], &old_epoch, sizeof(old_epoch)), sizeof(old_epoch));
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(shm_exists());
    assert_int_equal(rdlm_segment_attach(&p, &seg), RDLM_OK);
    assert_true(seg.replaced_stale);
    assert_true(seg.created);
    assert_true(seg.hdr->epoch > old_epoch);
    rdlm_segment_detach(&seg);
    close(pipefd[0]);
    close(pipefd[1]);
}

static void corrupt_segment_is_replaced(void **state)
{
    rdlm_segment_params_t p = params("corrupt", 4);
    rdlm_segment_t seg;
    char name[64];
    int fd;

    (void)state;
    snprintf(name, sizeof(name), "/rdlm-%u-%s", (unsigned)geteuid(), job);
    fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "garbage, not a segment", 22), 22);
    close(fd);
    assert_int_equal(rdlm_segment_attach(&p, &seg), RDLM_OK);
    assert_true(seg.replaced_stale);
    assert_int_equal(seg.hdr->capacity, 64);
    rdlm_segment_detach(&seg);
}

static void group_readable_segment_is_refused_untouched(void **state)
{
    rdlm_segment_params_t p = params("unsafe", 4);
    rdlm_segment_t seg;
    char name[64];
    int fd;

    (void)state;
    snprintf(name, sizeof(name), "/rdlm-%u-%s", (unsigned)geteuid(), job);
    fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    assert_true(fd >= 0);
    assert_int_equal(fchmod(fd, 0644), 0);
    close(fd);
    assert_int_equal(rdlm_segment_attach(&p, &seg), RDLM_ERR_PERMISSION);
    assert_true(shm_exists()); /* not removed: it is not ours to judge */
    shm_unlink(name);
    snprintf(name, sizeof(name), "/dev/shm/rdlm-%u-%s.lock", (unsigned)geteuid(), job);
    unlink(name);
}

static void slots_of_dead_processes_are_reclaimed_and_exhaustion_is_an_error(void **state)
{
    rdlm_segment_params_t p = params("slots", 2);
    rdlm_segment_t a, b, c;
    int status;
    pid_t child;

    (void)state;
    assert_int_equal(rdlm_segment_attach(&p, &a), RDLM_OK);
    child = fork();
    if (child == 0) {
        _exit(rdlm_segment_attach(&p, &b) == RDLM_OK ? 0 : 1); /* dies holding slot 1 */
    }
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(rdlm_segment_attach(&p, &b), RDLM_OK); /* reclaims the dead slot */
    assert_int_equal(b.self_slot, 1);
    assert_int_equal(rdlm_segment_attach(&p, &c), RDLM_ERR_NO_RESOURCE);
    assert_false(rdlm_segment_owner_alive(&a, RDLM_OWNER_MAKE(1, 1))); /* old generation */
    assert_true(rdlm_segment_owner_alive(&a, b.self_owner));
    rdlm_segment_detach(&b);
    rdlm_segment_detach(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(first_attach_creates_second_attaches_last_detach_removes),
        cmocka_unit_test(segment_of_dead_job_is_replaced_with_larger_epoch),
        cmocka_unit_test(corrupt_segment_is_replaced),
        cmocka_unit_test(group_readable_segment_is_refused_untouched),
        cmocka_unit_test(slots_of_dead_processes_are_reclaimed_and_exhaustion_is_an_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
