/*
 * Fork guards: process-wide mutexes that no thread holds across fork(). A child
 * forked while another thread was inside rdlm may create a context of its own
 * (rdlm.h), which takes them; a mutex copied locked would stop it for good. The module
 * that owns such a mutex registers it once; fork's prepare handler takes every
 * registered mutex, the parent's and the child's handlers give them back. Only leaf
 * mutexes (none taken while another registered one is held) may be registered, so
 * the prepare handler's order cannot deadlock.
 */
#ifndef RDLM_UTIL_FORK_GUARD_H
#define RDLM_UTIL_FORK_GUARD_H

#include <pthread.h>

/** Register m; idempotent (a mutex and a scan of at most RDLM_FORK_GUARDS_MAX: call it
 *  where m is taken off the lock path, each time); more than RDLM_FORK_GUARDS_MAX is
 *  logged and not guarded. Thread-safe; call it without holding m. */
void rdlm_fork_guard(pthread_mutex_t *m);

#define RDLM_FORK_GUARDS_MAX 8

#endif
