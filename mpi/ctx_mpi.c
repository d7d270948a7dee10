/*
 * rdlm_mpi_ctx_create (rdlm/mpi.h): a distributed context over an MPI communicator.
 * Only PMPI_* is called (mpi/README.md).
 *
 * Lifetime: the glue (bootstrap + keyval) is owned by the context and freed by its
 * fini hook. If the program never destroys the context, the delete callback of an
 * attribute on MPI_COMM_SELF does it at MPI_Finalize (MPI runs those callbacks
 * first, while MPI is still fully usable, so the collective destroy can run):
 *
 *   rdlm_ctx_destroy (program)  -> fini: free bootstrap, delete attribute
 *                                  (callback sees `destroying`, does nothing), free
 *   MPI_Finalize                -> callback: rdlm_ctx_destroy -> fini: free bootstrap
 *                                  (attribute is being deleted by MPI); callback frees
 *
 * rdlm_mpi_barrier caches a context on the communicator with a second attribute; its
 * delete callback (at MPI_Comm_free) destroys the context the same way, and the
 * context's fini deletes whichever of the two attributes is not being deleted.
 */
#include <rdlm/mpi.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "atomics.h"
#include "bootstrap_mpi.h"
#include "clock.h"
#include "ctx_dist.h"
#include "log.h"
#include "nodes.h"

typedef struct rdlm_mpi_glue {
    rdlm_tl_bootstrap_t bs;
    int keyval;       /* MPI_COMM_SELF attribute (finalize hook) */
    int cache_keyval; /* rdlm_mpi_barrier's attribute on cache_comm, or INVALID */
    MPI_Comm cache_comm;
    int destroying;      /* fini ran: the callbacks must not destroy again */
    int in_callback;     /* an attribute deletion by MPI is destroying the context */
    int callback_keyval; /* ... the attribute of this keyval */
    rdlm_ctx_h ctx;
} rdlm_mpi_glue_t;

/* Delete callback of both attributes: destroy the context unless that is what is
 * deleting the attribute. */
static int rdlm_mpi_attr_delete_cb(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    rdlm_mpi_glue_t *g = attr;

    (void)extra;
    if (g->destroying) {
        return MPI_SUCCESS;
    }
    rdlm_info("rdlm_mpi: %s destroys an rdlm context",
              comm == MPI_COMM_SELF ? "MPI_Finalize" : "MPI_Comm_free");
    g->in_callback = 1;
    g->callback_keyval = keyval;
    rdlm_ctx_destroy(g->ctx);
    free(g);
    return MPI_SUCCESS;
}

/* While rdlm_mpi_barrier waits, MPI progresses, as in MPI's own barrier: another rank's
 * passive-target access to this process (MPI_Win_lock under MPICH, or Open MPI's osc
 * pt2pt) may need this process's MPI to answer before that rank reaches the barrier.
 * Without it an unmodified program under librdlm_pmpi.so hung there. PMPI_Iprobe
 * consumes nothing, and matches nothing rdlm sends. */
#define RDLM_MPI_IDLE_INTERVAL_NS 50000 /* at most one probe per 50 us of waiting */

static void rdlm_mpi_barrier_idle(void *arg)
{
    static __thread uint64_t next_ns;
    const rdlm_mpi_glue_t *g = arg;
    uint64_t now = rdlm_clock_now_ns();
    int flag;

    /* A probe per yield made the barrier up to 2x slower on a crowded host (4 ranks,
     * 2 cores, 2 virtual nodes: 25 us instead of 11-18); the peer's one-sided call
     * waits at most one interval longer. */
    if (now < next_ns) {
        return;
    }
    next_ns = now + RDLM_MPI_IDLE_INTERVAL_NS;
    /* on the barrier's communicator: MPICH's Iprobe on MPI_COMM_SELF progresses no
     * network endpoint */
    PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, g->cache_comm, &flag, MPI_STATUS_IGNORE);
}

/* rdlm_mpi_barrier's last communicator and its context, per thread. Valid while
 * rdlm_mpi_barrier_epoch has not moved: every context destroy moves it, so a freed
 * communicator whose handle MPI reuses is never taken for the old one. */
typedef struct rdlm_mpi_barrier_hint {
    MPI_Comm comm;
    rdlm_ctx_h ctx;
    uint32_t epoch; /* 0: empty */
} rdlm_mpi_barrier_hint_t;

static __thread rdlm_mpi_barrier_hint_t rdlm_mpi_barrier_hint;
static rdlm_atomic_u32_t rdlm_mpi_barrier_epoch = 1;

