/*
 * libraft's TCP transport with its address parsing serialized and its listener
 * replaced (tcp.h).
 *
 * The mutex is held only for the duration of libraft's connect call: it parses the
 * address first and then only starts libuv requests, whose callbacks run later from
 * the loop, so no callback runs under it. It is recursive all the same, so that a
 * libraft version that calls back synchronously cannot deadlock. It is also held
 * while a relay's socketpair is made: libuv closes descriptors with a raw close
 * system call that ThreadSanitizer does not see, so a descriptor number one thread
 * closed and another's socketpair(2) reuses looks like a race on ThreadSanitizer's
 * descriptor table, unless the creations are ordered (those of accepted and
 * connected sockets are: TSan orders connect before accept).
 *
 * An accepted TCP stream is this file's until its handshake is complete, then its
 * relay's (tcp_relay.h): libraft gets the relay's pipe instead. The transport's
 * close closes the handshakes and the relays with the listener, and calls
 * libraft's close callback only once libraft's part and all of these are closed.
 */
#include "tcp.h"

#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <sys/socket.h>

#include "log.h"
#include "resolve.h"

#define RDLM_LEASE_TCP_PROTOCOL 1 /* raft_uv_tcp 0.15's handshake */
#define RDLM_LEASE_TCP_BACKLOG 16
#define RDLM_LEASE_TCP_WARN_MS 1000

struct rdlm_lease_tcp_incoming {
    rdlm_lease_tcp_t *tcp;
    rdlm_lease_tcp_incoming_t *prev, *next;
    uv_tcp_t *stream;
    int counted; /* closed by the transport's close, which waits for it */
    char peer[INET_ADDRSTRLEN + 6];
    size_t have, want; /* bytes of the handshake read, and expected so far */
    union {
        uint64_t preamble[3]; /* protocol, server id, address length (little-endian) */
        uint8_t bytes[3 * 8 + RDLM_LEASE_TCP_ADDR_MAX];
    } hs;
};

static pthread_mutex_t parse_mutex;
static pthread_once_t parse_once = PTHREAD_ONCE_INIT;

static void parse_mutex_init(void)
{
    pthread_mutexattr_t attr;

    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&parse_mutex, &attr);
    pthread_mutexattr_destroy(&attr);
}

static rdlm_lease_tcp_t *tcp_of(struct raft_uv_transport *t)
{
    return (rdlm_lease_tcp_t *)((char *)t - offsetof(rdlm_lease_tcp_t, uv));
}

/* ---- handshakes ------------------------------------------------------------- */

/* One of the handles the transport's close waits for is closed. */
static void tcp_closed_one(rdlm_lease_tcp_t *tcp)
{
    if (--tcp->closes_left == 0 && tcp->close_cb != NULL) {
        tcp->close_cb(&tcp->uv);
    }
}

static void tcp_incoming_closed(uv_handle_t *handle)
{
    rdlm_lease_tcp_incoming_t *in = handle->data;
    rdlm_lease_tcp_t *tcp = in->tcp;
    int counted = in->counted;

    free(in->stream);
    free(in);
    if (counted) {
        tcp_closed_one(tcp);
    }
}

static void tcp_incoming_unlink(rdlm_lease_tcp_incoming_t *in)
{
    in->tcp->n_incoming--;
    if (in->prev != NULL) {
        in->prev->next = in->next;
    } else {
        in->tcp->incoming = in->next;
    }
    if (in->next != NULL) {
        in->next->prev = in->prev;
    }
}

/* Close in, unlinked (or never linked). */
static void tcp_incoming_drop(rdlm_lease_tcp_incoming_t *in)
{
    uv_close((uv_handle_t *)in->stream, tcp_incoming_closed);
}

/* One line about closing peer's connection: warn at most once a
 * RDLM_LEASE_TCP_WARN_MS, else debug. */
static void tcp_refused(rdlm_lease_tcp_t *tcp, const char *peer, const char *why)
{
    uint64_t now = uv_now(tcp->loop);
    rdlm_log_level_t level = RDLM_LOG_DEBUG;

    if (tcp->warned_at == 0 || now - tcp->warned_at >= RDLM_LEASE_TCP_WARN_MS) {
        tcp->warned_at = now;
        level = RDLM_LOG_WARN;
    }
    rdlm_log(level, "lease: raft port %s: connection from %s: %s: closed", tcp->address,
             peer, why);
}

