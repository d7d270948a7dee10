#!/bin/bash
# Isolate the authority's leader (ctest cluster.partition; README.md).
#
# nft rules in the leader's namespace cut it (a minority of one) from every other node
# for 10 s. On the minority side, in the leader's namespace: wA holds L1 and checks its
# lease every 100 ms; wC opened a session before the cut (with a TTL long enough to be
# still valid) and tries to lock L2 once the old leader must have noticed the cut. On
# the majority side, once a new leader is up: wD locks L3, wB opens a session and waits
# for L1. Proves:
#   - no renewal sent after the cut succeeds on the minority side (the leader answers
#     a RENEW only once a majority confirmed its term after it arrived:
#     core/lease/authority/confirm.h), and the old leader logs "stepping down";
#   - no acquire succeeds on the minority side (wC: 0 grants);
#   - the majority elects a new leader and serves (wD); wB gets L1 with
#     RDLM_OWNER_DEAD once wA's session expired, and only after every instant wA's
#     client could have believed its lease valid (wA's last valid_until);
#   - after the heal, rdlmctl status shows exactly one leader, and the old leader does
#     not claim to lead;
#   - both checkers pass.
# Exit 0 pass, 1 fail, 77 skip (also without nft).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

TTL_MINORITY=5000 # the new leader arms wA's session for this from its start: wB queues
                  # on L1 before it ends, and so sees the break (RDLM_OWNER_DEAD)
TTL=5000     # majority-side clients: outlives a failover (two libraft elections)
DRIFT_PCT=10 # the client's default rho: valid_until = t_send + TTL * 0.9
CUT_S=10
cl_init partition 110
cl_net_up 6
cl_nft_ok
cl_replicas_start
OLD=$(cl_leader 20)
cl_log "replicas up, leader: replica $OLD (election timeout $CL_ET ms, heartbeat $CL_HB ms)"
cl_store_start

cl_worker "$OLD" wA --lock L1 --ttl-ms $TTL_MINORITY --hold-ms 20000 --check-every-ms 100
cl_wait_record wA 20 acquire --where 'status=RDLM_OK|RDLM_OWNER_DEAD' >/dev/null
cl_worker "$OLD" wC --lock L2 --ttl-ms $TTL --iters 3 --lock-timeout-ms 1500 \
    --start-file "$CL_DIR/go-wC"
cl_wait_record wC 20 open --where status=RDLM_OK >/dev/null
sleep 0.3

T_P=$(cl_now_ns)
cl_isolate "$OLD"
T_C=$(cl_now_ns)
cl_log "replica $OLD isolated with wA and wC (nft drop on every other node's address)," \
    "$(((T_C - T_P) / 1000000)) ms"
# libraft's own step-down window (a leader checks contact with a majority once per
# election timeout, on heartbeat ticks): wC tries once the old leader must have left.
cl_sleep_until $((T_P + (2 * CL_ET + 2 * CL_HB) * 1000000))
touch "$CL_DIR/go-wC"

NEW=$(cl_leader 15 "$OLD")
NEW_MS=$(cl_ms_since "$T_P")
cl_log "majority side: replica $NEW leads, $NEW_MS ms after the cut"
cl_worker 5 wB --lock L1 --ttl-ms $TTL --iters 1 --hold-ms 500 --lock-timeout-ms 40000
cl_worker 6 wD --lock L3 --ttl-ms $TTL --iters 2
cl_wait_exit wD 20
[ "$CL_RC" = 0 ] || cl_fail "the majority side did not serve wD (exit $CL_RC)"
cl_log "majority side serves: wD locked L3 twice"

cl_sleep_until $((T_P + CUT_S * 1000000000))
cl_heal "$OLD"
T_H=$(cl_now_ns)
cl_log "partition healed"
END=$((T_H + 15000000000))
until cl_ctl_status --authority "$(cl_authority)" >"$CL_DIR/status.txt" 2>&1 &&
    ! cl_is_leader "$OLD"; do
    [ "$(cl_now_ns)" -lt "$END" ] || cl_fail "no single leader after the heal:" \
        "$(cat "$CL_DIR/status.txt")"
    sleep 0.1
done
LEAD=$(cl_leader 1)
STEP=$(grep -c "stepping down" "$CL_DIR/r$OLD.log" || true)
cl_log "after the heal: one leader (replica $LEAD) $(cl_ms_since "$T_H") ms later;" \
    "replica $OLD logged 'stepping down' $STEP times"
[ "$STEP" -gt 0 ] || cl_fail "replica $OLD never logged 'stepping down'"

REC=$(cl_wait_record wB 30 acquire --where 'status=RDLM_OK|RDLM_OWNER_DEAD')
T_B=$(cl_field "$REC" t_ns)
B_STATUS=$(cl_field "$REC" status)
cl_log "wB got L1 $(((T_B - T_P) / 1000000)) ms after the cut with $B_STATUS"
[ "$B_STATUS" = RDLM_OWNER_DEAD ] || cl_fail "wB's acquire said $B_STATUS"
for w in wA wB wC; do
    cl_wait_exit $w 40
done

# Minority side: wC got nothing; wA's last successful renewal was sent in time, and its
# lease (as its client saw it) ended before wB got L1.
GRANTS=$(cl_q count "$CL_DIR/wC.jsonl" --op acquire --where 'status=RDLM_OK|RDLM_OWNER_DEAD')
TRIES=$(cl_q count "$CL_DIR/wC.jsonl" --op acquire)
cl_log "wC (minority side): $GRANTS of $TRIES acquires succeeded"
[ "$TRIES" -gt 0 ] || cl_fail "wC never tried to acquire"
[ "$GRANTS" = 0 ] || cl_fail "wC: $GRANTS of $TRIES acquires succeeded on the minority side"
VU=$(cl_q max "$CL_DIR/wA.jsonl" --op check --field valid_until_ns --where status=RDLM_OK)
LAST_SEND=$((VU - TTL_MINORITY * (100 - DRIFT_PCT) * 10000))
LAST_SEND_MS=$(((LAST_SEND - T_P) / 1000000))
cl_log "wA (minority side): its last successful renewal was sent $LAST_SEND_MS ms after" \
    "the cut began ($(((T_C - T_P) / 1000000)) ms to put in place); its lease ended" \
    "$(((T_B - VU) / 1000000)) ms before wB got L1"
[ "$LAST_SEND" -lt "$T_C" ] ||
    cl_fail "a renewal sent $LAST_SEND_MS ms after the cut succeeded on the minority side"
[ "$VU" -lt "$T_B" ] || cl_fail "wA's lease was still valid when wB got L1"

COUNTS=$(cl_store_stop)
cl_checkers
cl_pass "minority: 0/$TRIES acquires, last renewal sent $LAST_SEND_MS ms after the" \
    "cut began (in place at $(((T_C - T_P) / 1000000)) ms); majority: leader $NEW at +$NEW_MS ms, served; wB took L1 at" \
    "+$(((T_B - T_P) / 1000000)) ms; healed: one leader ($LEAD); ${COUNTS#fenced_store: }"
