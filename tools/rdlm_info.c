/*
 * rdlm_info: what this build of rdlm is and what it would do here — version, build
 * options, transports, node topology, the effective RDLM_* configuration and the
 * segment size it implies. Exit 0, or 2 if the configuration is invalid.
 */
#include <stdio.h>
#include <string.h>

#include <rdlm.h>

#include "config.h"
#include "layout.h"
#include "segment.h"
#include "topo.h"

static void rdlm_info_usage(FILE *out)
{
    fputs("usage: rdlm_info [-h]\n"
          "Print rdlm's version, build options, transports, node topology and the\n"
          "effective configuration (RDLM_* environment variables).\n",
          out);
}

int main(int argc, char **argv)
{
    rdlm_config_t cfg;
    rdlm_topo_t topo;

    if (argc > 1) {
        int help = strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0;
        rdlm_info_usage(help ? stdout : stderr);
        return help ? 0 : 2;
    }
    printf("rdlm %s\n", rdlm_get_version());
    printf("build options:\n  %s\n", RDLM_BUILD_OPTIONS);
    printf("transports:\n");
    printf("  shm   usable  on-node, CPU atomics on the shared segment (atomic domain: "
           "CPU)\n");
    printf("topology:\n");
    if (rdlm_topo_discover(&topo) == RDLM_OK) {
        rdlm_topo_print(&topo, stdout);
    } else {
        printf("  unavailable\n");
    }
    printf("configuration:\n");
    if (rdlm_config_load(&cfg) != RDLM_OK) {
        printf("  invalid (see the error above)\n");
        return 2;
    }
    rdlm_config_print(&cfg, stdout);
    printf("segment:\n");
    printf("  name       : /dev/shm/rdlm-<uid>-<job>, mode 0600\n");
    printf("  bytes      : %llu for %u objects and %u process slots\n",
           (unsigned long long)rdlm_segment_bytes(cfg.capacity, cfg.max_procs),
           cfg.capacity, cfg.max_procs);
    printf("  per object : %d B entry + %d B name\n", RDLM_CACHE_LINE, RDLM_NAME_BYTES);
    return 0;
}
