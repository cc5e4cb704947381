"""`run-with-memory-cap --selftest`: every protection of the runner proves it can turn red.

Real cgroups with small limits (total 256M) under a temporary slice, a
temporary state dir and a temporary repository whose .claude/swarmgate.toml
points at them; everything is removed afterwards (slice, run cgroups, the
processes the cells started, the temp trees).

Cells and the break switch that must turn each red:
- passthrough-exit-code             (none: sanity)
- own-cap-is-250                    (none: sanity)
- pushed-out-is-254                 misread-parent-oom-as-own
- slice-total-holds                 no-slice-total
- page-cache-does-not-block         no-page-cache-subtraction
- books-history-peak                book-cap-not-peak
- oom-score-adj                     no-oom-score-adj
- never-runs-uncapped               run-uncapped-on-setup-failure
- phantom-booking-reconciled        no-phantom-reconcile
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from swarmgate import cell_outcome as outcome
from swarmgate.hosts import history, ledger
from swarmgate.hosts.cgroups import get, run_name
from swarmgate.selftest import Cell, Suite

MiB = 1 << 20
TOTAL = "256M"
SWITCHES = {
    "misread-parent-oom-as-own": ["pushed-out-is-254"],
    "no-slice-total": ["slice-total-holds"],
    "no-page-cache-subtraction": ["page-cache-does-not-block"],
    "book-cap-not-peak": ["books-history-peak"],
    "no-oom-score-adj": ["oom-score-adj"],
    "run-uncapped-on-setup-failure": ["never-runs-uncapped"],
    "no-phantom-reconcile": ["phantom-booking-reconciled"],
}


def alloc(mib: int, hold_s: float = 0.0) -> list[str]:
    """A command that allocates and touches ``mib`` MiB (only ever run inside a capped cgroup)."""
    code = f"b=b'x'*({mib}*2**20)"
    if hold_s:
        code += f";import time;time.sleep({hold_s})"
    return ["python3", "-c", code]


def _fs_type(path: str) -> str:
    """Filesystem type of the mount holding ``path`` (longest mount-point prefix in /proc/mounts)."""
    best, kind = "", ""
    real = os.path.realpath(path)
    try:
        with open("/proc/mounts") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3 and (real == parts[1] or real.startswith(parts[1].rstrip("/") + "/")) \
                        and len(parts[1]) >= len(best):
                    best, kind = parts[1], parts[2]
    except OSError:
        pass
    return kind


def disk_backed_tmpdir() -> str:
    """A temp base whose files make reclaimable page cache: on tmpfs, file pages are shared
    memory and never reclaimable, which would make the page-cache cell meaningless."""
    for d in (tempfile.gettempdir(), "/var/tmp", os.getcwd()):
        if os.path.isdir(d) and os.access(d, os.W_OK) and _fs_type(d) not in ("tmpfs", "ramfs"):
            return d
    return tempfile.gettempdir()


class Sandbox:
    """A temp repo + state dir + slice name; ``run()`` calls the real runner in a subprocess."""

    def __init__(self, total: str = TOTAL, prefix: str = "sgself", backend: str = "auto") -> None:
        self.tmp = tempfile.mkdtemp(prefix=f"swarmgate-{prefix}-", dir=disk_backed_tmpdir())
        self.repo = os.path.join(self.tmp, "repo")
        self.state = os.path.join(self.tmp, "state")
        self.slice = f"{prefix}-{os.getpid()}-{int(time.time() * 1000) % 10**8}"
        os.makedirs(os.path.join(self.repo, ".claude"))
        os.makedirs(self.state)
        self.total = total
        self.backend_kind = backend  # the runner's [memory] backend (tests pin one per cgroup layout)
        self.write_config()
        self.started: list[subprocess.Popen] = []

    def write_config(self, extra: str = "") -> None:
        with open(os.path.join(self.repo, ".claude", "swarmgate.toml"), "w") as f:
            f.write(f'[memory]\ntotal = "{self.total}"\nslice = "{self.slice}"\nreport_every = 1\n'
                    f'backend = "{self.backend_kind}"\n{extra}')

    def env(self, **extra: str) -> dict:
        env = dict(os.environ)
        env["SWARMGATE_STATE_DIR"] = self.state
        env["CLAUDE_PROJECT_DIR"] = self.repo
        env.pop("SWARMGATE_CGROUP_ROOT", None)
        env["SWARMGATE_HOSTS_CONFIG"] = os.path.join(self.tmp, "hosts.toml")  # never the user's
        env.update(extra)
        return env

    def argv(self, args: list[str]) -> list[str]:
        return [sys.executable, "-m", "swarmgate.hosts.runner_cli", *args]

    def run(self, args: list[str], timeout: float = 60, input: bytes | None = None,
            **extra: str) -> subprocess.CompletedProcess:
        return subprocess.run(self.argv(args), cwd=self.repo, env=self.env(**extra), input=input,
                              capture_output=True, timeout=timeout)

    def start(self, args: list[str], **extra: str) -> subprocess.Popen:
        p = subprocess.Popen(self.argv(args), cwd=self.repo, env=self.env(**extra),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.started.append(p)
        return p

    # --- state helpers (the same files the runner uses) ---
    def _with_state(self, fn):
        old = os.environ.get("SWARMGATE_STATE_DIR")
        os.environ["SWARMGATE_STATE_DIR"] = self.state
        try:
            return fn()
        finally:
            if old is None:
                os.environ.pop("SWARMGATE_STATE_DIR", None)
            else:
                os.environ["SWARMGATE_STATE_DIR"] = old

    def set_history(self, label: str, entry: dict | None) -> None:
        def do():
            with ledger.lock():
                h = history.load()
                if entry is None:
                    h["labels"].pop(label, None)
                else:
                    h["labels"][label] = entry
                history.save(h)
        self._with_state(do)

    def history(self) -> dict:
        return self._with_state(history.load)["labels"]

    def ledger(self) -> dict:
        def do():
            with ledger.lock():
                return ledger.load()
        return self._with_state(do)

    def plant_booking(self, key: str, rec: dict) -> None:
        def do():
            with ledger.lock():
                d = ledger.load()
                d["bookings"][key] = rec
                ledger.save(d)
        self._with_state(do)

    def wait_booked(self, label: str, timeout: float = 60.0) -> bool:
        """Has a run labelled ``label`` been booked within ``timeout``? Generous: a runner takes 5-6 s to
        its booking in a TCG test guest, and a self-test cell that gave up early would be red for slowness,
        not for its reason; a booked run answers at once."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(b.get("label") == label for b in self.ledger()["bookings"].values()):
                return True
            time.sleep(0.05)
        return False

    def backend(self):
        return get(self.backend_kind)

    def stop_started(self) -> None:
        for p in self.started:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
            for s in (p.stdout, p.stderr):
                if s:
                    s.close()
        self.started.clear()

    def cleanup(self) -> None:
        self.stop_started()
        try:
            self.backend().remove_slice(self.slice)
        except Exception:  # noqa: BLE001 - no backend: nothing was created
            pass
        shutil.rmtree(self.tmp, ignore_errors=True)


