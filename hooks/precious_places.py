"""Places outside the repository whose loss is not an agent's to cause (L01, hooks/loss_guards.py):
the root, the homes, the system directories, mount points, the trees above the repository, and the
block devices. Pure facts about paths, and two readers of the machine (the user's home, the mount
table); no judging of commands.

``why_destroyed(full, kind, tree, *, home, roots)`` says, for one placed write (hooks/shell_writes.py
``Placed``), why it destroys such a place, or None:

- ``kind`` ``delete``: rm, unlink, rmdir, shred, ``find -delete``, ``rsync --delete``, ``mv`` (its
  source moves away, its destination is replaced); ``perm``: chmod, chown, chgrp, chattr, setfacl
  (counted only recursive); ``truncate``: a redirection ``>``, truncate, dd, tee, cp onto a file;
- a device under /dev that is not one of the harmless ones (/dev/null, /dev/zero, ...) is a block
  device, whatever writes it;
- ``roots``: the repository and the agent's work root; inside them nothing here applies (the write
  rows decide: W01); a tree above them holds them;
- a recursive delete of a top-level folder of the home (`~/Documents`, `~/projects`: not the dot
  folders of caches), or of a tree that holds another git checkout (outside scratch), loses files no
  repository of this one holds.

Scratch places stay free: /tmp, /var/tmp, /dev/shm, /run/user and what is below them (their roots
are scratch shared by every agent of the machine, so a recursive delete of a scratch root itself is
refused).
"""
from __future__ import annotations

SYSTEM_DIRS = ("/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/proc",
               "/sbin", "/srv", "/sys", "/usr", "/var", "/snap", "/run", "/efi")
SCRATCH = ("/tmp", "/var/tmp", "/dev/shm", "/run/user", "/run/lock")
HARMLESS_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty",
                    "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/ptmx", "/dev/console", "/dev/kmsg")
HARMLESS_DEVICE_DIRS = ("/dev/fd/", "/dev/pts/", "/dev/shm/", "/dev/mqueue/", "/dev/hugepages/")
# the home's own secret and config trees: deleting one of them loses keys no commit holds
HOME_TREES = (".ssh", ".gnupg", ".aws", ".config", ".kube", ".docker", ".password-store", ".local")
HOME_TREES_UNDER = (".ssh", ".gnupg", ".aws", ".password-store")
# programs that format, wipe or repartition what they are given: a device operand is lost
FORMATTERS = frozenset(("mkfs", "mke2fs", "mkswap", "wipefs", "fdisk", "sfdisk", "cfdisk", "gdisk",
                        "sgdisk", "parted", "blkdiscard", "mkntfs", "mkdosfs", "mlabel", "badblocks",
                        "cryptsetup", "pvcreate", "mdadm", "zpool", "hdparm", "nvme", "sg_format"))


def is_formatter(name: str) -> bool:
    return name in FORMATTERS or name.startswith(("mkfs.", "mkfs_", "mke2fs", "mkswap"))


