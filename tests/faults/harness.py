"""The fault harness (issue 26): every state write of every tool fails once, or is a crash point.

In the spirit of SQLite's I/O-error and crash tests and of CrashMonkey. For each tool that writes state,
a scenario is one ordinary run of it (a few real calls of the console tool, in real temp repos, real
cgroups, real processes). The harness

1. runs the scenario once counting its state writes (tests/faults/inject/sitecustomize.py numbers every
   call of swarmgate.statefile's write primitives, across all the processes of the run): K writes;
2. for every N in 1..K, in a fresh copy of the scenario: the Nth write fails (ENOSPC, EROFS, EIO, EDQUOT
   by N); then the Nth write is preceded by a SIGKILL of the process making it; then followed by one;
3. after each, makes the tool's next ordinary call without any fault, and checks the invariants:
   - no traceback, ever; a call that met a failed write says so (the errno's name in its output) and
     answers with one of the tool's documented codes;
   - runner: the ledger's bookings match the live run cgroups; every run ran inside a capped cgroup;
   - hooks: an answered call's decision is logged at most once, and exactly once unless its answer says
     the log could not be written; a dispatch whose claim or booking could not be recorded is refused;
   - records: no task a call reported added is lost;
   - gate-staged: the worktree, the index, the stash and the worktree list are unchanged;
   - every state file is valid JSON, or was moved aside with a line saying so.

`python -m tests.faults.harness [TOOL...]` prints the table (tool, writes in a run, injection points
run, violations) and exits non-zero on any violation; tests/faults/faults_test.py runs it.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

from swarmgate import decision_log
from swarmgate.hosts.runner_selftest import Sandbox
from tests import builders as build
from tests.agents.support import install_templates
from tests.conftest import GIT_IDENTITY

INJECT = str(Path(__file__).resolve().parent / "inject")
ROOT = str(Path(__file__).resolve().parents[2])
BIN = Path(sys.executable).parent
ERRNO_NAMES = ("ENOSPC", "EROFS", "EIO", "EDQUOT")
MODES = ("fail", "kill-before", "kill-after")
GOOD_SCRATCH_PROMPT = build.GOOD_PROMPT + "scratch: {scratch}\n"   # a dispatch that claims a scratch directory


class Call:
    """One call of a console tool and what came back."""

    def __init__(self, name: str, argv, *, stdin: str | None = None, ok: tuple = (0,),
                 cwd: str | None = None, env: dict | None = None, timeout: float = 60) -> None:
        self.name, self.argv, self.stdin, self.ok = name, argv, stdin, ok
        self.cwd, self.env, self.timeout = cwd, env or {}, timeout
        self.rc: int | None = None
        self.out = self.err = ""
        self.faulted = False   # the injected fault happened during this call

    def run(self, base_env: dict, fault: str | None, fault_dir: str) -> None:
        if callable(self.argv):   # made from what earlier calls printed (an id)
            self.argv = self.argv()
        env = {**base_env, **self.env}
        env.pop("SWARMGATE_FAULT", None)
        if fault:
            env["SWARMGATE_FAULT"] = fault
            env["SWARMGATE_FAULT_DIR"] = fault_dir
            env["PYTHONPATH"] = INJECT + os.pathsep + ROOT
        p = subprocess.run(self.argv, input=self.stdin, capture_output=True, text=True, cwd=self.cwd, env=env,
                           timeout=self.timeout)
        self.rc, self.out, self.err = p.returncode, p.stdout, p.stderr

    @property
    def text(self) -> str:
        return self.out + self.err


def count(fault_dir: str) -> int:
    try:
        return os.path.getsize(os.path.join(fault_dir, "counter"))
    except OSError:
        return 0


def trace(fault_dir: str) -> dict[int, str]:
    out = {}
    try:
        with open(os.path.join(fault_dir, "trace")) as f:
            for line in f:
                n, _pid, path = line.rstrip("\n").split("\t", 2)
                out[int(n)] = path
    except OSError:
        pass
    return out


def state_files_valid(*roots: str) -> list[str]:
    """Every .json under the roots parses (a quarantined copy, *.corrupt-*, is what was moved aside)."""
    bad = []
    for root in roots:
        for dirpath, _dirs, files in os.walk(root):
            for name in files:
                if not name.endswith(".json") or ".corrupt-" in name:
                    continue
                p = os.path.join(dirpath, name)
                try:
                    with open(p) as f:
                        json.load(f)
                except (OSError, ValueError) as e:
                    bad.append(f"state file {p} is not valid JSON ({e})")
    return bad


class Scenario:
    """One ordinary run of a tool (``calls``), its next ordinary call, and its invariants."""

    name = ""
    codes: tuple = (0,)   # the documented exit codes a call may answer with when a write fails

    def __init__(self, tmp: str) -> None:
        self.tmp = tmp
        self.state = os.path.join(tmp, "state")
        os.makedirs(self.state)
        self.home = os.path.join(tmp, "home")
        os.makedirs(self.home)
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("CLAUDE_PROJECT_DIR", "CLAUDE_ENV_FILE", "SWARMGATE_SESSION_ID", "SWARMGATE_HEAVY",
                                 "SWARMGATE_BREAK", "CLAUDE_CODE_SESSION_ID", "PYTHONPATH")}
        self.env.update(SWARMGATE_STATE_DIR=self.state, HOME=self.home,
                        SWARMGATE_HOSTS_CONFIG=os.path.join(tmp, "hosts.toml"), **GIT_IDENTITY)

    def calls(self) -> list[Call]:
        raise NotImplementedError

    def next_call(self) -> Call:
        raise NotImplementedError

    def check(self, calls: list[Call], nxt: Call, mode: str | None) -> list[str]:
        return self.next_ok(nxt)

    def next_ok(self, nxt: Call) -> list[str]:
        """The next ordinary call answered 0: nothing the faulted run left stops the tool."""
        return [] if nxt.rc == 0 else [f"the next {self.name} call ({nxt.name}): exit {nxt.rc}: {nxt.text[-300:]}"]

    def roots(self) -> list[str]:
        return [self.state]

    def cleanup(self) -> None:
        pass


def tool(name: str) -> str:
    return str(BIN / name)


# ------------------------------------------------------------------------------------------ scenarios

PROBE = ("import os, sys\n"
         "cg = [l.split(':', 2)[2].strip() for l in open('/proc/self/cgroup') if ':memory:' in l]\n"
         "lim = open('/sys/fs/cgroup/memory' + cg[0] + '/memory.limit_in_bytes').read().strip() if cg else ''\n"
         "open(sys.argv[1], 'a').write((cg[0] if cg else '-') + ' ' + lim + '\\n')\n")


class Runner(Scenario):
    name = "runner"
    codes = (0, 251)

    def __init__(self, tmp: str) -> None:
        super().__init__(tmp)
        self.sb = Sandbox(prefix="sgfault", backend="cgroup1")
        self.env.update(self.sb.env(), HOME=self.home)
        self.env.pop("PYTHONPATH", None)
        self.state = self.sb.state
        self.probe = os.path.join(tmp, "probe.py")
        Path(self.probe).write_text(PROBE)
        self.ran = os.path.join(tmp, "ran")

    def _run(self, label: str, *cmd: str) -> Call:
        return Call(label, [tool("run-with-memory-cap"), "32M", "--label", label, "--", *cmd], cwd=self.sb.repo,
                    ok=(0,))

    def calls(self) -> list[Call]:
        return [self._run("f1", sys.executable, self.probe, self.ran),
                self._run("f1", sys.executable, self.probe, self.ran)]

    def next_call(self) -> Call:
        return self._run("f2", sys.executable, self.probe, self.ran)

    def check(self, calls, nxt, mode):
        bad = []
        backend = self.sb.backend()
        bookings = self.sb.ledger()["bookings"]
        live = [r for r in backend.runs(self.sb.slice) if backend.pids(backend.run_path(self.sb.slice, r))]
        if bookings or live:
            bad.append(f"after the next call: bookings {sorted(bookings)} vs live run cgroups {live}")
        slice_path = "/" + os.path.relpath(backend.slice_path(self.sb.slice), "/sys/fs/cgroup/memory")
        try:
            lines = Path(self.ran).read_text().splitlines()
        except OSError:
            lines = []
        if mode is None and len(lines) != 3:   # the ordinary run ran its three probes (the check is not empty)
            bad.append(f"an ordinary run's probes: {lines}")
        for line in lines:
            cg, _, lim = line.partition(" ")
            if not cg.startswith(slice_path + "/") or not lim.isdigit() or int(lim) > 32 << 20:
                bad.append(f"a run ran outside a capped cgroup: {line!r}")
        return bad

    def cleanup(self) -> None:
        self.sb.cleanup()


HEAVY = ("SWARMGATE_HEAVY=user-request SWARMGATE_RUN_SCOPE='kind=full; target=workspace; range=all crates; "
         "reason=the fault harness heavy run' run-with-memory-cap 1G -- cargo test --workspace")


def _payload(event: str, repo: str, session: str, **kw) -> str:
    return json.dumps(build.payload(event, repo=repo, session=session, **kw))


class Hooks(Scenario):
    name = "hook events"

    def __init__(self, tmp: str) -> None:
        super().__init__(tmp)
        self.repo = str(build.git_repo(Path(tmp) / "repo"))
        install_templates(Path(self.repo))
        self.scratch = os.path.join(tmp, "scratch-1")
        self.env["CLAUDE_PROJECT_DIR"] = self.repo

    def _hook(self, name: str, event: str, payload: str) -> Call:
        return Call(name, [tool("swarmgate"), "hook", event], stdin=payload, cwd=self.repo)

    def calls(self) -> list[Call]:
        r, s = self.repo, "sess-f"
        sub = {"agent_id": "ag1", "agent_type": "implementer"}
        prompt = GOOD_SCRATCH_PROMPT.format(scratch=self.scratch)
        return [
            self._hook("start", "SessionStart", _payload("SessionStart", r, s, source="startup")),
            self._hook("dispatch", "PreToolUse", _payload("PreToolUse", r, s, tool="Agent", tool_input={
                "prompt": prompt, "description": "d", "subagent_type": "implementer"})),
            self._hook("substart", "SubagentStart", _payload("SubagentStart", r, s, **sub)),
            self._hook("bash", "PreToolUse", _payload("PreToolUse", r, s, tool="Bash",
                                                     tool_input={"command": "ls -la"}, **sub)),
            self._hook("post", "PostToolUse", _payload("PostToolUse", r, s, tool="Bash",
                                                      tool_input={"command": "ls -la"}, **sub)),
            self._hook("substop", "SubagentStop", _payload("SubagentStop", r, s, **sub)),
            self._hook("heavy", "PreToolUse", _payload("PreToolUse", r, s, tool="Bash",
                                                      tool_input={"command": HEAVY})),
            self._hook("stop", "Stop", _payload("Stop", r, s)),
        ]

    def next_call(self) -> Call:
        return self._hook("next", "PreToolUse", _payload("PreToolUse", self.repo, "sess-f", tool="Bash",
                                                         tool_input={"command": "git status"}))

    def roots(self):
        return [self.state, os.path.join(self.repo, ".swarmgate")]

    def check(self, calls, nxt, mode):
        bad = []
        log = decision_log.read(self.repo)
        keys = {"start": ("SessionStart", None, None), "dispatch": ("PreToolUse", "Agent", None),
                "substart": ("SubagentStart", None, "ag1"), "bash": ("PreToolUse", "Bash", "ag1"),
                "post": ("PostToolUse", "Bash", "ag1"), "substop": ("SubagentStop", None, "ag1"),
                "stop": ("Stop", None, None), "next": ("PreToolUse", "Bash", None),
                "heavy": ("PreToolUse", "Bash", None)}
        inputs = {"next": "git status", "bash": "ls -la", "heavy": HEAVY}
        for c in [*calls, nxt]:
            ev, tl, aid = keys[c.name]
            n = sum(1 for r in log if r.get("event") == ev and r.get("tool") == tl and r.get("agent_id") == aid
                    and (c.name not in inputs or r.get("input") == inputs[c.name][:300]))
            answered = c.rc == 0 and c.out.strip().startswith("{")
            said = "could not write the decision log" in c.out
            if n > 1:
                bad.append(f"{c.name}: its decision logged {n} times")
            elif answered and n == 0 and not said:
                bad.append(f"{c.name}: answered, but its decision is not in the log and the answer does not say so")
            if c.faulted and mode == "fail" and c.name in ("dispatch", "heavy") and answered:
                path = trace_path(c)
                if "decisions.jsonl" not in path and '"deny"' not in c.out:   # a claim, a booking, a grant
                    bad.append(f"{c.name}: {path} could not be written, yet it was allowed")
        if nxt.rc != 0 or '"deny"' in nxt.out:
            bad.append(f"the next ordinary call was not allowed: {nxt.out[-300:]} {nxt.err[-300:]}")
        return bad


def trace_path(c: Call) -> str:
    return getattr(c, "fault_path", "")


class Records(Scenario):
    name = "records"
    codes = (0, 251)

    def __init__(self, tmp: str) -> None:
        super().__init__(tmp)
        self.repo = str(build.git_repo(Path(tmp) / "repo"))
        install_templates(Path(self.repo))

    def _rec(self, name: str, *args: str) -> Call:
        return Call(name, [tool("swarmgate"), "records", "--repo", self.repo, *args], cwd=self.repo)

    def calls(self):
        return [self._rec("new", "new", "r1", "--goal", "ship it", "--exit", "tests green", "--session", "s1"),
                self._rec("add t1", "add-task", "r1", "t1", "-d", "first", "--batch", "1", "--inputs-ready", "yes"),
                self._rec("add t2", "add-task", "r1", "t2", "-d", "second", "--deps", "t1", "--batch", "2"),
                self._rec("verdict t1", "verdict", "r1", "t1", "close"),
                self._rec("update t2", "update", "r1", "t2", "-d", "second, reworded"),
                self._rec("add t3", "add-task", "r1", "t3", "-d", "third", "--batch", "2")]

    def next_call(self):
        return self._rec("validate", "validate")

    def roots(self):
        return [self.state, os.path.join(self.repo, ".swarmgate")]

    def check(self, calls, nxt, mode):
        bad = self.next_ok(nxt)
        cur = self._rec("current", "current")
        cur.run(self.env, None, "")
        text = cur.out
        for c in calls:
            if c.name.startswith("add ") and c.rc == 0:
                task = c.name.split()[1]
                if f"| {task} " not in _record_text(self.repo) and task not in text:
                    bad.append(f"task {task} was added (exit 0) and is lost")
        return bad


def _record_text(repo: str) -> str:
    out = []
    for p in Path(repo, "records").glob("*.md"):
        out.append(p.read_text())
    return "\n".join(out)


class Remind(Scenario):
    name = "remind"
    codes = (0, 251)

    def _r(self, name: str, *args: str) -> Call:
        return Call(name, [tool("remind"), *args, "--session", "sess-r"], cwd=self.tmp)

    def calls(self):
        self.set_b = self._r("set b", "20m", "beta", "reminder")
        cancel = Call("cancel b", lambda: [tool("remind"), "cancel", _reminder_id(self.set_b.out),
                                           "--session", "sess-r"], cwd=self.tmp)
        return [self._r("set a", "10m", "alpha", "reminder"), self.set_b, cancel, self._r("set c", "30m", "gamma"),
                self._r("list", "list")]

    def next_call(self):
        return self._r("list", "list")

    def check(self, calls, nxt, mode):
        bad = self.next_ok(nxt)
        set_a, set_b, cancel, set_c = calls[:4]
        for c, word in ((set_a, "alpha"), (set_b, "beta"), (set_c, "gamma")):
            if c.rc != 0:
                continue
            pending = any(word in line and "pending" in line for line in nxt.out.splitlines())
            if c is set_b and cancel.rc == 0:
                if pending:
                    bad.append(f"the reminder {word!r} was cancelled (exit 0) and is still pending")
            elif c is set_b and cancel.rc < 0:   # killed around its write: either state, but listed
                if word not in nxt.out:
                    bad.append(f"the reminder {word!r} is lost: {nxt.out[-300:]}")
            elif not pending:   # never cancelled, or its cancel failed (and said so)
                bad.append(f"the reminder {word!r} was set (exit 0) and is lost: {nxt.out[-300:]}")
        return bad


def _reminder_id(out: str) -> str:
    m = re.search(r"remind cancel (\S+?)`", out)
    return m.group(1) if m else "r-none"


class WorkDirOwner(Scenario):
    name = "work-dir-owner"
    codes = (0, 1, 251)

    def __init__(self, tmp: str) -> None:
        super().__init__(tmp)
        self.root = os.path.join(tmp, "work")
        os.makedirs(self.root)
        self.env["SWARMGATE_SESSION_ID"] = "sess-w"

    def _w(self, name: str, *args: str) -> Call:
        return Call(name, [tool("work-dir-owner"), *args], cwd=self.tmp)

    def calls(self):
        r = self.root
        return [self._w("claim w1", "claim", "w1", "--root", r, "--purpose", "a copy"),
                self._w("claim w2", "claim", "w2", "--root", r, "--purpose", "a build"),
                self._w("release w1", "release", "w1", "--root", r),
                self._w("clean", "clean", "--root", r)]

    def next_call(self):
        return self._w("list", "list", "--root", self.root, "--json")

    def roots(self):
        return [self.state, self.root]

    def check(self, calls, nxt, mode):
        if nxt.rc != 0:
            return self.next_ok(nxt)
        try:
            json.loads(nxt.out)
        except ValueError:
            return [f"work-dir-owner list --json is not JSON: {nxt.out[-200:]}"]
        return []


class WorkspaceLock(Scenario):
    name = "workspace-lock"
    codes = (0, 248, 251)

    def __init__(self, tmp: str) -> None:
        super().__init__(tmp)
        self.ran = os.path.join(tmp, "ran")

    def _l(self, name: str, *args: str) -> Call:
        return Call(name, [tool("workspace-lock"), *args], cwd=self.tmp, env={"SWARMGATE_SESSION_ID": "sess-l"})

    def calls(self):
        run = ["run", "--name", "merge", "--timeout", "5", "--", "sh", "-c", f"echo x >> {self.ran}"]
        wl = tool("workspace-lock")
        shell = Call("acquire+release", ["sh", "-c", f"{wl} acquire --name merge --timeout 5 && "
                                                     f"{wl} status --name merge && {wl} release --name merge"],
                     cwd=self.tmp, env={"SWARMGATE_SESSION_ID": "sess-l"})
        return [self._l("run 1", *run), shell, self._l("run 2", *run), self._l("status", "status", "--name", "merge")]

    def next_call(self):
        return self._l("next run", "run", "--name", "merge", "--timeout", "5", "--", "true")


class DetachedRun(Scenario):
    name = "detached-run"
    codes = (0, 3, 247, 251)

    def __init__(self, tmp: str) -> None:
        super().__init__(tmp)
        self.env["SWARMGATE_DETACHED_BACKEND"] = "process"

    def _d(self, name: str, *args: str, ok=(0,)) -> Call:
        return Call(name, [tool("detached-run"), *args], cwd=self.tmp, ok=ok)

    def calls(self):
        return [self._d("start", "start", "--label", "j1", "--", "sh", "-c", "echo hi; sleep 1; exit 3"),
                self._d("wait", "wait", "j1", "--timeout", "20", ok=(3,)), self._d("status", "status", "j1")]

    def next_call(self):
        return self._d("status", "status")

    def check(self, calls, nxt, mode):
        bad = self.next_ok(nxt)
        named = set()
        for rec_path in Path(self.state, "detached").glob("*/run.json"):
            rec = json.loads(rec_path.read_text())
            named |= {rec.get("pid"), rec.get("supervisor_pid")}
        for p in _processes_of(self.state):
            try:
                tree = {p.pid, *(a.pid for a in p.parents())}
            except psutil.Error:
                continue
            if not tree & named:   # a job (or a supervisor) no record names: nothing can see or stop it
                bad.append(f"pid {p.pid} runs unseen: {' '.join(p.cmdline())[:200]}")
        return bad

    def cleanup(self):
        for p in _processes_of(self.state):   # what a kill point left (a job whose supervisor died)
            try:
                p.kill()
                p.wait(5)
            except (psutil.Error, subprocess.TimeoutExpired):
                pass


def _processes_of(state: str) -> list:
    """Live processes started with this state directory (a supervisor, its job, the job's children)."""
    out = []
    for p in psutil.process_iter(["environ", "status"]):
        try:
            if (p.info["environ"] or {}).get("SWARMGATE_STATE_DIR") == state and p.pid != os.getpid() \
                    and p.info["status"] != psutil.STATUS_ZOMBIE:
                out.append(p)
        except psutil.Error:
            pass
    return out


class GateStaged(Scenario):
    name = "gate-staged"
    codes = (0, 1, 78, 251)

    def __init__(self, tmp: str) -> None:
        super().__init__(tmp)
        self.repo = str(build.git_repo(Path(tmp) / "repo"))
        Path(self.repo, ".claude").mkdir(exist_ok=True)
        Path(self.repo, ".claude", "swarmgate.toml").write_text(
            '[[gate.stages]]\nname = "unit"\ncommand = "test -f a.txt"\ninputs = ["*.txt"]\n')
        Path(self.repo, "a.txt").write_text("one\n")
        self._git("add", ".")
        self._git("commit", "-q", "--no-verify", "-m", "c")
        Path(self.repo, "a.txt").write_text("two\n")
        self._git("add", "a.txt")
        Path(self.repo, "a.txt").write_text("three, not staged\n")
        Path(self.repo, "untracked.txt").write_text("u\n")
        self.before = self.snapshot()

    def _git(self, *args: str) -> str:
        return subprocess.run(["git", *args], cwd=self.repo, capture_output=True, text=True, check=True,
                              env=self.env).stdout

    def snapshot(self) -> dict:
        files = {}
        for dirpath, dirnames, filenames in os.walk(self.repo):
            for d in (".git", ".swarmgate"):
                if d in dirnames:
                    dirnames.remove(d)
            for name in filenames:
                p = os.path.join(dirpath, name)
                files[os.path.relpath(p, self.repo)] = Path(p).read_bytes()
        return {"files": files, "index": Path(self.repo, ".git", "index").read_bytes(),
                "worktrees": self._git("worktree", "list", "--porcelain"), "stash": self._git("stash", "list")}

    def _g(self, name: str, *args: str) -> Call:
        return Call(name, [tool("gate-staged"), "--repo", self.repo, *args], cwd=self.repo)

    def calls(self):
        return [self._g("gate"), self._g("gate again")]

    def next_call(self):
        return self._g("gate next")

    def roots(self):
        return [self.state, os.path.join(self.repo, ".swarmgate")]

    def check(self, calls, nxt, mode):
        bad = []
        after = self.snapshot()
        for k in self.before:
            if after[k] != self.before[k]:
                bad.append(f"the gate changed the {k}")
        bad += self.next_ok(nxt)
        return bad


class Preflight(Scenario):
    name = "preflight"
    codes = (0, 78)

    def __init__(self, tmp: str) -> None:
        super().__init__(tmp)
        self.script = os.path.join(tmp, "check.sh")
        Path(tmp, "input.txt").write_text("1\n")
        Path(self.script).write_text("#!/bin/sh\n# admission: inputs-changed input.txt\n"
                                     "# run-condition: single-instance\necho checked >> ran\n")
        os.chmod(self.script, 0o755)

    def _p(self, name: str, ok=(0,)) -> Call:
        return Call(name, [tool("swarmgate"), "preflight", self.script], cwd=self.tmp, ok=ok)

    def calls(self):
        change = Call("change input", ["sh", "-c", "echo 2 > input.txt"], cwd=self.tmp)
        return [self._p("first"), self._p("unchanged", ok=(78,)), change, self._p("changed")]

    def next_call(self):
        return Call("next", ["sh", "-c", f"echo 3 > input.txt && {tool('swarmgate')} preflight {self.script}"],
                    cwd=self.tmp)


SCENARIOS = {s.name: s for s in (Hooks, Runner, DetachedRun, GateStaged, Preflight, Records, Remind,
                                 WorkDirOwner, WorkspaceLock)}


# ------------------------------------------------------------------------------------------ the driver

def _one(cls, mode: str | None, n: int, top: str) -> tuple[int, list[str]]:
    """One run of the scenario with ``mode:n`` (None: counting); returns (writes seen, violations)."""
    tmp = tempfile.mkdtemp(prefix=f"fault-{n}-", dir=top)
    fault_dir = os.path.join(tmp, "fault")
    os.makedirs(fault_dir)
    sc = cls(tmp)
    bad: list[str] = []
    try:
        calls = sc.calls()
        fault = "count" if mode is None else f"{mode}:{n}"
        for c in calls:
            before = count(fault_dir)
            c.run(sc.env, fault, fault_dir)
            after = count(fault_dir)
            c.faulted = mode is not None and before < n <= after
            if c.faulted:
                c.fault_path = trace(fault_dir).get(n, "")
        nxt = sc.next_call()
        nxt.run(sc.env, None, fault_dir)
        where = f"{cls.name} {mode or 'count'}:{n}"
        seq = [*calls, nxt]
        for i, c in enumerate(seq):
            if "Traceback" in c.text:
                bad.append(f"{where}: {c.name}: a traceback: {c.err[-400:]}")
            killed = c.faulted and mode != "fail"
            if killed:
                continue
            if c.faulted:
                # said by the call, or by a later one where a detached part of the tool met it (a
                # supervisor's last write: `wait` says it)
                if not any(e in later.text for later in seq[i:] for e in ERRNO_NAMES):
                    bad.append(f"{where}: {c.name}: its write of {c.fault_path} failed and it did not say so "
                               f"(exit {c.rc}): {c.text[-300:]}")
                if c.rc not in c.ok and c.rc not in sc.codes:
                    bad.append(f"{where}: {c.name}: exit {c.rc}, not a documented code {sc.codes}: {c.text[-300:]}")
            elif mode is None and c.rc not in c.ok:
                bad.append(f"{where}: {c.name}: exit {c.rc} on an ordinary run: {c.text[-400:]}")
        bad += [f"{where}: {v}" for v in sc.check(calls, nxt, mode)]
        bad += [f"{where}: {v}" for v in state_files_valid(*sc.roots())]
        return count(fault_dir), bad
    finally:
        sc.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)


