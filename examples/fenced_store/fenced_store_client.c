/* A client of fenced_store (see fenced_store_client.h). */
#include "fenced_store_client.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

struct fstore_client {
    int fd;
    int timeout_ms;
    size_t len;                     /* bytes in buf */
    char buf[FSTORE_REPLY_MAX + 1]; /* one reply line, NUL-terminated when complete */
};

static rdlm_status_t client_decide(fstore_client_t *c, const char *req, int n,
                                   uint64_t *max_p);

static int64_t client_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait for events on c->fd until deadline (ms). 1 ready, 0 timed out, -1 error. */
static int client_wait(int fd, short events, int64_t deadline)
{
    for (;;) {
        struct pollfd p = {.fd = fd, .events = events};
        int64_t left = deadline - client_now_ms();
        int r;

        if (left <= 0) {
            return 0;
        }
        r = poll(&p, 1, (int)left);
        if (r > 0) {
            return 1;
        }
        if (r == 0) {
            return 0;
        }
        if (errno != EINTR) {
            return -1;
        }
    }
}

rdlm_status_t fstore_client_open(const char *addr, const char *client, int timeout_ms,
                                 fstore_client_t **client_p)
{
    struct sockaddr_in sa;
    fstore_client_t *c;
    rdlm_status_t status;
    int err = 0;
    socklen_t elen = sizeof(err);
    char hello[16 + FSTORE_CLIENT_MAX];

    if (addr == NULL || client == NULL || fstore_addr_parse(addr, &sa) != 0 ||
        !fstore_name_ok(client, strlen(client), FSTORE_CLIENT_MAX) || timeout_ms <= 0) {
        return RDLM_ERR_INVALID_ARG;
    }
    c = calloc(1, sizeof(*c));
    if (c == NULL) {
        return RDLM_ERR_NO_MEMORY;
    }
    c->timeout_ms = timeout_ms;
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->fd < 0) {
        status = RDLM_ERR_IO;
        goto free_client;
    }
    if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        if (errno != EINPROGRESS ||
            client_wait(c->fd, POLLOUT, client_now_ms() + timeout_ms) != 1 ||
            getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0 || err != 0) {
            status = RDLM_ERR_IO;
            goto close_fd;
        }
    }
    status =
        client_decide(c, hello, snprintf(hello, sizeof(hello), "HELLO %s\n", client), NULL);
    if (status != RDLM_OK) {
        goto close_fd;
    }
    *client_p = c;
    return RDLM_OK;

close_fd:
    close(c->fd);
free_client:
    free(c);
    return status;
}

void fstore_client_close(fstore_client_t *c)
{
    if (c != NULL) {
        close(c->fd);
        free(c);
    }
}

/* Send len bytes of req and read one reply line into c->buf (without '\n'). */
static rdlm_status_t client_call(fstore_client_t *c, const char *req, size_t len)
{
    int64_t deadline = client_now_ms() + c->timeout_ms;
    size_t off = 0;

    while (off < len) {
        ssize_t n = send(c->fd, req + off, len - off, MSG_NOSIGNAL);

        if (n > 0) {
            off += (size_t)n;
        } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
            return RDLM_ERR_IO;
        } else if (n < 0 && errno == EAGAIN && client_wait(c->fd, POLLOUT, deadline) != 1) {
            return RDLM_ERR_IO;
        }
    }
    c->len = 0;
    for (;;) {
        char *nl = memchr(c->buf, '\n', c->len);
        ssize_t n;

        if (nl != NULL) {
            *nl = '\0';
            /* One request at a time: nothing may follow the reply. */
            return nl + 1 == c->buf + c->len ? RDLM_OK : RDLM_ERR_PROTOCOL;
        }
        if (c->len == FSTORE_REPLY_MAX) {
            return RDLM_ERR_PROTOCOL;
        }
        if (client_wait(c->fd, POLLIN, deadline) != 1) {
            return RDLM_ERR_IO;
        }
        n = recv(c->fd, c->buf + c->len, FSTORE_REPLY_MAX - c->len, 0);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
            return RDLM_ERR_IO;
        }
        if (n > 0) {
            c->len += (size_t)n;
        }
    }
}

/* Send one request line (n bytes, '\n' last and only there); OK or STALE <max>. */
static rdlm_status_t client_decide(fstore_client_t *c, const char *req, int n,
                                   uint64_t *max_p)
{
    rdlm_status_t status;

    if (n <= 0 || n > FSTORE_LINE_MAX + 1 || memchr(req, '\n', (size_t)n - 1) != NULL) {
        return RDLM_ERR_INVALID_ARG;
    }
    status = client_call(c, req, (size_t)n);
    if (status != RDLM_OK) {
        return status;
    }
    if (strcmp(c->buf, "OK") == 0) {
        return RDLM_OK;
    }
    if (strncmp(c->buf, "STALE ", 6) == 0) {
        if (max_p != NULL) {
            *max_p = strtoull(c->buf + 6, NULL, 10);
        }
        return RDLM_ERR_STALE_TOKEN;
    }
    return RDLM_ERR_PROTOCOL;
}

rdlm_status_t fstore_client_write(fstore_client_t *c, const char *key, uint64_t token,
                                  const char *value, uint64_t *max_p)
{
    char req[FSTORE_LINE_MAX + 2];
    int n = snprintf(req, sizeof(req), "WRITE %s %" PRIu64 " %s\n", key, token, value);

    return client_decide(c, req, n < (int)sizeof(req) ? n : -1, max_p);
}

rdlm_status_t fstore_client_read(fstore_client_t *c, const char *key, uint64_t *token_p,
                                 char *value, size_t cap)
{
    char req[FSTORE_KEY_MAX + 8];
    rdlm_status_t status;
    uint64_t token;
    char *end;
    int n = snprintf(req, sizeof(req), "READ %s\n", key);

    if (n < 0 || (size_t)n >= sizeof(req) || cap == 0) {
        return RDLM_ERR_INVALID_ARG;
    }
    status = client_call(c, req, (size_t)n);
    if (status != RDLM_OK) {
        return status;
    }
    if (strcmp(c->buf, "NONE") == 0) {
        return RDLM_ERR_NOT_FOUND;
    }
    if (strncmp(c->buf, "VALUE ", 6) != 0) {
        return RDLM_ERR_PROTOCOL;
    }
    token = strtoull(c->buf + 6, &end, 10);
    if (*end != ' ') {
        return RDLM_ERR_PROTOCOL;
    }
    snprintf(value, cap, "%s", end + 1);
    *token_p = token;
    return RDLM_OK;
}
