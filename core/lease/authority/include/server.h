/*
 * The client port of a lease-authority replica (server.c): libuv TCP, frames of
 * wire.h carrying commands of cmd.h, answered from the replica (replica.h).
 *
 * Connections
 *   One request at a time per connection, answered in order: reading stops from a
 *   complete frame until its reply is written. The header is checked before anything
 *   of the payload is read (into a fixed per-connection buffer: nothing is allocated
 *   per request). A bad header closes the connection; a sane header with a payload
 *   that does not decode (or an EXPIRE, which only a leader's timer submits) is
 *   answered RDLM_ERR_PROTOCOL. Either is logged at warn once per connection and
 *   changes nothing. At most max_connections are open, at most
 *   max_connections_per_peer of them from one IPv4 address. A new connection beyond
 *   either closes the connection idle for longest (no frame begun, nothing
 *   outstanding) of its address, or of any client, to make room; only when none is
 *   idle is it closed itself (logged). Connections from a replica's host (the IPv4
 *   addresses of the peers' Raft and client addresses: leadership confirmation,
 *   confirm.h, connects from there) do not count toward max_connections and are
 *   never closed for another address's, so a flood of client sockets cannot starve
 *   confirmation; max_connections_per_peer bounds them as any address. A frame must
 *   be complete frame_timeout_ms after its first byte, and a reply taken by the client within frame_timeout_ms; a connection with
 *   no frame begun and no request outstanding (a parked ACQUIRE is outstanding) is
 *   closed after idle_timeout_ms (logged at debug: the client reconnects for its next
 *   request). TCP keepalive reaps the connections of dead client hosts.
 *   Warn lines about clients (bad frames, timeouts, refusals) are limited daemon-wide
 *   to a few a second; the rest go to debug, and their number is reported at warn.
 *
 * Requests
 *   STATUS and HOMES: any replica answers (HOMES with a BLOB frame, the description
 *   of the lock home its rdlmd hosts, or a REPLY saying why there is none). STATUS
 *   needs no session (health checks, and the other replicas' confirmation rounds);
 *   asking no mark (token 0), its reply's token is the authority id credentials
 *   are bound to. HOMES under --auth munge needs a session the asker opened
 *   (session and nonce, checked against this replica's applied state): without one
 *   RDLM_ERR_AUTH, a session this replica has not applied yet RDLM_ERR_NOT_FOUND
 *   (ask again), an ended one RDLM_ERR_LEASE_EXPIRED. FATE (another session's: open, ended,
 * or not found / another namespace's) is answered by the leader from its applied state.
 * Every other op on a replica that is not the leader: RDLM_ERR_NOT_LEADER with the leader's
 * id and client address (if known). On a leader that is not ready yet (replica.h) the
 * request waits until it is. RENEW: the replica's timer, no log entry; answered once a
 * majority confirmed the leader's term after the RENEW arrived (confirm.h). Logged ops:
 * decoded, rewritten (below), checked with rdlm_lease_sm_check, and only then submitted;
 * the reply is the result of the applied entry. Every reply carries the replica's term and
 *   leader.
 *   OPEN: auth none: uid = gid = 0, namespace ""; auth munge: the credential is
 *   verified, bound to this authority_id and the OPEN's nonce (auth.h; RDLM_ERR_AUTH
 *   if missing, refused, foreign or for another nonce, RDLM_ERR_PROTOCOL if its
 *   binding is of another version; one warn line, limited as the others about
 *   clients), so re-attaching to a session (OPEN with its nonce) needs a fresh
 *   credential of the session's own uid and job, and the logged OPEN carries its
 *   uid, gid and the namespace "<uid>/<job>"; the credential itself is never logged.
 *   Verification (a round trip to munged) runs in libuv's thread pool, never on the
 *   loop: a slow or hung munged delays only the OPENs, not other clients, timers or
 *   Raft.
 *   ACQUIRE, RELEASE, CANCEL in a session with a namespace: the logged name is
 *   "<ns>/<name>" (RDLM_ERR_NAME_TOO_LONG past RDLM_LEASE_NAME_MAX).
 *
 * Queued ACQUIRE
 *   An ACQUIRE whose result is RDLM_INPROGRESS (or a retry of one still queued) parks
 *   on its connection for its timeout_ms. The grant (reported by the state machine
 *   while applying the RELEASE, CANCEL, CLOSE or EXPIRE that caused it) answers it:
 *   RDLM_OK with the token and the broken flag. When timeout_ms passes first, a CANCEL
 *   of (session, seq, name) is submitted and RDLM_ERR_TIMEOUT answered once it
 *   committed; a grant that lands in between is undone by that CANCEL, never
 *   answered. A connection closed while parked submits the CANCEL too. The session
 *   closed or expired: RDLM_ERR_LEASE_EXPIRED. Leadership lost: RDLM_ERR_NOT_LEADER
 *   (the wait stays queued in the state; the client retries the same seq at the new
 *   leader, which parks it again).
 */
