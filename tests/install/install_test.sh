#!/usr/bin/env bash
# Install the built tree into a temporary prefix, move the prefix elsewhere (an
# installed rdlm must not depend on where it was installed or built), then check it as
# a user and a packager would:
#   - every installed program and library finds rdlm's libraries through a RUNPATH
#     relative to $ORIGIN, with no build-tree path, and the tools run with no
#     LD_LIBRARY_PATH;
#   - librdlm.so links no MPI and exports only the public API and its RDLM_SHARED
#     internals;
#   - one copy of the library in a process: no installed program or library that
#     loads librdlm.so defines an rdlm_ symbol librdlm.so defines (an object copy of
#     a layer linked beside it);
#   - an external program builds and runs through find_package(rdlm CONFIG) and
#     through pkg-config;
#   - with MPI: an external MPI program builds through find_package(rdlm COMPONENTS
#     mpi) and through pkg-config rdlm-mpi, runs under mpirun, and runs again with the
#     installed librdlm_pmpi.so preloaded, whose MPI_Barrier must be rdlm's;
#   - with MPI: the installed benchmarks run from the moved prefix as a user runs
#     osu_* (mpirun -np 2 rdlm-mpi-lock-bench -i 10 -x 2), and the installed
#     rdlm-bench finds its MPI programs beside itself, with no build-tree path in it;
#   - with the Fortran module (an mpif90 given): a Fortran program `use rdlm` builds
#     through find_package(rdlm COMPONENTS fortran) and through pkg-config
#     rdlm-fortran and runs under mpirun.
# usage: install_test.sh <build-dir> <source-dir> [<mpiexec> <mpicc> [<mpif90>]]
set -euo pipefail
build=$1
src=$2
mpiexec=${3:-}
mpicc=${4:-}
mpif90=${5:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# consumers NAME LABEL COMPILER EXT: under "${run[@]}" (mpirun), the CMake-built
# NAME_consumer and one COMPILER builds from consumer/NAME_consumer.EXT with pkg-config
# rdlm-NAME each print "NAME consumer: ok" (LABEL names them in the failures).
consumers() {
  local name=$1 label=$2 compiler=$3 ext=$4
  timeout 60 "${run[@]}" "$tmp/cmake-build/${name}_consumer" | grep -q "$name consumer: ok" ||
    fail "the CMake-built $label consumer did not print ok"
  # shellcheck disable=SC2046 # pkg-config's flags are words
  "$compiler" -o "$tmp/$name-consumer-pc" "$src/tests/install/consumer/${name}_consumer.$ext" \
     $(pkg-config --cflags --libs "rdlm-$name")
  timeout 60 "${run[@]}" -x LD_LIBRARY_PATH="$libdir" "$tmp/$name-consumer-pc" |
    grep -q "$name consumer: ok" || fail "the pkg-config-built $label consumer did not print ok"
}

cmake --install "$build" --prefix "$tmp/staged" > "$tmp/install.log"
mv "$tmp/staged" "$tmp/prefix"
prefix=$tmp/prefix
libdir=$(find "$prefix" -name 'librdlm.so.0' -printf '%h\n' | head -1)
test -n "$libdir" || fail "librdlm.so.0 (soname = major) not installed"
if find "$prefix/include" -name '*.h' | xargs grep -l 'RDLM_BUILDING_LIBRARY' | grep -v export.h; then
  fail "an installed header depends on the library's build macro"
fi

# 1. Relocatable binaries, no MPI in the core library
elves=$(find "$prefix/bin" "$libdir" -maxdepth 1 -type f \( -perm -u+x -o -name '*.so.*' \))
test -n "$elves" || fail "no programs or libraries installed"
for f in $elves; do
  runpath=$(readelf -d "$f" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
  test -n "$runpath" || fail "$f: no RUNPATH"
  for entry in ${runpath//:/ }; do
    case $entry in
    '$ORIGIN'*) ;;
    *) fail "$f: RUNPATH '$runpath' has an entry not relative to \$ORIGIN: $entry" ;;
    esac
  done
  case $runpath in
  *"$(cd "$build" && pwd)"* | *"$(cd "$src" && pwd)"*) fail "$f: RUNPATH names the build tree" ;;
  esac
  if env -u LD_LIBRARY_PATH ldd "$f" | grep 'not found'; then
    fail "$f: a library is not found without LD_LIBRARY_PATH"
  fi
done
if readelf -d "$libdir/librdlm.so.0" | grep NEEDED | grep -i mpi; then
  fail "librdlm.so links MPI (the MPI integration belongs in librdlm_mpi.so)"
fi
# Exactly the public functions leave librdlm.so (RDLM_EXPORT, declared in an installed
# header), plus the RDLM_SHARED internals that librdlm_mpi.so, the shim and the tools
# and benchmarks call (util/include/shared.h).
shared=$(grep -rhE '^RDLM_SHARED ' "$src/util" "$src/core" "$src/transport" |
         sed -E 's/^[^(]*[ *](rdlm_[a-z0-9_]+)\(.*/\1/')
for sym in $(nm -D --defined-only "$libdir/librdlm.so.0" | awk '{print $3}'); do
  grep -rqw -- "$sym" "$prefix/include" || grep -qx -- "$sym" <<< "$shared" ||
    fail "librdlm.so exports $sym, which is neither public nor RDLM_SHARED"
