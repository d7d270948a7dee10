/* Exclusive locks on a service's lock homes (svc.h, "Locks"). */
#include <time.h>

#include "clock.h"
#include "client_internal.h"
#include "home_layout.h"
#include "log.h"
#include "svc_internal.h"

#define RDLM_SVC_POLL_FIRST_NS 20000ull
#define RDLM_SVC_POLL_MAX_NS 1000000ull
/* A waiter asks the authority whether the holder's session ended once the word has
 * not changed for this long, and again as long as it does not. */
#define RDLM_SVC_FATE_EVERY_NS 500000000ull
/* The pause between attempts while a lock's home is unreachable, and how long a
 * release keeps trying to reach it. */
#define RDLM_SVC_DOWN_PAUSE_NS 50000000ull
#define RDLM_SVC_RELEASE_TRY_NS 15000000000ull
/* A try-acquire gives up (RDLM_ERR_BUSY) after its lock moved this often. */
#define RDLM_SVC_TRY_MOVES 4u
/* After its release of a lock, a process takes no free word with WANT (a waiter waited
 * past its bypass bound) for this long, unless its acquire set WANT itself: longer
 * than a waiter's longest pause between two reads, so the waiter sees the word. */
#define RDLM_SVC_YIELD_NS (2 * RDLM_SVC_POLL_MAX_NS)

static uint32_t rdlm_svc_lock_next(const rdlm_svc_t *svc, uint32_t i)
{
    return i + 1 == svc->locks_cap ? 0 : i + 1;
}

/* The index of lock id in the table, locks_lock held: its entry, else the first gone
 * or free one of its probe chain (create), else locks_cap. */
static uint32_t rdlm_svc_lock_find(const rdlm_svc_t *svc, uint64_t id, int create)
{
    uint32_t i = (uint32_t)(id % svc->locks_cap), reuse = svc->locks_cap;

    for (uint32_t n = 0; n < svc->locks_cap; n++, i = rdlm_svc_lock_next(svc, i)) {
        const rdlm_svc_lock_t *k = &svc->locks[i];

        if (k->gone) {
            reuse = reuse == svc->locks_cap ? i : reuse;
        } else if (k->id == id) {
            return i;
        } else if (k->id == 0) {
            return !create ? svc->locks_cap : reuse != svc->locks_cap ? reuse : i;
        }
    }
    return create ? reuse : svc->locks_cap;
}

/* The state of lock id in this process, created on first use (NULL: table full, or
 * unknown and not create); one use counted until rdlm_svc_lock_put. */
static rdlm_svc_lock_t *rdlm_svc_lock_of(rdlm_svc_t *svc, uint64_t id, int create)
{
    rdlm_svc_lock_t *found = NULL;
    uint32_t i;

    pthread_mutex_lock(&svc->locks_lock);
    i = rdlm_svc_lock_find(svc, id, create);
    if (i < svc->locks_cap) {
        found = &svc->locks[i];
        if (found->id != id || found->gone) {
            *found = (rdlm_svc_lock_t){.id = id};
        }
        found->users++;
    }
    pthread_mutex_unlock(&svc->locks_lock);
    return found;
}

/* The end of a use counted by rdlm_svc_lock_of. */
static void rdlm_svc_lock_put(rdlm_svc_t *svc, rdlm_svc_lock_t *k)
{
    pthread_mutex_lock(&svc->locks_lock);
    k->users--;
    pthread_mutex_unlock(&svc->locks_lock);
}

void rdlm_svc_lock_forget(rdlm_svc_t *svc, uint64_t id)
{
    uint32_t i;

    pthread_mutex_lock(&svc->locks_lock);
    i = rdlm_svc_lock_find(svc, id, 0);
    if (i < svc->locks_cap && svc->locks[i].held == 0 && svc->locks[i].users == 0) {
        svc->locks[i].gone = 1;
        /* A gone entry that ends its probe chain is free again, and so on backwards. */
        while (svc->locks[i].gone && svc->locks[rdlm_svc_lock_next(svc, i)].id == 0) {
            svc->locks[i] = (rdlm_svc_lock_t){.id = 0};
            i = i == 0 ? svc->locks_cap - 1 : i - 1;
        }
    }
    pthread_mutex_unlock(&svc->locks_lock);
}

