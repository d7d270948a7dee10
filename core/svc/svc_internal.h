/*
 * What home_client.c, slot.c and slock.c share: a link to one home (as a client sees it),
 * the per-lock state of this process, and the counted remote operations on a home.
 */
#ifndef RDLM_SVC_INTERNAL_H
#define RDLM_SVC_INTERNAL_H

#include <pthread.h>

#include "atomics.h"
#include "bootstrap.h"
#include "svc.h"
#include "transport.h"

typedef struct rdlm_svc_link {
    char addr[RDLM_ADDR_MAX + 1]; /* the replica's client address (its --peers entry) */
    uint32_t id;                  /* the replica's id: its HOMES answer must say it */
    /* Readers: operations on the home. Writer: (re)connecting, tearing down. */
    pthread_rwlock_t lock;
    /* Held across each remote operation of a reader: one request at a time on the
     * connection to the home (rdlm_svc_cas). */
    pthread_mutex_t op_lock;
    int up;                 /* the fields below are valid */
    rdlm_atomic_u32_t dead; /* an operation found the home dead: reconnect */
    rdlm_atomic_u64_t ops;  /* remote operations of the lock path (rdlm_svc_home_ops) */
    uint64_t retry_ns;      /* no connect attempt before this time */
    rdlm_tl_boot_relay_t *relay;
    rdlm_tl_ctx_h tl;
    rdlm_tl_rkey_h rkey;
    uint64_t epoch;
    uint32_t slots, tags, tag;
    rdlm_atomic_u64_t nonce;  /* this process's MARKs at this home (home_layout.h) */
    rdlm_atomic_u32_t claims; /* claims of this process running at this home */
} rdlm_svc_link_t;

/* One lock this process uses: id 0 marks a free entry, gone a forgotten one (probes
 * pass on; slock.c). Guarded by the caller's node-local lock (one holder per process)
 * once found; users (under locks_lock) counts the calls using it, which keep it. */
typedef struct rdlm_svc_lock {
    uint64_t id;
    uint32_t users;
    int gone;
    uint64_t epoch; /* the home's life the slot, guess and held word belong to (0:
                       none): a reconnect within one life keeps them valid */
    uint32_t slot;
    uint64_t key;        /* the slot's key when it was resolved: the lock is there while
                            the key is (home_layout.h) */
    uint64_t guess;      /* the word's free value last seen here */
    uint64_t held;       /* the word while this process holds it, else 0 */
    uint64_t release_ns; /* this process's last release (CLOCK_MONOTONIC; slock.c) */
} rdlm_svc_lock_t;

struct rdlm_svc {
    rdlm_session_h session;
    const rdlm_atomic_u32_t *closing; /* the owner's destroy began (NULL: no owner's) */
    rdlm_tl_params_t tp;
    uint32_t n;
    rdlm_svc_link_t links[RDLM_ADDRS_COUNT];
    pthread_mutex_t locks_lock; /* insertion into and removal from locks, users */
    rdlm_svc_lock_t *locks;
    uint32_t locks_cap;
    uint64_t bypass_ns;   /* a waiter sets WANT after this long (RDLM_LOCK_BYPASS_US) */
    int planted_no_want;  /* RDLMTEST_SVC_NO_WANT (slock.c): tests only */
    int planted_reset;    /* RDLMTEST_SVC_RECLAIM_RESET (slot.c): tests only */
    int planted_no_check; /* RDLMTEST_SVC_RECLAIM_NO_CHECK (slock.c): tests only */
    int test_claim_stop;  /* RDLMTEST_SVC_CLAIM_STOP (slot.c): tests only */
};

/* Internal: the lock left its slot (slot.c re-keyed it): resolve it again. */
#define RDLM_SVC_MOVED RDLM_INPROGRESS

/** One pause of a poll: RDLM_ERR_TIMEOUT past deadline, else sleep and double (up to
 *  1 ms). */
rdlm_status_t rdlm_svc_pause(uint64_t *pause_p, uint64_t deadline);

/** One pause of an acquire's wait: rdlm_svc_pause, then RDLM_ERR_CLOSED if the owner's
 *  destroy began (svc->closing), so that the destroy does not free the service under
 *  a waiter. (A release's pauses do not look: the destroy's releases go on.) */
rdlm_status_t rdlm_svc_wait(const rdlm_svc_t *svc, uint64_t *pause_p, uint64_t deadline);

