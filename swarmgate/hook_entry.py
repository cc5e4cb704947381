"""The entry of every hook call: `swarmgate/hook_start.py` (what Claude Code runs) and `swarmgate hook
EVENT` (swarmgate.cli) both come here.

`swarmgate install` wires every Claude Code hook as `PYTHON -I -S .../swarmgate/hook_start.py EVENT`:
the interpreter of the install it runs from, in the exec form (`command` is that interpreter, `args`
are `-I`, `-S`, hook_start.py's absolute path and the event). Why not the `swarmgate` console script:

- `-S` skips `site`: no site-packages scan, no `.pth` files (setuptools' distutils shim, an
  editable install's import finder), no sitecustomize. That is the floor of any Python process
  (`python -I -S -c pass`); `site` alone costs a third of it again (bench/hook_latency.py).
- `-I` ignores PYTHON* variables and the user's site directory: nothing in the environment
  Claude Code runs in adds a module to the hook's path.

hook_start.py itself is a few lines (a script is compiled from source at every start; a module
is read from its .pyc), so the work is here: ``start`` puts on ``sys.path`` exactly what the hook
needs, by path, after the standard library: the directory this package lives in (site-packages of
a regular install, or the checkout of a development install) and the site-packages of the virtual
environment whose interpreter runs it (the dependencies). In a checkout, the subpackages live
beside ``swarmgate/`` (pyproject's ``package-dir``: ``swarmgate.hooks`` is ``hooks/``), so the
checkout is added to the package's ``__path__``, as the editable install's finder would map it.

Everything here is inside the protection: a hook that cannot load its engine still answers, and
refuses (fail closed).
"""
from __future__ import annotations

import marshal
import posix
import sys


def _unjudged(event: str, msg: str) -> int:
    """Answer a Claude Code hook call that cannot be judged, fail closed (hook_protocol.unjudged)."""
    print(msg, file=sys.stderr)
    try:
        from swarmgate.hook_protocol import dumps, unjudged
        text = dumps(unjudged(event, msg))
    except BaseException:  # noqa: BLE001 - the protocol module itself is broken: its shape, by hand
        import json
        text = json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                                  "permissionDecisionReason": msg}}
                          if event == "PreToolUse" else {"systemMessage": msg})
    sys.stdout.write(text + "\n")
    return 0


# the event on which each client asks before a tool runs: there, a hook that cannot judge refuses
# (kept here, not read from the dialect modules: this path runs when those may not import)
_TOOL_EVENT = {"claude": "PreToolUse", "codex": "PreToolUse", "gemini": "BeforeTool"}


def _refuse(client: str, event: str, msg: str) -> int:
    """A definite answer without the hook engine, in the client's own shape: Claude Code's is
    hook_protocol.unjudged; under Codex and Gemini a tool call is refused by exit 2 with the
    reason on stderr (the one signal both honour without any JSON), anything else gets a note."""
    if client == "claude":
        return _unjudged(event, msg)
    import json

    print(msg, file=sys.stderr)
    if event == _TOOL_EVENT[client]:
        return 2
    sys.stdout.write(json.dumps({"systemMessage": msg}) + "\n")
    return 0


def hook(args: list[str]) -> int:
    """`swarmgate hook [--plugin] [--client claude|codex|gemini] EVENT`: answer one hook call (JSON on
    stdin), always with a definite answer. ``--plugin``: started by swarmgate's Claude Code plugin
    (plugin/hooks/hooks.json), which defers when the project's settings wire swarmgate for this call
    (``_plugin_defers``: one set of hooks judges, never two)."""
    client = "claude"
    rest = list(args)
    plugin = rest[:1] == ["--plugin"]
    if plugin:
        rest = rest[1:]
    if rest[:1] == ["--client"] and len(rest) >= 2:
        client, rest = rest[1], rest[2:]
    elif rest[:1] and rest[0].startswith("--client="):
        client, rest = rest[0].split("=", 1)[1], rest[1:]
    if client not in _TOOL_EVENT or len(rest) != 1:
        msg = ("swarmgate hook: expected exactly one EVENT and an optional --client claude|codex|gemini (e.g. "
               "`swarmgate hook PreToolUse`, `swarmgate hook --client codex PreToolUse`), got "
               + (" ".join(args) or "none") + "; fix the hook entry in the client's settings "
               "(`swarmgate install PATH --client NAME` rewrites it)")
        # still a definite answer for the client: a tool call is refused (fail closed)
        return _refuse(client if client in _TOOL_EVENT else "claude", rest[0] if rest else "", msg)
    event = rest[0]
    if event == "Wake" and client == "claude":   # the wake waiter (asyncRewake on Stop): agents/wake.py
        try:
            from swarmgate.agents.wake import main as wake_main
            return wake_main(sys.stdin.read())
        except BaseException as e:  # noqa: BLE001 - a waiter that cannot run wakes nobody and holds nothing
            print(f"swarmgate wake waiter: {type(e).__name__}: {e}", file=sys.stderr)
            return 0
    # The hook runs before every tool call, often with PYTHONDONTWRITEBYTECODE set in the agent's
    # environment: then every call would recompile every module whose .pyc is missing or stale
    # (after a pull, or a `uv tool install`, which compiles nothing). Write bytecode regardless.
    sys.dont_write_bytecode = False
    data = None
    if plugin and client == "claude":
        try:
            data = sys.stdin.buffer.read().decode("utf-8", errors="replace")
            if _plugin_defers(event, data):
                sys.stdout.write("{}\n")   # the settings' own swarmgate hook judges this call: once
                return 0
        except BaseException:  # noqa: BLE001 - when in doubt, judge (twice is safe, never is not)
            pass
    try:
        from swarmgate.hook_engine import main as hook_main
    except BaseException as e:  # noqa: BLE001 - a broken install must not let tool calls through
        return _refuse(client, event, f"swarmgate hook: the hook engine cannot be loaded ({type(e).__name__}: "
                                      f"{e}); refusing to be safe. Run `swarmgate doctor` in the repository, or "
                                      "reinstall swarmgate (docs/install.md).")
    return hook_main(event, client, data)


