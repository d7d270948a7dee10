/**
 * @file
 * rdlm lease sessions: a client of the replicated lease authority (rdlmd, or the
 * replicas a job runs). Include <rdlm.h> first.
 *
 * Model
 *   A session is opened at the authority with a TTL. A small thread renews it with
 *   the leader (one round trip, no disk write at the authority); rdlm_session_renew
 *   sends the same renewal at once, when the caller wants. The session is valid
 *   until t_send + TTL * (1 - drift), t_send being the time the last successful
 *   renewal was sent; after that instant the client considers the lease lost, calls
 *   the lease-lost callback once, and every call on the session returns
 *   RDLM_ERR_LEASE_EXPIRED, forever: open a new session. The authority expires a
 *   session whose leader has not heard a renewal for TTL (a committed decision), and
 *   only then gives its locks to their next waiters.
 *
 * Closed handles
 *   A call through the handle of a closed session is refused without touching its
 *   memory: RDLM_ERR_BAD_HANDLE (0 from rdlm_session_id and rdlm_session_valid_until;
 *   rdlm_session_close does nothing), logged. The check goes by address, as for
 *   contexts (rdlm.h, "Stale handles"): a session opened later may reuse a closed
 *   one's memory, and a stale handle then names it, so do not keep handles past
 *   their close.
 *
 * A full disk at the authority
 *   Every call that writes to the authority's log (open, lock, unlock, new epoch)
 *   returns RDLM_ERR_NO_SPACE while a replica's data disk is full or read-only;
 *   renewals write nothing and go on, so sessions and the locks they hold stay valid.
 *   Retry later: the authority resumes by itself when space returns.
 *
 * Locks held through a session
 *   rdlm_session_lock is a lock kept by the authority itself (FIFO, fenced): safe for
 *   clients outside one MPI job (workflow tools, I/O services, several jobs). It costs
 *   one committed log entry per acquire and per release. Tokens are epoch << 40 |
 *   sequence and strictly increase per lock, across leader changes and full restarts
 *   of the authority. When the previous holder's lease expired, the acquire returns
 *   RDLM_OWNER_DEAD (the lock IS held) after the optional lock delay.
 *
 * Authority addresses
 *   "host:port[,host:port...]": the client ports of the replicas. Any replica answers
 *   with the leader's address; the client follows it and retries other replicas while
 *   no leader is known, until the call's deadline (RDLM_ERR_UNAVAILABLE). Opening a
 *   session gives up at once (RDLM_ERR_UNAVAILABLE and an error line "connection
 *   refused at ADDRS (is rdlmd running? ...)") when every address refused the
 *   connection twice in a row (refused, network or host unreachable): nothing
 *   listens there. A replica that accepts and does not answer is waited for.
 *
 * Thread safety: every function may be called from any thread. Calls on one session
 * that send a request (lock, unlock, new epoch) are serialised: a blocking
 * rdlm_session_lock holds the others up until it returns, so a thread that must
 * release while another waits needs a session of its own. Renewals (the renewal
 * thread's and rdlm_session_renew) are never held up by them, and the local calls
 * (check, valid_until, id, stats) never wait. rdlm_session_close must not race with
 * other calls on that session.
 */
#ifndef RDLM_LEASE_H
#define RDLM_LEASE_H

#include <stdint.h>

#include <rdlm/export.h>
#include <rdlm/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A session at the lease authority (rdlm_session_open). */
typedef struct rdlm_session *rdlm_session_h;
struct rdlm_ctx; /* include/rdlm.h */

/** Called once, from the renewal thread, when the session's lease is lost. */
typedef void (*rdlm_lease_lost_func_t)(void *arg, rdlm_session_h session);

/** Fields of rdlm_session_params_t that the caller set. */
enum rdlm_session_field {
    RDLM_SESSION_FIELD_TTL = 1u << 0,        /**< ttl_ms */
    RDLM_SESSION_FIELD_DRIFT = 1u << 1,      /**< drift_ppm */
    RDLM_SESSION_FIELD_LOST_CB = 1u << 2,    /**< lost_cb, lost_arg */
    RDLM_SESSION_FIELD_JOB = 1u << 3,        /**< job */
    RDLM_SESSION_FIELD_LOCK_DELAY = 1u << 4, /**< lock_delay_ms */
    RDLM_SESSION_FIELD_TIMEOUT = 1u << 5     /**< connect_timeout_ms */
};

