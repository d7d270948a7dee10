/*
 * core/global: the cross-node lock manager. A process's distributed state: the job's
 * nodes, the transport context, its home region (node leaders only) and its queue
 * nodes, and the operations the public API calls for exclusive locks.
 *
 * Protocol (docs/distributed-locks.md; spin models tests/model/dist_lock.pml and
 * glock_recovery.pml; glock.c has the details):
 *   global word W at the home   FREE(t) or HELD(first?, tail qnode.gen)
 *   holder word H at the home   the qnode.gen the lock was last handed to
 *   queue node q of a process   state: IDLE | WAITING(gen) | ABANDONED(gen) | GRANTED(t)
 *                               next:  NOLINK(gen) or the successor's qnode.gen
 *   acquire   q := WAITING(g); CAS W: FREE(t) -> HELD(first, q.g): token t+1;
 *             HELD(p) -> HELD(q.g): CAS p.next NOLINK -> q.g, wait for GRANTED(t)
 *   release   n := Q.next; none: CAS(W, HELD(Q) -> FREE(t)), else wait for next;
 *             H := n; CAS(n.state, WAITING(g) -> GRANTED(t+1)); ABANDONED: pass over
 *   recovery  a waiter whose predecessor p is dead and whose lease the authority
 *             ended takes over if p held (first, or H names p or itself)
 *   cohorts   (cohort.c) the node-local lock comes first; the node's holder alone
 *             touches W, and passes it to a local waiter up to the cohort bound.
 */
#ifndef RDLM_GLOBAL_H
#define RDLM_GLOBAL_H

#include <pthread.h>
#include <stdint.h>

#include <rdlm/status.h>

#include "atomics.h"
#include "config.h"
#include "epoch.h"
#include "links.h"
#include "local.h"
#include "nodes.h"
#include "peers.h"
#include "transport.h"

/* Queue nodes per process: a process waits on at most this many locks at once
 * (threads x locks), plus abandoned nodes not yet passed over. */
#define RDLM_GLOBAL_QNODES 32u
#define RDLM_GLOBAL_QNODE_BYTES 16u
/* After the queue nodes in the same region: the goodbye word, which every other
 * process adds 1 to when it destroys its context (goodbye.c). */
#define RDLM_GLOBAL_BYE_OFFSET (RDLM_GLOBAL_QNODES * RDLM_GLOBAL_QNODE_BYTES)
#define RDLM_GLOBAL_QMEM_BYTES (RDLM_GLOBAL_BYE_OFFSET + 8u)
/* Home slots: [tag 8 | word 8], the tag the name's id (remote open addressing); in a
 * context whose processes hold leases [tag 8 | word 8 | holder 8], the holder word a
 * lock's H (glock.c, lock recovery). */
#define RDLM_GLOBAL_SLOT_BYTES 16u
#define RDLM_GLOBAL_SLOT_BYTES_HOLDER 24u
#define RDLM_GLOBAL_PROBES 64u
#define RDLM_GLOBAL_SEQ_BITS 40
#define RDLM_GLOBAL_SEQ_MASK ((1ull << RDLM_GLOBAL_SEQ_BITS) - 1)
/* Largest token epoch: a token, epoch << 40 | sequence, stays below 2^63, so a global
 * word FREE(token) never has the HELD bit. */
#define RDLM_GLOBAL_EPOCH_MAX RDLM_EPOCH_MAX

/* Words (glock.c documents the encodings). A queue node id (qid) is rank << 8 | index;
 * a reference to one use of it (ref) adds its generation in bits 48..61. */
