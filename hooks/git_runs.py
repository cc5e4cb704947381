"""What git runs besides itself, and the pre-commit framework's local hooks.

git runs commands it reads from its configuration and its arguments:
- aliases (``git -c alias.t='!cargo test --workspace' t``, ``[alias]`` in .git/config,
  ~/.gitconfig and their includes, ``git config alias.t ...`` earlier in the same
  command): ``!`` aliases are shell texts run with the arguments appended, others
  expand into another git command;
- ``rebase --exec CMD`` / ``-x CMD``, ``bisect run CMD ARGS``, ``submodule foreach CMD``,
  ``filter-branch --tree-filter|--index-filter|--msg-filter|--env-filter|--commit-filter|
  --parent-filter|--tag-name-filter CMD``, ``difftool -x CMD``, ``grep -O CMD``,
  ``send-email --to-cmd|--cc-cmd|--header-cmd``, ``--upload-pack``/``--receive-pack``;
- editors for commands that open one (GIT_EDITOR, core.editor, VISUAL, EDITOR;
  GIT_SEQUENCE_EDITOR and sequence.editor for ``rebase -i``);
- core.fsmonitor, diff.external / GIT_EXTERNAL_DIFF, core.sshCommand / GIT_SSH_COMMAND,
  ``!`` credential helpers, filter drivers (clean, smudge, process), diff textconv;
- hooks in core.hooksPath or $GIT_DIR/hooks (pre-commit, commit-msg, pre-push,
  post-checkout, post-merge, reference-transaction ...) for the commands that fire them.

``pre-commit run`` (and the framework's git hook, ``python -m pre_commit hook-impl``)
runs the ``entry`` of ``repo: local`` hooks in .pre-commit-config.yaml.

Pure parsing here (``parse_config``, ``git_plan``); ``run`` and ``run_pre_commit`` are the
walker's side.
"""
from __future__ import annotations

from swarmgate import lean_os as os

BUILTINS = frozenset((
    "add", "am", "annotate", "apply", "archive", "bisect", "blame", "branch", "bundle", "cat-file",
    "check-attr", "check-ignore", "check-mailmap", "check-ref-format", "checkout", "checkout-index",
    "cherry", "cherry-pick", "citool", "clean", "clone", "column", "commit", "commit-graph",
    "commit-tree", "config", "count-objects", "credential", "describe", "diff", "diff-files",
    "diff-index", "diff-tree", "difftool", "fast-export", "fast-import", "fetch", "fetch-pack",
    "filter-branch", "fmt-merge-msg", "for-each-ref", "for-each-repo", "format-patch", "fsck", "gc",
    "get-tar-commit-id", "grep", "gui", "hash-object", "help", "hook", "http-backend", "index-pack",
    "init", "instaweb", "interpret-trailers", "log", "ls-files", "ls-remote", "ls-tree", "mailinfo",
    "mailsplit", "maintenance", "merge", "merge-base", "merge-file", "merge-index", "merge-tree",
    "mergetool", "mktag", "mktree", "multi-pack-index", "mv", "name-rev", "notes", "pack-objects",
    "pack-refs", "patch-id", "prune", "prune-packed", "pull", "push", "range-diff", "read-tree",
    "rebase", "receive-pack", "reflog", "remote", "repack", "replace", "request-pull", "rerere",
    "reset", "restore", "rev-list", "rev-parse", "revert", "rm", "send-email", "send-pack",
    "shortlog", "show", "show-branch", "show-index", "show-ref", "sparse-checkout", "stash", "status",
    "stripspace", "submodule", "switch", "symbolic-ref", "tag", "unpack-file", "unpack-objects",
    "update-index", "update-ref", "update-server-info", "upload-archive", "upload-pack", "var",
    "verify-commit", "verify-pack", "verify-tag", "version", "whatchanged", "worktree", "write-tree",
    "init-db", "lfs", "filter-repo", "scalar", "backfill", "refs", "replay", "diagnose", "bugreport"))
_GLOBAL_VALUE = frozenset(("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path",
                           "--super-prefix", "--config-env", "--list-cmds", "--attr-source"))
_FSMONITOR_CMDS = frozenset(("status", "diff", "add", "commit", "checkout", "switch", "restore", "stash",
                             "reset", "ls-files", "update-index", "merge", "pull", "rebase", "cherry-pick",
                             "revert", "am", "rm", "mv", "clean", "worktree"))
