/*
 * The verbs backend's memory, atomics and put/get (see verbs.c for the design).
 *
 * Run on soft-RoCE only (see verbs.c): the conformance suite covers these operations,
 * not put/get beyond one bounce buffer (64 KiB) nor registration of caller memory.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "verbs_internal.h"

#define RDLM_VERBS_RKEY_MAGIC 0x52444c56u /* "RDLV" */

/* A packed key: the region's address, length and the MR's rkey. */
typedef struct rdlm_verbs_rkey_wire {
    uint32_t magic;
    uint32_t rkey;
    uint64_t base;
    uint64_t len;
} rdlm_verbs_rkey_wire_t;

/* ---- memory ------------------------------------------------------------------------- */

/* reg(NULL) allocates 64-byte-aligned zeroed memory (remote atomics need 8-byte
 * alignment). */
static rdlm_status_t rdlm_verbs_mem_reg(rdlm_tl_ctx_h ctx, void *addr, size_t len,
                                        rdlm_tl_mem_h *mem_p)
{
    rdlm_verbs_ctx_t *c = (rdlm_verbs_ctx_t *)ctx;
    struct rdlm_tl_mem *m;

    if (len == 0 || mem_p == NULL)
        return RDLM_ERR_INVALID_ARG;
    m = calloc(1, sizeof(*m));
    if (m == NULL)
        return RDLM_ERR_NO_MEMORY;
    if (addr == NULL) {
        if (posix_memalign(&addr, 64, len) != 0) {
            free(m);
            return RDLM_ERR_NO_MEMORY;
        }
        memset(addr, 0, len);
        m->allocated = 1;
    } else if (((uintptr_t)addr & 7u) != 0) {
        rdlm_warn("verbs: region %p is not 8-byte aligned: remote atomics on it will "
                  "fail (they need 8-byte-aligned remote addresses)",
                  addr);
    }
    m->mr = ibv_reg_mr(c->pd, addr, len, RDLM_VERBS_ACCESS);
    if (m->mr == NULL) {
        rdlm_error("verbs: ibv_reg_mr(%zu bytes): %s", len, strerror(errno));
        if (m->allocated)
            free(addr);
        free(m);
        return RDLM_ERR_NO_RESOURCE;
    }
    rdlm_tl_region_add(&c->mems, &c->lock, &m->region, addr, len);
    *mem_p = m;
    return RDLM_OK;
}

static rdlm_status_t rdlm_verbs_rkey_pack(rdlm_tl_ctx_h ctx, rdlm_tl_mem_h mem, void *buf,
                                          size_t buf_len, size_t *len_p)
{
    rdlm_verbs_rkey_wire_t w;

    (void)ctx;
    if (mem == NULL)
        return RDLM_ERR_BAD_HANDLE;
    if (buf == NULL || len_p == NULL || buf_len < sizeof(w))
        return RDLM_ERR_INVALID_ARG;
    w = (rdlm_verbs_rkey_wire_t){RDLM_VERBS_RKEY_MAGIC, mem->mr->rkey,
                                 (uint64_t)(uintptr_t)mem->region.addr, mem->region.len};
    memcpy(buf, &w, sizeof(w));
    *len_p = sizeof(w);
    return RDLM_OK;
}

/* The rkey is stored in the slot's backend pointer (a number, nothing to free). */
static rdlm_status_t rdlm_verbs_rkey_unpack(rdlm_tl_ctx_h ctx, uint32_t peer,
                                            const void *buf, size_t len,
                                            rdlm_tl_rkey_h *rkey_p)
{
    rdlm_verbs_ctx_t *c = (rdlm_verbs_ctx_t *)ctx;
    rdlm_verbs_rkey_wire_t w = {0};

    if (buf == NULL || rkey_p == NULL || peer >= c->super.size)
        return RDLM_ERR_INVALID_ARG;
    if (len >= sizeof(w))
        memcpy(&w, buf, sizeof(w));
    if (len < sizeof(w) || w.magic != RDLM_VERBS_RKEY_MAGIC || w.len == 0) {
        rdlm_error("verbs: rank %u's remote key is malformed (%zu bytes)", peer, len);
        return RDLM_ERR_INVALID_ARG;
    }
    return rdlm_tl_rkey_table_add(&c->rkeys, peer, w.base, w.len, (void *)(uintptr_t)w.rkey,
                                  rkey_p);
}

