#!/bin/bash
# kill -9 the rdlmd replica that is a lock's home, then restart it from its data dir
# (ctest cluster.homes.restart; README.md).
#
# Workers lock through a context (lease_worker --ctx-lock: RDLM_AUTHORITY, locks homed
# at the rdlmd replicas; each worker with a /dev/shm of its own). w1 locks L1 three
# times; its acquire records name L1's home (an index into the replicas sorted by
# client address), so the replica R to kill. Workers wp<i> lock L2, L3, ... once each
# until one is homed elsewhere (OTHER). w2, a context that lives through the whole
# fault, locks L1 every PAUSE_MS. R is killed with SIGKILL between two of w2's holds.
# Proves:
#   - while R is down, a new context's acquire of L1 (w3) fails with
#     RDLM_ERR_PEER_DEAD or RDLM_ERR_UNAVAILABLE within its timeout (DOWN_TIMEOUT_MS,
#     plus 1 s), and so does every acquire of L1 called after the kill and returned
#     before the restart (w2's too): none succeeds, none fails otherwise;
#   - meanwhile OTHER, homed at a live replica, is acquired and released (w4);
#   - once R is restarted on the same data dir and serves again (its log says so,
#     within UP_BOUND_S), a new context (w5) acquires L1, and so does w2 (within
#     UP_BOUND_S), with tokens larger than every L1 token before, in a larger epoch
#     (the restarted home commits a new one), at the same home;
#   - both checkers pass over the whole run, per lock (cl_checkers_per_lock: the probes'
#     locks may share L1's home, and with it token values).
# TTL 5 s: the leases outlive a failover of the authority leader, in case R leads.
# Exit 0 pass, 1 fail, 77 skip.
# shellcheck disable=SC2119 # cl_checkers_per_lock takes no scenario argument
set -euo pipefail
source "$(dirname "$0")/lib.sh"

TTL=5000
PAUSE_MS=150          # w2 between its holds of L1
DOWN_TIMEOUT_MS=3000  # w3's acquire timeout while L1's home is down
UP_BOUND_S=30         # R serves again, and w2 acquires L1 again, within this
PROBES=8              # names tried for a lock homed elsewhere
cl_homes_mode
cl_init homes.restart 170
cl_net_up 6
cl_replicas_start
LEADER=$(cl_leader 20)
cl_log "replicas up, leader: replica $LEADER"
cl_store_start

cl_worker 5 w1 --lock L1 --ttl-ms $TTL --iters 3
cl_wait_exit w1 30
[ "$CL_RC" = 0 ] || cl_fail "w1 exited $CL_RC (see w1.log / w1.jsonl)"
HOME_IX=$(cl_q get "$CL_DIR/w1.jsonl" --op acquire --field home --last) || HOME_IX=none
[ "$HOME_IX" -ge 0 ] 2>/dev/null ||
    cl_fail "L1 has no home replica: w1's acquire records say home '$HOME_IX'"
R=$(cl_home_replica "$HOME_IX")
cl_log "w1 locked L1 3 times, tokens $(cl_q get "$CL_DIR/w1.jsonl" --op acquire \
    --field token) .. $(cl_q get "$CL_DIR/w1.jsonl" --op acquire --field token --last);" \
    "L1's home: index $HOME_IX = replica $R"

OTHER=
for ((i = 2; i <= PROBES + 1; i++)); do
    cl_worker 6 "wp$i" --lock "L$i" --ttl-ms $TTL --iters 1
    cl_wait_exit "wp$i" 30
    [ "$CL_RC" = 0 ] || cl_fail "wp$i exited $CL_RC (see wp$i.log / wp$i.jsonl)"
    H=$(cl_q get "$CL_DIR/wp$i.jsonl" --op acquire --field home)
    if [ "$H" != "$HOME_IX" ]; then
        OTHER=L$i
        OTHER_IX=$H
        break
    fi
done
if [ -n "$OTHER" ]; then
    OTHER_R=$(cl_home_replica "$OTHER_IX")
    cl_log "$OTHER is homed at index $OTHER_IX = replica $OTHER_R"
else
    cl_log "L2..L$((PROBES + 1)) are all homed at replica $R: no lock homed elsewhere" \
        "to try while it is down"
fi

STOP=$CL_DIR/w2.stop
cl_worker 5 w2 --lock L1 --ttl-ms $TTL --iters 1000 --pause-ms $PAUSE_MS \
    --lock-timeout-ms 2000 --stop-file "$STOP"
