/*
 * dead_peer_reported: what the transport does when a peer process dies or stops
 * answering (tl_dead_peer.c; run by tl_conformance --dead-peer VICTIM).
 */
#ifndef RDLM_TESTS_TL_DEAD_PEER_H
#define RDLM_TESTS_TL_DEAD_PEER_H

#include "tl_checks.h"

typedef struct tl_dead_peer_opts {
    unsigned victim;   /* the rank that dies; not 0 (rank 0 holds the bootstrap) */
    int stop;          /* the victim stops (SIGSTOP) instead of dying; rank 0 kills it
                          with SIGKILL at the end */
    unsigned bound_ms; /* a survivor must see RDLM_ERR_PEER_DEAD this soon after the
                          victim died or stopped */
} tl_dead_peer_opts_t;

/* One rank of the check, on c's open context (c->b, ctx, caps, rank, n, iters,
 * deadline, idle set); destroys the context. The victim never returns: it ends by
 * SIGKILL. A failure prints a FAIL line and calls c->die. */
void tl_dead_peer_run(tl_checks_t *c, const tl_dead_peer_opts_t *o);

#endif
