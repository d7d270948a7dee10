/*
 * The slots of a lock home as clients use them (home_layout.h has the region): how a lock
 * finds its slot, how a name without one takes one over, and how a slot left half
 * re-keyed by a client that died is given back. Slots are reused, so a home serves
 * any number of names over its life, as long as no bucket has more locks HELD at once
 * than slots.
 *
 * Resolve (rdlm_svc_slot_resolve), lock id at home l:
 *   1. read id's bucket (keys and words, one get). A slot whose key names id and
 *      whose word is no MARK is the lock's: remember its key; done. (The get reads
 *      key and word in no set order, so the word is no guess: the first acquire reads
 *      the word, then checks the key, as slock.c does for every word it did not
 *      write.)
 *   2. else claim one. The victim: an unused slot (no name in its key), else the
 *      free slot (tag 0) with the smallest word, i.e. roughly the one whose key
 *      started longest ago. None, and no MARK in the bucket: every slot is held:
 *      RDLM_ERR_NO_RESOURCE.
 *   3. raise the floor to the victim's sequence (a compare-and-swap loop on a value
 *      that only grows);
 *   4. MARK the victim: CAS(word: the free word read -> MARK(nonce, my tag)). Lost
 *      (taken or claimed meanwhile): back to 1. From here on every client acting on
 *      the old key's word fails (the word moved on) and no other claimer takes it;
 *   5. re-key: CAS(key: the key read -> id's name, generation + 1);
 *   6. read the bucket again. Another slot whose key names id: another client claims
 *      the name at the same time (each reads after it wrote, so of two claimers at
 *      least one sees the other): yield, i.e. CAS(key -> no name, generation + 1),
 *      CAS(word: MARK -> floor + 1), pause, back to 1;
 *   7. finish: CAS(word: MARK -> free at floor + 1), the floor read after step 6. That
 *      word (written here) is the first guess.
 *   A slot of id whose word is a MARK is being claimed: pause (20 us .. 1 ms), read
 *   again, and every 500 ms ask whether the MARK's client ended (settle); the wait
 *   ends when the owner's context closes (rdlm_svc_wait).
 *
 * Why floor + 1: the floor is at least every sequence a key left behind (step 3
 *   precedes the MARK), and a name without a slot read the floor after its old slot
 *   was re-keyed; so a name's tokens grow when it moves, and a slot's word values grow
 *   across its keys: a value belongs to one key for ever.
 *
 * Settle (rdlm_svc_slot_settle): a MARK stays only when its client died (or stopped
 *   past its lease) between steps 4 and 7. Once the authority says that session
 *   ended, a client that met the MARK takes it over (CAS to a MARK of its own, so
 *   nobody else acts on the slot), clears the key (CAS loop: no name, generation + 1)
 *   and frees the word at floor + 1. A MARK of this process's own tag is given back
 *   the same way when no claim of this process at the home runs (a claim cut short by
 *   a lost link left it). The stopped client's late steps fail: its key
 *   CAS expects the key it read (the generation moved), its word CASes its own MARK.
 *   WANT on a MARK: a waiter sets WANT with a fetch-or on the word it last read, held
 *   or free (slock.c), which may be a MARK by the time it lands. Every compare-and-swap from a
 *   MARK (the settler's takeover, and the undo, yield, finish and settle from a MARK of
 *   this process) that finds exactly that MARK with WANT is made again from it, WANT
 *   dropped (rdlm_svc_cas_mark).
 *   The generation has 16 bits: a client stopped between steps 1 and 5 while its
 *   slot was re-keyed a multiple of 65,536 times, ending under the same name, would
 *   re-key it.
 *
 * Planted bug (RDLMTEST_SVC_RECLAIM_RESET, tests only): a new key starts at word 0
 *   instead of floor + 1, as a reuse without generations would. A name's tokens then
 *   go back when it moves, and a stopped client's guess can match another key's word.
 * Test hook (RDLMTEST_SVC_CLAIM_STOP): the process stops itself (SIGSTOP) once, after
 *   step 5 of its first claim, so a test can end its session and resume it.
 */
#include <signal.h>

#include "clock.h"
#include "home_layout.h"
#include "log.h"
#include "svc_internal.h"

#define RDLM_SVC_SETTLE_EVERY_NS 500000000ull
#define RDLM_SVC_SLOT_PAUSE_NS 20000ull

