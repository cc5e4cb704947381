"""Task runners that keep their commands in files: just, task (Taskfile.yml), tox, nox, ninja.

Each reader finds the file the runner would read (from the command's directory, or
the one its options name), parses the part the invocation runs, and hands each
command to the walker as a shell text (``walker.run_in``) in the directory the
runner would use. A file that cannot be parsed makes the command unverifiable; a
missing file runs nothing (the runner fails). Interpolations that cannot be resolved
become unknown shell variables (``$JUST_x``, ``$TASK_x``), so a pattern is never
completed silently by them. Nox sessions are Python: their bodies are handed to the
guards' code scan as programs (``session.run("cargo", "test", "--workspace")``).

Pure parsers (``parse_justfile``, ``parse_taskfile``, ``tox_commands``,
``nox_sessions``, ``parse_ninja``) and the walker's side (``run_*``).
"""
from __future__ import annotations

from swarmgate import lean_os as os

from swarmgate.hooks.bash_results import Program

_MAX_STEPS = 64        # recipes/tasks/edges followed per invocation


def _quote(w: str) -> str:
    if w and all(c.isalnum() or c in "-_./=:,+%@^" for c in w):
        return w
    return "'" + w.replace("'", "'\\''") + "'"


def _opt(args, i, names):
    """(value, next index) for an option in ``names`` at args[i] (``-f X``, ``--file=X``, ``-fX``)."""
    a = args[i]
    for nm in names:
        if a == nm and i + 1 < len(args):
            return args[i + 1], i + 2
        if nm.startswith("--") and a.startswith(nm + "="):
            return a[len(nm) + 1:], i + 1
        if not nm.startswith("--") and a.startswith(nm) and len(a) > len(nm):
            return a[len(nm):], i + 1
    return None, i


# ================================================================ just

class Recipe:
    __slots__ = ("name", "params", "deps", "after", "body", "shebang", "no_cd")

    def __init__(self, name, params, deps, after, no_cd) -> None:
        self.name = name
        self.params = params      # [(name, default or None, variadic)]
        self.deps = deps          # [(name, [args])]
        self.after = after
        self.body: list[str] = []
        self.shebang = None
        self.no_cd = no_cd


class JustError(ValueError):
    pass


def parse_justfile(text: str):
    """(recipes {name: Recipe}, order [names], variables {name: value or None}, backticks [cmd],
    aliases {alias: name}, imports: bool, default name or None)."""
    recipes: dict = {}
    order: list = []
    variables: dict = {}
    backticks: list = []
    aliases: dict = {}
    imports = False
    default = None
    attrs: list = []
    cur = None
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        raw = lines[i]
        i += 1
        if cur is not None and raw[:1] in (" ", "\t") and raw.strip():
            cur.body.append(raw.strip() if cur.shebang is None else raw)
            if len(cur.body) == 1 and raw.strip().startswith("#!"):
                cur.shebang = raw.strip()
                cur.body = []
            continue
        if cur is not None and not raw.strip():
            cur.body.append("")
            continue
        cur = None
        s = raw.split(" #", 1)[0].rstrip() if not raw.lstrip().startswith("#") else ""
        if not s:
            continue
        if s.startswith("["):
            attrs.append(s)
            continue
        if s.startswith(("import ", "import?", "mod ", "mod?")):
            imports = True
            continue
        if s.startswith("set "):
            continue
        if s.startswith("alias "):
            k, _, v = s[6:].partition(":=")
            aliases[k.strip()] = v.strip()
            continue
        body = s[7:] if s.startswith("export ") else s
        if ":=" in body and body.index(":=") < (body.index(":") + 1 if ":" in body else 10 ** 9):
            k, _, v = body.partition(":=")
            variables[k.strip()] = _just_value(v.strip(), variables, backticks)
            continue
        if ":" in s:
            head, _, rest = s.partition(":")
            head = head.strip().lstrip("@")
            parts = head.split()
            if not parts:
                raise JustError(f"line {i}: a recipe without a name")
            name = parts[0]
            params = []
            for p in parts[1:]:
                var = p.startswith(("*", "+", "$"))
                p = p.lstrip("*+$")
                k, eq, dv = p.partition("=")
                params.append((k, dv.strip("'\"") if eq else None, var))
            deps_text, _, after_text = rest.partition("&&")
            cur = Recipe(name, params, _just_deps(deps_text), _just_deps(after_text),
                         any("no-cd" in a for a in attrs))
            if any("default" in a.replace("[", " ").replace("]", " ").replace(",", " ").split()
                   for a in attrs):
                default = name
            attrs = []
            recipes[name] = cur
            order.append(name)
            continue
        raise JustError(f"line {i}: cannot read {s!r}")
    for r in recipes.values():
        while r.body and not r.body[-1]:
            r.body.pop()
    return recipes, order, variables, backticks, aliases, imports, default or (order[0] if order else None)


