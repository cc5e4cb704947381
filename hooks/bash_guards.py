"""The Bash guards (SPEC §4.3): B01 heavy test, B02 heavy needs the cap, B10 run scope,
B30 unbounded wait loops, B31 nested background, and G01's shell side.

Judging only. The command is parsed once per hook call by
``swarmgate.hooks.bash_tree.analyze`` (shared by every shell guard through
``event.derived("bash", ...)``); each check here is a pure function of that
analysis, the event (who acts) and the config. Data is not a command: only
the simple commands the tree says would execute are judged, so
`echo "cargo test --workspace"` or `git commit -m "..."` never match.

Decisions (also in docs/bash-guards.md):
- Unverifiable findings of the tree (text fed to a shell that cannot be read
  statically, `eval $VAR`, interpreter one-liners naming a heavy pattern,
  parse failures, scripts too large or binary) are reported under **B01**, as
  deny or ask per `[bash] unverifiable`, for every agent: B01 is the guard the
  bypasses were aimed at.
- The environment a command sees is its own prefix (`A=1 cmd`), the prefix of
  a wrapper it runs under (`A=1 run-with-memory-cap 8G -- cmd`, `env A=1 cmd`),
  or an `export A=1` earlier in the same command. A bare `A=1; cmd` is not
  exported and does not count.
- B02 judges only heavy commands B01 lets through (the main agent with the
  prefix, or any agent when B01 is off): the others already carry B01's way out.
- B10 kind=full on a narrowed command passes (declaring more than is run
  harms nothing); kind=items/light/target on a whole-suite command is refused.
- B30 counts a loop as bounded by a `timeout` around it, a `read` condition
  (ends at end of input), or a numeric comparison (a counter, `$SECONDS`) in
  its condition or guarding a `break`. A `break` on any other condition
  (`until curl -s ...`) does not bound a wait: the service may never come.
"""
from __future__ import annotations

from swarmgate import guard as G

SCOPE_FIELDS = ("kind", "target", "range", "reason")
SCOPE_KINDS = ("full", "items", "light", "target")
# arguments with which a test runner only lists, builds or explains: not a verification run (B10)
_NOT_A_RUN = frozenset(("--version", "-V", "--help", "-h", "--collect-only", "--co", "--fixtures",
                        "--markers", "--no-run", "--list"))
_MAKE_DRY = frozenset(("-n", "--dry-run", "--just-print", "--recon", "-q", "--question", "-p",
                       "--print-data-base"))
_SCOPE_ALIASES = {"種類": "kind", "対象": "target", "範囲": "range", "理由": "reason"}
_EXPORTERS = ("export", "declare", "typeset", "local", "readonly")
_SETTERS = frozenset(_EXPORTERS + ("env",))
_NUMERIC_OPS = frozenset(("-lt", "-le", "-gt", "-ge", "-eq", "-ne"))
# commands that start other commands with their own environment
_LAUNCHERS = frozenset(("bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "env", "nice", "nohup", "setsid",
                        "stdbuf", "ionice", "exec", "builtin", "time", "doas", "sudo", "flock", "command",
                        "timeout", "chrt", "taskset", "xargs", "watch", "parallel", "srun", "systemd-run",
                        "run-with-memory-cap", "host-dispatch", "multi-host-run", "gpu-quiesce-run",
                        "detached-run", "eval", "source", ".", "find", "swarmgate"))


# ---------------------------------------------------------------- shared parse

def broken(event, name: str) -> bool:
    """break_switch.broken(name), read once per event (the environment does not change within one)."""
    b = event.memo.get("break-switches")
    if b is None:
        import os

        from swarmgate import break_switch as bs
        b = bs.requested() if os.environ.get(bs.BREAK_ENV) and bs.marker_valid() else frozenset()
        event.memo["break-switches"] = b
    return name in b


def analysis_of(event, config):
    """The parsed command of a Bash/Monitor call, built once per event; None when there is none."""
    memo = event.memo
    if "bash" in memo:
        return memo["bash"]
    text = event.shell_command
    if not isinstance(text, str) or not text.strip():
        memo["bash"] = None
        return None

    def build():
        import time

        from swarmgate.hooks.bash_tree import analyze
        from swarmgate.hooks.code_scan import unverifiable_programs

        b = config["bash"]
        budget_s = b["budget_ms"] / 1000.0
        an = analyze(text, cwd=event.cwd or event.repo or ".",
                     max_depth=int(b["max_depth"]), budget_s=budget_s,
                     max_script_bytes=int(b["max_script_bytes"]))
        # the reader records interpreter programs; judging them against the patterns is ours
        an.unverifiable.extend(unverifiable_programs(an, config["heavy"]["patterns"],
                                                     deadline=time.monotonic() + budget_s))
        return an
    return event.derived("bash", build)


def assignments_of(cmd) -> dict:
    """A command's prefix assignments as {name: value}, whatever shape the tree gives."""
    a = getattr(cmd, "assignments", None)
    if not a:
        return {}
    if isinstance(a, dict):
        return {str(k): str(v) for k, v in a.items()}
    out = {}
    for item in a:
        if isinstance(item, (tuple, list)) and len(item) == 2:
            out[str(item[0])] = str(item[1])
        else:
            k, _, v = str(item).partition("=")
            out[k] = v
    return out


def _export_pairs(cmd) -> dict:
    """`export A=1 B=2`, `declare -x A=1`, `env A=1` (as words): the pairs they set."""
    out = {}
    if not cmd.words:
        return out
    name = cmd.name
    if name in _EXPORTERS or name == "env":
        for a in cmd.args:
            if a.startswith("-"):
                continue
            k, eq, v = a.partition("=")
            if eq and k.replace("_", "a").isalnum():
                out[k] = v
            elif name == "env":
                break
    return out


def command_env(analysis, idx: int) -> dict:
    """The variables command ``idx`` of ``analysis.commands`` is started with, as far as the text says."""
    cmds = analysis.commands
    env: dict = {}
    bare: dict = {}
    for j in range(idx):
        c = cmds[j]
        if not c.words:
            bare.update(assignments_of(c))
            continue
        if c.name in _EXPORTERS:
            for a in c.args:
                if not a.startswith("-") and "=" not in a and a in bare:
                    env[a] = bare[a]
        env.update(_export_pairs(c) if c.name in _EXPORTERS else {})
    cmd = cmds[idx]
    # the environment of the commands that started this one (a shell running `-c TEXT` or a
    # script, a wrapper): every variable they were given is inherited
    for p in reversed(launchers(cmds, idx)):
        env.update(assignments_of(p))
    env.update(assignments_of(cmd))
    return env


