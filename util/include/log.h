/*
 * Logging: RDLM_LOG=error|warn|info|debug|trace (default warn) selects what is written,
 * RDLM_LOG_FILE where (default stderr). Log once, where an error is first decided; never
 * on a hot path.
 *
 * One line per call, written with one write(2) (so lines of concurrent threads and
 * processes never interleave), fields separated by one space:
 *
 *   rdlm 2026-12-02T03:55:12.345678Z node01 r3 1234/1240 warn ctx.c:57: message
 *
 * the tag "rdlm"; wall time (UTC, ISO 8601, microseconds); the short host name (read
 * once); the rank ("r3"; "r-" while unknown); pid/thread id (gettid); the level; the
 * source file:line; the message.
 *
 * The rank is the one last given to rdlm_log_set_rank, before that the launcher's
 * (OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK, SLURM_PROCID: the first set, read once).
 */
#ifndef RDLM_LOG_H
#define RDLM_LOG_H

#include <stddef.h>

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

/** Write one line (format above) to the log file or stderr. Thread-safe, one write(2);
 *  the message is cut at 511 bytes. errno is preserved. */
RDLM_SHARED void rdlm_log_write(rdlm_log_level_t level, const char *file, int line,
                                const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/** The rank the process's lines show from now on (the library calls it when a
 *  distributed context learns its rank); negative: unknown ("r-"). Thread-safe. */
RDLM_SHARED void rdlm_log_set_rank(int rank);

/** The rank lines show now: the last set, else the launcher's; -1 if unknown. */
int rdlm_log_get_rank(void);

/** The rank as text into buf[len] ("3", or "-" if unknown); returns buf. */
char *rdlm_log_rank_format(char *buf, size_t len);

/** The short host name lines show (up to the first '.', read once; "-" if unknown). */
const char *rdlm_log_host(void);

/**
 * Expand an RDLM_LOG_FILE pattern into out[len]: %h the short host name, %r the rank
 * as rdlm_log_get_rank() now ("-" if unknown), %p the pid, %% a '%'. Returns 1, or 0
 * (out undefined) if the pattern holds another '%' sequence or does not fit.
 */
int rdlm_log_file_expand(const char *pattern, char *out, size_t len);

/**
 * Send the lines from now on to the file pattern names (expanded now, opened
 * O_APPEND|O_CREAT|O_CLOEXEC with mode 0600). Only the first call with a non-empty
 * pattern acts; later calls do nothing. If the file cannot be opened, one error line
 * on stderr names RDLM_LOG_FILE, the path and the reason, and lines stay on stderr.
 * Thread-safe; returns nothing (the fallback is stderr).
 */
void rdlm_log_open_file(const char *pattern);

/** Where lines go: the log file's descriptor, else STDERR_FILENO. */
int rdlm_log_fd(void);

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
