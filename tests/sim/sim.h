/*
 * Deterministic simulation of the replicated lease authority (tests/sim).
 *
 * A raft_fixture cluster (libraft's in-memory I/O, virtual time) whose servers each run the
 * real state machine through the real raft_fsm adapter (core/lease/authority/raft_fsm.c),
 * wrapped by this harness so every apply is observed. One seed fixes the whole run: the
 * workload and the faults come from a splitmix64 stream, libraft's fixture is itself
 * deterministic, and no decision reads a clock or an address, so a failing seed fails
 * again, at the same event, when re-run alone.
 *
 *   sim_cluster.c  the fixture: wrapped FSMs, network faults as a wanted matrix,
 *                  leaders, elections, submitting entries
 *   sim_disk.c     a fix for the fixture's in-memory disk (truncate while appends
 *                  are pending)
 *   sim_checks.c   the invariants, checked after every apply, snapshot and step,
 *                  and the Raft-level checks that tell a libraft fault from a
 *                  state-machine bug
 *   sim_witness.c  the shipped divergence check (core/lease/authority/include/
 *                  witness.h) in the leader's confirmation rounds, failing closed,
 *                  and what each libraft fault led to (--raft-faults observe)
 *   sim_fence.c    a fenced resource's view: the tokens clients were told, per lock
 *   lease_sim.c    command line, clients and their workload, the leader's tick
 *                  driving the shipped lease timers (core/lease/authority/timers.h)
 *                  in virtual time, faults, summary
 */
#ifndef RDLM_SIM_H
#define RDLM_SIM_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include <raft.h>
#include <raft/fixture.h>

#include "raft_fsm.h"
#include "timers.h"

#define SIM_MAX_SERVERS 5
#define SIM_NAMES 4 /**< lock names the clients use ("job/L0".."job/L3") */
#define SIM_CLIENTS 6
#define SIM_REQS 64           /**< entries in flight at once (more are not submitted) */
#define SIM_MAX_SESSIONS 4096 /**< timers the leader holds: sm.c's default max_sessions */
#define SIM_GRANT_SLOTS 16384 /**< (session, seq) -> token table, per seed */
#define SIM_APPLY_GRANTS 16   /**< grants one apply may make (CLOSE of a holder) */
#define SIM_SNAPSHOT_EVERY 16 /**< applies between snapshot round trips, per replica */
#define SIM_DISK_PENDING 256  /**< appends in flight on one server's disk */
#define SIM_BROKEN_REPLICA 1u /**< the replica a --broken mode corrupts */
#define SIM_EXIT_RAFT 3       /**< exit code: libraft broke a Raft guarantee */
#define SIM_NO_EVENT UINT_MAX /**< "never" for the event fields of sim_outcome_t */

/** splitmix64: the only source of choices. */
typedef struct sim_rng {
    uint64_t s;
} sim_rng_t;

uint64_t sim_rng_next(sim_rng_t *rng);
/** Uniform in [0, n), n > 0. */
uint32_t sim_rng_below(sim_rng_t *rng, uint32_t n);

/** Planted bugs: a replica's apply wrapper misbehaves once; the checks must fire. */
typedef enum sim_broken {
    SIM_BROKEN_NONE = 0,
    SIM_BROKEN_SKIP_ENTRY, /**< skip one OPEN/ACQUIRE entry */
    SIM_BROKEN_PHANTOM,    /**< apply an EXPIRE of a holder that was never logged */
    SIM_BROKEN_ROLLBACK,   /**< go back to an older state of its own */
} sim_broken_t;

/** What a libraft fault (sim_raft_fault) does to the run: --raft-faults. */
typedef enum sim_raft_mode {
    SIM_RAFT_FAIL = 0, /**< print it and exit SIM_EXIT_RAFT */
    SIM_RAFT_SKIP,     /**< end the seed there (every check up to it stands), go on */
    SIM_RAFT_OBSERVE,  /**< record it, stop the state-machine checks it invalidates,
                            run the seed to its end with the witness and the fence */
} sim_raft_mode_t;