def _just_deps(text: str) -> list:
    out = []
    text = text.strip()
    i = 0
    while i < len(text):
        if text[i] == "(":
            j = text.find(")", i)
            j = len(text) if j < 0 else j
            inner = text[i + 1:j].split()
            if inner:
                out.append((inner[0], [a.strip("'\"") for a in inner[1:]]))
            i = j + 1
            continue
        if text[i].isspace():
            i += 1
            continue
        j = i
        while j < len(text) and not text[j].isspace() and text[j] != "(":
            j += 1
        out.append((text[i:j], []))
        i = j
    return out


def _just_value(v: str, variables: dict, backticks: list):
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"" and v[0] not in v[1:-1]:
        return v[1:-1]
    if v.startswith("`") and v.endswith("`") and len(v) >= 2:
        backticks.append(v.strip("`").strip())
        return None
    if v in variables:
        return variables[v]
    return None


def _interpolate(s: str, values: dict, unknown: str, task_style: bool = False) -> str:
    """``{{ expr }}`` replaced by its value, else by an unknown shell variable ``${UNKNOWN_expr}``
    (so a pattern is never completed silently by it). just escapes ``{{`` as ``{{{{``; task
    names variables ``{{.NAME}}``."""
    out, i = [], 0
    while i < len(s):
        if not task_style and s.startswith("{{{{", i):
            out.append("{{")
            i += 4
            continue
        if s.startswith("{{", i):
            j = s.find("}}", i + 2)
            if j < 0:
                out.append(s[i:])
                break
            expr = s[i + 2:j].strip()
            key = expr[1:] if task_style and expr.startswith(".") else expr
            v = values.get(key)
            if v is None:
                safe = "".join(c if c.isalnum() else "_" for c in key)[:30] or "x"
                out.append("${" + unknown + "_" + safe + "}")
            else:
                out.append(v)
            i = j + 2
            continue
        out.append(s[i])
        i += 1
    return "".join(out)


def _just_interpolate(line: str, values: dict) -> str:
    return _interpolate(line, values, "JUST")


