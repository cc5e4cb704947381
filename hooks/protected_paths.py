"""What guards swarmgate: the paths no agent may change (G01), as a pure function.

Shared by the file-tool side (here) and the shell side (Bash guards).
"""
from __future__ import annotations

from swarmgate import lean_os as os
from swarmgate import lean_path as posixpath

# relative to the repository root
PROTECTED_GLOBS = (
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".claude/settings*.json",
    ".claude/swarmgate.toml",
    ".claude/hooks/*",
    ".claude/hooks/**",
    ".swarmgate/*",
    ".swarmgate/**",
    ".git/hooks/*",
    # the other clients' project settings: hook definitions, trust, exec policies, extensions
    ".codex/*",
    ".codex/**",
    ".gemini/settings.json",
    ".gemini/extensions/*",
    ".gemini/extensions/**",
)

# protected files by name: a write whose directory cannot be placed (a variable the hook does not know,
# a directory computed by code) and that names one of these is refused as unverifiable (G01)
PROTECTED_FILE_NAMES = ("settings.json", "settings.local.json", "swarmgate.toml", "hosts.toml",
                        "trustedFolders.json", "sitecustomize.py", "usercustomize.py")
# files every later process of the session runs first (issue 24 item 4): Python's start-up modules, and a
# .pth file where site.py reads them; an import or an exec hidden there reaches every command
STARTUP_FILE_NAMES = ("sitecustomize.py", "usercustomize.py")
SITE_DIRS = ("/site-packages/", "/dist-packages/")
# words of a shell target that name a protected place (the same rule for a whole target)
PROTECTED_NAMES = PROTECTED_FILE_NAMES + (".claude/", ".swarmgate", ".codex/", ".gemini/", ".git/hooks",
                                          "/swarmgate/", "swarmgate-selftest", "session-env")


def client_home_files() -> dict[str, str]:
    """path -> client, for the clients' user-level settings: they define hooks, trust projects and
    hooks (Codex: [projects] trust_level, [hooks.state] trusted_hash and enabled) and can switch
    hooks off (Claude Code: disableAllHooks; Gemini CLI: hooks.disabled). Read from the
    environment at each call (CODEX_HOME, GEMINI_CLI_HOME move them)."""
    env = os.environ
    home = env.get("HOME") or os.path.expanduser("~")
    codex = env.get("CODEX_HOME") or os.path.join(home, ".codex")
    gemini = os.path.join(env.get("GEMINI_CLI_HOME") or home, ".gemini")
    out = {os.path.join(home, ".claude", name): "Claude Code" for name in ("settings.json", "settings.local.json")}
    out.update({os.path.join(codex, name): "Codex CLI" for name in ("config.toml", "hooks.json")})
    out.update({os.path.join(gemini, name): "Gemini CLI" for name in ("settings.json", "trustedFolders.json")})
    return {posixpath.normpath(k): v for k, v in out.items()}


def session_env_places() -> tuple[str, ...]:
    """Claude Code's session env files: the directory ~/.claude/session-env (CLAUDE_CONFIG_DIR moves it),
    whose per-session file (``$CLAUDE_ENV_FILE``, a path every command can compute from
    CLAUDE_CODE_SESSION_ID) the client sources before every later command of the session: the
    exec-time shims' PATH line is there. And the file CLAUDE_ENV_FILE names, where it is set."""
    env = os.environ
    home = env.get("HOME") or os.path.expanduser("~")
    base = env.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")
    out = (posixpath.normpath(os.path.join(base, "session-env")),)
    named = env.get("CLAUDE_ENV_FILE")
    return out + (posixpath.normpath(os.path.abspath(named)),) if named else out


def startup_reason(path: str) -> str | None:
    """Why ``path`` (absolute, normalised) is a file every later process of the session runs, or None."""
    name = posixpath.basename(path)
    if name in STARTUP_FILE_NAMES:
        return (f"{path} is a Python start-up module: every Python process that finds it on its path runs "
                f"it first")
    if name.endswith(".pth") and any(d in path + "/" for d in SITE_DIRS):
        return f"{path} is a .pth file in a site directory: every Python start runs its import lines"
    for place in session_env_places():
        if path == place or path.startswith(place + "/"):
            return (f"{path} is the client's session env file ({place}): every later command of the "
                    f"session sources it")
    return None


