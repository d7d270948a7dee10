/*
 * libraft glue for the state machine (raft_fsm.c): a struct raft_fsm whose apply, snapshot
 * and restore call sm.h. Used by the replica (replica.c, raft_uv) and by the
 * deterministic simulation (tests/lease/authority, raft/fixture.h), so both run the same code.
 *
 * apply() hands libraft a pointer to a result stored in the adapter (valid until the
 * next apply), never a heap block: followers have no request to free it. restore()
 * frees the snapshot buffer only when it succeeds: on failure libraft 0.15 frees it.
 *
 * Every applied entry is also recorded in the witness, and a snapshot carries the
 * witness's mark after the state's own bytes:
 *   state snapshot (sm.h) | u64 n | u64 chain | u32 "RDLW"
 * A snapshot without it (older versions) restores with no known mark.
 */
#ifndef RDLM_LEASE_RAFT_FSM_H
#define RDLM_LEASE_RAFT_FSM_H

#include <raft.h>

#include "sm.h"
#include "witness.h"

typedef struct rdlm_lease_raft_fsm {
    rdlm_lease_sm_t *sm;          /**< owned */
    rdlm_lease_result_t last;     /**< result of the last apply */
    uint64_t applied;             /**< entries applied through this adapter */
    rdlm_lease_witness_t witness; /**< marks of what was applied (witness.h) */
} rdlm_lease_raft_fsm_t;

/** Create the state (limits as sm.h) and fill fsm (version 1, apply, snapshot,
 *  restore; fsm->data = a). RDLM_ERR_NO_MEMORY. */
rdlm_status_t rdlm_lease_raft_fsm_init(rdlm_lease_raft_fsm_t *a, struct raft_fsm *fsm,
                                       const rdlm_lease_limits_t *limits);
void rdlm_lease_raft_fsm_close(rdlm_lease_raft_fsm_t *a);

#endif
