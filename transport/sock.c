/* TCP socket steps of the bootstrap and the links (sock.h). */
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
                             const rdlm_tl_idle_t *idle)
{
    for (;;) {
        struct pollfd p = {.fd = fd, .events = events};
        int busy = 0, tmo, n;

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
            tmo = rdlm_sock_ms_left(deadline);
            n = poll(&p, 1, tmo);
        }
        if (n > 0)
            return RDLM_OK;
        if (n < 0 && errno != EINTR)
            return RDLM_ERR_IO;
    }
}

rdlm_status_t rdlm_sock_send(int fd, const void *buf, size_t len, uint64_t deadline,
                             const rdlm_tl_idle_t *idle)
{
    const char *p = buf;

    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
            rdlm_status_t st = rdlm_sock_wait(fd, POLLOUT, deadline, idle);
            if (st != RDLM_OK)
                return st;
        } else {
            return (n < 0 && errno != EPIPE && errno != ECONNRESET) ? RDLM_ERR_IO
                                                                    : RDLM_ERR_PEER_DEAD;
        }
    }
    return RDLM_OK;
}

rdlm_status_t rdlm_sock_recv(int fd, void *buf, size_t len, uint64_t deadline,
                             const rdlm_tl_idle_t *idle)
{
    char *p = buf;

    while (len > 0) {
        ssize_t n = recv(fd, p, len, 0);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
        } else if (n == 0) {
            return RDLM_ERR_PEER_DEAD;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
            rdlm_status_t st = rdlm_sock_wait(fd, POLLIN, deadline, idle);
            if (st != RDLM_OK)
                return st;
        } else {
            return errno == ECONNRESET ? RDLM_ERR_PEER_DEAD : RDLM_ERR_IO;
        }
    }
    return RDLM_OK;
}

void rdlm_sock_tune(int fd)
{
    int one = 1;

    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    (void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

int rdlm_sock_connect(const struct sockaddr_in *sa, uint64_t deadline, int *fd_p)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), err = 0;
    socklen_t elen = sizeof(err);

    if (fd < 0) {
        rdlm_error("socket: %s", strerror(errno));
        return -1;
    }
    rdlm_sock_tune(fd);
    if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) != 0) {
        if (errno != EINPROGRESS) {
            err = errno;
        } else if (rdlm_sock_wait(fd, POLLOUT, deadline, NULL) != RDLM_OK) {
            err = ETIMEDOUT;
        } else {
            (void)getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen);
        }
    }
    if (err != 0) {
        close(fd);
        return err;
    }
    *fd_p = fd;
    return 0;
}
