"""What an interpreter one-liner may write or set, read from its code (for G01).

``python3 -c "open('.claude/settings.json','w')"``, ``perl -e 'open(F, ">.claude/settings.json")'``,
``node -e "require('fs').writeFileSync(...)"`` write a file no shell redirection shows. This module
reads the string literals of the code (hooks/code_literals.string_literals) and reports

- ``path_literals``: the literals that name a path, joined the way code builds paths
  (`os.path.join('.claude', 'settings.json')`, `'.claude/' + 'settings.json'`), with a perl
  open mode (`>`, `>>`, `+<`) stripped;
- ``writes``: whether the code uses anything that writes, moves or removes a file (a write mode,
  write/rename/replace/unlink/copy/move/chmod/symlink ..., fs.writeFileSync and friends, perl's
  `>` opens and sysopen);
- ``env_writes``: the SWARMGATE_* names the code assigns into its environment
  (`os.environ[...] =`, `os.environ.update`, `os.putenv`, `setdefault`, `$ENV{...} =`,
  `process.env.X =`, `process.env["X"] =`, `ENV["X"] =`) or into an environment it builds for a
  child (`env={'SWARMGATE_X': ...}`, `dict(SWARMGATE_X=...)`, `{SWARMGATE_X: ...}` in JS).

Parsing only; G01 decides. A heuristic reading of code: it errs towards "writes" when the
code mentions a protected path and anything that can write.
"""
from __future__ import annotations

_WRITE_MARKERS = (
    "'w", '"w', "'a", '"a', "'x", '"x', "r+", "w+", "a+", "'wb", '"wb', "write", "rename", "replace(",
    "unlink", "remove", "rmdir", "rmtree", "move", "copy", "truncate", "chmod", "chown", "symlink", "link(",
    "mkfifo", "mknod", "writeFile", "appendFile", "createWriteStream", "sysopen", "O_WRONLY", "O_RDWR",
    "O_CREAT", "O_TRUNC", "utime", "touch", ".dump(", "tofile", "savetxt", "system(", "exec", "spawn",
    "popen", "subprocess", "os.system", "qx", "`", "rmSync", "cpSync", ".rm(", "fs.rm", "copytree", "File.delete",
    "FileUtils", "rename_all", "write_text", "write_bytes", "hardlink_to", "symlink_to", "File.open", "IO.write",
)
_READ_ONLY_NOISE = ("sys.stdout.write", "sys.stderr.write", "process.stdout.write", "process.stderr.write")
_PERL_MODES = ("+<", "+>", ">>", ">", "<")


def path_literals(code: str) -> list[tuple[str, int]]:
    """(path, where) for each literal in ``code`` that may name a path, and for the paths
    consecutive literals spell when joined; ``where`` is the offset of the (first) literal."""
    from swarmgate.hooks.code_literals import string_literals

    lits = [lit for lit, _ in string_literals(code)]
    out = []
    pos = 0
    starts = []
    for lit in lits:
        at = code.find(lit, pos)
        starts.append(max(at, 0))
        pos = at + len(lit) if at >= 0 else pos
    for i, lit in enumerate(lits):
        s = lit.strip()
        for m in _PERL_MODES:
            if s.startswith(m):
                s = s[len(m):].strip()
                break
        if s:
            out.append((s, starts[i]))
        for k in (2, 3):  # os.path.join('.claude', 'settings.json'), '.claude/' + 'settings.json'
            if i + k <= len(lits):
                parts = [p.strip().strip("/") for p in lits[i:i + k]]
                if all(parts):
                    out.append(("/".join(parts), starts[i]))
    return out


# how code names the home directory: a relative literal next to one of these may be under $HOME
_HOME_ACCESSORS = ("expanduser", "Path.home", "environ['HOME']", 'environ["HOME"]', "getenv('HOME')",
                   'getenv("HOME")', "homedir", "Dir.home", "ENV['HOME']", 'ENV["HOME"]', "$ENV{HOME}",
                   "$ENV{'HOME'}", "env.HOME", "HOME")


def path_names(code: str, literal: str, cwd: str) -> list[str]:
    """The absolute paths a path literal of ``code`` may stand for (hooks/write_paths.py places
    them): as written against ``cwd`` (``~`` and ``$HOME`` expanded), its tail after a
    placeholder (``f"{base}/.claude/x"``), and under the home directory when the code reaches for
    it (``expanduser``, ``Path.home()``, ``os.environ['HOME']``, ``os.homedir()``, ...) or the
    working directory (``os.getcwd() + '/.claude/x'``)."""
    import posixpath

    from swarmgate.hooks.write_paths import absolute, expand_known, home

    forms = [literal]
    if "}" in literal:
        forms.append(literal.rsplit("}", 1)[1])
    out: list[str] = []
    homeish = any(h in code for h in _HOME_ACCESSORS)
    for f in forms:
        f = expand_known(f.strip(), cwd)
        if not f or "$" in f or "{" in f:
            continue
        tails = [f]
        if f.startswith("/") and f != "/":
            tails.append(f.lstrip("/"))   # os.getcwd() + '/.claude/x', base + '/x'
        for t in tails:
            full = absolute(t, cwd)
            if full and full not in out:
                out.append(full)
            if homeish and not t.startswith("/"):
                h = posixpath.normpath(posixpath.join(home(), t))
                if h not in out:
                    out.append(h)
    return out