def dead_pid() -> int:
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


# --- cells -----------------------------------------------------------------

def _report(name: str, r: subprocess.CompletedProcess | None, want: str) -> None:
    if r is not None and os.environ.get("SWARMGATE_SELFTEST_VERBOSE"):
        print(f"  [{name}] rc={r.returncode} want {want}: {r.stderr.decode(errors='replace').strip()[-300:]}",
              file=sys.stderr)


def _err(r) -> str:
    return " ".join(r.stderr.decode(errors="replace").strip().splitlines()[-2:])[-200:] if r is not None else ""


def cell_passthrough(sb: Sandbox):
    r = sb.run(["64M", "--", "python3", "-c", "import sys; print(sys.stdin.read().upper()); sys.exit(7)"],
               input=b"abc")
    _report("passthrough", r, "7")
    if r.returncode == 7 and r.stdout == b"ABC\n":
        return outcome.green("exit 7, stdin and stdout passed through")
    return outcome.broken(f"exit {r.returncode}, stdout {r.stdout[:40]!r}: {_err(r)}")


def cell_own_cap(sb: Sandbox):
    r = sb.run(["64M", "--label", "self-own", "--", *alloc(150)])
    _report("own-cap", r, "250")
    return outcome.by_exit(r.returncode, 250, (), "150M in a 64M cap", _err(r))


def cell_pushed_out(sb: Sandbox):
    """Admitted on a too-low history (32M) with a cap above the total: the slice fills and the kernel
    picks it: 254 and the label marked (green), or taken for its own cap, 250 (red)."""
    sb.set_history("self-gambler", {"peak": 32 * MiB, "peaks": [32 * MiB], "runs": 1})
    r = sb.run(["400M", "--label", "self-gambler", "--", *alloc(300)])
    _report("pushed-out", r, "254")
    marked = bool(sb.history().get("self-gambler", {}).get("pushed_out"))
    if r.returncode == 254 and not marked:
        return outcome.broken("254 but the label was not marked to book its cap next time")
    return outcome.by_exit(r.returncode, 254, 250, "a run pushed out by the total", _err(r))


