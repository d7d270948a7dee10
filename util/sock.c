/* TCP socket steps of the bootstrap, the links and the lease client (sock.h). */
#include "sock.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"

/* Milliseconds to poll for before deadline, rounded up, at most 100; 0 once it passed. */
static int rdlm_sock_ms_left(uint64_t deadline)
{
    uint64_t now = rdlm_clock_now_ns();
    uint64_t ms;

    if (now >= deadline)
        return 0;
    ms = (deadline - now + 999999) / 1000000;
    return ms > 100 ? 100 : (int)ms;
}

rdlm_status_t rdlm_sock_wait(int fd, short events, uint64_t deadline,
                             const rdlm_idle_t *idle)
{
    for (;;) {
        struct pollfd p = {.fd = fd, .events = events};
        int busy = 0, n;

        if (idle != NULL && idle->func != NULL)
            busy = idle->func(idle->arg);
        if (busy < 0)
            return RDLM_ERR_PEER_DEAD;
        if (rdlm_clock_now_ns() >= deadline)
            return RDLM_ERR_TIMEOUT;
        if (idle != NULL && idle->func != NULL) {
            /* Come back soon: a peer's emulated atomic may be waiting for our
             * progress. 100 us sleeps, not a spin. */
            struct timespec ts = {0, busy ? 0 : 100000};
            n = ppoll(&p, 1, &ts, NULL);
        } else {
            n = poll(&p, 1, rdlm_sock_ms_left(deadline));
        }
        if (n > 0)
            return RDLM_OK;
        if (n < 0 && errno != EINTR) {
            rdlm_error("poll: %s", strerror(errno));
            return RDLM_ERR_IO;
        }
    }
}

rdlm_status_t rdlm_sock_err_status(int err)
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
        return RDLM_ERR_PEER_DEAD;
    default:
        return RDLM_ERR_IO;
    }
}

/* Move exactly len bytes: send them (sending) or receive them. */
static rdlm_status_t rdlm_sock_xfer(int fd, char *p, size_t len, int sending,
                                    uint64_t deadline, const rdlm_idle_t *idle, int *err_p)
{
    int err = 0;
    rdlm_status_t st = RDLM_OK;

    while (len > 0 && st == RDLM_OK) {
        ssize_t n = sending ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);

        if (n > 0) {
            p += n;
            len -= (size_t)n;
        } else if (n == 0) {
            st = RDLM_ERR_PEER_DEAD; /* recv: the other end closed */
        } else if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
            st = rdlm_sock_wait(fd, sending ? POLLOUT : POLLIN, deadline, idle);
        } else {
            err = errno;
            st = rdlm_sock_err_status(err);
        }
    }
    if (err_p != NULL) {
        *err_p = err;
    }
    return st;
}

rdlm_status_t rdlm_sock_send(int fd, const void *buf, size_t len, uint64_t deadline,
                             const rdlm_idle_t *idle, int *err_p)
{
    return rdlm_sock_xfer(fd, (char *)(uintptr_t)buf, len, 1, deadline, idle, err_p);
}

rdlm_status_t rdlm_sock_recv(int fd, void *buf, size_t len, uint64_t deadline,
                             const rdlm_idle_t *idle, int *err_p)
{
    return rdlm_sock_xfer(fd, buf, len, 0, deadline, idle, err_p);
}

void rdlm_sock_tune(int fd)
{
    int one = 1;

    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    (void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

rdlm_status_t rdlm_sock_connect(const struct sockaddr_in *sa, uint64_t deadline, int *fd_p,
                                int *err_p)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), err = 0;
    socklen_t elen = sizeof(err);
    rdlm_status_t st = RDLM_OK;

    *err_p = 0;
    if (fd < 0) {
        *err_p = errno;
        rdlm_error("socket: %s", strerror(errno));
        return RDLM_ERR_IO;
    }
    rdlm_sock_tune(fd);
    if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) != 0) {
        if (errno != EINPROGRESS) {
            err = errno;
        } else if ((st = rdlm_sock_wait(fd, POLLOUT, deadline, NULL)) == RDLM_OK &&
                   getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0) {
            err = errno;
        }
    }
    if (st == RDLM_OK && err != 0) {
        *err_p = err;
        st = rdlm_sock_err_status(err);
    }
    if (st != RDLM_OK) {
        close(fd);
        return st;
    }
    *fd_p = fd;
    return RDLM_OK;
}
