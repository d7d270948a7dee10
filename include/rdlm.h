/**
 * @file
 * rdlm — locks, reader-writer locks, counters and barriers shared by the processes
 * of a node (and, in later layers, across nodes), with fencing tokens.
 *
 * Model
 *   A context (rdlm_ctx_h) attaches the calling process to the node's shared
 *   segment of one job. A distributed context (rdlm_mpi_ctx_create in rdlm/mpi.h,
 *   or rdlm_ctx_create with RDLM_CTX_FIELD_PEERS) also joins the processes of the
 *   job across nodes: its objects are then job-wide (see "Across nodes"). Objects
 *   are opened by name inside a context; the same name in the same job names the
 *   same object in every process. An object is a lock, a reader-writer lock, a
 *   counter, a semaphore or a barrier; a name is bound to its kind by the first open.
 *
 * Ownership
 *   Locks are owned by the context that acquired them. Any thread of that context
 *   may release them. A process that dies holding a lock is detected by the next
 *   waiter; the lock is recovered and that waiter's acquire returns RDLM_OWNER_DEAD
 *   (the lock IS held, with a fresh token).
 *
 * Thread safety
 *   All functions are thread-safe on distinct handles and on the same handle, except
 *   that closing a handle or destroying a context must not race with other calls on
 *   it; the one exception is a thread already waiting in an acquire or a barrier wait
 *   of a context that is destroyed: it returns RDLM_ERR_CLOSED (rdlm_ctx_destroy).
 *   A context and its handles belong to the process that created them: a child after
 *   fork() must not use them (it has the parent's identity in the lock table, so it
 *   could release the parent's lock, and a lock it took and did not release stays
 *   held while the parent lives, never recovered); it creates a context of its own,
 *   also when the parent's other threads were inside rdlm calls at the fork. A context
 *   holds a lock for all its handles and threads: closing one handle of a name leaves
 *   what the context holds of it through another; the last handle's close releases it.
 *
 * Stale handles
 *   Every call that takes an rdlm_ctx_h returns RDLM_ERR_BAD_HANDLE for NULL and for a
 *   context already destroyed (looked up in the process's list of live contexts: a
 *   mutex, no system call; calls on object handles do not look, so lock operations pay
 *   nothing), and rdlm_ctx_destroy ignores both. Handles of a destroyed context's
 *   objects return RDLM_ERR_CLOSED, as does a closed handle until 1,024 more handles
 *   of its context were closed. Both checks go by address: a context or handle
 *   opened later may reuse a destroyed or closed one's, and a stale handle then names
 *   the new one, so do not keep handles past their close or destroy. The memory of
 *   destroyed contexts' handles goes back to malloc when librdlm.so is unloaded
 *   (dlclose) or the process exits: no handle is valid across an unload. Destroy
 *   every context before unloading: a live one's mapping, file and memory stay.
 *
 * Fencing tokens
 *   Every successful exclusive acquire returns a 64-bit token strictly greater than
 *   every token issued before for that lock (epoch << 40 | sequence). Pass it to the
 *   resource you protect and have the resource reject smaller tokens.
 *
 * Across nodes
 *   In a distributed context every lock has a home process (one per node, chosen by
 *   hashing the name) whose registered memory holds the lock's global word, touched
 *   only through the transport's remote atomics. A process takes the node-local lock
 *   first; only the node's holder touches the global word, and on release the lock
 *   goes to a waiter on the same node without any remote operation, up to
 *   RDLM_COHORT_BOUND hand-offs (default 64), then to the next node in the global
 *   FIFO queue. An uncontended acquire costs 1 remote atomic and a release 1. All
 *   processes of the job must create and destroy the context together (collective);
 *   over UCX/TCP every process must keep progressing (RDLM_PROGRESS, default auto =
 *   a progress thread when the transport needs one). Every kind of object is then
 *   job-wide: locks and reader-writer locks (a shared acquire costs 1 remote
 *   fetch-add, or none when a process of the same node already reads), counters (1
 *   fetch-add, shared by the node's concurrent ones), semaphores, and named barriers;
 *   rdlm_ctx_barrier is the barrier over all processes. docs/distributed-locks.md.
 *
 * Timeouts
 *   Acquire and wait functions take timeout_ns: 0 tries once without waiting,
 *   RDLM_TIMEOUT_INFINITE waits forever; any other value is a relative timeout.
 *   A timed-out request leaves nothing queued (except in the remote-atomic queue of
 *   cross-node locks, which keeps an abandoned place until the lock passes over it
 *   or the process's next acquire of that lock takes it back, and whose acquire
 *   waits, up to its timeout, when all 32 places of the process are in use and some
 *   abandoned: docs/distributed-locks.md). It returns after its timeout by the
 *   step it was in at most: a sleep ends at the deadline; a remote operation in
 *   flight ends at its answer (a round trip), or after RDLM_PEER_TIMEOUT_MS if its
 *   peer stopped answering. An overloaded node adds its scheduler's delay (up to
 *   tens of ms measured with two busy loops beside the waiters on 2 CPUs; up to
 *   125 ms with 12 threads on 2 CPUs, and more the more runnable threads per CPU).
 */
#ifndef RDLM_H
#define RDLM_H

#include <stddef.h>
#include <stdint.h>

#include <rdlm/export.h>
#include <rdlm/status.h>
#include <rdlm/version.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Longest object name in bytes, without the terminating NUL. */
#define RDLM_NAME_MAX 47
/** Wait without a time limit. */
#define RDLM_TIMEOUT_INFINITE UINT64_MAX