#define RDLM_W_HELD (1ull << 63)
#define RDLM_W_FIRST (1ull << 62)
#define RDLM_QID(rank, q) (((uint64_t)(rank) << 8) | (q))
#define RDLM_QID_MASK ((1ull << 48) - 1)
#define RDLM_QID_RANK(id) ((uint32_t)(((id)&RDLM_QID_MASK) >> 8))
#define RDLM_QID_INDEX(id) ((uint32_t)((id)&0xffu))
#define RDLM_QGEN_MASK ((1u << 14) - 1)
#define RDLM_QREF(qid, gen) (((qid)&RDLM_QID_MASK) | ((uint64_t)(gen) << 48))
#define RDLM_QREF_GEN(ref) ((uint32_t)((ref) >> 48) & RDLM_QGEN_MASK)
#define RDLM_QREF_OF(word) ((word) & ~(RDLM_W_HELD | RDLM_W_FIRST))
#define RDLM_Q_IDLE 0ull
#define RDLM_Q_WAITING(gen) (1ull | (uint64_t)(gen) << 2)
/* ABANDONED(gen, ahead, first): bit 63 (no token reaches it), then the place the
 * abandoner queued behind (ahead: a ref, its qid in 32 bits, as ranks are below 2^24,
 * and its generation: 46 bits) << 17, whether ahead holds the lock (first) << 16,
 * gen << 2, 2. With 3 in place of 2 the place is sealed: its owner's re-adoption
 * (glock.c) expects the ABANDONED value it wrote, which a sealed value never equals.
 * PASSED(gen, holder): sealed once a pass went over the place, naming the holder
 * passing the lock through it (first 1); a waiter about to take over from a dead
 * holder seals the places it walked over as they are (rdlm_q_sealed). */
#define RDLM_Q_ABANDONED_BIT (1ull << 63)
#define RDLM_Q_IS_GRANTED(state)                                                           \
    ((state) >= (1ull << RDLM_GLOBAL_SEQ_BITS) &&                                          \
     !((state)&RDLM_Q_ABANDONED_BIT)) /* token                                             \
                                       */
#define RDLM_Q_NOLINK(gen) ((uint64_t)(gen) << 2)
#define RDLM_Q_LINK(ref) (RDLM_W_HELD | (ref))

static inline uint64_t rdlm_q_abandoned(uint32_t gen, uint64_t ahead, int first)
{
    uint64_t packed = (ahead & 0xffffffffull) | (uint64_t)RDLM_QREF_GEN(ahead) << 32;

    return RDLM_Q_ABANDONED_BIT | packed << 17 | (uint64_t)(first != 0) << 16 |
           (uint64_t)gen << 2 | 2u;
}

static inline uint64_t rdlm_q_sealed(uint64_t abandoned)
{
    return abandoned | 1u;
}

static inline uint64_t rdlm_q_passed(uint32_t gen, uint64_t holder)
{
    return rdlm_q_sealed(rdlm_q_abandoned(gen, holder, 1));
}

/* Whether state is ABANDONED, sealed or not, in generation gen (whatever it names
 * ahead). */
static inline int rdlm_q_is_abandoned(uint64_t state, uint32_t gen)
{
    return (state & (RDLM_Q_ABANDONED_BIT | 0xfffeull)) ==
           (RDLM_Q_ABANDONED_BIT | (uint64_t)gen << 2 | 2u);
}

/* Whether state is ABANDONED and not sealed (any generation). */
static inline int rdlm_q_is_unpassed(uint64_t state)
{
    return (state & (RDLM_Q_ABANDONED_BIT | 3u)) == (RDLM_Q_ABANDONED_BIT | 2u);
}

/* The generation of a WAITING, ABANDONED or PASSED state, or of a NOLINK next. */
static inline uint32_t rdlm_q_gen(uint64_t word)
{
    return (uint32_t)(word >> 2) & RDLM_QGEN_MASK;
}

/* The place an ABANDONED state names ahead, and whether that one holds the lock. */
static inline uint64_t rdlm_q_abandoned_ahead(uint64_t state)
{
    uint64_t packed = (state >> 17) & ((1ull << 46) - 1);

    return RDLM_QREF(packed & 0xffffffffull, (uint32_t)(packed >> 32));
}