done
# One copy of each layer in a process: a program or library that loads librdlm.so
# must reach the layers through it (their RDLM_SHARED functions), never link an
# OBJECT library of a layer beside it, which would give the process two copies of
# that layer's state (two log thresholds) and bind rdlm_session_* to the copy. Such
# a copy shows as rdlm_ functions and variables defined in both symbol tables
# (.symtab: the hidden and static ones too; cmake --install does not strip).
syms() {
  nm --defined-only "$1" 2>/dev/null | awk '$2 ~ /^[TtDdBbRr]$/ && $3 ~ /^rdlm_/ {print $3}' |
    sort -u
}
syms "$libdir/librdlm.so.0" > "$tmp/librdlm.syms"
test -s "$tmp/librdlm.syms" || fail "librdlm.so.0 has no symbol table to compare with"
for f in $elves; do
  grep -q 'NEEDED.*\[librdlm\.so\.' <<< "$(readelf -d "$f")" || continue
  copies=$(syms "$f" | comm -12 - "$tmp/librdlm.syms")
  test -z "$copies" ||
    fail "$f loads librdlm.so and defines $(wc -w <<< "$copies") of its symbols itself" \
         "(an object copy of a layer linked beside it): $(head -5 <<< "$copies" | xargs)"
done
env -u LD_LIBRARY_PATH "$prefix/bin/rdlm_info" > "$tmp/rdlm_info.out" ||
  fail "the installed rdlm_info does not run: $(cat "$tmp/rdlm_info.out")"

# 2. CMake package
cmake -S "$src/tests/install/consumer" -B "$tmp/cmake-build" \
      -DCMAKE_PREFIX_PATH="$prefix" -DCONSUMER_MPI=$([ -n "$mpiexec" ] && echo ON || echo OFF) \
      -DCONSUMER_FORTRAN=$([ -n "$mpif90" ] && echo ON || echo OFF) \
      > "$tmp/cmake.log"
cmake --build "$tmp/cmake-build" > "$tmp/cmake-build.log"
"$tmp/cmake-build/consumer"

# 3. pkg-config
export PKG_CONFIG_PATH="$libdir/pkgconfig"
pkg-config --exists rdlm
cc -std=c11 -o "$tmp/consumer-pc" "$src/tests/install/consumer/consumer.c" \
   $(pkg-config --cflags --libs rdlm)
LD_LIBRARY_PATH="$libdir" "$tmp/consumer-pc"

if [ -z "$mpiexec" ]; then
  echo "install test: relocated prefix runs; both consumers built and ran (no MPI)"
  exit 0
fi

# 4. MPI: rdlm::mpi, rdlm-mpi.pc, and the shim preloaded from the installed prefix
run=("$mpiexec" -n 2 --oversubscribe --bind-to none)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 RDLM_JOB=t-install-mpi
consumers mpi MPI "$mpicc" c
out=$(timeout 60 "${run[@]}" -x LD_PRELOAD="$libdir/librdlm_pmpi.so" -x RDLM_PMPI_BARRIER=1 \
      -x RDLM_STATS=1 "$tmp/cmake-build/mpi_consumer" 2>&1) ||
  fail "with the installed librdlm_pmpi.so preloaded the job failed: $out"
grep -q "mpi consumer: ok" <<< "$out" || fail "preloaded: no ok line: $out"
# The shim's own context reports its barriers in the statistics at MPI_Finalize.
grep -q " barriers [1-9]" <<< "$out" || fail "preloaded: MPI_Barrier did not run rdlm's: $out"

# 5. The installed benchmarks, from the moved prefix, under the user's own mpirun.
out=$(env -u RDLM_VIRTUAL_NODES -u OMPI_MCA_osc timeout 60 "${run[@]}" \
      "$prefix/bin/rdlm-mpi-lock-bench" -i 10 -x 2 -r 1 2>&1) ||
  fail "the installed rdlm-mpi-lock-bench failed under mpirun: $out"
grep -q "^# rdlm lock benchmark v" <<< "$out" || fail "rdlm-mpi-lock-bench: no header: $out"
grep -qE "^  1 +mpi_cas_spin +[0-9.]+ us" <<< "$out" ||
  fail "rdlm-mpi-lock-bench: no mpi_cas_spin row: $out"
# (its string constants; the debug information of a RelWithDebInfo build names the
# compile directory, which nothing reads at run time)
if readelf -p .rodata "$prefix/bin/rdlm-bench" | grep -F "$(cd "$build" && pwd)"; then
  fail "the installed rdlm-bench names a path in the build tree"
fi
out=$("$prefix/bin/rdlm-bench" -b barrier -i 100 -x 10 -r 1 2>&1) ||
  fail "the installed rdlm-bench -b barrier failed: $out"
if grep -q "not measured\|SKIP" <<< "$out"; then
  fail "the installed rdlm-bench did not find rdlm-mpi-barrier-bench: $out"
fi

if [ -z "$mpif90" ]; then
  echo "install test: relocated prefix runs; C, CMake, pkg-config and MPI consumers, the preloaded shim and the installed benchmarks ran"
  exit 0
fi
# 6. Fortran: rdlm::fortran, rdlm-fortran.pc (the module under include/rdlm/fortran)
test -f "$prefix/include/rdlm/fortran/rdlm.mod" || fail "rdlm.mod not installed"
consumers fortran Fortran "$mpif90" f90
echo "install test: relocated prefix runs; C, CMake, pkg-config, MPI and Fortran consumers, the preloaded shim and the installed benchmarks ran"
