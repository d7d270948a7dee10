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

# cl_refused NAME DIR DISK LINE MISSING: rdlmd started alone on DIR exits 1 within 5 s
# and logs LINE; DISK names the disk in the messages, MISSING fails without LINE.
cl_refused() {
    cl_start_alone "$1" "$2"
    cl_wait_exit "$1" 5
    [ "$CL_RC" = 1 ] || cl_fail "rdlmd on a $3 exited $CL_RC, not 1"
    grep -q "$4" "$CL_DIR/$1.log" || cl_fail "$5"
    cl_log "$3: $(grep -o 'data directory.*' "$CL_DIR/$1.log")"
}

cl_mount_tmpfs "$CL_DIR/small" 4m
cl_refused small "$CL_DIR/small/r" "4 MiB disk" \
    "data directory $CL_DIR/small/r: 4.0 MiB free, a replica needs at least 7.0 MiB" \
    "no line naming the directory and the space needed"

cl_mount_tmpfs "$CL_DIR/ro" 16m ro
cl_refused ro "$CL_DIR/ro" "read-only disk" \
    "data directory $CL_DIR/ro is not writable: Read-only file system" \
    "no line saying the directory is read-only"
cl_pass "a disk too small or read-only: exit 1 with the directory and the reason"
