/* Distributed context: create and destroy (see global.h). */
#include "global.h"
#include "amq.h"
#include "glock.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "proc.h"

#define RDLM_GLOBAL_DRAIN_NS 10000000000ull
#define RDLM_GLOBAL_SPINS 200 /* polls (with progress) before yielding */

/* What every process tells the others first. */
typedef struct rdlm_global_hello {
    char hostkey[RDLM_HOSTKEY_LEN];
    char job[64];
    uint32_t epoch;
    uint64_t ctx_id;       /* random: rank 0's names the context */
    uint32_t holder_words; /* rdlm_global_params_t.holder_words */
    uint32_t virtual_nodes; /* RDLM_VIRTUAL_NODES: rank 0's is every process's layout */
    rdlm_global_procid_t proc;
} rdlm_global_hello_t;

/* What launchers call the number of the job's processes on this host (Open MPI,
 * MPICH's Hydra). */
static const char *const rdlm_global_local_size_vars[] = {"OMPI_COMM_WORLD_LOCAL_SIZE",
                                                          "MPI_LOCALNRANKS"};

/* The same-host process records (peers.h) from everyone's hello. */
static rdlm_status_t rdlm_global_hello_procs(rdlm_global_t *d,
                                             const rdlm_global_hello_t *all, uint32_t size)
{
    rdlm_global_procid_t *ids = calloc(size, sizeof(*ids));

    for (uint32_t r = 0; ids != NULL && r < size; r++) {
        ids[r] = all[r].proc;
    }
    d->procs = ids != NULL ? rdlm_global_procs_new(ids, size, d->rank) : NULL;
    free(ids);
    d->host_procs = 1;
    for (uint32_t r = 0; d->procs != NULL && r < size; r++) {
        d->host_procs += d->procs[r].pid != 0;
    }
    /* A context over part of a job (a sub-communicator) sees only its own processes:
     * the launcher's count of the job's processes on this host, where it says. */
    for (size_t i = 0; i < sizeof(rdlm_global_local_size_vars) / sizeof(char *); i++) {
        const char *v = getenv(rdlm_global_local_size_vars[i]);
        unsigned long n = v != NULL ? strtoul(v, NULL, 10) : 0;

        if (n > d->host_procs && n < UINT32_MAX) {
            d->host_procs = (uint32_t)n;
        }
    }
    return d->procs != NULL ? RDLM_OK : RDLM_ERR_NO_MEMORY;
}

static rdlm_status_t rdlm_global_hello(rdlm_global_t *d, const rdlm_global_params_t *p)
{
    const rdlm_tl_bootstrap_t *bs = p->bootstrap;
    rdlm_global_hello_t mine, *all;
    rdlm_status_t s;

    memset(&mine, 0, sizeof(mine));
    if (p->hostkey != NULL) {
        snprintf(mine.hostkey, sizeof(mine.hostkey), "%s", p->hostkey);
    } else {
        rdlm_nodes_hostkey(mine.hostkey);
    }
    snprintf(mine.job, sizeof(mine.job), "%s", p->job);
    /* Only rank 0's counts: only rank 0 takes one from its host's epoch file. */
    mine.epoch = p->epoch != 0 ? p->epoch : bs->rank == 0 ? rdlm_epoch_host() : 0;
    mine.ctx_id = rdlm_proc_random_id();
    mine.holder_words = p->holder_words != 0;
    mine.virtual_nodes = p->virtual_nodes;
    rdlm_global_procid_self(&mine.proc);
    all = calloc(bs->size, sizeof(*all));
    if (all == NULL) {
        return RDLM_ERR_NO_MEMORY;
    }
    s = bs->allgather(bs->arg, &mine, all, sizeof(mine), NULL);
    if (s == RDLM_OK) {
        char *keys = malloc((size_t)bs->size * RDLM_HOSTKEY_LEN);

        if (keys == NULL) {
            s = RDLM_ERR_NO_MEMORY;
        } else {
            for (uint32_t r = 0; r < bs->size; r++) {
                memcpy(keys + (size_t)r * RDLM_HOSTKEY_LEN, all[r].hostkey,
                       RDLM_HOSTKEY_LEN);
            }
            /* Every process must split the hosts alike, or their collectives part
             * ways (an MPMD launch that set the variable for one program only). */
            if (all[0].virtual_nodes != p->virtual_nodes) {
                rdlm_warn("dist: RDLM_VIRTUAL_NODES=%u here, rank 0 says %u: rank 0's is "
                          "used",
                          p->virtual_nodes, all[0].virtual_nodes);
            }
            s = rdlm_nodes_compute(keys, bs->size, bs->rank, all[0].virtual_nodes,
                                   &d->nodes);
            free(keys);
        }
        if (s == RDLM_OK) {
            s = rdlm_global_hello_procs(d, all, bs->size);
        }
        snprintf(d->job, sizeof(d->job), "%s", all[0].job);
        d->epoch = all[0].epoch;
        d->ctx_id = all[0].ctx_id;
        d->slot_bytes =
            all[0].holder_words ? RDLM_GLOBAL_SLOT_BYTES_HOLDER : RDLM_GLOBAL_SLOT_BYTES;
        d->intents = all[0].holder_words && bs->size <= RDLM_GLOBAL_INTENT_RANKS;
        d->test_die_before_link = getenv("RDLMTEST_GLOCK_DIE_BEFORE_LINK") != NULL;
    }
    free(all);
    return s;
}

