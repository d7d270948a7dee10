/* The raw UCX baseline's context, word and endpoint; see raw_ucp.h. */
#include "raw_ucp.h"

#include <stdio.h>
#include <string.h>

static int rdlm_bench_ucp_fail(char *why, size_t whylen, const char *what, ucs_status_t s)
{
    snprintf(why, whylen, "raw UCX: %s: %s", what, ucs_status_string(s));
    return -1;
}

int rdlm_bench_ucp_open(rdlm_bench_ucp_t *r, char *why, size_t whylen)
{
    ucp_params_t up = {.field_mask = UCP_PARAM_FIELD_FEATURES,
                       .features = UCP_FEATURE_AMO64 | UCP_FEATURE_RMA | UCP_FEATURE_AM |
                                   UCP_FEATURE_WAKEUP};
    ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                              .thread_mode = UCS_THREAD_MODE_SINGLE};
    ucp_worker_attr_t wa = {.field_mask = UCP_WORKER_ATTR_FIELD_ADDRESS};
    ucp_config_t *config;
    ucs_status_t s;

    memset(r, 0, sizeof(*r));
    s = ucp_config_read(NULL, NULL, &config);
    if (s != UCS_OK)
        return rdlm_bench_ucp_fail(why, whylen, "ucp_config_read", s);
    s = ucp_init(&up, config, &r->context);
    ucp_config_release(config);
    if (s != UCS_OK)
        return rdlm_bench_ucp_fail(why, whylen, "ucp_init", s);
    s = ucp_worker_create(r->context, &wp, &r->worker);
    if (s == UCS_OK)
        s = ucp_worker_query(r->worker, &wa);
    if (s != UCS_OK) {
        rdlm_bench_ucp_close(r);
        return rdlm_bench_ucp_fail(why, whylen, "worker", s);
    }
    r->address = wa.address;
    r->address_len = wa.address_length;
    return 0;
}

int rdlm_bench_ucp_map_word(rdlm_bench_ucp_t *r, void *key, size_t key_cap,
                            size_t *key_len_p, uint64_t *addr_p, char *why, size_t whylen)
{
    ucp_mem_map_params_t mp = {
        .field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                      UCP_MEM_MAP_PARAM_FIELD_FLAGS,
        .address = NULL,
        .length = RDLM_BENCH_UCP_WORD_BYTES,
        .flags = UCP_MEM_MAP_ALLOCATE,
    };
    ucp_mem_attr_t ma = {.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS};
    void *packed;
    size_t plen;
    ucs_status_t s;

    s = ucp_mem_map(r->context, &mp, &r->memh);
    if (s == UCS_OK)
        s = ucp_mem_query(r->memh, &ma);
    if (s != UCS_OK)
        return rdlm_bench_ucp_fail(why, whylen, "ucp_mem_map", s);
    r->word = ma.address;
    memset(r->word, 0, RDLM_BENCH_UCP_WORD_BYTES);
#if UCP_API_VERSION >= UCP_VERSION(1, 14)
    {
        ucp_memh_pack_params_t pp = {.field_mask = 0};
        s = ucp_memh_pack(r->memh, &pp, &packed, &plen);
    }
#else
    s = ucp_rkey_pack(r->context, r->memh, &packed, &plen);
#endif
    if (s != UCS_OK)
        return rdlm_bench_ucp_fail(why, whylen, "key pack", s);
    if (plen > key_cap) {
        snprintf(why, whylen, "raw UCX: packed key of %zu bytes exceeds %zu", plen,
                 key_cap);
    } else {
        memcpy(key, packed, plen);
    }
#if UCP_API_VERSION >= UCP_VERSION(1, 14)
    ucp_memh_buffer_release(packed, &(ucp_memh_buffer_release_params_t){0});
#else
    ucp_rkey_buffer_release(packed);
#endif
    if (plen > key_cap)
        return -1;
    *key_len_p = plen;
    *addr_p = (uint64_t)(uintptr_t)r->word;
    return 0;
}

int rdlm_bench_ucp_connect(rdlm_bench_ucp_t *r, const void *peer_address, const void *key,
                           uint64_t raddr, char *why, size_t whylen)
{
    ucp_ep_params_t ep = {
        .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
        .address = peer_address,
    };
    ucs_status_t s;

    s = ucp_ep_create(r->worker, &ep, &r->ep);
    if (s != UCS_OK)
        return rdlm_bench_ucp_fail(why, whylen, "ucp_ep_create", s);
    s = ucp_ep_rkey_unpack(r->ep, key, &r->rkey);
    if (s != UCS_OK)
        return rdlm_bench_ucp_fail(why, whylen, "ucp_ep_rkey_unpack", s);
    r->raddr = raddr;
    return 0;
}

ucs_status_t rdlm_bench_ucp_wait(ucp_worker_h worker, ucs_status_ptr_t req)
{
    ucs_status_t s;

    if (req == NULL)
        return UCS_OK;
    if (UCS_PTR_IS_ERR(req))
        return UCS_PTR_STATUS(req);
    do {
        ucp_worker_progress(worker);
        s = ucp_request_check_status(req);
    } while (s == UCS_INPROGRESS);
    ucp_request_free(req);
    return s;
}

void rdlm_bench_ucp_disconnect(rdlm_bench_ucp_t *r)
{
    ucp_request_param_t cp = {.op_attr_mask = 0};

    if (r->rkey != NULL)
        ucp_rkey_destroy(r->rkey);
    if (r->ep != NULL)
        (void)rdlm_bench_ucp_wait(r->worker, ucp_ep_close_nbx(r->ep, &cp));
    r->rkey = NULL;
    r->ep = NULL;
}

void rdlm_bench_ucp_close(rdlm_bench_ucp_t *r)
{
    if (r->memh != NULL)
        ucp_mem_unmap(r->context, r->memh);
    if (r->address != NULL)
        ucp_worker_release_address(r->worker, r->address);
    if (r->worker != NULL)
        ucp_worker_destroy(r->worker);
    if (r->context != NULL)
        ucp_cleanup(r->context);
    memset(r, 0, sizeof(*r));
}
