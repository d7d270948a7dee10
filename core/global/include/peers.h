/*
 * The processes of a distributed context that share this kernel and PID namespace,
 * and whether one of them is gone: how a waiter learns that a same-host process ahead
 * of it died when the transport cannot tell. Over shared memory (UCX's posix, sysv,
 * cma: its default on one host) a dead process's words stay mapped and keep
 * answering, and UCX watches no such endpoint (RDLM_PEER_FAILURE=auto), so without
 * this a waiter behind a dead holder on the same host waited forever, silently.
 *
 * Identity is (pid, start time), as in the on-node layer (core/local/include/proc.h), never
 * a bare pid; "same host" is the same boot id and PID namespace, so a pid means the same
 * process on both sides.
 */
#ifndef RDLM_GLOBAL_PEERS_H
#define RDLM_GLOBAL_PEERS_H

#include <stdint.h>

#include "atomics.h"
#include "rdlm.h"

/* What each process tells the others at create (in the hello). */
typedef struct rdlm_global_procid {
    char boot[40];       /* /proc/sys/kernel/random/boot_id */
    uint64_t pid_ns;     /* inode of /proc/self/ns/pid; 0 if unknown */
    uint64_t start_time; /* rdlm_proc_start_time */
    int32_t pid;
    uint32_t pad;
} rdlm_global_procid_t;

/* Per rank: pid 0 for a process this one cannot watch (another host or namespace,
 * or itself). */
typedef struct rdlm_global_proc {
    int32_t pid;
    rdlm_atomic_u32_t gone; /* sticky */
    uint64_t start_time;
} rdlm_global_proc_t;

/** This process's identity. */
void rdlm_global_procid_self(rdlm_global_procid_t *id_p);

/** The table of size ranks from every rank's identity (all, by rank), as seen by
 *  rank self; malloc'd (NULL: no memory, logged). */
rdlm_global_proc_t *rdlm_global_procs_new(const rdlm_global_procid_t *all, uint32_t size,
                                          uint32_t self);

/** 1 if rank's process shares this host and is gone (sticky; a kill(0) and a /proc
 *  read until then: call on slow paths only), else 0. */
int rdlm_global_proc_gone(rdlm_global_proc_t *procs, uint32_t rank);

#endif