static inline int rdlm_q_abandoned_first(uint64_t state)
{
    return (int)((state >> 16) & 1u);
}

/* Dissemination rounds of the collective barrier: enough for 2^32 nodes. The flags
 * live after the home slots in each leader's home region. */
#define RDLM_GLOBAL_ROUNDS 32u
/* Most processes whose queue nodes have enqueue intents at the homes (glock.c). */
#define RDLM_GLOBAL_INTENT_RANKS (1u << 26)
/* Active-message ids: the barrier's dissemination flags; the home-served lock's
 * requests (to a home) and answers (amq.h). */
#define RDLM_GLOBAL_AM_BARRIER 0u
#define RDLM_GLOBAL_AM_LOCK_REQ 1u
#define RDLM_GLOBAL_AM_LOCK_ANS 2u

/* Counter entry flag (counter_flags): one shard per node. */
#define RDLM_GLOBAL_COUNTER_SHARDED 1u

typedef struct rdlm_global_stats {
    rdlm_atomic_u64_t combined; /* counter requests served in another's batch */
    rdlm_atomic_u64_t barriers;
    rdlm_atomic_u64_t barrier_msgs;
    rdlm_atomic_u64_t global_acquires;
    rdlm_atomic_u64_t local_handoffs;
    rdlm_atomic_u64_t home_ops;
    rdlm_atomic_u64_t home_ops_posted; /* of home_ops: posted, not waited for */
    rdlm_atomic_u64_t peer_ops;
} rdlm_global_stats_t;

/* A release whose free of the global word is a posted CAS (glock.c). */
#define RDLM_GLOBAL_POSTED 4u
enum {
    RDLM_GLOBAL_POSTED_FREE,     /* slot unused */
    RDLM_GLOBAL_POSTED_FILLING,  /* claimed by a releaser */
    RDLM_GLOBAL_POSTED_POSTED,   /* the CAS is in flight or done, not finished */
    RDLM_GLOBAL_POSTED_FINISHING /* claimed by the thread that finishes it */
};
typedef struct rdlm_global_posted {
    rdlm_tl_op_t op;
    rdlm_atomic_u32_t state;
    uint32_t node; /* the global word: its home node and offset */
    uint64_t offset;
    uint64_t qid;   /* this process's queue node whose use the release ends */
    uint64_t held;  /* what the CAS expected: HELD of that use */
    uint64_t token; /* the token the lock was held with */
} rdlm_global_posted_t;

/* Breaking a global lock whose holder died (glock.c): what the lease authority says.
 * Installed by the API layer when the context holds a lease (rdlm_global_set_recovery). */
typedef struct rdlm_global_recovery {
    /* 1 if rank's lease ended by the authority's committed decision, 0 if not (yet) or
     * unknown (errors are logged by the callee). */
    int (*ended)(void *arg, uint32_t rank);
    /* A new token epoch, larger than every one before (<= RDLM_GLOBAL_EPOCH_MAX). */
    rdlm_status_t (*new_epoch)(void *arg, uint32_t *epoch_p);
    void *arg;
    /* The lease TTL: a home asks whether the lease of a holder that is not known dead
     * ended (a paused holder) once it held that long with waiters (amq_recover.c). */
    uint64_t ttl_ns;
} rdlm_global_recovery_t;

typedef struct rdlm_global_params {
    const rdlm_tl_bootstrap_t *bootstrap; /* kept until rdlm_global_destroy returns */
    const char *transport;                /* backend name */
    rdlm_tl_params_t tl;                  /* progress_thread, print_stats */
    int barrier_only; /* only the collective barrier runs: it progresses by itself */
    uint32_t virtual_nodes;
    uint32_t cohort_bound;
    uint32_t home_slots;
    const char *job;     /* this process's job name; rank 0's wins */
    const char *hostkey; /* NULL: rdlm_nodes_hostkey */
    int holder_words;    /* home slots carry holder words, for lock recovery (rank 0's
                            wins): the context will hold leases */
    uint32_t epoch;      /* token epoch committed by the lease authority (rank 0's
                            wins); 0: rank 0 takes its host's (rdlm_epoch_host) */
    int lock_am;         /* RDLM_LOCK_AM: the home-served lock where it applies (amq.h;
                            on only if every process says so) */
    rdlm_switch_t barrier_links; /* RDLM_BARRIER_LINKS (barrier.c) */
} rdlm_global_params_t;

