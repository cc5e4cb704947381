"""The QEMU backend: Debian's generic kernel in a QEMU guest, by KVM where a guest boots, else by TCG.

The guest is a whole machine: Debian's own kernel (``linux-image-*-amd64``, unpacked by .ci/run into
``.vm/kernel`` with ``dpkg-deb -x``; SWARMGATE_VM_KERNEL names another such directory), with its
real OOM killer and PSI, so systemd-oomd runs there. TCG (software emulation) needs no KVM and runs
on any x86-64 host CPU, where user-mode Linux panics on a CPU with AMX (FACTS.md, 2026-12-01).

Boot: a busybox initramfs made for the boot from the kernel package's own modules (the virtio, 9p,
block and ext4 drivers, each with what it depends on, in order) mounts the host's ``/`` read-only
over 9p (virtio, mount tag ``hostroot``) and ``switch_root``s to tests/vm/init.sh there, which does
what it does under every backend. The root is mounted ``cache=loose``: without it every stat and
read of an import goes to the host (``import pytest`` took 40-54 s in a loaded TCG guest, 13 s with
it). Loose caching trusts that the host's files do not change under the guest: a checkout edited
while a VM runs can be read half old, half new (an edited test module read as NUL bytes). CI edits
nothing; by hand, do not edit the checkout while a VM runs. /proc, /sys and the guest's tmpfs
mounts are the guest's own (tests/vm/vm_harness_test.py checks PID 1 and the cgroup layout).

The share is a second 9p export (tag ``sgshare``, writable), the scratch disk a virtio block device
(``/dev/vda``). No network device, no display; the serial console
goes to a file. The guest powers off at the end (reboot(2) with RB_POWER_OFF or systemd's
poweroff), and ``-no-reboot`` turns a panic (``panic=-1``) into QEMU's exit.

QEMU is one host process started in a new session (tests/vm/machine.py kills it by pid).
"""
from __future__ import annotations

import functools
import glob
import gzip
import io
import os
import re
import shutil
import stat

from tests.vm import machine

KERNEL_DIR = os.path.join(machine.CHECKOUT, ".vm", "kernel")
# what the initramfs loads: the root and the share over virtio 9p, the scratch disk (virtio block,
# ext4), the systemd layout's /etc overlay, and a virtio RNG (no wait for entropy at boot)
WANTED = ("virtio_pci", "9pnet_virtio", "9p", "virtio_blk", "ext4", "crc32c_generic", "overlay", "virtio_rng")
NINEP = "trans=virtio,version=9p2000.L,msize=512000"
INITRAMFS_INIT = """#!/bin/busybox sh
# the QEMU guest's first stage (tests/vm/qemu.py): the drivers, the host's root over 9p, then init.sh
b=/bin/busybox
$b mkdir -p /proc /dev /newroot
$b mount -t proc proc /proc
$b mount -t devtmpfs devtmpfs /dev
for m in $($b cat /modules.order); do
  $b insmod "/modules/$m.ko" || echo "sgvm-initramfs: cannot load $m"
done
if ! $b mount -t 9p -o {ninep},ro,cache=loose hostroot /newroot; then
  echo "sgvm-initramfs: cannot mount the host's root over 9p"
  $b poweroff -f
fi
$b umount /proc
$b mount --move /dev /newroot/dev
exec $b switch_root /newroot "$sgvm_init"
"""


def binary() -> str | None:
    return shutil.which("qemu-system-x86_64") or next(
        (p for p in ("/usr/bin/qemu-system-x86_64",) if os.access(p, os.X_OK)), None)


def busybox() -> str | None:
    """A static busybox (the initramfs has no libraries)."""
    for p in ("/bin/busybox", "/usr/bin/busybox", shutil.which("busybox")):
        if p and os.access(p, os.X_OK) and _is_static(p):
            return p
    return None


