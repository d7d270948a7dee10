/* Node topology through hwloc (see topo.h). */
#include "topo.h"

#include <unistd.h>

#include "log.h"

#if RDLM_HAVE_HWLOC
#include <hwloc.h>

rdlm_status_t rdlm_topo_discover(rdlm_topo_t *topo_p)
{
    hwloc_topology_t t;
    rdlm_topo_t topo;

    if (hwloc_topology_init(&t) != 0) {
        rdlm_error("hwloc_topology_init failed");
        return RDLM_ERR_IO;
    }
    if (hwloc_topology_load(t) != 0) {
        rdlm_error("hwloc_topology_load failed");
        hwloc_topology_destroy(t);
        return RDLM_ERR_IO;
    }
    topo.packages = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE);
    topo.numa_nodes = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
    topo.cores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
    topo.pus = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
    topo.from_hwloc = 1;
    hwloc_topology_destroy(t);
    *topo_p = topo;
    return RDLM_OK;
}
#else
rdlm_status_t rdlm_topo_discover(rdlm_topo_t *topo_p)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);

    topo_p->packages = 1;
    topo_p->numa_nodes = 1;
    topo_p->cores = (int)n;
    topo_p->pus = (int)n;
    topo_p->from_hwloc = 0;
    return RDLM_OK;
}
#endif

void rdlm_topo_print(const rdlm_topo_t *topo, FILE *out)
{
    fprintf(out, "  source     : %s\n", topo->from_hwloc ? "hwloc" : "sysconf (no hwloc)");
    fprintf(out, "  packages   : %d\n", topo->packages);
    fprintf(out, "  numa nodes : %d\n", topo->numa_nodes);
    fprintf(out, "  cores      : %d\n", topo->cores);
    fprintf(out, "  hw threads : %d\n", topo->pus);
}
