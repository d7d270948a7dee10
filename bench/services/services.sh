#!/usr/bin/env bash
# Start Redis, etcd, ZooKeeper and rdlm's lease authority (3 rdlmd replicas) on
# 127.0.0.1 for `rdlm-bench -b services,lease-renew`: private data directories under a
# temporary directory, non-default ports (the first free one from a base), each
# waited for with a bound, and stopped again afterwards.
#
#   bench/services/services.sh run [--] COMMAND [ARG...]
#       start the servers, run COMMAND with the variables below exported, stop the
#       servers (also on error or Ctrl-C), exit with COMMAND's status. E.g.
#         bench/services/services.sh run -- build/bench/rdlm-bench -b services
#   bench/services/services.sh start DIR     start them with data in DIR (created); print the
#                                   variables as `export` lines (eval them) and keep
#                                   them in DIR/env; the servers keep running
#   bench/services/services.sh stop DIR      stop what `start DIR` started
#
# Exported (read by rdlm-bench; not RDLM_* names, which librdlm checks):
#   RDLMBENCH_REDIS=127.0.0.1:PORT  RDLMBENCH_ETCD=127.0.0.1:PORT  RDLMBENCH_ZK=127.0.0.1:PORT
#   RDLMBENCH_RDLMD=127.0.0.1:PORT,127.0.0.1:PORT,127.0.0.1:PORT  the replicas' client ports
#   RDLMBENCH_SERVER_PIDS="pid ..."  the servers, whose CPU time rdlm-bench does not
#                                    count as other load on the machine
#   RDLMBENCH_<NAME>_PIDS="pid ..."  one server's processes (rdlmd: its replicas, whose
#                                    disk writes lease-renew reads)
#   RDLMBENCH_<NAME>_SKIP="why"      for a server that could not be started (the
#                                    benchmark prints it in its SKIP note)
#
# Settings (environment):
#   BENCH_SERVICES="redis etcd zookeeper rdlmd"  which servers to start
#   BENCH_NO_INSTALL=1   never apt-get; a missing server is skipped
#   BENCH_SERVICES_WAIT=20  seconds to wait for each server to answer
#   BENCH_SERVICES_KEEP=1   keep the temporary directory (logs) after `run`
#   RDLMBENCH_RDLMD_BIN, RDLMBENCH_RDLMCTL_BIN  rdlmd and rdlmctl; by default those of
#                        the build tree of an rdlm-bench that COMMAND runs
#                        (BUILD/bench/rdlm-bench: BUILD/tools/rdlmd/rdlmd and
#                        BUILD/tools/rdlmctl), else of $BUILD_DIR, else of build/ in
#                        this repository, else PATH's
#
# Missing servers are installed with apt-get when running as root (redis-server,
# etcd-server, zookeeperd: about 10, 8 and 13 s on Debian 12 here; zookeeperd needs a
# Java runtime, which this machine image already has, else apt brings one). Services
# started by the packages' own init scripts, if any, use the default ports and are
# left alone. rdlmd is not installed but built (cmake --build BUILD --target rdlmd
# rdlmctl; rdlm-bench's build makes both). Exit status: 0, or 2 for bad usage; a
# server that does not start is a SKIP, not an error.
set -euo pipefail

wait_s=${BENCH_SERVICES_WAIT:-20}
want=${BENCH_SERVICES:-redis etcd zookeeper rdlmd}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

say() { echo "services.sh: $*" >&2; }

usage() {
    sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//' >&2
    exit 2
}

# ---- installing -------------------------------------------------------------------------

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

