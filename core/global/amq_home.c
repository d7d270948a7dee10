/*
 * The home's side of the home-served queue lock and semaphore (amq.h has the
 * protocol). A node leader keeps one record per home slot (a lock's holder and last
 * token, or a semaphore's permits taken; the FIFO queue) and one waiter entry per
 * queue node of every process: a queue node is in at most one queue at a time, so
 * the queues link through these entries and never allocate.
 *
 * The handler runs inside the transport's progress and must not send: answers go
 * into an outbox, sent by rdlm_amq_flush after the progress call (every progress of
 * core/global, and the progress thread's). The outbox holds at most one answer per
 * request in flight, so size * RDLM_GLOBAL_QNODES entries never overflow.
 */
#include "amq_home.h"

#include <stdlib.h>

#include "clock.h"
#include "glock.h"
#include "log.h"

/* a is a later use than b (32-bit serial numbers). */
static int rdlm_amq_newer(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) > 0;
}

void rdlm_amq_out(rdlm_global_t *d, uint32_t dst, const rdlm_amq_msg_t *m)
{
    struct rdlm_amq_home *h = d->amq_home;
    uint32_t n = rdlm_load(&h->out_n, RDLM_RELAXED);

    if (dst == d->rank) {
        rdlm_amq_answer(d, m);
        return;
    }
    if (n == h->cap) {
        rdlm_error("dist: lock home: %u answers waiting to be sent; one to rank %u is "
                   "lost (a bug: there is one per request in flight)",
                   n, dst);
        return;
    }
    h->out[(h->out_head + n) % h->cap] = (rdlm_amq_out_t){dst, *m};
    rdlm_store(&h->out_n, n + 1, RDLM_RELEASE);
}

void rdlm_amq_grant(rdlm_global_t *d, rdlm_amq_rec_t *rec, uint32_t wi, uint32_t seq,
                    uint16_t flags)
{
    rdlm_amq_msg_t m = {
        .type = RDLM_AMQ_GRANT, .q = (uint8_t)(wi % RDLM_GLOBAL_QNODES), .seq = seq};

    flags |= rec->dead_pending ? RDLM_AMQ_F_DEAD : 0;
    m.flags = flags;
    rec->dead_pending = 0;
    rec->granted_dead = (flags & RDLM_AMQ_F_DEAD) != 0;
    rec->holder = wi + 1;
    rec->token = rdlm_glock_first_token(d, rec->token);
    rec->granted = rec->token;
    m.token = rec->token;
    rdlm_amq_out(d, wi / RDLM_GLOBAL_QNODES, &m);
}

void rdlm_amq_refuse(rdlm_global_t *d, uint32_t wi, uint32_t seq, uint8_t type)
{
    rdlm_amq_msg_t m = {.type = type, .q = (uint8_t)(wi % RDLM_GLOBAL_QNODES), .seq = seq};

    rdlm_amq_out(d, wi / RDLM_GLOBAL_QNODES, &m);
}

int rdlm_amq_unlink(struct rdlm_amq_home *h, rdlm_amq_rec_t *rec, uint32_t wi)
{
    uint32_t *link = &rec->head, prev = 0;

    while (*link != 0 && *link != wi + 1) {
        prev = *link;
        link = &h->waiters[*link - 1].next;
    }
    if (*link == 0) {
        return 0;
    }
    *link = h->waiters[wi].next;
    if (rec->tail == wi + 1) {
        rec->tail = prev;
    }
    h->waiters[wi].next = 0;
    h->waiters[wi].queued = 0;
    rdlm_fetch_sub(&h->waiting, 1, RDLM_RELAXED);
    return 1;
}

/* Take waiter entry wi out of whichever queue holds it (a scan: never on a path a
 * correct requester takes). */
static void rdlm_amq_unlink_any(rdlm_global_t *d, uint32_t wi)
{
    for (uint32_t i = 0; i < d->home_slots; i++) {
        if (rdlm_amq_unlink(d->amq_home, &d->amq_home->recs[i], wi)) {
            return;
        }
    }
}

void rdlm_amq_enqueue(struct rdlm_amq_home *h, rdlm_amq_rec_t *rec, uint32_t wi)
{
    h->waiters[wi].next = 0;
    h->waiters[wi].queued = 1;
    if (rec->tail != 0) {
        h->waiters[rec->tail - 1].next = wi + 1;
    } else {
        rec->head = wi + 1;
    }
    rec->tail = wi + 1;
    rdlm_fetch_add(&h->waiting, 1, RDLM_RELAXED);
}

