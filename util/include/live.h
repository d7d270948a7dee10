/*
 * Live handles: a process-wide set of the objects of one kind created and not yet
 * destroyed (contexts, lease sessions), so that a call through the handle of one
 * destroyed already is refused instead of touching freed memory. The set links a node
 * kept in each object; a handle is looked up by its node's address, and only the
 * nodes on the set are dereferenced. A mutex and a walk over the few objects of the
 * process, never a system call when uncontended. By address: an object created later
 * may reuse a destroyed one's memory, and a stale handle then names it.
 */
#ifndef RDLM_UTIL_LIVE_H
#define RDLM_UTIL_LIVE_H

#include <pthread.h>

/** The node each object of a set keeps. */
typedef struct rdlm_live_node {
    struct rdlm_live_node *next;
} rdlm_live_node_t;

/** A set; static ones start as RDLM_LIVE_SET_INIT. */
typedef struct rdlm_live_set {
    pthread_mutex_t lock; /* fork-guarded (fork_guard.h) from the first add */
    rdlm_live_node_t *head;
} rdlm_live_set_t;

#define RDLM_LIVE_SET_INIT {PTHREAD_MUTEX_INITIALIZER, NULL}

/** Enter node (not on the set) in set. Thread-safe. */
void rdlm_live_add(rdlm_live_set_t *set, rdlm_live_node_t *node);

/** Take node off set (before its object's memory is freed): 1, or 0 if it was not on
 *  it (destroyed already: the caller must not free it again). Thread-safe. */
int rdlm_live_remove(rdlm_live_set_t *set, rdlm_live_node_t *node);

/** 1 if node is on set; node is not dereferenced unless it is. Thread-safe. */
int rdlm_live_has(rdlm_live_set_t *set, const rdlm_live_node_t *node);

#endif
