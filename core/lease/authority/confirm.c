/*
 * Leadership confirmation for renewals (see confirm.h).
 *
 * Shared between the loop and the thread, under lock: asked (the last round asked
 * for) with its term, started (the last round the thread began), ended and ok (the
 * last round that ended), stop, full_until. Everything in the peers and others arrays
 * is the thread's alone.
 */
#include "confirm.h"

#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "cmd.h"
#include "conn.h"
#include "log.h"

#define RDLM_CONFIRM_MS 1000000ull
#define RDLM_CONFIRM_SLICE_MS 50 /* the thread notices stop this often while waiting */

/* Another replica, as the thread sees it. */
typedef struct rdlm_confirm_peer {
    const char *addr;  /* its client address */
    int fd;            /* -1: not connected */
    uint64_t awaited;  /* round of the request whose reply is outstanding, or 0 */
    uint64_t sent_at;  /* when that request was sent */
    uint64_t retry_at; /* no connect before (after a failed one) */
    uint64_t mark_n;   /* the mark that request asked for (0: none) */
} rdlm_confirm_peer_t;

struct rdlm_lease_confirm {
    uv_async_t async;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    uint64_t asked, asked_term, started, ended;
    int ok, stop;
    rdlm_lease_confirm_func_t done;
    void *arg;
    rdlm_lease_witness_t *witness;
    void (*closed)(void *);
    void *closed_arg;
    uint64_t timeout_ns;
    unsigned n_others, need; /* need: replies with the term, besides self */
    rdlm_lease_peer_t peers[RDLM_LEASE_PEERS_MAX];
    rdlm_confirm_peer_t others[RDLM_LEASE_PEERS_MAX];
    uint64_t full_until[RDLM_LEASE_PEERS_MAX]; /* others[i] said its disk is full */
};

static void rdlm_confirm_drop(rdlm_confirm_peer_t *p)
{
    rdlm_lease_conn_close(p->fd);
    p->fd = -1;
    p->awaited = 0;
}

/* Send p a STATUS request of round r (connecting first if needed and due). 1 if sent. */
static int rdlm_confirm_send(rdlm_lease_confirm_t *cf, rdlm_confirm_peer_t *p, uint64_t r,
                             uint64_t deadline)
{
    rdlm_lease_cmd_t cmd = {.op = RDLM_LEASE_OP_STATUS, .seq = r};
    uint8_t buf[RDLM_WIRE_MAX_PAYLOAD];
    rdlm_lease_mark_t mark;
    size_t len;

    rdlm_lease_witness_newest(cf->witness, &mark);
    cmd.token = mark.n; /* 0 (nothing applied, or no known mark): no chain asked */
    len = rdlm_lease_cmd_encode(&cmd, buf, sizeof(buf));
    uint64_t now = rdlm_clock_now_ns(), end;
    int reconnect = p->fd >= 0; /* an idle connection the replica may have closed */

    for (int tries = 0; tries < 2; tries++) {
        if (p->fd < 0) {
            if (now < p->retry_at) {
                return 0;
            }
            end = now + cf->timeout_ns / 4;
            if (rdlm_lease_conn_open(p->addr, end < deadline ? end : deadline, &p->fd) !=
                RDLM_OK) {
                p->fd = -1;
                p->retry_at = rdlm_clock_now_ns() + cf->timeout_ns;
                return 0;
            }
        }
        if (rdlm_lease_conn_send(p->fd, RDLM_WIRE_REQUEST, buf, (uint32_t)len, deadline) ==
            RDLM_OK) {
            p->awaited = r;
            p->sent_at = rdlm_clock_now_ns();
            p->mark_n = cmd.token;
            return 1;
        }
        rdlm_confirm_drop(p);
        if (!reconnect) {
            return 0;
        }
        reconnect = 0;
        now = rdlm_clock_now_ns();
    }
    return 0;
}

/* Remember whether p's answer said that its data disk is full, for two timeouts: a
 * replica that stops answering is not sent entries either. */
static void rdlm_confirm_note_disk(rdlm_lease_confirm_t *cf, const rdlm_confirm_peer_t *p,
                                   int full)
{
    pthread_mutex_lock(&cf->lock);
    cf->full_until[p - cf->others] = full ? rdlm_clock_now_ns() + 2 * cf->timeout_ns : 0;
    pthread_mutex_unlock(&cf->lock);
}

/* Read p's reply (readable). 1 if it confirms term in round r, 0 otherwise, -1 if it
 * names a later term. A reply to an earlier round is consumed and round r sent. */
