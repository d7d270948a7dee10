/* Line-oriented logging: levels and the line (see log.h). */
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "atomics.h"

static _Atomic int rdlm_log_threshold = RDLM_LOG_WARN;

static const char *const rdlm_log_names[RDLM_LOG_LEVEL_COUNT] = {
    [RDLM_LOG_ERROR] = "error", [RDLM_LOG_WARN] = "warn",   [RDLM_LOG_INFO] = "info",
    [RDLM_LOG_DEBUG] = "debug", [RDLM_LOG_TRACE] = "trace",
};

void rdlm_log_set_level(rdlm_log_level_t level)
{
    rdlm_store(&rdlm_log_threshold, (int)level, RDLM_RELAXED);
}

rdlm_log_level_t rdlm_log_get_level(void)
{
    return (rdlm_log_level_t)rdlm_load(&rdlm_log_threshold, RDLM_RELAXED);
}

const char *rdlm_log_level_name(rdlm_log_level_t level)
{
    return ((unsigned)level < RDLM_LOG_LEVEL_COUNT) ? rdlm_log_names[level] : NULL;
}

/* The fields before the message, "rdlm <time> <host> r<rank> <pid>/<tid> <level>
 * <file>:<line>: ", into buf[len]; their length (at most len - 1). */
static size_t rdlm_log_prefix(char *buf, size_t len, rdlm_log_level_t level,
                              const char *file, int line)
{
    const char *base = strrchr(file, '/');
    char stamp[32], rank[16];
    struct timespec now;
    struct tm utc;
    int n;

    clock_gettime(CLOCK_REALTIME, &now);
    gmtime_r(&now.tv_sec, &utc);
    strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &utc);
    n = snprintf(buf, len, "rdlm %s.%06ldZ %s r%s %d/%d %s %s:%d: ", stamp,
                 now.tv_nsec / 1000, rdlm_log_host(),
                 rdlm_log_rank_format(rank, sizeof(rank)), (int)getpid(), (int)gettid(),
                 rdlm_log_level_name(level), base ? base + 1 : file, line);
    return n < 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1;
}

/* All of buf[len] to where lines go, retrying what a signal interrupted. */
static void rdlm_log_emit(const char *buf, size_t len)
{
    int fd = rdlm_log_fd();

    while (len > 0) {
        ssize_t done = write(fd, buf, len);

        if (done < 0 && errno == EINTR) {
            continue;
        }
        if (done <= 0) {
            return; /* nowhere left to say so */
        }
        buf += done;
        len -= (size_t)done;
    }
}

void rdlm_log_write(rdlm_log_level_t level, const char *file, int line, const char *fmt,
                    ...)
{
    enum { MSG_MAX = 512, PREFIX_MAX = 256 };
    char buf[PREFIX_MAX + MSG_MAX];
    int saved_errno = errno;
    size_t n = rdlm_log_prefix(buf, PREFIX_MAX, level, file, line);
    va_list ap;
    int msg_len;

    va_start(ap, fmt);
    msg_len = vsnprintf(buf + n, MSG_MAX, fmt, ap);
    va_end(ap);
    n += msg_len < 0 ? 0 : msg_len < MSG_MAX ? (size_t)msg_len : MSG_MAX - 1;
    buf[n++] = '\n';
    /* One write per line, so that lines of concurrent threads and processes (on an
     * O_APPEND file, or a pipe: a line is shorter than PIPE_BUF) do not interleave. */
    rdlm_log_emit(buf, n);
    errno = saved_errno;
}
