"""The test-guest harness itself: what a guest offers, which backend boots, and that a boot leaves nothing."""
import errno
import gzip
import os
import subprocess
import sys

import pytest

from swarmgate.hosts import cgroups
from tests.vm import backends, machine, plugin, qemu

ROOT_FS = {"qemu-kvm": "9p", "qemu-tcg": "9p", "uml": "hostfs"}


def _mounts() -> dict[str, tuple[str, list[str]]]:
    out = {}
    with open("/proc/self/mounts") as f:
        for line in f:
            parts = line.split()
            out[parts[1]] = (parts[2], parts[3].split(","))
    return out


@pytest.mark.layout("v2", "systemd")
def test_the_guest_root_is_read_only_and_nothing_writes_bytecode(layout):
    for path in ("/sgvm-probe", os.path.join(machine.CHECKOUT, "sgvm-probe")):
        with pytest.raises(OSError) as e:
            open(path, "w")
        assert e.value.errno == errno.EROFS, path
    mounts = _mounts()
    fs = ROOT_FS[os.environ["SWARMGATE_VM_GUEST_BACKEND"]]
    assert mounts["/"][0] == fs and "ro" in mounts["/"][1]
    for path in ("/tmp", "/run"):
        assert mounts[path][0] == "tmpfs", path
    assert mounts["/run/sgvm/share"][0] == fs and "rw" in mounts["/run/sgvm/share"][1]  # the share
    assert mounts["/var/tmp"][0] == "ext4"  # the scratch disk: page cache that can be reclaimed
    assert sys.dont_write_bytecode and os.environ["PYTHONDONTWRITEBYTECODE"] == "1"


@pytest.mark.layout("v2", "systemd")
def test_the_guest_offers_its_layout(layout):
    assert plugin.inside_vm() == layout
    with open("/proc/1/comm") as f:
        pid1 = f.read().strip()
    assert pid1 == {"v2": "init.sh", "systemd": "systemd"}[layout]
    assert cgroups.detect() == {"v2": "cgroup2", "systemd": "systemd"}[layout]
    with open("/sys/fs/cgroup/cgroup.controllers") as f:
        assert "memory" in f.read().split()
    assert not os.path.isdir("/sys/fs/cgroup/memory")  # no v1 controller beside it


@pytest.mark.layout("v2", "systemd")
def test_a_qemu_guest_runs_debians_own_kernel_with_pressure_stall_information(layout):
    """What user-mode Linux lacks and systemd-oomd needs: PSI, system-wide and per cgroup."""
    backend = os.environ["SWARMGATE_VM_GUEST_BACKEND"]
    release = os.uname().release
    if backend == "uml":  # the fallback, where no QEMU guest boots: no PSI there (docs/testing.md)
        assert release.endswith("um") or "-um" in release, release
        assert not os.path.exists("/proc/pressure/memory")
        return
    assert release.endswith("-amd64"), release
    with open("/proc/pressure/memory") as f:
        assert f.read().startswith("some avg10=")
    assert os.path.exists("/sys/fs/cgroup/memory.pressure")


def test_a_vm_past_its_time_bound_is_killed_and_leaves_nothing_behind():
    reason = backends.unavailable()
    if reason:
        plugin.require(reason)
    boot = backends.boot("v2", [], timeout=60, init_only="sleep 600")
    assert "sgvm-guest: v2" in boot.console, boot.tail()  # it was up and sleeping when the bound hit
    assert boot.timed_out and boot.exit is None
    assert boot.left == []
    assert not any(os.path.exists(p) for p in boot.paths), boot.paths
    with pytest.raises(plugin.VmCaseFailed, match="past its time bound"):
        plugin.report("tests/x_test.py::test_y[v2]", "v2", boot)


def _boot(records, exit=0):
    b = machine.Boot()
    b.records, b.exit, b.started = records, exit, True
    return b


