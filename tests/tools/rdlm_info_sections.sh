#!/usr/bin/env bash
# rdlm_info's selectors and parsable output: each selector prints its section only;
# no selector prints every section; --parsable prints "section:key:value" lines only
# (transport:NAME:FIELD:VALUE for -d),
# one value/default/allowed/source/help line per entry of the configuration table;
# RDLM_JOB shows the effective job (RDLM_JOB, else the launcher's job id, else
# "default"); a bad configuration exits 2.
# usage: rdlm_info_sections.sh RDLM_INFO CONFIG_H
set -u
info=$1 config_h=$2
failed=0
fail() { echo "FAIL: $*" >&2; failed=1; }
# The launchers' variables would change the job; each case sets what it tests.
clean=(env -u RDLM_JOB -u SLURM_JOB_ID -u OMPI_MCA_ess_base_jobid -u PMIX_NAMESPACE)

has() { grep -q "$2" <<<"$1" || fail "$3: no '$2' in its output"; }
lacks() { ! grep -q "$2" <<<"$1" || fail "$3: '$2' should not be printed"; }

out=$("${clean[@]}" "$info" -b) || fail "-b: exit $?"
has "$out" '^rdlm [0-9]' -b
has "$out" 'RDLM_WITH_AUTHORITY=' -b
has "$out" 'RDLM_HAVE_MUNGE=' -b
has "$out" 'RDLM_HAVE_HWLOC=' -b
lacks "$out" '^configuration:' -b
out=$("${clean[@]}" "$info" -t) || fail "-t: exit $?"
has "$out" '^topology:' -t
lacks "$out" '^build options:' -t
out=$("${clean[@]}" "$info" -c) || fail "-c: exit $?"
has "$out" '^configuration:' -c
has "$out" '^segment:' -c
lacks "$out" '^topology:' -c
out=$("${clean[@]}" "$info") || fail "no selector: exit $?"
for s in '^build options:' '^transports:' '^topology:' '^configuration:' '^segment:'; do
  has "$out" "$s" "no selector"
done

# Every variable of the table, five fields each; nothing but section:key:value lines.
vars=$(grep -o '"RDLM_[A-Z_]*", [A-Z_]*, ' "$config_h" | grep -o 'RDLM_[A-Z_]*' | sort)
[ -n "$vars" ] || fail "no variables found in $config_h"
out=$("${clean[@]}" "$info" -c -p) || fail "-c -p: exit $?"
[ "$(grep -o '^config:RDLM_[A-Z_]*:value:' <<<"$out" | cut -d: -f2 | sort)" = "$vars" ] ||
  fail "-c -p: the value lines are not one per variable of config.h"
for field in default allowed source help; do
  [ "$(grep -c "^config:RDLM_[A-Z_]*:$field:" <<<"$out")" = "$(wc -l <<<"$vars")" ] ||
    fail "-c -p: not one $field line per variable"
done
out=$("${clean[@]}" "$info" -p) || fail "-p: exit $?"
bad=$(grep -Ev '^(build|transport|topology|config):[A-Za-z_]+:' <<<"$out")
[ -z "$bad" ] || fail "-p: lines not section:key:value: $(head -3 <<<"$bad")"
has "$out" '^build:version:[0-9]' -p
has "$out" '^build:RDLM_WITH_AUTHORITY:' -p
has "$out" '^topology:cores:[0-9]' -p
has "$out" '^transport:shm:usable:yes$' -p
out=$("${clean[@]}" RDLM_TRANSPORT=shm "$info" -d -p) || fail "-d -p: exit $?"
bad=$(grep -Ev '^transport:[a-z]+:[a-z_]+:' <<<"$out")
[ -z "$bad" ] || fail "-d -p: lines not transport:NAME:FIELD:VALUE: $(head -3 <<<"$bad")"
has "$out" '^transport:shm:chosen:yes$' "RDLM_TRANSPORT=shm -d -p"
has "$out" '^transport:shm:operations:amo64' "RDLM_TRANSPORT=shm -d -p"
lacks "$out" '^transport:ucx:chosen:yes$' "RDLM_TRANSPORT=shm -d -p"
out=$("${clean[@]}" RDLM_SPIN=7 "$info" -c -p)
has "$out" '^config:RDLM_SPIN:value:7$' "RDLM_SPIN=7"
has "$out" '^config:RDLM_SPIN:source:env$' "RDLM_SPIN=7"
has "$out" '^config:RDLM_SPIN:default:4000$' "RDLM_SPIN=7"
has "$out" '^config:RDLM_YIELD:source:default$' "RDLM_SPIN=7"

# The effective job.
out=$("${clean[@]}" RDLM_JOB=job-a SLURM_JOB_ID=4242 "$info" -c -p)
has "$out" '^config:RDLM_JOB:value:job-a$' "RDLM_JOB=job-a"
has "$out" '^config:RDLM_JOB:source:env$' "RDLM_JOB=job-a"
out=$("${clean[@]}" SLURM_JOB_ID=4242 "$info" -c -p)
has "$out" '^config:RDLM_JOB:value:4242$' "SLURM_JOB_ID=4242"
has "$out" '^config:RDLM_JOB:source:SLURM_JOB_ID$' "SLURM_JOB_ID=4242"
out=$("${clean[@]}" SLURM_JOB_ID=4242 "$info" -c)
has "$out" 'RDLM_JOB *= 4242 *(SLURM_JOB_ID' "SLURM_JOB_ID=4242, -c"
out=$("${clean[@]}" "$info" -c -p)
has "$out" '^config:RDLM_JOB:value:default$' "no job variable"
has "$out" '^config:RDLM_JOB:source:default$' "no job variable"

# Refusals: one line, exit 2.
err=$("${clean[@]}" RDLM_SPIN=x "$info" -c -p 2>&1 >/dev/null); rc=$?
[ "$rc" = 2 ] || fail "RDLM_SPIN=x: exit $rc, expected 2"
has "$err" 'RDLM_SPIN' "RDLM_SPIN=x (stderr)"
err=$("${clean[@]}" "$info" -c extra 2>&1 >/dev/null); rc=$?
[ "$rc" = 2 ] && [ "$(wc -l <<<"$err")" = 1 ] || fail "-c extra: exit $rc, '$err'"
[ "$failed" = 0 ] && echo "rdlm_info: selectors, parsable output and the effective job"
exit "$failed"
