/* Chain hashes of what a replica applied, and the divergence check (witness.h). */
#include "witness.h"

#include <string.h>

#include "log.h"

#define RDLM_LEASE_CHAIN_PRIME UINT64_C(0x100000001b3)

uint64_t rdlm_lease_chain_next(uint64_t chain, const void *entry, size_t len)
{
    const uint8_t *p = entry;

    for (size_t i = 0; i < len; i++) {
        chain = (chain ^ p[i]) * RDLM_LEASE_CHAIN_PRIME;
    }
    return chain;
}

static void rdlm_lease_witness_put(rdlm_lease_witness_t *w, rdlm_lease_mark_t mark)
{
    w->newest = mark;
    w->ring[mark.n % RDLM_LEASE_WITNESS_RING] = mark;
}

void rdlm_lease_witness_init(rdlm_lease_witness_t *w)
{
    memset(w, 0, sizeof(*w));
    pthread_mutex_init(&w->lock, NULL);
    w->known = 1;
    rdlm_lease_witness_put(w, (rdlm_lease_mark_t){.n = 0, .chain = RDLM_LEASE_CHAIN_START});
}

void rdlm_lease_witness_fini(rdlm_lease_witness_t *w)
{
    pthread_mutex_destroy(&w->lock);
}

void rdlm_lease_witness_apply(rdlm_lease_witness_t *w, const void *entry, size_t len)
{
    pthread_mutex_lock(&w->lock);
    rdlm_lease_witness_put(w,
                           (rdlm_lease_mark_t){
                               .n = w->newest.n + 1,
                               .chain = rdlm_lease_chain_next(w->newest.chain, entry, len),
                           });
    pthread_mutex_unlock(&w->lock);
}

void rdlm_lease_witness_restart(rdlm_lease_witness_t *w, rdlm_lease_mark_t mark, int known)
{
    pthread_mutex_lock(&w->lock);
    memset(w->ring, 0, sizeof(w->ring));
    w->known = known;
    rdlm_lease_witness_put(w, mark);
    pthread_mutex_unlock(&w->lock);
}

int rdlm_lease_witness_newest(rdlm_lease_witness_t *w, rdlm_lease_mark_t *mark_p)
{
    int known;

    pthread_mutex_lock(&w->lock);
    known = w->known;
    *mark_p = known ? w->newest : (rdlm_lease_mark_t){0};
    pthread_mutex_unlock(&w->lock);
    return known;
}

/* Under the lock. */
static int rdlm_lease_witness_find(const rdlm_lease_witness_t *w, uint64_t n,
                                   uint64_t *chain_p)
{
    const rdlm_lease_mark_t *m = &w->ring[n % RDLM_LEASE_WITNESS_RING];

    if (!w->known || n > w->newest.n || m->n != n || (n == 0 && m->chain == 0)) {
        return 0;
    }
    *chain_p = m->chain;
    return 1;
}

int rdlm_lease_witness_lookup(rdlm_lease_witness_t *w, uint64_t n, uint64_t *chain_p)
{
    int found;

    pthread_mutex_lock(&w->lock);
    found = rdlm_lease_witness_find(w, n, chain_p);
    pthread_mutex_unlock(&w->lock);
    return found;
}

int rdlm_lease_witness_check(rdlm_lease_witness_t *w, uint64_t n, uint64_t chain,
                             const char *who)
{
    uint64_t mine;
    int agree, first = 0;

    pthread_mutex_lock(&w->lock);
    agree = !rdlm_lease_witness_find(w, n, &mine) || mine == chain;
    if (!agree && !w->diverged) {
        w->diverged = first = 1;
        w->first_bad = (rdlm_lease_mark_t){.n = n, .chain = mine};
        w->bad_chain = chain;
    }
    pthread_mutex_unlock(&w->lock);
    if (first) {
        rdlm_error("lease: this replica and %s applied different entries at entry %llu "
                   "(chains %016llx and %016llx): a committed entry was lost or changed "
                   "(libraft). Refusing every request from now on; restore the "
                   "authority from the data of a replica you trust",
                   who, (unsigned long long)n, (unsigned long long)mine,
                   (unsigned long long)chain);
    }
    return agree;
}

int rdlm_lease_witness_diverged(rdlm_lease_witness_t *w)
{
    int d;

    pthread_mutex_lock(&w->lock);
    d = w->diverged;
    pthread_mutex_unlock(&w->lock);
    return d;
}
