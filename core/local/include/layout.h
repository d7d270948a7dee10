/*
 * The shared segment's layout (docs/local-locks.md has the pictures). Every word that
 * more than one process touches is atomic; plain fields are written once by the
 * creator before the magic is published.
 */
#ifndef RDLM_LAYOUT_H
#define RDLM_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "atomics.h"

#define RDLM_SEG_MAGIC 0x6d6c64722d73686dull /* "mhs-rldm" */
#define RDLM_SEG_LAYOUT 7u
#define RDLM_CACHE_LINE 64
#define RDLM_SLOT_RECORDS 16
#define RDLM_NAME_BYTES 48
/* Buckets of the token floor (a name's bucket: its id mod this; table.c). */
#define RDLM_FLOOR_BUCKETS 256

/* Object kinds (entry meta, low byte). */
enum rdlm_kind {
    RDLM_KIND_LOCK = 1,
    RDLM_KIND_RWLOCK,
    RDLM_KIND_COUNTER,
    RDLM_KIND_BARRIER,
    RDLM_KIND_SEMAPHORE
};
#define RDLM_META_KIND 0xffu
#define RDLM_META_READY 0x100u
/* Exclusive locks: the entry is a FIFO ticket lock (ticket.c), not the default
 * bounded-bypass mutex (mutex.c). Fixed by the entry's creator. */
#define RDLM_META_FIFO 0x200u
/* Only in a rdlm_table_open request: the caller asks for this order (FIFO bit set or
 * not) and an entry of the other order is a mismatch. Never stored. */
#define RDLM_META_ORDER_SET 0x400u
/* FIFO ticket lock (ticket.c): bit 16 + (t mod 16) is set while the waiter of ticket t
 * gave its place up before the lock reached it ("left"), so that the release handing
 * the lock to t passes over it at once. Tickets 16 apart share a bit: a hint only. */
#define RDLM_META_LEFT_SHIFT 16
#define RDLM_META_LEFT(t) (1u << (RDLM_META_LEFT_SHIFT + ((uint32_t)(t)&15u)))

/* Slot states. */
enum rdlm_slot_state { RDLM_SLOT_FREE = 0, RDLM_SLOT_ACTIVE = 1 };

typedef struct rdlm_seg_header {
    rdlm_atomic_u64_t magic; /* published last by the creator (release) */
    uint32_t layout;
    uint32_t capacity;   /* objects */
    uint32_t table_size; /* entries: capacity * 10 / 9 + 1 */
    uint32_t max_procs;
    uint64_t bytes; /* size of the mapping */
    uint64_t slots_offset;
    uint64_t entries_offset;
    uint64_t names_offset;
    uint32_t epoch; /* token epoch of this incarnation */
    int32_t creator_pid;
    uint64_t creator_start;
    rdlm_atomic_u32_t used;     /* entries not FREE (live, being created, retired) */
    rdlm_atomic_u32_t slot_hwm; /* 1 + highest slot index ever claimed */
    rdlm_atomic_u32_t attached; /* ACTIVE slots (dead ones until reclaimed) */
    /* Collective barrier of a distributed context (core/global/barrier.c): arrivals
     * of the node's processes (they wrap; the leader sleeps on it), the leader
     * parked there, the released generation (futex word) and its sleepers. */
    rdlm_atomic_u32_t coll_arrived;
    rdlm_atomic_u32_t coll_leader_parked;
    rdlm_atomic_u32_t coll_release;
    rdlm_atomic_u32_t coll_parked;
    /* 1 once a barrier of the node cannot complete (a process it waits for died):
     * every wait of the node returns RDLM_ERR_PEER_DEAD, and so does every later
     * barrier (barrier.c, "a member dies"). */
    rdlm_atomic_u32_t coll_broken;
    /* A one-node context of two uncrowded processes instead (barrier.c, "pair"): per
     * local rank, the last generation it arrived at and the sleepers waiting for it,
     * each on its own line (each process writes only its own). */
    struct {
        rdlm_atomic_u64_t gen;
        rdlm_atomic_u32_t parked;
    } __attribute__((aligned(RDLM_CACHE_LINE))) coll_pair[2];
    /* The table's creation lock (table_lock.c): owner word of its holder or 0, and
     * the entry the holder is changing (RDLM_TABLE_NONE: none), for a taker-over. */
    rdlm_atomic_u32_t create_lock;
    rdlm_atomic_u32_t create_idx;
    /* Token floor per bucket of names: at least every token a retired lock of a name
     * of the bucket issued; a lock created again starts above it (written under the
     * creation lock). */
    rdlm_atomic_u64_t floor[RDLM_FLOOR_BUCKETS];
} rdlm_seg_header_t;

