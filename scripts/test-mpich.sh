#!/usr/bin/env bash
# The MPICH leg of CI (called by scripts/test.sh): builds librdlm_mpi.so, the shim,
# the Fortran module and the programs of the mpi and pmpi labels against Debian's MPICH
# (libmpich-dev, ch4:ucx; installed beside Open MPI, which stays the default mpicc and
# mpirun) in build-mpich, and runs those two labels. Only what the two labels run is
# built (the core library, not its other tests, tools or benchmarks), with warnings as
# errors; the transports and services those tests do not use are configured out.
# usage: scripts/test-mpich.sh [build dir, default build-mpich]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-mpich}
jobs=$(nproc)
labels='mpi|pmpi'
# The executables and libraries the mpi and pmpi tests run (tests/mpi, tests/fortran,
# examples, examples/barrier_replace). A test whose program is missing here fails the
# check below before anything runs: add its target.
targets=(mpi_bootstrap_ucx mpi_uninit mpi_bad_config mpi_lock fortran_mpi_objects
         fortran_mpi_f08 rdlm_pmpi barrier_c barrier_c_linked barrier_f barrier_f08)

start=$(date +%s)
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRDLM_WERROR=ON \
  -DMPI_C_COMPILER=mpicc.mpich -DMPI_Fortran_COMPILER=mpif90.mpich \
  -DMPIEXEC_EXECUTABLE=mpiexec.mpich \
  -DRDLM_WITH_VERBS=OFF -DRDLM_WITH_AUTHORITY=OFF -DRDLM_BUILD_BENCH=OFF \
  -DRDLM_WITH_PYTHON=OFF > "$dir.configure.log" 2>&1 ||
  { cat "$dir.configure.log"; exit 1; }
grep -q 'MPI: mpich' "$dir.configure.log" ||
  { echo "test-mpich: $dir was not configured against MPICH" >&2; exit 1; }
cmake --build "$dir" -j "$jobs" --target "${targets[@]}"
# The leg tests MPICH only if the MPI pieces link it (and not Open MPI's libmpi).
for lib in "$dir/mpi/librdlm_mpi.so" "$dir/mpi/librdlm_pmpi.so"; do
  needed=$(readelf -d "$lib")
  grep -q 'NEEDED.*libmpich' <<< "$needed" ||
    { echo "test-mpich: $lib does not link libmpich" >&2; exit 1; }
done
# Every file of the build tree that a test's command names (programs, also those run
# through mpiexec, and the preloaded shim) must have been built.
abs=$(cd "$dir" && pwd)
missing=$(ctest --test-dir "$dir" --show-only=json-v1 -L "$labels" |
          grep -o '"[^"]*"' | tr -d '"' | sort -u |
          while read -r f; do
            case $f in "$abs"/*) [ -e "$f" ] || echo "$f" ;; esac
          done)
if [ -n "$missing" ]; then
  echo "test-mpich: tests run files that are not built (add their targets):" >&2
  echo "$missing" >&2
  exit 1
fi
ctest --test-dir "$dir" --output-on-failure --timeout 300 -L "$labels"
echo "test-mpich: labels $labels passed against MPICH in $(($(date +%s) - start)) s"