cl_wait_record w2 20 acquire --where status=RDLM_OK >/dev/null
# Kill R just after one of w2's releases: w2 holds nothing then (what a killed home
# does to its holders is not what this scenario is about).
cl_q wait "$CL_DIR/w2.jsonl" --op release --after-ns "$(cl_now_ns)" --timeout 10 \
    >/dev/null || cl_fail "w2 released nothing within 10 s"
cl_replica_kill "$R"
T_KILL=$(cl_now_ns)
cl_log "replica $R (L1's home) killed (SIGKILL)"

cl_worker 6 w3 --lock L1 --ttl-ms $TTL --iters 1 --lock-timeout-ms $DOWN_TIMEOUT_MS
cl_wait_exit w3 40
REC=$(cl_q get "$CL_DIR/w3.jsonl" --op acquire) ||
    cl_fail "w3 tried no acquire (open: $(cl_q get "$CL_DIR/w3.jsonl" --op open \
        --field status || echo none))"
S3=$(cl_field "$REC" status)
WAIT3=$(cl_field "$REC" wait_ms)
cl_log "w3 (a new context) while replica $R is down: acquire of L1 -> $S3 after" \
    "$WAIT3 ms (timeout $DOWN_TIMEOUT_MS ms)"
case $S3 in
RDLM_ERR_PEER_DEAD | RDLM_ERR_UNAVAILABLE) ;;
*) cl_fail "w3's acquire of L1 returned $S3 while L1's home was down" ;;
esac
[ "${WAIT3%.*}" -le $((DOWN_TIMEOUT_MS + 1000)) ] ||
    cl_fail "w3's acquire failed only after $WAIT3 ms (timeout $DOWN_TIMEOUT_MS ms)"

if [ -n "$OTHER" ]; then
    cl_worker 6 w4 --lock "$OTHER" --ttl-ms $TTL --iters 2 --lock-timeout-ms 10000
    cl_wait_exit w4 40
    [ "$CL_RC" = 0 ] || cl_fail "w4 could not lock $OTHER (home index $OTHER_IX) while" \
        "replica $R was down: exit $CL_RC"
    cl_log "w4 locked $OTHER twice while replica $R was down"
fi