/* One per attached context (process). */
typedef struct rdlm_slot {
    rdlm_atomic_u32_t state;
    rdlm_atomic_u32_t gen;
    _Atomic int32_t pid;
    uint32_t pad;
    rdlm_atomic_u64_t start_time; /* /proc/pid/stat field 22 */
    rdlm_atomic_u64_t rand_id;
    rdlm_atomic_u64_t rec[RDLM_SLOT_RECORDS];
    /* Counter combining (core/global/counter.c): this process's request
     * (entry + 1) << 2 | state, its delta, and the old value the combiner hands back. */
    rdlm_atomic_u64_t creq;
    rdlm_atomic_u64_t cdelta;
    rdlm_atomic_u64_t cresult;
    /* The context's lease session id (0: none; rdlm_segment_set_session): a waiter
     * behind this process on a node-local lock may ask the authority whether it
     * ended (rdlm_local_t.holder_fenced). In the slot's padding: no layout change. */
    rdlm_atomic_u64_t session;
} __attribute__((aligned(RDLM_CACHE_LINE))) rdlm_slot_t;

/*
 * One object: one cache line. The last 24 bytes mean what the object's kind (and a
 * distributed context) makes them: each union names one slot once per use, so every
 * use site says which it is (docs/local-locks.md, "Table entries"; docs/architecture.md,
 * "Names"). Kind-neutral code (table.c's keying, the size check at open) uses the
 * kind_word*, kind_tail64 and fixed_size members.
 */
typedef struct rdlm_entry {
    rdlm_atomic_u64_t key;
    rdlm_atomic_u32_t meta;
    rdlm_atomic_u32_t parked; /* sleepers on word or on the futex word at bytes 52-55 */
    rdlm_atomic_u64_t word;   /* lock word: next | serving | owner */
    rdlm_atomic_u64_t token;  /* last token issued; written by the holder only */
    rdlm_atomic_u64_t state;  /* gen | phase | KEEP | opens: below */
    /* Bytes 40-47. */
    union {
        /* Any kind: 0 when keyed (table.c). */
        rdlm_atomic_u64_t kind_word64;
        /* On-node mutex: the next STARVING ticket (mutex_wait.c). */
        rdlm_atomic_u64_t mutex_starving;
        /* On-node counter: the value. */
        rdlm_atomic_u64_t counter_value;
        /* On-node barrier: generation << 32 | arrived. */
        rdlm_atomic_u64_t barrier_state;
        /* On-node semaphore: the state word (below). */
        rdlm_atomic_u64_t sem_state;
        /* Distributed lock, counter, barrier: home slot + 1 (0: not resolved yet; set
         * once, by CAS). */
        rdlm_atomic_u64_t home_slot1;
        /* Distributed rwlock, semaphore: its two home words' slots, first slot + 1 |
         * (companion 1's slot + 1) << 32 (word.c; 0: not resolved yet). */
        rdlm_atomic_u64_t home_pair1;
    };
    /* Bytes 48-51. */
    union {
        /* Any kind: the size fixed by the first open (one of the next three; 0 for
         * locks), checked by later opens. */
        rdlm_atomic_u32_t fixed_size;
        /* Barrier: participants N. */
        rdlm_atomic_u32_t barrier_nprocs;
        /* Semaphore: permits N. */
        rdlm_atomic_u32_t sem_permits;
        /* Counter: RDLM_GLOBAL_COUNTER_SHARDED or 0. */
        rdlm_atomic_u32_t counter_flags;
        /* Distributed lock, rwlock: the global queue node + 1 of the node (of the
         * writer) holding the global word (0: none). */
        rdlm_atomic_u32_t queue_node1;
    };
    /* Bytes 52-55. */
    union {
        /* Any kind: 0 when keyed (table.c). */
        rdlm_atomic_u32_t kind_word32;
        /* On-node mutex: 1 while a woken waiter is on its way, plus one per release
         * that skipped its wake meanwhile (mutex.c). */
        rdlm_atomic_u32_t mutex_woken;
        /* Distributed lock: local hand-offs since the node took the global word. */
        rdlm_atomic_u32_t cohort_handoffs;
        /* Distributed counter: 1 while a process of the node adds directly beside a
         * batch in flight (core/global/counter.c). */
        rdlm_atomic_u32_t counter_bypass;
        /* Rwlock: the reader-writer word (below). */
        rdlm_atomic_u32_t rw_word;
        /* Barrier: the generation last completed on the node (its waiters' futex
         * word). */
        rdlm_atomic_u32_t barrier_released;
        /* On-node semaphore: bumped by releases that wake (the futex word of its
         * sleepers and of the reserver). */
        rdlm_atomic_u32_t sem_wake;
    };
    /* Bytes 56-63. */
    union {
        /* Any kind: 0 when keyed (table.c). */
        rdlm_atomic_u64_t kind_tail64;
        /* Distributed rwlock: node readers | joins since R was checked << 32
         * (core/global/rwlock.c). */
        rdlm_atomic_u64_t rw_node_readers;
        /* Distributed lock: the token the global word was granted with to queue_node1
         * (it names that use of the queue node: core/global/amq.h, REL). */
        rdlm_atomic_u64_t queue_granted;
    };
} __attribute__((aligned(RDLM_CACHE_LINE))) rdlm_entry_t;