/** When the leader compares witness marks: --witness-rounds. */
typedef enum sim_rounds {
    SIM_ROUNDS_RENEW = 0, /**< when a live client's RENEW is due (TTL/3 apart) */
    SIM_ROUNDS_STEP,      /**< after every fixture step (an upper bound) */
} sim_rounds_t;

/** A cut link i -> j: messages dropped silently (saturated), or sends failing
 *  (disconnected). */
enum { SIM_CUT_NONE = 0, SIM_CUT_DROP = 1, SIM_CUT_DISCONNECT = 2 };

struct sim;

/** A grant seen during one apply (the ACQUIRE's own, or a waiter's via the grant
 *  callback). */
typedef struct sim_grant_ev {
    uint64_t session, seq, token;
    unsigned name; /**< index in sim_names, SIM_NAMES if not a workload name */
    int broken;    /**< as the grant callback said (0 for the ACQUIRE's own) */
} sim_grant_ev_t;

/** A server's disk: the fixture's append and truncate, with truncations held back
 *  until the appends submitted before them completed (sim_disk.c). */
typedef struct sim_disk {
    int (*append)(struct raft_io *io, struct raft_io_append *req,
                  const struct raft_entry entries[], unsigned n, raft_io_append_cb cb);
    int (*truncate)(struct raft_io *io, raft_index index);
    unsigned n; /**< appends in flight, oldest first */
    struct raft_io_append *req[SIM_DISK_PENDING];
    raft_io_append_cb cb[SIM_DISK_PENDING];
    raft_index truncate_at;  /**< 0: none held back */
    unsigned truncate_after; /**< appends to complete before it */
} sim_disk_t;

/** One server: libraft calls outer, which calls inner (the adapter under test). */
typedef struct sim_replica {
    struct sim *sim;
    unsigned i;
    struct raft *raft;
    struct raft_fsm outer;
    struct raft_fsm inner;
    rdlm_lease_raft_fsm_t adapter;
    rdlm_lease_raft_fsm_t scratch; /**< snapshots are restored into it */
    struct raft_fsm scratch_fsm;
    sim_disk_t disk;
    int in_apply;      /**< grant callbacks belong to the current apply */
    uint64_t pre_hash; /**< state hash before an undecodable entry */
    unsigned n_grants;
    sim_grant_ev_t grants[SIM_APPLY_GRANTS];
    /* the checker's view of this replica */
    raft_index seen;      /**< last applied index compared after a step */
    raft_index committed; /**< commit index recorded after a step */
    raft_term led;        /**< term it was last seen leading in */
    uint64_t holder[SIM_NAMES], token[SIM_NAMES];
    uint64_t epoch, max_token;
    /* --broken */
    int broken_done;
    void *saved;
    size_t saved_len;
} sim_replica_t;

/** State after applying everything through one index, from the first replica that
 *  got there; every other replica must match it. */
typedef struct sim_point {
    uint8_t set;
    uint8_t by;
    uint8_t has_entry; /**< entry, term: the command entry at this index */
    uint64_t entry;    /**< FNV-1a of its bytes */
    raft_term term;
    raft_term committed; /**< term of the entry committed at this index (0: none yet) */
    uint64_t hash, epoch;
    uint64_t holder[SIM_NAMES], token[SIM_NAMES];
} sim_point_t;

typedef struct sim_grant_rec {
    uint64_t session, seq, token; /**< session 0: free slot */
} sim_grant_rec_t;

/** A grant a client was told (sim_fence.c), keyed by (client, session, seq). */
typedef struct sim_told {
    uint64_t session, seq, token; /**< session 0: free slot */
    unsigned client;
} sim_told_t;

