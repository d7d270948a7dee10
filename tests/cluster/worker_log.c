/* The lease worker's JSON-lines history (see worker_log.h). */
#include "worker_log.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int log_fd = -1;
static const char *log_client = "";
static _Atomic uint64_t log_session;

int worker_log_open(const char *path, const char *client)
{
    log_client = client;
    if (path == NULL) {
        return 0;
    }
    log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd < 0) {
        perror(path);
        return -1;
    }
    return 0;
}

void worker_log_set_session(uint64_t session)
{
    atomic_store_explicit(&log_session, session, memory_order_relaxed);
}

uint64_t worker_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void log_write(int fd, const char *line, size_t len)
{
    ssize_t n;

    do {
        n = write(fd, line, len);
    } while (n < 0 && errno == EINTR);
}

void worker_log(uint64_t t_ns, const char *op, const char *extra_fmt, ...)
{
    char line[1024];
    size_t n;
    int k = snprintf(
        line, sizeof(line),
        "{\"t_ns\":%" PRIu64 ",\"client\":\"%s\",\"session\":%" PRIu64 ",\"op\":\"%s\"",
        t_ns, log_client, atomic_load_explicit(&log_session, memory_order_relaxed), op);

    n = k < 0 ? 0 : (size_t)k;
    if (extra_fmt != NULL && n < sizeof(line)) {
        va_list ap;

        va_start(ap, extra_fmt);
        k = vsnprintf(line + n, sizeof(line) - n, extra_fmt, ap);
        va_end(ap);
        n += k < 0 ? 0 : (size_t)k;
    }
    if (n > sizeof(line) - 3) {
        n = sizeof(line) - 3; /* cut: the checkers report the broken line */
    }
    memcpy(line + n, "}\n", 2);
    n += 2;
    log_write(STDOUT_FILENO, line, n);
    if (log_fd >= 0) {
        log_write(log_fd, line, n);
    }
}
