#!/usr/bin/env bash
# Run rdlm's on-node benchmarks (rdlm-bench, default set, about 35 s on 2 cores with
# the lock servers) and keep the results.
#
#   bench/run_local.sh [RESULTS_DIR] [rdlm-bench flags...]
#
# RESULTS_DIR defaults to ./bench-results. rdlm-bench is taken from $BENCH_BIN, else
# $BUILD_DIR/bench/rdlm-bench, else build/bench/rdlm-bench in this repository, else
# PATH. (Not RDLM_* names: librdlm warns about RDLM_* variables it does not know.)
# Prints one progress line per benchmark, then the header and the comparison table.
# Writes into RESULTS_DIR:
#   local.txt       the full output: header, per-benchmark sections, comparison table
#   local.csv       every measurement and comparison (columns: bench/README.md)
#   local.json      the same, with the header
#   contended.png   lock-contended throughput vs processes: rdlm, pthread_mutex, TAS
#                   (gnuplot; installed with apt-get as root if missing and available,
#                   unless BENCH_NO_INSTALL=1; otherwise the plot is skipped)
#   dist-sweep.png  with -b dist-sweep: cross-node lock throughput vs processes, one
#                   line per (rdlm, MPI_Win_lock, MPI CAS spin) x virtual nodes, log y
#                   (data: dist-sweep.dat)
# The `services` benchmark's baselines (Redis, etcd, ZooKeeper locks on loopback, and
# rdlm's lease authority, 3 rdlmd replicas from the same build tree) and
# `lease-renew` run under bench/services/services.sh, which installs (as root, unless
# BENCH_NO_INSTALL=1), starts and stops the servers around rdlm-bench (a few seconds);
# BENCH_NO_SERVICES=1, or -b without `services` or `lease-renew`, runs without them
# (the benchmarks then say SKIP).
# Exit status: rdlm-bench's (0 ran, 1 a measurement failed, 2 bad flags).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")

