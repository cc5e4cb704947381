"""package.json scripts, as npm, yarn, pnpm and bun run them.

``npm run X [-- ARGS]`` runs ``preX``, ``X`` (with ARGS) and ``postX`` from the
nearest package.json, each through a shell in the package's directory; ``npm test``,
``npm start``, ``npm stop``, ``npm restart`` run their scripts the same way (``npm
start`` without a script runs ``node server.js``); ``npm install``, ``npm ci``,
``npm rebuild``, ``yarn``, ``pnpm install``, ``bun install`` run the project's own
lifecycle scripts (preinstall, install, postinstall, prepublish, preprepare, prepare,
postprepare); ``--ignore-scripts`` runs none of them. ``yarn X``, ``pnpm X`` and
``bun X`` run script X when package.json has one. Workspaces (``-ws``, ``-w NAME``,
``--workspace=NAME``, ``pnpm -r``, ``--filter``, ``yarn workspace NAME``, ``yarn
workspaces foreach``) run the script in each workspace the root lists.

Pure parsing here (``parse``, ``plan``); ``run`` is the walker's side.
"""
from __future__ import annotations

from swarmgate import lean_os as os

_NPM_RUN = frozenset(("run", "run-script", "rum", "urn"))
_NPM_TEST = frozenset(("test", "t", "tst"))
_NPM_INSTALL = frozenset(("install", "i", "in", "ins", "inst", "insta", "instal", "isnt", "isnta",
                          "isntal", "isntall", "add", "ci", "clean-install", "ic", "install-clean",
                          "isntall-clean", "rebuild", "rb", "update", "up", "upgrade", "udpate",
                          "link", "ln"))
_NPM_INSTALL_TEST = frozenset(("install-test", "it", "install-ci-test", "cit"))
LIFECYCLE_INSTALL = ("preinstall", "install", "postinstall", "prepublish", "preprepare", "prepare",
                     "postprepare")
_LIFECYCLE_OF = {"pack": ("prepack", "prepare", "postpack"),
                 "publish": ("prepublishOnly", "prepack", "prepare", "postpack", "publish", "postpublish"),
                 "version": ("preversion", "version", "postversion"),
                 "restart": ("prerestart", "restart", "postrestart")}
_VALUE_OPTS = frozenset(("--prefix", "-w", "--workspace", "--registry", "--cache", "--userconfig",
                         "--loglevel", "--script-shell", "--cwd", "-C", "--dir", "--filter", "-F",
                         "--reporter", "--config", "--globalconfig", "--tag", "--otp", "--access",
                         "--modules-folder", "--mutex", "--network-timeout"))
_YARN_BUILTINS = frozenset(("add", "audit", "autoclean", "bin", "cache", "check", "config", "create",
                            "dedupe", "dlx", "exec", "explain", "generate-lock-entry", "global", "help",
                            "import", "info", "init", "install", "licenses", "link", "list", "login",
                            "logout", "node", "outdated", "owner", "pack", "plugin", "policies",
                            "publish", "rebuild", "remove", "set", "tag", "team", "unlink", "unplug",
                            "upgrade", "upgrade-interactive", "up", "version", "versions", "why",
                            "workspace", "workspaces"))
_BUN_BUILTINS = frozenset(("test", "x", "repl", "exec", "install", "i", "add", "a", "remove", "rm",
                           "update", "outdated", "link", "unlink", "pm", "build", "init", "create",
                           "upgrade", "publish", "patch", "audit", "info", "why"))
_MAX_WORKSPACES = 32


class PackageError(ValueError):
    """package.json is not valid JSON or has the wrong shape."""


def parse(text: str) -> tuple[dict, list]:
    """(scripts, workspace globs) of a package.json text."""
    import json

    try:
        data = json.loads(text)
    except ValueError as e:
        raise PackageError(f"not valid JSON: {e}") from None
    if not isinstance(data, dict):
        raise PackageError("not a JSON object")
    scripts = data.get("scripts") or {}
    if not isinstance(scripts, dict):
        raise PackageError('"scripts" is not an object')
    scripts = {str(k): v for k, v in scripts.items() if isinstance(v, str)}
    ws = data.get("workspaces") or []
    if isinstance(ws, dict):
        ws = ws.get("packages") or []
    ws = [w for w in ws if isinstance(w, str)] if isinstance(ws, list) else []
    return scripts, ws


