"""G01's shell side: no shell command writes what guards the agents, skips the commit gate,
sets a break switch or (as a subagent) declares a heavy or whole-suite run (SPEC §4.3).
The file-tool side is hooks/file_guards.py.
"""
from __future__ import annotations

from swarmgate import guard as G
from swarmgate.hooks.shell_event import (analysis_of, assignments_of, broken, export_pairs,
                                         main_call, subagent_call)
from swarmgate.hooks.test_runs import parse_scope

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from swarmgate.config import Config
    from swarmgate.guard import Finding
    from swarmgate.hook_protocol import HookEvent
    from swarmgate.hooks.bash_results import Analysis



def check_g01_shell(event: HookEvent, config: Config) -> Finding | list[Finding] | None:
    analysis = analysis_of(event, config)
    if analysis is None:
        return None
    findings = []
    if not broken(event, "g01-allow-shell-writes"):
        finding = _shell_write_finding(event, analysis, config)
        if finding is not None:
            findings.append(finding)
    if not broken(event, "g01-allow-hook-skip") and any(c.words and c.name == "git" for c in analysis.commands):
        from swarmgate.hooks.git_args import skips_git_hooks   # it reads git commands only

        for c in analysis.commands:
            why = skips_git_hooks(c)
            if why:
                findings.append(G.Finding(
                    "G01", f"{why}: the commit gate (gate-staged in the pre-commit hook) guards what is "
                           f"committed, and no agent may switch off what guards it.",
                    "commit without skipping the hooks; if the gate is red, fix what it reports (or tell the "
                    "person why it is wrong)."))
                break
    if not broken(event, "g01-allow-shell-writes"):
        findings.extend(_interpreter_writes(event, analysis))
        findings.extend(_install_runs(analysis))
    if broken(event, "g01-allow-shell-env"):
        return findings
    finding = _env_finding(event, analysis, config)
    if finding is not None:
        findings.append(finding)
    return findings


def _shell_write_finding(event: HookEvent, analysis: Analysis, config: Config) -> Finding | None:
    """The first shell write that reaches a protected place (hooks/write_paths.py places it: tilde,
    the hook's variables, cd/pushd/popd, links made earlier in the command, symbolic links on disk),
    or a tree written into that holds one, or a target that cannot be placed but names one."""
    from swarmgate.hooks.shell_writes import placed_of

    writes = placed_of(event, analysis, config)
    if not writes:   # most commands write nothing: the protected places' tables stay unread
        return None
    from swarmgate.hooks.protected_paths import (PROTECTED_NAMES, hard_link_reason, protected_reason,
                                                 protected_within)
    from swarmgate.state_paths import state_dir_text

    sd = state_dir_text()
    for w in writes:
        why = None
        if w.full is None:
            if any(n in w.path for n in PROTECTED_NAMES) or sd in w.path:
                why = (f"its target {w.path} cannot be placed before it runs and names a protected file, so it "
                       f"cannot be verified")
        for name in w.names:
            why = why or protected_reason(name, cwd="/", repo=event.repo, root=event.root, state_dir=sd) or \
                (not w.tree and hard_link_reason(name, repo=event.repo, root=event.root)) or None
            if w.tree and not why:
                why = protected_within(name, repo=event.repo, root=event.root, state_dir=sd)
                if why:
                    why = f"it writes into {w.path}, and {why}"
            if why:
                break
        if why:
            return G.Finding(
                "G01", f"shell write refused ({w.how}): {why}. No agent may change what guards it.",
                "leave this file alone; if the rule itself is wrong, tell the person, who edits it by hand.")
    return None


# variables no command may set: they switch protections off (SPEC §7)
ALWAYS_REFUSED = ("SWARMGATE_BREAK", "SWARMGATE_SELFTEST_TOKEN", "SWARMGATE_SELFTEST_CASE")
# where the runner, the host tools and the hooks find the machine's state and config: a command
# that points them elsewhere gets a private ledger that ignores every other booking
LOCATION_VARS = ("SWARMGATE_STATE_DIR", "SWARMGATE_HOSTS_CONFIG", "HOME", "XDG_CONFIG_HOME",
                 "SWARMGATE_CGROUP_ROOT", "SWARMGATE_CGROUP_CPU_ROOT")