/* A bucket as read: key and word of each of its slots. */
typedef struct rdlm_svc_bucket_view {
    uint32_t first, count;
    uint64_t kw[2 * (2 * RDLM_SVC_BUCKET - 1)];
} rdlm_svc_bucket_view_t;

static rdlm_status_t rdlm_svc_bucket_read(rdlm_svc_link_t *l, uint64_t id,
                                          rdlm_svc_bucket_view_t *b)
{
    rdlm_svc_bucket(id, l->slots, &b->first, &b->count);
    return rdlm_svc_get(l, rdlm_svc_off_slot_key(l->tags, b->first), b->kw, 16u * b->count);
}

/* Raise the floor to at least seq. */
static rdlm_status_t rdlm_svc_floor_raise(rdlm_svc_link_t *l, uint64_t seq)
{
    uint64_t f, old;
    rdlm_status_t st = rdlm_svc_get(l, RDLM_SVC_OFF_FLOOR, &f, sizeof(f));

    while (st == RDLM_OK && f < seq) {
        st = rdlm_svc_cas(l, RDLM_SVC_OFF_FLOOR, f, seq, &old);
        f = old == f ? seq : old;
    }
    return st;
}

/* The free word a slot starts a new key (or no key) with: floor + 1. */
static rdlm_status_t rdlm_svc_fresh(rdlm_svc_t *svc, rdlm_svc_link_t *l, uint64_t *word_p)
{
    uint64_t f = 0;
    rdlm_status_t st = rdlm_svc_get(l, RDLM_SVC_OFF_FLOOR, &f, sizeof(f));

    if (st == RDLM_OK && f + 1 >= RDLM_SVC_SEQ_MAX) {
        rdlm_error("svc: home %s used up its sequences in epoch %llu: restart it", l->addr,
                   (unsigned long long)l->epoch);
        return RDLM_ERR_NO_RESOURCE;
    }
    *word_p = svc->planted_reset ? 0 : rdlm_svc_word(f + 1, 0);
    return st;
}

static uint64_t rdlm_svc_my_mark(rdlm_svc_link_t *l)
{
    return rdlm_svc_mark(rdlm_fetch_add(&l->nonce, 1, RDLM_RELAXED), l->tag);
}

/* CAS(word at off: MARK mark -> to). A waiter's fetch-or may have set WANT on the MARK
 * (slock.c, rdlm_svc_want), so a compare that finds exactly mark | WANT is made again
 * from that; WANT is dropped (the waiter did not count it as set on a lock word).
 * *old_p: the word found, mark if the word was swapped. */
static rdlm_status_t rdlm_svc_cas_mark(rdlm_svc_link_t *l, uint64_t off, uint64_t mark,
                                       uint64_t to, uint64_t *old_p)
{
    rdlm_status_t st = rdlm_svc_cas(l, off, mark, to, old_p);

    if (st == RDLM_OK && *old_p == (mark | RDLM_SVC_WANT_BIT)) {
        st = rdlm_svc_cas(l, off, *old_p, to, old_p);
        *old_p = *old_p == (mark | RDLM_SVC_WANT_BIT) ? mark : *old_p;
    }
    return st;
}

/* Clear slot s's key (no name, generation + 1), whatever it is now: the caller's MARK
 * is on the word, so only a stopped client's last steps can race with it. */
static rdlm_status_t rdlm_svc_key_clear(rdlm_svc_link_t *l, uint32_t s)
{
    uint64_t off = rdlm_svc_off_slot_key(l->tags, s), key, old;
    rdlm_status_t st = rdlm_svc_get(l, off, &key, sizeof(key));

    while (st == RDLM_OK) {
        st = rdlm_svc_cas(l, off, key, rdlm_svc_key_next(key, 0), &old);
        if (old == key)
            break;
        key = old;
    }
    return st;
}

/* Whether MARK mark was left: by a client whose session ended, or by this process
 * while none of its claims at l runs. */
static int rdlm_svc_mark_abandoned(rdlm_svc_t *svc, rdlm_svc_link_t *l, uint64_t mark,
                                   rdlm_status_t *st_p)
{
    uint64_t tag = rdlm_svc_word_tag(mark);

    if (tag == l->tag)
        return rdlm_load(&l->claims, RDLM_ACQUIRE) == 0;
    return rdlm_svc_holder_ended(svc, l, tag, st_p);
}