/** A context: this process attached to its job's node segment (rdlm_ctx_create). */
typedef struct rdlm_ctx *rdlm_ctx_h;
/** An open exclusive lock (rdlm_lock_open). */
typedef struct rdlm_lock *rdlm_lock_h;
/** An open reader-writer lock (rdlm_rwlock_open). */
typedef struct rdlm_rwlock *rdlm_rwlock_h;
/** An open 64-bit counter (rdlm_counter_open). */
typedef struct rdlm_counter *rdlm_counter_h;
/** An open named barrier (rdlm_barrier_open). */
typedef struct rdlm_barrier *rdlm_barrier_h;
/** An open counting semaphore (rdlm_sem_open). */
typedef struct rdlm_sem *rdlm_sem_h;

/** Fields of rdlm_ctx_params_t that the caller set. */
enum rdlm_ctx_field {
    RDLM_CTX_FIELD_JOB = 1u << 0,      /**< job */
    RDLM_CTX_FIELD_CAPACITY = 1u << 1, /**< capacity */
    RDLM_CTX_FIELD_PEERS = 1u << 2,    /**< rank, size, rendezvous */
};

/** Context parameters; unset fields take their RDLM_* environment value. */
typedef struct rdlm_ctx_params {
    uint64_t field_mask; /**< OR of enum rdlm_ctx_field */
    /** Job or service instance name (letters, digits, '.', '_', '-'; at most 32
     *  bytes). Default: $RDLM_JOB, else $SLURM_JOB_ID.$SLURM_STEP_ID (an srun step:
     *  the steps of one allocation are separate jobs), else $SLURM_JOB_ID, else
     *  $OMPI_MCA_ess_base_jobid, else $PMIX_NAMESPACE, else "default". Processes of the
     *  same user and job share one segment. */
    const char *job;
    /** Objects the node segment holds (16..16777216, as $RDLM_CAPACITY); only the
     *  creator's value counts. Default: $RDLM_CAPACITY (65536). */
    uint32_t capacity;
    /** With RDLM_CTX_FIELD_PEERS (or $RDLM_RENDEZVOUS set), rdlm_ctx_create joins
     *  `size` processes, this one being `rank` (0..size-1), into one distributed
     *  context through a TCP rendezvous: rank 0 listens on `rendezvous`
     *  ("host:port", host an IPv4 address or a host name, looked up now; rank 0
     *  listens on every interface when it is a name; ":port": the first host of
     *  srun's $SLURM_STEP_NODELIST; "launcher": rank 0 listens on an ephemeral
     *  port and publishes it through PMIx when a PMIx server started the processes,
     *  rank and size then PMIx's, else srun's first --resv-ports port or a port
     *  derived from $SLURM_JOB_ID and $SLURM_STEP_ID at the step's first host;
     *  RDLM_ERR_BAD_CONFIG, logged, without either), the others connect to it.
     *  Defaults: $RDLM_RANK and $RDLM_SIZE if $RDLM_SIZE is set, else the launcher's
     *  ($SLURM_PROCID/$SLURM_NTASKS, $OMPI_COMM_WORLD_RANK/$OMPI_COMM_WORLD_SIZE,
     *  $PMI_RANK/$PMI_SIZE, the first pair set); $RDLM_RENDEZVOUS. Processes on the
     *  same host (and network namespace) form one node. Collective: blocks until every
     *  rank joined (bounded: RDLM_ERR_TIMEOUT after 30 s, naming the missing ranks); a
     *  host name that does not resolve fails at once (RDLM_ERR_BAD_CONFIG, logged). */
    uint32_t rank;
    uint32_t size;          /**< processes joining (RDLM_CTX_FIELD_PEERS) */
    const char *rendezvous; /**< rank 0's "host:port", ":port" or "launcher"
                                 (RDLM_CTX_FIELD_PEERS) */
} rdlm_ctx_params_t;

/** Library version as "major.minor.patch"; constant, thread-safe. */
RDLM_EXPORT const char *rdlm_get_version(void);

/**
 * Attach the calling process to the node segment of its job, creating the segment if
 * it does not exist or replacing it if no process is attached to it and it is stale
 * (no live process holds a slot, or its header is unusable: another layout version,
 * a bad magic, size or offset). Blocking (takes a per-job file lock), not
 * async-signal-safe. Keeps one file descriptor open (close-on-exec) until destroy.
 * params may be NULL. Errors: RDLM_ERR_INVALID_ARG (bad job name, capacity),
 * RDLM_ERR_BAD_CONFIG (bad RDLM_* variable: each one logged; a process joining peers
 * still makes the rendezvous, so that every process of the context fails with it at
 * once), RDLM_ERR_PERMISSION (the segment, its lock
 * file or their directory, RDLM_SHM_DIR or /dev/shm/rdlm-UID, is another user's, open
 * to group or others, or a symlink: one error line says which), RDLM_ERR_CORRUPT (the
 * segment's header is unusable while processes are attached to it: it is not replaced
 * until they are all gone; docs/local-locks.md),
 * RDLM_ERR_NO_RESOURCE (all process slots in use), RDLM_ERR_IO; with RDLM_AUTHORITY,
 * RDLM_ERR_UNAVAILABLE (no leader answered within 10 s; at once when every address
 * refuses connections: include/rdlm/lease.h; or no replica described a lock home
 * within 10 s while one that may host one did not answer), RDLM_ERR_BAD_CONFIG (the
 * replicas name other members, or some host lock homes and others none: rdlmd
 * --home-slots 0 must be given to every replica or to none; one error line names
 * two of them); joining peers, RDLM_ERR_UNSUPPORTED (the
 * transport cannot start here, e.g. UCX_TLS names no usable transport: the error line
 * names the UCX variables in effect).
 * On success *ctx_p is set; on error it is untouched.
 *
 * With RDLM_AUTHORITY set, the context holds a lease there (rdlm_ctx_session), and
 * when the authority's rdlmd replicas host lock homes (the default; every replica or
 * none must, and only when none does are they node-local) its exclusive locks are
 * service-wide: processes of any host that name the same lock exclude each
 * other (of any job under rdlmd --auth none; of the same job under --auth munge,
 * where names are per job, as at the authority), tokens come from the lock's home,
 * and a holder whose lease the authority ended is broken (the taker gets
 * RDLM_OWNER_DEAD). Its other objects stay node-local (docs/lease-authority.md,
 * "Service-wide locks").
 */