def run_just(wk, name, args, largs, env, ctx, text):
    i, n = 0, len(args)
    jfile = wdir = None
    sets: dict = {}
    while i < n:
        a = args[i]
        if a in ("-n", "--dry-run", "-l", "--list", "--summary", "--evaluate", "--dump", "--variables",
                 "--init", "--edit", "-e", "--fmt", "--changelog", "--completions", "--groups",
                 "--man", "-h", "--help", "-V", "--version", "--choose", "--show", "-s"):
            return True
        v, j = _opt(args, i, ("-f", "--justfile"))
        if v is not None:
            jfile, i = v, j
            continue
        v, j = _opt(args, i, ("-d", "--working-directory"))
        if v is not None:
            wdir, i = v, j
            continue
        if a == "--set" and i + 2 < n:
            sets[args[i + 1]] = args[i + 2]
            i += 3
            continue
        if a in ("-c", "--command") and i + 1 < n:
            wk._inner(args, largs, i + 1, env, ctx.sub("just --command", wrapper=name), text)
            return True
        if a in ("--shell", "--shell-arg", "--dotenv-filename", "--dotenv-path", "--chooser",
                 "--color", "--list-heading", "--list-prefix", "--timestamp-format", "--tempdir",
                 "--alias-style", "--command-color"):
            i += 2
            continue
        if a.startswith("-"):
            i += 1
            continue
        break
    if any(x >= 0 for x in largs[i:i + 1]):
        wk.unverifiable(f"just runs a recipe whose name cannot be read statically ({args[i]})", text,
                        exec_judged=("just",))
        return True
    here = wk.project_dir()
    if here is None:
        wk.unverifiable("just: cannot tell which directory it runs in", text, exec_judged=("just",))
        return True
    if jfile:
        path = os.path.normpath(os.path.join(here, os.path.expanduser(jfile)))
    else:
        path = wk.find_upwards(("justfile", "Justfile", ".justfile", "JUSTFILE"), here)
    if path is None:
        return True
    body = wk.read_project_file(path, text, "just")
    if body is None:
        return True
    try:
        recipes, order, variables, backticks, aliases, imports, default = parse_justfile(body)
    except JustError as e:
        wk.unverifiable(f"just: {path} cannot be read ({e})", text)
        return True
    jdir = os.path.normpath(os.path.join(here, wdir)) if wdir else os.path.dirname(path)
    for k, v in sets.items():
        variables[k] = v
    sub = ctx.sub("just", wrapper=name)
    for b in backticks:
        wk.run_in(b, sub, "just backtick", text, cwd=jdir)
    rest = args[i:]
    calls = []
    if not rest:
        if default is None:
            return True
        calls.append((default, []))
    k = 0
    while k < len(rest):
        rname = aliases.get(rest[k], rest[k])
        r = recipes.get(rname)
        if r is None:
            if imports or "::" in rname or "/" in rname:
                wk.unverifiable(f"just: recipe {rest[k]!r} comes from a module or import that is not read",
                                text)
            return True
        nparams = len(r.params)
        variadic = any(p[2] for p in r.params)
        take = rest[k + 1:] if variadic else rest[k + 1:k + 1 + nparams]
        calls.append((rname, take))
        k += 1 + len(take)
    done: set = set()
    steps = [0]

    def call(rname, argv, level):
        r = recipes.get(aliases.get(rname, rname))
        if r is None or steps[0] >= _MAX_STEPS or level > 16:
            if steps[0] >= _MAX_STEPS or level > 16:
                wk.unverifiable("just: too many recipes to follow", text)
            return
        key = (r.name, tuple(argv))
        if key in done:
            return
        done.add(key)
        steps[0] += 1
        for d, dargs in r.deps:
            call(d, dargs, level + 1)
        values = {k: v for k, v in variables.items() if v is not None}
        for idx, (pn, dv, var) in enumerate(r.params):
            if var:
                values[pn] = " ".join(argv[idx:]) if argv[idx:] else (dv or "")
            elif idx < len(argv):
                values[pn] = argv[idx]
            elif dv is not None:
                values[pn] = dv
        cwd = here if r.no_cd else jdir
        if r.shebang is not None:
            script = _just_interpolate("\n".join(r.body), values)
            interp = r.shebang[2:].split()
            prog = os.path.basename(interp[1] if interp and os.path.basename(interp[0]) == "env"
                                    and len(interp) > 1 else (interp[0] if interp else "sh"))
            from swarmgate.hooks.bash_wrappers import SHELLS
            if prog in SHELLS:
                wk.run_in(script, ctx.sub(f"just:{r.name}", wrapper=name), f"just {r.name}", text, cwd=cwd)
            else:
                wk.an.programs.append(Program(prog, script, text, cwd, ctx.via + (f"just:{r.name}",), "file"))
        else:
            for line in r.body:
                s = line.lstrip("@-").strip() if line else ""
                if s and not s.startswith("#"):
                    wk.run_in(_just_interpolate(s, values), ctx.sub(f"just:{r.name}", wrapper=name),
                              f"just {r.name}", text, cwd=cwd)
        for d, dargs in r.after:
            call(d, dargs, level + 1)

    for rname, argv in calls:
        call(rname, argv, 0)
    return True


# ================================================================ task (Taskfile.yml)

_TASKFILES = ("Taskfile.yml", "taskfile.yml", "Taskfile.yaml", "taskfile.yaml", "Taskfile.dist.yml",
              "taskfile.dist.yml", "Taskfile.dist.yaml", "taskfile.dist.yaml")


def _task_template(s: str, values: dict) -> str:
    return _interpolate(s, values, "TASK", task_style=True)


