/* TCP links of a context's own (links.h). */
#include "links.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "resolve.h"
#include "sock.h"

#define RDLM_LINKS_MAGIC 0x52444c4cu /* "RDLL" */
#define RDLM_LINKS_SEND_NS 10000000000ull
/* An address that does not answer a connect within this (a firewall that drops) is
 * given up for the next one. */
#define RDLM_LINKS_ADDR_NS 1000000000ull

/* A process's block in the allgather of step 2. */
typedef struct rdlm_links_card {
    uint64_t nonce;
    uint32_t want, port, naddrs;
    uint32_t addrs[RDLM_LINKS_ADDRS]; /* network order */
} rdlm_links_card_t;

/* Hello and answer of steps 4-6. */
typedef struct rdlm_links_hello {
    uint32_t magic, k, rank, pad;
    uint64_t nonce; /* the receiver's */
} rdlm_links_hello_t;

/* A message being read: its bytes so far. */
typedef struct rdlm_links_in {
    int fd;
    uint32_t have;
    unsigned char buf[8];
} rdlm_links_in_t;

struct rdlm_links {
    uint32_t n, rank;
    uint32_t from[RDLM_LINKS_MAX]; /* the sender of each in-link */
    int out[RDLM_LINKS_MAX];
    rdlm_links_in_t in[RDLM_LINKS_MAX];
    int dead_logged;
};

static rdlm_links_t *rdlm_links_alloc(uint32_t rank, const uint32_t *from, uint32_t n)
{
    rdlm_links_t *l = calloc(1, sizeof(*l));

    if (l == NULL) {
        return NULL;
    }
    l->n = n;
    l->rank = rank;
    for (uint32_t k = 0; k < n; k++) {
        l->from[k] = from[k];
        l->out[k] = -1;
        l->in[k].fd = -1;
    }
    return l;
}

void rdlm_links_close(rdlm_links_t *l)
{
    if (l == NULL) {
        return;
    }
    for (uint32_t k = 0; k < l->n; k++) {
        if (l->out[k] >= 0 && l->out[k] != l->in[k].fd) {
            close(l->out[k]);
        }
        if (l->in[k].fd >= 0) {
            close(l->in[k].fd);
        }
    }
    free(l);
}

/* Step 1: a socket listening on every interface at a port the kernel picks. */
static int rdlm_links_listen(uint32_t *port_p)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    socklen_t len = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
        listen(fd, 2 * RDLM_LINKS_MAX) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
        rdlm_warn("links: cannot listen: %s", strerror(errno));
        if (fd >= 0) {
            close(fd);
        }
        return -1;
    }
    *port_p = ntohs(sa.sin_port);
    return fd;
}

/* Step 4: connect out-link k to the first of to's addresses that answers. */
static rdlm_status_t rdlm_links_connect(rdlm_links_t *l, uint32_t k, uint32_t to,
                                        const rdlm_links_card_t *card, uint64_t deadline)
{
    rdlm_links_hello_t h = {RDLM_LINKS_MAGIC, k, l->rank, 0, card->nonce};
    int err = 0;
    rdlm_status_t st = RDLM_ERR_UNAVAILABLE;

    for (uint32_t i = 0; i < card->naddrs && i < RDLM_LINKS_ADDRS; i++) {
        struct sockaddr_in sa = {.sin_family = AF_INET,
                                 .sin_port = htons((uint16_t)card->port),
                                 .sin_addr.s_addr = card->addrs[i]};
        const uint64_t by = rdlm_clock_now_ns() + RDLM_LINKS_ADDR_NS;
        int fd;

        st = rdlm_sock_connect(&sa, by < deadline ? by : deadline, &fd, &err);
        if (st == RDLM_OK) {
            st = rdlm_sock_send(fd, &h, sizeof(h), deadline, NULL, &err);
            if (st == RDLM_OK) {
                l->out[k] = fd;
                return RDLM_OK;
            }
            close(fd);
        }
    }
    rdlm_warn("links: link %u to rank %u: no address of it answered (last: %s, %s)", k, to,
              rdlm_status_name(st), err != 0 ? strerror(err) : "no error number");
    return RDLM_ERR_UNAVAILABLE;
}

/* 1 if link k is one connection both ways (to[k] == from[k]) that the partner makes. */
static int rdlm_links_partner_connects(const rdlm_links_t *l, const uint32_t *to,
                                       uint32_t k)
{
    return to[k] == l->from[k] && to[k] < l->rank;
}

/* Step 5: accept the in-links (of a link both ways, the one the partner makes): want
 * of them; answer each with its sender's nonce. */
