/*
 * Where an in-job authority's replica listens (job_authority_addr.c): an IPv4 address
 * of this host, and TCP ports held for the replica from the moment their numbers are
 * known until libuv binds them.
 *
 * A reservation is a socket bound to (ip, 0) without SO_REUSEADDR, so the kernel
 * picks a port no other socket uses; SO_REUSEADDR is then set on it and it stays
 * bound, never listening. While it is open no other bind() and no outgoing connection
 * gets that port, but libuv's bind (which sets SO_REUSEADDR) and listen on the same
 * (ip, port) succeed: on Linux, sockets that all set SO_REUSEADDR share a port while
 * none of the others listens. So the replicas exchange their addresses before any of
 * them starts, with no window in which another process could take a port.
 */
#ifndef RDLM_LEASE_JOB_AUTHORITY_ADDR_H
#define RDLM_LEASE_JOB_AUTHORITY_ADDR_H

#include <netinet/in.h>

#include <rdlm/status.h>

#include "config.h"

/** A reserved port. */
typedef struct rdlm_lease_port {
    int fd;                       /**< the reservation, -1 once released */
    char addr[RDLM_ADDR_MAX + 1]; /**< "a.b.c.d:port" */
} rdlm_lease_port_t;

/**
 * This host's address for net (RDLM_JOB_AUTHORITY_NET syntax, config.h): the first
 * address, in getifaddrs order, of an up interface inside net; net "": the first one
 * of an up interface other than loopback, else 127.0.0.1. Written dotted into ip.
 * RDLM_ERR_BAD_CONFIG if no up interface has an address inside net, RDLM_ERR_IO if
 * the interfaces cannot be listed (both logged).
 */
rdlm_status_t rdlm_lease_host_ip(const char *net, char ip[INET_ADDRSTRLEN]);

/** Reserve a free port on ip (an address of this host), as above. RDLM_ERR_IO,
 *  RDLM_ERR_INVALID_ARG (ip is not a.b.c.d); logged. */
rdlm_status_t rdlm_lease_port_reserve(const char *ip, rdlm_lease_port_t *port_p);

/** Give the reservation up (once libuv bound the port, or to abandon it). Idempotent. */
void rdlm_lease_port_release(rdlm_lease_port_t *port);

#endif
