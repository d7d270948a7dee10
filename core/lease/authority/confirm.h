/*
 * Leadership confirmation for renewals (confirm.c): a leader answers a RENEW only once
 * a majority of the replicas, counting itself, was still in its term after the RENEW
 * arrived.
 *
 * Why
 *   A RENEW writes no log entry (one round trip, no disk write), so nothing in Raft
 *   stops a leader that was cut off from granting it. libraft 0.15 notices the loss of
 *   its majority only once a window of one election timeout passes without answers,
 *   so a deposed leader used to grant renewals for up to about 2 x (ET + HB) after the
 *   cut (safe then only through a grace the new leader added). With confirmation it
 *   grants none whose request reached it after the cut.
 *
 * Argument
 *   A round r starts after every ask that returned r. In it, each other replica is
 *   sent a STATUS request (its client port, conn.h); its reply carries its current
 *   term. A reply with the asker's term T, to a request of round r, says that replica
 *   was in term T at some moment after round r started. Terms only grow, so it had
 *   not voted in any later term before that moment. A leader of a later term needs
 *   the votes of a majority, which shares a replica with the confirming majority: no
 *   later leader was elected before the RENEWs of round r arrived, and any later one
 *   re-arms every session with a full TTL after that (replica.h).
 *
 * Divergence
 *   The same STATUS asks for the other replica's chain at this one's newest mark, and
 *   the answer is checked against this one's (witness.h): replicas that applied
 *   different entries are found by the leader, which then fails closed.
 *
 * Cost
 *   One round trip from the leader to the fastest majority of the other replicas, on
 *   top of the client's round trip to the leader. RENEWs that arrive while a round is
 *   in flight share the next round. No disk write. With one replica there is nothing
 *   to confirm: the round is confirmed at once.
 *
 * Threads
 *   One thread per replica does the rounds with blocking, deadline-bounded sockets
 *   (conn.h) and hands results to the loop through a uv_async_t. A round fails when
 *   no majority answered in timeout_ms; a replica that does not accept connections is
 *   tried again once per timeout_ms, for at most a quarter of it per attempt.
 */
#ifndef RDLM_LEASE_CONFIRM_H
#define RDLM_LEASE_CONFIRM_H

#include <stdint.h>
#include <uv.h>

#include <rdlm/status.h>

#include "replica.h"

typedef struct rdlm_lease_confirm rdlm_lease_confirm_t;

/** Round `round` ended (on the loop thread): confirmed 1 if a majority was in the
 *  asked term, 0 if not (timeout, or a replica with a later term answered). Rounds end
 *  in order; when several ended between two loop iterations, only the last is
 *  reported (it was started after all the earlier ones). */
typedef void (*rdlm_lease_confirm_func_t)(void *arg, uint64_t round, int confirmed);

/**
 * Start confirming for replica self_id of peers (its own entry included). done is
 * called on loop's thread. Every STATUS a round sends also asks for the replica's
 * chain at this one's newest mark in witness, and checks the answer there (witness.h:
 * a divergence marks witness diverged; a diverged replica confirms no round).
 * RDLM_ERR_INVALID_ARG (timeout_ms 0, n_peers out of range, self_id not in peers),
 * RDLM_ERR_NO_MEMORY, RDLM_ERR_IO (thread); logged.
 */
rdlm_status_t rdlm_lease_confirm_start(uv_loop_t *loop, const rdlm_lease_peer_t *peers,
                                       unsigned n_peers, uint64_t self_id,
                                       unsigned timeout_ms, rdlm_lease_witness_t *witness,
                                       rdlm_lease_confirm_func_t done, void *arg,
                                       rdlm_lease_confirm_t **cf_p);

/** Ask for a round in term that starts after this call; returns its number (> 0).
 *  Loop thread only. */
uint64_t rdlm_lease_confirm_ask(rdlm_lease_confirm_t *cf, uint64_t term);

/** The client address of another replica whose last answer, within two timeouts,
 *  said that its data disk is full (STATUS answered RDLM_ERR_NO_SPACE), or NULL.
 *  Loop thread only. */
const char *rdlm_lease_confirm_full_peer(rdlm_lease_confirm_t *cf);

/** Stop: the thread ends (within about a quarter of timeout_ms), its sockets close, no
 *  more done calls; closed(closed_arg) once cf is freed, from the loop. */
void rdlm_lease_confirm_stop(rdlm_lease_confirm_t *cf, void (*closed)(void *),
                             void *closed_arg);

#endif