/** What a seed's libraft fault led to (sim_witness.c); events are indexes into the
 *  seed's events, sim->events for the final converge, SIM_NO_EVENT for never. */
typedef struct sim_outcome {
    unsigned fault, fault_event; /**< the first libraft fault: R<fault> (0 none) */
    unsigned split_event;        /**< two replicas applied different entries at one index */
    unsigned detect_event;       /**< a leader's witness first flagged a divergence */
    unsigned detect_by, detect_peer;
    uint64_t detect_n;                    /**< at the leader's mark n */
    unsigned fenced_before, fenced_after; /**< fence violations before / after that */
    int converged;
} sim_outcome_t;

/** Over the whole run: the witness, the fence, and the faulted seeds' outcomes. */
typedef struct sim_observed {
    uint64_t rounds, compared;  /**< witness rounds; chains compared in them */
    uint64_t told;              /**< grants told to clients (repeats not counted) */
    uint64_t fenced[2];         /**< fence violations: [0] told twice, [1] gone back */
    uint64_t fenced_after;      /**< of them after the seed's first detection */
    uint64_t false_positives;   /**< flags in faulted seeds that did not diverge */
    uint64_t split;             /**< faulted seeds whose replicas applied other entries */
    uint64_t detected, at_end;  /**< of those: flagged; only in the final converge */
    uint64_t fenced_seeds;      /**< faulted seeds with a fence violation */
    uint64_t fenced_undetected; /**< of them: never flagged */
    uint64_t unconverged;       /**< faulted seeds that did not converge */
    unsigned *lag;              /**< per detection: events from the fault to it */
    size_t n_lag, cap_lag;
} sim_observed_t;

/** An entry submitted with raft_apply; the slot lives until libraft calls back. */
typedef struct sim_req {
    struct raft_apply req; /* first: the callback's pointer is the slot's */
    struct sim *sim;
    int busy;
    unsigned server;      /**< the server it was submitted to */
    unsigned owner;       /**< client index, or SIM_CLIENTS for the leader's timer */
    rdlm_lease_cmd_t cmd; /**< op 0: raw bytes (a garbage entry) */
} sim_req_t;

/** A client's own belief; only used to generate plausible commands. */
typedef struct sim_client {
    uint64_t nonce;
    uint64_t session; /**< 0: none */
    uint64_t seq;     /**< last seq used */
    int stalled;      /**< stopped renewing its lease */
    uint64_t held_token[SIM_NAMES], held_seq[SIM_NAMES];
    uint64_t wait_seq[SIM_NAMES];
    rdlm_lease_cmd_t last; /**< last request sent, for a retry (op 0: none) */
    raft_time renew_at;    /**< virtual ms of its next RENEW (witness rounds) */
} sim_client_t;

typedef struct sim_stats {
    uint64_t seeds, events, elections, kills, partitions, grants, expiries, entries, steps,
        snapshots, garbage, retries;
    uint64_t raft_faults[4]; /**< seeds with a fault R1, R2, R3 ([0]: all) */
} sim_stats_t;

