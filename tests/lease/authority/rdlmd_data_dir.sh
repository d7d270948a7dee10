#!/bin/bash
# One rdlmd per data directory, and only with the replicas the directory was made
# with. Usage:
#
#   rdlmd_data_dir.sh RDLMD RDLMCTL
#
#   - a second rdlmd on a data directory a running one holds (other ports, so nothing
#     else stops it) exits 1 at once with one error line naming the directory and the
#     first one's pid; the first keeps serving (one leader, itself). Before, both ran
#     and `rdlmctl status` showed two leaders of one directory;
#   - a directory belongs to the --id it was made with: started with another --id
#     (same --peers) rdlmd exits 1 naming both ids;
#   - once the first stopped, an rdlmd on that directory with another --peers (here:
#     another Raft address for replica 1, as in the outside user's report) exits 1
#     naming the directory and both lists, and one with the original --peers starts
#     again on it. Before, libraft used the directory's membership and rdlmd the
#     flags' (its Raft allow-list, leadership confirmation and lock home), silently.
#
# Ports are random free ones below the ephemeral range; everything goes to a temporary
# directory (removed at exit, logs printed on failure). Exit: 0 passed; 77 skipped
# (rdlmd or rdlmctl not built); 1 failed. Every wait is bounded.
set -u

RDLMD=${1:-}
RDLMCTL=${2:-}
if [ ! -x "$RDLMD" ] || [ ! -x "$RDLMCTL" ]; then
    echo "rdlmd_data_dir: rdlmd or rdlmctl not built (got '$RDLMD' '$RDLMCTL'): skipped"
    exit 77
fi
DIR=$(mktemp -d /tmp/rdlmd_data_dir.XXXXXX)
FIRST=
SECOND=

cleanup() {
    for p in $FIRST $SECOND; do kill -9 "$p" 2>/dev/null; done
    rm -rf "$DIR"
}
trap cleanup EXIT

fail() {
    echo "rdlmd_data_dir: FAIL: $*"
    for f in "$DIR"/log*; do
        echo "---- $f (last 20 lines)"
        tail -n 20 "$f"
    done
    exit 1
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

EPHEMERAL_LOW=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
TAKEN=" "
free_port() {
    local p
    while :; do
        p=$((10000 + RANDOM % (EPHEMERAL_LOW - 10000)))
        case "$TAKEN" in *" $p "*) continue ;; esac
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
            TAKEN="$TAKEN$p "
            echo "$p"
            return
        fi
    done
}

RAFT1=127.0.0.1:$(free_port)
CLIENT1=127.0.0.1:$(free_port)
RAFT2=127.0.0.1:$(free_port)
CLIENT2=127.0.0.1:$(free_port)
PEERS1="1=$RAFT1=$CLIENT1"
PEERS2="1=$RAFT2=$CLIENT2"
DATA="$DIR/data"

# One line per leader among the addresses $1 that answered.
leaders() {
    timeout 5 "$RDLMCTL" status --authority "$1" --timeout-ms 300 2>/dev/null |
        grep " leader=yes "
}

# Wait up to 10 s for the replica at $1 to lead.
wait_leader() {
    local deadline=$(($(now_ms) + 10000))
    until leaders "$1" >/dev/null; do
        [ "$(now_ms)" -lt "$deadline" ] || return 1
        sleep 0.05
    done
}

"$RDLMD" --id 1 --peers "$PEERS1" --data-dir "$DATA" >>"$DIR/log1" 2>&1 &
FIRST=$!
wait_leader "$CLIENT1" || fail "the first replica did not lead within 10 s"

# The second on the same directory: refused at once (bounded: it used to run on).
timeout 10 "$RDLMD" --id 1 --peers "$PEERS2" --data-dir "$DATA" 2>"$DIR/log2"
rc=$?
[ "$rc" = 1 ] || fail "a second rdlmd on $DATA: exit $rc, expected 1"
[ "$(grep -c . "$DIR/log2")" = 1 ] ||
    fail "a second rdlmd on $DATA: not one line on stderr: $(cat "$DIR/log2")"
grep -q "data directory $DATA is in use by another replica (pid $FIRST)" "$DIR/log2" ||
    fail "the refusal names neither the directory nor pid $FIRST: $(cat "$DIR/log2")"
kill -0 "$FIRST" 2>/dev/null || fail "the first replica died"
n=$(leaders "$CLIENT1,$CLIENT2" | wc -l)
[ "$n" = 1 ] || fail "$n leaders among the two addresses, expected 1"
leaders "$CLIENT1" >/dev/null || fail "the first replica no longer leads"
echo "rdlmd_data_dir: a second rdlmd on one data directory refused: $(cat "$DIR/log2")"

kill -TERM "$FIRST"
wait "$FIRST"
rc=$?
FIRST=
[ "$rc" = 0 ] || fail "the first replica exited $rc after SIGTERM"

# Another membership than the directory's: refused, naming both.
timeout 10 "$RDLMD" --id 1 --peers "$PEERS2" --data-dir "$DATA" 2>"$DIR/log3"
rc=$?
[ "$rc" = 1 ] || fail "rdlmd with other --peers than $DATA holds: exit $rc, expected 1"
grep -q "data directory $DATA holds the replicas 1=$RAFT1, --peers gives 1=$RAFT2" \
    "$DIR/log3" || fail "the refusal does not name both lists: $(cat "$DIR/log3")"
echo "rdlmd_data_dir: other --peers refused: $(grep "holds the replicas" "$DIR/log3")"

# The directory's own --peers: it serves again.
"$RDLMD" --id 1 --peers "$PEERS1" --data-dir "$DATA" >>"$DIR/log4" 2>&1 &
SECOND=$!
wait_leader "$CLIENT1" || fail "rdlmd with the directory's --peers did not lead again"
kill -TERM "$SECOND"
wait "$SECOND"
rc=$?
SECOND=
[ "$rc" = 0 ] || fail "the restarted replica exited $rc after SIGTERM"

# Another --id on a directory of the same membership (replica 1's of two): refused,
# naming both ids. Before, it ran as replica 2 on replica 1's log and votes (an outside
# operator's finding: a vote could be given twice).
RAFT3=127.0.0.1:$(free_port)
CLIENT3=127.0.0.1:$(free_port)
PEERS12="1=$RAFT1=$CLIENT1,2=$RAFT3=$CLIENT3"
DATA12="$DIR/data12"
mkdir "$DATA12"
"$RDLMD" --id 1 --peers "$PEERS12" --data-dir "$DATA12" >>"$DIR/log5" 2>&1 &
SECOND=$!
deadline=$(($(now_ms) + 10000))
until grep -q "replica 1: raft" "$DIR/log5"; do
    [ "$(now_ms)" -lt "$deadline" ] || fail "replica 1 of two did not start within 10 s"
    sleep 0.05
done
kill -TERM "$SECOND"
wait "$SECOND"
SECOND=
timeout 10 "$RDLMD" --id 2 --peers "$PEERS12" --data-dir "$DATA12" 2>"$DIR/log6"
rc=$?
[ "$rc" = 1 ] || fail "rdlmd --id 2 on replica 1's directory: exit $rc, expected 1"
grep -q "data directory $DATA12 belongs to replica 1, not to --id 2" "$DIR/log6" ||
    fail "the refusal names neither id: $(cat "$DIR/log6")"
echo "rdlmd_data_dir: another --id refused: $(grep "belongs to" "$DIR/log6")"
echo "rdlmd_data_dir: PASS"
exit 0