typedef struct rdlm_global {
    const rdlm_tl_bootstrap_t *bootstrap; /* kept for collectives after create */
    rdlm_nodes_t nodes;
    uint32_t rank;
    uint32_t cohort_bound;
    uint32_t home_slots;
    uint32_t epoch;
    /* Rank 0's random id of the context: it names the node segments, so two contexts
     * never share one, whether of one job (two communicators, also disjoint ones
     * whose rank 0s both count their first context, or one after another) or of two
     * jobs with one name (two srun steps of an allocation). */
    uint64_t ctx_id;
    uint32_t slot_bytes; /* RDLM_GLOBAL_SLOT_BYTES, or _HOLDER (rank 0's holder_words) */
    int intents;         /* home regions end with enqueue intents (glock.c, "Intents"): with
                            holder words, and at most RDLM_GLOBAL_INTENT_RANKS processes */
    char job[64];        /* rank 0's job name */
    rdlm_tl_ctx_h tl;
    rdlm_tl_caps_t caps;
    rdlm_tl_mem_h qmem;    /* own queue nodes */
    rdlm_atomic_u64_t *qn; /* their words: [2 * RDLM_GLOBAL_QNODES] */
    rdlm_tl_mem_h homemem; /* home slots (leaders only) */
    char *blobs;           /* packed keys: per rank, [qnode key | home key] */
    size_t blob_len;       /* per key */
    pthread_mutex_t keys_lock;
    rdlm_tl_rkey_h *qkeys;             /* [size], unpacked lazily */
    rdlm_tl_rkey_h *homekeys;          /* [nodes], unpacked lazily */
    rdlm_atomic_u32_t qclaim;          /* own queue nodes being claimed (bitmap) */
    uint16_t qgen[RDLM_GLOBAL_QNODES]; /* generation of each own queue node's last use */
    rdlm_atomic_u64_t qword[RDLM_GLOBAL_QNODES]; /* glock.c: the word it queued on */
    rdlm_atomic_u64_t calm_hint;       /* glock.c: per global word (hashed), whether its
                                          last release here found no successor (then
                                          the next one posts its free) */
    rdlm_atomic_u64_t freed_hint;      /* glock.c: per global word (hashed), whether this
                                          process was the last to free it */
    rdlm_global_recovery_t recovery;   /* ended == NULL: no recovery (no lease) */
    int serves_home; /* the transport's remote atomics need the target's progress:
                        a home process serves its home from its own calls (word.c) */
    rdlm_atomic_u64_t served_ns; /* when it last did (word.c, a hint) */
    int posts_release;           /* the transport posts CASes: a release frees W posted */
    int am_lock; /* exclusive global locks are served by their home process (amq.h) */
    rdlm_atomic_u32_t amq_seq[RDLM_GLOBAL_QNODES]; /* amq.c: each own queue node's use */
    rdlm_atomic_u32_t amq_dead;     /* amq.c: own queue nodes granted with DEAD (bitmap) */
    struct rdlm_amq_home *amq_home; /* amq_home.c: a leader's lock records, or NULL */
    /* amq.c: SETTLEs noted by the handler, run after progress (settle_lock guards the
     * array; settle_run: a thread runs them). */
    pthread_mutex_t settle_lock;
    rdlm_atomic_u32_t settle_n, settle_run;
    struct {
        uint32_t home;  /* node of the home */
        uint64_t slot1; /* home slot + 1 */
        uint64_t qid;   /* the dead holder's queue node */
        uint64_t granted;          /* the token of its GRANT: which use of qid */
    } settle[8], settle_passed[8]; /* settle_passed: the places this process passed
                                       on for a SETTLE, last 8 (by the runner only) */
    uint32_t settle_passed_next;
    rdlm_atomic_u64_t rw_sweep_at; /* rwlock.c: the next look for dead readers (ns) */
    rdlm_atomic_u32_t rw_sweeping; /* rwlock.c: a thread looks now */
    rdlm_local_t *local;         /* the node layer (rdlm_global_attach_node), or NULL */
    int planted_settle_busy;     /* tests only: RDLMTEST_AMQ_SETTLE_BUSY (cohort.c) */
    int test_replay_rel;         /* tests only: RDLMTEST_AMQ_REPLAY_REL (amq.c) */
    uint32_t test_seen_dead;     /* tests only: RDLMTEST_AMQ_SEEN_DEAD + 1, or 0 */
    int test_die_before_link;    /* tests only: RDLMTEST_GLOCK_DIE_BEFORE_LINK (glock.c) */
    rdlm_atomic_u32_t posted_n;  /* slots of posted[] not FREE */
    rdlm_global_posted_t posted[RDLM_GLOBAL_POSTED];
    rdlm_global_proc_t *procs; /* [size]: same-host processes (peers.h) */
    uint32_t host_procs;       /* processes of the context on this host, itself included
                                  (all its virtual nodes), or of the job if the launcher
                                  says more: more than the CPUs is crowded */
    rdlm_atomic_u32_t active;  /* calls in progress (destroy waits for 0) */
    rdlm_atomic_u32_t closing;
    rdlm_global_stats_t stats;
    pthread_mutex_t combine_lock; /* this process's counter request slot */
    /* Collective barrier (barrier.c): one thread at a time per process. */
    uint64_t barrier_gen; /* barriers this process arrived at */
    int barrier_arrived;  /* split phase: arrived, wait pending */
    int barrier_am;       /* leaders send the dissemination flags as active messages (the
                             transport emulates puts with messages anyway) */
    rdlm_switch_t barrier_links_mode; /* rdlm_global_params_t.barrier_links */
    rdlm_links_t *links; /* leaders: the dissemination's links (links.h), or NULL */
    uint64_t link_flag[RDLM_GLOBAL_ROUNDS]; /* the largest generation in-link k brought */
    int barrier_broken;   /* leaders: this one broke the barrier for the other
                             leaders (barrier.c, rdlm_global_break: once) */
    int barrier_broken_said; /* a later barrier's failure was logged (once) */
    int barrier_only;     /* rdlm_global_params_t.barrier_only */
    int barrier_pair;     /* one node, two uncrowded processes: the pair barrier */
    uint64_t answer_ns; /* how long a request to a home waits for an answer past its
                           own deadline (a cancel's, a try's): RDLM_PEER_TIMEOUT_MS */
    int crowded; /* more processes of the context on this host than CPUs (decided at
                    rdlm_global_attach_node): waiters give their CPU up */
    int left;             /* rdlm_global_leave ran: destroy does not repeat it */
    /* Called by the collective barrier's waits once they stop spinning (before each
     * yield, after each sleep slice), NULL: none. Set once before the first barrier
     * (rdlm_ctx_set_barrier_idle): MPI_Barrier's replacement lets MPI progress there. */
    void (*barrier_idle)(void *arg);
    void *barrier_idle_arg;
} rdlm_global_t;

