#!/bin/bash
# Fill the leader's data disk, then free it (ctest cluster.disk_full; README.md).
# With --follower (cluster.disk_full_follower), a follower's disk instead.
#
# Every replica's data directory is a 16 MiB tmpfs. w1 (node 5) holds L1 with TTL
# 1500 ms, checking its lease every 100 ms; w2 (node 6) locks L2 in a loop. The
# leader's (or a follower's) tmpfs is filled to the last byte for 2 TTLs (3.2 s), then
# the filler is removed. Proves:
#   - no replica crashes (all three running throughout), and the full replica warns
#     once ("writes refused with RDLM_ERR_NO_SPACE"), not per request; with
#     --follower the leader also warns once that a replica "says its data disk is
#     full" (it learns it from the STATUS answers of its confirmation rounds);
#   - writes are refused with RDLM_ERR_NO_SPACE: w2's acquires (or the release of the
#     lock it held when the disk filled, which it retries), and a new session's OPEN
#     (w3 exits with "refused the session");
#   - renewals go on: w1 keeps its lease through the full disk (every check RDLM_OK,
#     no lease_lost) and releases L1 with RDLM_OK after the space returned;
#   - `rdlmctl status` shows it (the full replica's line ends in disk=full), exits 1;
#   - once the filler is gone the leader logs "writes resume" and w2 acquires again,
#     without any restart; rdlmctl exits 0; both checkers pass.
# Exit 0 pass, 1 fail, 77 skip.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

TTL=1500
FULL_MS=3200
NAME=disk_full
[ "${1:-}" = --follower ] && NAME=disk_full_follower
cl_init $NAME 60
cl_net_up 6
for i in 1 2 3; do
    cl_mount_tmpfs "$CL_DIR/r$i" 16m
done
cl_replicas_start
LEADER=$(cl_leader 20)
FULL=$LEADER
[ "$NAME" = disk_full ] || FULL=$((LEADER % 3 + 1))
cl_log "replicas up on 16 MiB tmpfs data dirs, leader: replica $LEADER; filling" \
    "replica $FULL's"
cl_store_start

cl_disk_workers_start $TTL $((FULL_MS + 2500))

# Fill the disk to the last byte (dd stops at ENOSPC).
T_FULL=$(cl_now_ns)
dd if=/dev/zero of="$CL_DIR/r$FULL/filler" bs=1M 2>/dev/null || true
cl_log "replica $FULL's disk full: $(df -k --output=avail "$CL_DIR/r$FULL" | tail -1) KiB free"
# w2's next write is refused: an acquire, or the release of the lock it held when the
# disk filled (then it keeps that lock and tries the release again).
cl_q wait "$CL_DIR/w2.jsonl" --where 'op=acquire|release' --where status=RDLM_ERR_NO_SPACE \
    --after-ns "$T_FULL" --timeout 5 >/dev/null ||
    cl_fail "w2: no acquire or release refused with RDLM_ERR_NO_SPACE within 5s"
cl_worker 6 w3 --lock L3 --ttl-ms 5000 --iters 1
cl_wait_exit w3 15
[ "$CL_RC" != 0 ] || cl_fail "w3 opened a session on a full disk"
[ "$(cl_q get "$CL_DIR/w3.jsonl" --op open --field status)" = RDLM_ERR_NO_SPACE ] ||
    cl_fail "w3's OPEN was not refused with RDLM_ERR_NO_SPACE (see w3.log)"
STATUS=$(cl_ctl_status --authority "$(cl_authority)") && cl_fail "rdlmctl status exited 0" \
    "with a full disk: $STATUS"
echo "$STATUS" | grep -q "^$(cl_addr "$FULL"):$CL_CLIENT_PORT .* disk=full" ||
    cl_fail "rdlmctl status does not show replica $FULL's full disk: $STATUS"
cl_log "rdlmctl status exits 1: $(echo "$STATUS" | tr '\n' '|')"
cl_sleep_until $((T_FULL + FULL_MS * 1000000))
for i in 1 2 3; do
    kill -0 "$(cl_pid "r$i")" 2>/dev/null || cl_fail "replica $i died with a full disk"
done

rm -f "$CL_DIR/r$FULL/filler"
T_FREE=$(cl_now_ns)
cl_log "filler removed after $(cl_ms_since "$T_FULL") ms"
cl_wait_record w2 5 acquire --where status=RDLM_OK --after-ns "$T_FREE" >/dev/null
cl_log "w2 acquires again $(cl_ms_since "$T_FREE") ms after the space returned"
cl_disk_workers_stop "lost its lease or lock on the full disk?"
H=$CL_DIR/w1.jsonl
LOST=$(cl_q count "$H" --op lease_lost)
BAD=$(cl_q count "$H" --op check --where 'status=RDLM_ERR_LEASE_EXPIRED|RDLM_ERR_UNAVAILABLE')
CHECKS=$(cl_q count "$H" --op check)
REFUSED=$(cl_q count "$CL_DIR/w2.jsonl" --where 'op=acquire|release' \
    --where status=RDLM_ERR_NO_SPACE)
cl_log "w1: $CHECKS lease checks, $BAD failed, $LOST lease_lost; w2: $REFUSED" \
    "acquires and releases refused with RDLM_ERR_NO_SPACE"
[ "$LOST" = 0 ] && [ "$BAD" = 0 ] || cl_fail "w1's lease expired while the disk was full"
[ "$(cl_q get "$H" --op release --field status)" = RDLM_OK ] || cl_fail "w1 lost L1"
for i in 1 2 3; do
    kill -0 "$(cl_pid "r$i")" 2>/dev/null || cl_fail "replica $i died"
done
[ "$(grep -c "writes refused with RDLM_ERR_NO_SPACE" "$CL_DIR/r$FULL.log")" = 1 ] ||
    cl_fail "replica $FULL did not warn exactly once about its disk"
LOG=$CL_DIR/r$LEADER.log
if [ "$FULL" != "$LEADER" ]; then
    [ "$(grep -c "says its data disk is full:" "$LOG")" = 1 ] ||
        cl_fail "the leader did not warn exactly once about replica $FULL's disk"
fi
grep -q "writes resume" "$LOG" || cl_fail "the leader did not log that writes resume"
cl_ctl_status --authority "$(cl_authority)" >/dev/null || cl_fail "rdlmctl status exits" \
    "non-zero after the space returned"
cl_checkers
cl_pass "replica $FULL's disk full (leader $LEADER): writes refused ($REFUSED acquires" \
    "and releases, an OPEN), renewals served ($CHECKS checks OK), no crash; writes" \
    "resume once the filler is removed"
