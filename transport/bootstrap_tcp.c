/*
 * The standalone TCP bootstrap (bootstrap.h): a star around rank 0. Every socket is
 * non-blocking and every wait is a poll() bounded by the deadline of the current step,
 * so a missing or stuck peer gives RDLM_ERR_TIMEOUT, never a hang. A collective that
 * fails at rank 0 (a rank died) makes rank 0 shut every link down, so that it, and
 * every later one, fails on every rank at once rather than at each rank's timeout.
 *
 * Wire format (host byte order: the peers run the same build):
 *   hello      {magic, rank, size}                          peer -> rank 0, once
 *   collective {magic, seq, len(64)} + len bytes            both directions
 *   gave up    {magic, RDLM_BOOT_SEQ_GAVE_UP, len} + len bytes of text, in place of
 *              the first collective's answer: rank 0 timed out waiting for ranks
 *              that never connected, and says which (RDLM_ERR_TIMEOUT everywhere,
 *              rather than a "process died" on the ranks that did connect)
 * allgather: every peer sends its block to rank 0; rank 0 answers each with all
 * blocks. barrier: an allgather of one byte.
 */
#include "bootstrap.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "resolve.h"
#include "sock.h"

#define RDLM_BOOT_MAGIC 0x52444c42u /* "RDLB" */
#define RDLM_BOOT_DEFAULT_TIMEOUT_MS 30000u
#define RDLM_BOOT_SEQ_GAVE_UP UINT32_MAX
/* How long rank 0 tries to tell a connected rank that it gave up. */
#define RDLM_BOOT_GAVE_UP_SEND_NS 100000000ull
/* A rank's first collective waits this much longer than the timeout: rank 0 accepts
 * the missing ranks until a deadline that began about when this rank's did, and its
 * gave-up frame must arrive before this rank gives up on its own. */
#define RDLM_BOOT_FIRST_SLACK_NS 1000000000ull

typedef struct rdlm_boot_hello {
    uint32_t magic, rank, size;
} rdlm_boot_hello_t;

typedef struct rdlm_boot_frame {
    uint32_t magic, seq;
    uint64_t len;
} rdlm_boot_frame_t;

struct rdlm_tl_boot_tcp {
    rdlm_tl_bootstrap_t cb;
    uint64_t timeout_ns;
    uint32_t seq;
    int *fds; /* rank 0: fds[r] for r >= 1; others: fds[0] is the link to rank 0 */
    rdlm_status_t failed; /* the first collective that failed (out of step), or OK */
};

static void rdlm_boot_log_failure(const rdlm_tl_boot_tcp_t *b, rdlm_status_t st,
                                  uint32_t peer, const char *what)
{
    if (st == RDLM_ERR_TIMEOUT)
        rdlm_error("bootstrap: rank %u: timed out after %llu ms in %s waiting for rank %u",
                   b->cb.rank, (unsigned long long)(b->timeout_ns / 1000000), what, peer);
    else
        rdlm_error("bootstrap: rank %u: %s with rank %u failed: %s", b->cb.rank, what, peer,
                   rdlm_status_str(st));
}

/* Once a collective failed (a rank died, timed out, is out of step, or idle said a
 * process is dead) the collectives are out of step for good: the others would wait
 * for this rank until their own timeout. Shutting this rank's links down (rank 0: all
 * of them; others: the one to rank 0, which then does the same) fails their
 * collective at once, and every later collective here returns st at once. */
static rdlm_status_t rdlm_boot_abort(rdlm_tl_boot_tcp_t *b, rdlm_status_t st)
{
    if (b->failed == RDLM_OK)
        b->failed = st;
    for (uint32_t r = b->cb.rank == 0 ? 1 : 0; r < (b->cb.rank == 0 ? b->cb.size : 1); r++)
        (void)shutdown(b->fds[r], SHUT_RDWR);
    return st;
}

/* A rank other than 0: rank 0 gave up before the first collective (a gave-up frame
 * with len bytes of text follows); logs its reason. RDLM_ERR_TIMEOUT. */
static rdlm_status_t rdlm_boot_gave_up(const rdlm_tl_boot_tcp_t *b, uint64_t len,
                                       uint64_t deadline)
{
    char why[512] = "";

    if (len < sizeof(why) &&
        rdlm_sock_recv(b->fds[0], why, (size_t)len, deadline, NULL, NULL) == RDLM_OK)
        why[len] = '\0';
    rdlm_error("bootstrap: rank %u: rank 0 gave up: %s", b->cb.rank,
               why[0] != '\0' ? why : "(no reason received)");
    return RDLM_ERR_TIMEOUT;
}

