/**
 * @file
 * rdlm for MPI programs: a distributed context over an MPI communicator.
 *
 * Thread levels: the context may be created under any thread level; rdlm's own calls
 * into MPI (at create and destroy only) are made by the calling thread. The rdlm API
 * itself is thread-safe whatever the level; under MPI_THREAD_SINGLE/FUNNELED, create
 * and destroy must be called by the thread that may call MPI.
 *
 * These calls live in librdlm_mpi.so, apart from librdlm.so (which links no MPI): link
 * -lrdlm_mpi (pkg-config rdlm-mpi; CMake: find_package(rdlm COMPONENTS mpi), target
 * rdlm::mpi) with the MPI compiler wrapper. docs/mpi.md.
 */
#ifndef RDLM_MPI_H
#define RDLM_MPI_H

#include <mpi.h>

#include <rdlm.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Collective over comm: join every rank of comm into one distributed context.
 * Nodes come from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED), each split into
 * $RDLM_VIRTUAL_NODES virtual nodes (for tests on one machine); addresses are
 * exchanged with PMPI_Allgather (rdlm never calls MPI_* itself, only PMPI_*). The
 * context is destroyed at MPI_Finalize if the program did not destroy it (an
 * attribute on MPI_COMM_SELF), so create it after MPI_Init and before MPI_Finalize.
 * params may be NULL; RDLM_CTX_FIELD_PEERS is refused (RDLM_ERR_INVALID_ARG). The job
 * name is rank 0's. Errors: those of rdlm_ctx_create, RDLM_ERR_INVALID_ARG
 * (MPI_COMM_NULL, an intercommunicator; a call before MPI_Init or after MPI_Finalize,
 * found with PMPI_Initialized and PMPI_Finalized before any other MPI call, so the job
 * is not aborted), RDLM_ERR_TIMEOUT (a rank never joined), RDLM_ERR_UNSUPPORTED (no
 * usable transport). On error on any rank the others return an error too (no hang),
 * and *ctx_p is untouched: a rank whose configuration (RDLM_ERR_BAD_CONFIG) or lease
 * fails makes every rank return its status at once, with an error line naming it.
 */
RDLM_EXPORT rdlm_status_t rdlm_mpi_ctx_create(MPI_Comm comm, const rdlm_ctx_params_t *params,
                                              rdlm_ctx_h *ctx_p);

/**
 * Barrier over any intracommunicator with the rdlm collective barrier
 * (rdlm_ctx_barrier): collective over comm like MPI_Barrier. The first call on a
 * communicator creates a distributed context over it (collective, a few milliseconds)
 * and caches it on the communicator with an attribute; MPI_Comm_free (or
 * MPI_Finalize) destroys it. One thread at a time per communicator, as for MPI
 * collectives. Errors: those of rdlm_mpi_ctx_create (MPI_COMM_NULL and an
 * intercommunicator are RDLM_ERR_INVALID_ARG: use MPI_Barrier; so is a call before MPI_Init
 * or after MPI_Finalize, checked before any other MPI call), RDLM_ERR_IO if MPI refuses the
 * attribute.
 */
RDLM_EXPORT rdlm_status_t rdlm_mpi_barrier(MPI_Comm comm);

#ifdef __cplusplus
}
#endif
#endif
