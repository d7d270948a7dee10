/*
 * libraft's TCP transport, made safe for several replicas in one process (tcp.c).
 *
 * Why
 *   raft_uv_tcp 0.15 splits "host:port" with strtok(3) (uvIpParse) each time it
 *   listens or connects. strtok keeps its position in one static pointer per process,
 *   so two replicas whose loops run on different threads (an embedded authority beside
 *   another, or the tests' clusters) can parse each other's address: ThreadSanitizer
 *   reports it, and a connect can go to the wrong port. This wrapper makes every
 *   listen and connect of every transport made here hold one process-wide mutex while
 *   libraft parses; the rest of the transport is libraft's own.
 */
#ifndef RDLM_LEASE_TCP_H
#define RDLM_LEASE_TCP_H

#include <raft.h>
#include <raft/uv.h>

typedef struct rdlm_lease_tcp {
    struct raft_uv_transport uv; /* what raft_uv_init takes; first member */
    int (*listen)(struct raft_uv_transport *t, raft_uv_accept_cb cb);
    int (*connect)(struct raft_uv_transport *t, struct raft_uv_connect *req, raft_id id,
                   const char *address, raft_uv_connect_cb cb);
} rdlm_lease_tcp_t;

/* raft_uv_tcp_init on tcp->uv, then listen and connect serialized as above.
 * Returns libraft's code (0 on success). Release with rdlm_lease_tcp_close. */
int rdlm_lease_tcp_init(rdlm_lease_tcp_t *tcp, struct uv_loop_s *loop);

/* raft_uv_tcp_close on tcp->uv. */
void rdlm_lease_tcp_close(rdlm_lease_tcp_t *tcp);

#endif