def hosts_config_places() -> tuple[str, ...]:
    """The machine's hosts config (swarmgate/state_paths.machine_config_path): the whole directory
    $XDG_CONFIG_HOME/swarmgate or ~/.config/swarmgate, and the file SWARMGATE_HOSTS_CONFIG names."""
    env = os.environ
    home = env.get("HOME") or os.path.expanduser("~")
    out = (posixpath.normpath(os.path.join(env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config"),
                                           "swarmgate")),)
    override = env.get("SWARMGATE_HOSTS_CONFIG")
    return out + (posixpath.normpath(os.path.abspath(override)),) if override else out


def glob_match(name: str, pat: str) -> bool:
    """fnmatchcase for patterns whose only wildcard is `*` (which, as in fnmatch, also
    matches `/`), without compiling a regex: `re` + fnmatch cost milliseconds per hook call."""
    if "?" in pat or "[" in pat:
        from fnmatch import fnmatchcase
        return fnmatchcase(name, pat)
    parts = pat.split("*")
    if len(parts) == 1:
        return name == pat
    first, last = parts[0], parts[-1]
    if not name.startswith(first) or not name.endswith(last) or len(name) < len(first) + len(last):
        return False
    pos, end = len(first), len(name) - len(last)
    for mid in parts[1:-1]:
        if not mid:
            continue
        i = name.find(mid, pos, end)
        if i < 0:
            return False
        pos = i + len(mid)
    return True


def _norm(path: str, cwd: str, repo: str) -> str:
    p = path if os.path.isabs(path) else os.path.join(cwd or repo, path)
    return posixpath.normpath(p)


_installed: tuple | None = None


def installed_roots(repo: str) -> tuple:
    """Where the swarmgate that runs this hook lives: the package (the checkout, for an editable
    install) and the virtualenv whose entry point settings.json calls. A repository inside the
    checkout is swarmgate's own development: its code is then the work, and only the venv counts."""
    global _installed
    if _installed is None:
        import sys

        import swarmgate
        pkg = os.path.dirname(os.path.abspath(swarmgate.__file__))
        top = os.path.dirname(pkg)
        code = top if os.path.isfile(os.path.join(top, "pyproject.toml")) else pkg
        venv = sys.prefix if sys.prefix != getattr(sys, "base_prefix", sys.prefix) else ""
        _installed = (posixpath.normpath(code), posixpath.normpath(venv) if venv else "")
    code, venv = _installed
    repo_n = posixpath.normpath(os.path.abspath(repo)) if repo else ""
    own = repo_n and (repo_n == code or repo_n.startswith(code + "/"))
    return tuple(r for r in ((venv,) if own else (code, venv)) if r)


def protected_reason(path: str, *, cwd: str, repo: str, state_dir: str, install_root: str = "",
                     root: str = "") -> str | None:
    """Why ``path`` is protected, or None. Paths are resolved lexically (no symlink reads).

    ``root`` is the agent's work root (hooks/agent_worktree.py): in a worktree subagent's tree
    its copies of the settings and the config are protected as well (they merge back into the
    project), besides the project's own."""
    full = _norm(path, cwd, repo)
    try:
        real = os.path.realpath(full)
    except OSError:
        real = full
    candidates = {full, real}
    state = posixpath.normpath(os.path.abspath(state_dir))
    from swarmgate.state_paths import selftest_marker_dir
    markers = selftest_marker_dir()
    home_files = client_home_files()
    hosts = hosts_config_places()
    for c in candidates:
        startup = startup_reason(c)
        if startup:
            return startup
        if c in home_files:
            return f"{path} holds {home_files[c]}'s user settings (hooks, their trust, switches that turn them off)"
        for h in hosts:
            if c == h or c.startswith(h + "/"):
                return f"{path} is swarmgate's machine config (the hosts the runner and host-dispatch use, {h})"
        if c == state or c.startswith(state + "/"):
            return f"{path} is inside swarmgate's state directory ({state_dir})"
        if c == markers or c.startswith(markers + "/"):
            return f"{path} is where self-tests keep the markers that vouch for break switches"
        for inst in ((install_root,) if install_root else installed_roots(repo)):
            if c == inst or c.startswith(inst.rstrip("/") + "/"):
                return f"{path} is part of the swarmgate that runs the hooks ({inst})"
        for base in dict.fromkeys(b for b in (root, repo) if b):
            rel = os.path.relpath(c, base)
            if rel.startswith(".."):
                continue
            for pat in PROTECTED_GLOBS:
                if glob_match(rel, pat):
                    where = "" if base == repo else f" of the worktree {base}"
                    return f"{rel}{where} configures or records what guards this repository"
    return None