/** Where a home region's enqueue intents begin: after the home slots and the barrier's
 *  dissemination flags (rank's queue node q has the word at index rank * QNODES + q). */
static inline size_t rdlm_global_intents_offset(const rdlm_global_t *d)
{
    return (size_t)d->home_slots * d->slot_bytes + RDLM_GLOBAL_ROUNDS * sizeof(uint64_t);
}

/** 1 if rank's process is known dead: the transport reports it (a watched peer), or it
 *  shares this host and its record says so (a kill(0) and a /proc read until then:
 *  slow paths only). */
static inline int rdlm_global_rank_gone(rdlm_global_t *d, uint32_t rank)
{
    return rdlm_tl_peer_dead(d->tl, rank) || rdlm_global_proc_gone(d->procs, rank);
}

/**
 * Collective over params->bootstrap: discover nodes, open the transport, register
 * the queue nodes (and, on node leaders, params->home_slots home slots), exchange
 * keys, agree on rank 0's job name and token epoch. Errors are logged; a peer that
 * fails makes the others time out in the bootstrap (bounded), never hang.
 */
rdlm_status_t rdlm_global_create(const rdlm_global_params_t *params,
                                 rdlm_global_t **dist_p);

/** Install epoch (1..RDLM_GLOBAL_EPOCH_MAX) as the token epoch, replacing the one agreed at
 *  create: for an epoch that is known only once the context exists (the authority
 *  the job runs itself). Every process installs the same one, before its context
 *  issues any token (before the create returns); not thread-safe. */
