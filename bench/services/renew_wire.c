/*
 * lease-renew's rdlmd adapter and its floor, both speaking the authority's client
 * wire protocol (core/lease cmd.h, wire.h, conn.h: the internal lease objects are
 * linked into rdlm-bench). A session's nonce is private to the public client, and
 * every request of a session must carry it, so the benchmark opens its own session
 * over the wire and renews that one.
 *
 *   rdlmd-renew  open:   ask the replicas of RDLMBENCH_RDLMD who leads
 *                        (rdlm_authority_status), connect there, OPEN (random nonce,
 *                        TTL 30 s) -> session id; retried while there is no leader
 *                once:   RENEW(session, nonce): one frame out, one reply in; the
 *                        leader restarts the session's timer, no log entry
 *                close:  CLOSE(session), a log entry; disconnect
 *   tcp-echo     open:   a listening socket on 127.0.0.1, a connection to it and a
 *                        thread serving the accepted end: every request frame is
 *                        answered at once with a fixed RDLM_OK reply frame of the
 *                        size of the leader's RENEW reply
 *                once:   the same RENEW frame, sent, received and decoded by the
 *                        same code as rdlmd-renew
 *                close:  disconnect (the thread sees EOF), join the thread
 *
 * Every wait is bounded (RDLM_BENCH_WIRE_WAIT_NS per request); a reply that does not
 * decode or is not RDLM_OK fails the request.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rdlm.h>
#include <rdlm/lease.h>

#include "clock.h"
#include "cmd.h"
#include "conn.h"
#include "lock_services.h"
#include "renew_ops.h"
#include "wire.h"

#define RDLM_BENCH_WIRE_WAIT_NS 5000000000ull  /* one request and its reply */
#define RDLM_BENCH_WIRE_FIND_NS 10000000000ull /* looking for a leader to OPEN at */
#define RDLM_BENCH_WIRE_RETRY_NS 100000000l    /* between two looks */
#define RDLM_BENCH_WIRE_IDLE_NS 60000000000ull /* echo: a client silent this long */
#define RDLM_BENCH_WIRE_STATUS_MS 1000u

typedef struct rdlm_bench_wire {
    int fd;                            /* to the leader, or to the echo thread */
    uint8_t renew[RDLM_LEASE_CMD_MAX]; /* the encoded RENEW, sent by every once() */
    uint32_t renew_len;
    uint64_t session;
    uint64_t nonce;
    char leader[RDLM_WIRE_ADDR_MAX + 1];
    /* tcp-echo */
    int served_fd; /* the accepted end, served by the thread */
    uint8_t reply[RDLM_WIRE_MAX_PAYLOAD];
    uint32_t reply_len;
    pthread_t thread;
} rdlm_bench_wire_t;

/* Send the request req (len bytes) on fd and read its reply into *reply_p; 0, or -1
 * after saying why on stderr (what names the request). */
static int rdlm_bench_wire_call(int fd, const uint8_t *req, uint32_t len, const char *what,
                                rdlm_lease_reply_t *reply_p)
{
    /* rdlm_bench_now_ns() reads CLOCK_MONOTONIC, the clock of conn.h's deadlines */
    uint64_t deadline = rdlm_bench_now_ns() + RDLM_BENCH_WIRE_WAIT_NS;
    uint8_t buf[RDLM_WIRE_MAX_PAYLOAD];
    uint32_t got;
    rdlm_status_t st;

    st = rdlm_lease_conn_send(fd, RDLM_WIRE_REQUEST, req, len, deadline);
    if (st == RDLM_OK) {
        st = rdlm_lease_conn_recv(fd, RDLM_WIRE_REPLY, buf, &got, deadline);
    }
    if (st == RDLM_OK) {
        st = rdlm_wire_reply_decode(buf, got, reply_p);
    }
    if (st != RDLM_OK) {
        fprintf(stderr, "rdlm-bench: %s: %s\n", what, rdlm_status_name(st));
        return -1;
    }
    return 0;
}

