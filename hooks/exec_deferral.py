"""Reading defers to the exec-time layer (`[bash] unverifiable = "exec"`, docs/bash-guards.md).

Enforcement in depth exists so that reading need not refuse what it cannot read: where the
session's exec-time shims (X01) will judge the command anyway, B01 lets it run with a context
line and a decision-log trace naming that layer, instead of refusing it. Only where that is
sound:

- the thing not read is a program start the shims see: a command name made of variables the
  command does not set (it resolves through PATH, shims first), an unreadable argument of a
  shimmed program (`cargo test "$FLAGS"`), make in a directory or with a target that cannot be
  named, `eval "$(poetry env activate)"` alone (what a shell-setup printer prints runs through
  PATH); the reader tags these (``Unverifiable.exec_judged``);
- the session's shims are really on the commands' PATH: its shim directory is written, the
  client's env file holds the PATH line, X01 is on, the tool is Bash (the env file is applied to
  Bash commands);
- nothing in the command changes PATH or runs the program with another PATH (an assignment, a
  sourced file, sudo, `env -i`, `command -p`, launchers that put their own bin first): there the
  shims would not see the start.

Everything else stays refused (or asked) as before: text fed to a shell from the network or a
decoder, a script path that cannot be named, a script written and run in the same command.

Light at import: ``env_name`` runs inside the reader (hooks/bash_walker.py).
"""
from __future__ import annotations

from swarmgate import lean_os as os

from swarmgate.hooks.bash_results import ANY, SETUP  # noqa: F401 - the exec_judged marks (the walker's, too)
from swarmgate.lazy_pattern import LazyPattern

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only
    from swarmgate.config import Config
    from swarmgate.hook_protocol import HookEvent
    from swarmgate.hooks.bash_results import Analysis

DEFERRED = "[B01] read: unknown,"   # how B01's context line starts (the decision log keeps the line)

