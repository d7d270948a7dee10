/*
 * One replica of the lease authority (replica.c): libraft 0.15 over raft_uv (TCP, data
 * directory) on a libuv loop, the state machine through the fsm adapter (raft_fsm.h), and
 * the leader's duties: lease timers and the entries only a leader submits.
 *
 * Leadership
 *   A 10 ms timer compares raft_state and the term. On becoming leader the replica
 *   submits a barrier; once it is applied (every entry of earlier terms is applied,
 *   so sm_check sees the whole committed state and no EXPIRE of a previous leader can
 *   still commit) the leader is "ready": it arms every session's timer and serves
 *   requests. On stepping down it drops every timer; libraft fails the requests in
 *   flight (their callbacks get RDLM_ERR_NOT_LEADER) and ops->leading(arg, 0) lets the
 *   server answer the requests it keeps.
 *
 * Entries
 *   Commands are padded for raft_uv, which keeps entry data in 8-byte units, and
 *   unpadded before the state machine applies them (replica.c).
 *
 * Disk (disk.h)
 *   The data directory is checked at start and sampled every 100 ms. While it is low
 *   or read-only, or (on a leader) another replica's STATUS answer said so within two
 *   timeouts (confirm.h; a ready leader asks a round every 500 ms), submit refuses
 *   every entry with RDLM_ERR_NO_SPACE and no EXPIRE is
 *   submitted (the sessions keep their locks until space returns; renewals write
 *   nothing and go on); a new leader still commits its barrier on a low disk (one
 *   entry, into a preallocated segment), not on a read-only one. A directory that is
 *   gone makes the replica unsafe: it serves nothing more and calls params->on_fault
 *   once. A replica libraft stopped (RAFT_UNAVAILABLE: a failed write, or entries
 *   that contradict the leader's) says so once at error and answers only STATUS, so
 *   that the leader can still compare marks with it (witness.h).
 *
 * Lease timers (leader only, CLOCK_MONOTONIC milliseconds; the rules are timers.h,
 * called with this clock's time by the replica and with virtual time by tests/sim)
 *   deadline = max(deadline, now + TTL) on OPEN committed and on RENEW (no log entry,
 *   no disk write); a deadline that passes submits an EXPIRE, and once it is
 *   committed the leader logs "session X expired"; nothing is removed locally: the
 *   session leaves the timers when its EXPIRE or CLOSE is applied. A session whose
 *   EXPIRE is in flight is not renewed (RDLM_ERR_LEASE_EXPIRED).
 *
 * Why a renewal granted by a deposed leader is still safe
 *   A client's lease is valid until t_send + TTL * (1 - drift), t_send <= the grant.
 *   A RENEW is answered only after a round of leadership confirmation that started
 *   after it arrived (confirm.h): a majority was still in the leader's term then, so
 *   no later leader had been elected when it arrived. (Without that round libraft
 *   0.15 alone would let a cut-off leader grant renewals for up to 2 * (ET + HB): it
 *   steps down only when a window of one election timeout ET, checked on heartbeat
 *   ticks HB, passes without AppendEntries results from a majority.) The new leader
 *   arms every session, when it becomes ready (after its election, so after every
 *   granted renewal arrived), with a full TTL: no session expires before the end of
 *   any lease an older leader granted, by the same drift argument as a renewal the
 *   leader grants itself (tests/model/lease_break.pml, its default GRACE = 0). An
 *   EXPIRE an old leader submitted either committed before the new leader is ready
 *   (the session is gone before it grants any renewal) or never commits.
 */
#ifndef RDLM_LEASE_REPLICA_H
#define RDLM_LEASE_REPLICA_H

#include <stdint.h>

#include <uv.h>

#include "config.h"
#include "sm.h"
#include "witness.h"

/** Most replicas in one authority. */
#define RDLM_LEASE_PEERS_MAX RDLM_ADDRS_COUNT

typedef struct rdlm_lease_replica rdlm_lease_replica_t;

