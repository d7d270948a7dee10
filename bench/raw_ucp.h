/*
 * The raw UCX baseline of rdlm-bench's transport and cross-node benchmarks: a
 * minimal ucp context of its own (features AMO64 | RMA | AM | WAKEUP, as rdlm's
 * transport asks for; worker thread mode single; UCX_* variables, no prefix), one
 * UCX-allocated 64-byte word at the target, one endpoint and key at the initiator,
 * and blocking fetching atomics completed the way rdlm's transport completes them
 * (progress the worker until the request is done).
 *
 *   every process                 target                      initiator
 *   rdlm_bench_ucp_open           rdlm_bench_ucp_map_word     rdlm_bench_ucp_connect
 *   (exchange r->address and the target's key: the caller's allgather)
 *                                 progress (ucp_worker_progress) while the initiator
 *                                 calls rdlm_bench_ucp_amo: over TCP the atomics
 *                                 are emulated and run in the target's progress
 *   rdlm_bench_ucp_disconnect (initiator, target progressing), then after the
 *   caller's barrier rdlm_bench_ucp_close everywhere
 *
 * Errors: -1 with why filled (the caller reports it).
 */
#ifndef RDLM_BENCH_RAW_UCP_H
#define RDLM_BENCH_RAW_UCP_H

#include <stddef.h>
#include <stdint.h>

#include <ucp/api/ucp.h>

#define RDLM_BENCH_UCP_WORD_BYTES 64u

typedef struct rdlm_bench_ucp {
    ucp_context_h context;
    ucp_worker_h worker;
    ucp_address_t *address; /**< own worker address, until close */
    size_t address_len;
    ucp_mem_h memh;  /**< target: the mapped word */
    uint64_t *word;  /**< target: its address */
    ucp_ep_h ep;     /**< initiator: to the target */
    ucp_rkey_h rkey; /**< initiator: the target's word */
    uint64_t raddr;
} rdlm_bench_ucp_t;

/** Context, worker and its address (r->address, r->address_len). */
int rdlm_bench_ucp_open(rdlm_bench_ucp_t *r, char *why, size_t whylen);

/** Target: map one zeroed UCX-allocated word and pack its key into key (at most
 *  key_cap bytes); *key_len_p and *addr_p (the word's address) are set. */
int rdlm_bench_ucp_map_word(rdlm_bench_ucp_t *r, void *key, size_t key_cap,
                            size_t *key_len_p, uint64_t *addr_p, char *why, size_t whylen);

/** Initiator: endpoint to the worker at peer_address, the peer's word at raddr. */
int rdlm_bench_ucp_connect(rdlm_bench_ucp_t *r, const void *peer_address, const void *key,
                           uint64_t raddr, char *why, size_t whylen);

/** Progress worker until req completes; frees it. */
ucs_status_t rdlm_bench_ucp_wait(ucp_worker_h worker, ucs_status_ptr_t req);

/**
 * One fetching atomic on the target's word, blocking: op ADD or SWAP with value,
 * *reply_p the old value; op CSWAP compares with value and swaps in *reply_p, which
 * then holds the old value (UCP's CSWAP convention).
 */
static inline ucs_status_t rdlm_bench_ucp_amo(rdlm_bench_ucp_t *r, ucp_atomic_op_t op,
                                              uint64_t value, uint64_t *reply_p)
{
    ucp_request_param_t p = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_REPLY_BUFFER,
        .datatype = ucp_dt_make_contig(sizeof(uint64_t)),
        .reply_buffer = reply_p,
    };

    return rdlm_bench_ucp_wait(
        r->worker, ucp_atomic_op_nbx(r->ep, op, &value, 1, r->raddr, r->rkey, &p));
}

/** Initiator: destroy the key and close the endpoint (the target must progress). */
void rdlm_bench_ucp_disconnect(rdlm_bench_ucp_t *r);

/** Unmap the word, destroy worker and context; zeroes *r. After disconnect. */
void rdlm_bench_ucp_close(rdlm_bench_ucp_t *r);

#endif