def run_task(wk, name, args, largs, env, ctx, text):
    i, n = 0, len(args)
    tfile = tdir = None
    cli_args: list = []
    if "--" in args:
        k = args.index("--")
        cli_args = args[k + 1:]
        args, largs, n = args[:k], largs[:k], k
    while i < n:
        a = args[i]
        if a in ("-n", "--dry", "-l", "--list", "-a", "--list-all", "--summary", "-h", "--help",
                 "--version", "--init", "-i", "--status", "--json"):
            return True
        v, j = _opt(args, i, ("-t", "--taskfile"))
        if v is not None:
            tfile, i = v, j
            continue
        v, j = _opt(args, i, ("-d", "--dir"))
        if v is not None:
            tdir, i = v, j
            continue
        if a in ("-o", "--output", "--output-group-begin", "--output-group-end", "-I", "--interval",
                 "-C", "--concurrency", "--sort"):
            i += 2
            continue
        if a.startswith("-"):
            i += 1
            continue
        break
    names = []
    for a, la in zip(args[i:], largs[i:]):
        if la >= 0:
            wk.unverifiable(f"task runs a task whose name cannot be read statically ({a})", text,
                            exec_judged=("task",))
            return True
        if "=" in a:
            continue   # VAR=value
        names.append(a)
    here = wk.project_dir()
    if here is None:
        wk.unverifiable("task: cannot tell which directory it runs in", text, exec_judged=("task",))
        return True
    base = os.path.normpath(os.path.join(here, tdir)) if tdir else here
    if tfile:
        path = os.path.normpath(os.path.join(base, tfile))
    else:
        path = wk.find_upwards(_TASKFILES, base)
    if path is None:
        return True
    body = wk.read_project_file(path, text, "task")
    if body is None:
        return True
    from swarmgate.hooks.yaml_subset import YamlUnsupported, load
    try:
        data = load(body)
    except YamlUnsupported as e:
        wk.unverifiable(f"task: {path} cannot be read ({e})", text)
        return True
    if not isinstance(data, dict) or not isinstance(data.get("tasks") or {}, dict):
        wk.unverifiable(f"task: {path} has no readable `tasks:` table", text)
        return True
    tasks = data.get("tasks") or {}
    includes = bool(data.get("includes"))
    values = {k: v for k, v in (data.get("vars") or {}).items() if isinstance(v, str)} \
        if isinstance(data.get("vars"), dict) else {}
    values["CLI_ARGS"] = " ".join(_quote(a) for a in cli_args)
    for a in args[i:]:
        if "=" in a:
            k, _, v = a.partition("=")
            values[k] = v
    tdir_of_file = os.path.dirname(path)
    done: set = set()
    steps = [0]

    def call(tname, level, extra=None):
        t = tasks.get(tname)
        if t is None:
            if includes or ":" in tname:
                wk.unverifiable(f"task: task {tname!r} comes from an included Taskfile that is not read", text)
            return
        if tname in done or level > 16 or steps[0] >= _MAX_STEPS:
            if steps[0] >= _MAX_STEPS:
                wk.unverifiable("task: too many tasks to follow", text)
            return
        done.add(tname)
        steps[0] += 1
        vals = dict(values)
        if isinstance(t, dict) and isinstance(t.get("vars"), dict):
            vals.update({k: v for k, v in t["vars"].items() if isinstance(v, str)})
        if extra:
            vals.update(extra)
        if isinstance(t, (str, list)):
            t = {"cmds": t if isinstance(t, list) else [t]}
        if not isinstance(t, dict):
            return
        cwd = tdir_of_file
        if isinstance(t.get("dir"), str):
            cwd = os.path.normpath(os.path.join(tdir_of_file, _task_template(t["dir"], vals)))
        for d in t.get("deps") or []:
            if isinstance(d, str):
                call(d, level + 1)
            elif isinstance(d, dict) and isinstance(d.get("task"), str):
                call(d["task"], level + 1, d.get("vars") if isinstance(d.get("vars"), dict) else None)
        cmds = t.get("cmds") or []
        if isinstance(t.get("cmd"), str):
            cmds = [t["cmd"]] + list(cmds)
        for c in cmds if isinstance(cmds, list) else [cmds]:
            if isinstance(c, dict):
                if isinstance(c.get("task"), str):
                    call(c["task"], level + 1, c.get("vars") if isinstance(c.get("vars"), dict) else None)
                    continue
                c = c.get("cmd") or c.get("defer") or ""
                if isinstance(c, dict):
                    if isinstance(c.get("task"), str):
                        call(c["task"], level + 1)
                    continue
            if isinstance(c, str) and c.strip():
                wk.run_in(_task_template(c, vals), ctx.sub(f"task:{tname}", wrapper=name), f"task {tname}",
                          text, cwd=cwd)

    for tname in names or ["default"]:
        call(tname, 0)
    return True


