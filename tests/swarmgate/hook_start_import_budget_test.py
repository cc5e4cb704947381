"""The hook's import budget: what a hook process imports, started as `swarmgate install` wires it
(PYTHON -I -S swarmgate/hook_start.py EVENT), per event, against its list.

Every module is paid on every call of that event, before every tool call of every agent
(bench/hook_latency.py measures it against `python -I -S -c pass`). A module outside the list fails
here: import it lazily where it is needed, or, if the hook really needs it on every such call, add it
to the list in the same change and say why in the commit.
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from swarmgate import install
from tests.builders import THREADS

ROOT = Path(__file__).resolve().parents[2]

# what the interpreter imports before the first line of any script, with -I -S
FLOOR = {"_abc", "_codecs", "_frozen_importlib_external", "_io", "_signal", "abc", "codecs", "encodings",
         "encodings.aliases", "encodings.utf_8", "io", "marshal", "posix", "time", "zipimport", "_imp",
         "_thread", "_warnings", "_weakref", "builtins", "sys", "_frozen_importlib", "gc"}
# errno, stat, and os's calls without os (swarmgate/lean_os.py): the engine's own needs (the C JSON
# scanner `_json` is not: fast_json reads and writes the hook's small documents in Python)
CORE = {"__future__", "_stat", "errno", "stat", "swarmgate.lean_os", "swarmgate.lean_path"}
# os itself: ~1.5 ms of CPU (its environ is built on collections.abc); not on the Bash and Write paths
OS = {"_collections_abc", "genericpath", "os", "os.path", "posixpath"}
ENGINE = {"swarmgate", "swarmgate.hook_entry", "swarmgate.bounded_read", "swarmgate.break_switch", "swarmgate.config",
          "swarmgate.config_toml", "swarmgate.decision_log", "swarmgate.fast_json", "swarmgate.guard",
          "swarmgate.hook_engine", "swarmgate.hook_protocol", "swarmgate.hooks", "swarmgate.hooks.registry",
          "swarmgate.sizes", "swarmgate.state_paths", "swarmgate.statefile", "swarmgate.hooks.derivations"}
# not on a benign command's path: the protected places' tables (read once a command writes something)
# and the interpreter-code readers (read once a command holds interpreter code: python -c, node -e; embedded_shell
# finds the shell commands in it for the walker)
BASH = CORE | ENGINE | {f"swarmgate.hooks.{m}" for m in (
    "bash_lexical", "bash_parse", "bash_programs", "bash_results", "bash_tree", "bash_walker", "bash_words",
    "bash_wrappers", "code_literals", "code_scan", "command_patterns", "guard_gates", "containment", "env_changes",
    "embedded_shell", "git_args", "git_runs",
    "heavy_commands", "heavy_guards", "resource_report", "scope_guards",
    "exec_deferral", "shell_event", "shell_job_guards", "shell_protection_guards", "shell_writes", "shell_writers",
    "writer_table", "writers_archives", "writers_copies", "writers_fetch", "writers_find", "writers_git",
    "writers_installers", "writers_text",
    "test_runs", "timer_guards", "write_scope", "agent_worktree",
    # [heavy] equivalents: every command not matched by a heavy pattern is read against its table (one
    # dict lookup by name, and the heavy script bodies' patterns, cached in the state directory)
    "equivalents_table", "heavy_equivalents",
    # what runs a string it was given (mapfile -C, git -c core.editor=...): one name set, read by the walker
    "string_runners",
    # L01-L03 (a command that writes or runs git: their gate holds); git_discards reads what a git command drops
    "loss_guards", "git_discards")} | {"swarmgate.lazy_pattern", "swarmgate.tool_table"}
# every call of a main agent (no agent_type) asks whether its session is a teammate of an agent team
# (hook_engine: teammates.teammate_of reads the session process's argv); A02's act counts a teammate in the
# repository's index (repo_sessions; its act loads it on every PreToolUse call while A02 is on)
TEAMS = {"swarmgate.hooks.teammates", "swarmgate.hooks.repo_sessions", "swarmgate.procinfo",
         "swarmgate.hooks.team_guards"}
BASH |= TEAMS
# fnmatch, hence re: not on the Write/Edit path (the write scopes' globs with `*` only are matched by
# protected_paths.glob_match, which agrees with fnmatchcase; `?` and `[` in a config's glob load it)
RE = {"re", "re._casefix", "re._compiler", "re._constants", "re._parser", "_sre", "copyreg", "enum", "functools",
      "_functools", "collections", "_collections", "itertools", "keyword", "operator", "_operator", "reprlib",
      "types", "fnmatch"}
WRITE = CORE | ENGINE | {f"swarmgate.hooks.{m}" for m in (
    "bash_wrappers", "file_guards", "protected_paths", "shell_event", "shell_writes", "write_paths", "write_scope",
    "writer_table", "guard_gates",
    "agent_worktree",
    # L02's act: the write ledger (who wrote what) records every Write and Edit that goes ahead
    "loss_guards", "write_ledger")} | TEAMS
# Agent/Task (once per dispatch): the dispatch guards, the agent definitions, the records; the act
# records the dispatch in the session's state (json with indent, pathlib's paths: statefile, state_paths)
JSON = {"json", "json.decoder", "json.encoder", "json.scanner", "_json"}
PATHLIB = {"pathlib", "ntpath", "nt", "_winapi", "urllib", "urllib.parse", "ipaddress", "warnings"}
AGENT = CORE | OS | ENGINE | RE | JSON | PATHLIB | {
    "fcntl", "_sha256", "swarmgate.digest", "swarmgate.procinfo", "swarmgate.front_door", "swarmgate.tool_start",
    "swarmgate.tool_table", "swarmgate.agents",
    "swarmgate.host_defaults"} | {   # D15: the thread default, auto = this machine's cores less one
    f"swarmgate.agents.{m}" for m in ("agent_definitions", "dispatch_prompt", "records")} | {
    f"swarmgate.hooks.{m}" for m in (
        "derivations", "dispatch_guards", "dispatch_prompt_parse", "guard_gates", "repo_sessions", "scratch_locks",
        "session_state", "task_order", "team_guards", "teammates")}
# SessionStart (once per session): the session's context (git status, the kernel's OOM lines through
# journalctl/dmesg: subprocess), the exec-time shims and the containment set-up (X01, X02)
SESSION = CORE | OS | ENGINE | RE | JSON | PATHLIB | {
    "_datetime", "_locale", "_posixsubprocess", "_strptime", "_weakrefset", "calendar", "collections.abc",
    "contextlib", "datetime", "fcntl", "importlib", "importlib._abc", "importlib.util", "locale", "math", "msvcrt",
    "select", "selectors", "shlex", "signal", "subprocess", "threading", "swarmgate.alerts", "swarmgate.front_door",
    "swarmgate.procinfo", "swarmgate.tool_start", "swarmgate.tool_table",
    # the shims cover the programs [heavy] equivalents names
    "swarmgate.hooks.equivalents_table", "swarmgate.hooks.heavy_equivalents"} | {
    f"swarmgate.agents.{m}" for m in ("records", "sop")} | {"swarmgate.agents", "swarmgate.hosts"} | {
    f"swarmgate.hosts.{m}" for m in ("agent_cgroups", "cgroups", "kernel_log", "ledger", "runner_cli")} | {
    f"swarmgate.hooks.{m}" for m in (
        "cargo_config", "command_patterns", "containment", "guard_gates", "containment_lifecycle", "exec_shims",
        "kernel_oom", "package_scripts", "repo_sessions", "session_context", "session_state", "teammates")}
# C05: a reminder that fell due while the session was away is shown at its (re)start
SESSION |= {"swarmgate.hooks.reminder_guard", "swarmgate.agents.reminders"}
# swarmgate's tools on the agents' PATH (the env file's line, the tools' directory refreshed)
SESSION |= {"swarmgate.tools_dir"}
NEVER = {"bashlex", "psutil", "rich", "pynvml", "filelock", "tomllib", "pathlib", "urllib", "ipaddress",
         "typing", "dataclasses", "json", "importlib", "subprocess", "threading", "site"}

COMMANDS = ["ls", "ls -la src", "git status", "git diff --stat HEAD~1", "cat README.md", "grep -r foo src",
            "python script.py --input data.csv", "head -n 50 src/main.py | tail -n 20",
            "find . -name '*.py' | wc -l", "echo done && git log --oneline -5"]


def imported(argv: list[str], payload: dict, repo: Path, env: dict) -> set[str]:
    p = subprocess.run([argv[0], "-X", "importtime", *argv[1:]], input=json.dumps(payload), capture_output=True,
                       text=True, cwd=repo, env=env, timeout=60)
    assert p.returncode == 0, p.stderr[-2000:]
    assert json.loads(p.stdout) is not None
    return {ln.rsplit("|", 1)[1].strip() for ln in p.stderr.splitlines()
            if ln.startswith("import time:") and ln.count("|") == 2 and "imported package" not in ln}


@pytest.fixture
def wired(repo, tmp_path):
    assert install.main([str(repo)]) == 0
    settings = json.loads((repo / ".claude" / "settings.json").read_text())
    (group,) = [g for g in settings["hooks"]["PreToolUse"] if g.get("matcher") == "Bash|Monitor"]
    h = group["hooks"][0]
    argv = [h["command"], *h["args"]]
    assert argv[1:3] == ["-I", "-S"], argv   # the floor: no site
    env = {"PATH": "/usr/bin:/bin", "SWARMGATE_STATE_DIR": str(tmp_path / "state"), "HOME": str(tmp_path),
           "CLAUDE_PROJECT_DIR": str(repo)}
    # the steady state: the first call in a repository makes .swarmgate/log/ (statefile.ensure_dir)
    subprocess.run(argv, input=json.dumps(_payload(repo, "Bash", {"command": "true"})), capture_output=True, text=True,
                   cwd=repo, env=env, timeout=60, check=True)
    return argv, env


def _payload(repo: Path, tool: str, tool_input: dict) -> dict:
    return {"session_id": "budget", "transcript_path": "", "cwd": str(repo), "hook_event_name": "PreToolUse",
            "tool_name": tool, "tool_input": tool_input}


@pytest.mark.parametrize("command", COMMANDS)
def test_a_benign_bash_call_imports_only_its_list(wired, repo, command):
    argv, env = wired
    got = imported(argv, _payload(repo, "Bash", {"command": command}), repo, env) - FLOOR
    assert got - BASH == set(), f"outside the Bash hook's import budget: {sorted(got - BASH)}"
    assert not {m.split(".")[0] for m in got} & NEVER
    assert not got & OS, f"os on the Bash path ({sorted(got & OS)}): use swarmgate.lean_os"
    assert "_json" not in got, "the C JSON accelerator on the Bash path: fast_json reads small payloads in Python"


@pytest.mark.parametrize("command", [c for c in COMMANDS if not c.startswith(("git", "find", "python", "echo"))])
def test_a_command_naming_no_writer_does_not_load_the_writers_parsers(wired, repo, command):
    """hooks/shell_writers.py (~80 KB of bytecode) loads only for a program of the writer table
    (hooks/writer_table.py): ls, cat, grep, head, tail write nothing through their arguments."""
    argv, env = wired
    got = imported(argv, _payload(repo, "Bash", {"command": command}), repo, env)
    assert "swarmgate.hooks.writer_table" in got
    assert "swarmgate.hooks.shell_writers" not in got


def test_gated_guard_modules_load_only_where_their_gate_holds(wired, repo):
    """hooks/registry.py GATES: a benign command loads none of the loop, timer, team and host-report
    guards; a loop, a timer, a heavy command load theirs."""
    argv, env = wired
    gated = {f"swarmgate.hooks.{m}" for m in ("shell_job_guards", "timer_guards", "team_guards", "resource_report",
                                              "scope_guards", "write_scope")}
    assert not imported(argv, _payload(repo, "Bash", {"command": "ls -la src"}), repo, env) & gated
    for command, module in [("until test -f x; do sleep 5; done", "shell_job_guards"),
                            ("sleep 120; echo done", "timer_guards")]:
        got = imported(argv, _payload(repo, "Bash", {"command": command}), repo, env)
        assert f"swarmgate.hooks.{module}" in got, command


def test_g01_loads_the_git_reader_and_the_tool_list_only_where_they_can_matter(wired, repo):
    """G01 reads git's arguments only when a git command runs, and swarmgate's tool list only when the
    command gives some command an environment (a location variable could reach a tool)."""
    argv, env = wired
    got = imported(argv, _payload(repo, "Bash", {"command": "ls -la src | wc -l"}), repo, env)
    assert not got & {"swarmgate.hooks.git_args", "swarmgate.tool_table"}
    got = imported(argv, _payload(repo, "Bash", {"command": "git commit --no-verify -m x"}), repo, env)
    assert "swarmgate.hooks.git_args" in got
    got = imported(argv, _payload(repo, "Bash", {"command": "HOME=/tmp/x host-dispatch -- make"}), repo, env)
    assert "swarmgate.tool_table" in got


def test_a_command_naming_a_writer_loads_them(wired, repo):
    argv, env = wired
    got = imported(argv, _payload(repo, "Bash", {"command": "ls && cp a.txt b.txt"}), repo, env)
    assert "swarmgate.hooks.shell_writers" in got
    assert _families(got) == {"writers_copies"}


def _families(got: set[str]) -> set[str]:
    return {m.rpartition(".")[2] for m in got if m.startswith("swarmgate.hooks.writers_")}


@pytest.mark.parametrize("command,family", [
    ("git status", "writers_git"), ("git diff --stat HEAD~1", "writers_git"), ("tar xf a.tar", "writers_archives"),
    ("find . -name '*.py' | wc -l", "writers_find"),
    ("python -m pip install -r requirements.txt", "writers_installers"),
])
def test_a_writer_loads_its_parsers_family_alone(wired, repo, command, family):
    """The parsers are split by family (hooks/writers_*.py, dispatched by name from hooks/shell_writers.py):
    a command loads the family of the programs it names and no other."""
    argv, env = wired
    got = imported(argv, _payload(repo, "Bash", {"command": command}), repo, env)
    assert "swarmgate.hooks.shell_writers" in got
    assert _families(got) == {family}, sorted(_families(got))


def test_the_teammate_question_does_not_load_the_sessions_index(wired, repo):
    """hook_engine asks every main-agent call whether its session is a teammate (hooks/teammates.py, small);
    the repository's sessions index (hooks/repo_sessions.py) is loaded only where it is read or written. A02's
    act imports it on every PreToolUse call, so A02 is off here: what is left is the engine's own question."""
    argv, env = wired
    cfg = repo / ".claude" / "swarmgate.toml"
    text = cfg.read_text()
    assert "\n[guards]\n" in text
    cfg.write_text(text.replace("\n[guards]\n", '\n[guards]\nA02 = "off"\n'))
    got = imported(argv, _payload(repo, "Bash", {"command": "ls"}), repo, env)
    assert "swarmgate.hooks.teammates" in got
    assert "swarmgate.hooks.repo_sessions" not in got


