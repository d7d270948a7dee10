/*
 * Process identity and liveness. A process is named by (pid, start time), never by a
 * bare pid: the kernel reuses pids, start times differ.
 */
#ifndef RDLM_PROC_H
#define RDLM_PROC_H

#include <stdint.h>
#include <sys/types.h>

/** Start time of pid in clock ticks since boot (/proc/pid/stat field 22); 0 if the
 *  process does not exist or cannot be read. */
uint64_t rdlm_proc_start_time(pid_t pid);

/** 1 if pid exists and started at start_time. Costs a kill(0) and a /proc read (8 us
 *  here): call only on slow paths; a segment's slots have alive.h. */
int rdlm_proc_alive(pid_t pid, uint64_t start_time);

/** A random 64-bit value from getrandom(); never 0. */
uint64_t rdlm_proc_random_id(void);

#endif