/* Pack this process's keys (queue nodes; home region or none) and gather everyone's. */
static rdlm_status_t rdlm_global_exchange_keys(rdlm_global_t *d,
                                               const rdlm_tl_bootstrap_t *bs)
{
    const rdlm_tl_idle_t idle = {rdlm_global_progress_idle, d};
    char packed[2][RDLM_TL_RKEY_MAX];
    size_t len[2] = {0, 0};
    uint64_t maxlen = 0, *lens;
    rdlm_status_t s;
    char *mine;

    s = d->tl->mem->rkey_pack(d->tl, d->qmem, packed[0], sizeof(packed[0]), &len[0]);
    if (s == RDLM_OK && d->homemem != NULL) {
        s = d->tl->mem->rkey_pack(d->tl, d->homemem, packed[1], sizeof(packed[1]), &len[1]);
    }
    if (s != RDLM_OK) {
        return s;
    }
    lens = calloc(bs->size, sizeof(*lens));
    if (lens == NULL) {
        return RDLM_ERR_NO_MEMORY;
    }
    maxlen = len[0] > len[1] ? len[0] : len[1];
    s = bs->allgather(bs->arg, &maxlen, lens, sizeof(maxlen), &idle);
    for (uint32_t r = 0; s == RDLM_OK && r < bs->size; r++) {
        maxlen = lens[r] > maxlen ? lens[r] : maxlen;
    }
    free(lens);
    if (s != RDLM_OK) {
        return s;
    }
    d->blob_len = maxlen;
    mine = calloc(2, maxlen + 8);
    d->blobs = calloc((size_t)bs->size * 2, maxlen + 8);
    if (mine == NULL || d->blobs == NULL) {
        free(mine);
        return RDLM_ERR_NO_MEMORY;
    }
    for (int i = 0; i < 2; i++) {
        uint64_t l = len[i];

        memcpy(mine + (size_t)i * (maxlen + 8), &l, sizeof(l));
        memcpy(mine + (size_t)i * (maxlen + 8) + 8, packed[i], len[i]);
    }
    s = bs->allgather(bs->arg, mine, d->blobs, 2 * (maxlen + 8), &idle);
    free(mine);
    return s;
}

/* The progress thread's hook: finish posted releases, send the home's answers. */
static void rdlm_global_after_progress(void *dist)
{
    rdlm_glock_finish(dist, 0);
    rdlm_amq_flush(dist);
    rdlm_global_rw_sweep(dist);
}

