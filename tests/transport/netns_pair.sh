#!/bin/bash
# A program between two network namespaces (ctest: transport.ucx_tcp_two_netns, the
# transport conformance suite; global.two_netns, the cross-node lock validator). Usage:
#
#   netns_pair.sh PROGRAM [program options, e.g. --iters 1000 --timeout-sec 60]
#
# RDLMTEST_NETNS_PER_NS=k runs k processes per namespace (default 1); RDLMTEST_NETNS_STYLE
# says how a process learns its rank: "args" (default: --backend ucx --rank R --size N
# --connect A:PORT, the conformance suite) or "env" (RDLM_RANK, RDLM_SIZE,
# RDLM_RENDEZVOUS: rdlm_ctx_create's standalone rendezvous). RDLMTEST_NETNS_KILLED="R ..."
# names ranks that must end by SIGKILL (a fault test's victim, e.g. tl_conformance
# --dead-peer R): for them that end counts as passing, and any other as failing.
#
# Creates two namespaces rdlm-tl-a-$$ and rdlm-tl-b-$$ joined by a veth pair with
# 10.213.X.1/30 (A) and 10.213.X.2/30 (B); these addresses exist only inside the two
# namespaces, which hold nothing but lo and their veth end, so no traffic can leave
# them. Rank 0 runs in A and listens for the TCP bootstrap on A's veth address; the
# ranks in B connect to it. All use UCX_TLS=tcp,self and UCX_NET_DEVICES=<own veth
# end>, so remote atomics are UCX's software emulation over a real (virtual) link.
#
# Exit: 0 all ranks passed; 77 skipped (not root, or no `ip netns`/veth here: the
# message says what is needed); 1 otherwise. The namespaces are always deleted (trap
# EXIT); every wait is bounded by `timeout` (RDLMTEST_NETNS_TIMEOUT seconds, default 60).
# Namespaces left by an earlier run that was killed with SIGKILL (their creator's pid is
# gone) are removed first.
set -u

BIN=${1:?usage: netns_pair.sh PROGRAM [program options]}
shift
LIMIT=${RDLMTEST_NETNS_TIMEOUT:-60}
PER_NS=${RDLMTEST_NETNS_PER_NS:-1} # processes per namespace: ranks 0..k-1 in A, k..2k-1 in B
STYLE=${RDLMTEST_NETNS_STYLE:-args} # args: --rank --size --connect; env: RDLM_RANK/SIZE/RENDEZVOUS
KILLED=" ${RDLMTEST_NETNS_KILLED:-} " # ranks that must end by SIGKILL (exit 137)
PREFIX=rdlm-tl
NS_A=$PREFIX-a-$$
NS_B=$PREFIX-b-$$
VETH_A=rdtla$$ # interface names: at most 15 characters
VETH_B=rdtlb$$
NET=10.213.$(($$ % 250 + 1))
ADDR_A=$NET.1
ADDR_B=$NET.2
PORT=$((20000 + $$ % 20000))
PIDS=()
LOGDIR=

skip() {
    echo "SKIP: $*"
    exit 77
}

