"""What every shell guard reads from a Bash/Monitor event (SPEC §4.3): the parsed command
of the call, the environment each of its commands is started with, the commands that
started it (launchers), and how to show a command in a message.

The command is parsed once per hook call, in the engine's derive phase
(hooks/derivations.py, fact "bash": shell guards declare ``needs=("bash",)``); the guards
are pure functions of that analysis, the event (who acts) and the config. Data is
not a command: only the simple commands the tree says would execute are judged, so
`echo "cargo test --workspace"` or `git commit -m "..."` never match.

Decisions (also in docs/bash-guards.md):
- The environment a command sees is its own prefix (`A=1 cmd`), the prefix of
  a wrapper it runs under (`A=1 run-with-memory-cap 8G -- cmd`, `env A=1 cmd`),
  or an `export A=1` earlier in the same command. A bare `A=1; cmd` is not
  exported and does not count.

Light at import: only swarmgate.guard and the wrapper table (data).
"""
from __future__ import annotations

from swarmgate import guard as G
from swarmgate.hooks.bash_wrappers import LAUNCHERS  # noqa: F401 - who starts whom: the one wrapper table

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from swarmgate.config import Config
    from swarmgate.guard import Finding
    from swarmgate.hook_protocol import HookEvent
    from swarmgate.hooks.bash_results import Analysis, SimpleCommand


EXPORTERS = ("export", "declare", "typeset", "local", "readonly")
SETTERS = frozenset(EXPORTERS + ("env",))


def broken(event: HookEvent, name: str) -> bool:  # noqa: ARG001 - kept for the shell guards' call sites
    """break_switch.broken(name): the one way to read a break switch."""
    from swarmgate.break_switch import broken as _broken
    return _broken(name)


def analysis_of(event: HookEvent, config: Config) -> Analysis | None:
    """The parsed command of a Bash/Monitor call (the derived fact "bash"); None when there is none."""
    from swarmgate.hooks.derivations import get

    return get(event, config, "bash")


def assignments_of(cmd: SimpleCommand) -> dict:
    """A command's prefix assignments as {name: value}, whatever shape the tree gives."""
    a = getattr(cmd, "assignments", None)
    if not a:
        return {}
    if isinstance(a, dict):
        return {str(k): str(v) for k, v in a.items()}
    out = {}
    for item in a:
        if isinstance(item, (tuple, list)) and len(item) == 2:
            out[str(item[0])] = str(item[1])
        else:
            k, _, v = str(item).partition("=")
            out[k] = v
    return out


def export_pairs(cmd: SimpleCommand) -> dict:
    """`export A=1 B=2`, `declare -x A=1`, `env A=1` (as words): the pairs they set."""
    out: dict[str, str] = {}
    if not cmd.words:
        return out
    name = cmd.name
    if name in EXPORTERS or name == "env":
        for a in cmd.args:
            if a.startswith("-"):
                continue
            k, eq, v = a.partition("=")
            if eq and k.replace("_", "a").isalnum():
                out[k] = v
            elif name == "env":
                break
    return out


def command_env(analysis: Analysis, idx: int) -> dict:
    """The variables command ``idx`` of ``analysis.commands`` is started with, as far as the text says."""
    cmds = analysis.commands
    env: dict = {}
    bare: dict = {}
    for j in range(idx):
        c = cmds[j]
        if not c.words:
            bare.update(assignments_of(c))
            continue
        if c.name in EXPORTERS:
            for a in c.args:
                if not a.startswith("-") and "=" not in a and a in bare:
                    env[a] = bare[a]
        env.update(export_pairs(c) if c.name in EXPORTERS else {})
    cmd = cmds[idx]
    # the environment of the commands that started this one (a shell running `-c TEXT` or a
    # script, a wrapper): every variable they were given is inherited
    for p in reversed(launchers(cmds, idx)):
        env.update(assignments_of(p))
    env.update(assignments_of(cmd))
    return env


def launchers(cmds: list[SimpleCommand], idx: int) -> list:
    """The commands that started command ``idx`` (a shell given `-c TEXT` or a script, a wrapper
    such as env/timeout/run-with-memory-cap), innermost first: the tree yields them before it."""
    chain = []
    via = tuple(getattr(cmds[idx], "via", ()) or ())
    for j in range(idx - 1, -1, -1):
        if not via:
            break
        p = cmds[j]
        pv = tuple(getattr(p, "via", ()) or ())
        if len(pv) < len(via) and via[:len(pv)] == pv and p.words and (
                p.name in LAUNCHERS or "/" in p.words[0]):
            chain.append(p)
            via = pv
    return chain


def short(text: str, n: int = 120) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= n else text[: n - 3] + "..."


def cmd_text(cmd: SimpleCommand) -> str:
    t = getattr(cmd, "text", "") or ""
    if not t.strip():
        t = " ".join(cmd.words)
    return short(t)


def core_text(cmd: SimpleCommand) -> str:
    """The command's own words (no prefix), for rewrites."""
    return short(" ".join(_quote(w) for w in cmd.words), 200)


def _quote(w: str) -> str:
    safe = "@%+=:,./-_"
    if w and all(c.isalnum() or c in safe for c in w):
        return w
    return "'" + w.replace("'", "'\"'\"'") + "'"


def via_text(cmd: SimpleCommand) -> str:
    via = [v for v in (getattr(cmd, "via", ()) or ()) if v not in ("pipeline", "list")]
    if not via:
        return ""
    return " (reached through " + " → ".join(via) + ")"


def runnable(cmds: list[SimpleCommand]) -> list[tuple[int, SimpleCommand]]:
    """(index, command) for every command with words (assignment-only entries skipped)."""
    return [(i, c) for i, c in enumerate(cmds) if c.words]


_PATTERN_KEYS = (("heavy", "patterns"), ("scope", "verify_patterns"), ("scope", "full_patterns"))


def pattern_problem(event: HookEvent, config: Config, code: str) -> Finding | None:
    """A refusal naming the config key when a command pattern cannot be read, else None."""
    ok = event.memo.get("bash.patterns-ok")
    if ok:
        return None
    from swarmgate.hooks.command_patterns import PatternError, compile_all

    for section, key in _PATTERN_KEYS:
        try:
            compile_all(config[section][key])
        except PatternError as e:
            where = getattr(config, "path", None) or ".claude/swarmgate.toml"
            return G.Finding(code, f"{where}: [{section}] {key}: {e}; shell commands cannot be judged "
                                   f"until it is fixed, so they are refused.",
                             f"fix the pattern in [{section}] {key} (close the quote).")
    event.memo["bash.patterns-ok"] = True
    return None


# payloads of guard cases (fixtures and self-test cells) for a shell call

def subagent_call(command: str, **extra) -> dict:
    ti = {"command": command}
    ti.update(extra)
    return {"tool_name": "Bash", "agent_id": "a1", "agent_type": "implementer", "tool_input": ti}


def main_call(command: str, **extra) -> dict:
    ti = {"command": command}
    ti.update(extra)
    return {"tool_name": "Bash", "tool_input": ti}
