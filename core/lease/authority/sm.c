/*
 * The lease authority's state machine: decide, then execute (sm.h).
 *
 * Every entry is first decided against the state without touching it
 * (rdlm_lease_decide, also what rdlm_lease_sm_check answers); only a fresh,
 * admissible entry is executed, and execution allocates before it changes anything,
 * so an error of any kind leaves the state as it was. No clock, no randomness, no
 * logging.
 *
 * The answers to duplicates, refusals and quotas are listed in sm.h.
 */
#include "sm_state.h"

#include <stdlib.h>
#include <string.h>

/* Index of session's wait in lock's queue, n_waiters if it does not wait. */
static size_t rdlm_lease_wait_pos(const rdlm_lease_lock_t *lock, uint64_t session)
{
    size_t k = 0;
    while (k < lock->n_waiters && lock->waiters[k].session != session) {
        k++;
    }
    return k;
}

static void rdlm_lease_wait_drop(rdlm_lease_state_t *st, rdlm_lease_lock_t *lock, size_t k,
                                 rdlm_lease_session_t *ses)
{
    memmove(&lock->waiters[k], &lock->waiters[k + 1],
            (lock->n_waiters - k - 1) * sizeof(lock->waiters[0]));
    lock->n_waiters--;
    ses->waiting--;
    st->waiters--;
}

/* Give lock to session to for the acquire seq: the next token. */
static void rdlm_lease_grant(rdlm_lease_state_t *st, rdlm_lease_lock_t *lock,
                             rdlm_lease_session_t *to, uint64_t seq, uint8_t broken)
{
    st->grant_seq++;
    lock->holder = to->id;
    lock->holder_seq = seq;
    lock->token = st->epoch << 40 | st->grant_seq;
    lock->broken = broken;
    to->held++;
}

/* The holder `from` of lock i lets go: the next waiter gets the lock (and the grant
 * callback is called), or the record is removed when nobody waits. */
static void rdlm_lease_pass(rdlm_lease_sm_t *sm, size_t i, rdlm_lease_session_t *from,
                            uint8_t broken)
{
    rdlm_lease_state_t *st = &sm->st;
    rdlm_lease_lock_t *lock = st->locks[i];
    rdlm_lease_waiter_t next;
    rdlm_lease_session_t *to;

    from->held--;
    if (lock->n_waiters == 0) {
        free(lock->waiters);
        free(lock);
        memmove(&st->locks[i], &st->locks[i + 1], (st->n_locks - i - 1) * sizeof(lock));
        st->n_locks--;
        return;
    }
    next = lock->waiters[0];
    to = rdlm_lease_state_session(st, next.session);
    rdlm_lease_wait_drop(st, lock, 0, to);
    rdlm_lease_grant(st, lock, to, next.seq, broken);
    if (sm->grant_cb != NULL) {
        sm->grant_cb(sm->grant_arg, next.session, next.seq, lock->name, lock->token,
                     broken);
    }
}

/* CLOSE and EXPIRE: hand on what ses holds, drop its waits, forget it. */
static void rdlm_lease_session_remove(rdlm_lease_sm_t *sm, rdlm_lease_session_t *ses,
                                      uint8_t broken)
{
    rdlm_lease_state_t *st = &sm->st;
    size_t i = 0;

    while (i < st->n_locks && (ses->held != 0 || ses->waiting != 0)) {
        rdlm_lease_lock_t *lock = st->locks[i];
        size_t k = rdlm_lease_wait_pos(lock, ses->id);
        size_t n_locks = st->n_locks;

        if (lock->holder == ses->id) {
            rdlm_lease_pass(sm, i, ses, broken);
        } else if (k < lock->n_waiters) {
            rdlm_lease_wait_drop(st, lock, k, ses);
        }
        i += st->n_locks == n_locks; /* a removed record shifted the next one to i */
    }
    i = (size_t)(ses - st->sessions);
    memmove(&st->sessions[i], &st->sessions[i + 1],
            (st->n_sessions - i - 1) * sizeof(st->sessions[0]));
    st->n_sessions--;
}

/* Room for a grant now and one for every queued waiter later. */
static int rdlm_lease_grant_budget(const rdlm_lease_state_t *st)
{
    return st->grant_seq + st->waiters < RDLM_LEASE_GRANT_SEQ_MAX;
}

