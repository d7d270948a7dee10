#!/bin/bash
# kill -9 the authority's leader (ctest cluster.kill_leader; README.md).
#
# Worker w1 (node 5) holds L1 for 8 s with TTL 5 s, checking its lease every 100 ms;
# the leader replica is killed with SIGKILL meanwhile. Proves:
#   - the two others elect a new leader within 3 x election timeout (one split vote
#     allowed; measured by polling rdlmctl status every 50 ms; the poll's own cost is
#     allowed on top);
#   - no lease renewed in time expires early: w1 keeps its lease (every check
#     RDLM_OK, no lease_lost) and its lock (its release returns RDLM_OK) through the
#     failover, and its writes are accepted;
#   - tokens stay monotone: w2 acquires L1 after the failover with a larger token;
#   - the killed replica rejoins (one leader, three answering); both checkers pass.
# Exit 0 pass, 1 fail, 77 skip.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

TTL=5000
POLL_ALLOWANCE_MS=200 # one rdlmctl status poll (netns exec + three connections)
# The bound: 3 x election timeout plus one poll, unless RDLMTEST_FAILOVER_BOUND_MS says:
# the followers stand within one election timeout, and a split vote (both standing at
# once: seen in CI, replica 3 leading 2,241 ms after the kill, in term 4 after an empty
# term 3) costs one more.
BOUND_MS=${RDLMTEST_FAILOVER_BOUND_MS:-$((3 * CL_ET + POLL_ALLOWANCE_MS))}
cl_init kill_leader 100
cl_net_up 6
cl_replicas_start
LEADER=$(cl_leader 20)
cl_log "replicas up, leader: replica $LEADER (election timeout $CL_ET ms)"
cl_store_start

cl_worker 5 w1 --lock L1 --ttl-ms $TTL --hold-ms 8000 --check-every-ms 100
REC=$(cl_wait_record w1 20 acquire --where 'status=RDLM_OK|RDLM_OWNER_DEAD')
T1=$(cl_field "$REC" token)
sleep 1

T_KILL=$(cl_now_ns)
cl_replica_kill "$LEADER"
NEW=$(cl_leader 15 "$LEADER")
FAILOVER_MS=$(cl_ms_since "$T_KILL")
cl_log "leader $LEADER killed; replica $NEW leads after $FAILOVER_MS ms (bound $BOUND_MS" \
    "ms; election timeout $CL_ET ms)"
SLOW= # judged at the end, so a slow failover still shows what the rest did
[ "$FAILOVER_MS" -le "$BOUND_MS" ] || SLOW="failover took $FAILOVER_MS ms > $BOUND_MS ms"

cl_wait_exit w1 20
[ "$CL_RC" = 0 ] || cl_fail "w1 exited $CL_RC (lost its lease or lock through the failover?)"
H=$CL_DIR/w1.jsonl
LOST=$(cl_q count "$H" --op lease_lost)
BAD_CHECKS=$(cl_q count "$H" --op check --where 'status=RDLM_ERR_LEASE_EXPIRED|RDLM_ERR_UNAVAILABLE')
CHECKS=$(cl_q count "$H" --op check)
REL=$(cl_q get "$H" --op release --field status) || REL=none
cl_log "w1: $CHECKS lease checks, $BAD_CHECKS failed, $LOST lease_lost; release -> $REL"
[ "$LOST" = 0 ] && [ "$BAD_CHECKS" = 0 ] || cl_fail "w1's lease expired during the failover"
[ "$REL" = RDLM_OK ] || cl_fail "w1's release returned $REL: it lost the lock"
[ "$(cl_q count "$H" --op write --where result=ok)" = 2 ] ||
    cl_fail "w1's writes were not both accepted"

cl_replica_start "$LEADER"
cl_worker 6 w2 --lock L1 --ttl-ms $TTL --iters 2
cl_wait_exit w2 30
[ "$CL_RC" = 0 ] || cl_fail "w2 exited $CL_RC"
T2=$(cl_q min "$CL_DIR/w2.jsonl" --op acquire --field token --where status=RDLM_OK)
[ "$T2" -gt "$T1" ] || cl_fail "token after the failover $T2 is not above $T1"
cl_ctl_status --authority "$(cl_authority)" >"$CL_DIR/status.txt" 2>&1 ||
    cl_fail "rdlmctl status after the rejoin: $(cat "$CL_DIR/status.txt")"
COUNTS=$(cl_store_stop)
cl_checkers
[ -z "$SLOW" ] || cl_fail "$SLOW (everything else passed)"
cl_pass "failover in $FAILOVER_MS ms (bound $BOUND_MS ms); the holder kept its lease" \
    "and lock; token $T1 -> $T2; ${COUNTS#fenced_store: }"
