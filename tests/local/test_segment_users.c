/* Two users on one node, in a /dev/shm of the test's own (a private mount namespace;
 * root, else exit 77 = skipped): the victim (uid 65534) and a squatter (65533).
 * - The squatter creates the victim's directory name first (/dev/shm/rdlm-65534: a
 *   directory open to all, a symlink to its own directory, a file): the victim's
 *   attach returns RDLM_ERR_PERMISSION with one error line naming the path, what is
 *   wrong and what to do (RDLM_SHM_DIR), and writes nothing into the squatter's
 *   objects.
 * - The names earlier versions used (/dev/shm/rdlm-65534-<job> and its .lock), made
 *   by the squatter, no longer stop the victim's job (they gave RDLM_ERR_PERMISSION).
 * - Once the victim's job runs, the squatter can neither list the victim's directory
 *   nor create a name in it (EACCES), and no name in /dev/shm shows the job's name. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "segment.h"

#define VICTIM 65534u
#define SQUATTER 65533u
#define VICTIM_DIR "/dev/shm/rdlm-65534"
#define SQUAT_DIR "/dev/shm/squatter-own"
#define JOB "secret-job"

/* What a child reports in its exit code. */
enum { CHILD_OK = 0, CHILD_PERMISSION = 1, CHILD_OTHER = 2, CHILD_SETUP = 3 };

typedef int (*child_func_t)(void);

/* Run fn in a child as uid (gid the same); its stderr into err (NUL-terminated).
 * Returns fn's result, or -1 if the child did not exit normally. */
