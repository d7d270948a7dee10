/*
 * The lease worker's history (worker_log.c): one JSON object per line, written with
 * one write(2) to stdout and to the history file, so lines from the renewal thread
 * (lease_lost) never interleave with the main thread's. Every record carries
 *
 *   "t_ns"     CLOCK_MONOTONIC ns (comparable across the test's network namespaces:
 *              they share the machine's clock)
 *   "client"   the worker's name, "session" its authority session id (0 before open),
 *   "op"       what happened,
 *
 * then the fields the caller adds. What t_ns means per op is documented where the
 * record is written (lease_worker.c) and in checks.md.
 */
#ifndef RDLM_WORKER_LOG_H
#define RDLM_WORKER_LOG_H

#include <stdint.h>

/** Open the history file (NULL: stdout only). 0, or -1 with perror. */
int worker_log_open(const char *path, const char *client);

/** The session id put into every later record. */
void worker_log_set_session(uint64_t session);

/** CLOCK_MONOTONIC in ns. */
uint64_t worker_now_ns(void);

/**
 * Write one record stamped t_ns: {"t_ns":..,"client":..,"session":..,"op":op<extra>}
 * where extra is a printf-formatted tail of fields (",\"token\":%" PRIu64 ...), or
 * NULL. Thread-safe (one write(2) per line); the line is cut at 1 KiB.
 */
void worker_log(uint64_t t_ns, const char *op, const char *extra_fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
