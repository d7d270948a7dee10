#!/usr/bin/env bash
# The README's test command: install dependencies, build with warnings as errors, run
# the whole ctest suite (its MPI tests against Open MPI), then the mpi and pmpi labels
# against MPICH (scripts/test-mpich.sh, which builds only their programs), then the
# sanitizer builds (ASan+UBSan over unit, api, stress, transport, lease (codecs, state
# machine, rdlmd, client), the verbs tests on soft-RoCE, and the cross-node global tests
# -- the latter under mpirun without leak checking, since Open MPI keeps allocations
# past MPI_Finalize; TSan over the threaded unit tests, the lease authority and the
# verbs conformance suite with its progress thread on soft-RoCE). The spin models and
# the simulation run beside the main suite, and the TSan build beside the ASan suites,
# in the idle scheduling class (CI's 30 minutes).
# usage: scripts/test.sh [--no-sanitizers]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# MUNGE credentials for the lease authority's authenticated mode (tests skip without it)
bash scripts/munged.sh start || echo "test.sh: munged not started: MUNGE tests will skip"

jobs=$(nproc)
build() { # dir, build type, extra cmake arguments
  cmake -S . -B "$1" -DCMAKE_BUILD_TYPE="$2" -DRDLM_WERROR=ON "${@:3}" > "$1.configure.log" 2>&1 ||
    { cat "$1.configure.log"; exit 1; }
  cmake --build "$1" -j "$jobs"
}

# background JOB LOG COMMAND...: runs COMMAND in the idle scheduling class (it gets
# only the CPU time nothing else wants, and gives a core up at once to any other
# process that wakes) in its own session, output to LOG; `finish JOB` waits for it and
# fails with its log if it failed. A failing step kills what still runs in background.
declare -A bg_pid bg_log
background() {
  bg_log[$1]=$2
  setsid chrt --idle 0 "${@:3}" > "$2" 2>&1 &
  bg_pid[$1]=$!
}
finish() {
  local rc=0
  wait "${bg_pid[$1]}" || rc=$?
  unset "bg_pid[$1]"
  if [ "$rc" != 0 ]; then
    cat "${bg_log[$1]}"
    echo "test.sh: $1 failed (exit $rc)" >&2
    exit 1
  fi
  tail -n 4 "${bg_log[$1]}"
}
kill_background() {
  local pid
  for pid in "${bg_pid[@]}"; do kill -- "-$pid" 2>/dev/null || true; done
}
trap kill_background EXIT

build build RelWithDebInfo
# The spin models and the simulation are single-threaded searches that neither time
# nor share anything: they run two at a time (one per core), in the background while
# the main suite runs one test at a time (as its timing-sensitive tests need), on the
# CPU time it leaves (about two thirds of the two cores: most of its tests wait on
# timers and peers). So slowed, a search takes up to 4 times as long as alone: the
# searches' time bound is raised for it.
background models build/models.log env SPIN_TIMEOUT=800 \
  ctest --test-dir build --output-on-failure --timeout 900 -L 'model|sim' -j "$jobs"
# The verbs conformance suites on soft-RoCE run once, in the ASan build below (a VM
# boot each); without the sanitizer builds, here.
skip_rxe=()
[ "${1:-}" = "--no-sanitizers" ] || skip_rxe=(-E '^rxe\.verbs')
ctest --test-dir build --output-on-failure --timeout 600 -LE 'model|sim' "${skip_rxe[@]}"
# The same MPI integration built and run against MPICH (Open MPI above).
bash scripts/test-mpich.sh build-mpich
finish models

if [ "${1:-}" != "--no-sanitizers" ]; then
  build build-asan Asan
  # The TSan build, in the background while the ASan suites below wait on timers.
  export -f build
  export jobs
  background tsan-build build-tsan.log bash -c 'build "$@"' build build-tsan Tsan \
    -DRDLM_WITH_UCX=OFF
  # Not again under ASan: the planted-bug tests (*_is_caught: they prove a check,
  # which the run above did), the lock delay's take-over (global.lock_recovery
  # takes the same path without the 4 s wait), the race searches that repeat paths
  # their siblings run (the 8,000-iteration give-up run on one lock, the tries) and
  # the take-over variants whose path lock_recovery and the _atomic ones run, the
  # dead tail of link_death (its release's wait; _behind runs the mend), the home's
  # survival of a dead client (svc.home_stop: UCX's own reply path), the paused
  # holder's take-over (its path is lock_recovery's once the lease ended) and the
  # undone take-over (its undo is a release's path; svc.undo runs it under ASan), and
  # the 8-process runs whose 2- and 4-process siblings run the same code (the counter's
  # p8.vn2 runs, as do those without a smaller sibling) (CI time: about 180 s).
  asan_skip='_is_caught|lock_recovery_delay|give_up_atomic_one_lock|stress_tries_atomic|lock_recovery_shm|lock_recovery_abandoned|lock_recovery_cohort_handoff\.|lock_recovery_cohort_died\.|link_death_tail|svc\.home_stop|lock_recovery_paused|undo_keeps_owner_dead|ucx_tcp(_thread)?\.p8|global\.(n?barrier|rwstress|sem|stress)\.p8|counter\.p8\.vn[14]'
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure --timeout 900 \
    -L 'unit|api|stress|transport|lease' -E "$asan_skip"
  ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure --timeout 900 -L global -E "$asan_skip"
  # The verbs backend on soft-RoCE (a qemu VM, tests/rxe), leak-checked.
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure --timeout 900 -R '^rxe\.verbs'
  # Without UCX: libucm interposes madvise() and takes a pthread rwlock in it, which
  # crashes ThreadSanitizer when glibc calls madvise for an exiting thread's stack.
  # The TSan suite covers the on-node code (label unit), which needs no transport, and
  # the lease authority's threads (label lease: renewal threads, rdlmd, in-job replicas).
  finish tsan-build
  TSAN_OPTIONS=halt_on_error=1 ctest --test-dir build-tsan --output-on-failure -L 'unit|lease'
  # The verbs backend's progress thread beside its callers, on soft-RoCE (a VM boot).
  TSAN_OPTIONS=halt_on_error=1 ctest --test-dir build-tsan --output-on-failure -R '^rxe\.verbs'
fi
echo "scripts/test.sh: all suites passed"