/* Counted sessions of the identity (uid, src, ns) (sm.h), and in *waits_p the
 * ACQUIREs they have queued. One pass over the sessions. */
static uint64_t rdlm_lease_identity_load(const rdlm_lease_state_t *st, uint32_t uid,
                                         uint64_t src, const char *ns, size_t ns_len,
                                         uint64_t *waits_p)
{
    uint64_t n = 0;

    *waits_p = 0;
    for (size_t i = 0; i < st->n_sessions; i++) {
        const rdlm_lease_session_t *s = &st->sessions[i];
        if (s->counted && s->uid == uid && s->src == src && s->ns_len == ns_len &&
            memcmp(s->ns, ns, ns_len) == 0) {
            n++;
            *waits_p += s->waiting;
        }
    }
    return n;
}

/* Sessions a counted OPEN may find open at most: max_sessions less the reserve of
 * the uncounted ones. */
static uint32_t rdlm_lease_counted_cap(const rdlm_lease_limits_t *lim)
{
    uint32_t reserve = lim->max_sessions / 2;

    return lim->max_sessions - (reserve < RDLM_LEASE_SESSIONS_RESERVED
                                    ? reserve
                                    : RDLM_LEASE_SESSIONS_RESERVED);
}

/* NULL if a fresh OPEN is within the session quotas (the global one, and for a
 * counted OPEN the reserve and its identity's), else the quota it would exceed. */
static const char *rdlm_lease_open_quota(const rdlm_lease_sm_t *sm,
                                         const rdlm_lease_cmd_t *cmd)
{
    const rdlm_lease_state_t *st = &sm->st;
    uint64_t waits;

    if (!(cmd->flags & RDLM_LEASE_OPEN_COUNTED)) {
        return st->n_sessions < sm->limits.max_sessions ? NULL : "--max-sessions";
    }
    if (st->n_sessions >= rdlm_lease_counted_cap(&sm->limits)) {
        return "--max-sessions (less the reserve for rdlmd's own sessions)";
    }
    return rdlm_lease_identity_load(st, cmd->uid, cmd->token, cmd->name, cmd->name_len,
                                    &waits) < sm->limits.max_sessions_per_identity
               ? NULL
               : "--max-sessions-per-identity";
}

/* Whether a counted session's identity has max_waits_per_identity ACQUIREs queued. */
static int rdlm_lease_identity_waits_full(const rdlm_lease_sm_t *sm,
                                          const rdlm_lease_session_t *ses)
{
    uint64_t waits = 0;

    if (ses->counted) {
        rdlm_lease_identity_load(&sm->st, ses->uid, ses->src, ses->ns, ses->ns_len, &waits);
    }
    return waits >= sm->limits.max_waits_per_identity;
}

static rdlm_status_t rdlm_lease_decide_open(const rdlm_lease_sm_t *sm,
                                            const rdlm_lease_cmd_t *cmd,
                                            rdlm_lease_result_t *res, int *fresh_p)
{
    const rdlm_lease_state_t *st = &sm->st;

    for (size_t i = 0; i < st->n_sessions; i++) {
        const rdlm_lease_session_t *s = &st->sessions[i];
        if (s->nonce != cmd->nonce) {
            continue;
        }
        if (s->uid != cmd->uid || s->gid != cmd->gid || s->ns_len != cmd->name_len ||
            memcmp(s->ns, cmd->name, cmd->name_len) != 0) {
            return RDLM_ERR_AUTH;
        }
        res->session = s->id;
        return RDLM_OK;
    }
    res->quota = rdlm_lease_open_quota(sm, cmd);
    if (res->quota != NULL) {
        return RDLM_ERR_QUOTA;
    }
    *fresh_p = 1;
    return RDLM_OK;
}

