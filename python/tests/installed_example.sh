#!/usr/bin/env bash
# The new user's check: install the built tree into a temporary prefix, move the
# prefix, and run docs/python.md's example (the block between its "example" markers)
# under mpirun as the docs say, with PYTHONPATH the only setting: no LD_LIBRARY_PATH,
# RDLM_LIBRARY or RDLM_MPI_LIBRARY. Exit 77 if PYTHON has no mpi4py.
# usage: installed_example.sh BUILD_DIR SOURCE_DIR PYTHON MPIEXEC [MPIEXEC_FLAG...]
set -euo pipefail
build=$1 src=$2 python=$3
shift 3
"$python" -c 'import mpi4py' 2>/dev/null || { echo "SKIP: $python has no mpi4py"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cmake --install "$build" --prefix "$tmp/staged" > "$tmp/install.log"
mv "$tmp/staged" "$tmp/prefix"
init=$(find "$tmp/prefix" -path '*/rdlm/__init__.py' | head -1)
[ -n "$init" ] || fail "the rdlm package is not installed"
site=$(dirname "$(dirname "$init")")
sed -n '/^<!-- example: begin/,/^<!-- example: end/p' "$src/docs/python.md" |
  sed '1,2d;$d' | sed '$d' > "$tmp/journal.py"
grep -q from_comm "$tmp/journal.py" || fail "no example found in docs/python.md"

cd "$tmp"
out=$(env -u LD_LIBRARY_PATH -u RDLM_LIBRARY -u RDLM_MPI_LIBRARY PYTHONPATH="$site" \
      timeout 60 "$@" "$python" -m mpi4py journal.py 2>&1) || fail "the example failed: $out"
ranks=$(wc -l < journal.txt)
grep -qx "$ranks ranks wrote the journal" <<< "$out" || fail "unexpected output: $out"
[ "$(cut -d' ' -f4 journal.txt | sort -u | wc -l)" = "$ranks" ] ||
  fail "tokens repeat in the journal: $(cat journal.txt)"
echo "installed example: $ranks ranks ran docs/python.md's example from $site"