/* Rank 0, giving up before the first collective: tell every rank that connected why
 * (a gave-up frame), then let the links close. */
static void rdlm_boot_tell_gave_up(const rdlm_tl_boot_tcp_t *b, const char *why)
{
    uint64_t deadline = rdlm_clock_deadline(RDLM_BOOT_GAVE_UP_SEND_NS);
    rdlm_boot_frame_t f = {RDLM_BOOT_MAGIC, RDLM_BOOT_SEQ_GAVE_UP, strlen(why)};

    for (uint32_t r = 1; r < b->cb.size; r++) {
        if (b->fds[r] >= 0 &&
            rdlm_sock_send(b->fds[r], &f, sizeof(f), deadline, NULL, NULL) == RDLM_OK &&
            rdlm_sock_send(b->fds[r], why, f.len, deadline, NULL, NULL) == RDLM_OK)
            (void)shutdown(b->fds[r], SHUT_WR);
    }
}

static rdlm_status_t rdlm_boot_allgather_once(rdlm_tl_boot_tcp_t *b, const void *send,
                                              void *recv, size_t len,
                                              const rdlm_tl_idle_t *idle)
{
    uint32_t size = b->cb.size, seq = ++b->seq, r;
    uint64_t deadline = rdlm_clock_deadline(
        b->timeout_ns + (b->cb.rank != 0 && seq == 1 ? RDLM_BOOT_FIRST_SLACK_NS : 0));
    rdlm_boot_frame_t f;
    rdlm_status_t st = RDLM_OK;

    if (b->cb.rank != 0) {
        f = (rdlm_boot_frame_t){RDLM_BOOT_MAGIC, seq, len};
        st = rdlm_sock_send(b->fds[0], &f, sizeof(f), deadline, idle, NULL);
        if (st == RDLM_OK)
            st = rdlm_sock_send(b->fds[0], send, len, deadline, idle, NULL);
        if (st == RDLM_OK)
            st = rdlm_sock_recv(b->fds[0], &f, sizeof(f), deadline, idle, NULL);
        if (st == RDLM_OK && f.magic == RDLM_BOOT_MAGIC && f.seq == RDLM_BOOT_SEQ_GAVE_UP)
            return rdlm_boot_gave_up(b, f.len, deadline);
        if (st == RDLM_OK &&
            (f.magic != RDLM_BOOT_MAGIC || f.seq != seq || f.len != (uint64_t)len * size)) {
            rdlm_error("bootstrap: rank %u: collective %u out of step with rank 0 "
                       "(seq %u, %llu bytes)",
                       b->cb.rank, seq, f.seq, (unsigned long long)f.len);
            return RDLM_ERR_MISMATCH;
        }
        if (st == RDLM_OK)
            st = rdlm_sock_recv(b->fds[0], recv, (size_t)len * size, deadline, idle, NULL);
        if (st != RDLM_OK)
            rdlm_boot_log_failure(b, st, 0, "collective");
        return st;
    }
    for (r = 1; r < size; r++) {
        st = rdlm_sock_recv(b->fds[r], &f, sizeof(f), deadline, idle, NULL);
        if (st == RDLM_OK && (f.magic != RDLM_BOOT_MAGIC || f.seq != seq || f.len != len)) {
            rdlm_error("bootstrap: rank 0: rank %u out of step in collective %u "
                       "(seq %u, %llu bytes, expected %zu)",
                       r, seq, f.seq, (unsigned long long)f.len, len);
            return RDLM_ERR_MISMATCH;
        }
        if (st == RDLM_OK)
            st = rdlm_sock_recv(b->fds[r], (char *)recv + (size_t)r * len, len, deadline,
                                idle, NULL);
        if (st != RDLM_OK) {
            rdlm_boot_log_failure(b, st, r, "collective");
            return st;
        }
    }
    f = (rdlm_boot_frame_t){RDLM_BOOT_MAGIC, seq, (uint64_t)len * size};
    for (r = 1; r < size; r++) {
        st = rdlm_sock_send(b->fds[r], &f, sizeof(f), deadline, idle, NULL);
        if (st == RDLM_OK)
            st = rdlm_sock_send(b->fds[r], recv, (size_t)len * size, deadline, idle, NULL);
        if (st != RDLM_OK) {
            rdlm_boot_log_failure(b, st, r, "collective");
            return st;
        }
    }
    return RDLM_OK;
}

