"""The repository config (.claude/swarmgate.toml); the machine config (hosts.toml) is hosts_config.

The schema lives here and only here: every key, its default, its check and a
one-line doc. Loading validates: an unknown key or a bad value is a
ConfigError whose message names the file, the key and the value.
"""
from __future__ import annotations

from swarmgate import lean_os as os

from swarmgate.sizes import parse_size

# Hot path note: a hook loads the config on every call, so this module avoids
# dataclasses, pathlib and typing at import time (each costs milliseconds here).
# Annotations are strings (PEP 563) and never evaluated: the names they use are
# imported for type checkers only. Paths are str.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


class ConfigError(Exception):
    """A config file is missing a piece, has an unknown key or a bad value."""


# --- value checks: return the normalised value or raise ValueError(expected ...) ---

def _int(lo: int | None = None, hi: int | None = None) -> Callable[[Any], int]:
    def check(v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError("expected an integer")
        if lo is not None and v < lo:
            raise ValueError(f"expected an integer >= {lo}")
        if hi is not None and v > hi:
            raise ValueError(f"expected an integer <= {hi}")
        return v
    return check


def _num(lo: float = 0.0) -> Callable[[Any], float]:
    def check(v: Any) -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ValueError("expected a number")
        if v < lo:
            raise ValueError(f"expected a number >= {lo}")
        return float(v)
    return check


def _str(nonempty: bool = True) -> Callable[[Any], str]:
    def check(v: Any) -> str:
        if not isinstance(v, str):
            raise ValueError("expected a string")
        if nonempty and not v.strip():
            raise ValueError("expected a non-empty string")
        return v
    return check


def _bool(v: Any) -> bool:
    if not isinstance(v, bool):
        raise ValueError("expected true or false")
    return v


def _strlist(v: Any) -> list[str]:
    if not isinstance(v, list) or not all(isinstance(x, str) and x.strip() for x in v):
        raise ValueError("expected a list of non-empty strings")
    return list(v)


def _choice(*options: str) -> Callable[[Any], str]:
    def check(v: Any) -> str:
        if v not in options:
            raise ValueError("expected one of " + ", ".join(repr(o) for o in options))
        return v
    return check


def _size(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, (str, int)):
        raise ValueError("expected a size such as \"8G\" or \"512M\"")
    return parse_size(v)


def _size_or_auto(v: Any) -> int | str:
    if v == "auto":
        return "auto"
    try:
        return _size(v)
    except ValueError:
        raise ValueError("expected \"auto\" or a size such as \"4G\" or \"512M\"") from None


def _int_or_auto(lo: int, hi: int) -> Callable[[Any], int | str]:
    check_int = _int(lo, hi)

    def check(v: Any) -> int | str:
        if v == "auto":
            return "auto"
        try:
            return check_int(v)
        except ValueError as e:
            raise ValueError(f"expected \"auto\" or {str(e).removeprefix('expected ')}") from None
    return check


def _auto_or_size(v: Any) -> int | str:
    """`auto` or a size, with the size's own error (`'lots' is not a size`)."""
    return "auto" if v == "auto" else _size(v)


def _cpus_or_auto(v: Any) -> float | str:
    if v == "auto":
        return "auto"
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.01 <= v <= 4096:
        raise ValueError("expected \"auto\" or a number of CPUs between 0.01 and 4096 (e.g. 1.5)")
    return float(v)


def _wrappers(v: Any) -> dict[str, Any]:
    from swarmgate.hooks.bash_wrappers import from_config   # only when a config is parsed
    return from_config(v)


def _writers(v: Any) -> dict[str, Any]:
    from swarmgate.hooks.shell_writers import from_config   # only when a config is parsed
    return from_config(v)


def _mcp_tools(v: Any) -> dict[str, Any]:
    from swarmgate.hooks.mcp_tools import from_config   # only when a config is parsed
    return from_config(v)


def _equivalents(v: Any) -> list[str]:
    from swarmgate.hooks.command_patterns import PatternError   # only when a config is parsed
    from swarmgate.hooks.equivalents_table import entries

    try:
        return entries(_strlist(v))
    except PatternError as e:
        raise ValueError(str(e)) from None


def _optional(check: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return check  # absence is handled by the default None


class Key:
    __slots__ = ("default", "check", "doc")

    def __init__(self, default: Any, check: Callable[[Any], Any], doc: str) -> None:
        self.default = default
        self.check = check
        self.doc = doc


# Sections whose keys are free (agent types, guard codes): value check only.
FREE_SECTIONS: dict[str, tuple[Callable[[Any], Any], str]] = {
    "write": (_strlist, "agent type -> globs (relative to the repository) it may write; `main` is the main agent"),
    "guards": (_choice("on", "off", "warn"), "guard code -> on | off | warn"),
}

STAGE_KEYS: dict[str, Key] = {
    "name": Key(None, _str(), "stage name (unique)"),
    "command": Key(None, _str(), "shell command run in the temporary tree"),
    "inputs": Key(["**"], _strlist, "globs of the files whose content keys the verdict"),
    "heavy": Key(False, _bool, "heavy stages run only with SWARMGATE_HEAVY=commit, under run-with-memory-cap"),
    "timeout": Key(3600, _int(1), "seconds before the stage is stopped"),
    "cap": Key("auto", _auto_or_size, "memory cap for a heavy stage; auto: the cap this machine and the stage's "
               "run history give (swarmgate/host_defaults.py)"),
    "env": Key([], _strlist, "environment variables whose values enter the verdict key"),
    "python_inputs": Key("functions", _choice("functions", "content"),
                          "key Python inputs per function (ast; comments/docstrings/formatting ignored) "
                          "or by content (for formatters and linters that read comments)"),
}

SCHEMA: dict[str, dict[str, Key]] = {
    "threads": {
        "heavy_default": Key("auto", _int_or_auto(1, 4096),
                             "the one registered thread count for heavy work; auto: the machine's cores less "
                             "one, at least 1 (swarmgate/host_defaults.py)"),
    },
    "dispatch": {
        "max_concurrent": Key(5, _int(1, 1000), "subagents running at once in one session (D07)"),
        "max_concurrent_repo": Key(10, _int(0, 10000),
                                   "agents running at once on the repository across all its live sessions: "
                                   "subagents, dispatches not started yet, busy teammates (D07; 0: no cap)"),
        "denied_types": Key(["general-purpose"], _strlist, "subagent types that may not be dispatched (D12)"),
        "heavy_line": Key("heavy test: do not run", _str(), "the line every dispatch prompt must carry (D01)"),
        "thread_cap_line": Key("thread cap", _str(), "label of the thread cap line (D15)"),
        "thread_cap_reason_line": Key("thread cap reason", _str(), "label of the line justifying another cap (D15)"),
        "scratch_line": Key("scratch", _str(), "label of a scratch-directory line (D16)"),
        "task_line": Key("task", _str(), "label of the line naming the record's task a dispatch is for (D30)"),
        "require_task": Key(False, _bool, "a dispatch while the round has open tasks must name one (D30)"),
        "agents_dir": Key(".claude/agents", _str(), "where agent definitions live (D21)"),
        "pending_seconds": Key(120, _int(1, 3600),
                               "a dispatch let through counts as running for this long until its SubagentStart "
                               "(D07; D16 holds its scratch lock as long)"),
    },
    "heavy": {
        "patterns": Key(["cargo test --workspace", "cargo test --all", "make check-full"], _strlist,
                        "shell-word patterns of heavy commands (B01)"),
        "prefix_var": Key("SWARMGATE_HEAVY", _str(), "variable that lets the main agent run a heavy command"),
        "prefix_values": Key(["commit", "user-request"], _strlist, "accepted values of prefix_var"),
        "runners": Key(["run-with-memory-cap", "host-dispatch", "multi-host-run"], _strlist,
                       "commands a heavy command must run through (B02)"),
        "equivalents": Key(None, _equivalents,
                           "workloads that count as a heavy pattern, added to the built-in table (ALT = CANON, "
                           "'pytest collections', 'script bodies'; 'no ENTRY' drops a built-in one): "
                           "docs/bash-guards.md"),
    },
    "scope": {
        "verify_patterns": Key(["pytest", "cargo test", "bash .claude/gate.d/*"], _strlist,
                               "shell-word patterns of verification runs (B10)"),
        "full_patterns": Key(["cargo test --workspace", "cargo test --all"], _strlist,
                             "verification runs that are the whole suite (kind=full only)"),
        "min_reason": Key(12, _int(0), "minimum length of the reason field (B10)"),
        "prefix_var": Key("SWARMGATE_RUN_SCOPE", _str(), "variable carrying the run scope"),
    },
    "memory": {
        "margin": Key("auto", _auto_or_size,
                      "total for capped runs = machine memory - margin; auto: a quarter of the machine's memory, "
                      "1G to 20G (swarmgate/host_defaults.py)"),
        "total": Key(None, _size, "set the total for capped runs directly (overrides margin)"),
        "default_prediction": Key("8G", _size, "predicted need of a command with no history"),
        "slice": Key("swarmgate-heavy", _str(), "name of the parent cgroup / systemd slice"),
        "wait": Key(3600, _int(0), "seconds a run waits for admission"),
        "report_every": Key(60, _int(1), "seconds between 'who holds what' lines while waiting"),
        "backend": Key("auto", _choice("auto", "systemd", "cgroup2", "cgroup1"), "cgroup backend"),
    },
    "agents": {
        "memory_cap": Key("auto", _size_or_auto,
                          "memory cap of each subagent's containment cgroup; auto: the runner's total "
                          "/ ([dispatch] max_concurrent + 1)"),
        "cpu_max": Key("auto", _cpus_or_auto,
                       "CPUs each subagent's containment cgroup may use (throttled beyond); auto: the "
                       "machine's CPUs / [dispatch] max_concurrent, at least 0.5"),
    },
    "gate": {
        "link": Key([], _strlist, "ignored paths linked into the gate's temporary tree"),
        "env": Key([], _strlist, "environment variables whose values enter every stage's key"),
        "common": Key(True, _bool, "run the common stages before the project's"),
        "large_file": Key("500K", _size, "common stage no-large-files: largest new or changed file"),
    },
    "bash": {
        "unverifiable": Key("exec", _choice("exec", "deny", "ask"),
                            "what to do with what cannot be read statically: exec = leave it to the session's "
                            "exec-time shims where they judge it (else deny), deny, ask"),
        "max_depth": Key(6, _int(1, 64), "how deep scripts and nested shells are followed"),
        "budget_ms": Key(2000, _int(10), "time budget of one command's analysis"),
        "max_script_bytes": Key(1 << 20, _int(1), "larger scripts are not read (finding: unverifiable)"),
        "make_targets": Key([], _strlist, "make targets whose recipes count as heavy commands"),
        "wrappers": Key({}, _wrappers, "extra programs that run an operand: name -> {options, operands, "
                        "subcommands, shell_options, shell, command_flags, no_run, assignments} "
                        "(docs/bash-tree.md)"),
        "writers": Key({}, _writers, "extra programs that write files (W01, G01): name -> {operands = "
                       "\"all|last|first|none\", leading, files, trees, values, read_only, recursive, needs} "
                       "(docs/bash-guards.md)"),
    },
    "timers": {
        "allowed": Key(["remind"], _strlist, "the reminder commands timers must go through (T01)"),
        "min_sleep_s": Key(60, _int(0), "`sleep N; echo ...` with N below this is a wait, not a reminder (T01)"),
    },
    "gpu": {
        "patterns": Key(["nvidia-smi", "torchrun", "cuda"], _strlist, "words that mark a GPU command (R01)"),
    },
    "hooks": {
        "guard_budget_ms": Key(3000, _int(10), "time budget of one guard"),
        "timeout": Key(30, _int(1, 600), "timeout written into settings.json for each hook"),
        "report_timeout": Key(30, _int(1, 600), "timeout for hooks that build host reports"),
        "ask_when_headless": Key("deny", _choice("deny", "defer", "ask"),
                                 "what a guard's `ask` becomes where nobody can answer (a session with "
                                 "CLAUDE_CODE_SESSION_ATTENDED=0: claude -p, background sessions): deny, defer "
                                 "(the run stops with the call pending for a person), or ask"),
        "liveness_days": Key(14, _int(1, 3650),
                             "`swarmgate doctor`: a Claude Code session of the repository in this many days with no "
                             "decision in the log ran without the hooks (a failure); guards with none are listed"),
    },
    "records": {
        "dir": Key("records", _str(), "where scheduling records live"),
    },
    "teams": {
        "agent_type": Key("teammate", _str(), "the agent type a teammate of an agent team is judged as (its "
                          "[write] row, its rules): teammates are sessions of their own, not subagents"),
    },
    "sop": {
        "path": Key(".claude/sop", _str(), "the repository's copy of the upstream rules"),
        "stamp": Key(".claude/sop-version", _str(), "the version stamp of the copy"),
        "upstream": Key("", _str(False), "where `swarmgate sop sync` copies from"),
    },
    "watch": {
        "rss_bound": Key("8G", _size, "resident memory over which swarm-watch reports"),
        "tool_call_minutes": Key(8, _int(1), "a tool call running longer is reported"),
        "idle_minutes": Key(10, _int(1), "no activity for longer is reported"),
        "stalled_file_minutes": Key(20, _int(1), "a written file that has not grown for longer is reported"),
        "kill_after_reports": Key(5, _int(1), "unacknowledged reports before swarm-watch stops a process"),
        "long_run_minutes": Key(10, _int(1), "a capped run of the session older than this gets the core check"),
    },
    "workdirs": {
        "root": Key("", _str(False), "work root whose directories carry ownership files"),
    },
    "git": {
        "protected": Key(["main", "master", "release/*"], _strlist,
                         "branches (globs) no agent force-pushes to or deletes on a remote (L03)"),
    },
    "secrets": {
        "paths": Key([], _strlist, "more secret files (globs: `~/`, `/` or a name anywhere), beside the "
                     "built-in ones: refused to subagents, asked for the main agent, never sent out (K01, K02)"),
    },
    "mcp": {
        "tools": Key({}, _mcp_tools, "MCP tools judged as what they do: name -> { writes = \"<path argument>\" } "
                     "(W01, G01), { runs = \"<command argument>\" } (the shell guards) or { asks = true } (Q01)"),
    },
}

SECTION_KINDS = set(SCHEMA) | set(FREE_SECTIONS) | {"gate"}


class Config:
    """Validated repository config: data[section][key], every key present."""
    __slots__ = ("data", "path", "repo", "raw")

    def __init__(self, data: dict[str, Any], path: str | None = None, repo: str | None = None,
                 raw: dict[str, Any] | None = None) -> None:
        self.data = data
        self.path = path
        self.repo = repo
        self.raw = raw or {}

    def __getitem__(self, section: str) -> Any:
        return self.data[section]

    def guard_mode(self, code: str) -> str:
        return self.data["guards"].get(code, "on")


def _where(path: str | None) -> str:
    return str(path) if path else "<defaults>"


def _fmt(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def validate(raw: dict[str, Any], path: str | None = None) -> dict[str, Any]:
    """Defaults + raw, every key checked. Raises ConfigError naming file, key and value."""
    where = _where(path)
    data: dict[str, Any] = {}
    for section, keys in SCHEMA.items():
        data[section] = {name: key.default for name, key in keys.items()}
        for name, key in keys.items():
            if key.default is not None and key.check is _size:
                data[section][name] = parse_size(key.default)
    for section in FREE_SECTIONS:
        data[section] = {}
    data["write"] = {"main": ["**"]}
    data["gate"]["stages"] = []

    for section, table in raw.items():
        if section not in SCHEMA and section not in FREE_SECTIONS:
            known = ", ".join(sorted(SECTION_KINDS))
            raise ConfigError(f"{where}: unknown section [{section}] (known: {known})")
        if not isinstance(table, dict):
            raise ConfigError(f"{where}: [{section}] must be a table, found {_fmt(table)}")
        if section in FREE_SECTIONS:
            check, _ = FREE_SECTIONS[section]
            for name, value in table.items():
                try:
                    data[section][name] = check(value)
                except ValueError as e:
                    raise ConfigError(f"{where}: [{section}] {name} = {_fmt(value)}: {e}") from None
            continue
        for name, value in table.items():
            if section == "gate" and name == "stages":
                data["gate"]["stages"] = _validate_stages(value, where)
                continue
            key = SCHEMA[section].get(name)
            if key is None:
                known = ", ".join(sorted(SCHEMA[section]) + (["stages"] if section == "gate" else []))
                raise ConfigError(f"{where}: unknown key [{section}] {name} (known: {known})")
            try:
                data[section][name] = key.check(value)
            except ValueError as e:
                raise ConfigError(f"{where}: [{section}] {name} = {_fmt(value)}: {e}") from None
    return data


def _validate_stages(value: Any, where: str) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise ConfigError(f"{where}: [[gate.stages]] must be an array of tables")
    stages: list[dict[str, Any]] = []
    seen: set[str] = set()
    for i, table in enumerate(value):
        if not isinstance(table, dict):
            raise ConfigError(f"{where}: [[gate.stages]] #{i + 1} must be a table")
        stage = {}
        for name, key in STAGE_KEYS.items():
            stage[name] = parse_size(key.default) if key.check is _size else key.default
        for name, v in table.items():
            key = STAGE_KEYS.get(name)
            if key is None:
                raise ConfigError(f"{where}: unknown key [[gate.stages]] #{i + 1} {name} "
                                  f"(known: {', '.join(STAGE_KEYS)})")
            try:
                stage[name] = key.check(v)
            except ValueError as e:
                raise ConfigError(f"{where}: [[gate.stages]] #{i + 1} {name} = {_fmt(v)}: {e}") from None
        for required in ("name", "command"):
            if stage[required] is None:
                raise ConfigError(f"{where}: [[gate.stages]] #{i + 1} lacks `{required}`")
        if stage["name"] in seen:
            raise ConfigError(f"{where}: [[gate.stages]] name {stage['name']!r} is used twice")
        seen.add(stage["name"])
        stages.append(stage)
    return stages


CONFIG_MAX_BYTES = 1 << 20  # a config larger than this is refused, not read (bounded_read)


def parse_toml(path: str) -> dict[str, Any]:
    """The TOML file at ``path`` as a dict: read bounded (swarmgate/bounded_read.py), parsed by
    the subset reader when it can (swarmgate/config_toml.py), else by tomllib."""
    from swarmgate.bounded_read import read_bytes
    try:
        text = read_bytes(path, CONFIG_MAX_BYTES).decode("utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: cannot read: not UTF-8 ({e})") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror or e}") from None
    return parse_toml_text(text, path)


def parse_toml_text(text: str, where: str) -> dict[str, Any]:
    """TOML text as a dict: the subset reader when it can, else tomllib (whose import alone costs
    10-16 ms); ConfigError naming ``where`` when it is not valid TOML."""
    from swarmgate.config_toml import Unsupported, loads
    try:
        return loads(text)
    except Unsupported:
        pass
    import tomllib
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{where}: not valid TOML: {e}") from None


def find_repo(start: str | None = None) -> str:
    """The repository a hook or tool works for.

    CLAUDE_PROJECT_DIR when Claude Code sets it; else, inside an agent worktree
    (``<project>/.claude/worktrees/<w>``, a linked worktree of that project), the
    project; else the nearest ancestor of ``start`` (default: the current
    directory) holding .claude/swarmgate.toml, else the nearest holding .git,
    else ``start`` itself.
    """
    env = os.environ.get("CLAUDE_PROJECT_DIR")
    if env and os.path.isdir(env):
        return os.path.abspath(env)
    here = os.path.abspath(str(start or os.getcwd()))
    marker = "/.claude/worktrees/"
    if marker in here:
        # a Claude Code agent worktree (isolation "worktree") belongs to the project it lies in
        from swarmgate.hooks.agent_worktree import linked_worktree
        project = here[:here.index(marker)]
        if linked_worktree(here, project):
            return find_repo(project) if project != here else project
    git_root: str | None = None
    d = here
    while True:
        if os.path.isfile(os.path.join(d, ".claude", "swarmgate.toml")):
            return d
        if git_root is None and os.path.exists(os.path.join(d, ".git")):
            git_root = d
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return git_root or here


def load_config(repo: str | None = None) -> Config:
    """The validated config of ``repo`` (defaults when it has none), read from the file itself
    on every call.

    There is no cache to trust: a validated copy kept in the repository could be rewritten by
    any agent running as the same user, key and all, and switch every guard off. The plain TOML
    the config is written in is read without importing tomllib (swarmgate/config_toml.py, ~2 ms
    for the shipped config, where tomllib's import alone costs 10-16 ms); other TOML falls back
    to tomllib.
    """
    repo_path = os.path.abspath(str(repo)) if repo is not None else find_repo()
    path = os.path.join(repo_path, ".claude", "swarmgate.toml")
    try:
        raw = parse_toml(path)
    except ConfigError:
        if not os.path.lexists(path):
            return Config(validate({}), None, repo_path, {})
        raise
    return Config(validate(raw, path), path, repo_path, raw)


def defaults() -> Config:
    return Config(validate({}), None, None, {})