def protected_places(repo: str, root: str, state_dir: str) -> list[tuple[str, str]]:
    """(absolute place, what it is) for every protected place: the repository's (and the work
    root's) protected globs cut at their first wildcard, the clients' user settings, the hosts
    config, the state directory, the self-test markers and the swarmgate that runs the hooks."""
    from swarmgate.state_paths import selftest_marker_dir

    out: list[tuple[str, str]] = []
    for base in dict.fromkeys(b for b in (root, repo) if b):
        for pat in PROTECTED_GLOBS:
            lit = pat.split("*", 1)[0].rstrip("/")
            out.append((posixpath.normpath(os.path.join(base, lit)), f"{pat} (what guards this repository)"))
    out += [(k, f"{v}'s user settings") for k, v in client_home_files().items()]
    out += [(h, "swarmgate's machine config") for h in hosts_config_places()]
    out += [(p, "the client's session env files") for p in session_env_places()]
    out.append((posixpath.normpath(os.path.abspath(state_dir)), "swarmgate's state directory"))
    out.append((selftest_marker_dir(), "the self-tests' markers"))
    out += [(r, "the swarmgate that runs the hooks") for r in installed_roots(repo)]
    return out


def protected_within(tree: str, *, repo: str, root: str, state_dir: str) -> str | None:
    """Why writing anything under the directory ``tree`` (absolute, normalised) may change a
    protected place inside it, or None. A directory that holds the repository (or work root) or the
    home directory, or is one of them (``/``, ``/home``, ``git checkout .`` at the top, an archive
    whose members cannot be listed extracted there), is not read as a write of everything under it:
    the per-file checks judge what is named there (docs/threat-model.md). The home directory itself
    is not spared: ``tar xf x.tar -C ~`` reaches ``~/.claude``."""
    prefix = tree.rstrip("/") + "/"
    home = posixpath.normpath(os.environ.get("HOME") or os.path.expanduser("~"))
    tops = [posixpath.normpath(b) for b in (root, repo) if b]
    if any(t == tree or t.startswith(prefix) for t in tops) or home.startswith(prefix):
        return None
    for place, what in protected_places(repo, root, state_dir):
        if place == tree or place.startswith(prefix):
            return f"{tree} holds {place} ({what})"
    return None


def hard_link_reason(full: str, *, repo: str, root: str) -> str | None:
    """Why ``full``, an existing file with more than one name (a hard link made before the command),
    is a protected file under another name, or None. Only the protected places that are single
    files are compared (the settings, the config, the clients' user settings, the hosts config):
    a stat each, and only for a written file whose link count is above one."""
    try:
        st = os.stat(full)
    except OSError:
        return None
    if st.st_nlink < 2:
        return None
    files = [os.path.join(b, f) for b in dict.fromkeys(x for x in (root, repo) if x)
             for f in (".claude/settings.json", ".claude/settings.local.json", ".claude/swarmgate.toml",
                       ".gemini/settings.json")]
    files += list(client_home_files()) + [os.path.join(h, "hosts.toml") for h in hosts_config_places()[:1]]
    files += list(hosts_config_places()[1:])
    for f in files:
        try:
            other = os.stat(f)
        except OSError:
            continue
        if (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
            return f"{full} is a hard link to {f} (the same file under another name)"
    return None