/* The release of holder's use granted with token `granted`: the next in the queue
 * holds, with the token after t (told that the holder died holding if flags say
 * so). */
static void rdlm_amq_release(rdlm_global_t *d, rdlm_amq_rec_t *rec, uint32_t holder,
                             uint64_t granted, uint64_t t, uint16_t flags)
{
    struct rdlm_amq_home *h = d->amq_home;
    uint32_t next = rec->head;

    if (rec->holder != holder || rec->granted != granted) {
        /* A SETTLE's REL and the holder's own may both come, in any order; the later
         * one must not release the queue node's next use (am_lease.pml, flaw 6). */
        rdlm_debug("dist: lock home: a release of a use that does not hold the lock "
                   "(stale or repeated): ignored");
        return;
    }
    rec->token = t > rec->token ? t : rec->token;
    rec->holder = 0;
    /* A death in a critical section is told to the next holder, even when nobody
     * waits now or the grant went to a process that died before using it (am_lease.pml,
     * flaws 4 and 5). */
    rec->dead_pending |=
        (flags & RDLM_AMQ_F_DEAD) || ((flags & RDLM_AMQ_F_UNUSED) && rec->granted_dead);
    if (next != 0) {
        rdlm_amq_unlink(h, rec, next - 1);
        rdlm_amq_grant(d, rec, next - 1, h->waiters[next - 1].last_seq, 0);
    }
}

static void rdlm_amq_cancel(rdlm_global_t *d, rdlm_amq_rec_t *rec, uint32_t wi,
                            uint32_t seq)
{
    rdlm_amq_waiter_t *wt = &d->amq_home->waiters[wi];

    if (rdlm_amq_newer(seq, wt->last_seq)) {
        /* Before its request: the request, when it comes, is older than this. */
        wt->last_seq = seq;
        rdlm_amq_refuse(d, wi, seq, RDLM_AMQ_CANCELLED);
    } else if (seq == wt->last_seq && wt->queued && rdlm_amq_unlink(d->amq_home, rec, wi)) {
        rdlm_amq_refuse(d, wi, seq, RDLM_AMQ_CANCELLED);
        if (rec->permits != 0) {
            rdlm_amq_sem_grant_ready(d, rec); /* it may have held back smaller ones */
        }
    }
    /* Otherwise it was granted (the GRANT crossed the cancel) or is stale: nothing. */
}

/* A new request (ACQ, TRY, SEM_ACQ, SEM_TRY, SEM_COUNT) from waiter entry wi of rank
 * src: 1, its seq now the entry's newest; 0 if it is stale (its cancel came first). */
static int rdlm_amq_fresh(rdlm_global_t *d, uint32_t wi, uint32_t src, uint32_t seq)
{
    rdlm_amq_waiter_t *wt = &d->amq_home->waiters[wi];

    if (!rdlm_amq_newer(seq, wt->last_seq)) {
        rdlm_debug("dist: lock home: a stale request from rank %u: dropped", src);
        return 0;
    }
    if (wt->queued) {
        rdlm_error("dist: lock home: rank %u asked again from a queue node still queued (a "
                   "bug): its older request is dropped",
                   src);
        rdlm_amq_unlink_any(d, wi);
    }
    wt->last_seq = seq;
    return 1;
}