/* One remote compare-and-swap / fetch-or / read of home l, counted in
 * rdlm_svc_home_ops; blocking, and one at a time per link (l->op_lock), whichever
 * threads of this process call them.
 *
 * One at a time, because the home must never owe a dead client two answers: UCX
 * aborts the home's process when it cannot send one (transport/ucx/ucx.c,
 * rdlm_ucx_answer_only), and once a client died, the first answer the home sends on
 * its connection (made while the home was stopped or slow) draws a reset from the
 * client's kernel that fails the second. Two threads waiting on two locks of one home
 * each left a read at a stopped home: killed, their process took the resumed home
 * down. */
static inline rdlm_status_t rdlm_svc_cas(rdlm_svc_link_t *l, uint64_t off, uint64_t compare,
                                         uint64_t swap, uint64_t *old_p)
{
    rdlm_status_t st;

    rdlm_fetch_add(&l->ops, 1, RDLM_RELAXED);
    pthread_mutex_lock(&l->op_lock);
    st = rdlm_tl_cswap64(l->tl, l->rkey, off, compare, swap, old_p);
    pthread_mutex_unlock(&l->op_lock);
    return st;
}

static inline rdlm_status_t rdlm_svc_or(rdlm_svc_link_t *l, uint64_t off, uint64_t bits,
                                        uint64_t *old_p)
{
    rdlm_status_t st;

    rdlm_fetch_add(&l->ops, 1, RDLM_RELAXED);
    pthread_mutex_lock(&l->op_lock);
    st = rdlm_tl_for64(l->tl, l->rkey, off, bits, old_p);
    pthread_mutex_unlock(&l->op_lock);
    return st;
}

static inline rdlm_status_t rdlm_svc_get(rdlm_svc_link_t *l, uint64_t off, void *buf,
                                         size_t len)
{
    rdlm_status_t st;

    rdlm_fetch_add(&l->ops, 1, RDLM_RELAXED);
    pthread_mutex_lock(&l->op_lock);
    st = l->tl->rma->get(l->tl, l->rkey, off, buf, len);
    pthread_mutex_unlock(&l->op_lock);
    return st;
}

/** Resolve lock k's slot at home l (held): the slot of its bucket whose key names it,
 *  else one claimed for it (slot.c). Sets k->slot, k->key and k->guess. Blocking, up
 *  to deadline (CLOCK_MONOTONIC ns; UINT64_MAX: none) while another client re-keys a
 *  slot of the name. RDLM_ERR_NO_RESOURCE (every slot of the bucket held: logged),
 *  RDLM_ERR_TIMEOUT, RDLM_ERR_CLOSED (rdlm_svc_wait), RDLM_ERR_LEASE_EXPIRED, the
 *  transport's errors. */
rdlm_status_t rdlm_svc_slot_resolve(rdlm_svc_t *svc, rdlm_svc_link_t *l, rdlm_svc_lock_t *k,
                                    uint64_t deadline);

/** Slot s of home l showed MARK mark: if it was left (its client's session ended, by
 *  FATE; or it is this process's and none of its claims at l runs), give the slot
 *  back (no key, a fresh free word) and return 1; also 1 when the word is no longer
 *  mark (read again); else 0. *st_p: the operations' status. */
int rdlm_svc_slot_settle(rdlm_svc_t *svc, rdlm_svc_link_t *l, uint32_t s, uint64_t mark,
                         rdlm_status_t *st_p);

/** Whether the session that drew tag at home l has ended (FATE at the authority);
 *  *st_p: RDLM_ERR_LEASE_EXPIRED when this session's own lease is lost. */
int rdlm_svc_holder_ended(rdlm_svc_t *svc, rdlm_svc_link_t *l, uint64_t tag,
                          rdlm_status_t *st_p);

/** Hold home h for an operation (a read lock), connecting first if it is not up.
 *  RDLM_OK: call rdlm_svc_link_put after. Else RDLM_ERR_UNAVAILABLE (not reachable,
 *  or a connect attempt less than 200 ms ago failed), RDLM_ERR_UNSUPPORTED,
 *  RDLM_ERR_NO_RESOURCE (no tag left), the transport's errors; nothing held then. */
rdlm_status_t rdlm_svc_link_get(rdlm_svc_t *svc, uint32_t h, rdlm_svc_link_t **link_p);

/** Let go of a home held by rdlm_svc_link_get; status is the operation's result
 *  (RDLM_ERR_PEER_DEAD marks the home dead: the next get reconnects). */
void rdlm_svc_link_put(rdlm_svc_link_t *home, rdlm_status_t status);

#endif
