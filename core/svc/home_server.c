/* The lock home an rdlmd hosts (home_server.h). */
#include "home_server.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdlm/lease.h>

#include "atomics.h"
#include "bootstrap.h"
#include "home_layout.h"
#include "log.h"
#include "transport.h"
#include "wire.h"

/* The epoch thread retries this often while no leader answers. */
#define RDLM_SVC_EPOCH_RETRY_MS 200u

struct rdlm_svc_home {
    rdlm_svc_home_params_t params;
    uint32_t n_members;
    rdlm_svc_member_t members[RDLM_ADDRS_COUNT]; /* by increasing id */
    char *authority;
    rdlm_tl_boot_relay_t *relay;
    rdlm_tl_ctx_h tl;
    rdlm_tl_mem_h mem;
    uint64_t *region;
    uint8_t rec[RDLM_WIRE_MAX_PAYLOAD], rkey[RDLM_TL_RKEY_MAX];
    size_t rec_len, rkey_len;
    uint8_t blob[RDLM_WIRE_MAX_PAYLOAD]; /* written once, before ready */
    size_t blob_len;
    rdlm_atomic_u32_t ready, stop;
    pthread_t thread;
    int thread_running;
};

/* Commit a new epoch with a session of our own; 1 once done, 0 to retry. */
static int rdlm_svc_home_take_epoch(rdlm_svc_home_t *h, uint64_t *epoch_p)
{
    rdlm_session_params_t sp = {.field_mask = RDLM_SESSION_FIELD_TIMEOUT,
                                .connect_timeout_ms = 2000};
    rdlm_session_h s;
    rdlm_status_t st = rdlm_session_open(h->authority, &sp, &s);

    if (st != RDLM_OK) {
        rdlm_debug("home: no session at the authority yet: %s", rdlm_status_name(st));
        return 0;
    }
    st = rdlm_session_new_epoch(s, epoch_p);
    rdlm_session_close(s);
    if (st == RDLM_OK && *epoch_p >= (UINT64_C(1) << 24)) {
        rdlm_error("home: the authority's epoch %llu does not fit a token's 24 bits",
                   (unsigned long long)*epoch_p);
        return 0;
    }
    return st == RDLM_OK;
}

/* Write the description of h in epoch (0, no region: a replica without a home) and
 * answer HOMES with it from now on. 0 if it does not fit a frame (logged). */
static int rdlm_svc_home_publish(rdlm_svc_home_t *h, uint64_t epoch)
{
    rdlm_svc_desc_t d = {.epoch = epoch,
                         .slots = h->params.slots,
                         .tags = h->params.slots != 0 ? h->params.tags : 0,
                         .rec_len = (uint32_t)h->rec_len,
                         .rkey_len = (uint32_t)h->rkey_len,
                         .rec = h->rec,
                         .rkey = h->rkey,
                         .self_id = h->params.self_id,
                         .n_members = h->n_members};

    memcpy(d.members, h->members, sizeof(d.members));
    h->blob_len = rdlm_svc_desc_encode(&d, h->blob, sizeof(h->blob));
    if (h->blob_len == 0) {
        rdlm_error("home: the description (%zu + %zu bytes) does not fit a frame",
                   h->rec_len, h->rkey_len);
        return 0;
    }
    rdlm_store(&h->ready, 1, RDLM_RELEASE);
    return 1;
}

static void *rdlm_svc_home_main(void *arg)
{
    rdlm_svc_home_t *h = arg;
    struct timespec pause = {0, RDLM_SVC_EPOCH_RETRY_MS * 1000000L};
    uint64_t epoch = 0;

    while (!rdlm_load(&h->stop, RDLM_ACQUIRE)) {
        if (rdlm_svc_home_take_epoch(h, &epoch)) {
            h->region[RDLM_SVC_OFF_EPOCH / 8] = epoch;
            if (rdlm_svc_home_publish(h, epoch)) {
                rdlm_info("home: serving %u lock slots in epoch %llu", h->params.slots,
                          (unsigned long long)epoch);
            }
            return NULL;
        }
        nanosleep(&pause, NULL);
    }
    return NULL;
}

rdlm_status_t rdlm_svc_home_describe(void *home, const uint8_t **blob_p, size_t *len_p)
{
    rdlm_svc_home_t *h = home;

    if (!rdlm_load(&h->ready, RDLM_ACQUIRE))
        return RDLM_ERR_UNAVAILABLE;
    *blob_p = h->blob;
    *len_p = h->blob_len;
    return RDLM_OK;
}