int rdlm_svc_slot_settle(rdlm_svc_t *svc, rdlm_svc_link_t *l, uint32_t s, uint64_t mark,
                         rdlm_status_t *st_p)
{
    uint64_t off = rdlm_svc_off_slot_word(l->tags, s), mine = rdlm_svc_my_mark(l);
    uint64_t old, fresh;

    *st_p = RDLM_OK;
    if (!rdlm_svc_mark_abandoned(svc, l, mark, st_p))
        return 0;
    *st_p = rdlm_svc_cas_mark(l, off, mark, mine, &old);
    if (*st_p != RDLM_OK || old != mark)
        return *st_p == RDLM_OK; /* settled or finished by someone else: read again */
    rdlm_warn("svc: home %s: slot %u was left half re-keyed by %s; giving it back", l->addr,
              s,
              rdlm_svc_word_tag(mark) == l->tag ? "this process (a link lost mid-claim)"
                                                : "a client whose session ended");
    *st_p = rdlm_svc_key_clear(l, s);
    if (*st_p == RDLM_OK)
        *st_p = rdlm_svc_fresh(svc, l, &fresh);
    if (*st_p == RDLM_OK)
        *st_p = rdlm_svc_cas_mark(l, off, mine, fresh, &old);
    return 1;
}

/* Step 2: the victim of bucket b (index), -1 if none. */
static int32_t rdlm_svc_victim(const rdlm_svc_bucket_view_t *b)
{
    int32_t v = -1;

    for (uint32_t i = 0; i < b->count; i++) {
        uint64_t key = b->kw[2 * i], w = b->kw[2 * i + 1];

        if (rdlm_svc_word_is_mark(w) || rdlm_svc_word_tag(w) != 0)
            continue;
        if (rdlm_svc_key(key, 0) == 0)
            return (int32_t)i; /* never used, or given back */
        if (v < 0 || w < b->kw[2 * v + 1])
            v = (int32_t)i;
    }
    return v;
}

/* Step 6: whether a slot of b other than s has a key naming id. */
static int rdlm_svc_named_elsewhere(const rdlm_svc_bucket_view_t *b, uint32_t s,
                                    uint64_t id)
{
    for (uint32_t i = 0; i < b->count; i++) {
        if (b->first + i != s && rdlm_svc_key_names(b->kw[2 * i], id))
            return 1;
    }
    return 0;
}

/* Steps 3 to 7 on victim index v of bucket b; *done_p: k has the slot (else read
 * again). */
static rdlm_status_t rdlm_svc_claim_steps(rdlm_svc_t *svc, rdlm_svc_link_t *l,
                                          rdlm_svc_lock_t *k, rdlm_svc_bucket_view_t *b,
                                          uint32_t v, int *done_p)
{
    uint32_t s = b->first + v;
    uint64_t key0 = b->kw[2 * v], w0 = b->kw[2 * v + 1];
    uint64_t key = rdlm_svc_key_next(key0, k->id), mine = rdlm_svc_my_mark(l);
    uint64_t off_key = rdlm_svc_off_slot_key(l->tags, s);
    uint64_t off_word = rdlm_svc_off_slot_word(l->tags, s), old, fresh;
    rdlm_status_t st = rdlm_svc_floor_raise(l, rdlm_svc_word_seq(w0));

    *done_p = 0;
    if (st == RDLM_OK)
        st = rdlm_svc_cas(l, off_word, w0, mine, &old);
    if (st != RDLM_OK || old != w0)
        return st;
    st = rdlm_svc_cas(l, off_key, key0, key, &old);
    if (st == RDLM_OK && old != key0) {
        /* The key read was older than the word (one get reads them in no set order):
         * the slot was re-keyed just before. Its key did not change under this MARK:
         * put its word back. (Or a settler took the MARK over: nothing to undo.) */
        return rdlm_svc_cas_mark(l, off_word, mine, w0, &old);
    }
    if (st != RDLM_OK)
        return st;
    if (svc->test_claim_stop) {
        svc->test_claim_stop = 0;
        raise(SIGSTOP);
    }
    st = rdlm_svc_bucket_read(l, k->id, b);
    if (st == RDLM_OK)
        st = rdlm_svc_fresh(svc, l, &fresh);
    if (st != RDLM_OK)
        return st;
    if (rdlm_svc_named_elsewhere(b, s, k->id)) {
        st = rdlm_svc_cas(l, off_key, key, rdlm_svc_key_next(key, 0), &old);
        if (st == RDLM_OK && old == key)
            st = rdlm_svc_cas_mark(l, off_word, mine, fresh, &old);
        return st;
    }
    st = rdlm_svc_cas_mark(l, off_word, mine, fresh, &old);
    if (st != RDLM_OK || old != mine)
        return st;
    k->slot = s;
    k->key = key;
    k->guess = fresh;
    *done_p = 1;
    return RDLM_OK;
}

