/*
 * Little-endian byte access (rdlm_le_*) for the lease encodings (commands, replies,
 * snapshots) and the HOMES description: explicit byte writes, never a struct memcpy,
 * so the bytes are the same on every host. Writers return the position after what
 * they wrote; the reader is bounded and sticky: a read past the end returns 0 and
 * marks the reader bad, so a decoder reads field after field and checks once.
 */
#ifndef RDLM_LEASE_BYTEORDER_H
#define RDLM_LEASE_BYTEORDER_H

#include <stddef.h>
#include <stdint.h>

static inline uint8_t *rdlm_le_put8(uint8_t *p, uint8_t v)
{
    p[0] = v;
    return p + 1;
}

static inline uint8_t *rdlm_le_put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    return p + 2;
}

static inline uint8_t *rdlm_le_put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
    return p + 4;
}

static inline uint8_t *rdlm_le_put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
    return p + 8;
}

static inline uint64_t rdlm_le_get(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--) {
        v = v << 8 | p[i];
    }
    return v;
}

/** Bounded reader over len bytes. */
typedef struct rdlm_le_reader {
    const uint8_t *p;
    size_t left;
    int bad; /**< a read went past the end */
} rdlm_le_reader_t;

static inline rdlm_le_reader_t rdlm_le_reader(const void *buf, size_t len)
{
    rdlm_le_reader_t r = {.p = buf, .left = len, .bad = 0};
    return r;
}

/** The next n bytes, or NULL (and r->bad) if fewer are left. */
static inline const uint8_t *rdlm_le_take(rdlm_le_reader_t *r, size_t n)
{
    const uint8_t *q = r->p;

    if (r->bad || n > r->left) {
        r->bad = 1;
        return NULL;
    }
    r->p += n;
    r->left -= n;
    return q;
}

static inline uint64_t rdlm_le_read(rdlm_le_reader_t *r, int bytes)
{
    const uint8_t *q = rdlm_le_take(r, (size_t)bytes);
    return q != NULL ? rdlm_le_get(q, bytes) : 0;
}

static inline uint8_t rdlm_le_read8(rdlm_le_reader_t *r)
{
    return (uint8_t)rdlm_le_read(r, 1);
}

static inline uint16_t rdlm_le_read16(rdlm_le_reader_t *r)
{
    return (uint16_t)rdlm_le_read(r, 2);
}

static inline uint32_t rdlm_le_read32(rdlm_le_reader_t *r)
{
    return (uint32_t)rdlm_le_read(r, 4);
}

static inline uint64_t rdlm_le_read64(rdlm_le_reader_t *r)
{
    return rdlm_le_read(r, 8);
}

/** 1 if the n bytes are all printable ASCII without space (0x21..0x7e): the
 *  alphabet of lock names, namespaces and addresses. */
static inline int rdlm_le_printable(const void *s, size_t n)
{
    const uint8_t *b = s;
    for (size_t i = 0; i < n; i++) {
        if (b[i] < 0x21 || b[i] > 0x7e) {
            return 0;
        }
    }
    return 1;
}

#endif