def _is_static(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            head = f.read(1 << 16)
    except OSError:
        return False
    return head[:4] == b"\x7fELF" and b"/lib64/ld-linux" not in head and b"ld-linux-x86-64" not in head


def kernel_dir() -> str:
    return os.environ.get("SWARMGATE_VM_KERNEL") or KERNEL_DIR


@functools.lru_cache(maxsize=4)
def kernel(root: str) -> tuple[str, str, str] | None:
    """(vmlinuz, the modules' directory, the release) of the unpacked kernel package at ``root``, or None."""
    images = sorted(glob.glob(os.path.join(root, "boot", "vmlinuz-*")))
    for image in reversed(images):
        release = os.path.basename(image)[len("vmlinuz-"):]
        mods = os.path.join(root, "lib", "modules", release)
        if os.path.isdir(mods):
            return image, mods, release
    return None


def unavailable() -> str | None:
    """None when this backend can be tried here, else why not (and how to get it)."""
    if binary() is None:
        return "QEMU is not installed (apt-get install qemu-system-x86)"
    if busybox() is None:
        return "a static busybox is missing (apt-get install busybox-static): the guest's initramfs needs it"
    if kernel(kernel_dir()) is None:
        return (f"no unpacked Debian kernel in {kernel_dir()} (.ci/run: apt-get download linux-image-amd64's "
                f"linux-image-*-amd64, then dpkg-deb -x it there)")
    return None


def kvm_usable() -> bool:
    """/dev/kvm opens read-write: worth a probe boot (a guest that hangs is told by the boot, not by this)."""
    try:
        fd = os.open("/dev/kvm", os.O_RDWR | os.O_CLOEXEC)
    except OSError:
        return False
    os.close(fd)
    return True


def _index(mods: str) -> tuple[dict[str, str], set[str]]:
    """Module name -> .ko path, and the names built into the kernel (nothing to load)."""
    paths: dict[str, str] = {}
    for dirpath, _dirs, files in os.walk(os.path.join(mods, "kernel")):
        for f in files:
            if f.endswith(".ko"):
                paths[f[:-3].replace("-", "_")] = os.path.join(dirpath, f)
    builtin = set()
    try:
        with open(os.path.join(mods, "modules.builtin")) as f:
            builtin = {os.path.basename(line.strip())[:-3].replace("-", "_") for line in f if line.strip()}
    except OSError:
        pass
    return paths, builtin


def _depends(path: str) -> list[str]:
    with open(path, "rb") as f:
        data = f.read()
    m = re.search(rb"(?:^|\0)depends=([^\0]*)\0", data)
    return [d.decode().replace("-", "_") for d in m.group(1).split(b",") if d] if m else []


def load_order(mods: str, wanted=WANTED) -> list[tuple[str, str]]:
    """(name, path) of every module ``wanted`` needs, each after what it depends on; built-ins left out."""
    paths, builtin = _index(mods)
    order: list[tuple[str, str]] = []
    seen: set[str] = set()

    def visit(name: str, chain: tuple[str, ...]) -> None:
        if name in seen or name in builtin:
            return
        if name not in paths:
            if name == "virtio_rng":
                return  # optional: the guest then waits for entropy like any machine
            raise RuntimeError(f"kernel module {name} (needed by {' <- '.join(chain) or 'the guest'}) is "
                               f"neither built in nor in {mods}")
        seen.add(name)
        for dep in _depends(paths[name]):
            visit(dep, chain + (name,))
        order.append((name, paths[name]))

    for name in wanted:
        visit(name, ())
    return order


def _newc(entries: list[tuple[str, int, bytes]]) -> bytes:
    """A cpio archive in the kernel's "newc" format: (path, mode, data) entries, then the trailer."""
    out = io.BytesIO()
    for ino, (name, mode, data) in enumerate(entries + [("TRAILER!!!", 0, b"")], start=1):
        raw = name.encode() + b"\0"
        fields = [ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(raw), 0]
        out.write(b"070701" + b"".join(b"%08x" % v for v in fields) + raw)
        out.write(b"\0" * (-(110 + len(raw)) % 4))
        out.write(data)
        out.write(b"\0" * (-len(data) % 4))
    return out.getvalue()


def make_initramfs(path: str, mods: str) -> None:
    """Write the guest's first stage to ``path`` (gzip'd newc cpio: /init, busybox, the drivers)."""
    order = load_order(mods)
    d, x, r = stat.S_IFDIR | 0o755, stat.S_IFREG | 0o755, stat.S_IFREG | 0o644
    with open(busybox() or "/bin/busybox", "rb") as f:
        bb = f.read()
    entries = [("bin", d, b""), ("bin/busybox", x, bb), ("modules", d, b""),
               ("init", x, INITRAMFS_INIT.format(ninep=NINEP).encode()),
               ("modules.order", r, "".join(name + "\n" for name, _ in order).encode())]
    for name, ko in order:
        with open(ko, "rb") as f:
            entries.append((f"modules/{name}.ko", r, f.read()))
    with open(path, "wb") as f:
        f.write(gzip.compress(_newc(entries), compresslevel=1))


def cpus() -> str:
    value = os.environ.get("SWARMGATE_VM_CPUS", "2")
    if not re.fullmatch(r"[1-9][0-9]?", value):
        raise RuntimeError(f"SWARMGATE_VM_CPUS={value!r}: a number of virtual CPUs like 1 or 2")
    return value


class Backend:
    """QEMU with ``accel`` "kvm" or "tcg"."""

    def __init__(self, accel: str) -> None:
        if accel not in ("kvm", "tcg"):
            raise ValueError(accel)
        self.accel = accel
        self.name = f"qemu-{accel}"

    def launch(self, job: machine.Job, dirs: machine.Dirs) -> machine.Launch:
        found = kernel(kernel_dir())
        if found is None:
            raise RuntimeError(unavailable() or "no kernel")
        image, mods, _release = found
        initrd = os.path.join(dirs.private, "initrd.gz")
        make_initramfs(initrd, mods)
        console = os.path.join(dirs.private, "console.txt")
        accel = (["-accel", "kvm", "-cpu", "host"] if self.accel == "kvm"
                 else ["-accel", "tcg,thread=multi", "-cpu", "max"])
        params = ["console=ttyS0", "panic=-1", "quiet", "mitigations=off", f"sgvm_init={machine.INIT}",
                  *machine.guest_params(job.layout, "sgshare", "qemu")]
        argv = [binary() or "qemu-system-x86_64", *accel, "-m", job.mem, "-smp", cpus(), "-nodefaults",
                "-no-user-config", "-display", "none", "-monitor", "none", "-no-reboot",
                "-serial", f"file:{console}", "-kernel", image, "-initrd", initrd, "-append", " ".join(params),
                "-virtfs", "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap",
                "-virtfs", f"local,path={dirs.share},mount_tag=sgshare,security_model=none",
                "-drive", f"file={dirs.disk},format=raw,if=virtio,cache=unsafe",
                "-device", "virtio-rng-pci"]
        env = {k: v for k, v in os.environ.items() if k not in ("TMP", "TEMP")}
        env["TMPDIR"] = dirs.private
        return machine.Launch(argv=argv, env=env, cwd=dirs.private, console=console,
                              output=os.path.join(dirs.private, "qemu.log"))
