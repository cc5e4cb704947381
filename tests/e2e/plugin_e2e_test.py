"""swarmgate as a Claude Code plugin, through the real binary's `claude plugin` commands.

The checkout is the local marketplace (.claude-plugin/marketplace.json, source ./plugin). The
plugin's hooks run the swarmgate install found on PATH (here: this test's own, through a
directory holding only a `swarmgate` link); the repository's config still comes from
`swarmgate install`. With the plugin alone, a subagent's heavy command is refused through the
plugin's hooks; with the plugin and the repository's settings both wiring swarmgate, each call is
judged once: one decision-log line. With the current pipx and uv installing swarmgate (pipx 1.18 writes
`#!PYTHON -E`), the plugin's hook starts that install: the main agent's `ls` runs and a subagent of the
plugin's own `swarmgate:implementer` is refused its heavy command (B01).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness import CHECKOUT, agent_path, swarmgate_entry
from messages_api import Conversation, bash, dispatch, done

pytestmark = pytest.mark.e2e

WORKER = "e2e-worker"


def _plugin_install(claude_repo) -> None:
    env = claude_repo.env()
    for argv in (["plugin", "marketplace", "add", str(CHECKOUT)], ["plugin", "install", "swarmgate@swarmgate"]):
        p = subprocess.run([claude_repo.claude_bin, *argv], capture_output=True, text=True, env=env,
                           cwd=claude_repo.repo, timeout=120)
        assert p.returncode == 0, (argv, p.stdout, p.stderr)
    listed = subprocess.run([claude_repo.claude_bin, "plugin", "list"], capture_output=True, text=True, env=env,
                            timeout=60).stdout
    assert "swarmgate@swarmgate" in listed, listed


def _path_with_swarmgate(claude_repo) -> str:
    """PATH for the client: the agent's PATH and a directory holding only a `swarmgate` link (what a
    `pipx install` puts in ~/.local/bin)."""
    d = claude_repo.root / "user-bin"
    d.mkdir(exist_ok=True)
    link = d / "swarmgate"
    if not link.exists():
        link.symlink_to(swarmgate_entry())
    return f"{d}{os.pathsep}{agent_path()}"


def _unwire_settings(claude_repo) -> None:
    """Keep the repository's config, rules and agents; remove the hooks `swarmgate install` wrote."""
    p = claude_repo.repo / ".claude" / "settings.json"
    data = json.loads(p.read_text())
    data.pop("hooks", None)
    p.write_text(json.dumps(data, indent=2) + "\n")


def _heavy_from_a_subagent(claude_repo, name: str):
    claude_repo.add_agent(WORKER)
    return claude_repo.run(f"script:{name}", [
        Conversation(f"script:{name}", [
            dispatch(WORKER, f"script:{name}-sub\nRun the tests.\nheavy test: do not run"),
            done("dispatched"),
        ]),
        Conversation(f"script:{name}-sub", [bash("cargo test --workspace"), done("refused, reporting back")]),
    ], env={"PATH": _path_with_swarmgate(claude_repo)})


def test_the_plugins_hooks_refuse_a_subagents_heavy_command(claude_repo):
    _unwire_settings(claude_repo)
    _plugin_install(claude_repo)
    run = _heavy_from_a_subagent(claude_repo, "plugin-only")
    assert run.returncode == 0, run.describe()
    (res,) = run.results_of("Bash", "script:plugin-only-sub")
    assert res.is_error and res.text.startswith("PreToolUse:Bash hook error:"), run.describe()
    assert "[B01]" in res.text, run.describe()
    recs = run.decisions(event="PreToolUse", tool="Bash")
    assert [(r["agent_type"], r["decision"]) for r in recs] == [(WORKER, "deny")], run.describe()
    print("plugin e2e (plugin only):", res.text.splitlines()[0], "| log:", json.dumps(recs[0]["codes"]))


def test_plugin_and_repository_settings_judge_each_call_once(claude_repo):
    _plugin_install(claude_repo)   # the repository's settings wire swarmgate too (the harness's install)
    run = _heavy_from_a_subagent(claude_repo, "plugin-and-settings")
    assert run.returncode == 0, run.describe()
    (res,) = run.results_of("Bash", "script:plugin-and-settings-sub")
    assert res.is_error and "[B01]" in res.text, run.describe()
    recs = run.decisions(event="PreToolUse", tool="Bash")
    assert [(r["agent_type"], r["decision"]) for r in recs] == [(WORKER, "deny")], run.describe()
    dispatches = run.decisions(event="PreToolUse", tool="Agent")
    assert len(dispatches) == 1, run.describe()   # the dispatch too: one line, not two
    starts = run.decisions(event="SessionStart")
    assert len(starts) <= 1, run.describe()
    print("plugin e2e (plugin + settings):", res.text.splitlines()[0], "| log lines for the Bash call:", len(recs))