def launchers(cmds, idx: int) -> list:
    """The commands that started command ``idx`` (a shell given `-c TEXT` or a script, a wrapper
    such as env/timeout/run-with-memory-cap), innermost first: the tree yields them before it."""
    chain = []
    via = tuple(getattr(cmds[idx], "via", ()) or ())
    for j in range(idx - 1, -1, -1):
        if not via:
            break
        p = cmds[j]
        pv = tuple(getattr(p, "via", ()) or ())
        if len(pv) < len(via) and via[:len(pv)] == pv and p.words and (
                p.name in _LAUNCHERS or "/" in p.words[0]):
            chain.append(p)
            via = pv
    return chain


def _scope_prefix(event, config, cmd, env) -> str:
    """`SWARMGATE_RUN_SCOPE='...' ` to put in a rewrite when the command is a verification run
    that has no scope yet (so following one way out does not walk into B10)."""
    from swarmgate.hooks.command_patterns import first_match

    sc = config["scope"]
    if sc["prefix_var"] in env or not first_match(cmd, sc["verify_patterns"], cwd=event.cwd or event.repo,
                                                  repo=event.repo):
        return ""
    full = first_match(cmd, sc["full_patterns"], cwd=event.cwd or event.repo, repo=event.repo) or whole_suite(cmd)
    return _scope_template(sc["prefix_var"], "full" if full else "items") + " "


def _rewrite_target(analysis, idx: int) -> str:
    """What to put after `run-with-memory-cap CAP --`: the outermost command that leads to the
    heavy one (`bash scripts/verify.sh`, not the script's line), without its prefix, wrappers kept."""
    chain = launchers(analysis.commands, idx)
    top = chain[-1] if chain else analysis.commands[idx]
    if top.name in ("run-with-memory-cap", "host-dispatch", "multi-host-run"):
        top = chain[-2] if len(chain) >= 2 else analysis.commands[idx]
    return _core_text(top)


# ---------------------------------------------------------------- helpers

def _short(text: str, n: int = 120) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= n else text[: n - 3] + "..."


def _cmd_text(cmd) -> str:
    t = getattr(cmd, "text", "") or ""
    if not t.strip():
        t = " ".join(cmd.words)
    return _short(t)


def _core_text(cmd) -> str:
    """The command's own words (no prefix), for rewrites."""
    return _short(" ".join(_quote(w) for w in cmd.words), 200)


def _quote(w: str) -> str:
    safe = "@%+=:,./-_"
    if w and all(c.isalnum() or c in safe for c in w):
        return w
    return "'" + w.replace("'", "'\"'\"'") + "'"


def _runner_of(cmd, runners) -> str | None:
    names = set(runners)
    for w in tuple(getattr(cmd, "wrappers", ()) or ()) + tuple(getattr(cmd, "via", ()) or ()):
        base = w.split()[0].rsplit("/", 1)[-1] if w else ""
        if base in names or w in names:
            return base
    return None


def not_a_run(cmd) -> bool:
    """The runner only lists, builds, explains or dry-runs (`--no-run`, `--help`, `make -n`)."""
    args = cmd.args
    if any(a in _NOT_A_RUN for a in args):
        return True
    if cmd.name in ("make", "gmake"):
        return any(a in _MAKE_DRY or (a.startswith("-") and not a.startswith("--")
                                      and ("n" in _letters(a[1:]) or "q" in _letters(a[1:])))
                   for a in args)
    return False


def _letters(cluster: str) -> str:
    """The option letters of a short cluster before any value (`-nj4` -> "nj")."""
    out = []
    for c in cluster:
        if not c.isalpha():
            break
        out.append(c)
        if c in "jlCfIoW":   # make options whose value may follow in the same word
            break
    return "".join(out)


def _heavy_match(cmd, config, cwd, repo) -> str | None:
    from swarmgate.hooks.command_patterns import first_match

    if not_a_run(cmd):
        return None
    hit = first_match(cmd, config["heavy"]["patterns"], cwd=cwd, repo=repo)
    if hit:
        return hit
    targets = config["bash"]["make_targets"]
    if targets and cmd.words and cmd.name in ("make", "gmake"):
        skip = False
        for a in cmd.args:
            if skip:
                skip = False
                continue
            if a in ("-C", "-f", "-j", "-l", "-o", "-W", "--directory", "--file", "--makefile"):
                skip = True
                continue
            if a in targets:
                return f"make {a}"
    return None


def _runnable(cmds):
    """(index, command) for every command with words (assignment-only entries skipped)."""
    return [(i, c) for i, c in enumerate(cmds) if c.words]


def _heavy_value(env: dict, config) -> str | None:
    v = env.get(config["heavy"]["prefix_var"])
    return v if v in config["heavy"]["prefix_values"] else None


def heavy_commands(event, config):
    """[(index, cmd, pattern)] heavy commands of the event's shell command (cached per event)."""
    analysis = analysis_of(event, config)
    if analysis is None:
        return []

    def build():
        cwd = event.cwd or event.repo
        out = []
        seen = set()
        for i, c in _runnable(analysis.commands):
            hit = _heavy_match(c, config, cwd, event.repo)
            if hit:
                seen.add(id(c))
                # one started by another heavy command (a heavy gate script's lines) is judged through it
                if not any(id(p) in seen for p in launchers(analysis.commands, i)):
                    out.append((i, c, hit))
        return out
    return event.derived("bash.heavy", build)


_CAP_HINTS: dict = {}


def _cap_hint(config) -> str:
    """The cap to suggest: the config's default prediction, as run-with-memory-cap takes it."""
    n = config["memory"]["default_prediction"]
    hint = _CAP_HINTS.get(n)
    if hint is None:
        gib = int(n) / (1 << 30) if isinstance(n, int) else 8
        hint = f"{int(gib)}G" if gib >= 1 and gib == int(gib) else f"{max(1, int(int(n) / (1 << 20)))}M"
        _CAP_HINTS[n] = hint
    return hint


_PATTERN_KEYS = (("heavy", "patterns"), ("scope", "verify_patterns"), ("scope", "full_patterns"))


