"""pytest's own entry points guarded inside every Python process of an agent session (issue 24 item 2,
docs/exec-shims.md "Inside Python").

Not imported by swarmgate: SessionStart copies this file's text into the session's shim directory as
``<shims>/python/sitecustomize.py`` (hooks/exec_shims.write_dir), and the PYTHONPATH line it adds to
``$CLAUDE_ENV_FILE`` beside the shims' PATH line puts that directory first on every agent command's
``sys.path``. So every Python the agent starts (any version, any venv, stdlib only here) imports it at
start-up, before its own code, and it:

1. installs an import hook that wraps ``_pytest.config.main`` (and ``_main``, the core every entry
   point calls since pytest 9.1) once the module has run. pytest's every entry point ends there:
   ``pytest.main`` (the same function, imported after the wrap), ``console_main`` and
   ``_console_main`` (the `pytest` script, ``python -m pytest``, runpy of pytest), ``getattr``-built
   calls, whatever Python tool wraps them;
2. judges a call before it runs: the effective arguments (``args`` or ``sys.argv[1:]``) go to the
   exec-time check as ``pytest ARGS`` in this process's directory and environment, which adds what
   pytest adds itself (``@FILE``, ``PYTEST_ADDOPTS``, the ini files' ``addopts``/``testpaths``) and
   looks for the authorization of a capped run (this process's cgroup). A refused call writes the
   check's one line, and the process exits 249 before pytest collects anything;
3. chains to the project's own sitecustomize (the next one on sys.path), which runs as it would
   have.

A call the shim already judged with the same arguments (the `pytest` script, ``python -m pytest``
started through the shims: ``SWARMGATE_EXEC_JUDGED`` names this pid and the arguments' digest) is not
judged twice. Nothing here may break an agent's Python: every failure of the hook itself leaves
pytest as it was, but for a check that ran and refused. The judge is swarmgate's own Python, run as
``python -I -S <shims>/.swarmgate-exec-boot.py <shims> pytest - ARGS`` (``-``: judge only).
"""
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
_SHIMS = os.path.dirname(_HERE)
JUDGED_ENV = "SWARMGATE_EXEC_JUDGED"
REFUSED = 249


def digest(args):
    """The digest the shim and this hook compare: sha256 of the arguments, NUL-separated."""
    import hashlib

    return hashlib.sha256("\0".join(args).encode("utf-8", "surrogateescape")).hexdigest()[:32]


def _judged_already(args):
    mark = os.environ.get(JUDGED_ENV, "")
    pid, _, dig = mark.partition(":")
    return pid == str(os.getpid()) and dig == digest(args)


def _judge(args):
    """0 when the call may run, else the check's exit code (it wrote its own line)."""
    import json
    import subprocess

    boot = os.path.join(_SHIMS, ".swarmgate-exec-boot.py")
    try:
        with open(os.path.join(_SHIMS, "shim.json"), encoding="utf-8") as f:
            python = json.load(f).get("python")
    except (OSError, ValueError):
        return 0 if not os.path.isdir(_SHIMS) else _fail("its shim directory has no readable shim.json")
    if not python or not os.path.exists(boot):
        return _fail("its shim directory has no boot script or no Python")
    try:
        return subprocess.call([python, "-I", "-S", boot, _SHIMS, "pytest", "-", *args])
    except OSError as e:
        return _fail(f"swarmgate's Python {python} did not start ({e})")


def _fail(why):
    sys.stderr.write(f"swarmgate: the in-process check of pytest cannot run ({why}), so this pytest call was "
                     f"not run (fail closed); start a new session (SessionStart rewrites the shims).\n")
    return REFUSED


def _args_of(args):
    if args is None:
        return [str(a) for a in sys.argv[1:]]
    if isinstance(args, (str, bytes)) or hasattr(args, "__fspath__"):
        return [os.fsdecode(os.fspath(args))]
    return [os.fsdecode(a) if isinstance(a, bytes) else str(a) for a in args]


ENTRY_POINTS = ("main", "_main")   # pytest.main; the core every entry point calls since pytest 9.1
_depth = [0]


def _wrap(module):
    for name in ENTRY_POINTS:
        real = getattr(module, name, None)
        if callable(real) and not getattr(real, "_swarmgate_guard", False):
            setattr(module, name, _guarded(real))


def _guarded(real):
    """``real`` judged first (once: pytest.main calls _main, which judges nothing again)."""
    def entry(*a, **kw):
        if _depth[0] == 0:
            words = _args_of(kw["args"] if "args" in kw else (a[0] if a else None))
            if not _judged_already(words):
                rc = _judge(words)
                if rc:
                    raise SystemExit(rc)
        _depth[0] += 1
        try:
            return real(*a, **kw)
        finally:
            _depth[0] -= 1

    for attr in ("__name__", "__qualname__", "__doc__", "__module__"):
        try:
            setattr(entry, attr, getattr(real, attr))
        except (AttributeError, TypeError):
            pass
    entry.__wrapped__ = real
    entry._swarmgate_guard = True
    return entry


class _Finder:
    """Finds nothing itself: for ``_pytest.config`` it asks the other finders and wraps the loader's
    exec_module so the module's ``main`` is wrapped the moment it exists."""

    def find_spec(self, name, path=None, target=None):
        if name != "_pytest.config":
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            try:
                spec = finder.find_spec(name, path, target)
            except Exception:  # noqa: BLE001 - another finder's failure is its own
                continue
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        inner = getattr(loader, "exec_module", None)
        if inner is None:
            return spec

        def exec_module(module):
            inner(module)
            try:
                _wrap(module)
            except Exception:  # noqa: BLE001, S110 - never break the agent's pytest
                pass
        try:
            loader.exec_module = exec_module
        except (AttributeError, TypeError):
            pass
        return spec


def _chain():
    """Run the next sitecustomize on sys.path (the project's or the venv's own), as site would."""
    import importlib.machinery
    import importlib.util

    mine = sys.modules.get("sitecustomize")
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # noqa: BLE001 - as site reports a failing sitecustomize
        sys.modules["sitecustomize"] = mine
        sys.stderr.write(f"Error in sitecustomize; set PYTHONVERBOSE for traceback:\n{type(e).__name__}: {e}\n")


def install():
    if not any(getattr(f, "_swarmgate", False) for f in sys.meta_path):
        finder = _Finder()
        finder._swarmgate = True
        sys.meta_path.insert(0, finder)
    mod = sys.modules.get("_pytest.config")
    if mod is not None:
        _wrap(mod)


if __name__ == "sitecustomize":
    try:
        install()
    except Exception:  # noqa: BLE001, S110 - never break the agent's Python
        pass
    _chain()