def run(names: list[str] | None = None, modes: tuple = MODES, out=sys.stdout) -> list[dict]:
    """Every injection point of every scenario; returns one row per tool (and prints the table)."""
    rows = []
    top = tempfile.mkdtemp(prefix="swarmgate-faults-")
    try:
        for name in names or list(SCENARIOS):
            cls = SCENARIOS[name]
            t0 = time.monotonic()
            k, bad = _one(cls, None, 0, top)
            points = 0
            for mode in modes:
                for n in range(1, k + 1):
                    _k, b = _one(cls, mode, n, top)
                    points += 1
                    bad += b
            rows.append({"tool": name, "writes": k, "points": points, "violations": bad,
                         "seconds": time.monotonic() - t0})
            print(f"{name}: {k} writes, {points} injection points, {len(bad)} violations "
                  f"({time.monotonic() - t0:.0f}s)", file=sys.stderr)
            for v in bad:
                print("  " + v.replace("\n", " ")[:600], file=sys.stderr)
    finally:
        shutil.rmtree(top, ignore_errors=True)
    print_table(rows, modes, out)
    return rows


def print_table(rows: list[dict], modes: tuple, out=sys.stdout) -> None:
    print(f"{'tool':<16} {'writes/run':>10} {'points':>7}  {'modes':<28} {'violations':>10}", file=out)
    for r in rows:
        print(f"{r['tool']:<16} {r['writes']:>10} {r['points']:>7}  {','.join(modes):<28} {len(r['violations']):>10}",
              file=out)
    total = sum(len(r["violations"]) for r in rows)
    print(f"{'total':<16} {sum(r['writes'] for r in rows):>10} {sum(r['points'] for r in rows):>7}  "
          f"{'':<28} {total:>10}", file=out)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    modes = MODES
    if "--modes" in args:
        i = args.index("--modes")
        modes = tuple(args[i + 1].split(","))
        del args[i:i + 2]
    rows = run(args or None, modes)
    return 1 if any(r["violations"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
