#!/usr/bin/env bash
# The README's main-job command: install dependencies, build (Release), run the
# multi-process example and the on-node benchmark against its baselines on this
# machine. Results go to ./bench-results (CSV, JSON, plot).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release > build-release.configure.log 2>&1 ||
  { cat build-release.configure.log; exit 1; }
cmake --build build-release -j "$(nproc)"
echo "== example: 4 processes share a lock, a counter and a barrier"
./build-release/examples/local_lock 4
if [ -x ./build-release/examples/mpi_lock ]; then
  echo "== example: 4 MPI ranks on 2 virtual nodes share a job-wide lock (UCX over TCP)"
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    mpirun -np 4 --oversubscribe --bind-to none -x RDLM_VIRTUAL_NODES=2 -x UCX_TLS=tcp,self \
    ./build-release/examples/mpi_lock
  echo "== example: the same ranks share a counter and a semaphore"
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    mpirun -np 4 --oversubscribe --bind-to none -x RDLM_VIRTUAL_NODES=2 -x UCX_TLS=tcp,self \
    ./build-release/examples/counter
fi
echo "== benchmark"
BUILD_DIR=./build-release bash bench/run_local.sh ./bench-results