class Plan:
    """What a package-manager command runs: ``scripts`` (names, in order; the main one gets
    ``args``), in which packages (``workspaces``: None for the nearest package, "all", or a
    list of names/paths), or ``dynamic`` (the script name cannot be read)."""
    __slots__ = ("scripts", "main", "args", "workspaces", "prefix", "start_default", "optional",
                 "dynamic")

    def __init__(self) -> None:
        self.scripts: list[str] = []
        self.main: str | None = None
        self.args: list[str] = []
        self.workspaces = None
        self.prefix: str | None = None
        self.start_default = False
        self.optional = False       # run the script only when package.json has it (yarn X)
        self.dynamic: str | None = None


def _run_of(name: str, lifecycle: bool) -> list:
    return [f"pre{name}", name, f"post{name}"] if lifecycle else [name]


def plan(tool: str, args: list, largs: list) -> Plan | None:
    """The plan of ``tool args`` (npm, yarn, pnpm, bun), or None when it runs no script."""
    p = Plan()
    n = len(args)
    stop = args.index("--") if "--" in args else n
    ignore = False
    # options are read wherever they are (npm parses them anywhere before `--`)
    k = 0
    while k < stop:
        a = args[k]
        opt, eq, val = a.partition("=")
        nxt = args[k + 1] if k + 1 < stop else None
        if opt == "--ignore-scripts":
            ignore = val != "false"
        elif opt in ("--prefix", "--cwd", "-C", "--dir"):
            p.prefix = val if eq else nxt
        elif opt in ("-w", "--workspace") and tool == "npm":
            name = val if eq else nxt
            if name is not None:
                p.workspaces = (p.workspaces if isinstance(p.workspaces, list) else []) + [name]
        elif opt in ("--workspaces", "-ws") or (tool == "pnpm" and opt in ("-r", "--recursive")):
            p.workspaces = "all"
        elif opt in ("--filter", "-F") and tool == "pnpm":
            name = val if eq else nxt
            p.workspaces = (p.workspaces if isinstance(p.workspaces, list) else []) + [name or ""]
        k += 1
    i = 0
    sub = None
    while i < n:
        a = args[i]
        opt, eq, val = a.partition("=")
        if a == "--":
            break
        if a.startswith("-") and a != "-":
            if not eq and opt in _VALUE_OPTS and not (tool == "pnpm" and opt == "-w"):
                i += 2
                continue
            i += 1
            continue
        if largs[i] >= 0:
            p.dynamic = a
            return p
        sub = a
        i += 1
        break
    rest = args[i:]
    lrest = largs[i:]
    lifecycle = not ignore

    def take_script(words, lwords):
        # options between the subcommand and the script name (npm run -w x test)
        while words and words[0].startswith("-") and words[0] != "--":
            skip = 2 if words[0] in _VALUE_OPTS and "=" not in words[0] else 1
            words, lwords = words[skip:], lwords[skip:]
        if not words:
            return None
        if lwords[0] >= 0:
            p.dynamic = words[0]
            return None
        name = words[0]
        tail = words[1:]
        if tool == "npm":
            # npm passes what follows `--` to the script (and positional words)
            tail = tail[tail.index("--") + 1:] if "--" in tail else [w for w in tail if not w.startswith("-")]
        elif tail[:1] == ["--"]:
            tail = tail[1:]
        p.main = name
        p.args = tail
        return name

    if tool == "npm":
        if sub is None:
            return None
        if sub in _NPM_RUN:
            name = take_script(rest, lrest)
            if name is None:
                return p if p.dynamic else None
            p.scripts = _run_of(name, lifecycle) if lifecycle else [name]
            return p
        if sub in _NPM_TEST or sub in ("start", "stop", "restart"):
            name = "test" if sub in _NPM_TEST else sub
            p.main = name
            p.args = rest[rest.index("--") + 1:] if "--" in rest else [w for w in rest if not w.startswith("-")]
            p.scripts = list(_LIFECYCLE_OF.get(name, _run_of(name, True)))
            p.start_default = name == "start"
            return p
        if sub in _NPM_INSTALL or sub in _NPM_INSTALL_TEST:
            if not lifecycle:
                return None
            p.scripts = list(LIFECYCLE_INSTALL)
            if sub in _NPM_INSTALL_TEST:
                p.scripts += ["pretest", "test", "posttest"]
            return p
        if sub in _LIFECYCLE_OF and lifecycle:
            p.scripts = list(_LIFECYCLE_OF[sub])
            return p
        return None
    if tool == "yarn":
        if sub is None or sub in ("install", "add"):
            if not lifecycle:
                return None
            p.scripts = list(LIFECYCLE_INSTALL)
            return p
        if sub == "workspace" and rest:
            p.workspaces = [rest[0]]
            rest, lrest = rest[1:], lrest[1:]
            if rest[:1] == ["run"]:
                rest, lrest = rest[1:], lrest[1:]
            name = take_script(rest, lrest)
            if name is None:
                return p if p.dynamic else None
            p.scripts = _run_of(name, lifecycle)
            return p
        if sub == "workspaces":
            k = rest.index("run") + 1 if "run" in rest else len(rest)
            p.workspaces = "all"
            name = take_script(rest[k:], lrest[k:])
            if name is None:
                return p if p.dynamic else None
            p.scripts = _run_of(name, lifecycle)
            return p
        if sub in ("run", "test", "start") or sub not in _YARN_BUILTINS:
            if sub == "run":
                name = take_script(rest, lrest)
            else:
                name = take_script([sub] + rest, [-1] + lrest)
                p.optional = sub not in ("test", "start")
            if name is None:
                return p if p.dynamic else None
            p.scripts = _run_of(name, lifecycle)
            return p
        return None
    if tool == "pnpm":
        if sub in ("install", "i", "add", "update", "up", "rebuild", "rb") or sub is None:
            if sub is None or not lifecycle:
                return None
            p.scripts = list(LIFECYCLE_INSTALL)
            return p
        if sub in ("run", "run-script"):
            name = take_script(rest, lrest)
        elif sub in ("test", "t", "tst", "start", "stop", "restart"):
            name = take_script(["test" if sub in ("t", "tst") else sub] + rest, [-1] + lrest)
        elif sub in ("exec", "dlx", "create", "why", "list", "ls", "outdated", "audit", "publish", "pack",
                     "remove", "rm", "link", "unlink", "store", "env", "config", "setup", "init",
                     "import", "deploy", "fetch", "patch", "root", "bin", "licenses", "doctor"):
            return None
        else:
            name = take_script([sub] + rest, [-1] + lrest)
            p.optional = True
        if name is None:
            return p if p.dynamic else None
        p.scripts = _run_of(name, lifecycle)
        return p
    if tool == "bun":
        if sub in ("install", "i", "add", "a"):
            if not lifecycle:
                return None
            p.scripts = list(LIFECYCLE_INSTALL)
            return p
        if sub == "run":
            if rest and ("/" in rest[0] or rest[0].endswith((".js", ".ts", ".mjs", ".cjs", ".tsx", ".jsx"))):
                return None   # a file, not a script
            name = take_script(rest, lrest)
            p.optional = True
        elif sub is None or sub in _BUN_BUILTINS:
            return None
        else:
            name = take_script([sub] + rest, [-1] + lrest)
            p.optional = True
        if name is None:
            return p if p.dynamic else None
        p.scripts = _run_of(name, lifecycle)
        return p
    return None


