/* Stub entries: RDLM_ERR_UNSUPPORTED for every operation (rdma-core's dummy_ops,
 * libfabric's ofi_enosys), so that no ops table ever holds NULL. */
#include "tl_internal.h"

#include <sched.h>

rdlm_status_t rdlm_tl_stub_query(rdlm_tl_ctx_h ctx, rdlm_tl_caps_t *caps_p)
{
    (void)ctx;
    (void)caps_p;
    return RDLM_ERR_UNSUPPORTED;
}

unsigned rdlm_tl_stub_progress(rdlm_tl_ctx_h ctx)
{
    (void)ctx;
    return 0;
}

rdlm_status_t rdlm_tl_stub_flush(rdlm_tl_ctx_h ctx, uint32_t peer)
{
    (void)ctx;
    (void)peer;
    return RDLM_ERR_UNSUPPORTED;
}

void rdlm_tl_stub_destroy(rdlm_tl_ctx_h ctx)
{
    (void)ctx;
}

rdlm_status_t rdlm_tl_stub_mem_reg(rdlm_tl_ctx_h ctx, void *addr, size_t len,
                                   rdlm_tl_mem_h *mem_p)
{
    (void)ctx;
    (void)addr;
    (void)len;
    (void)mem_p;
    return RDLM_ERR_UNSUPPORTED;
}

rdlm_status_t rdlm_tl_stub_mem_addr(rdlm_tl_ctx_h ctx, rdlm_tl_mem_h mem, void **addr_p,
                                    size_t *len_p)
{
    (void)ctx;
    (void)mem;
    (void)addr_p;
    (void)len_p;
    return RDLM_ERR_UNSUPPORTED;
}

rdlm_status_t rdlm_tl_stub_rkey_pack(rdlm_tl_ctx_h ctx, rdlm_tl_mem_h mem, void *buf,
                                     size_t buf_len, size_t *len_p)
{
    (void)ctx;
    (void)mem;
    (void)buf;
    (void)buf_len;
    (void)len_p;
    return RDLM_ERR_UNSUPPORTED;
}

rdlm_status_t rdlm_tl_stub_rkey_unpack(rdlm_tl_ctx_h ctx, uint32_t peer, const void *buf,
                                       size_t len, rdlm_tl_rkey_h *rkey_p)
{
    (void)ctx;
    (void)peer;
    (void)buf;
    (void)len;
    (void)rkey_p;
    return RDLM_ERR_UNSUPPORTED;
}

rdlm_status_t rdlm_tl_stub_rkey_release(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey)
{
    (void)ctx;
    (void)rkey;
    return RDLM_ERR_UNSUPPORTED;
}

rdlm_status_t rdlm_tl_stub_mem_dereg(rdlm_tl_ctx_h ctx, rdlm_tl_mem_h mem)
{
    (void)ctx;
    (void)mem;
    return RDLM_ERR_UNSUPPORTED;
}

rdlm_status_t rdlm_tl_stub_cswap64(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey, uint64_t offset,
                                   uint64_t compare, uint64_t swap, uint64_t *old_p)
{
    (void)ctx;
    (void)rkey;
    (void)offset;
    (void)compare;
    (void)swap;
    (void)old_p;
    return RDLM_ERR_UNSUPPORTED;
}

rdlm_status_t rdlm_tl_stub_fadd64(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey, uint64_t offset,
                                  uint64_t add, uint64_t *old_p)
{
    (void)ctx;
    (void)rkey;
    (void)offset;
    (void)add;
    (void)old_p;
    return RDLM_ERR_UNSUPPORTED;
}

rdlm_status_t rdlm_tl_stub_swap64(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey, uint64_t offset,
                                  uint64_t value, uint64_t *old_p)
{
    (void)ctx;
    (void)rkey;
    (void)offset;
    (void)value;
    (void)old_p;
    return RDLM_ERR_UNSUPPORTED;
}

