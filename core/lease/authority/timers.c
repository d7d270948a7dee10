/*
 * The leader's lease timers (timers.h): a sorted array, binary-searched by session.
 */
#include "timers.h"

#include <stdlib.h>
#include <string.h>

rdlm_status_t rdlm_lease_timers_init(rdlm_lease_timers_t *tm, size_t cap)
{
    *tm = (rdlm_lease_timers_t){.cap = cap, .next_due_ms = UINT64_MAX};
    tm->t = calloc(cap, sizeof(tm->t[0]));
    return tm->t != NULL ? RDLM_OK : RDLM_ERR_NO_MEMORY;
}

void rdlm_lease_timers_free(rdlm_lease_timers_t *tm)
{
    free(tm->t);
    tm->t = NULL;
    tm->n = tm->cap = 0;
}

void rdlm_lease_timers_clear(rdlm_lease_timers_t *tm)
{
    tm->n = 0;
    tm->next_due_ms = UINT64_MAX;
}

/* Position of session in the timers (where it would go if absent). */
static size_t rdlm_lease_timers_pos(const rdlm_lease_timers_t *tm, uint64_t session,
                                    int *found_p)
{
    size_t lo = 0, hi = tm->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (tm->t[mid].session < session) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    *found_p = lo < tm->n && tm->t[lo].session == session;
    return lo;
}

/* Deadline of session = max(its deadline, deadline_ms); a new timer if it has none
 * (room for every session the state machine admits was allocated at init). */
static void rdlm_lease_timers_arm(rdlm_lease_timers_t *tm, uint64_t session,
                                  uint64_t deadline_ms)
{
    int found;
    size_t i = rdlm_lease_timers_pos(tm, session, &found);
    rdlm_lease_timer_t *t = &tm->t[i];

    if (found) {
        t->deadline_ms = t->deadline_ms > deadline_ms ? t->deadline_ms : deadline_ms;
        return;
    }
    memmove(t + 1, t, (tm->n - i) * sizeof(*t));
    *t = (rdlm_lease_timer_t){.session = session, .deadline_ms = deadline_ms};
    tm->n++;
    if (deadline_ms < tm->next_due_ms) {
        tm->next_due_ms = deadline_ms;
    }
}

static void rdlm_lease_timers_drop(rdlm_lease_timers_t *tm, uint64_t session)
{
    int found;
    size_t i = rdlm_lease_timers_pos(tm, session, &found);

    if (found) {
        memmove(&tm->t[i], &tm->t[i + 1], (tm->n - i - 1) * sizeof(tm->t[0]));
        tm->n--;
    }
}

typedef struct rdlm_lease_timers_lead_arg {
    rdlm_lease_timers_t *tm;
    uint64_t now_ms;
} rdlm_lease_timers_lead_arg_t;

/* foreach_session callback of rdlm_lease_timers_lead. */
static void rdlm_lease_timers_lead_one(void *arg, uint64_t session, uint32_t ttl_ms)
{
    rdlm_lease_timers_lead_arg_t *a = arg;
    int found;

    rdlm_lease_timers_pos(a->tm, session, &found);
    if (!found) {
        rdlm_lease_timers_arm(a->tm, session, a->now_ms + ttl_ms);
    }
}

void rdlm_lease_timers_lead(rdlm_lease_timers_t *tm, const rdlm_lease_sm_t *sm,
                            uint64_t now_ms)
{
    rdlm_lease_timers_lead_arg_t a = {.tm = tm, .now_ms = now_ms};

    rdlm_lease_sm_foreach_session(sm, rdlm_lease_timers_lead_one, &a);
}

rdlm_status_t rdlm_lease_timers_renew(rdlm_lease_timers_t *tm, const rdlm_lease_sm_t *sm,
                                      uint64_t session, uint64_t now_ms, uint32_t *ttl_ms_p)
{
    int found;
    size_t i = rdlm_lease_timers_pos(tm, session, &found);
    uint32_t ttl_ms;

    if (!found || tm->t[i].expiring ||
        !rdlm_lease_sm_session_ttl(sm, session, &ttl_ms, NULL)) {
        return RDLM_ERR_LEASE_EXPIRED;
    }
    rdlm_lease_timers_arm(tm, session, now_ms + ttl_ms);
    *ttl_ms_p = ttl_ms;
    return RDLM_OK;
}

void rdlm_lease_timers_scan(rdlm_lease_timers_t *tm, uint64_t now_ms, int can_log,
                            rdlm_lease_expire_func_t expire, void *arg)
{
    uint64_t next = UINT64_MAX;

    if (now_ms < tm->next_due_ms || !can_log) {
        return; /* an EXPIRE is an entry: the session waits for space (fenced) */
    }
    for (size_t i = 0; i < tm->n; i++) {
        rdlm_lease_timer_t *t = &tm->t[i];

        if (!t->expiring && t->deadline_ms <= now_ms) {
            t->expiring = 1;
            expire(arg, t->session, now_ms);
        }
        if (!t->expiring && t->deadline_ms < next) {
            next = t->deadline_ms;
        }
    }
    tm->next_due_ms = next;
}

void rdlm_lease_timers_retry(rdlm_lease_timers_t *tm, uint64_t session, uint64_t at_ms)
{
    int found;
    size_t i = rdlm_lease_timers_pos(tm, session, &found);

    if (found) {
        tm->t[i].expiring = 0;
        tm->t[i].deadline_ms = at_ms;
        if (at_ms < tm->next_due_ms) {
            tm->next_due_ms = at_ms;
        }
    }
}

int rdlm_lease_timers_applied(rdlm_lease_timers_t *tm, const rdlm_lease_sm_t *sm,
                              uint8_t op, uint64_t session, const rdlm_lease_result_t *res,
                              uint64_t now_ms)
{
    uint32_t ttl_ms;

    if (res == NULL) {
        if (op == RDLM_LEASE_OP_EXPIRE) {
            rdlm_lease_timers_retry(tm, session, 0); /* the next scan submits it again */
        }
        return 0;
    }
    if (op == RDLM_LEASE_OP_OPEN && res->status == RDLM_OK &&
        rdlm_lease_sm_session_ttl(sm, res->session, &ttl_ms, NULL)) {
        rdlm_lease_timers_arm(tm, res->session, now_ms + ttl_ms);
    }
    if ((op == RDLM_LEASE_OP_CLOSE || op == RDLM_LEASE_OP_EXPIRE) &&
        !rdlm_lease_sm_session_ttl(sm, session, &ttl_ms, NULL)) {
        rdlm_lease_timers_drop(tm, session);
        return 1;
    }
    return 0;
}
