"""What a pytest run collects: its config file, its effective arguments, and whether its collection
includes a directory (issue 24 item 3, the `pytest collections` entry of `[heavy] equivalents`).

pytest collects from the paths it is given, else from the ini file's ``testpaths`` (relative to the
ini file's directory), else from the directory it runs in. So `pytest`, `pytest tests`, `pytest .`
and `cd tests && pytest integration` all collect `tests/integration` when it is there, and so does
every test file of it named one by one (`pytest tests/integration/test_*.py`). Its arguments are the
command line, each ``@FILE`` argument's lines (pytest reads them since 8.2), ``PYTEST_ADDOPTS`` and the
ini file's ``addopts``. ``--ignore``/``--ignore-glob`` take a directory back out.

Parsing only (reads the ini files and lists test files; runs nothing). Not a guard module.
"""
from __future__ import annotations

import os

INI_FILES = (("pytest.ini", "pytest"), (".pytest.ini", "pytest"), ("pyproject.toml", None), ("tox.ini", "pytest"),
             ("setup.cfg", "tool:pytest"))
# options of pytest and its common plugins whose value is the next word (when not written OPT=VALUE)
VALUE_OPTIONS = frozenset((
    "-k", "-m", "-c", "-p", "-o", "-W", "-r", "-n", "--rootdir", "--basetemp", "--tb", "--maxfail", "--junitxml",
    "--junit-xml", "--durations", "--dist", "--confcutdir", "--import-mode", "--log-level", "--log-file",
    "--log-cli-level", "--cov", "--cov-report", "--cov-config", "--cov-fail-under", "--deselect", "--ignore",
    "--ignore-glob", "--override-ini", "--capture", "--color", "--junit-prefix", "--config-file",
    "--numprocesses", "--maxprocesses", "--timeout", "--reruns", "--randomly-seed", "--lf-mode",
    "--last-failed-no-failures", "--strict-markers-file", "--inifile", "--pyargs-root"))
MAX_TEST_FILES = 5000  # a directory listed for "every file of it named one by one", at most


NORECURSE = ("*.egg", ".*", "_darcs", "build", "CVS", "dist", "node_modules", "venv", "{arch}")  # pytest's default


class Ini:
    """The pytest config pytest would find from a directory: its file's directory, addopts, testpaths,
    norecursedirs (directory names collection does not descend into)."""
    __slots__ = ("dir", "addopts", "testpaths", "norecurse")

    def __init__(self, dir: str | None = None, addopts: list | None = None, testpaths: list | None = None,
                 norecurse: list | None = None) -> None:
        self.dir = dir
        self.addopts = addopts or []
        self.testpaths = testpaths or []
        self.norecurse = list(NORECURSE) if norecurse is None else norecurse


def read_ini(path: str, section: str | None) -> Ini | None:
    """The pytest config in ``path`` (``section`` None: pyproject's [tool.pytest.ini_options]), or None
    when the file holds none or cannot be read."""
    import configparser
    import shlex
    import tomllib

    try:
        with open(path, "rb") as f:
            raw = f.read(256 * 1024)
        if section is None:
            opts = (tomllib.loads(raw.decode("utf-8", "replace")).get("tool") or {}).get("pytest", {})
            opts = opts.get("ini_options") if isinstance(opts, dict) else None
            if not isinstance(opts, dict):
                return None
            add, paths = opts.get("addopts", ""), opts.get("testpaths", [])
            add = add if isinstance(add, list) else shlex.split(str(add))
            paths = paths if isinstance(paths, list) else str(paths).split()
            nr = opts.get("norecursedirs")
            nr = None if nr is None else nr if isinstance(nr, list) else str(nr).split()
        else:
            cp = configparser.ConfigParser(interpolation=None)
            cp.read_string(raw.decode("utf-8", "replace"))
            if not cp.has_section(section):
                return None
            add = shlex.split(cp.get(section, "addopts", fallback=""))
            paths = cp.get(section, "testpaths", fallback="").split()
            nr = cp.get(section, "norecursedirs", fallback=None)
            nr = None if nr is None else nr.split()
    except (OSError, ValueError, configparser.Error):
        return None
    return Ini(os.path.dirname(os.path.abspath(path)), [str(x) for x in add], [str(x) for x in paths],
               None if nr is None else [str(x) for x in nr])