static rdlm_status_t rdlm_links_accept(rdlm_links_t *l, const uint32_t *to, int lfd,
                                       uint64_t nonce, const rdlm_links_card_t *cards,
                                       uint32_t want, uint64_t deadline)
{
    uint32_t made = 0;

    while (made < want) {
        rdlm_links_hello_t h;
        int fd;
        rdlm_status_t st = rdlm_sock_wait(lfd, POLLIN, deadline, NULL);

        if (st != RDLM_OK) {
            rdlm_warn("links: %u of %u in-links came (%s)", made, want,
                      rdlm_status_str(st));
            return st;
        }
        fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) {
            continue; /* EAGAIN after a peer gave up, or EINTR */
        }
        rdlm_sock_tune(fd);
        st = rdlm_sock_recv(fd, &h, sizeof(h), deadline, NULL, NULL);
        if (st != RDLM_OK || h.magic != RDLM_LINKS_MAGIC || h.nonce != nonce ||
            h.k >= l->n || h.rank != l->from[h.k] || l->in[h.k].fd >= 0 ||
            (to[h.k] == h.rank && !rdlm_links_partner_connects(l, to, h.k))) {
            rdlm_warn("links: refused a connection that is not an expected link (%s)",
                      st != RDLM_OK ? rdlm_status_str(st) : "wrong hello");
            close(fd);
            continue;
        }
        h.rank = l->rank; /* the answer: the sender is l->from[h.k] */
        h.nonce = cards[l->from[h.k]].nonce;
        if (rdlm_sock_send(fd, &h, sizeof(h), deadline, NULL, NULL) != RDLM_OK) {
            close(fd);
            continue;
        }
        l->in[h.k].fd = fd;
        if (to[h.k] == l->from[h.k]) {
            l->out[h.k] = fd; /* one connection both ways */
        }
        made++;
    }
    return RDLM_OK;
}

/* Step 6: the answer on out-link k names this link and this process's nonce. */
static rdlm_status_t rdlm_links_answered(rdlm_links_t *l, uint32_t k, uint32_t to,
                                         uint64_t nonce, uint64_t deadline)
{
    rdlm_links_hello_t h;
    rdlm_status_t st = rdlm_sock_recv(l->out[k], &h, sizeof(h), deadline, NULL, NULL);

    if (st == RDLM_OK &&
        (h.magic != RDLM_LINKS_MAGIC || h.k != k || h.rank != to || h.nonce != nonce)) {
        st = RDLM_ERR_PROTOCOL;
    }
    if (st != RDLM_OK) {
        rdlm_warn("links: link %u to rank %u was not answered by it (%s)", k, to,
                  rdlm_status_str(st));
    }
    return st;
}

/* Steps 4-6 for a process with links (links.h; a pair's link is made by its lower
 * rank and accepted by the other). */
static rdlm_status_t rdlm_links_make(rdlm_links_t *l, int lfd, const uint32_t *to,
                                     const rdlm_links_card_t *cards, uint64_t deadline)
{
    const uint64_t nonce = cards[l->rank].nonce;
    uint32_t in = 0;
    rdlm_status_t st = RDLM_OK;

    for (uint32_t k = 0; k < l->n && st == RDLM_OK; k++) {
        if (rdlm_links_partner_connects(l, to, k)) {
            in++;
            continue;
        }
        in += to[k] != l->from[k];
        st = rdlm_links_connect(l, k, to[k], &cards[to[k]], deadline);
        if (st == RDLM_OK && to[k] == l->from[k]) {
            l->in[k].fd = l->out[k];
        }
    }
    if (st == RDLM_OK) {
        st = rdlm_links_accept(l, to, lfd, nonce, cards, in, deadline);
    }
    for (uint32_t k = 0; k < l->n && st == RDLM_OK; k++) {
        if (!rdlm_links_partner_connects(l, to, k)) {
            st = rdlm_links_answered(l, k, to[k], nonce, deadline);
        }
    }
    return st;
}

/* Step 1-2's card of this process: its vote, 0 if it cannot listen. */
static int rdlm_links_card(int want, uint32_t n, rdlm_links_card_t *card)
{
    int lfd = -1;

    memset(card, 0, sizeof(*card));
    card->want = want != 0;
    if (n == 0 || !want) {
        return -1;
    }
    if (getrandom(&card->nonce, sizeof(card->nonce), 0) != (ssize_t)sizeof(card->nonce) ||
        rdlm_host_addrs(card->addrs, RDLM_LINKS_ADDRS, &card->naddrs) != RDLM_OK ||
        card->naddrs == 0 || (lfd = rdlm_links_listen(&card->port)) < 0) {
        rdlm_warn("links: this process cannot offer links (no nonce, address or port)");
        card->want = 0;
    }
    return lfd;
}