/* Transport, region and records; the header's sizes. */
static rdlm_status_t rdlm_svc_home_open(rdlm_svc_home_t *h)
{
    rdlm_tl_params_t tp = {.thread_mode = RDLM_TL_THREAD_SINGLE,
                           .progress_thread = 1,
                           .answer_only = 1,
                           .peer_label = "a client of this lock home"};
    size_t bytes = rdlm_svc_region_bytes(h->params.tags, h->params.slots), len;
    rdlm_status_t st = rdlm_tl_boot_record_create(&h->relay);

    if (st == RDLM_OK) {
        tp.bootstrap = rdlm_tl_boot_relay_get(h->relay);
        st = rdlm_tl_open("ucx", &tp, &h->tl);
    }
    if (st == RDLM_OK)
        st = h->tl->mem->reg(h->tl, NULL, bytes, &h->mem);
    if (st == RDLM_OK)
        st = h->tl->mem->addr(h->tl, h->mem, (void **)&h->region, &len);
    if (st == RDLM_OK)
        st = h->tl->mem->rkey_pack(h->tl, h->mem, h->rkey, sizeof(h->rkey), &h->rkey_len);
    if (st == RDLM_OK)
        st = rdlm_tl_boot_record_pack(h->relay, h->rec, sizeof(h->rec), &h->rec_len);
    if (st != RDLM_OK)
        return st;
    h->region[0] = RDLM_SVC_MAGIC;
    h->region[2] = h->params.slots;
    h->region[3] = h->params.tags;
    h->region[RDLM_SVC_OFF_NEXT_TAG / 8] = 1; /* tag 0 means "free" */
    return RDLM_OK;
}

static int rdlm_svc_member_cmp(const void *a, const void *b)
{
    const rdlm_svc_member_t *x = a, *y = b;

    return (x->id > y->id) - (x->id < y->id);
}

/* The members of params by increasing id into h; 0 unless they are 1..7 replicas of
 * distinct nonzero ids, self_id among them, with addresses that fit. */
static int rdlm_svc_home_members(rdlm_svc_home_t *h, const rdlm_svc_home_params_t *p)
{
    int self = 0;

    if (p->n_members == 0 || p->n_members > RDLM_ADDRS_COUNT || p->member_ids == NULL ||
        p->member_addrs == NULL)
        return 0;
    for (uint32_t i = 0; i < p->n_members; i++) {
        size_t n = p->member_addrs[i] != NULL ? strlen(p->member_addrs[i]) : 0;

        if (p->member_ids[i] == 0 || n == 0 || n > RDLM_ADDR_MAX)
            return 0;
        h->members[i].id = p->member_ids[i];
        memcpy(h->members[i].addr, p->member_addrs[i], n + 1);
        self |= p->member_ids[i] == p->self_id;
    }
    h->n_members = p->n_members;
    qsort(h->members, h->n_members, sizeof(h->members[0]), rdlm_svc_member_cmp);
    for (uint32_t i = 1; i < h->n_members; i++) {
        if (h->members[i].id == h->members[i - 1].id)
            return 0;
    }
    return self;
}

/* Host the home of h: transport and region, then the thread that commits its epoch. */
static rdlm_status_t rdlm_svc_home_serve(rdlm_svc_home_t *h)
{
    rdlm_status_t st = rdlm_svc_home_open(h);

    if (st == RDLM_OK) {
        if (pthread_create(&h->thread, NULL, rdlm_svc_home_main, h) != 0)
            st = RDLM_ERR_NO_RESOURCE;
        h->thread_running = st == RDLM_OK;
    }
    return st;
}

rdlm_status_t rdlm_svc_home_start(const rdlm_svc_home_params_t *params,
                                  rdlm_svc_home_t **home_p)
{
    rdlm_svc_home_t *h;
    rdlm_status_t st;

    if (params == NULL || params->authority == NULL ||
        params->slots > (UINT32_C(1) << 24) ||
        (params->slots != 0 && (params->tags < 2 || params->tags > RDLM_SVC_TAGS_MAX))) {
        rdlm_error("home: slots must be 0..2^24 and tags 2..2^24");
        return RDLM_ERR_INVALID_ARG;
    }
    h = calloc(1, sizeof(*h));
    if (h == NULL)
        return RDLM_ERR_NO_MEMORY;
    if (!rdlm_svc_home_members(h, params)) {
        rdlm_error("home: the members must be 1..%u replicas of distinct ids, this one "
                   "(%u) among them",
                   RDLM_ADDRS_COUNT, params->self_id);
        free(h);
        return RDLM_ERR_INVALID_ARG;
    }
    h->params = *params;
    h->params.member_ids = NULL; /* copied into members */
    h->params.member_addrs = NULL;
    h->authority = strdup(params->authority);
    if (h->authority == NULL)
        st = RDLM_ERR_NO_MEMORY;
    else if (params->slots != 0)
        st = rdlm_svc_home_serve(h);
    else
        st = rdlm_svc_home_publish(h, 0) ? RDLM_OK : RDLM_ERR_NO_RESOURCE;
    if (st != RDLM_OK) {
        rdlm_error("home: cannot host lock homes: %s", rdlm_status_str(st));
        rdlm_svc_home_stop(h);
        return st;
    }
    *home_p = h;
    return RDLM_OK;
}

void rdlm_svc_home_stop(rdlm_svc_home_t *h)
{
    if (h == NULL)
        return;
    rdlm_store(&h->stop, 1, RDLM_RELEASE);
    if (h->thread_running)
        pthread_join(h->thread, NULL);
    if (h->mem != NULL)
        h->tl->mem->dereg(h->tl, h->mem);
    rdlm_tl_destroy(h->tl);
    rdlm_tl_boot_relay_destroy(h->relay);
    free(h->authority);
    free(h);
}
