/*
 * The entry point below the public context calls that creates a distributed context
 * over any bootstrap: rdlm_ctx_create (TCP rendezvous) and librdlm_mpi.so's
 * rdlm_mpi_ctx_create (MPI) both call it. Exported by librdlm.so for librdlm_mpi.so
 * (RDLM_SHARED), declared in no installed header.
 */
#ifndef RDLM_CTX_DIST_H
#define RDLM_CTX_DIST_H

#include <rdlm.h>

#include "bootstrap.h"
#include "shared.h"

/** Called once at rdlm_ctx_destroy after the distributed part is closed, to free
 *  what the creator of the bootstrap owns (the MPI glue, the TCP rendezvous). */
typedef void (*rdlm_ctx_fini_func_t)(void *arg);

/** rdlm_ctx_create_dist flags: no lease, no authority; only the barrier; this
 *  process's configuration is bad (see there). */
#define RDLM_CTX_DIST_NO_LEASE 1u
#define RDLM_CTX_DIST_BARRIER_ONLY 2u
#define RDLM_CTX_DIST_BAD_CONFIG 4u

/**
 * Create a distributed context over bootstrap (collective over it; see
 * rdlm_mpi_ctx_create and rdlm_ctx_create for the contracts). hostkey names the
 * process's host (processes with equal keys share a node; NULL: hostname, boot id and
 * network namespace). flags: RDLM_CTX_DIST_NO_LEASE makes a context that holds no
 * lease and starts no authority whatever RDLM_AUTHORITY / RDLM_JOB_AUTHORITY say
 * (rdlm_mpi_barrier's contexts); RDLM_CTX_DIST_BARRIER_ONLY, for a context that only
 * runs the collective barrier (rdlm_mpi_barrier's), starts no progress thread unless
 * RDLM_PROGRESS=thread: the barrier's leaders progress while they wait, and a thread
 * per process would take CPU from the program's own; RDLM_CTX_DIST_BAD_CONFIG, for a
 * process whose configuration is bad (logged), takes part in the create's first
 * collective, so that every process fails at once with RDLM_ERR_BAD_CONFIG, and returns
 * that. fini(fini_arg) runs at
 * rdlm_ctx_destroy after the transport is closed, and also here if creation fails
 * (so the caller frees the bootstrap in one place).
 */
RDLM_SHARED rdlm_status_t rdlm_ctx_create_dist(const rdlm_ctx_params_t *params,
                                               const rdlm_tl_bootstrap_t *bootstrap,
                                               const char *hostkey, unsigned flags,
                                               rdlm_ctx_fini_func_t fini, void *fini_arg,
                                               rdlm_ctx_h *ctx_p);

/**
 * Call idle(arg) in the collective barrier's waits of ctx once they stop spinning
 * (before each yield, after each sleep slice). Set once, before ctx's first barrier, by the
 * creator (librdlm_mpi.so lets MPI progress there, for MPI_Barrier's replacement).
 * RDLM_ERR_UNSUPPORTED for a node-only context.
 */
RDLM_SHARED rdlm_status_t rdlm_ctx_set_barrier_idle(rdlm_ctx_h ctx, void (*idle)(void *arg),
                                                    void *arg);

#endif