/** One member of the authority: its Raft address and its client address. */
typedef struct rdlm_lease_peer {
    uint64_t id;                         /**< > 0, unique */
    char raft_addr[RDLM_ADDR_MAX + 1];   /**< "a.b.c.d:port" */
    char client_addr[RDLM_ADDR_MAX + 1]; /**< "a.b.c.d:port" */
} rdlm_lease_peer_t;

/** The replica became unsafe (fault_arg): its data directory vanished (removed, or
 *  replaced by another), and its log with it. It serves nothing more; the owner
 *  should stop it. */
typedef void (*rdlm_lease_fault_func_t)(void *arg);

typedef struct rdlm_lease_replica_params {
    uint64_t id;                    /**< this replica: one of peers */
    const rdlm_lease_peer_t *peers; /**< the full configuration (bootstrapped) */
    unsigned n_peers;               /**< 1..RDLM_LEASE_PEERS_MAX */
    const char *data_dir;           /**< existing directory, this replica's alone */
    unsigned election_timeout_ms;   /**< a follower that hears no leader stands for
                                         election within it (libraft's base is half
                                         of it, randomised in [base, 2 base)) */
    unsigned heartbeat_ms;          /**< < election_timeout_ms / 2 */
    unsigned snapshot_threshold;    /**< entries between snapshots; 1/8 trail */
    rdlm_lease_limits_t limits;     /**< of the state machine (sm.h); max_sessions
                                         > 0: the timers are allocated for it */
    rdlm_lease_fault_func_t on_fault; /**< NULL: none (the replica only stops serving) */
    void *fault_arg;
} rdlm_lease_replica_params_t;

/** What the replica knows about leadership, as of the call. */
typedef struct rdlm_lease_role {
    int is_leader; /**< libraft state is leader */
    int ready;     /**< leader that serves requests (see above) */
    int starting;  /**< leader seen by the sample, not ready yet:
                        requests wait for ops->leading */
    uint64_t term;
    uint64_t leader_id;             /**< 0 if unknown */
    const char *leader_client_addr; /**< the leader's client address, "" if unknown */
} rdlm_lease_role_t;

/** Callbacks into the client port (server.c); all run on the loop thread. */
typedef struct rdlm_lease_replica_ops {
    /** ready = 1: this replica became a ready leader; 0: it stopped being leader. */
    void (*leading)(void *arg, int ready);
    /** A waiter was granted by another entry (sm.h), during apply, on every replica. */
    rdlm_lease_grant_func_t granted;
    /** session was closed or expired (its entry applied on this leader). */
    void (*session_gone)(void *arg, uint64_t session);
    /** A round of leadership confirmation ended (rdlm_lease_replica_confirm): every
     *  round <= round is answered, confirmed or not. */
    void (*confirmed)(void *arg, uint64_t round, int confirmed);
} rdlm_lease_replica_ops_t;

/** Outcome of a submitted entry: status RDLM_OK with the state machine's result (res
 *  valid during the call only), or RDLM_ERR_NOT_LEADER (leadership lost or shutting
 *  down before it was applied: it may still commit later), RDLM_ERR_NO_MEMORY,
 *  RDLM_ERR_IO, res NULL. */
typedef void (*rdlm_lease_done_func_t)(void *arg, rdlm_status_t status,
                                       const rdlm_lease_result_t *res);

/** RDLM_OK if params may start a replica, else RDLM_ERR_INVALID_ARG with one error
 *  line saying what is wrong (peers 1-RDLM_LEASE_PEERS_MAX of distinct ids above 0,
 *  this replica's id among them, a data directory, 0 < heartbeat < half the election
 *  timeout, a snapshot threshold and max sessions above 0). Pure but for the log. */
rdlm_status_t rdlm_lease_replica_params_check(const rdlm_lease_replica_params_t *params);