RDLM_EXPORT rdlm_status_t rdlm_ctx_create(const rdlm_ctx_params_t *params,
                                          rdlm_ctx_h *ctx_p);

/**
 * Detach: releases every lock the context still holds (the next holder sees a
 * normal hand-off), closes every handle, and removes the segment if this was the
 * last live process attached. NULL, and a context destroyed already (logged), are
 * ignored. For a distributed context this is collective: it waits (progressing)
 * until every process of the job destroys its context, so that no peer still uses
 * this process's memory (bounded: once a process of the context is known dead it
 * does not wait for it, else at most the bootstrap's timeout, 30 s;
 * docs/distributed-locks.md, Limits). Later calls through
 * the context's handle return RDLM_ERR_BAD_HANDLE, and through its objects' handles
 * RDLM_ERR_CLOSED (handle memory is kept for that and reused by later opens; see
 * "Stale handles"). Other threads waiting in an acquire, a semaphore acquire or a
 * barrier wait of this context give up their place and return RDLM_ERR_CLOSED, within
 * a park slice (RDLM_PARK_SLICE_MS; an acquire of a service-wide lock, RDLM_AUTHORITY,
 * polling its home's word: within 1 ms, 50 ms while the home is unreachable, once a
 * remote operation under way ends); the destroy waits for them (at most 10 s, then a
 * warning). So does one that the lock, the rwlock or the permits were handed or
 * granted to while the destroy ran (it passes them on first, a home's word too), so
 * that an acquire still waiting when the destroy begins never returns RDLM_OK. Calls
 * that do not wait (a try, a release, a query) must not run while the destroy does.
 */
RDLM_EXPORT void rdlm_ctx_destroy(rdlm_ctx_h ctx);

/* ---- exclusive locks ------------------------------------------------------------ */

/**
 * Open (creating if needed) the lock named name, in the default order
 * (RDLM_LOCK_ORDER_DEFAULT, see rdlm_lock_open_params). Non-blocking apart from a bounded
 * wait for a concurrent creator. Errors: RDLM_ERR_BAD_HANDLE (NULL or destroyed ctx),
 * RDLM_ERR_INVALID_ARG (NULL name or lock_p), RDLM_ERR_NAME_TOO_LONG (empty or longer
 * than RDLM_NAME_MAX), RDLM_ERR_KIND_MISMATCH (the name is another kind of object: a
 * counter, semaphore or barrier for the node segment's life, a lock or rwlock while a
 * process has it open, and for the context's life once a distributed context of more
 * than one node opened it: its home slot is keyed by it), RDLM_ERR_TABLE_FULL,
 * RDLM_ERR_NO_MEMORY. The same errors apply to the other *_open functions. In a
 * distributed context of more than one node the first open of a name resolves its
 * home slot (one remote operation): it may also return RDLM_ERR_PEER_DEAD, after up
 * to RDLM_PEER_TIMEOUT_MS if the home's process stopped answering.
 */
RDLM_EXPORT rdlm_status_t rdlm_lock_open(rdlm_ctx_h ctx, const char *name,
                                         rdlm_lock_h *lock_p);

/** The order in which an on-node exclusive lock serves its waiters. */
typedef enum rdlm_lock_order {
    /** BOUNDED in a node-only context; FIFO in distributed and service contexts
     *  (a service context's lock is FIFO on the node; between hosts its waiters are
     *  not ordered: one that has waited RDLM_LOCK_BYPASS_US marks the lock wanted,
     *  and the holder's next release leaves it to a waiter, some waiter, not
     *  necessarily that one; a waiter that misses it marks it again, so a wait
     *  can last several bounds: docs/lease-authority.md, "Bounded bypass").
     *  Opening an existing lock this way accepts either order. */
    RDLM_LOCK_ORDER_DEFAULT = 0,
    /** Bounded bypass: a free lock goes to whichever process takes it first, so a
     *  running process need not wait for a sleeping one to wake (as pthread_mutex);
     *  but a waiter that has waited RDLM_LOCK_BYPASS_US (default 1000) reserves the
     *  lock, and then it is the next holder. One waiter reserves at a time: the others
     *  try again one bound later, so with k waiters past the bound a wait can last
     *  about k hand-offs more (rdlm-bench -b lock-contended reports the maximum).
     *  Node-only contexts only. */
    RDLM_LOCK_ORDER_BOUNDED = 1,
    /** Strict FIFO: waiters are served in arrival order (a ticket lock); every
     *  contended hand-off goes to the longest waiter, running or not. */
    RDLM_LOCK_ORDER_FIFO = 2
} rdlm_lock_order_t;

/** Fields of rdlm_lock_params_t that the caller set. */
enum rdlm_lock_field {
    RDLM_LOCK_FIELD_ORDER = 1u << 0, /**< order */
};

