"""When a guard module can fire on a shell call (PreToolUse on Bash or Monitor): the first test each
of its checks makes, kept in a module every shell call loads anyway, so the engine asks it before it
loads the guard module (``registry.GATES``). A benign `ls` then loads none of the loop, timer, team
and host-report guards (their modules are ~50 KB of bytecode, ~0.5 ms of a hook call's CPU).

Equal by construction, not by hope: each gated check starts with its gate (``if not
guard_gates.X(event, config): return None``, checked by tests/hooks/guard_gates_test.py), a gated
module's acts do nothing when its gate is false, and the same test judges every corpus command and
every guard case with and without the gates and compares the findings. A gate may say yes where the
check then finds nothing (it is the check's first test, not all of it); it never says no where a
check could fire.
"""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from swarmgate.config import Config
    from swarmgate.hook_protocol import HookEvent

SHELL_TOOLS = ("Bash", "Monitor")
# the programs T01 reads as shell timers (hooks/timer_guards.py)
TIMER_NAMES = frozenset(("crontab", "at", "batch", "systemd-run", "watch", "sleep"))


def _analysis(event: HookEvent, config: Config):
    from swarmgate.hooks.shell_event import analysis_of

    return analysis_of(event, config)


def shell_jobs(event: HookEvent, config: Config) -> bool:
    """B30, B31: the command holds a while/until loop, or something sent to the background inside
    a background job (or a background command in a call that runs in the background)."""
    analysis = _analysis(event, config)
    if analysis is None:
        return False
    if any(getattr(loop, "kind", "") in ("while", "until") for loop in getattr(analysis, "loops", ()) or ()):
        return True
    if getattr(analysis, "nested_background", None):
        return True
    if event.tool_input.get("run_in_background") is True or event.tool_name == "Monitor":
        return any(getattr(c, "background", 0) for c in analysis.commands)
    return False


def timers(event: HookEvent, config: Config) -> bool:
    """T01: a timer tool (CronCreate, ScheduleWakeup), or a shell command naming a timer program."""
    if event.tool_name not in SHELL_TOOLS:
        return True
    analysis = _analysis(event, config)
    return analysis is not None and any(c.words and c.name in TIMER_NAMES for c in analysis.commands)


def verification(event: HookEvent, config: Config) -> bool:
    """B10: a verification pattern ([scope] verify_patterns) matches a command that runs, or a
    pattern of the config cannot be read."""
    analysis = _analysis(event, config)
    if analysis is None:
        return False
    from swarmgate.hooks.shell_event import pattern_problem, runnable

    if pattern_problem(event, config, "B10"):
        return True
    from swarmgate.hooks.command_patterns import first_match

    patterns = config["scope"]["verify_patterns"]
    cwd = event.cwd or event.repo
    return any(first_match(cmd, patterns, cwd=cwd, repo=event.root) for _, cmd in runnable(analysis.commands))


def writes(event: HookEvent, config: Config) -> bool:
    """W01 on a shell call: the command writes a path that can be placed (hooks/shell_writes.py), or
    runs interpreter code (whose literal writes W01 reads). Other tools (Write, Edit): always."""
    if event.tool_name not in SHELL_TOOLS:
        return True
    analysis = _analysis(event, config)
    if analysis is None:
        return False
    if any(getattr(p, "code", None) for p in getattr(analysis, "programs", ()) or ()):
        return True
    from swarmgate.hooks.shell_writes import placed_of

    return any(w.full for w in placed_of(event, analysis, config))


def losses(event: HookEvent, config: Config) -> bool:
    """L01, L02, L03 on a shell call: the command runs git, or ``destructions`` holds. Other tools
    (Write, Edit): always."""
    if event.tool_name not in SHELL_TOOLS:
        return True
    analysis = _analysis(event, config)
    if analysis is None:
        return False
    return any(c.words and c.name == "git" for c in analysis.commands) or destructions(event, config)


