/*
 * Blocking, deadline-bounded TCP connections to authority replicas (see conn.h).
 */
#include "conn.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "resolve.h"

/* Milliseconds to poll for before deadline, rounded up; 0 once it passed. */
static int rdlm_lease_conn_ms_left(uint64_t deadline)
{
    uint64_t now = rdlm_clock_now_ns(), ms;

    if (now >= deadline)
        return 0;
    ms = (deadline - now + 999999) / 1000000;
    return ms > 60000 ? 60000 : (int)ms;
}

/* Wait for events on fd until deadline. */
static rdlm_status_t rdlm_lease_conn_poll(int fd, short events, uint64_t deadline)
{
    for (;;) {
        struct pollfd p = {.fd = fd, .events = events};
        int tmo = rdlm_lease_conn_ms_left(deadline), n;

        if (tmo == 0)
            return RDLM_ERR_TIMEOUT;
        n = poll(&p, 1, tmo);
        if (n > 0)
            return RDLM_OK;
        if (n < 0 && errno != EINTR) {
            rdlm_error("lease conn: poll: %s", strerror(errno));
            return RDLM_ERR_IO;
        }
    }
}

/* A failed connect, send or receive: errno values a dead or absent peer produces. */
static rdlm_status_t rdlm_lease_conn_failed(const char *what, int err)
{
    switch (err) {
    case ECONNREFUSED:
    case ECONNRESET:
    case ECONNABORTED:
    case EPIPE:
    case ENETUNREACH:
    case EHOSTUNREACH:
    case ETIMEDOUT:
    case ENOTCONN:
        rdlm_debug("lease conn: %s: %s", what, strerror(err));
        return RDLM_ERR_UNAVAILABLE;
    default:
        rdlm_error("lease conn: %s: %s", what, strerror(err));
        return RDLM_ERR_IO;
    }
}

static rdlm_status_t rdlm_lease_conn_send_all(int fd, const uint8_t *p, size_t len,
                                              uint64_t deadline)
{
    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
            rdlm_status_t st = rdlm_lease_conn_poll(fd, POLLOUT, deadline);
            if (st != RDLM_OK)
                return st;
        } else {
            return rdlm_lease_conn_failed("send", errno);
        }
    }
    return RDLM_OK;
}

static rdlm_status_t rdlm_lease_conn_recv_all(int fd, uint8_t *p, size_t len,
                                              uint64_t deadline)
{
    while (len > 0) {
        ssize_t n = recv(fd, p, len, 0);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
        } else if (n == 0) {
            rdlm_debug("lease conn: closed by the peer");
            return RDLM_ERR_UNAVAILABLE;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
            rdlm_status_t st = rdlm_lease_conn_poll(fd, POLLIN, deadline);
            if (st != RDLM_OK)
                return st;
        } else {
            return rdlm_lease_conn_failed("recv", errno);
        }
    }
    return RDLM_OK;
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
    int fd, one = 1, err = 0;
    socklen_t elen = sizeof(err);

    if (!rdlm_config_hostport_parse(addr, host, &port)) {
        rdlm_error("lease conn: '%s' is not host:port", addr);
        return RDLM_ERR_INVALID_ARG;
    }
    if (rdlm_addr_resolve("lease conn", host, port, RDLM_LOG_DEBUG, &sa) != RDLM_OK) {
        errno = EHOSTUNREACH; /* conn.h */
        return RDLM_ERR_UNAVAILABLE; /* like a replica that is down (checked at open) */
    }
    fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        rdlm_error("lease conn: socket: %s", strerror(errno));
        return RDLM_ERR_IO;
    }
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        if (errno != EINPROGRESS) {
            err = errno;
            status = rdlm_lease_conn_failed(addr, err);
            goto err_close;
        }
        status = rdlm_lease_conn_poll(fd, POLLOUT, deadline);
        if (status != RDLM_OK)
            goto err_close;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0)
            err = errno;
        if (err != 0) {
            status = rdlm_lease_conn_failed(addr, err);
            goto err_close;
        }
    }
    *fd_p = fd;
    return RDLM_OK;

err_close:
    close(fd);
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
    return rdlm_lease_conn_poll(fd, POLLIN, deadline);
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