def test_settings_wired_during_a_plugin_session_do_not_leave_its_calls_unjudged(claude_repo):
    """Settings wired by `swarmgate install` during a session that runs the plugin alone are run by
    that session only once the client has noticed the change (2.1.332 picks it up after a while, or not
    before the next session), so the plugin must not defer to them (hook_wiring.loaded_by_client): the
    subagent's heavy command is refused by the plugin's hook, and by the settings' too once the client
    has reloaded them: judged once or twice, never by nobody (before this, nobody judged it)."""
    _unwire_settings(claude_repo)
    _plugin_install(claude_repo)
    claude_repo.add_agent(WORKER)
    name = "plugin-then-install"

    def person_installs_then_dispatch(_req):   # the person wires the repository while the session runs
        p = subprocess.run([swarmgate_entry(), "install", str(claude_repo.repo)], capture_output=True, text=True,
                           env=claude_repo.env(), timeout=120)
        assert p.returncode == 0, p.stdout + p.stderr
        return dispatch(WORKER, f"script:{name}-sub\nRun the tests.\nheavy test: do not run")

    run = claude_repo.run(f"script:{name}", [
        Conversation(f"script:{name}", [person_installs_then_dispatch, done("dispatched")]),
        Conversation(f"script:{name}-sub", [bash("cargo test --workspace"), done("refused, reporting back")]),
    ], env={"PATH": _path_with_swarmgate(claude_repo)})
    assert run.returncode == 0, run.describe()
    assert "swarmgate" in json.dumps(json.loads((claude_repo.repo / ".claude" / "settings.json").read_text())["hooks"])
    (res,) = run.results_of("Bash", f"script:{name}-sub")
    assert res.is_error and "[B01]" in res.text, run.describe()
    recs = run.decisions(event="PreToolUse", tool="Bash", agent_type=WORKER)
    assert [r["decision"] for r in recs] in (["deny"], ["deny", "deny"]), run.describe()
    print("plugin e2e (settings wired mid-session):", res.text.splitlines()[0], "| log lines for the Bash call:",
          len(recs))


# --- the plugin with swarmgate installed by the current pipx and uv ---------------------------------

MAIN_RULES_LINE = "Every task enters here. You schedule and judge: you talk to people, write"
PIPX_WITH_FLAGS = (1, 18)   # pipx from 1.18 writes its console scripts with `#!PYTHON -E`


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.strip().split()[-1].split(".")[:2])


@pytest.fixture(scope="module")
def tool_installs(tmp_path_factory) -> dict:
    """{"pipx": bin dir, "uv": bin dir}: a wheel of this working tree installed by the test extras'
    pipx and uv (the current releases: `pip index versions pipx uv`), each into its own test-owned
    place. The wheel is built from a copy of the tree (a build writes egg-info beside the sources)."""
    venv_bin = Path(sys.executable).parent
    pipx, uv = venv_bin / "pipx", venv_bin / "uv"
    if not (pipx.exists() and uv.exists()):
        pytest.skip(f"pipx and uv are not installed in {venv_bin} (the test extras: ./install.sh --dev)")
    got = _version(subprocess.run([str(pipx), "--version"], capture_output=True, text=True).stdout)
    assert got >= PIPX_WITH_FLAGS, f"pipx {got} is older than the current release; ./install.sh --dev upgrades it"
    top = tmp_path_factory.mktemp("plugin-installs")
    tree = top / "tree"
    files = subprocess.run(["git", "-C", str(CHECKOUT), "ls-files", "-z", "-co", "--exclude-standard"],
                           capture_output=True, check=True).stdout.split(b"\0")
    for rel in filter(None, (f.decode() for f in files)):
        if (CHECKOUT / rel).is_file():
            (tree / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(CHECKOUT / rel, tree / rel)
    build = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--wheel", "--outdir", str(top / "dist"),
                            str(tree)], capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout[-2000:] + build.stderr[-2000:]
    (wheel,) = (top / "dist").glob("swarmgate-*.whl")
    base = os.path.realpath(sys.executable)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIPX_", "UV_", "VIRTUAL_ENV", "CLAUDE_"))}
    (top / "home").mkdir()
    env.update(HOME=str(top / "home"), PIPX_HOME=str(top / "pipx"), PIPX_BIN_DIR=str(top / "pipx-bin"),
               PIPX_MAN_DIR=str(top / "man"), UV_TOOL_DIR=str(top / "uv-tools"), UV_TOOL_BIN_DIR=str(top / "uv-bin"),
               UV_CACHE_DIR=str(top / "uv-cache"), UV_PYTHON_DOWNLOADS="never")
    for argv in ([str(pipx), "install", "--python", base, str(wheel)],
                 [str(uv), "tool", "install", "--python", base, str(wheel)]):
        p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
        assert p.returncode == 0, (argv, p.stdout[-2000:], p.stderr[-2000:])
    return {"pipx": top / "pipx-bin", "uv": top / "uv-bin"}