static void rdlm_mpi_glue_fini(void *arg)
{
    rdlm_mpi_glue_t *g = arg;

    rdlm_fetch_add(&rdlm_mpi_barrier_epoch, 1, RDLM_ACQ_REL);
    g->destroying = 1;
    rdlm_mpi_bootstrap_fini(&g->bs);
    if (g->keyval != MPI_KEYVAL_INVALID) {
        if (!g->in_callback || g->callback_keyval != g->keyval) {
            PMPI_Comm_delete_attr(MPI_COMM_SELF, g->keyval);
        }
        PMPI_Comm_free_keyval(&g->keyval);
    }
    if (g->cache_keyval != MPI_KEYVAL_INVALID &&
        (!g->in_callback || g->callback_keyval != g->cache_keyval)) {
        PMPI_Comm_delete_attr(g->cache_comm, g->cache_keyval);
    }
    if (!g->in_callback) {
        free(g);
    }
}

/* Host key from the shared-memory split: the comm rank of the node's lowest rank. */
static rdlm_status_t rdlm_mpi_hostkey(MPI_Comm comm, char *key, size_t len)
{
    MPI_Comm shared;
    int rank, leader;

    PMPI_Comm_rank(comm, &rank);
    if (PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared) !=
        MPI_SUCCESS) {
        rdlm_error("rdlm_mpi_ctx_create: MPI_Comm_split_type failed");
        return RDLM_ERR_IO;
    }
    PMPI_Allreduce(&rank, &leader, 1, MPI_INT, MPI_MIN, shared);
    PMPI_Comm_free(&shared);
    snprintf(key, len, "mpi-node-%d", leader);
    return RDLM_OK;
}

/* RDLM_ERR_INVALID_ARG (logged) unless MPI is initialised and not finalised: outside
 * that window the MPI calls that follow (keyvals, attributes, communicators) abort the
 * job. */
static rdlm_status_t rdlm_mpi_check_live(const char *func)
{
    int initialized = 0, finalized = 0;

    PMPI_Initialized(&initialized);
    PMPI_Finalized(&finalized);
    if (!initialized || finalized) {
        rdlm_error("%s: called %s", func,
                   finalized ? "after MPI_Finalize" : "before MPI_Init");
        return RDLM_ERR_INVALID_ARG;
    }
    return RDLM_OK;
}

/* Create a context over comm and its glue (see rdlm_mpi_ctx_create); MPI is live. */
static rdlm_status_t rdlm_mpi_glue_create(MPI_Comm comm, const rdlm_ctx_params_t *params,
                                          unsigned flags, rdlm_mpi_glue_t **g_p)
{
    char key[RDLM_HOSTKEY_LEN];
    rdlm_mpi_glue_t *g;
    rdlm_status_t s;
    int inter = 0, world_rank;

    if (comm == MPI_COMM_NULL ||
        (params != NULL && (params->field_mask & RDLM_CTX_FIELD_PEERS)) ||
        PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) {
        rdlm_error("rdlm_mpi: needs an intracommunicator and no RDLM_CTX_FIELD_PEERS");
        return RDLM_ERR_INVALID_ARG;
    }
    s = rdlm_mpi_hostkey(comm, key, sizeof(key));
    if (s != RDLM_OK) {
        return s;
    }
    PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    rdlm_log_set_rank(world_rank); /* lines show the job's rank, whatever comm is */
    g = calloc(1, sizeof(*g));
    if (g == NULL) {
        return RDLM_ERR_NO_MEMORY;
    }
    g->keyval = MPI_KEYVAL_INVALID;
    g->cache_keyval = MPI_KEYVAL_INVALID;
    s = rdlm_mpi_bootstrap_init(comm, &g->bs);
    if (s != RDLM_OK) {
        free(g);
        return s;
    }
    s = rdlm_ctx_create_dist(params, &g->bs, key, flags, rdlm_mpi_glue_fini, g, &g->ctx);
    if (s != RDLM_OK) {
        return s; /* the fini hook freed g */
    }
    if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, rdlm_mpi_attr_delete_cb, &g->keyval,
                                NULL) != MPI_SUCCESS ||
        PMPI_Comm_set_attr(MPI_COMM_SELF, g->keyval, g) != MPI_SUCCESS) {
        rdlm_warn("rdlm_mpi: no MPI_Finalize hook; destroy the context before "
                  "MPI_Finalize");
    }
    *g_p = g;
    return RDLM_OK;
}

