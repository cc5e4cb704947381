"""The exec-time shim directory (issue 10, docs/exec-shims.md): one small POSIX sh script per
program that can start a heavy run, first on every agent command's PATH.

SessionStart writes the directory (``<state>/sessions/<id>/shims``) and appends
``export PATH=<dir>:$PATH`` to the file named in ``$CLAUDE_ENV_FILE``; Claude Code 2.1.332 runs
that file ahead of every Bash command of the session, the main agent's and subagents' alike
(FACTS.md). So `cargo`, `make`, `npm`, `pytest`, `python3 -m pytest` ... reach a shim however
they were started: typed, from a script, from `subprocess.run(["cargo", ...])`, from a Makefile.

A shim
1. finds the real program: the next one on PATH, skipping every directory that holds a
   ``.swarmgate-shims`` marker (a shim directory listed twice, through a symlink or a relative
   entry) and the file it is itself (a copied or linked shim); a hop counter in the
   environment stops two copies of shims from calling each other forever;
2. asks a prefilter generated here from the config whether the argv could match a heavy
   pattern at all (an argument equal to a pattern word, a cargo subcommand that may be an
   alias, `python -m <pattern program>`, a config changed since the shims were written);
   when it cannot, it execs the real program at once (the fast path: dash, builtins only);
3. else execs ``python -I -m swarmgate.hooks.exec_check``, which matches the argv with B01's
   matcher after the program's own aliases, and runs the real program or refuses (exit 249).

Planning (``plan``) is pure; ``write_dir`` and ``add_to_env_file`` are the I/O.
"""
from __future__ import annotations

import os

MARKER = ".swarmgate-shims"
META = "shim.json"
BOOT = ".swarmgate-exec-boot.py"
PACKAGES = ("swarmgate", "swarmgate.hooks", "swarmgate.gate", "swarmgate.hosts", "swarmgate.agents")
SHIM_TAG = "# swarmgate-exec-shim"
VERSION = 1
MAX_HOPS = 8

# Programs that reach heavy programs: shimmed whatever the patterns say (issue 10).
RUNNERS = ("npm", "npx", "yarn", "pnpm", "bun", "bunx", "just", "task", "tox", "nox", "make", "gmake",
           "cargo", "pytest", "py.test")
PYTHONS = ("python", "python3") + tuple(f"python3.{n}" for n in range(6, 15))
# Runners that read files holding commands (recipes, scripts, ini files): what a call runs depends on
# those files, so every call goes to the slow path, where the reader reads them.
READS_FILES = ("make", "gmake", "just", "task", "tox", "nox", "ninja", "pre-commit", "pytest", "py.test")
NPMS = ("npm", "npx", "yarn", "pnpm", "bun", "bunx")
# npm-family subcommands that run no package script: the fast path
NPM_QUIET = ("-v", "--version", "-h", "--help", "help", "ls", "list", "ll", "la", "view", "v", "info", "show",
             "config", "c", "get", "set", "root", "prefix", "bin", "outdated", "audit", "cache", "whoami", "ping",
             "search", "s", "find", "docs", "home", "repo", "bugs", "explain", "why", "fund", "doctor", "owner",
             "token", "profile", "login", "logout", "adduser", "query", "sbom")
# Programs that run another program they find themselves (by absolute path, a venv, a toolchain):
# a heavy program they start may never pass through PATH, so their argv is searched for one.
LAUNCHERS = ("rustup", "uv", "uvx", "poetry", "pipenv", "pdm", "hatch", "rye", "pipx", "conda", "mamba",
             "micromamba", "nix-shell")
_GLOB = frozenset("*?[")


class Shim:
    """What one shim does before its fast path: ``kind`` (words | always | python | cargo |
    launcher) and the sh case patterns of arguments that send it to the slow path."""
    __slots__ = ("name", "kind", "triggers", "modules")

    def __init__(self, name: str, kind: str, triggers=(), modules=()) -> None:
        self.name = name
        self.kind = kind
        self.triggers = tuple(sorted(set(triggers)))
        self.modules = tuple(sorted(set(modules)))

    def as_dict(self) -> dict:
        return {"kind": self.kind, "triggers": list(self.triggers), "modules": list(self.modules)}

    def __repr__(self) -> str:
        return f"Shim({self.name!r}, {self.kind!r}, {self.triggers!r}, {self.modules!r})"