@pytest.mark.parametrize("command", ["for f in *.py; do echo $f; done", "echo $(date)", "cat a > b.txt",
                                     "python3 -c 'print(1)'", "git commit -m x", "make build", "cp a b",
                                     "tar xf a.tar", "sed -i s/a/b/ x.txt"])
def test_commands_off_the_common_path_import_no_os_either(wired, repo, command):
    """The walker's rare methods, the Makefile reader, the protected places, the writers' parsers:
    what a less common command loads calls os through lean_os too."""
    argv, env = wired
    (repo / "Makefile").write_text("build:\n\techo hi\n")
    got = imported(argv, _payload(repo, "Bash", {"command": command}), repo, env)
    assert not got & OS, f"{command}: os on the Bash path ({sorted(got & OS)})"


def test_a_write_call_imports_only_its_list(wired, repo):
    argv, env = wired
    got = imported(argv, _payload(repo, "Write", {"file_path": str(repo / "src" / "x.py"), "content": "x\n"}),
                   repo, env) - FLOOR
    assert got - WRITE == set(), f"outside the Write hook's import budget: {sorted(got - WRITE)}"
    assert not got & OS, f"os on the Write path ({sorted(got & OS)}): use swarmgate.lean_os"
    assert not {m.split(".")[0] for m in got} & NEVER


