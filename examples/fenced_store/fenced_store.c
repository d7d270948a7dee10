/*
 * fenced_store: a TCP key-value store that checks fencing tokens (README.md).
 *
 *   fenced_store --listen a.b.c.d:port --history FILE
 *
 * One thread, one poll loop over the listening socket and up to STORE_CONNS_MAX
 * connections (more are told "ERR too many connections" and closed). Requests are
 * handled in arrival order per connection (proto.h); a connection whose replies are
 * not being read stops being read until it drains. SIGINT/SIGTERM end the loop; the
 * counts of accepted and rejected writes are printed on exit.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common.h"
#include "proto.h"
#include "store.h"

#define STORE_CONNS_MAX 64
#define STORE_OUT_CAP (4 * FSTORE_REPLY_MAX)

typedef struct store_conn {
    int fd;
    int discarding; /* inside an overlong line: drop bytes up to its '\n' */
    size_t inlen, outlen;
    char client[FSTORE_CLIENT_MAX + 1];
    char in[FSTORE_LINE_MAX + 1]; /* a maximal line and its '\n' fit */
    char out[STORE_OUT_CAP];
} store_conn_t;

static volatile sig_atomic_t store_stop;

static void store_on_signal(int sig)
{
    (void)sig;
    store_stop = 1;
}

static int store_listen(const char *text)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof(sa);
    char host[INET_ADDRSTRLEN];
    int one = 1, fd;

    if (fstore_addr_parse(text, &sa) != 0) {
        fprintf(stderr, "fenced_store: --listen wants a.b.c.d:port, not '%s'\n", text);
        return -1;
    }
    fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 64) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
        fprintf(stderr, "fenced_store: listen on %s: %s\n", text, strerror(errno));
        if (fd >= 0) {
            close(fd);
        }
        return -1;
    }
    inet_ntop(AF_INET, &sa.sin_addr, host, sizeof(host));
    printf("fenced_store: listening on %s:%u\n", host, (unsigned)ntohs(sa.sin_port));
    fflush(stdout);
    return fd;
}

/* Handle the complete lines in c->in while the replies fit in c->out. */
static void store_conn_process(fstore_t *store, store_conn_t *c)
{
    while (c->outlen + FSTORE_REPLY_MAX <= STORE_OUT_CAP) {
        char *nl = memchr(c->in, '\n', c->inlen);
        size_t used;

        if (c->discarding) {
            c->inlen = nl == NULL ? 0 : c->inlen - (size_t)(nl + 1 - c->in);
            memmove(c->in, nl == NULL ? c->in : nl + 1, c->inlen);
            c->discarding = nl == NULL;
            if (nl == NULL) {
                return;
            }
            continue;
        }
        if (nl == NULL) {
            if (c->inlen < sizeof(c->in)) {
                return; /* wait for the rest of the line */
            }
            memcpy(c->out + c->outlen, "ERR line too long\n", 18);
            c->outlen += 18;
            c->inlen = 0;
            c->discarding = 1;
            return;
        }
        used = (size_t)(nl - c->in);
        c->outlen += fstore_proto_handle(store, c->in, used, c->client, c->out + c->outlen);
        c->inlen -= used + 1;
        memmove(c->in, nl + 1, c->inlen);
    }
}

/* Send what is queued. -1 if the connection failed. */
static int store_conn_flush(store_conn_t *c)
{
    while (c->outlen > 0) {
        ssize_t n = send(c->fd, c->out, c->outlen, MSG_NOSIGNAL | MSG_DONTWAIT);

        if (n < 0) {
            return errno == EAGAIN || errno == EINTR ? 0 : -1;
        }
        c->outlen -= (size_t)n;
        memmove(c->out, c->out + n, c->outlen);
    }
    return 0;
}

/* Read what arrived and answer it. -1 when the connection is done (EOF or error). */
static int store_conn_read(fstore_t *store, store_conn_t *c)
{
    ssize_t n;

    if (c->inlen == sizeof(c->in)) { /* no room to read: answer first */
        store_conn_process(store, c);
        return store_conn_flush(c);
    }
    n = recv(c->fd, c->in + c->inlen, sizeof(c->in) - c->inlen, MSG_DONTWAIT);
    if (n < 0) {
        return errno == EAGAIN || errno == EINTR ? 0 : -1;
    }
    c->inlen += (size_t)n;
    store_conn_process(store, c);
    if (n == 0) {
        store_conn_flush(c); /* best effort: the peer stopped sending */
        return -1;
    }
    return store_conn_flush(c);
}