static rdlm_status_t rdlm_lease_decide_acquire(const rdlm_lease_sm_t *sm,
                                               const rdlm_lease_session_t *ses,
                                               const rdlm_lease_cmd_t *cmd,
                                               rdlm_lease_result_t *res, int *fresh_p)
{
    const rdlm_lease_limits_t *lim = &sm->limits;
    const rdlm_lease_lock_t *lock = rdlm_lease_state_lock(&sm->st, cmd->name);
    size_t k = lock != NULL ? rdlm_lease_wait_pos(lock, ses->id) : 0;
    int waits = lock != NULL && k < lock->n_waiters;

    if (cmd->seq <= ses->last_seq) {
        if (lock != NULL && lock->holder == ses->id && lock->holder_seq == cmd->seq) {
            res->token = lock->token;
            res->broken = lock->broken;
            return RDLM_OK;
        }
        return waits && lock->waiters[k].seq == cmd->seq ? RDLM_INPROGRESS
                                                         : RDLM_ERR_INVALID_ARG;
    }
    if (lock != NULL && (lock->holder == ses->id || waits)) {
        return RDLM_ERR_INVALID_ARG;
    }
    if (lock != NULL && (cmd->flags & RDLM_LEASE_ACQ_TRY)) {
        return RDLM_ERR_BUSY;
    }
    if ((uint64_t)ses->held + ses->waiting >= lim->max_held_per_session) {
        res->quota = "locks held and queued per session";
    } else if (lock == NULL && sm->st.n_locks >= lim->max_locks) {
        res->quota = "locks in the authority";
    } else if (lock != NULL && ses->waiting >= lim->max_waits_per_session) {
        res->quota = "acquires queued per session";
    } else if (lock != NULL && rdlm_lease_identity_waits_full(sm, ses)) {
        res->quota = "--max-parked-per-identity";
    } else if (!rdlm_lease_grant_budget(&sm->st)) {
        res->quota = "grants of this epoch";
    }
    if (res->quota != NULL) {
        return RDLM_ERR_QUOTA;
    }
    *fresh_p = 1;
    return RDLM_OK;
}

static rdlm_status_t rdlm_lease_decide_release(const rdlm_lease_sm_t *sm,
                                               const rdlm_lease_session_t *ses,
                                               const rdlm_lease_cmd_t *cmd)
{
    const rdlm_lease_lock_t *lock = rdlm_lease_state_lock(&sm->st, cmd->name);

    if (lock == NULL || lock->holder != ses->id || lock->token != cmd->token) {
        return RDLM_ERR_NOT_OWNER;
    }
    return RDLM_OK;
}

/* What the entry means in the current state. *fresh_p = 1 (status RDLM_OK) when it
 * is to be executed; otherwise the status is the whole answer. */
static rdlm_status_t rdlm_lease_decide(const rdlm_lease_sm_t *sm,
                                       const rdlm_lease_cmd_t *cmd,
                                       rdlm_lease_result_t *res, int *fresh_p)
{
    const rdlm_lease_session_t *ses;
    rdlm_status_t s = RDLM_OK;

    *fresh_p = 0;
    res->session = cmd->session;
    if (cmd->op == RDLM_LEASE_OP_OPEN) {
        return rdlm_lease_decide_open(sm, cmd, res, fresh_p);
    }
    if (!rdlm_lease_op_is_logged(cmd->op)) {
        return RDLM_ERR_PROTOCOL;
    }
    ses = rdlm_lease_state_session(&sm->st, cmd->session);
    if (ses == NULL) {
        return RDLM_ERR_LEASE_EXPIRED;
    }
    if (cmd->op == RDLM_LEASE_OP_EXPIRE || cmd->op == RDLM_LEASE_OP_CANCEL) {
        *fresh_p = 1; /* neither is de-duplicated */
        return RDLM_OK;
    }
    if (cmd->seq == 0) {
        return RDLM_ERR_INVALID_ARG;
    }
    if (cmd->op == RDLM_LEASE_OP_ACQUIRE) {
        return rdlm_lease_decide_acquire(sm, ses, cmd, res, fresh_p);
    }
    if (cmd->seq <= ses->last_seq) {
        return cmd->seq == ses->last_seq ? RDLM_OK : RDLM_ERR_INVALID_ARG;
    }
    if (cmd->op == RDLM_LEASE_OP_RELEASE) {
        s = rdlm_lease_decide_release(sm, ses, cmd);
    } else if (cmd->op == RDLM_LEASE_OP_EPOCH && sm->st.epoch >= RDLM_LEASE_EPOCH_MAX) {
        res->quota = "epochs";
        s = RDLM_ERR_QUOTA;
    }
    *fresh_p = s == RDLM_OK;
    return s;
}

