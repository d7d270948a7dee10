/*
 * lease-renew's floor, tcp-echo: a loopback round trip of the sizes of rdlmd-renew's
 * request and reply, answered at once by a thread in this process.
 *
 *   open:   a listening socket on 127.0.0.1, a connection to it and a thread serving
 *           the accepted end: every request frame (RDLM_BENCH_ECHO_REQUEST bytes) is
 *           answered at once with a reply frame (RDLM_BENCH_ECHO_REPLY bytes)
 *   once:   one request frame sent, its reply read
 *   close:  disconnect (the thread sees EOF), join the thread
 *
 * The sizes are those of the authority's client wire (core/lease/include/wire.h and
 * cmd.h): a frame is a 12-byte header and a payload; a RENEW's payload is the fixed
 * 54-byte command, its reply the fixed 80 bytes plus the leader's client address,
 * "127.0.0.1:PORT" (15 bytes with services.sh's ports).
 *
 * Every wait is bounded (SO_RCVTIMEO and SO_SNDTIMEO: RDLM_BENCH_ECHO_WAIT_S on the
 * client's end, RDLM_BENCH_ECHO_IDLE_S on the thread's); a short or failed transfer
 * fails the request.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "renew_ops.h"

#define RDLM_BENCH_ECHO_REQUEST (12 + 54)
#define RDLM_BENCH_ECHO_REPLY (12 + 80 + 15)
#define RDLM_BENCH_ECHO_WAIT_S 5  /* one transfer of the client */
#define RDLM_BENCH_ECHO_IDLE_S 60 /* the thread: a client silent this long is gone */

typedef struct rdlm_bench_echo {
    int fd;        /* the client's end */
    int served_fd; /* the accepted end, served by the thread */
    pthread_t thread;
} rdlm_bench_echo_t;

/* Move len bytes over fd (send when out, else receive): 0, or -1 (error, timeout, or
 * the peer closed). */
static int rdlm_bench_echo_xfer(int fd, uint8_t *buf, size_t len, int out)
{
    size_t done = 0;
    ssize_t n;

    while (done < len) {
        n = out ? send(fd, buf + done, len - done, MSG_NOSIGNAL)
                : recv(fd, buf + done, len - done, 0);
        if (n <= 0 && !(n < 0 && errno == EINTR)) {
            return -1;
        }
        done += n > 0 ? (size_t)n : 0;
    }
    return 0;
}

/* Bound every wait on fd to wait_s seconds and send small frames at once; 0, or -1. */
static int rdlm_bench_echo_socket_setup(int fd, time_t wait_s)
{
    struct timeval tv = {.tv_sec = wait_s};
    int one = 1;

    return setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
                   setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0 ||
                   setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0
               ? -1
               : 0;
}

/* The echo thread: answer every request frame on served_fd with a reply frame until
 * the client disconnects (or stays silent for RDLM_BENCH_ECHO_IDLE_S). */
static void *rdlm_bench_echo_main(void *arg)
{
    rdlm_bench_echo_t *e = arg;
    uint8_t req[RDLM_BENCH_ECHO_REQUEST];
    uint8_t reply[RDLM_BENCH_ECHO_REPLY] = {0};

    while (rdlm_bench_echo_xfer(e->served_fd, req, sizeof(req), 0) == 0 &&
           rdlm_bench_echo_xfer(e->served_fd, reply, sizeof(reply), 1) == 0) {
    }
    return NULL;
}

static int rdlm_bench_echo_once(void *h)
{
    rdlm_bench_echo_t *e = h;
    uint8_t req[RDLM_BENCH_ECHO_REQUEST] = {0};
    uint8_t reply[RDLM_BENCH_ECHO_REPLY];

    errno = 0;
    if (rdlm_bench_echo_xfer(e->fd, req, sizeof(req), 1) != 0 ||
        rdlm_bench_echo_xfer(e->fd, reply, sizeof(reply), 0) != 0) {
        fprintf(stderr, "rdlm-bench: tcp-echo: %s\n",
                errno != 0 ? strerror(errno) : "connection closed");
        return -1;
    }
    return 0;
}

/* e->fd connected to e->served_fd over 127.0.0.1 (a port the kernel picks), both set
 * up: 0, or -1 with why in err (nothing left open). */
static int rdlm_bench_echo_connect(rdlm_bench_echo_t *e, char *err, size_t errlen)
{
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t salen = sizeof(sa);
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    e->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    e->served_fd = -1;
    /* the connection completes in the backlog, so the accept right after returns */
    if (lfd >= 0 && e->fd >= 0 && bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
        listen(lfd, 1) == 0 && getsockname(lfd, (struct sockaddr *)&sa, &salen) == 0 &&
        connect(e->fd, (struct sockaddr *)&sa, salen) == 0) {
        e->served_fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    }
    if (e->served_fd < 0 ||
        rdlm_bench_echo_socket_setup(e->fd, RDLM_BENCH_ECHO_WAIT_S) != 0 ||
        rdlm_bench_echo_socket_setup(e->served_fd, RDLM_BENCH_ECHO_IDLE_S) != 0) {
        snprintf(err, errlen, "echo connection on 127.0.0.1: %s", strerror(errno));
        if (e->served_fd >= 0) {
            close(e->served_fd);
        }
        if (e->fd >= 0) {
            close(e->fd);
        }
    }
    if (lfd >= 0) {
        close(lfd);
    }
    return e->served_fd >= 0 ? 0 : -1;
}

static int rdlm_bench_echo_open(const char *job, void **h_p, char *err, size_t errlen)
{
    rdlm_bench_echo_t *e = calloc(1, sizeof(*e));

    (void)job;
    if (e == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (rdlm_bench_echo_connect(e, err, errlen) != 0) {
        free(e);
        return -1;
    }
    if (pthread_create(&e->thread, NULL, rdlm_bench_echo_main, e) != 0) {
        snprintf(err, errlen, "pthread_create failed");
        close(e->served_fd);
        close(e->fd);
        free(e);
        return -1;
    }
    *h_p = e;
    return 0;
}

static void rdlm_bench_echo_close(void *h)
{
    rdlm_bench_echo_t *e = h;

    close(e->fd);
    pthread_join(e->thread, NULL);
    close(e->served_fd);
    free(e);
}

const rdlm_bench_renew_ops_t rdlm_bench_renew_echo = {
    .name = "tcp-echo",
    .description = "a RENEW's request and reply sizes answered at once by a thread in "
                   "this process (loopback floor)",
    .env = NULL,
    .open = rdlm_bench_echo_open,
    .once = rdlm_bench_echo_once,
    .close = rdlm_bench_echo_close,
};
