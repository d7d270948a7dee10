/*
 * The lease authority's replicated state machine (sm.c): pure, deterministic, total.
 *
 * State
 *   epoch          current fencing epoch (starts at 1; EPOCH bumps it to
 *                  max(epoch + 1, floor), the floor coming from the entry)
 *   grant_seq      sequence of the last grant, over all locks (never decreases)
 *   sessions       id -> {nonce, ttl_ms, uid, gid, ns, src, counted, last_seq, held,
 *                  waiting}
 *                  ids are assigned from a counter in apply order (1, 2, ...);
 *                  ns is the OPEN's name (the "uid/job" namespace the server sets in
 *                  authenticated mode, "" otherwise); src the OPEN's token (the
 *                  client's IPv4 address without authentication, 0 with it);
 *                  counted the OPEN's RDLM_LEASE_OPEN_COUNTED flag
 *   locks          name -> {holder session, holder_seq (the acquire's seq), token,
 *                  broken flag, FIFO of waiters (session, seq)}; a lock with no
 *                  holder and no waiter is removed
 *
 * Rules
 *   - apply() never reads a clock, never allocates unboundedly (limits below), and
 *     never asserts: an entry that does not decode or does not fit the state gives an
 *     error result and changes nothing.
 *   - Tokens: grant -> grant_seq += 1, token = epoch << 40 | grant_seq. Neither
 *     ever decreases (an EPOCH whose floor is below the next epoch just bumps it)
 *     and both are in the log and the snapshot, so tokens strictly increase, for
 *     every lock (even one whose record was removed), across leader changes and full
 *     restarts.
 *   - CANCEL names the seq of the ACQUIRE it cancels and is not de-duplicated (it
 *     is idempotent): it drops that wait, or releases the hold that acquire got
 *     (holder_seq == seq), or does nothing; it raises last_seq to seq, so an ACQUIRE
 *     that commits after its CANCEL (a client gave up on it) is a duplicate and is
 *     never granted.
 *   - De-duplication: a request whose seq is <= the session's last_seq is not applied
 *     again: ACQUIRE answers from the current state (held by it with that seq -> OK
 *     + token; still waiting -> RDLM_INPROGRESS), the others answer RDLM_OK if seq ==
 *     last_seq, and RDLM_ERR_INVALID_ARG if older.
 *   - EXPIRE and CLOSE remove the session: its held locks go to their next waiter
 *     (the grant is marked broken=1 for EXPIRE: the holder did not release) and its
 *     waits are dropped.
 *   - RELEASE by a session that does not hold the lock, or with another token:
 *     RDLM_ERR_NOT_OWNER, nothing changes (double release included).
 *   - Quotas (limits): sessions, locks, held locks and waits per session ->
 *     RDLM_ERR_QUOTA. held + waiting counts against max_held_per_session, so a later
 *     grant never exceeds it. The token space is a quota too: EPOCH at epoch 2^24-1,
 *     and ACQUIRE once the 2^40-1 grant numbers are used or promised to waiters.
 *   - Identity quotas: an identity is (uid, ns, src), so (uid, job) under MUNGE and
 *     the source address without authentication. Counted sessions (opened with
 *     RDLM_LEASE_OPEN_COUNTED) of one identity: at most max_sessions_per_identity
 *     sessions, and at most max_waits_per_identity queued ACQUIREs over all of them;
 *     and counted OPENs leave the last RDLM_LEASE_SESSIONS_RESERVED of max_sessions
 *     (at most half of it) to uncounted ones: the server leaves the daemon's own
 *     identity uncounted, so the lock homes' sessions always find room. Entries
 *     logged before identities existed are uncounted, so replaying them decides as
 *     it did. Applied on every replica from the entry and the state alone: a new
 *     leader enforces them as the old one did.
 *   - Errors change nothing, last_seq included. seq 0 (CLOSE ACQUIRE RELEASE EPOCH):
 *     RDLM_ERR_INVALID_ARG. ACQUIRE by the holder, or by a session that already waits
 *     for that lock, and a duplicate ACQUIRE that neither holds nor waits any more:
 *     RDLM_ERR_INVALID_ARG. Any op naming a session that does not exist (never
 *     opened, closed, expired): RDLM_ERR_LEASE_EXPIRED. OPEN with the nonce of a live
 *     session: that session if uid, gid and namespace match, else RDLM_ERR_AUTH.
 */
#ifndef RDLM_LEASE_SM_H
#define RDLM_LEASE_SM_H

#include <stddef.h>
#include <stdint.h>

#include "cmd.h"

typedef struct rdlm_lease_sm rdlm_lease_sm_t;

/** Sessions of max_sessions that counted OPENs leave to uncounted ones (the lock
 *  homes': one per replica). */
#define RDLM_LEASE_SESSIONS_RESERVED 8u

typedef struct rdlm_lease_limits {
    uint32_t max_sessions;              /**< default 4096 */
    uint32_t max_locks;                 /**< default 65536 */
    uint32_t max_held_per_session;      /**< default 1024 */
    uint32_t max_waits_per_session;     /**< default 64 */
    uint32_t max_sessions_per_identity; /**< default max_sessions / 2 (at least 1) */
    uint32_t max_waits_per_identity;    /**< default 512 */
} rdlm_lease_limits_t;

