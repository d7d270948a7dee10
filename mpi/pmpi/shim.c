/*
 * librdlm_pmpi.so: MPI_Barrier replaced by the rdlm collective barrier, for unmodified
 * MPI programs. Link it before libmpi (mpicc app.c -lrdlm_pmpi) or preload it
 * (mpirun -x LD_PRELOAD=librdlm_pmpi.so). docs/barrier-replacement.md.
 *
 *   MPI_Barrier and the Fortran bindings (mpi_barrier_, mpi_barrier__, mpi_barrier,
 *   MPI_BARRIER, mpi_barrier_f08_: Open MPI's own Fortran bindings call
 *   PMPI_Barrier directly and would bypass a C-only replacement)
 *     -> rdlm_mpi_barrier(comm): a distributed context cached on the communicator,
 *        created at its first barrier
 *     -> PMPI_Barrier when RDLM_PMPI_BARRIER=0, for intercommunicators,
 *        communicators of one process, MPI_COMM_NULL, and if rdlm fails (logged once)
 *
 * Only PMPI_* is called here and in librdlm, so there is no recursion.
 */
#include <mpi.h>

#include <rdlm.h>
#include <rdlm/mpi.h>

#include "config.h"
#include "log.h"

#define RDLM_PMPI_EXPORT __attribute__((visibility("default")))

/* RDLM_PMPI_BARRIER, read once (0 on a bad configuration, which is logged). */
static int rdlm_pmpi_enabled(void)
{
    static int enabled = -1;
    rdlm_config_t cfg;

    if (enabled < 0) {
        enabled = rdlm_config_load(&cfg) == RDLM_OK && cfg.pmpi_barrier;
        rdlm_info("librdlm_pmpi: MPI_Barrier is %s", enabled ? "rdlm's" : "MPI's");
    }
    return enabled;
}

RDLM_PMPI_EXPORT int MPI_Barrier(MPI_Comm comm)
{
    static int warned;
    int inter = 1, size = 1;
    rdlm_status_t s;

    if (!rdlm_pmpi_enabled() || comm == MPI_COMM_NULL ||
        PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter ||
        PMPI_Comm_size(comm, &size) != MPI_SUCCESS || size == 1) {
        return PMPI_Barrier(comm);
    }
    s = rdlm_mpi_barrier(comm);
    if (s == RDLM_OK) {
        return MPI_SUCCESS;
    }
    if (!warned) {
        warned = 1;
        rdlm_warn("librdlm_pmpi: rdlm barrier failed (%s); using PMPI_Barrier",
                  rdlm_status_name(s));
    }
    return PMPI_Barrier(comm);
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
