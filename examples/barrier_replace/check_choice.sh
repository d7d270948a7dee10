#!/usr/bin/env bash
# check_choice.sh <want> <calls> <command...>
#
# Runs an MPI program with librdlm_pmpi.so (the command holds mpirun and its flags;
# the environment holds RDLM_STATS=1 and RDLM_LOG=info) and checks what its
# MPI_Barrier calls on MPI_COMM_WORLD ran, from the statistics every rank prints at
# MPI_Finalize ("barriers N": rdlm barriers) and the shim's choice line:
#   want rdlm   RDLM_PMPI_BARRIER=1: no trial; every rank ran exactly <calls>
#   want auto   one choice line; every rank ran the trial's 64 (16 warm-up and 3
#               blocks of 16), plus <calls> if the line says rdlm's
#   want mpi    as auto, and the line must say MPI's
#   want failed rdlm cannot start (the command's environment breaks it): every call
#               runs MPI's, and each rank tries rdlm on the communicator once (at
#               most one failed context creation and one warning per rank, not one
#               per call)
# Every rank must agree (a rank that chose otherwise would leave the others waiting,
# or count differently).
set -u
want=$1
calls=$2
shift 2
trial=64

out=$(timeout 150 "$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ $rc -ne 0 ]; then
    echo "FAIL: the program exited with $rc"
    exit 1
fi
if [ "$want" = failed ]; then
    nranks=$(printf '%s\n' "$out" | sed -n 's/^barrier_c: \([0-9]*\) ranks.*/\1/p')
    tries=$(printf '%s\n' "$out" | grep -c "creating the distributed context failed")
    warns=$(printf '%s\n' "$out" | grep -c "rdlm barrier failed")
    if [ -z "$nranks" ] || [ "$tries" -eq 0 ] || [ "$tries" -gt "$nranks" ] ||
        [ "$warns" -gt "$nranks" ]; then
        echo "FAIL: ${nranks:-?} ranks: $tries failed context creations, $warns warnings" \
             "(want 1 to ${nranks:-?} of each)"
        exit 1
    fi
    echo "PASS: $nranks ranks fell back to MPI's barrier after $tries failed creations"
    exit 0
fi
counts=$(printf '%s\n' "$out" | sed -n 's/.*rdlm\[[0-9]*\] stats (.*): .* barriers \([0-9]*\) .*/\1/p')
ranks=$(printf '%s\n' "$counts" | grep -c .)
choices=$(printf '%s\n' "$out" | grep -c "librdlm_pmpi: communicator of .* MPI_Barrier runs")
if [ "$ranks" -eq 0 ]; then
    echo "FAIL: no rank printed rdlm statistics"
    exit 1
fi
case $want in
rdlm)
    expect=$calls
    if [ "$choices" -ne 0 ]; then
        echo "FAIL: RDLM_PMPI_BARRIER=1 ran a trial"
        exit 1
    fi
    ;;
auto | mpi)
    if [ "$choices" -ne 1 ]; then
        echo "FAIL: $choices choice lines (want 1, from rank 0 of the communicator)"
        exit 1
    fi
    if printf '%s\n' "$out" | grep -q "MPI_Barrier runs rdlm's"; then
        [ "$want" = mpi ] && { echo "FAIL: chose rdlm's, want MPI's"; exit 1; }
        expect=$((trial + calls))
    else
        expect=$trial
    fi
    ;;
*)
    echo "usage: $0 rdlm|auto|mpi|failed calls command..." >&2
    exit 2
    ;;
esac
bad=$(printf '%s\n' "$counts" | grep -vxc "$expect")
if [ "$bad" -ne 0 ]; then
    echo "FAIL: $bad of $ranks ranks ran another number of rdlm barriers than $expect:" $counts
    exit 1
fi
echo "PASS: $ranks ranks ran $expect rdlm barriers each"