_FILTER_CMDS = frozenset(("add", "checkout", "switch", "restore", "stash", "reset", "commit", "status",
                          "diff", "merge", "pull", "rebase", "cherry-pick", "revert", "am", "clone",
                          "worktree"))
_DIFF_CMDS = frozenset(("diff", "log", "show", "whatchanged", "format-patch", "stash", "difftool"))
_REMOTE_CMDS = frozenset(("fetch", "pull", "push", "clone", "ls-remote", "submodule", "remote", "archive"))
_HOOKS = {
    "commit": ("pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "reference-transaction",
               "post-index-change"),
    "merge": ("pre-merge-commit", "prepare-commit-msg", "commit-msg", "post-merge", "reference-transaction"),
    "pull": ("pre-merge-commit", "post-merge", "reference-transaction", "post-checkout"),
    "push": ("pre-push", "reference-transaction"),
    "checkout": ("post-checkout", "reference-transaction", "post-index-change"),
    "switch": ("post-checkout", "reference-transaction", "post-index-change"),
    "clone": ("post-checkout",),
    "worktree": ("post-checkout",),
    "rebase": ("pre-rebase", "post-rewrite", "post-checkout", "reference-transaction"),
    "am": ("applypatch-msg", "pre-applypatch", "post-applypatch", "post-rewrite"),
    "cherry-pick": ("prepare-commit-msg", "commit-msg", "post-commit", "reference-transaction"),
    "revert": ("prepare-commit-msg", "commit-msg", "post-commit", "reference-transaction"),
    "gc": ("pre-auto-gc",), "maintenance": ("pre-auto-gc",),
    "add": ("post-index-change",), "reset": ("reference-transaction", "post-index-change"),
    "stash": ("reference-transaction", "post-index-change"), "restore": ("post-index-change",),
    "branch": ("reference-transaction",), "tag": ("reference-transaction",),
    "fetch": ("reference-transaction",), "update-ref": ("reference-transaction",),
}
_NO_VERIFY_HOOKS = frozenset(("pre-commit", "commit-msg", "pre-push", "pre-merge-commit", "pre-rebase",
                              "applypatch-msg", "pre-applypatch"))
_FILTER_OPTS = ("--tree-filter", "--index-filter", "--msg-filter", "--env-filter", "--commit-filter",
                "--parent-filter", "--tag-name-filter", "--setup")
_TEXT_OPTS = {"rebase": ("--exec", "-x"), "difftool": ("-x", "--extcmd"), "grep": ("-O", "--open-files-in-pager"),
              "send-email": ("--to-cmd", "--cc-cmd", "--header-cmd", "--sendmail-cmd"),
              "fetch": ("--upload-pack",), "pull": ("--upload-pack",), "clone": ("--upload-pack", "-u"),
              "ls-remote": ("--upload-pack",), "push": ("--receive-pack", "--exec"),
              "archive": ("--exec",)}


# ---------------------------------------------------------------- config files

def parse_config(text: str) -> list[tuple[str, str]]:
    """(key, value) pairs of a git config text in order; keys as ``section.sub.name``
    (section and name lower-cased, the subsection as written). Raises ValueError."""
    out: list[tuple[str, str]] = []
    section = None
    for no, raw in enumerate(text.split("\n"), 1):
        s = raw.strip()
        if not s or s[0] in "#;":
            continue
        if s.startswith("["):
            end = s.find("]")
            if end < 0:
                raise ValueError(f"line {no}: unclosed section header")
            head = s[1:end].strip()
            if '"' in head:
                name, _, sub = head.partition(" ")
                section = name.lower() + "." + sub.strip().strip('"').replace('\\"', '"')
            else:
                section = head.lower()
            s = s[end + 1:].strip()
            if not s or s[0] in "#;":
                continue
        if section is None:
            raise ValueError(f"line {no}: a key outside any section")
        k, eq, v = s.partition("=")
        key = section + "." + k.strip().lower()
        out.append((key, _config_value(v) if eq else "true"))
    return out


def _config_value(v: str) -> str:
    out, q, i = [], False, 0
    v = v.strip()
    while i < len(v):
        c = v[i]
        if c == '"':
            q = not q
            i += 1
            continue
        if c == "\\" and i + 1 < len(v):
            out.append({"n": "\n", "t": "\t", "b": "\b"}.get(v[i + 1], v[i + 1]))
            i += 2
            continue
        if c in "#;" and not q:
            break
        out.append(c)
        i += 1
    return "".join(out).strip()


