"""T01 timers: every reminder goes through the project's one reminder command.

Refused (SPEC §4.2): the CronCreate and ScheduleWakeup tools, and shell
timers found in the parsed command tree (Bash and Monitor):
- `sleep N` followed, in the same command and outside any loop, by a command
  that only tells something (`echo`, `printf`, `notify-send`, `wall`, `say`,
  `tput bel`, ...) — a reminder written by hand (`sleep 300; echo check CI`);
  short sleeps (N below `[timers] min_sleep_s`, default 60 s) are waits, not
  reminders, and pass;
- a Bash call with `run_in_background` whose commands are only sleeps and
  messages (its completion notice is the reminder);
- `crontab` installing or editing a table (`crontab -l` and `crontab -r` pass),
  `at`, `batch`, `systemd-run --on-*` (and `--timer-property`), `watch` left running after the
  call (backgrounded, `nohup`, `setsid`, a detached tmux/screen; in the foreground it is a display
  the call's timeout ends, not a timer: seeds/003 forbids the timers that fire later, out of sight).
Sleeps inside loops are B30's business, not T01's.

Through the reminder command (`[timers] allowed`, default `remind`) all of
this passes: a shell command whose name (or the script it runs) is an allowed
reminder, and CronCreate/ScheduleWakeup whose prompt starts with it
(`remind ...` or `/remind ...`). ScheduleWakeup with `stop: true` only ends a
loop and passes.
"""
from __future__ import annotations

from swarmgate import guard as G
from swarmgate.hooks import guard_gates

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from collections.abc import Sequence

    from swarmgate.config import Config
    from swarmgate.guard import Finding
    from swarmgate.hook_protocol import HookEvent
    from swarmgate.hooks.bash_results import SimpleCommand


MESSAGE_COMMANDS = frozenset(("echo", "printf", "notify-send", "wall", "write", "say", "espeak",
                              "spd-say", "paplay", "aplay", "osascript", "zenity", "kdialog",
                              "terminal-notifier", "logger", "tput", "bell"))
_QUIET = frozenset(("true", ":", "sleep", "date"))
TIMER_TOOLS = ("CronCreate", "ScheduleWakeup")


_ALLOWED: dict = {}


def _allowed_names(config: Config) -> frozenset[str]:
    key = tuple(config["timers"]["allowed"])
    hit = _ALLOWED.get(key)
    if hit is None:
        hit = _ALLOWED[key] = _allowed_set(key)
    return hit


def _allowed_set(allowed: tuple[str, ...]) -> frozenset[str]:
    out = set()
    for a in allowed:
        b = a.rstrip("/").rsplit("/", 1)[-1]
        out.add(b)
        for ext in (".sh", ".py", ".bash"):
            if b.endswith(ext):
                out.add(b[: -len(ext)])
    return frozenset(out)


def _stem(name: str) -> str:
    for ext in (".sh", ".py", ".bash"):
        if name.endswith(ext):
            return name[: -len(ext)]
    return name


def _through_allowed(cmd: SimpleCommand, allowed: frozenset[str]) -> bool:
    if _stem(cmd.name) in allowed or cmd.name in allowed:
        return True
    for v in getattr(cmd, "via", ()) or ():
        if v.startswith("script:"):
            base = v[len("script:"):].rstrip("/").rsplit("/", 1)[-1]
            if base in allowed or _stem(base) in allowed:
                return True
        if v.startswith("function:") and v[len("function:"):] in allowed:
            return True
    for w in getattr(cmd, "wrappers", ()) or ():
        if w in allowed or _stem(w.rsplit("/", 1)[-1]) in allowed:
            return True
    return False


def _in_loop(cmd: SimpleCommand) -> bool:
    return any(v.startswith("loop") for v in (getattr(cmd, "via", ()) or ()))


def sleep_seconds(args: list[str]) -> float | None:
    """Seconds of `sleep ARGS` (GNU suffixes s/m/h/d, several operands add up); None if not literal."""
    total = 0.0
    ops = [a for a in args if not a.startswith("-")]
    if not ops:
        return None
    for a in ops:
        mult = 1.0
        if a and a[-1] in "smhd":
            mult = {"s": 1, "m": 60, "h": 3600, "d": 86400}[a[-1]]
            a = a[:-1]
        try:
            total += float(a) * mult
        except ValueError:
            return None
    return total


_DETACHERS = frozenset(("nohup", "setsid", "disown", "tmux", "screen", "daemonize", "start-stop-daemon", "systemd-run",
                        "at", "batch"))


