/*
 * The authority a job runs inside its ranks (core/api/ctx_authority.c,
 * RDLM_JOB_AUTHORITY): a lease-authority replica embedded in a process
 * (job_authority.c), the replica (replica.h) and its client port (server.h) on a
 * private libuv loop run by a thread of their own (the replica's progress thread).
 *
 *   rdlm_job_authority_create   reserve a Raft port and a client port on an address of
 *                               this host (job_authority_addr.h): the addresses the
 *                               other replicas need before any replica starts
 *   rdlm_job_authority_start    with every replica's addresses: data directory,
 *                               replica, client port (no authentication: keep the
 *                               ports on a private network), then the thread
 *   rdlm_job_authority_stop     stop (a leader hands leadership over first, up to one
 *                               election timeout), join, remove the data directory
 *   rdlm_job_authority_sweep    remove the data directories of replicas whose
 *                               processes ended without a stop
 *
 * The thread runs with every signal blocked: libuv writes to sockets without
 * MSG_NOSIGNAL, and a library must not change the process's SIGPIPE disposition.
 * Calls on one handle come from one thread at a time.
 */
#ifndef RDLM_LEASE_JOB_AUTHORITY_H
#define RDLM_LEASE_JOB_AUTHORITY_H

#include <rdlm/status.h>

#include "config.h"

typedef struct rdlm_job_authority rdlm_job_authority_t;

/** The addresses of one replica, as the replicas exchange them. */
typedef struct rdlm_job_authority_addrs {
    char raft[RDLM_ADDR_MAX + 1];   /**< "a.b.c.d:port" of its Raft port */
    char client[RDLM_ADDR_MAX + 1]; /**< "a.b.c.d:port" of its client port */
} rdlm_job_authority_addrs_t;

typedef struct rdlm_job_authority_params {
    const rdlm_job_authority_addrs_t *replicas; /**< all of them; replica i has id i + 1 */
    unsigned n_replicas;                        /**< 1..RDLM_ADDRS_COUNT */
    unsigned self;                /**< this one's index; its entry holds the addresses
                                       rdlm_job_authority_create gave */
    const char *data_dir;         /**< made 0700 (a stale one of this user's is emptied),
                                       removed by rdlm_job_authority_stop */
    unsigned election_timeout_ms; /**< > heartbeat_ms */
    unsigned heartbeat_ms;        /**< > 0 */
    unsigned max_clients;         /**< processes that will hold sessions: sessions and
                                       connections (two per process) are sized for them */
} rdlm_job_authority_params_t;

/**
 * Pick this host's address in net (rdlm_lease_host_ip) and reserve two ports there;
 * *addrs_p receives the addresses. Blocking (no network traffic). Errors (logged):
 * RDLM_ERR_BAD_CONFIG (no address in net), RDLM_ERR_IO, RDLM_ERR_NO_MEMORY.
 */
rdlm_status_t rdlm_job_authority_create(const char *net, rdlm_job_authority_t **h_p,
                                        rdlm_job_authority_addrs_t *addrs_p);

/**
 * Start the replica of h with the full configuration: make the data directory, start
 * the replica and its client port on the reserved ports, then the thread. Returns
 * once both ports listen (the replicas find each other and elect a leader on their
 * own). Errors (logged): RDLM_ERR_INVALID_ARG (params), RDLM_ERR_IO (data directory,
 * ports, libraft), RDLM_ERR_NO_MEMORY, RDLM_ERR_NO_RESOURCE (thread); nothing runs
 * then, and h still needs rdlm_job_authority_stop.
 */
rdlm_status_t rdlm_job_authority_start(rdlm_job_authority_t *h,
                                       const rdlm_job_authority_params_t *params);

/** The started replica's witness (witness.h): what it applied, for checks; NULL
 *  before rdlm_job_authority_start succeeded. */
struct rdlm_lease_witness *rdlm_job_authority_witness(rdlm_job_authority_t *h);

/** Stop the replica and its port if started (blocking: a leader first hands
 *  leadership over, at most one election timeout), join the thread, remove the data
 *  directory, release the ports, free. NULL is a no-op. */
void rdlm_job_authority_stop(rdlm_job_authority_t *h);

/** Remove, in parent, every data directory that a replica of an ended process left
 *  (killed, or its job aborted before rdlm_job_authority_stop): its name is prefix,
 *  then anything, then "-<pid>-<n>" (how core/api names them), it is this user's and
 *  carries the marker rdlm_job_authority_start writes, process pid is gone and no
 *  replica holds its lock file. Each removal is logged at info. Returns how many were
 *  removed (job_authority_dir.c). */
unsigned rdlm_job_authority_sweep(const char *parent, const char *prefix);

#endif