/** Session parameters; unset fields take their defaults. */
typedef struct rdlm_session_params {
    uint64_t field_mask;      /**< RDLM_SESSION_FIELD_* that are set */
    uint32_t ttl_ms;          /**< lease TTL; default 5000, range 100..600000 */
    uint32_t drift_ppm;       /**< rho in parts per million; default 100000 (0.1),
                                   range 0..500000.
                                   rho bounds the rate difference between this
                                   host's CLOCK_MONOTONIC and the authority leader's:
                                   if each clock is within eps of real time, rho must
                                   be >= 2*eps/(1+eps) (the default covers eps up to
                                   5%; tests/model/lease_break.pml) */
    rdlm_lease_lost_func_t lost_cb; /**< called once when the lease is lost; default none */
    void *lost_arg;                 /**< passed to lost_cb */
    const char *job;          /**< job name for authenticated mode; default RDLM_JOB */
    uint32_t lock_delay_ms;   /**< wait this long before returning RDLM_OWNER_DEAD;
                                   default 0 */
    uint32_t connect_timeout_ms; /**< how long to look for a leader; default 10000,
                                      at least 1 */
} rdlm_session_params_t;

/** Open a session at the authority (blocking). authority: 1..7 comma-separated
 *  "host:port", host an IPv4 address or a host name (looked up at each connect).
 *  params may be NULL. RDLM_ERR_INVALID_ARG (also for a field out of its range or an
 *  unknown field_mask bit; logged), RDLM_ERR_BAD_CONFIG (no host of the list
 *  resolves; each one that does not is logged), RDLM_ERR_UNAVAILABLE, RDLM_ERR_AUTH,
 *  RDLM_ERR_QUOTA, RDLM_ERR_NO_SPACE, RDLM_ERR_NO_MEMORY. */
RDLM_EXPORT rdlm_status_t rdlm_session_open(const char *authority,
                                            const rdlm_session_params_t *params,
                                            rdlm_session_h *session_p);

/** Close: releases its locks at the authority (best effort) and frees the handle.
 *  NULL or a closed handle: nothing (the latter logged). */
RDLM_EXPORT void rdlm_session_close(rdlm_session_h session);

/** The authority's id of the session (0 for NULL). */
RDLM_EXPORT uint64_t rdlm_session_id(rdlm_session_h session);

/** RDLM_OK while the lease is valid, else RDLM_ERR_LEASE_EXPIRED; RDLM_ERR_INVALID_ARG
 *  for NULL. Non-blocking. */
RDLM_EXPORT rdlm_status_t rdlm_session_check(rdlm_session_h session);

/** CLOCK_MONOTONIC time in ns until which the lease is valid (0 once lost, and for
 *  NULL). */
RDLM_EXPORT uint64_t rdlm_session_valid_until(rdlm_session_h session);

/**
 * Renew the lease now (blocking): the RENEW the renewal thread sends, one request to
 * the leader that writes nothing at the authority. On RDLM_OK the validity moved to
 * t_send + TTL * (1 - drift), t_send being when the call began, as after a background
 * renewal (it never moves back);
 * it is counted in rdlm_session_stats_t.renewals (each attempt: one when the leader
 * answers at once; a leader change costs retries). The renewal thread goes on as
 * before. RDLM_ERR_LEASE_EXPIRED: the lease was lost before or during the call (a
 * lost lease is never revived; the lost callback runs on the renewal thread, as
 * always); RDLM_ERR_UNAVAILABLE: no leader answered within the session's
 * connect_timeout_ms (the lease is still valid, renewals go on); RDLM_ERR_INVALID_ARG
 * for NULL. It does not wait for the session's other calls (a lock another thread
 * waits for included); a renewal of the renewal thread in flight it waits for, at
 * most until connect_timeout_ms has passed.
 */
RDLM_EXPORT rdlm_status_t rdlm_session_renew(rdlm_session_h session);