def _timer_command(cmd: SimpleCommand, next_cmds: Sequence[SimpleCommand], min_sleep: float,
                   background: bool = False) -> str | None:
    """Why ``cmd`` is a shell timer, or None."""
    name = cmd.name
    args = list(cmd.args)
    if name == "crontab":
        if any(a in ("-l", "-r", "--list", "--remove") for a in args) or (
                len(args) == 2 and args[0] == "-u"):
            return None
        return "`crontab` installs a timer table"
    if name in ("at", "batch"):
        if any(a in ("-l", "-d", "-r", "-c", "-V") for a in args):
            return None
        return f"`{name}` schedules a command for later"
    if name == "systemd-run":
        if any(a.startswith(("--on-", "--timer-property")) for a in args):
            return "`systemd-run --on-*` creates a timer"
        return None
    if name == "watch":
        # in the foreground it is a display the call's own timeout ends (seeds/003 forbids timers
        # that fire later, out of sight: sleep-then-echo, crontab, CronCreate); one that outlives
        # the call (backgrounded, nohup, setsid, a detached tmux or screen) fires out of sight
        if background or cmd.background or set(cmd.wrappers) & _DETACHERS:
            return "`watch` left running after the call re-runs a command on a timer"
        return None
    if name == "sleep" and not _in_loop(cmd):
        secs = sleep_seconds(args)
        if secs is not None and secs < min_sleep:
            return None
        for nxt in next_cmds:
            if _in_loop(nxt):
                continue
            if nxt.name in MESSAGE_COMMANDS:
                return (f"`sleep {' '.join(args)}` followed by `{nxt.name}` is a reminder written by hand")
            if nxt.name not in _QUIET:
                return None   # real work between the sleep and the message: a wait, not a reminder
    return None


def remind_command(first: str) -> str:
    """How to call the reminder command so that a pasted way out runs: the shipped `remind` as
    swarmgate/tools_dir.py's agent_command names it (bare where it resolves on the PATH, else by
    its absolute path: an agent's PATH need not hold swarmgate's), any other as named."""
    if first == "remind":
        from swarmgate.tools_dir import agent_command
        return agent_command("remind")
    return first


def _quote(text: str) -> str:
    import shlex
    return shlex.quote(text)


def suggestion(first: str, when: str, message: str) -> str:
    """The exact reminder command to run instead (pasted as it is, it runs)."""
    return f"{remind_command(first)} {when} {_quote(message or 'time is up (the timer you set)')}"


def _message_of(cmds: Sequence[SimpleCommand]) -> str:
    """What a hand-written timer would have said: the words of its first message command."""
    for c in cmds:
        if c.name in MESSAGE_COMMANDS and c.name not in ("tput", "bell"):
            words = [a for a in c.args if not a.startswith("-")]
            if words:
                return " ".join(words)
    return ""


def _when_of(cmd: SimpleCommand) -> str:
    secs = sleep_seconds(list(cmd.args)) if cmd.name == "sleep" else None
    return f"{int(secs)}s" if secs else "10m"


def check_t01(event: HookEvent, config: Config) -> Finding | list[Finding] | None:
    from swarmgate.hooks.shell_event import broken

    if not guard_gates.timers(event, config):   # the gate the engine asks before loading this module
        return None
    if broken(event, "t01-allow-timers"):
        return None
    allowed = _allowed_names(config)
    configured = config["timers"]["allowed"]
    first = configured[0] if configured else "remind"
    if event.tool_name in TIMER_TOOLS:
        ti = event.tool_input
        if event.tool_name == "ScheduleWakeup" and ti.get("stop") is True:
            return None
        prompt = ti.get("prompt")
        if isinstance(prompt, str):
            words = prompt.strip().lstrip("/").split()
            if words and (_stem(words[0].rsplit("/", 1)[-1]) in allowed or words[0] in allowed):
                return None
        delay = ti.get("delaySeconds")
        when = f"{int(delay)}s" if isinstance(delay, (int, float)) and delay >= 1 else "10m"
        said = prompt if isinstance(prompt, str) and prompt.strip() else str(ti.get("reason") or "")
        return G.Finding(
            "T01",
            f"{event.tool_name} refused: timers go through the project's reminder command "
            f"({', '.join(configured) or 'none configured'}), so every pending reminder is in one "
            f"place where people and swarm-watch can see and cancel it.",
            f"run `{suggestion(first, when, ' '.join(said.split())[:300])}` instead (set the time you need; "
            f"or give {event.tool_name} a prompt that starts with `{first}`).")
    from swarmgate.hooks.shell_event import analysis_of

    analysis = analysis_of(event, config)
    if analysis is None:
        return None
    min_sleep = float(config["timers"].get("min_sleep_s", 60))
    cmds = [c for c in analysis.commands if c.words]
    findings = []
    for i, cmd in enumerate(cmds):
        if cmd.name not in guard_gates.TIMER_NAMES or _through_allowed(cmd, allowed):
            continue
        later = [c for c in cmds[i + 1:] if not _through_allowed(c, allowed)] if cmd.name == "sleep" else ()
        why = _timer_command(cmd, later, min_sleep, event.tool_input.get("run_in_background") is True)
        if why:
            findings.append(G.Finding(
                "T01", f"shell timer refused: {why}. Timers go through the reminder command "
                       f"({', '.join(configured)}).",
                f"run `{suggestion(first, _when_of(cmd), _message_of(later if cmd.name == 'sleep' else [cmd]))}` "
                f"instead of `{cmd.text.strip()[:80] or cmd.name}`."))
            break
    if not findings and event.tool_input.get("run_in_background") is True and cmds and all(
            c.name in _QUIET or c.name in MESSAGE_COMMANDS for c in cmds) and any(
            c.name == "sleep" for c in cmds):
        findings.append(G.Finding(
            "T01", "a background Bash call that only sleeps is a timer: its completion notice "
                   "is the reminder.",
            f"run `{suggestion(first, _when_of(next(c for c in cmds if c.name == 'sleep')), _message_of(cmds))}` "
            f"instead."))
    return findings