def git_dirs(start: str) -> tuple[str, str, str] | None:
    """(worktree top, git dir, common dir) for ``start``, or None outside a repository."""
    d = start
    for _ in range(64):
        g = os.path.join(d, ".git")
        if os.path.isdir(g):
            return d, g, g
        if os.path.isfile(g):
            try:
                with open(g, encoding="utf-8", errors="replace") as f:
                    line = f.read(4096).strip()
            except OSError:
                return None
            if line.startswith("gitdir:"):
                gd = os.path.normpath(os.path.join(d, line[7:].strip()))
                common = gd
                try:
                    with open(os.path.join(gd, "commondir"), encoding="utf-8") as f:
                        common = os.path.normpath(os.path.join(gd, f.read(4096).strip()))
                except OSError:
                    pass
                return d, gd, common
            return None
        up = os.path.dirname(d)
        if up == d:
            return None
        d = up
    return None


# ---------------------------------------------------------------- the walker's side

def _config(wk, top_common: str | None, inline: list, env: dict, text) -> dict | None:
    """Every config value git sees, as {key: [values]} (later wins); None when a file that
    applies cannot be read (reported unverifiable)."""
    key = ("git-config", top_common)
    base = wk.project_cache.get(key)
    if key not in wk.project_cache:
        files = []
        home = os.path.expanduser("~")
        xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
        files.append(os.environ.get("GIT_CONFIG_GLOBAL") or os.path.join(home, ".gitconfig"))
        files.append(os.path.join(xdg, "git", "config"))
        if top_common:
            files.append(os.path.join(top_common, "config"))
        base = []
        for p in files:
            got = _read_config_file(wk, p, text, 0)
            if got is None:
                base = None
                break
            base.extend(got)
        wk.project_cache[key] = base
    if base is None:
        return None
    out: dict = {}
    pairs = list(base) + list(wk.git_config_set) + _env_config(env) + list(inline)
    for k, v in pairs:
        out.setdefault(k, []).append(v)
    return out


def _read_config_file(wk, path: str, text, depth: int):
    if not (os.path.isfile(path) or path in wk.written):
        return []
    body = wk.read_project_file(path, text, "git")
    if body is None:
        return [] if path not in wk.written else None
    try:
        pairs = parse_config(body)
    except ValueError as e:
        wk.unverifiable(f"git: {path} cannot be read ({e}): what it configures git to run is unknown", text)
        return None
    out = []
    for k, v in pairs:
        if (k == "include.path" or (k.startswith("includeif.") and k.endswith(".path"))) and depth < 4:
            inc = os.path.normpath(os.path.join(os.path.dirname(path), os.path.expanduser(v)))
            got = _read_config_file(wk, inc, text, depth + 1)
            if got is None:
                return None
            out.extend(got)
            continue
        out.append((k, v))
    return out


def _env_config(env: dict) -> list:
    out = []
    try:
        count = int(env.get("GIT_CONFIG_COUNT", "0") or 0)
    except ValueError:
        count = 0
    for i in range(min(count, 64)):
        k = env.get(f"GIT_CONFIG_KEY_{i}")
        v = env.get(f"GIT_CONFIG_VALUE_{i}")
        if k and v is not None:
            out.append((_norm_key(k), v))
    params = env.get("GIT_CONFIG_PARAMETERS")
    if params:
        for part in params.split("' '"):
            part = part.strip("'")
            k, _, v = part.partition("=")
            if k:
                out.append((_norm_key(k), v))
    return out


def _norm_key(k: str) -> str:
    parts = k.split(".")
    if len(parts) >= 3:
        return parts[0].lower() + "." + ".".join(parts[1:-1]) + "." + parts[-1].lower()
    return k.lower()


def _last(cfg: dict, key: str):
    v = cfg.get(key)
    return v[-1] if v else None


def note_config_write(wk, args: list, largs: list) -> None:
    """``git config [--local|--global|...] KEY VALUE`` (also ``git config set KEY VALUE``) earlier
    in the same command: later git commands see it."""
    a = [x for x in args if not x.startswith("-")]
    la = [largs[k] for k, x in enumerate(args) if not x.startswith("-")]
    if a[:1] == ["set"]:
        a, la = a[1:], la[1:]
    if len(a) >= 2 and "." in a[0] and not any(x.startswith(("--get", "--unset", "--list", "-l", "--remove"))
                                              for x in args):
        value = a[1] if la[1] < 0 else "$GIT_CONFIG_VALUE"
        wk.git_config_set.append((_norm_key(a[0]), value))