# apt-get install the packages not yet installed (root only; bounded).
install_missing() {
    local missing=() p
    for p in "$@"; do
        installed "$p" || missing+=("$p")
    done
    [[ ${#missing[@]} -eq 0 ]] && return 0
    if [[ ${BENCH_NO_INSTALL:-0} == 1 || $(id -u) != 0 ]] || ! command -v apt-get >/dev/null; then
        say "not installed: ${missing[*]} (install as root, or unset BENCH_NO_INSTALL)"
        return 1
    fi
    say "installing ${missing[*]} (apt-get)"
    local t0=$SECONDS
    export DEBIAN_FRONTEND=noninteractive
    if ! timeout 300 apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1; then
        timeout 300 apt-get update -qq >/dev/null 2>&1 || true
        timeout 300 apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 || {
            say "apt-get install ${missing[*]} failed"
            return 1
        }
    fi
    say "installed ${missing[*]} in $((SECONDS - t0)) s"
}

# ---- ports and probes -------------------------------------------------------------------

# 0 if something accepts connections on 127.0.0.1:$1.
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Set $port to the first port from $1 on that nothing listens on and that no server
# started here has been given yet (servers are probed only after all are started).
taken=""
free_port() {
    port=$1
    while listening "$port" || [[ " $taken " == *" $port "* ]]; do
        port=$((port + 1))
        if ((port > $1 + 100)); then
            return 1
        fi
    done
    taken="$taken $port"
}

# Send $2 to $1 (host:port) and print the reply (at most 1 s).
ask() {
    # shellcheck disable=SC2016 # $0 and $1 are the inner shell's
    timeout 1 bash -c 'exec 3<>"/dev/tcp/${0%:*}/${0##*:}" && printf "%b" "$1" >&3 && cat <&3' \
        "$1" "$2" 2>/dev/null || true
}

# Each probe gets the address(es) the server's variable will hold.
redis_ok() { [[ $(ask "$1" 'PING\r\nQUIT\r\n') == *PONG* ]]; }
etcd_ok() { [[ $(ask "$1" 'GET /health HTTP/1.0\r\n\r\n') == *'"health":"true"'* ]]; }
# (`ruok` answers imok before the server serves sessions; `srvr` names the mode only
# once it does.)
zk_ok() { [[ $(ask "$1" 'srvr') == *"Mode: standalone"* ]]; }
# A majority of the replicas answers and exactly one of them leads.
rdlmd_ok() { "$rdlmctl" status --authority "$1" --timeout-ms 500 >/dev/null 2>&1; }

# Wait until "$probe $addrs" succeeds or one of the server's processes ($pids,
# comma-separated) died; bounded.
await() {
    local name=$1 probe=$2 addrs=$3 pids=$4 log=$5 t0=$SECONDS pid
    while ((SECONDS - t0 < wait_s)); do
        if "$probe" "$addrs"; then
            say "$name answers on $addrs (pid ${pids//,/ }, $((SECONDS - t0)) s)"
            return 0
        fi
        for pid in ${pids//,/ }; do
            if ! kill -0 "$pid" 2>/dev/null; then
                say "$name (pid $pid) exited at start; last lines of $log:"
                tail -5 "$log" >&2 || true
                return 1
            fi
        done
        sleep 0.1
    done
    say "$name did not answer on $addrs within $wait_s s; log: $log"
    return 1
}

# ---- starting ---------------------------------------------------------------------------

# Each start_* launches its server in the background and records
# "name pids addrs VAR log probe" in $dir/started (pids and addrs comma-separated);
# start_all then probes them.
start_redis() {
    local d=$dir/redis port
    install_missing redis-server || { skip REDIS "redis-server not installed"; return; }
    free_port 16379 || { skip REDIS "no free port"; return; }
    mkdir -p "$d"
    redis-server --bind 127.0.0.1 --port "$port" --dir "$d" --save '' --appendonly no \
        --daemonize no --protected-mode yes --logfile "$d/redis.log" </dev/null >/dev/null 2>&1 &
    echo "redis $! 127.0.0.1:$port REDIS $d/redis.log redis_ok" >>"$dir/started"
}

start_etcd() {
    local d=$dir/etcd port peer
    install_missing etcd-server || { skip ETCD "etcd-server not installed"; return; }
    free_port 12479 || { skip ETCD "no free port"; return; }
    peer=$port
    free_port 12379 || { skip ETCD "no free port"; return; }
    mkdir -p "$d"
    etcd --name rdlmbench --data-dir "$d/data" \
        --listen-client-urls "http://127.0.0.1:$port" \
        --advertise-client-urls "http://127.0.0.1:$port" \
        --listen-peer-urls "http://127.0.0.1:$peer" \
        --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
        --initial-cluster "rdlmbench=http://127.0.0.1:$peer" \
        --logger zap --log-level warn </dev/null >"$d/etcd.log" 2>&1 &
    echo "etcd $! 127.0.0.1:$port ETCD $d/etcd.log etcd_ok" >>"$dir/started"
}

start_zookeeper() {
    local d=$dir/zookeeper port jar=/usr/share/java/zookeeper.jar
    install_missing zookeeperd || { skip ZK "zookeeperd not installed"; return; }
    if ! command -v java >/dev/null || [[ ! -r $jar ]]; then
        skip ZK "no java or no $jar"
        return
    fi
    free_port 12181 || { skip ZK "no free port"; return; }
    mkdir -p "$d/data"
    cat >"$d/zoo.cfg" <<EOF
tickTime=2000
dataDir=$d/data
clientPort=$port
clientPortAddress=127.0.0.1
maxClientCnxns=0
admin.enableServer=false
4lw.commands.whitelist=srvr
EOF
    java -Xms64m -Xmx256m -Dzookeeper.log.dir="$d" -cp "/etc/zookeeper/conf:$jar" \
        org.apache.zookeeper.server.ZooKeeperServerMain "$d/zoo.cfg" \
        </dev/null >"$d/zookeeper.log" 2>&1 &
    echo "zookeeper $! 127.0.0.1:$port ZK $d/zookeeper.log zk_ok" >>"$dir/started"
}

# Print the executable $1 names (a variable's value; when set, it or nothing), else
# the first of: $2 in the build tree of each rdlm-bench among the arguments of `run`
# (BUILD/bench/rdlm-bench: BUILD/$2), of $BUILD_DIR, of build/ in this repository;
# else $3 on PATH. 1 if none.
find_bin() {
    local a c
    if [[ -n $1 ]]; then
        [[ -x $1 && ! -d $1 ]] && echo "$1"
        return
    fi
    for a in "${cmd_args[@]}" ${BUILD_DIR:+"$BUILD_DIR/bench/rdlm-bench"} \
        "$repo/build/bench/rdlm-bench"; do
        c=${a%/*}/../$2
        if [[ ${a##*/} == rdlm-bench && $a == */* && -x $c && ! -d $c ]]; then
            echo "$c"
            return 0
        fi
    done
    command -v "$3"
}

# The lease authority: 3 rdlmd replicas (libraft) with Raft ports from 12701 and
# client ports from 12801, each with its data directory; the probe asks rdlmctl.
start_rdlmd() {
    local d=$dir/rdlmd i raft peers="" addrs="" pids=""
    if ! rdlmd=$(find_bin "${RDLMBENCH_RDLMD_BIN:-}" tools/rdlmd/rdlmd rdlmd) ||
        ! rdlmctl=$(find_bin "${RDLMBENCH_RDLMCTL_BIN:-}" tools/rdlmctl rdlmctl); then
        skip RDLMD "rdlmd or rdlmctl not found (build them: cmake --build BUILD --target \
rdlmd rdlmctl, or set RDLMBENCH_RDLMD_BIN and RDLMBENCH_RDLMCTL_BIN)"
        return
    fi
    for i in 1 2 3; do
        free_port 12701 || { skip RDLMD "no free port"; return; }
        raft=$port
        free_port 12801 || { skip RDLMD "no free port"; return; }
        peers="$peers${peers:+,}$i=127.0.0.1:$raft=127.0.0.1:$port"
        addrs="$addrs${addrs:+,}127.0.0.1:$port"
    done
    for i in 1 2 3; do
        mkdir -p "$d/$i"
        "$rdlmd" --id "$i" --peers "$peers" --data-dir "$d/$i" \
            </dev/null >"$d/rdlmd-$i.log" 2>&1 &
        pids="$pids${pids:+,}$!"
    done
    echo "rdlmd $pids $addrs RDLMD $d/rdlmd-1.log rdlmd_ok" >>"$dir/started"
}

skip() {
    say "${1,,}: skipped: $2"
    echo "export RDLMBENCH_$1_SKIP=$(printf '%q' "$2")" >>"$dir/env"
}

start_all() {
    local name pids addrs var log probe all="" s
    mkdir -p "$dir"
    : >"$dir/started"
    : >"$dir/env"
    [[ " $want " == *" redis "* ]] || skip REDIS "not started: BENCH_SERVICES=\"$want\""
    [[ " $want " == *" etcd "* ]] || skip ETCD "not started: BENCH_SERVICES=\"$want\""
    [[ " $want " == *" zookeeper "* || " $want " == *" zk "* ]] ||
        skip ZK "not started: BENCH_SERVICES=\"$want\""
    [[ " $want " == *" rdlmd "* ]] || skip RDLMD "not started: BENCH_SERVICES=\"$want\""
    for s in $want; do
        case $s in
        redis) start_redis ;;
        etcd) start_etcd ;;
        zookeeper | zk) start_zookeeper ;;
        rdlmd) start_rdlmd ;;
        *) say "unknown service '$s' (redis, etcd, zookeeper, rdlmd)" ;;
        esac
    done
    while read -r -u 4 name pids addrs var log probe; do
        all="$all ${pids//,/ }"
        if await "$name" "$probe" "$addrs" "$pids" "$log"; then
            echo "export RDLMBENCH_$var=$addrs RDLMBENCH_${var}_PIDS=\"${pids//,/ }\"" \
                >>"$dir/env"
        else
            skip "$var" "$name did not start on $addrs (see $log)"
        fi
    done 4<"$dir/started"
    echo "export RDLMBENCH_SERVER_PIDS=\"${all# }\"" >>"$dir/env"
}

stop_all() {
    local name pids rest t0 pid
    [[ -f $dir/started ]] || return 0
    while read -r -u 4 name pids rest; do
        for pid in ${pids//,/ }; do
            kill "$pid" 2>/dev/null || true
        done
    done 4<"$dir/started"
    t0=$SECONDS
    while read -r -u 4 name pids rest; do
        for pid in ${pids//,/ }; do
            while kill -0 "$pid" 2>/dev/null && ((SECONDS - t0 < 5)); do
                sleep 0.1
            done
            if kill -0 "$pid" 2>/dev/null; then
                say "$name (pid $pid) still running after 5 s: SIGKILL"
                kill -9 "$pid" 2>/dev/null || true
            fi
        done
    done 4<"$dir/started"
    : >"$dir/started"
    say "servers stopped"
}

# The EXIT trap of `run`.
# shellcheck disable=SC2317 # called from the trap
cleanup() {
    stop_all
    if [[ ${BENCH_SERVICES_KEEP:-0} == 1 ]]; then
        say "logs kept in $dir"
    else
        rm -rf "$dir"
    fi
}

# ---- commands ---------------------------------------------------------------------------

cmd=${1:-}
[[ $# -gt 0 ]] && shift
cmd_args=() # run: COMMAND and its arguments (find_bin looks for rdlm-bench among them)
case $cmd in
start)
    [[ $# -eq 1 ]] || usage
    dir=$1
    start_all
    cat "$dir/env"
    ;;
stop)
    [[ $# -eq 1 ]] || usage
    dir=$1
    stop_all
    ;;
run)
    [[ ${1:-} == -- ]] && shift
    [[ $# -gt 0 ]] || usage
    cmd_args=("$@")
    dir=$(mktemp -d "${TMPDIR:-/tmp}/rdlm-services.XXXXXX")
    child=""
    trap cleanup EXIT
    # A signal ends the command too (it runs in the background so that `wait`, unlike
    # a foreground command, lets the trap run at once; background commands ignore
    # SIGINT, so it gets SIGTERM), then the EXIT trap stops the servers.
    trap '[[ -n $child ]] && kill -TERM "$child" 2>/dev/null; exit 130' INT
    trap '[[ -n $child ]] && kill -TERM "$child" 2>/dev/null; exit 143' TERM
    t0=$SECONDS
    start_all
    say "started in $((SECONDS - t0)) s; data and logs in $dir"
    # shellcheck disable=SC1091
    source "$dir/env"
    status=0
    "$@" &
    child=$!
    wait "$child" || status=$?
    child=""
    exit "$status"
    ;;
*)
    usage
    ;;
esac
