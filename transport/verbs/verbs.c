/*
 * The verbs backend (libibverbs RC queue pairs; connections through librdmacm).
 *
 * STATUS: only device discovery is implemented. open() looks for an RDMA device:
 * - none (these machines: the kernel has no InfiniBand support, and no rdma_rxe):
 *   RDLM_ERR_UNSUPPORTED with the message below, so the conformance suite skips;
 * - one or more: it reads the first device's limits (atomic_cap, max_qp_rd_atom) and
 *   still returns RDLM_ERR_UNSUPPORTED, because the RC queue-pair path (memory
 *   registration with IBV_ACCESS_REMOTE_ATOMIC, QP wire-up with max_rd_atomic /
 *   max_dest_rd_atomic from these limits, IBV_WR_ATOMIC_CMP_AND_SWP /
 *   IBV_WR_ATOMIC_FETCH_AND_ADD, results normalised from big-endian) is not written:
 *   it could not be run here, and untested RDMA code is not shipped as working.
 */
#include <infiniband/verbs.h>

#include "log.h"
#include "tl_internal.h"

#define RDLM_VERBS_NO_DEVICE                                                              \
    "no RDMA device: to test on one machine, load rdma_rxe and run "                      \
    "`rdma link add rxe0 type rxe netdev eth0`"

/* IBV_ATOMIC_GLOB: coherent with CPU atomics; IBV_ATOMIC_HCA: only with atomics of
 * the same adapter (soft-RoCE does atomics in the kernel: not CPU-coherent either). */
static rdlm_tl_atomic_domain_t rdlm_verbs_domain(enum ibv_atomic_cap cap)
{
    switch (cap) {
    case IBV_ATOMIC_GLOB:
        return RDLM_TL_ATOMIC_CPU;
    case IBV_ATOMIC_HCA:
        return RDLM_TL_ATOMIC_DEVICE;
    default:
        return RDLM_TL_ATOMIC_NONE;
    }
}

static rdlm_status_t rdlm_verbs_open(const rdlm_tl_params_t *params, rdlm_tl_ctx_h *ctx_p)
{
    struct ibv_device **list;
    struct ibv_context *dev;
    struct ibv_device_attr attr;
    int n = 0;

    (void)params;
    (void)ctx_p;
    list = ibv_get_device_list(&n);
    if (list == NULL || n == 0) {
        if (list != NULL)
            ibv_free_device_list(list);
        rdlm_error("verbs: " RDLM_VERBS_NO_DEVICE);
        return RDLM_ERR_UNSUPPORTED;
    }
    dev = ibv_open_device(list[0]);
    if (dev != NULL && ibv_query_device(dev, &attr) == 0)
        rdlm_error("verbs: device %s (atomic_cap %d: %s atomics, max_qp_rd_atom %d): the RC "
                   "queue-pair path is not implemented yet",
                   ibv_get_device_name(list[0]), (int)attr.atomic_cap,
                   rdlm_tl_atomic_domain_str(rdlm_verbs_domain(attr.atomic_cap)),
                   attr.max_qp_rd_atom);
    else
        rdlm_error("verbs: cannot open or query %s", ibv_get_device_name(list[0]));
    if (dev != NULL)
        ibv_close_device(dev);
    ibv_free_device_list(list);
    return RDLM_ERR_UNSUPPORTED;
}

const rdlm_tl_backend_t rdlm_tl_verbs_backend = {.name = "verbs", .open = rdlm_verbs_open};