def _quote(w: str) -> str:
    if w and all(c.isalnum() or c in "-_./=:,+%@^" for c in w):
        return w
    return "'" + w.replace("'", "'\\''") + "'"


# ---------------------------------------------------------------- the walker's side

def run(wk, name, args, largs, env, ctx, text) -> bool | None:
    """Follow the scripts ``npm|yarn|pnpm|bun ...`` runs (see the module doc); None when it runs
    no script (``npm exec`` and the like are the wrapper table's)."""
    p = plan(name, args, largs)
    if p is None:
        return None
    if p.dynamic is not None:
        wk.unverifiable(f"{name} runs a script whose name cannot be read statically ({p.dynamic})", text,
                        exec_judged=(name,))
        return True
    start = wk.project_dir()
    if start is None:
        wk.unverifiable(f"{name}: cannot tell which directory it runs in", text, exec_judged=(name,))
        return True
    if p.prefix:
        start = os.path.normpath(os.path.join(start, os.path.expanduser(p.prefix)))
    root_pkg = wk.find_upwards(("package.json",), start)
    if root_pkg is None:
        return True   # no package.json: the package manager fails, nothing runs
    dirs = [os.path.dirname(root_pkg)]
    if p.workspaces is not None:
        dirs = _workspace_dirs(wk, os.path.dirname(root_pkg), p.workspaces, text, name)
        if dirs is None:
            return True
    for d in dirs[:_MAX_WORKSPACES]:
        _run_package(wk, name, os.path.join(d, "package.json"), p, ctx, text)
    return True