/** What one apply (or a check) decided. */
typedef struct rdlm_lease_result {
    rdlm_status_t status; /**< RDLM_OK, RDLM_INPROGRESS (ACQUIRE queued), or error */
    uint64_t session;     /**< OPEN: the session id */
    uint64_t token;       /**< ACQUIRE granted: epoch << 40 | lock_seq */
    uint64_t epoch;       /**< current epoch after the apply (EPOCH: the new one) */
    uint8_t broken;       /**< ACQUIRE granted after the previous holder expired */
    const char *quota;    /**< RDLM_ERR_QUOTA: the limit reached, for the log line */
} rdlm_lease_result_t;

/** Called during apply for every waiter granted because of another entry (a RELEASE,
 *  CANCEL, CLOSE or EXPIRE), so the leader can answer the waiting client. */
typedef void (*rdlm_lease_grant_func_t)(void *arg, uint64_t session, uint64_t seq,
                                        const char *name, uint64_t token, int broken);

/** New empty state (epoch 1). limits NULL or zero fields: defaults.
 *  RDLM_ERR_NO_MEMORY. */
rdlm_status_t rdlm_lease_sm_create(const rdlm_lease_limits_t *limits,
                                   rdlm_lease_sm_t **sm_p);
void rdlm_lease_sm_destroy(rdlm_lease_sm_t *sm);

/** Grant notifications (NULL to stop). cb runs inside apply, in lock-name order for
 *  a CLOSE or EXPIRE: it must not call back into sm. */
void rdlm_lease_sm_set_grant_cb(rdlm_lease_sm_t *sm, rdlm_lease_grant_func_t cb,
                                void *arg);

/** Apply one committed entry (any bytes). Total: an undecodable entry gives
 *  RDLM_ERR_PROTOCOL in *res_p and changes nothing. */
void rdlm_lease_sm_apply(rdlm_lease_sm_t *sm, const void *entry, size_t len,
                         rdlm_lease_result_t *res_p);

/**
 * Validate a decoded client command against the current state before it is logged.
 * Returns RDLM_OK when it should be logged; any other status is the answer to send
 * without logging (errors, and for a duplicate ACQUIRE its current outcome with
 * *res_p filled). A duplicate whose answer is RDLM_OK also returns RDLM_OK: logged
 * again, apply answers it the same way. apply() re-checks everything: the state may
 * change in between. RENEW and STATUS (not log entries): RDLM_ERR_PROTOCOL; refusing
 * EXPIRE from clients is the server's job.
 */
rdlm_status_t rdlm_lease_sm_check(const rdlm_lease_sm_t *sm, const rdlm_lease_cmd_t *cmd,
                                  rdlm_lease_result_t *res_p);

/** Canonical serialisation (sorted, so equal states give equal bytes). *buf_p is
 *  malloc'd; the caller frees it. RDLM_ERR_NO_MEMORY. */
rdlm_status_t rdlm_lease_sm_snapshot(const rdlm_lease_sm_t *sm, void **buf_p,
                                     size_t *len_p);

/** Replace the state by a snapshot. The bytes are validated completely first; on any
 *  error (RDLM_ERR_PROTOCOL, RDLM_ERR_NO_MEMORY) the state is unchanged. */
rdlm_status_t rdlm_lease_sm_restore(rdlm_lease_sm_t *sm, const void *buf, size_t len);

/** 64-bit hash of the canonical serialisation (equal states, equal hash). */
uint64_t rdlm_lease_sm_hash(const rdlm_lease_sm_t *sm);

uint64_t rdlm_lease_sm_epoch(const rdlm_lease_sm_t *sm);
size_t rdlm_lease_sm_session_count(const rdlm_lease_sm_t *sm);
size_t rdlm_lease_sm_lock_count(const rdlm_lease_sm_t *sm);

/** 1 and *ttl_ms_p if the session exists, else 0. ns_p (may be NULL, at least
 *  RDLM_LEASE_NAME_MAX + 1 bytes) receives its namespace. */
int rdlm_lease_sm_session_ttl(const rdlm_lease_sm_t *sm, uint64_t session,
                              uint32_t *ttl_ms_p, char *ns_p);

/** What became of session, as committed: RDLM_OK open (its namespace in ns_p, as
 *  rdlm_lease_sm_session_ttl), RDLM_ERR_LEASE_EXPIRED ended (closed or expired; ids
 *  are never reused, so this is final), RDLM_ERR_NOT_FOUND never opened. */
rdlm_status_t rdlm_lease_sm_session_fate(const rdlm_lease_sm_t *sm, uint64_t session,
                                         char *ns_p);

/** Whether a request naming session comes from its owner: RDLM_OK if the session
 *  exists and nonce is the one it was opened with, RDLM_ERR_LEASE_EXPIRED if it does
 *  not exist, RDLM_ERR_AUTH otherwise. The leader asks before answering or logging
 *  any request but OPEN and STATUS. */
rdlm_status_t rdlm_lease_sm_session_owner(const rdlm_lease_sm_t *sm, uint64_t session,
                                          uint64_t nonce);

/** Calls fn for every session in id order (the leader arms its timers with it). */
void rdlm_lease_sm_foreach_session(const rdlm_lease_sm_t *sm,
                                   void (*fn)(void *arg, uint64_t session,
                                              uint32_t ttl_ms),
                                   void *arg);

/** Holder (0: free), last token and number of waiters of a lock.
 *  RDLM_ERR_NOT_FOUND if the authority has no record of it. */
rdlm_status_t rdlm_lease_sm_lock_info(const rdlm_lease_sm_t *sm, const char *name,
                                      uint64_t *holder_p, uint64_t *token_p,
                                      size_t *waiters_p);

#endif