static int rdlm_confirm_recv(rdlm_lease_confirm_t *cf, rdlm_confirm_peer_t *p, uint64_t r,
                             uint64_t term, uint64_t deadline)
{
    uint8_t buf[RDLM_WIRE_MAX_PAYLOAD];
    rdlm_lease_reply_t rep;
    uint32_t len;
    int answered;

    if (rdlm_lease_conn_recv(p->fd, RDLM_WIRE_REPLY, buf, &len, deadline) != RDLM_OK ||
        rdlm_wire_reply_decode(buf, len, &rep) != RDLM_OK || rep.seq != p->awaited) {
        rdlm_debug("lease: confirm: no usable reply from %s", p->addr);
        rdlm_confirm_drop(p);
        return 0;
    }
    p->awaited = 0;
    /* A peer whose disk refuses writes still answers for its term and chain. */
    answered = rep.status == RDLM_OK || rep.status == RDLM_ERR_NO_SPACE;
    rdlm_confirm_note_disk(cf, p, rep.status == RDLM_ERR_NO_SPACE);
    /* Any answer to our request names the chain at the mark asked, or at the peer's
     * newest if it is behind (session = that n). */
    if (answered && rep.session != 0 && rep.session <= p->mark_n &&
        !rdlm_lease_witness_check(cf->witness, rep.session, rep.token, p->addr)) {
        return 0;
    }
    if (rep.seq != r) {
        rdlm_confirm_send(cf, p, r, deadline);
        return 0;
    }
    if (rep.term > term) {
        return -1;
    }
    return answered && rep.term == term && !rdlm_lease_witness_diverged(cf->witness);
}

/* One round: 1 if a majority confirmed term. */
static int rdlm_confirm_round(rdlm_lease_confirm_t *cf, uint64_t r, uint64_t term)
{
    uint64_t deadline = rdlm_clock_now_ns() + cf->timeout_ns, now;
    struct pollfd pfd[RDLM_LEASE_PEERS_MAX];
    unsigned idx[RDLM_LEASE_PEERS_MAX], acks = 0, n;
    int got, ms, stop;

    for (unsigned i = 0; i < cf->n_others; i++) {
        rdlm_confirm_peer_t *p = &cf->others[i];

        if (p->awaited != 0 && deadline - p->sent_at > 2 * cf->timeout_ns) {
            rdlm_confirm_drop(p); /* unanswered for a whole round: connect afresh */
        }
        if (p->awaited == 0) {
            rdlm_confirm_send(cf, p, r, deadline);
        }
    }
    for (;;) {
        pthread_mutex_lock(&cf->lock);
        stop = cf->stop;
        pthread_mutex_unlock(&cf->lock);
        now = rdlm_clock_now_ns();
        if (acks >= cf->need || stop || now >= deadline) {
            return acks >= cf->need;
        }
        n = 0;
        for (unsigned i = 0; i < cf->n_others; i++) {
            if (cf->others[i].fd < 0 && cf->others[i].awaited == 0) {
                rdlm_confirm_send(cf, &cf->others[i], r, deadline); /* if due */
            }
            if (cf->others[i].awaited != 0) {
                pfd[n] = (struct pollfd){.fd = cf->others[i].fd, .events = POLLIN};
                idx[n++] = i;
            }
        }
        ms = (int)((deadline - now + RDLM_CONFIRM_MS - 1) / RDLM_CONFIRM_MS);
        if (poll(pfd, n, ms < RDLM_CONFIRM_SLICE_MS ? ms : RDLM_CONFIRM_SLICE_MS) <= 0) {
            continue;
        }
        for (unsigned k = 0; k < n; k++) {
            if (pfd[k].revents == 0) {
                continue;
            }
            got = rdlm_confirm_recv(cf, &cf->others[idx[k]], r, term, deadline);
            if (got < 0) {
                return 0;
            }
            acks += (unsigned)got;
        }
    }
}

static void *rdlm_confirm_main(void *arg)
{
    rdlm_lease_confirm_t *cf = arg;
    uint64_t r, term;
    int ok;

    pthread_mutex_lock(&cf->lock);
    for (;;) {
        while (!cf->stop && cf->asked == cf->started) {
            pthread_cond_wait(&cf->cond, &cf->lock);
        }
        if (cf->stop) {
            break;
        }
        r = cf->started = cf->asked;
        term = cf->asked_term;
        pthread_mutex_unlock(&cf->lock);
        ok = rdlm_confirm_round(cf, r, term);
        if (!ok) {
            rdlm_debug("lease: confirm: round %llu of term %llu: no majority",
                       (unsigned long long)r, (unsigned long long)term);
        }
        pthread_mutex_lock(&cf->lock);
        cf->ended = r;
        cf->ok = ok;
        uv_async_send(&cf->async);
    }
    pthread_mutex_unlock(&cf->lock);
    for (unsigned i = 0; i < cf->n_others; i++) {
        rdlm_confirm_drop(&cf->others[i]);
    }
    return NULL;
}