def run(wk, name, args, largs, env, ctx, text):
    """Follow what ``git ...`` runs besides itself (see the module doc)."""
    i, n = 0, len(args)
    inline: list = []
    cdir = None
    while i < n:
        a = args[i]
        if a == "-c" and i + 1 < n:
            k, _, v = args[i + 1].partition("=")
            if largs[i + 1] >= 0 and _command_key(_norm_key(k)):
                wk.unverifiable(f"git -c {k}=...: a command git runs, set to something that cannot be "
                                "read statically", text)
                return True
            inline.append((_norm_key(k), v if "=" in args[i + 1] else "true"))
            i += 2
            continue
        if a.startswith("--config-env"):
            spec = a.split("=", 1)[1] if "=" in a else (args[i + 1] if i + 1 < n else "")
            k, _, var = spec.partition("=")
            if _command_key(_norm_key(k)):
                if var in env:
                    inline.append((_norm_key(k), env[var]))
                else:
                    wk.unverifiable(f"git --config-env {k}: a command git runs, taken from ${var}", text)
                    return True
            i += 1 if "=" in a else 2
            continue
        if a == "-C" and i + 1 < n:
            cdir = args[i + 1] if cdir is None else os.path.join(cdir, args[i + 1])
            i += 2
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
    sub, rest, lrest = args[i], args[i + 1:], largs[i + 1:]
    if largs[i] >= 0:
        wk.unverifiable(f"git runs a subcommand whose name cannot be read statically ({sub})", text)
        return True
    if sub == "config":
        note_config_write(wk, rest, lrest)
        return True
    here = wk.project_dir()
    if here is None:
        # nothing from files can be read; inline aliases and arguments still can
        top = common = None
    else:
        if cdir:
            here = os.path.normpath(os.path.join(here, cdir))
        found = git_dirs(here)
        top, common = (found[0], found[2]) if found else (None, None)
    cfg = _config(wk, common, inline, env, text)
    if cfg is None:
        return True
    sub_ctx = ctx.sub(f"git {sub}", wrapper="git")
    cwd_top = top or here

    def shell(body, what, cwd=cwd_top):
        if body and body.strip():
            wk.run_in(body, sub_ctx, what, text, cwd=cwd)

    # aliases (only for names git does not know)
    if sub not in BUILTINS:
        alias = _last(cfg, f"alias.{sub.lower()}")
        if alias is None:
            return True   # an external git-<sub> or an error
        if alias.startswith("!"):
            shell(alias[1:] + ("" if not rest else " " + " ".join(_q(x) for x in rest)), f"git alias {sub}")
            return True
        words = alias.split()
        if words and words[0] == sub:
            return True
        expanded = ["git"] + args[:i] + words + rest
        lexp = [-1] + largs[:i] + [-1] * len(words) + lrest
        wk._inner(expanded, lexp, 0, env, ctx.sub(f"git alias:{sub}", wrapper="git"), text)
        return True
    # options of this subcommand that run a command
    for opt in _TEXT_OPTS.get(sub, ()):
        for k, a in enumerate(rest):
            val, lv = None, -1
            if a == opt and k + 1 < len(rest):
                val, lv = rest[k + 1], lrest[k + 1]
            elif opt.startswith("--") and a.startswith(opt + "="):
                val, lv = a[len(opt) + 1:], lrest[k]
            elif not opt.startswith("--") and a.startswith(opt) and len(a) > len(opt) and sub == "rebase":
                val, lv = a[len(opt):], lrest[k]
            if val is None:
                continue
            if lv >= 0:
                wk.unverifiable(f"git {sub} {opt} runs a command that cannot be read statically", text)
            else:
                shell(val, f"git {sub} {opt}")
    if sub == "filter-branch":
        for k, a in enumerate(rest):
            for opt in _FILTER_OPTS:
                if a == opt and k + 1 < len(rest):
                    if lrest[k + 1] >= 0:
                        wk.unverifiable(f"git filter-branch {opt} runs a command that cannot be read", text)
                    else:
                        shell(rest[k + 1], f"git filter-branch {opt}")
    if sub == "bisect" and rest[:1] == ["run"] and len(rest) > 1:
        wk._inner(rest, lrest, 1, env, ctx.sub("git bisect run", wrapper="git"), text)
    if sub == "submodule":
        k = rest.index("foreach") if "foreach" in rest else -1
        if k >= 0:
            j = k + 1
            while j < len(rest) and rest[j].startswith("-"):
                j += 1
            if any(x >= 0 for x in lrest[j:]):
                wk.unverifiable("git submodule foreach runs a command that cannot be read statically", text)
            else:
                shell(" ".join(rest[j:]), "git submodule foreach")
    if sub == "filter-repo":
        for k, a in enumerate(rest):
            if a.endswith("-callback") and k + 1 < len(rest):
                from swarmgate.hooks.bash_results import Program
                wk.an.programs.append(Program("git filter-repo", rest[k + 1], text, cwd_top, ctx.via, "inline"))
    # editors
    editor_kind = _opens_editor(sub, rest)
    if editor_kind:
        if editor_kind == "sequence":
            ed = env.get("GIT_SEQUENCE_EDITOR") or _last(cfg, "sequence.editor")
            if ed:
                shell(ed + " .git/rebase-merge/git-rebase-todo", "git sequence editor")
        ed = (env.get("GIT_EDITOR") or _last(cfg, "core.editor") or env.get("VISUAL") or env.get("EDITOR"))
        if ed:
            shell(ed + " .git/COMMIT_EDITMSG", "git editor")
    # configured commands
    fsm = _last(cfg, "core.fsmonitor")
    if fsm and sub in _FSMONITOR_CMDS and fsm.lower() not in ("true", "false", "yes", "no", "on", "off", "1",
                                                                 "0", ""):
        shell(fsm, "git core.fsmonitor")
    if sub in _DIFF_CMDS and "--no-ext-diff" not in rest:
        ext = env.get("GIT_EXTERNAL_DIFF") or _last(cfg, "diff.external")
        if ext:
            shell(ext, "git diff.external")
        for k, vals in cfg.items():
            if k.startswith("diff.") and k.endswith((".textconv", ".command")) and k.count(".") >= 2:
                shell(vals[-1], f"git {k}")
    if sub in _REMOTE_CMDS:
        ssh = env.get("GIT_SSH_COMMAND") or _last(cfg, "core.sshcommand")
        if ssh:
            shell(ssh, "git ssh command")
        if env.get("GIT_SSH"):
            shell(env["GIT_SSH"], "git GIT_SSH")
        for v in cfg.get("credential.helper", []):
            if v.startswith("!"):
                shell(v[1:], "git credential helper")
    if sub in _FILTER_CMDS:
        for k, vals in cfg.items():
            if k.startswith("filter.") and k.endswith((".clean", ".smudge", ".process")):
                shell(vals[-1], f"git {k}")
    # hooks
    hooks = _HOOKS.get(sub, ())
    if hooks and common is not None and "--no-hooks" not in rest:
        no_verify = "--no-verify" in rest or (sub == "commit" and any(
            x == "-n" or (x.startswith("-") and not x.startswith("--") and "n" in x[1:]) for x in rest))
        hp = _last(cfg, "core.hookspath")
        hdir = os.path.normpath(os.path.join(top or here, os.path.expanduser(hp))) if hp else \
            os.path.join(common, "hooks")
        for h in hooks:
            if no_verify and h in _NO_VERIFY_HOOKS:
                continue
            path = os.path.join(hdir, h)
            if path in wk.written or (os.path.isfile(path) and os.access(path, os.X_OK)):
                wk.run_hook(path, ctx.sub(f"git hook:{h}", wrapper="git"), text, cwd_top)
    return True