# ================================================================ tox

def tox_commands(text: str, envs: list | None, posargs: list | None, toxinidir: str):
    """{env: [command lines]} for tox.ini ``text``; ``envs`` None = the envlist (or every
    testenv). Raises ValueError on an unreadable file."""
    import configparser

    cp = configparser.ConfigParser(interpolation=None, strict=False, default_section="\0none")
    cp.optionxform = str
    try:
        cp.read_string(text)
    except configparser.Error as e:
        raise ValueError(str(e).splitlines()[0]) from None
    def get(section, key):
        if cp.has_section(section) and cp.has_option(section, key):
            return cp.get(section, key)
        return None
    all_envs = [s.split(":", 1)[1] for s in cp.sections() if s.startswith("testenv:")]
    if envs is None:
        listed = get("tox", "envlist") or get("tox", "env_list")
        envs = _tox_envs(listed) if listed else (all_envs or ["py"])
    elif envs == ["ALL"]:
        listed = get("tox", "envlist") or get("tox", "env_list")
        envs = sorted(set(_tox_envs(listed) if listed else []) | set(all_envs)) or ["py"]
    out = {}
    for env in envs[:_MAX_STEPS]:
        lines = []
        for key in ("commands_pre", "commands", "commands_post"):
            v = get(f"testenv:{env}", key)
            if v is None:
                v = get("testenv", key)
            if v is None:
                continue
            for line in _tox_lines(v):
                lines.append(_tox_subst(line, posargs, toxinidir, get))
        out[env] = lines
    return out


def _tox_envs(listed: str) -> list:
    from swarmgate.hooks.bash_words import expand_braces
    out = []
    for part in listed.replace("\n", ",").split(","):
        part = part.strip()
        if part:
            out.extend(expand_braces(part))
    return out


def _tox_lines(v: str) -> list:
    out, buf = [], ""
    for raw in v.split("\n"):
        s = raw.strip()
        if not s or s.startswith("#"):
            continue
        if s.endswith("\\"):
            buf += s[:-1] + " "
            continue
        out.append((buf + s).lstrip("-!").strip())
        buf = ""
    if buf:
        out.append(buf.strip())
    return out


def _tox_subst(line: str, posargs, toxinidir: str, get) -> str:
    out, i = [], 0
    while i < len(line):
        c = line[i]
        if c == "{" and "}" in line[i:]:
            j = line.index("}", i)
            expr = line[i + 1:j]
            if expr.startswith("posargs"):
                dflt = expr.split(":", 1)[1] if ":" in expr else ""
                out.append(" ".join(_quote(a) for a in posargs) if posargs else dflt)
            elif expr in ("toxinidir", "tox_root"):
                out.append(toxinidir)
            elif expr.startswith("[") and "]" in expr:
                sec, _, key = expr[1:].partition("]")
                val = get(sec, key.strip())
                out.append(val.replace("\n", " ") if val is not None else "${TOX_ref}")
            elif expr.startswith("env:"):
                name = expr[4:].split(":", 1)[0]
                out.append("${" + (name if name.isidentifier() else "TOX_env") + "}")
            else:
                safe = "".join(ch if ch.isalnum() else "_" for ch in expr)[:30] or "x"
                out.append("${TOX_" + safe + "}")
            i = j + 1
            continue
        if line.startswith("[]", i):
            out.append(" ".join(_quote(a) for a in posargs) if posargs else "")
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _tox_toml_commands(data: dict, envs, posargs) -> dict:
    base = data.get("env_run_base") if isinstance(data.get("env_run_base"), dict) else {}
    envtab = data.get("env") if isinstance(data.get("env"), dict) else {}
    if envs is None or envs == ["ALL"]:
        listed = data.get("env_list") or data.get("envlist")
        envs = [e for e in listed if isinstance(e, str)] if isinstance(listed, list) else list(envtab) or ["py"]
    out = {}
    for env in envs[:_MAX_STEPS]:
        spec = envtab.get(env) if isinstance(envtab.get(env), dict) else {}
        lines = []
        for key in ("commands_pre", "commands", "commands_post"):
            cmds = spec.get(key, base.get(key))
            if not isinstance(cmds, list):
                continue
            for c in cmds:
                if isinstance(c, list):
                    words = []
                    for w in c:
                        if isinstance(w, str):
                            words.append(_quote(w))
                        elif isinstance(w, dict) and w.get("replace") == "posargs":
                            words.extend(_quote(a) for a in posargs or [])
                            if not posargs and isinstance(w.get("default"), list):
                                words.extend(_quote(str(x)) for x in w["default"])
                        else:
                            words.append("${TOX_value}")
                    lines.append(" ".join(words))
                elif isinstance(c, str):
                    lines.append(c)
        out[env] = lines
    return out


