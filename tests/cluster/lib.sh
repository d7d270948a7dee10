# Cluster test harness, sourced by the scenario scripts (kill_holder.sh, ...).
# shellcheck disable=SC2034,SC2119 # globals read by the scenarios; optional arguments
#
# Topology (cl_net_up N): one "switch" namespace rdlmtest-<pid>-br holding bridge br0,
# and N node namespaces rdlmtest-<pid>-n<i>, each with eth0 = 10.77.0.<i>/24, a veth
# whose other end is a port of br0. The addresses exist only inside these namespaces
# (created per run, so concurrent runs do not collide and nothing leaves the machine).
# Nodes 1-3 run the rdlmd replicas (raft 10.77.0.<i>:9001, clients :9101), node 4 the
# fenced_store (10.77.0.4:9200) and rdlmctl; workers run in 5.. or in a replica's node.
#
# Processes are started with cl_start: inside their namespace, under `timeout` (so
# none outlives the run), logging to $CL_DIR/<name>.log; cl_pid gives the program's
# own pid (for kill -9 / SIGSTOP). cl_init installs the cleanup trap: every process
# continued and terminated, every namespace deleted, $CL_DIR removed (kept when the
# scenario failed or RDLMTEST_KEEP=1), plus a watchdog that ends the scenario after
# its time limit so the trap runs before ctest's kill.
#
# Binaries: RDLMTEST_RDLMD, RDLMTEST_RDLMCTL, RDLMTEST_WORKER, RDLMTEST_STORE (ctest sets
# them), or found under RDLMTEST_BUILD_DIR. Exit codes: 0 pass, 1 fail, 77 skip.
#
# Every wait is bounded; every helper fails the scenario (cl_fail) when its bound
# passes, saying what it waited for.

CL_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CL_PREFIX=rdlmtest
CL_TAG=$CL_PREFIX-$$
CL_DIR=
CL_NODES=0
CL_NAME=${CL_NAME:-cluster}
CL_FAILED=0
CL_WATCHDOG=
CL_RC=0
CL_ET=${RDLMTEST_ELECTION_MS:-1000} # election timeout, ms
CL_HB=${RDLMTEST_HEARTBEAT_MS:-100} # heartbeat, ms
CL_RAFT_PORT=9001
CL_CLIENT_PORT=9101
CL_STORE_NODE=4
CL_STORE_ADDR=10.77.0.$CL_STORE_NODE:9200
CL_RDLMD_ARGS=() # extra rdlmd flags a scenario sets
CL_WORKER_ARGS=()   # extra lease_worker flags for every worker (cl_homes_mode)
CL_WORKER_OWN_SHM=0 # 1: every worker mounts a /dev/shm of its own (cl_homes_mode)
declare -A CL_BG=()  # name -> pid of its wrapper (our child)
declare -A CL_PID=() # name -> pid of the program itself
CL_MOUNTS=()         # mount points under $CL_DIR (cl_mount_tmpfs), unmounted at cleanup

cl_log() { echo "[$CL_NAME $(date +%T.%3N)] $*"; }

cl_skip() {
    echo "SKIP: $CL_NAME: $*"
    exit 77
}

# To stderr: it may run inside $(...), whose exit status then fails the scenario.
cl_fail() {
    CL_FAILED=1
    echo "FAIL: $CL_NAME: $*" >&2
    exit 1
}

cl_now_ns() { python3 "$CL_HERE/hist_query.py" now; }
cl_q() { python3 "$CL_HERE/hist_query.py" "$@"; }
cl_ms_since() { echo $((($(cl_now_ns) - $1) / 1000000)); } # T_NS

# Sleep until CLOCK_MONOTONIC reaches T_NS (no-op if it passed).
cl_sleep_until() {
    local left
    left=$((($1 - $(cl_now_ns)) / 1000000))
    [ "$left" -gt 0 ] && sleep "$(printf '%d.%03d' $((left / 1000)) $((left % 1000)))"
    return 0
}

# Find a built binary: the variable if set, else under RDLMTEST_BUILD_DIR.
cl_find_bin() { # VAR NAME
    local var=$1 name=$2 path=${!1:-}
    if [ -z "$path" ] && [ -n "${RDLMTEST_BUILD_DIR:-}" ]; then
        path=$(find "$RDLMTEST_BUILD_DIR" -maxdepth 4 -type f -name "$name" -perm -u+x \
            2>/dev/null | head -n 1)
    fi
    [ -n "$path" ] && [ -x "$path" ] ||
        cl_skip "binary $name not found (set $var or RDLMTEST_BUILD_DIR; build it with" \
            "make $name)"
    printf -v "$var" '%s' "$path"
}

