/*
 * The permits each process holds at a semaphore's home (amq.h), so that, with leases,
 * the permits of a process that died come back once the authority ended its lease.
 *
 * The home keeps one entry per (semaphore, rank) holding permits: an open-addressed
 * table (linear probing; an entry whose count drops to 0 is deleted by shifting the
 * ones after it back, so the table holds the holders of now). A grant adds to its
 * rank's entry, a SEM_REL takes from the sender's. Recovery, when some waiter of the
 * semaphore waits, or a SEM_TRY was refused since the last scan (a process that only
 * tries never queues; rdlm_amq_flush's scan, every 100 ms): a holder whose process is
 * gone and whose lease the authority ended gives its permits back, and its entry
 * stays, marked returned: a SEM_REL of that rank still in flight then changes
 * nothing (it would give the permits back twice). Without leases nothing comes back:
 * a process past its lease fails closed, one without a lease may only be slow.
 *
 * If the table cannot grow (no memory), the grant is not tracked: its permits count as
 * taken as always, their SEM_REL gives them back as always, and only a death loses
 * them (logged).
 */
#include "amq_home.h"

#include <stdlib.h>

#include "log.h"

#define RDLM_AMQ_HELD_FIRST 64u

static uint32_t rdlm_amq_held_hash(uint32_t slot, uint32_t rank, uint32_t cap)
{
    uint64_t x = ((uint64_t)slot << 32 | rank) * 0x9e3779b97f4a7c15ull;

    return (uint32_t)(x >> 32) & (cap - 1);
}

/* The entry of (slot, rank), or NULL. */
static rdlm_amq_held_t *rdlm_amq_held_find(struct rdlm_amq_home *h, uint32_t slot,
                                           uint32_t rank)
{
    for (uint32_t i = h->held_cap ? rdlm_amq_held_hash(slot, rank, h->held_cap) : 0;
         h->held_cap != 0 && h->held[i].slot1 != 0; i = (i + 1) & (h->held_cap - 1)) {
        if (h->held[i].slot1 == slot + 1 && h->held[i].rank == rank) {
            return &h->held[i];
        }
    }
    return NULL;
}

/* Put e into a table with room (no entry of its key there). */
static void rdlm_amq_held_put(rdlm_amq_held_t *t, uint32_t cap, const rdlm_amq_held_t *e)
{
    uint32_t i = rdlm_amq_held_hash(e->slot1 - 1, e->rank, cap);

    while (t[i].slot1 != 0) {
        i = (i + 1) & (cap - 1);
    }
    t[i] = *e;
}

/* Room for one more entry (at most half full): 0 if there is none. */
static int rdlm_amq_held_room(struct rdlm_amq_home *h)
{
    uint32_t cap = h->held_cap ? h->held_cap * 2 : RDLM_AMQ_HELD_FIRST;
    rdlm_amq_held_t *t;

    if (2 * (h->held_n + 1) <= h->held_cap) {
        return 1;
    }
    t = calloc(cap, sizeof(*t));
    if (t == NULL) {
        return 0;
    }
    for (uint32_t i = 0; i < h->held_cap; i++) {
        if (h->held[i].slot1 != 0) {
            rdlm_amq_held_put(t, cap, &h->held[i]);
        }
    }
    free(h->held);
    h->held = t;
    h->held_cap = cap;
    return 1;
}

/* Delete entry e, shifting back the entries of its probe run after it. */
static void rdlm_amq_held_delete(struct rdlm_amq_home *h, rdlm_amq_held_t *e)
{
    uint32_t mask = h->held_cap - 1, hole = (uint32_t)(e - h->held), i = hole;

    for (;;) {
        uint32_t home;

        i = (i + 1) & mask;
        if (h->held[i].slot1 == 0) {
            break;
        }
        home = rdlm_amq_held_hash(h->held[i].slot1 - 1, h->held[i].rank, h->held_cap);
        /* It may move to the hole if its home is not in (hole, i]. */
        if (((i - home) & mask) >= ((i - hole) & mask)) {
            h->held[hole] = h->held[i];
            hole = i;
        }
    }
    h->held[hole] = (rdlm_amq_held_t){0};
    h->held_n--;
}

void rdlm_amq_held_grant(struct rdlm_amq_home *h, uint32_t slot, uint32_t rank, uint32_t k)
{
    rdlm_amq_held_t *e = rdlm_amq_held_find(h, slot, rank);

    if (e == NULL && rdlm_amq_held_room(h)) {
        rdlm_amq_held_t fresh = {.slot1 = slot + 1, .rank = rank};

        rdlm_amq_held_put(h->held, h->held_cap, &fresh);
        h->held_n++;
        e = rdlm_amq_held_find(h, slot, rank);
    }
    if (e == NULL) {
        rdlm_error("dist: semaphore home: no memory to note %u permits of rank %u: they "
                   "are lost if it dies holding them",
                   k, rank);
        return;
    }
    e->k += k; /* returned stays: a rank whose lease ended gives nothing back itself */
}

uint32_t rdlm_amq_held_release(struct rdlm_amq_home *h, uint32_t slot, uint32_t rank,
                               uint32_t k)
{
    rdlm_amq_held_t *e = rdlm_amq_held_find(h, slot, rank);

    if (e != NULL && e->returned) {
        rdlm_warn("dist: semaphore home: rank %u gave back %u permits that came back "
                  "when its lease ended: ignored",
                  rank, k);
        return 0;
    }
    if (e != NULL) {
        e->k = e->k > k ? e->k - k : 0;
        if (e->k == 0) {
            rdlm_amq_held_delete(h, e);
        }
    }
    return k; /* an untracked grant's permits (no memory) come back as always */
}

uint32_t rdlm_amq_held_dead(rdlm_global_t *d, rdlm_amq_sem_dead_t *dead, uint32_t max,
                            int any_sem)
{
    struct rdlm_amq_home *h = d->amq_home;
    uint32_t n = 0;

    for (uint32_t i = 0; i < h->held_cap && n < max; i++) {
        const rdlm_amq_held_t *e = &h->held[i];

        if (e->slot1 != 0 && e->k != 0 && (any_sem || h->recs[e->slot1 - 1].head != 0) &&
            e->rank != d->rank && rdlm_global_rank_gone(d, e->rank)) {
            dead[n++] = (rdlm_amq_sem_dead_t){e->slot1 - 1, e->rank};
        }
    }
    return n;
}

void rdlm_amq_sem_recover(rdlm_global_t *d, const rdlm_amq_sem_dead_t *dead)
{
    struct rdlm_amq_home *h = d->amq_home;
    rdlm_amq_held_t *e;

    if (!d->recovery.ended(d->recovery.arg, dead->rank)) {
        return; /* asked again at the next scan */
    }
    pthread_mutex_lock(&h->lock);
    e = rdlm_amq_held_find(h, dead->slot, dead->rank);
    if (e != NULL && e->k != 0) {
        rdlm_amq_rec_t *rec = &h->recs[dead->slot];

        rdlm_warn("dist: semaphore home: rank %u died holding %u permits (home slot %u) "
                  "and its lease ended: they come back",
                  dead->rank, e->k, dead->slot);
        rec->taken = rec->taken > e->k ? rec->taken - e->k : 0;
        e->k = 0;
        e->returned = 1;
        rdlm_amq_sem_grant_ready(d, rec);
    }
    pthread_mutex_unlock(&h->lock);
}