def destructions(event: HookEvent, config: Config) -> bool:
    """L01's part of ``losses``: the command runs a program that formats devices, runs interpreter
    code, or writes a path that can be placed (hooks/shell_writes.py) or a tree that cannot
    (`rm -rf "$DIR/"*`: L01 reads an empty DIR). loss_guards asks it again, so a git command that
    writes nothing leaves the places' tables unread."""
    analysis = _analysis(event, config)
    if analysis is None:
        return False
    if any(c.words and (c.name.startswith("mk") or c.name in _FORMATTER_NAMES) for c in analysis.commands):
        return True
    if any(getattr(p, "code", None) for p in getattr(analysis, "programs", ()) or ()):
        return True   # interpreter code: shutil.rmtree('/'), open('/etc/hosts', 'w')
    from swarmgate.hooks.shell_writes import placed_of

    return any(w.full or w.tree for w in placed_of(event, analysis, config))


def secrets(event: HookEvent, config: Config) -> bool:
    """K01, K02 on a shell call: a word, redirection or interpreter code of the command holds a
    marker of a secret's path (hooks/secret_paths.MARKERS, or a `[secrets] paths` entry's name).
    Other tools (Read, Grep): always."""
    if event.tool_name not in SHELL_TOOLS:
        return True
    analysis = _analysis(event, config)
    if analysis is None:
        return False
    parts = []
    for c in analysis.commands:
        parts.extend(c.words)
        parts.extend(r.target for r in c.redirects or () if isinstance(getattr(r, "target", None), str))
    parts.extend(p.code for p in getattr(analysis, "programs", ()) or () if getattr(p, "code", None))
    text = "\n".join(parts)
    if any(m in text for m in SECRET_MARKERS) or any(m in text for m in PRINTER_MARKERS):
        return True
    extra = config["secrets"]["paths"]
    if not extra:
        return False
    from swarmgate.hooks.secret_paths import may_name_secret

    return may_name_secret(text, extra)


# hooks/secret_paths.MARKERS, without loading it on every shell call (tests/hooks/guard_gates_test.py
# holds them equal)
SECRET_MARKERS = (".env", ".ssh", ".aws", "gcloud", ".azure", ".gnupg", ".password-store", ".kube", ".docker",
                  "credentials", ".pem", ".key", ".p12", ".pfx", "id_", ".netrc", ".npmrc", ".pypirc", ".pgpass",
                  "shadow", "hosts.yml", "environ")
# hooks/secret_reads.PRINTER_MARKERS: a command that prints a credential (gh auth token ...)
PRINTER_MARKERS = ("token", "credential", "export-secret", "--raw", "-password", "secret_access_key")


# hooks/precious_places.FORMATTERS, without loading it (tests/hooks/guard_gates_test.py holds them equal)
_FORMATTER_NAMES = frozenset(("mkfs", "mke2fs", "mkswap", "wipefs", "fdisk", "sfdisk", "cfdisk", "gdisk",
                              "sgdisk", "parted", "blkdiscard", "mkntfs", "mkdosfs", "mlabel", "badblocks",
                              "cryptsetup", "pvcreate", "mdadm", "zpool", "hdparm", "nvme", "sg_format"))


def granted(event: HookEvent, config: Config) -> list:
    """The main agent's runs that get a single-use grant (heavy_commands.granted_argvs), once per call:
    X01 records them, and its gate asks whether there are any."""
    from swarmgate.hooks.heavy_commands import granted_argvs

    return event.derived("x01.grants", lambda: granted_argvs(event, config))


def containment(event: HookEvent, config: Config) -> bool:
    """X01, X02 on a shell call: a subagent's call (X02 runs it in the agent's cgroup), or a main-agent
    call whose capped heavy runs get a single-use grant (X01)."""
    if event.name != "PreToolUse" or event.tool_name not in SHELL_TOOLS or event.is_subagent:
        return True
    return bool(granted(event, config))


def teammates(event: HookEvent, config: Config) -> bool:  # noqa: ARG001
    """A02 on PreToolUse: the session making the call is a teammate of an agent team."""
    if event.name != "PreToolUse":
        return True
    if not event.session_id:
        return False
    from swarmgate.hooks.teammates import teammate_of

    return teammate_of(event) is not None


def host_report(event: HookEvent, config: Config) -> bool:
    """R01: the command runs something heavy or names a GPU pattern (derivations' host_resources)."""
    analysis = _analysis(event, config)
    if analysis is None:
        return False
    from swarmgate.hooks.heavy_commands import gpu_words, heavy_commands

    return bool(heavy_commands(event, config) or gpu_words(analysis, config["gpu"]["patterns"]))

