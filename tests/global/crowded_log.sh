#!/bin/sh
# global.crowded_waiters.p4.vn2: 4 ranks as 2 virtual nodes of 2. Each node's segment
# has 2 processes attached, the host 4. Where 4 outnumber the CPUs, every process
# must say at RDLM_LOG=debug that its waiters yield and sleep instead of spinning
# (before, the node layer counted only its own segment's 2 processes and its lock
# waiters spun on the CPUs the holder and the other virtual node needed: 8 ranks on 4
# virtual nodes passed the lock 8 k/s, now 36-70 k/s; docs/distributed-locks.md). With
# 4 CPUs or more, none may say it.
#
# usage: crowded_log.sh NPROCS COMMAND...   (COMMAND: the mpirun line of NPROCS ranks)
# Exit 0 pass, 1 fail.
set -u
nprocs=$1
shift
cpus=$(getconf _NPROCESSORS_ONLN)
want=0
[ "$nprocs" -gt "$cpus" ] && want=$nprocs
out=$(RDLM_LOG=debug "$@" 2>&1)
rc=$?
got=$(printf '%s\n' "$out" | grep -c "waiters yield and sleep instead of spinning")
if [ "$rc" != 0 ] || [ "$got" != "$want" ]; then
    printf '%s\n' "$out" | tail -20
    echo "FAIL: exit $rc; $got of $nprocs processes on $cpus CPUs said their waiters" \
        "stop spinning (want $want)"
    exit 1
fi
echo "PASS: $got of $nprocs processes on $cpus CPUs said their waiters stop spinning" \
    "(want $want)"