# cl_init NAME LIMIT_SEC: checks (skip 77 if we cannot run), work dir, trap, watchdog.
cl_init() {
    CL_NAME=$1
    local limit=$2 ns pid
    [ "$(id -u)" = 0 ] || cl_skip "needs root (network namespaces, veth, nft)"
    for tool in ip timeout python3; do
        command -v "$tool" >/dev/null || cl_skip "needs '$tool'"
    done
    cl_find_bin RDLMTEST_RDLMD rdlmd
    cl_find_bin RDLMTEST_RDLMCTL rdlmctl
    cl_find_bin RDLMTEST_WORKER lease_worker
    cl_find_bin RDLMTEST_STORE fenced_store
    # Namespaces of runs killed before their trap ran (creator gone).
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' |
        grep -E "^$CL_PREFIX-[0-9]+-(br|n[0-9]+)$" || true); do
        pid=${ns#"$CL_PREFIX"-}
        pid=${pid%%-*}
        kill -0 "$pid" 2>/dev/null || ip netns del "$ns" 2>/dev/null || true
    done
    CL_DIR=$(mktemp -d "/tmp/$CL_TAG.XXXXXX")
    trap cl_cleanup EXIT
    trap 'echo "$CL_NAME: interrupted or out of time"; CL_FAILED=1; exit 1' INT TERM HUP
    (
        trap 'kill $! 2>/dev/null; exit 0' TERM
        sleep "$limit" &
        wait $!
        kill -TERM $$ 2>/dev/null
    ) &
    CL_WATCHDOG=$!
    cl_log "work dir $CL_DIR, time limit ${limit}s"
}

cl_cleanup() {
    local rc=$? name pid i
    set +e
    trap - EXIT INT TERM HUP
    if [ -n "$CL_WATCHDOG" ]; then
        kill -TERM "$CL_WATCHDOG" 2>/dev/null
        wait "$CL_WATCHDOG" 2>/dev/null
    fi
    for name in "${!CL_PID[@]}"; do
        kill -CONT "${CL_PID[$name]}" 2>/dev/null
        kill -TERM "${CL_PID[$name]}" 2>/dev/null
    done
    for name in "${!CL_BG[@]}"; do
        pid=${CL_BG[$name]}
        for i in $(seq 30); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "${CL_PID[$name]:-}" "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    for ((i = 1; i <= CL_NODES; i++)); do
        ip netns del "$CL_TAG-n$i" 2>/dev/null
    done
    ip netns del "$CL_TAG-br" 2>/dev/null
    for i in "${CL_MOUNTS[@]}"; do
        umount -l "$i" 2>/dev/null
    done
    if ip netns list 2>/dev/null | grep -q "^$CL_TAG-"; then
        echo "$CL_NAME: could not delete every $CL_TAG-* namespace" >&2
    fi
    if [ -n "$CL_DIR" ]; then
        if [ "$CL_FAILED" = 1 ] || [ "$rc" != 0 ] && [ "$rc" != 77 ]; then
            cl_dump_logs
            echo "$CL_NAME: logs and histories kept in $CL_DIR"
        elif [ "${RDLMTEST_KEEP:-0}" = 1 ]; then
            echo "$CL_NAME: logs and histories kept in $CL_DIR"
        else
            rm -rf "$CL_DIR"
        fi
    fi
    exit "$rc"
}