def _valid_program(name: str) -> bool:
    return bool(name) and "/" not in name and not name.startswith((".", "-")) and \
        all(c.isalnum() or c in "._+-" for c in name)


def _trigger(word: str) -> str:
    """An sh case pattern that matches every argument the pattern word can match (a superset:
    the slow path decides). Path-like words may be written many ways (./x, /abs/x): their last
    component is enough to go to the slow path."""
    if "/" in word:
        head, _, last = word.rstrip("/").rpartition("/")
        if not last or _GLOB.intersection(last) and not last.strip("*?"):
            last = head.rpartition("/")[2] + "/" + last if head else last
        return "*" + _sh_glob(last) + "*"
    return _sh_glob(word)


def _sh_glob(word: str) -> str:
    """``word`` as an sh case pattern: glob characters kept, everything else quoted."""
    out = []
    for c in word:
        if c in "*?":
            out.append(c)
        elif c.isalnum() or c in "._-+=:,@%^/":
            out.append(c)
        elif c in "[]":
            out.append(c)
        else:
            out.append("\\" + c)
    return "".join(out)


def _path_programs(glob: str, path: str) -> set:
    """Names on PATH that a glob first word (`qemu-system-*`) matches."""
    from fnmatch import fnmatchcase

    found = set()
    for d in path.split(os.pathsep):
        try:
            for n in os.listdir(d or "."):
                if fnmatchcase(n, glob) and _valid_program(n):
                    found.add(n)
        except OSError:
            continue
    return found


def plan(config, path: str | None = None, patterns: list[str] | None = None) -> dict:
    """{program name: Shim} for ``config`` (pure but for listing PATH for glob program names).
    ``patterns``: the workloads to cover (hooks/heavy_equivalents.workload_patterns: the heavy
    patterns, their equivalents and the heavy script bodies); the heavy patterns alone by default."""
    from swarmgate.hooks.command_patterns import basename, split_words

    path = os.environ.get("PATH", "") if path is None else path
    words: dict = {}        # program -> set of pattern words
    always: set = set()     # programs with a bare pattern (every call can be heavy)
    names: set = set()
    for text in (config["heavy"]["patterns"] if patterns is None else patterns):
        try:
            w = split_words(text)
        except ValueError:
            continue
        if not w:
            continue
        first = basename(w[0])
        progs = _path_programs(first, path) if _GLOB.intersection(first) else {first}
        for prog in progs:
            if not _valid_program(prog):
                continue
            names.add(prog)
            if len(w) == 1:
                always.add(prog)
            words.setdefault(prog, set()).update(w[1:])
    if config["bash"]["make_targets"]:
        for prog in ("make", "gmake"):
            words.setdefault(prog, set()).update(config["bash"]["make_targets"])
            names.add(prog)
    from swarmgate.hooks import package_scripts
    from swarmgate.hooks.cargo_config import BUILTIN as CARGO_SHORT

    shims: dict = {}
    for prog in sorted(set(RUNNERS) | names | set(LAUNCHERS) | set(PYTHONS)):
        ws = set(words.get(prog, ()))
        if prog in ("cargo",):
            ws |= {k for k, v in CARGO_SHORT.items() if v[0] in ws}
        if prog in ("npm", "pnpm", "yarn", "bun"):
            # npm's own spellings of run and test (the reader's table)
            for group in (package_scripts._NPM_RUN, package_scripts._NPM_TEST):
                if ws & group:
                    ws |= group
        triggers = {_trigger(x) for x in ws}
        if prog in always or prog in READS_FILES:
            shims[prog] = Shim(prog, "always")
        elif prog in NPMS:
            shims[prog] = Shim(prog, "npm", triggers)
        elif prog in PYTHONS:
            modules = {n for n in names if n.replace("_", "a").replace(".", "a").isalnum()}
            shims[prog] = Shim(prog, "python", modules=modules)
        elif prog == "cargo":
            shims[prog] = Shim(prog, "cargo", triggers)
        elif prog in LAUNCHERS:
            shims[prog] = Shim(prog, "launcher", triggers | {_sh_glob(n) for n in names} |
                               {"*/" + _sh_glob(n) for n in names})
        else:
            shims[prog] = Shim(prog, "words", triggers)
    return shims


def _case(patterns, action: str) -> str:
    if not patterns:
        return ""
    return f"    case $_sg_a in\n      {'|'.join(patterns)}) {action};;\n    esac\n"