def run_tox(wk, name, args, largs, env, ctx, text):
    i, n = 0, len(args)
    envs = None
    cfg = None
    posargs = []
    if "--" in args:
        k = args.index("--")
        posargs = args[k + 1:]
        args, largs, n = args[:k], largs[:k], k
    if args[:1] and args[0] in ("l", "list", "c", "config", "d", "devenv", "q", "quickstart", "s", "schema",
                                "exec", "e", "le", "legacy"):
        if args[0] not in ("le", "legacy", "e", "exec"):
            return True
    while i < n:
        a = args[i]
        if a in ("-l", "--listenvs", "-a", "--listenvs-all", "--showconfig", "--help-ini", "-h", "--help",
                 "--version", "--notest", "--list-dependencies"):
            return True
        v, j = _opt(args, i, ("-e", "--env"))
        if v is not None:
            if largs[i + 1 if j == i + 2 else i] >= 0:
                wk.unverifiable("tox runs environments whose names cannot be read statically", text,
                                exec_judged=("tox",))
                return True
            envs = (envs or []) + [e for part in v.split(",") for e in _tox_envs(part)]
            i = j
            continue
        v, j = _opt(args, i, ("-c", "--conf", "--root", "--workdir", "-m", "-f", "--labels", "--factors",
                              "-p", "--parallel", "-x", "--override", "--installpkg", "-i",
                              "--index-url", "--hashseed", "--result-json", "--skip-env",
                              "--exit-and-dump-after", "--runner", "--colored", "--skip-pkg-install"))
        if v is not None:
            if a.startswith(("-c", "--conf")):
                cfg = v
            elif a.startswith(("-m", "-f", "--labels", "--factors")):
                envs = ["ALL"]
            i = j
            continue
        i += 1
    here = wk.project_dir()
    if here is None:
        wk.unverifiable("tox: cannot tell which directory it runs in", text, exec_judged=("tox",))
        return True
    found = None
    cands = [cfg] if cfg else ["tox.ini", "tox.toml", "pyproject.toml", "setup.cfg"]
    for c in cands:
        p = os.path.normpath(os.path.join(here, c))
        if os.path.isfile(p) or p in wk.written:
            found = p
            break
    if found is None:
        return True
    body = wk.read_project_file(found, text, "tox")
    if body is None:
        return True
    root = os.path.dirname(found)
    try:
        if found.endswith(".toml"):
            import tomllib
            data = tomllib.loads(body)
            if found.endswith("pyproject.toml"):
                tool = data.get("tool", {}).get("tox", {}) if isinstance(data.get("tool"), dict) else {}
                if isinstance(tool.get("legacy_tox_ini"), str):
                    plan = tox_commands(tool["legacy_tox_ini"], envs, posargs, root)
                else:
                    plan = _tox_toml_commands(tool, envs, posargs)
            else:
                plan = _tox_toml_commands(data, envs, posargs)
        elif found.endswith("setup.cfg"):
            plan = tox_commands(body.replace("[tox:tox]", "[tox]"), envs, posargs, root)
        else:
            plan = tox_commands(body, envs, posargs, root)
    except ValueError as e:
        wk.unverifiable(f"tox: {found} cannot be read ({e})", text)
        return True
    for envname, lines in plan.items():
        for line in lines:
            wk.run_in(line, ctx.sub(f"tox:{envname}", wrapper=name), f"tox {envname}", text, cwd=root)
    return True


# ================================================================ nox

