"""Programs and builtins that run a string they were given (issue 24 item 4), as data for the walker.

Each entry of ``RUNS`` says, for one program name, where a command hides in its call and how it runs:

- where ``opt``: the value of an option (``KEY``: the option; ``-CVALUE`` and ``--opt=VALUE`` too);
  ``arg``: any argument; ``env``: a variable of the program's environment (an assignment before it,
  or a variable the text set); ``config``: a ``-c KEY=VALUE`` of git's (KEY compared without case);
- ``prefix``: what the value starts with before the command (compared without case; ``""``: none),
  or, written ``...X``, the text after the first X anywhere in the value (dc's ``!``);
- ``cut``: a character that ends the command in the value (socat's ``,`` before its options).

The command found is read as a shell text (bash_walker ``_nested_text``): `mapfile -C 'CMD'`,
`compgen -C CMD`, `zip -TT CMD`, `rsync -e CMD`, `ssh -o ProxyCommand=CMD`, `socat - EXEC:CMD`,
`dc -e '!CMD'`, `sqlite3 DB '.shell CMD'`, `LESSOPEN='|CMD %s' less F`, `git -c core.editor=CMD
commit`, `GIT_EDITOR=CMD git commit`... A value that is not static is left unverifiable, named.
Parsing only: ``found`` returns (label, text, static) triples; the walker judges them.
"""
from __future__ import annotations

_SSH = tuple(("opt", "-o", p, "") for p in ("ProxyCommand=", "ProxyCommand ", "LocalCommand=", "LocalCommand ",
                                              "KnownHostsCommand=", "KnownHostsCommand "))
_GIT_CONFIG = ("core.editor", "sequence.editor", "core.fsmonitor", "diff.external", "core.sshCommand",
               "core.pager", "pager.log", "pager.diff", "pager.show", "gpg.program", "credential.helper")
_GIT_ENV = ("GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_EXTERNAL_DIFF", "GIT_SSH_COMMAND", "GIT_PAGER", "EDITOR",
            "VISUAL", "GIT_ASKPASS", "SSH_ASKPASS")
_EDITOR_ENV = ("EDITOR", "VISUAL")
RUNS: dict[str, tuple] = {
    # bash builtins that evaluate a string: the callback of mapfile, a completion's command
    "mapfile": (("opt", "-C", "", ""),),
    "readarray": (("opt", "-C", "", ""),),
    "compgen": (("opt", "-C", "", ""),),
    "complete": (("opt", "-C", "", ""),),
    # programs with an option that names a command to run
    "zip": (("opt", "-TT", "", ""), ("opt", "--unzip-command", "", "")),
    "rsync": (("opt", "-e", "", ""), ("opt", "--rsh", "", ""), ("opt", "--rsync-path", "", "")),
    "ssh": _SSH,
    "scp": _SSH + (("opt", "-S", "", ""),),
    "sftp": _SSH + (("opt", "-S", "", ""),),
    "socat": (("arg", "", "EXEC:", ","), ("arg", "", "SYSTEM:", ",")),
    "dc": (("opt", "-e", "...!", ""), ("opt", "--expression", "...!", "")),
    "sqlite3": (("arg", "", ".shell ", ""), ("arg", "", ".system ", ""), ("opt", "-cmd", ".shell ", ""),
                ("opt", "-cmd", ".system ", "")),
    "man": (("opt", "-P", "", ""), ("opt", "--pager", "", ""), ("env", "MANPAGER", "", ""), ("env", "PAGER", "", "")),
    # an input preprocessor, an editor, a pager, a diff or ssh program a tool starts from its config
    "less": (("env", "LESSOPEN", "||", ""), ("env", "LESSOPEN", "|", ""), ("env", "LESSCLOSE", "", "")),
    "git": tuple(("config", k, "", "") for k in _GIT_CONFIG) + tuple(("env", k, "", "") for k in _GIT_ENV),
    "crontab": tuple(("env", k, "", "") for k in _EDITOR_ENV),
    "visudo": tuple(("env", k, "", "") for k in _EDITOR_ENV),
    "sudoedit": tuple(("env", k, "", "") for k in _EDITOR_ENV + ("SUDO_EDITOR",)),
    "fc": (("opt", "-e", "", ""), ("env", "FCEDIT", "", ""), ("env", "EDITOR", "", "")),
}
NAMES = frozenset(RUNS)


def _option_values(args: list, largs: list, key: str):
    """(value, last) of every ``key`` option in ``args`` (separate, glued or ``=``)."""
    n = len(args)
    for i, a in enumerate(args):
        if a == "--":
            return
        if a == key and i + 1 < n:
            yield args[i + 1], largs[i + 1]
        elif key.startswith("--") and a.startswith(key + "="):
            yield a[len(key) + 1:], largs[i]
        elif not key.startswith("--") and len(key) == 2 and a.startswith(key) and len(a) > 2:
            yield a[2:], largs[i]


def _after(value: str, prefix: str, cut: str) -> str | None:
    """The command in ``value`` after ``prefix`` (None when it is not there)."""
    if prefix.startswith("..."):
        k = value.find(prefix[3:])
        if k < 0:
            return None
        body = value[k + len(prefix) - 3:].split("\n", 1)[0]
    elif prefix:
        if not value.lower().startswith(prefix.lower()):
            return None
        body = value[len(prefix):]
    else:
        body = value
    if cut and cut in body:
        body = body.split(cut, 1)[0]
    return body.replace("%s", "FILE").strip() or None


def found(name: str, args: list, largs: list, env: dict, shell_vars: dict) -> list:
    """(label, command text or None when the value is not static, the value) for each command
    the call of ``name`` runs from a string."""
    out = []
    for where, key, prefix, cut in RUNS.get(name, ()):
        if where == "opt":
            values = list(_option_values(args, largs, key))
        elif where == "arg":
            values = [(a, la) for a, la in zip(args, largs)]
        elif where == "env":
            v = env.get(key) if key in env else shell_vars.get(key, "")
            values = [(v, -1 if isinstance(v, str) else 0)] if v != "" else []
            if values and values[0][0] is None:
                values = [("", 0)]
        else:   # git -c KEY=VALUE
            values = []
            for v, la in _option_values(args, largs, "-c"):
                k, eq, val = v.partition("=")
                if eq and k.lower() == key.lower():
                    values.append((val, la))
        for value, last in values:
            label = f"{name} {key or prefix.strip()}"
            if last >= 0:
                if not prefix or (isinstance(value, str) and value.lower().startswith(prefix.lstrip(".").lower())):
                    out.append((label, None, value))
                continue
            body = _after(value, prefix, cut)
            if body is not None:
                out.append((label, body, value))
    return out
