"""One small interface to memory cgroups, with a v1, a v2 and a systemd implementation.

The runner needs the same handful of operations whatever the machine offers:
make the slice (the parent of every capped run) and give it the total as its
limit; make a run's cgroup with its cap; move a pid in; read the counters
(usage, peak, reclaimable page cache, OOM counts, failures); list, kill and
remove. ``detect()`` picks the implementation for ``--backend auto``.

How each one tells "hit its own cap" from "the parent was full" (FACTS.md):
- v1: ``memory.oom_control`` ``oom_kill`` counts on the victim's cgroup and
  does not propagate upward; the run's own ``failcnt`` rises only when its own
  limit is hit. The kernel line ``oom_memcg=...,task_memcg=...`` is the most
  reliable signal of all (read by the runner from /dev/kmsg).
- v2: ``memory.events.local``: ``oom`` counts OOMs where *this* cgroup's limit
  was hit, ``oom_kill`` counts kills of its processes.

What v2 adds, and the runner uses (docs/runner.md, "cgroup v2"): ``memory.oom.group = 1`` on
every run cgroup (an OOM kill takes the whole run, as kubelet does per container), ``cgroup.kill``
(one write kills the run's whole subtree, racing no fork), ``memory.peak`` for the history. And
the rules it follows: controllers are enabled top-down through ``cgroup.subtree_control``; a
cgroup other than the root that enables a controller for its children holds no processes itself
("no internal processes"); under systemd the runner writes only inside what systemd delegated.

Run-path module: standard library only, nothing heavy at import.
"""
from __future__ import annotations

import errno
import os
import signal
import time

V1_ROOT = "/sys/fs/cgroup/memory"
V2_ROOT = "/sys/fs/cgroup"
ROOT_ENV = "SWARMGATE_CGROUP_ROOT"  # must be a cgroup mount of the right type (tests, self-test)
CPU_ROOT_ENV = "SWARMGATE_CGROUP_CPU_ROOT"  # v1 only: the cpu controller's mount beside ROOT_ENV
RUN_PREFIX = "run-"
AGENT_PREFIX = "agent-"
UNLIMITED_V1 = 9223372036854771712
CPU_PERIOD_US = 100_000
LEAF = "leaf"  # v2: where a delegated cgroup's own processes go before it enables controllers below it
DELEGATE_XATTRS = ("trusted.delegate", "user.delegate")  # systemd >= 251 marks delegated cgroups


class CgroupError(Exception):
    """A cgroup could not be set up or read; the message says what and how to fix it."""


class Counters:
    """What one cgroup's files say at one moment (bytes / counts; None = not offered)."""

    __slots__ = ("usage", "peak", "reclaimable", "limit", "failcnt", "oom", "oom_kill")

    def __init__(self, usage: int = 0, peak: int | None = None, reclaimable: int = 0,
                 limit: int | None = None, failcnt: int = 0, oom: int | None = None,
                 oom_kill: int = 0) -> None:
        self.usage = usage
        self.peak = peak
        self.reclaimable = reclaimable
        self.limit = limit
        self.failcnt = failcnt
        self.oom = oom          # v2: OOMs where this cgroup's own limit was hit; v1: None
        self.oom_kill = oom_kill

    @property
    def non_reclaimable(self) -> int:
        return max(self.usage - self.reclaimable, 0)

    def as_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__slots__}


def valid_name(name: str) -> bool:
    return bool(name) and not name.startswith(".") and all(c.isalnum() or c in "-_." for c in name) \
        and len(name) <= 100


def run_name(pid: int, start: int | None) -> str:
    """The run cgroup's name carries its owner, so a dead owner's cgroup is found without the ledger."""
    return f"{RUN_PREFIX}{pid}-{start or 0}"


def owner_of(name: str) -> tuple[int, int | None] | None:
    """(pid, start) from a run cgroup's name, or None when it is not one of ours."""
    if not name.startswith(RUN_PREFIX):
        return None
    parts = name[len(RUN_PREFIX):].split("-")
    if len(parts) < 2 or not parts[0].isdigit() or not parts[1].isdigit():
        return None
    return int(parts[0]), (int(parts[1]) or None)


def agent_name(owner_pid: int, owner_start: int | None, agent_id: str) -> str:
    """An agent cgroup's name carries its session process (owner) and the agent's id, so a dead
    session's agent cgroups are found without the ledger, like dead wrappers' runs."""
    return f"{AGENT_PREFIX}{owner_pid}-{owner_start or 0}-{agent_part(agent_id)}"


def agent_part(agent_id: str) -> str:
    """The agent id as it appears in an agent cgroup's name."""
    return "".join(c for c in agent_id if c.isalnum() or c in "_")[:48] or "x"