def pattern_problem(event, config, code: str):
    """A refusal naming the config key when a command pattern cannot be read, else None."""
    ok = event.memo.get("bash.patterns-ok")
    if ok:
        return None
    from swarmgate.hooks.command_patterns import PatternError, compile_all

    for section, key in _PATTERN_KEYS:
        try:
            compile_all(config[section][key])
        except PatternError as e:
            where = getattr(config, "path", None) or ".claude/swarmgate.toml"
            return G.Finding(code, f"{where}: [{section}] {key}: {e}; shell commands cannot be judged "
                                   f"until it is fixed, so they are refused.",
                             f"fix the pattern in [{section}] {key} (close the quote).")
    event.memo["bash.patterns-ok"] = True
    return None


# ---------------------------------------------------------------- B01

def check_b01(event, config):
    analysis = analysis_of(event, config)
    if analysis is None:
        return None
    bad = pattern_problem(event, config, "B01")
    if bad:
        return bad
    findings = []
    var = config["heavy"]["prefix_var"]
    values = config["heavy"]["prefix_values"]
    if not broken(event, "b01-allow-unverifiable"):
        decision = G.ASK if config["bash"]["unverifiable"] == "ask" else G.DENY
        for u in getattr(analysis, "unverifiable", ()) or ():
            reason = getattr(u, "reason", str(u))
            text = getattr(u, "text", "")
            shown = _short(text, 100)
            what = reason if not shown or shown in reason else f"{reason}: `{shown}`"
            findings.append(G.Finding(
                "B01",
                f"this command cannot be read statically ({what}), so swarmgate "
                f"cannot tell whether it starts a heavy test.",
                "write the commands into a script file and run it by path (`bash ./script.sh`), or run "
                "them directly, so every command can be read before it runs.",
                decision))
            break
    if broken(event, "b01-allow-heavy"):
        return findings
    cap = _cap_hint(config)
    for i, cmd, pat in heavy_commands(event, config):
        where = _via_text(cmd)
        if event.is_subagent:
            findings.append(G.Finding(
                "B01",
                f"heavy test refused: `{_cmd_text(cmd)}`{where} matches the heavy pattern `{pat}`, and "
                f"heavy tests belong to the main agent (subagent `{event.actor}` may not run them: "
                f"several copies at full load take the machine for hours).",
                "do not run it. Run the narrow tests of your change instead (one package, one test "
                "file, one test id) and write in your report that the heavy run is still due; the "
                "main agent runs it at commit time."))
            continue
        env = command_env(analysis, i)
        if env.get(var) in values:
            continue
        got = f" ({var}={env[var]!r} is not one of {', '.join(values)})" if var in env else ""
        findings.append(G.Finding(
            "B01",
            f"heavy test refused: `{_cmd_text(cmd)}`{where} matches the heavy pattern `{pat}` and is not "
            f"prefixed with {var}=commit or {var}=user-request{got}.",
            f"run it only when committing or when the user asked for it, as "
            f"`{var}=commit {_scope_prefix(event, config, cmd, env)}run-with-memory-cap {cap} -- "
            f"{_rewrite_target(analysis, i)}` "
            f"(or {var}=user-request)."))
    return findings


def _via_text(cmd) -> str:
    via = [v for v in (getattr(cmd, "via", ()) or ()) if v not in ("pipeline", "list")]
    if not via:
        return ""
    return " (reached through " + " → ".join(via) + ")"


# ---------------------------------------------------------------- B02

def check_b02(event, config):
    if broken(event, "b02-allow-uncapped"):
        return None
    analysis = analysis_of(event, config)
    if analysis is None:
        return None
    bad = pattern_problem(event, config, "B02")
    if bad:
        return bad
    b01_on = config.guard_mode("B01") == "on"
    runners = config["heavy"]["runners"]
    var = config["heavy"]["prefix_var"]
    cap = _cap_hint(config)
    findings = []
    for i, cmd, pat in heavy_commands(event, config):
        env = command_env(analysis, i)
        approved = env.get(var) in config["heavy"]["prefix_values"]
        if b01_on and (event.is_subagent or not approved):
            continue   # B01 refuses it and says how
        if _runner_of(cmd, runners):
            continue
        value = env.get(var) or "commit"
        findings.append(G.Finding(
            "B02",
            f"heavy command `{_cmd_text(cmd)}` (pattern `{pat}`) does not run through "
            f"{' / '.join(runners)}: uncapped, one run can take the whole machine's memory and every "
            f"agent's work with it.",
            f"run `{var}={value} {_scope_prefix(event, config, cmd, env)}run-with-memory-cap {cap} -- "
            f"{_rewrite_target(analysis, i)}` "
            f"(or `host-dispatch -- ...` to let swarmgate pick the host and the cap)."))
    return findings


# ---------------------------------------------------------------- B10

def parse_scope(value: str) -> dict:
    """`kind=items; target=...; range=...; reason=...` as a dict (keys lower-cased; 種類/対象/範囲/理由 accepted)."""
    out = {}
    text = value.replace("；", ";").replace("＝", "=")
    for part in text.split(";"):
        k, eq, v = part.partition("=")
        if not eq:
            continue
        k = k.strip()
        k = _SCOPE_ALIASES.get(k, k.lower())
        out[k] = v.strip()
    return out


_PYTEST_VALUE_OPTS = frozenset(("-p", "-c", "-o", "-W", "-n", "--tb", "--maxfail", "--junitxml",
                                "--junit-xml", "--rootdir", "--basetemp", "--durations", "--cov",
                                "--cov-report", "--ignore", "--ignore-glob", "--deselect", "--confcutdir",
                                "--log-level", "--timeout", "-r", "--import-mode", "--capture",
                                "--dist", "--color", "--override-ini", "--cov-config"))
_PYTEST_NARROW_OPTS = frozenset(("-k", "-m", "--lf", "--last-failed", "--sw", "--stepwise"))
_CARGO_NARROW = frozenset(("-p", "--package", "--lib", "--bin", "--bins", "--test", "--tests",
                           "--bench", "--benches", "--example", "--examples", "--doc"))
_CARGO_VALUE_OPTS = frozenset(("-j", "--jobs", "--features", "-F", "--target", "--target-dir",
                               "--profile", "--manifest-path", "--color", "--message-format",
                               "-Z", "--config", "--exclude"))


