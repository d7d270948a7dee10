/*
 * Helpers shared by the stress and crash tests: monotonic time, shared anonymous
 * mappings, job names, forking children that die with their parent, and waiting for
 * children with a deadline (stragglers are SIGKILLed, never waited for forever).
 *
 * Nothing here touches rdlm state; a child creates its own context after fork.
 */
#ifndef RDLM_STRESS_UTIL_H
#define RDLM_STRESS_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define STRESS_NSEC_PER_SEC 1000000000ull
#define STRESS_NSEC_PER_MSEC 1000000ull

/** CLOCK_MONOTONIC in nanoseconds (comparable across processes of the node). */
uint64_t stress_now_ns(void);

/** Sleep for ns nanoseconds (restarts on EINTR). */
void stress_sleep_ns(uint64_t ns);

/** A zeroed MAP_SHARED|MAP_ANONYMOUS mapping of size bytes, or NULL. */
void *stress_shared_alloc(size_t size);
void stress_shared_free(void *p, size_t size);

/** "t-<what>-<pid>" (pid of the calling process) into buf; job names are at most
 *  32 bytes, so what is truncated if needed. */
void stress_job_name(char *buf, size_t size, const char *what);

/** Path of the segment of job in the default directory /dev/shm/rdlm-<uid> (as
 *  docs/local-locks.md names it). */
void stress_segment_path(char *buf, size_t size, const char *job);

/** Remove a segment and its lock file left behind by a failed run. */
void stress_segment_cleanup(const char *job);

/**
 * fork(); in the child, arrange SIGKILL if the parent dies, then run fn(arg) and
 * _exit with its return value. Returns the child's pid in the parent, -1 on error.
 */
pid_t stress_fork(int (*fn)(void *arg), void *arg);

/**
 * Wait for the n children in pids until deadline_ns (CLOCK_MONOTONIC). Children
 * still running at the deadline are SIGKILLed and reaped. statuses[i] gets the
 * waitpid status; pids[i] is set to 0 once reaped. Returns the number of children
 * that had to be killed.
 */
int stress_wait_children(pid_t *pids, int *statuses, int n, uint64_t deadline_ns);

/**
 * stress_wait_children for limit_s seconds from now, then check that every child
 * exited with 0; each failure is printed ("FAILED: ..."). Returns 1 if any child ran
 * too long or did not exit with 0, else 0.
 */
int stress_reap_all(pid_t *pids, int n, unsigned limit_s);

/** Kill (SIGKILL) and reap one child; no-op if pid <= 0. */
void stress_kill_reap(pid_t pid);

/** 1 if the waitpid status is a normal exit with code 0. */
int stress_exited_ok(int status);

/** Human-readable waitpid status ("exit 3", "signal 9"). */
const char *stress_status_text(int status, char *buf, size_t size);

/** Busy-wait for about n pause instructions (a "tiny pause" inside a critical
 *  section, long enough to widen races, short enough not to yield the CPU). */
void stress_cpu_pause(unsigned n);

/** Parse a non-negative integer environment variable; dflt if unset or invalid. */
uint64_t stress_env_u64(const char *name, uint64_t dflt);

#endif
