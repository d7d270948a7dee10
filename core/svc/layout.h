/*
 * Lock homes in rdlmd (DESIGN.md "Cross-node layer": the homes are the rdlmd daemons
 * in service mode): what a home's registered region holds, how its lock words are
 * encoded, and the description a home hands to its clients (blob.c).
 *
 * Region (64-bit words, offsets in bytes)
 *   header  magic | epoch | slots | tags | next_tag (clients fetch-add it) | 3 zero
 *   tags    [tags] words: tags[t] = the session id of the client that drew tag t
 *           (written by that client after drawing it; 0 until then; tag 0 unused)
 *   slots   [slots] pairs {id, word}: id = the lock's 64-bit name id (0: unused; set
 *           once by compare-and-swap), word = the lock word
 *
 * Lock word: sequence << 24 | tag. tag 0: free; else held by the client that drew tag.
 * sequence counts the lock's grants in this epoch (40 bits): the token of a grant is
 * epoch << 40 | sequence, so tokens of one lock only grow, and a restarted home (new
 * region, new epoch committed by the authority before it serves) issues only larger
 * ones.
 */
#ifndef RDLM_SVC_LAYOUT_H
#define RDLM_SVC_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include <rdlm/status.h>

#define RDLM_SVC_MAGIC UINT64_C(0x52444c4d484f4d45) /* "RDLMHOME" */
#define RDLM_SVC_HEADER_WORDS 8u
#define RDLM_SVC_OFF_EPOCH 8u
#define RDLM_SVC_OFF_NEXT_TAG 32u

#define RDLM_SVC_TAG_BITS 24u
#define RDLM_SVC_TAG_MASK ((UINT64_C(1) << RDLM_SVC_TAG_BITS) - 1)
#define RDLM_SVC_SEQ_MAX ((UINT64_C(1) << 40) - 1)
/** Most tags a home has (a tag per client context that used it, per epoch). */
#define RDLM_SVC_TAGS_MAX (UINT32_C(1) << RDLM_SVC_TAG_BITS)

static inline uint64_t rdlm_svc_word(uint64_t seq, uint64_t tag)
{
    return seq << RDLM_SVC_TAG_BITS | tag;
}

static inline uint64_t rdlm_svc_word_seq(uint64_t w)
{
    return w >> RDLM_SVC_TAG_BITS;
}

static inline uint64_t rdlm_svc_word_tag(uint64_t w)
{
    return w & RDLM_SVC_TAG_MASK;
}

static inline uint64_t rdlm_svc_off_tag(uint32_t tag)
{
    return (RDLM_SVC_HEADER_WORDS + (uint64_t)tag) * 8u;
}

static inline uint64_t rdlm_svc_off_slot_id(uint32_t tags, uint32_t slot)
{
    return (RDLM_SVC_HEADER_WORDS + (uint64_t)tags + 2u * slot) * 8u;
}

static inline uint64_t rdlm_svc_off_slot_word(uint32_t tags, uint32_t slot)
{
    return rdlm_svc_off_slot_id(tags, slot) + 8u;
}

static inline size_t rdlm_svc_region_bytes(uint32_t tags, uint32_t slots)
{
    return (RDLM_SVC_HEADER_WORDS + (size_t)tags + 2u * (size_t)slots) * 8u;
}

/** What a home tells a client (the HOMES reply, a BLOB frame of the client port). */
typedef struct rdlm_svc_desc {
    uint64_t epoch;
    uint32_t slots, tags;
    uint32_t rec_len, rkey_len;
    const uint8_t *rec;  /**< the relay bootstrap's records (transport/bootstrap.h) */
    const uint8_t *rkey; /**< the region's packed remote key */
} rdlm_svc_desc_t;

/** Encode d into buf; returns the length, 0 if cap is too small. Pure. */
size_t rdlm_svc_desc_encode(const rdlm_svc_desc_t *d, uint8_t *buf, size_t cap);

/** Decode len bytes (d->rec and d->rkey point into buf). RDLM_ERR_PROTOCOL on a wrong
 *  magic, version or length, or sizes out of range. Pure. */
rdlm_status_t rdlm_svc_desc_decode(const uint8_t *buf, size_t len, rdlm_svc_desc_t *d);

#endif