_VAR = LazyPattern(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
_PLAIN = LazyPattern(r"[A-Za-z0-9_.+:@%-]*")

# values a name may not take: they run text, change how the rest is looked up, or run the rest
# with another PATH (sudo's secure_path, env -i)
_NOT_THROUGH_PATH = frozenset((
    "eval", "source", ".", "exec", "command", "builtin", "trap", "alias", "hash", "enable", "env",
    "sudo", "doas", "su", "runuser", "pkexec", "chroot", "setpriv", "declare", "typeset", "export",
    "readonly", "local", "set", "unset", "shopt", "bash", "sh", "dash", "zsh", "ksh", "fish"))

# bash's own variables: set by the shell, not by the environment the hook sees
_SHELL_VARS = frozenset((
    "BASH", "BASHPID", "BASHOPTS", "HOSTNAME", "HOSTTYPE", "OSTYPE", "MACHTYPE", "PPID", "UID", "EUID",
    "GROUPS", "SHELLOPTS", "PS1", "PS2", "PS3", "PS4", "IFS", "PWD", "OLDPWD", "SECONDS", "LINENO", "RANDOM",
    "SRANDOM", "EPOCHSECONDS", "EPOCHREALTIME", "FUNCNAME", "PIPESTATUS", "HISTFILE", "HISTCMD", "COLUMNS",
    "LINES", "OPTARG", "OPTIND", "REPLY", "SHELL", "SHLVL", "PATH", "HOME", "CDPATH", "BASH_ENV", "ENV"))


def env_name(word: str, assigned: dict, environ=None, written: str | None = None) -> str | None:
    """The command name a dynamic first word stands for, when that is sound to leave to the
    shims: ``word`` (as the reader keeps it, ``$BUILD_CMD``, ``${BIN}x``) is only variables the
    command does not set and plain characters, each value in the environment is a plain name
    (no ``/``: it resolves through PATH) or unset, and the result is not a builtin or a program
    that runs the rest with another PATH. ``written``: the command as typed; each variable must
    be written there (not a stand-in of the reader's, such as xargs' ``$XARGS_INPUT`` for its
    input, nor one of a script's). "" when it expands to nothing (the next word is the command);
    None when it cannot be left to the shims."""
    env = os.environ if environ is None else environ
    out = []
    pos = 0
    for m in _VAR.finditer(word):
        lit = word[pos:m.start()]
        name = m.group(1) or m.group(2)
        if not _PLAIN.fullmatch(lit) or name in assigned or name in _SHELL_VARS or name.startswith("BASH_"):
            return None
        if written is not None and not _written(name, written):
            return None
        value = env.get(name, "")
        if not _PLAIN.fullmatch(value):
            return None
        out += [lit, value]
        pos = m.end()
    if pos == 0 or not _PLAIN.fullmatch(word[pos:]):
        return None
    name = "".join(out) + word[pos:]
    if name in _NOT_THROUGH_PATH:
        return None
    return name


def _written(name: str, text: str) -> bool:
    """``$NAME`` or ``${NAME`` appears in ``text`` as that whole name."""
    for lead in ("$" + name, "${" + name):
        k = text.find(lead)
        while k >= 0:
            end = k + len(lead)
            if end >= len(text) or not (text[end].isalnum() or text[end] == "_"):
                return True
            k = text.find(lead, k + 1)
    return False


# programs whose output is shell setup meant for `eval "$(...)"`
SETUP_PRINTERS = frozenset((
    "poetry", "pyenv", "rbenv", "nodenv", "goenv", "jenv", "plenv", "pyenv-virtualenv-init", "direnv",
    "ssh-agent", "dircolors", "starship", "zoxide", "brew", "fnm", "mise", "rtx", "opam", "luarocks",
    "conda", "micromamba", "keychain", "thefuck", "register-python-argcomplete", "gh", "kubectl", "helm",
    "rustup", "pip", "pipx", "uv", "npm", "hub", "fzf", "atuin", "gpg-agent", "lesspipe", "lesspipe.sh",
    "docker-machine", "minikube", "rclone", "jj"))
_SUBST = LazyPattern(r"(?:\$\(|`)\s*([A-Za-z0-9_./-]+)((?:\s+[A-Za-z0-9_.=:-]+)*)\s*(?:\)|`)")


def setup_printer(args: list, largs: list) -> str | None:
    """``eval "$(poetry env activate)"``: the printer's name when eval's only argument is the
    output of a shell-setup printer with plain arguments."""
    if len(args) != 1 or largs[0] < 0:
        return None
    m = _SUBST.fullmatch(args[0].strip())
    if not m:
        return None
    name = m.group(1).rsplit("/", 1)[-1]
    return name if name in SETUP_PRINTERS else None


# --- is the exec-time layer there to judge it? -----------------------------------------------

def shims_on_path(event: HookEvent, config: Config) -> set | None:
    """The programs the session's shims cover, when they are on this command's PATH: X01 on, a
    Bash call (the env file is applied to Bash commands), the shim directory written for this
    session, and the client's env file holding its PATH line (recorded by X01's act at
    SessionStart); None otherwise (no env file, another client, X01 off)."""
    if event.tool_name != "Bash" or config.guard_mode("X01") != "on" or not event.session_id:
        return None
    from swarmgate.break_switch import broken
    from swarmgate.hooks import exec_shims

    if broken("x01-no-shims"):
        return None
    shim_dir = exec_shims.shim_dir_for(event.session_id)
    meta = exec_shims.read_meta(shim_dir)
    if not meta or not isinstance(meta.get("programs"), dict):
        return None
    if not exec_shims.env_file_has_line(shim_dir):
        return None
    return set(meta["programs"])


_PATH_TEXT = LazyPattern(r"\bPATH\b|--ignore-environment|\bactivate\b|\bhash\b")
# run what follows with a PATH of their own (or on another machine, in a container)
_PATH_WRAPPERS = frozenset((
    "sudo", "doas", "su", "runuser", "pkexec", "chroot", "setpriv", "nix-shell", "nix", "nix-env", "conda",
    "mamba", "micromamba", "poetry", "pipenv", "pdm", "hatch", "rye", "uv", "uvx", "pipx", "npx", "npm", "pnpm",
    "yarn", "bun", "bunx", "direnv", "systemd-run", "docker", "podman", "ssh", "flatpak", "snap", "firejail",
    "bwrap", "source", ".", "hash", "enable", "rustup", "cargo-script"))
# change the PATH of what this shell runs after them
_PERSISTENT = frozenset(("source", ".", "hash", "enable"))


def _path_change(analysis: Analysis, text: str) -> str | None:
    """Why the shims might not be first on PATH for a program this command starts, or None."""
    m = _PATH_TEXT.search(text)
    if m:
        return f"the command mentions {m.group(0)}"
    for c in analysis.commands:
        # what runs a command with its own PATH (sudo make ...), and what changes this shell's
        names = [str(w) for w in (getattr(c, "wrappers", None) or ())]
        if c.name in _PERSISTENT:
            names.append(c.name)
        for n in names:
            base = n.rsplit("/", 1)[-1]
            if base in _PATH_WRAPPERS:
                return f"{base} runs programs with a PATH of its own"
        if "PATH" in (c.assignments or {}):
            return "it sets PATH"
        args = list(c.args) if c.words else []
        if c.name == "env" and any(a == "-" or (a.startswith("-") and not a.startswith("--") and "i" in a)
                                   for a in args):
            return "env -i clears PATH"
        if c.name in ("command", "exec") and any(a.startswith("-") and ("p" in a or "c" in a) for a in args[:2]):
            return f"{c.name} {args[0]} runs with a PATH of its own"
    return None


def deferral(event: HookEvent, config: Config, analysis: Analysis) -> tuple[str, list] | None:
    """(the trace, [what was not read]) when every unverifiable finding of ``analysis`` is judged
    at exec time by the session's shims; None when reading must refuse (or ask) as before."""
    found = list(getattr(analysis, "unverifiable", ()) or ())
    if not found or any(not getattr(u, "exec_judged", None) for u in found):
        return None
    programs = shims_on_path(event, config)
    if programs is None:
        return None
    from fnmatch import fnmatchcase

    judged: list = []
    for u in found:
        for p in u.exec_judged:
            if p == SETUP:
                # alone only: what it prints may put a directory before the shims for the rest
                if any(c.words and c.name != "eval" and c.name not in SETUP_PRINTERS for c in analysis.commands):
                    return None
            elif p != ANY and not any(fnmatchcase(x, p) for x in programs):
                return None
            if p not in judged:
                judged.append(p)
    if SETUP not in judged and _path_change(analysis, str(event.shell_command or "")):
        return None
    who = ", ".join("whatever program it names" if p == ANY else "what the shell setup starts" if p == SETUP
                    else f"`{p}`" for p in judged)
    return (f"judged at exec time by X01 (the shims of this session judge {who} where it "
            f"starts)", found)
