"""Which environment variables a shell text sets, exports, unsets or reads into (for G01).

The bash reader (bash_tree.analyze) yields the commands that run; a statement that only assigns
(`SWARMGATE_X=1`, `for X in ...`, `: ${X:=1}`, `((X=1))`) runs no command and is not among them,
and neither is a variable set by a builtin's argument (`printf -v X`, `read X`, `export X`).
This module reads the text itself with the quote-aware lexical parser (bash_lexical) and lists
every variable the text changes, in every form bash has:

- assignments, bare or in front of a command (`X=1`, `X+=1`, `X[0]=1`), including under `set -a`;
- `export`, `declare`, `typeset`, `local`, `readonly` (with or without a value; `declare -n REF=X`
  names X too), `unset`, `let`, `printf -v`, `read`, `mapfile`/`readarray`, `getopts`;
- `env NAME=VALUE`, `env -u NAME`, and `env -i` (every variable: NAME "*");
- `for`/`select` loop variables, `${X:=v}` / `${X=v}`, arithmetic assignments in `(( ))` and
  `$(( ))`;
- texts run by `eval` and by `bash -c` / `sh -c` (and the other shells), and command substitutions.

A variable whose name is not written out (`export "$n=1"`, `declare $x`) is reported as
"<dynamic>". Parsing only: what to refuse is G01's decision.
"""
from __future__ import annotations

DYNAMIC = "<dynamic>"
ALL = "*"

# Hot path (every Bash call): no `re` at import; the expressions it needs are compiled on
# first use, and only for texts holding `((` or `${`.
_IDENT_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_IDENT = _IDENT_START | frozenset("0123456789")
_re: dict = {}


def _is_name(s: str) -> bool:
    return bool(s) and s[0] in _IDENT_START and all(c in _IDENT for c in s)


def _assigned_name(word: str) -> str | None:
    """NAME of `NAME=...`, `NAME+=...`, `NAME[i]=...`; None when the word is not one."""
    eq = word.find("=")
    if eq <= 0:
        return None
    head = word[:eq].removesuffix("+")
    head = head.split("[", 1)[0] if head.endswith("]") else head
    return head if _is_name(head) else None


def _pattern(name: str):
    if name not in _re:
        import re
        _re["param"] = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*):?=")
        _re["arith"] = re.compile(
            r"(?:\+\+|--)\s*([A-Za-z_][A-Za-z0-9_]*)|([A-Za-z_][A-Za-z0-9_]*)(?:\[[^\]]*\])?\s*"
            r"(?:\+\+|--|(?:<<|>>|[-+*/%&^|])?=(?!=))")
        _re["spans"] = re.compile(r"\$?\(\((.*?)\)\)", re.S)
    return _re[name]