int rdlm_svc_holder_ended(rdlm_svc_t *svc, rdlm_svc_link_t *l, uint64_t tag,
                          rdlm_status_t *st_p)
{
    uint64_t sid = 0;
    int ended;

    *st_p = rdlm_svc_get(l, rdlm_svc_off_tag((uint32_t)tag), &sid, sizeof(sid));
    if (*st_p != RDLM_OK || sid == 0)
        return 0; /* no session published yet: it cannot hold anything */
    ended = rdlm_lease_session_ended(svc->session, sid);
    if (ended == RDLM_ERR_LEASE_EXPIRED)
        *st_p = RDLM_ERR_LEASE_EXPIRED; /* ours: nothing to wait for any more */
    else if (ended < 0)
        rdlm_debug("svc: fate of session %llu: %s", (unsigned long long)sid,
                   rdlm_status_name((rdlm_status_t)ended));
    return ended == 1;
}

rdlm_status_t rdlm_svc_pause(uint64_t *pause_p, uint64_t deadline)
{
    struct timespec ts = {0, (long)*pause_p};

    if (deadline != UINT64_MAX && rdlm_clock_now_ns() >= deadline)
        return RDLM_ERR_TIMEOUT;
    nanosleep(&ts, NULL);
    *pause_p = *pause_p * 2 < RDLM_SVC_POLL_MAX_NS ? *pause_p * 2 : RDLM_SVC_POLL_MAX_NS;
    return RDLM_OK;
}

rdlm_status_t rdlm_svc_wait(const rdlm_svc_t *svc, uint64_t *pause_p, uint64_t deadline)
{
    rdlm_status_t st = rdlm_svc_pause(pause_p, deadline);

    if (st == RDLM_OK && svc->closing != NULL && rdlm_load(svc->closing, RDLM_RELAXED))
        return RDLM_ERR_CLOSED;
    return st;
}

/* Whether lock k is still in its slot at home l: its key read now is the one k
 * resolved. Called after reading a word and before acting on it (home_layout.h). The
 * planted bug RDLMTEST_SVC_RECLAIM_NO_CHECK (tests only) skips it. */
static rdlm_status_t rdlm_svc_still_there(rdlm_svc_t *svc, rdlm_svc_link_t *l,
                                          const rdlm_svc_lock_t *k)
{
    uint64_t key = 0;
    rdlm_status_t st;

    if (svc->planted_no_check)
        return RDLM_OK;
    st = rdlm_svc_get(l, rdlm_svc_off_slot_key(l->tags, k->slot), &key, sizeof(key));

    return st != RDLM_OK ? st : key == k->key ? RDLM_OK : RDLM_SVC_MOVED;
}

/* Whether this process may take free word w of lock k now: a word with WANT is left to
 * the waiter that set it for RDLM_SVC_YIELD_NS after this process's last release of
 * the lock, unless this call set WANT itself (wanted). */
static int rdlm_svc_may_take(const rdlm_svc_lock_t *k, uint64_t w, int wanted)
{
    return !rdlm_svc_word_wanted(w) || wanted ||
           rdlm_clock_now_ns() - k->release_ns >= RDLM_SVC_YIELD_NS;
}

/* Set WANT on the word at offset off of home l, w_p the word last read there: a waiter
 * past its bypass bound asks that the lock be left to a waiter. One fetch-or, so it
 * lands however often a holder that re-acquires in a loop changes the word (a
 * compare-and-swap from the word read kept failing against one: waits of 15-68 ms with
 * a 1 ms bound). On a held word, its holder's release leaves the word free with WANT;
 * on a free word, it is a reservation: a process that released the lock less than
 * RDLM_SVC_YIELD_NS ago does not take it. It lands on whatever the word is by then: on
 * another name's word (the slot was re-keyed) it costs that lock one deferral, no more,
 * as WANT changes neither the holder nor the sequence, so it needs no key check
 * (home_layout.h's rule for acting on a word read); on a MARK, the claimer drops it
 * (slot.c). *w_p becomes the word now; *wanted_p is set when this call set WANT on a
 * lock word (and left as it was otherwise). */
