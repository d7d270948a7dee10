/*
 * fenced_file_test — the examples' fenced file keeps its records in token order when
 * a writer is stopped (SIGSTOP) between its token check and its write, as a holder
 * paused past its lease would be (fenced_file.h). Before the check and the write were
 * one step under the file's lock, the stopped writer's stale record landed after the
 * newer writer's and rolled the header back (an outside user's finding, 3 of 3 runs).
 *
 * Built with -Wl,--wrap=rdlm_fence_check: in the writer started with STOP_AFTER_CHECK,
 * a check that passes stops the process. The parent: writer A (token 5) checks and
 * stops; writer B (tokens 6, 7, 8) writes 3 records meanwhile, or waits for A's step
 * to end; the parent continues A after SETTLE_MS. Then the file must hold 4 records
 * whose tokens strictly increase and a header of 8, and both writers must have
 * succeeded.
 * Every wait is bounded (alarm in the writers, a bounded reap). Exit: 0 pass, 1 fail.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rdlm.h>

#include "fenced_file.h"

#define SETTLE_MS 300
#define LIMIT_S 20

static int stop_after_check;

rdlm_status_t __real_rdlm_fence_check(uint64_t *highest, uint64_t token);
rdlm_status_t __wrap_rdlm_fence_check(uint64_t *highest, uint64_t token);

/* The check as the library does it; then, in writer A, a stop right after it passed. */
rdlm_status_t __wrap_rdlm_fence_check(uint64_t *highest, uint64_t token)
{
    rdlm_status_t status = __real_rdlm_fence_check(highest, token);

    if (status == RDLM_OK && stop_after_check) {
        stop_after_check = 0;
        raise(SIGSTOP);
    }
    return status;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

/* A writer: writes `records` records with tokens token, token + 1, ... (one per
 * acquire, as the examples do) through its own open of the file (flock is per open),
 * the first one stopped after its check if stop. Exit 0 if every write succeeded. */
static pid_t writer(const char *path, uint64_t token, int id, int records, int stop)
{
    pid_t pid = fork();

    if (pid != 0) {
        return pid;
    }
    alarm(LIMIT_S);
    stop_after_check = stop;
    int fd = open(path, O_RDWR);

    if (fd < 0) {
        perror(path);
        _exit(1);
    }
    for (int i = 0; i < records; i++) {
        rdlm_status_t status = fenced_file_write(fd, token + (uint64_t)i, id);

        if (status != RDLM_OK) {
            fprintf(stderr, "writer %d: write %d: %s\n", id, i, rdlm_status_name(status));
            _exit(1);
        }
    }
    close(fd);
    _exit(0);
}

/* Exit status of pid (-1: a signal, or not ended within LIMIT_S: killed). */
static int reap(pid_t pid)
{
    int st;

    for (int i = 0; i < LIMIT_S * 100; i++) {
        if (waitpid(pid, &st, WNOHANG) == pid) {
            return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        }
        sleep_ms(10);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    return -1;
}

/* Wait (bounded) until pid is stopped; 1 if it is. */
static int wait_stopped(pid_t pid)
{
    int st;

    for (int i = 0; i < LIMIT_S * 100; i++) {
        pid_t r = waitpid(pid, &st, WUNTRACED | WNOHANG);

        if (r == pid) {
            return WIFSTOPPED(st);
        }
        sleep_ms(10);
    }
    return 0;
}

int main(void)
{
    char path[64];
    uint64_t header = 0;
    pid_t a, b;
    int a_rc, b_rc, increasing = 0, fd;
    long records;

    snprintf(path, sizeof(path), "/tmp/rdlm-fenced-file-test-%d", (int)getpid());
    if (fenced_file_create(path) != 0) {
        return 1;
    }
    a = writer(path, 5, 1, 1, 1);
    if (!wait_stopped(a)) {
        fprintf(stderr, "fenced_file_test: writer A did not stop after its check\n");
        kill(a, SIGKILL);
        reap(a);
        unlink(path);
        return 1;
    }
    b = writer(path, 6, 2, 3, 0);
    sleep_ms(SETTLE_MS); /* B writes now, or waits for A's step */
    kill(a, SIGCONT);
    a_rc = reap(a);
    b_rc = reap(b);
    records = fenced_file_check(path, &increasing);
    fd = open(path, O_RDONLY);
    if (fd < 0 || pread(fd, &header, sizeof(header), 0) != (ssize_t)sizeof(header)) {
        header = 0;
    }
    if (fd >= 0) {
        close(fd);
    }
    unlink(path);
    printf("fenced_file_test: writer A %d, writer B %d, %ld records, increasing %d, "
           "header %" PRIu64 "\n",
           a_rc, b_rc, records, increasing, header);
    if (a_rc != 0 || b_rc != 0 || records != 4 || !increasing || header != 8) {
        fprintf(stderr, "fenced_file_test: FAILED (want: both 0, 4 records in token "
                        "order, header 8)\n");
        return 1;
    }
    printf("fenced_file_test: ok\n");
    return 0;
}