rdlm_status_t rdlm_links_open(const rdlm_tl_bootstrap_t *boot, const rdlm_tl_idle_t *idle,
                              int want, const uint32_t *to, const uint32_t *from,
                              uint32_t n, uint32_t timeout_ms, rdlm_links_t **links_p)
{
    rdlm_links_card_t mine, *cards = calloc(boot->size, sizeof(*cards));
    uint32_t *oks = calloc(boot->size, sizeof(*oks)), ok = 1, all = 1;
    rdlm_links_t *l = NULL;
    int lfd = -1;
    rdlm_status_t st = RDLM_ERR_NO_MEMORY;

    *links_p = NULL;
    if (n > RDLM_LINKS_MAX) {
        free(cards);
        free(oks);
        return RDLM_ERR_INVALID_ARG;
    }
    if (cards != NULL && oks != NULL) {
        lfd = rdlm_links_card(want, n, &mine);
        st = boot->allgather(boot->arg, &mine, cards, sizeof(mine), idle);
    }
    for (uint32_t r = 0; st == RDLM_OK && r < boot->size; r++) {
        all = all && cards[r].want;
    }
    if (st == RDLM_OK && all && n > 0) {
        l = rdlm_links_alloc(boot->rank, from, n);
        ok = l != NULL && rdlm_links_make(l, lfd, to, cards,
                                          rdlm_clock_now_ns() +
                                              (uint64_t)timeout_ms * 1000000ull) == RDLM_OK;
    }
    if (lfd >= 0) {
        close(lfd);
    }
    if (st == RDLM_OK && all) {
        st = boot->allgather(boot->arg, &ok, oks, sizeof(ok), idle);
        for (uint32_t r = 0; st == RDLM_OK && r < boot->size; r++) {
            all = all && oks[r];
        }
    }
    free(cards);
    free(oks);
    if (st == RDLM_OK && !all) {
        st = RDLM_ERR_UNSUPPORTED;
    }
    if (st != RDLM_OK) {
        rdlm_links_close(l);
        return st;
    }
    *links_p = l;
    return RDLM_OK;
}

rdlm_status_t rdlm_links_send(rdlm_links_t *l, uint32_t k, uint64_t value)
{
    rdlm_status_t st = rdlm_sock_send(l->out[k], &value, sizeof(value),
                                      rdlm_clock_now_ns() + RDLM_LINKS_SEND_NS, NULL, NULL);

    if (st != RDLM_OK) {
        rdlm_warn("links: link %u: send: %s", k, rdlm_status_str(st));
    }
    return st;
}

rdlm_status_t rdlm_links_recv(rdlm_links_t *l, uint32_t k, int *got_p, uint64_t *value_p)
{
    rdlm_links_in_t *in = &l->in[k];
    ssize_t got =
        recv(in->fd, in->buf + in->have, sizeof(in->buf) - in->have, MSG_DONTWAIT);
    const int err = got < 0 ? errno : 0;

    *got_p = 0;
    if (got > 0) {
        in->have += (uint32_t)got;
        if (in->have == sizeof(in->buf)) {
            memcpy(value_p, in->buf, sizeof(*value_p));
            in->have = 0;
            *got_p = 1;
        }
        return RDLM_OK;
    }
    if (err == EAGAIN || err == EWOULDBLOCK || err == EINTR) {
        return RDLM_OK;
    }
    if (!l->dead_logged) {
        l->dead_logged = 1;
        rdlm_warn("links: link %u from rank %u closed (%s): that process died, or gave "
                  "the barrier up (a process it waited for died)",
                  k, l->from[k], got == 0 ? "end of stream" : strerror(err));
    }
    return got == 0 ? RDLM_ERR_PEER_DEAD : rdlm_sock_err_status(err);
}

void rdlm_links_shutdown(rdlm_links_t *l)
{
    l->dead_logged = 1; /* its own ends' end of stream is no news */
    for (uint32_t k = 0; k < l->n; k++) {
        (void)shutdown(l->out[k], SHUT_RDWR);
        (void)shutdown(l->in[k].fd, SHUT_RDWR);
    }
}

int rdlm_links_fd(const rdlm_links_t *l, uint32_t k)
{
    return l->in[k].fd;
}