void rdlm_global_set_epoch(rdlm_global_t *d, uint32_t epoch);

/** Let waiters break global locks of dead processes (glock.c) with rec's answers;
 *  before the context issues any token, on every process; not thread-safe. Refused
 *  (a warning) when the home slots have no holder words. */
void rdlm_global_set_recovery(rdlm_global_t *d, const rdlm_global_recovery_t *rec);

/** Local hand-offs of an exclusive lock allowed before its node passes the global
 *  word on: RDLM_COHORT_BOUND, or none with recovery in the remote-atomic queue
 *  (cohort.c says why). */
static inline uint32_t rdlm_global_cohort_bound(const rdlm_global_t *d)
{
    return d->recovery.ended != NULL && !d->am_lock ? 0 : d->cohort_bound;
}

/** One step of a wait for a word that another process writes into our memory:
 *  progress the transport (a progress thread stands back while we do), then spin,
 *  yield, and after a while sleep 20 us (the writer may need our CPU on an
 *  oversubscribed node). *spins starts at 0. */
void rdlm_global_pause(rdlm_global_t *d, unsigned *spins);

/** Progress the transport once, then send what the handlers left to send (the lock
 *  home's answers, amq.h): every progress call of core/global is this one. Returns
 *  the transport's count of events. */
unsigned rdlm_global_progress(rdlm_global_t *d);

/** rdlm_global_progress(dist) as a bootstrap idle callback (rdlm_tl_idle_t). */
int rdlm_global_progress_idle(void *dist);

/** Refuse new acquires (RDLM_ERR_CLOSED) and make this process's waiters give up
 *  their places and return RDLM_ERR_CLOSED: the cross-node layer's closing first, then
 *  the on-node layer's (so an on-node wait that ended for it implies a cross-node
 *  grant will be given back: cohort.c); returns when no call of this process is
 *  running any more (bounded: 10 s, then a warning). Not collective. */
void rdlm_global_quiesce(rdlm_global_t *dist);

/** Before the transport's destroy (goodbye.c): tell every other process this one is
 *  leaving (one remote fetch-add each) and wait until every process not known dead
 *  said the same (bounded: RDLM_GLOBAL_GOODBYE_NS, then a warning). If one is dead,
 *  the bootstrap is then put out of step, so that the transport's barriers, which
 *  would wait for the dead one until the bootstrap's timeout, end at once. */
void rdlm_global_goodbye(rdlm_global_t *d);