def test_each_case_reports_its_own_outcome_from_the_guest_records():
    nid = "tests/a_test.py::test_x[v2]"
    ok = [{"nodeid": nid, "when": w, "outcome": "passed"} for w in ("setup", "call", "teardown")]
    plugin.report(nid, "v2", _boot(ok))
    failed = ok[:1] + [{"nodeid": nid, "when": "call", "outcome": "failed", "longrepr": "assert 1 == 2",
                        "sections": [["Captured stdout call", "hello"]]}] + ok[2:]
    with pytest.raises(plugin.VmCaseFailed) as e:
        plugin.report(nid, "v2", _boot(failed))
    assert "call failed inside the v2 VM" in str(e.value) and "assert 1 == 2" in str(e.value)
    assert "hello" in str(e.value)
    skipped = [{"nodeid": nid, "when": "setup", "outcome": "skipped", "reason": "no earlyoom"}]
    with pytest.raises(pytest.skip.Exception, match="no earlyoom"):
        plugin.report(nid, "v2", _boot(skipped))
    with pytest.raises(plugin.VmCaseFailed, match="without reporting this test"):
        plugin.report(nid, "v2", _boot(ok[:0]))
    broken = [{"nodeid": "tests/a_test.py", "when": "collect", "outcome": "failed", "longrepr": "ImportError: x"}]
    with pytest.raises(plugin.VmCaseFailed, match="ImportError: x"):
        plugin.report(nid, "v2", _boot(broken, exit=2))


def test_a_vm_that_stops_reporting_is_killed_at_its_stall_bound():
    reason = backends.unavailable()
    if reason:
        plugin.require(reason)
    boot = backends.boot("v2", [], timeout=3600, stall=30, init_only="sleep 600")
    assert boot.started and boot.stalled, boot.tail()  # up, then silent: the stall bound, not the hour
    assert boot.left == [] and not any(os.path.exists(p) for p in boot.paths)
    with pytest.raises(plugin.VmCaseFailed, match="reported nothing new"):
        plugin.report("tests/x_test.py::test_y[v2]", "v2", boot)


def _inner_pytest(*args, **env):
    """This checkout's pytest on some of its own cases, in a child (no cache, no VM unless asked)."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("SWARMGATE_VM_")}
    full.pop("SWARMGATE_REQUIRE_REAL_PARTS", None)
    full.update(env)
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rsf", *args],
                          cwd=machine.CHECKOUT, env=full, capture_output=True, text=True, timeout=600)


def test_a_vm_that_cannot_boot_skips_with_the_reason_and_fails_where_real_parts_are_required():
    reason = backends.unavailable()
    if reason:
        plugin.require(reason)
    case = "tests/vm/vm_harness_test.py::test_the_guest_offers_its_layout[v2]"
    # too little memory for the guest (the probe has its own): QEMU's kernel panics out of memory before
    # its init, linux.uml exits at once ("Too few physical memory!")
    r = _inner_pytest(case, SWARMGATE_VM_MEM="12M")
    assert r.returncode == 0 and "1 skipped" in r.stdout, r.stdout + r.stderr
    assert "the v2 VM did not boot" in r.stdout and "before its guest started" in r.stdout, r.stdout
    r = _inner_pytest(case, SWARMGATE_VM_MEM="12M", SWARMGATE_REQUIRE_REAL_PARTS="1")
    assert r.returncode == 1 and "1 failed" in r.stdout, r.stdout + r.stderr
    assert "the v2 VM did not boot" in r.stdout and "SWARMGATE_REQUIRE_REAL_PARTS=1" in r.stdout, r.stdout


def test_the_proxies_run_after_every_host_case():
    r = _inner_pytest("--collect-only", "tests/vm/vm_harness_test.py", SWARMGATE_VM_BACKGROUND="0")
    ids = [line for line in r.stdout.splitlines() if "::" in line]
    in_vm = [i for i, nid in enumerate(ids) if nid.endswith(("[v2]", "[systemd]"))]
    assert in_vm and len(in_vm) < len(ids), r.stdout
    assert in_vm == list(range(len(ids) - len(in_vm), len(ids))), ids  # the host's own first, then the VM's


class _StandIn:
    """A backend whose "guest" is a host shell command: the chooser's order and bounds, without a VM."""

    def __init__(self, name: str, script: str) -> None:
        self.name, self.script = name, script

    def launch(self, job, dirs):
        console = os.path.join(dirs.private, "console.txt")
        return machine.Launch(argv=["sh", "-c", self.script.replace("SHARE", dirs.share)], env=dict(os.environ),
                              cwd=dirs.private, console=console)


