"""What the bash reader yields (``bash_tree.analyze``): result types only, no logic.

``Analysis`` holds every ``SimpleCommand`` a shell text would execute, its
``Loop``s, what could not be read (``Unverifiable``) and the programs it hands
to interpreters (``Program``: the reader records them; the guards scan them).
"""
from __future__ import annotations

# marks of Unverifiable.exec_judged (hooks/exec_deferral.py judges them; the walker sets them, and
# a benign command's walk must not load the judge)
ANY = "*"          # whatever program the name resolves to through PATH
SETUP = "setup"    # eval of what a shell-setup printer prints

__all__ = ["Redirect", "SimpleCommand", "Loop", "Unverifiable", "Program", "Analysis", "command_name"]


def command_name(word: str) -> str:
    """Basename of a command word (already quote-removed)."""
    k = word.rfind("/")
    return word[k + 1:] if k >= 0 else word


class Redirect:
    """A redirection. ``op``: ">", ">>", "<", "<<", "<<-", "<<<", ">&", "<&",
    "&>", "&>>", ">|", "<>"; ``target``: quote-removed (may contain ``$``),
    the fd number as text for ``2>&1``; ``fd``: explicit fd or None;
    ``heredoc``: the body for ``<<``/``<<-`` (the here-string for ``<<<`` is
    ``target``)."""
    __slots__ = ("op", "target", "fd", "heredoc", "quoted")

    def __init__(self, op: str, target: str, fd: int | None = None, heredoc: str | None = None,
                 quoted: bool = False) -> None:
        self.op = op
        self.target = target
        self.fd = fd
        self.heredoc = heredoc
        self.quoted = quoted   # the here-document delimiter was quoted: no expansion in the body

    @property
    def writes(self) -> bool:
        """True when this redirection writes to ``target`` as a file."""
        if self.op in (">", ">>", ">|", "&>", "&>>", "<>"):
            return True
        return self.op == ">&" and not self.target.isdigit() and self.target != "-"

    def __repr__(self) -> str:
        return f"Redirect({self.op!r}, {self.target!r}, fd={self.fd})"


class SimpleCommand:
    """One simple command that would execute. See the module doc for ``via``.

    Extensions beyond the first contract: ``cwd`` (the directory it runs in
    when known, else None), ``dynamic`` (per word: True when the word holds an
    expansion we could not resolve; such words keep the ``$...`` text),
    ``script`` (the absolute path of the script it came from, or None), ``piped`` (its stdin is the
    output of the command before it in a pipeline), ``find`` (for a command ``find -exec``/``-execdir``
    runs: (find's start points, whether it runs in each file's directory), else None)."""
    __slots__ = ("words", "name", "args", "assignments", "redirects", "via", "background",
                 "wrappers", "text", "is_data", "cwd", "dynamic", "script", "piped", "find")

    def __init__(self, words: list[str], assignments: dict, redirects: list, via: tuple,
                 background: int, wrappers: tuple, text: str, cwd: str | None = None,
                 dynamic: list | None = None, script: str | None = None) -> None:
        self.words = words
        self.name = command_name(words[0]) if words else ""
        self.args = words[1:]
        self.assignments = assignments
        self.redirects = redirects
        self.via = via
        self.background = background
        self.wrappers = wrappers
        self.text = text
        self.is_data = False
        self.cwd = cwd
        self.dynamic = dynamic if dynamic is not None else [False] * len(words)
        self.script = script
        self.piped = False
        self.find = None

    def __repr__(self) -> str:
        return f"SimpleCommand({self.words!r}, via={self.via!r}, bg={self.background})"


class Loop:
    __slots__ = ("kind", "condition_commands", "body_commands", "has_break", "text")

    def __init__(self, kind: str, text: str) -> None:
        self.kind = kind
        self.condition_commands: list[SimpleCommand] = []
        self.body_commands: list[SimpleCommand] = []
        self.has_break = False
        self.text = text

    def __repr__(self) -> str:
        return f"Loop({self.kind!r}, break={self.has_break}, {self.text[:40]!r})"


class Unverifiable:
    """What the reader could not read. ``exec_judged``: the programs whose start judges it anyway
    (the exec-time shims, X01), when that is sound: ``("cargo",)`` for an unreadable argument of
    cargo, ``("*",)`` for a command name that resolves through PATH whatever it is; None when
    only reading could judge it (text fed to a shell, a script path, ...). hooks/exec_deferral.py
    decides whether the session's shims are there to do it."""
    __slots__ = ("reason", "text", "exec_judged")

    def __init__(self, reason: str, text: str, exec_judged: tuple | None = None) -> None:
        self.reason = reason
        self.text = text
        self.exec_judged = exec_judged

    def __repr__(self) -> str:
        return f"Unverifiable({self.reason!r})"


class Program:
    """Code an interpreter runs: ``python -c CODE``, ``node -e CODE``, a program fed on stdin
    (``python3 - <<EOF``, ``cat x.py | python3``). ``code`` is None when it cannot be read
    statically; ``source`` is "inline", "stdin" or "file". The reader does not judge it: the guards
    scan it for command patterns (``code_scan``); the shell commands it hands to a shell are walked
    into ``Analysis.commands`` (``embedded_shell``)."""
    __slots__ = ("interpreter", "code", "text", "cwd", "via", "source")

    def __init__(self, interpreter: str, code: str | None, text: str, cwd: str | None, via: tuple,
                 source: str) -> None:
        self.interpreter = interpreter
        self.code = code
        self.text = text
        self.cwd = cwd
        self.via = via
        self.source = source

    def __repr__(self) -> str:
        return f"Program({self.interpreter!r}, {(self.code or '')[:40]!r}, source={self.source!r})"


class Analysis:
    __slots__ = ("commands", "loops", "unverifiable", "nested_background", "scripts_read",
                 "problems", "parsed_by", "programs", "files_read")

    def __init__(self) -> None:
        self.commands: list[SimpleCommand] = []
        self.loops: list[Loop] = []
        self.unverifiable: list[Unverifiable] = []
        self.nested_background: list[str] = []
        self.scripts_read: list[str] = []
        self.problems: list[str] = []
        self.parsed_by = "bashlex"
        self.programs: list[Program] = []
        self.files_read: list[str] = []          # project files read (package.json, Makefile, .git/config ...)

    def __repr__(self) -> str:
        return (f"Analysis(commands={self.commands!r}, unverifiable={self.unverifiable!r}, "
                f"problems={self.problems!r}, parsed_by={self.parsed_by!r})")
