"""The ``layout`` marker: a test names the cgroup layouts it must pass on; the VM ones run in a test guest.

    @pytest.mark.layout("v1", "v2", "systemd")
    def test_x(sandbox): ...

- ``v1``: this host's cgroup v1 memory controller (the development machines);
- ``v2``: a fresh cgroup v2 hierarchy inside a guest kernel (no systemd);
- ``systemd``: systemd as PID 1 inside a guest kernel (cgroup v2, systemd owns the tree).

The guest is QEMU with Debian's kernel (KVM where a guest boots, else TCG), or user-mode Linux where
neither boots: tests/vm/backends.py chooses by a real boot, once per session.

A marked test is collected once per layout (``test_x[v1]``, ``test_x[v2]``, ...; the ``layout``
fixture gives the name). On the host, ``[v1]`` runs here as usual and every ``[v2]``/``[systemd]`` item
becomes a proxy: the first proxy of a layout boots ONE VM (tests/vm/machine.py) that runs every selected
case of that layout with pytest, and each proxy then reports its own case's outcome, failure text and
captured output as a pytest result here. Inside the VM (SWARMGATE_VM_LAYOUT, set by tests/vm/guest.py)
only that layout's cases run, and every phase's report is appended to SWARMGATE_VM_RESULTS.

No VM here (no backend installed, not root), or a VM that did not boot (it ended or stalled before its
guest started): the proxies skip with the reason, and fail instead under
SWARMGATE_REQUIRE_REAL_PARTS=1. A VM that booted and then failed fails its cases in both modes.

Bounds (seconds; a loaded machine slows the guest, it does not stop it reporting):
SWARMGATE_VM_STALL (default 1200): a VM whose guest reported nothing new for that long is killed;
each case inside has two thirds of it (pytest-timeout), so one hung case fails alone first.
SWARMGATE_VM_TIMEOUT (default 3600): the whole boot. SWARMGATE_VM_MEM: the guests' memory (1G).

The boots run in the background from the end of collection, the layouts side by side
(SWARMGATE_VM_PARALLEL=0: one after the other), and the proxies run last, so the host's own
tests never wait for a VM (see VmRuns).
"""
from __future__ import annotations

import json
import os
import re
import threading

import pytest

from tests.vm import backends

LAYOUTS = ("v1", "v2", "systemd")
VM_LAYOUTS = ("v2", "systemd")
IN_VM = "SWARMGATE_VM_LAYOUT"
RESULTS = "SWARMGATE_VM_RESULTS"
PASSED_IN = ("SWARMGATE_REQUIRE_REAL_PARTS", "SWARMGATE_LEFTOVERS", "SWARMGATE_SELFTEST_VERBOSE")
MEMORY = {"v2": "1G", "systemd": "1G"}
_runs_key = pytest.StashKey["VmRuns"]()


def _seconds(name: str, default: float) -> float:
    try:
        value = float(os.environ.get(name, default))
    except ValueError:
        raise pytest.UsageError(f"{name}={os.environ[name]!r}: not a number of seconds") from None
    if value <= 0:
        raise pytest.UsageError(f"{name}={os.environ[name]!r}: must be above 0")
    return value


def timeout_s() -> float:
    """The bound of one whole boot."""
    return _seconds("SWARMGATE_VM_TIMEOUT", 3600.0)


def stall_s() -> float:
    """A VM whose guest reports nothing new for this long is killed."""
    return _seconds("SWARMGATE_VM_STALL", 1200.0)


def case_timeout_s() -> int:
    """pytest-timeout of each case inside the VM: below the stall bound, so a hung case fails alone."""
    return max(int(stall_s() * 2 / 3), 1)


def memory(layout: str) -> str:
    """The guest's memory (SWARMGATE_VM_MEM overrides it for every layout, e.g. 2G)."""
    value = os.environ.get("SWARMGATE_VM_MEM") or MEMORY[layout]
    if not re.fullmatch(r"[1-9][0-9]*[MG]", value):
        raise pytest.UsageError(f"SWARMGATE_VM_MEM={value!r}: a size like 1G or 768M")
    return value


def parallel() -> bool:
    """The layouts' boots side by side (each VM is one virtual CPU), else one after the other."""
    return os.environ.get("SWARMGATE_VM_PARALLEL", "1") != "0"


def wait_bound_s() -> float:
    """How long a proxy may wait for its layout's VM: every boot's bound when they queue."""
    return timeout_s() * (1 if parallel() else len(VM_LAYOUTS)) + 60


def inside_vm() -> str | None:
    """The layout of the VM this process runs in, or None on the host."""
    return os.environ.get(IN_VM) or None


def require(reason: str) -> None:
    pytest.skip(reason)


