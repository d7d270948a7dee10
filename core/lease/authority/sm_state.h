/*
 * The lease state machine's state (private to sm.c, sm_state.c, sm_snapshot.c).
 *
 *   sessions  array sorted by id (ids come from a counter, so OPEN appends)
 *   locks     array of pointers sorted by name (strcmp order); every record has a
 *             holder; waiters[0] is the next to be granted
 *
 * Invariants (kept by apply, checked by restore): holders and waiters are live
 * sessions; a holder never waits on its own lock; a session waits at most once per
 * lock; held/waiting/waiters are the counts derived from the locks;
 * grant_seq + waiters <= RDLM_LEASE_GRANT_SEQ_MAX, so every queued waiter can still be
 * granted a token; 1 <= epoch <= RDLM_LEASE_EPOCH_MAX, so epoch << 40 fits.
 */
#ifndef RDLM_LEASE_SM_STATE_H
#define RDLM_LEASE_SM_STATE_H

#include "sm.h"

#define RDLM_LEASE_GRANT_SEQ_MAX ((UINT64_C(1) << 40) - 1)

typedef struct rdlm_lease_session {
    uint64_t id;
    uint64_t nonce;
    uint64_t last_seq;
    uint32_t ttl_ms, uid, gid;
    uint64_t src;     /**< the OPEN's token: the client's address (sm.h) */
    uint8_t counted;  /**< against its identity's quotas (RDLM_LEASE_OPEN_COUNTED) */
    uint32_t held;    /**< derived: locks it holds */
    uint32_t waiting; /**< derived: locks it waits for */
    uint16_t ns_len;
    char ns[RDLM_LEASE_NAME_MAX + 1];
    size_t mark; /**< restore scratch: last lock (index + 1) it was seen waiting on */
} rdlm_lease_session_t;

typedef struct rdlm_lease_waiter {
    uint64_t session;
    uint64_t seq;
} rdlm_lease_waiter_t;

typedef struct rdlm_lease_lock {
    uint64_t holder;
    uint64_t holder_seq;
    uint64_t token;
    uint8_t broken;
    uint16_t name_len;
    char name[RDLM_LEASE_NAME_MAX + 1];
    rdlm_lease_waiter_t *waiters;
    size_t n_waiters, cap_waiters;
} rdlm_lease_lock_t;

typedef struct rdlm_lease_state {
    uint64_t epoch;
    uint64_t grant_seq;
    uint64_t next_session; /**< id the next OPEN gets */
    uint64_t waiters;      /**< derived: waits over all locks */
    rdlm_lease_session_t *sessions;
    size_t n_sessions, cap_sessions;
    rdlm_lease_lock_t **locks;
    size_t n_locks, cap_locks;
} rdlm_lease_state_t;

struct rdlm_lease_sm {
    rdlm_lease_limits_t limits;
    rdlm_lease_state_t st;
    rdlm_lease_grant_func_t grant_cb;
    void *grant_arg;
};

/** Make room for need elements of elem bytes in the array *arr_p (a T **; capacity
 *  *cap_p), doubling; a failure leaves both as they were. RDLM_ERR_NO_MEMORY. */
rdlm_status_t rdlm_lease_grow(void *arr_p, size_t *cap_p, size_t need, size_t elem);

/** Free everything st owns and leave it empty (all zero). */
void rdlm_lease_state_clear(rdlm_lease_state_t *st);

/** The live session id, or NULL. */
rdlm_lease_session_t *rdlm_lease_state_session(const rdlm_lease_state_t *st, uint64_t id);

/** Position of name in the sorted lock array: its index if *found_p, else where it
 *  would be inserted. */
size_t rdlm_lease_state_lock_pos(const rdlm_lease_state_t *st, const char *name,
                                 int *found_p);

/** The record of lock name, or NULL. */
rdlm_lease_lock_t *rdlm_lease_state_lock(const rdlm_lease_state_t *st, const char *name);

#endif