void rdlm_amq_home_request(rdlm_global_t *d, uint32_t src, const rdlm_amq_msg_t *m)
{
    struct rdlm_amq_home *h = d->amq_home;
    uint64_t slot = m->offset / d->slot_bytes;
    uint32_t who = m->type == RDLM_AMQ_REL ? m->rank : src;
    uint32_t wi = who * RDLM_GLOBAL_QNODES + m->q;
    rdlm_amq_rec_t *rec;

    if (h == NULL || m->offset % d->slot_bytes != 8 || slot >= d->home_slots ||
        m->q >= RDLM_GLOBAL_QNODES || who >= d->bootstrap->size || m->type < RDLM_AMQ_ACQ ||
        m->type >= RDLM_AMQ_GRANT) {
        rdlm_error("dist: lock home: malformed request from rank %u (type %u, queue node "
                   "%u, offset %llu): dropped",
                   src, m->type, m->q, (unsigned long long)m->offset);
        return;
    }
    pthread_mutex_lock(&h->lock);
    rec = &h->recs[slot];
    switch (m->type) {
    case RDLM_AMQ_ACQ:
    case RDLM_AMQ_TRY:
        if (!rdlm_amq_fresh(d, wi, src, m->seq)) {
            break;
        }
        if (rec->holder == 0) {
            rdlm_amq_grant(d, rec, wi, m->seq, 0);
        } else if (m->type == RDLM_AMQ_TRY) {
            rdlm_amq_refuse(d, wi, m->seq, RDLM_AMQ_BUSY);
        } else {
            rdlm_amq_enqueue(h, rec, wi);
        }
        break;
    case RDLM_AMQ_SEM_ACQ:
    case RDLM_AMQ_SEM_TRY:
    case RDLM_AMQ_SEM_COUNT:
        if (rdlm_amq_fresh(d, wi, src, m->seq)) {
            rdlm_amq_sem_home(d, rec, wi, m);
        }
        break;
    case RDLM_AMQ_CANCEL:
        rdlm_amq_cancel(d, rec, wi, m->seq);
        break;
    case RDLM_AMQ_SEM_REL:
        rdlm_amq_sem_give_back(d, rec, src, m->k);
        break;
    default:
        rdlm_amq_release(d, rec, wi + 1, m->granted, m->token, m->flags);
        break;
    }
    pthread_mutex_unlock(&h->lock);
}

/* A message's payload as a rdlm_amq_msg_t: 0 (logged, dropped) if its size is not. */
static int rdlm_amq_msg_of(const void *data, size_t len, uint32_t src, rdlm_amq_msg_t *m_p)
{
    if (len != sizeof(*m_p)) {
        rdlm_error("dist: a %zu-byte lock message from rank %u: dropped", len, src);
        return 0;
    }
    memcpy(m_p, data, sizeof(*m_p));
    return 1;
}

static void rdlm_amq_req_handler(void *arg, uint32_t src, const void *data, size_t len)
{
    rdlm_amq_msg_t m;

    if (rdlm_amq_msg_of(data, len, src, &m)) {
        rdlm_amq_home_request(arg, src, &m);
    }
}

static void rdlm_amq_ans_handler(void *arg, uint32_t src, const void *data, size_t len)
{
    rdlm_amq_msg_t m;

    if (!rdlm_amq_msg_of(data, len, src, &m)) {
        return;
    }
    if (m.type == RDLM_AMQ_SETTLE) {
        rdlm_amq_settle_note(arg, src, &m);
    } else {
        rdlm_amq_answer(arg, &m);
    }
}

/* 1 if a process of node other than this one is gone. */
static int rdlm_amq_node_lost_one(rdlm_global_t *d, uint32_t node)
{
    for (uint32_t r = 0; r < d->nodes.size; r++) {
        if (d->nodes.node_of[r] == node && r != d->rank && rdlm_global_rank_gone(d, r)) {
            return 1;
        }
    }
    return 0;
}

/* With a lease: 1 if rec's holder, none of whose node is known dead, held its use
 * longer than the lease TTL while someone waited, and the home should ask the authority
 * again whether its lease ended (a paused holder is never seen dead, by the transport
 * or on its host: only its lease ends). The watch starts at the first scan that sees
 * the use with waiters; then every TTL / RDLM_AMQ_ASK_PER_TTL (at least every scan).
 * Holding h->lock. */
static int rdlm_amq_held_long(rdlm_global_t *d, rdlm_amq_rec_t *rec, uint64_t now)
{
    uint64_t every = d->recovery.ttl_ns / RDLM_AMQ_ASK_PER_TTL;

    if (rec->watch_holder != rec->holder || rec->watch_granted != rec->granted) {
        rec->watch_holder = rec->holder;
        rec->watch_granted = rec->granted;
        rec->watch_ask_at = now + d->recovery.ttl_ns;
        rec->watch_said = 0;
        return 0;
    }
    if (d->recovery.ttl_ns == 0 || now < rec->watch_ask_at) {
        return 0;
    }
    rec->watch_ask_at = now + (every > RDLM_AMQ_SCAN_NS ? every : RDLM_AMQ_SCAN_NS);
    return 1;
}