/*
 * Entry state (table.c, docs/local-locks.md "Table entries"):
 *  63                  32 31  30  29   28                       0
 * +----------------------+-------+----+--------------------------+
 * |     gen (32)         | phase |KEEP|       opens (29)         |
 * +----------------------+-------+----+--------------------------+
 * phase: FREE (nothing; a lookup's probe ends here), CREATING (being keyed, under the
 * creation lock), LIVE (an object: lookups pin it), RETIRED (no object; probes pass
 * on; re-keyed under the creation lock). gen grows by one each time the entry is
 * keyed. KEEP: never retired (used by a cross-node context). opens: handles open on
 * it (a pin).
 */
enum rdlm_phase {
    RDLM_PHASE_FREE = 0,
    RDLM_PHASE_CREATING,
    RDLM_PHASE_LIVE,
    RDLM_PHASE_RETIRED
};
#define RDLM_STATE_OPENS_MAX ((1ull << 29) - 1)
#define RDLM_STATE_KEEP (1ull << 29)
#define RDLM_STATE_OPENS(s) ((s)&RDLM_STATE_OPENS_MAX)
#define RDLM_STATE_PHASE(s) ((unsigned)(((s) >> 30) & 3u))
#define RDLM_STATE_GEN(s) ((uint32_t)((s) >> 32))
#define RDLM_STATE_MAKE(gen, phase, flags_opens)                                           \
    (((uint64_t)(uint32_t)(gen) << 32) | ((uint64_t)(phase) << 30) | (flags_opens))
#define RDLM_TABLE_NONE 0xffffffffu

/*
 * Lock word:
 *  63          48 47          32 31                                 0
 * +--------------+--------------+------------------------------------+
 * |  next (16)   | serving (16) |  owner: gen (19) | slot + 1 (13)   |
 * +--------------+--------------+------------------------------------+
 * The upper half is the futex word (little-endian: at byte offset 4).
 */
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the lock word's futex half assumes a little-endian machine"
#endif
#define RDLM_WORD_NEXT(w) ((uint16_t)((w) >> 48))
#define RDLM_WORD_SERVING(w) ((uint16_t)((w) >> 32))
#define RDLM_WORD_OWNER(w) ((uint32_t)(w))
#define RDLM_WORD_HIGH(w) ((uint32_t)((w) >> 32))
#define RDLM_WORD_NEXT_ONE (1ull << 48)
#define RDLM_WORD_MAKE(next, serving, owner)                                               \
    (((uint64_t)(uint16_t)(next) << 48) | ((uint64_t)(uint16_t)(serving) << 32) |          \
     (uint32_t)(owner))

