/*
 * Lock homes in rdlmd (DESIGN.md "Cross-node layer": the homes are the rdlmd daemons
 * in service mode): what a home's registered region holds, how its lock words are
 * encoded, and the description a home hands to its clients (home_desc.c).
 *
 * Region (64-bit words, offsets in bytes)
 *   header  magic | epoch | slots | tags | next_tag (clients fetch-add it) | floor | 2 zero
 *   tags    [tags] words: tags[t] = the session id of the client that drew tag t
 *           (written by that client after drawing it; 0 until then; tag 0 unused)
 *   slots   [slots] pairs {key, word}, in buckets of RDLM_SVC_BUCKET slots (the last
 *           bucket takes the remainder): key = the high 48 bits of the lock's 64-bit
 *           id | a 16-bit generation (0: never used), word = the lock word
 *
 * Lock word: sequence << 24 | WANT << 23 | tag. tag 0: free; else held by the client
 * that drew tag. sequence counts the grants of the slot in this epoch (39 bits): the
 * token of a grant is epoch << 40 | sequence, and a restarted home (new region, new
 * epoch committed by the authority before it serves) issues only larger ones. WANT
 * (slock.c): a waiter has waited past its bypass bound; a release then leaves the word
 * free with WANT kept, and the releaser does not take it back at once. A take clears
 * it. A waiter sets it with a fetch-or, so it may land on any word, a MARK too, whose
 * client drops it (slot.c). A word with bit 63 set is a MARK: the client of its tag is
 * re-keying the slot (slot.c); its low 39 sequence bits are that client's nonce, so a
 * MARK is never written twice.
 *
 * Slots are reused (slot.c has the life cycle): a lock lives in one slot of the bucket
 * of its id; a name whose bucket has no free slot takes over the oldest slot whose word
 * is free, bumping the key's generation. Two rules keep every value a client acts on
 * meaningful: a slot's word values only grow, across all its keys (a new key starts at
 * the home's floor + 1, and the floor is raised to every word a key leaves behind), so
 * a word value read once belongs to one key for ever; and the key changes only while
 * the word is a MARK. A client therefore acts on (compare-and-swaps from) a word value
 * only if it produced it itself or read its slot's key after reading the value.
 */
#ifndef RDLM_SVC_HOME_LAYOUT_H
#define RDLM_SVC_HOME_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include <rdlm/status.h>

#include "config.h"

#define RDLM_SVC_MAGIC UINT64_C(0x52444c4d484f4d45) /* "RDLMHOME" */
#define RDLM_SVC_HEADER_WORDS 8u
#define RDLM_SVC_OFF_EPOCH 8u
#define RDLM_SVC_OFF_NEXT_TAG 32u
#define RDLM_SVC_OFF_FLOOR 40u /* >= every sequence a key left behind in a slot */
/** Slots per bucket (fewer when the home has fewer). */
#define RDLM_SVC_BUCKET 64u

#define RDLM_SVC_SEQ_SHIFT 24u
#define RDLM_SVC_WANT_BIT (UINT64_C(1) << 23)
#define RDLM_SVC_TAG_MASK (RDLM_SVC_WANT_BIT - 1)
/** Largest sequence of a lock word (bit 39 is the MARK bit of the word). */
#define RDLM_SVC_SEQ_MAX ((UINT64_C(1) << 39) - 1)
#define RDLM_SVC_MARK_BIT (UINT64_C(1) << 63)
#define RDLM_SVC_GEN_MASK UINT64_C(0xffff)
/** Most tags a home has (a tag per client context that used it, per epoch). */
#define RDLM_SVC_TAGS_MAX ((uint32_t)RDLM_SVC_TAG_MASK + 1)

static inline uint64_t rdlm_svc_word(uint64_t seq, uint64_t tag)
{
    return seq << RDLM_SVC_SEQ_SHIFT | tag;
}

static inline uint64_t rdlm_svc_word_seq(uint64_t w)
{
    return w >> RDLM_SVC_SEQ_SHIFT;
}

static inline uint64_t rdlm_svc_word_tag(uint64_t w)
{
    return w & RDLM_SVC_TAG_MASK;
}

static inline int rdlm_svc_word_wanted(uint64_t w)
{
    return (w & RDLM_SVC_WANT_BIT) != 0;
}

/** The word a release of held word w leaves: free, same sequence, WANT kept. */
static inline uint64_t rdlm_svc_word_freed(uint64_t w)
{
    return rdlm_svc_word(rdlm_svc_word_seq(w), 0) | (w & RDLM_SVC_WANT_BIT);
}

static inline int rdlm_svc_word_is_mark(uint64_t w)
{
    return (w & RDLM_SVC_MARK_BIT) != 0;
}