/** Lock parameters; unset fields take their defaults. */
typedef struct rdlm_lock_params {
    uint64_t field_mask;     /**< OR of enum rdlm_lock_field */
    rdlm_lock_order_t order; /**< default RDLM_LOCK_ORDER_DEFAULT */
} rdlm_lock_params_t;

/**
 * rdlm_lock_open with parameters (params may be NULL: all defaults). The first open
 * of a lock fixes its order; a later open that names another order explicitly gets
 * RDLM_ERR_KIND_MISMATCH (logged). Errors as rdlm_lock_open, and
 * RDLM_ERR_INVALID_ARG (an unknown field or order), RDLM_ERR_UNSUPPORTED
 * (RDLM_LOCK_ORDER_BOUNDED in a distributed or service context, whose on-node part
 * is FIFO: the cross-node hand-off needs it).
 */
RDLM_EXPORT rdlm_status_t rdlm_lock_open_params(rdlm_ctx_h ctx, const char *name,
                                                const rdlm_lock_params_t *params,
                                                rdlm_lock_h *lock_p);

/**
 * Acquire exclusively, in the lock's order (rdlm_lock_order_t: by default bounded
 * bypass in a node-only context, FIFO otherwise). Acquire ordering on success:
 * everything the previous holder wrote before its release is visible.
 * Returns RDLM_OK or RDLM_OWNER_DEAD (held in both cases; *token_p set if token_p is
 * not NULL), RDLM_ERR_BUSY (timeout_ns == 0 and held; or reserved for a waiter: a
 * bounded-bypass lock a waiter reserved, a service-wide lock another process marked
 * wanted, for 2 ms after this process released it), RDLM_ERR_TIMEOUT,
 * RDLM_ERR_BAD_HANDLE, RDLM_ERR_CLOSED, RDLM_ERR_NO_RESOURCE (16 threads of this
 * context wait on on-node locks, or hold rwlocks shared, at once already: a context
 * has 16 records for them; give threads contexts of their own beyond that (logged at
 * error once per process); or this context already
 * waits on or holds 32 cross-node locks at once; in the remote-atomic queue,
 * RDLM_LOCK_AM=0 or over shared memory or verbs, places it gave up by timeouts and
 * not yet passed over do not count: the acquire waits for them up to its timeout,
 * docs/distributed-locks.md). In a distributed context also
 * RDLM_ERR_PEER_DEAD (the process holding the lock's home word, or a queue neighbour
 * the acquire must reach, died: see RDLM_PEER_FAILURE) and RDLM_ERR_LEASE_EXPIRED.
 * With service-wide locks (rdlm_ctx_create, RDLM_AUTHORITY): FIFO on the node only;
 * also RDLM_ERR_LEASE_EXPIRED, RDLM_ERR_PEER_DEAD or RDLM_ERR_UNAVAILABLE when
 * the lock's home stayed unreachable until the timeout, RDLM_ERR_BAD_CONFIG when
 * the lock's replica says it hosts no home while others do (logged), and
 * RDLM_ERR_NO_RESOURCE at once when every slot of the name's bucket at its home is held
 * (docs/lease-authority.md, "Slots are reused"). A process's first
 * acquire at a home connects to it (10-40 ms measured, more on a loaded host) whatever
 * the acquire's timeout: a free lock is then taken (RDLM_OK, as pthread_mutex_timedlock
 * takes a free mutex whatever its timeout), a held one returns RDLM_ERR_TIMEOUT (or
 * RDLM_ERR_BUSY for a try) once the connect is done. With a
 * lease (RDLM_AUTHORITY, RDLM_JOB_AUTHORITY), RDLM_OWNER_DEAD returns only after the lock
 * delay RDLM_LOCK_DELAY_MS (default 0), the lock held meanwhile. An acquire that
 * completes after the context's lease was lost (during the wait or the delay) is undone
 * and returns RDLM_ERR_LEASE_EXPIRED; if it had taken the lock over from a dead holder,
 * the lock is left as that holder left it: the next holder gets RDLM_OWNER_DEAD (for a
 * service-wide lock once the authority ended this context's session; not in the
 * remote-atomic queue, RDLM_LOCK_AM=0, docs/distributed-locks.md). The same holds for
 * rdlm_rwlock_write_acquire. Re-acquiring a lock the context holds waits for itself:
 * locks are not recursive.
 */
RDLM_EXPORT rdlm_status_t rdlm_lock_acquire(rdlm_lock_h lock, uint64_t timeout_ns,
                                            uint64_t *token_p);

/**
 * Release; release ordering. Wakes one waiter only (the next in FIFO order, or the
 * one that reserved a bounded-bypass lock, else any one sleeper). Errors: RDLM_ERR_NOT_OWNER
 * (not held by this context, including a second release, and a release after an
 * acquire that failed: an acquire that returned RDLM_ERR_LEASE_EXPIRED has released
 * what it took), RDLM_ERR_BAD_HANDLE,
 * RDLM_ERR_CLOSED. On error nothing changes. With a lease: RDLM_ERR_LEASE_EXPIRED
 * (released, but the lease is gone; for a service-wide lock, a waiter may have
 * broken it already); a service-wide lock whose home died or restarted while held:
 * RDLM_ERR_PEER_DEAD (the lock went with its home; the node-local one is released).
 * In a distributed context: RDLM_ERR_PEER_DEAD when the global word's home (or the
 * queue neighbour the release must reach) died; the node-local lock is released.
 */
RDLM_EXPORT rdlm_status_t rdlm_lock_release(rdlm_lock_h lock);

