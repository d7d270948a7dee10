#!/bin/bash
# The leader's data disk turns read-only under it (ctest cluster.disk_readonly; README.md).
#
# Every replica's data directory is a 32 MiB ext4 on a loop device, mounted with
# errors=remount-ro. w1 (node 5) holds L1 with TTL 5000 ms (more than a failover),
# checking its lease every 100 ms; w2 (node 6) locks L2 in a loop. The kernel is told
# of an error on the leader's file system (trigger_fs_error), which makes it read-only
# at once, as a failing disk would. Proves:
#   - no replica crashes. Whichever comes first:
#     - libraft's next log write fails: the leader logs "writing the log failed" and
#       exits 3 at once (libraft 0.15 would crash on that path; append_guard.h);
#     - the disk sampler sees the read-only mount: the leader warns once that its data
#       directory "is not writable", refuses writes with RDLM_ERR_NO_SPACE (w2's
#       acquires), `rdlmctl status` shows disk=full and exits 1; the ext4 stays
#       read-only until checked, so the operator stops that replica after 3.2 s
#       (SIGTERM: exit 0);
#   - the two others elect, w2 acquires again and never sees INVALID_ARG or IO; w1
#     keeps its lease throughout (checks every 100 ms) and releases L1
#     with RDLM_OK; both checkers pass.
# Exit 0 pass, 1 fail, 77 skip.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

TTL=5000
RO_MS=3200
cl_init disk_readonly 60
cl_net_up 6
for i in 1 2 3; do
    cl_mount_ext4 "$CL_DIR/r$i" 32
done
cl_replicas_start
LEADER=$(cl_leader 20)
cl_log "replicas up on 32 MiB ext4 data dirs, leader: replica $LEADER"
cl_store_start

cl_disk_workers_start $TTL $((RO_MS + 4000))

T_RO=$(cl_now_ns)
cl_fs_error "$CL_DIR/r$LEADER"
touch "$CL_DIR/r$LEADER/probe" 2>/dev/null && cl_fail "the file system is still writable"
cl_log "replica $LEADER's file system is read-only"
# Whichever comes first: libraft's next log write fails (the replica exits 3), or the
# disk sampler sees the read-only mount (writes refused, the replica stays up).
END=$(($(date +%s) + 5))
until ! kill -0 "$(cl_pid "r$LEADER")" 2>/dev/null ||
    [ "$(cl_q count "$CL_DIR/w2.jsonl" --op acquire --where status=RDLM_ERR_NO_SPACE)" != 0 ]; do
    [ "$(date +%s)" -lt "$END" ] || cl_fail "the leader neither stopped nor refused writes"
    sleep 0.05
done
if kill -0 "$(cl_pid "r$LEADER")" 2>/dev/null; then
    HOW="writes refused with RDLM_ERR_NO_SPACE"
    cl_log "$HOW $(cl_ms_since "$T_RO") ms after"
    [ "$(grep -c "is not writable (Read-only file system): writes refused" \
        "$CL_DIR/r$LEADER.log")" = 1 ] || cl_fail "replica $LEADER did not warn exactly once"
    STATUS=$(cl_ctl_status --authority "$(cl_authority)") &&
        cl_fail "rdlmctl status exited 0 with a read-only disk: $STATUS"
    echo "$STATUS" | grep -q "^$(cl_addr "$LEADER"):$CL_CLIENT_PORT .* disk=full" ||
        cl_fail "rdlmctl status does not show replica $LEADER's read-only disk: $STATUS"
    cl_sleep_until $((T_RO + RO_MS * 1000000))
    kill -TERM "$(cl_pid "r$LEADER")"
    cl_wait_exit "r$LEADER" 10
    [ "$CL_RC" = 0 ] || cl_fail "the read-only replica exited $CL_RC on SIGTERM"
else
    HOW="its log write failed and it exited"
    cl_wait_exit "r$LEADER" 1
    [ "$CL_RC" = 3 ] || cl_fail "the leader exited $CL_RC, not 3"
    grep -q "writing the log failed (I/O error): this replica stops (exit 3)" \
        "$CL_DIR/r$LEADER.log" || cl_fail "the leader did not say why it stopped"
    cl_log "$HOW 3 after $(cl_ms_since "$T_RO") ms"
fi
T_STOP=$(cl_now_ns)
for i in 1 2 3; do
    [ "$i" = "$LEADER" ] || kill -0 "$(cl_pid "r$i")" 2>/dev/null || cl_fail "replica $i died"
done
NEW=$(cl_leader 15 "$LEADER")
cl_wait_record w2 10 acquire --where status=RDLM_OK --after-ns "$T_STOP" >/dev/null
cl_log "replica $NEW leads; w2 acquires again $(cl_ms_since "$T_STOP") ms after"
cl_disk_workers_stop "lost its lease or lock?"
H=$CL_DIR/w1.jsonl
BAD=$(cl_q count "$H" --op check --where 'status=RDLM_ERR_LEASE_EXPIRED|RDLM_ERR_UNAVAILABLE')
[ "$(cl_q count "$H" --op lease_lost)" = 0 ] && [ "$BAD" = 0 ] ||
    cl_fail "w1's lease expired"
[ "$(cl_q get "$H" --op release --field status)" = RDLM_OK ] || cl_fail "w1 lost L1"
ODD=$(cl_q count "$CL_DIR/w2.jsonl" --op acquire --where 'status=RDLM_ERR_INVALID_ARG|RDLM_ERR_IO')
[ "$ODD" = 0 ] || cl_fail "w2 got $ODD acquires answered INVALID_ARG or IO"
REFUSED=$(cl_q count "$CL_DIR/w2.jsonl" --op acquire --where status=RDLM_ERR_NO_SPACE)
cl_checkers
cl_pass "replica $LEADER's disk read-only: $HOW ($REFUSED acquires refused); no crash," \
    "replica $NEW took over, w1 kept L1, writes resumed"
