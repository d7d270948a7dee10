#!/usr/bin/env bash
# One tool's command-line conventions (tools/cli/cli.h):
#   --version and -V print exactly "NAME (rdlm) VERSION" and exit 0;
#   --help and -h print the usage on stdout and exit 0;
#   an unknown short or long flag, a flag missing its value and (if given) a bad value
#   print exactly one line on stderr, nothing on stdout, and exit 2.
# usage: cli_conventions.sh TOOL NAME VERSION VALUE_FLAG [BAD VALUE ARGS...]
#   VALUE_FLAG: a flag that takes a value ("-" if none); the rest: one bad value.
# QUICK=1 (for tools that start slowly, e.g. as MPI singletons, 0.4 s a run here): only
# --version, -h, -Q and the bad value; the other spellings go through the same
# tools/cli code, which the quick tools' tests cover.
set -u
tool=$1 name=$2 version=$3 value_flag=$4
shift 4
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
failed=0
fail() { echo "FAIL: $name $*" >&2; failed=1; }

run() { "$tool" "$@" >"$out" 2>"$err"; }

quick=${QUICK:-0}
versions=(--version -V) helps=(--help -h)
[ "$quick" = 1 ] && versions=(--version) helps=(-h)
for flag in "${versions[@]}"; do
  run "$flag"; rc=$?
  [ "$rc" = 0 ] || fail "$flag: exit $rc, expected 0"
  [ "$(cat "$out")" = "$name (rdlm) $version" ] ||
    fail "$flag: printed '$(head -c 200 "$out")', expected '$name (rdlm) $version'"
done
for flag in "${helps[@]}"; do
  run "$flag"; rc=$?
  [ "$rc" = 0 ] || fail "$flag: exit $rc, expected 0"
  grep -qi usage "$out" || fail "$flag: no usage on stdout"
done

# One line on stderr naming the problem and pointing at --help, exit 2.
bad() {
  run "$@"; rc=$?
  [ "$rc" = 2 ] || fail "$*: exit $rc, expected 2"
  [ "$(wc -l < "$err")" = 1 ] || fail "$*: $(wc -l < "$err") lines on stderr, expected 1"
  grep -q "^$name: .*; try '$name --help'\$" "$err" || fail "$*: stderr '$(cat "$err")'"
  [ ! -s "$out" ] || fail "$*: wrote to stdout"
}
bad -Q
if [ "$quick" != 1 ]; then
  bad --no-such-flag
  bad --version=1
  [ "$value_flag" = - ] || bad "$value_flag"
fi
[ $# = 0 ] || bad "$@"
[ "$failed" = 0 ] && echo "$name: --version, --help and bad flags as the conventions say"
exit "$failed"
