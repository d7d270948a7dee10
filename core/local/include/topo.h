/* Node topology from hwloc: the cohort levels (package, NUMA node, core). */
#ifndef RDLM_TOPO_H
#define RDLM_TOPO_H

#include <stdio.h>

#include <rdlm/status.h>

#include "shared.h"

typedef struct rdlm_topo {
    int packages;
    int numa_nodes;
    int cores;
    int pus;        /* hardware threads */
    int from_hwloc; /* 0: hwloc not built in, counts from sysconf */
} rdlm_topo_t;

/** Discover the node's topology (slow: loads hwloc's view of the machine). */
RDLM_SHARED rdlm_status_t rdlm_topo_discover(rdlm_topo_t *topo_p);

/** One line per level. */
RDLM_SHARED void rdlm_topo_print(const rdlm_topo_t *topo, FILE *out);

#endif
