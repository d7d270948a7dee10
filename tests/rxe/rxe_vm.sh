#!/bin/bash
# Runs a command inside a small virtual machine that has a soft-RoCE device, so the
# verbs transport (libibverbs RC queue pairs, remote atomics, librdmacm) runs on a real
# RDMA stack where the host has no adapter and cannot load kernel modules.
#
#   rxe_vm.sh [--timeout SEC] [--mem MB] [--cpus N] -- COMMAND [ARGS...]
#
# The VM is qemu-system-x86_64 (software emulation; RDLMTEST_RXE_ACCEL=kvm where KVM works)
# booting Debian's own kernel package (linux-image-amd64, fetched with apt-get download
# once and cached in RDLMTEST_RXE_CACHE, default /var/cache/rdlm-rxe). Its initramfs holds
# busybox and the kernel modules it needs (virtio, 9p, overlay, crc32, rdma_rxe,
# ib_uverbs, rdma_ucm). /init loads them, mounts the host's root file system read-only
# over virtio-9p with an overlay whose writes stay in the VM's RAM (tmpfs on /dev/shm
# and /run too), brings eth0 up as 10.0.2.15/24 (qemu user networking: nothing reaches
# the host's network), adds `rdma link add rxe0 type rxe netdev eth0`, and runs COMMAND
# as root in that tree (chroot), in the current directory. COMMAND therefore sees the
# host's binaries, libraries (libibverbs' rxe provider) and build directories, and
# nothing it writes reaches the host. The caller's RDLM_*, RDLMTEST_*, UCX_*, OMPI_*
# and [AUT]SAN_OPTIONS variables are passed in; RDLMTEST_RXE_VM=1 and
# RDLMTEST_RXE_ADDR=10.0.2.15 are set; the hostname is rdlm-rxe-vm.
#
# Exit: COMMAND's exit status; 77 (skip) when the VM cannot be made here (not root, no
# qemu-system-x86_64, no busybox, the kernel package cannot be fetched), with a line
# saying what is missing; 124 when the VM did not finish within --timeout (default
# 600 s; the VM is killed), or did not boot twice. The console (kernel and COMMAND
# output) goes to stdout once the VM stopped.
set -u

TIMEOUT=600
MEM=2048
CPUS=2
while [ $# -gt 0 ]; do
    case $1 in
    --timeout) TIMEOUT=$2; shift 2 ;;
    --mem) MEM=$2; shift 2 ;;
    --cpus) CPUS=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "rxe_vm: unknown option $1 (usage: rxe_vm.sh [--timeout SEC] [--mem MB] [--cpus N] -- COMMAND...)" >&2
       exit 2 ;;
    esac
