/* rdlm_mpi_ctx_create and rdlm_mpi_barrier for Fortran (ctx_mpi_f.c); internal to
 * librdlm_fortran.so. */
#ifndef RDLM_CTX_MPI_F_H
#define RDLM_CTX_MPI_F_H

#include <rdlm/mpi.h>

/** rdlm_mpi_ctx_create (rdlm/mpi.h) over the communicator whose Fortran handle is comm
 *  (MPI_COMM_NULL's gives RDLM_ERR_INVALID_ARG); the same contract, collective over
 *  comm. */
rdlm_status_t rdlm_mpi_ctx_create_f(MPI_Fint comm, const rdlm_ctx_params_t *params,
                                    rdlm_ctx_h *ctx_p);

/** rdlm_mpi_barrier (rdlm/mpi.h) over the communicator whose Fortran handle is comm;
 *  the same contract. */
rdlm_status_t rdlm_mpi_barrier_f(MPI_Fint comm);

#endif