/** The collective first part of destroy (after rdlm_global_quiesce and after this
 *  process released what it holds): finish posted releases, rdlm_global_goodbye, then,
 *  every process being alive, allgather len bytes of mine into all (size * len
 *  bytes). RDLM_OK when all holds every process's block; else the allgather's
 *  status (a process is dead: RDLM_ERR_PEER_DEAD at once, the bootstrap given up).
 *  all NULL (the caller is out of memory): no allgather, RDLM_ERR_NO_MEMORY, and the
 *  others' allgather ends at the bootstrap's timeout. Blocking; rdlm_global_destroy
 *  then does not repeat it. */
rdlm_status_t rdlm_global_leave(rdlm_global_t *d, const void *mine, void *all, size_t len);

/** Collectively close the transport (after rdlm_global_quiesce and after this process
 *  released what it holds; rdlm_global_leave's finish and goodbye first, unless it ran)
 *  and free. dist == NULL is a no-op. */
void rdlm_global_destroy(rdlm_global_t *dist);

/* ---- remote words (word.c) ----------------------------------------------------------- */

/** The slot of name's global word at its home, found or claimed by remote open
 *  addressing (cached per node in the entry by the caller) for an object of kind
 *  (enum rdlm_kind). *slot_p = slot + 1. RDLM_ERR_KIND_MISMATCH (logged) if the name
 *  holds a slot there as another kind (opened so on another node);
 *  RDLM_ERR_TABLE_FULL after RDLM_GLOBAL_PROBES probes. */
rdlm_status_t rdlm_global_home_open(rdlm_global_t *d, uint64_t id, unsigned kind,
                                    uint32_t *slot_p);

/** The same at the home process of a given node (per-node shards). */
rdlm_status_t rdlm_global_home_open_at(rdlm_global_t *d, uint32_t node, uint64_t id,
                                       unsigned kind, uint32_t *slot_p);

/** Home node of a name's id. */
uint32_t rdlm_global_home_node(const rdlm_global_t *d, uint64_t id);

/* ---- exclusive locks (cohort.c) --------------------------------------------------------
 */

/** Resolve the home slot of lock entry idx (cached in the entry). */
rdlm_status_t rdlm_global_lock_open(rdlm_global_t *d, rdlm_local_t *lc, uint32_t idx);
rdlm_status_t rdlm_global_lock_acquire(rdlm_global_t *d, rdlm_local_t *lc, uint32_t idx,
                                       uint64_t timeout_ns, uint64_t *token_p);
/** died 0: the release. died 1: give the lock up as a holder that died would (an
 *  acquire granted RDLM_OWNER_DEAD, undone for a lost lease): whoever takes it next,
 *  on this node or through the home, gets RDLM_OWNER_DEAD (not in the remote-atomic
 *  queue: rdlm_glock_pass_dead). RDLM_ERR_NOT_OWNER (nothing changed) if not held. */
rdlm_status_t rdlm_global_lock_release(rdlm_global_t *d, rdlm_local_t *lc, uint32_t idx,
                                       int died);
/** 1 if this node's cohort holds lock idx's global word. */
int rdlm_global_lock_node_holds(const rdlm_local_t *lc, uint32_t idx);
/** 1 if every process of the context is on one node: an exclusive lock is then the
 *  node-local lock alone, with no home slot and no global word. */
int rdlm_global_one_node(const rdlm_global_t *d);

/* ---- collective barrier (barrier.c)
 * ------------------------------------------------------ */

/** Collective, after the node segment is attached: returns once every process of
 *  the context attached its node's (the barrier counts arrivals there). Tells lc how
 *  many processes of the context share this host (its waiters stop spinning when they
 *  outnumber the CPUs, virtual nodes included). */
rdlm_status_t rdlm_global_attach_node(rdlm_global_t *d, rdlm_local_t *lc);

/** Split-phase collective barrier over every process of the context: arrive never
 *  blocks; wait returns once every process arrived at this generation. Writes before
 *  arrive (in any process) are visible after wait (in all). One thread per process;
 *  RDLM_ERR_MISMATCH for arrive twice or wait without arrive; RDLM_ERR_CLOSED while
 *  destroying. */
