"""Where a write lands: the one place that turns a write target as written into the paths it reaches.

Shared by W01 (hooks/write_scope.py) and G01 (hooks/shell_protection_guards.py) for the shell's
writes (hooks/shell_writers.py finds them) and by the interpreter-code scan
(hooks/interpreter_writes.py). What is normalised, in order:

- ``~`` and ``~user`` at the start (``~`` is ``$HOME``, ``~user`` that user's home from the
  password database); a quoted ``"~/x"`` is read the same (the reader's words are quote-removed:
  the safe reading for a guard);
- ``$HOME``, ``${HOME}``, ``$PWD``, ``$OLDPWD`` and ``$SWARMGATE_STATE_DIR`` left in a target (the
  reader already expands the variables whose value it knows; these are what the hook knows besides);
- relative paths against the directory the command runs in (the reader follows ``cd``, ``pushd``,
  ``popd`` and ``cd -``), then ``.``/``..`` segments and repeated slashes (``posixpath.normpath``);
- symbolic (and hard) links made earlier in the same command (``ln -s .claude c; echo > c/x``):
  ``Links`` records each ``ln`` and ``cp -l/-s`` of the text, and a path under a recorded link is
  read under its target as well;
- symbolic links already on disk: ``os.path.realpath`` against the real tree (the lexical path and
  the real one are both judged).

Pure functions and one small class; light at import (``os`` and ``posixpath`` only; ``pwd`` for
``~user`` on first use).
"""
from __future__ import annotations

from swarmgate import lean_os as os
from swarmgate import lean_path as posixpath

_VARS = ("HOME", "PWD", "OLDPWD", "SWARMGATE_STATE_DIR")


def home() -> str:
    return os.environ.get("HOME") or os.path.expanduser("~")


def expand_tilde(path: str) -> str:
    """``~``, ``~/x``, ``~user/x`` expanded; anything else unchanged (an unknown user stays as written)."""
    if not path.startswith("~"):
        return path
    k = path.find("/")
    user = path[1:] if k < 0 else path[1:k]
    rest = "" if k < 0 else path[k:]
    if not user:
        return home() + rest
    if user in ("+", "-"):
        return path   # ~+ / ~- are $PWD / $OLDPWD: the caller's variables decide
    try:
        import pwd
        return pwd.getpwnam(user).pw_dir + rest
    except (KeyError, ImportError):
        return path


def expand_known(path: str, cwd: str | None = None, oldpwd: str | None = None) -> str:
    """``path`` with a leading tilde and the variables the hook knows (``_VARS``) replaced; the
    reader leaves ``$OLDPWD``/``$PWD`` in a word when the shell's value is not constant."""
    if path.startswith("~+"):
        path = (cwd or "~+") + path[2:]
    elif path.startswith("~-"):
        path = (oldpwd or "~-") + path[2:]
    path = expand_tilde(path)
    if "$" not in path:
        return path
    values = {"HOME": home(), "PWD": cwd, "OLDPWD": oldpwd,
              "SWARMGATE_STATE_DIR": os.environ.get("SWARMGATE_STATE_DIR") or "/var/tmp/swarmgate"}
    for name in _VARS:
        val = values[name]
        if not val:
            continue
        for form in ("${" + name + "}", "$" + name):
            if path.startswith(form) and (len(path) == len(form) or not (path[len(form)].isalnum()
                                                                         or path[len(form)] == "_")):
                path = val + path[len(form):]
    return path


def is_placeable(path: str) -> bool:
    """Whether a target can be placed statically once ``expand_known`` ran: no expansion left."""
    return bool(path) and "$" not in path and "`" not in path and not path.startswith("~")


def absolute(path: str, cwd: str | None) -> str | None:
    """The lexical absolute path (None when relative to an unknown directory)."""
    if path.startswith("/"):
        return posixpath.normpath(path) if not path.startswith("//") else posixpath.normpath("/" + path.lstrip("/"))
    if not cwd:
        return None
    return posixpath.normpath(posixpath.join(cwd, path))


def real(full: str) -> str:
    try:
        return os.path.realpath(full)
    except (OSError, ValueError):
        return full


class Links:
    """Links made earlier in the same command: link path -> what it points at (absolute, lexical)."""
    __slots__ = ("made",)

    def __init__(self) -> None:
        self.made: dict[str, str] = {}

    def add(self, link: str, target: str) -> None:
        self.made[link] = target

    def through(self, full: str) -> list[str]:
        """Other names of ``full`` through the recorded links (a few hops; longest link first)."""
        out: list[str] = []
        todo = [full]
        for _ in range(8):
            if not todo:
                break
            p = todo.pop()
            for link in sorted(self.made, key=len, reverse=True):
                if p == link or p.startswith(link + "/"):
                    q = posixpath.normpath(self.made[link] + p[len(link):])
                    if q not in out and q != full:
                        out.append(q)
                        todo.append(q)
                    break
        return out


def candidates(full: str, links: Links | None = None) -> list[str]:
    """Every name the write at ``full`` (absolute, normalised) reaches: itself, through links made
    in the command, and each of those through the links on disk."""
    names = [full]
    if links is not None and links.made:
        names += links.through(full)
    out: list[str] = []
    for n in names:
        for c in (n, real(n)):
            if c not in out:
                out.append(c)
    return out