def _under(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


# the names of the block devices under /dev (disks, partitions, loop, RAID, device-mapper, NVMe, SD cards)
BLOCK_DEVICE_NAMES = ("sd", "hd", "vd", "xvd", "nvme", "mmcblk", "loop", "md", "dm-", "mapper/", "disk", "rdisk", "sr",
                      "nbd", "zd", "rbd", "mtdblock", "bcache", "drbd", "zram", "pmem", "ubiblock", "root")


def is_block_device(full: str) -> bool:
    """A path under /dev naming a disk, a partition or a volume (``BLOCK_DEVICE_NAMES``): what a write
    there destroys is a file system. Terminals, /dev/null, /dev/fd/N and the like are not."""
    if not full.startswith("/dev/") or full in HARMLESS_DEVICES or full.startswith(HARMLESS_DEVICE_DIRS):
        return False
    rest = full[5:]
    return rest.startswith(BLOCK_DEVICE_NAMES) and not rest.startswith(("tty", "snd", "shm"))


def is_scratch(full: str) -> bool:
    return any(_under(full, s) for s in SCRATCH)


def home_dir() -> str:
    from swarmgate import lean_os as os
    home = os.environ.get("HOME") or ""
    return home.rstrip("/") or "/"


_mounts: list | None = None


def mount_points() -> list[str]:
    """The mount points of the machine (/proc/self/mounts), read once per process."""
    global _mounts
    if _mounts is None:
        out = []
        try:
            with open("/proc/self/mounts", encoding="utf-8", errors="replace") as f:
                for line in f:
                    parts = line.split()
                    if len(parts) > 1:
                        out.append(parts[1].replace("\\040", " "))
        except OSError:
            pass
        _mounts = out
    return _mounts


def why_destroyed(full: str, kind: str, tree: bool, *, home: str, roots: tuple) -> str | None:
    """Why a write of ``kind`` to ``full`` destroys a place outside the repository (module doc)."""
    if not full.startswith("/"):
        return None
    full = full.rstrip("/") or "/"
    if is_block_device(full):
        return f"it writes the device {full}: what is on it is lost"
    if kind == "perm" and not tree:
        return None
    for r in roots:
        if r and _under(full, r):
            return None   # inside the repository or the agent's work root: the write rows decide (W01)
    for r in roots:
        if r and _under(r, full):
            return f"{full} holds this repository ({r})"
    if full == "/":
        return "it is the whole file system (/)"
    if kind == "truncate" and tree:
        kind = "delete"
    if _under(home, full) and home != "/":
        return f"it is {'your home directory' if full == home else 'above your home directory'} ({full})"
    if _under(full, home) and home != "/":
        rel = full[len(home) + 1:]
        top = rel.split("/", 1)[0]
        if top in HOME_TREES and (rel == top or top in HOME_TREES_UNDER) and kind != "truncate":
            return f"{full} holds your keys or your tools' settings (~/{top})"
        if kind == "delete" and tree and rel == top and not top.startswith("."):
            return f"{full} is a top-level folder of your home: your own files, in no repository"
        if kind == "delete" and tree and _holds_repository(full):
            return f"{full} holds another git repository, with whatever is not pushed"
        return None
    if full == "/home":
        return "it holds every user's home (/home)"
    if is_scratch(full):
        return f"{full} is the scratch space every agent of this machine shares" if full in SCRATCH else None
    name = _other_home(full, home)
    if name:
        return f"it is in the home of another user ({name})"
    for d in SYSTEM_DIRS:
        if _under(full, d):
            if kind == "truncate" and d in ("/proc", "/sys", "/run", "/dev"):
                return None   # a write to /proc/sys/... sets the kernel; not a file that is lost
            if kind == "perm" and d in ("/proc", "/sys"):
                return None
            return f"{full} is in a system directory ({d})" if full != d else f"{full} is a system directory"
    if (tree or kind == "delete") and full in mount_points():
        return f"{full} is a mount point"
    if kind == "delete" and tree and _holds_repository(full):
        return f"{full} holds another git repository, with whatever is not pushed"
    return None


def _holds_repository(full: str) -> bool:
    """A git checkout at ``full`` or right below it (a `.git` entry on disk): another repository."""
    from swarmgate import lean_os as os
    if os.path.lexists(full + "/.git"):
        return True
    try:
        names = os.listdir(full)
    except OSError:
        return False
    return any(os.path.lexists(f"{full}/{n}/.git") for n in names[:200])


def _other_home(full: str, home: str) -> str | None:
    """The other user whose home ``full`` is in (/home/NAME or /root), or None."""
    if full == "/home":
        return None   # the holder of every home: above one's own home or a system place
    if full.startswith("/home/"):
        top = "/home/" + full[6:].split("/", 1)[0]
        if not _under(home, top) and not _under(top, home):
            return top[6:]
    if _under(full, "/root") and not _under(home, "/root"):
        return "root"
    return None


def glob_parent(path: str) -> str | None:
    """For a path whose last part is a pattern (``/*``, ``~/.*``): the directory all of whose
    entries it names; None when the pattern is narrower (``/tmp/build-*``)."""
    k = path.rstrip("/").rfind("/")
    last = path.rstrip("/")[k + 1:]
    if last in ("*", ".*", "{*,.*}", "*.*", "[!.]*", ".[!.]*", "..?*") and k >= 0:
        return path[:k] or "/"
    return None