static rdlm_status_t rdlm_verbs_rkey_release(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey)
{
    rdlm_verbs_ctx_t *c = (rdlm_verbs_ctx_t *)ctx;
    void *backend;

    return rdlm_tl_rkey_table_remove(&c->rkeys, rkey, &backend);
}

rdlm_status_t rdlm_verbs_mem_dereg(rdlm_tl_ctx_h ctx, rdlm_tl_mem_h mem)
{
    rdlm_verbs_ctx_t *c = (rdlm_verbs_ctx_t *)ctx;
    int rc;

    if (mem == NULL)
        return RDLM_ERR_BAD_HANDLE;
    rdlm_tl_region_remove(&c->mems, &c->lock, &mem->region);
    rc = ibv_dereg_mr(mem->mr);
    if (mem->allocated)
        free(mem->region.addr);
    free(mem);
    if (rc != 0) {
        rdlm_error("verbs: ibv_dereg_mr: %s", strerror(rc));
        return RDLM_ERR_IO;
    }
    return RDLM_OK;
}

/* ---- atomics ------------------------------------------------------------------------- */

/* Resolve (key, offset) to (peer, remote address, rkey). */
static inline rdlm_status_t rdlm_verbs_target(rdlm_verbs_ctx_t *c, rdlm_tl_rkey_h h,
                                              uint64_t offset, uint64_t len, uint64_t align,
                                              uint32_t *peer_p, uint64_t *raddr_p,
                                              uint32_t *rkey_p)
{
    rdlm_tl_rkey_slot_t *s;
    rdlm_status_t st = rdlm_tl_rkey_lookup(&c->rkeys, h, offset, len, align, &s);

    if (st != RDLM_OK)
        return st;
    *peer_p = s->peer;
    *raddr_p = s->base + offset;
    *rkey_p = (uint32_t)(uintptr_t)s->backend;
    return RDLM_OK;
}

/* Post atomic op on (peer, raddr, rkey) with its fetched value into scratch word
 * `word`: its WR's id. Lock held. */
static rdlm_status_t rdlm_verbs_amo_post(rdlm_verbs_ctx_t *c, uint32_t peer,
                                         enum ibv_wr_opcode op, uint64_t raddr,
                                         uint32_t rkey, uint64_t compare_add, uint64_t swap,
                                         unsigned word, uint64_t *id_p)
{
    struct ibv_sge sge = {.addr = (uint64_t)(uintptr_t)&c->scratch[word],
                          .length = 8,
                          .lkey = c->scratch_mr->lkey};
    struct ibv_send_wr wr = {.sg_list = &sge, .num_sge = 1, .opcode = op};

    wr.wr.atomic.remote_addr = raddr;
    wr.wr.atomic.compare_add = compare_add;
    wr.wr.atomic.swap = swap;
    wr.wr.atomic.rkey = rkey;
    return rdlm_verbs_post(c, peer, &wr, id_p);
}

/* One fetching atomic into the scratch result word, waited for; the result is
 * normalised to host order. Lock held. */
rdlm_status_t rdlm_verbs_atomic(rdlm_verbs_ctx_t *c, uint32_t peer, enum ibv_wr_opcode op,
                                uint64_t raddr, uint32_t rkey, uint64_t compare_add,
                                uint64_t swap, uint64_t *old_p)
{
    uint64_t id;
    rdlm_status_t st = rdlm_verbs_amo_post(c, peer, op, raddr, rkey, compare_add, swap,
                                           RDLM_VERBS_RES_WORD, &id);

    if (st == RDLM_OK)
        st = rdlm_verbs_wait(c, peer, id);
    if (st == RDLM_OK)
        *old_p = rdlm_verbs_result(c, c->scratch[RDLM_VERBS_RES_WORD]);
    return st;
}

/* What every atomic checks first, counted in the statistics: RDLM_OK with its target
 * (peer, remote address, rkey), or why not. */
static rdlm_status_t rdlm_verbs_amo_target(rdlm_verbs_ctx_t *c, rdlm_tl_rkey_h h,
                                           uint64_t offset, uint32_t *peer_p,
                                           uint64_t *raddr_p, uint32_t *rkey_p)
{
    rdlm_status_t st;

    if (c->domain == RDLM_TL_ATOMIC_NONE)
        return RDLM_ERR_UNSUPPORTED;
    st = rdlm_verbs_target(c, h, offset, 8, 8, peer_p, raddr_p, rkey_p);
    if (st == RDLM_OK)
        rdlm_tl_stat_add(&c->super.stats.amo, 1);
    return st;
}