cl_dump_logs() {
    local f
    for f in "$CL_DIR"/*.log; do
        [ -s "$f" ] || continue
        echo "---- $(basename "$f") (last 25 lines)"
        tail -n 25 "$f"
    done
}

# cl_mount_tmpfs DIR SIZE [OPTIONS]: a tmpfs of SIZE (e.g. 16m) on DIR (created), so a
# scenario can fill a replica's disk; unmounted by the cleanup trap.
cl_mount_tmpfs() {
    mkdir -p "$1"
    mount -t tmpfs -o "size=$2${3:+,$3}" rdlmtest-disk "$1" || cl_skip "cannot mount a tmpfs"
    CL_MOUNTS+=("$1")
}

# cl_mount_ext4 DIR SIZE_MIB: an ext4 file system of SIZE_MIB on a loop device, mounted
# on DIR (created) with errors=remount-ro, so a scenario can turn it read-only under a
# running replica (cl_fs_error); unmounted (and the loop device freed) by the cleanup
# trap. Skips (77) where loop devices or mkfs.ext4 are missing.
cl_mount_ext4() {
    local img=$CL_DIR/$(basename "$1").img
    command -v mkfs.ext4 >/dev/null || cl_skip "no mkfs.ext4"
    mkdir -p "$1"
    truncate -s "$2M" "$img"
    mkfs.ext4 -q -F "$img" || cl_skip "mkfs.ext4 failed"
    mount -o loop,errors=remount-ro "$img" "$1" 2>/dev/null || cl_skip "cannot mount a loop device"
    CL_MOUNTS+=("$1")
}

# cl_fs_error DIR: report an error on the ext4 file system mounted on DIR (the kernel's
# trigger_fs_error), which errors=remount-ro turns read-only at once.
cl_fs_error() {
    local dev
    dev=$(findmnt -n -o SOURCE --target "$1")
    echo rdlmtest >"/sys/fs/ext4/$(basename "$dev")/trigger_fs_error"
}

cl_ns() { echo "$CL_TAG-n$1"; }
cl_addr() { echo "10.77.0.$1"; }

# cl_net_up N: the switch namespace and N nodes (see the top of this file).
cl_net_up() {
    local n=$1 i br=$CL_TAG-br ns
    ip netns add "$br" 2>/dev/null ||
        cl_skip "'ip netns add' failed: needs network-namespace support (CAP_SYS_ADMIN)"
    CL_NODES=$n
    ip -n "$br" link add br0 type bridge 2>/dev/null || cl_skip "no bridge support"
    ip -n "$br" link set br0 up
    ip -n "$br" link set lo up
    for ((i = 1; i <= n; i++)); do
        ns=$(cl_ns "$i")
        ip netns add "$ns"
        ip -n "$br" link add "v$i" type veth peer name eth0 netns "$ns" 2>/dev/null ||
            cl_skip "'ip link add type veth' failed: needs the veth driver"
        ip -n "$br" link set "v$i" master br0
        ip -n "$br" link set "v$i" up
        ip -n "$ns" addr add "$(cl_addr "$i")/24" dev eth0
        ip -n "$ns" link set lo up
        ip -n "$ns" link set eth0 up
    done
    # The bridge forwards once its ports are up: wait until node 1 reaches node n (a
    # refused TCP connection is an answer).
    ip netns exec "$(cl_ns 1)" python3 -c '
import socket, sys, time
end = time.monotonic() + 10
while time.monotonic() < end:
    try:
        socket.create_connection((sys.argv[1], 9), timeout=0.5).close()
        sys.exit(0)
    except ConnectionRefusedError:
        sys.exit(0)
    except OSError:
        time.sleep(0.05)
sys.exit(1)' "$(cl_addr "$n")" || cl_fail "the bridge does not forward"
    cl_log "$n nodes up: $CL_TAG-n1..n$n, 10.77.0.1-$n/24 on bridge br0 in $br"
}

# cl_start NODE NAME LIMIT_SEC CMD...: run CMD in NODE's namespace in the background.
cl_start() {
    local node=$1 name=$2 limit=$3 pidf i
    shift 3
    pidf=$CL_DIR/$name.pid
    rm -f "$pidf"
    # netns exec -> bash (reaped here; reports a signal death in the log, not on our
    # terminal) -> timeout -> bash that writes its pid and execs CMD.
    # shellcheck disable=SC2016 # expanded by the inner shells
    ip netns exec "$(cl_ns "$node")" bash -c \
        'timeout -k 2 "$1" bash -c '\''echo $$ > "$0"; exec "$@"'\'' "${@:2}"; exit $?' \
        cl-start "$limit" "$pidf" "$@" >>"$CL_DIR/$name.log" 2>&1 &
    CL_BG[$name]=$!
    for i in $(seq 100); do
        [ -s "$pidf" ] && break
        [ "$i" = 100 ] && cl_fail "$name did not start"
        sleep 0.02
    done
    CL_PID[$name]=$(cat "$pidf")
}

cl_pid() { echo "${CL_PID[$1]}"; }
cl_signal() { kill "-$2" "${CL_PID[$1]}"; } # NAME SIG

# cl_wait_exit NAME SEC: wait for NAME to end; its exit status in CL_RC. Not in $(...):
# only this shell can reap its children.
cl_wait_exit() {
    local name=$1 limit=$2 i
    for ((i = 0; i < limit * 20; i++)); do
        kill -0 "${CL_BG[$name]}" 2>/dev/null || break
        sleep 0.05
    done
    kill -0 "${CL_BG[$name]}" 2>/dev/null && cl_fail "$name still running after ${limit}s"
    CL_RC=0 # read by the scenarios
    wait "${CL_BG[$name]}" || CL_RC=$?
    unset "CL_BG[$name]" "CL_PID[$name]"
}

# ---- the authority --------------------------------------------------------------------

cl_peers() {
    local i out=
    for i in 1 2 3; do
        out+="${out:+,}$i=$(cl_addr $i):$CL_RAFT_PORT=$(cl_addr $i):$CL_CLIENT_PORT"
    done
    echo "$out"
}

cl_authority() { echo "$(cl_addr 1):$CL_CLIENT_PORT,$(cl_addr 2):$CL_CLIENT_PORT,$(cl_addr 3):$CL_CLIENT_PORT"; }

cl_replica_start() { # ID (data in $CL_DIR/r<ID>, kept across restarts)
    mkdir -p "$CL_DIR/r$1"
    cl_start "$1" "r$1" 600 "$RDLMTEST_RDLMD" --id "$1" --peers "$(cl_peers)" \
        --data-dir "$CL_DIR/r$1" --election-timeout-ms "$CL_ET" --heartbeat-ms "$CL_HB" \
        "${CL_RDLMD_ARGS[@]}"
}

cl_replicas_start() {
    local i
    for i in 1 2 3; do
        cl_replica_start "$i"
    done
}

cl_replica_kill() { # ID: kill -9 and reap
    cl_signal "r$1" KILL
    cl_wait_exit "r$1" 10
}

cl_replica_stop() { # ID: SIGTERM (a clean stop) and reap; its exit status in CL_RC
    cl_signal "r$1" TERM
    cl_wait_exit "r$1" 10
}
# Pause / resume a replica: cl_signal r<ID> STOP, cl_signal r<ID> CONT.

# rdlmctl status from node 4 (outside every replica). Extra args are appended.
cl_ctl_status() { # [--authority LIST] [--json]
    ip netns exec "$(cl_ns $CL_STORE_NODE)" timeout 5 "$RDLMTEST_RDLMCTL" status \
        --timeout-ms 500 "$@"
}

# The leader's id, once `rdlmctl status` sees exactly one leader and a majority; waits
# at most SEC seconds (fails the scenario after). NOT_ID: wait for another leader.
cl_leader() { # SEC [NOT_ID]
    local limit=$1 not=${2:-0} end json id
    end=$(($(date +%s%N) + limit * 1000000000))
    while [ "$(date +%s%N)" -lt "$end" ]; do
        if json=$(cl_ctl_status --authority "$(cl_authority)" --json 2>/dev/null); then
            id=$(cl_json_leader "$json")
            if [ -n "$id" ] && [ "$id" != "$not" ]; then
                echo "$id"
                return 0
            fi
        fi
        sleep 0.05
    done
    cl_fail "no single leader${2:+ other than $not} within ${limit}s: $(cl_ctl_status \
        --authority "$(cl_authority)" 2>&1 | tr '\n' ' ')"
}

# The leader's id in `rdlmctl status --json` output (one object per replica and line:
# address, id, leader, term, leader_id, ...), if exactly one replica says it leads.
cl_json_leader() {
    python3 -c '
import json, sys
lead = []
for line in sys.argv[1].splitlines():
    try:
        r = json.loads(line)
    except ValueError:
        continue
    if isinstance(r, dict) and r.get("leader") is True:
        lead.append(r)
print(lead[0].get("id") or lead[0].get("leader_id") or "" if len(lead) == 1 else "")
' "$1"
}

# Is replica ID the leader by its own account? 0 yes, 1 no / no answer.
cl_is_leader() {
    local json
    json=$(cl_ctl_status --authority "$(cl_addr "$1"):$CL_CLIENT_PORT" --json 2>/dev/null) ||
        return 1
    [ "$(cl_json_leader "$json")" != "" ]
}

# ---- store and workers ----------------------------------------------------------------

cl_store_start() {
    cl_start "$CL_STORE_NODE" store 600 "$RDLMTEST_STORE" --listen "$CL_STORE_ADDR" \
        --history "$CL_DIR/store.jsonl"
    for i in $(seq 100); do
        grep -q "listening on" "$CL_DIR/store.log" 2>/dev/null && return 0
        sleep 0.05
    done
    cl_fail "fenced_store did not start"
}

cl_store_stop() { # prints the store's counts line
    cl_signal store TERM
    cl_wait_exit store 10
    grep "writes accepted" "$CL_DIR/store.log" || true
}

# cl_worker NODE NAME ARGS...: lease_worker with history $CL_DIR/NAME.jsonl, plus
# CL_WORKER_ARGS. With CL_WORKER_OWN_SHM=1 the worker first mounts a tmpfs on /dev/shm:
# `ip netns exec` gave it a mount namespace of its own, so the mount is its alone and
# the worker's rdlm node segment is shared with no other worker, as on a host of its
# own (otherwise every worker on this machine attaches the same /dev/shm/rdlm-0-*).
cl_worker() {
    local node=$1 name=$2 own_shm=()
    shift 2
    if [ "$CL_WORKER_OWN_SHM" = 1 ]; then
        # shellcheck disable=SC2016 # expanded by the inner shell
        own_shm=(bash -c 'mount -t tmpfs -o size=64m,mode=1777 rdlmtest-shm /dev/shm &&
            exec "$@"' cl-own-shm)
    fi
    cl_start "$node" "$name" 300 "${own_shm[@]}" "$RDLMTEST_WORKER" \
        --authority "$(cl_authority)" --store "$CL_STORE_ADDR" --client "$name" \
        --history "$CL_DIR/$name.jsonl" "${CL_WORKER_ARGS[@]}" "$@"
}

# cl_wait_record NAME SEC OP [hist_query filters]: print the first matching record of
# worker NAME's history as JSON, waiting up to SEC seconds; fail the scenario after.
cl_wait_record() {
    local name=$1 limit=$2 op=$3
    shift 3
    cl_q wait "$CL_DIR/$name.jsonl" --op "$op" --timeout "$limit" "$@" ||
        cl_fail "$name: no '$op' record $* within ${limit}s"
}

cl_field() { # JSON FIELD
    python3 -c 'import json, sys; print(json.loads(sys.argv[1]).get(sys.argv[2], ""))' "$1" "$2"
}

# ---- a holder's takeover (kill_holder.sh, sigstop_holder.sh) ---------------------------

# Worker w2 has opened its session and, half a second later, not acquired L1, which
# worker w1 holds.
cl_w2_waits_behind_w1() {
    cl_wait_record w2 20 open --where status=RDLM_OK >/dev/null
    sleep 0.5
    [ "$(cl_q count "$CL_DIR/w2.jsonl" --op acquire)" = 0 ] ||
        cl_fail "w2 got L1 while w1 held it"
}

# w2 takes L1 over from w1, whose lease stopped being renewed at T_NS (EVENT: "the
# kill", "the stop"), waiting up to SEC s. Sets REC (w2's acquire), DT_MS, BOUND_MS
# (TTL * (1 + RHO_PCT / 100) + 1 s), STATUS and T2 (its token); fails unless it came
# within BOUND_MS, as RDLM_OWNER_DEAD, and only after w1's lease ended as w1's own
# client saw it (its last check). NOTE ends the log line.
cl_takeover() { # T_NS SEC EVENT TTL RHO_PCT [NOTE]
    local t_ns=$1 sec=$2 event=$3 ttl=$4 rho_pct=$5 note=${6:+ $6} vu margin_ms
    REC=$(cl_wait_record w2 "$sec" acquire --where 'status=RDLM_OK|RDLM_OWNER_DEAD')
    DT_MS=$((($(cl_field "$REC" t_ns) - t_ns) / 1000000))
    BOUND_MS=$((ttl * (100 + rho_pct) / 100 + 1000))
    STATUS=$(cl_field "$REC" status)
    T2=$(cl_field "$REC" token)
    cl_log "w2 acquired L1 $DT_MS ms after $event (bound $BOUND_MS ms) with $STATUS," \
        "token $T2$note"
    [ "$DT_MS" -le "$BOUND_MS" ] || cl_fail "takeover took $DT_MS ms > $BOUND_MS ms"
    [ "$STATUS" = RDLM_OWNER_DEAD ] || cl_fail "w2's acquire said $STATUS, not RDLM_OWNER_DEAD"
    vu=$(cl_q max "$CL_DIR/w1.jsonl" --op check --field valid_until_ns --where status=RDLM_OK)
    margin_ms=$((($(cl_field "$REC" t_ns) - vu) / 1000000))
    cl_log "w1's lease (by its last check) ended $margin_ms ms before w2 got L1"
    [ "$margin_ms" -gt 0 ] || cl_fail "w2 got L1 while w1's lease was still valid"
}

# ---- workers on a data disk that fails (disk_full.sh, disk_readonly.sh) ----------------

# w1 (node 5) holds L1 with a TTL ms lease for HOLD_MS ms, checking its lease every
# 100 ms; w2 (node 6) locks L2 in a loop until cl_disk_workers_stop. Returns once both
# have acquired.
cl_disk_workers_start() { # TTL HOLD_MS
    cl_worker 5 w1 --lock L1 --ttl-ms "$1" --hold-ms "$2" --check-every-ms 100
    cl_wait_record w1 20 acquire --where 'status=RDLM_OK' >/dev/null
    cl_worker 6 w2 --lock L2 --ttl-ms 5000 --iters 100000 --pause-ms 100 \
        --lock-timeout-ms 500 --stop-file "$CL_DIR/w2.stop"
    cl_wait_record w2 20 acquire --where 'status=RDLM_OK' >/dev/null
}

# Stops w2 and waits for both workers to exit; w1 must exit 0 (WHY: what it would mean).
cl_disk_workers_stop() { # WHY
    touch "$CL_DIR/w2.stop"
    cl_wait_exit w1 20
    [ "$CL_RC" = 0 ] || cl_fail "w1 exited $CL_RC ($1)"
    cl_wait_exit w2 20
}

# ---- lock homes in rdlmd (lease_worker --ctx-lock) -------------------------------------

# Workers lock through a context (RDLM_AUTHORITY): locks homed at the rdlmd replicas,
# each worker with a /dev/shm of its own (a host of its own).
cl_homes_mode() {
    CL_WORKER_ARGS=(--ctx-lock)
    CL_WORKER_OWN_SHM=1
}

# cl_init_mode NAME LIMIT [--homes]: cl_init NAME with LIMIT seconds; with --homes
# (HOMES=1) the workers lock on the rdlmd homes (cl_homes_mode), the scenario is
# named homes.NAME and gets 30 s more.
cl_init_mode() {
    HOMES=0
    if [ "${3:-}" = --homes ]; then
        HOMES=1
        cl_homes_mode
        cl_init "homes.$1" $(($2 + 30))
    else
        cl_init "$1" "$2"
    fi
}

# The replica (node id) that home index INDEX names: the replicas sorted by their
# client address as strings (strcmp), index from 0. Fails the scenario if there is none.
cl_home_replica() { # INDEX
    local ids=() r
    mapfile -t ids < <(for r in 1 2 3; do echo "$(cl_addr "$r"):$CL_CLIENT_PORT $r"; done |
        LC_ALL=C sort -k1,1 | awk '{print $2}')
    if [[ ! "$1" =~ ^[0-9]+$ ]] || [ "$1" -ge "${#ids[@]}" ]; then
        cl_fail "home index '$1' names no replica (a lock homed at a replica has 0..2)"
    fi
    echo "${ids[$1]}"
}

# cl_homes_lock_path LOCK [SLACK]: workers wq1 (node 5, 1 iteration) and wq20 (node 6,
# 20 iterations), concurrently on LOCK; the requests each sent to the authority (its
# final "stats" record, renewals apart) must not differ by more than SLACK (default 2:
# opening the lease may take a redirect to the leader more in one than in the other).
# A lock path that asked the authority once per acquire would differ by 19 or more.
# The two counts in CL_AUTH_ONE and CL_AUTH_MANY. Not in $(...): it starts workers.
cl_homes_lock_path() {
    local lock=$1 slack=${2:-2} one many w
    cl_worker 5 wq1 --lock "$lock" --iters 1 --lock-timeout-ms 20000
    cl_worker 6 wq20 --lock "$lock" --iters 20 --lock-timeout-ms 20000
    for w in wq1 wq20; do
        cl_wait_exit $w 60
        [ "$CL_RC" = 0 ] || cl_fail "$w exited $CL_RC (see $w.log / $w.jsonl)"
    done
    one=$(cl_q get "$CL_DIR/wq1.jsonl" --op stats --where status=RDLM_OK \
        --field authority_requests) || cl_fail "wq1 recorded no stats"
    many=$(cl_q get "$CL_DIR/wq20.jsonl" --op stats --where status=RDLM_OK \
        --field authority_requests) || cl_fail "wq20 recorded no stats"
    [ "$(cl_q get "$CL_DIR/wq20.jsonl" --op stats --field acquires)" = 20 ] ||
        cl_fail "wq20 was not granted 20 acquires"
    [ "$many" -le $((one + slack)) ] ||
        cl_fail "authority requests grow with the acquires: 1 acquire $one, 20 acquires" \
            "$many (slack $slack)"
    CL_AUTH_ONE=$one
    CL_AUTH_MANY=$many
}

# ---- partitions (nft inside a node's namespace) ----------------------------------------

cl_nft_ok() {
    command -v nft >/dev/null || cl_skip "needs nft (nftables)"
    ip netns exec "$(cl_ns 1)" nft add table inet rdlmtest_probe 2>/dev/null ||
        cl_skip "nft cannot add a table inside a namespace (nf_tables kernel support)"
    ip netns exec "$(cl_ns 1)" nft delete table inet rdlmtest_probe
}

# cl_partition NODE PEER...: drop NODE's traffic to and from each PEER node.
cl_partition() {
    local node=$1 ns peer rules=
    ns=$(cl_ns "$node")
    shift
    for peer in "$@"; do
        rules+="add rule inet rdlmtest in ip saddr $(cl_addr "$peer") drop
add rule inet rdlmtest out ip daddr $(cl_addr "$peer") drop
"
    done
    ip netns exec "$ns" nft -f - <<EOF
add table inet rdlmtest
add chain inet rdlmtest in { type filter hook input priority 0; policy accept; }
add chain inet rdlmtest out { type filter hook output priority 0; policy accept; }
$rules
EOF
}

# cl_isolate NODE: partition NODE from every other node.
cl_isolate() {
    local node=$1 i peers=()
    for ((i = 1; i <= CL_NODES; i++)); do
        [ "$i" = "$node" ] || peers+=("$i")
    done
    cl_partition "$node" "${peers[@]}"
}

cl_heal() { ip netns exec "$(cl_ns "$1")" nft delete table inet rdlmtest; }

# ---- checks ----------------------------------------------------------------------------

# cl_checkers [check_fencing options]: both checkers over the store's history and
# every worker history of the run.
cl_checkers() {
    local ws=("$CL_DIR"/w*.jsonl) rc=0
    python3 "$CL_HERE/check_fencing.py" --store "$CL_DIR/store.jsonl" "$@" "${ws[@]}" ||
        rc=1
    python3 "$CL_HERE/check_locks.py" "${ws[@]}" || rc=1
    [ "$rc" = 0 ] || cl_fail "a checker rejected the run's histories"
}

# cl_checkers_per_lock [check_fencing options]: both checkers, once per lock, over the
# store's history and the worker histories of that lock (each worker locks one). For
# locks homed at rdlmd replicas: their tokens are epoch << 40 | a sequence kept in
# the lock's own word, so two locks of one home share token values, while
# check_fencing.py also requires tokens unique across locks.
cl_checkers_per_lock() {
    local f lock rc=0
    declare -A files=()
    for f in "$CL_DIR"/w*.jsonl; do
        lock=$(cl_q get "$f" --op acquire --field lock) || continue # never tried
        files[$lock]+="$f "
    done
    for lock in "${!files[@]}"; do
        cl_log "checkers for lock $lock: $(basename -a ${files[$lock]} | tr '\n' ' ')"
        # shellcheck disable=SC2086 # the file names (no blanks) are split on purpose
        python3 "$CL_HERE/check_fencing.py" --store "$CL_DIR/store.jsonl" "$@" \
            ${files[$lock]} || rc=1
        # shellcheck disable=SC2086
        python3 "$CL_HERE/check_locks.py" ${files[$lock]} || rc=1
    done
    [ "$rc" = 0 ] || cl_fail "a checker rejected the run's histories"
}

cl_pass() {
    cl_log "PASS: $*"
    exit 0
}
