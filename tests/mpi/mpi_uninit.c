/*
 * rdlm_mpi_barrier and rdlm_mpi_ctx_create outside MPI's lifetime (rdlm/mpi.h): called
 * before MPI_Init and after MPI_Finalize they return RDLM_ERR_INVALID_ARG (MPI not
 * initialised) instead of aborting the job, leave *ctx_p untouched, and in between a
 * barrier works, and both refuse MPI_COMM_NULL with RDLM_ERR_INVALID_ARG (the barrier
 * aborted the job in MPI_Comm_get_attr before). Run as a singleton (no mpirun) and under
 * mpirun. Prints PASS or FAILED lines; exit 0 iff every check passed.
 */
#include <stdint.h>
#include <stdio.h>

#include <mpi.h>
#include <rdlm/mpi.h>

static int g_failed;

static void expect(rdlm_status_t got, rdlm_status_t want, const char *what)
{
    if (got != want) {
        printf("FAILED: %s: got %s, want %s\n", what, rdlm_status_name(got),
               rdlm_status_name(want));
        g_failed = 1;
    }
}

/* Both calls refused while MPI is not usable; when says which side of its life. */
static void expect_refused(const char *when)
{
    rdlm_ctx_h sentinel = (rdlm_ctx_h)(uintptr_t)0x5eed, ctx = sentinel;
    char what[64];

    snprintf(what, sizeof(what), "rdlm_mpi_barrier %s", when);
    expect(rdlm_mpi_barrier(MPI_COMM_WORLD), RDLM_ERR_INVALID_ARG, what);
    snprintf(what, sizeof(what), "rdlm_mpi_ctx_create %s", when);
    expect(rdlm_mpi_ctx_create(MPI_COMM_WORLD, NULL, &ctx), RDLM_ERR_INVALID_ARG, what);
    if (ctx != sentinel) {
        printf("FAILED: rdlm_mpi_ctx_create %s set *ctx_p\n", when);
        g_failed = 1;
    }
}

int main(int argc, char **argv)
{
    expect_refused("before MPI_Init");
    MPI_Init(&argc, &argv);
    expect(rdlm_mpi_barrier(MPI_COMM_NULL), RDLM_ERR_INVALID_ARG,
           "rdlm_mpi_barrier(MPI_COMM_NULL)");
    {
        rdlm_ctx_h ctx = NULL;

        expect(rdlm_mpi_ctx_create(MPI_COMM_NULL, NULL, &ctx), RDLM_ERR_INVALID_ARG,
               "rdlm_mpi_ctx_create(MPI_COMM_NULL)");
    }
    expect(rdlm_mpi_barrier(MPI_COMM_WORLD), RDLM_OK, "rdlm_mpi_barrier");
    MPI_Finalize(); /* destroys the barrier's cached context */
    expect_refused("after MPI_Finalize");
    printf(g_failed ? "FAILED\n" : "PASS\n");
    return g_failed;
}
