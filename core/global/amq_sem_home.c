/*
 * A semaphore at its home (amq.h has the protocol; amq_home.c dispatches the
 * messages): the record keeps N and the permits taken, and the waiters queued in
 * arrival order with the permits k each asks for. A request is granted at once only
 * when nobody is queued and its k fit; a release, and a cancel that takes the head
 * away, grant from the head while the head's k fit. With leases, the permits of a
 * holder that died come back once its lease ended (amq_sem_held.c). Spin model:
 * tests/model/am_sem.pml.
 *
 * Test hook (RDLMTEST_AMQ_SEEN_DEAD=r, d->test_seen_dead): the home counts rank r,
 * when its turn comes, as dead, as a transport that wrongly reports a live peer lost.
 */
#include "amq_home.h"

#include "log.h"

void rdlm_amq_sem_grant_ready(rdlm_global_t *d, rdlm_amq_rec_t *rec)
{
    struct rdlm_amq_home *h = d->amq_home;

    while (rec->head != 0 && rec->taken + h->waiters[rec->head - 1].k <= rec->permits) {
        uint32_t wi = rec->head - 1, rank = wi / RDLM_GLOBAL_QNODES;
        rdlm_amq_msg_t m = {.type = RDLM_AMQ_GRANT,
                            .q = (uint8_t)(wi % RDLM_GLOBAL_QNODES),
                            .seq = h->waiters[wi].last_seq,
                            .token = RDLM_AMQ_COUNT_BASE};

        rdlm_amq_unlink(h, rec, wi);
        /* The transport's flag only: a process record's check is a system call, and
         * this is every queued grant's path. The waiter is told, in case the
         * transport counts a live one dead: its wait ends (am_sem.pml's finding). */
        if (rank != d->rank &&
            (rdlm_tl_peer_dead(d->tl, rank) || rank + 1 == d->test_seen_dead)) {
            rdlm_warn("dist: semaphore home: rank %u, waiting for permits, counts as dead: "
                      "its place is dropped (it is told RDLM_ERR_PEER_DEAD if it lives)",
                      rank);
            rdlm_amq_refuse(d, wi, m.seq, RDLM_AMQ_LOST);
            continue;
        }
        rec->taken += h->waiters[wi].k;
        rdlm_amq_held_grant(h, (uint32_t)(rec - h->recs), rank, h->waiters[wi].k);
        rdlm_amq_out(d, rank, &m);
    }
}

void rdlm_amq_sem_home(rdlm_global_t *d, rdlm_amq_rec_t *rec, uint32_t wi,
                       const rdlm_amq_msg_t *m)
{
    struct rdlm_amq_home *h = d->amq_home;
    rdlm_amq_msg_t a = {.type = RDLM_AMQ_GRANT,
                        .q = (uint8_t)(wi % RDLM_GLOBAL_QNODES),
                        .seq = m->seq,
                        .token = RDLM_AMQ_COUNT_BASE};

    if (m->type == RDLM_AMQ_SEM_COUNT) {
        a.token += rec->taken;
    } else if (m->token == 0 || m->token > UINT32_MAX || m->k == 0 || m->k > m->token ||
               (rec->permits != 0 && rec->permits != m->token)) {
        rdlm_error("dist: semaphore home: rank %u asked %u permits of %llu (the record "
                   "has %u): refused",
                   wi / RDLM_GLOBAL_QNODES, m->k, (unsigned long long)m->token,
                   rec->permits);
        a.type = RDLM_AMQ_BUSY;
    } else {
        rec->permits = (uint32_t)m->token;
        if (rec->head == 0 && rec->taken + m->k <= rec->permits) {
            rec->taken += m->k; /* nobody queued (FIFO) and they fit */
            rdlm_amq_held_grant(h, (uint32_t)(rec - h->recs), wi / RDLM_GLOBAL_QNODES,
                                m->k);
        } else if (m->type == RDLM_AMQ_SEM_TRY) {
            a.type = RDLM_AMQ_BUSY;
            if (d->recovery.ended != NULL) { /* the scan looks too (amq_sem_held.c) */
                rdlm_store(&h->tried_busy, 1, RDLM_RELAXED);
            }
        } else {
            h->waiters[wi].k = m->k;
            rdlm_amq_enqueue(h, rec, wi);
            return;
        }
    }
    rdlm_amq_out(d, wi / RDLM_GLOBAL_QNODES, &a);
}

void rdlm_amq_sem_give_back(rdlm_global_t *d, rdlm_amq_rec_t *rec, uint32_t src, uint32_t k)
{
    k = rdlm_amq_held_release(d->amq_home, (uint32_t)(rec - d->amq_home->recs), src, k);
    if (k > rec->taken) {
        rdlm_error("dist: semaphore home: rank %u gave back %u permits of %u taken (a "
                   "bug): the count stays at 0",
                   src, k, rec->taken);
        k = rec->taken;
    }
    rec->taken -= k;
    rdlm_amq_sem_grant_ready(d, rec);
}
