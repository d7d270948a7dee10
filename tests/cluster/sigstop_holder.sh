#!/bin/bash
# SIGSTOP the lock holder past its lease (ctest cluster.sigstop_holder; README.md).
#
# Worker w1 (node 5) holds L1 and is stopped for 3 x TTL; w2 (node 6) waits for L1.
# Proves:
#   - w2 does not get L1 while w1 holds it (before the stop);
#   - w2 acquires within TTL * (1 + rho) + 1 s of the stop, with RDLM_OWNER_DEAD and a
#     larger token, only after w1's lease had ended as w1's client computed it, and
#     writes;
#   - once continued, w1 writes with its old token and the store rejects it (STALE);
#   - w1's next calls, rdlm_session_check and rdlm_session_lock, return
#     RDLM_ERR_LEASE_EXPIRED;
#   - the store accepted no stale write and rejected at least one; both checkers pass.
# With --homes (ctest cluster.homes.sigstop_holder) the workers lock through a context
# (lease_worker --ctx-lock: a lock homed at an rdlmd replica, each worker with a
# /dev/shm of its own) and the same holds, the calls after SIGCONT being
# rdlm_session_check on the context's lease and rdlm_lock_acquire; also: w1's
# rdlm_lock_release after SIGCONT returns RDLM_ERR_LEASE_EXPIRED, w1 and w2 saw the
# same home replica, and afterwards 1 and 20 acquires of L1 cost the same authority
# requests (renewals apart, cl_homes_lock_path).
# Exit 0 pass, 1 fail, 77 skip.
# shellcheck disable=SC2119 # cl_checkers takes no scenario argument
set -euo pipefail
source "$(dirname "$0")/lib.sh"

TTL=2000
RHO_PCT=10
cl_init_mode sigstop_holder 100 "$@"
cl_net_up 6
cl_replicas_start
LEADER=$(cl_leader 20)
cl_log "replicas up, leader: replica $LEADER"
cl_store_start

cl_worker 5 w1 --lock L1 --ttl-ms $TTL --stop-after-acquire --write-after-resume \
    --park-max-ms 60000 --check-every-ms 100
REC=$(cl_wait_record w1 20 parked)
T1=$(cl_field "$REC" token)
cl_worker 6 w2 --lock L1 --ttl-ms $TTL --iters 1 --hold-ms 300 --lock-timeout-ms 30000
cl_w2_waits_behind_w1

T_STOP=$(cl_now_ns)
cl_signal w1 STOP
cl_log "w1 (token $T1) stopped with SIGSTOP for $((3 * TTL)) ms"
cl_takeover "$T_STOP" $((TTL * 3 / 1000)) "the stop" $TTL $RHO_PCT
[ "$T2" -gt "$T1" ] || cl_fail "w2's token $T2 is not above w1's $T1"
cl_wait_record w2 5 write --where result=ok >/dev/null

cl_sleep_until $((T_STOP + 3 * TTL * 1000000))
cl_signal w1 CONT
cl_log "w1 continued after $(cl_ms_since "$T_STOP") ms"
cl_wait_exit w1 20
REC=$(cl_wait_record w1 1 resumed)
T_RES=$(cl_field "$REC" t_ns)
W=$(cl_q get "$CL_DIR/w1.jsonl" --op write --after-ns "$T_RES" --field result) || W=none
C=$(cl_q get "$CL_DIR/w1.jsonl" --op check --after-ns "$T_RES" --field status) || C=none
A=$(cl_q get "$CL_DIR/w1.jsonl" --op acquire --after-ns "$T_RES" --field status) || A=none
cl_log "w1 after SIGCONT: write with token $T1 -> $W; rdlm_session_check -> $C;" \
    "rdlm_session_lock -> $A"
[ "$W" = stale ] || cl_fail "the store answered w1's late write with '$W', not stale"
[ "$C" = RDLM_ERR_LEASE_EXPIRED ] || cl_fail "w1's check returned $C"
[ "$A" = RDLM_ERR_LEASE_EXPIRED ] || cl_fail "w1's lock returned $A"

cl_wait_exit w2 20
[ "$CL_RC" = 0 ] || cl_fail "w2 exited $CL_RC"
HOMES_MSG=
if [ "$HOMES" = 1 ]; then
    R=$(cl_q get "$CL_DIR/w1.jsonl" --op release --after-ns "$T_RES" --field status) ||
        R=none
    cl_log "w1 after SIGCONT: rdlm_lock_release -> $R"
    [ "$R" = RDLM_ERR_LEASE_EXPIRED ] || cl_fail "w1's release returned $R"
    H1=$(cl_q get "$CL_DIR/w1.jsonl" --op acquire --field home)
    H2=$(cl_q get "$CL_DIR/w2.jsonl" --op acquire --field home)
    if [ "$H1" != "$H2" ] || ! [ "$H1" -ge 0 ] 2>/dev/null; then
        cl_fail "L1's home: w1 saw '$H1', w2 '$H2' (one replica expected: 0..2)"
    fi
    cl_homes_lock_path L1
    R1=$(cl_home_replica "$H1")
    cl_log "L1 homed at replica $R1 (index $H1); authority requests" \
        "(renewals apart): 1 acquire $CL_AUTH_ONE, 20 acquires $CL_AUTH_MANY"
    HOMES_MSG="; home index $H1; authority requests 1 acquire $CL_AUTH_ONE, 20 acquires"
    HOMES_MSG+=" $CL_AUTH_MANY"
fi
COUNTS=$(cl_store_stop)
cl_log "$COUNTS"
cl_checkers --min-rejected 1
cl_pass "takeover in $DT_MS ms (bound $BOUND_MS ms); the stopped holder's late write" \
    "rejected, its next calls RDLM_ERR_LEASE_EXPIRED; ${COUNTS#fenced_store: }$HOMES_MSG"
