/*
 * The authority's client wire format (wire.c): a fixed 12-byte header, then a payload
 * whose length is checked against the cap before anything is allocated.
 *
 *   u32 magic "RDLM" (0x4d4c4452) | u8 version (1) | u8 kind | u16 zero | u32 length
 *
 * kind REQUEST: the payload is an rdlm_lease_cmd_t encoding (cmd.h).
 * kind BLOB:    the payload is opaque to this layer: the answer to HOMES
 *               (core/svc/home_layout.h), instead of a REPLY when there is one.
 * kind REPLY:   the payload is an rdlm_lease_reply_t encoding (fixed 80 bytes +
 *               leader address, little-endian):
 *   i32 status | u8 broken | u8 is_leader | u16 addr_len | u64 term | u64 session
 *   u64 token | u64 epoch | u64 seq | u64 leader_id | u64 sessions | u64 commit
 *   u32 ttl_ms | u32 locks | leader_addr[addr_len]
 */
#ifndef RDLM_LEASE_WIRE_H
#define RDLM_LEASE_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include <rdlm/status.h>

#define RDLM_WIRE_MAGIC 0x4d4c4452u
#define RDLM_WIRE_VERSION 1u
#define RDLM_WIRE_HEADER 12u
/** Largest payload either side accepts. */
#define RDLM_WIRE_MAX_PAYLOAD 2048u
#define RDLM_WIRE_ADDR_MAX 63u
#define RDLM_WIRE_REPLY_FIXED 80u

typedef enum rdlm_wire_kind {
    RDLM_WIRE_REQUEST = 1,
    RDLM_WIRE_REPLY = 2,
    RDLM_WIRE_BLOB = 3
} rdlm_wire_kind_t;

typedef struct rdlm_lease_reply {
    int32_t status;     /**< rdlm_status_t */
    uint8_t broken;     /**< ACQUIRE: the previous holder's lease was broken; FATE:
                             the session asked about has ended */
    uint8_t is_leader;  /**< the answering replica is the leader */
    uint64_t term;      /**< the answering replica's current term */
    uint64_t session;   /**< OPEN */
    uint64_t token;     /**< ACQUIRE; OPEN: the id of the session's namespace
                             (rdlm_hash_name of "uid/job"; 0: none, --auth none);
                             STATUS asking no mark: the authority id (server.h) */
    uint64_t epoch;     /**< current epoch (EPOCH: the new one) */
    uint64_t seq;       /**< echo of the request's seq */
    uint64_t leader_id; /**< 0 if unknown */
    uint64_t sessions;  /**< STATUS */
    uint64_t commit;    /**< STATUS: last applied index */
    uint32_t ttl_ms;    /**< OPEN/RENEW: the session's TTL */
    uint32_t locks;     /**< STATUS */
    char leader_addr[RDLM_WIRE_ADDR_MAX + 1]; /**< client address of the leader, or "" */
} rdlm_lease_reply_t;

/** Write a header for a payload of len bytes. */
void rdlm_wire_header_encode(uint8_t hdr[RDLM_WIRE_HEADER], rdlm_wire_kind_t kind,
                             uint32_t len);

/** Check a received header: magic, version, zero field, a known kind, and length <=
 *  RDLM_WIRE_MAX_PAYLOAD. RDLM_OK with *kind_p and *len_p, or RDLM_ERR_PROTOCOL. */
rdlm_status_t rdlm_wire_header_decode_any(const uint8_t hdr[RDLM_WIRE_HEADER],
                                          rdlm_wire_kind_t *kind_p, uint32_t *len_p);

/** The same, and the kind must be expect. */
rdlm_status_t rdlm_wire_header_decode(const uint8_t hdr[RDLM_WIRE_HEADER],
                                      rdlm_wire_kind_t expect, uint32_t *len_p);

/** Encode a reply payload; returns its length, 0 if cap is too small or the reply is
 *  not valid (leader_addr longer than RDLM_WIRE_ADDR_MAX or not printable 0x21..0x7e,
 *  broken or is_leader other than 0/1). */
size_t rdlm_wire_reply_encode(const rdlm_lease_reply_t *r, uint8_t *buf, size_t cap);

/** Decode a reply payload. RDLM_ERR_PROTOCOL on a wrong length or address, or broken
 *  / is_leader other than 0/1. */
rdlm_status_t rdlm_wire_reply_decode(const uint8_t *buf, size_t len,
                                     rdlm_lease_reply_t *r_p);

#endif
