#!/usr/bin/env bash
# rdlm_info --cleanup, in a /dev/shm of its own (a private mount namespace, so that no
# other process's sweep or cleanup races with it; needs root, else exit 77 = skipped):
# the segment of a process killed with kill -9 is removed with its lock file; the
# segment of a live process is kept and reported; --dry-run lists and removes nothing;
# --job removes only that job; a segment without its lock file (garbage) is removed
# too, and a dry run over it leaves no lock file behind; a segment with an unsafe mode
# is refused and left as it was (no lock file added); files named for another user, and a lock file owned by
# another user under our name, are never touched. Files are in the user's directory
# /dev/shm/rdlm-<uid> (<job>.seg, <job>.lock); what an earlier version left under its
# names in /dev/shm itself (rdlm-<uid>-<job>, rdlm-<uid>-<job>.lock) is removed too,
# and reported as such.
# usage: rdlm_info_cleanup.sh RDLM_INFO SEGMENT_HOLDER
set -u
info=$1 holder=$2
if [ "${CLEANUP_TEST_IN_NS:-}" != 1 ]; then
  [ "$(id -u)" = 0 ] || { echo "SKIP: needs root for a private /dev/shm"; exit 77; }
  CLEANUP_TEST_IN_NS=1 exec unshare --mount --propagation private "$0" "$@"
fi
mount -t tmpfs -o size=16m,mode=1777 rdlmtest-shm /dev/shm || exit 1
failed=0
fail() { echo "FAIL: $*" >&2; failed=1; }
uid=$(id -u)
shm=/dev/shm/rdlm-$uid # the user's directory
old=/dev/shm/rdlm-$uid- # an earlier version's names
pids=()
trap 'kill -9 "${pids[@]}" 2>/dev/null' EXIT

# start JOB: a holder of job JOB's segment, running once it said "ready".
start() {
  local fifo
  fifo=$(mktemp -u)
  mkfifo "$fifo"
  RDLM_JOB=$1 RDLM_CAPACITY=16 RDLM_MAX_PROCS=4 "$holder" >"$fifo" &
  pids+=($!)
  read -r -t 10 line <"$fifo" || true
  rm -f "$fifo"
  [ "${line:-}" = ready ] || fail "holder of $1 did not start"
}
present() { [ -e "$shm/$1.seg" ] && [ -e "$shm/$1.lock" ]; }

# All started before any is killed: every attach sweeps the user's dead jobs.
start live
start dead
start other
kill -9 "${pids[1]}" "${pids[2]}"
wait "${pids[1]}" "${pids[2]}" 2>/dev/null
present dead || fail "the killed holder left no segment and lock file"

out=$("$info" --cleanup --job dead --dry-run) || fail "--dry-run: exit $?"
grep -qx 'would remove dead: no live process' <<<"$out" || fail "--dry-run printed: $out"
present dead || fail "--dry-run removed dead's files"

out=$("$info" --cleanup --job live) || fail "--job live: exit $?"
grep -qx 'kept live: 1 live process attached' <<<"$out" || fail "--job live printed: $out"
present live || fail "the live process's segment was removed"

out=$("$info" --cleanup --job dead) || fail "--job dead: exit $?"
grep -qx 'removed dead: no live process' <<<"$out" || fail "--job dead printed: $out"
grep -qx 'cleanup: 1 removed, 0 kept' <<<"$out" || fail "--job dead summary: $out"
! present dead && [ ! -e "$shm/dead.seg" ] && [ ! -e "$shm/dead.lock" ] ||
  fail "dead's files are still there"
present other || fail "--job dead removed another job's files"

# Another user's files (its directory, and an earlier version's names), and our name
# with another owner's lock file.
other_uid=$((uid + 4242))
mkdir -m 0700 "/dev/shm/rdlm-$other_uid"
touch "/dev/shm/rdlm-$other_uid/theirs.seg" "/dev/shm/rdlm-$other_uid/theirs.lock" \
  "/dev/shm/rdlm-$other_uid-theirs" "/dev/shm/rdlm-$other_uid-theirs.lock" "$shm/stolen.lock"
chown -R "$other_uid" "/dev/shm/rdlm-$other_uid"*
chown "$other_uid" "$shm/stolen.lock"
(umask 077 && echo garbage >"$shm/lone.seg")
(umask 022 && echo garbage >"$shm/open.seg") # group/other readable: refused, not ours to judge
(umask 077 && echo garbage >"${old}old" && echo >"${old}old.lock") # an earlier version's
out=$("$info" --cleanup --job open 2>/dev/null) || fail "--job open: exit $?"
grep -qx 'kept open: refused (the error line says why)' <<<"$out" || fail "--job open printed: $out"
[ -e "$shm/open.seg" ] && [ ! -e "$shm/open.lock" ] || fail "--job open changed open's files"
rm -f "$shm/open.seg"
out=$("$info" --cleanup --job lone -n 2>/dev/null) || fail "-n --job lone: exit $?"
grep -qx 'would remove lone: no live process' <<<"$out" || fail "-n --job lone printed: $out"
[ -e "$shm/lone.seg" ] && [ ! -e "$shm/lone.lock" ] || fail "-n changed lone's files"
out=$("$info" --cleanup 2>/dev/null) || fail "--cleanup: exit $?"
grep -qx 'removed other: no live process' <<<"$out" || fail "--cleanup printed: $out"
grep -qx 'removed lone: no live process' <<<"$out" || fail "--cleanup printed: $out"
[ ! -e "$shm/lone.seg" ] && [ ! -e "$shm/lone.lock" ] || fail "lone's files are still there"
grep -qx "removed old (an earlier version's name in /dev/shm): no live process" <<<"$out" ||
  fail "--cleanup did not remove an earlier version's files: $out"
[ ! -e "${old}old" ] && [ ! -e "${old}old.lock" ] || fail "old's files are still there"
grep -qx 'kept stolen: refused (the error line says why)' <<<"$out" ||
  fail "--cleanup did not refuse a lock file of another owner: $out"
grep -qx 'cleanup: 3 removed, 2 kept' <<<"$out" || fail "--cleanup summary: $out"
for f in "/dev/shm/rdlm-$other_uid/theirs.seg" "/dev/shm/rdlm-$other_uid/theirs.lock" \
  "/dev/shm/rdlm-$other_uid-theirs" "/dev/shm/rdlm-$other_uid-theirs.lock" \
  "$shm/stolen.lock"; do
  [ -e "$f" ] || fail "$f (another user's) was removed"
done
present live || fail "--cleanup removed the live process's segment"
exit $failed