def script(shim: Shim, shim_dir: str, python: str, config_path: str) -> str:
    """The sh text of one shim."""
    from shlex import quote

    q_dir, q_py, q_conf = quote(shim_dir), quote(python), quote(config_path)
    stamp = quote(os.path.join(shim_dir, MARKER))
    lines = [
        "#!/bin/sh",
        f"{SHIM_TAG} {shim.name}",
        "# Written by swarmgate at SessionStart (docs/exec-shims.md); rewritten, do not edit.",
        f"_sg_n={quote(shim.name)}; _sg_dir={q_dir}; _sg_py={q_py}",
        # 1. the real program: the next on PATH that is neither in a shim directory, nor this file,
        #    nor a file an earlier shim of this same process already passed (a copied shim)
        "_sg_k=1; _sg_seen=",
        "case ${SWARMGATE_SHIM_HOPS:-} in",
        "  \"$$:\"[0-9]\"|\"*|\"$$:\"[0-9][0-9]\"|\"*)",
        "    _sg_seen=${SWARMGATE_SHIM_HOPS#*|}; _sg_k=${SWARMGATE_SHIM_HOPS#*:}; _sg_k=$(( ${_sg_k%%|*} + 1 ));;",
        "esac",
        f"if [ \"$_sg_k\" -gt {MAX_HOPS} ]; then",
        "  echo \"swarmgate shim: $_sg_n: shims keep calling each other (copies of a shim on PATH?); not run\" >&2",
        "  exit 127",
        "fi",
        "_sg_r=; _sg_ifs=$IFS; IFS=:; set -f",
        "for _sg_d in $PATH; do",
        "  [ -n \"$_sg_d\" ] || _sg_d=.",
        f"  [ -e \"$_sg_d/{MARKER}\" ] && continue",
        "  [ -f \"$_sg_d/$_sg_n\" ] && [ -x \"$_sg_d/$_sg_n\" ] || continue",
        "  [ \"$_sg_d/$_sg_n\" -ef \"$0\" ] && continue",
        "  case \"|$_sg_seen|\" in *\"|$_sg_d/$_sg_n|\"*) continue;; esac",
        "  _sg_r=$_sg_d/$_sg_n; break",
        "done",
        "IFS=$_sg_ifs",
        "export SWARMGATE_SHIM_HOPS=\"$$:$_sg_k|$_sg_seen|$0|$_sg_r\"",
        "if [ -z \"$_sg_r\" ]; then echo \"$_sg_n: command not found\" >&2; exit 127; fi",
        # 2. the prefilter
        "_sg_slow=",
    ]
    if os.path.exists(config_path):
        lines.append(f"[ {q_conf} -nt {stamp} ] && _sg_slow=1")
    else:
        lines.append(f"[ -e {q_conf} ] && _sg_slow=1")
    if shim.kind == "always":
        lines.append("_sg_slow=1")
    elif shim.kind == "python":
        if shim.modules:
            mods = "|".join(_sh_glob(m) for m in shim.modules)
            lines += [
                "_sg_m=; _sg_skip=",
                "[ -n \"$_sg_slow\" ] || for _sg_a in \"$@\"; do",
                "  if [ -n \"$_sg_skip\" ]; then _sg_skip=; continue; fi",
                f"  if [ -n \"$_sg_m\" ]; then case $_sg_a in {mods}) _sg_slow=1;; esac; break; fi",
                "  case $_sg_a in",
                "    -m) _sg_m=1;;",
                f"    {'|'.join('-m' + _sh_glob(m) for m in shim.modules)}) _sg_slow=1; break;;",
                "    -W|-X|--check-hash-based-pycs) _sg_skip=1;;",
                "    -c|-|-m*) break;;",
                "    -*) ;;",
                "    *) break;;",
                "  esac",
                "done",
            ]
    elif shim.kind == "npm":
        quiet = "|".join(_sh_glob(x) for x in NPM_QUIET)
        lines += [
            "[ -n \"$_sg_slow\" ] || for _sg_a in \"$@\"; do",
            "  case $_sg_a in",
            f"    {quiet}) break;;",
            "    -*) ;;",
            "    *) _sg_slow=1; break;;",
            "  esac",
            "done",
            "[ $# -eq 0 ] && _sg_slow=",
        ]
    elif shim.kind == "cargo":
        from swarmgate.hooks.cargo_config import BUILTIN, SUBCOMMANDS

        builtins = "|".join(sorted(SUBCOMMANDS | set(BUILTIN)))
        lines += [
            "_sg_sub=; _sg_skip=",
            "[ -n \"$_sg_slow\" ] || for _sg_a in \"$@\"; do",
            "  if [ -n \"$_sg_skip\" ]; then _sg_skip=; continue; fi",
            _case(shim.triggers, "_sg_slow=1; break").rstrip("\n"),
            "  if [ -z \"$_sg_sub\" ]; then",
            "    case $_sg_a in",
            "      --config*) _sg_slow=1; break;;",
            "      -Z|--color|-C|--manifest-path|--target-dir|-j|--jobs) _sg_skip=1;;",
            "      +*|-*) ;;",
            f"      {builtins}) _sg_sub=1;;",
            "      *) _sg_slow=1; break;;",
            "    esac",
            "  fi",
            "done",
        ]
    elif shim.triggers:
        lines += [
            "[ -n \"$_sg_slow\" ] || for _sg_a in \"$@\"; do",
            _case(shim.triggers, "_sg_slow=1; break").rstrip("\n"),
            "done",
        ]
    lines += [
        # the in-process check of pytest stays on for what this program starts, whatever the command
        # did to PYTHONPATH (`PYTHONPATH= python3 x.py`)
        f"case \":${{PYTHONPATH:-}}:\" in *\":$_sg_dir/{SITE_DIR}:\"*) ;; "
        f"*) PYTHONPATH=\"$_sg_dir/{SITE_DIR}${{PYTHONPATH:+:$PYTHONPATH}}\"; export PYTHONPATH;; esac",
        "set +f",
        "[ -n \"$_sg_slow\" ] || exec \"$_sg_r\" \"$@\"",
        # 3. the slow path: B01's matcher, the authorization, or a refusal (exit 249)
        "if [ ! -x \"$_sg_py\" ]; then",
        "  echo \"swarmgate shim: $_sg_n: swarmgate's python ($_sg_py) is gone, so this call cannot be \\",
        "checked and does not run (exit 249); reinstall swarmgate or start a new session\" >&2",
        "  exit 249",
        "fi",
        f"exec \"$_sg_py\" -I -S \"$_sg_dir/{BOOT}\" \"$_sg_dir\" \"$_sg_n\" \"$_sg_r\" \"$@\"",
        "",
    ]
    return "\n".join(x for x in lines if x != "")  + "\n"