/* rdlm_svc_claim_steps, counted in l->claims while it runs. */
static rdlm_status_t rdlm_svc_claim(rdlm_svc_t *svc, rdlm_svc_link_t *l, rdlm_svc_lock_t *k,
                                    rdlm_svc_bucket_view_t *b, uint32_t v, int *done_p)
{
    rdlm_status_t st;

    rdlm_fetch_add(&l->claims, 1, RDLM_ACQ_REL);
    st = rdlm_svc_claim_steps(svc, l, k, b, v, done_p);
    rdlm_fetch_sub(&l->claims, 1, RDLM_ACQ_REL);
    return st;
}

/* Step 1 on bucket b: index of the slot of id (*mark_p: whether its word is a MARK),
 * -1 if none. */
static int32_t rdlm_svc_find(const rdlm_svc_bucket_view_t *b, uint64_t id, int *mark_p)
{
    int32_t found = -1;

    for (uint32_t i = 0; i < b->count; i++) {
        if (!rdlm_svc_key_names(b->kw[2 * i], id))
            continue;
        found = (int32_t)i;
        *mark_p = rdlm_svc_word_is_mark(b->kw[2 * i + 1]);
        if (!*mark_p)
            break;
    }
    return found;
}

/* Whether bucket b has a MARK (a claim under way, or a dead client's). */
static int32_t rdlm_svc_any_mark(const rdlm_svc_bucket_view_t *b)
{
    for (uint32_t i = 0; i < b->count; i++) {
        if (rdlm_svc_word_is_mark(b->kw[2 * i + 1]))
            return (int32_t)i;
    }
    return -1;
}

rdlm_status_t rdlm_svc_slot_resolve(rdlm_svc_t *svc, rdlm_svc_link_t *l, rdlm_svc_lock_t *k,
                                    uint64_t deadline)
{
    uint64_t pause = RDLM_SVC_SLOT_PAUSE_NS;
    uint64_t next_settle = rdlm_clock_now_ns() + RDLM_SVC_SETTLE_EVERY_NS;
    rdlm_svc_bucket_view_t b;

    for (;;) {
        int mark = 0, done = 0;
        rdlm_status_t st = rdlm_svc_bucket_read(l, k->id, &b);
        int32_t i = st == RDLM_OK ? rdlm_svc_find(&b, k->id, &mark) : -1;

        if (st != RDLM_OK)
            return st;
        if (i >= 0 && !mark) {
            k->slot = b.first + (uint32_t)i;
            k->key = b.kw[2 * i];
            k->guess = 0;
            return RDLM_OK;
        }
        if (i < 0 && (i = rdlm_svc_victim(&b)) >= 0) {
            st = rdlm_svc_claim(svc, l, k, &b, (uint32_t)i, &done);
            if (st != RDLM_OK || done)
                return st;
            i = -1; /* lost a race, or yielded: read again after a pause */
        } else if (i < 0 && (i = rdlm_svc_any_mark(&b)) < 0) {
            rdlm_error("svc: home %s: all %u lock slots of a bucket are held", l->addr,
                       b.count);
            return RDLM_ERR_NO_RESOURCE;
        }
        if (i >= 0 && rdlm_clock_now_ns() >= next_settle) {
            rdlm_svc_slot_settle(svc, l, b.first + (uint32_t)i, b.kw[2 * i + 1], &st);
            next_settle = rdlm_clock_now_ns() + RDLM_SVC_SETTLE_EVERY_NS;
        }
        if (st == RDLM_OK)
            st = rdlm_svc_wait(svc, &pause, deadline);
        if (st != RDLM_OK)
            return st;
    }
}