/* Holders that died with waiters behind them. Without a lease nobody may take their
 * locks over, so the waiters give up (RDLM_ERR_PEER_DEAD), as behind a dead
 * predecessor in the atomic queue. With one, a lock whose holder's node lost any
 * process (a node-mate may have died holding it after a cohort hand-off: am_lease.pml,
 * flaw 1) goes into dead[] for recovery (rdlm_amq_recover, without h->lock: it asks
 * the authority), up to max of them; so does one whose holder held longer than the
 * TTL with waiters (held_long: a paused holder, whose lease may have ended); their
 * count. Holding h->lock. */
static uint32_t rdlm_amq_scan(rdlm_global_t *d, rdlm_amq_dead_t *dead, uint32_t max)
{
    struct rdlm_amq_home *h = d->amq_home;
    uint64_t now = rdlm_clock_now_ns();
    uint32_t n = 0;

    for (uint32_t i = 0; i < d->home_slots && rdlm_load(&h->waiting, RDLM_RELAXED); i++) {
        rdlm_amq_rec_t *rec = &h->recs[i];
        uint32_t rank = (rec->holder - 1) / RDLM_GLOBAL_QNODES;

        if (rec->head == 0 || rec->holder == 0) {
            continue;
        }
        if (d->recovery.ended != NULL) {
            if (n < max && rdlm_amq_node_lost_one(d, d->nodes.node_of[rank])) {
                dead[n++] = (rdlm_amq_dead_t){i, rec->holder, rec->granted,
                                              rec->reported != rec->holder, 0};
                rec->reported = rec->holder;
            } else if (n < max && rank != d->rank && rdlm_amq_held_long(d, rec, now)) {
                dead[n++] = (rdlm_amq_dead_t){i, rec->holder, rec->granted, 0, 1};
            }
            continue;
        }
        if (rank == d->rank || !rdlm_global_rank_gone(d, rank)) {
            continue;
        }
        if (rec->reported != rec->holder) {
            rec->reported = rec->holder;
            rdlm_error("dist: lock home: rank %u died holding a lock (home slot %u); its "
                       "waiters give up (RDLM_ERR_PEER_DEAD)",
                       rank, i);
        }
        while (rec->head != 0) {
            uint32_t wi = rec->head - 1;

            rdlm_amq_unlink(h, rec, wi);
            rdlm_amq_refuse(d, wi, h->waiters[wi].last_seq, RDLM_AMQ_DEAD);
        }
    }
    return n;
}

void rdlm_amq_flush(rdlm_global_t *d)
{
    struct rdlm_amq_home *h = d->amq_home;
    rdlm_amq_out_t batch[16];
    rdlm_amq_dead_t dead[RDLM_AMQ_RECOVER_MAX];
    rdlm_amq_sem_dead_t sem_dead[RDLM_AMQ_RECOVER_MAX];
    uint32_t n, ndead = 0, nsem = 0;

    rdlm_amq_settle_run(d);
    if (h == NULL || (rdlm_load(&h->out_n, RDLM_ACQUIRE) == 0 &&
                      rdlm_load(&h->waiting, RDLM_RELAXED) == 0 &&
                      rdlm_load(&h->tried_busy, RDLM_RELAXED) == 0)) {
        return;
    }
    do {
        pthread_mutex_lock(&h->lock);
        if ((rdlm_load(&h->waiting, RDLM_RELAXED) != 0 ||
             rdlm_load(&h->tried_busy, RDLM_RELAXED) != 0) &&
            rdlm_clock_now_ns() >= h->scan_at) {
            int tried = (int)rdlm_exchange(&h->tried_busy, 0, RDLM_RELAXED);

            h->scan_at = rdlm_clock_now_ns() + RDLM_AMQ_SCAN_NS;
            ndead = rdlm_amq_scan(d, dead, RDLM_AMQ_RECOVER_MAX);
            nsem = d->recovery.ended != NULL
                       ? rdlm_amq_held_dead(d, sem_dead, RDLM_AMQ_RECOVER_MAX, tried)
                       : 0;
        }
        n = rdlm_load(&h->out_n, RDLM_RELAXED);
        n = n < 16 ? n : 16;
        for (uint32_t i = 0; i < n; i++) {
            batch[i] = h->out[(h->out_head + i) % h->cap];
        }
        h->out_head = (h->out_head + n) % h->cap;
        rdlm_store(&h->out_n, rdlm_load(&h->out_n, RDLM_RELAXED) - n, RDLM_RELEASE);
        pthread_mutex_unlock(&h->lock);
        for (uint32_t i = 0; i < n; i++) {
            rdlm_status_t s = d->tl->am->send(d->tl, batch[i].dst, RDLM_GLOBAL_AM_LOCK_ANS,
                                              &batch[i].m, sizeof(batch[i].m));

            if (s != RDLM_OK) {
                rdlm_warn("dist: lock home: answering rank %u failed: %s", batch[i].dst,
                          rdlm_status_str(s));
            }
        }
    } while (n == 16);
    for (uint32_t i = 0; i < ndead; i++) {
        rdlm_amq_recover(d, &dead[i]); /* its grant, if any, leaves at the next flush */
    }
    for (uint32_t i = 0; i < nsem; i++) {
        rdlm_amq_sem_recover(d, &sem_dead[i]); /* the same */
    }
}