static void tcp_incoming_refuse(rdlm_lease_tcp_incoming_t *in, const char *why)
{
    tcp_refused(in->tcp, in->peer, why);
    tcp_incoming_unlink(in);
    tcp_incoming_drop(in);
}

static void tcp_incoming_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf)
{
    rdlm_lease_tcp_incoming_t *in = handle->data;

    (void)suggested;
    *buf = uv_buf_init((char *)in->hs.bytes + in->have, (unsigned)(in->want - in->have));
}

/* The preamble is complete: NULL if it is acceptable (then want covers the address). */
static const char *tcp_incoming_preamble(rdlm_lease_tcp_incoming_t *in)
{
    uint64_t len = le64toh(in->hs.preamble[2]);

    if (le64toh(in->hs.preamble[0]) != RDLM_LEASE_TCP_PROTOCOL) {
        return "unknown handshake protocol";
    }
    if (le64toh(in->hs.preamble[1]) == 0) {
        return "server id 0";
    }
    if (len == 0 || len > RDLM_LEASE_TCP_ADDR_MAX) {
        return "handshake address length out of range";
    }
    in->want += (size_t)len;
    return NULL;
}

/* ---- relays ----------------------------------------------------------------- */

/* A relay's socketpair, made under the mutex (see the top of this file): 0 or a
 * libuv error. */
static int tcp_socketpair(int fds[2])
{
    int rv;

    pthread_mutex_lock(&parse_mutex);
    rv = socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0 ? 0 : -errno;
    pthread_mutex_unlock(&parse_mutex);
    return rv;
}

static void tcp_relay_refused(rdlm_lease_relay_t *relay, const char *why)
{
    tcp_refused(relay->owner, relay->peer, why);
}

static void tcp_relay_closed(rdlm_lease_relay_t *relay)
{
    rdlm_lease_tcp_t *tcp = relay->owner;

    if (relay->prev != NULL) {
        relay->prev->next = relay->next;
    } else {
        tcp->relays = relay->next;
    }
    if (relay->next != NULL) {
        relay->next->prev = relay->prev;
    }
    free(relay);
    if (tcp->close_cb != NULL) {
        tcp_closed_one(tcp);
    }
}

/* The handshake is complete: libraft gets a relay of the stream from here. */
static void tcp_incoming_accept(rdlm_lease_tcp_incoming_t *in)
{
    rdlm_lease_tcp_t *tcp = in->tcp;
    const char *address = (const char *)in->hs.bytes + sizeof(in->hs.preamble);
    size_t len = in->want - sizeof(in->hs.preamble);
    rdlm_lease_relay_t *relay;
    uv_stream_t *stream;
    int fds[2], rv;

    if (memchr(address, '\0', len) == NULL) {
        tcp_incoming_refuse(in, "handshake address not terminated");
        return;
    }
    relay = calloc(1, sizeof(*relay));
    rv = tcp_socketpair(fds);
    if (relay == NULL || rv != 0) {
        rdlm_error("lease: raft port %s: connection from %s: %s", tcp->address, in->peer,
                   relay == NULL ? "no memory" : uv_strerror(rv));
        if (rv == 0) {
            close(fds[0]);
            close(fds[1]);
        }
        free(relay);
        tcp_incoming_unlink(in);
        tcp_incoming_drop(in);
        return;
    }
    uv_read_stop((uv_stream_t *)in->stream);
    tcp_incoming_unlink(in);
    relay->owner = tcp;
    memcpy(relay->peer, in->peer, sizeof(relay->peer));
    relay->refused = tcp_relay_refused;
    relay->closed = tcp_relay_closed;
    relay->next = tcp->relays;
    if (relay->next != NULL) {
        relay->next->prev = relay;
    }
    tcp->relays = relay;
    rv = rdlm_lease_relay_start(relay, in->stream, fds, &stream);
    if (rv != 0) {
        rdlm_error("lease: raft port %s: relay for %s: %s", tcp->address, in->peer,
                   uv_strerror(rv));
    } else {
        tcp->accept_cb(&tcp->uv, (raft_id)le64toh(in->hs.preamble[1]), address, stream);
    }
    free(in);
}

