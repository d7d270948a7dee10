#!/bin/sh
# usage: with_mpi4py.sh PYTHON COMMAND...: run COMMAND if PYTHON has mpi4py, else say
# so and exit 77 (ctest's SKIP_RETURN_CODE), before mpirun starts any rank.
python=$1
shift
if ! "$python" -c 'import mpi4py' 2>/dev/null; then
  echo "SKIP: $python has no mpi4py (Debian: apt-get install python3-mpi4py)"
  exit 77
fi
exec "$@"