static rdlm_status_t rdlm_lease_exec_open(rdlm_lease_sm_t *sm, const rdlm_lease_cmd_t *cmd,
                                          rdlm_lease_result_t *res)
{
    rdlm_lease_state_t *st = &sm->st;
    rdlm_lease_session_t *ses;

    if (rdlm_lease_grow(&st->sessions, &st->cap_sessions, st->n_sessions + 1,
                        sizeof(st->sessions[0])) != RDLM_OK) {
        return RDLM_ERR_NO_MEMORY;
    }
    ses = &st->sessions[st->n_sessions++];
    memset(ses, 0, sizeof(*ses));
    ses->id = st->next_session++;
    ses->nonce = cmd->nonce;
    ses->ttl_ms = cmd->ttl_ms;
    ses->uid = cmd->uid;
    ses->gid = cmd->gid;
    ses->ns_len = cmd->name_len;
    memcpy(ses->ns, cmd->name, cmd->name_len);
    ses->src = cmd->token;
    ses->counted = (cmd->flags & RDLM_LEASE_OPEN_COUNTED) != 0;
    res->session = ses->id;
    return RDLM_OK;
}

static rdlm_status_t rdlm_lease_exec_acquire(rdlm_lease_sm_t *sm, rdlm_lease_session_t *ses,
                                             const rdlm_lease_cmd_t *cmd,
                                             rdlm_lease_result_t *res)
{
    rdlm_lease_state_t *st = &sm->st;
    int found;
    size_t i = rdlm_lease_state_lock_pos(st, cmd->name, &found);
    rdlm_lease_lock_t *lock;

    if (found) {
        lock = st->locks[i];
        if (rdlm_lease_grow(&lock->waiters, &lock->cap_waiters, lock->n_waiters + 1,
                            sizeof(lock->waiters[0])) != RDLM_OK) {
            return RDLM_ERR_NO_MEMORY;
        }
        lock->waiters[lock->n_waiters++] =
            (rdlm_lease_waiter_t){.session = ses->id, .seq = cmd->seq};
        ses->waiting++;
        st->waiters++;
        ses->last_seq = cmd->seq;
        return RDLM_INPROGRESS;
    }
    if (rdlm_lease_grow(&st->locks, &st->cap_locks, st->n_locks + 1,
                        sizeof(st->locks[0])) != RDLM_OK ||
        (lock = calloc(1, sizeof(*lock))) == NULL) {
        return RDLM_ERR_NO_MEMORY;
    }
    memmove(&st->locks[i + 1], &st->locks[i], (st->n_locks - i) * sizeof(lock));
    st->locks[i] = lock;
    st->n_locks++;
    lock->name_len = cmd->name_len;
    memcpy(lock->name, cmd->name, cmd->name_len + 1u);
    rdlm_lease_grant(st, lock, ses, cmd->seq, 0);
    ses->last_seq = cmd->seq;
    res->token = lock->token;
    return RDLM_OK;
}

static void rdlm_lease_exec_cancel(rdlm_lease_sm_t *sm, rdlm_lease_session_t *ses,
                                   const rdlm_lease_cmd_t *cmd)
{
    int found;
    size_t i = rdlm_lease_state_lock_pos(&sm->st, cmd->name, &found);
    rdlm_lease_lock_t *lock = found ? sm->st.locks[i] : NULL;
    size_t k;

    /* An ACQUIRE that commits after its CANCEL is then a duplicate: never granted. */
    if (cmd->seq > ses->last_seq) {
        ses->last_seq = cmd->seq;
    }
    if (lock == NULL) {
        return;
    }
    if (lock->holder == ses->id && lock->holder_seq == cmd->seq) {
        rdlm_lease_pass(sm, i, ses, 0);
        return;
    }
    k = rdlm_lease_wait_pos(lock, ses->id);
    if (k < lock->n_waiters && lock->waiters[k].seq == cmd->seq) {
        rdlm_lease_wait_drop(&sm->st, lock, k, ses);
    }
}