AGENT_MD = "---\nname: implementer\ndescription: implements one task\n---\nYou implement the task in your prompt.\n"
DISPATCH = ("task: add the parser for the v2 header\nexit criterion: tests/unit/header_test.py passes\n"
            f"heavy test: do not run\nthread cap: {THREADS}\n")


def test_an_agent_dispatch_imports_only_its_list(wired, repo):
    argv, env = wired
    (repo / ".claude" / "agents").mkdir(parents=True, exist_ok=True)
    (repo / ".claude" / "agents" / "implementer.md").write_text(AGENT_MD)
    payload = _payload(repo, "Agent", {"description": "implement the parser", "prompt": DISPATCH,
                                       "subagent_type": "implementer"})
    got = imported(argv, payload, repo, env) - FLOOR
    assert got - AGENT == set(), f"outside the Agent hook's import budget: {sorted(got - AGENT)}"
    assert not {m.split(".")[0] for m in got} & (NEVER - {"json", "pathlib", "urllib", "ipaddress", "importlib",
                                                          "subprocess", "threading"} | {"hashlib"})


def test_session_start_imports_only_its_list(wired, repo, tmp_path):
    argv, env = wired
    payload = {"session_id": "budget", "transcript_path": "", "cwd": str(repo), "hook_event_name": "SessionStart",
               "source": "startup"}
    got = imported([*argv[:-1], "SessionStart"], payload, repo, {**env, "CLAUDE_ENV_FILE": str(tmp_path / "env")})
    got -= FLOOR
    assert got - SESSION == set(), f"outside the SessionStart hook's import budget: {sorted(got - SESSION)}"
    assert not {m.split(".")[0] for m in got} & {"bashlex", "psutil", "rich", "pynvml", "tomllib", "site"}


def test_the_budget_catches_an_import(wired, repo, tmp_path):
    """The test can fail: a hook whose path imports json (through a sitecustomize-free shim that
    imports it first) shows json outside the list."""
    argv, env = wired
    shim = tmp_path / "shim.py"
    shim.write_text("import json, runpy, sys\n"
                    "sys.argv = sys.argv[1:]\nrunpy.run_path(sys.argv[0], run_name='__main__')\n")
    got = imported([argv[0], *argv[1:3], str(shim), *argv[3:]], _payload(repo, "Bash", {"command": "ls"}), repo, env)
    assert "json" in got - FLOOR - BASH