def whole_suite(cmd) -> str | None:
    """Why this verification command runs the whole suite (pytest/cargo test shapes), or None."""
    from swarmgate.hooks.command_patterns import basename, views

    for name, args in views(basename(cmd.name), list(cmd.args)):
        name = basename(name)
        if name in ("pytest", "py.test"):
            skip = False
            narrowed = False
            for a in args:
                if skip:
                    skip = False
                    continue
                opt = a.split("=", 1)[0]
                if opt in _PYTEST_NARROW_OPTS:
                    narrowed = True
                    break
                if opt in _PYTEST_VALUE_OPTS and "=" not in a:
                    skip = True
                    continue
                if a.startswith("-"):
                    continue
                if a not in (".", "./"):
                    narrowed = True
                    break
            if not narrowed:
                return "`pytest` with no path, test id, -k or -m runs the whole suite"
        if name == "cargo" and "test" in args:
            rest = args[args.index("test") + 1:]
            if "--workspace" in rest or "--all" in rest:
                return "`cargo test --workspace` runs every crate's tests"
            skip = False
            for a in rest:
                if a == "--":
                    break
                if skip:
                    skip = False
                    continue
                opt = a.split("=", 1)[0]
                if opt in _CARGO_NARROW:
                    return None
                if opt in _CARGO_VALUE_OPTS and "=" not in a:
                    skip = True
                    continue
                if a.startswith("-"):
                    continue
                return None  # a test-name filter
            return "`cargo test` with no package, target or test filter runs the whole suite"
    return None


def _scope_template(var: str, kind: str = "items") -> str:
    return (f"{var}='kind={kind}; target=<what you run>; range=<how much of it>; "
            f"reason=<why this run, now>'")


def check_b10(event, config):
    from swarmgate.hooks.command_patterns import first_match

    analysis = analysis_of(event, config)
    if analysis is None:
        return None
    bad = pattern_problem(event, config, "B10")
    if bad:
        return bad
    sc = config["scope"]
    var = sc["prefix_var"]
    min_reason = int(sc["min_reason"])
    cwd = event.cwd or event.repo
    findings = []
    for i, cmd in _runnable(analysis.commands):
        pat = first_match(cmd, sc["verify_patterns"], cwd=cwd, repo=event.repo)
        if not pat or not_a_run(cmd):
            continue
        chain = launchers(analysis.commands, i)
        if any(first_match(p, sc["verify_patterns"], cwd=cwd, repo=event.repo) for p in chain):
            continue   # started by a verification run (a gate script running pytest): that one is judged
        ctext = _core_text(chain[-1] if chain else cmd)   # the scope is inherited: prefix what was typed
        env = command_env(analysis, i)
        raw = env.get(var)
        if raw is None:
            if broken(event, "b10-allow-missing-scope"):
                continue
            wide = not event.is_subagent and (
                first_match(cmd, sc["full_patterns"], cwd=cwd, repo=event.repo) or whole_suite(cmd))
            findings.append(G.Finding(
                "B10",
                f"verification run `{_cmd_text(cmd)}`{_via_text(cmd)} (pattern `{pat}`) has no run scope: "
                f"say what you run and why before you run it.",
                f"prefix it: `{_scope_template(var, 'full' if wide else 'items')} {ctext}` (kind: full | "
                f"items | light | target; reason at least {min_reason} characters)."))
            continue
        scope = parse_scope(raw)
        missing = [f for f in SCOPE_FIELDS if not scope.get(f)]
        if missing and not broken(event, "b10-allow-missing-scope"):
            findings.append(G.Finding(
                "B10",
                f"run scope of `{_cmd_text(cmd)}` lacks {', '.join(missing)}: all four fields "
                f"(kind, target, range, reason) are required.",
                f"prefix it: `{_scope_template(var, scope.get('kind') or 'items')} {ctext}`."))
            continue
        if missing:
            continue
        kind = scope["kind"].lower()
        if kind not in SCOPE_KINDS:
            findings.append(G.Finding(
                "B10", f"run scope kind={scope['kind']!r} is not one of {', '.join(SCOPE_KINDS)}.",
                f"use kind=full (the whole suite), items (named items), light or target (one target)."))
            continue
        if len(scope["reason"]) < min_reason and not broken(event, "b10-allow-short-reason"):
            findings.append(G.Finding(
                "B10",
                f"run scope reason {scope['reason']!r} has {len(scope['reason'])} character(s); at least "
                f"{min_reason} are required: say why this run, now.",
                "write a reason that says what changed and why this run covers it, e.g. "
                "`reason=changed only the parser; its unit tests cover it`."))
        if kind == "full" and event.is_subagent and not broken(event, "b10-allow-subagent-full"):
            findings.append(G.Finding(
                "B10",
                f"subagent `{event.actor}` may not start a kind=full run (`{_cmd_text(cmd)}`): whole-suite "
                f"runs belong to the main agent.",
                "narrow the run to the items your change touches and declare kind=items (or target), "
                "e.g. one package or one test file."))
            continue
        if kind != "full" and not broken(event, "b10-allow-kind-mismatch"):
            full_pat = first_match(cmd, sc["full_patterns"], cwd=cwd, repo=event.repo)
            why = f"it matches the whole-suite pattern `{full_pat}`" if full_pat else whole_suite(cmd)
            if why:
                findings.append(G.Finding(
                    "B10",
                    f"run scope says kind={kind} but `{_cmd_text(cmd)}` runs the whole suite ({why}).",
                    "narrow the command to what the scope names (a path, a test id, `-k`, `-p CRATE`), "
                    "or, as the main agent, declare kind=full with its reason."))
    return findings


# ---------------------------------------------------------------- B30

def _is_numeric_test(cmd) -> bool:
    if not cmd.words:
        return False
    name = cmd.name
    args = list(cmd.args)
    if name in ("[", "test", "[["):
        return any(a in _NUMERIC_OPS for a in args)
    if name in ("let", "expr"):
        return any(op in " ".join(args) for op in ("<", ">", "==", "!="))
    return False


def _cmds_of(loop, attr):
    return [c for c in (getattr(loop, attr, ()) or ()) if getattr(c, "words", None)]


def _split_loop_text(loop) -> tuple:
    """(condition text, body text) of a while/until loop, from its source text."""
    import re

    text = getattr(loop, "text", "") or ""
    m = re.match(r"\s*(?:while|until)\b(.*?)(?:;|\n|\s)\s*do\b(.*)", text, re.S)
    if not m:
        return "", text
    return m.group(1), m.group(2)


_TEXT_NUMERIC = None


def _text_has_counter(text: str) -> bool:
    """A numeric comparison in [[ ]] / (( )) / [ ] text, or the $SECONDS clock."""
    global _TEXT_NUMERIC
    if _TEXT_NUMERIC is None:
        import re
        _TEXT_NUMERIC = re.compile(r"\s-(?:lt|le|gt|ge|eq|ne)\s|\(\([^)]*(?:<|>|==|!=)[^)]*\)\)|\$\{?SECONDS\b")
    return bool(_TEXT_NUMERIC.search(text))