def cell_slice_total(sb: Sandbox):
    """300M in a 400M cap under a 256M total: killed (250/254, green), or it got its 300M (0, red)."""
    sb.set_history("self-total", {"peak": 32 * MiB, "peaks": [32 * MiB], "runs": 1})
    r = sb.run(["400M", "--label", "self-total", "--", *alloc(300)])
    _report("slice-total", r, "250/254")
    return outcome.by_exit(r.returncode, (250, 254), 0, "300M under a 256M total", _err(r))


def cell_page_cache(sb: Sandbox):
    """After a run wrote 200M of files, a 128M run fits at once (0, green), or the page cache left
    in the slice is counted as use and it gets no turn (252, red)."""
    path = os.path.join(sb.tmp, "cache.bin")
    try:
        w = sb.run(["240M", "--label", "self-writer", "--", "python3", "-c",
                    f"f=open({path!r},'wb')\nfor _ in range(200): f.write(bytes(2**20))\nf.close()"])
        if w.returncode != 0:
            _report("page-cache writer", w, "0")
            return outcome.broken(f"the writer run exited {w.returncode}: {_err(w)}")
        sb.set_history("self-after-cache", None)  # no history: it books its full 128M cap
        r = sb.run(["128M", "--wait", "0", "--label", "self-after-cache", "--", "true"])
        _report("page-cache", r, "0")
        return outcome.by_exit(r.returncode, 0, 252, "a 128M run after 200M of page cache", _err(r))
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass


def cell_books_peak(sb: Sandbox):
    """A 200M-cap run whose history peak is 16M, beside a 160M holder: admitted on its peak (0, green),
    or it books its cap and gets no turn (252, red)."""
    sb.set_history("self-light", {"peak": 16 * MiB, "peaks": [16 * MiB], "runs": 1})
    sb.set_history("self-holder", None)
    sb.start(["160M", "--label", "self-holder", "--", "sleep", "30"])
    try:
        if not sb.wait_booked("self-holder"):
            return outcome.broken("the 160M holder was never booked")
        r = sb.run(["200M", "--wait", "0", "--label", "self-light", "--", "true"])
        _report("books-peak", r, "0")
        return outcome.by_exit(r.returncode, 0, 252, "a run with a 16M history beside a 160M holder", _err(r))
    finally:
        sb.stop_started()


def cell_oom_score_adj(sb: Sandbox):
    """500 for a history admission, 0 for a cap admission, 1000 unbounded (green); all the caller's
    own value (red: the wrapper set nothing)."""
    show = ["python3", "-c", "print(open('/proc/self/oom_score_adj').read().strip())"]
    sb.set_history("self-adj-hist", {"peak": 16 * MiB, "peaks": [16 * MiB], "runs": 1})
    sb.set_history("self-adj-cap", None)
    got = []
    for args in (["64M", "--label", "self-adj-hist"], ["64M", "--label", "self-adj-cap"],
                 ["64M", "--unbounded", "--label", "self-adj-unb"]):
        r = sb.run([*args, "--", *show])
        got.append(r.stdout.decode().strip())
    if os.environ.get("SWARMGATE_SELFTEST_VERBOSE"):
        print(f"  [oom-score-adj] {got}", file=sys.stderr)
    with open("/proc/self/oom_score_adj") as f:
        inherited = f.read().strip()
    if got == ["500", "0", "1000"]:
        return outcome.green()
    if got == [inherited] * 3:
        return outcome.red(f"every run kept the caller's oom_score_adj {inherited}")
    return outcome.broken(f"oom_score_adj {got}: neither the admission's values nor the inherited {inherited}")


def cell_never_uncapped(sb: Sandbox):
    """A cgroup root that is not a cgroup: 251 and nothing ran (green), or it ran uncapped (red)."""
    marker = os.path.join(sb.tmp, "ran-uncapped")
    not_a_cgroup = os.path.join(sb.tmp, "not-a-cgroup")
    os.makedirs(not_a_cgroup, exist_ok=True)
    r = sb.run(["64M", "--", "touch", marker], SWARMGATE_CGROUP_ROOT=not_a_cgroup)
    _report("never-uncapped", r, "251")
    ran = os.path.exists(marker)
    if ran:
        os.unlink(marker)
        return outcome.red(f"the command ran uncapped (exit {r.returncode})")
    if r.returncode == 251:
        return outcome.green("251, nothing ran")
    return outcome.broken(f"exit {r.returncode} and nothing ran: {_err(r)}")