def _q(w: str) -> str:
    if w and all(c.isalnum() or c in "-_./=:,+%@^" for c in w):
        return w
    return "'" + w.replace("'", "'\\''") + "'"


def _command_key(k: str) -> bool:
    """Config keys whose value git runs as a command."""
    return (k.startswith(("alias.", "pager.")) or k in ("core.fsmonitor", "core.editor", "sequence.editor",
                                              "diff.external", "core.sshcommand", "credential.helper",
                                              "core.pager", "core.hookspath", "gpg.program", "core.askpass")
            or (k.startswith(("filter.", "diff.", "merge.", "difftool.", "mergetool.", "pager."))
                and k.endswith((".clean", ".smudge", ".process", ".textconv", ".command", ".driver", ".cmd"))))


def _opens_editor(sub: str, rest: list) -> str | None:
    """"editor" / "sequence" when ``git sub rest`` opens an editor, else None."""
    if sub == "commit":
        if any(x in ("-m", "-F", "--file", "--no-edit", "-C", "--reuse-message", "--fixup") or
               x.startswith(("-m", "--message", "--file=", "-F", "--fixup=", "-C", "--reuse-message="))
               for x in rest):
            return "editor" if "-e" in rest or "--edit" in rest else None
        return "editor"
    if sub == "rebase" and ("-i" in rest or "--interactive" in rest or
                            any(x.startswith("-") and not x.startswith("--") and "i" in x[1:] for x in rest)):
        return "sequence"
    if sub == "merge" and ("-e" in rest or "--edit" in rest):
        return "editor"
    if sub == "tag" and ("-a" in rest or "-s" in rest) and not any(x.startswith(("-m", "-F")) for x in rest):
        return "editor"
    if sub in ("notes",) and rest[:1] in (["add"], ["edit"], ["append"]) and "-m" not in rest:
        return "editor"
    if sub == "add" and any(x in ("-e", "--edit") for x in rest):
        return "editor"
    return None


