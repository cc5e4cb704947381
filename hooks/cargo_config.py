"""Cargo aliases: ``cargo t`` is ``cargo test``, ``[alias] tw = "test --workspace"``.

Cargo resolves a subcommand that is not built in through its aliases: the built-in
ones (b, c, d, r, t, rm) and ``[alias]`` in ``.cargo/config.toml`` (or ``.cargo/config``)
of the working directory and every ancestor, then ``$CARGO_HOME/config.toml``
(closer files win), ``CARGO_ALIAS_<NAME>`` in the environment, and ``--config
alias.NAME=...`` on the command line. The walker yields the expanded command as one
more command (via ``cargo alias:NAME``), so patterns are matched against what cargo
really runs. An alias that cannot be read (a config file that is not TOML) makes the
command unverifiable.
"""
from __future__ import annotations

from swarmgate import lean_os as os

BUILTIN = {"b": ["build"], "c": ["check"], "d": ["doc"], "r": ["run"], "t": ["test"], "rm": ["remove"]}
SUBCOMMANDS = frozenset(("add", "bench", "build", "check", "clean", "clippy", "config", "doc", "fetch",
                         "fix", "fmt", "generate-lockfile", "help", "info", "init", "install",
                         "locate-project", "login", "logout", "metadata", "miri", "new", "owner",
                         "package", "pkgid", "publish", "read-manifest", "remove", "report", "run",
                         "rustc", "rustdoc", "search", "test", "tree", "uninstall", "update", "vendor",
                         "verify-project", "version", "yank"))
_GLOBAL_VALUE = frozenset(("--config", "-C", "--color", "-Z", "--explain"))


def _alias_value(v):
    if isinstance(v, str):
        return v.split()
    if isinstance(v, list) and all(isinstance(x, str) for x in v):
        return list(v)
    return None


def aliases_from_toml(text: str) -> dict:
    """``[alias]`` of a cargo config text. Raises ValueError when it is not TOML."""
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"not valid TOML: {e}") from None
    table = data.get("alias") if isinstance(data, dict) else None
    out = {}
    if isinstance(table, dict):
        for k, v in table.items():
            words = _alias_value(v)
            if words is not None:
                out[str(k)] = words
    return out


def inline_alias(value: str) -> tuple[str, list] | None:
    """``alias.NAME="..."`` / ``alias.NAME=[...]`` from ``--config`` (a TOML key = value)."""
    if not value.startswith("alias."):
        return None
    import tomllib

    try:
        data = tomllib.loads(value)
    except tomllib.TOMLDecodeError:
        k, _, v = value.partition("=")
        return k[6:].strip(), v.strip().strip("'\"").split()
    table = data.get("alias")
    if isinstance(table, dict):
        for k, v in table.items():
            words = _alias_value(v)
            if words is not None:
                return str(k), words
    return None


def run(wk, name, args, largs, env, ctx, text):
    """Yield ``cargo ALIAS ...`` once more as the command the alias stands for."""
    i, n = 0, len(args)
    inline: dict = {}
    while i < n:
        a = args[i]
        if a.startswith("+"):
            i += 1
            continue
        if a == "--config" and i + 1 < n:
            got = inline_alias(args[i + 1])
            if got:
                inline[got[0]] = got[1]
            i += 2
            continue
        if a.startswith("--config="):
            got = inline_alias(a.split("=", 1)[1])
            if got:
                inline[got[0]] = got[1]
            i += 1
            continue
        if a in _GLOBAL_VALUE and i + 1 < n:
            i += 2
            continue
        if a.startswith("-"):
            i += 1
            continue
        break
    if i >= n:
        return True
    sub = args[i]
    if largs[i] >= 0:
        wk.unverifiable(f"cargo runs a subcommand whose name cannot be read statically ({sub})", text,
                        exec_judged=("cargo",))
        return True
    if sub in SUBCOMMANDS:
        return True
    words = None
    seen = set()
    cur = sub
    for _ in range(8):
        if cur in seen:
            break
        seen.add(cur)
        w = _lookup(wk, cur, env, inline, text)
        if w is None or not w:
            break
        words = w + (words[1:] if words else [])
        if w[0] in SUBCOMMANDS or w[0] not in _known_aliases(wk, env, inline, text) | set(BUILTIN):
            break
        cur = w[0]
    if not words:
        return True
    expanded = ["cargo"] + args[:i] + words + args[i + 1:]
    lexp = [-1] + largs[:i] + [-1] * len(words) + largs[i + 1:]
    wk._inner(expanded, lexp, 0, env, ctx.sub(f"cargo alias:{sub}", wrapper="cargo"), text)
    return True


def _lookup(wk, alias: str, env: dict, inline: dict, text):
    if alias in inline:
        return inline[alias]
    ev = env.get("CARGO_ALIAS_" + alias.upper().replace("-", "_"))
    if ev is not None:
        return ev.split()
    table = _config_aliases(wk, text)
    if table is None:
        return None
    if alias in table:
        return table[alias]
    return BUILTIN.get(alias)


def _known_aliases(wk, env, inline, text) -> set:
    table = _config_aliases(wk, text) or {}
    return set(table) | set(inline) | {k[12:].lower() for k in env if k.startswith("CARGO_ALIAS_")}


def _config_aliases(wk, text):
    """Aliases from every cargo config file that applies (closer first wins); None when one
    cannot be read (reported unverifiable)."""
    here = wk.project_dir()
    key = ("cargo-aliases", here)
    if key in wk.project_cache:
        return wk.project_cache[key]
    files = []
    d = here
    for _ in range(64):
        if d is None:
            break
        for nm in ("config.toml", "config"):
            p = os.path.join(d, ".cargo", nm)
            if p in wk.written or os.path.isfile(p):
                files.append(p)
                break
        up = os.path.dirname(d)
        if up == d:
            break
        d = up
    home = os.environ.get("CARGO_HOME") or os.path.join(os.path.expanduser("~"), ".cargo")
    for nm in ("config.toml", "config"):
        p = os.path.join(home, nm)
        if os.path.isfile(p) and p not in files:
            files.append(p)
            break
    table: dict | None = {}
    for p in reversed(files):
        body = wk.read_project_file(p, text, "cargo")
        if body is None:
            continue
        try:
            table.update(aliases_from_toml(body))
        except ValueError as e:
            wk.unverifiable(f"cargo: {p} cannot be read ({e}): its aliases are unknown", text)
            table = None
            break
    wk.project_cache[key] = table
    return table