cleanup() {
    local p
    for p in "${PIDS[@]}"; do
        kill -TERM "$p" 2>/dev/null
    done
    for p in "${PIDS[@]}"; do
        wait "$p" 2>/dev/null
    done
    ip netns del "$NS_A" 2>/dev/null
    ip netns del "$NS_B" 2>/dev/null
    ip link del "$VETH_A" 2>/dev/null # only if it never left the root namespace
    [ -n "$LOGDIR" ] && rm -rf "$LOGDIR"
    if ip netns list 2>/dev/null | grep -qE "^($NS_A|$NS_B)( |$)"; then
        echo "netns_pair: could not delete $NS_A/$NS_B" >&2
    fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

[ "$(id -u)" = 0 ] || skip "needs root to create network namespaces and a veth pair" \
    "(ip netns add, ip link add type veth); run as root"
command -v ip >/dev/null || skip "needs iproute2 ('ip')"
command -v timeout >/dev/null || skip "needs coreutils 'timeout'"
[ -x "$BIN" ] || { echo "netns_pair: $BIN is not an executable" >&2; exit 1; }

# Leftovers of runs killed before their trap ran: ours by name, creator gone.
for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^$PREFIX-[ab]-[0-9]+$"); do
    pid=${ns##*-}
    kill -0 "$pid" 2>/dev/null || ip netns del "$ns" 2>/dev/null
done

ip netns add "$NS_A" || skip "'ip netns add' failed: needs network-namespace support (CAP_SYS_ADMIN, /run/netns)"
ip netns add "$NS_B" || skip "'ip netns add' failed for the second namespace"
ip link add "$VETH_A" type veth peer name "$VETH_B" ||
    skip "'ip link add type veth' failed: needs the veth driver"

set -e
ip link set "$VETH_A" netns "$NS_A"
ip link set "$VETH_B" netns "$NS_B"
ip -n "$NS_A" addr add "$ADDR_A/30" dev "$VETH_A"
ip -n "$NS_B" addr add "$ADDR_B/30" dev "$VETH_B"
for ns in "$NS_A" "$NS_B"; do
    ip -n "$ns" link set lo up
done
ip -n "$NS_A" link set "$VETH_A" up
ip -n "$NS_B" link set "$VETH_B" up
set +e
echo "netns_pair: $NS_A ($VETH_A $ADDR_A/30, ranks 0-$((PER_NS - 1))) <->" \
    "$NS_B ($VETH_B $ADDR_B/30, ranks $PER_NS-$((2 * PER_NS - 1)))," \
    "rendezvous $ADDR_A:$PORT, UCX_TLS=tcp,self"

LOGDIR=$(mktemp -d /tmp/rdlm-netns.XXXXXX)
OPTS=("$@")
NRANKS=$((2 * PER_NS))
# timeout is the direct child (PIDS), so cleanup's SIGTERM reaches the rank through it.
for ((r = 0; r < NRANKS; r++)); do
    if [ $r -lt "$PER_NS" ]; then ns=$NS_A dev=$VETH_A; else ns=$NS_B dev=$VETH_B; fi
    if [ "$STYLE" = env ]; then
        set -- env RDLM_RANK=$r RDLM_SIZE=$NRANKS RDLM_RENDEZVOUS="$ADDR_A:$PORT" "$BIN"
    else
        set -- "$BIN" --backend ucx --rank $r --size $NRANKS --connect "$ADDR_A:$PORT"
    fi
    timeout -k 5 "$LIMIT" ip netns exec "$ns" env UCX_TLS=tcp,self UCX_NET_DEVICES="$dev" \
        "$@" "${OPTS[@]}" >"$LOGDIR/rank$r.log" 2>&1 &
    PIDS+=($!)
done
RCS=()
for ((r = 0; r < NRANKS; r++)); do
    wait "${PIDS[$r]}"
    rc=$?
    if [[ $KILLED == *" $r "* ]]; then
        if [ $rc = 137 ]; then
            rc=0
        else
            echo "netns_pair: rank $r was to end by SIGKILL, exited $rc"
            rc=1
        fi
    fi
    RCS+=($rc)
done
PIDS=()
for ((r = 0; r < NRANKS; r++)); do
    sed "s/^/[rank $r] /" "$LOGDIR/rank$r.log"
done
# Evidence that the ranks talked over the veth pair (bytes through A's end).
read -r RXB TXB < <(ip -n "$NS_A" -s -j link show "$VETH_A" 2>/dev/null |
    sed -n 's/.*"rx":{"bytes":\([0-9]*\).*"tx":{"bytes":\([0-9]*\).*/\1 \2/p')
echo "netns_pair: $VETH_A carried ${RXB:-?} bytes in, ${TXB:-?} bytes out"
echo "netns_pair: ranks exited ${RCS[*]} (124: timed out after ${LIMIT}s)"
if [ -z "$(printf '%s\n' "${RCS[@]}" | grep -v '^0$')" ]; then
    echo "netns_pair: PASS ($(basename "$BIN") ${OPTS[*]} between two network namespaces)"
    exit 0
fi
if [ -z "$(printf '%s\n' "${RCS[@]}" | grep -v '^77$')" ]; then
    echo "SKIP: the ucx backend is not usable here (see above)"
    exit 77
fi
echo "netns_pair: FAIL"
exit 1
