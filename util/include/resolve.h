/*
 * Host names to IPv4 socket addresses, for every address a user configures
 * (RDLM_RENDEZVOUS, RDLM_AUTHORITY, rdlmd's client addresses). Names are looked up
 * when a connection is made, not when the configuration is read, so a name whose
 * address changed between jobs or restarts is followed.
 */
#ifndef RDLM_RESOLVE_H
#define RDLM_RESOLVE_H

#include <netinet/in.h>
#include <stdint.h>

#include <rdlm/status.h>

#include "log.h"

/**
 * Resolve host (an IPv4 address "a.b.c.d" or a host name) and port into *sa_p
 * (AF_INET, network order). An address is taken as is; a name through getaddrinfo
 * (AF_INET, its first answer). Blocking for as long as the system resolver takes
 * (/etc/hosts at once, DNS up to its own timeout); thread-safe. On failure logs one
 * line at level: "<what>: cannot resolve host '<host>': <reason>", and returns
 * RDLM_ERR_BAD_CONFIG (no such name, or no IPv4 address for it), RDLM_ERR_TIMEOUT (the
 * name server did not answer), RDLM_ERR_NO_MEMORY or RDLM_ERR_IO; *sa_p is then
 * untouched.
 */
rdlm_status_t rdlm_addr_resolve(const char *what, const char *host, uint16_t port,
                                rdlm_log_level_t level, struct sockaddr_in *sa_p);

/** 1 if host is an IPv4 address "a.b.c.d" (not a name). */
int rdlm_addr_is_ip(const char *host);

/**
 * This host's IPv4 addresses (network order) on up interfaces, at most max of them
 * into addrs: those of other interfaces first, in getifaddrs order, then loopback
 * ones. Returns how many, or RDLM_ERR_IO (logged) if the interfaces cannot be listed.
 * Thread-safe.
 */
rdlm_status_t rdlm_host_addrs(uint32_t *addrs, unsigned max, unsigned *n_p);

/** 1 if the IPv4 address a (network order) is a loopback one (127.0.0.0/8). */
int rdlm_addr_is_loopback(uint32_t a);

#endif
