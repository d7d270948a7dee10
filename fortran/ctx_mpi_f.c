/*
 * The calls of the Fortran module that cannot bind to C directly, those that take an
 * MPI communicator: a Fortran one is an integer handle (MPI_Fint; also type(MPI_Comm)'s
 * MPI_VAL), which C's MPI_Comm must be converted from (PMPI_Comm_f2c; rdlm calls only
 * PMPI_*, mpi/README.md). Internal to librdlm_fortran.so (hidden): only rdlm.F90 calls them.
 */
#include <rdlm/mpi.h>

#include "ctx_mpi_f.h"

/* The C communicator of Fortran handle comm. Before MPI_Init and after MPI_Finalize
 * PMPI_Comm_f2c aborts the job: MPI_COMM_NULL then, which the C call refuses with
 * RDLM_ERR_INVALID_ARG once its own check has logged why. */
static MPI_Comm rdlm_mpi_comm_f2c(MPI_Fint comm)
{
    int initialized = 0, finalized = 0;

    PMPI_Initialized(&initialized);
    PMPI_Finalized(&finalized);
    return initialized && !finalized ? PMPI_Comm_f2c(comm) : MPI_COMM_NULL;
}

rdlm_status_t rdlm_mpi_ctx_create_f(MPI_Fint comm, const rdlm_ctx_params_t *params,
                                    rdlm_ctx_h *ctx_p)
{
    return rdlm_mpi_ctx_create(rdlm_mpi_comm_f2c(comm), params, ctx_p);
}

rdlm_status_t rdlm_mpi_barrier_f(MPI_Fint comm)
{
    return rdlm_mpi_barrier(rdlm_mpi_comm_f2c(comm));
}