/* Execute a fresh entry that rdlm_lease_decide admitted. */
static rdlm_status_t rdlm_lease_exec(rdlm_lease_sm_t *sm, const rdlm_lease_cmd_t *cmd,
                                     rdlm_lease_result_t *res)
{
    rdlm_lease_state_t *st = &sm->st;
    rdlm_lease_session_t *ses;
    int found;
    size_t i;

    if (cmd->op == RDLM_LEASE_OP_OPEN) {
        return rdlm_lease_exec_open(sm, cmd, res);
    }
    ses = rdlm_lease_state_session(st, cmd->session);
    switch (cmd->op) {
    case RDLM_LEASE_OP_CLOSE:
    case RDLM_LEASE_OP_EXPIRE:
        rdlm_lease_session_remove(sm, ses, cmd->op == RDLM_LEASE_OP_EXPIRE);
        return RDLM_OK;
    case RDLM_LEASE_OP_ACQUIRE:
        return rdlm_lease_exec_acquire(sm, ses, cmd, res);
    case RDLM_LEASE_OP_RELEASE:
        i = rdlm_lease_state_lock_pos(st, cmd->name, &found);
        ses->last_seq = cmd->seq;
        rdlm_lease_pass(sm, i, ses, 0);
        return RDLM_OK;
    case RDLM_LEASE_OP_CANCEL:
        rdlm_lease_exec_cancel(sm, ses, cmd);
        return RDLM_OK;
    default: /* RDLM_LEASE_OP_EPOCH: the floor is at most RDLM_LEASE_EPOCH_MAX (cmd.c) */
        st->epoch = cmd->token > st->epoch + 1 ? cmd->token : st->epoch + 1;
        ses->last_seq = cmd->seq;
        return RDLM_OK;
    }
}

/* A limit, or its default (sm.h) when zero. */
static uint32_t rdlm_lease_or(uint32_t limit, uint32_t dflt)
{
    return limit != 0 ? limit : dflt;
}

rdlm_status_t rdlm_lease_sm_create(const rdlm_lease_limits_t *limits,
                                   rdlm_lease_sm_t **sm_p)
{
    rdlm_lease_sm_t *sm = calloc(1, sizeof(*sm));

    if (sm == NULL) {
        return RDLM_ERR_NO_MEMORY;
    }
    if (limits != NULL) {
        sm->limits = *limits;
    }
    sm->limits.max_sessions = rdlm_lease_or(sm->limits.max_sessions, 4096);
    sm->limits.max_locks = rdlm_lease_or(sm->limits.max_locks, 65536);
    sm->limits.max_held_per_session = rdlm_lease_or(sm->limits.max_held_per_session, 1024);
    sm->limits.max_waits_per_session = rdlm_lease_or(sm->limits.max_waits_per_session, 64);
    sm->limits.max_sessions_per_identity =
        rdlm_lease_or(sm->limits.max_sessions_per_identity,
                      rdlm_lease_or(sm->limits.max_sessions / 2, 1));
    sm->limits.max_waits_per_identity =
        rdlm_lease_or(sm->limits.max_waits_per_identity, 512);
    sm->st.epoch = 1;
    sm->st.next_session = 1;
    *sm_p = sm;
    return RDLM_OK;
}

void rdlm_lease_sm_destroy(rdlm_lease_sm_t *sm)
{
    if (sm == NULL) {
        return;
    }
    rdlm_lease_state_clear(&sm->st);
    free(sm);
}

void rdlm_lease_sm_set_grant_cb(rdlm_lease_sm_t *sm, rdlm_lease_grant_func_t cb, void *arg)
{
    sm->grant_cb = cb;
    sm->grant_arg = arg;
}

void rdlm_lease_sm_apply(rdlm_lease_sm_t *sm, const void *entry, size_t len,
                         rdlm_lease_result_t *res_p)
{
    rdlm_lease_cmd_t cmd;
    int fresh = 0;
    rdlm_status_t s;

    memset(res_p, 0, sizeof(*res_p));
    s = rdlm_lease_cmd_decode(entry, len, &cmd);
    if (s == RDLM_OK) {
        s = rdlm_lease_decide(sm, &cmd, res_p, &fresh);
    }
    if (fresh) {
        s = rdlm_lease_exec(sm, &cmd, res_p);
    }
    res_p->status = s;
    res_p->epoch = sm->st.epoch;
}

rdlm_status_t rdlm_lease_sm_check(const rdlm_lease_sm_t *sm, const rdlm_lease_cmd_t *cmd,
                                  rdlm_lease_result_t *res_p)
{
    int fresh;

    memset(res_p, 0, sizeof(*res_p));
    res_p->status = rdlm_lease_decide(sm, cmd, res_p, &fresh);
    res_p->epoch = sm->st.epoch;
    return res_p->status;
}