static rdlm_status_t rdlm_boot_allgather(void *arg, const void *send, void *recv,
                                         size_t len, const rdlm_tl_idle_t *idle)
{
    rdlm_tl_boot_tcp_t *b = arg;
    rdlm_status_t st;

    memcpy((char *)recv + (size_t)b->cb.rank * len, send, len);
    if (b->cb.size == 1)
        return RDLM_OK;
    if (b->failed != RDLM_OK) {
        rdlm_debug("bootstrap: rank %u: out of step since a collective failed (%s)",
                   b->cb.rank, rdlm_status_name(b->failed));
        return b->failed;
    }
    st = rdlm_boot_allgather_once(b, send, recv, len, idle);
    return st == RDLM_OK ? st : rdlm_boot_abort(b, st);
}

static rdlm_status_t rdlm_boot_barrier(void *arg, const rdlm_tl_idle_t *idle)
{
    rdlm_tl_boot_tcp_t *b = arg;
    char one = 1, *all = malloc(b->cb.size);
    rdlm_status_t st;

    if (all == NULL)
        return RDLM_ERR_NO_MEMORY;
    st = rdlm_boot_allgather(arg, &one, all, 1, idle);
    free(all);
    return st;
}

/* Rank 0's address, looked up now: where the others connect, where rank 0 listens. */
static rdlm_status_t rdlm_boot_resolve(const rdlm_tl_boot_tcp_params_t *p,
                                       struct sockaddr_in *sa_p)
{
    return rdlm_addr_resolve(p->what != NULL ? p->what : "bootstrap",
                             p->host != NULL ? p->host : "127.0.0.1", p->port,
                             RDLM_LOG_ERROR, sa_p);
}

static rdlm_status_t rdlm_boot_connect(rdlm_tl_boot_tcp_t *b,
                                       const rdlm_tl_boot_tcp_params_t *p,
                                       uint64_t deadline)
{
    struct sockaddr_in sa;
    rdlm_boot_hello_t h = {RDLM_BOOT_MAGIC, p->rank, p->size};
    const char *host = p->host ? p->host : "127.0.0.1";
    rdlm_status_t resolved = rdlm_boot_resolve(p, &sa);

    if (resolved != RDLM_OK) {
        return resolved;
    }
    for (;;) {
        int fd, err;
        rdlm_status_t st = rdlm_sock_connect(&sa, deadline, &fd, &err);

        if (st == RDLM_ERR_IO) {
            return st;
        }
        if (st == RDLM_OK) {
            if (rdlm_sock_send(fd, &h, sizeof(h), deadline, NULL, NULL) == RDLM_OK) {
                b->fds[0] = fd;
                return RDLM_OK;
            }
            err = ECONNRESET;
            close(fd);
        } else if (st == RDLM_ERR_TIMEOUT) {
            err = ETIMEDOUT;
        }
        if (rdlm_clock_now_ns() >= deadline) {
            rdlm_error("bootstrap: rank %u: timed out after %llu ms connecting to rank 0 "
                       "at %s:%u (%s)",
                       p->rank, (unsigned long long)(b->timeout_ns / 1000000), host,
                       (unsigned)p->port, strerror(err));
            return RDLM_ERR_TIMEOUT;
        }
        nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL); /* rank 0 not up yet */
    }
}

