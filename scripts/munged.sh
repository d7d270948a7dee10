#!/usr/bin/env bash
# Start, stop or query the MUNGE daemon that the lease authority's service mode
# (rdlmd --auth munge) and its tests need, on machines without systemd (containers,
# CI). On a machine where systemd runs munge.service this finds it running and does
# nothing.
#
# usage: scripts/munged.sh start|stop|status
#
#   start   idempotent: if `munge -n | unmunge` already works, exit 0. Otherwise (root
#           only) create the key if it is missing (mungekey, as the package's postinst
#           does), create /run/munge owned by munge, start munged as the munge user
#           (as munge.service does) and wait until a credential round trip works, at
#           most RDLM_MUNGED_TIMEOUT seconds (default 10). munged itself clears a
#           socket left by a daemon that was killed.
#   stop    stop the daemon (munged --stop); exit 0 if none was running.
#   status  exit 0 if a credential round trip works, 3 if not (LSB convention).
#
# Needs the Debian packages munge (munged, munge, unmunge, mungekey) and util-linux
# (runuser), both installed by scripts/install-deps.sh.
set -euo pipefail

MUNGED=/usr/sbin/munged
MUNGEKEY=/usr/sbin/mungekey
KEY=/etc/munge/munge.key
RUNDIR=/run/munge
USER_NAME=munge
LIMIT=${RDLM_MUNGED_TIMEOUT:-10}

die() {
    echo "munged.sh: $*" >&2
    exit 1
}

round_trip_works() {
    munge -n 2>/dev/null | unmunge >/dev/null 2>&1
}

start() {
    if round_trip_works; then
        echo "munged.sh: munged already running"
        return 0
    fi
    [ "$(id -u)" -eq 0 ] || die "munged is not running and starting it needs root"
    [ -x "$MUNGED" ] && command -v munge >/dev/null ||
        die "munge is not installed (run scripts/install-deps.sh)"
    id "$USER_NAME" >/dev/null 2>&1 || die "no '$USER_NAME' user (reinstall the munge package)"

    install -d -o "$USER_NAME" -g "$USER_NAME" -m 0700 "$(dirname "$KEY")"
    if [ ! -s "$KEY" ]; then
        echo "munged.sh: creating $KEY"
        "$MUNGEKEY" --create --keyfile="$KEY"
        chown "$USER_NAME:$USER_NAME" "$KEY"
        chmod 0600 "$KEY"
    fi
    # Normally created by the package (log, seed) and by systemd (RuntimeDirectory=munge,
    # mode 0755); /run is empty in a fresh container.
    [ -d /var/log/munge ] || install -d -o "$USER_NAME" -g "$USER_NAME" -m 0700 /var/log/munge
    [ -d /var/lib/munge ] || install -d -o "$USER_NAME" -g "$USER_NAME" -m 0711 /var/lib/munge
    install -d -o "$USER_NAME" -g "$USER_NAME" -m 0755 "$RUNDIR"

    # munged forks and detaches; its stdio is closed here so that a caller capturing
    # this script's output is not held open by the daemon.
    local out
    out=$(runuser -u "$USER_NAME" -- "$MUNGED" </dev/null 2>&1) ||
        die "munged failed to start: $out (see /var/log/munge/munged.log)"

    local tries=$((LIMIT * 10))
    while ! round_trip_works; do
        tries=$((tries - 1))
        [ "$tries" -gt 0 ] || die "munged started but 'munge -n | unmunge' fails after ${LIMIT}s"
        sleep 0.1
    done
    echo "munged.sh: munged started (pid $(cat "$RUNDIR/munged.pid" 2>/dev/null || echo '?'))"
}

stop() {
    if [ ! -e "$RUNDIR/munged.pid" ] && ! round_trip_works; then
        echo "munged.sh: munged not running"
        return 0
    fi
    if "$MUNGED" --stop >/dev/null 2>&1; then
        echo "munged.sh: munged stopped"
    elif round_trip_works; then
        die "munged is running but 'munged --stop' failed (not root?)"
    else
        echo "munged.sh: munged not running"
    fi
}

status() {
    if round_trip_works; then
        echo "munged.sh: munged running"
        return 0
    fi
    echo "munged.sh: munged not running"
    return 3
}

case "${1:-}" in
start) start ;;
stop) stop ;;
status) status ;;
*)
    echo "usage: $0 start|stop|status" >&2
    exit 2
    ;;
esac
