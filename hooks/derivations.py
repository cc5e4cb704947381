"""The derive phase: what guards read besides the payload, built once per hook call.

A guard names what it needs (``Guard.needs``); before any guard judges, the
hook engine builds each needed fact once (``derive``), within the call's time
budget, and stores it on the event. Guards read them with ``get(event, config,
NAME)``; called outside the engine (a test calling ``check`` directly), ``get``
builds the fact on first use, through the same builder. So no guard parses a
command or a prompt, and no guard starts a process, on its own: parsing and
process starts (git, the kernel log, ssh to peers) live here.

A builder that fails is remembered as failed: every ``get`` of it raises
DerivationError, so the guards that need it fail closed (or, advisory, pass
with a note), naming the fact.

Facts:
    bash             the parsed Bash/Monitor command (bash_tree.analyze + interpreter
                     programs scanned for heavy patterns); None without a command
    dispatch_prompt  the parsed prompt of an Agent/Task call (dispatch_prompt_parse)
    agent_types      the subagent types the client can run here (project, user, plugin, built-in)
    git_status       `git status --porcelain` of the repository, as C01's report lines
    kernel_log       (text, source) of the kernel log: journalctl -k, else dmesg (C01)
    host_resources   the host resource report before a heavy or GPU command, else None (R01;
                     registered by hooks/resource_report.py, see ``register``)
    agent_worktree   the git worktree a stopping subagent worked in, with what it holds (H01)

Light at import: every builder imports what it uses.
"""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from swarmgate.hooks.bash_results import Analysis
    from swarmgate.hooks.dispatch_prompt_parse import ParsedPrompt
    from collections.abc import Callable

    from swarmgate.config import Config
    from swarmgate.hook_protocol import HookEvent


class DerivationError(Exception):
    """A fact could not be built; the guards that need it cannot judge."""


class _Failed:
    __slots__ = ("why",)

    def __init__(self, why: str) -> None:
        self.why = why


def _bash(event: HookEvent, config: Config) -> Analysis | None:
    text = event.shell_command
    if not isinstance(text, str) or not text.strip():
        return None
    import time

    from swarmgate.hooks.bash_tree import analyze

    b = config["bash"]
    budget_s = b["budget_ms"] / 1000.0
    an = analyze(text, cwd=event.cwd or event.repo or ".",
                 max_depth=int(b["max_depth"]), budget_s=budget_s,
                 max_script_bytes=int(b["max_script_bytes"]), wrappers=b["wrappers"])
    # the reader records interpreter programs and unknown words; judging them against the
    # patterns is ours (command_patterns is the one matcher)
    heavy = config["heavy"]["patterns"]
    if an.programs:
        from swarmgate.hooks.code_scan import unverifiable_programs
        an.unverifiable.extend(unverifiable_programs(an, heavy, deadline=time.monotonic() + budget_s))
    try:
        from swarmgate.hooks.bash_results import Unverifiable
        from swarmgate.hooks.command_patterns import open_matches
        for cmd, pat in open_matches(an, heavy, cwd=event.cwd or event.repo or "", repo=event.root or ""):
            # the shims of the program started and of the pattern's program see the argv expanded
            progs = tuple(dict.fromkeys((cmd.name.rsplit("/", 1)[-1], pat.split()[0].rsplit("/", 1)[-1])))
            an.unverifiable.append(Unverifiable(
                f"`{' '.join(cmd.words)[:80]}` has arguments that cannot be read statically and could "
                f"make it the heavy pattern `{pat}`", cmd.text[:500],
                None if "/" in cmd.words[0] else progs))
    except ValueError:
        pass   # a pattern that cannot be read: B01 names the config key
    if event.client == "codex":  # its exec sessions take typed input (write_stdin) that no hook sees
        from swarmgate.codex_protocol import typed_input_findings
        an.unverifiable.extend(typed_input_findings(an))
    return an


def _dispatch_prompt(event: HookEvent, config: Config) -> ParsedPrompt:
    from swarmgate.hooks.dispatch_prompt_parse import parse_with_config

    p = event.tool_input.get("prompt")
    return parse_with_config(p if isinstance(p, str) else "", config)