static rdlm_status_t rdlm_global_open_transport(rdlm_global_t *d,
                                                const rdlm_global_params_t *p)
{
    rdlm_tl_params_t tlp = p->tl;
    rdlm_status_t s;
    void *addr;
    size_t len;

    tlp.bootstrap = p->bootstrap;
    tlp.thread_mode = RDLM_TL_THREAD_MULTI;
    if (!p->barrier_only) {
        tlp.after_progress = rdlm_global_after_progress;
        tlp.after_progress_arg = d;
    }
    s = rdlm_tl_open(p->transport, &tlp, &d->tl);
    if (s != RDLM_OK) {
        return s;
    }
    d->tl->setup->query(d->tl, &d->caps);
    if ((d->caps.flags & (RDLM_TL_CAP_AMO64 | RDLM_TL_CAP_RMA)) !=
        (RDLM_TL_CAP_AMO64 | RDLM_TL_CAP_RMA)) {
        rdlm_error("dist: transport %s lacks remote atomics or put/get", d->caps.backend);
        return RDLM_ERR_UNSUPPORTED;
    }
    if (d->caps.amo_needs_target_progress && !d->caps.progress_thread && !d->barrier_only) {
        rdlm_warn("dist: transport %s needs every process to progress and no progress "
                  "thread runs (RDLM_PROGRESS=poll): a process that computes without "
                  "calling rdlm stalls the locks homed on it",
                  d->caps.backend);
    }
    d->serves_home = d->caps.amo_needs_target_progress && !d->barrier_only;
    /* Only with a progress thread: a release whose posted free failed must be finished
     * (its successor granted) also while this process is outside rdlm, say in an MPI
     * barrier the successor waits for too (tests/model dist_lock.pml
     * BUG_POST_CALLS_ONLY). */
    d->posts_release =
        d->tl->amo->cswap64_post != NULL && d->caps.progress_thread && !d->barrier_only;
    s = d->tl->mem->reg(d->tl, NULL, RDLM_GLOBAL_QMEM_BYTES, &d->qmem);
    if (s == RDLM_OK) {
        s = d->tl->mem->addr(d->tl, d->qmem, &addr, &len);
        d->qn = addr;
    }
    if (s == RDLM_OK && d->nodes.leader_of[d->nodes.node] == d->rank) {
        /* Home slots, the barrier's dissemination flags, the enqueue intents. */
        s = d->tl->mem->reg(d->tl, NULL,
                            rdlm_global_intents_offset(d) +
                                (d->intents ? (size_t)d->bootstrap->size *
                                                  RDLM_GLOBAL_QNODES * sizeof(uint64_t)
                                            : 0),
                            &d->homemem);
    }
    return s;
}

rdlm_status_t rdlm_global_create(const rdlm_global_params_t *params, rdlm_global_t **dist_p)
{
    rdlm_global_t *d = calloc(1, sizeof(*d));
    rdlm_status_t s;

    if (d == NULL) {
        return RDLM_ERR_NO_MEMORY;
    }
    d->rank = params->bootstrap->rank;
    d->bootstrap = params->bootstrap;
    d->cohort_bound = params->cohort_bound;
    d->answer_ns = (uint64_t)(params->tl.peer_timeout_ms != 0 ? params->tl.peer_timeout_ms
                                                               : 10000u) * 1000000u;
    d->home_slots = params->home_slots;
    d->barrier_only = params->barrier_only;
    d->barrier_links_mode = params->barrier_links;
    d->freed_hint = ~0ull; /* a word nobody used is FREE(0): guessed right (glock.c) */
    d->calm_hint = ~0ull;
    pthread_mutex_init(&d->keys_lock, NULL);
    pthread_mutex_init(&d->combine_lock, NULL);
    pthread_mutex_init(&d->settle_lock, NULL);
    s = rdlm_global_hello(d, params);
    if (s == RDLM_OK) {
        s = rdlm_global_open_transport(d, params);
    }
    if (s == RDLM_OK) {
        /* Collective; the key exchange after it makes sure every process set its
         * handlers before any sends a request. */
        s = rdlm_amq_setup(d, params->lock_am);
    }
    if (s == RDLM_OK) {
        s = rdlm_global_exchange_keys(d, params->bootstrap);
    }
    if (s == RDLM_OK) {
        d->qkeys = calloc(params->bootstrap->size, sizeof(*d->qkeys));
        d->homekeys = calloc(d->nodes.nodes, sizeof(*d->homekeys));
        s = d->qkeys && d->homekeys ? RDLM_OK : RDLM_ERR_NO_MEMORY;
    }
    if (s != RDLM_OK) {
        rdlm_error("dist: creating the distributed context failed: %s", rdlm_status_str(s));
        rdlm_global_destroy(d);
        return s;
    }
    rdlm_info("dist: rank %u/%u node %u/%u (local %u/%u) over %s, epoch %u, packed keys "
              "%zu bytes per rank",
              d->rank, params->bootstrap->size, d->nodes.node, d->nodes.nodes,
              d->nodes.local_rank, d->nodes.local_size, d->caps.backend, d->epoch,
              2 * (d->blob_len + 8));
    *dist_p = d;
    return RDLM_OK;
}