typedef struct sim {
    /* configuration */
    unsigned n;
    unsigned events;
    sim_broken_t broken;
    int violation_exit; /**< exit code when an invariant fails */
    int raft_exit;      /**< exit code when libraft fails (SIM_RAFT_FAIL) */
    sim_raft_mode_t raft_mode;
    sim_rounds_t rounds;
    /* per seed */
    uint64_t seed;
    unsigned event;
    int poisoned; /**< a libraft fault was seen: no more state-machine checks */
    sim_outcome_t out;
    sim_rng_t rng;
    rdlm_lease_limits_t limits; /**< every replica's; tight ones in some seeds */
    struct raft_fixture f;
    sim_replica_t rep[SIM_MAX_SERVERS];
    int alive[SIM_MAX_SERVERS];                     /**< wanted */
    uint8_t cut[SIM_MAX_SERVERS][SIM_MAX_SERVERS];  /**< wanted, i -> j: SIM_CUT_* */
    uint8_t disc[SIM_MAX_SERVERS][SIM_MAX_SERVERS]; /**< disconnected in the fixture */
    raft_id last_leader;
    raft_term last_term;
    struct raft_barrier barrier;
    int barrier_busy;
    sim_req_t reqs[SIM_REQS];
    sim_client_t clients[SIM_CLIENTS];
    unsigned timer_leader;          /**< whose timers these are (n: none) */
    raft_term timer_term;           /**< in which of its terms */
    rdlm_lease_timers_t timers;     /**< the leader's, in virtual ms */
    uint64_t due[SIM_MAX_SESSIONS]; /**< sessions whose EXPIRE a scan found due */
    size_t n_due;
    sim_point_t *points;
    size_t points_cap;
    raft_index max_committed; /**< highest index any server committed */
    sim_grant_rec_t grant_tab[SIM_GRANT_SLOTS];
    sim_told_t told_tab[SIM_GRANT_SLOTS];
    sim_told_t fence_top[SIM_NAMES]; /**< per lock: the largest token told, to whom */
    sim_stats_t st;
    sim_observed_t ob;
} sim_t;

extern const char *const sim_names[SIM_NAMES];
/** Index of name in sim_names, SIM_NAMES if it is none of them. */
unsigned sim_name_index(const char *name);

/* sim_cluster.c */

/** Bring up the fixture for sim->seed (n servers, server 0 elected). Exits 2 on a
 *  setup failure (never a finding). */
void sim_cluster_start(sim_t *sim);
void sim_cluster_stop(sim_t *sim);
/** Make the fixture's links match sim->alive and sim->cut. */
void sim_net_apply(sim_t *sim);
/** Revive every server and clear every cut. */
void sim_heal(sim_t *sim);
/** Index of the fixture's stable leader, or sim->n; once libraft stopped a server
 *  (RAFT_UNAVAILABLE) that one counts as down (the fixture would find none). */
unsigned sim_leader(sim_t *sim);
/** Step until there is a stable leader or max_ms of virtual time passed. */
unsigned sim_wait_leader(sim_t *sim, unsigned max_ms);
/** Depose the leader and let a new one win (a chosen one where the fixture allows).
 *  Heals first: the fixture's depose/elect need every server reachable. */
void sim_reelect(sim_t *sim);
/** raft_apply cmd (or len raw bytes when raw != NULL) on server s and step until it
 *  is applied there or max_ms passed. Returns the slot, NULL if not submitted. */
sim_req_t *sim_submit(sim_t *sim, unsigned s, unsigned owner, const rdlm_lease_cmd_t *cmd,
                      const uint8_t *raw, size_t len, unsigned max_ms);
/** Step for ms of virtual time. */
void sim_step_ms(sim_t *sim, unsigned ms);
/** Heal everything, commit a barrier and step until every replica applied what the
 *  leader applied. 1 on success, 0 if that took more than max_ms (per phase). */
int sim_converge(sim_t *sim, unsigned max_ms);
/** "unavailable" (stopped by libraft), "follower", "candidate", "leader". */
const char *sim_state_name(int state);
/** One line about every server: state, term, applied, commit, last index/term. */
void sim_describe(sim_t *sim, char *buf, size_t size);
/** Last index of a server's in-memory log. */
raft_index sim_log_last(const struct raft_log *log);
/** The entry at index in a server's in-memory log, NULL if it has none. */
const struct raft_entry *sim_log_entry(const struct raft_log *log, raft_index index);
/** Term of the entry at index in a server's in-memory log, 0 if it has none. */
raft_term sim_log_term(const struct raft_log *log, raft_index index);

/* sim_disk.c */

/** Put the held-back truncation in front of every server's fixture disk. */
void sim_disk_install(sim_t *sim);

/* sim_checks.c */

