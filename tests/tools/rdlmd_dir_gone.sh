#!/usr/bin/env bash
# A lone rdlmd replica (it leads) whose data directory is removed while it runs exits 3
# with its "is gone" line, RUNS times in a row. Before, libraft's close of that leader
# freed a block twice: the process aborted (exit 134; with ASan "double-free"), 4 of 6
# runs (an outside operator's finding). Every wait is bounded (5 s per exit).
# usage: rdlmd_dir_gone.sh RDLMD
set -u
rdlmd=$1 RUNS=3
dir=$(mktemp -d /tmp/rdlmd-dir-gone.XXXXXX) || exit 1
trap 'rm -rf "$dir"' EXIT
# Two free loopback ports, chosen by the kernel.
read -r raft client < <(python3 -c 'import socket
s=[socket.socket() for _ in range(2)]
[x.bind(("127.0.0.1",0)) for x in s]
print(*[x.getsockname()[1] for x in s])')
for run in $(seq "$RUNS"); do
  data=$dir/data log=$dir/rdlmd.log
  rm -rf "$data"
  "$rdlmd" --id 1 --peers "1=127.0.0.1:$raft=127.0.0.1:$client" --data-dir "$data" \
    > "$log" 2>&1 &
  pid=$!
  for _ in $(seq 100); do # until it serves: its data directory holds a log
    [ -n "$(ls "$data" 2>/dev/null | grep -v rdlm.lock)" ] && break
    sleep 0.05
  done
  sleep 0.5
  rm -rf "$data"
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    kill -9 "$pid"; wait "$pid"
    echo "FAIL: run $run: still running 5 s after its data directory was removed"
    exit 1
  fi
  wait "$pid"; rc=$?
  echo "run $run: exit $rc"
  if [ "$rc" != 3 ] || ! grep -q "data directory $data is gone" "$log"; then
    echo "FAIL: run $run: want exit 3 and the 'is gone' line; its log:"
    tail -20 "$log"
    exit 1
  fi
done
echo "ok: $RUNS of $RUNS exited 3"
