#!/usr/bin/env bash
# Install every Debian 12 package rdlm needs to build, test and benchmark.
# Run as root. Skips apt-get entirely when everything is already installed.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  libhwloc-dev libibverbs-dev librdmacm-dev libucx-dev ucx-utils
  libopenmpi-dev openmpi-bin gfortran
  # MPICH beside Open MPI for CI's MPICH leg (scripts/test-mpich.sh, mpicc.mpich and
  # mpiexec.mpich); Debian's alternatives keep Open MPI the default mpicc and mpirun
  # (priority 50 against MPICH's 40), which the check at the end makes sure of
  libmpich-dev mpich
  libcmocka-dev libraft-dev libuv1-dev
  # rank and size of standalone contexts under a PMIx server (optional at build time)
  libpmix-dev
  # the Python package's MPI tests (python/): mpi4py for Debian's /usr/bin/python3
  python3 python3-mpi4py
  spin gnuplot-nox iproute2
  # the lease authority: MUNGE session credentials; nftables for partition tests
  munge libmunge-dev nftables
  # tests/rxe: a qemu VM with a soft-RoCE device runs the verbs transport for real
  qemu-system-x86 busybox-static ibverbs-utils
  # rdlm-bench's lock-service baselines (bench/services/services.sh): client libraries and the
  # small servers; zookeeperd (Java, about 30 MB) is installed by bench/services/services.sh only
  libhiredis-dev libcurl4-openssl-dev libzookeeper-mt-dev redis-server etcd-server
  # the docs tests: the API reference (doxygen) and the man pages rendered (groff)
  doxygen groff-base
)

# Open MPI must stay the MPI of mpicc and mpirun: the main build and every test but
# the MPICH leg use it. Installing MPICH does not change that in auto mode; a machine
# where someone chose MPICH by hand is refused, not changed.
check_default_mpi() {
  local cc run
  cc=$(readlink -f "$(command -v mpicc)" 2>/dev/null || true)
  run=$(mpirun --version 2>&1 | head -n 1 || true)
  case "$cc $run" in
  */opal_wrapper*"Open MPI"*) ;;
  *)
    echo "install-deps: mpicc ($cc) and mpirun ($run) must be Open MPI's;" \
         "update-alternatives --auto mpi; update-alternatives --auto mpirun" >&2
    exit 1
    ;;
  esac
}

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  check_default_mpi
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing ${missing[*]}; run as root to install them" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# --force-unsafe-io: dpkg skips its fsync per unpacked file (for this command only);
# a machine that loses power mid-install reinstalls. It shortens a fresh machine's
# install, which CI's time budget counts.
apt-get install -y -q --no-install-recommends -o Dpkg::Options::=--force-unsafe-io \
  "${missing[@]}"
check_default_mpi
