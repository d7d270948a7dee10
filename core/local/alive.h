/*
 * Liveness of the processes in a segment's slots, cheaply enough for a lock's
 * hand-off path. The first check of a slot's process (pid, start time) opens a pidfd
 * for it and confirms the start time in /proc, so the pidfd names that process and not
 * a later one with its pid; later checks poll the pidfd, which is readable once the
 * process ended (a zombie included). That is one system call where rdlm_proc_alive
 * makes four (kill, and open, read, close of /proc/<pid>/stat): 0.6 against 8 us on
 * the 2-core VMs of this project. Where pidfd_open is refused (a kernel before 5.3, a
 * seccomp filter, no descriptors left) a check is rdlm_proc_alive. A cache keeps at
 * most a budget of descriptors (rdlm_alive_fd_budget: the application's own files
 * come first); slots checked once the budget is spent read /proc.
 */
#ifndef RDLM_ALIVE_H
#define RDLM_ALIVE_H

#include <stdint.h>
#include <sys/types.h>

/** A process's cache of its segment's slots' pidfds. */
typedef struct rdlm_alive rdlm_alive_t;

/** How many pidfds a process's cache may keep: 64, or a sixteenth of the soft limit
 *  on open files (RLIMIT_NOFILE) where that is less. */
uint32_t rdlm_alive_fd_budget(void);

/** A cache for slots 0..slots-1 keeping at most max_fds pidfds; NULL when out of
 *  memory (checks then read /proc). */
rdlm_alive_t *rdlm_alive_create(uint32_t slots, uint32_t max_fds);

/** Close its pidfds and free it; NULL is ignored. */
void rdlm_alive_destroy(rdlm_alive_t *a);

/** 1 if the process (pid, start_time) of slot is alive, as rdlm_proc_alive says, but
 *  by its pidfd after the first check. a may be NULL (rdlm_proc_alive). Thread-safe. */
int rdlm_alive_check(rdlm_alive_t *a, uint32_t slot, pid_t pid, uint64_t start_time);

#endif
