/* Backend selection, the completeness check of the ops tables, the remote-key table
 * and the statistics (transport.h, tl_internal.h). */
#include "tl_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "log.h"

#if RDLM_HAVE_SHM
extern const rdlm_tl_backend_t rdlm_tl_shm_backend;
#endif
#if RDLM_HAVE_UCX
extern const rdlm_tl_backend_t rdlm_tl_ucx_backend;
#endif
#if RDLM_HAVE_VERBS
extern const rdlm_tl_backend_t rdlm_tl_verbs_backend;
#endif

static const rdlm_tl_backend_t *const rdlm_tl_backend_list[] = {
#if RDLM_HAVE_SHM
    &rdlm_tl_shm_backend,
#endif
#if RDLM_HAVE_UCX
    &rdlm_tl_ucx_backend,
#endif
#if RDLM_HAVE_VERBS
    &rdlm_tl_verbs_backend,
#endif
    NULL};

const rdlm_tl_backend_t *const *rdlm_tl_backends(void)
{
    return rdlm_tl_backend_list;
}

int rdlm_tl_ops_complete(const rdlm_tl_ctx_t *ctx)
{
    const rdlm_tl_setup_ops_t *s = ctx->setup;
    const rdlm_tl_mem_ops_t *m = ctx->mem;
    const rdlm_tl_amo_ops_t *a = ctx->amo;
    const rdlm_tl_rma_ops_t *r = ctx->rma;
    const rdlm_tl_am_ops_t *am = ctx->am;

    return s && s->query && s->progress && s->flush && s->destroy && s->peer_dead && s->sleep && m && m->reg &&
           m->addr && m->rkey_pack && m->rkey_unpack && m->rkey_release && m->dereg && a &&
           a->cswap64 && a->fadd64 && a->swap64 && a->for64 && a->fadd64_post && r &&
           r->put && r->get && am && am->set_handler && am->send;
}

rdlm_status_t rdlm_tl_open(const char *name, const rdlm_tl_params_t *params,
                           rdlm_tl_ctx_h *ctx_p)
{
    const rdlm_tl_backend_t *const *b;
    rdlm_tl_ctx_h ctx;
    rdlm_status_t st;

    if (name == NULL || params == NULL || params->bootstrap == NULL || ctx_p == NULL) {
        rdlm_error("transport: open: NULL argument");
        return RDLM_ERR_INVALID_ARG;
    }
    for (b = rdlm_tl_backend_list; *b != NULL; b++)
        if (strcmp((*b)->name, name) == 0)
            break;
    if (*b == NULL) {
        rdlm_error("transport: backend '%s' is not compiled in", name);
        return RDLM_ERR_NOT_FOUND;
    }
    st = (*b)->open(params, &ctx);
    if (st != RDLM_OK)
        return st;
    if (!rdlm_tl_ops_complete(ctx)) {
        rdlm_error("transport: backend '%s' left an ops entry NULL", name);
        ctx->setup->destroy(ctx);
        return RDLM_ERR_CORRUPT;
    }
    ctx->print_stats = params->print_stats;
    *ctx_p = ctx;
    return RDLM_OK;
}

void rdlm_tl_params_from_config(const struct rdlm_config *cfg, rdlm_tl_params_t *params_p)
{
    params_p->progress_thread = cfg->progress == RDLM_PROGRESS_THREAD;
    params_p->print_stats = cfg->stats;
    params_p->peer_failure = cfg->peer_failure;
    params_p->peer_timeout_ms = cfg->peer_timeout_ms;
}

void rdlm_tl_destroy(rdlm_tl_ctx_h ctx)
{
    if (ctx == NULL)
        return;
    if (ctx->print_stats)
        rdlm_tl_stats_print(ctx, stderr);
    ctx->setup->destroy(ctx);
}

void rdlm_tl_stats_print(const rdlm_tl_ctx_t *ctx, FILE *out)
{
    rdlm_tl_stats_t s;

    rdlm_tl_stats_read(ctx, &s);
    fprintf(out,
            "rdlm[%d] transport %s rank %" PRIu32 "/%" PRIu32 " stats: amo %" PRIu64
            " puts %" PRIu64 " gets %" PRIu64 " am_sent %" PRIu64 " am_recv %" PRIu64
            " bytes %" PRIu64 " progress %" PRIu64 "\n",
            (int)getpid(), ctx->backend, ctx->rank, ctx->size, s.amo, s.puts, s.gets,
            s.am_sent, s.am_recv, s.bytes, s.progress);
}

void rdlm_tl_stats_read(const rdlm_tl_ctx_t *ctx, rdlm_tl_stats_t *stats_p)
{
    const rdlm_tl_stats_t *s = &ctx->stats;

    stats_p->amo = __atomic_load_n(&s->amo, __ATOMIC_RELAXED);
    stats_p->puts = __atomic_load_n(&s->puts, __ATOMIC_RELAXED);
    stats_p->gets = __atomic_load_n(&s->gets, __ATOMIC_RELAXED);
    stats_p->am_sent = __atomic_load_n(&s->am_sent, __ATOMIC_RELAXED);
    stats_p->am_recv = __atomic_load_n(&s->am_recv, __ATOMIC_RELAXED);
    stats_p->bytes = __atomic_load_n(&s->bytes, __ATOMIC_RELAXED);
    stats_p->progress = __atomic_load_n(&s->progress, __ATOMIC_RELAXED);
}