def orphan_run(backend, slice_name: str, name: str) -> tuple[str, subprocess.Popen]:
    """A process left in a run cgroup whose wrapper is dead (what a SIGKILLed wrapper leaves behind):
    (the cgroup's path, the process). Under systemd only systemd-run makes a scope."""
    path = backend.run_path(slice_name, name)
    if getattr(backend, "transient_runs", False):
        orphan = subprocess.Popen([backend.SYSTEMD_RUN, "--scope", "--quiet", f"--unit={backend.scope_unit(name)}",
                                   f"--slice={backend.slice_unit(slice_name)}", "--", "sleep", "60"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while orphan.pid not in backend.pids(path) and orphan.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        return path, orphan
    backend.create_run(slice_name, name, 64 * MiB)
    orphan = subprocess.Popen(["sleep", "60"])
    backend.add_pid(path, orphan.pid)
    return path, orphan


def cell_phantom(sb: Sandbox):
    """A booking and a run cgroup left by a dead wrapper (with a live process inside): dropped, the
    cgroup emptied and removed, and a 128M run admitted (green); or the phantom still holds its
    200M and the run gets no turn (252, red)."""
    backend = sb.backend()
    backend.ensure_slice(sb.slice, None)
    pid = dead_pid()

    stale, orphan = orphan_run(backend, sb.slice, run_name(pid, 1))
    try:
        sb.plant_booking(f"{pid}-1", {"label": "self-phantom", "cap": 200 * MiB, "booked": 200 * MiB,
                                      "basis": "cap", "pid": pid, "start": 1, "cgroup": stale,
                                      "since": time.time()})
        sb.set_history("self-after-phantom", None)  # no history: it books its full 128M cap
        r = sb.run(["128M", "--wait", "0", "--label", "self-after-phantom", "--", "true"])
        _report("phantom", r, "0")
        gone = not os.path.exists(stale)
        killed = orphan.poll() is not None or _wait_dead(orphan)
        no_phantom = all(b.get("pid") != pid for b in sb.ledger()["bookings"].values())
        if r.returncode == 0 and gone and killed and no_phantom:
            return outcome.green()
        if r.returncode == 252 and not no_phantom:
            return outcome.red("the dead wrapper's booking still holds its 200M")
        return outcome.broken(f"exit {r.returncode}, cgroup gone {gone}, its process killed {killed}, "
                              f"booking dropped {no_phantom}: {_err(r)}")
    finally:
        if orphan.poll() is None:
            orphan.kill()
        orphan.wait()
        backend.kill_all(stale)
        backend.remove(stale)

        def drop():
            with ledger.lock():
                d = ledger.load()
                d["bookings"].pop(f"{pid}-1", None)
                ledger.save(d)
        sb._with_state(drop)


def _wait_dead(p: subprocess.Popen, timeout: float = 3.0) -> bool:
    try:
        p.wait(timeout)
        return True
    except subprocess.TimeoutExpired:
        return False


def suite():
    box: dict = {}

    def setup() -> None:
        box["sb"] = Sandbox()

    def teardown() -> None:
        box["sb"].cleanup()

    def cell(fn):
        return lambda: fn(box["sb"])

    cells = [
        Cell("passthrough-exit-code", cell(cell_passthrough)),
        Cell("own-cap-is-250", cell(cell_own_cap)),
        Cell("pushed-out-is-254", cell(cell_pushed_out)),
        Cell("slice-total-holds", cell(cell_slice_total)),
        Cell("page-cache-does-not-block", cell(cell_page_cache)),
        Cell("books-history-peak", cell(cell_books_peak)),
        Cell("oom-score-adj", cell(cell_oom_score_adj)),
        Cell("never-runs-uncapped", cell(cell_never_uncapped)),
        Cell("phantom-booking-reconciled", cell(cell_phantom)),
    ]
    return Suite("run-with-memory-cap", cells, dict(SWITCHES), setup=setup, teardown=teardown)


if __name__ == "__main__":
    from swarmgate.selftest_cli import main as _main

    sys.exit(_main(["run-with-memory-cap"]))