rdlm_status_t rdlm_tl_stub_for64(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey, uint64_t offset,
                                 uint64_t bits, uint64_t *old_p)
{
    (void)ctx;
    (void)rkey;
    (void)offset;
    (void)bits;
    (void)old_p;
    return RDLM_ERR_UNSUPPORTED;
}

rdlm_status_t rdlm_tl_stub_fadd64_post(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey,
                                       uint64_t offset, uint64_t add)
{
    (void)ctx;
    (void)rkey;
    (void)offset;
    (void)add;
    return RDLM_ERR_UNSUPPORTED;
}

rdlm_status_t rdlm_tl_stub_put(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey, uint64_t offset,
                               const void *buf, size_t len)
{
    (void)ctx;
    (void)rkey;
    (void)offset;
    (void)buf;
    (void)len;
    return RDLM_ERR_UNSUPPORTED;
}

rdlm_status_t rdlm_tl_stub_get(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey, uint64_t offset,
                               void *buf, size_t len)
{
    (void)ctx;
    (void)rkey;
    (void)offset;
    (void)buf;
    (void)len;
    return RDLM_ERR_UNSUPPORTED;
}

rdlm_status_t rdlm_tl_stub_am_set_handler(rdlm_tl_ctx_h ctx, unsigned id,
                                          rdlm_tl_am_handler_func_t func, void *arg)
{
    (void)ctx;
    (void)id;
    (void)func;
    (void)arg;
    return RDLM_ERR_UNSUPPORTED;
}

rdlm_status_t rdlm_tl_stub_am_send(rdlm_tl_ctx_h ctx, uint32_t peer, unsigned id,
                                   const void *data, size_t len)
{
    (void)ctx;
    (void)peer;
    (void)id;
    (void)data;
    (void)len;
    return RDLM_ERR_UNSUPPORTED;
}

int rdlm_tl_stub_peer_dead(rdlm_tl_ctx_h ctx, uint32_t peer)
{
    (void)ctx;
    (void)peer;
    return 0; /* not known: this backend reports no deaths */
}

void rdlm_tl_stub_sleep(rdlm_tl_ctx_h ctx, uint64_t timeout_ns, int (*done)(void *arg),
                        void *arg)
{
    (void)ctx;
    (void)timeout_ns;
    (void)done;
    (void)arg;
    sched_yield();
}

const rdlm_tl_setup_ops_t rdlm_tl_stub_setup_ops = {
    .query = rdlm_tl_stub_query,
    .progress = rdlm_tl_stub_progress,
    .flush = rdlm_tl_stub_flush,
    .destroy = rdlm_tl_stub_destroy,
    .peer_dead = rdlm_tl_stub_peer_dead,
    .sleep = rdlm_tl_stub_sleep,
};

const rdlm_tl_mem_ops_t rdlm_tl_stub_mem_ops = {
    .reg = rdlm_tl_stub_mem_reg,
    .addr = rdlm_tl_stub_mem_addr,
    .rkey_pack = rdlm_tl_stub_rkey_pack,
    .rkey_unpack = rdlm_tl_stub_rkey_unpack,
    .rkey_release = rdlm_tl_stub_rkey_release,
    .dereg = rdlm_tl_stub_mem_dereg,
};

const rdlm_tl_amo_ops_t rdlm_tl_stub_amo_ops = {
    .cswap64 = rdlm_tl_stub_cswap64,
    .fadd64 = rdlm_tl_stub_fadd64,
    .swap64 = rdlm_tl_stub_swap64,
    .for64 = rdlm_tl_stub_for64,
    .fadd64_post = rdlm_tl_stub_fadd64_post,
};

const rdlm_tl_rma_ops_t rdlm_tl_stub_rma_ops = {
    .put = rdlm_tl_stub_put,
    .get = rdlm_tl_stub_get,
};

const rdlm_tl_am_ops_t rdlm_tl_stub_am_ops = {
    .set_handler = rdlm_tl_stub_am_set_handler,
    .send = rdlm_tl_stub_am_send,
};