def nox_sessions(code: str) -> tuple[dict, list | None]:
    """({session name: body text}, the default sessions from ``nox.options.sessions`` or None)."""
    lines = code.split("\n")
    sessions: dict = {}
    defaults = None
    i = 0
    pending = None
    while i < len(lines):
        line = lines[i]
        s = line.strip()
        if s.startswith("nox.options.sessions") and "=" in s:
            from swarmgate.hooks.code_literals import string_literals
            defaults = [lit for lit, _ in string_literals(s.split("=", 1)[1])]
        if s.startswith(("@nox.session", "@session")):
            pending = None
            if "name=" in s:
                from swarmgate.hooks.code_literals import string_literals
                after = s.split("name=", 1)[1]
                lits = string_literals(after)
                pending = lits[0][0] if lits else None
            pending = pending or ""
            i += 1
            continue
        if pending is not None and s.startswith("def "):
            fname = s[4:].split("(", 1)[0].strip()
            indent = len(line) - len(line.lstrip())
            body = [line]
            j = i + 1
            while j < len(lines):
                nl = lines[j]
                if nl.strip() and len(nl) - len(nl.lstrip()) <= indent and not nl.strip().startswith(")"):
                    break
                body.append(nl)
                j += 1
            sessions[pending or fname] = "\n".join(body)
            if pending and pending != fname:
                sessions.setdefault(fname, sessions[pending])
            pending = None
            i = j
            continue
        i += 1
    return sessions, defaults


def run_nox(wk, name, args, largs, env, ctx, text):
    i, n = 0, len(args)
    chosen = None
    nfile = None
    while i < n:
        a = args[i]
        if a in ("-l", "--list", "--list-sessions", "-h", "--help", "--version", "--json"):
            return True
        if a == "--":
            break
        if a in ("-s", "-e", "--session", "--sessions"):
            i += 1
            while i < n and not args[i].startswith("-"):
                if largs[i] >= 0:
                    wk.unverifiable("nox runs sessions whose names cannot be read statically", text)
                    return True
                chosen = (chosen or []) + [args[i]]
                i += 1
            continue
        v, j = _opt(args, i, ("-f", "--noxfile"))
        if v is not None:
            nfile, i = v, j
            continue
        if a in ("-k", "--keywords", "-t", "--tags", "-p", "--python", "--pythons"):
            chosen = None if a.startswith(("-p", "--py")) else ["*"]
            i += 2
            continue
        i += 1
    here = wk.project_dir()
    if here is None:
        wk.unverifiable("nox: cannot tell which directory it runs in", text)
        return True
    path = os.path.normpath(os.path.join(here, nfile or "noxfile.py"))
    if not (os.path.isfile(path) or path in wk.written):
        return True
    code = wk.read_project_file(path, text, "nox")
    if code is None:
        return True
    sessions, defaults = nox_sessions(code)
    picks = chosen if chosen and chosen != ["*"] else (defaults if defaults and chosen is None else list(sessions))
    bodies = []
    for s in picks:
        body = sessions.get(s.split("(", 1)[0].split("-", 1)[0] if s not in sessions else s)
        if body is None:
            body = code   # a parametrised or unknown name: the whole file
        bodies.append((s, body))
    # the module level runs for every session too
    top = "\n".join(ln for ln in code.split("\n") if ln and not ln[0].isspace() and not ln.startswith(("def ", "@")))
    bodies.append(("<module>", top))
    for sname, body in bodies:
        wk.an.programs.append(Program("nox", body, text, os.path.dirname(path),
                                      ctx.via + (f"nox:{sname}",), "file"))
    return True


# ================================================================ ninja

def parse_ninja(text: str, read_include=None, depth: int = 0):
    """(edges [(outs, rule, ins, vars)], rules {name: vars}, top vars, defaults)."""
    lines = []
    buf = ""
    for raw in text.split("\n"):
        if raw.endswith("$") and not raw.endswith("$$"):
            buf += raw[:-1]
            continue
        lines.append(buf + raw)
        buf = ""
    if buf:
        lines.append(buf)
    top: dict = {}
    rules: dict = {}
    edges: list = []
    defaults: list = []
    cur = None
    for line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[0] in " \t":
            if cur is not None and "=" in line:
                k, _, v = line.strip().partition("=")
                cur[k.strip()] = v.strip()
            continue
        cur = None
        s = line.strip()
        if s.startswith("rule "):
            cur = rules.setdefault(s[5:].strip(), {})
        elif s.startswith("build "):
            head, _, rest = s[6:].partition(":")
            rparts = rest.split()
            rule = rparts[0] if rparts else "phony"
            ins = [x for x in rparts[1:] if x not in ("|", "||", "|@")]
            evars: dict = {}
            edges.append(([o for o in head.split() if o != "|"], rule, ins, evars))
            cur = evars
        elif s.startswith("default "):
            defaults.extend(s[8:].split())
        elif s.startswith(("include ", "subninja ")):
            if read_include is not None and depth < 4:
                inc = read_include(s.split(None, 1)[1].strip())
                if inc is None:
                    raise ValueError(f"cannot read {s}")
                e2, r2, t2, d2 = parse_ninja(inc, read_include, depth + 1)
                edges.extend(e2)
                rules.update(r2)
                top.update(t2)
                defaults.extend(d2)
        elif s.startswith("pool "):
            cur = {}
        elif "=" in s:
            k, _, v = s.partition("=")
            top[k.strip()] = v.strip()
        else:
            raise ValueError(f"cannot read {s!r}")
    return edges, rules, top, defaults


