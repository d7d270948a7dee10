/*
 * The home's records of the home-served queue lock and semaphore (amq.h has the
 * protocol): shared by amq_home.c (requests, answers, the outbox), amq_sem_home.c (a
 * semaphore's record) and amq_recover.c (what the home does when a lock's holder
 * died). Private to core/global.
 */
#ifndef RDLM_GLOBAL_AMQ_HOME_H
#define RDLM_GLOBAL_AMQ_HOME_H

#include "amq.h"

/* How often the home looks for holders that died with waiters behind them. */
#define RDLM_AMQ_SCAN_NS 100000000ull

typedef struct rdlm_amq_rec {
    uint64_t token;      /* lock: the last token issued */
    uint64_t granted;    /* lock: the holder's GRANT token, which names its use */
    uint32_t holder;     /* lock: waiter entry + 1 of the holder; 0: free */
    uint32_t head, tail; /* the queue: waiter entries + 1 */
    uint32_t reported;   /* lock: the holder whose death was last reported, + 1 */
    uint32_t permits;    /* semaphore: N (0: a lock's record) */
    uint32_t taken;      /* semaphore: permits granted and not given back */
    uint8_t granted_dead; /* lock: the holder's GRANT said DEAD */
    uint8_t dead_pending; /* lock: freed by a DEAD release with nobody waiting: the
                             next grant says DEAD */
    /* lock, with a lease: the use (holder, granted) the scans watch while someone
     * waits, and when the home next asks whether its holder's lease ended (a paused
     * holder is never seen dead: amq_recover.c) */
    uint32_t watch_holder;
    uint64_t watch_granted, watch_ask_at;
    uint8_t watch_said; /* its lease's end was logged */
} rdlm_amq_rec_t;

typedef struct rdlm_amq_waiter {
    uint32_t next;     /* the next in its queue, entry + 1 */
    uint32_t last_seq; /* the newest request seen from this queue node */
    uint32_t k;        /* semaphore: the permits it waits for */
    uint8_t queued;    /* last_seq waits in a queue */
} rdlm_amq_waiter_t;

/* Permits one rank holds at one semaphore (amq_sem_held.c). */
typedef struct rdlm_amq_held {
    uint32_t slot1; /* the semaphore's home slot + 1; 0: an empty entry */
    uint32_t rank;
    uint32_t k;        /* permits held */
    uint32_t returned; /* its permits came back when its lease ended */
} rdlm_amq_held_t;

typedef struct rdlm_amq_out {
    uint32_t dst;
    rdlm_amq_msg_t m;
} rdlm_amq_out_t;

struct rdlm_amq_home {
    pthread_mutex_t lock;       /* everything below */
    rdlm_amq_rec_t *recs;       /* [home_slots] */
    rdlm_amq_waiter_t *waiters; /* [size * RDLM_GLOBAL_QNODES] */
    rdlm_amq_out_t *out;        /* ring of cap answers */
    uint32_t cap, out_head;
    rdlm_atomic_u32_t out_n;   /* read without the lock by rdlm_amq_flush */
    rdlm_atomic_u32_t waiting; /* requests queued over all records */
    uint64_t scan_at;
    rdlm_amq_held_t *held; /* [held_cap], a power of 2 (amq_sem_held.c) */
    uint32_t held_cap, held_n;
    rdlm_atomic_u32_t tried_busy; /* leases: a SEM_TRY was refused since the last scan */
};

/* A lock whose holder died with waiters behind it, for recovery (leases). */
typedef struct rdlm_amq_dead {
    uint32_t slot;   /* its home slot */
    uint32_t holder; /* its holder's waiter entry + 1 when found */
    uint64_t granted; /* and the holder's GRANT token (its use) */
    int first;       /* found for the first time (say so) */
    int held_long;   /* no process of its node is known dead, but the holder held
                        longer than the lease TTL with waiters: recovery asks the
                        authority whether its lease ended first */
} rdlm_amq_dead_t;

/* A semaphore's holder that died with waiters behind it, for recovery (leases). */
typedef struct rdlm_amq_sem_dead {
    uint32_t slot, rank;
} rdlm_amq_sem_dead_t;

