/*
 * The HOMES description of a lock home (rdlm_svc_desc_t, home_layout.h), encoded and
 * decoded, little-endian:
 *   u32 magic "RDLH" | u32 version | u64 epoch | u32 slots | u32 tags
 *   u32 rec_len | u32 rkey_len | rec | rkey
 *   u32 self_id | u32 n_members | n_members x (u32 id | u8 addr_len | addr)
 * Version 2: slots are keyed with a generation and reused, the header has a floor;
 * version 3: the lock word has a WANT bit and 23-bit tags (home_layout.h); version 4:
 * the members (a lock's home no longer depends on how a client spells or lists the
 * replicas); version 5: a replica without a home answers with slots 0 and its members
 * (home_layout.h). A client refuses a home of another version (RDLM_ERR_MISMATCH).
 */
#include "home_layout.h"

#include <string.h>

#include "byteorder.h"

#define RDLM_SVC_DESC_MAGIC 0x484c4452u /* "RDLH" */
#define RDLM_SVC_DESC_VERSION 5u
#define RDLM_SVC_DESC_FIXED 32u

size_t rdlm_svc_desc_encode(const rdlm_svc_desc_t *d, uint8_t *buf, size_t cap)
{
    size_t len = RDLM_SVC_DESC_FIXED + (size_t)d->rec_len + d->rkey_len + 8;
    uint8_t *p = buf;

    for (uint32_t i = 0; i < d->n_members && i < RDLM_ADDRS_COUNT; i++)
        len += 5 + strlen(d->members[i].addr);
    if (len > cap || d->n_members > RDLM_ADDRS_COUNT)
        return 0;
    p = rdlm_le_put32(p, RDLM_SVC_DESC_MAGIC);
    p = rdlm_le_put32(p, RDLM_SVC_DESC_VERSION);
    p = rdlm_le_put64(p, d->epoch);
    p = rdlm_le_put32(p, d->slots);
    p = rdlm_le_put32(p, d->tags);
    p = rdlm_le_put32(p, d->rec_len);
    p = rdlm_le_put32(p, d->rkey_len);
    if (d->rec_len != 0) /* a replica without a home has neither (NULL) */
        memcpy(p, d->rec, d->rec_len);
    if (d->rkey_len != 0)
        memcpy(p + d->rec_len, d->rkey, d->rkey_len);
    p = rdlm_le_put32(p + d->rec_len + d->rkey_len, d->self_id);
    p = rdlm_le_put32(p, d->n_members);
    for (uint32_t i = 0; i < d->n_members; i++) {
        size_t n = strlen(d->members[i].addr);

        p = rdlm_le_put32(p, d->members[i].id);
        p = rdlm_le_put8(p, (uint8_t)n);
        memcpy(p, d->members[i].addr, n);
        p += n;
    }
    return len;
}

/* The members after rec and rkey (r at them): increasing ids, self_id among them. */
static int rdlm_svc_desc_members(rdlm_le_reader_t *r, rdlm_svc_desc_t *d)
{
    int self = 0;

    d->self_id = rdlm_le_read32(r);
    d->n_members = rdlm_le_read32(r);
    if (r->bad || d->n_members == 0 || d->n_members > RDLM_ADDRS_COUNT)
        return 0;
    for (uint32_t i = 0; i < d->n_members; i++) {
        rdlm_svc_member_t *m = &d->members[i];
        size_t n;
        const uint8_t *a;

        m->id = rdlm_le_read32(r);
        n = rdlm_le_read8(r);
        a = rdlm_le_take(r, n);
        if (a == NULL || n == 0 || n > RDLM_ADDR_MAX || !rdlm_le_printable(a, n) ||
            m->id == 0 || (i > 0 && m->id <= d->members[i - 1].id))
            return 0;
        memcpy(m->addr, a, n);
        m->addr[n] = '\0';
        self |= m->id == d->self_id;
    }
    return self && r->left == 0;
}

/* 1 if d's sizes are those of a home, or of no home (slots 0, all else 0). */
static int rdlm_svc_desc_sizes(const rdlm_svc_desc_t *d)
{
    if (d->slots == 0)
        return d->epoch == 0 && d->tags == 0 && d->rec_len == 0 && d->rkey_len == 0;
    return d->epoch != 0 && d->epoch < (UINT64_C(1) << 24) && d->tags >= 2 &&
           d->tags <= RDLM_SVC_TAGS_MAX;
}

rdlm_status_t rdlm_svc_desc_decode(const uint8_t *buf, size_t len, rdlm_svc_desc_t *d)
{
    rdlm_le_reader_t r = rdlm_le_reader(buf, len);
    uint32_t magic = rdlm_le_read32(&r);
    uint32_t version = rdlm_le_read32(&r);

    d->epoch = rdlm_le_read64(&r);
    d->slots = rdlm_le_read32(&r);
    d->tags = rdlm_le_read32(&r);
    d->rec_len = rdlm_le_read32(&r);
    d->rkey_len = rdlm_le_read32(&r);
    if (len >= RDLM_SVC_DESC_FIXED && magic == RDLM_SVC_DESC_MAGIC &&
        version != RDLM_SVC_DESC_VERSION) {
        d->version = version;
        return RDLM_ERR_MISMATCH;
    }
    d->rec = rdlm_le_take(&r, d->rec_len);
    d->rkey = rdlm_le_take(&r, d->rkey_len);
    if (len < RDLM_SVC_DESC_FIXED || magic != RDLM_SVC_DESC_MAGIC ||
        !rdlm_svc_desc_sizes(d) || r.bad || !rdlm_svc_desc_members(&r, d)) {
        return RDLM_ERR_PROTOCOL;
    }
    return RDLM_OK;
}
