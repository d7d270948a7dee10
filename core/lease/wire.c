/*
 * The authority's client wire format: frame header and reply payload (wire.h).
 * Pure: no logging, no allocation; the header is checked before the caller allocates
 * anything for the payload.
 */
#include "wire.h"

#include <string.h>

#include "byteorder.h"

void rdlm_wire_header_encode(uint8_t hdr[RDLM_WIRE_HEADER], rdlm_wire_kind_t kind,
                             uint32_t len)
{
    uint8_t *p = hdr;

    p = rdlm_le_put32(p, RDLM_WIRE_MAGIC);
    p = rdlm_le_put8(p, RDLM_WIRE_VERSION);
    p = rdlm_le_put8(p, (uint8_t)kind);
    p = rdlm_le_put16(p, 0);
    rdlm_le_put32(p, len);
}

rdlm_status_t rdlm_wire_header_decode_any(const uint8_t hdr[RDLM_WIRE_HEADER],
                                          rdlm_wire_kind_t *kind_p, uint32_t *len_p)
{
    rdlm_le_reader_t r = rdlm_le_reader(hdr, RDLM_WIRE_HEADER);
    uint32_t magic = rdlm_le_read32(&r);
    uint8_t version = rdlm_le_read8(&r);
    uint8_t kind = rdlm_le_read8(&r);
    uint16_t zero = rdlm_le_read16(&r);
    uint32_t len = rdlm_le_read32(&r);

    if (magic != RDLM_WIRE_MAGIC || version != RDLM_WIRE_VERSION ||
        kind < RDLM_WIRE_REQUEST || kind > RDLM_WIRE_BLOB || zero != 0 ||
        len > RDLM_WIRE_MAX_PAYLOAD) {
        return RDLM_ERR_PROTOCOL;
    }
    *kind_p = (rdlm_wire_kind_t)kind;
    *len_p = len;
    return RDLM_OK;
}

rdlm_status_t rdlm_wire_header_decode(const uint8_t hdr[RDLM_WIRE_HEADER],
                                      rdlm_wire_kind_t expect, uint32_t *len_p)
{
    rdlm_wire_kind_t kind;
    uint32_t len;

    if (rdlm_wire_header_decode_any(hdr, &kind, &len) != RDLM_OK || kind != expect) {
        return RDLM_ERR_PROTOCOL;
    }
    *len_p = len;
    return RDLM_OK;
}

size_t rdlm_wire_reply_encode(const rdlm_lease_reply_t *r, uint8_t *buf, size_t cap)
{
    size_t addr_len = strnlen(r->leader_addr, sizeof(r->leader_addr));
    size_t len = RDLM_WIRE_REPLY_FIXED + addr_len;
    uint8_t *p = buf;

    if (addr_len > RDLM_WIRE_ADDR_MAX || !rdlm_le_printable(r->leader_addr, addr_len) ||
        r->broken > 1 || r->is_leader > 1 || len > cap) {
        return 0;
    }
    p = rdlm_le_put32(p, (uint32_t)r->status);
    p = rdlm_le_put8(p, r->broken);
    p = rdlm_le_put8(p, r->is_leader);
    p = rdlm_le_put16(p, (uint16_t)addr_len);
    p = rdlm_le_put64(p, r->term);
    p = rdlm_le_put64(p, r->session);
    p = rdlm_le_put64(p, r->token);
    p = rdlm_le_put64(p, r->epoch);
    p = rdlm_le_put64(p, r->seq);
    p = rdlm_le_put64(p, r->leader_id);
    p = rdlm_le_put64(p, r->sessions);
    p = rdlm_le_put64(p, r->commit);
    p = rdlm_le_put32(p, r->ttl_ms);
    p = rdlm_le_put32(p, r->locks);
    memcpy(p, r->leader_addr, addr_len);
    return len;
}

rdlm_status_t rdlm_wire_reply_decode(const uint8_t *buf, size_t len,
                                     rdlm_lease_reply_t *r_p)
{
    rdlm_le_reader_t r = rdlm_le_reader(buf, len);
    uint16_t addr_len;
    const uint8_t *addr;

    r_p->status = (int32_t)rdlm_le_read32(&r);
    r_p->broken = rdlm_le_read8(&r);
    r_p->is_leader = rdlm_le_read8(&r);
    addr_len = rdlm_le_read16(&r);
    r_p->term = rdlm_le_read64(&r);
    r_p->session = rdlm_le_read64(&r);
    r_p->token = rdlm_le_read64(&r);
    r_p->epoch = rdlm_le_read64(&r);
    r_p->seq = rdlm_le_read64(&r);
    r_p->leader_id = rdlm_le_read64(&r);
    r_p->sessions = rdlm_le_read64(&r);
    r_p->commit = rdlm_le_read64(&r);
    r_p->ttl_ms = rdlm_le_read32(&r);
    r_p->locks = rdlm_le_read32(&r);
    if (r.bad || addr_len > RDLM_WIRE_ADDR_MAX || r.left != addr_len || r_p->broken > 1 ||
        r_p->is_leader > 1) {
        return RDLM_ERR_PROTOCOL;
    }
    addr = rdlm_le_take(&r, addr_len);
    if (!rdlm_le_printable(addr, addr_len)) {
        return RDLM_ERR_PROTOCOL;
    }
    memcpy(r_p->leader_addr, addr, addr_len);
    r_p->leader_addr[addr_len] = '\0';
    return RDLM_OK;
}
