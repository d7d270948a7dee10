#!/bin/bash
# A data disk too small, or read-only, at start (ctest cluster.disk_start; README.md).
#
# One replica (node 1) started on a 4 MiB tmpfs, then on a read-only 16 MiB tmpfs.
# Proves: rdlmd exits 1 at once (within 5 s) with one line naming the directory and,
# for the small disk, the space it has and needs, instead of electing a leader that
# is never ready and logs nothing.
# Exit 0 pass, 1 fail, 77 skip.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

cl_init disk_start 40
cl_net_up 1
PEERS="1=$(cl_addr 1):$CL_RAFT_PORT=$(cl_addr 1):$CL_CLIENT_PORT"

# cl_start_alone NAME DIR: one replica of a one-replica authority on DIR.
cl_start_alone() {
    cl_start 1 "$1" 30 "$RDLMTEST_RDLMD" --id 1 --peers "$PEERS" --data-dir "$2" \
        --home-slots 0
}

cl_mount_tmpfs "$CL_DIR/small" 4m
cl_start_alone small "$CL_DIR/small/r"
cl_wait_exit small 5
[ "$CL_RC" = 1 ] || cl_fail "rdlmd on a 4 MiB disk exited $CL_RC, not 1"
grep -q "data directory $CL_DIR/small/r: 4.0 MiB free, a replica needs at least 7.0 MiB" \
    "$CL_DIR/small.log" || cl_fail "no line naming the directory and the space needed"
cl_log "4 MiB disk: $(grep -o 'data directory.*' "$CL_DIR/small.log")"

cl_mount_tmpfs "$CL_DIR/ro" 16m ro
cl_start_alone ro "$CL_DIR/ro"
cl_wait_exit ro 5
[ "$CL_RC" = 1 ] || cl_fail "rdlmd on a read-only disk exited $CL_RC, not 1"
grep -q "data directory $CL_DIR/ro is not writable: Read-only file system" \
    "$CL_DIR/ro.log" || cl_fail "no line saying the directory is read-only"
cl_log "read-only disk: $(grep -o 'data directory.*' "$CL_DIR/ro.log")"
cl_pass "a disk too small or read-only: exit 1 with the directory and the reason"