def agent_owner(name: str) -> tuple[int, int | None, str] | None:
    """(session pid, start, agent id) from an agent cgroup's name, or None when it is not one."""
    if not name.startswith(AGENT_PREFIX):
        return None
    parts = name[len(AGENT_PREFIX):].split("-", 2)
    if len(parts) != 3 or not parts[0].isdigit() or not parts[1].isdigit() or not parts[2]:
        return None
    return int(parts[0]), (int(parts[1]) or None), parts[2]


class AgentCgroup:
    """What ``create_agent`` made: every cgroup directory a process must join (the memory one
    first), and what could not be limited (a line for SessionStart and doctor)."""

    __slots__ = ("name", "paths", "memory_path", "cpu_limited", "note")

    def __init__(self, name: str, paths: list[str], cpu_limited: bool, note: str = "") -> None:
        self.name = name
        self.paths = list(paths)
        self.memory_path = self.paths[0]
        self.cpu_limited = cpu_limited
        self.note = note


def _read(path: str) -> str:
    with open(path) as f:
        return f.read()


def _read_int(path: str, default: int | None = 0) -> int | None:
    try:
        text = _read(path).strip()
    except OSError:
        return default
    if text == "max":
        return None
    try:
        return int(text)
    except ValueError:
        return default


def _write(path: str, value: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        os.write(fd, value.encode())
    finally:
        os.close(fd)


def _keyed(path: str) -> dict[str, int]:
    out: dict[str, int] = {}
    try:
        text = _read(path)
    except OSError:
        return out
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2:
            try:
                out[parts[0]] = int(parts[1])
            except ValueError:
                pass
    return out


def mounts() -> list[tuple[str, str, list[str]]]:
    """(mount point, fs type, options) of every cgroup mount of this process."""
    out = []
    try:
        text = _read("/proc/self/mounts")
    except OSError:
        return out
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[2] in ("cgroup", "cgroup2"):
            out.append((parts[1].replace("\\040", " "), parts[2], parts[3].split(",")))
    return out


class Backend:
    """The interface. Paths are absolute directories of the cgroup filesystem."""

    name = "?"
    root = ""   # where the slice goes
    mount = ""  # the hierarchy's mount point, when it differs from root (paths in /proc and the kernel log)

    def hierarchy_root(self) -> str:
        """The mount point that /proc/<pid>/cgroup and the kernel's OOM lines are relative to."""
        return self.mount or self.root

    # --- slice ---
    def slice_path(self, slice_name: str) -> str:
        return os.path.join(self.root, slice_name)

    def ensure_slice(self, slice_name: str, total: int | None) -> str:
        """Create the slice (if absent) and set its limit to ``total`` (None: unlimited)."""
        raise NotImplementedError

    # --- runs ---
    def run_path(self, slice_name: str, name: str) -> str:
        return os.path.join(self.slice_path(slice_name), name)

    def create_run(self, slice_name: str, name: str, cap: int) -> str:
        raise NotImplementedError

    def name_of(self, path: str) -> str:
        """The run's name (``run-<pid>-<start>``) from its cgroup path: ``run_path`` inverted."""
        return os.path.basename(path)

    def unit_of(self, path: str) -> str | None:
        """The systemd unit that is this run (its journal names it), or None."""
        return None

    def command(self, slice_name: str, name: str, cap: int, argv: list[str]) -> list[str]:
        """The argv that actually runs (systemd wraps it; the others run it as is)."""
        return list(argv)

    def add_pid(self, path: str, pid: int) -> None:
        _write(os.path.join(path, "cgroup.procs"), str(pid))

    def counters(self, path: str) -> Counters:
        raise NotImplementedError

    def reclaim(self, path: str) -> bool:
        """Ask the kernel to reclaim what an idle cgroup still has charged (page cache, and the
        kernel's caches of ended runs: dentries, inodes) so leftovers never cost a turn. True when
        it was asked; False where this kernel or layout offers no way."""
        return False

    def pids(self, path: str) -> list[int]:
        try:
            text = _read(os.path.join(path, "cgroup.procs"))
        except OSError:
            return []
        return [int(x) for x in text.split() if x.isdigit()]

    def subtree(self, path: str) -> list[str]:
        """The cgroup and every cgroup below it (a command may make its own), deepest last."""
        out = []
        for dirpath, _dirnames, _ in os.walk(path):
            out.append(dirpath)
        return out

    def tree_pids(self, path: str) -> list[int]:
        return [pid for p in self.subtree(path) for pid in self.pids(p)]

    def kill_all(self, path: str, sig: int = signal.SIGKILL, settle_s: float = 2.0) -> bool:
        """Send ``sig`` to every process in the cgroup and below; with SIGKILL, repeat until empty."""
        deadline = time.monotonic() + settle_s
        while True:
            pids = self.tree_pids(path)
            if not pids:
                return True
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            if sig != signal.SIGKILL:
                return False
            if time.monotonic() > deadline:
                return not self.tree_pids(path)
            time.sleep(0.01)

    def remove(self, path: str, timeout_s: float = 2.0) -> bool:
        """rmdir the cgroup and any below it (retrying while the last processes are reaped)."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                for p in reversed(self.subtree(path)):
                    os.rmdir(p)
                return True
            except FileNotFoundError:
                if not os.path.isdir(path):
                    return True
            except OSError:
                pass
            if time.monotonic() > deadline:
                return False
            self.kill_all(path, signal.SIGKILL, settle_s=0.2)
            time.sleep(0.02)

    # --- runs inside runs ---
    def current(self) -> str | None:
        """This process's cgroup in this hierarchy (absolute path), or None."""
        try:
            text = _read("/proc/self/cgroup")
        except OSError:
            return None
        for line in text.splitlines():
            _, controllers, rel = line.split(":", 2)
            if self._mine(controllers):
                return os.path.normpath(self.hierarchy_root() + "/" + rel)
        return None

    def _mine(self, controllers: str) -> bool:
        return controllers == ""

    def enclosing_run(self, slice_name: str) -> str | None:
        """The run cgroup this process already sits in (a capped run calling the runner), or None."""
        cur = self.current()
        base = self.slice_path(slice_name) + "/"
        if not cur or not cur.startswith(base):
            return None
        first = cur[len(base):].split("/", 1)[0]
        return base + first if first in [self._dirname(n) for n in self.runs(slice_name)] else None

    def _dirname(self, run: str) -> str:
        return os.path.basename(self.run_path("x", run))

    def create_child(self, parent: str, name: str, cap: int) -> str:
        """A cgroup with ``cap`` inside ``parent`` (an enclosing run); CgroupError where impossible."""
        raise CgroupError(f"{self.name}: a cgroup inside a running run's cgroup is not possible here")

    def runs(self, slice_name: str) -> list[str]:
        """Names of the run cgroups under the slice."""
        return self._children(slice_name, RUN_PREFIX)

    def _children(self, slice_name: str, prefix: str, where: str | None = None) -> list[str]:
        """Names (as run_path takes them) of the cgroups under the slice (or ``where``) whose names start
        with ``prefix``."""
        try:
            names = os.listdir(where or self.slice_path(slice_name))
        except OSError:
            return []
        return sorted(n for n in names if n.startswith(prefix) and os.path.isdir(self.run_path(slice_name, n)))

    def remove_slice(self, slice_name: str) -> bool:
        """Kill, then remove every run and agent cgroup and the slice itself (tests and self-tests)."""
        ok = True
        for n in self.agents(slice_name):
            ok = self.remove_agent(slice_name, n) and ok
        for n in self.runs(slice_name):
            p = self.run_path(slice_name, n)
            self.kill_all(p)
            ok = self.remove(p) and ok
        return self.remove(self.slice_path(slice_name)) and ok

    def describe(self) -> str:
        return f"{self.name} at {self.root}"

    # --- agent cgroups (per-subagent containment) ---
    def agents_dir(self, slice_name: str) -> str:
        """Where the agent cgroups are: the slice (systemd: a scope it delegated, inside the slice)."""
        return self.slice_path(slice_name)

    def agents(self, slice_name: str) -> list[str]:
        """Names of the agent cgroups."""
        return self._children(slice_name, AGENT_PREFIX, self.agents_dir(slice_name))

    def agent_paths(self, slice_name: str, name: str) -> list[str]:
        """Every directory of the agent cgroup a process must join, the memory one first."""
        return [self.run_path(slice_name, name)]

    def create_agent(self, slice_name: str, name: str, cap: int, cpus: float | None) -> AgentCgroup:
        """An agent cgroup with a memory cap and (where a CPU controller is offered) a CPU limit
        of ``cpus`` CPUs. Idempotent: an existing one gets the limits again. CgroupError when the
        memory side cannot be made; a missing CPU controller is a note, not an error."""
        raise CgroupError(f"{self.name}: agent cgroups are not available with this backend")

    def remove_agent(self, slice_name: str, name: str, timeout_s: float = 2.0) -> bool:
        """Kill what is left in the agent cgroup and remove it (every hierarchy)."""
        ok = True
        for path in self.agent_paths(slice_name, name):
            if os.path.isdir(path):
                self.kill_all(path)
                ok = self.remove(path, timeout_s) and ok
        return ok

    def cpu_throttled(self, path: str) -> int | None:
        """How many periods the agent was throttled in (cpu.stat nr_throttled), None when unknown."""
        stat = _keyed(os.path.join(path, "cpu.stat"))
        return stat.get("nr_throttled")

    def enclosing_agent(self, slice_name: str) -> str | None:
        """The agent cgroup (memory side) this process sits in, or None."""
        cur = self.current()
        base = self.agents_dir(slice_name) + "/"
        if not cur or not cur.startswith(base):
            return None
        first = cur[len(base):].split("/", 1)[0]
        return base + first if first.startswith(AGENT_PREFIX) else None


class CgroupV1(Backend):
    """The v1 memory controller (this development machine)."""

    name = "cgroup1"

    def __init__(self, root: str = V1_ROOT) -> None:
        self.root = root

    def _mkdir(self, path: str) -> None:
        try:
            os.mkdir(path, 0o755)
        except FileExistsError:
            pass
        except OSError as e:
            raise CgroupError(f"cannot create the cgroup {path}: {e.strerror} "
                              f"(run as root on a machine with the v1 memory controller mounted at {self.root}, "
                              f"or choose another --backend)") from None

    def _set_limit(self, path: str, limit: int | None, swap: bool = True) -> None:
        value = str(limit) if limit is not None else "-1"
        mem = os.path.join(path, "memory.limit_in_bytes")
        memsw = os.path.join(path, "memory.memsw.limit_in_bytes")
        has_sw = swap and os.path.exists(memsw)
        try:
            # memsw must stay >= the memory limit: raise memsw first when growing, after when shrinking
            current = _read_int(mem, None)
            growing = limit is None or (current is not None and limit > current)
            if has_sw and growing:
                _write(memsw, value)
            _write(mem, value)
            if has_sw and not growing:
                _write(memsw, value)
        except OSError as e:
            raise CgroupError(f"cannot set the limit of {path} to {value}: {e.strerror}"
                              + (" (the cgroup already uses more than that; wait for its runs to end)"
                                 if e.errno == 16 else "")) from None

    def ensure_slice(self, slice_name: str, total: int | None) -> str:
        path = self.slice_path(slice_name)
        self._mkdir(path)
        current = _read_int(os.path.join(path, "memory.limit_in_bytes"), None)
        want = UNLIMITED_V1 if total is None else (total // 4096) * 4096
        if current != want:
            self._set_limit(path, total)
        if _read_int(os.path.join(path, "memory.use_hierarchy"), 1) != 1:
            raise CgroupError(f"{path}: memory.use_hierarchy is 0, so the slice's limit would not hold its runs")
        return path

    def create_run(self, slice_name: str, name: str, cap: int) -> str:
        path = self.run_path(slice_name, name)
        self._mkdir(path)
        try:
            self._set_limit(path, cap)
        except CgroupError:
            self.remove(path)
            raise
        return path

    def _mine(self, controllers: str) -> bool:
        return "memory" in controllers.split(",")

    def create_child(self, parent: str, name: str, cap: int) -> str:
        path = os.path.join(parent, name)
        self._mkdir(path)
        try:
            self._set_limit(path, cap)
        except CgroupError:
            self.remove(path)
            raise
        return path

    def cpu_root(self) -> str | None:
        """Where the v1 cpu controller is mounted (beside the memory one), or None."""
        if getattr(self, "_cpu_root", "") != "":
            return self._cpu_root
        root = None
        override = os.environ.get(CPU_ROOT_ENV)
        for point, fstype, opts in mounts():
            if fstype == "cgroup" and "cpu" in opts and (not override or point == os.path.realpath(override)):
                root = point
                break
        self._cpu_root = root
        return root

    def agent_paths(self, slice_name: str, name: str) -> list[str]:
        paths = [self.run_path(slice_name, name)]
        cpu = self.cpu_root()
        if cpu:
            paths.append(os.path.join(cpu, slice_name, name))
        return paths

    def create_agent(self, slice_name: str, name: str, cap: int, cpus: float | None) -> AgentCgroup:
        path = self.run_path(slice_name, name)
        self._mkdir(path)
        try:
            self._set_limit(path, cap)
        except CgroupError:
            self.remove(path)
            raise
        paths, note, limited = [path], "", False
        cpu = self.cpu_root()
        if cpu is None:
            note = "no cpu controller is mounted (cgroup v1): agents are not CPU-limited"
        elif cpus is not None:
            cpath = os.path.join(cpu, slice_name, name)
            try:
                self._mkdir(os.path.join(cpu, slice_name))
                self._mkdir(cpath)
                _write(os.path.join(cpath, "cpu.cfs_period_us"), str(CPU_PERIOD_US))
                _write(os.path.join(cpath, "cpu.cfs_quota_us"), str(max(1000, int(cpus * CPU_PERIOD_US))))
                paths.append(cpath)
                limited = True
            except (CgroupError, OSError) as e:
                note = f"cannot set a CPU limit in {cpath}: {getattr(e, 'strerror', None) or e}"
                if os.path.isdir(cpath):
                    self.remove(cpath)
        return AgentCgroup(name, paths, limited, note)

    def remove_slice(self, slice_name: str) -> bool:
        cpu = self.cpu_root()
        ok = super().remove_slice(slice_name)
        if cpu and os.path.isdir(os.path.join(cpu, slice_name)):
            ok = self.remove(os.path.join(cpu, slice_name)) and ok
        return ok

    def reclaim(self, path: str) -> bool:
        # v1 reclaims all it can from a cgroup with no process in it or below (EBUSY otherwise)
        try:
            _write(os.path.join(path, "memory.force_empty"), "0")
            return True
        except OSError:
            return False

    def counters(self, path: str) -> Counters:
        stat = _keyed(os.path.join(path, "memory.stat"))
        oomc = _keyed(os.path.join(path, "memory.oom_control"))
        usage = _read_int(os.path.join(path, "memory.usage_in_bytes"))
        return Counters(
            usage=usage or 0,
            peak=_read_int(os.path.join(path, "memory.max_usage_in_bytes"), None),
            reclaimable=stat.get("total_inactive_file", 0) + stat.get("total_active_file", 0),
            limit=_read_int(os.path.join(path, "memory.limit_in_bytes"), None),
            failcnt=_read_int(os.path.join(path, "memory.failcnt")) or 0,
            oom=None,
            oom_kill=oomc.get("oom_kill", 0),
        )


class CgroupV2(Backend):
    """The unified hierarchy with the memory controller.

    ``root`` is where the slice goes: the hierarchy's root on a machine no manager owns (a fresh
    hierarchy: the runner enables +memory top-down itself), or the cgroup systemd delegated to this
    process (``Delegate=yes``, see ``get``). A delegated cgroup usually holds processes (the unit's
    own); before it can enable a controller for its children they move into ``root/leaf``.
    """

    name = "cgroup2"

    def __init__(self, root: str = V2_ROOT, mount: str | None = None) -> None:
        self.root = root
        self.mount = mount or root

    def _enable_memory(self, parent: str) -> None:
        self._enable(parent, "memory")

    def _enable(self, parent: str, controller: str) -> None:
        ctl = os.path.join(parent, "cgroup.subtree_control")
        try:
            if controller in _read(ctl).split():
                return
            try:
                _write(ctl, "+" + controller)
            except OSError as e:
                # "no internal processes": only the root may hold processes and enable controllers below
                if e.errno != errno.EBUSY or os.path.normpath(parent) == os.path.normpath(self.hierarchy_root()):
                    raise
                self._processes_into_leaf(parent)
                _write(ctl, "+" + controller)
        except OSError as e:
            raise CgroupError(f"cannot enable the {controller} controller in {ctl}: {e.strerror}") from None

    def create_child(self, parent: str, name: str, cap: int) -> str:
        raise CgroupError("cgroup v2 gives no limit of its own to a cgroup inside a run that holds processes "
                          "(\"no internal processes\")")

    def _processes_into_leaf(self, parent: str) -> None:
        """Move every process of ``parent`` into ``parent/leaf`` (processes may be born meanwhile)."""
        leaf = os.path.join(parent, LEAF)
        self._mkdir(leaf)
        for _ in range(50):
            pids = self.pids(parent)
            if not pids:
                return
            for pid in pids:
                try:
                    _write(os.path.join(leaf, "cgroup.procs"), str(pid))
                except ProcessLookupError:
                    pass
        raise OSError(errno.EBUSY, f"processes keep appearing in {parent}")

    def _agents_parent(self, slice_name: str) -> tuple[str, list[str]]:
        """(the cgroup agent cgroups go in, the cgroups that must enable cpu for them, top first)."""
        slice_path = self.slice_path(slice_name)  # the caller made it (ensure_slice)
        return slice_path, [os.path.dirname(slice_path), slice_path]

    def create_agent(self, slice_name: str, name: str, cap: int, cpus: float | None) -> AgentCgroup:
        parent, cpu_chain = self._agents_parent(slice_name)
        note, limited = "", False
        if cpus is not None:
            try:
                for p in cpu_chain:
                    self._enable(p, "cpu")
            except CgroupError as e:
                note = f"agents are not CPU-limited: {e}"
        path = os.path.join(parent, name)
        self._mkdir(path)
        try:
            self._set(path, "memory.max", cap)
            self._set(path, "memory.swap.max", 0, optional=True)
        except CgroupError:
            self.remove(path)
            raise
        if cpus is not None and not note:
            try:
                _write(os.path.join(path, "cpu.max"), f"{max(1000, int(cpus * CPU_PERIOD_US))} {CPU_PERIOD_US}")
                limited = True
            except OSError as e:
                note = f"cannot write {os.path.join(path, 'cpu.max')}: {e.strerror}"
        return AgentCgroup(name, [path], limited, note)

    def _mkdir(self, path: str) -> None:
        try:
            os.mkdir(path, 0o755)
        except FileExistsError:
            pass
        except OSError as e:
            raise CgroupError(f"cannot create the cgroup {path}: {e.strerror} "
                              f"(needs root and the memory controller in {self.root})") from None

    def _set(self, path: str, fname: str, value: int | None, optional: bool = False) -> None:
        f = os.path.join(path, fname)
        if optional and not os.path.exists(f):
            return
        try:
            _write(f, "max" if value is None else str(value))
        except OSError as e:
            raise CgroupError(f"cannot write {value} to {f}: {e.strerror}") from None

    def ensure_slice(self, slice_name: str, total: int | None) -> str:
        path = self.slice_path(slice_name)
        self._enable_memory(os.path.dirname(path))
        self._mkdir(path)
        self._enable_memory(path)
        if _read_int(os.path.join(path, "memory.max"), -1) != total:
            self._set(path, "memory.max", total)
        return path

    def create_run(self, slice_name: str, name: str, cap: int) -> str:
        return self._capped(self.run_path(slice_name, name), cap)

    def _capped(self, path: str, cap: int) -> str:
        """A run's cgroup: its cap, no swap, and an OOM kill takes the whole run (memory.oom.group)."""
        self._mkdir(path)
        try:
            self._set(path, "memory.max", cap)
            self._set(path, "memory.swap.max", 0, optional=True)
            self._set(path, "memory.oom.group", 1, optional=True)
        except CgroupError:
            self.remove(path)
            raise
        return path

    def reclaim(self, path: str) -> bool:
        # memory.reclaim (5.19+) takes an amount; EAGAIN means it reclaimed less than asked, which
        # is the normal end here: what is left is in use
        usage = _read_int(os.path.join(path, "memory.current")) or 0
        try:
            _write(os.path.join(path, "memory.reclaim"), str(max(usage, 1 << 20)))
        except BlockingIOError:
            return True
        except OSError:
            return False
        return True

    def counters(self, path: str) -> Counters:
        stat = _keyed(os.path.join(path, "memory.stat"))
        events = _keyed(os.path.join(path, "memory.events.local"))
        if not events:
            events = _keyed(os.path.join(path, "memory.events"))
        return Counters(
            usage=_read_int(os.path.join(path, "memory.current")) or 0,
            peak=_read_int(os.path.join(path, "memory.peak"), None),
            reclaimable=stat.get("inactive_file", 0) + stat.get("active_file", 0),
            limit=_read_int(os.path.join(path, "memory.max"), None),
            failcnt=events.get("max", 0),
            oom=events.get("oom", 0),
            oom_kill=events.get("oom_kill", 0),
        )

    def kill_all(self, path: str, sig: int = signal.SIGKILL, settle_s: float = 2.0) -> bool:
        if sig == signal.SIGKILL and os.path.exists(os.path.join(path, "cgroup.kill")):
            try:
                _write(os.path.join(path, "cgroup.kill"), "1")
            except OSError:
                pass
        return super().kill_all(path, sig, settle_s)


def systemd_slice_dir(unit: str) -> str:
    """The cgroup path of a slice unit: a-b.slice lives in a.slice/a-b.slice."""
    base = unit[:-len(".slice")] if unit.endswith(".slice") else unit
    parts = base.split("-")
    return "/".join("-".join(parts[:i + 1]) + ".slice" for i in range(len(parts)))


class Systemd(CgroupV2):
    """systemd creates the scope and the slice; we read the counters through the v2 files.

    Live only where systemd is PID 1. Never start a systemd instance to test it on a machine
    where it is not (FACTS.md): the tests run it live inside a test guest (tests/vm, layout
    ``systemd``) and check the exact commands it issues everywhere.
    """

    name = "systemd"
    transient_runs = True  # systemd removes a scope's cgroup as soon as the run ends: the runner samples
    reports_back = True    # ... and the scope's shell reports the final counters on fd 3 (scope_report.py)
    SYSTEMD_RUN = "systemd-run"
    SYSTEMCTL = "systemctl"

    def __init__(self, root: str = V2_ROOT) -> None:
        super().__init__(root)

    def slice_unit(self, slice_name: str) -> str:
        return slice_name if slice_name.endswith(".slice") else slice_name + ".slice"

    def slice_path(self, slice_name: str) -> str:
        return os.path.join(self.root, systemd_slice_dir(self.slice_unit(slice_name)))

    def scope_unit(self, name: str) -> str:
        return f"swarmgate-{name}.scope"

    def unit_of(self, path: str) -> str | None:
        return os.path.basename(path)

    def name_of(self, path: str) -> str:
        base = os.path.basename(path)
        return base[len("swarmgate-"):-len(".scope")] if base.startswith("swarmgate-") and base.endswith(".scope") \
            else base

    def slice_command(self, slice_name: str, total: int | None) -> list[str]:
        return [self.SYSTEMCTL, "set-property", "--runtime", self.slice_unit(slice_name),
                f"MemoryMax={'infinity' if total is None else total}", "MemorySwapMax=0"]

    def command(self, slice_name: str, name: str, cap: int, argv: list[str]) -> list[str]:
        from swarmgate.hosts import scope_report

        return [self.SYSTEMD_RUN, "--scope", "--quiet", "--collect",
                f"--unit={self.scope_unit(name)}", f"--slice={self.slice_unit(slice_name)}",
                "-p", f"MemoryMax={cap}", "-p", "MemorySwapMax=0", "-p", "OOMPolicy=stop",
                "--", *scope_report.wrap(self.run_path(slice_name, name), argv)]

    def ensure_slice(self, slice_name: str, total: int | None) -> str:
        import subprocess

        cmd = self.slice_command(slice_name, total)
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise CgroupError(f"`{' '.join(cmd)}` failed: {e}") from None
        if r.returncode != 0:
            raise CgroupError(f"`{' '.join(cmd)}` failed ({r.returncode}): {r.stderr.strip()}")
        return self.slice_path(slice_name)

    def create_run(self, slice_name: str, name: str, cap: int) -> str:
        return self.run_path(slice_name, name)  # systemd-run creates the scope

    def add_pid(self, path: str, pid: int) -> None:
        return None  # systemd-run moves itself into the scope before it execs the command

    def remove(self, path: str, timeout_s: float = 2.0) -> bool:
        return super().remove(path, timeout_s) if os.path.isdir(path) else True

    def runs(self, slice_name: str) -> list[str]:
        try:
            names = os.listdir(self.slice_path(slice_name))
        except OSError:
            return []
        pre, suf = "swarmgate-" + RUN_PREFIX, ".scope"
        return sorted(n[len("swarmgate-"):-len(suf)] for n in names if n.startswith(pre) and n.endswith(suf))

    # --- agent cgroups: inside one scope per slice that systemd delegates to us ---
    # systemd owns every cgroup it made; agent cgroups (joined by a shell writing its own pid) may only
    # live in a delegated unit. The agents scope is a transient scope with Delegate=yes whose one
    # process, a `sleep infinity` keeper, moves into <scope>/leaf (no internal processes) so the scope
    # can enable memory and cpu for the agent cgroups beside it. It is stopped with its last agent.

    def agents_unit(self, slice_name: str) -> str:
        return f"swarmgate-agents-{self.slice_unit(slice_name)[:-len('.slice')]}.scope"

    def agents_dir(self, slice_name: str) -> str:
        return os.path.join(self.slice_path(slice_name), self.agents_unit(slice_name))

    def run_path(self, slice_name: str, name: str) -> str:
        if name.startswith(AGENT_PREFIX):
            return os.path.join(self.agents_dir(slice_name), name)
        return os.path.join(self.slice_path(slice_name), self.scope_unit(name))

    def _agents_parent(self, slice_name: str) -> tuple[str, list[str]]:
        scope = self._agents_scope(slice_name)
        self._enable(scope, "memory")  # its keeper moves into the leaf first
        return scope, [scope]

    def _agents_scope(self, slice_name: str) -> str:
        import subprocess

        path = self.agents_dir(slice_name)
        if os.path.isdir(path):
            return path
        cmd = [self.SYSTEMD_RUN, "--scope", "--quiet", f"--unit={self.agents_unit(slice_name)}",
               f"--slice={self.slice_unit(slice_name)}", "-p", "Delegate=yes", "--", "sleep", "infinity"]
        keeper = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  start_new_session=True)
        deadline = time.monotonic() + 30
        while keeper.poll() is None and time.monotonic() < deadline:
            if os.path.isdir(path) and keeper.pid in self.tree_pids(path):
                keeper.stderr.close()
                return path
            time.sleep(0.02)
        if keeper.poll() is None:
            keeper.kill()
        err = keeper.communicate()[1].decode(errors="replace").strip()
        raise CgroupError(f"`{' '.join(cmd)}` did not make the delegated scope for agent cgroups: "
                          f"{err or 'no scope after 30 s'}")

    def remove_agent(self, slice_name: str, name: str, timeout_s: float = 2.0) -> bool:
        ok = super().remove_agent(slice_name, name, timeout_s)
        if not self.agents(slice_name):
            ok = self._stop_agents_scope(slice_name) and ok
        return ok

    def _stop_agents_scope(self, slice_name: str) -> bool:
        import subprocess

        if not os.path.isdir(self.agents_dir(slice_name)):
            return True
        try:
            subprocess.run([self.SYSTEMCTL, "stop", self.agents_unit(slice_name)], capture_output=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return False
        deadline = time.monotonic() + 10
        while os.path.isdir(self.agents_dir(slice_name)) and time.monotonic() < deadline:
            time.sleep(0.02)
        return not os.path.isdir(self.agents_dir(slice_name))

    def remove_slice(self, slice_name: str) -> bool:
        ok = self._stop_agents_scope(slice_name)
        return super().remove_slice(slice_name) and ok


def systemd_is_pid1() -> bool:
    try:
        comm = _read("/proc/1/comm").strip()
    except OSError:
        return False
    return comm == "systemd" and os.path.isdir("/run/systemd/system")


def _root_override(kind: str) -> str | None:
    root = os.environ.get(ROOT_ENV)
    if not root:
        return None
    root = os.path.realpath(root)
    for point, fstype, opts in mounts():
        if point == root and ((kind == "cgroup1" and fstype == "cgroup" and "memory" in opts)
                              or (kind == "cgroup2" and fstype == "cgroup2")):
            return root
    raise CgroupError(f"{ROOT_ENV}={root} is not a {kind} memory cgroup mount")


def _v2_root_with_memory() -> str | None:
    for point, fstype, _ in mounts():
        if fstype == "cgroup2":
            try:
                if "memory" in _read(os.path.join(point, "cgroup.controllers")).split():
                    return point
            except OSError:
                continue
    return None


def delegated_cgroup(mount: str) -> str | None:
    """The nearest cgroup at or above this process's own that systemd delegated (it carries the
    trusted.delegate / user.delegate xattr, systemd >= 251), or None."""
    try:
        text = _read("/proc/self/cgroup")
    except OSError:
        return None
    rel = next((line.split(":", 2)[2] for line in text.splitlines() if line.startswith("0::")), None)
    if rel is None:
        return None
    path = os.path.normpath(mount + "/" + rel.strip())
    while path.startswith(mount.rstrip("/") + "/"):
        for name in DELEGATE_XATTRS:
            try:
                if os.getxattr(path, name).strip(b"\0 \n") in (b"1", b"yes", b"true"):
                    return path
            except OSError:
                continue
        path = os.path.dirname(path)
    return None


def _v1_memory_root() -> str | None:
    for point, fstype, opts in mounts():
        if fstype == "cgroup" and "memory" in opts:
            return point
    return None


def get(kind: str = "auto") -> Backend:
    """The backend for ``--backend KIND``; raise CgroupError naming what is missing."""
    if kind == "auto":
        kind = detect()
    if kind == "systemd":
        if not systemd_is_pid1():
            raise CgroupError("--backend systemd needs systemd as PID 1 (not the case here); "
                              "use --backend auto")
        root = _v2_root_with_memory()
        if root is None:
            raise CgroupError("--backend systemd: no cgroup2 mount with the memory controller "
                              "to read the counters from")
        return Systemd(root)
    if kind == "cgroup2":
        override = _root_override("cgroup2")
        if override:
            return CgroupV2(override)
        mount = _v2_root_with_memory()
        if mount is None:
            raise CgroupError("--backend cgroup2: no cgroup2 mount offers the memory controller here "
                              "(use --backend cgroup1 or auto)")
        base = delegated_cgroup(mount)
        if base is None and systemd_is_pid1():
            raise CgroupError(f"--backend cgroup2: systemd owns {mount} and delegated no cgroup to this process, "
                              f"so the runner may not write there: use --backend systemd (or auto), or run it "
                              f"inside a unit with Delegate=yes")
        return CgroupV2(base or mount, mount)
    if kind == "cgroup1":
        root = _root_override("cgroup1") or _v1_memory_root()
        if root is None:
            raise CgroupError("--backend cgroup1: the v1 memory controller is not mounted here "
                              "(use --backend cgroup2 or auto)")
        return CgroupV1(root)
    raise CgroupError(f"unknown --backend {kind!r} (auto, systemd, cgroup2, cgroup1)")


def detect() -> str:
    """systemd where it is PID 1 on a v2 memory hierarchy, else cgroup2, else cgroup1."""
    override = os.environ.get(ROOT_ENV)
    if override:
        for point, fstype, _opts in mounts():
            if point == os.path.realpath(override):
                return "cgroup2" if fstype == "cgroup2" else "cgroup1"
        return "cgroup1"  # _root_override then says what is wrong
    v2 = _v2_root_with_memory()
    if v2 and systemd_is_pid1():
        return "systemd"
    if v2:
        return "cgroup2"
    return "cgroup1"
