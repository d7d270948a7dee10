/*
 * Bootstrap: the out-of-band collectives a transport needs to wire itself up (worker
 * address exchange at open, a barrier at destroy), given as callbacks like UCC's OOB.
 * Implementations: the standalone TCP rendezvous here (bootstrap_tcp.c), and the MPI
 * one in mpi/bootstrap_mpi.c (PMPI_* only, non-blocking collectives that call idle).
 *
 * While a collective waits it calls idle (if not NULL) at least every millisecond, so
 * that the caller's transport keeps progressing: over UCX/TCP a peer's emulated
 * atomics on our memory complete only while we progress, and a barrier that blocked in
 * recv() would deadlock against them.
 */
#ifndef RDLM_TL_BOOTSTRAP_H
#define RDLM_TL_BOOTSTRAP_H

#include <stddef.h>
#include <stdint.h>

#include <rdlm/status.h>

#include "shared.h"
#include "sock.h"

/** Called while a collective waits (sock.h's idle callback): returns the number of
 *  events it handled (the bootstrap then polls again without sleeping), or a negative
 *  value when a process the collective needs is known to be dead: the collective then
 *  ends at once with RDLM_ERR_PEER_DEAD (it could only time out), and the bootstrap is
 *  out of step: later collectives fail at once with the same status. */
typedef rdlm_idle_func_t rdlm_tl_idle_func_t;
typedef rdlm_idle_t rdlm_tl_idle_t;

/** Every rank passes len bytes in send; recv (size * len bytes) receives rank r's
 *  block at r * len. Collective, blocking, bounded by the bootstrap's timeout
 *  (RDLM_ERR_TIMEOUT), RDLM_ERR_PEER_DEAD if a peer went away (or idle said so).
 *  After either, the bootstrap is out of step and every later collective fails at once
 *  with the status of the first failure. */
typedef rdlm_status_t (*rdlm_tl_allgather_func_t)(void *arg, const void *send, void *recv,
                                                  size_t len, const rdlm_tl_idle_t *idle);
/** Returns once every rank has entered. Same errors as allgather. */
typedef rdlm_status_t (*rdlm_tl_barrier_func_t)(void *arg, const rdlm_tl_idle_t *idle);

typedef struct rdlm_tl_bootstrap {
    uint32_t rank;
    uint32_t size;
    void *arg; /**< passed to the callbacks */
    rdlm_tl_allgather_func_t allgather;
    rdlm_tl_barrier_func_t barrier;
} rdlm_tl_bootstrap_t;

/* ---- the standalone TCP bootstrap ---------------------------------------------------- */

typedef struct rdlm_tl_boot_tcp rdlm_tl_boot_tcp_t;

typedef struct rdlm_tl_boot_tcp_params {
    uint32_t rank;
    uint32_t size;
    const char *host;    /**< rank 0's host: an IPv4 address or a name, resolved here
                              (rank 0 listens on every interface if a name); NULL:
                              127.0.0.1 */
    const char *what;    /**< names host in errors ("RDLM_RENDEZVOUS"); NULL: bootstrap */
    uint16_t port;       /**< rank 0 listens here (ignored with listen_fd >= 0) */
    int listen_fd;       /**< rank 0 only: an already listening socket, or -1 */
    uint32_t timeout_ms; /**< bound for connect-up and for every collective (0: 30000) */
} rdlm_tl_boot_tcp_params_t;

/**
 * Connect ranks 0..size-1: rank 0 accepts size-1 peers, the others connect to it
 * (retrying until the timeout). A peer that never shows up gives RDLM_ERR_TIMEOUT and
 * an error log naming the missing ranks; a host name that does not resolve gives
 * rdlm_addr_resolve's status at once (with size > 1 every rank, rank 0 included,
 * looks it up; a job of one process uses no address). On success
 * *boot_p is usable as a bootstrap through rdlm_tl_boot_tcp_get. Not thread-safe.
 */
RDLM_SHARED rdlm_status_t rdlm_tl_boot_tcp_create(const rdlm_tl_boot_tcp_params_t *params,
                                                  rdlm_tl_boot_tcp_t **boot_p);

/** The callback struct of a TCP bootstrap (valid until destroy). */
RDLM_SHARED const rdlm_tl_bootstrap_t *rdlm_tl_boot_tcp_get(const rdlm_tl_boot_tcp_t *boot);

/** Close the sockets and free; NULL is a no-op. */
RDLM_SHARED void rdlm_tl_boot_tcp_destroy(rdlm_tl_boot_tcp_t *boot);

/* ---- the relay bootstraps: a server and its clients, never waiting for each other -- */

/*
 * A server (rdlmd hosting lock homes) opens its context alone over a recording
 * bootstrap: rank 0 of 1, whose allgathers copy send to recv and keep each block. It
 * packs the records and hands them to clients by other means (the authority's client
 * port). A client opens its own context over a replaying bootstrap: rank 1 of 2,
 * whose allgather k gives the server's recorded block k (zero-padded to the client's
 * length) as rank 0's. Barriers return at once. So a client reaches the server's
 * registered memory, and the server never addresses a client: it only answers their
 * operations. Works for backends whose wire-up is an exchange of per-process
 * addresses (UCX), not for per-pair connections (verbs RC). Not thread-safe.
 */
typedef struct rdlm_tl_boot_relay rdlm_tl_boot_relay_t;

rdlm_status_t rdlm_tl_boot_record_create(rdlm_tl_boot_relay_t **relay_p);

/** Write the records (after the context opened) into buf: RDLM_ERR_NO_RESOURCE if
 *  cap bytes do not suffice; *len_p is the size used. */
rdlm_status_t rdlm_tl_boot_record_pack(const rdlm_tl_boot_relay_t *relay, void *buf,
                                       size_t cap, size_t *len_p);

/** A replaying bootstrap of len bytes of packed records; RDLM_ERR_PROTOCOL if they are
 *  malformed (nothing is kept then). A record that does not fit the client's
 *  wire-up makes the open fail with RDLM_ERR_PROTOCOL and an error log. */
rdlm_status_t rdlm_tl_boot_replay_create(const void *records, size_t len,
                                         rdlm_tl_boot_relay_t **relay_p);

/** The callback struct (valid until destroy). */
const rdlm_tl_bootstrap_t *rdlm_tl_boot_relay_get(const rdlm_tl_boot_relay_t *relay);

/** Free; NULL is a no-op. Destroy the context opened over it first. */
void rdlm_tl_boot_relay_destroy(rdlm_tl_boot_relay_t *relay);

#endif