static rdlm_status_t rdlm_verbs_amo(rdlm_tl_ctx_h ctx, enum ibv_wr_opcode op,
                                    rdlm_tl_rkey_h h, uint64_t offset, uint64_t compare_add,
                                    uint64_t swap, uint64_t *old_p)
{
    rdlm_verbs_ctx_t *c = (rdlm_verbs_ctx_t *)ctx;
    uint64_t raddr;
    uint32_t peer, rkey;
    rdlm_status_t st;

    if (old_p == NULL && c->domain != RDLM_TL_ATOMIC_NONE)
        return RDLM_ERR_INVALID_ARG;
    st = rdlm_verbs_amo_target(c, h, offset, &peer, &raddr, &rkey);
    if (st != RDLM_OK)
        return st;
    pthread_mutex_lock(&c->lock);
    st = rdlm_verbs_atomic(c, peer, op, raddr, rkey, compare_add, swap, old_p);
    pthread_mutex_unlock(&c->lock);
    return st;
}

static rdlm_status_t rdlm_verbs_cswap64(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey,
                                        uint64_t offset, uint64_t compare, uint64_t swap,
                                        uint64_t *old_p)
{
    return rdlm_verbs_amo(ctx, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, offset, compare, swap,
                          old_p);
}

static rdlm_status_t rdlm_verbs_fadd64(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey,
                                       uint64_t offset, uint64_t add, uint64_t *old_p)
{
    return rdlm_verbs_amo(ctx, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, offset, add, 0, old_p);
}

/* Verbs has no atomic swap or or (only masked/extended atomics on some adapters). */
static rdlm_status_t rdlm_verbs_swap64(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey,
                                       uint64_t offset, uint64_t value, uint64_t *old_p)
{
    return rdlm_tl_cas_loop(ctx, rkey, offset, value, 0, old_p);
}

static rdlm_status_t rdlm_verbs_for64(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey,
                                      uint64_t offset, uint64_t bits, uint64_t *old_p)
{
    return rdlm_tl_cas_loop(ctx, rkey, offset, bits, 1, old_p);
}

/* Posted: the fetched value goes to a discard word; completed by flush (or by any
 * later wait, which polls the same CQ). */
static rdlm_status_t rdlm_verbs_fadd64_post(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h h,
                                            uint64_t offset, uint64_t add)
{
    rdlm_verbs_ctx_t *c = (rdlm_verbs_ctx_t *)ctx;
    uint64_t raddr, id;
    uint32_t peer, rkey;
    rdlm_status_t st = rdlm_verbs_amo_target(c, h, offset, &peer, &raddr, &rkey);

    if (st != RDLM_OK)
        return st;
    pthread_mutex_lock(&c->lock);
    st = rdlm_verbs_amo_post(c, peer, IBV_WR_ATOMIC_FETCH_AND_ADD, raddr, rkey, add, 0,
                             RDLM_VERBS_DISCARD_WORD, &id);
    pthread_mutex_unlock(&c->lock);
    return st;
}

/* Posted CAS (verbs_progress.c: the slots, who finishes it): the result goes to a
 * free slot's scratch word; with every slot in flight the CAS runs blocking, done at
 * return. */
static rdlm_status_t rdlm_verbs_cswap64_post(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h h,
                                             uint64_t offset, uint64_t compare,
                                             uint64_t swap, rdlm_tl_op_t *op)
{
    rdlm_verbs_ctx_t *c = (rdlm_verbs_ctx_t *)ctx;
    uint64_t raddr, id;
    uint32_t peer, rkey, i = 0;
    rdlm_status_t st = rdlm_verbs_amo_target(c, h, offset, &peer, &raddr, &rkey);

    if (st != RDLM_OK)
        return st;
    op->status = RDLM_OK;
    rdlm_store(&op->done, 0, RDLM_RELAXED);
    pthread_mutex_lock(&c->lock);
    while (i < RDLM_VERBS_POSTS && c->posts[i].wr_id != 0)
        i++;
    if (i == RDLM_VERBS_POSTS) {
        st = rdlm_verbs_atomic(c, peer, IBV_WR_ATOMIC_CMP_AND_SWP, raddr, rkey, compare,
                               swap, &op->old);
        if (st == RDLM_OK)
            rdlm_store(&op->done, 1, RDLM_RELEASE);
    } else {
        st = rdlm_verbs_amo_post(c, peer, IBV_WR_ATOMIC_CMP_AND_SWP, raddr, rkey, compare,
                                 swap, RDLM_VERBS_POST_WORD + i, &id);
        if (st == RDLM_OK)
            rdlm_verbs_posts_track(c, i, id, op);
    }
    pthread_mutex_unlock(&c->lock);
    return st;
}