static void tcp_incoming_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    rdlm_lease_tcp_incoming_t *in = stream->data;
    const char *why;

    (void)buf;
    if (nread < 0) {
        rdlm_debug("lease: raft port %s: %s closed during its handshake: %s",
                   in->tcp->address, in->peer, uv_strerror((int)nread));
        tcp_incoming_unlink(in);
        tcp_incoming_drop(in);
        return;
    }
    in->have += (size_t)nread;
    if (in->have < in->want) {
        return;
    }
    if (in->want == sizeof(in->hs.preamble)) {
        why = tcp_incoming_preamble(in);
        if (why != NULL) {
            tcp_incoming_refuse(in, why);
        }
        return;
    }
    tcp_incoming_accept(in);
}

/* 1 if the source of in (named into in->peer) is allowed. */
static int tcp_incoming_allowed(rdlm_lease_tcp_incoming_t *in)
{
    rdlm_lease_tcp_t *tcp = in->tcp;
    struct sockaddr_storage ss;
    struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
    int n = (int)sizeof(ss);
    char ip[INET_ADDRSTRLEN];

    snprintf(in->peer, sizeof(in->peer), "?");
    if (uv_tcp_getpeername(in->stream, (struct sockaddr *)&ss, &n) != 0 ||
        ss.ss_family != AF_INET || uv_ip4_name(sin, ip, sizeof(ip)) != 0) {
        return tcp->n_allowed == 0;
    }
    snprintf(in->peer, sizeof(in->peer), "%s:%u", ip, (unsigned)ntohs(sin->sin_port));
    for (unsigned i = 0; i < tcp->n_allowed; i++) {
        if (tcp->allowed[i] == sin->sin_addr.s_addr) {
            return 1;
        }
    }
    return tcp->n_allowed == 0;
}

static rdlm_lease_tcp_incoming_t *tcp_oldest_incoming(rdlm_lease_tcp_t *tcp)
{
    rdlm_lease_tcp_incoming_t *in = tcp->incoming;

    while (in->next != NULL) {
        in = in->next;
    }
    return in;
}

static void tcp_listen_cb(uv_stream_t *listener, int status)
{
    rdlm_lease_tcp_t *tcp = listener->data;
    rdlm_lease_tcp_incoming_t *in;

    if (status < 0) {
        rdlm_debug("lease: raft port %s: accept: %s", tcp->address, uv_strerror(status));
        return;
    }
    in = calloc(1, sizeof(*in));
    if (in != NULL) {
        in->stream = malloc(sizeof(*in->stream));
    }
    if (in == NULL || in->stream == NULL) {
        rdlm_error("lease: raft port %s: no memory for a connection", tcp->address);
        free(in);
        return;
    }
    in->tcp = tcp;
    in->want = sizeof(in->hs.preamble);
    uv_tcp_init(tcp->loop, in->stream);
    in->stream->data = in;
    if (uv_accept(listener, (uv_stream_t *)in->stream) != 0) {
        tcp_incoming_drop(in);
        return;
    }
    in->next = tcp->incoming;
    if (in->next != NULL) {
        in->next->prev = in;
    }
    tcp->incoming = in;
    tcp->n_incoming++;
    if (!tcp_incoming_allowed(in)) {
        tcp_incoming_refuse(in, "not a replica's address");
        return;
    }
    if (tcp->n_incoming > RDLM_LEASE_TCP_HANDSHAKES_MAX) {
        tcp_incoming_refuse(tcp_oldest_incoming(tcp),
                            "the oldest of too many handshakes under way");
    }
    uv_read_start((uv_stream_t *)in->stream, tcp_incoming_alloc, tcp_incoming_read);
}

/* ---- the transport's calls ------------------------------------------------------ */

static int tcp_init(struct raft_uv_transport *t, raft_id id, const char *address)
{
    rdlm_lease_tcp_t *tcp = tcp_of(t);
    int rv = tcp->init(t, id, address);

    if (rv == 0) {
        snprintf(tcp->address, sizeof(tcp->address), "%s", address);
        uv_tcp_init(tcp->loop, &tcp->listener);
        tcp->listener.data = tcp;
    }
    return rv;
}

