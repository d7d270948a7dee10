#!/bin/bash
# kill -9 the lock holder (ctest cluster.kill_holder; README.md).
#
# Three rdlmd replicas (nodes 1-3), fenced_store (node 4), worker w1 (node 5) holds
# lock L1 and is killed with SIGKILL; worker w2 (node 6) waits for L1. Proves:
#   - w2 acquires within TTL * (1 + rho) + 1 s of the kill (the authority expired
#     w1's session: no renewal for a TTL), and is told RDLM_OWNER_DEAD;
#   - w2's token is larger than every token granted before, and w2 got the lock only
#     after w1's lease had ended as w1's own client computed it;
#   - the store accepted no stale write, and both checkers pass on the histories.
# With --homes (ctest cluster.homes.kill_holder) the workers lock through a context
# (lease_worker --ctx-lock: a lock homed at an rdlmd replica, each worker with a
# /dev/shm of its own) and the same holds; also: w1 and w2 saw the same home replica,
# and afterwards 1 and 20 acquires of L1 cost the same authority requests (renewals
# apart, cl_homes_lock_path).
# Exit 0 pass, 1 fail, 77 skip (not root, no namespaces, a binary missing).
# shellcheck disable=SC2119 # cl_checkers takes no scenario argument
set -euo pipefail
source "$(dirname "$0")/lib.sh"

TTL=2000      # ms
RHO_PCT=10    # the client's default drift (rho = 0.1)
cl_init_mode kill_holder 100 "$@"
cl_net_up 6
cl_replicas_start
LEADER=$(cl_leader 20)
cl_log "replicas up, leader: replica $LEADER"
cl_store_start

cl_worker 5 w1 --lock L1 --ttl-ms $TTL --stop-after-acquire --park-max-ms 60000 \
    --check-every-ms 100
REC=$(cl_wait_record w1 20 parked)
T1=$(cl_field "$REC" token)
cl_log "w1 holds L1 with token $T1"
cl_worker 6 w2 --lock L1 --ttl-ms $TTL --iters 3 --hold-ms 200 --lock-timeout-ms 30000
cl_w2_waits_behind_w1

T_KILL=$(cl_now_ns)
cl_signal w1 KILL
cl_wait_exit w1 5
cl_log "w1 killed (SIGKILL) while holding L1"

cl_takeover "$T_KILL" $((TTL * 3 / 1000 + 10)) "the kill" $TTL $RHO_PCT "(w1's: $T1)"
MAX_BEFORE=$(cl_q max "$CL_DIR"/w*.jsonl --op acquire --field token \
    --before-ns "$(cl_field "$REC" t_ns)")
[ "$T2" -gt "$MAX_BEFORE" ] || cl_fail "w2's token $T2 is not above $MAX_BEFORE"

cl_wait_exit w2 30
[ "$CL_RC" = 0 ] || cl_fail "w2 exited $CL_RC (see w2.log / w2.jsonl)"
HOMES_MSG=
if [ "$HOMES" = 1 ]; then
    H1=$(cl_q get "$CL_DIR/w1.jsonl" --op acquire --field home)
    H2=$(cl_field "$REC" home)
    if [ "$H1" != "$H2" ] || ! [ "$H1" -ge 0 ] 2>/dev/null; then
        cl_fail "L1's home: w1 saw '$H1', w2 '$H2' (one replica expected: 0..2)"
    fi
    A2=$(cl_q get "$CL_DIR/w2.jsonl" --op stats --field authority_requests)
    cl_homes_lock_path L1
    R1=$(cl_home_replica "$H1")
    cl_log "L1 homed at replica $R1 (index $H1); authority requests" \
        "(renewals apart): 1 acquire $CL_AUTH_ONE, 20 acquires $CL_AUTH_MANY," \
        "w2 (3 acquires, one a takeover) $A2"
    HOMES_MSG="; home index $H1; authority requests 1 acquire $CL_AUTH_ONE, 20 acquires"
    HOMES_MSG+=" $CL_AUTH_MANY, takeover worker $A2"
fi
COUNTS=$(cl_store_stop)
cl_log "$COUNTS"
cl_checkers
cl_pass "takeover after kill -9 in $DT_MS ms (bound $BOUND_MS ms), $STATUS," \
    "token $T2 > $T1; ${COUNTS#fenced_store: }$HOMES_MSG"