#ifndef RDLM_LEASE_SERVER_H
#define RDLM_LEASE_SERVER_H

#include <uv.h>

#include "replica.h"

typedef enum rdlm_lease_auth_mode {
    RDLM_LEASE_AUTH_NONE, /**< no authentication, no namespaces */
    RDLM_LEASE_AUTH_MUNGE /**< MUNGE credential on OPEN (auth.h) */
} rdlm_lease_auth_mode_t;

/** Answers HOMES: the description of the lock home the daemon hosts
 *  (core/svc/include/home_server.h) in *blob_p (valid until the server is destroyed) and
 *  *len_p, or why there is none (RDLM_ERR_UNAVAILABLE until it serves). Called on the
 *  loop. */
typedef rdlm_status_t (*rdlm_lease_homes_func_t)(void *arg, const uint8_t **blob_p,
                                                 size_t *len_p);

typedef struct rdlm_lease_server_params {
    const char *client_addr; /**< "host:port" to listen on (a name: its address now) */
    rdlm_lease_auth_mode_t auth;
    uint64_t authority_id; /**< the id credentials are bound to, STATUS tells clients
                                (rdlm_lease_server_authority_id); > 0
                                with RDLM_LEASE_AUTH_MUNGE */
    unsigned max_connections;          /**< > 0; replicas' hosts not counted */
    unsigned max_connections_per_peer; /**< > 0; from one client IPv4 address */
    unsigned frame_timeout_ms;         /**< > 0; to complete a frame, to take a reply */
    unsigned idle_timeout_ms;          /**< > 0; no frame begun, nothing outstanding */
    rdlm_lease_homes_func_t homes;     /**< NULL: HOMES gets RDLM_ERR_UNSUPPORTED */
    void *homes_arg;
    int epoch_seed; /**< 1: the first EPOCH of a fresh state may raise the epoch to
                         the client's floor (the authority a job runs itself, seeded
                         with rank 0's host epoch); 0 (rdlmd): client floors are
                         ignored. Either way the floor is at least this leader's clock
                         epoch (rdlm_clock_epoch). */
} rdlm_lease_server_params_t;

typedef struct rdlm_lease_server rdlm_lease_server_t;

/** The authority's id that MUNGE credentials are bound to (auth.h): a hash of its
 *  members (id, Raft and client address, in id order), so every replica of one
 *  authority has the same and two authorities differ. Pure; never 0. */
uint64_t rdlm_lease_server_authority_id(const rdlm_lease_peer_t *peers, unsigned n);

/**
 * Listen on params->client_addr for clients of rep (the server installs the replica's
 * ops: call before the loop runs). RDLM_ERR_INVALID_ARG (address, limits, munge not
 * built), RDLM_ERR_IO (bind or listen refused), RDLM_ERR_NO_MEMORY; logged.
 */
rdlm_status_t rdlm_lease_server_start(uv_loop_t *loop, rdlm_lease_replica_t *rep,
                                      const rdlm_lease_server_params_t *params,
                                      rdlm_lease_server_t **srv_p);

/** Stop listening and close every connection (parked ACQUIREs are cancelled).
 *  Non-blocking; call before rdlm_lease_replica_stop. The loop returns once MUNGE
 *  verifications still running are done (their results are dropped). */
void rdlm_lease_server_stop(rdlm_lease_server_t *srv);

/** Free the server once the loop returned (every connection is gone by then). */
void rdlm_lease_server_destroy(rdlm_lease_server_t *srv);

#endif