static void rdlm_confirm_ended(uv_async_t *async)
{
    rdlm_lease_confirm_t *cf = async->data;
    uint64_t r;
    int ok;

    pthread_mutex_lock(&cf->lock);
    r = cf->ended;
    ok = cf->ok;
    pthread_mutex_unlock(&cf->lock);
    if (r != 0) {
        cf->done(cf->arg, r, ok);
    }
}

static void rdlm_confirm_closed(uv_handle_t *handle)
{
    rdlm_lease_confirm_t *cf = handle->data;
    void (*closed)(void *) = cf->closed;
    void *closed_arg = cf->closed_arg;

    pthread_mutex_destroy(&cf->lock);
    pthread_cond_destroy(&cf->cond);
    free(cf);
    if (closed != NULL) {
        closed(closed_arg);
    }
}

rdlm_status_t rdlm_lease_confirm_start(uv_loop_t *loop, const rdlm_lease_peer_t *peers,
                                       unsigned n_peers, uint64_t self_id,
                                       unsigned timeout_ms, rdlm_lease_witness_t *witness,
                                       rdlm_lease_confirm_func_t done, void *arg,
                                       rdlm_lease_confirm_t **cf_p)
{
    rdlm_lease_confirm_t *cf;
    unsigned n = 0;

    if (timeout_ms == 0 || n_peers == 0 || n_peers > RDLM_LEASE_PEERS_MAX) {
        rdlm_error("lease: confirm: invalid parameters");
        return RDLM_ERR_INVALID_ARG;
    }
    cf = calloc(1, sizeof(*cf));
    if (cf == NULL) {
        rdlm_error("lease: confirm: no memory");
        return RDLM_ERR_NO_MEMORY;
    }
    memcpy(cf->peers, peers, n_peers * sizeof(peers[0]));
    for (unsigned i = 0; i < n_peers; i++) {
        if (peers[i].id != self_id) {
            cf->others[n++] =
                (rdlm_confirm_peer_t){.addr = cf->peers[i].client_addr, .fd = -1};
        }
    }
    if (n + 1 != n_peers) {
        rdlm_error("lease: confirm: replica %llu is not among the peers",
                   (unsigned long long)self_id);
        free(cf);
        return RDLM_ERR_INVALID_ARG;
    }
    cf->n_others = n;
    cf->need = n_peers / 2; /* a majority, n_peers / 2 + 1, counting self */
    cf->timeout_ns = (uint64_t)timeout_ms * RDLM_CONFIRM_MS;
    cf->done = done;
    cf->arg = arg;
    cf->witness = witness;
    pthread_mutex_init(&cf->lock, NULL);
    pthread_cond_init(&cf->cond, NULL);
    uv_async_init(loop, &cf->async, rdlm_confirm_ended);
    cf->async.data = cf;
    if (pthread_create(&cf->thread, NULL, rdlm_confirm_main, cf) != 0) {
        rdlm_error("lease: confirm: cannot start its thread");
        uv_close((uv_handle_t *)&cf->async, rdlm_confirm_closed); /* cf->closed NULL */
        return RDLM_ERR_IO;
    }
    *cf_p = cf;
    return RDLM_OK;
}

uint64_t rdlm_lease_confirm_ask(rdlm_lease_confirm_t *cf, uint64_t term)
{
    uint64_t r;

    pthread_mutex_lock(&cf->lock);
    r = cf->started + 1;
    if (cf->asked < r || cf->asked_term != term) {
        cf->asked = r;
        cf->asked_term = term;
        pthread_cond_signal(&cf->cond);
    }
    pthread_mutex_unlock(&cf->lock);
    return r;
}

const char *rdlm_lease_confirm_full_peer(rdlm_lease_confirm_t *cf)
{
    const char *full = NULL;
    uint64_t now = rdlm_clock_now_ns();

    pthread_mutex_lock(&cf->lock);
    for (unsigned i = 0; i < cf->n_others && full == NULL; i++) {
        if (cf->full_until[i] > now) {
            full = cf->others[i].addr;
        }
    }
    pthread_mutex_unlock(&cf->lock);
    return full;
}

void rdlm_lease_confirm_stop(rdlm_lease_confirm_t *cf, void (*closed)(void *),
                             void *closed_arg)
{
    pthread_mutex_lock(&cf->lock);
    cf->stop = 1;
    pthread_cond_signal(&cf->cond);
    pthread_mutex_unlock(&cf->lock);
    pthread_join(cf->thread, NULL);
    cf->closed = closed;
    cf->closed_arg = closed_arg;
    uv_close((uv_handle_t *)&cf->async, rdlm_confirm_closed);
}