def _plugin_defers(event: str, data: str) -> bool:
    """Whether the project's settings wire swarmgate for this call (hook_wiring.settings_wire), in a
    file the client loaded when its session started (hook_wiring.loaded_by_client): the project is
    CLAUDE_PROJECT_DIR, which Claude Code sets for every hook (no agent can change the client's
    environment), else the payload's cwd."""
    from swarmgate import lean_os as os

    from swarmgate import fast_json
    from swarmgate.hook_wiring import loaded_by_client, settings_wire

    payload = fast_json.loads(data)
    if not isinstance(payload, dict):
        return False
    project = os.environ.get("CLAUDE_PROJECT_DIR") or payload.get("cwd")
    tool = payload.get("tool_name")
    if not (isinstance(project, str) and project):
        return False
    rel = settings_wire(project, event, tool if isinstance(tool, str) else None)
    return rel is not None and loaded_by_client(project, rel)


def search_path(this_file: str, executable: str, version: tuple) -> tuple[str, str | None]:
    """(where the `swarmgate` package lives, the venv's site-packages or None) for a hook started
    with -S from ``this_file`` by ``executable``. String operations only: `os` costs an import."""
    package_parent = this_file.rpartition("/")[0].rpartition("/")[0]
    venv = executable.rpartition("/")[0].rpartition("/")[0]
    site_packages = f"{venv}/lib/python{version[0]}.{version[1]}/site-packages"
    return package_parent, (None if site_packages == package_parent else site_packages)


class _PycLoader:
    """Runs a module whose code ``_PycFinder`` read (the spec's ``loader_state``)."""

    @staticmethod
    def create_module(spec: object) -> None:
        return None

    @staticmethod
    def exec_module(module: object) -> None:
        exec(module.__spec__.loader_state, module.__dict__)  # noqa: S102 - the module's own bytecode


class _PycFinder:
    """The hook's own modules (``swarmgate.*``, not packages) straight from the .pyc files Python wrote
    beside their sources, with the same check Python makes (the source's mtime and size in the
    header), without the path machinery around it: no directory scan and cache, no path joins and
    splits, no buffered file object. Half the cost of each of the ~50 imports of a hook call
    (bench/hook_latency.py). Packages too (``swarmgate.hooks`` of a regular install: its
    ``__init__``). Anything it cannot vouch for (no .pyc yet, a stale or hash-based one, a namespace
    package, a module beyond its parent's first directory) it leaves to the normal import, which
    compiles the module and writes the .pyc as always."""

    @staticmethod
    def find_spec(name: str, path: object = None, target: object = None) -> object:
        if not name.startswith("swarmgate.") or not path:
            return None
        base = name.rpartition(".")[2]
        where = path[0]
        source = f"{where}/{base}.py"
        cached = f"{where}/__pycache__/{base}.{sys.implementation.cache_tag}.pyc"
        package = None
        try:
            try:
                st = posix.stat(source)
            except FileNotFoundError:   # a package (swarmgate.hooks): its __init__, as the path finder would
                package = f"{where}/{base}"
                source = f"{package}/__init__.py"
                cached = f"{package}/__pycache__/__init__.{sys.implementation.cache_tag}.pyc"
                st = posix.stat(source)
            fd = posix.open(cached, posix.O_RDONLY | posix.O_CLOEXEC)
            try:
                data = posix.read(fd, posix.fstat(fd).st_size)
            finally:
                posix.close(fd)
        except OSError:
            return None
        if (data[:4] != _MAGIC or data[4:8] != b"\0\0\0\0"
                or int.from_bytes(data[8:12], "little") != st.st_mtime_ns // 1_000_000_000 & 0xFFFFFFFF
                or int.from_bytes(data[12:16], "little") != st.st_size & 0xFFFFFFFF):
            return None
        spec = _ModuleSpec(name, _PycLoader, origin=source, is_package=package is not None)
        if package is not None:
            spec.submodule_search_locations = [package]
        spec.has_location = True
        spec.cached = cached
        spec.loader_state = marshal.loads(memoryview(data)[16:])
        return spec


_ModuleSpec = type(sys.__spec__)
_MAGIC = sys.modules["_frozen_importlib_external"].MAGIC_NUMBER


def start(start_file: str) -> int:
    """The hook process started by hook_start.py (``start_file``): the search path, then ``hook``."""
    if sys.flags.no_site:
        package_parent, site_packages = search_path(start_file, sys.executable, sys.version_info)
        if site_packages:
            sys.path.append(site_packages)
        import swarmgate
        from swarmgate.lean_path import isdir
        if not isdir(f"{package_parent}/swarmgate/hooks"):
            swarmgate.__path__.append(package_parent)   # a checkout: swarmgate.hooks is hooks/
        sys.meta_path.insert(0, _PycFinder)
    return hook(sys.argv[1:])