static rdlm_status_t rdlm_boot_accept(rdlm_tl_boot_tcp_t *b,
                                      const rdlm_tl_boot_tcp_params_t *p, uint64_t deadline)
{
    int lfd = p->listen_fd;
    uint32_t joined = 0, r;
    rdlm_status_t st = RDLM_OK;

    if (lfd < 0) {
        struct sockaddr_in sa;
        const char *host = p->host ? p->host : "127.0.0.1";
        int one = 1;

        st = rdlm_boot_resolve(p, &sa);
        if (st != RDLM_OK) {
            return st;
        }
        if (!rdlm_addr_is_ip(host)) {
            /* A name may resolve here to another address than elsewhere (Debian maps
             * its own host name to 127.0.1.1): listen on every interface. */
            sa.sin_addr.s_addr = htonl(INADDR_ANY);
        }
        lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
            bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(lfd, 64) != 0) {
            rdlm_error("bootstrap: rank 0: cannot listen on %s:%u: %s", host,
                       (unsigned)p->port, strerror(errno));
            if (lfd >= 0)
                close(lfd);
            return RDLM_ERR_IO;
        }
    }
    (void)fcntl(lfd, F_SETFL, fcntl(lfd, F_GETFL) | O_NONBLOCK);
    while (joined < p->size - 1) {
        rdlm_boot_hello_t h;
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

        if (fd < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
                errno != ECONNABORTED) {
                rdlm_error("bootstrap: rank 0: accept: %s", strerror(errno));
                st = RDLM_ERR_IO;
                break;
            }
            st = rdlm_sock_wait(lfd, POLLIN, deadline, NULL);
            if (st == RDLM_OK)
                continue;
            break;
        }
        rdlm_sock_tune(fd);
        st = rdlm_sock_recv(fd, &h, sizeof(h), deadline, NULL, NULL);
        if (st != RDLM_OK || h.magic != RDLM_BOOT_MAGIC || h.size != p->size ||
            h.rank == 0 || h.rank >= p->size || b->fds[h.rank] >= 0) {
            rdlm_warn("bootstrap: rank 0: dropped a bad hello (rank %u, size %u, %s)",
                      st == RDLM_OK ? h.rank : 0, st == RDLM_OK ? h.size : 0,
                      rdlm_status_str(st));
            close(fd);
            if (st == RDLM_ERR_TIMEOUT)
                break;
            st = RDLM_OK;
            continue;
        }
        b->fds[h.rank] = fd;
        joined++;
    }
    if (p->listen_fd < 0)
        close(lfd);
    if (st == RDLM_ERR_TIMEOUT) {
        char missing[256];
        size_t off = 0;

        missing[0] = '\0';
        for (r = 1; r < p->size && off < sizeof(missing) - 16; r++)
            if (b->fds[r] < 0)
                off += (size_t)snprintf(missing + off, sizeof(missing) - off, " %u", r);
        char why[sizeof(missing) + 128];

        snprintf(why, sizeof(why),
                 "timed out after %llu ms: %u of %u ranks never connected (missing:%s)",
                 (unsigned long long)(b->timeout_ns / 1000000), p->size - 1 - joined,
                 p->size - 1, missing);
        rdlm_error("bootstrap: rank 0: %s", why);
        rdlm_boot_tell_gave_up(b, why);
    }
    return st;
}

rdlm_status_t rdlm_tl_boot_tcp_create(const rdlm_tl_boot_tcp_params_t *params,
                                      rdlm_tl_boot_tcp_t **boot_p)
{
    rdlm_tl_boot_tcp_t *b;
    uint64_t deadline;
    rdlm_status_t st;
    uint32_t r;

    if (params == NULL || boot_p == NULL || params->size == 0 ||
        params->rank >= params->size) {
        rdlm_error("bootstrap: invalid rank/size");
        return RDLM_ERR_INVALID_ARG;
    }
    b = calloc(1, sizeof(*b));
    if (b == NULL || (b->fds = malloc(sizeof(int) * params->size)) == NULL) {
        free(b);
        return RDLM_ERR_NO_MEMORY;
    }
    for (r = 0; r < params->size; r++)
        b->fds[r] = -1;
    b->timeout_ns =
        (uint64_t)(params->timeout_ms ? params->timeout_ms : RDLM_BOOT_DEFAULT_TIMEOUT_MS) *
        1000000u;
    b->cb = (rdlm_tl_bootstrap_t){.rank = params->rank,
                                  .size = params->size,
                                  .arg = b,
                                  .allgather = rdlm_boot_allgather,
                                  .barrier = rdlm_boot_barrier};
    deadline = rdlm_clock_deadline(b->timeout_ns);
    if (params->size == 1)
        st = RDLM_OK;
    else if (params->rank == 0)
        st = rdlm_boot_accept(b, params, deadline);
    else
        st = rdlm_boot_connect(b, params, deadline);
    if (st != RDLM_OK) {
        rdlm_tl_boot_tcp_destroy(b);
        return st;
    }
    *boot_p = b;
    return RDLM_OK;
}

const rdlm_tl_bootstrap_t *rdlm_tl_boot_tcp_get(const rdlm_tl_boot_tcp_t *boot)
{
    return &boot->cb;
}

void rdlm_tl_boot_tcp_destroy(rdlm_tl_boot_tcp_t *boot)
{
    uint32_t r;

    if (boot == NULL)
        return;
    for (r = 0; r < boot->cb.size; r++)
        if (boot->fds[r] >= 0)
            close(boot->fds[r]);
    free(boot->fds);
    free(boot);
}