# the forms B10 reads a run scope from (hooks/shell_event.command_env)
_DECLARING = ("prefix", "assignment", "export", "declare", "typeset", "env NAME=VALUE")


UMBRELLA = "swarmgate"   # tool_table.UMBRELLA, without loading the tool list (a test holds them equal)


def _tool_names() -> frozenset:
    from swarmgate.tool_table import TOOLS, UMBRELLA
    return frozenset((*(t.name for t in TOOLS), UMBRELLA))


def env_changes_of(event: HookEvent, analysis: Analysis) -> list:
    """[(name, how)] for every variable the command changes, in any form: the text itself and the
    scripts the reader read (statements), and every command the reader found (Makefile recipes,
    package.json scripts, `bash -c` texts): hooks/env_changes."""
    memo = event.memo
    if "env-changes" in memo:
        return memo["env-changes"]
    from swarmgate.hooks.env_changes import changes, command_changes

    out = list(changes(event.shell_command or ""))
    for path in getattr(analysis, "scripts_read", ()) or ():
        try:
            from swarmgate.bounded_read import read_text
            out.extend(changes(read_text(path, 1 << 20)))
        except OSError:
            continue
    for c in analysis.commands:
        out.extend(command_changes(list(c.words), assignments_of(c)))
    memo["env-changes"] = list(dict.fromkeys(out))
    return memo["env-changes"]


def _env_finding(event: HookEvent, analysis: Analysis, config: Config) -> Finding | None:
    from swarmgate.hooks.env_changes import ALL, DYNAMIC

    heavy_var = config["heavy"]["prefix_var"]
    scope_var = config["scope"]["prefix_var"]
    changed = env_changes_of(event, analysis)
    for name, how in changed:
        if name in ALWAYS_REFUSED:
            if name == "SWARMGATE_BREAK":
                return G.Finding(
                    "G01", f"setting SWARMGATE_BREAK in a command is refused ({how}): break switches disable "
                           "protections and are honoured only inside `swarmgate selftest`.",
                    "remove SWARMGATE_BREAK from the command; to prove a guard can turn red, run "
                    "`swarmgate selftest CODE`.")
            return G.Finding(
                "G01", f"setting {name} in a command is refused ({how}): only `swarmgate selftest` sets it.",
                f"remove {name} from the command; run `swarmgate selftest` for self-tests.")
    if event.is_subagent:
        from swarmgate import lean_os as os
        for name, how in changed:
            if name == heavy_var:
                return G.Finding(
                    "G01", f"subagent `{event.actor}` sets {heavy_var}: only the main agent may declare a "
                           f"heavy run.",
                    "remove the prefix; heavy tests are the main agent's (see B01).")
            if name == scope_var and how in _DECLARING:
                continue  # a run scope is a declaration B10 asks for (kind=full is checked below)
            if name.startswith("SWARMGATE_") or name == scope_var or name == DYNAMIC or (
                    name == ALL and any(k.startswith("SWARMGATE_") for k in os.environ)):
                what = {DYNAMIC: "a variable whose name it does not write out",
                        ALL: "the whole environment (SWARMGATE_* included)"}.get(name, name)
                return G.Finding(
                    "G01", f"subagent `{event.actor}` changes {what} ({how}): swarmgate's variables decide "
                           "what guards the agents and where their state is, and no subagent may change "
                           "them.",
                    "run the command without touching SWARMGATE_* variables; if it needs another setting, "
                    "report that to the main agent.")
        for c in analysis.commands:
            pairs = dict(assignments_of(c))
            pairs.update(export_pairs(c))
            if scope_var in pairs and parse_scope(pairs[scope_var]).get("kind", "").lower() == "full":
                return G.Finding(
                    "G01", f"subagent `{event.actor}` sets {scope_var} with kind=full: whole-suite runs "
                           f"belong to the main agent.",
                    "narrow the run and declare kind=items or kind=target.")
    return _location_finding(event, analysis, changed)


