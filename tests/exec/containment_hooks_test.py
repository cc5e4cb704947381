"""The hook side of issue 10 through the real entry point (`swarmgate hook EVENT`): X01's shims at
SessionStart, X02 containment (rewrite, booking, OOM report, removal), X03 sightings and H02's red
line, and B01's grants. Real cgroups under a test-owned slice; nothing of the machine's is used."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

import pytest

from swarmgate.agents import swarm_watch as W
from swarmgate.config import load_config
from swarmgate.hooks import exec_shims, kernel_oom
from swarmgate.hosts import cgroups
from tests.hosts.cgroups import cgroups_writable, need_real

HOOK = os.path.join(os.path.dirname(sys.executable), "swarmgate")
ALLOC = "import sys; b = bytearray(int(sys.argv[1]) << 20); b[::4096] = b'x' * len(b[::4096])"
SCOPE_FULL = ("SWARMGATE_RUN_SCOPE='kind=full; target=workspace; range=all crates; "
              "reason=commit gate for this batch'")


class Session:
    def __init__(self, root, slice_name: str) -> None:
        self.root = root
        self.repo = root / "repo"
        self.state = root / "state"
        self.slice = slice_name
        (self.repo / ".claude").mkdir(parents=True)
        self.state.mkdir()
        (self.repo / ".claude" / "swarmgate.toml").write_text(
            f'[memory]\ntotal = "1G"\nslice = "{slice_name}"\n[agents]\nmemory_cap = "96M"\ncpu_max = 0.5\n'
            f'[heavy]\npatterns = ["cargo test --workspace", "make check-full"]\n'
            f'[[gate.stages]]\nname = "full"\ncommand = "make check-full"\nheavy = true\n')
        self.env_file = root / "env.sh"

    def env(self, **extra) -> dict:
        env = dict(os.environ)
        # as Claude Code runs its hooks (CLAUDECODE=1: containment applies only under it)
        env.update({"SWARMGATE_STATE_DIR": str(self.state), "CLAUDE_PROJECT_DIR": str(self.repo), "CLAUDECODE": "1"})
        env.pop("CLAUDE_ENV_FILE", None)
        env.update(extra)
        return env

    def hook(self, event: str, payload: dict, **extra) -> dict:
        body = {"session_id": "sess-c", "cwd": str(self.repo), "transcript_path": "", "hook_event_name": event,
                **payload}
        p = subprocess.run([HOOK, "hook", event], input=json.dumps(body), capture_output=True, text=True,
                           env=self.env(**extra), timeout=120)
        assert p.returncode == 0, p.stderr
        return json.loads(p.stdout)

    def pre(self, command: str, agent: str | None = "ag1", **ti) -> dict:
        payload = {"tool_name": "Bash", "tool_input": {"command": command, "description": "d", **ti}}
        if agent:
            payload.update({"agent_id": agent, "agent_type": "implementer"})
        return self.hook("PreToolUse", payload).get("hookSpecificOutput") or {}

    def ledger(self) -> dict:
        path = self.state / "runner" / "ledger.json"
        return json.loads(path.read_text()) if path.exists() else {"bookings": {}}

    def agent_bookings(self) -> dict:
        return {k: b for k, b in self.ledger()["bookings"].items() if b.get("kind") == "agent"}

    def alerts(self) -> list[dict]:
        path = self.state / "alerts" / "alerts.jsonl"
        return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []

    def grants(self) -> list[dict]:
        d = self.state / "grants"
        return [json.loads((d / n).read_text()) for n in sorted(os.listdir(d)) if n.endswith(".json")] \
            if d.exists() else []


@pytest.fixture
def session(tmp_path, monkeypatch):
    need_real(cgroups_writable())
    name = f"sgctn-{os.getpid()}-{int(time.time() * 1000) % 10**7}"
    s = Session(tmp_path, name)
    monkeypatch.setenv("SWARMGATE_STATE_DIR", str(s.state))
    try:
        yield s
    finally:
        cgroups.get("auto").remove_slice(name)
        assert not any(os.path.exists(os.path.join(r, name)) for r in ("/sys/fs/cgroup/memory", "/sys/fs/cgroup/cpu"))


def _run(command: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=60, env=env)


def test_session_start_puts_the_shims_on_path_and_says_what_is_contained(session):
    session.env_file.write_text("export OTHER=1\n")
    out = session.hook("SessionStart", {"source": "startup"}, CLAUDE_ENV_FILE=str(session.env_file))
    ctx = out["hookSpecificOutput"]["additionalContext"]
    assert "[X01] exec-time shims active" in ctx
    assert ("[X02] subagent containment: each subagent's shell commands run in its own cgroup "
            "(memory cap 96M, 0.5 CPU)") in ctx
    shims = session.state / "sessions" / "sess-c" / "shims"
    assert (shims / "cargo").exists() and (shims / ".swarmgate-shims").exists()
    assert f"export PATH={shims}:\"$PATH\"" in session.env_file.read_text()
    # which env file holds the line, for reading to leave to the shims what they judge (exec_deferral)
    assert (shims / exec_shims.ENV_FILE_RECORD).read_text().strip() == str(session.env_file)
    assert exec_shims.env_file_has_line(str(shims))
    # no env file (another client): one line says the shims are off
    ctx = session.hook("SessionStart", {"source": "resume"})["hookSpecificOutput"]["additionalContext"]
    assert "exec-time shims are NOT active in this session" in ctx


def test_a_subagent_command_is_rewritten_to_join_its_booked_cgroup_and_the_main_agents_is_not(session, tmp_path):
    out = session.pre("cd sub && echo hi", run_in_background=True, timeout=5000)
    new = out["updatedInput"]
    first, rest = new["command"].split("\n", 1)
    assert rest == "cd sub && echo hi" and "cgroup.procs" in first
    assert new["run_in_background"] is True and new["timeout"] == 5000 and new["description"] == "d"
    (key, b), = session.agent_bookings().items()
    assert (b["agent_id"], b["session"], b["booked"]) == ("ag1", "sess-c", 96 << 20)
    # the rewritten command really runs inside the agent's cgroup
    (tmp_path / "sub").mkdir()
    r = subprocess.run(["bash", "-c", new["command"].replace("echo hi", "cat /proc/self/cgroup")],
                       cwd=tmp_path, capture_output=True, text=True, timeout=30)
    assert f"/{session.slice}/{b['cgroup'].rsplit('/', 1)[1]}" in r.stdout, r.stdout + r.stderr
    # a second call reuses it; the main agent is never contained
    assert session.pre("ls")["updatedInput"]["command"].split("\n")[0] == first
    assert len(session.agent_bookings()) == 1
    assert "updatedInput" not in session.pre("ls", agent=None)


def test_a_hook_called_outside_claude_code_makes_no_cgroup_and_rewrites_nothing(session):
    """A test or a tool calling the hook with the default config must not make cgroups in the
    machine's slice; SessionStart says why nothing is contained."""
    body = {"session_id": "sess-c", "cwd": str(session.repo), "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "agent_id": "ag1", "agent_type": "implementer", "tool_input": {"command": "ls"}}
    env = session.env()
    del env["CLAUDECODE"]
    p = subprocess.run([HOOK, "hook", "PreToolUse"], input=json.dumps(body), capture_output=True, text=True,
                       env=env, timeout=120)
    assert "updatedInput" not in p.stdout and session.agent_bookings() == {}
    start = {**body, "hook_event_name": "SessionStart", "source": "startup"}
    p = subprocess.run([HOOK, "hook", "SessionStart"], input=json.dumps(start), capture_output=True, text=True,
                       env=env, timeout=120)
    assert "[X02] subagents are NOT contained: this hook does not run under Claude Code" in p.stdout


def test_a_refused_call_creates_nothing(session):
    out = session.pre("cargo test --workspace")
    assert out["permissionDecision"] == "deny" and "updatedInput" not in out
    assert session.agent_bookings() == {}
    assert not os.path.exists(f"/sys/fs/cgroup/memory/{session.slice}") or \
        not [n for n in os.listdir(f"/sys/fs/cgroup/memory/{session.slice}") if n.startswith("agent-")]


def test_an_oom_at_the_agents_cap_is_told_to_the_agent_once(session):
    cmd = session.pre(f"{sys.executable} -c \"{ALLOC}\" 300")["updatedInput"]["command"]
    r = _run(cmd)
    assert r.returncode in (137, -9)   # killed (bash may exec its last command)
    ev = {"tool_name": "Bash", "agent_id": "ag1", "agent_type": "implementer",
          "tool_input": {"command": "x"}, "error": "Exit code 137"}
    out = session.hook("PostToolUseFailure", ev)
    ctx = out["hookSpecificOutput"]["additionalContext"]
    assert "[X02] 1 process(es) of this subagent were killed by the kernel for memory" in ctx
    assert "YOUR AGENT'S OWN memory cap (96M)" in ctx
    again = session.hook("PostToolUse", {**ev, "tool_response": {"stdout": ""}})
    assert "killed by the kernel" not in json.dumps(again)


def test_hand_back_removes_the_cgroup_and_stops_what_was_left(session):
    cmd = session.pre("tail -f /dev/null >/dev/null 2>&1 & echo $!")["updatedInput"]["command"]
    left = int(_run(cmd).stdout.split()[0])
    (key, b), = session.agent_bookings().items()
    out = session.hook("SubagentStop", {"agent_id": "ag1", "agent_type": "implementer", "stop_hook_active": False,
                                        "last_assistant_message": "done"})
    assert "stopped 1 process(es) the agent left running" in out["systemMessage"] and "tail -f" in out["systemMessage"]
    assert session.agent_bookings() == {}
    assert not os.path.exists(b["cgroup"])
    deadline = time.monotonic() + 5
    while os.path.exists(f"/proc/{left}") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{left}")


def test_a_heavy_program_seen_in_a_subagents_cgroup_is_reported_once_and_in_h02(session, tmp_path):
    # a program no shim sees (python by absolute path) whose argv runs `cargo test --workspace`
    cmd = session.pre("true")["updatedInput"]["command"].replace(
        "\ntrue",
        f"\n{sys.executable} -c 'import time; time.sleep(300)' cargo test --workspace >/dev/null 2>&1 & echo $!")
    pid = int(_run(cmd).stdout.split()[0])
    try:
        out = session.hook("PostToolUse", {"tool_name": "Bash", "tool_input": {"command": "ls"},
                                           "tool_response": {"stdout": ""}})
        ctx = out["hookSpecificOutput"]["additionalContext"]
        assert "[X03] RED: 1 heavy program(s) ran inside a subagent's containment cgroup" in ctx
        assert f"pid {pid}" in ctx
        (alert,) = [a for a in session.alerts() if a["kind"] == "heavy-in-agent-cgroup"]
        assert alert["agent"] == "ag1" and alert["pid"] == pid
        again = session.hook("PostToolUse", {"tool_name": "Bash", "tool_input": {"command": "ls"},
                                             "tool_response": {"stdout": ""}})
        text = again["hookSpecificOutput"]["additionalContext"]
        assert "heavy program(s) ran inside a subagent" not in text         # X03 says it once
        assert "swarmgate alerts for this session" in text and "[X03] RED: a heavy program runs" in text  # C04
        stop = session.hook("SubagentStop", {"agent_id": "ag1", "agent_type": "implementer",
                                             "stop_hook_active": False, "last_assistant_message": "done"})
        assert "ran inside subagent ag1's containment cgroup" in stop["systemMessage"]
    finally:
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass


def test_the_main_agents_allowed_heavy_run_gets_a_grant_for_exactly_its_command(session):
    out = session.pre(f"SWARMGATE_HEAVY=commit {SCOPE_FULL} run-with-memory-cap 8G -- cargo test --workspace",
                      agent=None, timeout=60000)
    assert out.get("permissionDecision") != "deny", out
    (g,) = session.grants()
    assert g["argv"] == ["cargo", "test", "--workspace"] and g["source"] == "X01"
    assert 100 < g["expires"] - g["created"] < 130
    # refused calls grant nothing: a subagent, the main agent without the prefix or uncapped
    session.pre("SWARMGATE_HEAVY=commit run-with-memory-cap 8G -- cargo test --workspace")
    session.pre("run-with-memory-cap 8G -- cargo test --workspace", agent=None)
    session.pre("SWARMGATE_HEAVY=commit cargo test --workspace", agent=None)
    assert len(session.grants()) == 1


def test_a_prefixed_commit_grants_the_gates_heavy_stages(session):
    session.pre("SWARMGATE_HEAVY=commit git commit -m 'batch 3'", agent=None)
    (g,) = session.grants()
    assert g["argv"] == ["sh", "-c", "make check-full"] and g["pattern"] == "gate stage full"
    session.pre("git commit -m 'no prefix'", agent=None)
    session.pre("SWARMGATE_HEAVY=commit git commit --no-verify -m x", agent=None)
    assert len(session.grants()) == 1


def test_doctor_says_in_one_line_whether_subagents_are_contained(session):
    env = session.env()
    p = subprocess.run([HOOK, "doctor", str(session.repo)], capture_output=True, text=True, env=env, timeout=120)
    lines = [x for x in p.stdout.splitlines() if "containment" in x]
    want = "ok   subagent containment: each subagent in its own cgroup (memory cap 96 MiB, 0.5 CPU)"
    assert lines == [want], p.stdout
    assert not os.path.exists(f"/sys/fs/cgroup/memory/{session.slice}")   # the probe left nothing behind
    p = subprocess.run([HOOK, "doctor", str(session.repo)], capture_output=True, text=True, timeout=120,
                       env=dict(env, SWARMGATE_CGROUP_ROOT="/proc"))
    (line,) = [x for x in p.stdout.splitlines() if "contained" in x]
    assert line.startswith("FAIL subagents are NOT contained (no per-agent memory cap):") and "/proc" in line
    assert p.returncode == 78   # this repository's settings are not wired: the hooks are not in force either


def test_swarm_watch_reports_a_heavy_program_in_a_subagents_cgroup_and_the_next_hook_shows_it(session):
    cmd = session.pre("true")["updatedInput"]["command"].replace(
        "\ntrue",
        f"\n{sys.executable} -c 'import time; time.sleep(300)' make check-full >/dev/null 2>&1 & echo $!")
    pid = int(_run(cmd).stdout.split()[0])
    owner = next(iter(session.agent_bookings().values()))["pid"]
    try:
        reports = W.tick("sess-c", str(session.repo), owner, load_config(str(session.repo)))
        mine = [r for r in reports if r.kind == "heavy-in-agent-cgroup"]
        assert len(mine) == 1 and mine[0].pid == pid and "make check-full" in mine[0].message
        (alert,) = [a for a in session.alerts() if a["kind"] == "heavy-in-agent-cgroup"]
        assert alert["source"] == "swarm-watch" and alert["pid"] == pid
        W.tick("sess-c", str(session.repo), owner, load_config(str(session.repo)))   # still running: no new alert
        assert len([a for a in session.alerts() if a["kind"] == "heavy-in-agent-cgroup"]) == 1
        # the next hook of the subagent shows it (it was pending), once
        out = session.hook("PostToolUse", {"tool_name": "Bash", "agent_id": "ag1", "agent_type": "implementer",
                                           "tool_input": {"command": "ls"}, "tool_response": {"stdout": ""}})
        assert "heavy program(s) ran inside a subagent's containment cgroup" in json.dumps(out)
        again = session.hook("PostToolUse", {"tool_name": "Bash", "agent_id": "ag1", "agent_type": "implementer",
                                             "tool_input": {"command": "ls"}, "tool_response": {"stdout": ""}})
        assert "heavy program(s) ran inside" not in json.dumps(again)
    finally:
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass


def test_the_commit_gate_runs_its_heavy_stage_under_the_shims_with_the_hooks_grant(session, tmp_path):
    """The main agent's `SWARMGATE_HEAVY=commit gate-staged` in an agent session: the hook grants the
    heavy stage, the gate's runner takes the grant, the stage's heavy program passes the shim.
    Without the grant the same stage is refused where make starts (exit 249)."""
    marker = tmp_path / "full-ran"
    (session.repo / "Makefile").write_text(f"check-full:\n\ttouch {marker}\n")
    cfg = session.repo / ".claude" / "swarmgate.toml"
    stage = '[gate]\ncommon = false\n[[gate.stages]]\ncap = "64M"'
    cfg.write_text(cfg.read_text().replace('[[gate.stages]]', stage, 1))
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "x"]):
        subprocess.run(["git", *args], cwd=session.repo, check=True, capture_output=True)
    shims = session.state / "sessions" / "sess-c" / "shims"
    exec_shims.write_dir(str(shims), load_config(str(session.repo)), repo=str(session.repo), session="sess-c")
    env = session.env(PATH=os.pathsep.join([str(shims), os.path.dirname(sys.executable), "/usr/bin", "/bin"]),
                      SWARMGATE_HEAVY="commit")
    gate = [os.path.join(os.path.dirname(sys.executable), "gate-staged"), "--stage", "full", "--no-cache"]
    refused = subprocess.run(gate, cwd=session.repo, env=env, capture_output=True, text=True, timeout=300)
    assert refused.returncode != 0 and not marker.exists(), refused.stdout + refused.stderr
    assert "[X01]" in refused.stdout + refused.stderr
    session.pre("SWARMGATE_HEAVY=commit gate-staged --stage full", agent=None)
    ran = subprocess.run(gate, cwd=session.repo, env=env, capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert marker.exists()


def _oom_kills(cgroup_dir: str) -> int:
    """OOM kills counted in this cgroup itself (v1 memory.oom_control does not add the children's;
    on v2 memory.events.local)."""
    for name in ("memory.oom_control", "memory.events.local", "memory.events"):
        p = os.path.join(cgroup_dir, name)
        if os.path.exists(p):
            for line in open(p).read().splitlines():
                k, _, v = line.partition(" ")
                if k == "oom_kill":
                    return int(v)
            return 0
    raise AssertionError(f"no OOM counter in {cgroup_dir}")


def _peak(cgroup_dir: str) -> int:
    for name in ("memory.max_usage_in_bytes", "memory.peak"):
        p = os.path.join(cgroup_dir, name)
        if os.path.exists(p):
            return int(open(p).read().split()[0])
    raise AssertionError(f"no peak counter in {cgroup_dir}")


def _memory_dir(rewritten: str) -> str:
    first = rewritten.split("\n", 1)[0]
    return first.split("echo $$ >", 1)[1].split("/cgroup.procs", 1)[0]


def test_a_heavy_run_that_escapes_every_check_stays_under_its_agents_cap_and_no_oom_is_outside_it(session, tmp_path):
    """Issue 10's bar: a subagent heavy run that escapes every check still stays under its agent's
    memory cap, and no OOM happens outside that cgroup. Every check that reads or stops a heavy run
    is off (B01, B02, B10, X01); X02 is on. The subagent's `cargo test --workspace` (a stand-in that
    allocates 300 MiB) runs contained and ends in its own agent's OOM at the 96M cap; another
    agent's process holding 40 MiB goes on; the kernel names the agent's cgroup as the limit hit
    (oom_memcg), and nothing else in the slice counts an OOM kill. With X02 off as well the same
    run allocates its 300 MiB and finishes: this test then fails (checked by hand once)."""
    cfg = session.repo / ".claude" / "swarmgate.toml"
    cfg.write_text(cfg.read_text() + '[guards]\nB01 = "off"\nB02 = "off"\nB10 = "off"\nX01 = "off"\n')
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "cargo").write_text(f"#!/bin/sh\n# stand-in: a heavy test run that allocates 300 MiB\n"
                                  f"{sys.executable} -c \"{ALLOC}\" 300 && echo heavy-run-finished\n")
    (bindir / "cargo").chmod(0o755)
    env = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}")
    flag, stop = tmp_path / "held.flag", tmp_path / "stop.flag"
    hold = (f"{sys.executable} -c \"import time, pathlib; b = bytearray(40 << 20); b[::4096] = b'x' * len(b[::4096]); "
            f"pathlib.Path('{flag}').write_text('held'); "
            f"[time.sleep(0.1) for _ in range(300) if not pathlib.Path('{stop}').exists()]; "
            f"print('survived', len(b))\"")
    heavy = session.pre("cargo test --workspace", agent="ag1")
    held = session.pre(hold, agent="ag2")
    assert heavy.get("permissionDecision") != "deny", heavy   # nothing read or stopped it
    # what the client runs: the rewritten command where there is one
    heavy_cmd = (heavy.get("updatedInput") or {}).get("command", "cargo test --workspace")
    held_cmd = (held.get("updatedInput") or {}).get("command", hold)
    holder = subprocess.Popen(["bash", "-c", held_cmd], stdout=subprocess.PIPE, text=True, env=env)
    try:
        for _ in range(200):
            if flag.exists():
                break
            time.sleep(0.05)
        assert flag.exists(), "the other agent's holder did not start"
        r = subprocess.run(["bash", "-c", heavy_cmd], capture_output=True, text=True, timeout=60, env=env)
    finally:
        stop.write_text("stop")
        out, _ = holder.communicate(timeout=30)
    # the heavy run ran and was killed by its own agent's cap (uncontained, it finishes: the failure)
    assert "heavy-run-finished" not in r.stdout and r.returncode in (137, -9), (r.returncode, r.stdout, r.stderr)
    hog_dir, other_dir = _memory_dir(heavy_cmd), _memory_dir(held_cmd)
    assert hog_dir != other_dir and os.path.dirname(hog_dir) == os.path.dirname(other_dir)
    slice_dir = os.path.dirname(hog_dir)
    assert _oom_kills(hog_dir) >= 1
    assert _peak(hog_dir) <= 96 << 20, _peak(hog_dir)
    # the other agent went on; no OOM anywhere else in the slice
    assert holder.returncode == 0 and "survived 41943040" in out, out
    assert _oom_kills(other_dir) == 0 and _oom_kills(slice_dir) == 0
    # the kernel's own record: the kill's limit was the agent's cgroup (not the slice, not the machine)
    text, where = kernel_oom.read_live()
    if not text:
        if os.environ.get("SWARMGATE_REQUIRE_REAL_PARTS") == "1":
            pytest.fail(f"no kernel log to read: {where}")
        return
    name = os.path.basename(hog_dir)
    ours = [k for k in kernel_oom.parse(text, now=time.time(), boot_time=kernel_oom.boot_time())
            if session.slice in (k.task_memcg or "") + (k.oom_memcg or "")]
    assert ours, f"no OOM kill of the slice in the kernel log ({where})"
    assert all(k.kind == kernel_oom.CGROUP and re.search(rf"/{re.escape(name)}$", k.oom_memcg) for k in ours), \
        [k.line for k in ours]
