/*
 * A blocking TCP connection to one authority replica's client port (conn.c), every
 * step bounded by an absolute deadline in rdlm_clock_now_ns() time. Frames are those
 * of wire.h: one header, then a payload whose length is checked before it is read.
 * The socket is non-blocking underneath; waits are poll()s cut at the deadline.
 *
 * Results of every function taking a deadline:
 *   RDLM_OK
 *   RDLM_ERR_TIMEOUT      the deadline passed first
 *   RDLM_ERR_UNAVAILABLE  refused, unreachable, reset or closed by the peer
 *   RDLM_ERR_PROTOCOL     a received header is not a valid frame of the expected kind
 *   RDLM_ERR_IO           a system call failed otherwise (logged)
 * Connection failures are logged at debug only: the caller decides whether they are
 * errors (a client looking for the leader expects refusals).
 *
 * Addresses are "host:port", host an IPv4 address or a name looked up at each connect
 * (rdlm_config_hostport_parse, rdlm_addr_resolve); an authority is a list of up to
 * RDLM_LEASE_ADDRS_MAX of them, comma-separated.
 */
#ifndef RDLM_LEASE_CONN_H
#define RDLM_LEASE_CONN_H

#include <stdint.h>

#include <rdlm/status.h>

#include "config.h"
#include "wire.h"

/** Most replicas an authority address list names. */
#define RDLM_LEASE_ADDRS_MAX RDLM_ADDRS_COUNT

typedef struct rdlm_lease_addrs {
    unsigned count;
    char addr[RDLM_LEASE_ADDRS_MAX][RDLM_ADDR_MAX + 1];
} rdlm_lease_addrs_t;

/** Parse "a:p[,b:p...]" into *addrs_p (rdlm_config_addrs_parse). RDLM_ERR_INVALID_ARG
 *  (logged) on an empty list, an entry that is not "host:port", or more than
 *  RDLM_LEASE_ADDRS_MAX entries; *addrs_p is then unspecified. */
rdlm_status_t rdlm_lease_addrs_parse(const char *text, rdlm_lease_addrs_t *addrs_p);

/** Look up every host of addrs (a parsed list) once, warning about each name that does
 *  not resolve. RDLM_OK if one resolves, else the first rdlm_addr_resolve status: a
 *  session whose authority cannot be reached by any name fails at once. */
rdlm_status_t rdlm_lease_addrs_check(const rdlm_lease_addrs_t *addrs);

/** Connect to addr ("host:port") before deadline; *fd_p is a non-blocking socket
 *  with TCP_NODELAY on success. RDLM_ERR_INVALID_ARG if addr does not parse;
 *  RDLM_ERR_UNAVAILABLE also if its host name does not resolve (logged at debug). On
 *  failure errno is the connection's error (ECONNREFUSED, EHOSTUNREACH, ...;
 *  EHOSTUNREACH for a name that does not resolve), 0 when the deadline passed first. */
rdlm_status_t rdlm_lease_conn_open(const char *addr, uint64_t deadline, int *fd_p);

/** Close a connection (fd < 0: nothing). */
void rdlm_lease_conn_close(int fd);

/** Send one frame of kind with len (<= RDLM_WIRE_MAX_PAYLOAD) payload bytes. */
rdlm_status_t rdlm_lease_conn_send(int fd, rdlm_wire_kind_t kind, const uint8_t *payload,
                                   uint32_t len, uint64_t deadline);

/** Wait until fd has bytes (or EOF) to read. RDLM_OK or RDLM_ERR_TIMEOUT/_IO; reads
 *  nothing, so a caller can wait in slices and re-check its own conditions. */
rdlm_status_t rdlm_lease_conn_wait(int fd, uint64_t deadline);

/** Receive one frame into buf: *kind_p is its kind, *len_p its payload length. The
 *  header is checked (rdlm_wire_header_decode_any) before any payload byte is read. */
rdlm_status_t rdlm_lease_conn_recv_any(int fd, uint8_t buf[RDLM_WIRE_MAX_PAYLOAD],
                                       rdlm_wire_kind_t *kind_p, uint32_t *len_p,
                                       uint64_t deadline);

/** Receive one frame of kind expect (a header of another kind: RDLM_ERR_PROTOCOL,
 *  logged, before its payload is read). */
rdlm_status_t rdlm_lease_conn_recv(int fd, rdlm_wire_kind_t expect,
                                   uint8_t buf[RDLM_WIRE_MAX_PAYLOAD], uint32_t *len_p,
                                   uint64_t deadline);

#endif