def _location_finding(event: HookEvent, analysis: Analysis, changed: list) -> Finding | None:
    """Pointing swarmgate's own tools at another state dir, hosts config or home (any agent)."""
    from swarmgate import lean_os as os

    from swarmgate.hooks.env_changes import ALL, DYNAMIC
    from swarmgate.hooks.shell_event import EXPORTERS, command_env

    # no command is given an environment by the text (command_env reads assignments and exporters
    # only) and no change the command makes names a location: nothing moves, whoever runs
    if not any(assignments_of(c) or (c.words and c.name in EXPORTERS) for c in analysis.commands) and not any(
            how != "prefix" and (name in LOCATION_VARS or name in (DYNAMIC, ALL)) for name, how in changed):
        return None
    tools = _tool_names()
    runs = [i for i, c in enumerate(analysis.commands) if c.words and c.name in tools]
    if not runs:
        return None
    moved: set[str] = set()
    for i in runs:
        moved.update(k for k in command_env(analysis, i) if k in LOCATION_VARS)
    for name, how in changed:
        if how == "prefix":
            continue  # for its own command only: command_env above saw it where it reaches a tool
        if name in LOCATION_VARS or name == DYNAMIC:
            moved.add(name if name != DYNAMIC else "a variable whose name it does not write out")
        elif name == ALL and any(k in os.environ for k in LOCATION_VARS[:2]):
            moved.add("the whole environment (" + ", ".join(k for k in LOCATION_VARS[:2] if k in os.environ) + ")")
    if not moved:
        return None
    tool = analysis.commands[runs[0]].name
    return G.Finding(
        "G01", f"`{tool}` would run with {', '.join(sorted(moved))} changed by the command: swarmgate's tools "
               "read the machine's ledger, history and hosts config from these, and a run pointed elsewhere "
               "keeps a private ledger that ignores every other booking.",
        f"run `{tool}` without changing {', '.join(sorted(moved))}; the machine's settings apply to every "
        "agent.")


def _install_runs(analysis: Analysis) -> list:
    """`swarmgate install` (or `--uninstall`) run by an agent, in any form the reader reaches (a path,
    `python -m swarmgate`, a wrapper, `bash -c`), or interpreter code calling swarmgate's install: it
    rewrites .claude/settings.json, and Claude Code picks a changed settings file up during the
    session (docs/plugin.md), so an uninstall switches the hooks off for the agent that ran it."""
    for c in analysis.commands:
        if c.name == UMBRELLA:
            verb = next((w for w in list(c.words)[1:] if not w.startswith("-")), "")
            if verb == "install":
                return [_install_finding(" ".join(c.words))]
    for prog in getattr(analysis, "programs", ()) or ():
        code = prog.code or ""
        if "swarmgate" in code and ("swarmgate.install" in code or "import install" in code):
            return [_install_finding(f"{prog.interpreter} code calling swarmgate's install")]
    return []


def _install_finding(what: str) -> Finding:
    return G.Finding(
        "G01", f"`{what}`: swarmgate's install writes the hooks into .claude/settings.json (or removes them), "
               "and no agent may change what guards it.",
        "leave the wiring alone; if it is wrong, tell the person, who runs `swarmgate install` by hand.")