/** Close the handle. A held lock is released first. Once no process has the lock
 *  open its place in the node segment may go to other names (the segment's capacity
 *  bounds the objects open at once, not the names used over time), and its name may
 *  be opened as another kind or order; opened again as a lock, it issues tokens above
 *  every token it issued before. Errors: RDLM_ERR_BAD_HANDLE,
 *  RDLM_ERR_CLOSED. */
RDLM_EXPORT rdlm_status_t rdlm_lock_close(rdlm_lock_h lock);

/** A snapshot of a lock's state, for tools and tests. */
typedef struct rdlm_lock_info {
    /* For a service-wide lock (RDLM_AUTHORITY), and in a distributed context of more
     * than one node, every field but home_node and node_holds_global describes the
     * node-local lock in front of the global word: held, waiters and last_token are
     * this node's, not the job's or the service's (a lock held on another node reads
     * held = 0 here; the token of the acquire is the global one). */
    uint32_t waiters;    /**< requests queued by live processes (timed-out and
                              dead ones excluded) */
    int held;            /**< 1 if some context holds it */
    int held_by_me;      /**< 1 if this context holds it */
    uint64_t last_token; /**< the last token issued (on this node) */
    /* Distributed and service contexts: */
    int32_t home_node;   /**< node whose home process holds the global word; for a
                              service-wide lock, its home's index among the
                              authority's replicas ordered by id (rdlmd --id);
                              -1 where locks are node-local */
    int node_holds_global; /**< 1 if this node's cohort holds the global word; always
                                0 in a distributed context of one node, whose locks
                                are the node-local lock alone */
    int reserved;          /**< 1 if a live waiter of a bounded-bypass lock has reserved
                                it (it spins, or waited RDLM_LOCK_BYPASS_US): the next
                                holder. Only one waiter reserves at a time; the others
                                try again one bound later. */
} rdlm_lock_info_t;

/** Fill *info_p; non-blocking, scans the segment's process slots (not for hot
 *  paths). Errors: RDLM_ERR_BAD_HANDLE, RDLM_ERR_CLOSED, RDLM_ERR_INVALID_ARG; with a
 *  lease, RDLM_ERR_LEASE_EXPIRED once the context's lease is lost (as every call but
 *  releases and closes; a new context can query the lock). */
RDLM_EXPORT rdlm_status_t rdlm_lock_query(rdlm_lock_h lock, rdlm_lock_info_t *info_p);

/* ---- reader-writer locks -------------------------------------------------------- */

/** Open a reader-writer lock; errors as rdlm_lock_open. */
RDLM_EXPORT rdlm_status_t rdlm_rwlock_open(rdlm_ctx_h ctx, const char *name,
                                           rdlm_rwlock_h *rw_p);

/**
 * Acquire shared. Node-only: one atomic on the lock's line when no writer holds it;
 * a writer that holds it (it took the gate, see write_acquire) makes new readers wait
 * until it leaves, so writers are not starved. Waiters take the gate by bounded
 * bypass: a waiter may be overtaken for RDLM_LOCK_BYPASS_US (default 1 ms), then it
 * queues in arrival order. Distributed: every request passes the node's FIFO gate.
 * Returns RDLM_OK or
 * RDLM_OWNER_DEAD, RDLM_ERR_BUSY, RDLM_ERR_TIMEOUT, RDLM_ERR_NO_RESOURCE (this
 * context holds too many shared locks at once), handle errors.
 */
RDLM_EXPORT rdlm_status_t rdlm_rwlock_read_acquire(rdlm_rwlock_h rw, uint64_t timeout_ns);

/** Release shared. RDLM_ERR_NOT_OWNER if this context holds no shared lock on it.
 *  With a lease: RDLM_ERR_LEASE_EXPIRED (released, but the lease is gone), as
 *  rdlm_lock_release. */
RDLM_EXPORT rdlm_status_t rdlm_rwlock_read_release(rdlm_rwlock_h rw);

/** Acquire exclusive: take the gate (bounded bypass: overtaken for RDLM_LOCK_BYPASS_US
 *  by other writers, then FIFO), then wait for current readers to leave. Returns as
 *  rdlm_lock_acquire, with a fencing token. RDLM_OWNER_DEAD reports a dead exclusive
 *  holder; a reader that died holding a shared lock is passed over without a status
 *  (its share ends with it; a warning is logged and the recovery counted in
 *  rdlm_stats_t), and so it is for read_acquire. Distributed: a live process of
 *  the dead reader's node passes it over within about a second (UCX); if every
 *  process of its node died, writers of other nodes wait until their timeout (a known
 *  limit, docs/distributed-locks.md). */
RDLM_EXPORT rdlm_status_t rdlm_rwlock_write_acquire(rdlm_rwlock_h rw, uint64_t timeout_ns,
                                                    uint64_t *token_p);

/** Release exclusive. Errors as rdlm_lock_release. */
RDLM_EXPORT rdlm_status_t rdlm_rwlock_write_release(rdlm_rwlock_h rw);

/** Close the handle, releasing what this context holds on it. As rdlm_lock_close,
 *  the rwlock's place may go to other names once no process has it open. */
RDLM_EXPORT rdlm_status_t rdlm_rwlock_close(rdlm_rwlock_h rw);

/** A snapshot of a reader-writer lock's state. */
typedef struct rdlm_rwlock_info {
    uint32_t waiters;          /**< queued requests, readers and writers */
    uint32_t readers;          /**< shared holders among live processes */
    uint32_t reads_held_by_me; /**< shared holds of this context */
    int write_held;            /**< 1 if a writer holds it (or a reader is passing
                                    the FIFO gate at this instant) */
    int write_held_by_me;      /**< 1 if this context holds it exclusively */
    uint64_t last_token;       /**< the last token issued */
} rdlm_rwlock_info_t;