def _scripts_of(wk, path, text, tool):
    key = ("package.json", path)
    if key in wk.project_cache:
        return wk.project_cache[key]
    body = wk.read_project_file(path, text, tool)
    got = None
    if body is not None:
        try:
            got = parse(body)
        except PackageError as e:
            wk.unverifiable(f"{tool}: {path} cannot be read ({e}): which scripts it runs is unknown", text)
    wk.project_cache[key] = got
    return got


def _run_package(wk, tool, path, p: Plan, ctx, text) -> None:
    got = _scripts_of(wk, path, text, tool)
    if got is None:
        return
    scripts, _ = got
    pkg_dir = os.path.dirname(path)
    if p.optional and p.main not in scripts:
        return
    ran_main = False
    for s in p.scripts:
        body = scripts.get(s)
        if body is None:
            continue
        if s == p.main and p.args:
            body = body + " " + " ".join(_quote(a) for a in p.args)
        ran_main = ran_main or s == p.main
        wk.run_in(body, ctx.sub(f"{tool} script:{s}", wrapper=tool), f"{tool} script {s}", text, cwd=pkg_dir)
    if p.start_default and not ran_main and "start" not in scripts:
        wk.run_in("node server.js", ctx.sub(f"{tool} script:start", wrapper=tool), f"{tool} start", text,
                  cwd=pkg_dir)


def _workspace_dirs(wk, root: str, which, text, tool):
    """Directories of the workspaces ``which`` ("all" or names/paths) under ``root``."""
    import glob

    got = _scripts_of(wk, os.path.join(root, "package.json"), text, tool)
    globs = list(got[1]) if got else []
    pnpm_ws = os.path.join(root, "pnpm-workspace.yaml")
    if os.path.isfile(pnpm_ws) or pnpm_ws in wk.written:
        body = wk.read_project_file(pnpm_ws, text, tool)
        if body is not None:
            from swarmgate.hooks.yaml_subset import YamlUnsupported, load
            try:
                data = load(body) or {}
                pk = data.get("packages") if isinstance(data, dict) else None
                globs += [g for g in (pk or []) if isinstance(g, str)]
            except YamlUnsupported as e:
                wk.unverifiable(f"{tool}: {pnpm_ws} cannot be read ({e})", text)
                return None
    dirs: list[str] = []
    for g in globs:
        if g.startswith("!"):
            continue
        for d in sorted(glob.glob(os.path.join(root, g)))[:_MAX_WORKSPACES]:
            if os.path.isfile(os.path.join(d, "package.json")) and d not in dirs:
                dirs.append(os.path.normpath(d))
    if which == "all":
        return dirs or [root]
    out = []
    for w in which:
        if not w:
            continue
        cand = os.path.normpath(os.path.join(root, w))
        if cand in dirs or os.path.isfile(os.path.join(cand, "package.json")):
            out.append(cand)
            continue
        # a package name: look it up among the workspaces; unknown -> every workspace
        found = [d for d in dirs if _package_name(d) == w or _package_name(d).endswith("/" + w.lstrip("./"))]
        out.extend(found or dirs)
    return out or [root]


def _package_name(d: str) -> str:
    import json

    try:
        with open(os.path.join(d, "package.json"), "rb") as f:
            data = json.loads(f.read(1 << 20))
        return str(data.get("name", "")) if isinstance(data, dict) else ""
    except (OSError, ValueError):
        return ""
