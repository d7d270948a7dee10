/*
 * The bounded-bypass mutex's parts that its waiting (mutex_wait.c) shares with the
 * word's transitions (mutex.c). Internal to core/local; local.h has the mutex's
 * calls.
 */
#ifndef RDLM_MUTEX_H
#define RDLM_MUTEX_H

#include "local.h"

/** What rdlm_mutex_take_or_reserve did. */
enum rdlm_mutex_got { RDLM_GOT_NOTHING, RDLM_GOT_LOCK, RDLM_GOT_RESERVATION };

/** Take the lock if free (and not reserved for another), else reserve it if held
 *  and unreserved: one CAS loop. *prev_owner_p as for rdlm_mutex_take. */
enum rdlm_mutex_got rdlm_mutex_take_or_reserve(rdlm_local_t *lc, rdlm_entry_t *e,
                                               uint32_t *prev_owner_p);

/** Give this waiter's reservation up while the lock is held (a spinner that stops). */
void rdlm_mutex_unreserve(rdlm_local_t *lc, rdlm_entry_t *e);

/** Wake one sleeper unless a woken one is on its way (the mutex_woken count). */
void rdlm_mutex_wake_next(rdlm_local_t *lc, rdlm_entry_t *e);

/** Recovery: a dead holder's lock freed (DIED), a dead or departed heir's
 *  reservation dropped; 1 if the word changed. */
int rdlm_mutex_recover(rdlm_local_t *lc, uint32_t idx);

/** Leaving without the lock: drop a reservation, pass on a wake if the lock is free. */
void rdlm_mutex_leave(rdlm_local_t *lc, rdlm_entry_t *e);

/** The wait (mutex_wait.c): RDLM_OK holding the lock (*prev_owner_p: 0 or DIED), or
 *  RDLM_ERR_TIMEOUT, RDLM_ERR_CLOSED, RDLM_ERR_NO_RESOURCE, having left cleanly. */
rdlm_status_t rdlm_mutex_wait(rdlm_local_t *lc, uint32_t idx, uint64_t timeout_ns,
                              uint32_t *prev_owner_p);

#endif