static int as_user(uid_t uid, child_func_t fn, char *err, size_t len)
{
    int pipefd[2], status;
    size_t got = 0;
    ssize_t n;
    pid_t pid;

    assert_int_equal(pipe(pipefd), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(pipefd[0]);
        dup2(pipefd[1], STDERR_FILENO);
        if (setgroups(0, NULL) != 0 || setgid(uid) != 0 || setuid(uid) != 0) {
            _exit(CHILD_SETUP);
        }
        _exit(fn());
    }
    close(pipefd[1]);
    while (got + 1 < len && (n = read(pipefd[0], err + got, len - 1 - got)) > 0) {
        got += (size_t)n;
    }
    err[got] = '\0';
    close(pipefd[0]);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The victim attaches JOB's segment and exits attached (its files stay). */
static int victim_attach(void)
{
    rdlm_segment_params_t p = {.job = JOB, .capacity = 16, .max_procs = 2, .epoch = 1};
    rdlm_segment_t seg;
    rdlm_status_t st = rdlm_segment_attach(&p, &seg);

    return st == RDLM_OK               ? CHILD_OK
           : st == RDLM_ERR_PERMISSION ? CHILD_PERMISSION
                                       : CHILD_OTHER;
}

static int squat_open_dir(void)
{
    return mkdir(VICTIM_DIR, 0777) == 0 && chmod(VICTIM_DIR, 0777) == 0 ? CHILD_OK
                                                                        : CHILD_OTHER;
}

static int squat_symlink(void)
{
    return mkdir(SQUAT_DIR, 0777) == 0 && chmod(SQUAT_DIR, 0777) == 0 &&
                   symlink(SQUAT_DIR, VICTIM_DIR) == 0
               ? CHILD_OK
               : CHILD_OTHER;
}

static int squat_file(void)
{
    int fd = open(VICTIM_DIR, O_RDWR | O_CREAT | O_EXCL, 0666);

    return fd >= 0 && close(fd) == 0 ? CHILD_OK : CHILD_OTHER;
}

static int squat_old_names(void)
{
    int seg = open("/dev/shm/rdlm-65534-" JOB, O_RDWR | O_CREAT | O_EXCL, 0666);
    int lock = open("/dev/shm/rdlm-65534-" JOB ".lock", O_RDWR | O_CREAT | O_EXCL, 0666);

    return seg >= 0 && lock >= 0 && close(seg) == 0 && close(lock) == 0 ? CHILD_OK
                                                                        : CHILD_OTHER;
}

/* CHILD_OK if the squatter cannot list or add to the victim's directory and sees
 * no name with the job's in /dev/shm. */
static int squatter_looks(void)
{
    DIR *dir = opendir(VICTIM_DIR);
    struct dirent *e;
    int fd, seen = 0;

    if (dir != NULL || errno != EACCES) {
        fprintf(stderr, "opendir(%s) as the squatter: %s\n", VICTIM_DIR,
                dir != NULL ? "listed" : strerror(errno));
        return CHILD_OTHER;
    }
    fd = open(VICTIM_DIR "/" JOB ".seg", O_RDWR | O_CREAT | O_EXCL, 0666);
    if (fd >= 0 || errno != EACCES) {
        fprintf(stderr, "creating a name in %s as the squatter: %s\n", VICTIM_DIR,
                fd >= 0 ? "created" : strerror(errno));
        return CHILD_OTHER;
    }
    dir = opendir("/dev/shm");
    if (dir == NULL) {
        return CHILD_SETUP;
    }
    while ((e = readdir(dir)) != NULL) {
        if (strstr(e->d_name, JOB) != NULL) {
            fprintf(stderr, "the squatter sees /dev/shm/%s\n", e->d_name);
            seen = 1;
        }
    }
    closedir(dir);
    return seen ? CHILD_OTHER : CHILD_OK;
}

/* The victim's attach after squat: RDLM_ERR_PERMISSION, one error line containing
 * what (and the advice). */
static void victim_is_refused(child_func_t squat, const char *what)
{
    char err[4096];

    assert_int_equal(as_user(SQUATTER, squat, err, sizeof(err)), CHILD_OK);
    assert_int_equal(as_user(VICTIM, victim_attach, err, sizeof(err)), CHILD_PERMISSION);
    if (strstr(err, what) == NULL || strstr(err, "RDLM_SHM_DIR") == NULL ||
        strchr(err, '\n') != strrchr(err, '\n')) {
        fail_msg("expected one line with \"%s\" and RDLM_SHM_DIR, got: %s", what, err);
    }
}

static void squatted_open_directory_is_refused(void **state)
{
    struct stat st;

    (void)state;
    victim_is_refused(squat_open_dir, VICTIM_DIR " belongs to another user");
    assert_int_equal(lstat(VICTIM_DIR "/" JOB ".lock", &st), -1); /* nothing put there */
    assert_int_equal(rmdir(VICTIM_DIR), 0);
}

static void squatted_symlink_is_refused(void **state)
{
    struct stat st;

    (void)state;
    victim_is_refused(squat_symlink, VICTIM_DIR " is a symlink");
    assert_int_equal(lstat(SQUAT_DIR "/" JOB ".lock", &st), -1);
    assert_int_equal(unlink(VICTIM_DIR), 0);
    assert_int_equal(rmdir(SQUAT_DIR), 0);
}

static void squatted_file_is_refused(void **state)
{
    (void)state;
    victim_is_refused(squat_file, VICTIM_DIR " is not a directory");
    assert_int_equal(unlink(VICTIM_DIR), 0);
}

static void squatted_old_names_do_not_stop_the_job(void **state)
{
    char err[4096];

    (void)state;
    assert_int_equal(as_user(SQUATTER, squat_old_names, err, sizeof(err)), CHILD_OK);
    if (as_user(VICTIM, victim_attach, err, sizeof(err)) != CHILD_OK) {
        fail_msg("the victim's attach failed: %s", err);
    }
    assert_int_equal(unlink("/dev/shm/rdlm-65534-" JOB), 0);
    assert_int_equal(unlink("/dev/shm/rdlm-65534-" JOB ".lock"), 0);
    assert_int_equal(unlink(VICTIM_DIR "/" JOB ".seg"), 0); /* left attached: exited */
    assert_int_equal(unlink(VICTIM_DIR "/" JOB ".lock"), 0);
}

static void other_users_cannot_list_or_add_job_names(void **state)
{
    char err[4096];
    struct stat st;

    (void)state;
    assert_int_equal(as_user(VICTIM, victim_attach, err, sizeof(err)), CHILD_OK);
    assert_int_equal(stat(VICTIM_DIR "/" JOB ".seg", &st), 0); /* the job is there */
    if (as_user(SQUATTER, squatter_looks, err, sizeof(err)) != CHILD_OK) {
        fail_msg("%s", err);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(squatted_open_directory_is_refused),
        cmocka_unit_test(squatted_symlink_is_refused),
        cmocka_unit_test(squatted_file_is_refused),
        cmocka_unit_test(squatted_old_names_do_not_stop_the_job),
        cmocka_unit_test(other_users_cannot_list_or_add_job_names),
    };

    if (geteuid() != 0) {
        printf("SKIP: needs root (a private /dev/shm, and two users)\n");
        return 77;
    }
    if (unshare(CLONE_NEWNS) != 0 ||
        mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
        mount("rdlmtest-shm", "/dev/shm", "tmpfs", 0, "size=16m,mode=1777") != 0) {
        printf("SKIP: no private /dev/shm here: %s\n", strerror(errno));
        return 77;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
