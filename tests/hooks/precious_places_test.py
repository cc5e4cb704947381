"""hooks/precious_places.py: which places outside the repository a write destroys."""
from __future__ import annotations

import pytest

from swarmgate.hooks.precious_places import glob_parent, is_block_device, is_formatter, why_destroyed

HOME = "/home/ada"
ROOTS = ("/home/ada/src/repo",)


@pytest.mark.parametrize("full,kind,tree", [
    ("/", "delete", True), ("/", "perm", True), ("/home/ada", "delete", True), ("/home", "delete", True),
    ("/home/bob/notes", "delete", False), ("/usr/lib/python3", "delete", True), ("/etc/hosts", "truncate", False),
    ("/etc", "perm", True), ("/home/ada/.ssh", "delete", True), ("/home/ada/.ssh/id_rsa", "delete", False),
    ("/home/ada/src", "delete", True), ("/tmp", "delete", True), ("/dev/sda", "copy", False),
    ("/dev/nvme0n1p2", "truncate", False), ("/root", "delete", True),
])
def test_destroyed(full, kind, tree):
    assert why_destroyed(full, kind, tree, home=HOME, roots=ROOTS)


@pytest.mark.parametrize("full,kind,tree", [
    ("/home/ada/src/repo/target", "delete", True), ("/tmp/build", "delete", True),
    ("/home/ada/.cache/pip", "delete", True), ("/proc/sys/vm/drop_caches", "truncate", False),
    ("/dev/null", "truncate", False), ("/etc/hosts", "perm", False), ("/home/ada/notes.txt", "truncate", False),
    ("/var/tmp/x", "delete", True), ("/dev/shm/q", "delete", False),
])
def test_not_destroyed(full, kind, tree):
    assert why_destroyed(full, kind, tree, home=HOME, roots=ROOTS) is None


def test_devices_and_formatters():
    assert is_block_device("/dev/sda1") and is_block_device("/dev/mapper/root")
    assert not is_block_device("/dev/null") and not is_block_device("/dev/fd/3") and not is_block_device("/tmp/x")
    assert is_formatter("mkfs.ext4") and is_formatter("wipefs") and not is_formatter("mkdir")


def test_glob_parent():
    assert glob_parent("/*") == "/" and glob_parent("/home/ada/.*") == "/home/ada"
    assert glob_parent("/tmp/build-*") is None


def test_home_folders_and_other_repositories(tmp_path):
    home = str(tmp_path / "home")
    other = tmp_path / "home" / "code" / "proj" / "other"   # under the home: /tmp itself is scratch
    (other / ".git").mkdir(parents=True)
    assert why_destroyed(f"{home}/Documents", "delete", True, home=home, roots=ROOTS)
    assert why_destroyed(f"{home}/.cache", "delete", True, home=home, roots=ROOTS) is None
    assert why_destroyed(f"{home}/Documents/old", "delete", True, home=home, roots=ROOTS) is None
    assert "another git repository" in why_destroyed(str(other), "delete", True, home=home, roots=ROOTS)
    assert "another git repository" in why_destroyed(str(other.parent), "delete", True, home=home, roots=ROOTS)
    assert why_destroyed(str(other.parent / "build"), "delete", True, home=home, roots=ROOTS) is None