def _sub(tool: str, ti: dict) -> dict:
    return {"tool_name": tool, "agent_id": "a1", "agent_type": "implementer", "tool_input": ti}


GUARDS = (
    G.Guard(
        code="T01",
        summary=("timers (CronCreate, ScheduleWakeup, sleep-then-echo, crontab, at, watch) "
                 "only through the reminder command"),
        events=("PreToolUse",),
        tools=G.SHELL_TOOLS + TIMER_TOOLS,
        check=check_t01,
        needs=("bash",),
        doc=G.GuardDoc(
            why="Reminders scattered over crontabs, background sleeps and scheduled wake-ups cannot be "
                "seen, listed or cancelled; an agent that sets `sleep 300; echo check` forgets it, "
                "another wakes up to stale work. One reminder command keeps every pending timer in one "
                "place.",
            example="`(sleep 600 && echo 'check the build') &`, `crontab job.txt`, `echo cmd | at now + 1 hour`, "
                    "CronCreate {cron: '*/5 * * * *', prompt: 'check CI'}",
            instead="`remind 10m 'check the build'` (the command named in [timers] allowed).",
            exceptions="Short sleeps (< [timers] min_sleep_s, default 60 s) and sleeps not followed by a "
                       "message are waits, not reminders. Sleeps inside loops are judged by B30. "
                       "`crontab -l`, `atq` pass. `watch` in the foreground is a display the call's "
                       "timeout ends; left running after the call (backgrounded, nohup, setsid, a "
                       "detached tmux/screen) it is a timer.",
        ),
        breaks={"t01-allow-timers": "every kind of timer passes"},
        cases=lambda: (
            G.Case("sleep-echo-main", "PreToolUse",
                   # the documented example; Claude Code itself blocks a leading foreground `sleep 300; ...`
                   # (pointing to Monitor) before any hook, but lets this form through to T01
                   {"tool_name": "Bash", "tool_input": {"command": "(sleep 600 && echo 'check the build') &"}},
                   fires=True, breaks=("t01-allow-timers",)),
            G.Case("sleep-and-notify-subagent", "PreToolUse",
                   _sub("Bash", {"command": "sleep 10m && notify-send done"}),
                   fires=True, breaks=("t01-allow-timers",)),
            G.Case("crontab-install", "PreToolUse",
                   {"tool_name": "Bash", "tool_input": {"command": "crontab /tmp/jobs.txt"}},
                   fires=True, breaks=("t01-allow-timers",)),
            G.Case("at-job-subagent", "PreToolUse",
                   _sub("Bash", {"command": "echo 'make check' | at now + 1 hour"}),
                   fires=True, breaks=("t01-allow-timers",)),
            G.Case("cron-create", "PreToolUse",
                   {"tool_name": "CronCreate", "tool_input": {"cron": "*/5 * * * *", "prompt": "check CI"}},
                   fires=True, breaks=("t01-allow-timers",)),
            G.Case("wakeup-subagent", "PreToolUse",
                   _sub("ScheduleWakeup", {"delaySeconds": 600, "reason": "wait", "prompt": "look again"}),
                   fires=True, breaks=("t01-allow-timers",)),
            G.Case("remind-command", "PreToolUse",
                   {"tool_name": "Bash", "tool_input": {"command": "remind 10m 'check the build'"}},
                   fires=False),
            G.Case("cron-through-remind", "PreToolUse",
                   {"tool_name": "CronCreate", "tool_input": {"cron": "0 9 * * *", "prompt": "/remind standup"}},
                   fires=False),
            G.Case("short-wait-subagent", "PreToolUse",
                   _sub("Bash", {"command": "sleep 2; echo ready; curl -s localhost:8080"}),
                   fires=False),
            G.Case("watch-left-running-subagent", "PreToolUse",
                   _sub("Bash", {"command": "nohup watch -n 300 'echo check CI' >/dev/null 2>&1 &"}),
                   fires=True, breaks=("t01-allow-timers",)),
            G.Case("watch-in-a-background-call", "PreToolUse",
                   _sub("Bash", {"command": "watch -n 600 git status", "run_in_background": True}),
                   fires=True, breaks=("t01-allow-timers",)),
            G.Case("watch-in-the-foreground", "PreToolUse",
                   _sub("Bash", {"command": "watch --differences df"}), fires=False),
            G.Case("crontab-list", "PreToolUse",
                   {"tool_name": "Bash", "tool_input": {"command": "crontab -l"}},
                   fires=False),
            G.Case("echo-mentions-sleep", "PreToolUse",
                   _sub("Bash", {"command": "echo 'sleep 300; echo hi' > /tmp/notes.txt"}),
                   fires=False),
        ),
    ),
)