def _ninja_expand(s: str, scopes, level: int = 0) -> str:
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c != "$" or i + 1 >= len(s):
            out.append(c)
            i += 1
            continue
        nx = s[i + 1]
        if nx in "$ :\n":
            out.append(nx)
            i += 2
            continue
        if nx == "{":
            j = s.find("}", i)
            name = s[i + 2:j] if j > 0 else ""
            i = j + 1 if j > 0 else len(s)
        else:
            j = i + 1
            while j < len(s) and (s[j].isalnum() or s[j] in "_-"):
                j += 1
            name = s[i + 1:j]
            i = j
        if name in ("in", "out", "in_newline"):
            out.append("$NINJA_" + name.upper())
            continue
        val = None
        for sc in scopes:
            if name in sc:
                val = sc[name]
                break
        if val is None or level > 8:
            out.append("${NINJA_" + ("".join(ch if ch.isalnum() else "_" for ch in name) or "x") + "}")
        else:
            out.append(_ninja_expand(val, scopes, level + 1))
    return "".join(out)


def run_ninja(wk, name, args, largs, env, ctx, text):
    i, n = 0, len(args)
    cdir = nfile = None
    targets = []
    while i < n:
        a = args[i]
        if a in ("-n", "--dry-run", "-h", "--help", "--version") or a.startswith("-t"):
            return True
        v, j = _opt(args, i, ("-C",))
        if v is not None:
            cdir, i = v, j
            continue
        v, j = _opt(args, i, ("-f",))
        if v is not None:
            nfile, i = v, j
            continue
        if a in ("-j", "-k", "-l", "-d", "-w"):
            i += 2
            continue
        if a.startswith("-"):
            i += 1
            continue
        targets.append(a)
        i += 1
    here = wk.project_dir()
    if here is None:
        wk.unverifiable(f"{name}: cannot tell which directory it runs in", text)
        return True
    bdir = os.path.normpath(os.path.join(here, cdir)) if cdir else here
    path = os.path.normpath(os.path.join(bdir, nfile or "build.ninja"))
    if not (os.path.isfile(path) or path in wk.written):
        return True
    body = wk.read_project_file(path, text, name)
    if body is None:
        return True

    def read_include(rel):
        return wk.read_project_file(os.path.normpath(os.path.join(bdir, rel)), text, name)
    try:
        edges, rules, top, defaults = parse_ninja(body, read_include)
    except ValueError as e:
        wk.unverifiable(f"{name}: {path} cannot be read ({e})", text)
        return True
    by_out = {}
    for e in edges:
        for o in e[0]:
            by_out.setdefault(o, e)
    want = targets or defaults or [o for e in edges for o in e[0]]
    seen_edges: set = set()
    texts: list = []
    stack = list(want)
    while stack and len(seen_edges) < 4096:
        t = stack.pop()
        e = by_out.get(t)
        if e is None or id(e) in seen_edges:
            continue
        seen_edges.add(id(e))
        stack.extend(e[2])
        if e[1] == "phony":
            continue
        rule = rules.get(e[1], {})
        cmd = rule.get("command")
        if not cmd:
            continue
        body_text = _ninja_expand(cmd, (e[3], rule, top))
        if body_text not in texts:
            texts.append(body_text)
    if stack:
        wk.unverifiable(f"{name}: too many build edges to follow", text)
    for t in texts[:_MAX_STEPS]:
        wk.run_in(t, ctx.sub(f"{name}:build", wrapper=name), f"{name} rule", text, cwd=bdir)
    if len(texts) > _MAX_STEPS:
        wk.unverifiable(f"{name}: more than {_MAX_STEPS} distinct commands to read", text)
    return True