def _agent_types(event: HookEvent, config: Config) -> list:
    """Every subagent type the client can run here (agent_definitions.catalog: project, user,
    plugin, built-in), as ResolvedType."""
    from swarmgate.agents.agent_definitions import catalog

    return catalog(event.repo, config)


GIT_STATUS_FILES = 40   # files named; the rest counted


def _git_status(event: HookEvent, config: Config, timeout: float = 5.0) -> list:  # noqa: ARG001
    import subprocess

    try:
        p = subprocess.run(["git", "-C", event.repo, "status", "--porcelain=v1", "--untracked-files=normal"],
                           capture_output=True, text=True, timeout=timeout, errors="replace")
    except FileNotFoundError:
        return ["(git is not installed)"]
    except subprocess.TimeoutExpired:
        return [f"(git status gave no answer in {timeout:.0f}s)"]
    if p.returncode != 0:
        return [f"(not a git worktree: {(p.stderr.strip().splitlines() or ['?'])[0][:100]})"]
    lines = [ln for ln in p.stdout.splitlines() if ln.strip()]
    if not lines:
        return ["none: the worktree is clean"]
    out = [f"    {ln}" for ln in lines[:GIT_STATUS_FILES]]
    if len(lines) > GIT_STATUS_FILES:
        out.append(f"    ... and {len(lines) - GIT_STATUS_FILES} more (`git status`)")
    return [f"{len(lines)} file(s):"] + out


def _kernel_log(event: HookEvent, config: Config) -> tuple:  # noqa: ARG001
    from swarmgate.hooks import kernel_oom

    return kernel_oom.read_live()


def _agent_worktree(event: HookEvent, config: Config) -> dict | None:  # noqa: ARG001
    """{"path", "head", "changes"} of the worktree the subagent worked in (its hook calls' cwd, or the
    one registered at its start), None when it had none or it is gone. ``changes``: what it holds
    beyond its start ([] clean, None unknown: hooks/agent_worktree.changes_of)."""
    from swarmgate import lean_os as os

    from swarmgate.hooks import agent_worktree as W

    path = event.root if event.root != event.repo else ""
    head = ""
    if event.session_id and event.agent_id:
        from swarmgate.hooks import session_state as S
        a = S.load(event.session_id)["agents"].get(event.agent_id) or {}
        wt = a.get("worktree")
        if not isinstance(wt, dict):
            wt = {}
        if wt.get("path") and (not path or wt["path"] == path):
            path, head = str(wt["path"]), str(wt.get("head") or "")
    if not path or not os.path.isdir(path):
        return None
    return {"path": path, "head": head, "changes": W.changes_of(path, head)}


BUILDERS: dict[str, Callable] = {
    "bash": _bash,
    "dispatch_prompt": _dispatch_prompt,
    "agent_types": _agent_types,
    "git_status": _git_status,
    "kernel_log": _kernel_log,
    "agent_worktree": _agent_worktree,
}


def register(name: str, builder: Callable) -> None:
    """A guard module's own fact, built like the others once that module is loaded: for a builder
    that reads the guards' helpers or a tool (R01's report: the heavy patterns, hosts/host_resources),
    which this module, read by every shell guard, must not import."""
    BUILDERS[name] = builder


def get(event: HookEvent, config: Config, name: str) -> object:
    """The fact ``name`` of this call (built now when the engine has not built it yet)."""
    memo = event.memo
    if name in memo:
        value = memo[name]
    else:
        value = build(event, config, name)
    if isinstance(value, _Failed):
        raise DerivationError(f"could not derive {name}: {value.why}")
    return value


def build(event: HookEvent, config: Config, name: str) -> object:
    """Build ``name`` once and remember it (or its failure) on the event; returns what was stored."""
    memo = event.memo
    if name in memo:
        return memo[name]
    builder = BUILDERS.get(name)
    if builder is None:
        raise DerivationError(f"no derivation named {name!r} (known: {', '.join(BUILDERS)})")
    try:
        memo[name] = builder(event, config)
    except Exception as e:  # noqa: BLE001 - remembered: each guard that needs it fails on it
        memo[name] = _Failed(f"{type(e).__name__}: {e}")
    return memo[name]


def fail(event: HookEvent, name: str, why: str) -> None:
    """Remember that ``name`` could not be built (the engine's budget ran out while building it)."""
    event.memo[name] = _Failed(why)