static void store_accept(int lfd, store_conn_t **conns, size_t *nconns_p)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof(sa);
    char host[INET_ADDRSTRLEN];
    store_conn_t *c;
    int fd = accept4(lfd, (struct sockaddr *)&sa, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);

    if (fd < 0) {
        return;
    }
    if (*nconns_p == STORE_CONNS_MAX || (c = calloc(1, sizeof(*c))) == NULL) {
        (void)!send(fd, "ERR too many connections\n", 25, MSG_NOSIGNAL | MSG_DONTWAIT);
        close(fd);
        return;
    }
    c->fd = fd;
    inet_ntop(AF_INET, &sa.sin_addr, host, sizeof(host));
    snprintf(c->client, sizeof(c->client), "%s:%u", host, (unsigned)ntohs(sa.sin_port));
    conns[(*nconns_p)++] = c;
}

static void store_loop(int lfd, fstore_t *store)
{
    store_conn_t *conns[STORE_CONNS_MAX];
    struct pollfd pfds[STORE_CONNS_MAX + 1];
    size_t nconns = 0;

    while (!store_stop) {
        pfds[0] = (struct pollfd){.fd = lfd, .events = POLLIN};
        for (size_t i = 0; i < nconns; i++) {
            store_conn_t *c = conns[i];
            short ev = c->outlen > 0 ? POLLOUT : 0;

            if (c->outlen + FSTORE_REPLY_MAX <= STORE_OUT_CAP) {
                ev |= POLLIN;
            }
            pfds[i + 1] = (struct pollfd){.fd = c->fd, .events = ev};
        }
        if (poll(pfds, nconns + 1, -1) < 0) {
            if (errno == EINTR) {
                continue;
            }
            perror("fenced_store: poll");
            break;
        }
        for (size_t i = nconns; i-- > 0;) {
            store_conn_t *c = conns[i];
            short re = pfds[i + 1].revents;
            int done = 0;

            if (re & POLLOUT) {
                done = store_conn_flush(c) != 0;
                if (!done) {
                    store_conn_process(store, c); /* lines held back for room */
                    done = store_conn_flush(c) != 0;
                }
            }
            if (!done && (re & (POLLIN | POLLHUP | POLLERR))) {
                done = store_conn_read(store, c) != 0;
            }
            if (done) {
                close(c->fd);
                free(c);
                conns[i] = conns[--nconns];
            }
        }
        if (pfds[0].revents & POLLIN) {
            store_accept(lfd, conns, &nconns);
        }
    }
    for (size_t i = 0; i < nconns; i++) {
        close(conns[i]->fd);
        free(conns[i]);
    }
}

static void store_usage(void)
{
    fprintf(stderr, "usage: fenced_store --listen a.b.c.d:port --history FILE\n");
}

int main(int argc, char **argv)
{
    const char *listen_at = NULL, *history = NULL;
    struct sigaction sa = {.sa_handler = store_on_signal}; /* no SA_RESTART */
    uint64_t accepted, stale;
    fstore_t *store;
    int lfd;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--listen") == 0 && i + 1 < argc) {
            listen_at = argv[++i];
        } else if (strcmp(argv[i], "--history") == 0 && i + 1 < argc) {
            history = argv[++i];
        } else {
            store_usage();
            return 2;
        }
    }
    if (listen_at == NULL || history == NULL) {
        store_usage();
        return 2;
    }
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (fstore_create(history, &store) != RDLM_OK) {
        return 1;
    }
    lfd = store_listen(listen_at);
    if (lfd < 0) {
        fstore_destroy(store);
        return 1;
    }
    store_loop(lfd, store);
    fstore_counts(store, &accepted, &stale);
    printf("fenced_store: %" PRIu64 " writes accepted, %" PRIu64 " stale writes rejected\n",
           accepted, stale);
    close(lfd);
    fstore_destroy(store);
    return 0;
}
