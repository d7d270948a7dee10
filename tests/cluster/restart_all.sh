#!/bin/bash
# Kill every replica and restart them from their data dirs (ctest cluster.restart_all;
# README.md).
#
# The replicas snapshot every 8 entries, so they restart from a snapshot plus a log
# tail. Before: w1 commits a new epoch and locks L1 three times, w2 locks L2 twice
# (about 20 entries). Then all three rdlmd are killed with SIGKILL and restarted on the
# same data dirs. After: w3 locks L1 (no new epoch: its tokens come from the persisted
# sequence), then w4 commits a new epoch and locks L2. Proves:
#   - a leader is elected again from the persisted state;
#   - every token granted after the restart is larger than every token granted
#     before, without a new epoch too; a new epoch after the restart is larger than
#     every epoch before;
#   - both checkers pass over the whole run.
# Exit 0 pass, 1 fail, 77 skip.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

TTL=2000
CL_RDLMD_ARGS=(--snapshot-threshold 8)
cl_init restart_all 100
cl_net_up 6
cl_replicas_start
LEADER=$(cl_leader 20)
cl_log "replicas up, leader: replica $LEADER"
cl_store_start

cl_worker 5 w1 --lock L1 --ttl-ms $TTL --iters 3 --new-epoch
cl_worker 6 w2 --lock L2 --ttl-ms $TTL --iters 2
for w in w1 w2; do
    cl_wait_exit $w 30
    [ "$CL_RC" = 0 ] || cl_fail "$w exited $CL_RC before the restart"
done
MAX_BEFORE=$(cl_q max "$CL_DIR/w1.jsonl" "$CL_DIR/w2.jsonl" --op acquire --field token)
EPOCH_BEFORE=$(cl_q get "$CL_DIR/w1.jsonl" --op epoch --field epoch)
cl_log "before the restart: highest token $MAX_BEFORE, epoch $EPOCH_BEFORE"

for i in 1 2 3; do
    cl_replica_kill $i
done
cl_log "all replicas killed (SIGKILL)"
T_R=$(cl_now_ns)
cl_replicas_start
NEW=$(cl_leader 20)
cl_log "restarted from their data dirs; replica $NEW leads after $(cl_ms_since "$T_R") ms"

cl_worker 5 w3 --lock L1 --ttl-ms $TTL --iters 2
cl_wait_exit w3 30
[ "$CL_RC" = 0 ] || cl_fail "w3 exited $CL_RC after the restart"
FIRST_AFTER=$(cl_q min "$CL_DIR/w3.jsonl" --op acquire --field token --where status=RDLM_OK)
cl_log "after the restart, same epoch: first token $FIRST_AFTER"
[ "$FIRST_AFTER" -gt "$MAX_BEFORE" ] ||
    cl_fail "token $FIRST_AFTER after the restart is not above $MAX_BEFORE"
cl_worker 6 w4 --lock L2 --ttl-ms $TTL --iters 2 --new-epoch
cl_wait_exit w4 30
[ "$CL_RC" = 0 ] || cl_fail "w4 exited $CL_RC after the restart"
EPOCH_AFTER=$(cl_q get "$CL_DIR/w4.jsonl" --op epoch --field epoch)
MIN_AFTER=$(cl_q min "$CL_DIR/w4.jsonl" --op acquire --field token --where status=RDLM_OK)
cl_log "after a new epoch: epoch $EPOCH_AFTER, token $MIN_AFTER"
[ "$EPOCH_AFTER" -gt "$EPOCH_BEFORE" ] ||
    cl_fail "epoch $EPOCH_AFTER after the restart is not above $EPOCH_BEFORE"
[ "$MIN_AFTER" -gt "$FIRST_AFTER" ] || cl_fail "token $MIN_AFTER is not above $FIRST_AFTER"

COUNTS=$(cl_store_stop)
cl_checkers
cl_pass "tokens $MAX_BEFORE -> $FIRST_AFTER (same epoch) -> $MIN_AFTER, epoch" \
    "$EPOCH_BEFORE -> $EPOCH_AFTER across a full restart; ${COUNTS#fenced_store: }"