void rdlm_global_set_epoch(rdlm_global_t *d, uint32_t epoch)
{
    rdlm_debug("dist: rank %u: token epoch %u (was %u)", d->rank, epoch, d->epoch);
    d->epoch = epoch;
}

void rdlm_global_set_recovery(rdlm_global_t *d, const rdlm_global_recovery_t *rec)
{
    if (d->slot_bytes != RDLM_GLOBAL_SLOT_BYTES_HOLDER) {
        rdlm_warn("dist: no lock recovery: rank 0 created the context without holder "
                  "words (no lease configured there)");
        return;
    }
    d->recovery = *rec;
}

unsigned rdlm_global_progress(rdlm_global_t *d)
{
    unsigned n = rdlm_tl_progress(d->tl);

    rdlm_amq_flush(d);
    return n;
}

int rdlm_global_progress_idle(void *dist)
{
    return (int)rdlm_global_progress(dist);
}

void rdlm_global_pause(rdlm_global_t *d, unsigned *spins)
{
    rdlm_global_progress(d); /* the progress thread stands back meanwhile */
    if (*spins < RDLM_GLOBAL_SPINS) {
        (*spins)++;
        rdlm_cpu_relax();
    } else if (*spins < 2 * RDLM_GLOBAL_SPINS) {
        (*spins)++;
        sched_yield();
    } else {
        struct timespec ts = {0, 20000};

        nanosleep(&ts, NULL);
    }
}

void rdlm_global_quiesce(rdlm_global_t *d)
{
    uint64_t until = rdlm_clock_now_ns() + RDLM_GLOBAL_DRAIN_NS;

    rdlm_store(&d->closing, 1, RDLM_SEQ_CST);
    if (d->local != NULL) {
        rdlm_store(&d->local->closing, 1, RDLM_SEQ_CST);
    }
    while (rdlm_load(&d->active, RDLM_SEQ_CST) != 0 && rdlm_clock_now_ns() < until) {
        if (d->tl != NULL) {
            rdlm_global_progress(d);
        }
        sched_yield();
    }
    if (rdlm_load(&d->active, RDLM_ACQUIRE) != 0) {
        rdlm_warn("dist: %u calls still running after 10 s at destroy",
                  rdlm_load(&d->active, RDLM_ACQUIRE));
    }
    rdlm_glock_finish(d, 1);
}

void rdlm_global_destroy(rdlm_global_t *d)
{
    if (d == NULL) {
        return;
    }
    if (d->tl != NULL && !d->left) {
        rdlm_glock_finish(d, 1); /* releases made after quiesce (held at destroy) */
    }
    if (d->tl != NULL && d->procs != NULL && !d->left) {
        rdlm_global_goodbye(d);
    }
    rdlm_tl_destroy(d->tl); /* collective (or not, after a death); releases everything */
    rdlm_links_close(d->links);
    rdlm_amq_free(d);
    rdlm_nodes_fini(&d->nodes);
    pthread_mutex_destroy(&d->keys_lock);
    pthread_mutex_destroy(&d->combine_lock);
    pthread_mutex_destroy(&d->settle_lock);
    free(d->blobs);
    free(d->qkeys);
    free(d->homekeys);
    free(d->procs);
    free(d);
}
