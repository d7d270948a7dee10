/*
 * Blocking, deadline-bounded TCP connections to authority replicas (see conn.h).
 */
#include "conn.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "resolve.h"
#include "sock.h"

/* A socket step's status as the lease client says it (conn.h): a dead, absent or
 * unreachable replica is RDLM_ERR_UNAVAILABLE (debug: the caller tries another), any
 * other failure RDLM_ERR_IO (an error line). */
static rdlm_status_t rdlm_lease_conn_status(const char *what, rdlm_status_t st, int err)
{
    if (st == RDLM_ERR_PEER_DEAD) {
        rdlm_debug("lease conn: %s: %s", what,
                   err != 0 ? strerror(err) : "closed by the peer");
        return RDLM_ERR_UNAVAILABLE;
    }
    if (st == RDLM_ERR_IO) {
        rdlm_error("lease conn: %s: %s", what, strerror(err));
    }
    return st;
}

static rdlm_status_t rdlm_lease_conn_send_all(int fd, const uint8_t *p, size_t len,
                                              uint64_t deadline)
{
    int err = 0;
    rdlm_status_t st = rdlm_sock_send(fd, p, len, deadline, NULL, &err);

    return rdlm_lease_conn_status("send", st, err);
}

static rdlm_status_t rdlm_lease_conn_recv_all(int fd, uint8_t *p, size_t len,
                                              uint64_t deadline)
{
    int err = 0;
    rdlm_status_t st = rdlm_sock_recv(fd, p, len, deadline, NULL, &err);

    return rdlm_lease_conn_status("recv", st, err);
}

rdlm_status_t rdlm_lease_addrs_parse(const char *text, rdlm_lease_addrs_t *addrs_p)
{
    if (text == NULL || !rdlm_config_addrs_parse(text, addrs_p->addr, RDLM_LEASE_ADDRS_MAX,
                                                 &addrs_p->count)) {
        rdlm_error("lease: authority '%s' is not 1..%d comma-separated host:port",
                   text != NULL ? text : "(null)", RDLM_LEASE_ADDRS_MAX);
        return RDLM_ERR_INVALID_ARG;
    }
    return RDLM_OK;
}

rdlm_status_t rdlm_lease_addrs_check(const rdlm_lease_addrs_t *addrs)
{
    rdlm_status_t first = RDLM_OK;
    int any = 0;

    for (unsigned i = 0; i < addrs->count; i++) {
        char host[RDLM_HOST_MAX + 1];
        struct sockaddr_in sa;
        uint16_t port;
        rdlm_status_t st;

        (void)rdlm_config_hostport_parse(addrs->addr[i], host, &port); /* parsed */
        st = rdlm_addr_resolve("lease: authority", host, port, RDLM_LOG_WARN, &sa);
        any |= st == RDLM_OK;
        first = first != RDLM_OK ? first : st;
    }
    return any ? RDLM_OK : first;
}

rdlm_status_t rdlm_lease_conn_open(const char *addr, uint64_t deadline, int *fd_p)
{
    char host[RDLM_HOST_MAX + 1];
    struct sockaddr_in sa;
    rdlm_status_t status;
    uint16_t port;
    int err;

    if (!rdlm_config_hostport_parse(addr, host, &port)) {
        rdlm_error("lease conn: '%s' is not host:port", addr);
        return RDLM_ERR_INVALID_ARG;
    }
    if (rdlm_addr_resolve("lease conn", host, port, RDLM_LOG_DEBUG, &sa) != RDLM_OK) {
        errno = EHOSTUNREACH; /* conn.h */
        return RDLM_ERR_UNAVAILABLE; /* like a replica that is down (checked at open) */
    }
    status =
        rdlm_lease_conn_status(addr, rdlm_sock_connect(&sa, deadline, fd_p, &err), err);
    errno = err; /* the caller's: why the connection failed (conn.h) */
    return status;
}

void rdlm_lease_conn_close(int fd)
{
    if (fd >= 0)
        close(fd);
}

rdlm_status_t rdlm_lease_conn_send(int fd, rdlm_wire_kind_t kind, const uint8_t *payload,
                                   uint32_t len, uint64_t deadline)
{
    uint8_t frame[RDLM_WIRE_HEADER + RDLM_WIRE_MAX_PAYLOAD];

    if (len > RDLM_WIRE_MAX_PAYLOAD) {
        rdlm_error("lease conn: payload of %u bytes exceeds %u", len,
                   RDLM_WIRE_MAX_PAYLOAD);
        return RDLM_ERR_INVALID_ARG;
    }
    rdlm_wire_header_encode(frame, kind, len);
    if (len > 0)
        memcpy(frame + RDLM_WIRE_HEADER, payload, len);
    return rdlm_lease_conn_send_all(fd, frame, RDLM_WIRE_HEADER + (size_t)len, deadline);
}

rdlm_status_t rdlm_lease_conn_wait(int fd, uint64_t deadline)
{
    return rdlm_sock_wait(fd, POLLIN, deadline, NULL);
}

/* Receive one frame; expect 0 takes any kind, else a header of another kind is refused
 * before its payload is read. */
static rdlm_status_t rdlm_lease_conn_recv_frame(int fd, unsigned expect, uint8_t *buf,
                                                rdlm_wire_kind_t *kind_p, uint32_t *len_p,
                                                uint64_t deadline)
{
    uint8_t hdr[RDLM_WIRE_HEADER];
    uint32_t len;
    rdlm_status_t st;

    st = rdlm_lease_conn_recv_all(fd, hdr, sizeof(hdr), deadline);
    if (st != RDLM_OK)
        return st;
    if (rdlm_wire_header_decode_any(hdr, kind_p, &len) != RDLM_OK ||
        (expect != 0 && *kind_p != expect)) {
        rdlm_warn("lease conn: received a malformed or unexpected frame header");
        return RDLM_ERR_PROTOCOL;
    }
    st = rdlm_lease_conn_recv_all(fd, buf, len, deadline);
    if (st == RDLM_OK)
        *len_p = len;
    return st;
}

rdlm_status_t rdlm_lease_conn_recv_any(int fd, uint8_t buf[RDLM_WIRE_MAX_PAYLOAD],
                                       rdlm_wire_kind_t *kind_p, uint32_t *len_p,
                                       uint64_t deadline)
{
    return rdlm_lease_conn_recv_frame(fd, 0, buf, kind_p, len_p, deadline);
}

rdlm_status_t rdlm_lease_conn_recv(int fd, rdlm_wire_kind_t expect,
                                   uint8_t buf[RDLM_WIRE_MAX_PAYLOAD], uint32_t *len_p,
                                   uint64_t deadline)
{
    rdlm_wire_kind_t kind;

    return rdlm_lease_conn_recv_frame(fd, expect, buf, &kind, len_p, deadline);
}