/** A MARK of the client with tag; nonce distinguishes its MARKs (39 bits used). */
static inline uint64_t rdlm_svc_mark(uint64_t nonce, uint64_t tag)
{
    return RDLM_SVC_MARK_BIT | rdlm_svc_word(nonce & RDLM_SVC_SEQ_MAX, tag);
}

/** A slot key: the high 48 bits of lock id id | generation gen. */
static inline uint64_t rdlm_svc_key(uint64_t id, uint64_t gen)
{
    return (id & ~RDLM_SVC_GEN_MASK) | (gen & RDLM_SVC_GEN_MASK);
}

/** Whether key names lock id (any generation; key 0 names none). */
static inline int rdlm_svc_key_names(uint64_t key, uint64_t id)
{
    return key != 0 && (key & ~RDLM_SVC_GEN_MASK) == (id & ~RDLM_SVC_GEN_MASK);
}

/** The key after key in its slot: same name bits or none (0 name bits), gen + 1. */
static inline uint64_t rdlm_svc_key_next(uint64_t key, uint64_t id)
{
    return rdlm_svc_key(id, (key & RDLM_SVC_GEN_MASK) + 1);
}

static inline uint64_t rdlm_svc_off_tag(uint32_t tag)
{
    return (RDLM_SVC_HEADER_WORDS + (uint64_t)tag) * 8u;
}

static inline uint64_t rdlm_svc_off_slot_key(uint32_t tags, uint32_t slot)
{
    return (RDLM_SVC_HEADER_WORDS + (uint64_t)tags + 2u * slot) * 8u;
}

static inline uint64_t rdlm_svc_off_slot_word(uint32_t tags, uint32_t slot)
{
    return rdlm_svc_off_slot_key(tags, slot) + 8u;
}

/** The slots [*first_p, *first_p + *count_p) of the bucket of lock id in a home of
 *  slots slots (a multiplicative hash of id chooses it, so the homes' choice by id modulo
 *  their number leaves every bucket in use). */
static inline void rdlm_svc_bucket(uint64_t id, uint32_t slots, uint32_t *first_p,
                                   uint32_t *count_p)
{
    uint32_t size = slots < RDLM_SVC_BUCKET ? slots : RDLM_SVC_BUCKET;
    uint32_t buckets = slots / size;
    uint32_t b = (uint32_t)((id * UINT64_C(0x9e3779b97f4a7c15)) >> 32) % buckets;

    *first_p = b * size;
    *count_p = b == buckets - 1 ? slots - b * size : size;
}

static inline size_t rdlm_svc_region_bytes(uint32_t tags, uint32_t slots)
{
    return (RDLM_SVC_HEADER_WORDS + (size_t)tags + 2u * (size_t)slots) * 8u;
}

/** One replica of the authority: its id (rdlmd --id) and client address (--peers). */
typedef struct rdlm_svc_member {
    uint32_t id;
    char addr[RDLM_ADDR_MAX + 1];
} rdlm_svc_member_t;

/** What a home tells a client (the HOMES reply, a BLOB frame of the client port).
 *  The members let every client place a lock at the same home whatever its
 *  RDLM_AUTHORITY says (another spelling of an address, a subset of the replicas):
 *  a lock's home is the member at index id % n_members, members ordered by id.
 *  A replica that hosts no home (rdlmd --home-slots 0) answers with slots 0 (epoch,
 *  tags and both lengths 0) and its members, so that a client can ask the others:
 *  homes are on at every replica or at none (home_client.c). */
typedef struct rdlm_svc_desc {
    uint32_t version; /**< decode: the home's layout version on RDLM_ERR_MISMATCH */
    uint64_t epoch;
    uint32_t slots, tags;
    uint32_t rec_len, rkey_len;
    const uint8_t *rec;  /**< the relay bootstrap's records (transport's bootstrap.h) */
    const uint8_t *rkey; /**< the region's packed remote key */
    uint32_t self_id;    /**< the replica hosting this home */
    uint32_t n_members;  /**< 1 .. RDLM_ADDRS_COUNT */
    rdlm_svc_member_t members[RDLM_ADDRS_COUNT]; /**< every replica, by increasing id */
} rdlm_svc_desc_t;

/** Encode d into buf; returns the length, 0 if cap is too small. Pure. */
size_t rdlm_svc_desc_encode(const rdlm_svc_desc_t *d, uint8_t *buf, size_t cap);

/** Decode len bytes (d->rec and d->rkey point into buf). RDLM_ERR_MISMATCH on another
 *  layout version (d->version), RDLM_ERR_PROTOCOL on a wrong magic or length, sizes
 *  out of range, or members that are not 1..RDLM_ADDRS_COUNT replicas of increasing
 *  ids among them self_id, each with an address. Pure. */
rdlm_status_t rdlm_svc_desc_decode(const uint8_t *buf, size_t len, rdlm_svc_desc_t *d);

#endif