def loop_bound(loop) -> str | None:
    """What bounds a while/until loop, or None."""
    cond = _cmds_of(loop, "condition_commands")
    body = _cmds_of(loop, "body_commands")
    every = cond + body
    if every and all(any((w.split()[0] if w else "") == "timeout"
                         for w in tuple(getattr(x, "wrappers", ()) or ()) + tuple(getattr(x, "via", ()) or ()))
                     for x in every):
        # a timeout around the loop shows on every command of it; one on a single
        # command inside only bounds that command
        return "a timeout around it"
    if any(c.name in ("read", "mapfile", "readarray", "getopts", "shift") for c in cond):
        return "its condition reads input (ends at end of input)"
    if any(_is_numeric_test(c) for c in cond):
        return "a counter compared in its condition"
    cond_text, body_text = _split_loop_text(loop)
    if _text_has_counter(cond_text):
        return "a counter compared in its condition"
    if getattr(loop, "has_break", False) and (any(_is_numeric_test(c) for c in body)
                                              or _text_has_counter(body_text)):
        return "a counter guarding a break"
    return None


def _always_true(loop) -> bool:
    cond = _cmds_of(loop, "condition_commands")
    kind = getattr(loop, "kind", "")
    if not cond:
        ct = " ".join(_split_loop_text(loop)[0].split())
        if kind == "while":
            return ct in ("true", ":", "[ 1 ]", "(( 1 ))", "((1))")
        return ct == "false"
    if kind == "while":
        return all(c.name in ("true", ":") or (c.name in ("[", "test") and list(c.args) in (["1", "]"], ["1"]))
                   for c in cond)
    return all(c.name == "false" for c in cond)


def check_b30(event, config):
    if broken(event, "b30-allow-unbounded-loops"):
        return None
    if event.tool_name == "Monitor":
        return None   # the Monitor tool kills its command at timeout_ms (30 min at most): bounded
    analysis = analysis_of(event, config)
    if analysis is None:
        return None
    findings = []
    for loop in getattr(analysis, "loops", ()) or ():
        kind = getattr(loop, "kind", "")
        if kind not in ("while", "until"):
            continue
        cmds = _cmds_of(loop, "condition_commands") + _cmds_of(loop, "body_commands")
        sleeps = any(c.name == "sleep" for c in cmds)
        if not sleeps and not (_always_true(loop) and not getattr(loop, "has_break", False)):
            continue
        if loop_bound(loop):
            continue
        text = _short(getattr(loop, "text", "") or "", 100)
        findings.append(G.Finding(
            "B30",
            f"wait loop with no bound: `{text}` polls with no timeout and no counter; if what it waits "
            f"for never comes it runs forever and holds the session.",
            f"bound it: `timeout 600 bash -c '<the loop>'`, or count tries "
            f"(`n=0; until <check> || [ $n -ge 60 ]; do sleep 5; n=$((n+1)); done`)."))
    return findings


# ---------------------------------------------------------------- B31

def check_b31(event, config):
    if broken(event, "b31-allow-nested-background"):
        return None
    analysis = analysis_of(event, config)
    if analysis is None:
        return None
    nested = list(getattr(analysis, "nested_background", ()) or ())
    if (event.tool_input.get("run_in_background") is True or event.tool_name == "Monitor") and not nested:
        for c in analysis.commands:
            if getattr(c, "background", 0):
                nested.append(getattr(c, "text", "") or " ".join(c.words))
                break
    if not nested:
        return None
    return G.Finding(
        "B31",
        f"nested background: `{_short(nested[0], 100)}` is sent to the background inside something "
        f"already in the background; nobody waits for it, its exit code is lost and it outlives the "
        f"session (orphan jobs are how machines fill up unseen).",
        "background once: run the command in the foreground inside the background job, or use "
        "Bash's run_in_background (without `&`), or `detached-run start --label NAME -- CMD` for "
        "jobs that must outlive the session.")


# ---------------------------------------------------------------- G01 (shell side)

def check_g01_shell(event, config):
    analysis = analysis_of(event, config)
    if analysis is None:
        return None
    findings = []
    if not broken(event, "g01-allow-shell-writes"):
        from swarmgate.hooks.protected_paths import protected_reason
        from swarmgate.hooks.write_scope import shell_writes
        from swarmgate.state_paths import state_dir

        sd = str(state_dir())
        cwd = event.cwd or event.repo
        for _cmd, path, how, here in event.derived("bash.writes", lambda: list(shell_writes(analysis, cwd))):
            p = path
            for v in ("${SWARMGATE_STATE_DIR}", "$SWARMGATE_STATE_DIR"):
                if p.startswith(v):
                    p = sd + p[len(v):]
            if p.startswith(("$", "~")):
                continue
            why = protected_reason(p, cwd=here or cwd, repo=event.repo, state_dir=sd)
            if why:
                findings.append(G.Finding(
                    "G01", f"shell write refused ({how}): {why}. No agent may change what guards it.",
                    "leave this file alone; if the rule itself is wrong, tell the person, who edits it by "
                    "hand."))
                break
    if not broken(event, "g01-allow-hook-skip"):
        for c in analysis.commands:
            why = skips_git_hooks(c)
            if why:
                findings.append(G.Finding(
                    "G01", f"{why}: the commit gate (gate-staged in the pre-commit hook) guards what is "
                           f"committed, and no agent may switch off what guards it.",
                    "commit without skipping the hooks; if the gate is red, fix what it reports (or tell the "
                    "person why it is wrong)."))
                break
    if broken(event, "g01-allow-shell-env"):
        return findings
    heavy_var = config["heavy"]["prefix_var"]
    scope_var = config["scope"]["prefix_var"]
    for i, c in enumerate(analysis.commands):
        if not c.assignments and not (c.words and c.name in _SETTERS):
            continue
        pairs = dict(assignments_of(c))
        pairs.update(_export_pairs(c))
        if "SWARMGATE_BREAK" in pairs or (c.words and c.name in _EXPORTERS + ("env",) and any(
                a.split("=", 1)[0] == "SWARMGATE_BREAK" for a in c.args)):
            findings.append(G.Finding(
                "G01", "setting SWARMGATE_BREAK in a command is refused: break switches disable "
                       "protections and are honoured only inside `swarmgate selftest`.",
                "remove SWARMGATE_BREAK from the command; to prove a guard can turn red, run "
                "`swarmgate selftest CODE`."))
            break
        if event.is_subagent and heavy_var in pairs:
            findings.append(G.Finding(
                "G01", f"subagent `{event.actor}` sets {heavy_var}: only the main agent may declare a "
                       f"heavy run.",
                "remove the prefix; heavy tests are the main agent's (see B01)."))
            break
        if event.is_subagent and scope_var in pairs and parse_scope(pairs[scope_var]).get("kind", "").lower() == "full":
            findings.append(G.Finding(
                "G01", f"subagent `{event.actor}` sets {scope_var} with kind=full: whole-suite runs "
                       f"belong to the main agent.",
                "narrow the run and declare kind=items or kind=target."))
            break
    return findings


