/* Node discovery (see nodes.h). */
#include "nodes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

/* host_of[r]: index of the first rank with r's key (the host's lowest rank). */
static void rdlm_nodes_hosts(const char *keys, uint32_t size, uint32_t *host_of)
{
    for (uint32_t r = 0; r < size; r++) {
        host_of[r] = r;
        for (uint32_t q = 0; q < r; q++) {
            if (memcmp(keys + (size_t)q * RDLM_HOSTKEY_LEN, keys + (size_t)r * RDLM_HOSTKEY_LEN,
                       RDLM_HOSTKEY_LEN) == 0) {
                host_of[r] = host_of[q];
                break;
            }
        }
    }
}

rdlm_status_t rdlm_nodes_compute(const char *keys, uint32_t size, uint32_t rank,
                                 uint32_t virtual_nodes, rdlm_nodes_t *nodes_p)
{
    uint32_t *host_of, *local_rank, *host_size;
    rdlm_nodes_t n = {.size = size};

    if (keys == NULL || nodes_p == NULL || size == 0 || rank >= size || virtual_nodes == 0) {
        rdlm_error("nodes: invalid argument (size %u rank %u virtual nodes %u)", size, rank,
                   virtual_nodes);
        return RDLM_ERR_INVALID_ARG;
    }
    host_of = calloc(size, sizeof(*host_of));
    local_rank = calloc(size, sizeof(*local_rank));
    host_size = calloc(size, sizeof(*host_size));
    n.node_of = calloc(size, sizeof(*n.node_of));
    n.leader_of = calloc(size, sizeof(*n.leader_of));
    if (!host_of || !local_rank || !host_size || !n.node_of || !n.leader_of) {
        free(host_of);
        free(local_rank);
        free(host_size);
        rdlm_nodes_fini(&n);
        return RDLM_ERR_NO_MEMORY;
    }
    rdlm_nodes_hosts(keys, size, host_of);
    for (uint32_t r = 0; r < size; r++) {
        local_rank[r] = host_size[host_of[r]]++;
    }
    /* Ranks in order: a rank opens a new node when it is the first of its host's
     * virtual node (ranks of one host are in increasing local rank). */
    for (uint32_t r = 0; r < size; r++) {
        uint32_t hs = host_size[host_of[r]];
        uint32_t k = virtual_nodes < hs ? virtual_nodes : hs;
        uint32_t v = (uint32_t)((uint64_t)local_rank[r] * k / hs);
        uint32_t first = (uint32_t)(((uint64_t)v * hs + k - 1) / k); /* first local rank of v */

        if (local_rank[r] == first) {
            n.leader_of[n.nodes] = r;
            n.node_of[r] = n.nodes++;
        } else {
            /* the leader of r's virtual node came earlier: find it */
            for (uint32_t q = 0; q < r; q++) {
                if (host_of[q] == host_of[r] && local_rank[q] == first) {
                    n.node_of[r] = n.node_of[q];
                    break;
                }
            }
        }
    }
    n.node = n.node_of[rank];
    for (uint32_t r = 0; r < size; r++) {
        if (n.node_of[r] == n.node) {
            if (r < rank) {
                n.local_rank++;
            }
            n.local_size++;
        }
    }
    free(host_of);
    free(local_rank);
    free(host_size);
    *nodes_p = n;
    return RDLM_OK;
}

void rdlm_nodes_fini(rdlm_nodes_t *nodes)
{
    free(nodes->node_of);
    free(nodes->leader_of);
    nodes->node_of = NULL;
    nodes->leader_of = NULL;
}

void rdlm_nodes_hostkey(char key[RDLM_HOSTKEY_LEN])
{
    char host[32] = "", boot[40] = "";
    struct stat st = {0};
    FILE *f;

    gethostname(host, sizeof(host) - 1);
    f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f != NULL) {
        if (fgets(boot, sizeof(boot), f) == NULL) {
            boot[0] = '\0';
        }
        fclose(f);
        boot[strcspn(boot, "\n")] = '\0';
    }
    stat("/proc/self/ns/net", &st);
    memset(key, 0, RDLM_HOSTKEY_LEN);
    snprintf(key, RDLM_HOSTKEY_LEN, "%.20s/%.24s/%lx", host, boot,
             (unsigned long)st.st_ino);
}
