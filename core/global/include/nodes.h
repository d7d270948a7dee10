/*
 * Node discovery: which processes of a job share a node. Every process contributes a
 * host key (processes with equal keys run on one host); each host's processes are
 * then split, in rank order, into up to K virtual nodes (RDLM_VIRTUAL_NODES) so that
 * the cross-node path runs on one machine. Pure computation over the allgathered keys.
 */
#ifndef RDLM_GLOBAL_NODES_H
#define RDLM_GLOBAL_NODES_H

#include <stdint.h>

#include <rdlm/status.h>

/** Bytes of a host key (NUL-padded). */
#define RDLM_HOSTKEY_LEN 64

typedef struct rdlm_nodes {
    uint32_t size;       /* processes */
    uint32_t nodes;      /* nodes, virtual ones included */
    uint32_t *node_of;   /* [size]: node of each rank */
    uint32_t *leader_of; /* [nodes]: lowest rank of each node (its home process) */
    uint32_t node;       /* this process's node */
    uint32_t local_rank; /* this process among its node's, in rank order */
    uint32_t local_size; /* processes on its node */
} rdlm_nodes_t;

/**
 * Fill *nodes_p from keys (size blocks of RDLM_HOSTKEY_LEN bytes, rank r's at
 * r * RDLM_HOSTKEY_LEN) for process rank, splitting each host into
 * min(virtual_nodes, processes on the host) nodes of consecutive local ranks. Nodes
 * are numbered in order of their lowest rank. virtual_nodes >= 1, rank < size
 * (RDLM_ERR_INVALID_ARG). RDLM_ERR_NO_MEMORY. Free with rdlm_nodes_fini.
 */
rdlm_status_t rdlm_nodes_compute(const char *keys, uint32_t size, uint32_t rank,
                                 uint32_t virtual_nodes, rdlm_nodes_t *nodes_p);

void rdlm_nodes_fini(rdlm_nodes_t *nodes);

/** This process's host key: hostname, boot id and network namespace (processes in
 *  different network namespaces count as different hosts). Never fails: parts that
 *  cannot be read are left out. */
void rdlm_nodes_hostkey(char key[RDLM_HOSTKEY_LEN]);

#endif
