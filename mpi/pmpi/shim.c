/*
 * librdlm_pmpi.so: MPI_Barrier replaced by the rdlm collective barrier, for unmodified
 * MPI programs. Link it before libmpi (mpicc app.c -lrdlm_pmpi) or preload it
 * (mpirun -x LD_PRELOAD=librdlm_pmpi.so). docs/barrier-replacement.md.
 *
 *   MPI_Barrier and the Fortran bindings (mpi_barrier_, mpi_barrier__, mpi_barrier,
 *   MPI_BARRIER, mpi_barrier_f08_: Open MPI's own Fortran bindings call
 *   PMPI_Barrier directly and would bypass a C-only replacement)
 *     -> rdlm_pmpi_barrier (choose.c): per communicator, rdlm_mpi_barrier (a
 *        distributed context cached on the communicator, created at its first
 *        barrier) or PMPI_Barrier, whichever RDLM_PMPI_BARRIER says (auto: the
 *        faster, timed at the communicator's first barrier); PMPI_Barrier for
 *        intercommunicators, communicators of one process, MPI_COMM_NULL, and if
 *        rdlm fails (logged once)
 *
 * Only PMPI_* is called here and in librdlm, so there is no recursion.
 */
#include <mpi.h>
#include <stddef.h>

#include "choose.h"

#define RDLM_PMPI_EXPORT __attribute__((visibility("default")))

RDLM_PMPI_EXPORT int MPI_Barrier(MPI_Comm comm)
{
    return rdlm_pmpi_barrier(comm);
}

/* Fortran: the communicator handle and the optional error argument by reference.
 * The names compilers use for MPI_BARRIER (declared here: no header has them). */
void mpi_barrier_(MPI_Fint *comm, MPI_Fint *ierr);
void mpi_barrier__(MPI_Fint *comm, MPI_Fint *ierr);
void mpi_barrier(MPI_Fint *comm, MPI_Fint *ierr);
void MPI_BARRIER(MPI_Fint *comm, MPI_Fint *ierr);
void mpi_barrier_f08_(MPI_Fint *comm, MPI_Fint *ierr);

static void rdlm_pmpi_barrier_f(MPI_Fint *comm, MPI_Fint *ierr)
{
    int rc = MPI_Barrier(PMPI_Comm_f2c(*comm));

    if (ierr != NULL) {
        *ierr = (MPI_Fint)rc;
    }
}

RDLM_PMPI_EXPORT void mpi_barrier_(MPI_Fint *comm, MPI_Fint *ierr)
{
    rdlm_pmpi_barrier_f(comm, ierr);
}

RDLM_PMPI_EXPORT void mpi_barrier__(MPI_Fint *comm, MPI_Fint *ierr)
{
    rdlm_pmpi_barrier_f(comm, ierr);
}

RDLM_PMPI_EXPORT void mpi_barrier(MPI_Fint *comm, MPI_Fint *ierr)
{
    rdlm_pmpi_barrier_f(comm, ierr);
}

RDLM_PMPI_EXPORT void MPI_BARRIER(MPI_Fint *comm, MPI_Fint *ierr)
{
    rdlm_pmpi_barrier_f(comm, ierr);
}

/* mpi_f08: TYPE(MPI_Comm) is a derived type holding the Fortran handle (MPI_VAL),
 * passed by reference; ierror is OPTIONAL (NULL when absent). */
RDLM_PMPI_EXPORT void mpi_barrier_f08_(MPI_Fint *comm, MPI_Fint *ierr)
{
    rdlm_pmpi_barrier_f(comm, ierr);
}
