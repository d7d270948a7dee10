/*
 * What the library itself asks of a lease session beyond rdlm/lease.h (client.c).
 * Not part of the public API: core/api uses it for a context's token epoch.
 */
#ifndef RDLM_LEASE_CLIENT_INTERNAL_H
#define RDLM_LEASE_CLIENT_INTERNAL_H

#include <stdint.h>

#include <rdlm.h>
#include <rdlm/lease.h>

/**
 * rdlm_session_new_epoch asking for a floor: the server decides the floor it logs
 * (server.h, epoch_seed): rdlmd ignores the client's and commits
 * max(previous + 1, its leader's clock epoch); the authority a job runs itself honours
 * it for its first epoch only (rank 0's host epoch). Blocking; floor <= 2^24 - 1
 * (RDLM_ERR_INVALID_ARG otherwise); errors as rdlm_session_new_epoch.
 */
rdlm_status_t rdlm_lease_session_new_epoch_above(rdlm_session_h session, uint64_t floor,
                                                 uint64_t *epoch_p);

/**
 * Whether the authority has ended (closed, or expired by a committed decision) the
 * session `other` of the same namespace: 1 ended, 0 still open; RDLM_ERR_NOT_FOUND
 * (never opened, or another namespace's), or the errors of a request (no leader:
 * RDLM_ERR_UNAVAILABLE; this session's own lease lost: RDLM_ERR_LEASE_EXPIRED).
 * Blocking: one request to the leader, no log entry.
 */
int rdlm_lease_session_ended(rdlm_session_h session, uint64_t other);

/**
 * The id of the session's namespace at the authority (rdlm_hash_name of "uid/job" under
 * --auth munge, where the authority prefixes lock names with it), as its OPEN answer
 * said; 0 when names are not namespaced (--auth none) or session is NULL. Service-wide
 * locks on the homes (core/svc) mix it into their ids, so names are per job there too.
 */
uint64_t rdlm_lease_session_namespace(rdlm_session_h session);

/**
 * The nonce the session was opened with (0 if session is NULL). Requests of the
 * session outside this file carry it with the session id: HOMES under --auth munge
 * (core/svc) is answered only within a session the asker opened. Pure.
 */
uint64_t rdlm_lease_session_nonce(rdlm_session_h session);

/**
 * Wait out the session's lock delay (rdlm_session_params_t.lock_delay_ms; 0: returns
 * at once). An acquire that took a lock over from a holder whose lease ended calls it
 * before it returns RDLM_OWNER_DEAD, so a paused holder's writes still in flight land
 * before the new holder's. Blocking (a sleep); session NULL: no-op.
 */
void rdlm_lease_session_lock_delay(rdlm_session_h session);

/**
 * rdlm_session_check and rdlm_session_id for a session the library holds open (a
 * context's): without the public calls' look-up in the process's open sessions, a
 * mutex each, which a lease context's every operation would pay. NULL gives
 * RDLM_ERR_INVALID_ARG and 0, as there.
 */
rdlm_status_t rdlm_lease_session_valid(rdlm_session_h session);
uint64_t rdlm_lease_session_id(rdlm_session_h session);

#endif