out=./bench-results
if [[ $# -gt 0 && $1 != -* ]]; then
    out=$1
    shift
fi

find_bench() {
    local c
    for c in "${BENCH_BIN:-}" "${BUILD_DIR:+$BUILD_DIR/bench/rdlm-bench}" \
             "$repo/build/bench/rdlm-bench"; do
        if [[ -n $c && -x $c ]]; then
            echo "$c"
            return 0
        fi
    done
    command -v rdlm-bench || return 1
}

if ! bench=$(find_bench); then
    echo "run_local.sh: rdlm-bench not found; build it first, e.g." >&2
    echo "  cmake -S $repo -B $repo/build && cmake --build $repo/build -j2" >&2
    echo "or point BENCH_BIN at the binary / BUILD_DIR at the build directory" >&2
    exit 2
fi

mkdir -p "$out"
txt=$out/local.txt
csv=$out/local.csv
json=$out/local.json
png=$out/contended.png

# Start the lock servers around the run unless they are not wanted.
wants_services() {
    local a named=0
    [[ ${BENCH_NO_SERVICES:-0} == 1 ]] && return 1
    for a in "$@"; do
        [[ $a == *services* || $a == *lease-renew* ]] && return 0
        [[ $a == -b || $a == --bench* || $a == -b?* ]] && named=1
    done
    return "$named"
}
wrap=()
if wants_services "$@"; then
    wrap=("$here/services/services.sh" run --)
fi

echo "run_local.sh: $bench -> $out"
status=0
"${wrap[@]}" "$bench" --csv "$csv" --json "$json" "$@" >"$txt" || status=$?

# The header and the comparison table (the sections are in local.txt).
sed -n '1,/^# command:/p' "$txt"
sed -n '/^# Comparison/,$p' "$txt"

# ---- plot ----------------------------------------------------------------------------
have_gnuplot() { command -v gnuplot >/dev/null 2>&1; }

# (Outputs are captured before matching: with pipefail, `cmd | grep -q` fails when
# grep exits first.)
if ! have_gnuplot && [[ ${BENCH_NO_INSTALL:-0} != 1 && $(id -u) == 0 ]] &&
    command -v apt-get >/dev/null 2>&1; then
    policy=$(apt-cache policy gnuplot-nox 2>/dev/null || true)
    if [[ $policy == *"Candidate: "[0-9]* ]]; then
        echo "run_local.sh: installing gnuplot-nox for the plot"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gnuplot-nox >/dev/null 2>&1 ||
            echo "run_local.sh: apt-get install gnuplot-nox failed"
    fi
fi

# gnuplot's PNG terminal: pngcairo if it has it.
png_term() {
    local terminals
    terminals=$(gnuplot -e 'set terminal' 2>&1 || true)
    if [[ $terminals == *pngcairo* ]]; then
        echo pngcairo
    else
        echo png
    fi
}

# The process axis (log 2) of a plot from column 1 of the data lines of file $1:
# gnuplot's "set xrange" and "set xtics" lines.
procs_axis() {
    awk '!/^#/ && NF {print $1}' "$1" | sort -n -u |
        awk 'NR == 1 {lo = $1} {hi = $1; t = t (NR > 1 ? "," : "") $1}
             END {printf "set logscale x 2\nset xrange [%g:%g]\nset xtics (%s)\n",
                         lo / 1.3, hi * 1.3, t}'
}

data=$out/contended.dat
if [[ -s $csv ]]; then
    # procs rdlm pthread_mutex tas (medians, Mops/s), one row per process count.
    awk -F, '$1 == "measure" && $2 == "lock-contended" && $3 == "throughput" {
                 v[$4 "," $5] = $7; p[$4] = 1 }
             END { for (n in p) printf "%s %s %s %s\n", n,
                       (n ",rdlm" in v) ? v[n ",rdlm"] : "NaN",
                       (n ",pthread_mutex" in v) ? v[n ",pthread_mutex"] : "NaN",
                       (n ",tas" in v) ? v[n ",tas"] : "NaN" }' "$csv" |
        sort -n >"$data"
fi

if [[ ! -s ${data:-/nonexistent} ]]; then
    echo "run_local.sh: no lock-contended results; plot skipped"
elif ! have_gnuplot; then
    echo "run_local.sh: gnuplot not installed (apt-get install gnuplot-nox); plot skipped"
else
    # Head room above the highest point for the key.
    ymax=$(awk '{for (i = 2; i <= 4; i++) if ($i != "NaN" && $i + 0 > m) m = $i + 0}
                END {print (m > 0 ? m * 1.45 : 1)}' "$data")
    if gnuplot <<GP; then
set terminal $(png_term) size 900,540 noenhanced
set output '$png'
set title 'rdlm-bench lock-contended: throughput vs processes ($(nproc) CPUs, medians)'
set xlabel 'processes'
set ylabel 'Mops/s'
$(procs_axis "$data")
set yrange [0:$ymax]
set grid
set key inside top right opaque box
plot '$data' using 1:2 with linespoints lw 2 pt 7 title 'rdlm', \
     '' using 1:3 with linespoints lw 2 pt 5 title 'pthread_mutex (pshared)', \
     '' using 1:4 with linespoints lw 2 pt 9 title 'TAS spinlock'
GP
        echo "run_local.sh: plot: $png"
    else
        echo "run_local.sh: gnuplot failed; plot skipped"
    fi
fi

# dist-sweep: blocks "# IMPL, N node(s)" of "procs kops/s" lines (gnuplot's `index`),
# one per implementation and node count.
sweep_data=$out/dist-sweep.dat
sweep_png=$out/dist-sweep.png
if [[ -s $csv ]]; then
    awk -F, '$1 == "measure" && $2 == "dist-sweep" && $3 ~ /^throughput [0-9]+ node/ {
                 split($3, w, " "); printf "%s\t%s\t%s\t%s\n", $5, w[2], $4, $7 }' "$csv" |
        LC_ALL=C sort -t$'\t' -k1,1 -k2,2n -k3,3n |
        awk -F'\t' '($1 "," $2) != last {
                        if (last != "") printf "\n\n"
                        printf "# %s, %s node%s\n", $1, $2, ($2 > 1 ? "s" : "")
                        last = $1 "," $2 }
                    { print $3, $4 }' >"$sweep_data"
    [[ -s $sweep_data ]] || rm -f "$sweep_data"
fi

# The plot clauses of the sweep: colour by implementation, dashes and points by nodes.
sweep_clauses() {
    local i=0 title impl nodes color style clauses=""
    while IFS= read -r title; do
        title=${title#\# }
        impl=${title%, *}
        nodes=${title##*, }
        nodes=${nodes%% *}
        case $impl in
        rdlm) color='#d62728' ;;
        MPI_Win_lock) color='#1f77b4' ;;
        *) color='#2ca02c' ;;
        esac
        case $nodes in
        1) style='dt 1 pt 7' ;;
        2) style='dt 2 pt 5' ;;
        *) style='dt 4 pt 9' ;;
        esac
        clauses+="${clauses:+, }'$sweep_data' index $i using 1:2 with linespoints"
        clauses+=" lw 2 lc rgb '$color' $style title '$title'"
        i=$((i + 1))
    done < <(grep '^# ' "$sweep_data")
    echo "$clauses"
}

if [[ -s $sweep_data ]]; then
    if ! have_gnuplot; then
        echo "run_local.sh: gnuplot not installed; dist-sweep plot skipped"
    elif gnuplot <<GP; then
set terminal $(png_term) size 1000,560 noenhanced
set output '$sweep_png'
set title 'rdlm-bench dist-sweep: cross-node lock throughput vs processes (TCP, $(nproc) CPUs, medians)'
set xlabel 'processes'
set ylabel 'kops/s (log scale)'
$(procs_axis "$sweep_data")
set logscale y 10
set grid
set key outside right top
plot $(sweep_clauses)
GP
        echo "run_local.sh: plot: $sweep_png"
    else
        echo "run_local.sh: gnuplot failed; dist-sweep plot skipped"
    fi
fi
echo "run_local.sh: results in $out (local.txt, local.csv, local.json)"
exit "$status"