/* Encode the RENEW of session (sent as is by every once()) into w. */
static int rdlm_bench_wire_encode_renew(rdlm_bench_wire_t *w, uint64_t session,
                                        uint64_t nonce)
{
    rdlm_lease_cmd_t renew = {
        .op = RDLM_LEASE_OP_RENEW, .session = session, .nonce = nonce};

    w->renew_len = (uint32_t)rdlm_lease_cmd_encode(&renew, w->renew, sizeof(w->renew));
    return w->renew_len > 0 ? 0 : -1;
}

static int rdlm_bench_wire_once(void *h)
{
    rdlm_bench_wire_t *w = h;
    rdlm_lease_reply_t reply;

    if (rdlm_bench_wire_call(w->fd, w->renew, w->renew_len, "RENEW", &reply) != 0) {
        return -1;
    }
    if (reply.status != RDLM_OK) {
        fprintf(stderr, "rdlm-bench: RENEW: %s\n", rdlm_status_name(reply.status));
        return -1;
    }
    return 0;
}

static void rdlm_bench_wire_sleep(long ns)
{
    struct timespec ts = {.tv_sec = 0, .tv_nsec = ns};

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* ---- rdlmd-renew ------------------------------------------------------------------ */

/* One try: the leader as a replica of addrs names it, connected, answering OPEN with
 * a session. 0 (w->fd, w->leader, w->session set), or -1 with why in err. */
static int rdlm_bench_rdlmd_try_open(rdlm_bench_wire_t *w, const char *addr,
                                     const uint8_t *req, uint32_t len, char *err,
                                     size_t errlen)
{
    rdlm_authority_status_t status;
    rdlm_lease_reply_t reply;
    rdlm_status_t st;

    st = rdlm_authority_status(addr, RDLM_BENCH_WIRE_STATUS_MS, &status);
    if (st != RDLM_OK || status.leader_addr[0] == '\0') {
        snprintf(err, errlen, "%s: %s", addr,
                 st != RDLM_OK ? rdlm_status_name(st) : "knows no leader");
        return -1;
    }
    snprintf(w->leader, sizeof(w->leader), "%s", status.leader_addr);
    st = rdlm_lease_conn_open(w->leader, rdlm_bench_now_ns() + RDLM_BENCH_WIRE_WAIT_NS,
                              &w->fd);
    if (st != RDLM_OK) {
        snprintf(err, errlen, "connect %s: %s", w->leader, rdlm_status_name(st));
        return -1;
    }
    if (rdlm_bench_wire_call(w->fd, req, len, "OPEN", &reply) != 0) {
        snprintf(err, errlen, "OPEN at %s: no answer", w->leader);
    } else if (reply.status != RDLM_OK || reply.session == 0) {
        snprintf(err, errlen, "OPEN at %s: %s", w->leader,
                 reply.status != RDLM_OK ? rdlm_status_name(reply.status) : "no session");
    } else {
        w->session = reply.session;
        return 0;
    }
    rdlm_lease_conn_close(w->fd);
    w->fd = -1;
    return -1;
}

static int rdlm_bench_rdlmd_open(const char *job, void **h_p, char *err, size_t errlen)
{
    const char *authority = getenv(RDLM_BENCH_ENV_RDLMD);
    rdlm_lease_cmd_t open = {.op = RDLM_LEASE_OP_OPEN, .ttl_ms = RDLM_BENCH_SERVICE_TTL_MS};
    uint64_t end = rdlm_bench_now_ns() + RDLM_BENCH_WIRE_FIND_NS;
    uint8_t req[RDLM_LEASE_CMD_MAX];
    rdlm_lease_addrs_t addrs;
    rdlm_bench_wire_t *w;
    uint32_t len;
    unsigned k;

    (void)job;
    if (authority == NULL || rdlm_lease_addrs_parse(authority, &addrs) != RDLM_OK) {
        snprintf(err, errlen, "%s %s (want a.b.c.d:port[,...])", RDLM_BENCH_ENV_RDLMD,
                 authority == NULL ? "not set" : "malformed");
        return -1;
    }
    do {
        if (getrandom(&open.nonce, sizeof(open.nonce), 0) != (ssize_t)sizeof(open.nonce)) {
            snprintf(err, errlen, "getrandom: %s", strerror(errno));
            return -1;
        }
    } while (open.nonce == 0);
    len = (uint32_t)rdlm_lease_cmd_encode(&open, req, sizeof(req));
    if (len == 0) {
        snprintf(err, errlen, "OPEN does not encode");
        return -1;
    }
    w = calloc(1, sizeof(*w));
    if (w == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    w->fd = -1;
    w->nonce = open.nonce;
    for (k = 0; rdlm_bench_rdlmd_try_open(w, addrs.addr[k % addrs.count], req, len, err,
                                          errlen) != 0;
         k++) {
        if (rdlm_bench_now_ns() >= end) {
            goto err_free;
        }
        rdlm_bench_wire_sleep(RDLM_BENCH_WIRE_RETRY_NS);
    }
    if (rdlm_bench_wire_encode_renew(w, w->session, w->nonce) != 0) {
        snprintf(err, errlen, "RENEW does not encode");
        goto err_conn;
    }
    *h_p = w;
    return 0;

err_conn:
    rdlm_lease_conn_close(w->fd);
err_free:
    free(w);
    return -1;
}

static void rdlm_bench_rdlmd_close(void *h)
{
    rdlm_bench_wire_t *w = h;
    rdlm_lease_cmd_t close = {
        .op = RDLM_LEASE_OP_CLOSE, .session = w->session, .nonce = w->nonce, .seq = 1};
    uint8_t req[RDLM_LEASE_CMD_MAX];
    rdlm_lease_reply_t reply;
    uint32_t len = (uint32_t)rdlm_lease_cmd_encode(&close, req, sizeof(req));

    if (len == 0 || rdlm_bench_wire_call(w->fd, req, len, "CLOSE", &reply) != 0 ||
        reply.status != RDLM_OK) {
        fprintf(stderr, "rdlm-bench: session %llu at %s not closed: it expires in %u ms\n",
                (unsigned long long)w->session, w->leader, RDLM_BENCH_SERVICE_TTL_MS);
    }
    rdlm_lease_conn_close(w->fd);
    free(w);
}

int rdlm_bench_rdlmd_applied(void *h, uint64_t *index_p)
{
    rdlm_bench_wire_t *w = h;
    rdlm_authority_status_t status;
    rdlm_status_t st = rdlm_authority_status(w->leader, RDLM_BENCH_WIRE_STATUS_MS, &status);

    if (st != RDLM_OK || !status.is_leader) {
        fprintf(stderr, "rdlm-bench: STATUS of %s: %s\n", w->leader,
                st != RDLM_OK ? rdlm_status_name(st) : "no longer the leader");
        return -1;
    }
    *index_p = status.commit;
    return 0;
}

const rdlm_bench_renew_ops_t rdlm_bench_renew_rdlmd = {
    .name = "rdlmd-renew",
    .description = "RENEW of a session at the rdlmd leader, wire protocol (loopback)",
    .env = RDLM_BENCH_ENV_RDLMD,
    .open = rdlm_bench_rdlmd_open,
    .once = rdlm_bench_wire_once,
    .close = rdlm_bench_rdlmd_close,
};

/* ---- tcp-echo --------------------------------------------------------------------- */

/* The echo thread: answer every request frame on served_fd with the fixed reply until
 * the client disconnects (or stays silent for RDLM_BENCH_WIRE_IDLE_NS). */
static void *rdlm_bench_echo_main(void *arg)
{
    rdlm_bench_wire_t *w = arg;
    uint8_t buf[RDLM_WIRE_MAX_PAYLOAD];
    uint64_t deadline;
    uint32_t len;

    for (;;) {
        deadline = rdlm_bench_now_ns() + RDLM_BENCH_WIRE_IDLE_NS;
        if (rdlm_lease_conn_recv(w->served_fd, RDLM_WIRE_REQUEST, buf, &len, deadline) !=
                RDLM_OK ||
            rdlm_lease_conn_send(w->served_fd, RDLM_WIRE_REPLY, w->reply, w->reply_len,
                                 deadline) != RDLM_OK) {
            return NULL;
        }
    }
}

/* A socket listening on 127.0.0.1 at a port the kernel picks, written to addr
 * ("127.0.0.1:port"). The socket, or -1 with why in err. */
static int rdlm_bench_echo_listen(char *addr, size_t addrlen, char *err, size_t errlen)
{
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t salen = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 1) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &salen) != 0) {
        snprintf(err, errlen, "echo socket on 127.0.0.1: %s", strerror(errno));
        if (fd >= 0) {
            close(fd);
        }
        return -1;
    }
    snprintf(addr, addrlen, "127.0.0.1:%u", (unsigned)ntohs(sa.sin_port));
    return fd;
}