# ---------------------------------------------------------------- pre-commit

def local_hooks(config_text: str) -> list[tuple[str, str, list, str]]:
    """(id, entry, args, language) of the ``repo: local`` hooks of a .pre-commit-config.yaml.
    Raises ValueError when the file cannot be read."""
    from swarmgate.hooks.yaml_subset import YamlUnsupported, load

    try:
        data = load(config_text)
    except YamlUnsupported as e:
        raise ValueError(str(e)) from None
    out = []
    repos = data.get("repos") if isinstance(data, dict) else None
    for r in repos or []:
        if not isinstance(r, dict) or r.get("repo") not in ("local", "meta"):
            continue
        for h in r.get("hooks") or []:
            if not isinstance(h, dict) or not isinstance(h.get("entry"), str):
                continue
            args = [a for a in (h.get("args") or []) if isinstance(a, str)]
            out.append((str(h.get("id", "")), h["entry"], args, str(h.get("language", ""))))
    return out


def run_pre_commit(wk, name, args, largs, env, ctx, text):
    """``pre-commit run [HOOK] ...`` (also ``hook-impl`` from the git hook, and ``try-repo``):
    the local hooks' entries run as commands."""
    sub = next((a for a in args if not a.startswith("-")), None)
    if sub not in ("run", "hook-impl", "try-repo", None) or (sub is None and args):
        return True
    only = None
    if sub == "run":
        k = args.index("run")
        pos = [a for a in args[k + 1:] if not a.startswith("-")]
        for j, a in enumerate(args[k + 1:], k + 1):
            if a in ("--hook-stage", "--from-ref", "--to-ref", "-s", "-o", "--files", "--source",
                     "--origin", "--remote-name", "--remote-url", "--commit-msg-filename"):
                if j + 1 < len(args) and args[j + 1] in pos:
                    pos.remove(args[j + 1])
        only = pos[0] if pos else None
    cfgname = ".pre-commit-config.yaml"
    for j, a in enumerate(args):
        if a in ("-c", "--config") and j + 1 < len(args):
            cfgname = args[j + 1]
        elif a.startswith("--config="):
            cfgname = a.split("=", 1)[1]
    here = wk.project_dir()
    if here is None:
        wk.unverifiable("pre-commit: cannot tell which directory it runs in", text)
        return True
    found = git_dirs(here)
    root = found[0] if found else here
    path = os.path.normpath(os.path.join(root, cfgname))
    if not (os.path.isfile(path) or path in wk.written):
        return True
    body = wk.read_project_file(path, text, "pre-commit")
    if body is None:
        return True
    try:
        hooks = local_hooks(body)
    except ValueError as e:
        wk.unverifiable(f"pre-commit: {path} cannot be read ({e})", text)
        return True
    for hid, entry, hargs, lang in hooks:
        if only and hid != only:
            continue
        line = entry + ("" if not hargs else " " + " ".join(_q(a) for a in hargs))
        if lang in ("pygrep", "fail"):
            continue
        wk.run_in(line, ctx.sub(f"pre-commit:{hid}", wrapper=name), f"pre-commit hook {hid}", text, cwd=root)
    return True
