#!/usr/bin/env bash
# A 1-replica rdlmd fed hostile input by hostile_client.py (ctest: lease.hostile_client,
# lease.auth_open).
#
# usage: hostile.sh RDLMD hostile_client|auth_open [hostile_client.py options]
#
#   hostile_client  rdlmd --auth none; malformed, oversized, out-of-protocol and random
#                   frames, many connections (see hostile_client.py)
#   auth_open       rdlmd --auth munge; OPEN without, with a forged or replayed
#                   credential -> RDLM_ERR_AUTH, with a real one -> OK (the real-
#                   credential part is skipped when munged is not running)
#
# The daemon listens on two free loopback ports with a temporary data directory; its
# log is printed when a check fails. It must survive every case and exit on SIGTERM
# within 10 s without a crash. Exit: 0 passed, 1 failed, 77 skipped (no rdlmd binary,
# no python3).
set -u

RDLMD=${1:?usage: hostile.sh RDLMD hostile_client|auth_open [options]}
MODE=${2:?usage: hostile.sh RDLMD hostile_client|auth_open [options]}
shift 2
HERE=$(cd "$(dirname "$0")" && pwd)
DIR=
PID=

skip() {
    echo "SKIP: $*"
    exit 77
}

cleanup() {
    if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then
        kill -KILL "$PID" 2>/dev/null
        wait "$PID" 2>/dev/null
    fi
    [ -n "$DIR" ] && rm -rf "$DIR"
}
trap cleanup EXIT

fail() {
    echo "FAIL: $*"
    if [ -n "$DIR" ] && [ -f "$DIR/rdlmd.log" ]; then
        echo "--- rdlmd log (last 60 lines)"
        tail -n 60 "$DIR/rdlmd.log"
    fi
    exit 1
}

[ -x "$RDLMD" ] || skip "no rdlmd binary at $RDLMD"
command -v python3 >/dev/null || skip "needs python3"
case "$MODE" in
hostile_client) AUTH=none ;;
auth_open) AUTH=munge ;;
*) echo "unknown mode $MODE" >&2; exit 2 ;;
esac

# Two free loopback ports (the kernel picks them; released just before rdlmd binds).
read -r RAFT_PORT CLIENT_PORT < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*(x.getsockname()[1] for x in s))')
DIR=$(mktemp -d "${TMPDIR:-/tmp}/rdlm-hostile.XXXXXX")
mkdir "$DIR/data"
CLIENT=127.0.0.1:$CLIENT_PORT

"$RDLMD" --id 1 --peers "1=127.0.0.1:$RAFT_PORT=$CLIENT" --data-dir "$DIR/data" \
    --auth "$AUTH" >"$DIR/rdlmd.log" 2>&1 &
PID=$!
echo "rdlmd pid $PID --auth $AUTH, client port $CLIENT, data $DIR/data"
sleep 0.2
kill -0 "$PID" 2>/dev/null || { wait "$PID"; fail "rdlmd exited at startup (status $?)"; }

python3 "$HERE/hostile_client.py" "$CLIENT" "$MODE" --pid "$PID" "$@"
rc=$?

kill -0 "$PID" 2>/dev/null || { wait "$PID"; fail "rdlmd died during the run (status $?)"; }
kill -TERM "$PID"
for _ in $(seq 100); do
    kill -0 "$PID" 2>/dev/null || break
    sleep 0.1
done
kill -0 "$PID" 2>/dev/null && fail "rdlmd still running 10 s after SIGTERM"
wait "$PID"
st=$?
PID=
# 0: clean shutdown; 143: killed by the SIGTERM itself. Anything else is a crash.
[ "$st" -eq 0 ] || [ "$st" -eq 143 ] || fail "rdlmd exited with status $st after SIGTERM"
[ "$rc" -eq 0 ] || fail "hostile_client.py $MODE failed"
echo "hostile.sh $MODE: passed"
