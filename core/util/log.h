/*
 * Logging: RDLM_LOG=error|warn|info|debug|trace (default warn) selects what reaches
 * stderr. Log once, where an error is first decided; never on a hot path.
 */
#ifndef RDLM_LOG_H
#define RDLM_LOG_H

#include "shared.h"

typedef enum rdlm_log_level {
    RDLM_LOG_ERROR,
    RDLM_LOG_WARN,
    RDLM_LOG_INFO,
    RDLM_LOG_DEBUG,
    RDLM_LOG_TRACE,
    RDLM_LOG_LEVEL_COUNT
} rdlm_log_level_t;

/** Set the threshold; thread-safe (relaxed). */
void rdlm_log_set_level(rdlm_log_level_t level);

/** Current threshold. */
RDLM_SHARED rdlm_log_level_t rdlm_log_get_level(void);

/** Name of a level ("warn"); NULL if out of range. */
const char *rdlm_log_level_name(rdlm_log_level_t level);

/** Write one line "rdlm[pid] level file:line: message" to stderr. */
RDLM_SHARED void rdlm_log_write(rdlm_log_level_t level, const char *file, int line,
                                const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#define rdlm_log(level, ...)                                                               \
    do {                                                                                   \
        if ((level) <= rdlm_log_get_level())                                               \
            rdlm_log_write((level), __FILE__, __LINE__, __VA_ARGS__);                      \
    } while (0)
#define rdlm_error(...) rdlm_log(RDLM_LOG_ERROR, __VA_ARGS__)
#define rdlm_warn(...) rdlm_log(RDLM_LOG_WARN, __VA_ARGS__)
#define rdlm_info(...) rdlm_log(RDLM_LOG_INFO, __VA_ARGS__)
#define rdlm_debug(...) rdlm_log(RDLM_LOG_DEBUG, __VA_ARGS__)

#endif