const char *rdlm_tl_atomic_domain_str(rdlm_tl_atomic_domain_t domain)
{
    switch (domain) {
    case RDLM_TL_ATOMIC_CPU:
        return "cpu";
    case RDLM_TL_ATOMIC_DEVICE:
        return "device";
    default:
        return "none";
    }
}

static rdlm_status_t rdlm_tl_self_allgather(void *arg, const void *send, void *recv,
                                            size_t len, const rdlm_tl_idle_t *idle)
{
    (void)arg;
    (void)idle;
    memmove(recv, send, len);
    return RDLM_OK;
}

static rdlm_status_t rdlm_tl_self_barrier(void *arg, const rdlm_tl_idle_t *idle)
{
    (void)arg;
    (void)idle;
    return RDLM_OK;
}

static const rdlm_tl_bootstrap_t rdlm_tl_self_bootstrap = {
    .rank = 0,
    .size = 1,
    .arg = NULL,
    .allgather = rdlm_tl_self_allgather,
    .barrier = rdlm_tl_self_barrier,
};

const rdlm_tl_bootstrap_t *rdlm_tl_bootstrap_self(void)
{
    return &rdlm_tl_self_bootstrap;
}

rdlm_status_t rdlm_tl_cas_loop(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey, uint64_t offset,
                               uint64_t value, int bitwise_or, uint64_t *old_p)
{
    uint64_t guess = 0, old = 0;
    rdlm_status_t st;

    /* Each try is a round trip (about 2 us on InfiniBand): 2^24 tries bound the loop at
     * roughly half a minute of uninterrupted interference. */
    for (unsigned long tries = 0; tries < (1ul << 24); tries++) {
        st = ctx->amo->cswap64(ctx, rkey, offset, guess, bitwise_or ? guess | value : value,
                               &old);
        if (st != RDLM_OK)
            return st;
        if (old == guess) {
            *old_p = old;
            return RDLM_OK;
        }
        guess = old;
    }
    rdlm_error("transport: %s: compare-and-swap kept failing under contention",
               bitwise_or ? "for64" : "swap64");
    return RDLM_ERR_TIMEOUT;
}

int rdlm_tl_progress_idle(void *ctx)
{
    rdlm_tl_ctx_h c = ctx;

    return (int)c->setup->progress(c);
}

rdlm_status_t rdlm_tl_rkey_table_init(rdlm_tl_rkey_table_t *t, uint32_t capacity)
{
    t->capacity = capacity ? capacity : 1024;
    t->slots = calloc(t->capacity, sizeof(*t->slots));
    if (t->slots == NULL)
        return RDLM_ERR_NO_MEMORY;
    pthread_mutex_init(&t->lock, NULL);
    return RDLM_OK;
}

void rdlm_tl_rkey_table_fini(rdlm_tl_rkey_table_t *t, void (*release)(void *, void *),
                             void *arg)
{
    uint32_t i;

    if (t->slots == NULL)
        return;
    for (i = 0; i < t->capacity; i++)
        if (rdlm_load(&t->slots[i].gen, RDLM_RELAXED) & 1u)
            release(t->slots[i].backend, arg);
    free(t->slots);
    t->slots = NULL;
    pthread_mutex_destroy(&t->lock);
}

rdlm_status_t rdlm_tl_rkey_table_add(rdlm_tl_rkey_table_t *t, uint32_t peer, uint64_t base,
                                     uint64_t len, void *backend, rdlm_tl_rkey_h *rkey_p)
{
    uint32_t i, gen;

    pthread_mutex_lock(&t->lock);
    for (i = 0; i < t->capacity; i++)
        if ((rdlm_load(&t->slots[i].gen, RDLM_RELAXED) & 1u) == 0)
            break;
    if (i == t->capacity) {
        pthread_mutex_unlock(&t->lock);
        rdlm_error("transport: all %u remote-key slots in use", t->capacity);
        return RDLM_ERR_NO_RESOURCE;
    }
    t->slots[i].peer = peer;
    t->slots[i].base = base;
    t->slots[i].len = len;
    t->slots[i].backend = backend;
    gen = rdlm_load(&t->slots[i].gen, RDLM_RELAXED) + 1u; /* odd: in use */
    rdlm_store(&t->slots[i].gen, gen, RDLM_RELEASE);
    pthread_mutex_unlock(&t->lock);
    *rkey_p = (uint64_t)gen << 32 | (i + 1u);
    return RDLM_OK;
}

rdlm_status_t rdlm_tl_rkey_table_remove(rdlm_tl_rkey_table_t *t, rdlm_tl_rkey_h h,
                                        void **backend_p)
{
    uint32_t idx = (uint32_t)h - 1u;
    rdlm_status_t st = RDLM_ERR_BAD_HANDLE;

    pthread_mutex_lock(&t->lock);
    if (idx < t->capacity &&
        rdlm_load(&t->slots[idx].gen, RDLM_RELAXED) == (uint32_t)(h >> 32) &&
        ((h >> 32) & 1u)) {
        *backend_p = t->slots[idx].backend;
        rdlm_store(&t->slots[idx].gen, (uint32_t)(h >> 32) + 1u, RDLM_RELEASE);
        st = RDLM_OK;
    }
    pthread_mutex_unlock(&t->lock);
    return st;
}
