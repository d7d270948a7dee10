#!/bin/bash
# The leader's data directory disappears (ctest cluster.disk_gone; README.md).
#
# w1 (node 5) holds L1 with TTL 5000 ms for 4 s, checking its lease every 100 ms; the
# leader's data directory is removed (rm -rf) meanwhile. Proves:
#   - the leader notices within 1 s, logs "data directory ... is gone" and exits 3
#     (its log is lost: it must not go on acknowledging entries it cannot keep);
#   - the two others elect a new leader; w1 keeps its lease and its lock through it
#     (every check RDLM_OK, release RDLM_OK);
#   - restarted, rdlmd makes a new empty directory and rejoins: three replicas answer,
#     one leader; both checkers pass.
# Exit 0 pass, 1 fail, 77 skip.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

cl_init disk_gone 60
cl_net_up 6
cl_replicas_start
LEADER=$(cl_leader 20)
cl_log "replicas up, leader: replica $LEADER"
cl_store_start
cl_worker 5 w1 --lock L1 --ttl-ms 5000 --hold-ms 4000 --check-every-ms 100
cl_wait_record w1 20 acquire --where 'status=RDLM_OK' >/dev/null

T_RM=$(cl_now_ns)
rm -rf "$CL_DIR/r$LEADER"
cl_wait_exit "r$LEADER" 3
cl_log "leader's data directory removed: it exited $CL_RC after $(cl_ms_since "$T_RM") ms"
[ "$CL_RC" = 3 ] || cl_fail "the leader exited $CL_RC, not 3"
grep -q "data directory $CL_DIR/r$LEADER is gone" "$CL_DIR/r$LEADER.log" ||
    cl_fail "the leader did not say its data directory is gone"
NEW=$(cl_leader 15 "$LEADER")
cl_log "replica $NEW leads after $(cl_ms_since "$T_RM") ms"

cl_wait_exit w1 20
[ "$CL_RC" = 0 ] || cl_fail "w1 exited $CL_RC (lost its lease or lock?)"
H=$CL_DIR/w1.jsonl
[ "$(cl_q count "$H" --op lease_lost)" = 0 ] &&
    [ "$(cl_q count "$H" --op check --where 'status=RDLM_ERR_LEASE_EXPIRED')" = 0 ] ||
    cl_fail "w1's lease expired"
[ "$(cl_q get "$H" --op release --field status)" = RDLM_OK ] || cl_fail "w1 lost L1"

mv "$CL_DIR/r$LEADER.log" "$CL_DIR/r$LEADER-gone.log"
cl_replica_start "$LEADER"
END=$(($(date +%s) + 15))
until STATUS=$(cl_ctl_status --authority "$(cl_authority)") &&
    echo "$STATUS" | grep -q "^3 of 3 replicas answered, 1 leader$"; do
    [ "$(date +%s)" -lt "$END" ] || cl_fail "the restarted replica did not rejoin: $STATUS"
    sleep 0.2
done
cl_checkers
cl_pass "data directory gone: the leader exited 3, replica $NEW took over, w1 kept L1;" \
    "restarted on a new directory, it rejoined"