def find_ini(cwd: str) -> Ini:
    """The config pytest finds from ``cwd`` upwards (the first file of INI_FILES holding one)."""
    d = os.path.abspath(cwd or ".")
    while True:
        for name, section in INI_FILES:
            path = os.path.join(d, name)
            if os.path.isfile(path):
                ini = read_ini(path, section)
                if ini is not None:
                    return ini
        parent = os.path.dirname(d)
        if parent == d:
            return Ini()
        d = parent


def given_ini(args: list[str], cwd: str) -> Ini | None:
    """The config named by ``-c FILE`` / ``--config-file FILE`` (pytest then reads no other): that
    file's, or pytest's defaults when it holds none (``-c /dev/null``); None when none is named."""
    for i, w in enumerate(args):
        path = None
        if w in ("-c", "--config-file", "--inifile") and i + 1 < len(args):
            path = args[i + 1]
        elif w.startswith(("--config-file=", "--inifile=")):
            path = w.partition("=")[2]
        elif w.startswith("-c") and len(w) > 2 and not w.startswith("--"):
            path = w[2:]
        if path is not None:
            full = path if path.startswith("/") else os.path.join(cwd or ".", path)
            name = os.path.basename(full)
            section = None if name.endswith(".toml") else "tool:pytest" if name == "setup.cfg" else "pytest"
            return read_ini(full, section) or Ini(os.path.dirname(os.path.abspath(full)))
    return None


def expand_argfiles(args: list[str], cwd: str) -> list[str]:
    """``@FILE`` arguments replaced by the file's lines (one argument per line, as pytest reads them);
    one that cannot be read stays as it is."""
    out: list[str] = []
    for a in args:
        if a.startswith("@") and len(a) > 1:
            path = a[1:] if a[1:].startswith("/") else os.path.join(cwd or ".", a[1:])
            try:
                with open(path, encoding="utf-8", errors="replace") as f:
                    lines = [x.strip() for x in f.read(64 * 1024).splitlines()]
                out += [x for x in lines if x]
                continue
            except OSError:
                pass
        out.append(a)
    return out


def effective_args(args: list[str], cwd: str, env=None, ini: Ini | None = None) -> list[str]:
    """The ini file's addopts, PYTEST_ADDOPTS, then the arguments (``@FILE`` expanded)."""
    import shlex

    try:
        extra = shlex.split((env or {}).get("PYTEST_ADDOPTS", "") or "")
    except ValueError:
        extra = []
    given = [*extra, *expand_argfiles(list(args), cwd)]
    ini = ini or given_ini(given, cwd) or find_ini(cwd)
    return [*ini.addopts, *given]


def ini_of(args: list[str], cwd: str, env=None) -> Ini:
    """The config a run of ``pytest ARGS`` in ``cwd`` reads."""
    import shlex

    try:
        extra = shlex.split((env or {}).get("PYTEST_ADDOPTS", "") or "")
    except ValueError:
        extra = []
    return given_ini([*extra, *expand_argfiles(list(args), cwd)], cwd) or find_ini(cwd)


def pytest_argv(args: list[str], cwd: str, env) -> list[str]:
    """What pytest really collects from, as an argv: its effective arguments, and without a path the
    ini file's testpaths (as written) as the paths."""
    ini = ini_of(args, cwd, env)
    words = effective_args(args, cwd, env, ini)
    if ini.testpaths and not any(not w.startswith("-") for w in words):
        words += ini.testpaths
    return ["pytest", *words]


def split_args(words: list[str], overrides: dict | None = None) -> tuple[list[str], list[str]]:
    """(paths given, paths ignored) of pytest's arguments: node ids cut at ``::``, option values
    skipped, ``--ignore``/``--ignore-glob`` values collected, and ``-o KEY=VALUE`` put in ``overrides``."""
    paths: list[str] = []
    ignored: list[str] = []
    overrides = {} if overrides is None else overrides
    i = 0
    while i < len(words):
        w = words[i]
        i += 1
        if w == "--":
            paths += [x.split("::", 1)[0] for x in words[i:]]
            break
        if w.startswith("-") and w != "-":
            name, eq, value = w.partition("=")
            if name in VALUE_OPTIONS and not eq:
                value = words[i] if i < len(words) else ""
                i += 1
            if name in ("--ignore", "--ignore-glob") and value:
                ignored.append(value)
            elif name in ("-o", "--override-ini") and "=" in value:
                k, _, v = value.partition("=")
                overrides[k.strip()] = v
            elif name.startswith("-o") and len(name) > 2 and not name.startswith("--") and "=" in w[2:]:
                k, _, v = w[2:].partition("=")
                overrides[k.strip()] = v
            continue
        paths.append(w.split("::", 1)[0])
    return paths, ignored


