/*
 * Process, time and shared-memory helpers for the stress and crash tests; see
 * stress_util.h.
 */
#include "stress_util.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

uint64_t stress_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * STRESS_NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

void stress_sleep_ns(uint64_t ns)
{
    struct timespec ts = {
        .tv_sec = (time_t)(ns / STRESS_NSEC_PER_SEC),
        .tv_nsec = (long)(ns % STRESS_NSEC_PER_SEC),
    };

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

void *stress_shared_alloc(size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

    return p == MAP_FAILED ? NULL : p;
}

void stress_shared_free(void *p, size_t size)
{
    if (p != NULL) {
        munmap(p, size);
    }
}

void stress_job_name(char *buf, size_t size, const char *what)
{
    char pid[16];
    size_t room;

    snprintf(pid, sizeof(pid), "%ld", (long)getpid());
    /* "t-" + what + "-" + pid must fit in 32 bytes. */
    room = 32 - 3 - strlen(pid);
    snprintf(buf, size, "t-%.*s-%s", (int)room, what, pid);
}

void stress_segment_path(char *buf, size_t size, const char *job)
{
    snprintf(buf, size, "/dev/shm/rdlm-%lu/%s.seg", (unsigned long)geteuid(), job);
}

void stress_segment_cleanup(const char *job)
{
    char path[128];
    char lock_path[160];

    stress_segment_path(path, sizeof(path), job);
    snprintf(lock_path, sizeof(lock_path), "/dev/shm/rdlm-%lu/%s.lock",
             (unsigned long)geteuid(), job);
    unlink(path);
    unlink(lock_path);
}

pid_t stress_fork(int (*fn)(void *arg), void *arg)
{
    pid_t parent = getpid();
    pid_t pid;

    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid != 0) {
        return pid;
    }
    /* Child: never outlive the test driver. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) {
        _exit(99);
    }
    _exit(fn(arg));
}

int stress_wait_children(pid_t *pids, int *statuses, int n, uint64_t deadline_ns)
{
    int remaining = 0;
    int killed = 0;

    for (int i = 0; i < n; i++) {
        remaining += pids[i] > 0;
    }
    while (remaining > 0 && stress_now_ns() < deadline_ns) {
        for (int i = 0; i < n; i++) {
            int status;

            if (pids[i] <= 0) {
                continue;
            }
            if (waitpid(pids[i], &status, WNOHANG) == pids[i]) {
                statuses[i] = status;
                pids[i] = 0;
                remaining--;
            }
        }
        if (remaining > 0) {
            stress_sleep_ns(2 * STRESS_NSEC_PER_MSEC);
        }
    }
    for (int i = 0; i < n; i++) {
        if (pids[i] > 0) {
            kill(pids[i], SIGKILL);
            waitpid(pids[i], &statuses[i], 0);
            pids[i] = 0;
            killed++;
        }
    }
    return killed;
}

void stress_kill_reap(pid_t pid)
{
    if (pid > 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
}

int stress_exited_ok(int status)
{
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int stress_reap_all(pid_t *pids, int n, unsigned limit_s)
{
    int statuses[n], failed = 0;

    if (stress_wait_children(pids, statuses, n,
                             stress_now_ns() + limit_s * STRESS_NSEC_PER_SEC) != 0) {
        fprintf(stderr, "FAILED: processes still running after %u s\n", limit_s);
        failed = 1;
    }
    for (int i = 0; i < n; i++) {
        char buf[32];

        if (!stress_exited_ok(statuses[i])) {
            fprintf(stderr, "FAILED: process %d: %s\n", i,
                    stress_status_text(statuses[i], buf, sizeof(buf)));
            failed = 1;
        }
    }
    return failed;
}

const char *stress_status_text(int status, char *buf, size_t size)
{
    if (WIFEXITED(status)) {
        snprintf(buf, size, "exit %d", WEXITSTATUS(status));
    } else if (WIFSIGNALED(status)) {
        snprintf(buf, size, "signal %d", WTERMSIG(status));
    } else {
        snprintf(buf, size, "status 0x%x", (unsigned)status);
    }
    return buf;
}

void stress_cpu_pause(unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#else
        __asm__ __volatile__("" ::: "memory");
#endif
    }
    __asm__ __volatile__("" ::: "memory");
}

uint64_t stress_env_u64(const char *name, uint64_t dflt)
{
    const char *s = getenv(name);
    char *end;
    unsigned long long v;

    if (s == NULL || *s == '\0') {
        return dflt;
    }
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0') {
        fprintf(stderr, "ignoring %s=%s (not a number)\n", name, s);
        return dflt;
    }
    return v;
}