/* How often the home asks the authority about one lock's holder that held longer than
 * the lease TTL with waiters: every TTL / this, and no more often than every scan. */
#define RDLM_AMQ_ASK_PER_TTL 8u

/* Most of them one scan hands to recovery (the rest: the next scan, 100 ms later). */
#define RDLM_AMQ_RECOVER_MAX 8u

/** Take waiter entry wi out of rec's queue; 1 if it was there. Holding h->lock. */
int rdlm_amq_unlink(struct rdlm_amq_home *h, rdlm_amq_rec_t *rec, uint32_t wi);

/** Grant rec to waiter entry wi (its request seq); flags: RDLM_AMQ_F_DEAD, the holder
 *  before died holding. Holding h->lock; the answer goes to the outbox. */
void rdlm_amq_grant(rdlm_global_t *d, rdlm_amq_rec_t *rec, uint32_t wi, uint32_t seq,
                    uint16_t flags);

/** Queue answer m for rank dst, or hand it over at once when dst is this process.
 *  Holding h->lock. */
void rdlm_amq_out(rdlm_global_t *d, uint32_t dst, const rdlm_amq_msg_t *m);

/** Refuse waiter entry wi's request seq with type (BUSY, CANCELLED, DEAD, LOST): its
 *  answer goes to the waiter's rank. Holding h->lock. */
void rdlm_amq_refuse(rdlm_global_t *d, uint32_t wi, uint32_t seq, uint8_t type);

/** Append waiter entry wi to rec's queue. Holding h->lock. */
void rdlm_amq_enqueue(struct rdlm_amq_home *h, rdlm_amq_rec_t *rec, uint32_t wi);

/* ---- a semaphore at its home (amq_sem_home.c); holding h->lock ------------------- */

/** SEM_ACQ, SEM_TRY (new, from waiter entry wi) or SEM_COUNT m for rec. */
void rdlm_amq_sem_home(rdlm_global_t *d, rdlm_amq_rec_t *rec, uint32_t wi,
                       const rdlm_amq_msg_t *m);

/** SEM_REL of k from rank src: the queue's head in while it fits. */
void rdlm_amq_sem_give_back(rdlm_global_t *d, rdlm_amq_rec_t *rec, uint32_t src,
                            uint32_t k);

/** Grant from the head of rec's queue while the head's k fit; a waiter whose process
 *  the transport reports dead is dropped instead (its permits would be lost with it). */
void rdlm_amq_sem_grant_ready(rdlm_global_t *d, rdlm_amq_rec_t *rec);

/* ---- the permits each rank holds at a semaphore (amq_sem_held.c) ------------------ */

/** Note k permits granted to rank at semaphore slot. Holding h->lock. */
void rdlm_amq_held_grant(struct rdlm_amq_home *h, uint32_t slot, uint32_t rank, uint32_t k);

/** rank's SEM_REL of k at slot: the permits to give back (k; 0 if its permits came
 *  back when its lease ended). Holding h->lock. */
uint32_t rdlm_amq_held_release(struct rdlm_amq_home *h, uint32_t slot, uint32_t rank,
                               uint32_t k);

/** Holders whose process is gone, into dead[] (at most max), of the semaphores someone
 *  waits for, or with any_sem (a SEM_TRY was refused since the last scan) of every
 *  semaphore; their count. Holding h->lock. */
uint32_t rdlm_amq_held_dead(rdlm_global_t *d, rdlm_amq_sem_dead_t *dead, uint32_t max,
                            int any_sem);

/** With a lease: if the authority ended dead's lease, its permits come back and the
 *  waiters that now fit are granted. Not holding h->lock (it asks the authority). */
void rdlm_amq_sem_recover(rdlm_global_t *d, const rdlm_amq_sem_dead_t *dead);

/** Recover the lock of dead (amq_recover.c), with a lease, not holding h->lock. */
void rdlm_amq_recover(rdlm_global_t *d, const rdlm_amq_dead_t *dead);

#endif