/* The futex half of an entry's lock word. */
static inline rdlm_atomic_u32_t *rdlm_word_futex(rdlm_atomic_u64_t *word)
{
    return (rdlm_atomic_u32_t *)(void *)((char *)word + 4);
}

/*
 * Mutex word (the bounded-bypass lock, mutex.c; entries without RDLM_META_FIFO):
 *  63                                 32 31                                 0
 * +------------------------------------+------------------------------------+
 * |  heir: owner word of the one waiter |  owner: gen (19) | slot + 1 (13)   |
 * |  that must get the lock next, or 0  |  0 or DIED: nobody                |
 * +------------------------------------+------------------------------------+
 * The lower half is the futex word (little-endian: at byte offset 0). The owner
 * field is where the ticket lock has it, so RDLM_WORD_OWNER reads both.
 */
#define RDLM_MUTEX_HEIR(w) ((uint32_t)((w) >> 32))
#define RDLM_MUTEX_MAKE(owner, heir) (((uint64_t)(uint32_t)(heir) << 32) | (uint32_t)(owner))

/* The futex half of a mutex word. */
static inline rdlm_atomic_u32_t *rdlm_mutex_futex(rdlm_atomic_u64_t *word)
{
    return (rdlm_atomic_u32_t *)(void *)word;
}

_Static_assert(sizeof(rdlm_entry_t) == RDLM_CACHE_LINE, "an entry is one cache line");
/* Where the kind's words sat as aux64, aux32, wake32 and aux64b (the entry's bytes have not
 * moved since layout 6). */
