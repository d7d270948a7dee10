/*
 * What homes.c and slock.c share: a link to one home (as a client sees it), and the
 * per-lock state of this process.
 */
#ifndef RDLM_SVC_INTERNAL_H
#define RDLM_SVC_INTERNAL_H

#include <pthread.h>

#include "atomics.h"
#include "bootstrap.h"
#include "svc.h"
#include "transport.h"

typedef struct rdlm_svc_link {
    char addr[RDLM_ADDR_MAX + 1];
    /* Readers: operations on the home. Writer: (re)connecting, tearing down. */
    pthread_rwlock_t lock;
    int up;                 /* the fields below are valid */
    rdlm_atomic_u32_t dead; /* an operation found the home dead: reconnect */
    rdlm_atomic_u64_t ops;  /* remote operations of the lock path (rdlm_svc_home_ops) */
    uint64_t retry_ns;      /* no connect attempt before this time */
    rdlm_tl_boot_relay_t *relay;
    rdlm_tl_ctx_h tl;
    rdlm_tl_rkey_h rkey;
    uint64_t epoch;
    uint32_t slots, tags, tag;
} rdlm_svc_link_t;

/* One lock this process used: id 0 marks a free entry. Guarded by the caller's
 * node-local lock (one holder per process) once found. */
typedef struct rdlm_svc_lock {
    uint64_t id;
    uint64_t epoch; /* the home's life the slot, guess and held word belong to (0:
                       none): a reconnect within one life keeps them valid */
    uint32_t slot;
    uint64_t guess; /* the word's free value last seen here */
    uint64_t held;  /* the word while this process holds it, else 0 */
} rdlm_svc_lock_t;

struct rdlm_svc {
    rdlm_session_h session;
    rdlm_tl_params_t tp;
    uint32_t n;
    rdlm_svc_link_t links[RDLM_ADDRS_COUNT];
    pthread_mutex_t locks_lock; /* insertion into locks */
    rdlm_svc_lock_t *locks;
    uint32_t locks_cap;
};

/** Hold home h for an operation (a read lock), connecting first if it is not up.
 *  RDLM_OK: call rdlm_svc_link_put after. Else RDLM_ERR_UNAVAILABLE (not reachable,
 *  or a connect attempt less than 200 ms ago failed), RDLM_ERR_UNSUPPORTED,
 *  RDLM_ERR_NO_RESOURCE (no tag left), the transport's errors; nothing held then. */
rdlm_status_t rdlm_svc_link_get(rdlm_svc_t *svc, uint32_t h, rdlm_svc_link_t **link_p);

/** Let go of a home held by rdlm_svc_link_get; status is the operation's result
 *  (RDLM_ERR_PEER_DEAD marks the home dead: the next get reconnects). */
void rdlm_svc_link_put(rdlm_svc_link_t *home, rdlm_status_t status);

#endif
