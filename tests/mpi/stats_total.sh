#!/usr/bin/env bash
# RDLM_STATS=1 in a distributed context: destroy prints one "rdlm[pid] stats (job J,
# rank R):" line per process (each rank once, one job) and, on rank 0 only, one
# "rdlm stats total (job J, N ranks):" line whose every counter is the sum of the
# per-process lines' (the same names, in the same order).
# usage: stats_total.sh NPROCS MPIEXEC [MPIEXEC FLAGS...] PROGRAM [ARGS...]
# (the environment carries RDLM_STATS=1 and the rest to the ranks on this node)
set -u
nprocs=$1
shift
out=$(timeout 100 "$@" 2>&1) || { echo "FAIL: the job failed: $out"; exit 1; }
heads=$(grep -oE '^rdlm\[[0-9]+\] stats \(job [^,)]+, rank [0-9]+\): ' <<<"$out")
per=$(grep -E '^rdlm\[[0-9]+\] stats \(' <<<"$out" | sed 's/^rdlm\[[0-9]*\] stats ([^)]*): //')
job=$(sed -n '1s/.*(job \([^,]*\),.*/\1/p' <<<"$heads")
total=$(grep -E "^rdlm stats total \\(job $job, $nprocs ranks\\): " <<<"$out" |
  sed 's/^rdlm stats total ([^)]*): //')
[ "$(wc -l <<<"$per")" = "$nprocs" ] || { echo "FAIL: not $nprocs per-process lines: $out"; exit 1; }
[ "$(sed 's/.*(job \([^,]*\), rank \([0-9]*\)).*/\1 \2/' <<<"$heads" | sort -k2n | tr '\n' ' ')" = \
  "$(for ((r = 0; r < nprocs; r++)); do printf '%s %d ' "$job" "$r"; done)" ] ||
  { echo "FAIL: the per-process lines do not name one job and each rank once: $out"; exit 1; }
[ "$(grep -c 'stats total' <<<"$out")" = 1 ] && [ -n "$total" ] ||
  { echo "FAIL: not one totals line for $nprocs ranks: $out"; exit 1; }
# "name value" pairs ("(posted N)" is the pair posted N) summed over the per-process
# lines, then printed in the totals line's layout, must be the totals line.
summed=$(tr -d '()' <<<"$per" | awk '
  { for (i = 1; i < NF; i += 2) { if (NR == 1) order[++n] = $i; sum[$i] += $(i + 1) } }
  END { for (k = 1; k <= n; k++) printf "%s%s %d", (k > 1 ? " " : ""), order[k], sum[order[k]]; print "" }')
[ "$summed" = "$(tr -d '()' <<<"$total")" ] ||
  { echo "FAIL: totals differ from the sum of the per-process lines:"; echo " sum:   $summed";
    echo " total: $total"; exit 1; }
grep -q ' acquires [1-9]' <<<" $total" || { echo "FAIL: no acquires counted: $total"; exit 1; }
echo "stats total: ok ($total)"