/** Forget the previous seed. */
void sim_check_reset(sim_t *sim);
/** After the inner apply of buf at index: cmd is the decoded entry (NULL: did not
 *  decode). */
void sim_check_apply(sim_t *sim, sim_replica_t *rep, raft_index index,
                     const struct raft_buffer *buf, const rdlm_lease_cmd_t *cmd,
                     const rdlm_lease_result_t *res);
/** Snapshot the replica through its adapter and restore that into a scratch adapter:
 *  same state; half of it is refused without a change. */
void sim_check_snapshot(sim_t *sim, sim_replica_t *rep);
/** After every fixture step: replicas at the same applied index agree, and the
 *  leader's idea of what its followers store is true. */
void sim_check_step(sim_t *sim);
/** A client was told token for the ACQUIRE (session, seq): it must be the token the
 *  log granted. what names the path (for the message). */
void sim_check_told(sim_t *sim, uint64_t session, uint64_t seq, uint64_t token,
                    const char *what);
/** An invariant failed: print seed, event and what, and exit with
 *  sim->violation_exit, unless the replicas' logs differ at an applied index, which
 *  is libraft's fault (sim_raft_fault). Returns only with sim->poisoned set. */
void sim_violation(sim_t *sim, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** libraft broke Raft guarantee R<check> (sim_checks.c): print it; exit with
 *  sim->raft_exit (SIM_RAFT_FAIL), or count it, record it in sim->out and set
 *  sim->poisoned (SIM_RAFT_SKIP ends the seed there, SIM_RAFT_OBSERVE goes on; only
 *  the first few are printed). Only a seed's first fault counts. */
void sim_raft_fault(sim_t *sim, unsigned check, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/** 1 if two replicas' logs hold entries that change the state machine differently
 *  (command bytes, or a command against another kind of entry) at an index both
 *  applied. */
int sim_applied_differ(sim_t *sim);
/** A harness or setup error (never a finding): exit 2. */
void sim_fatal(const char *what) __attribute__((noreturn));

/* sim_witness.c */

/** Forget the previous seed's outcome. */
void sim_witness_reset(sim_t *sim);
/** After every fixture step: a confirmation round of the leader if one is due
 *  (sim->rounds), with the witness check against every replica it reaches. */
void sim_witness_step(sim_t *sim);
/** 1 if server s fails closed: its witness found a divergence, so it answers no
 *  client and tells no waiter (RDLM_ERR_UNAVAILABLE). */
int sim_refuses(sim_t *sim, unsigned s);
/** At the seed's end (after the final converge, before the cluster stops): judge and
 *  print what its libraft fault led to, add it to sim->ob. A flag in a faulted seed
 *  whose replicas never diverged is a false positive (printed; the run fails). */
void sim_witness_seed_end(sim_t *sim);
/** Print the run's witness, fence and fault summary lines. Returns 1 if the run
 *  must fail for them (a false positive, or a fence violation after a flag), else 0. */
int sim_witness_summary(sim_t *sim);

/* sim_fence.c */

/** Forget the previous seed's tokens. */
void sim_fence_reset(sim_t *sim);
/** Client c was told token as a grant of lock k for (session, seq), via what: as a
 *  fenced resource sees it, it must be above every token told before for k (a repeat
 *  of the same grant to the same client excepted). A violation is recorded (and is a
 *  VIOLATION when no libraft fault was seen in the seed). */
void sim_fence_told(sim_t *sim, unsigned c, unsigned k, uint64_t session, uint64_t seq,
                    uint64_t token, const char *what);

/* lease_sim.c */

/** libraft answered an entry submitted by the workload (status 0: res valid). */
void sim_on_reply(sim_t *sim, sim_req_t *req, int status, const rdlm_lease_result_t *res);
/** The state machine of server s, leading, granted a waiter. */
void sim_on_grant(sim_t *sim, unsigned s, uint64_t session, uint64_t seq, unsigned name,
                  uint64_t token);

#endif