const rdlm_tl_amo_ops_t rdlm_verbs_amo_ops = {
    .cswap64 = rdlm_verbs_cswap64,
    .fadd64 = rdlm_verbs_fadd64,
    .swap64 = rdlm_verbs_swap64,
    .for64 = rdlm_verbs_for64,
    .fadd64_post = rdlm_verbs_fadd64_post,
    .cswap64_post = rdlm_verbs_cswap64_post,
};

/* ---- put / get ----------------------------------------------------------------------- */

/* Through the registered bounce buffer, in chunks of RDLM_VERBS_BOUNCE_LEN, each
 * waited for (the bounce buffer is reused at once). A put therefore returns complete
 * at the target. */
static rdlm_status_t rdlm_verbs_rma(rdlm_verbs_ctx_t *c, enum ibv_wr_opcode op,
                                    rdlm_tl_rkey_h h, uint64_t offset, void *buf,
                                    size_t len)
{
    char *bounce = (char *)c->scratch + RDLM_VERBS_BOUNCE_OFF;
    uint64_t raddr, id;
    uint32_t peer, rkey;
    size_t done = 0, n;
    rdlm_status_t st;

    if (len == 0)
        return RDLM_OK;
    if (buf == NULL)
        return RDLM_ERR_INVALID_ARG;
    st = rdlm_verbs_target(c, h, offset, len, 1, &peer, &raddr, &rkey);
    if (st != RDLM_OK)
        return st;
    pthread_mutex_lock(&c->lock);
    while (done < len && st == RDLM_OK) {
        struct ibv_sge sge = {.addr = (uint64_t)(uintptr_t)bounce,
                              .lkey = c->scratch_mr->lkey};
        struct ibv_send_wr wr = {.sg_list = &sge, .num_sge = 1, .opcode = op};

        n = len - done < RDLM_VERBS_BOUNCE_LEN ? len - done : RDLM_VERBS_BOUNCE_LEN;
        sge.length = (uint32_t)n;
        wr.wr.rdma.remote_addr = raddr + done;
        wr.wr.rdma.rkey = rkey;
        if (op == IBV_WR_RDMA_WRITE)
            memcpy(bounce, (char *)buf + done, n);
        st = rdlm_verbs_post(c, peer, &wr, &id);
        if (st == RDLM_OK)
            st = rdlm_verbs_wait(c, peer, id);
        if (st == RDLM_OK && op == IBV_WR_RDMA_READ)
            memcpy((char *)buf + done, bounce, n);
        done += n;
    }
    pthread_mutex_unlock(&c->lock);
    return st;
}

static rdlm_status_t rdlm_verbs_put(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey, uint64_t offset,
                                    const void *buf, size_t len)
{
    rdlm_verbs_ctx_t *c = (rdlm_verbs_ctx_t *)ctx;

    rdlm_tl_stat_add(&c->super.stats.puts, 1);
    rdlm_tl_stat_add(&c->super.stats.bytes, len);
    /* The buffer is only read (copied into the bounce buffer). */
    return rdlm_verbs_rma(c, IBV_WR_RDMA_WRITE, rkey, offset, (void *)(uintptr_t)buf, len);
}

static rdlm_status_t rdlm_verbs_get(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey, uint64_t offset,
                                    void *buf, size_t len)
{
    rdlm_verbs_ctx_t *c = (rdlm_verbs_ctx_t *)ctx;

    rdlm_tl_stat_add(&c->super.stats.gets, 1);
    rdlm_tl_stat_add(&c->super.stats.bytes, len);
    return rdlm_verbs_rma(c, IBV_WR_RDMA_READ, rkey, offset, buf, len);
}

const rdlm_tl_mem_ops_t rdlm_verbs_mem_ops = {
    .reg = rdlm_verbs_mem_reg,
    .addr = rdlm_tl_region_addr,
    .rkey_pack = rdlm_verbs_rkey_pack,
    .rkey_unpack = rdlm_verbs_rkey_unpack,
    .rkey_release = rdlm_verbs_rkey_release,
    .dereg = rdlm_verbs_mem_dereg,
};

const rdlm_tl_rma_ops_t rdlm_verbs_rma_ops = {
    .put = rdlm_verbs_put,
    .get = rdlm_verbs_get,
};