DECLARERS = ("export", "declare", "typeset", "local", "readonly")
SHELLS = ("bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "busybox")
_READ_OPTS_WITH_VALUE = set("dinNptu")   # read -a NAME handled apart
_MAPFILE_OPTS_WITH_VALUE = set("dnOsuCc")


def _unquote(raw: str) -> str:
    """Quote removal (the reader's, bash_words.expand): an expansion it cannot resolve keeps its
    source text, so a name built from one reads as dynamic."""
    from swarmgate.hooks.bash_words import expand
    return expand(raw, {})[0]


def _is_dynamic(raw: str) -> bool:
    return "$" in raw.replace("\\$", "") or "`" in raw


def _name_of(raw: str) -> str:
    """The variable a word names (NAME or NAME=VALUE), DYNAMIC when it is not written out."""
    word = _unquote(raw)
    head = word.split("=", 1)[0].split("[", 1)[0]
    if _is_dynamic(raw.split("=", 1)[0]) or not _is_name(head):
        return DYNAMIC
    return head


def changes(text: str, deadline: float | None = None, depth: int = 0) -> list[tuple[str, str]]:
    """[(variable name, how)] for every variable ``text`` changes; how names the form."""
    from swarmgate.hooks import bash_lexical as lx

    out: list[tuple[str, str]] = []
    if depth > 8 or not text:
        return out
    try:
        seq, _unsure = lx.parse(text, deadline)
    except lx.ParseTimeout:
        return [(DYNAMIC, "a text that could not be read in time")]
    if "((" in text:
        for m in _pattern("spans").finditer(text):  # (( )) and $(( )) wherever they are
            for a, b in _pattern("arith").findall(m.group(1)):
                out.append((a or b, "arithmetic assignment"))
    if "${" in text:
        for m in _pattern("param").finditer(text):
            out.append((m.group(1), "${NAME:=value}"))
    _walk(seq, out, deadline, depth)
    return out


def _walk(node, out: list, deadline, depth: int) -> None:
    from swarmgate.hooks import bash_lexical as lx

    if node is None:
        return
    if isinstance(node, lx.Seq):
        for item, _term in node.items:
            _walk(item, out, deadline, depth)
    elif isinstance(node, lx.Pipe):
        for c in node.cmds:
            _walk(c, out, deadline, depth)
    elif isinstance(node, lx.Group):
        _walk(node.body, out, deadline, depth)
    elif isinstance(node, lx.If):
        for part in node.parts:
            _walk(part, out, deadline, depth)
    elif isinstance(node, lx.Loop):
        if node.var:
            out.append((node.var if _is_name(node.var) else DYNAMIC, f"{node.kind} loop variable"))
        _walk(node.cond, out, deadline, depth)
        for w in node.words or ():
            _subs(w, out, deadline, depth)
        _walk(node.body, out, deadline, depth)
    elif isinstance(node, lx.Case):
        if node.word is not None:
            _subs(node.word, out, deadline, depth)
        for body in node.bodies:
            _walk(body[-1] if isinstance(body, (tuple, list)) else body, out, deadline, depth)
    elif isinstance(node, lx.Func):
        _walk(node.body, out, deadline, depth)
    elif isinstance(node, lx.Test):
        for w in node.words:
            _subs(w, out, deadline, depth)
    elif isinstance(node, lx.Cmd):
        _cmd(node, out, deadline, depth)
    elif isinstance(node, (list, tuple)):
        for x in node:
            _walk(x, out, deadline, depth)


def _subs(word, out: list, deadline, depth: int) -> None:
    for _kind, sub in getattr(word, "subs", ()) or ():
        _walk(sub, out, deadline, depth)


def _cmd(c, out: list, deadline, depth: int) -> None:
    for a in c.assigns:  # "prefix": for that command only; "assignment": a statement of its own
        out.append((_assigned_name(_unquote(a.raw)) or DYNAMIC, "prefix" if c.words else "assignment"))
        _subs(a, out, deadline, depth)
    for w in c.words:
        _subs(w, out, deadline, depth)
    for r in c.redirs:
        if r.target is not None:
            _subs(r.target, out, deadline, depth)
    if c.words:
        _builtin([w.raw for w in c.words], out, deadline, depth)


def command_changes(words: list, assignments: dict, deadline: float | None = None) -> list[tuple[str, str]]:
    """The same for one command the bash reader analysed (its words are already quote-removed):
    what its prefix assignments and, for a builtin that sets variables, its arguments change.
    This covers commands the reader found in scripts, Makefiles and package.json scripts."""
    out = [(k if _is_name(k) else DYNAMIC, "prefix" if words else "assignment") for k in assignments]
    if words:
        _builtin([_requote(w) for w in words], out, deadline, 0)
    return out


def _requote(word: str) -> str:
    """A quote-removed word as a raw word that reads back the same (for _builtin)."""
    if not word or any(c in word for c in "'\"\\ \t\n;&|()<>*?[]{}#~"):
        return "'" + word.replace("'", "'\\''") + "'" if "$" not in word and "`" not in word else word
    return word


def _builtin(raws: list, out: list, deadline, depth: int) -> None:
    name = _unquote(raws[0]).rsplit("/", 1)[-1]
    args = raws[1:]
    while name in ("builtin", "command", "exec", "nohup", "time", "nice") and args:
        name, args = _unquote(args[0]).rsplit("/", 1)[-1], args[1:]
    if name in DECLARERS:
        nameref = False
        for a in args:
            u = _unquote(a)
            if u.startswith(("-", "+")) and not _is_dynamic(a):
                nameref = nameref or ("n" in u[1:] and u.startswith("-"))
                continue
            out.append((_name_of(a), name))
            if nameref and "=" in u:
                out.append((_name_of(u.split("=", 1)[1]), f"{name} -n"))
    elif name == "unset":
        for a in args:
            if not _unquote(a).startswith("-"):
                out.append((_name_of(a), "unset"))
    elif name == "let":
        for a in args:
            for x, y in _pattern("arith").findall(_unquote(a)):
                out.append((x or y, "let"))
    elif name == "env":
        _env(args, out)
    elif name == "printf":
        for i, a in enumerate(args):
            u = _unquote(a)
            if u == "-v" and i + 1 < len(args):
                out.append((_name_of(args[i + 1]), "printf -v"))
            elif u.startswith("-v") and len(u) > 2:
                out.append((_name_of(u[2:]), "printf -v"))
            elif not u.startswith("-"):
                break
    elif name == "read":
        _read_like(args, out, "read", _READ_OPTS_WITH_VALUE, array_opt="a")
    elif name in ("mapfile", "readarray"):
        names = _read_like(args, out, name, _MAPFILE_OPTS_WITH_VALUE, array_opt=None, last_only=True)
        if not names:
            out.append(("MAPFILE", name))
    elif name == "getopts" and len(args) >= 2:
        out.append((_name_of(args[1]), "getopts"))
    elif name == "eval":
        out.extend(changes(" ".join(_unquote(a) for a in args), deadline, depth + 1))
    elif name in SHELLS:
        for i, a in enumerate(args):
            u = _unquote(a)
            if u.startswith("-") and "c" in u[1:] and not u.startswith("--") and i + 1 < len(args):
                out.extend(changes(_unquote(args[i + 1]), deadline, depth + 1))
                break


# programs that start no other program and read no SWARMGATE_* variable: `env -i ls` clears the
# environment of ls alone, which changes nothing swarmgate decides with (G01's narrowest rule)
ENV_LEAF_PROGRAMS = frozenset((
    "ls", "cat", "printenv", "echo", "printf", "id", "date", "pwd", "uname", "locale", "whoami", "true", "false",
    "stat", "wc", "head", "tail", "grep", "sort", "uniq", "cut", "tr", "df", "du", "file", "sleep", "test",
    "basename", "dirname", "realpath", "readlink", "md5sum", "sha256sum", "hostname", "nproc", "tty", "groups",
    "lsblk", "free", "uptime", "seq", "yes", "od", "hexdump", "base64", "jq", "diff", "cmp", "tee", "touch"))


def _env_program(args: list) -> str | None:
    """The program ``env ARGS`` runs (as written), or None when it runs none (prints)."""
    i = 0
    while i < len(args):
        u = _unquote(args[i])
        if u in ("-u", "--unset", "-C", "--chdir", "-S", "--split-string") and i + 1 < len(args):
            i += 2
            continue
        if u == "--":
            i += 1
            break
        if not u.startswith("-") and "=" not in u:
            break
        i += 1
    for a in args[i:]:
        u = _unquote(a)
        if "=" in u and not u.startswith("-"):
            continue
        return u   # with its path: `./ls` is not ls
    return None


def _env(args: list, out: list) -> None:
    prog = _env_program(args)
    split = any(_unquote(a) in ("-S", "--split-string") or _unquote(a).startswith(("--split-string=", "-S"))
                for a in args)
    leaf = not split and (prog is None or prog in ENV_LEAF_PROGRAMS)
    i = 0
    while i < len(args):
        u = _unquote(args[i])
        if (u in ("-i", "-", "--ignore-environment") or (u.startswith("-") and not u.startswith("--")
                                                          and "i" in u[1:].split("u", 1)[0])) and not leaf:
            out.append((ALL, "env -i"))
        if u in ("-u", "--unset") and i + 1 < len(args):
            out.append((_name_of(args[i + 1]), "env -u"))
            i += 2
            continue
        if u.startswith("--unset="):
            out.append((_name_of(u.split("=", 1)[1]), "env -u"))
        elif u.startswith("-u") and len(u) > 2:
            out.append((_name_of(u[2:]), "env -u"))
        elif u in ("-C", "--chdir", "-S", "--split-string") and i + 1 < len(args):
            i += 2
            continue
        elif u.startswith("-"):
            pass
        elif "=" in u:
            out.append((_name_of(args[i]), "env NAME=VALUE"))
        else:
            return
        i += 1


def _read_like(args: list, out: list, how: str, with_value: set, array_opt: str | None,
               last_only: bool = False) -> list:
    names = []
    i = 0
    while i < len(args):
        u = _unquote(args[i])
        if u.startswith("-") and len(u) > 1 and u != "--":
            flags = u[1:]
            for k, f in enumerate(flags):
                if f == array_opt:
                    target = flags[k + 1:] or (_unquote(args[i + 1]) if i + 1 < len(args) else "")
                    raw = flags[k + 1:] or (args[i + 1] if i + 1 < len(args) else "")
                    if target:
                        names.append(_name_of(raw))
                    if not flags[k + 1:]:
                        i += 1
                    break
                if f in with_value:
                    if not flags[k + 1:]:
                        i += 1
                    break
            i += 1
            continue
        if u == "--":
            i += 1
            continue
        names.append(_name_of(args[i]))
        i += 1
    if last_only:
        names = names[-1:]
    for n in names:
        out.append((n, how))
    return names
