/* Line-oriented logging to stderr (see log.h). */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
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

void rdlm_log_write(rdlm_log_level_t level, const char *file, int line, const char *fmt,
                    ...)
{
    char msg[512];
    const char *base = strrchr(file, '/');
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    /* One fprintf per line so that lines of concurrent processes do not interleave. */
    fprintf(stderr, "rdlm[%d] %s %s:%d: %s\n", (int)getpid(), rdlm_log_level_name(level),
            base ? base + 1 : file, line, msg);
}
