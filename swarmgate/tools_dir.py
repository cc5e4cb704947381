"""The directory of swarmgate's tools on the agents' PATH (SPEC §13, docs/install.md).

In a Claude Code session an agent's commands get the PATH the client was started with, plus what
SessionStart writes into ``$CLAUDE_ENV_FILE``. An install's console scripts live beside its
interpreter (``.venv/bin``, pipx's and uv's venvs), next to ``python`` and ``pip``, which must not
shadow the project's own: so the tools get a directory of their own, holding only symlinks to
swarmgate's console scripts (tool_table: ``swarmgate`` and every tool with a script):

- an install in a virtual environment (regular, ``--dev``, pipx, ``uv tool``, a wheel into a
  venv, and the plugin, which runs one of these): ``<venv>/swarmgate-tools``;
- elsewhere, or a venv this user cannot write: ``<state dir>/tools/<12 hex of the scripts' dir>``.

``swarmgate install`` makes it and SessionStart refreshes it (``ensure``); SessionStart puts
``export PATH=<it>:"$PATH"`` at the top of the env file (``add_to_env_file``), so the shim line X01
appends after it is read later and comes first: the shims, then the tools, then the client's PATH.

Codex CLI and Gemini CLI have no env file: there the hook names each tool in the texts it hands an
agent by its absolute path when it does not resolve on the client's PATH (``agent_command``,
``for_agents``; the one rule, T01's and remind's own lines included).
"""
from __future__ import annotations

import os
import shlex
import sys

DIR_NAME = "swarmgate-tools"
COMMENT = "# swarmgate: its tools on PATH, after the exec-time shims (docs/install.md)"


def script_names() -> tuple[str, ...]:
    """Every console script of swarmgate ([project.scripts] is held to this list)."""
    from swarmgate import tool_table  # noqa: PLC0415 - pure data; only where the names are needed

    return ("swarmgate", *(t.name for t in tool_table.TOOLS if t.script))


