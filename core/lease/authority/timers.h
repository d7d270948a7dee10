/*
 * The leader's lease timers (timers.c): one deadline per session, and when each
 * session's EXPIRE is due. Pure functions of (timers, state machine, now): nothing here
 * reads a clock, logs or submits. The replica (replica.c) passes rdlm_clock's
 * milliseconds and submits the EXPIREs; the simulation (tests/sim) passes the fixture's
 * virtual time and submits them to its leader, so the simulated timers are these.
 *
 * Rules, as (event, effect on a session's timer):
 *   leader ready        every session without a timer: now + its TTL (a new leader
 *                       cannot know when the previous one last heard of it)
 *   OPEN committed      the new session: now + its TTL
 *   RENEW               deadline = max(deadline, now + TTL); refused (expired) if the
 *                       session has no timer, its EXPIRE is in flight, or it is gone
 *   deadline <= now     its EXPIRE is due once (in flight; renewals refused), unless the
 *                       leader may not log (a full disk): nothing expires then, the
 *                       sessions wait for space, fenced
 *   EXPIRE not sent     due again at a time the caller gives (rdlm_lease_timers_retry)
 *   EXPIRE lost        due again at once (it did not commit)
 *   CLOSE/EXPIRE        the session is gone from the state machine: its timer dropped
 *   stepped down        every timer dropped (rdlm_lease_timers_clear)
 *
 * Layout: an array sorted by session id (ids come from a counter, so an OPEN
 * appends), allocated once for the state machine's max_sessions, so arming never
 * fails. next_due_ms is a lower bound of the earliest deadline (renewals only move
 * deadlines later): the scan looks at the timers only once it may have passed.
 * Not thread-safe: one owner (the replica's loop thread, the simulation).
 */
#ifndef RDLM_LEASE_TIMERS_H
#define RDLM_LEASE_TIMERS_H

#include <stddef.h>
#include <stdint.h>

#include <rdlm/status.h>

#include "sm.h"

typedef struct rdlm_lease_timer {
    uint64_t session;
    uint64_t deadline_ms;
    int expiring; /* its EXPIRE is in flight */
} rdlm_lease_timer_t;

typedef struct rdlm_lease_timers {
    rdlm_lease_timer_t *t; /* sorted by session */
    size_t n, cap;
    uint64_t next_due_ms;
} rdlm_lease_timers_t;

/** Called by rdlm_lease_timers_scan for a session whose EXPIRE is due (marked in
 *  flight): submit it, or call rdlm_lease_timers_retry on that session. It must not
 *  change the timers otherwise. */
typedef void (*rdlm_lease_expire_func_t)(void *arg, uint64_t session, uint64_t now_ms);

/** Room for cap timers (at least the state machine's max_sessions); none armed.
 *  RDLM_ERR_NO_MEMORY (nothing to free) or RDLM_OK. */
rdlm_status_t rdlm_lease_timers_init(rdlm_lease_timers_t *tm, size_t cap);
void rdlm_lease_timers_free(rdlm_lease_timers_t *tm);

/** Drop every timer (the leader stepped down). */
void rdlm_lease_timers_clear(rdlm_lease_timers_t *tm);

/** Arm every session of sm that has no timer for its full TTL from now_ms (a leader
 *  that became ready, its log applied). */
void rdlm_lease_timers_lead(rdlm_lease_timers_t *tm, const rdlm_lease_sm_t *sm,
                            uint64_t now_ms);

/** A RENEW of session at now_ms: RDLM_OK and its TTL in *ttl_ms_p, or
 *  RDLM_ERR_LEASE_EXPIRED (no timer, EXPIRE in flight, or gone from sm). */
rdlm_status_t rdlm_lease_timers_renew(rdlm_lease_timers_t *tm, const rdlm_lease_sm_t *sm,
                                      uint64_t session, uint64_t now_ms,
                                      uint32_t *ttl_ms_p);

/** Call expire for every session whose deadline passed by now_ms and whose EXPIRE is
 *  not in flight, in session order, marking each in flight first; nothing while
 *  can_log is 0 (the leader may not log entries). */
void rdlm_lease_timers_scan(rdlm_lease_timers_t *tm, uint64_t now_ms, int can_log,
                            rdlm_lease_expire_func_t expire, void *arg);

/** The EXPIRE of session could not be submitted: due again at at_ms. */
void rdlm_lease_timers_retry(rdlm_lease_timers_t *tm, uint64_t session, uint64_t at_ms);

/** This leader's entry (op, session) was answered at now_ms: res is its result if it
 *  committed, NULL if not. Arms the session a committed OPEN made, drops the timer of
 *  a session a CLOSE or EXPIRE ended, makes an uncommitted EXPIRE due at once.
 *  1 if the entry ended session (the caller forgets it), else 0. */
int rdlm_lease_timers_applied(rdlm_lease_timers_t *tm, const rdlm_lease_sm_t *sm,
                              uint8_t op, uint64_t session, const rdlm_lease_result_t *res,
                              uint64_t now_ms);

#endif
