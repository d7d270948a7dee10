/*
 * libraft's TCP transport, made safe for several replicas in one process and for a
 * Raft port that strangers can reach (tcp.c).
 *
 * Why
 *   raft_uv_tcp 0.15 splits "host:port" with strtok(3) (uvIpParse) each time it
 *   listens or connects. strtok keeps its position in one static pointer per process,
 *   so two replicas whose loops run on different threads (an embedded authority beside
 *   another, or the tests' clusters) can parse each other's address: ThreadSanitizer
 *   reports it, and a connect can go to the wrong port. This wrapper makes every
 *   connect of every transport made here hold one process-wide mutex while libraft
 *   parses.
 *   Its listener also allocated whatever address length a connecting peer announced
 *   in the handshake (1 GiB: 300 MB of RSS in about a second, per connection), and
 *   accepted anyone who reached the port.
 *
 * Listening
 *   The listener is this file's own: it binds the address libraft's init was given,
 *   closes at once a connection whose source IPv4 address is not one of the allowed
 *   (rdlm_lease_tcp_allow; none set: any), reads the handshake libraft's connect
 *   sends (u64 protocol 1 | u64 server id | u64 address length | address, the length
 *   at most RDLM_LEASE_TCP_ADDR_MAX, the address NUL-terminated) into a fixed buffer,
 *   and then hands the stream to libraft's accept callback, exactly where libraft's
 *   own listener would. At most RDLM_LEASE_TCP_HANDSHAKES_MAX handshakes are read at
 *   once: a new connection beyond closes the oldest (a replica's takes microseconds,
 *   so only connections that stall theirs are closed). A refused connection is logged
 *   once (warn, at most one a second per transport; the rest at debug).
 *   The messages after the handshake go through a relay (tcp_relay.h) that caps
 *   every length in them before libraft reads it; a message beyond a cap closes the
 *   connection with a line like a refusal's. The transport's close closes the relays
 *   too and waits for them.
 */
#ifndef RDLM_LEASE_TCP_H
#define RDLM_LEASE_TCP_H

#include <stdint.h>

#include <raft.h>
#include <raft/uv.h>

#include <rdlm/status.h>

#include "config.h"
#include "tcp_relay.h"

/** Longest handshake address (libraft pads "host:port" + NUL to 8 bytes). */
#define RDLM_LEASE_TCP_ADDR_MAX ((RDLM_ADDR_MAX + 1 + 7) / 8 * 8)
/** Most handshakes read at once: a new connection beyond closes the oldest. */
#define RDLM_LEASE_TCP_HANDSHAKES_MAX 16
/** Most source addresses rdlm_lease_tcp_allow takes. */
#define RDLM_LEASE_TCP_ALLOW_MAX RDLM_ADDRS_COUNT

typedef struct rdlm_lease_tcp_incoming rdlm_lease_tcp_incoming_t;

typedef struct rdlm_lease_tcp {
    struct raft_uv_transport uv; /* what raft_uv_init takes; first member */
    /* libraft's own */
    int (*init)(struct raft_uv_transport *t, raft_id id, const char *address);
    int (*connect)(struct raft_uv_transport *t, struct raft_uv_connect *req, raft_id id,
                   const char *address, raft_uv_connect_cb cb);
    void (*close)(struct raft_uv_transport *t, raft_uv_transport_close_cb cb);
    /* the listener */
    struct uv_loop_s *loop;
    uv_tcp_t listener;
    raft_uv_accept_cb accept_cb;
    raft_uv_transport_close_cb close_cb;
    char address[RDLM_ADDR_MAX + 1];
    uint32_t allowed[RDLM_LEASE_TCP_ALLOW_MAX]; /* network order */
    unsigned n_allowed;                         /* 0: any source */
    rdlm_lease_tcp_incoming_t *incoming;        /* handshakes being read, newest first */
    unsigned n_incoming;
    /* connections handed to libraft, through their relays */
    rdlm_lease_relay_t *relays;
    unsigned closes_left; /* handles it still waits for */
    uint64_t warned_at;   /* uv_now of the last warn line */
} rdlm_lease_tcp_t;

/* raft_uv_tcp_init on tcp->uv, then connect serialized and listen replaced as above.
 * Returns libraft's code (0 on success). Release with rdlm_lease_tcp_close. */
int rdlm_lease_tcp_init(rdlm_lease_tcp_t *tcp, struct uv_loop_s *loop);

/* Accept Raft connections only from the hosts of addrs ("host:port", names resolved
 * now), before listen. RDLM_ERR_INVALID_ARG (more than RDLM_LEASE_TCP_ALLOW_MAX, or
 * one that does not parse) or the resolver's status; logged. */
rdlm_status_t rdlm_lease_tcp_allow(rdlm_lease_tcp_t *tcp, const char *const *addrs,
                                   unsigned n);

/* raft_uv_tcp_close on tcp->uv (after the transport's close callback ran). */
void rdlm_lease_tcp_close(rdlm_lease_tcp_t *tcp);

#endif