static int tcp_listen(struct raft_uv_transport *t, raft_uv_accept_cb cb)
{
    rdlm_lease_tcp_t *tcp = tcp_of(t);
    char host[RDLM_HOST_MAX + 1];
    struct sockaddr_in sa;
    uint16_t port;
    int rv;

    if (!rdlm_config_hostport_parse(tcp->address, host, &port) ||
        rdlm_addr_resolve("lease: raft port", host, port, RDLM_LOG_ERROR, &sa) != RDLM_OK) {
        return RAFT_INVALID;
    }
    tcp->accept_cb = cb;
    rv = uv_tcp_bind(&tcp->listener, (const struct sockaddr *)&sa, 0);
    if (rv == 0) {
        rv =
            uv_listen((uv_stream_t *)&tcp->listener, RDLM_LEASE_TCP_BACKLOG, tcp_listen_cb);
    }
    if (rv != 0) {
        rdlm_error("lease: raft port %s: %s", tcp->address, uv_strerror(rv));
        return RAFT_IOERR;
    }
    return 0;
}

static int tcp_connect(struct raft_uv_transport *t, struct raft_uv_connect *req, raft_id id,
                       const char *address, raft_uv_connect_cb cb)
{
    int rv;

    pthread_mutex_lock(&parse_mutex);
    rv = tcp_of(t)->connect(t, req, id, address, cb);
    pthread_mutex_unlock(&parse_mutex);
    return rv;
}

static void tcp_listener_closed(uv_handle_t *handle)
{
    tcp_closed_one(handle->data);
}

static void tcp_libraft_closed(struct raft_uv_transport *t)
{
    tcp_closed_one(tcp_of(t));
}

static void tcp_transport_close(struct raft_uv_transport *t, raft_uv_transport_close_cb cb)
{
    rdlm_lease_tcp_t *tcp = tcp_of(t);
    rdlm_lease_tcp_incoming_t *in;

    tcp->close_cb = cb;
    tcp->closes_left = 2; /* libraft's part and the listener */
    while ((in = tcp->incoming) != NULL) {
        tcp->closes_left++;
        in->counted = 1;
        tcp_incoming_unlink(in);
        tcp_incoming_drop(in);
    }
    for (rdlm_lease_relay_t *r = tcp->relays; r != NULL; r = r->next) {
        tcp->closes_left++;
        rdlm_lease_relay_close(r);
    }
    uv_close((uv_handle_t *)&tcp->listener, tcp_listener_closed);
    tcp->close(t, tcp_libraft_closed);
}

int rdlm_lease_tcp_init(rdlm_lease_tcp_t *tcp, struct uv_loop_s *loop)
{
    int rv;

    pthread_once(&parse_once, parse_mutex_init);
    rv = raft_uv_tcp_init(&tcp->uv, loop);
    if (rv != 0) {
        return rv;
    }
    tcp->loop = loop;
    tcp->init = tcp->uv.init;
    tcp->connect = tcp->uv.connect;
    tcp->close = tcp->uv.close;
    tcp->uv.init = tcp_init;
    tcp->uv.listen = tcp_listen;
    tcp->uv.connect = tcp_connect;
    tcp->uv.close = tcp_transport_close;
    return 0;
}

rdlm_status_t rdlm_lease_tcp_allow(rdlm_lease_tcp_t *tcp, const char *const *addrs,
                                   unsigned n)
{
    char host[RDLM_HOST_MAX + 1];
    struct sockaddr_in sa;
    rdlm_status_t st;
    uint16_t port;

    if (n > RDLM_LEASE_TCP_ALLOW_MAX) {
        rdlm_error("lease: raft port: more than %d replica addresses",
                   RDLM_LEASE_TCP_ALLOW_MAX);
        return RDLM_ERR_INVALID_ARG;
    }
    for (unsigned i = 0; i < n; i++) {
        if (!rdlm_config_hostport_parse(addrs[i], host, &port)) {
            rdlm_error("lease: raft address '%s' is not host:port", addrs[i]);
            return RDLM_ERR_INVALID_ARG;
        }
        st = rdlm_addr_resolve("lease: raft address", host, port, RDLM_LOG_ERROR, &sa);
        if (st != RDLM_OK) {
            return st;
        }
        tcp->allowed[i] = sa.sin_addr.s_addr;
    }
    tcp->n_allowed = n;
    return RDLM_OK;
}

void rdlm_lease_tcp_close(rdlm_lease_tcp_t *tcp)
{
    raft_uv_tcp_close(&tcp->uv);
}