def _only_the_plugins_agents(claude_repo) -> None:
    """Remove the hooks, agents and rule texts `swarmgate install` wrote (the config stays: it holds
    this test's own memory slice), so the plugin's own agent types are the only ones."""
    _unwire_settings(claude_repo)
    claude = claude_repo.repo / ".claude"
    for rel in ("agents", "rules"):
        shutil.rmtree(claude / rel, ignore_errors=True)
    for rel in ("agent-common.md", "main-agent.md"):
        (claude / rel).unlink(missing_ok=True)
    (claude_repo.repo / "CLAUDE.md").unlink(missing_ok=True)   # an install's import of .claude/main-agent.md


@pytest.mark.parametrize("kind", ["pipx", "uv"])
def test_with_the_current_pipx_and_uv_the_plugin_runs_ls_and_refuses_a_subagents_heavy_command(
        claude_repo, tool_installs, kind):
    """The bar of issue 22: with pipx 1.18 (`#!PYTHON -E`) the plugin's hook once exec'd the whole shebang
    line, exit 127, and `onFailure: block` refused every call, `ls` too."""
    bin_dir = tool_installs[kind]
    shebang = (bin_dir / "swarmgate").read_text().splitlines()[0]
    print(f"plugin e2e ({kind}): the console script's first line: {shebang}")
    _only_the_plugins_agents(claude_repo)
    _plugin_install(claude_repo)
    name = f"plugin-{kind}"

    def dispatch_the_skeleton(req):   # D12's way-out: `dispatch-prompt TYPE`, filled in, as the prompt
        (res,) = req.last_tool_results()
        filled = re.sub(r"<([^<>\n]*) fill in>", lambda m: f"the {m.group(1)} of this test", res.text)
        filled = filled.replace("scratch: the path of this test", f"scratch: {claude_repo.tmp / 'scratch'}")
        return dispatch("swarmgate:implementer", f"script:{name}-sub\n{filled}")

    run = claude_repo.run(f"script:{name}", [
        Conversation(f"script:{name}", [
            bash("ls"),
            bash("dispatch-prompt implementer"),
            dispatch_the_skeleton,
            done("dispatched"),
        ]),
        Conversation(f"script:{name}-sub", [bash("cargo test --workspace"), done("refused, reporting back")]),
    ], env={"PATH": f"{bin_dir}{os.pathsep}{agent_path()}"})
    assert run.returncode == 0, run.describe()
    first = json.dumps(run.conversation(f"script:{name}")[0].body)
    assert MAIN_RULES_LINE in first, first[:3000]   # the plugin's main-agent.md, in the SessionStart context
    ls, prompt = run.results_of("Bash", f"script:{name}")
    assert not ls.is_error and "README.md" in ls.text, run.describe()
    # the plugin's agent found by its bare name, in a repository with no agent definitions of its own
    assert not prompt.is_error and "heavy test: do not run" in prompt.text, run.describe()
    assert 'subagent_type "swarmgate:implementer"' in prompt.text, prompt.text
    (heavy,) = run.results_of("Bash", f"script:{name}-sub")
    assert heavy.is_error and "[B01]" in heavy.text, run.describe()
    recs = run.decisions(event="PreToolUse", tool="Bash")
    assert [(r.get("agent_type"), r["decision"]) for r in recs][-1] == ("swarmgate:implementer", "deny"), \
        run.describe()
    print(f"plugin e2e ({kind}): ls ran; the subagent's heavy command:", heavy.text.splitlines()[0])