def boot_script(python: str | None = None) -> str:
    """The slow path's entry, run as ``python -I -S BOOT``: no site (the editable install's finder
    costs ~40 ms at every start here), so it maps swarmgate's packages to their directories itself
    and puts the installation's site-packages on sys.path (no .pth files run)."""
    import importlib.util
    import sys

    roots = {}
    for pkg in PACKAGES:
        spec = importlib.util.find_spec(pkg)
        if spec is not None and spec.submodule_search_locations:
            roots[pkg] = list(spec.submodule_search_locations)[0]
    site = [p for p in sys.path if p.rstrip("/").endswith(("site-packages", "dist-packages"))]
    return f"""# swarmgate exec-time check: the shims' slow path (written at SessionStart; do not edit)
import sys
ROOTS = {roots!r}
sys.path[1:1] = {site!r}


class _Finder:
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        root = ROOTS.get(name)
        if root is None:
            return None
        from importlib.machinery import ModuleSpec, SourceFileLoader
        spec = ModuleSpec(name, SourceFileLoader(name, root + "/__init__.py"), origin=root + "/__init__.py",
                          is_package=True)
        spec.submodule_search_locations = [root]
        spec.has_location = True
        return spec


sys.meta_path.insert(0, _Finder)
from swarmgate.hooks.exec_check import main
sys.exit(main(sys.argv[1:]))
"""


def shim_dir_for(session_id: str) -> str:
    from swarmgate import state_paths

    return os.path.join(str(state_paths.session_dir(session_id or "no-session")), "shims")


def config_path_of(repo: str) -> str:
    return os.path.join(repo, ".claude", "swarmgate.toml")