/** Fill *info_p; as rdlm_lock_query. In a distributed context of more than one node
 *  the fields are this node's (readers: this node's shared holders). */
RDLM_EXPORT rdlm_status_t rdlm_rwlock_query(rdlm_rwlock_h rw, rdlm_rwlock_info_t *info_p);

/* ---- counters ------------------------------------------------------------------- */

/** Open a 64-bit signed counter (starts at 0); errors as rdlm_lock_open. */
RDLM_EXPORT rdlm_status_t rdlm_counter_open(rdlm_ctx_h ctx, const char *name,
                                            rdlm_counter_h *counter_p);

/**
 * Open a sharded counter: in a distributed context each node adds to its own shard
 * (no remote operation to another node), and rdlm_counter_read sums the shards (one
 * remote fetch-add per node; not a snapshot while others add). fetch_add's *old_p is
 * then the shard's previous value. In a node-only context it is a plain counter.
 * RDLM_ERR_MISMATCH if the name exists as a counter of the other sort.
 */
RDLM_EXPORT rdlm_status_t rdlm_counter_open_sharded(rdlm_ctx_h ctx, const char *name,
                                                    rdlm_counter_h *counter_p);

/** Atomically add delta (wrapping); *old_p (if not NULL) gets the previous value,
 *  distinct for every fetch-add (a non-sharded counter). Sequentially consistent.
 *  Node-only: non-blocking. Distributed: one remote fetch-add at the counter's home,
 *  shared by the concurrent fetch-adds of the node (node-level combining); blocks for
 *  that round trip; transport errors are returned (RDLM_ERR_IO, ...). */
RDLM_EXPORT rdlm_status_t rdlm_counter_fetch_add(rdlm_counter_h counter, int64_t delta,
                                                 int64_t *old_p);

/** Read the current value. Non-blocking. */
RDLM_EXPORT rdlm_status_t rdlm_counter_read(rdlm_counter_h counter, int64_t *value_p);

/** Close the handle. */
RDLM_EXPORT rdlm_status_t rdlm_counter_close(rdlm_counter_h counter);

/* ---- semaphores ------------------------------------------------------------------ */

/** Largest number of permits of a semaphore. */
#define RDLM_SEM_PERMITS_MAX 0x7fffffffu

/**
 * Open a counting semaphore with `permits` permits (1..RDLM_SEM_PERMITS_MAX), fixed by
 * the first open job-wide: another value gives RDLM_ERR_MISMATCH. Errors otherwise as
 * rdlm_lock_open.
 */
RDLM_EXPORT rdlm_status_t rdlm_sem_open(rdlm_ctx_h ctx, const char *name, uint32_t permits,
                                        rdlm_sem_h *sem_p);

/**
 * Take k permits (1..permits) at once. Node-only: bounded bypass: free permits go to
 * whoever takes them first (one CAS), but a request that has waited
 * RDLM_LOCK_BYPASS_US (default 1 ms) reserves the next free permits (reservations in
 * arrival order), so no request waits without bound and a large request is not
 * starved by small ones. Distributed: FIFO (requests served in arrival order; a try
 * takes no free permit while anyone waits). The permits held never exceed the
 * semaphore's size. timeout_ns as for locks (0: one try, RDLM_ERR_BUSY); a timeout
 * takes nothing. Distributed over UCX TCP (RDLM_LOCK_AM=1, the default): the
 * semaphore's home process keeps the count and the queue; an acquire is one round
 * trip, granted at once or by the release that frees its permits. Elsewhere: one
 * remote fetch-add when nobody waits, else the node-local FIFO gate, then the global
 * one, and a head waiting for permits polls the count with pauses growing to 1 ms.
 * A process that dies holding permits: with leases over UCX TCP (the context's
 * lock_protocol "am", rdlm_ctx_dist_info) its permits come back once the authority
 * ended its lease, found while some process waits or tries for permits, and the one
 * that gets them gets RDLM_OK; otherwise they stay taken.
 * Errors: RDLM_ERR_INVALID_ARG (k), RDLM_ERR_BUSY, RDLM_ERR_TIMEOUT, RDLM_ERR_CLOSED,
 * RDLM_ERR_PEER_DEAD (the semaphore's home process, its node's leader, died, or it
 * counts this process as dead: its link to this process was lost),
 * RDLM_ERR_NO_RESOURCE (the remote-atomic protocol's queue places, as
 * rdlm_lock_acquire), handle errors.
 */
RDLM_EXPORT rdlm_status_t rdlm_sem_acquire(rdlm_sem_h sem, uint32_t k, uint64_t timeout_ns);

/** Give back k permits this handle holds: RDLM_ERR_INVALID_ARG if k is 0 or above the
 *  semaphore's size, RDLM_ERR_NOT_OWNER if it holds fewer (nothing changes then).
 *  Node-only: one atomic; wakes one sleeping waiter (or the reserver) only when one
 *  sleeps and no wake is in flight. Distributed: one message to the home that nobody
 *  waits for (UCX TCP), else one remote fetch-add; others see the permits once it
 *  reaches the home (rdlm_sem_available). With a lease: RDLM_ERR_LEASE_EXPIRED
 *  (given back, but the lease is gone), as rdlm_lock_release. */
RDLM_EXPORT rdlm_status_t rdlm_sem_release(rdlm_sem_h sem, uint32_t k);

