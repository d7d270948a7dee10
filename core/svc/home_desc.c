/*
 * The HOMES description of a lock home (rdlm_svc_desc_t, home_layout.h), encoded and
 * decoded, little-endian:
 *   u32 magic "RDLH" | u32 version | u64 epoch | u32 slots | u32 tags
 *   u32 rec_len | u32 rkey_len | rec | rkey
 * Version 2: slots are keyed with a generation and reused, the header has a floor;
 * version 3: the lock word has a WANT bit and 23-bit tags (home_layout.h). A client
 * refuses a home of another version (RDLM_ERR_MISMATCH).
 */
#include "home_layout.h"

#include <string.h>

#include "byteorder.h"

#define RDLM_SVC_DESC_MAGIC 0x484c4452u /* "RDLH" */
#define RDLM_SVC_DESC_VERSION 3u
#define RDLM_SVC_DESC_FIXED 32u

size_t rdlm_svc_desc_encode(const rdlm_svc_desc_t *d, uint8_t *buf, size_t cap)
{
    size_t len = RDLM_SVC_DESC_FIXED + (size_t)d->rec_len + d->rkey_len;
    uint8_t *p = buf;

    if (len > cap)
        return 0;
    p = rdlm_le_put32(p, RDLM_SVC_DESC_MAGIC);
    p = rdlm_le_put32(p, RDLM_SVC_DESC_VERSION);
    p = rdlm_le_put64(p, d->epoch);
    p = rdlm_le_put32(p, d->slots);
    p = rdlm_le_put32(p, d->tags);
    p = rdlm_le_put32(p, d->rec_len);
    p = rdlm_le_put32(p, d->rkey_len);
    memcpy(p, d->rec, d->rec_len);
    memcpy(p + d->rec_len, d->rkey, d->rkey_len);
    return len;
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
    if (len < RDLM_SVC_DESC_FIXED || magic != RDLM_SVC_DESC_MAGIC || d->epoch == 0 ||
        d->epoch >= (UINT64_C(1) << 24) || d->slots == 0 || d->tags < 2 ||
        d->tags > RDLM_SVC_TAGS_MAX ||
        len != RDLM_SVC_DESC_FIXED + (size_t)d->rec_len + d->rkey_len) {
        return RDLM_ERR_PROTOCOL;
    }
    d->rec = buf + RDLM_SVC_DESC_FIXED;
    d->rkey = d->rec + d->rec_len;
    return RDLM_OK;
}