def pytest_configure(config):
    config.addinivalue_line("markers", "layout(*names): run the test on each named cgroup layout "
                                       "(v1 on this host; v2 and systemd inside a guest kernel)")
    config.stash[_runs_key] = VmRuns()


def pytest_generate_tests(metafunc):
    marker = metafunc.definition.get_closest_marker("layout")
    if marker is None:
        return
    names = list(marker.args)
    bad = [n for n in names if n not in LAYOUTS]
    if not names or bad:
        raise pytest.UsageError(f"{metafunc.definition.nodeid}: layout({', '.join(map(repr, names))}): "
                                f"name one or more of {', '.join(LAYOUTS)}")
    if "layout" not in metafunc.fixturenames:
        metafunc.fixturenames.append("layout")
    metafunc.parametrize("layout", names, ids=names)


def layout_of(item) -> str | None:
    callspec = getattr(item, "callspec", None)
    if callspec is None or item.get_closest_marker("layout") is None:
        return None
    return callspec.params.get("layout")


@pytest.hookimpl(trylast=True)  # after -k/-m deselection: only what runs gets a VM
def pytest_collection_modifyitems(session, config, items):
    here = inside_vm()
    keep, dropped, proxies = [], [], []
    for item in items:
        lay = layout_of(item)
        if here:
            (keep if lay == here else dropped).append(item)
        elif lay in VM_LAYOUTS:
            proxies.append(VmCase.from_original(item, lay))
        else:
            keep.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    # the proxies last: the host's own tests run while the VMs boot, and none waits for a VM
    items[:] = keep + proxies


class VmCaseFailed(Exception):
    """The case failed inside the VM (or the VM could not run it); the text says which and why."""