/**
 * Acquire the authority-kept lock name (1..RDLM_NAME_MAX bytes), blocking up to
 * timeout_ns (0: try once; RDLM_TIMEOUT_INFINITE) while a leader answers; when none
 * does (the leader stopped or cut off, another not yet elected), up to 4 s longer: 2 s
 * for the acquire's answer, then 2 s for the CANCEL that makes sure nothing stays
 * queued at the authority (measured: 3.0 and 5.0 s for a 1 s timeout with the leader
 * stopped). RDLM_OK or RDLM_OWNER_DEAD with
 * *token_p; RDLM_ERR_BUSY (try), RDLM_ERR_TIMEOUT (nothing left queued),
 * RDLM_ERR_LEASE_EXPIRED, RDLM_ERR_UNAVAILABLE, RDLM_ERR_QUOTA, RDLM_ERR_NO_SPACE,
 * RDLM_ERR_NAME_TOO_LONG; RDLM_ERR_INVALID_ARG (NULL arguments, or a lock this session
 * holds already: at once, not a wait for itself; locks are not recursive).
 */
RDLM_EXPORT rdlm_status_t rdlm_session_lock(rdlm_session_h session, const char *name,
                                            uint64_t timeout_ns, uint64_t *token_p);

/** Release a lock held with token. RDLM_ERR_NOT_OWNER if not held with that token
 *  (double release included); RDLM_ERR_LEASE_EXPIRED, RDLM_ERR_NO_SPACE (still held:
 *  retry). */
RDLM_EXPORT rdlm_status_t rdlm_session_unlock(rdlm_session_h session, const char *name,
                                              uint64_t token);

/** Commit a new fencing epoch at the authority and return it: strictly greater than
 *  every epoch returned before, across restarts. RDLM_ERR_NO_SPACE: none committed. */
RDLM_EXPORT rdlm_status_t rdlm_session_new_epoch(rdlm_session_h session,
                                                 uint64_t *epoch_p);

/** Requests a session sent (every attempt, retries included). */
typedef struct rdlm_session_stats {
    uint64_t requests; /**< all but renewals */
    uint64_t renewals; /**< renewals: the renewal thread's and rdlm_session_renew's */
} rdlm_session_stats_t;

/** Copy the session's counters. Non-blocking. RDLM_ERR_INVALID_ARG for NULL. */
RDLM_EXPORT rdlm_status_t rdlm_session_stats(rdlm_session_h session,
                                             rdlm_session_stats_t *stats_p);

/** The lease a context holds when RDLM_AUTHORITY is set, or in a distributed context
 *  with RDLM_JOB_AUTHORITY=1 (the authority the job runs itself); NULL otherwise, or
 *  for a NULL or destroyed ctx. Owned by the context: do not close it. Every operation
 *  of the context returns RDLM_ERR_LEASE_EXPIRED once this lease is lost; releases
 *  still release. */
RDLM_EXPORT rdlm_session_h rdlm_ctx_session(struct rdlm_ctx *ctx);

/** What rdlmctl status prints, asked from one replica (no session needed). */
typedef struct rdlm_authority_status {
    int is_leader;        /**< 1 if this replica is the leader */
    uint64_t term;        /**< its Raft term */
    uint64_t leader_id;   /**< the leader's --id as it knows it; 0 if none */
    char leader_addr[64]; /**< the leader's client address; empty if none */
    uint64_t epoch;       /**< the fencing epoch last committed */
    uint64_t sessions;    /**< open sessions */
    uint64_t locks;       /**< locks the authority keeps (rdlm_session_lock) */
    uint64_t commit; /**< last applied index */
} rdlm_authority_status_t;

/** Ask the replica at address (host:port) for its status. RDLM_OK, or
 *  RDLM_ERR_NO_SPACE with *status_p filled all the same: the replica answered, and its
 *  data disk is full, read-only or gone, so a leader refuses writes (docs/
 *  lease-authority.md, "Disk faults"); else, with *status_p untouched,
 *  RDLM_ERR_UNAVAILABLE, RDLM_ERR_PROTOCOL, RDLM_ERR_CORRUPT (the replica found that
 *  another applied different entries than it did, and refuses every request:
 *  docs/lease-authority.md, "Divergence"). */
RDLM_EXPORT rdlm_status_t rdlm_authority_status(const char *address, uint32_t timeout_ms,
                                                rdlm_authority_status_t *status_p);

#ifdef __cplusplus
}
#endif
#endif