def unplaceable_protected(code: str, literal: str, where: int) -> bool:
    """A protected file name the code writes somewhere it does not spell out: a bare name joined to a
    computed directory (``os.path.join(d, 'settings.json')``, ``d + '/settings.json'``, ``d /
    'settings.json'``) or after a placeholder (``f"{d}/settings.json"``)."""
    from swarmgate.hooks.protected_paths import PROTECTED_FILE_NAMES

    s = literal.strip()
    if s.rsplit("/", 1)[-1] not in PROTECTED_FILE_NAMES:
        return False
    if "{" in s or s.startswith(("$", "~")):
        return True
    before = code[max(0, where - 40):where]
    return ("/" not in s.strip("/") or s.startswith("/")) and any(
        j in before for j in ("join(", "+", " / ", "/ ", "resolve("))


_WRITE_CALLS = ("writeFileSync(", "appendFileSync(", "writeFile(", "appendFile(", "createWriteStream(", "File.write(",
                "IO.write(", "File.open(", "unlinkSync(", "rmSync(", "rmdirSync(", "remove(", "unlink(", "rmtree(",
                "truncate(", "mkfifo(", "copyFileSync(", "renameSync(", "symlinkSync(", "cpSync(")
_TWO_PATH_CALLS = ("copy(", "copy2(", "copyfile(", "copytree(", "move(", "rename(", "replace(", "symlink(", "link(",
                   "copyFileSync(", "renameSync(", "symlinkSync(", "cpSync(", "cp(", "mv(")
_AFTER = (").write_text(", ").write_bytes(", ").touch(", ").unlink(", ").rmdir(", ").symlink_to(",
          ").hardlink_to(", ").rename(", ").replace(", ").open('w", ').open("w', ").open('a", ').open("a')
_PERL_WRITE_MODES = tuple(q + m + q + "," for q in "'\"" for m in (">", ">>", "+<", "+>"))
_MODES = ("w", "a", "x", "wb", "ab", "xb", "w+", "a+", "r+", "wt", "at", "rb+", "r+b", "w+b")


def writes_literal(code: str, where: int, literal: str) -> bool:
    """Whether the literal at ``where`` is the target of a write: the path of an ``open`` with a
    write mode, of a writing call (``writeFileSync``, ``File.write``, ``os.remove`` ...), the
    destination of a copy/move/rename/link, of a ``Path(...)`` written, or of a perl ``>`` open.
    Narrower than ``writes_near`` (W01 judges where the code writes, not every path it names)."""
    end = code.find(literal, where)
    end = end + len(literal) + 1 if end >= 0 else where + len(literal) + 2
    after = code[end:end + 16].replace(" ", "")
    if after.startswith(","):
        mode = after[1:].lstrip("fbuFBU")[:5]
        if mode[:1] in "'\"" and mode[1:].split(mode[:1], 1)[0] in _MODES:
            return True
    if any(after.startswith(a) for a in _AFTER):
        return True
    before = code[max(0, where - 61):max(0, where - 1)].replace(" ", "").rstrip("fbuFBUr")   # up to its quote
    if before.endswith(_WRITE_CALLS) or before.endswith(_PERL_WRITE_MODES):
        return True
    call = max((before.rfind(c) for c in _TWO_PATH_CALLS), default=-1)
    if call >= 0 and "," in before[call:] and before.endswith(","):
        return True
    return literal.lstrip().startswith((">", "+<", "+>"))


def writes_near(code: str, where: int, window: int = 120) -> bool:
    """Whether the code around offset ``where`` writes, moves or removes a file (a write mode, a
    writing call, a perl `>` open)."""
    text = code[max(0, where - window):where + window]
    for noise in _READ_ONLY_NOISE:
        text = text.replace(noise, "")
    if any(m in text for m in _WRITE_MARKERS):
        return True
    from swarmgate.hooks.code_literals import string_literals
    return any(lit.lstrip().startswith((">", "+<", "+>")) for lit, _ in string_literals(text))


def env_writes(code: str) -> list[str]:
    """SWARMGATE_* names the code sets or removes in its environment."""
    if "SWARMGATE_" not in code:
        return []
    import re

    compact = "".join(code.split())
    names = list(dict.fromkeys(re.findall(r"SWARMGATE_[A-Za-z0-9_]*", compact)))
    if any(u in compact for u in ("environ.update(", "env.update(", "Object.assign(process.env", "ENV.update(",
                                  "environ|=", "ENV.merge!", "%ENV=(")):
        return names
    out = []
    for name in names:
        n = re.escape(name)
        access = (rf"(?:environ\[['\"]{n}['\"]\]|ENV\{{['\"]?{n}['\"]?\}}|env\.{n}(?![A-Za-z0-9_])"
                  rf"|env\[['\"]{n}['\"]\]|ENV\[['\"]{n}['\"]\])")
        if (re.search(access + r"(?:\|\||\?\?|\+|-|\.)?=(?!=)", compact)
                # an environment built for a child: {'SWARMGATE_X': ...}, dict(SWARMGATE_X=...), {SWARMGATE_X: ...}
                or re.search(r"['\"]" + n + r"['\"](?::|=>)", compact)
                or re.search(r"(?<!\$\{)(?<![A-Za-z0-9_.$\['\"])" + n + r"(?::(?![-=?+])|=(?!=))", compact)
                or re.search(r"(?:putenv|unsetenv|setdefault|pop|delete|Delete)\(['\"]" + n + "['\"]", compact)
                or re.search(r"(?:del|delete|unset)[A-Za-z_.$]*?" + access, compact)):
            out.append(name)
    return out