static rdlm_status_t rdlm_svc_want(rdlm_svc_link_t *l, uint64_t off, uint64_t *w_p,
                                   int *wanted_p)
{
    uint64_t old = 0;
    rdlm_status_t st = rdlm_svc_or(l, off, RDLM_SVC_WANT_BIT, &old);

    if (st == RDLM_OK) {
        *w_p = old | RDLM_SVC_WANT_BIT;
        *wanted_p |= !rdlm_svc_word_is_mark(old) && !rdlm_svc_word_wanted(old);
    }
    return st;
}

/* The acquire loop on home l (held), for lock state k whose slot is resolved.
 * RDLM_SVC_MOVED: the slot went to another name. */
static rdlm_status_t rdlm_svc_take(rdlm_svc_t *svc, rdlm_svc_link_t *l, rdlm_svc_lock_t *k,
                                   uint64_t deadline, int try_only, uint64_t *token_p)
{
    uint64_t off = rdlm_svc_off_slot_word(l->tags, k->slot);
    uint64_t w = k->guess, pause = RDLM_SVC_POLL_FIRST_NS;
    uint64_t start = rdlm_clock_now_ns(), next_fate = start + RDLM_SVC_FATE_EVERY_NS;
    /* The guess needs no key check: written here, or 0, which no used slot holds. */
    int broken = 0, checked = 1, wanted = 0, lost = 0;
    rdlm_status_t st;

    for (;;) {
        uint64_t tag = rdlm_svc_word_tag(w), seq = rdlm_svc_word_seq(w), old;
        int mark = rdlm_svc_word_is_mark(w);

        if (!try_only && !broken && !mark && tag != l->tag && !rdlm_svc_word_wanted(w) &&
            !svc->planted_no_want && rdlm_clock_now_ns() - start >= svc->bypass_ns) {
            /* Past the bound, on a held word or a free one: a looping holder retakes a
             * free word between this process's read and its compare-and-swap, every
             * time, so a waiter that only tried free words never got in. */
            st = rdlm_svc_want(l, off, &w, &wanted);
            if (st != RDLM_OK)
                return st;
            checked = 0;
            pause = RDLM_SVC_POLL_FIRST_NS; /* the lock may be left to us soon */
            continue;
        }
        if (!mark && (broken || (tag == 0 && rdlm_svc_may_take(k, w, wanted)))) {
            uint64_t mine = rdlm_svc_word(seq + 1, l->tag);

            if (seq + 1 >= RDLM_SVC_SEQ_MAX) {
                rdlm_error("svc: lock %#llx used up its tokens in epoch %llu: restart "
                           "its home",
                           (unsigned long long)k->id, (unsigned long long)l->epoch);
                return RDLM_ERR_NO_RESOURCE;
            }
            st = checked ? RDLM_OK : rdlm_svc_still_there(svc, l, k);
            if (st == RDLM_OK)
                st = rdlm_svc_cas(l, off, w, mine, &old);
            if (st != RDLM_OK)
                return st;
            if (old == w) {
                k->held = mine;
                *token_p = l->epoch << 40 | (seq + 1);
                return broken && tag != l->tag ? RDLM_OWNER_DEAD : RDLM_OK;
            }
            /* The word moved on. A first failure is retried from the word found (the
             * guess was stale: a process new to the lock guesses the first free word,
             * and a try must not call a free lock busy); after that, one more try is
             * a wait. */
            if (++lost > 1 && rdlm_clock_now_ns() >= deadline)
                return RDLM_ERR_TIMEOUT;
            w = old;
            broken = 0;
            checked = 0;
            continue;
        }
        if (!mark && tag == l->tag) {
            /* Ours, and not held here (the caller's node-local lock): an earlier
             * acquire whose answer was lost with its link. Take it again. */
            rdlm_warn("svc: lock %#llx was left held by this process (an answer lost "
                      "with its link); taking it again",
                      (unsigned long long)k->id);
            broken = 1;
            continue;
        }
        if (try_only)
            return RDLM_ERR_BUSY;
        if (rdlm_lease_session_valid(svc->session) != RDLM_OK)
            return RDLM_ERR_LEASE_EXPIRED; /* this process may not take it any more */
        if (rdlm_clock_now_ns() >= next_fate) {
            /* A MARK: the slot is being re-keyed; a dead client's is given back. */
            int ended = mark ? rdlm_svc_slot_settle(svc, l, k->slot, w, &st)
                             : rdlm_svc_holder_ended(svc, l, tag, &st);

            if (st != RDLM_OK)
                return st;
            next_fate = rdlm_clock_now_ns() + RDLM_SVC_FATE_EVERY_NS;
            if (ended && mark)
                return RDLM_SVC_MOVED;
            if (ended) {
                rdlm_warn("svc: lock %#llx: its holder's session ended; breaking it",
                          (unsigned long long)k->id);
                broken = 1;
                continue; /* CAS from exactly the word read */
            }
        }
        st = rdlm_svc_wait(svc, &pause, deadline);
        if (st == RDLM_OK)
            st = rdlm_svc_get(l, off, &old, sizeof(old));
        if (st != RDLM_OK)
            return st;
        if (old != w) { /* the lock moved on: its holder is alive, or another broke it */
            next_fate = rdlm_clock_now_ns() + RDLM_SVC_FATE_EVERY_NS;
            checked = 0;
        }
        w = old;
    }
}

