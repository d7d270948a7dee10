#!/usr/bin/env bash
# A 1-replica rdlmd fed hostile input by hostile_client.py (ctest:
# lease.authority.hostile_client, lease.authority.auth_open, lease.authority.limits,
# lease.authority.auth_stall).
#
# usage: hostile.sh RDLMD hostile_client|auth_open|limits|auth_stall
#                   [hostile_client.py options]
#
#   hostile_client  rdlmd --auth none (no per-peer cap); malformed, oversized,
#                   out-of-protocol and random frames, many connections (see
#                   hostile_client.py)
#   auth_open       rdlmd --auth munge; HOMES without a session, OPEN without, with a
#                   forged, replayed, unbound or foreign credential -> RDLM_ERR_AUTH,
#                   with a bound one -> OK (the real-credential part is skipped when
#                   munged is not running)
#   limits          rdlmd --frame-timeout-ms 500 --idle-timeout-ms 1500
#                   --max-connections-per-peer 8: timeouts, the per-peer cap and the
#                   daemon-wide limit on warn lines (read from its log)
#   auth_stall      rdlmd --auth munge in a private mount namespace (unshare -m, or
#                   -rm when not root) where /run/munge is a directory of the test's:
#                   hostile_client.py serves munged's socket there and hangs, and the
#                   daemon must go on answering others. The machine's munged is not
#                   touched (stopping it would stall every other user of it, parallel
#                   tests included). Skipped without unshare or without /run/munge.
#
# The daemon listens on two free loopback ports with a temporary data directory; its
# log is printed when a check fails. It must survive every case and exit on SIGTERM
# within 10 s without a crash. Exit: 0 passed, 1 failed, 77 skipped (no rdlmd binary,
# no python3, no MUNGE in this build for the munge modes).
set -u

USAGE="usage: hostile.sh RDLMD hostile_client|auth_open|limits|auth_stall [options]"
RDLMD=${1:?$USAGE}
MODE=${2:?$USAGE}
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
LAUNCH=()   # what rdlmd runs under
LIMITS=()   # flags for rdlmd and hostile_client.py alike
case "$MODE" in
hostile_client | auth_open | limits) ;;
auth_stall)
    [ -d /run/munge ] || skip "no /run/munge (munge not installed)"
    if [ "$(id -u)" -eq 0 ] && unshare -m true 2>/dev/null; then
        LAUNCH=(unshare -m)
    elif unshare -rm true 2>/dev/null; then
        LAUNCH=(unshare -rm)
    else
        skip "needs a private mount namespace (unshare -m or -rm)"
    fi
    ;;
*) echo "unknown mode $MODE" >&2; exit 2 ;;
esac
case "$MODE" in
auth_open | auth_stall) AUTH=munge ;;
*) AUTH=none ;;
esac
case "$MODE" in
# RDLMTEST_HOSTILE_CONNS may go up to --max-connections, all from 127.0.0.1
hostile_client) LIMITS=(--max-connections-per-peer 1048576) ;;
limits) LIMITS=(--frame-timeout-ms 500 --idle-timeout-ms 1500 --max-connections-per-peer 8) ;;
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

EXTRA=("${LIMITS[@]}")
if [ "$MODE" = limits ]; then
    EXTRA+=(--log "$DIR/rdlmd.log")
elif [ "$MODE" = auth_stall ]; then
    mkdir -m 0755 "$DIR/munge"
    # unshare execs (no fork), and so does sh: $! is rdlmd's pid
    # shellcheck disable=SC2016 # expanded by that sh
    LAUNCH+=(sh -c 'mount --bind "$0" /run/munge && exec "$@"' "$DIR/munge")
    EXTRA+=(--munge-socket "$DIR/munge/munge.socket.2")
fi

"${LAUNCH[@]}" "$RDLMD" --id 1 --peers "1=127.0.0.1:$RAFT_PORT=$CLIENT" \
    --data-dir "$DIR/data" --auth "$AUTH" "${LIMITS[@]}" >"$DIR/rdlmd.log" 2>&1 &
PID=$!
echo "rdlmd pid $PID --auth $AUTH ${LIMITS[*]}, client port $CLIENT, data $DIR/data"
sleep 0.2
if ! kill -0 "$PID" 2>/dev/null; then
    wait "$PID"
    st=$?
    grep -q "this build has no MUNGE" "$DIR/rdlmd.log" && skip "rdlmd built without MUNGE"
    fail "rdlmd exited at startup (status $st)"
fi

python3 "$HERE/hostile_client.py" "$CLIENT" "$MODE" --pid "$PID" "${EXTRA[@]}" "$@"
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