def write_dir(shim_dir: str, config, *, repo: str, session: str, python: str | None = None,
              path: str | None = None, patterns: list[str] | None = None) -> dict:
    """(Re)write the shim directory for ``config``; returns its meta record. Shims of programs
    the config no longer names are removed. Atomic per file; the marker is written first (a
    half-written directory is already skipped by other shims) and touched last (its mtime is the
    stamp the config is compared with)."""
    import sys
    import time

    from swarmgate.statefile import ensure_dir, write_json_atomic, write_text_atomic

    python = python or sys.executable
    shims = plan(config, path, patterns)
    ensure_dir(shim_dir)
    marker = os.path.join(shim_dir, MARKER)
    write_text_atomic(marker, "swarmgate exec-time shims: PATH walks skip this directory\n", durable=False)
    conf = config_path_of(repo)
    write_text_atomic(os.path.join(shim_dir, BOOT), boot_script(python), mode=0o644, durable=False)
    ensure_dir(os.path.join(shim_dir, SITE_DIR))
    write_text_atomic(os.path.join(shim_dir, SITE_DIR, "sitecustomize.py"), site_text(), mode=0o644, durable=False)
    for name, shim in shims.items():
        write_text_atomic(os.path.join(shim_dir, name), script(shim, shim_dir, python, conf), mode=0o755,
                          durable=False)
    for name in os.listdir(shim_dir):
        p = os.path.join(shim_dir, name)
        if name not in shims and not name.startswith(".") and name != META and _is_shim(p):
            try:
                os.unlink(p)
            except OSError:
                pass
    from swarmgate.state_paths import state_dir_text

    meta = {"version": VERSION, "repo": repo, "session": session, "python": python, "config": conf,
            "state_dir": os.path.abspath(state_dir_text()), "generated": round(time.time(), 3),
            "programs": {n: s.as_dict() for n, s in shims.items()}}
    write_json_atomic(os.path.join(shim_dir, META), meta, durable=False)
    os.utime(marker)
    return meta


SITE_DIR = ".python-site"   # first on the session's PYTHONPATH: hooks/inprocess_pytest.py as sitecustomize


def site_text() -> str:
    """The in-process check of pytest, as the shim directory's sitecustomize.py (its module's source)."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "inprocess_pytest.py"), encoding="utf-8") as f:
        return f.read()


def _is_shim(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            head = f.read(200)
    except OSError:
        return False
    return SHIM_TAG.encode() in head


def read_meta(shim_dir: str) -> dict | None:
    from swarmgate.statefile import read_json

    rec = read_json(os.path.join(shim_dir, META), None, report=lambda _m: None)
    return rec if isinstance(rec, dict) and rec.get("version") == VERSION else None


def env_file_lines(shim_dir: str) -> str:
    """What SessionStart appends to $CLAUDE_ENV_FILE. Claude Code inlines the file's text into the
    command line it runs (`... || true && <text>: && eval '<command>'`), so every line is a plain
    command that cannot fail."""
    from shlex import quote

    site = quote(os.path.join(shim_dir, SITE_DIR))
    return (f"# swarmgate: exec-time shims first on PATH (docs/exec-shims.md)\n"
            f"export PATH={quote(shim_dir)}:\"$PATH\"\n"
            f"# swarmgate: pytest's entry points checked inside Python (docs/exec-shims.md \"Inside Python\")\n"
            f"export PYTHONPATH={site}${{PYTHONPATH:+:$PYTHONPATH}}\n")


ENV_FILE_RECORD = ".swarmgate-env-file"


def record_env_file(shim_dir: str, env_file: str) -> None:
    """Note which env file holds the PATH line (read by hooks/exec_deferral.py)."""
    from swarmgate.statefile import write_text_atomic

    write_text_atomic(os.path.join(shim_dir, ENV_FILE_RECORD), os.path.abspath(env_file) + "\n", durable=False)


def env_file_has_line(shim_dir: str) -> bool:
    """The env file recorded for this shim directory holds its PATH line (the shims are on every
    Bash command's PATH in this session)."""
    from swarmgate.bounded_read import read_text

    try:
        env_file = read_text(os.path.join(shim_dir, ENV_FILE_RECORD), 4096).strip()
        return bool(env_file) and env_file_lines(shim_dir).splitlines()[1] in read_text(env_file, 1 << 20)
    except (OSError, ValueError):
        return False


def add_to_env_file(env_file: str, shim_dir: str) -> bool:
    """Append the PATH line to the env file unless it is there; True when the file has it."""
    text = env_file_lines(shim_dir)
    try:
        try:
            with open(env_file, encoding="utf-8", errors="replace") as f:
                if text.splitlines()[1] in f.read():
                    return True
        except FileNotFoundError:
            pass
        fd = os.open(env_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)
        return True
    except OSError:
        return False