/* One attempt through the home's current link: resolve the slot if this life of the
 * home has none for k yet, and take the word, again after each move. */
static rdlm_status_t rdlm_svc_attempt(rdlm_svc_t *svc, rdlm_svc_lock_t *k,
                                      uint64_t deadline_ns, int try_only, uint64_t *token_p)
{
    rdlm_svc_link_t *l;
    rdlm_status_t st = rdlm_svc_link_get(svc, rdlm_svc_home_of(svc, k->id), &l);

    if (st != RDLM_OK)
        return st;
    for (unsigned moves = 0; st == RDLM_OK; moves++) {
        if (k->epoch != l->epoch) {
            st = rdlm_svc_slot_resolve(svc, l, k, try_only ? 0 : deadline_ns);
            k->epoch = st == RDLM_OK ? l->epoch : 0;
        }
        if (st == RDLM_OK)
            st = rdlm_svc_take(svc, l, k, deadline_ns, try_only, token_p);
        if (st != RDLM_SVC_MOVED)
            break;
        k->epoch = 0;
        st = try_only && moves >= RDLM_SVC_TRY_MOVES ? RDLM_ERR_BUSY : RDLM_OK;
    }
    if (try_only && st == RDLM_ERR_TIMEOUT)
        st = RDLM_ERR_BUSY; /* a claim of the name under way */
    rdlm_svc_link_put(l, st);
    return st;
}

rdlm_status_t rdlm_svc_lock_acquire(rdlm_svc_t *svc, uint64_t id, uint64_t deadline_ns,
                                    int try_only, uint64_t *token_p)
{
    rdlm_svc_lock_t *k = rdlm_svc_lock_of(svc, id, 1);
    rdlm_status_t st;

    if (k == NULL) {
        rdlm_error("svc: more than %u locks used by this process", svc->locks_cap);
        return RDLM_ERR_NO_RESOURCE;
    }
    /* A home that is down, restarting or not serving yet is waited for. */
    for (;;) {
        uint64_t pause = RDLM_SVC_DOWN_PAUSE_NS;
        rdlm_status_t waited;

        st = rdlm_svc_attempt(svc, k, deadline_ns, try_only, token_p);
        if ((st != RDLM_ERR_UNAVAILABLE && st != RDLM_ERR_PEER_DEAD) || try_only)
            break;
        waited = rdlm_svc_wait(svc, &pause, deadline_ns);
        if (waited != RDLM_OK) {
            /* past the deadline, the home's status says why */
            st = waited == RDLM_ERR_CLOSED ? waited : st;
            break;
        }
    }
    rdlm_svc_lock_put(svc, k);
    return st;
}

/* Free held word *held_p at offset off of home l: from the word held, or, when a waiter
 * set WANT on it, from that word to the free word with WANT (*held_p becomes it).
 * *old_p: the word found by the last compare-and-swap. */