static int rdlm_bench_echo_open(const char *job, void **h_p, char *err, size_t errlen)
{
    rdlm_lease_reply_t reply = {.status = RDLM_OK, .is_leader = 1};
    rdlm_bench_wire_t *w;
    int lfd;
    int one = 1;

    (void)job;
    w = calloc(1, sizeof(*w));
    if (w == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    w->fd = -1;
    /* the leader's reply to RENEW names itself: an address as long as the echo's */
    lfd = rdlm_bench_echo_listen(reply.leader_addr, sizeof(reply.leader_addr), err, errlen);
    if (lfd < 0) {
        goto err_free;
    }
    w->reply_len = (uint32_t)rdlm_wire_reply_encode(&reply, w->reply, sizeof(w->reply));
    if (w->reply_len == 0 || rdlm_bench_wire_encode_renew(w, 1, 1) != 0) {
        snprintf(err, errlen, "echo frames do not encode");
        goto err_listen;
    }
    /* the connection completes in the backlog, so the accept right after returns */
    if (rdlm_lease_conn_open(reply.leader_addr,
                             rdlm_bench_now_ns() + RDLM_BENCH_WIRE_WAIT_NS,
                             &w->fd) != RDLM_OK) {
        snprintf(err, errlen, "connect to the echo at %s failed", reply.leader_addr);
        goto err_listen;
    }
    w->served_fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    if (w->served_fd < 0) {
        snprintf(err, errlen, "accept: %s", strerror(errno));
        goto err_conn;
    }
    (void)setsockopt(w->served_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (pthread_create(&w->thread, NULL, rdlm_bench_echo_main, w) != 0) {
        snprintf(err, errlen, "pthread_create failed");
        goto err_served;
    }
    close(lfd);
    *h_p = w;
    return 0;

err_served:
    close(w->served_fd);
err_conn:
    rdlm_lease_conn_close(w->fd);
err_listen:
    close(lfd);
err_free:
    free(w);
    return -1;
}

static void rdlm_bench_echo_close(void *h)
{
    rdlm_bench_wire_t *w = h;

    rdlm_lease_conn_close(w->fd);
    pthread_join(w->thread, NULL);
    close(w->served_fd);
    free(w);
}

const rdlm_bench_renew_ops_t rdlm_bench_renew_echo = {
    .name = "tcp-echo",
    .description = "the same frames answered at once by a thread in this process "
                   "(loopback floor)",
    .env = NULL,
    .open = rdlm_bench_echo_open,
    .once = rdlm_bench_wire_once,
    .close = rdlm_bench_echo_close,
};