#define RDLM_ENTRY_AT(m, at)                                                               \
    _Static_assert(offsetof(rdlm_entry_t, m) == (at), #m " at " #at)
RDLM_ENTRY_AT(key, 0);
RDLM_ENTRY_AT(meta, 8);
RDLM_ENTRY_AT(parked, 12);
RDLM_ENTRY_AT(word, 16);
RDLM_ENTRY_AT(token, 24);
RDLM_ENTRY_AT(state, 32);
RDLM_ENTRY_AT(kind_word64, 40);
RDLM_ENTRY_AT(mutex_starving, 40);
RDLM_ENTRY_AT(counter_value, 40);
RDLM_ENTRY_AT(barrier_state, 40);
RDLM_ENTRY_AT(sem_state, 40);
RDLM_ENTRY_AT(home_slot1, 40);
RDLM_ENTRY_AT(home_pair1, 40);
RDLM_ENTRY_AT(fixed_size, 48);
RDLM_ENTRY_AT(barrier_nprocs, 48);
RDLM_ENTRY_AT(sem_permits, 48);
RDLM_ENTRY_AT(counter_flags, 48);
RDLM_ENTRY_AT(queue_node1, 48);
RDLM_ENTRY_AT(kind_word32, 52);
RDLM_ENTRY_AT(mutex_woken, 52);
RDLM_ENTRY_AT(cohort_handoffs, 52);
RDLM_ENTRY_AT(counter_bypass, 52);
RDLM_ENTRY_AT(rw_word, 52);
RDLM_ENTRY_AT(barrier_released, 52);
RDLM_ENTRY_AT(sem_wake, 52);
RDLM_ENTRY_AT(kind_tail64, 56);
RDLM_ENTRY_AT(rw_node_readers, 56);
RDLM_ENTRY_AT(queue_granted, 56);
#undef RDLM_ENTRY_AT
_Static_assert(sizeof(rdlm_slot_t) % RDLM_CACHE_LINE == 0, "slots are line-aligned");
_Static_assert(sizeof(rdlm_slot_t) == 3 * RDLM_CACHE_LINE, "a slot is three lines");

/*
 * Slot records:
 *  63    60 59                    32 31                     0
 * +--------+------------------------+------------------------+
 * | state  |   entry index (28 bit) |     ticket (32 bit)    |
 * +--------+------------------------+------------------------+
 */
enum rdlm_rec_state {
    RDLM_REC_FREE = 0,
    RDLM_REC_PENDING,
    RDLM_REC_WAITING,
    RDLM_REC_READ
};
#define RDLM_REC_MAKE(state, entry, ticket)                                                \
    (((uint64_t)(state) << 60) | ((uint64_t)(entry) << 32) | (uint32_t)(ticket))
#define RDLM_REC_STATE(r) ((unsigned)((r) >> 60))
#define RDLM_REC_ENTRY(r) ((uint32_t)(((r) >> 32) & 0x0fffffffu))
#define RDLM_REC_TICKET(r) ((uint32_t)(r))
#define RDLM_ENTRY_INDEX_MAX 0x0fffffffu

/*
 * Reader-writer lock word (the entry's rw_word, also the futex word a draining writer
 * sleeps on):
 *  31  30   29   28          16 15                0
 * +---+---+-----+--------------+------------------+
 * | 0 | W |SLEEP|  epoch (13)  |   readers (16)   |
 * +---+---+-----+--------------+------------------+
 * W: a writer holds the gate (set and cleared only by the gate's holder). SLEEP: that
 * writer sleeps until readers reaches 0. epoch: changed only when a writer resets the
 * count of readers that died (docs/local-locks.md). readers <= 4095 x 16 < 2^16.
 */
#define RDLM_RW_READERS(v) ((v)&0xffffu)
#define RDLM_RW_EPOCH_SHIFT 16
#define RDLM_RW_EPOCH_MASK (0x1fffu << RDLM_RW_EPOCH_SHIFT)
#define RDLM_RW_SLEEP (1u << 29)
#define RDLM_RW_WRITER (1u << 30)

/*
 * Semaphore state word (the entry's sem_state, node-only contexts):
 *  63      50   49     48      47          32 31                   0
 * +--------+-----+------+------+-------------+----------------------+
 * |   0    | RSV | (0)  |WOKEN | sleepers(16)|      taken (32)      |
 * +--------+-----+------+------+-------------+----------------------+
 * sleepers: bypass waiters registered to sleep on sem_wake. WOKEN: a release woke one of
 * them and it has not run yet. RSV: the gate's holder reserves the next free permits
 * (the fast path fails while it is set).
 */
#define RDLM_SEM_TAKEN(v) ((uint32_t)(v))
#define RDLM_SEM_SLEEPER_ONE (1ull << 32)
#define RDLM_SEM_SLEEPERS(v) ((uint32_t)(((v) >> 32) & 0xffffu))
#define RDLM_SEM_WOKEN (1ull << 48)
#define RDLM_SEM_RSV (1ull << 50)

/* Owner words (32 bit): (gen mod 2^19) << 13 | (slot index + 1). 0 means nobody;
 * RDLM_OWNER_DIED means nobody, and the last holder died. */
#define RDLM_OWNER_SLOT_BITS 13
#define RDLM_OWNER_SLOT_MASK ((1u << RDLM_OWNER_SLOT_BITS) - 1)
#define RDLM_OWNER_MAKE(slot, gen)                                                         \
    ((((uint32_t)(gen)&0x7ffffu) << RDLM_OWNER_SLOT_BITS) | ((uint32_t)(slot) + 1))
#define RDLM_OWNER_SLOT(o) (((uint32_t)(o)&RDLM_OWNER_SLOT_MASK) - 1)
#define RDLM_OWNER_GEN(o) ((uint32_t)(o) >> RDLM_OWNER_SLOT_BITS)
#define RDLM_OWNER_DIED RDLM_OWNER_SLOT_MASK
#define RDLM_OWNER_IS_NOBODY(o) ((o) == 0 || (o) == RDLM_OWNER_DIED)
#define RDLM_MAX_PROCS 4095 /* slots x records stay below 2^16 tickets */

#endif