T_UP=$(cl_now_ns)
cl_replica_start "$R"
LEADER=$(cl_leader 20)
cl_log "replica $R restarted from its data dir; leader: replica $LEADER"
# The acquires of L1 called after the kill that returned before the restart (w2's,
# w3's): "GRANTED FAILED OTHER MAX_WAIT_MS", FAILED those with PEER_DEAD / UNAVAILABLE,
# OTHER those with any other status (as "status,status"), MAX_WAIT_MS the longest call.
read -r GRANTED_DOWN FAILED_DOWN OTHER_DOWN MAX_WAIT_DOWN < <(python3 -c '
import json, sys
t_kill, t_up = int(sys.argv[1]), int(sys.argv[2])
granted, failed, other, wait = 0, 0, [], 0.0
for path in sys.argv[3:]:
    for line in open(path):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if r.get("op") != "acquire" or r.get("lock") != "L1" or \
                r.get("t_call_ns", 0) <= t_kill or r["t_ns"] >= t_up:
            continue
        wait = max(wait, r.get("wait_ms", 0.0))
        if r["status"] in ("RDLM_OK", "RDLM_OWNER_DEAD"):
            granted += 1
        elif r["status"] in ("RDLM_ERR_PEER_DEAD", "RDLM_ERR_UNAVAILABLE"):
            failed += 1
        else:
            other.append(r["status"])
print(granted, failed, ",".join(other) or "-", int(wait))' "$T_KILL" "$T_UP" "$CL_DIR"/w*.jsonl)
cl_log "acquires of L1 while replica $R was down: $GRANTED_DOWN succeeded, $FAILED_DOWN" \
    "failed with PEER_DEAD/UNAVAILABLE, others: $OTHER_DOWN; longest" \
    "$MAX_WAIT_DOWN ms"
[ "$GRANTED_DOWN" = 0 ] ||
    cl_fail "$GRANTED_DOWN acquires of L1 succeeded while its home replica $R was down"
[ "$OTHER_DOWN" = - ] ||
    cl_fail "acquires of L1 failed with $OTHER_DOWN while its home was down"
[ "$MAX_WAIT_DOWN" -le $((DOWN_TIMEOUT_MS + 1000)) ] ||
    cl_fail "an acquire of L1 took $MAX_WAIT_DOWN ms while its home was down (the" \
        "longest timeout: $DOWN_TIMEOUT_MS ms)"

# Back: the restarted replica serves its homes again (its log says so once it has
# committed its new epoch), within UP_BOUND_S.
for ((i = 0; i < UP_BOUND_S * 20; i++)); do
    [ "$(grep -c 'home: serving' "$CL_DIR/r$R.log")" -ge 2 ] && break
    sleep 0.05
done
[ "$(grep -c 'home: serving' "$CL_DIR/r$R.log")" -ge 2 ] ||
    cl_fail "replica $R does not serve its homes ${UP_BOUND_S}s after its restart"
T_SERVE=$(cl_now_ns)
MAX_BEFORE=$(cl_q max "$CL_DIR"/w*.jsonl --op acquire --field token --where lock=L1 \
    --before-ns "$T_UP")
cl_log "replica $R serves its homes again $(((T_SERVE - T_UP) / 1000000)) ms after its" \
    "restart: $(grep 'home: serving' "$CL_DIR/r$R.log" | tail -n 1 | sed 's/.*home: //');" \
    "the highest L1 token before: $MAX_BEFORE (epoch $((MAX_BEFORE >> 40)))"

# A token after the restart: above every earlier one, in a larger epoch, same home.
cl_check_after() { # WHO TOKEN HOME
    [ "$2" -gt "$MAX_BEFORE" ] || cl_fail "$1: token $2 after the restart is not above" \
        "$MAX_BEFORE"
    [ $(($2 >> 40)) -gt $((MAX_BEFORE >> 40)) ] ||
        cl_fail "$1: L1's epoch did not grow across its home's restart:" \
            "$((MAX_BEFORE >> 40)) -> $(($2 >> 40))"
    [ "$3" = "$HOME_IX" ] || cl_fail "$1 sees L1 homed at '$3' after the restart, not $HOME_IX"
}

cl_worker 6 w5 --lock L1 --ttl-ms $TTL --iters 2 --lock-timeout-ms 10000
cl_wait_exit w5 30
[ "$CL_RC" = 0 ] || cl_fail "w5 (a new context after the restart) exited $CL_RC"
REC=$(cl_q get "$CL_DIR/w5.jsonl" --op acquire --where status=RDLM_OK)
T5=$(cl_field "$REC" token)
cl_check_after w5 "$T5" "$(cl_field "$REC" home)"
cl_log "w5 (a new context) locked L1 twice, first token $T5 (epoch $((T5 >> 40)))"

REC=$(cl_wait_record w2 $UP_BOUND_S acquire --after-ns "$T_SERVE" \
    --where 'status=RDLM_OK|RDLM_OWNER_DEAD')
T2=$(cl_field "$REC" token)
UP_MS=$((($(cl_field "$REC" t_ns) - T_SERVE) / 1000000))
cl_log "w2 (the context that lived through the restart) acquired L1 again $UP_MS ms" \
    "after its home served again: token $T2 (epoch $((T2 >> 40)))"
cl_check_after w2 "$T2" "$(cl_field "$REC" home)"

touch "$STOP"
cl_wait_exit w2 20
# 1: the acquires that failed while L1's home was down; 3 would be a lost lease.
[ "$CL_RC" = 0 ] || [ "$CL_RC" = 1 ] || cl_fail "w2 exited $CL_RC"
A2=$(cl_q get "$CL_DIR/w2.jsonl" --op stats --field authority_requests) || A2=none
N2=$(cl_q get "$CL_DIR/w2.jsonl" --op stats --field acquires) || N2=none
cl_log "w2: $N2 acquires granted, $A2 authority requests (renewals apart)"
COUNTS=$(cl_store_stop)
cl_log "$COUNTS"
cl_checkers_per_lock
cl_pass "L1 homed at replica $R: while it was down acquires failed ($S3 in $WAIT3 ms;" \
    "$FAILED_DOWN such failures, 0 grants)${OTHER:+, $OTHER homed elsewhere worked}; after" \
    "its restart it served in $(((T_SERVE - T_UP) / 1000000)) ms, tokens $MAX_BEFORE ->" \
    "$T5 (new context), $T2 (w2, $UP_MS ms after) (epoch $((MAX_BEFORE >> 40)) ->" \
    "$((T2 >> 40))); ${COUNTS#fenced_store: }"