_GIT_VALUE_OPTS = frozenset(("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path",
                             "--config-env", "--super-prefix"))
_COMMIT_VALUE_LETTERS = "mFCctuS"


def _git_subcommand(args):
    """(subcommand, its arguments, the `-c k=v` settings) of `git ARGS`."""
    i, n = 0, len(args)
    settings = []
    while i < n:
        a = args[i]
        if a in _GIT_VALUE_OPTS:
            if a == "-c" and i + 1 < n:
                settings.append(args[i + 1])
            i += 2
            continue
        if a.startswith("-"):
            if a.startswith("--config-env=") or a.startswith("-c") and len(a) > 2:
                settings.append(a.split("=", 1)[-1] if a.startswith("--") else a[2:])
            i += 1
            continue
        return a, list(args[i + 1:]), settings
    return None, [], settings


def skips_git_hooks(cmd) -> str | None:
    """Why this git command switches off the repository's git hooks, or None."""
    if not cmd.words or cmd.name != "git":
        return None
    sub, rest, settings = _git_subcommand(list(cmd.args))
    for kv in settings:
        if kv.lower().startswith("core.hookspath"):
            return f"`git -c {kv}` points git at other hooks"
    if sub == "config":
        ops = [a for a in rest if not a.startswith("-")]
        if ops and ops[0].lower() == "core.hookspath" and (len(ops) > 1 or "--unset" in rest
                                                           or "--unset-all" in rest):
            return "`git config core.hooksPath` points git at other hooks"
        return None
    if sub in ("commit", "merge", "push", "cherry-pick", "revert", "am", "rebase"):
        for a in rest:
            if a == "--":
                break
            if a == "--no-verify":
                return f"`git {sub} --no-verify` skips the hooks"
            if sub == "commit" and a.startswith("-") and not a.startswith("--"):
                for ch in a[1:]:
                    if ch == "n":
                        return "`git commit -n` skips the hooks"
                    if ch in _COMMIT_VALUE_LETTERS:
                        break
    return None


# ---------------------------------------------------------------- registry

def _sub(command: str, **extra) -> dict:
    ti = {"command": command}
    ti.update(extra)
    return {"tool_name": "Bash", "agent_id": "a1", "agent_type": "implementer", "tool_input": ti}


def _main(command: str, **extra) -> dict:
    ti = {"command": command}
    ti.update(extra)
    return {"tool_name": "Bash", "tool_input": ti}


_SCOPE_FULL = "SWARMGATE_RUN_SCOPE='kind=full; target=workspace; range=all crates; reason=commit gate for this batch'"
_SCOPE_ITEMS = ("SWARMGATE_RUN_SCOPE='kind=items; target=parser tests; range=one file; "
                "reason=changed only the parser module'")