rdlm_status_t rdlm_global_barrier_arrive(rdlm_global_t *d, rdlm_local_t *lc);
rdlm_status_t rdlm_global_barrier_wait(rdlm_global_t *d, rdlm_local_t *lc);

/* ---- counters (counter.c)
 * ------------------------------------------------------------------ */

/** Resolve counter entry idx's word (the home's, or this node's shard). */
rdlm_status_t rdlm_global_counter_open(rdlm_global_t *d, rdlm_local_t *lc, uint32_t idx);
/** Add delta (wrapping); *old_p = the value before, distinct for every fetch-add of a
 *  non-sharded counter (the shard's value for a sharded one). One remote fetch-add,
 *  shared with the concurrent fetch-adds of the node (combining). */
rdlm_status_t rdlm_global_counter_fetch_add(rdlm_global_t *d, rdlm_local_t *lc,
                                            uint32_t idx, int64_t delta, int64_t *old_p);
/** The value (a sharded counter: the sum over the nodes' shards, not a snapshot). */
rdlm_status_t rdlm_global_counter_read(rdlm_global_t *d, rdlm_local_t *lc, uint32_t idx,
                                       int64_t *value_p);

/* ---- named barriers (nbarrier.c)
 * ------------------------------------------------------------- */

rdlm_status_t rdlm_global_nbarrier_open(rdlm_global_t *d, rdlm_local_t *lc, uint32_t idx);
/** Arrive at and wait for the named barrier entry idx (barrier_nprocs participants). On
 *  RDLM_ERR_TIMEOUT the arrival is withdrawn unless the barrier completed meanwhile. */
rdlm_status_t rdlm_global_nbarrier_wait(rdlm_global_t *d, rdlm_local_t *lc, uint32_t idx,
                                        uint64_t timeout_ns);

/* ---- semaphores (semaphore.c)
 * --------------------------------------------------------------- */

rdlm_status_t rdlm_global_sem_open(rdlm_global_t *d, rdlm_local_t *lc, uint32_t idx);
rdlm_status_t rdlm_global_sem_acquire(rdlm_global_t *d, rdlm_local_t *lc, uint32_t idx,
                                      uint32_t k, uint64_t timeout_ns);
rdlm_status_t rdlm_global_sem_release(rdlm_global_t *d, rdlm_local_t *lc, uint32_t idx,
                                      uint32_t k);
rdlm_status_t rdlm_global_sem_available(rdlm_global_t *d, rdlm_local_t *lc, uint32_t idx,
                                        uint32_t *available_p);

/* ---- reader-writer locks (rwlock.c) -----------------------------------------------------
 */

/** Resolve the two home words (writer queue, reader count) of rwlock entry idx. */
rdlm_status_t rdlm_global_rwlock_open(rdlm_global_t *d, rdlm_local_t *lc, uint32_t idx);
rdlm_status_t rdlm_global_rwlock_read_acquire(rdlm_global_t *d, rdlm_local_t *lc,
                                              uint32_t idx, uint64_t timeout_ns);
rdlm_status_t rdlm_global_rwlock_read_release(rdlm_global_t *d, rdlm_local_t *lc,
                                              uint32_t idx);
/** The node-count part of a shared release (before the READ record goes). */
void rdlm_global_rwlock_read_leave(rdlm_global_t *d, rdlm_local_t *lc, uint32_t idx);
rdlm_status_t rdlm_global_rwlock_write_acquire(rdlm_global_t *d, rdlm_local_t *lc,
                                               uint32_t idx, uint64_t timeout_ns,
                                               uint64_t *token_p);
/** died: as in rdlm_global_lock_release. */
rdlm_status_t rdlm_global_rwlock_write_release(rdlm_global_t *d, rdlm_local_t *lc,
                                               uint32_t idx, int died);

#endif
