#!/bin/sh
# PID 1 of a test guest booted by tests/vm/machine.py (docs/testing.md, "Cgroup layouts"): under
# user-mode Linux the kernel starts it; under QEMU the initramfs (tests/vm/qemu.py) switches to it.
#
# The root is the host's / (hostfs under UML, 9p under QEMU), read-only; this script never makes it
# writable. It mounts tmpfs where the guest must write (/run, /tmp, /var, /dev/shm), the boot's
# scratch disk (ext4: real page cache; ubda under UML, vda under QEMU) at /var/tmp, and the one host
# directory made for this boot (the share: job in, results out) at /run/sgvm/share, then, by layout:
#   v2       mounts a fresh cgroup2 hierarchy (no controller enabled yet) and runs tests/vm/guest.py;
#   systemd  puts a tmpfs overlay over /etc (a fresh machine-id) and execs systemd as PID 1 with a
#            target that runs guest.py as a service and powers off when it ends.
# The kernel passes sgvm_share, sgvm_layout, sgvm_python, sgvm_checkout and sgvm_backend (uml or
# qemu) in the environment.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH

say() { echo "sgvm-init: $*"; }

power_off() {
  sync
  # reboot(2) with RB_POWER_OFF: UML exits; PID 1 must never return (a kernel panic instead)
  "$sgvm_python" -I -S -c 'import ctypes; ctypes.CDLL(None).reboot(0x4321fedc)'
  say "power off failed; halting here"
  while :; do sleep 3600; done
}

load_module() {  # finit_module(2) from the UML package's modules (the guest has no modprobe of its own)
  "$sgvm_python" -I -S -c '
import ctypes, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
sys.exit(0 if ctypes.CDLL(None, use_errno=True).syscall(313, fd, b"", 0) == 0 else 1)' \
    "/usr/lib/uml/modules/$(uname -r)/kernel/$1"
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
grep -q ' /dev ' /proc/mounts || mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/shm /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t devpts -o mode=620,ptmxmode=666 devpts /dev/pts
mount -t tmpfs -o mode=755 tmpfs /run
# a checkout (or interpreter) under /tmp or /var/tmp (a clone in /tmp) is hidden by the guest's own mounts
# there: under QEMU keep a hold of the host's directories first, to bind them back below
mkdir -p /run/sgvm/host/tmp /run/sgvm/host/var-tmp
if [ "$sgvm_backend" = qemu ]; then
  mount --bind /tmp /run/sgvm/host/tmp
  mount --bind /var/tmp /run/sgvm/host/var-tmp
fi
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=755 tmpfs /var
mkdir -p /var/tmp /var/log /var/lib /var/cache /var/spool /run/lock /run/sgvm/share
ln -s /run /var/run
ln -s /run/lock /var/lock
if [ "$sgvm_backend" = qemu ]; then
  share() { mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 "$sgvm_share" /run/sgvm/share; }
  scratch=/dev/vda
else
  share() { mount -t hostfs -o "$sgvm_share" none /run/sgvm/share; }
  scratch=/dev/ubda
fi
if ! share; then
  say "cannot mount the share $sgvm_share"
  power_off
fi
mount -t ext4 "$scratch" /var/tmp && chmod 1777 /var/tmp || say "cannot mount the scratch disk at /var/tmp"
# the host's directory back, read-only, as the root is
for p in "$sgvm_checkout" "${sgvm_python%/bin/*}"; do
  case "$p" in
    /tmp/*|/var/tmp/*)
      if [ "$sgvm_backend" = qemu ]; then
        case "$p" in /tmp/*) held="/run/sgvm/host/tmp/${p#/tmp/}";; *) held="/run/sgvm/host/var-tmp/${p#/var/tmp/}";; esac
        back() { mount --bind "$held" "$p" && mount -o remount,bind,ro "$p"; }
      else
        back() { mount -r -t hostfs -o "$p" none "$p"; }
      fi
      grep -q " $p " /proc/mounts || { mkdir -p "$p" && back; } || say "cannot mount $p from the host"
      ;;
  esac
done
hostname "sgvm-$sgvm_layout"

case "$sgvm_layout" in
  v2)
    mount -t cgroup2 none /sys/fs/cgroup || say "cannot mount cgroup2"
    "$sgvm_python" -B "$sgvm_checkout/tests/vm/guest.py"
    power_off
    ;;
  systemd)
    mkdir -p /run/sgvm/etc-upper /run/sgvm/etc-work
    if { grep -qw overlay /proc/filesystems || load_module fs/overlayfs/overlay.ko; } \
        && mount -t overlay overlay -o lowerdir=/etc,upperdir=/run/sgvm/etc-upper,workdir=/run/sgvm/etc-work /etc; then
      : > /etc/machine-id  # empty: systemd makes a fresh one for this boot
    else
      say "no overlay for /etc: binding an empty machine-id only"
      : > /run/sgvm/machine-id
      mount --bind /run/sgvm/machine-id /etc/machine-id
    fi
    mkdir -p /run/systemd/system
    # the tests start at basic.target, like services on a real machine: sysinit's one-shot units (among
    # them systemd-tmpfiles-setup, which empties /tmp) run once at boot, never under a running test
    cat > /run/systemd/system/swarmgate-vm.target <<EOF
[Unit]
Description=swarmgate tests inside a test guest
Wants=swarmgate-vm.service basic.target
EOF
    cat > /run/systemd/system/swarmgate-vm.service <<EOF
[Unit]
Description=swarmgate test run
DefaultDependencies=no
Requires=basic.target
After=basic.target
SuccessAction=poweroff-force
FailureAction=poweroff-force
[Service]
Type=oneshot
ExecStart=$sgvm_python -B $sgvm_checkout/tests/vm/guest.py
StandardOutput=tty
StandardError=tty
TTYPath=/dev/console
EOF
    # logging as on a real machine (journal, else kmsg): the runner reads systemd's unit lines there
    exec /lib/systemd/systemd --unit=swarmgate-vm.target --show-status=false
    ;;
esac
say "unknown layout $sgvm_layout"
power_off