def _is_exe(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def scripts_dir() -> str | None:
    """The directory of this install's console scripts: beside the interpreter (every venv; the
    hook runs that interpreter), else the running `swarmgate` script's, else the one the package's
    metadata records; None when none holds `swarmgate`."""
    here = os.path.dirname(os.path.abspath(sys.executable))
    if _is_exe(os.path.join(here, "swarmgate")):
        return here
    argv0 = sys.argv[0] if sys.argv else ""
    if os.path.basename(argv0) == "swarmgate" and _is_exe(argv0):
        return os.path.dirname(os.path.abspath(argv0))
    try:
        from importlib import metadata  # noqa: PLC0415 - the rare install outside a venv

        for f in metadata.distribution("swarmgate").files or ():
            if f.name == "swarmgate" and f.parent.name == "bin":
                path = os.path.abspath(str(f.locate()))
                if _is_exe(path):
                    return os.path.dirname(path)
    except Exception:  # noqa: BLE001 - no metadata: said by the caller (None)
        pass
    return None


def location(scripts: str) -> str:
    """Where the tools' directory of the install whose scripts are in ``scripts`` lives."""
    venv = os.path.dirname(os.path.abspath(scripts))
    if os.path.isfile(os.path.join(venv, "pyvenv.cfg")):
        d = os.path.join(venv, DIR_NAME)
        if os.path.isdir(d) or os.access(venv, os.W_OK):
            return d
    import hashlib  # noqa: PLC0415 - only for an install outside a venv (the hook's SessionStart budget)

    from swarmgate.state_paths import state_dir_text  # noqa: PLC0415

    key = hashlib.sha256(os.path.abspath(scripts).encode()).hexdigest()[:12]
    return os.path.join(os.path.abspath(state_dir_text()), "tools", key)


def ensure(scripts: str | None = None) -> str:
    """Make (or refresh) the tools' directory of the install in ``scripts`` (default: this one):
    one symlink per console script there, nothing else; return its path. OSError when it cannot."""
    scripts = scripts or scripts_dir()
    if not scripts or not _is_exe(os.path.join(scripts, "swarmgate")):
        raise OSError(f"no `swarmgate` console script found (looked beside {sys.executable})")
    scripts = os.path.abspath(scripts)
    d = location(scripts)
    if os.path.islink(d):
        raise OSError(f"{d} is a symlink; refusing to use it for swarmgate's tools")
    os.makedirs(d, exist_ok=True)
    names = script_names()
    for name in names:
        src, link = os.path.join(scripts, name), os.path.join(d, name)
        if not _is_exe(src):
            if os.path.islink(link):
                os.unlink(link)
            continue
        try:
            if os.readlink(link) == src:
                continue
        except OSError:
            pass
        tmp = f"{link}.tmp-{os.getpid()}"
        if os.path.lexists(tmp):
            os.unlink(tmp)
        os.symlink(src, tmp)
        os.replace(tmp, link)
    for name in os.listdir(d):   # a script a newer release dropped (only links: nothing else is ours)
        path = os.path.join(d, name)
        if name not in names and ".tmp-" not in name and os.path.islink(path):   # not a link being made
            os.unlink(path)
    return d


def export_line(d: str) -> str:
    return f"export PATH={shlex.quote(d)}:\"$PATH\""


def add_to_env_file(env_file: str, d: str) -> bool:
    """Put the PATH line for ``d`` at the top of the env file unless it is in it; True when it is
    there. At the top: whatever the file says after it (the shims' line) is put ahead of it."""
    line = export_line(d)
    try:
        try:
            fd = os.open(env_file, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            text = ""
        else:
            with os.fdopen(fd, encoding="utf-8", errors="surrogateescape") as f:
                text = f.read()
        if line in text.splitlines():
            return True
        head, tail = os.path.split(env_file)
        tmp = os.path.join(head, f".{tail}.swarmgate-{os.getpid()}")   # a name no client would run
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(f"{COMMENT}\n{line}\n{text}")
        os.replace(tmp, env_file)
        return True
    except OSError:
        return False


def at_session_start(env_file: str) -> str:
    """SessionStart: the tools' directory made and on the env file's PATH; '' when done, else what
    went wrong in one line (the session goes on; `swarmgate doctor` in it names what is missing)."""
    try:
        d = ensure()
    except OSError as e:
        return f"swarmgate's tools are NOT on this session's PATH: {e}"
    if not add_to_env_file(env_file, d):
        return f"swarmgate's tools are NOT on this session's PATH: {env_file} could not be written"
    return ""


def resolve(name: str, path: str) -> str | None:
    """Where ``name`` resolves on the PATH ``path`` (as a shell would: the first executable)."""
    for d in path.split(os.pathsep):
        cand = os.path.join(d or ".", name)
        if _is_exe(cand):
            return cand
    return None


_NAMED: dict = {}   # (name, PATH) -> how to name it: the lookup is made once per hook process


def agent_command(name: str, path: str | None = None) -> str:
    """How an agent calls swarmgate's tool ``name`` so that it runs when pasted: as named when it
    resolves on the PATH ``path`` (default: this process's; the hook inherits the client's, which
    the agents' commands get) to this install's script, else by this install's absolute path, else
    as named (no script of that name here). Claude Code's agents get the tools' directory on PATH
    from the env file; Codex CLI's and Gemini CLI's have no env file (``for_agents``)."""
    path = os.environ.get("PATH", "") if path is None else path
    key = (name, path)
    if key not in _NAMED:
        scripts = scripts_dir()
        ours = os.path.join(scripts, name) if scripts else ""
        if not ours or not _is_exe(ours):
            _NAMED[key] = name
        else:
            found = resolve(name, path)
            same = found is not None and os.path.realpath(found) == os.path.realpath(ours)
            _NAMED[key] = name if same else shlex.quote(ours)
    return _NAMED[key]


_PATTERN: list = []


def _pattern():
    """Where a text names one of swarmgate's tools as a command: a hyphenated script name anywhere
    (no English word is one; not inside a path or a longer name), `remind` and `swarmgate VERB` only
    where a command starts (a code span, `Way out: `, a line, after ; & | or `$(`, past assignments)."""
    if not _PATTERN:
        import re  # noqa: PLC0415 - only when a text for an agent of Codex or Gemini names a tool

        from swarmgate import tool_table  # noqa: PLC0415 - pure data

        names = script_names()
        hyph = "|".join(re.escape(n) for n in sorted((n for n in names if "-" in n), key=len, reverse=True))
        verbs = "|".join(re.escape(t.name) for t in tool_table.TOOLS)
        plain = "|".join(re.escape(n) for n in names if "-" not in n and n != "swarmgate") or "(?!)"
        start = r"(?:^|`|Way out: |\$\(|[;&|]\s*)(?:[A-Za-z_]\w*=(?:'[^']*'|\"[^\"]*\"|[^\s`'\"]*)\s+)*"
        _PATTERN.append(re.compile(
            rf"(?<![\w./~-])(?P<h>{hyph})(?![\w-]|\.\w)"
            rf"|(?P<s>{start})(?:(?P<p>{plain})(?=[\s`]|$)|(?P<g>swarmgate)(?= (?:{verbs})(?![\w-])))",
            re.M))
    return _PATTERN[0]


def for_agents(text: str, path: str | None = None) -> str:
    """``text`` (a refusal's reason, added context) with every swarmgate tool it names as a command
    named as ``agent_command`` says, so that the agent's paste runs on a PATH without the tools
    (issue 22). Only for clients without an env file: Claude Code's text is left as it is."""
    if not text or not any(n in text for n in script_names()):
        return text

    def sub(m) -> str:
        if m.group("h"):
            return agent_command(m.group("h"), path)
        name = m.group("p") or m.group("g")
        return m.group("s") + agent_command(name, path)

    return _pattern().sub(sub, text)


def shell_bin_dir(home: str | None = None) -> str:
    """Where pipx links console scripts by default, and where install links these when that
    directory is on the shell's PATH: ~/.local/bin."""
    return os.path.join(home or os.path.expanduser("~"), ".local", "bin")


def for_the_shell(d: str, path: str | None = None, home: str | None = None) -> tuple[list[str], str]:
    """Give the user's shell the tools in ``d``: (lines to print, how to call `swarmgate` now).

    Already on PATH (pipx, uv tool) -> nothing; else, when ~/.local/bin is on PATH and holds none
    of these names for another install, link each tool there (as pipx does); else the one line to
    add to the shell's profile, and `swarmgate` by its absolute path (it works as printed)."""
    path = os.environ.get("PATH", "") if path is None else path
    ours = os.path.realpath(os.path.join(d, "swarmgate"))

    def on_path() -> bool:
        found = resolve("swarmgate", path)
        return found is not None and os.path.realpath(found) == ours

    if on_path():
        return [], "swarmgate"
    bindir = shell_bin_dir(home)
    entries = {os.path.abspath(os.path.expanduser(p)) for p in path.split(os.pathsep) if p}
    names = [n for n in script_names() if os.path.lexists(os.path.join(d, n))]
    if bindir in entries:
        theirs = [n for n in names if os.path.lexists(os.path.join(bindir, n))
                  and os.path.realpath(os.path.join(bindir, n)) != os.path.realpath(os.path.join(d, n))]
        if not theirs:
            try:
                os.makedirs(bindir, exist_ok=True)
                for n in names:
                    link = os.path.join(bindir, n)
                    if not os.path.lexists(link):
                        os.symlink(os.path.join(d, n), link)
            except OSError as e:
                theirs = [f"({e})"]
            else:
                if on_path():
                    return [f"linked swarmgate's {len(names)} tools into {bindir} (on your PATH)"], "swarmgate"
        add = (f"{bindir} holds {', '.join(theirs[:3])} of another install: swarmgate's tools are not linked "
               "there")
    else:
        add = "swarmgate's tools are not on your shell's PATH"
    return [f"{add}; to have them, add this line to your shell's profile (~/.bashrc, ~/.zshrc):",
            f"    {export_line(d)}"], shlex.quote(os.path.join(d, "swarmgate"))
