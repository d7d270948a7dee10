/*
 * The relay bootstraps (bootstrap.h): a server opens its context alone and records the
 * blocks it contributed to each allgather; a client that received those records by
 * other means replays them as rank 0's blocks. Neither ever waits for the other.
 *
 * Record format (host byte order: server and clients run the same build):
 *   u32 magic "RDLR" | u32 count | count x (u32 len | len bytes)
 */
#include "bootstrap.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"

#define RDLM_RELAY_MAGIC 0x524c4452u /* "RDLR" */
#define RDLM_RELAY_BLOCKS_MAX 16u
#define RDLM_RELAY_BLOCK_MAX 4096u

typedef struct rdlm_relay_block {
    uint32_t len;
    uint8_t *data;
} rdlm_relay_block_t;

struct rdlm_tl_boot_relay {
    rdlm_tl_bootstrap_t cb;
    rdlm_relay_block_t blocks[RDLM_RELAY_BLOCKS_MAX];
    uint32_t count; /* recorded (server) or received (client) */
    uint32_t next;  /* client: the next block to replay */
};

static rdlm_status_t rdlm_relay_barrier(void *arg, const rdlm_tl_idle_t *idle)
{
    (void)arg;
    (void)idle;
    return RDLM_OK;
}

/* Server: rank 0 of 1; keep a copy of the block. */
static rdlm_status_t rdlm_relay_record(void *arg, const void *send, void *recv, size_t len,
                                       const rdlm_tl_idle_t *idle)
{
    rdlm_tl_boot_relay_t *r = arg;
    rdlm_relay_block_t *b;

    (void)idle;
    if (r->count == RDLM_RELAY_BLOCKS_MAX || len > RDLM_RELAY_BLOCK_MAX) {
        rdlm_error("bootstrap relay: more than %u blocks or one over %u bytes to record",
                   RDLM_RELAY_BLOCKS_MAX, RDLM_RELAY_BLOCK_MAX);
        return RDLM_ERR_NO_RESOURCE;
    }
    b = &r->blocks[r->count];
    b->data = malloc(len ? len : 1);
    if (b->data == NULL)
        return RDLM_ERR_NO_MEMORY;
    memcpy(b->data, send, len);
    b->len = (uint32_t)len;
    r->count++;
    memcpy(recv, send, len);
    return RDLM_OK;
}

/* Client: rank 1 of 2; rank 0's block is the next recorded one, zero-padded to len. */
static rdlm_status_t rdlm_relay_replay(void *arg, const void *send, void *recv, size_t len,
                                       const rdlm_tl_idle_t *idle)
{
    rdlm_tl_boot_relay_t *r = arg;
    const rdlm_relay_block_t *b;

    (void)idle;
    if (r->next == r->count || r->blocks[r->next].len > len) {
        rdlm_error("bootstrap relay: the server's records do not match this wire-up "
                   "(step %u of %u, %zu bytes here): another build or backend?",
                   r->next + 1, r->count, len);
        return RDLM_ERR_PROTOCOL;
    }
    b = &r->blocks[r->next++];
    memcpy(recv, b->data, b->len);
    memset((uint8_t *)recv + b->len, 0, len - b->len);
    memcpy((uint8_t *)recv + len, send, len);
    return RDLM_OK;
}

rdlm_status_t rdlm_tl_boot_record_create(rdlm_tl_boot_relay_t **relay_p)
{
    rdlm_tl_boot_relay_t *r = calloc(1, sizeof(*r));

    if (r == NULL)
        return RDLM_ERR_NO_MEMORY;
    r->cb = (rdlm_tl_bootstrap_t){.rank = 0,
                                  .size = 1,
                                  .arg = r,
                                  .allgather = rdlm_relay_record,
                                  .barrier = rdlm_relay_barrier};
    *relay_p = r;
    return RDLM_OK;
}

rdlm_status_t rdlm_tl_boot_record_pack(const rdlm_tl_boot_relay_t *relay, void *buf,
                                       size_t cap, size_t *len_p)
{
    uint8_t *p = buf;
    size_t need = 8;
    uint32_t hdr[2] = {RDLM_RELAY_MAGIC, relay->count};

    for (uint32_t i = 0; i < relay->count; i++)
        need += 4 + relay->blocks[i].len;
    if (need > cap)
        return RDLM_ERR_NO_RESOURCE;
    memcpy(p, hdr, sizeof(hdr));
    p += sizeof(hdr);
    for (uint32_t i = 0; i < relay->count; i++) {
        memcpy(p, &relay->blocks[i].len, 4);
        memcpy(p + 4, relay->blocks[i].data, relay->blocks[i].len);
        p += 4 + relay->blocks[i].len;
    }
    *len_p = need;
    return RDLM_OK;
}

rdlm_status_t rdlm_tl_boot_replay_create(const void *records, size_t len,
                                         rdlm_tl_boot_relay_t **relay_p)
{
    const uint8_t *p = records, *end = p + len;
    uint32_t hdr[2];
    rdlm_tl_boot_relay_t *r;

    if (records == NULL || len < sizeof(hdr))
        return RDLM_ERR_PROTOCOL;
    memcpy(hdr, p, sizeof(hdr));
    p += sizeof(hdr);
    if (hdr[0] != RDLM_RELAY_MAGIC || hdr[1] > RDLM_RELAY_BLOCKS_MAX)
        return RDLM_ERR_PROTOCOL;
    r = calloc(1, sizeof(*r));
    if (r == NULL)
        return RDLM_ERR_NO_MEMORY;
    for (r->count = 0; r->count < hdr[1]; r->count++) {
        rdlm_relay_block_t *b = &r->blocks[r->count];

        if (end - p < 4)
            break;
        memcpy(&b->len, p, 4);
        if (b->len > RDLM_RELAY_BLOCK_MAX || (size_t)(end - p - 4) < b->len)
            break;
        b->data = malloc(b->len ? b->len : 1);
        if (b->data == NULL)
            break;
        memcpy(b->data, p + 4, b->len);
        p += 4 + b->len;
    }
    if (r->count != hdr[1] || p != end) {
        rdlm_tl_boot_relay_destroy(r);
        return RDLM_ERR_PROTOCOL;
    }
    r->cb = (rdlm_tl_bootstrap_t){.rank = 1,
                                  .size = 2,
                                  .arg = r,
                                  .allgather = rdlm_relay_replay,
                                  .barrier = rdlm_relay_barrier};
    *relay_p = r;
    return RDLM_OK;
}

const rdlm_tl_bootstrap_t *rdlm_tl_boot_relay_get(const rdlm_tl_boot_relay_t *relay)
{
    return &relay->cb;
}

void rdlm_tl_boot_relay_destroy(rdlm_tl_boot_relay_t *relay)
{
    if (relay == NULL)
        return;
    for (uint32_t i = 0; i < relay->count; i++)
        free(relay->blocks[i].data);
    free(relay);
}