done
[ $# -gt 0 ] || { echo "rxe_vm: no command (usage: rxe_vm.sh [options] -- COMMAND...)" >&2; exit 2; }

skip() { echo "rxe_vm: SKIP: $*" >&2; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root (apt-get download of the kernel, qemu's 9p export of /)"
QEMU=$(command -v qemu-system-x86_64) || skip "needs qemu-system-x86_64 (Debian qemu-system-x86; scripts/install-deps.sh installs it)"
BUSYBOX=$(command -v busybox) || skip "needs a static busybox (Debian busybox-static)"
ldd "$BUSYBOX" 2>&1 | grep -q 'not a dynamic executable' ||
    skip "$BUSYBOX is not statically linked (install Debian busybox-static)"
for t in objcopy apt-get apt-cache dpkg-deb gzip; do
    command -v $t >/dev/null || skip "needs $t"
done

CACHE=${RDLMTEST_RXE_CACHE:-/var/cache/rdlm-rxe}
mkdir -p "$CACHE" || skip "cannot create the cache $CACHE"

# --- the kernel: Debian's linux-image-amd64, extracted once per version ------------
kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
[ -n "$kpkg" ] || skip "apt-cache knows no linux-image-amd64 (apt-get update?)"
kver=${kpkg#linux-image-}
KROOT=$CACHE/$kver
if [ ! -f "$KROOT/done" ]; then
    rm -rf "$KROOT" && mkdir -p "$KROOT/deb" || skip "cannot write $KROOT"
    (cd "$KROOT/deb" && apt-get download -q "$kpkg" >/dev/null 2>&1) ||
        skip "apt-get download $kpkg failed (no package mirror reachable?)"
    dpkg-deb -x "$KROOT"/deb/*.deb "$KROOT/root" || skip "dpkg-deb -x of $kpkg failed"
    rm -rf "$KROOT/deb"
    touch "$KROOT/done"
fi
VMLINUZ=$KROOT/root/boot/vmlinuz-$kver
MODDIR=$KROOT/root/lib/modules/$kver
[ -f "$VMLINUZ" ] || skip "$kpkg has no /boot/vmlinuz-$kver"

# --- modules, in dependency order (from each module's .modinfo depends= field) -----
declare -A KO=() SEEN=()
while IFS= read -r f; do
    n=$(basename "$f" .ko)
    KO[${n//-/_}]=$f
done < <(find "$MODDIR/kernel" -name '*.ko')
ORDER=()
add_module() { # add_module NAME: its dependencies first, then NAME
    local n=${1//-/_} d
    [ -n "${SEEN[$n]:-}" ] && return 0
    SEEN[$n]=1
    [ -n "${KO[$n]:-}" ] || { grep -q "/$n.ko" "$MODDIR/modules.builtin" && return 0;
                              skip "kernel $kver has no module $n"; }
    for d in $(objcopy -O binary --only-section=.modinfo "${KO[$n]}" /dev/stdout |
               tr '\0' '\n' | sed -n 's/^depends=//p' | tr ',' ' '); do
        add_module "$d"
    done
    ORDER+=("$n")
}
# crc32_generic: rdma_rxe asks the crypto API for "crc32" (ICRC) without a module dependency
for m in virtio_pci virtio_net 9pnet_virtio 9p overlay crc32_generic rdma_rxe ib_uverbs rdma_ucm; do
    add_module $m
done

# --- the initramfs ------------------------------------------------------------------
WORK=$(mktemp -d /tmp/rdlm-rxe-vm.XXXXXX) || skip "mktemp failed"
QPID=
cleanup() {
    [ -n "$QPID" ] && kill -9 "$QPID" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

IRD=$WORK/initramfs
mkdir -p "$IRD"/{bin,mods,proc,sys,dev,host} "$WORK/out"
cp "$BUSYBOX" "$IRD/bin/busybox"
for n in "${ORDER[@]}"; do
    cp "${KO[$n]}" "$IRD/mods/$n.ko"
done
printf '%s\n' "${ORDER[@]}" >"$IRD/mods/order"

# COMMAND, quoted for sh, and the directory to run it in.
{
    printf 'cd %q || exit 126\n' "$PWD"
    printf 'export RDLMTEST_RXE_VM=1 RDLMTEST_RXE_ADDR=10.0.2.15 PATH=%q\n' "$PATH"
    for v in $(compgen -e | grep -E '^(RDLM_|RDLMTEST_|UCX_|OMPI_|[AUT]SAN_OPTIONS$)'); do
        case $v in RDLMTEST_RXE_*) continue ;; esac
        printf 'export %s=%q\n' "$v" "${!v}"
    done
    printf 'exec'
    printf ' %q' "$@"
    printf '\n'
} >"$WORK/out/cmd.sh"

cat >"$IRD/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in $(cat /mods/order); do
    insmod /mods/$m.ko || echo "rxe_vm: insmod $m failed"
done
mkdir -p /lower /rw
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose host /lower ||
    { echo "rxe_vm: cannot mount the host root"; poweroff -f; }
# The root the command sees: the host's tree, with every write kept in RAM.
mount -t tmpfs rw /rw
mkdir -p /rw/upper /rw/work
mount -t overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work root /host ||
    { echo "rxe_vm: cannot mount the overlay root"; poweroff -f; }
for d in proc sys dev; do mount --bind /$d /host/$d; done
mkdir -p /host/dev/shm
mount -t tmpfs shm /host/dev/shm
mount -t tmpfs run /host/run
mkdir -p /host/run/rdlm-rxe-out
mount -t 9p -o trans=virtio,version=9p2000.L out /host/run/rdlm-rxe-out ||
    { echo "rxe_vm: cannot mount the result directory"; poweroff -f; }
hostname rdlm-rxe-vm # Open MPI refuses the kernel default "(none)"
ip link set lo up
# No duplicate address detection: a tentative (IPv6 link-local) GID cannot be
# resolved, and modifying a queue pair to RTR towards it fails with ETIMEDOUT.
echo 0 >/proc/sys/net/ipv6/conf/eth0/accept_dad
ip link set eth0 up
ip addr add 10.0.2.15/24 dev eth0
n=0
while ip -6 addr show dev eth0 tentative | grep -q inet6 && [ $n -lt 50 ]; do
    sleep 0.1
    n=$((n + 1))
done
if chroot /host /usr/bin/rdma link add rxe0 type rxe netdev eth0; then
    echo "rxe_vm: ready: $(chroot /host /usr/bin/rdma link show 2>&1)"
    chroot /host /bin/sh /run/rdlm-rxe-out/cmd.sh
    echo $? >/host/run/rdlm-rxe-out/rc
else
    echo "rxe_vm: rdma link add rxe0 failed; kernel log:"
    dmesg | tail -5
    echo 1 >/host/run/rdlm-rxe-out/rc
fi
sync
poweroff -f
EOF
chmod +x "$IRD/init"
(cd "$IRD" && find . | "$BUSYBOX" cpio -o -H newc 2>/dev/null | gzip -1 >"$WORK/initrd.gz") ||
    skip "cannot pack the initramfs"

# --- boot -----------------------------------------------------------------------------
# Software emulation unless RDLMTEST_RXE_ACCEL=kvm: on the development VMs /dev/kvm exists
# but a KVM guest hangs right after the kernel is decompressed (nested virtualisation).
# A boot that has not reached "rxe_vm: ready" within BOOT_LIMIT seconds (one normally
# takes 10-40 s) is stuck before the command ran (seen once in CI: nothing after the
# firmware for 540 s): the VM is killed and booted once more, within the same --timeout.
ACCEL=${RDLMTEST_RXE_ACCEL:-tcg}
BOOT_LIMIT=${RDLMTEST_RXE_BOOT_LIMIT:-150}
START=$SECONDS
# vm_run: one boot; qrc is qemu's exit status, or 137 when it was killed (stuck boot:
# booted=0).
vm_run() {
    local t0=$SECONDS
    rm -f "$WORK/out/rc"
    "$QEMU" -accel "$ACCEL" -cpu max -smp "$CPUS" -m "$MEM" \
        -nographic -no-reboot -nodefaults -serial stdio \
        -kernel "$VMLINUZ" -initrd "$WORK/initrd.gz" \
        -append "console=ttyS0 panic=-1 quiet loglevel=3" \
        -virtfs local,path=/,mount_tag=host,security_model=none,readonly=on,multidevs=remap \
        -virtfs local,path="$WORK/out",mount_tag=out,security_model=none \
        -nic user,model=virtio-net-pci >"$WORK/console" 2>&1 </dev/null &
    QPID=$!
    booted=0
    while kill -0 "$QPID" 2>/dev/null; do
        [ "$booted" = 1 ] || ! grep -q 'rxe_vm: ready' "$WORK/console" || booted=1
        if [ $((SECONDS - START)) -ge "$TIMEOUT" ] ||
            { [ "$booted" = 0 ] && [ $((SECONDS - t0)) -ge "$BOOT_LIMIT" ]; }; then
            kill -9 "$QPID" 2>/dev/null
            break
        fi
        sleep 1
    done
    wait "$QPID"
    qrc=$?
    QPID=
    cat "$WORK/console"
}
vm_run
if [ "$qrc" = 137 ] && [ "$booted" = 0 ] && [ $((SECONDS - START)) -lt "$TIMEOUT" ]; then
    echo "rxe_vm: the VM was not ready within $BOOT_LIMIT s (a stuck boot): booting again" >&2
    vm_run
fi
if [ "$qrc" = 137 ]; then
    if [ $((SECONDS - START)) -ge "$TIMEOUT" ]; then
        echo "rxe_vm: the VM did not finish within $TIMEOUT s" >&2
    else
        echo "rxe_vm: the VM was not ready within $BOOT_LIMIT s, twice" >&2
    fi
    exit 124
fi
[ -f "$WORK/out/rc" ] || { echo "rxe_vm: the VM stopped without running the command (qemu exit $qrc)" >&2; exit 1; }
exit "$(cat "$WORK/out/rc")"