def _abs(path: str, base: str) -> str:
    full = path if path.startswith("/") else os.path.join(base or ".", path)
    full = os.path.normpath(full)
    try:
        return os.path.realpath(full) if os.path.exists(full) else full
    except OSError:
        return full


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _test_files(root: str) -> list[str]:
    out: list[str] = []
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if not x.startswith(".") and x != "__pycache__"]
        for f in files:
            if f.endswith(".py") and (f.startswith("test_") or f.endswith("_test.py")):
                out.append(os.path.join(d, f))
                if len(out) > MAX_TEST_FILES:
                    return out
    return out


def roots(args: list[str], cwd: str, env=None) -> tuple[list[str], list[str], list[str]]:
    """(absolute paths pytest collects from, absolute paths it ignores, the directory names it does not
    descend into) for ``pytest ARGS`` run in ``cwd``."""
    import glob as globmod

    ini = ini_of(args, cwd, env)
    overrides: dict = {}
    eff = effective_args(args, cwd, env, ini)
    paths, ignored = split_args(eff, overrides)
    if "--pyargs" in eff:   # `--pyargs pkg.mod`: a dotted name is the package's directory or module file
        paths = [_pyarg_path(p, cwd) for p in paths]
    testpaths = overrides["testpaths"].split() if "testpaths" in overrides else ini.testpaths
    norecurse = overrides["norecursedirs"].split() if "norecursedirs" in overrides else ini.norecurse
    if paths:
        out = []
        for p in paths:
            if any(c in p for c in "*?["):
                hits = globmod.glob(p if p.startswith("/") else os.path.join(cwd or ".", p))
                out += [_abs(h, cwd) for h in hits] or [_abs(p, cwd)]
            else:
                out.append(_abs(p, cwd))
    elif testpaths:
        out = [_abs(p, ini.dir or cwd) for p in testpaths]
    else:
        out = [_abs(".", cwd)]
    return out, [_abs(x, cwd) for x in ignored], list(norecurse)


def _pyarg_path(arg: str, cwd: str) -> str:
    """The path pytest imports for a dotted ``--pyargs`` name found from ``cwd`` (rootdir and the
    current directory are on sys.path there), or the argument itself."""
    name = arg.split("::", 1)[0]
    if "/" in name or not all(part.isidentifier() for part in name.split(".")):
        return arg
    rel = name.replace(".", "/")
    for cand in (rel, rel + ".py"):
        if os.path.exists(os.path.join(cwd or ".", cand)):
            return cand
    return arg


def _descends(root: str, path: str, norecurse: list) -> bool:
    """Does collection from ``root`` reach ``path`` below it, no directory on the way (``path`` itself
    included) named by norecursedirs?"""
    from fnmatch import fnmatch

    rest = path[len(root.rstrip("/")) + 1:] if path != root else ""
    parts = [x for x in rest.split("/") if x]
    return not any(fnmatch(part, pat) for part in parts for pat in norecurse)


def includes(collected: list[str], ignored: list[str], directory: str, norecurse: list | None = None) -> bool:
    """Does a collection from ``collected`` (minus ``ignored``, not descending into ``norecurse`` names)
    include all of ``directory``: one of its roots is the directory or above it, or the roots inside it
    name every test file it holds?"""
    norecurse = list(NORECURSE) if norecurse is None else norecurse
    d = _abs(directory, "/")
    if not os.path.isdir(d) or any(_under(d, ig) for ig in ignored):   # nothing is collected from no directory
        return False
    if any(_under(d, r) and _descends(r, d, norecurse) for r in collected):
        return True
    inside = [r for r in collected if _under(r, d)]
    if not inside or not os.path.isdir(d):
        return False
    files = _test_files(d)
    if not files or len(files) > MAX_TEST_FILES:
        return False
    return all(any(_under(_abs(f, "/"), r) for r in inside) and not any(_under(f, ig) for ig in ignored)
               for f in files)
