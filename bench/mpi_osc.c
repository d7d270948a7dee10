/* See mpi_osc.h. */
#include "mpi_osc.h"

#include <mpi.h>
#include <stdlib.h>

enum rdlm_bench_mpi_osc rdlm_bench_mpi_osc_choose(const char **osc_p)
{
#ifdef OMPI_MAJOR_VERSION
    const char *mine = getenv("OMPI_MCA_osc");

    if (mine != NULL) {
        *osc_p = mine;
        return RDLM_BENCH_OSC_USER;
    }
    if (setenv("OMPI_MCA_osc", RDLM_BENCH_MPI_OSC_DEFAULT, 0) != 0) {
        *osc_p = "default";
        return RDLM_BENCH_OSC_USER;
    }
    *osc_p = RDLM_BENCH_MPI_OSC_DEFAULT;
    return RDLM_BENCH_OSC_CHOSEN;
#else
    *osc_p = "default";
    return RDLM_BENCH_OSC_NOT_OMPI;
#endif
}