static rdlm_status_t rdlm_amq_home_new(rdlm_global_t *d)
{
    struct rdlm_amq_home *h = calloc(1, sizeof(*h));
    size_t nw = (size_t)d->bootstrap->size * RDLM_GLOBAL_QNODES;

    if (h == NULL) {
        return RDLM_ERR_NO_MEMORY;
    }
    pthread_mutex_init(&h->lock, NULL);
    h->cap = (uint32_t)nw;
    h->recs = calloc(d->home_slots, sizeof(*h->recs));
    h->waiters = calloc(nw, sizeof(*h->waiters));
    h->out = calloc(nw, sizeof(*h->out));
    d->amq_home = h;
    return h->recs && h->waiters && h->out ? RDLM_OK : RDLM_ERR_NO_MEMORY;
}

void rdlm_amq_free(rdlm_global_t *d)
{
    struct rdlm_amq_home *h = d->amq_home;

    if (h != NULL) {
        pthread_mutex_destroy(&h->lock);
        free(h->recs);
        free(h->waiters);
        free(h->held);
        free(h->out);
        free(h);
        d->amq_home = NULL;
    }
}

rdlm_status_t rdlm_amq_setup(rdlm_global_t *d, int wanted)
{
    const rdlm_tl_bootstrap_t *bs = d->bootstrap;
    const rdlm_tl_idle_t idle = {rdlm_global_progress_idle, d};
    uint32_t mine = wanted && d->caps.amo_needs_target_progress &&
                    (d->caps.flags & RDLM_TL_CAP_AM) && d->caps.progress_thread &&
                    d->caps.am_max_payload >= sizeof(rdlm_amq_msg_t) && !d->barrier_only;
    uint32_t *all = calloc(bs->size, sizeof(*all));
    const char *seen_dead;
    rdlm_status_t s = all != NULL ? bs->allgather(bs->arg, &mine, all, sizeof(mine), &idle)
                                  : RDLM_ERR_NO_MEMORY;

    d->am_lock = s == RDLM_OK;
    for (uint32_t r = 0; s == RDLM_OK && r < bs->size; r++) {
        d->am_lock &= all[r] != 0;
    }
    free(all);
    if (!d->am_lock) {
        return s;
    }
    d->planted_settle_busy = getenv("RDLMTEST_AMQ_SETTLE_BUSY") != NULL;
    d->test_replay_rel = getenv("RDLMTEST_AMQ_REPLAY_REL") != NULL;
    seen_dead = getenv("RDLMTEST_AMQ_SEEN_DEAD");
    d->test_seen_dead = seen_dead != NULL ? (uint32_t)atoi(seen_dead) + 1 : 0;
    if (d->nodes.leader_of[d->nodes.node] == d->rank) {
        s = rdlm_amq_home_new(d);
    }
    if (s == RDLM_OK) {
        s = d->tl->am->set_handler(d->tl, RDLM_GLOBAL_AM_LOCK_REQ, rdlm_amq_req_handler, d);
    }
    if (s == RDLM_OK) {
        s = d->tl->am->set_handler(d->tl, RDLM_GLOBAL_AM_LOCK_ANS, rdlm_amq_ans_handler, d);
    }
    if (s == RDLM_OK && d->rank == 0) {
        rdlm_info("dist: cross-node exclusive locks are served by their home process "
                  "with active messages (transport %s emulates remote atomics; "
                  "RDLM_LOCK_AM=0 keeps the remote-atomic queue)",
                  d->caps.backend);
    }
    return s;
}
