/*
 * The MPI bootstrap: the out-of-band collectives of bootstrap.h (allgather, barrier)
 * over a private duplicate of an MPI communicator, for transports opened inside an MPI
 * job. It calls only PMPI_* (never MPI_*), so it does not recurse into rdlm's own
 * MPI_Barrier replacement or into a profiler's wrappers, and profilers do not
 * attribute rdlm's wire-up traffic to the application.
 *
 * Progress: every collective is non-blocking underneath (PMPI_Iallgather,
 * PMPI_Ibarrier) and completed by a PMPI_Test loop that calls the caller's idle
 * callback between tests, so the caller's transport keeps progressing while it waits
 * (over UCX/TCP a peer's emulated atomics on our memory complete only then). The wait
 * is bounded: past the timeout the collective returns RDLM_ERR_TIMEOUT with a log line
 * naming the collective, never hangs.
 *
 * Internal to the library: not installed, not exported.
 */
#ifndef RDLM_MPI_BOOTSTRAP_MPI_H
#define RDLM_MPI_BOOTSTRAP_MPI_H

#include <stdint.h>

#include <mpi.h>

#include <rdlm/status.h>

#include "bootstrap.h"

/** Default bound of every collective (ms). */
#define RDLM_MPI_BOOT_DEFAULT_TIMEOUT_MS 30000u

/**
 * Fill *bs_p with a bootstrap over a PMPI_Comm_dup of comm: rank and size are this
 * process's in comm, arg is the bootstrap's private state. Collective over comm
 * (PMPI_Comm_dup), blocking, not bounded by the timeout (it is MPI's own collective).
 * MPI must be initialised and not finalised (RDLM_ERR_INVALID_ARG otherwise); the
 * thread calling this and the collectives must be allowed to call MPI by the thread
 * level the job initialised with. The duplicate's error handler is
 * MPI_ERRORS_RETURN, so MPI errors come back as statuses (logged once), not aborts.
 * Errors: RDLM_ERR_INVALID_ARG (NULL bs_p, MPI_COMM_NULL, MPI not initialised),
 * RDLM_ERR_NO_MEMORY, or the mapped MPI error. *bs_p is written only on success.
 *
 * The collectives of *bs_p (see bootstrap.h for their contracts) are blocking, not
 * thread-safe (one thread at a time per bootstrap, like MPI collectives on one
 * communicator), and bounded by the timeout (RDLM_ERR_TIMEOUT, logged with the
 * collective's name). After a timeout the bootstrap is out of step with its peers (MPI
 * cannot cancel a collective): every later collective fails at once with
 * RDLM_ERR_MISMATCH. allgather's len must be at most INT_MAX (RDLM_ERR_INVALID_ARG).
 */
rdlm_status_t rdlm_mpi_bootstrap_init(MPI_Comm comm, rdlm_tl_bootstrap_t *bs_p);

/**
 * Bound every later collective of bs (filled by rdlm_mpi_bootstrap_init) by
 * timeout_ms (0: the default). Not collective; call it on every rank with the same
 * value. RDLM_ERR_INVALID_ARG if bs is not an MPI bootstrap.
 */
rdlm_status_t rdlm_mpi_bootstrap_set_timeout(rdlm_tl_bootstrap_t *bs, uint32_t timeout_ms);

/**
 * Free the duplicate communicator (PMPI_Comm_free: collective over comm, call it on
 * every rank) and the state, and clear *bs. Call it after the transport that used bs
 * was destroyed and before MPI_Finalize. If a collective timed out and its request is
 * still incomplete after a bounded wait, the communicator and request are leaked with
 * a warning rather than freed under MPI's feet. bs == NULL or an already cleared
 * struct is a no-op.
 */
void rdlm_mpi_bootstrap_fini(rdlm_tl_bootstrap_t *bs);

#endif