/** Permits free at this instant: a snapshot, always within 0..permits. While others
 *  acquire and release it may be out of date as soon as it returns, and in a
 *  distributed context it reads low (down to 0) for the moment an acquire tries for
 *  more permits than are free. Node-only: non-blocking; distributed: one remote
 *  fetch-add at the home. Over UCX TCP another process's release is a message
 *  nobody waits for: it is counted once it reaches the home, which may be a moment
 *  after that process returned and even after you synchronized with it (MPI_Barrier).
 *  Errors: handle errors, RDLM_ERR_INVALID_ARG (NULL available_p), transport errors
 *  (*available_p untouched then). */
RDLM_EXPORT rdlm_status_t rdlm_sem_available(rdlm_sem_h sem, uint32_t *available_p);

/** Close the handle, giving back the permits it holds. */
RDLM_EXPORT rdlm_status_t rdlm_sem_close(rdlm_sem_h sem);

/* ---- barriers ------------------------------------------------------------------- */

/**
 * Open a barrier for nprocs participants (>= 1). Every process must pass the same
 * nprocs: a different value gives RDLM_ERR_MISMATCH. Reusable: generation-based.
 */
RDLM_EXPORT rdlm_status_t rdlm_barrier_open(rdlm_ctx_h ctx, const char *name,
                                            uint32_t nprocs, rdlm_barrier_h *barrier_p);

/**
 * Arrive and wait until nprocs participants have arrived in this generation. Writes
 * before the wait in any participant are visible after it in all of them.
 * On RDLM_ERR_TIMEOUT the arrival is withdrawn (the barrier is as if this call never
 * happened) unless the barrier completed meanwhile, in which case RDLM_OK is returned.
 * timeout_ns 0 (arrive only if the others are there) returns RDLM_ERR_TIMEOUT too,
 * not RDLM_ERR_BUSY as the tries of locks do. A participant that dies after arriving
 * stays counted: the others pass without it.
 * The same with RDLM_ERR_CLOSED when the context is destroyed during the wait.
 * Distributed: RDLM_ERR_PEER_DEAD when the home of the barrier's word (or the
 * transport to it) is lost meanwhile, for example for a process that was stopped
 * (SIGSTOP) long enough for its peers to give it up, and resumes.
 */
RDLM_EXPORT rdlm_status_t rdlm_barrier_wait(rdlm_barrier_h barrier, uint64_t timeout_ns);

/** Close the handle. */
RDLM_EXPORT rdlm_status_t rdlm_barrier_close(rdlm_barrier_h barrier);

/* ---- introspection -------------------------------------------------------------- */

/** Per-context statistics since rdlm_ctx_create. */
typedef struct rdlm_stats {
    uint64_t acquires;   /**< successful exclusive and shared acquires */
    uint64_t contended;  /**< acquires that had to wait (on the node: not a wait at a
                              service-wide lock's home, which home_ops shows) */
    uint64_t parks;      /**< futex sleeps */
    uint64_t wakes;      /**< futex wake calls issued */
    uint64_t timeouts;   /**< acquires or waits that timed out */
    uint64_t recoveries; /**< locks recovered from a dead holder */
    uint64_t skips;      /**< abandoned queue places (FIFO locks) or dead waiters'
                              reservations (bounded-bypass locks) passed over */
    /* Distributed contexts only (0 otherwise; home_ops also for service-wide locks): */
    uint64_t global_acquires; /**< acquires that took the global word */
    uint64_t local_handoffs;  /**< acquires that found the node already holding it */
    uint64_t home_ops;        /**< remote operations on home words (open, acquire,
                                   release; with RDLM_AUTHORITY: on rdlmd's homes) */
    uint64_t peer_ops;        /**< remote operations on other processes' queue
                                   nodes (link, grant, pass) */
    uint64_t home_ops_posted; /**< of home_ops, those posted and not waited for (the
                                   free of an uncontended cross-node release where
                                   the transport posts atomics, as UCX does) */
    uint64_t combined;        /**< counter fetch-adds of other processes this one
                                   served in its combined remote operation */
    uint64_t barriers;        /**< collective barriers completed (rdlm_ctx_barrier) */
    uint64_t barrier_msgs;    /**< messages (over links, active messages or posted
                                   adds) this process sent for them (node leaders:
                                   ceil(log2 nodes) per barrier) */
    /* With a lease authority (RDLM_AUTHORITY, RDLM_JOB_AUTHORITY) only (0 otherwise): */
    uint64_t authority_requests; /**< requests this process sent to the authority,
                                      renewals excluded (opening the lease and the
                                      epoch; never a lock operation) */
    uint64_t authority_renewals; /**< lease renewals sent (renewal thread and
                                      rdlm_session_renew) */
    uint64_t reservations; /**< bounded-bypass waits that reached RDLM_LOCK_BYPASS_US
                                (from then on served in order of reaching it); node
                                locks only, not a service-wide lock's WANT */
} rdlm_stats_t;

/** Copy the statistics; non-blocking, approximate under concurrent use. */
RDLM_EXPORT rdlm_status_t rdlm_ctx_stats(rdlm_ctx_h ctx, rdlm_stats_t *stats_p);

/** Facts about the attached segment. */
typedef struct rdlm_segment_info {
    uint32_t capacity;   /**< objects it can hold */
    uint32_t used;       /**< objects created */
    uint32_t max_procs;  /**< process slots */
    uint32_t live_procs; /**< slots held by live processes */
    uint64_t bytes;      /**< size of the shared mapping */
    uint32_t epoch;      /**< token epoch of this segment incarnation */
    int created;         /**< 1 if this context created the segment */
    int replaced_stale;  /**< 1 if it replaced a stale one */
} rdlm_segment_info_t;

/** Fill *info_p. Non-blocking. */
RDLM_EXPORT rdlm_status_t rdlm_ctx_segment_info(rdlm_ctx_h ctx,
                                                rdlm_segment_info_t *info_p);