class VmCase(pytest.Item):
    """The host's stand-in for a case that runs inside a VM of its layout."""

    def __init__(self, *, layout: str, **kw) -> None:
        super().__init__(**kw)
        self.layout = layout

    @classmethod
    def from_original(cls, item, layout: str) -> VmCase:
        case = cls.from_parent(item.parent, name=item.name, layout=layout)
        case.own_markers = list(item.own_markers)
        case.keywords.update(item.keywords)
        case.add_marker(pytest.mark.timeout(wait_bound_s() + 60))  # it waits for its layout's VM
        return case

    def runtest(self) -> None:
        reason = backends.unavailable()
        if reason:
            require(reason)
        boot = self.config.stash[_runs_key].get(self.layout)
        report(self.nodeid, self.layout, boot)

    def repr_failure(self, excinfo, style=None):
        if excinfo.errisinstance(VmCaseFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, None, f"{self.name} (inside a {self.layout} guest)"


class VmRuns:
    """One boot per layout per test session.

    The boots start in background threads as soon as collection is done, one thread per layout
    (SWARMGATE_VM_PARALLEL=0: one thread, the layouts one after the other), so the VMs' minutes
    overlap the host's own tests; a proxy waits only for its layout's boot.
    SWARMGATE_VM_BACKGROUND=0 boots when the first proxy of a layout runs instead.
    """

    def __init__(self) -> None:
        self.boots: dict = {}
        self.done: dict[str, threading.Event] = {}
        self.plan: dict[str, list[str]] = {}
        self.cancel = threading.Event()
        self.threads: list[threading.Thread] = []
        self.errors: dict[str, str] = {}

    def prepare(self, items) -> None:
        self.plan = {}
        for item in items:
            if isinstance(item, VmCase):
                self.plan.setdefault(item.layout, []).append(item.nodeid)
        self.done = {layout: threading.Event() for layout in self.plan}

        if self.plan and os.environ.get("SWARMGATE_VM_BACKGROUND", "1") != "0" and backends.unavailable() is None:
            queues = [[layout] for layout in self.plan] if parallel() else [list(self.plan)]
            for queue in queues:
                t = threading.Thread(target=self._boot_all, args=(queue,), name=f"swarmgate-vm-{'-'.join(queue)}",
                                     daemon=True)
                self.threads.append(t)
                t.start()

    def _boot_all(self, layouts: list[str]) -> None:
        for layout in layouts:
            if self.cancel.is_set():
                self.errors[layout] = "the test session ended before this VM was booted"
                self.done[layout].set()
                continue
            self._boot(layout)

    def _boot(self, layout: str) -> None:
        env = {k: os.environ[k] for k in PASSED_IN if k in os.environ}
        try:
            self.boots[layout] = backends.boot(layout, self.plan[layout], timeout=timeout_s(), stall=stall_s(),
                                          mem=memory(layout), env=env, cancel=self.cancel,
                                          pytest_args=["--timeout", str(case_timeout_s())])
        except Exception as e:  # noqa: BLE001 - every case of the layout reports it
            self.errors[layout] = f"{type(e).__name__}: {e}"
        finally:
            self.done[layout].set()

    def get(self, layout: str):
        if not self.threads and not self.done[layout].is_set():
            self._boot(layout)
        if not self.done[layout].wait(wait_bound_s()):
            raise VmCaseFailed(f"the {layout} VM did not finish in time")
        if layout in self.errors:  # the VM was never booted: a set-up problem of this machine
            require(f"the {layout} VM could not be booted: {self.errors[layout]}")
        boot = self.boots[layout]
        if boot.left:
            raise VmCaseFailed(f"host processes of the {layout} VM survived the kill: {boot.left}")
        if not boot.started:  # it never came up: this machine cannot boot it, the tests were not run
            require(f"the {layout} VM did not boot: {boot.why_no_results()}\n{boot.tail(1500)}")
        return boot

    def stop(self) -> None:
        self.cancel.set()
        for t in self.threads:
            t.join(60)


def pytest_collection_finish(session):
    if not inside_vm():
        session.config.stash[_runs_key].prepare(session.items)


@pytest.hookimpl(tryfirst=True)  # before the session guard looks for processes left behind
def pytest_sessionfinish(session, exitstatus):
    runs = session.config.stash.get(_runs_key, None)
    if runs is not None:
        runs.stop()


def report(nodeid: str, layout: str, boot) -> None:
    """Turn the guest's records for ``nodeid`` into this item's outcome."""
    recs = [r for r in boot.records if r.get("nodeid") == nodeid]
    where = f"inside the {layout} VM"
    if not recs:
        collect = [r for r in boot.records if r.get("when") == "collect" and nodeid.startswith(r.get("nodeid", "?"))]
        detail = "\n".join(r.get("longrepr", "") for r in collect)
        raise VmCaseFailed(f"no result {where}: {boot.why_no_results()}\n{detail}\n{boot.tail()}")
    for r in recs:
        if r.get("outcome") == "failed":
            captured = "".join(f"\n----- {title} -----\n{text}" for title, text in r.get("sections", []))
            raise VmCaseFailed(f"[{r.get('when')} failed {where}]\n{r.get('longrepr', '')}{captured}")
    for r in recs:
        if r.get("outcome") == "skipped":
            pytest.skip(f"{where}: {r.get('reason') or r.get('longrepr', '')}")
    if not any(r.get("when") == "call" and r.get("outcome") == "passed" for r in recs):
        raise VmCaseFailed(f"no passing call phase {where}: {recs}")


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    runs = config.stash.get(_runs_key, None)
    if not runs or not runs.boots:
        return
    terminalreporter.section("test guests (cgroup v2, systemd)", sep="-")
    for line in backends.CHOOSER.trail:
        terminalreporter.line(f"backend {line}")
    for layout, boot in runs.boots.items():
        calls = [r for r in boot.records if r.get("when") == "call"]
        passed = sum(1 for r in calls if r.get("outcome") == "passed")
        skipped = sum(1 for r in boot.records if r.get("outcome") == "skipped")
        terminalreporter.line(f"{layout}: {len(calls)} case(s) run inside {boot.backend}, {passed} passed, "
                              f"{skipped} skipped; boot and run "
                              f"{boot.seconds:.1f}s" + (" (killed at its time bound)" if boot.timed_out else ""))
        slow = sorted(calls, key=lambda r: -float(r.get("duration") or 0))[:5]
        if slow and terminalreporter.config.getoption("durations", None) is not None:
            for r in slow:
                terminalreporter.line(f"  {float(r.get('duration') or 0):7.2f}s {r.get('nodeid')}")


# --- inside the VM: every phase's report goes to the results file for the host ---

def _append(rec: dict) -> None:
    path = os.environ.get(RESULTS)
    if not path or not inside_vm():
        return
    line = json.dumps(rec) + "\n"
    with open(path, "a", encoding="utf-8") as f:
        f.write(line)
        f.flush()
        os.fsync(f.fileno())  # the VM may be killed at any moment after this


def pytest_runtest_logreport(report):
    reason = ""
    if report.skipped and isinstance(report.longrepr, tuple):
        reason = str(report.longrepr[2]).removeprefix("Skipped: ")
    _append({"nodeid": report.nodeid, "when": report.when, "outcome": report.outcome,
             "longrepr": report.longreprtext if report.failed else "", "reason": reason,
             "duration": round(report.duration, 3), "sections": report.sections if report.failed else []})


def pytest_collectreport(report):
    if report.failed:
        _append({"nodeid": report.nodeid, "when": "collect", "outcome": "failed", "longrepr": report.longreprtext})
