"""G01's shell side: no shell command writes what guards the agents, skips the commit gate,
sets a break switch or (as a subagent) declares a heavy or whole-suite run (SPEC §4.3).
The file-tool side is hooks/file_guards.py.
"""
from __future__ import annotations

from swarmgate import guard as G
from swarmgate.hooks.git_args import skips_git_hooks
from swarmgate.hooks.shell_event import (EXPORTERS, SETTERS, analysis_of, assignments_of, broken, export_pairs,
                                         main_call, subagent_call)
from swarmgate.hooks.shell_writes import writes_of
from swarmgate.hooks.test_runs import parse_scope


def check_g01_shell(event, config):
    analysis = analysis_of(event, config)
    if analysis is None:
        return None
    findings = []
    if not broken(event, "g01-allow-shell-writes"):
        from swarmgate.hooks.protected_paths import protected_reason
        from swarmgate.state_paths import state_dir

        sd = str(state_dir())
        cwd = event.cwd or event.repo
        for _cmd, path, how, here in writes_of(event, analysis):
            p = path
            for v in ("${SWARMGATE_STATE_DIR}", "$SWARMGATE_STATE_DIR"):
                if p.startswith(v):
                    p = sd + p[len(v):]
            if p.startswith(("$", "~")):
                continue
            why = protected_reason(p, cwd=here or cwd, repo=event.repo, state_dir=sd)
            if why:
                findings.append(G.Finding(
                    "G01", f"shell write refused ({how}): {why}. No agent may change what guards it.",
                    "leave this file alone; if the rule itself is wrong, tell the person, who edits it by "
                    "hand."))
                break
    if not broken(event, "g01-allow-hook-skip"):
        for c in analysis.commands:
            why = skips_git_hooks(c)
            if why:
                findings.append(G.Finding(
                    "G01", f"{why}: the commit gate (gate-staged in the pre-commit hook) guards what is "
                           f"committed, and no agent may switch off what guards it.",
                    "commit without skipping the hooks; if the gate is red, fix what it reports (or tell the "
                    "person why it is wrong)."))
                break
    if broken(event, "g01-allow-shell-env"):
        return findings
    heavy_var = config["heavy"]["prefix_var"]
    scope_var = config["scope"]["prefix_var"]
    for i, c in enumerate(analysis.commands):
        if not c.assignments and not (c.words and c.name in SETTERS):
            continue
        pairs = dict(assignments_of(c))
        pairs.update(export_pairs(c))
        if "SWARMGATE_BREAK" in pairs or (c.words and c.name in EXPORTERS + ("env",) and any(
                a.split("=", 1)[0] == "SWARMGATE_BREAK" for a in c.args)):
            findings.append(G.Finding(
                "G01", "setting SWARMGATE_BREAK in a command is refused: break switches disable "
                       "protections and are honoured only inside `swarmgate selftest`.",
                "remove SWARMGATE_BREAK from the command; to prove a guard can turn red, run "
                "`swarmgate selftest CODE`."))
            break
        if event.is_subagent and heavy_var in pairs:
            findings.append(G.Finding(
                "G01", f"subagent `{event.actor}` sets {heavy_var}: only the main agent may declare a "
                       f"heavy run.",
                "remove the prefix; heavy tests are the main agent's (see B01)."))
            break
        if event.is_subagent and scope_var in pairs and parse_scope(pairs[scope_var]).get("kind", "").lower() == "full":
            findings.append(G.Finding(
                "G01", f"subagent `{event.actor}` sets {scope_var} with kind=full: whole-suite runs "
                       f"belong to the main agent.",
                "narrow the run and declare kind=items or kind=target."))
            break
    return findings


GUARDS = (
    G.Guard(
        code="G01",
        summary="no agent writes swarmgate's config, the settings, the hooks or the state directory",
        events=("PreToolUse",), tools=G.SHELL_TOOLS, check=check_g01_shell, needs=("bash",),
        doc=G.GuardDoc(
            why="An agent that cannot finish its task under a rule finds the rule's file the shortest way "
                "out. From the shell that means a redirect into .claude/settings.json, `sed -i` on the "
                "config, an inline SWARMGATE_BREAK, a subagent declaring itself allowed to run heavy "
                "tests, or a commit that skips the gate (`--no-verify`, `core.hooksPath`).",
            example="`echo '{}' > .claude/settings.json`, `SWARMGATE_BREAK=b01-allow-heavy cargo test`, a "
                    "subagent's `SWARMGATE_HEAVY=commit cargo test --workspace`, `git commit --no-verify`",
            instead="Ask the person to change the rule; they edit these files by hand.",
            exceptions="Reading these files is allowed.",
        ),
        breaks={"g01-allow-shell-writes": "shell writes to protected paths pass",
                "g01-allow-hook-skip": "git commit --no-verify and core.hooksPath changes pass",
                "g01-allow-shell-env": "inline SWARMGATE_BREAK and subagent heavy/full declarations pass"},
        cases=(
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
            G.Case("main-reads-settings", "PreToolUse", main_call("cat .claude/settings.json | head"),
                   fires=False),
            G.Case("main-commit-message-mentions-no-verify", "PreToolUse",
                   main_call("git commit -m 'never use --no-verify'"), fires=False),
            G.Case("subagent-writes-src", "PreToolUse", subagent_call("echo x > src/notes.txt"), fires=False),
            G.Case("main-sets-heavy", "PreToolUse",
                   main_call("SWARMGATE_HEAVY=commit run-with-memory-cap 8G -- make check-full"), fires=False),
        ),
    ),
)