/** The transport's counters of a distributed context (this process). */
typedef struct rdlm_transport_stats {
    uint64_t amo;      /**< remote atomics issued (fetching and posted) */
    uint64_t puts;     /**< remote writes */
    uint64_t gets;     /**< remote reads */
    uint64_t am_sent;  /**< active messages sent */
    uint64_t am_recv;  /**< active messages handled */
    uint64_t bytes;    /**< payload bytes of puts, gets and messages */
    uint64_t progress; /**< progress calls (callers and the progress thread) */
} rdlm_transport_stats_t;

/** Copy the transport's counters (also printed at destroy with RDLM_STATS=1).
 *  Non-blocking. RDLM_ERR_UNSUPPORTED for a node-only context (no transport);
 *  RDLM_ERR_BAD_HANDLE, RDLM_ERR_INVALID_ARG. */
RDLM_EXPORT rdlm_status_t rdlm_ctx_transport_stats(rdlm_ctx_h ctx,
                                                   rdlm_transport_stats_t *stats_p);

/** Where a distributed context runs. */
typedef struct rdlm_ctx_dist_info {
    int distributed;       /**< 0 for a node-only context (the rest is then 0) */
    uint32_t rank;         /**< this process in the job */
    uint32_t size;         /**< processes in the job */
    uint32_t node;         /**< this process's node (0..nodes-1) */
    uint32_t nodes;        /**< nodes, virtual ones included (RDLM_VIRTUAL_NODES) */
    uint32_t local_rank;   /**< this process among its node's */
    uint32_t local_size;   /**< processes on its node */
    uint32_t cohort_bound; /**< RDLM_COHORT_BOUND; 0 with leases in the remote-atomic
                                queue (no local hand-offs of exclusive locks: its lock
                                recovery needs it) */
    uint32_t token_epoch;  /**< epoch of the tokens issued in this job */
    const char *transport; /**< "ucx", ...; static string */
    int progress_thread;   /**< 1 if a progress thread runs */
    /** How cross-node exclusive locks (and rwlock writers) and semaphores queue:
     *  "am", served by each one's home process with active messages (where the
     *  transport emulates remote atomics and RDLM_LOCK_AM=1), or
     *  "atomic", with remote atomics; static string. */
    const char *lock_protocol;
} rdlm_ctx_dist_info_t;

/** Fill *info_p. Non-blocking. Errors: RDLM_ERR_BAD_HANDLE, RDLM_ERR_INVALID_ARG. */
RDLM_EXPORT rdlm_status_t rdlm_ctx_dist_info(rdlm_ctx_h ctx, rdlm_ctx_dist_info_t *info_p);

/* ---- collective barrier (distributed contexts) ----------------------------------- */

/**
 * Barrier over every process of a distributed context: returns once all of them
 * called it (for this generation); writes made before it by any process are visible
 * after it in every process (for memory shared between them; data sent through other
 * channels must be complete before). On-node fan-in over per-process padded words,
 * then a dissemination exchange among node leaders (ceil(log2 nodes) messages each,
 * stamped with the generation: over TCP connections of the leaders' own where the
 * transport would use TCP, RDLM_BARRIER_LINKS), then on-node release. Blocks without
 * a time limit while the processes live; one thread per process at a time. Errors:
 * RDLM_ERR_BAD_HANDLE, RDLM_ERR_UNSUPPORTED (node-only context: use a named
 * rdlm_barrier_*), RDLM_ERR_CLOSED (the context is being destroyed),
 * RDLM_ERR_PEER_DEAD (a process of the context died: every process waiting in a
 * barrier that cannot complete gets this, within milliseconds to tens of them, and
 * every later barrier fails so too. A process that died after it arrived may leave
 * some processes passing that last barrier and others failing it;
 * docs/distributed-locks.md, "a member dies"), RDLM_ERR_IO.
 */
RDLM_EXPORT rdlm_status_t rdlm_ctx_barrier(rdlm_ctx_h ctx);

/**
 * Split phase of rdlm_ctx_barrier: arrive never blocks (it announces this process);
 * wait returns once every process arrived. Work between the two overlaps the
 * barrier. RDLM_ERR_MISMATCH for arrive twice without wait, or wait without arrive
 * (state unchanged); other errors as rdlm_ctx_barrier.
 */
RDLM_EXPORT rdlm_status_t rdlm_ctx_barrier_arrive(rdlm_ctx_h ctx);
/** The wait half of the split-phase barrier: see rdlm_ctx_barrier_arrive. */
RDLM_EXPORT rdlm_status_t rdlm_ctx_barrier_wait(rdlm_ctx_h ctx);

/* ---- fencing: the resource side --------------------------------------------------- */

/**
 * Resource-side token check: atomically, if token >= *highest, raise *highest to
 * token and return RDLM_OK (the write guarded by token may proceed); else leave
 * *highest unchanged and return RDLM_ERR_STALE_TOKEN (a holder that lost the lock is
 * writing late: reject the write). Equal tokens pass, so one holder may write many
 * times. *highest starts at 0 and must be 8-byte aligned; it may live in memory
 * shared between processes. RDLM_ERR_INVALID_ARG if highest is NULL. Lock-free,
 * thread-safe, no context needed. The check and the write it guards must themselves
 * be serialised by the resource (e.g. under the resource's own mutex) when the write
 * is not a single atomic store.
 */
RDLM_EXPORT rdlm_status_t rdlm_fence_check(uint64_t *highest, uint64_t token);

#ifdef __cplusplus
}
#endif
#endif