static rdlm_status_t rdlm_svc_free(rdlm_svc_link_t *l, uint64_t off, uint64_t *held_p,
                                   uint64_t *old_p)
{
    rdlm_status_t st = rdlm_svc_cas(l, off, *held_p, rdlm_svc_word_freed(*held_p), old_p);

    if (st == RDLM_OK && !rdlm_svc_word_wanted(*held_p) &&
        *old_p == (*held_p | RDLM_SVC_WANT_BIT)) {
        *held_p = *old_p;
        st = rdlm_svc_cas(l, off, *held_p, rdlm_svc_word_freed(*held_p), old_p);
    }
    return st;
}

/* Release lock k (one use counted), as rdlm_svc_lock_release. */
static rdlm_status_t rdlm_svc_lock_free_word(rdlm_svc_t *svc, rdlm_svc_lock_t *k,
                                             uint64_t id)
{
    uint64_t held, old = 0;
    uint64_t deadline = rdlm_clock_deadline(RDLM_SVC_RELEASE_TRY_NS);
    rdlm_svc_link_t *l;
    rdlm_status_t st;

    if (k->held == 0)
        return RDLM_ERR_NOT_OWNER;
    held = k->held;
    k->held = 0;
    /* A link declared dead may hide a live home: reconnect and free the word there
     * (same life, same slot), for a bounded time. */
    for (;;) {
        uint64_t pause = RDLM_SVC_DOWN_PAUSE_NS;

        st = rdlm_svc_link_get(svc, rdlm_svc_home_of(svc, id), &l);
        if (st == RDLM_OK && l->epoch != k->epoch) {
            rdlm_svc_link_put(l, RDLM_OK);
            rdlm_warn("svc: lock %#llx was lost: its home restarted while held",
                      (unsigned long long)id);
            return RDLM_ERR_PEER_DEAD;
        }
        if (st == RDLM_OK) {
            st = rdlm_svc_free(l, rdlm_svc_off_slot_word(l->tags, k->slot), &held, &old);
            rdlm_svc_link_put(l, st);
        }
        if ((st != RDLM_ERR_PEER_DEAD && st != RDLM_ERR_UNAVAILABLE) ||
            rdlm_svc_pause(&pause, deadline) != RDLM_OK)
            break;
    }
    if (st != RDLM_OK)
        return st == RDLM_ERR_UNAVAILABLE ? RDLM_ERR_PEER_DEAD : st;
    /* Another word: a waiter broke the lock (only once the authority ended this
     * session, so after its validity here ended), or an earlier attempt of this
     * release landed after its link was declared dead (the word then was the freed
     * one, and maybe taken since). */
    if (old != held && rdlm_lease_session_valid(svc->session) != RDLM_OK) {
        rdlm_warn("svc: lock %#llx was broken while held: this session ended",
                  (unsigned long long)id);
        return RDLM_ERR_LEASE_EXPIRED;
    }
    k->guess = old == held ? rdlm_svc_word_freed(held) : 0; /* else read and checked */
    k->release_ns = rdlm_clock_now_ns();                    /* rdlm_svc_may_take */
    return RDLM_OK;
}

rdlm_status_t rdlm_svc_lock_release(rdlm_svc_t *svc, uint64_t id)
{
    rdlm_svc_lock_t *k = rdlm_svc_lock_of(svc, id, 0);
    rdlm_status_t st;

    if (k == NULL)
        return RDLM_ERR_NOT_OWNER;
    st = rdlm_svc_lock_free_word(svc, k, id);
    rdlm_svc_lock_put(svc, k);
    return st;
}

rdlm_status_t rdlm_svc_lock_abandon(rdlm_svc_t *svc, uint64_t id)
{
    rdlm_svc_lock_t *k = rdlm_svc_lock_of(svc, id, 0);
    rdlm_status_t st = RDLM_ERR_NOT_OWNER;

    if (k == NULL)
        return st;
    if (k->held != 0) {
        k->held = 0;
        k->guess = 0; /* read and checked at the next acquire */
        st = RDLM_OK;
        rdlm_warn("svc: lock %#llx: left held by this session, whose lease was lost: the "
                  "next holder takes it over with RDLM_OWNER_DEAD once the authority "
                  "ended the session",
                  (unsigned long long)id);
    }
    rdlm_svc_lock_put(svc, k);
    return st;
}