def test_the_chooser_takes_the_first_backend_whose_guest_boots_and_keeps_why_the_others_did_not(monkeypatch):
    made = {"qemu-kvm": _StandIn("qemu-kvm", "echo hangs after Probing EDD; exec sleep 600"),
            "qemu-tcg": _StandIn("qemu-tcg", "touch SHARE/started; echo 0 > SHARE/exit"),
            "uml": _StandIn("uml", "echo never asked; exit 1")}
    monkeypatch.setattr(backends, "make", made.__getitem__)
    monkeypatch.setattr(backends, "why_not", lambda name: None)
    monkeypatch.setattr(backends, "PROBE_S", {"qemu-kvm": 3.0, "qemu-tcg": 60.0, "uml": 60.0})
    monkeypatch.delenv("SWARMGATE_VM_BACKEND", raising=False)
    chooser = backends.Chooser()
    assert chooser.choose() is made["qemu-tcg"]
    assert chooser.choose() is made["qemu-tcg"]  # probed once
    assert [line.split(":")[0] for line in chooser.trail] == ["qemu-kvm", "qemu-tcg"]
    assert "ran past its time bound" in chooser.trail[0] and "Probing EDD" in chooser.trail[0]
    # none boots: every boot of the session is told why, with each backend's reason
    made["qemu-tcg"] = _StandIn("qemu-tcg", "echo panic; exit 1")
    chooser = backends.Chooser()
    with pytest.raises(RuntimeError, match="no VM backend boots here") as e:
        chooser.choose()
    assert "qemu-tcg: no guest" in str(e.value) and "uml: no guest" in str(e.value) and "panic" in str(e.value)
    with pytest.raises(RuntimeError, match="no VM backend boots here"):
        chooser.choose()  # and is not probed again
    monkeypatch.setenv("SWARMGATE_VM_BACKEND", "uml,bochs")
    with pytest.raises(RuntimeError, match="SWARMGATE_VM_BACKEND='uml,bochs': name one or more of"):
        backends.wanted()
    monkeypatch.setenv("SWARMGATE_VM_BACKEND", "uml")
    assert backends.wanted() == ["uml"]


def test_the_qemu_initramfs_loads_every_driver_after_what_it_depends_on(tmp_path):
    found = qemu.kernel(qemu.kernel_dir())
    if found is None or qemu.busybox() is None:
        plugin.require(qemu.unavailable() or "no kernel")
    _image, mods, _release = found
    order = [name for name, _ in qemu.load_order(mods)]
    for name, path in qemu.load_order(mods):
        for dep in qemu._depends(path):
            assert dep in order[:order.index(name)] or dep not in order, (name, dep, order)
    assert {"9p", "9pnet_virtio", "virtio_pci", "virtio_blk", "ext4", "overlay"} <= set(order)
    path = tmp_path / "initrd.gz"
    qemu.make_initramfs(str(path), mods)
    listed = subprocess.run([qemu.busybox(), "cpio", "-t"], input=gzip.decompress(path.read_bytes()),
                            capture_output=True, timeout=60)
    names = listed.stdout.decode().split()
    assert "init" in names and "bin/busybox" in names and "modules/9p.ko" in names, listed.stderr
    with pytest.raises(RuntimeError, match="kernel module no_such_driver .* is neither built in nor in"):
        qemu.load_order(mods, wanted=("no_such_driver",))

