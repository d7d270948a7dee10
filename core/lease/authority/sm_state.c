/*
 * The lease state's containers and read-only queries: growth, lookups by session id
 * and by lock name (binary search over the sorted arrays), and the accessors of sm.h.
 */
#include "sm_state.h"

#include <stdlib.h>
#include <string.h>

rdlm_status_t rdlm_lease_grow(void *arr_p, size_t *cap_p, size_t need, size_t elem)
{
    size_t cap = *cap_p;
    void *arr, *p;

    if (need <= cap) {
        return RDLM_OK;
    }
    cap = cap < 8 ? 8 : cap;
    while (cap < need) {
        cap *= 2;
    }
    memcpy(&arr, arr_p, sizeof(arr)); /* the caller's T *, read without aliasing it */
    p = realloc(arr, cap * elem);
    if (p == NULL) {
        return RDLM_ERR_NO_MEMORY;
    }
    memcpy(arr_p, &p, sizeof(p));
    *cap_p = cap;
    return RDLM_OK;
}

void rdlm_lease_state_clear(rdlm_lease_state_t *st)
{
    for (size_t i = 0; i < st->n_locks; i++) {
        free(st->locks[i]->waiters);
        free(st->locks[i]);
    }
    free(st->locks);
    free(st->sessions);
    memset(st, 0, sizeof(*st));
}

rdlm_lease_session_t *rdlm_lease_state_session(const rdlm_lease_state_t *st, uint64_t id)
{
    size_t lo = 0, hi = st->n_sessions;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (st->sessions[mid].id < id) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo < st->n_sessions && st->sessions[lo].id == id ? &st->sessions[lo] : NULL;
}

size_t rdlm_lease_state_lock_pos(const rdlm_lease_state_t *st, const char *name,
                                 int *found_p)
{
    size_t lo = 0, hi = st->n_locks;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(st->locks[mid]->name, name) < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    *found_p = lo < st->n_locks && strcmp(st->locks[lo]->name, name) == 0;
    return lo;
}

rdlm_lease_lock_t *rdlm_lease_state_lock(const rdlm_lease_state_t *st, const char *name)
{
    int found;
    size_t i = rdlm_lease_state_lock_pos(st, name, &found);
    return found ? st->locks[i] : NULL;
}

rdlm_status_t rdlm_lease_sm_session_fate(const rdlm_lease_sm_t *sm, uint64_t session,
                                         char *ns_p)
{
    uint32_t ttl_ms;

    if (rdlm_lease_sm_session_ttl(sm, session, &ttl_ms, ns_p)) {
        return RDLM_OK;
    }
    return session != 0 && session < sm->st.next_session ? RDLM_ERR_LEASE_EXPIRED
                                                         : RDLM_ERR_NOT_FOUND;
}

uint64_t rdlm_lease_sm_epoch(const rdlm_lease_sm_t *sm)
{
    return sm->st.epoch;
}

size_t rdlm_lease_sm_session_count(const rdlm_lease_sm_t *sm)
{
    return sm->st.n_sessions;
}

size_t rdlm_lease_sm_lock_count(const rdlm_lease_sm_t *sm)
{
    return sm->st.n_locks;
}

int rdlm_lease_sm_session_ttl(const rdlm_lease_sm_t *sm, uint64_t session,
                              uint32_t *ttl_ms_p, char *ns_p)
{
    const rdlm_lease_session_t *ses = rdlm_lease_state_session(&sm->st, session);

    if (ses == NULL) {
        return 0;
    }
    *ttl_ms_p = ses->ttl_ms;
    if (ns_p != NULL) {
        memcpy(ns_p, ses->ns, ses->ns_len + 1u);
    }
    return 1;
}

rdlm_status_t rdlm_lease_sm_session_owner(const rdlm_lease_sm_t *sm, uint64_t session,
                                          uint64_t nonce)
{
    const rdlm_lease_session_t *ses = rdlm_lease_state_session(&sm->st, session);

    if (ses == NULL) {
        return RDLM_ERR_LEASE_EXPIRED;
    }
    return ses->nonce == nonce ? RDLM_OK : RDLM_ERR_AUTH;
}

void rdlm_lease_sm_foreach_session(const rdlm_lease_sm_t *sm,
                                   void (*fn)(void *arg, uint64_t session, uint32_t ttl_ms),
                                   void *arg)
{
    for (size_t i = 0; i < sm->st.n_sessions; i++) {
        fn(arg, sm->st.sessions[i].id, sm->st.sessions[i].ttl_ms);
    }
}

rdlm_status_t rdlm_lease_sm_lock_info(const rdlm_lease_sm_t *sm, const char *name,
                                      uint64_t *holder_p, uint64_t *token_p,
                                      size_t *waiters_p)
{
    const rdlm_lease_lock_t *lock = rdlm_lease_state_lock(&sm->st, name);

    if (lock == NULL) {
        return RDLM_ERR_NOT_FOUND;
    }
    *holder_p = lock->holder;
    *token_p = lock->token;
    *waiters_p = lock->n_waiters;
    return RDLM_OK;
}