GUARDS = (
    G.Guard(
        code="B01",
        summary="heavy tests: never from a subagent; from the main agent only with SWARMGATE_HEAVY=commit|user-request",
        events=("PreToolUse",), tools=G.SHELL_TOOLS, check=check_b01,
        doc=G.GuardDoc(
            why="In one day several implementers each ran `cargo test --all` in their own copy, four to five "
                "hours at full load each. Heavy tests belong to the main agent, at commit time or when the "
                "user asks. The guard was bypassed by a script written to /tmp and run, so scripts at "
                "command position are read (each once per judgement, with a depth and time bound), and "
                "what cannot be read statically is refused or asked about, never silently allowed.",
            example="a subagent runs `cargo test --workspace`, or `bash /tmp/verify.sh` whose line 3 is "
                    "`cargo test --all`; the main agent runs `make check-full` with no prefix",
            instead="Subagents: run the narrow tests of the change and report that the heavy run is due. "
                    "Main agent: `SWARMGATE_HEAVY=commit run-with-memory-cap 8G -- cargo test --workspace`.",
            exceptions="Text that is only data (echo, grep, git commit -m, heredocs to non-shells) is not a "
                       "command. Unverifiable commands (base64 -d | bash, curl | sh, eval $VAR, python -c "
                       "naming a heavy pattern) are reported under B01 as deny or ask per [bash] unverifiable.",
        ),
        breaks={"b01-allow-heavy": "heavy commands pass for every agent",
                "b01-allow-unverifiable": "commands that cannot be read statically pass"},
        cases=(
            G.Case("subagent-workspace-test", "PreToolUse", _sub("cargo test --workspace"),
                   fires=True, breaks=("b01-allow-heavy",)),
            G.Case("subagent-script-runs-heavy", "PreToolUse", _sub("bash scripts/verify.sh"),
                   fires=True, breaks=("b01-allow-heavy",),
                   files={"scripts/verify.sh": "#!/bin/bash\nset -e\ncargo build\ncargo test --all\n"}),
            G.Case("main-without-prefix", "PreToolUse", _main("cargo --locked test --release --workspace"),
                   fires=True, breaks=("b01-allow-heavy",)),
            G.Case("main-prefix-value-wrong", "PreToolUse",
                   _main("SWARMGATE_HEAVY=yes run-with-memory-cap 8G -- make check-full"),
                   fires=True, breaks=("b01-allow-heavy",)),
            G.Case("subagent-base64-to-bash", "PreToolUse", _sub("echo Y2FyZ28gdGVzdAo= | base64 -d | bash"),
                   fires=True, breaks=("b01-allow-unverifiable",)),
            G.Case("main-commit-prefix", "PreToolUse",
                   _main("SWARMGATE_HEAVY=commit run-with-memory-cap 16G -- cargo test --workspace"),
                   fires=False),
            G.Case("main-user-request-export", "PreToolUse",
                   _main("export SWARMGATE_HEAVY=user-request; run-with-memory-cap 8G -- make check-full"),
                   fires=False),
            G.Case("subagent-echo-is-data", "PreToolUse", _sub('echo "cargo test --workspace"'),
                   fires=False),
            G.Case("subagent-narrow-test", "PreToolUse", _sub("cargo test -p core parser"),
                   fires=False),
            G.Case("main-commit-message", "PreToolUse", _main('git commit -m "run cargo test --workspace"'),
                   fires=False),
        ),
    ),
    G.Guard(
        code="B02",
        summary="an allowed heavy command runs through run-with-memory-cap, host-dispatch or multi-host-run",
        events=("PreToolUse",), tools=G.SHELL_TOOLS, check=check_b02,
        doc=G.GuardDoc(
            why="Several agents starting scripts freely can OOM the machine at any moment and wipe hours of "
                "work. A heavy run inside its own memory cap, under one shared total, can only kill itself.",
            example="`SWARMGATE_HEAVY=commit cargo test --workspace` (prefixed, but uncapped)",
            instead="`SWARMGATE_HEAVY=commit run-with-memory-cap 8G -- cargo test --workspace`, or "
                    "`host-dispatch -- ...` to let swarmgate choose the host and the cap.",
            exceptions="Heavy commands B01 refuses are not reported again here.",
        ),
        breaks={"b02-allow-uncapped": "allowed heavy commands may run uncapped"},
        cases=(
            G.Case("main-prefixed-uncapped", "PreToolUse", _main("SWARMGATE_HEAVY=commit cargo test --workspace"),
                   fires=True, breaks=("b02-allow-uncapped",)),
            G.Case("main-env-prefixed-uncapped", "PreToolUse",
                   _main("env SWARMGATE_HEAVY=user-request make check-full"),
                   fires=True, breaks=("b02-allow-uncapped",)),
            G.Case("main-capped", "PreToolUse",
                   _main("SWARMGATE_HEAVY=commit run-with-memory-cap 16G -- cargo test --workspace"),
                   fires=False),
            G.Case("main-dispatched", "PreToolUse",
                   _main("SWARMGATE_HEAVY=commit host-dispatch --mem 16G -- cargo test --all"),
                   fires=False),
            G.Case("subagent-light", "PreToolUse", _sub("cargo build --release"), fires=False),
            G.Case("subagent-heavy-left-to-b01", "PreToolUse", _sub("cargo test --workspace"), fires=False),
            G.Case("subagent-uncapped-when-b01-off", "PreToolUse", _sub("timeout 3600 make check-full"),
                   fires=True, breaks=("b02-allow-uncapped",), config='[guards]\nB01 = "off"\n'),
            G.Case("subagent-capped-when-b01-off", "PreToolUse",
                   _sub("run-with-memory-cap 8G -- make check-full"), fires=False,
                   config='[guards]\nB01 = "off"\n'),
        ),
    ),
    G.Guard(
        code="B10",
        summary="every verification run declares SWARMGATE_RUN_SCOPE='kind=...; target=...; range=...; reason=...'",
        events=("PreToolUse",), tools=G.SHELL_TOOLS, check=check_b10,
        doc=G.GuardDoc(
            why="One day three verification drivers each re-ran the whole suite, and every post-merge check "
                "ran all 212 test binaries although the batch touched two crates. Making the agent say, "
                "before it runs, what it runs and why works better than telling it afterwards that it ran "
                "too much.",
            example="`cargo test -p core` with no scope; `SWARMGATE_RUN_SCOPE='kind=items; ...' pytest` "
                    "(items declared, whole suite run); a reason of 'tests'",
            instead=f"`{_SCOPE_ITEMS} pytest tests/test_parser.py`",
            exceptions="kind=full on a narrowed command passes (declaring more than is run harms nothing). "
                       "Field names 種類/対象/範囲/理由 are accepted as kind/target/range/reason.",
        ),
        breaks={"b10-allow-missing-scope": "verification runs without a (complete) scope pass",
                "b10-allow-kind-mismatch": "kind=items/light/target on a whole-suite run passes",
                "b10-allow-short-reason": "reasons shorter than min_reason pass",
                "b10-allow-subagent-full": "subagents may declare kind=full"},
        cases=(
            G.Case("subagent-no-scope", "PreToolUse", _sub("cargo test -p core"),
                   fires=True, breaks=("b10-allow-missing-scope",)),
            G.Case("main-missing-field", "PreToolUse",
                   _main("SWARMGATE_RUN_SCOPE='kind=items; target=parser; reason=changed only the parser' "
                         "pytest tests/test_parser.py"),
                   fires=True, breaks=("b10-allow-missing-scope",)),
            G.Case("main-items-but-whole-suite", "PreToolUse",
                   _main(_SCOPE_ITEMS + " pytest -q"),
                   fires=True, breaks=("b10-allow-kind-mismatch",)),
            G.Case("subagent-short-reason", "PreToolUse",
                   _sub("SWARMGATE_RUN_SCOPE='kind=items; target=parser; range=one file; reason=tests' "
                        "pytest tests/test_parser.py"),
                   fires=True, breaks=("b10-allow-short-reason",)),
            G.Case("subagent-full", "PreToolUse",
                   _sub("SWARMGATE_RUN_SCOPE='kind=full; target=all; range=everything; "
                        "reason=want to see everything green' pytest tests/test_parser.py"),
                   fires=True, breaks=("b10-allow-subagent-full",)),
            G.Case("subagent-items-narrow", "PreToolUse", _sub(_SCOPE_ITEMS + " pytest tests/test_parser.py"),
                   fires=False),
            G.Case("main-full-capped", "PreToolUse",
                   _main("SWARMGATE_HEAVY=commit " + _SCOPE_FULL
                         + " run-with-memory-cap 16G -- cargo test --workspace"),
                   fires=False),
            G.Case("main-grep-is-data", "PreToolUse", _main("grep -rn 'cargo test' docs/"), fires=False),
            G.Case("subagent-build-only", "PreToolUse", _sub("cargo build -p core"), fires=False),
        ),
    ),
    G.Guard(
        code="B30",
        summary="no wait loop without a bound (while/until polling with no timeout and no counter)",
        events=("PreToolUse",), tools=G.SHELL_TOOLS, check=check_b30,
        doc=G.GuardDoc(
            why="A loop that polls until something appears runs forever when it never appears: the tool "
                "call hangs, the session waits, nobody notices for hours.",
            example="`while true; do curl -s localhost:8080 && break; sleep 5; done`, "
                    "`until [ -f out/done ]; do sleep 10; done`",
            instead="`timeout 600 bash -c 'until [ -f out/done ]; do sleep 10; done'`, or a counter: "
                    "`n=0; while [ $n -lt 60 ]; do ...; sleep 5; n=$((n+1)); done`.",
            exceptions="`for` loops (bounded lists), `while read ...` loops (end at end of input), loops "
                       "with a numeric comparison in the condition or guarding a break, loops inside "
                       "`timeout`, and the Monitor tool's commands (Monitor stops them at its timeout_ms). "
                       "A break on any other condition does not bound a wait.",
        ),
        breaks={"b30-allow-unbounded-loops": "unbounded wait loops pass"},
        cases=(
            G.Case("main-while-true-sleep", "PreToolUse",
                   _main("while true; do curl -s localhost:8080 && break; sleep 5; done"),
                   fires=True, breaks=("b30-allow-unbounded-loops",)),
            G.Case("subagent-until-file", "PreToolUse",
                   _sub("until [ -f out/done ]; do sleep 10; done; cat out/result"),
                   fires=True, breaks=("b30-allow-unbounded-loops",)),
            G.Case("main-for-seq", "PreToolUse",
                   _main("for i in $(seq 30); do curl -s localhost:8080 && break; sleep 1; done"),
                   fires=False),
            G.Case("subagent-timeout-wrapped", "PreToolUse",
                   _sub("timeout 60 bash -c 'until [ -f out/done ]; do sleep 1; done'"), fires=False),
            G.Case("main-counter", "PreToolUse",
                   _main("n=0; while [ $n -lt 10 ]; do sleep 1; n=$((n+1)); done"), fires=False),
            G.Case("subagent-read-loop", "PreToolUse",
                   _sub("while read -r f; do wc -l \"$f\"; done < files.txt"), fires=False),
        ),
    ),
    G.Guard(
        code="B31",
        summary="no background job inside a background job",
        events=("PreToolUse",), tools=G.SHELL_TOOLS, check=check_b31,
        doc=G.GuardDoc(
            why="A job sent to the background inside another background job is waited for by nobody: its "
                "exit code is lost, it outlives the session and keeps memory and cores nobody accounts for.",
            example="`( cargo build & ) &`, `nohup ./long.sh & ` inside a backgrounded subshell, "
                    "`bash -c 'server &' &`",
            instead="Background once (Bash's run_in_background, or one `&`), or "
                    "`detached-run start --label NAME -- CMD` for work that must outlive the session.",
            exceptions="A single `&` (or `nohup cmd &`) at the top level passes; inside a Bash call with "
                       "run_in_background or a Monitor command, which are background jobs already, it does not.",
        ),
        breaks={"b31-allow-nested-background": "nested background jobs pass"},
        cases=(
            G.Case("main-subshell-nested", "PreToolUse", _main("( cargo build & ) &"),
                   fires=True, breaks=("b31-allow-nested-background",)),
            G.Case("subagent-bash-c-nested", "PreToolUse", _sub("bash -c 'python3 server.py &' &"),
                   fires=True, breaks=("b31-allow-nested-background",)),
            G.Case("main-single-background", "PreToolUse", _main("nohup python3 server.py > /tmp/s.log 2>&1 &"),
                   fires=False),
            G.Case("subagent-echo-ampersand", "PreToolUse", _sub("echo 'a & b' && ls"), fires=False),
        ),
    ),
    G.Guard(
        code="G01",
        summary="no agent writes swarmgate's config, the settings, the hooks or the state directory",
        events=("PreToolUse",), tools=G.SHELL_TOOLS, check=check_g01_shell,
        doc=G.GuardDoc(
            why="An agent that cannot finish its task under a rule finds the rule's file the shortest way "
                "out. From the shell that means a redirect into .claude/settings.json, `sed -i` on the "
                "config, an inline SWARMGATE_BREAK, a subagent declaring itself allowed to run heavy "
                "tests, or a commit that skips the gate (`--no-verify`, `core.hooksPath`).",
            example="`echo '{}' > .claude/settings.json`, `SWARMGATE_BREAK=b01-allow-heavy cargo test`, a "
                    "subagent's `SWARMGATE_HEAVY=commit cargo test --workspace`, `git commit --no-verify`",
            instead="Ask the person to change the rule; they edit these files by hand.",
            exceptions="Reading these files is allowed.",
        ),
        breaks={"g01-allow-shell-writes": "shell writes to protected paths pass",
                "g01-allow-hook-skip": "git commit --no-verify and core.hooksPath changes pass",
                "g01-allow-shell-env": "inline SWARMGATE_BREAK and subagent heavy/full declarations pass"},
        cases=(
            G.Case("main-redirect-settings", "PreToolUse", _main("echo '{}' > .claude/settings.json"),
                   fires=True, breaks=("g01-allow-shell-writes",)),
            G.Case("subagent-sed-config", "PreToolUse",
                   _sub("sed -i 's/deny/ask/' .claude/swarmgate.toml"),
                   fires=True, breaks=("g01-allow-shell-writes",)),
            G.Case("main-inline-break", "PreToolUse", _main("SWARMGATE_BREAK=b01-allow-heavy cargo test -p x"),
                   fires=True, breaks=("g01-allow-shell-env",)),
            G.Case("subagent-sets-heavy", "PreToolUse",
                   _sub("SWARMGATE_HEAVY=commit cargo build"),
                   fires=True, breaks=("g01-allow-shell-env",)),
            G.Case("main-commit-no-verify", "PreToolUse", _main("git add -A && git commit -nm 'wip'"),
                   fires=True, breaks=("g01-allow-hook-skip",)),
            G.Case("subagent-hookspath", "PreToolUse", _sub("git config core.hooksPath /dev/null"),
                   fires=True, breaks=("g01-allow-hook-skip",)),
            G.Case("main-reads-settings", "PreToolUse", _main("cat .claude/settings.json | head"),
                   fires=False),
            G.Case("main-commit-message-mentions-no-verify", "PreToolUse",
                   _main("git commit -m 'never use --no-verify'"), fires=False),
            G.Case("subagent-writes-src", "PreToolUse", _sub("echo x > src/notes.txt"), fires=False),
            G.Case("main-sets-heavy", "PreToolUse",
                   _main("SWARMGATE_HEAVY=commit run-with-memory-cap 8G -- make check-full"), fires=False),
        ),
    ),
)