/**
 * Create the replica on loop and start it: libraft's data in params->data_dir (the
 * full configuration is bootstrapped when the directory is new), Raft port bound to
 * this replica's raft_addr. Nothing runs until the loop runs. Errors (logged):
 * RDLM_ERR_INVALID_ARG (params), RDLM_ERR_NO_MEMORY, RDLM_ERR_IO (libraft refused the
 * directory or the address; a data directory that is missing, read-only or not
 * writable), RDLM_ERR_NO_SPACE (under RDLM_LEASE_DISK_START free). On an error after
 * libraft was initialised, handles are still closing: run the loop until it returns
 * to release them.
 */
rdlm_status_t rdlm_lease_replica_start(uv_loop_t *loop,
                                       const rdlm_lease_replica_params_t *params,
                                       rdlm_lease_replica_t **rep_p);

/** Install the client port's callbacks (once, before the loop runs). */
void rdlm_lease_replica_set_ops(rdlm_lease_replica_t *rep,
                                const rdlm_lease_replica_ops_t *ops, void *arg);

/** Stop: a leader first hands leadership to an up-to-date follower (libraft's
 *  transfer: the cluster does not wait for an election timeout; given up after one
 *  election timeout), then libraft closes (requests in flight complete with
 *  RDLM_ERR_NOT_LEADER) and the replica is freed; the loop returns when that is done.
 *  Non-blocking; stop the server first (it no longer answers clients). */
void rdlm_lease_replica_stop(rdlm_lease_replica_t *rep);

/** Current leadership (fresh from libraft, not the 10 ms sample). */
void rdlm_lease_replica_role(const rdlm_lease_replica_t *rep, rdlm_lease_role_t *role_p);

/** 1 if the data directory was low, read-only or gone at the last sample (disk.h):
 *  submit refuses with RDLM_ERR_NO_SPACE. */
int rdlm_lease_replica_disk_low(const rdlm_lease_replica_t *rep);

/** The state machine, for checks and status (read-only: only apply changes it). */
const rdlm_lease_sm_t *rdlm_lease_replica_sm(const rdlm_lease_replica_t *rep);

/** The configuration: *n_p peers (the array lives as long as rep). */
const rdlm_lease_peer_t *rdlm_lease_replica_peers(const rdlm_lease_replica_t *rep,
                                                  unsigned *n_p);

/** What this replica applied, as marks (witness.h): for the divergence check. */
rdlm_lease_witness_t *rdlm_lease_replica_witness(rdlm_lease_replica_t *rep);

/** Index of the last entry applied here. */
uint64_t rdlm_lease_replica_applied(const rdlm_lease_replica_t *rep);

/**
 * Log cmd (a logged op, already validated against the state: rdlm_lease_sm_check) and
 * call done once it was applied here, or failed. Requires a ready leader. RDLM_OK
 * (done will be called, never from inside this call) or RDLM_ERR_NOT_LEADER,
 * RDLM_ERR_INVALID_ARG (cmd does not encode), RDLM_ERR_NO_SPACE (this or another
 * replica's data disk is low or read-only: nothing is written), RDLM_ERR_NO_MEMORY,
 * RDLM_ERR_IO (done is not called).
 */
rdlm_status_t rdlm_lease_replica_submit(rdlm_lease_replica_t *rep,
                                        const rdlm_lease_cmd_t *cmd,
                                        rdlm_lease_done_func_t done, void *arg);

/** Before answering a RENEW: ask that a majority confirm this leader's term after this
 *  call (confirm.h). RDLM_OK with *round_p: 0 if there is nothing to wait for (one
 *  replica), else the round ops->confirmed will report; RDLM_ERR_NOT_LEADER (not a
 *  ready leader). */
rdlm_status_t rdlm_lease_replica_confirm(rdlm_lease_replica_t *rep, uint64_t *round_p);

/** RENEW: restart session's timer on a ready leader. RDLM_OK with *ttl_ms_p,
 *  RDLM_ERR_NOT_LEADER, RDLM_ERR_LEASE_EXPIRED (unknown, or its EXPIRE in flight). */
rdlm_status_t rdlm_lease_replica_renew(rdlm_lease_replica_t *rep, uint64_t session,
                                       uint32_t *ttl_ms_p);

#endif