rdlm_status_t rdlm_mpi_ctx_create(MPI_Comm comm, const rdlm_ctx_params_t *params,
                                  rdlm_ctx_h *ctx_p)
{
    rdlm_mpi_glue_t *g;
    rdlm_status_t s;

    if (ctx_p == NULL) {
        rdlm_error("rdlm_mpi_ctx_create: NULL ctx_p");
        return RDLM_ERR_INVALID_ARG;
    }
    s = rdlm_mpi_check_live(__func__);
    if (s != RDLM_OK) {
        return s;
    }
    s = rdlm_mpi_glue_create(comm, params, 0, &g);
    if (s == RDLM_OK) {
        *ctx_p = g->ctx;
    }
    return s;
}

/* The keyval of rdlm_mpi_barrier's cache, created once per process. */
static int rdlm_mpi_barrier_keyval = MPI_KEYVAL_INVALID;
static pthread_mutex_t rdlm_mpi_barrier_lock = PTHREAD_MUTEX_INITIALIZER;

/* The context cached on comm, created (collectively) on first use. */
static rdlm_status_t rdlm_mpi_barrier_ctx(MPI_Comm comm, rdlm_ctx_h *ctx_p)
{
    rdlm_mpi_glue_t *g = NULL;
    rdlm_status_t s = RDLM_OK;
    int found = 0;

    pthread_mutex_lock(&rdlm_mpi_barrier_lock);
    if (rdlm_mpi_barrier_keyval == MPI_KEYVAL_INVALID &&
        PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, rdlm_mpi_attr_delete_cb,
                                &rdlm_mpi_barrier_keyval, NULL) != MPI_SUCCESS) {
        s = RDLM_ERR_IO;
    }
    pthread_mutex_unlock(&rdlm_mpi_barrier_lock);
    if (s != RDLM_OK) {
        rdlm_error("rdlm_mpi_barrier: MPI_Comm_create_keyval failed");
        return s;
    }
    PMPI_Comm_get_attr(comm, rdlm_mpi_barrier_keyval, &g, &found);
    if (!found) {
        /* a barrier needs no lease, and must not start an authority per communicator;
         * it progresses by itself while it waits, and lets MPI progress */
        s = rdlm_mpi_glue_create(comm, NULL,
                                 RDLM_CTX_DIST_NO_LEASE | RDLM_CTX_DIST_BARRIER_ONLY, &g);
        if (s != RDLM_OK) {
            return s;
        }
        g->cache_comm = comm;
        g->cache_keyval = rdlm_mpi_barrier_keyval;
        (void)rdlm_ctx_set_barrier_idle(g->ctx, rdlm_mpi_barrier_idle, g); /* dist ctx */
        if (PMPI_Comm_set_attr(comm, rdlm_mpi_barrier_keyval, g) != MPI_SUCCESS) {
            rdlm_error("rdlm_mpi_barrier: MPI_Comm_set_attr failed");
            g->cache_keyval = MPI_KEYVAL_INVALID;
            rdlm_ctx_destroy(g->ctx);
            return RDLM_ERR_IO;
        }
    }
    *ctx_p = g->ctx;
    return RDLM_OK;
}

rdlm_status_t rdlm_mpi_barrier(MPI_Comm comm)
{
    rdlm_mpi_barrier_hint_t *h = &rdlm_mpi_barrier_hint;
    uint32_t epoch = rdlm_load(&rdlm_mpi_barrier_epoch, RDLM_ACQUIRE);
    rdlm_ctx_h ctx;
    rdlm_status_t s;

    /* The communicator's context is alive, so MPI is too: no further check. */
    if (h->epoch == epoch && h->comm == comm) {
        return rdlm_ctx_barrier(h->ctx);
    }
    s = rdlm_mpi_check_live(__func__);
    if (s == RDLM_OK && comm == MPI_COMM_NULL) {
        rdlm_error("rdlm_mpi_barrier: MPI_COMM_NULL");
        s = RDLM_ERR_INVALID_ARG; /* MPI's attribute calls would abort the job */
    }
    if (s == RDLM_OK) {
        s = rdlm_mpi_barrier_ctx(comm, &ctx);
    }
    if (s != RDLM_OK) {
        return s;
    }
    *h = (rdlm_mpi_barrier_hint_t){.comm = comm, .ctx = ctx, .epoch = epoch};
    return rdlm_ctx_barrier(ctx);
}