def _interpreter_writes(event: HookEvent, analysis: Analysis) -> list:
    """An interpreter one-liner that writes a protected path, or (a subagent's) sets SWARMGATE_*."""
    programs = getattr(analysis, "programs", ()) or ()
    if not programs:   # no interpreter code in the command: its reader stays unimported
        return []
    from swarmgate.hooks.interpreter_writes import (env_writes, path_literals, path_names, unplaceable_protected,
                                                   writes_near)
    from swarmgate.hooks.protected_paths import protected_reason, protected_within
    from swarmgate.state_paths import state_dir_text

    sd = state_dir_text()
    for prog in programs:
        code = prog.code or ""
        names = env_writes(code)
        if not event.is_subagent:  # the main agent: only what no agent may set
            names = [n for n in names if n in ALWAYS_REFUSED or n in LOCATION_VARS]
        if names:
            who = f"subagent `{event.actor}`" if event.is_subagent else "the main agent"
            return [G.Finding(
                "G01", f"{prog.interpreter} code of {who} sets {', '.join(names)} for itself or a child: "
                       "swarmgate's variables decide what guards the agents and where the machine's state is.",
                "leave SWARMGATE_* variables alone.")]
        here = prog.cwd or event.cwd or event.repo
        for path, where in path_literals(code):
            why = None
            for name in path_names(code, path, here):
                why = protected_reason(name, cwd=here, repo=event.repo, root=event.root, state_dir=sd) or \
                    protected_within(name, repo=event.repo, root=event.root, state_dir=sd)
                if why:
                    break
            if not why and unplaceable_protected(code, path, where):
                why = f"{path} is a protected file's name and the code writes it where it does not spell out"
            if why and writes_near(code, where):
                return [G.Finding(
                    "G01", f"{prog.interpreter} code that writes {path} refused: {why}. No agent may change what "
                           "guards it.",
                    "leave this file alone; if the rule itself is wrong, tell the person, who edits it by hand.")]
    return []


GUARDS = (
    G.Guard(
        code="G01",
        summary="no agent writes swarmgate's config, the settings, the hooks or the state directory",
        events=("PreToolUse",), tools=G.SHELL_TOOLS, check=check_g01_shell, needs=("bash",),
        doc=G.GuardDoc(
            why="An agent that cannot finish its task under a rule finds the rule's file the shortest way "
                "out. From the shell that means a redirect into .claude/settings.json, `sed -i` on the "
                "config, an interpreter one-liner that opens it for writing, SWARMGATE_BREAK set in any "
                "form, a subagent changing any SWARMGATE_* variable (a bare assignment under `set -a`, "
                "export/declare/readonly, `env -u`, unset, `printf -v`, read, eval, an interpreter's "
                "environment), any agent pointing swarmgate's tools at another state directory, hosts "
                "config or home (a private ledger ignores every other booking), or a commit that skips "
                "the gate (`--no-verify`, `core.hooksPath`). `swarmgate install --uninstall .` does the "
                "same through swarmgate itself: the client picks the changed settings up during the session. "
                "So does a write to what every later process runs first: the client's session env file "
                "(~/.claude/session-env/..., sourced before each command: the shims' PATH line is there), a "
                "Python start-up module (sitecustomize.py, usercustomize.py) or a .pth file in a site directory.",
            example="`echo '{}' > .claude/settings.json`, `python3 -c \"open('.claude/settings.json','w')\"`, "
                    "`SWARMGATE_BREAK=b01-allow-heavy cargo test`, a subagent's `set -a; "
                    "SWARMGATE_BREAK=x; host-dispatch -- make` or `export SWARMGATE_STATE_DIR=/tmp/x`, "
                    "`SWARMGATE_STATE_DIR=/tmp/x run-with-memory-cap 8G -- make`, `git commit --no-verify`, "
                    "`swarmgate install --uninstall .`",
            instead="Ask the person to change the rule; they edit these files by hand. Run swarmgate's tools "
                    "with the machine's settings.",
            exceptions="Reading these files and variables is allowed. The main agent sets SWARMGATE_HEAVY and "
                       "SWARMGATE_RUN_SCOPE; a subagent declares its run scope (SWARMGATE_RUN_SCOPE, not "
                       "kind=full) in front of the run or with export, as B10 asks.",
        ),
        breaks={"g01-allow-shell-writes": "shell and interpreter writes to protected paths pass (and a "
                                          "subagent's interpreter setting SWARMGATE_*)",
                "g01-allow-hook-skip": "git commit --no-verify and core.hooksPath changes pass",
                "g01-allow-shell-env": "SWARMGATE_BREAK set in a command, a subagent changing SWARMGATE_* "
                                       "variables, and state-dir/hosts-config/HOME overrides in front of "
                                       "swarmgate's tools pass"},
        cases=lambda: (
            G.Case("main-redirect-settings", "PreToolUse", main_call("echo '{}' > .claude/settings.json"),
                   fires=True, breaks=("g01-allow-shell-writes",)),
            G.Case("subagent-sed-config", "PreToolUse",
                   subagent_call("sed -i 's/deny/ask/' .claude/swarmgate.toml"),
                   fires=True, breaks=("g01-allow-shell-writes",)),
            G.Case("main-inline-break", "PreToolUse", main_call("SWARMGATE_BREAK=b01-allow-heavy cargo test -p x"),
                   fires=True, breaks=("g01-allow-shell-env",)),
            G.Case("subagent-sets-heavy", "PreToolUse",
                   subagent_call("SWARMGATE_HEAVY=commit cargo build"),
                   fires=True, breaks=("g01-allow-shell-env",)),
            G.Case("main-commit-no-verify", "PreToolUse", main_call("git add -A && git commit -nm 'wip'"),
                   fires=True, breaks=("g01-allow-hook-skip",)),
            G.Case("subagent-hookspath", "PreToolUse", subagent_call("git config core.hooksPath /dev/null"),
                   fires=True, breaks=("g01-allow-hook-skip",)),
            G.Case("subagent-set-a-bare-break", "PreToolUse",
                   subagent_call("set -a; SWARMGATE_BREAK=no-long-job-check; host-dispatch -- make"),
                   fires=True, breaks=("g01-allow-shell-env",)),
            G.Case("subagent-exports-state-dir", "PreToolUse",
                   subagent_call("export SWARMGATE_STATE_DIR=/tmp/mine"), fires=True, breaks=("g01-allow-shell-env",)),
            G.Case("subagent-env-u", "PreToolUse",
                   subagent_call("env -u SWARMGATE_HOSTS_CONFIG multi-host-run --peer b -- make"),
                   fires=True, breaks=("g01-allow-shell-env",)),
            G.Case("subagent-printf-v", "PreToolUse", subagent_call("printf -v SWARMGATE_HEAVY %s commit"),
                   fires=True, breaks=("g01-allow-shell-env",)),
            G.Case("subagent-eval-unset", "PreToolUse", subagent_call("eval 'unset SWARMGATE_RUN_SCOPE'"),
                   fires=True, breaks=("g01-allow-shell-env",)),
            G.Case("subagent-python-environ", "PreToolUse",
                   subagent_call("python3 -c \"import os; os.environ['SWARMGATE_BREAK']='x'; "
                                 "os.execvp('ls', ['ls'])\""),
                   fires=True, breaks=("g01-allow-shell-writes",)),
            G.Case("main-private-state-dir-for-the-runner", "PreToolUse",
                   main_call("SWARMGATE_STATE_DIR=/tmp/x run-with-memory-cap 8G -- make"),
                   fires=True, breaks=("g01-allow-shell-env",)),
            G.Case("main-home-for-swarmgate", "PreToolUse",
                   main_call("export HOME=/tmp/h; host-dispatch --mem 2G -- make"),
                   fires=True, breaks=("g01-allow-shell-env",)),
            G.Case("main-python-writes-settings", "PreToolUse",
                   main_call("python3 -c \"open('.claude/settings.json','w').write('{}')\""),
                   fires=True, breaks=("g01-allow-shell-writes",)),
            G.Case("main-perl-writes-config", "PreToolUse",
                   main_call("perl -e 'open(F, \">.claude/swarmgate.toml\"); print F \"\"'"),
                   fires=True, breaks=("g01-allow-shell-writes",)),
            G.Case("subagent-writes-sitecustomize", "PreToolUse",
                   subagent_call("printf 'import pytest\\n' > tests/sitecustomize.py"),
                   fires=True, breaks=("g01-allow-shell-writes",)),
            G.Case("main-appends-to-the-session-env-file", "PreToolUse",
                   main_call("echo 'export PATH=/tmp/bin:$PATH' >> "
                             "~/.claude/session-env/$CLAUDE_CODE_SESSION_ID/sessionstart-hook-0.sh"),
                   fires=True, breaks=("g01-allow-shell-writes",)),
            G.Case("main-git-checkout-settings", "PreToolUse", main_call("git checkout -- .claude/settings.json"),
                   fires=True, breaks=("g01-allow-shell-writes",)),
            G.Case("subagent-extracts-into-claude", "PreToolUse", subagent_call("tar xf /tmp/c.tar -C .claude"),
                   fires=True, breaks=("g01-allow-shell-writes",)),
            G.Case("subagent-writes-through-its-new-link", "PreToolUse",
                   subagent_call("ln -s .claude c && echo '{}' > c/settings.json"),
                   fires=True, breaks=("g01-allow-shell-writes",)),
            G.Case("main-uninstalls-swarmgate", "PreToolUse", main_call("swarmgate install --uninstall ."),
                   fires=True, breaks=("g01-allow-shell-writes",)),
            G.Case("subagent-installs-through-python-m", "PreToolUse",
                   subagent_call("python3 -m swarmgate install /work/repo"),
                   fires=True, breaks=("g01-allow-shell-writes",)),
            G.Case("subagent-python-calls-install", "PreToolUse",
                   subagent_call("python3 -c \"from swarmgate import install; install.main(['--uninstall', '.'])\""),
                   fires=True, breaks=("g01-allow-shell-writes",)),
            G.Case("main-reads-settings", "PreToolUse", main_call("cat .claude/settings.json | head"),
                   fires=False),
            G.Case("main-switches-branch", "PreToolUse", main_call("git checkout main && git restore src/a.py"),
                   fires=False),
            G.Case("subagent-extracts-into-scratch", "PreToolUse",
                   subagent_call("mkdir -p /tmp/out && tar xf /tmp/c.tar -C /tmp/out"), fires=False),
            G.Case("main-runs-doctor", "PreToolUse", main_call("swarmgate doctor . && swarmgate log --decision deny"),
                   fires=False),
            G.Case("subagent-explains-an-install-word", "PreToolUse",
                   subagent_call("swarmgate explain -- pip install -e . && grep -n install docs/install.md"),
                   fires=False),
            G.Case("main-python-reads-settings", "PreToolUse",
                   main_call("python3 -c \"import json; print(json.load(open('.claude/settings.json')))\""),
                   fires=False),
            G.Case("subagent-declares-its-run-scope", "PreToolUse",
                   subagent_call("SWARMGATE_RUN_SCOPE='kind=items; target=tests/x; range=one file; "
                                 "reason=the parser change touches only this' pytest tests/x"), fires=False),
            G.Case("subagent-greps-for-a-variable", "PreToolUse",
                   subagent_call("grep -rn 'SWARMGATE_STATE_DIR=' docs && echo \"SWARMGATE_HEAVY=commit\""),
                   fires=False),
            G.Case("main-home-for-git-only", "PreToolUse",
                   main_call("HOME=/tmp/h git status && run-with-memory-cap 1G -- make"), fires=False),
            G.Case("main-commit-message-mentions-no-verify", "PreToolUse",
                   main_call("git commit -m 'never use --no-verify'"), fires=False),
            G.Case("subagent-writes-src", "PreToolUse", subagent_call("echo x > src/notes.txt"), fires=False),
            G.Case("main-sets-heavy", "PreToolUse",
                   main_call("SWARMGATE_HEAVY=commit run-with-memory-cap 8G -- make check-full"), fires=False),
        ),
    ),
)
