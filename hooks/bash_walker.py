"""The walker of the bash reader: visits a parsed tree and yields every simple command.

``Walker`` follows lists, pipelines, compound commands, substitutions, functions,
variables, wrappers (``bash_wrappers``), nested shell texts, scripts at command
position and make recipes, within the bounds ``bash_tree.analyze`` gives it.
See ``bash_tree`` for the decisions it implements.

The methods for the rare constructs (loops, groups, nested shell texts, constant command
substitutions, arithmetic, script arguments...) are in ``bash_walker_rare``, loaded by
``Walker.__getattr__`` on the first call of one of them: a common command never pays their bytecode.
"""
from __future__ import annotations

from swarmgate import lean_os as os
import sys
import time

from swarmgate.bounded_read import read_bytes
from swarmgate.hooks import bash_lexical as _lx
from swarmgate.hooks.bash_parse import OutOfTime
from swarmgate.hooks.bash_results import (ANY, SETUP, Analysis, Loop, Program, Redirect, SimpleCommand,
                                          Unverifiable, command_name)
from swarmgate.hooks.bash_words import base_vars, c_unescape, expand, expand_braces, shell_quote
from swarmgate.hooks.bash_wrappers import (INTERP_PREFIXES, INTERPRETERS, PYTHON, SHELLS, SPECIAL,
                                           TABLE, find_command, is_python, lookup)
from swarmgate.hooks.string_runners import NAMES as STRING_RUNNERS

_MAX_TREE_NEST = 200           # walker recursion bound (nested nodes)
_MAX_ENV_NAMES = 64               # dynamic command names read through the environment, per judgement
_UNKNOWN_DIR = "/?unknown-dir"   # stands for a directory we cannot name (cd "$(mktemp -d)")
_MAX_FUNC_CALLS = 64           # function bodies expanded per analysis (f calls g twice, g calls h twice...)
# programs read by bash_programs (imported only when one is called)
PROGRAM_READERS = frozenset((
    "env", "xargs", "watch", "parallel", "tmux", "screen", "docker", "podman", "nerdctl", "gdb", "hyperfine",
    "tar", "bsdtar", "gtar", "sed", "gsed", "awk", "gawk", "mawk", "nawk", "expect", "vim", "nvim", "vi", "ex",
    "view", "vimdiff"))
# programs that run commands kept in project files: name -> (module, function); the module is
# imported only when such a program is called
PROJECT_RUNNERS = {
    "npm": ("package_scripts", "run"), "yarn": ("package_scripts", "run"),
    "pnpm": ("package_scripts", "run"), "bun": ("package_scripts", "run"),
    "just": ("task_files", "run_just"), "task": ("task_files", "run_task"),
    "go-task": ("task_files", "run_task"), "tox": ("task_files", "run_tox"),
    "nox": ("task_files", "run_nox"), "ninja": ("task_files", "run_ninja"),
    "samu": ("task_files", "run_ninja"), "cargo": ("cargo_config", "run"),
    "git": ("git_runs", "run"), "pre-commit": ("git_runs", "run_pre_commit"),
    "pre_commit": ("git_runs", "run_pre_commit"), "prek": ("git_runs", "run_pre_commit"),
    "make": ("makefile_reader", "run_make"), "gmake": ("makefile_reader", "run_make"),
}


class Ctx:
    __slots__ = ("via", "bg", "depth", "wrappers", "env", "script", "redirs")

    def __init__(self, via=(), bg=0, depth=0, wrappers=(), env=None, script=None, redirs=()) -> None:
        self.via = via
        self.bg = bg
        self.depth = depth
        self.wrappers = wrappers
        self.env = env or {}
        self.script = script
        self.redirs = redirs          # redirections of enclosing compound commands

    def sub(self, label: str | None = None, *, bg: int | None = None, depth: int | None = None,
            wrapper: str | None = None, env: dict | None = None, script: str | None = None,
            redirs: tuple | None = None) -> Ctx:
        return Ctx(self.via + (label,) if label else self.via,
                    self.bg if bg is None else bg,
                    self.depth if depth is None else depth,
                    self.wrappers + (wrapper,) if wrapper else self.wrappers,
                    self.env if env is None else env,
                    self.script if script is None else script,
                    self.redirs if redirs is None else redirs)


_rare_loaded: set = set()   # Walker.__getattr__: whether bash_walker_rare's methods joined the class


class Walker:
    def __init__(self, an: Analysis, cwd: str | None, max_depth: int, deadline: float,
                 max_script_bytes: int) -> None:
        self.an = an
        self.cwd: str | None = cwd
        self.max_depth = max_depth
        self.deadline = deadline
        self.max_script_bytes = max_script_bytes
        self.vars: dict[str, str | None] = base_vars(cwd)
        self.positional: list[str] | None = []      # the Bash tool's shell has no arguments
        self._script_args: tuple | None = None
        self._set_positional([], [])
        self.funcs: dict[str, tuple] = {}        # name -> (body node, ctx at definition)
        self.called: set[str] = set()
        self.active_funcs: list[int] = []
        self.func_calls = 0
        self.env_names = 0
        self.by_path = False   # the command being followed was named by a path (no shim sees it start)
        self.source = ""       # the command as typed (bash_tree.analyze sets it)
        self.seen_scripts: set[str] = set()
        self.written: dict[str, tuple | None] = {}
        self.dir_stack: list[str | None] = []        # pushd/popd
        self.collect: list[list] = []            # loop command lists being filled
        self.loops_open: list[Loop] = []
        self.nest = 0
        self.ticks = 0
        self._io: tuple = ([], [], None)
        self.stdin_stack: list[tuple] = []
        self.makefiles: dict[str, tuple] = {}
        self.project_cache: dict = {}             # project files read and parsed, per analysis
        self.git_config_set: list = []            # `git config KEY VALUE` earlier in this command
        self.hashed: dict = {}                    # `hash -p PATH NAME`: NAME -> (PATH, dynamic end)
        self.namerefs: dict = {}                  # `declare -n REF=VAR`
        self.script_args: dict = {}               # script path -> the arguments it was first read with
        self.dir_cache: dict = {}                 # directory listings for glob expansion
        self._wrote_unknown_dir = False           # a file was written somewhere that cannot be named
        self.tree_changed: str | None = None      # a command that rewrote files nobody can list (git checkout)
        self.unknown_dirs = 0
        self.parser = "lexical"
        self.aliases: dict[str, str | None] = {}
        self.expanded_loops = 0
        self.active_aliases: list[str] = []
        self.extra_wrappers: dict | None = None   # `[bash] wrappers` entries (bash_wrappers.Wrapper)
        self.programs_read = 0                    # an.programs whose shell commands were walked

    def __getattr__(self, name: str):
        """Called only when the normal lookup fails: the first time, the methods for the rare
        constructs (hooks/bash_walker_rare.py) join the class, and the lookup is made again."""
        if name.startswith("__") or "bash_walker_rare" in _rare_loaded:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        from swarmgate.hooks.bash_walker_rare import RareWalking
        for attr, value in vars(RareWalking).items():
            if not attr.startswith("__"):
                setattr(Walker, attr, value)
        _rare_loaded.add("bash_walker_rare")
        return getattr(self, name)

    # -- bookkeeping ---------------------------------------------------------
    def tick(self) -> None:
        self.ticks += 1
        if (self.ticks & 15) == 0 and time.monotonic() > self.deadline:
            raise OutOfTime()

    def unverifiable(self, reason: str, text: str, exec_judged: tuple | None = None) -> None:
        if exec_judged and self.by_path and ANY not in exec_judged:
            exec_judged = None   # `/usr/bin/make "$T"`: started by path, past every shim
        for u in self.an.unverifiable:
            if u.reason == reason and u.text == text:
                return
        self.an.unverifiable.append(Unverifiable(reason, text[:500], exec_judged))

    def problem(self, msg: str) -> None:
        if msg not in self.an.problems:
            self.an.problems.append(msg)

    # -- nodes ---------------------------------------------------------------
    def walk(self, node, ctx: Ctx, feed=None) -> None:
        self.tick()
        self.nest += 1
        try:
            if self.nest > _MAX_TREE_NEST:
                self.problem(f"tree nested deeper than {_MAX_TREE_NEST} levels")
                self.unverifiable("command nested too deeply to read", getattr(node, "text", ""))
                return
            t = type(node)
            if t is not _lx.Cmd and getattr(node, "redirs", None):
                # `{ ...; } > f`, `while ...; done < f`: the inner commands inherit them
                outer = self._redirects(node.redirs)
                for r in outer:
                    if r.writes and "$" not in r.target:
                        p = self._abspath(r.target)
                        if p is not None:
                            self.written[p] = None
                ctx = ctx.sub(None, redirs=ctx.redirs + tuple(outer))
            if t is _lx.Cmd:
                self.walk_cmd(node, ctx, feed)
            elif t is _lx.Seq:
                self.walk_seq(node, ctx)
            elif t is _lx.Pipe:
                self.walk_pipe(node, ctx)
            elif t is _lx.Group:
                self.walk_group(node, ctx)
            elif t is _lx.If:
                self.walk_redir_subs(node.redirs, ctx)
                for p in node.parts:
                    self.walk(p, ctx.sub("if"))
            elif t is _lx.Loop:
                self.walk_loop(node, ctx)
            elif t is _lx.Case:
                if node.word is not None:
                    self.walk_word_subs(node.word, ctx)
                self.walk_redir_subs(node.redirs, ctx)
                for b in node.bodies:
                    self.walk(b, ctx.sub("case"))
            elif t is _lx.Func:
                self.funcs[node.name] = (node.body, ctx)
            elif t is _lx.Test:
                for w in node.words:
                    self.walk_word_subs(w, ctx)
                self._arith_injection(node.text, ctx)
                if any(op in node.text for op in ("-eq", "-ne", "-lt", "-le", "-gt", "-ge")) or \
                        node.text.startswith("(("):
                    # operands of an arithmetic test are evaluated: substitutions in their text run
                    for w in node.words:
                        v = expand(w.raw, self.vars)[0]
                        if "$(" in v or "`" in v:
                            self._arith_injection(v, ctx, literal=True)
        finally:
            self.nest -= 1

    def walk_seq(self, seq: _lx.Seq, ctx: Ctx) -> None:
        items = seq.items
        if not items:
            return
        multi = len(items) > 1
        # group and-or chains: a `&` or `;` ends a chain and applies to all of it
        chain: list = []
        for node, term in items:
            chain.append(node)
            if term in ("&&", "||"):
                continue
            self._walk_chain(chain, term, ctx, multi)
            chain = []
        if chain:
            self._walk_chain(chain, "", ctx, multi)

    def _walk_chain(self, chain: list, term: str, ctx: Ctx, multi: bool) -> None:
        sub = ctx.sub("list") if multi and "list" not in ctx.via[-1:] else ctx
        if term == "&":
            text = " && ".join(getattr(n, "text", "") for n in chain)
            if ctx.bg > 0:
                self.an.nested_background.append((text + " &").strip())
            sub = sub.sub(None, bg=ctx.bg + 1)
            saved = (dict(self.vars), self.cwd)   # a background job runs in a subshell
            for n in chain:
                self.walk(n, sub)
            self.vars, self.cwd = saved
            return
        for n in chain:
            self.walk(n, sub)

    def walk_pipe(self, pipe: _lx.Pipe, ctx: Ctx) -> None:
        sub = ctx.sub("pipeline")
        prev = None
        saved = (dict(self.vars), self.cwd)
        for c in pipe.cmds:
            self.vars, self.cwd = dict(saved[0]), saved[1]   # each element is a subshell
            self.walk(c, sub, feed=prev)
            prev = c
        self.vars, self.cwd = saved

    def walk_word_subs(self, w: _lx.Word, ctx: Ctx) -> None:
        for kind, seq in w.subs:
            label = "procsubst" if kind.startswith("procsubst") else kind
            saved = (dict(self.vars), self.cwd)
            self.walk(seq, ctx.sub(label))
            self.vars, self.cwd = saved

    def walk_redir_subs(self, redirs: list, ctx: Ctx) -> None:
        for r in redirs:
            if r.target is not None:
                self.walk_word_subs(r.target, ctx)
            if r.heredoc and not r.quoted and ("$(" in r.heredoc or "`" in r.heredoc):
                self._heredoc_expansions(r.heredoc, ctx)

    def _heredoc_expansions(self, body: str, ctx: Ctx, label: str = "heredoc") -> None:
        """An unquoted heredoc's body undergoes $( ) and backtick substitution."""
        p = _lx.Parser(body)
        subs = p.scan_expansions()
        self.walk_word_subs(_lx.Word(body, subs), ctx.sub(label))

    # -- bash semantics: variables with effects, arithmetic ---------------------
    def _set_var(self, name: str, value: str | None) -> None:
        """Assign a variable; through a nameref, its target (both become what is known)."""
        target = self.namerefs.get(name)
        if target is not None:
            if target.isidentifier():
                self.vars[target] = value
            self.vars[name] = value
            return
        self.vars[name] = value
        for ref, tgt in self.namerefs.items():
            if tgt == name:
                self.vars[ref] = value

    # -- simple commands -----------------------------------------------------
    def _expand_words(self, words: list) -> tuple[list, list]:
        """Values of words after brace expansion, parameter expansion, word splitting (by IFS)
        and pathname expansion (against the cwd); per word, where its last unresolved
        expansion ends (-1: static)."""
        vals, dyn = [], []
        for w in words:
            if w.raw in ('"$@"', "$@", "$*", '"${@}"', "${@}") and self.positional is not None:
                vals.extend(self.positional)   # "$@": one word per argument
                dyn.extend([-1] * len(self.positional))
                continue
            raws = [w.raw]
            if "{" in w.raw and ("," in w.raw or ".." in w.raw):
                raws = expand_braces(w.raw)
                if len(raws) > 1:
                    raws = [r for r in raws if r != ""]   # empty words from braces are removed
            for raw in raws:
                v, last = expand(raw, self.vars, self._const_subst if w.subs else None)
                if "$" in raw and "'" not in raw and '"' not in raw and "\\" not in raw:
                    parts = self._split_fields(v, last)
                    if parts is not None:
                        for pv, pl in parts:
                            self._glob_into(pv, pl, raw, vals, dyn)
                        continue
                self._glob_into(v, last, raw, vals, dyn)
        return vals, dyn

    def _glob_into(self, v: str, last: int, raw: str, vals: list, dyn: list) -> None:
        """Pathname expansion of an unquoted word with * ? [ against the cwd: the files it
        names, else the word itself; unknown when the cwd cannot be named, or when an
        earlier command of this text may create files it could name."""
        if last >= 0 or not _unquoted_glob(raw) or not any(c in v for c in "*?["):
            vals.append(v)
            dyn.append(last)
            return
        hits = self._glob(v)
        if hits is None or self._maker_before():
            # the cwd is unknown, or an earlier command may have made (or removed) files
            vals.append(v)
            dyn.append(len(v))
            return
        if hits:
            vals.extend(hits)
            dyn.extend([-1] * len(hits))
            return
        vals.append(v)
        dyn.append(-1)

    def _glob(self, pattern: str) -> list | None:
        """Files matching ``pattern`` (sorted, at most 64), [] for none, None when it cannot
        be known (unknown cwd, unreadable directory)."""
        if not self._known_dir(self.cwd) and not pattern.startswith("/"):
            return None
        base = "/" if pattern.startswith("/") else self.cwd
        parts = [x for x in pattern.split("/") if x]
        found = [("", base)]
        for k, part in enumerate(parts):
            nxt = []
            for rel, d in found:
                if not any(c in part for c in "*?["):
                    p = os.path.join(d, part)
                    if k == len(parts) - 1 and not os.path.lexists(p):
                        continue
                    nxt.append((rel + part if not rel else rel + "/" + part, p))
                    continue
                names = self.dir_cache.get(d)
                if names is None:
                    try:
                        names = sorted(os.listdir(d))[:4096]
                    except OSError:
                        names = []
                    self.dir_cache[d] = names
                for nm in names:
                    if nm.startswith(".") and not part.startswith("."):
                        continue
                    if wildcard_match(part, nm):
                        nxt.append((nm if not rel else rel + "/" + nm, os.path.join(d, nm)))
            found = nxt[:256]
            if not found:
                return []
        out = [("/" + r if pattern.startswith("/") else r) for r, _ in found]
        return out[:64]

    def walk_cmd(self, c: _lx.Cmd, ctx: Ctx, feed) -> None:
        # substitutions run first (word expansion), in a subshell each
        for w in c.assigns:
            self.walk_word_subs(w, ctx)
        for w in c.words:
            self.walk_word_subs(w, ctx)
            if "@P}" in w.raw:
                self._prompt_expansions(w.raw, ctx, c.text)
        self.walk_redir_subs(c.redirs, ctx)
        assigns: dict[str, str] = {}
        for w in c.assigns:
            v, last = expand(w.raw, self.vars, self._const_subst if w.subs else None)
            k = v.find("=")
            name, val = v[:k].rstrip("+"), v[k + 1:]
            assigns[name] = val
            self._special_variable(name, val, last, ctx, c.text)
            if "[" in name:
                self._arith_injection(name[name.index("["):], ctx)   # a[i]=v: the subscript is arithmetic
            if not c.words:
                kr = w.raw.find("=")
                array = kr >= 0 and w.raw[kr + 1:kr + 2] == "("
                self._set_var(name, val if last < 0 and not array else None)
        redirs = self._redirects(c.redirs)
        if not c.words:
            self._note_writes(None, [], redirs, c, feed)
            if any(r.writes for r in redirs):
                self.emit([], [], {}, redirs, ctx, c.text)   # `> FILE` alone truncates it: a write to judge
            return
        for w in c.words:
            if "$((" in w.raw or "$[" in w.raw:
                self._arith_injection(w.raw, ctx)
        vals, last = self._expand_words(c.words)
        env = dict(ctx.env)
        env.update(assigns)
        self.dispatch(vals, last, env, redirs, c.redirs, ctx, c.text, feed, c)
        if len(self.an.programs) > self.programs_read:
            self._embedded_commands(ctx)   # os.system("..."), backticks: walked right after their program

    def _redirects(self, redirs: list) -> list:
        out = []
        for r in redirs:
            if r.target is None:
                tgt = str(r.dup) if r.dup is not None and r.dup >= 0 else "-"
            else:
                tgt = expand(r.target.raw, self.vars, self._const_subst if r.target.subs else None)[0]
            if r.op in ("<<", "<<-"):
                tgt = r.delim
            out.append(Redirect(r.op, tgt, r.fd, r.heredoc if r.op in ("<<", "<<-") else None,
                                r.quoted))
        return out

    def emit(self, words, last, env, redirs, ctx: Ctx, text: str) -> SimpleCommand:
        dyn = [x >= 0 for x in last]
        if ctx.redirs:
            redirs = list(ctx.redirs) + list(redirs)
        sc = SimpleCommand(list(words), dict(env), redirs, ctx.via, ctx.bg, ctx.wrappers, text,
                           self.cwd if self._known_dir(self.cwd) else None, dyn, ctx.script)
        self.an.commands.append(sc)
        for lst in self.collect:
            lst.append(sc)
        return sc

    def dispatch(self, words: list, last: list, env: dict, redirs: list, raw_redirs: list,
                 ctx: Ctx, text: str, feed, node) -> None:
        """Yield the command, then follow whatever it runs."""
        self.tick()
        if not words:
            return   # "$@" with no arguments: nothing runs
        w0 = words[0]
        if self.hashed and w0 in self.hashed and w0 not in self.funcs:
            # `hash -p PATH NAME`: NAME runs PATH
            path, lpath = self.hashed[w0]
            words, last = [path] + list(words[1:]), [lpath] + list(last[1:])
            w0 = path
        self.by_path = "/" in w0
        if last[0] >= 0 and w0.rfind("/") < last[0]:
            self.emit(words, last, env, redirs, ctx, text)
            # a name made of variables the command does not set: read as the environment sets
            # them (unset: the next word is the command), and left to the exec-time shims
            # should the Bash tool's shell differ (exec_deferral.env_name says when that is sound)
            from swarmgate.hooks.exec_deferral import env_name
            resolved = env_name(w0, self.vars, written=self.source)
            self.unverifiable(f"the command name is dynamic ({w0}): it cannot be read statically",
                              text, (ANY,) if resolved is not None else None)
            if resolved is not None and self.env_names < _MAX_ENV_NAMES:
                self.env_names += 1
                rest = ([resolved] if resolved else []) + list(words[1:])
                rest_last = ([-1] if resolved else []) + list(last[1:])
                if rest:
                    self.dispatch(rest, rest_last, env, redirs, raw_redirs, ctx, text, feed, node)
            return
        name = command_name(w0)
        sc = self.emit(words, last, env, redirs, ctx, text)
        if sc is not None:
            sc.piped = feed is not None
        self._io = (redirs, raw_redirs, feed)
        args = words[1:]
        largs = last[1:]
        self._note_writes(sc, args, redirs, node, feed)
        if (name not in SPECIAL and name not in TABLE and name not in PROJECT_RUNNERS
                and name not in STRING_RUNNERS and name not in self.funcs and name not in self.aliases
                and "/" not in w0 and not name.startswith(INTERP_PREFIXES)
                and (self.extra_wrappers is None or name not in self.extra_wrappers)):
            return   # an ordinary command: nothing more runs through it
        if name in STRING_RUNNERS and name not in self.funcs:
            self._string_commands(name, args, largs, env, ctx, text)

        # control flow inside loops
        if name in ("break", "exit", "return") and self.loops_open:
            if name == "break":
                levels = int(args[0]) if args and args[0].isdigit() else 1
                for lp in self.loops_open[-levels:]:
                    lp.has_break = True
            else:
                for lp in self.loops_open:
                    lp.has_break = True
            return

        if name == "alias":
            for a, la in zip(args, largs):
                k = a.find("=")
                if k > 0:
                    self.aliases[a[:k]] = a[k + 1:] if la < 0 else None
            return
        if name in self.aliases and w0 == name and name not in self.active_aliases:
            # an alias defined earlier in this text (bash expands it when
            # expand_aliases is on; judged as if it were)
            value = self.aliases[name]
            if value is None:
                self.unverifiable(f"alias {name} has a value that cannot be read statically", text)
                return
            self.active_aliases.append(name)
            try:
                self._nested_text(value + " " + " ".join(shell_quote(a) for a in args),
                                  ctx.sub(f"alias:{name}"), f"alias {name}", text)
            finally:
                self.active_aliases.pop()
            return
        if name == "busybox" and args:
            return self._inner_now(args, largs, 0, env, ctx.sub(None, wrapper="busybox"), text)

        # shell functions defined in this command
        if name in self.funcs and w0 == name:
            body, _ = self.funcs[name]
            self.called.add(name)
            # recursion stops at a body already being walked; a body is walked
            # again per call site, up to _MAX_FUNC_CALLS calls in all
            if self.func_calls >= _MAX_FUNC_CALLS and id(body) not in self.active_funcs:
                self.problem(f"more than {_MAX_FUNC_CALLS} function calls")
                self.unverifiable(f"more than {_MAX_FUNC_CALLS} function calls to follow: the rest "
                                  "cannot be read", text)
                return
            if id(body) not in self.active_funcs and self.func_calls < _MAX_FUNC_CALLS:
                self.func_calls += 1
                self.active_funcs.append(id(body))
                saved_pos = (self.positional, {k: v for k, v in self.vars.items()
                                               if k.isdigit() and k != "0" or k in "#@*"})
                self._set_positional(args, largs)
                try:
                    self.walk(body, ctx.sub(f"function:{name}"))
                finally:
                    self.active_funcs.pop()
                    self.positional = saved_pos[0]
                    for k in [k for k in self.vars if k.isdigit() and k != "0" or k in "#@*"]:
                        del self.vars[k]
                    self.vars.update(saved_pos[1])
            return

        if name in SHELLS:
            self._shell(name, args, largs, env, redirs, raw_redirs, ctx, text, feed)
            return
        if name in ("source", "."):
            if args:
                self._script_args = (args[1:], largs[1:]) if len(args) > 1 else None
                self._script_arg(args[0], largs[0], env, ctx, text, "source", share=True)
            return
        if name == "trap":
            # trap 'CMDS' SIGNAL...: CMDS run later, on the signal or at exit
            a = [x for x in args if x != "--"]
            if len(a) >= 2 and a[0] not in ("-", "") and not a[0].startswith("-"):
                self._nested_text(a[0], ctx.sub("trap"), "trap", text)
            return
        if name == "eval":
            from swarmgate.hooks.exec_deferral import setup_printer
            printer = setup_printer(args, largs) if args else None
            if printer:
                # the printer itself was walked as a command substitution
                self.unverifiable(f"eval runs the shell setup that {printer} prints: it cannot be read "
                                  f"statically", text, (SETUP,))
            elif args:
                self._nested_text(" ".join(args), ctx.sub("eval"), "eval", text)
            return
        if name in ("cd", "pushd"):
            before = self.cwd
            self._cd(args, largs)
            if name == "pushd":
                self.dir_stack.append(before)
            return
        if name == "popd":
            self._chdir(self.dir_stack.pop() if self.dir_stack else None)
            return
        if name in ("export", "declare", "typeset", "local", "readonly"):
            flags = "".join(a[1:] for a in args if a.startswith(("-", "+")) and a != "--")
            for a, la in zip(args, largs):
                if a.startswith(("-", "+")):
                    continue
                k = a.find("=")
                var = a[:k] if k > 0 else a
                if not var.isidentifier():
                    continue
                if "n" in flags:
                    # a nameref: $REF is the value of the variable it names
                    target = a[k + 1:] if k > 0 else ""
                    self.namerefs[var] = target
                    self.vars[var] = self.vars.get(target) if la < 0 and target.isidentifier() else None
                    continue
                if k > 0:
                    val = a[k + 1:]
                    self._special_variable(var, val, la, ctx, text)
                    if "i" in flags:
                        self._arith_injection(val, ctx, literal=True)
                    self._set_var(var, val if la < 0 else None)
            return
        if name == "let":
            for a in args:
                self._arith_injection(a, ctx, literal=True)
            return
        if name == "hash":
            if "-r" in args:
                self.hashed.clear()
            k = args.index("-p") if "-p" in args else -1
            if k >= 0 and k + 2 <= len(args) - 1 + 1 and k + 1 < len(args):
                path, lpath = args[k + 1], largs[k + 1]
                for nm in args[k + 2:]:
                    self.hashed[nm] = (path, lpath)
            return
        if name == "enable" and any(a == "-f" or (a.startswith("-") and "f" in a[1:]) for a in args):
            self.unverifiable("enable -f loads a builtin from a shared object: what it runs cannot be "
                              "read statically", text)
            return
        if name == "shopt" or name == "set":
            if name == "set" and "--" in args:
                k = args.index("--")
                self._set_positional(args[k + 1:], largs[k + 1:])
            return
        if name == "printf" and len(args) >= 3 and args[0] == "-v":
            # printf -v NAME FORMAT ARGS: an assignment
            var, fmt = args[1], args[2]
            if var.isidentifier():
                known = all(x < 0 for x in largs[2:])
                if known and "%" not in fmt.replace("%%", ""):
                    self.vars[var] = c_unescape(fmt).replace("%%", "%")
                elif known and fmt in ("%s", "%b") and len(args) == 4:
                    self.vars[var] = args[3]
                else:
                    self.vars[var] = None
            return
        if name == "unset":
            for a in args:
                self.vars.pop(a, None)
            return
        if name in ("read", "mapfile", "readarray"):
            for a in args:
                if a.isidentifier():
                    self.vars[a] = None
            return
        if name == "find":
            self._find(args, largs, env, ctx, text)
            return
        reader = PROJECT_RUNNERS.get(name)
        if reader is not None:
            # a runner of project files (package.json, justfile ...): imported only when called
            name_ = "swarmgate.hooks." + reader[0]
            mod = sys.modules.get(name_) or __import__(name_, fromlist=["_"])
            if getattr(mod, reader[1])(self, name, args, largs, env, ctx, text) is not None:
                return
        inner = self._wrapped(name, args, largs, env, ctx, text, feed)
        if inner is not None:
            return
        for prefix, opts in INTERPRETERS.items():
            if name == prefix or (name.startswith(prefix) and name[len(prefix):].replace(".", "").isdigit()):
                if is_python(name):
                    # `python -m pytest ...` runs the module as a command: yield it as one
                    f = find_command(PYTHON, args)
                    if f.kind == "argv":
                        self._io = (redirs, raw_redirs, feed)
                        sub = ctx.sub(PYTHON.label, wrapper=name)
                        if f.text:
                            words = [f.text] + args[f.index + 1:]
                            self._inner(words, [largs[f.index]] + largs[f.index + 1:], 0, env, sub, text)
                        else:
                            self._inner(args, largs, f.index, env, sub, text)
                        return
                if prefix in ("node", "nodejs", "bun", "deno"):
                    self._node_preloads(name, args, env, text, ctx)
                self._interpreter(name, args, opts, raw_redirs, text, ctx)
                return
        if "/" in w0:
            self._script_args = (args, largs)
            self._maybe_script(w0, args, env, ctx, text, dir_dynamic=last[0] >= 0)

    def _prompt_expansions(self, raw: str, ctx: Ctx, text: str) -> None:
        """``${NAME@P}`` expands NAME's value as a prompt string: its command substitutions run."""
        import re

        for m in re.finditer(r"\$\{([A-Za-z_][A-Za-z_0-9]*)@P\}", raw):
            value = self.vars.get(m.group(1), "")
            if value is None:
                self.unverifiable(f"${{{m.group(1)}@P}} runs what the value it expands holds, which cannot be "
                                  f"read statically", text)
            elif "$(" in value or "`" in value:
                # read as the double-quoted word it expands like
                self._nested_text(f': "{value}"', ctx.sub(f"${{{m.group(1)}@P}}"), "prompt expansion", text)

    # -- wrappers ------------------------------------------------------------
    def _string_commands(self, name, args, largs, env, ctx, text) -> None:
        """The commands a program or builtin runs from a string it was given (hooks/string_runners.py)."""
        from swarmgate.hooks.string_runners import found

        for label, body, _value in found(name, args, largs, env, self.vars):
            if body is None:
                self.unverifiable(f"{label} runs a command from a value that cannot be read statically", text)
            else:
                self._nested_text(body, ctx.sub(label, wrapper=name), label, text)

    def _wrapped(self, name, args, largs, env, ctx, text, feed) -> bool | None:
        """Follow what a wrapper runs; True when handled, None when ``name`` runs nothing more."""
        if name in PROGRAM_READERS:
            from swarmgate.hooks.bash_programs import READERS   # only when such a program is called
            got = READERS[name](self, name, args, largs, env, ctx, text)
            if got is not None:
                return got
        if name == "swarmgate":
            if args[:1] == ["preflight"] and len(args) > 1:
                self._script_arg(args[1], largs[1], env, ctx.sub("swarmgate preflight"), text,
                                 "swarmgate preflight", share=False)
            return True
        w = lookup(name, self.extra_wrappers)
        if w is None:
            return None
        f = find_command(w, args)
        if f.kind == "none":
            return True
        label = w.label.replace("{}", f.operand or "") if w.label else None
        bg = self._detach(ctx, text) if f.detach else None
        sub = ctx.sub(label, wrapper=name, bg=bg)
        if f.kind == "shell":
            self._nested_text(f.text, sub, f"{name} (shell text)", text)
            return True
        env2 = dict(env)
        env2.update(f.env)
        if f.text:   # -mMOD, --command=PROG
            words = [f.text] + args[f.index + 1:]
            return self._inner(words, [largs[f.index]] + largs[f.index + 1:], 0, env2, sub, text)
        return self._inner(args, largs, f.index, env2, sub, text)

    def _inner(self, args, largs, i, env, ctx, text) -> bool:
        if i < len(args):
            inner = args[i:]
            # the wrapped command inherits the wrapper's stdin/stdout (heredoc, pipe, files)
            redirs, raw_redirs, feed = self._io
            self.dispatch(inner, largs[i:], env, redirs, raw_redirs, ctx, text, feed, None)
        return True

    def _heredoc_text(self, r) -> str | None:
        """The text a here-document feeds, expanded when its delimiter is unquoted;
        None when that expansion is not constant."""
        body = r.heredoc or ""
        if r.quoted or ("$" not in body and "`" not in body):
            return body
        v, last = expand(body, self.vars, self._const_subst, heredoc=True)
        return None if last >= 0 else v

    def _find(self, args, largs, env, ctx, text) -> None:
        i, n = 0, len(args)
        while i < n:
            a = args[i]
            if a in ("-exec", "-execdir", "-ok", "-okdir"):
                j = i + 1
                while j < n and args[j] not in (";", "+"):
                    j += 1
                if j > i + 1 and "{}" in args[i + 1]:
                    # each file found is the program: the one `-name` names, else any file
                    named = _find_name(args, largs)
                    if named is None:
                        self.unverifiable("find -exec runs each file it finds as a program, and no literal "
                                          "-name says which", text)
                    else:
                        self.dispatch([args[i + 1].replace("{}", named)] + args[i + 2:j], largs[i + 1:j], env,
                                      [], [], ctx.sub("find -exec", wrapper="find"), text, None, None)
                elif j > i + 1:
                    first = len(self.an.commands)
                    self.dispatch(args[i + 1:j], largs[i + 1:j], env, [], [],
                                  ctx.sub("find -exec", wrapper="find"), text, None, None)
                    # `{}` is each file find yields: its writes are placed under the start points
                    # (hooks/writers_find.py placed_under_roots); an inner find's own wins
                    from swarmgate.hooks.writers_find import roots
                    mark = (tuple(roots(args)), a in ("-execdir", "-okdir"))
                    for c in self.an.commands[first:]:
                        if c.find is None:
                            c.find = mark
                i = j + 1
                continue
            i += 1

    def _cd(self, args, largs) -> None:
        rest = [a for a in args if not a.startswith("-") or a == "-"]
        if not rest:
            self._chdir(self.vars.get("HOME") or os.path.expanduser("~"))
            return
        d = rest[0]
        if d == "-" and self._known_dir(self.vars.get("OLDPWD")):
            self._chdir(self.vars["OLDPWD"])
            return
        if largs[args.index(d)] >= 0 or d == "-":
            self._chdir(None)
            return
        d = os.path.expanduser(d)
        if os.path.isabs(d):
            self._chdir(os.path.normpath(d))
        elif self.cwd is not None:
            self._chdir(os.path.normpath(os.path.join(self.cwd, d)))

    def _chdir(self, d: str | None) -> None:
        """The shell's directory changes to ``d`` (None: a directory we cannot name; files written and
        run there still match): $PWD and $OLDPWD follow, as bash sets them."""
        if d is None:
            self.unknown_dirs += 1
            d = f"{_UNKNOWN_DIR}-{self.unknown_dirs}"
        old = self.cwd
        self.cwd = d
        self.vars["OLDPWD"] = old if self._known_dir(old) else None
        self.vars["PWD"] = d if self._known_dir(d) else None

    def _known_dir(self, p: str | None) -> bool:
        return p is not None and not p.startswith(_UNKNOWN_DIR)

    # -- nested shell text ---------------------------------------------------
    # -- project files (package.json, justfile, Taskfile.yml ...) ---------------
    def project_dir(self) -> str | None:
        """The directory the current command runs in, when it can be named."""
        return self.cwd if self._known_dir(self.cwd) else None

    def read_project_file(self, path: str, text: str, what: str, as_script: bool = False) -> str | None:
        """The text of a project file a runner reads (``package.json``, ``justfile`` ...).
        A file this command wrote earlier is read as written; one whose content cannot be
        known (written with unknown content, edited in place, a FIFO, too large, binary) is
        unverifiable. None: no text (unverifiable already reported, or the file is missing)."""
        p = os.path.normpath(path)
        key = ("file", p)
        if key in self.project_cache:
            return self.project_cache[key]
        body = None
        if p in self.written:
            content = self.written[p]
            if content is None or content[0] != "text":
                self.unverifiable(f"{what}: {p} is written by this same command with content that "
                                  "cannot be read statically", text)
            else:
                body = content[1]
        elif os.path.lexists(p):
            body = self._read_script(p, text)
            if body is None and not os.path.isfile(p):
                self.unverifiable(f"{what}: {p} is not a regular file", text)
            elif body is not None:
                self.an.files_read.append(p)
                if as_script:
                    self.an.scripts_read.append(p)
        self.project_cache[key] = body
        return body

    # -- scripts -------------------------------------------------------------
    def _abspath(self, path: str) -> str | None:
        if path.startswith("~"):
            path = os.path.expanduser(path)
        if os.path.isabs(path):
            return os.path.normpath(path)
        if self.cwd is None:
            return None
        return os.path.normpath(os.path.join(self.cwd, path))

    def _set_positional(self, args: list, largs: list) -> None:
        """$1.. $# $@ $* for a script or function body (unknown when an argument is dynamic)."""
        for k in list(self.vars):
            if k.isdigit() and k != "0":
                del self.vars[k]
        if any(x >= 0 for x in largs):
            self.positional = None
            for k in ("#", "@", "*"):
                self.vars[k] = None
            for n, (a, la) in enumerate(zip(args, largs), 1):
                self.vars[str(n)] = a if la < 0 else None
            return
        self.positional = list(args)
        for n, a in enumerate(args, 1):
            self.vars[str(n)] = a
        for n in range(len(args) + 1, 10):
            self.vars[str(n)] = ""
        self.vars["#"] = str(len(args))
        self.vars["@"] = self.vars["*"] = " ".join(args)

    def _read_script(self, p: str, text: str) -> str | None:
        try:
            st = os.stat(p)
        except FileNotFoundError:
            self._missing_script(p, text)
            return None
        except OSError as e:
            self.problem(f"script {p} cannot be read: {e.strerror}")
            self.unverifiable(f"script {p} cannot be read", text)
            return None
        import stat as _stat
        if not _stat.S_ISREG(st.st_mode):
            self.problem(f"{p} is not a regular file")
            if not _stat.S_ISDIR(st.st_mode):
                # a FIFO, a socket or a device: what it feeds is not known until it runs
                self.unverifiable(f"{p} is not a regular file (a FIFO or a device): what it holds "
                                  "cannot be read statically", text)
            return None
        if st.st_size > self.max_script_bytes:
            self.problem(f"script {p} is {st.st_size} bytes, over the {self.max_script_bytes}-byte limit")
            self.unverifiable(f"script {p} is too large to read ({st.st_size} bytes)", text)
            return None
        try:  # bounded: a FIFO or device put there after the stat is refused, not waited on
            data = read_bytes(p, self.max_script_bytes)
        except OSError as e:
            self.problem(f"script {p} cannot be read: {e.strerror}")
            self.unverifiable(f"script {p} cannot be read", text)
            return None
        if b"\0" in data:
            self.problem(f"{p} is not a text file (NUL bytes)")
            self.unverifiable(f"{p} is a binary file run as a script", text)
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            self.problem(f"{p} is not UTF-8 text")
            self.unverifiable(f"{p} is not text: it cannot be read as a script", text)
            return None

    # -- writes (scripts written then run) -----------------------------------
    def _note_writes(self, sc, args, redirs, node, feed) -> None:
        name = sc.name if sc is not None else ""
        content = None
        if node is not None and sc is not None and any(r.writes for r in redirs):
            out = self._static_output(node)
            if out is not None:
                content = out[:2]
        for r in redirs:
            if r.writes and r.fd in (None, 1) and r.op != "<>":
                p = self._abspath(r.target) if "$" not in r.target else None
                if p is None:
                    if "$" in r.target and r.target != "/dev/null":
                        self._wrote_unknown_dir = True
                    continue
                if r.op in (">>", "&>>") and p in self.written:
                    prev = self.written[p]
                    if prev is not None and content is not None and prev[0] == content[0] == "text":
                        self.written[p] = ("text", prev[1] + content[1])
                    else:
                        self.written[p] = None
                else:
                    self.written[p] = content if sc is not None else ("text", "")
        if sc is None:
            return
        if name == "tee":
            files = [a for a in args if not a.startswith("-")]
            src = None
            for r in (node.redirs if node is not None else []):
                if r.op in ("<<", "<<-") and r.heredoc is not None:
                    body = self._heredoc_text(r)
                    src = None if body is None else ("text", body)
                elif r.op == "<<<" and r.target is not None:
                    v, l2 = expand(r.target.raw, self.vars)
                    src = None if l2 >= 0 else ("text", v + "\n")
            if src is None and feed is not None:
                o = self._static_output(feed)
                src = o[:2] if o else None
            for f in files:
                p = self._abspath(f)
                if p is not None:
                    self.written[p] = src
        elif name in ("cp", "mv", "install", "ln") and len(args) >= 2:
            ops = [a for a in args if not a.startswith("-")]
            if len(ops) == 2:
                dst, srcp = self._abspath(ops[1]), self._abspath(ops[0])
                if dst is not None:
                    if os.path.isdir(dst):
                        dst = os.path.join(dst, os.path.basename(ops[0]))
                    if srcp is not None and srcp in self.written:
                        self.written[dst] = self.written[srcp]
                    else:
                        self.written[dst] = ("files", [srcp]) if srcp else None
        elif name in ("curl", "wget"):
            flag = "o" if name == "curl" else "O"
            longs = ("--output", "--output-document")
            for k, a in enumerate(args):
                target = None
                if a.startswith(longs) and "=" in a:
                    target = a.split("=", 1)[1]
                elif (a in longs or (a.startswith("-") and not a.startswith("--")
                                     and a.endswith(flag))) and k + 1 < len(args):
                    target = args[k + 1]
                if target and target != "-":
                    p = self._abspath(target)
                    if p is not None:
                        self.written[p] = None
        elif name == "dd":
            for a in args:
                if a.startswith("of="):
                    p = self._abspath(a[3:])
                    if p is not None:
                        self.written[p] = None
        elif name in ("sed", "gsed", "perl"):
            from swarmgate.hooks.writers_text import perl_inplace_files, sed_inplace_files
            for f in (perl_inplace_files(args) if name == "perl" else sed_inplace_files(args)):
                p = self._abspath(f)
                if p is not None:
                    self.written[p] = None
        elif name in ("patch", "git", "tar", "unzip", "rsync", "bsdtar", "gtar", "7z", "cpio") and \
                _changes_tree(name, args):
            if name == "patch":
                ops, k = [], 0
                while k < len(args):
                    a = args[k]
                    if a in ("-i", "--input", "-o", "--output", "-d", "--directory", "-p", "-D", "-F",
                             "-r", "-B", "-Y", "-z", "-V", "-g"):
                        k += 2
                        continue
                    if not a.startswith("-"):
                        ops.append(a)
                    k += 1
                if ops:
                    p = self._abspath(ops[0])
                    if p is not None:
                        self.written[p] = None
                        return
            self.tree_changed = f"{name} {' '.join(args[:2])}".strip()
        elif name.startswith(INTERP_PREFIXES) and any(a.startswith("-") for a in args[:1]):
            # an interpreter one-liner that names a file may write it (open('x.sh', 'w'))
            code = " ".join(args)
            for q in ("'", '"'):
                for piece in code.split(q)[1::2]:
                    if "/" in piece or "." in piece:
                        cand = self._abspath(piece) if " " not in piece and len(piece) < 256 else None
                        if cand is not None and (os.path.isfile(cand) or cand.endswith((".sh", ".bash"))):
                            if any(w in code for w in ("open(", "write", "writeFile", "File.", "copy",
                                                        "move", "rename", "print >", "> ")):
                                self.written[cand] = None

    # -- interpreters --------------------------------------------------------
    def _interpreter(self, name, args, opts, raw_redirs, text, ctx) -> None:
        """Record the code an interpreter runs (inline or on its stdin) for the guards to scan."""
        code = None
        for k, a in enumerate(args):
            if a in opts and k + 1 < len(args):
                code = args[k + 1]
                break
            if a.startswith("-") and not a.startswith("--") and len(a) > 2 and ("-" + a[-1]) in opts:
                if k + 1 < len(args):
                    code = args[k + 1]
                    break
            if a.startswith("-c") and len(a) > 2 and "-c" in opts:
                code = a[2:]
                break
            if not a.startswith("-"):
                break
        source = "inline"
        if code is None and (not args or args[0] == "-"):
            # the program comes from stdin: a heredoc, a here-string, a file, a pipe
            code, unknown = self._stdin_program(raw_redirs)
            if unknown:
                self.an.programs.append(Program(name, None, text, self._cwd_or_none(), ctx.via, "stdin"))
                return
            source = "stdin"
        if code is None:
            self._program_file(name, args, text, ctx)
            return
        self.an.programs.append(Program(name, code, text, self._cwd_or_none(), ctx.via, source))

    _FILE_OPTS = frozenset(("-W", "-X", "-Q", "--check-hash-based-pycs", "-r", "--require", "-I", "-M",
                            "-x", "--import", "--loader", "--env-file", "-C", "--conditions",
                            "--inspect-port", "--max-old-space-size"))

    _PRELOADS = ("-r", "--require", "--import", "--loader", "--experimental-loader", "--preload")

    def _node_preloads(self, name, args, env, text, ctx) -> None:
        """Files node loads before its program: `-r/--require/--import FILE` and the same in NODE_OPTIONS
        (a start-up hook): each is scanned like the program (a module name, not a path, is left alone)."""
        opts = env.get("NODE_OPTIONS") if "NODE_OPTIONS" in env else self.vars.get("NODE_OPTIONS")
        words = list(args)
        if opts:
            words += opts.split()
        elif "NODE_OPTIONS" in self.vars and opts is None:
            self.unverifiable("NODE_OPTIONS holds a value that cannot be read statically: what node loads "
                              "first cannot be read", text)
        for k, a in enumerate(words):
            f = None
            if a in self._PRELOADS and k + 1 < len(words):
                f = words[k + 1]
            elif a.startswith(tuple(o + "=" for o in self._PRELOADS)):
                f = a.split("=", 1)[1]
            if f and ("/" in f or f.startswith(".")):
                self._program_file(name, [f], text, ctx)

    def _program_file(self, name, args, text, ctx) -> None:
        """``python3 x.py ARGS`` (and node/perl/ruby FILE): the file's code is scanned by the
        guards like a one-liner, when the file can be named and read."""
        i = 0
        while i < len(args) and args[i].startswith("-") and args[i] != "-":
            i += 2 if args[i] in self._FILE_OPTS else 1
        if i >= len(args):
            return
        f = args[i]
        p = self._abspath(f)
        if p is None or not self._known_dir(p):
            return
        if p in self.written:
            content = self.written[p]
            code = content[1] if content is not None and content[0] == "text" else None
            self.an.programs.append(Program(name, code, text, self._cwd_or_none(), ctx.via, "file"))
            return
        if not os.path.isfile(p):
            return
        code = self._read_code(p)
        if code is not None:
            self.an.files_read.append(p)
        self.an.programs.append(Program(name, code, text, self._cwd_or_none(), ctx.via, "file"))

    # -- functions never called ------------------------------------------------
    def finish(self, ctx: Ctx) -> None:
        for name, (body, dctx) in list(self.funcs.items()):
            if name not in self.called:
                self.called.add(name)
                self._set_positional(["$1"], [2])   # a function never called: arguments unknown
                self.active_funcs.append(id(body))
                try:
                    self.walk(body, dctx.sub(f"function:{name}"))
                finally:
                    self.active_funcs.pop()
        if len(self.an.programs) > self.programs_read:
            self._embedded_commands(ctx)


def _changes_tree(name: str, args: list) -> bool:
    """Does this command rewrite files in the tree that cannot be listed (git checkout, patch)?"""
    if name == "git":
        sub = next((a for a in args if not a.startswith("-")), "")
        if sub in ("apply", "am", "checkout", "restore", "reset", "merge", "pull", "rebase", "cherry-pick",
                   "revert", "switch", "read-tree", "checkout-index"):
            return sub != "reset" or "--hard" in args or "--merge" in args or "--keep" in args
        if sub == "stash":
            return any(a in ("pop", "apply") for a in args)
        return False
    if name in ("tar", "bsdtar", "gtar"):
        return any(a in ("-x", "--extract", "--get") or (a[:1] != "-" and "x" in a and args.index(a) == 0) or
                   (a.startswith("-") and not a.startswith("--") and "x" in a[1:]) for a in args)
    if name == "unzip":
        return not any(a in ("-l", "-v", "-t", "-Z") for a in args)
    if name == "7z":
        return bool(args) and args[0] in ("x", "e")
    if name == "cpio":
        return any(a in ("-i", "--extract") or (a.startswith("-") and "i" in a[1:]) for a in args)
    return True   # patch, rsync


def _unquoted_glob(raw: str) -> bool:
    """Does the source word hold * ? or [ outside quotes (so bash expands it as a pattern)?"""
    q = None
    i = 0
    while i < len(raw):
        c = raw[i]
        if q:
            if c == q:
                q = None
            elif c == "\\" and q == '"':
                i += 1
        elif c == "\\":
            i += 1
        elif c in "'\"":
            q = c
        elif c in "*?":
            return True
        elif c == "[" and "]" in raw[i + 2:] and raw not in ("[", "[["):
            return True   # a bracket expression needs its `]`: `[` alone is the test command
        elif c == "$" and i + 1 < len(raw) and raw[i + 1] in "({":
            return False   # inside an expansion: leave it to the value
        i += 1
    return False


def wildcard_match(pat: str, name: str) -> bool:
    """Shell wildcard matching of one path component (* ? [...] [!...]), without `re`."""
    p, s = 0, 0
    star_p, star_s = -1, 0
    while s < len(name):
        if p < len(pat):
            c = pat[p]
            if c == "*":
                star_p, star_s = p, s
                p += 1
                continue
            if c == "?":
                p += 1
                s += 1
                continue
            if c == "[":
                end = pat.find("]", p + 2)
                if end > 0:
                    body = pat[p + 1:end]
                    neg = body[:1] in ("!", "^")
                    if neg:
                        body = body[1:]
                    hit = False
                    k = 0
                    while k < len(body):
                        if k + 2 < len(body) and body[k + 1] == "-":
                            hit = hit or body[k] <= name[s] <= body[k + 2]
                            k += 3
                        else:
                            hit = hit or body[k] == name[s]
                            k += 1
                    if hit != neg:
                        p = end + 1
                        s += 1
                        continue
                elif c == name[s]:
                    p += 1
                    s += 1
                    continue
            elif c == "\\" and p + 1 < len(pat) and pat[p + 1] == name[s]:
                p += 2
                s += 1
                continue
            elif c == name[s]:
                p += 1
                s += 1
                continue
        if star_p >= 0:
            p = star_p + 1
            star_s += 1
            s = star_s
            continue
        return False
    while p < len(pat) and pat[p] == "*":
        p += 1
    return p == len(pat)


def _find_name(args: list, largs: list) -> str | None:
    """The file name find's `-name`/`-iname` (or a `-path` ending) gives literally, or None."""
    for k, a in enumerate(args[:-1]):
        if a in ("-name", "-iname", "-path", "-wholename") and largs[k + 1] < 0:
            v = args[k + 1].rsplit("/", 1)[-1]
            if v and not any(c in v for c in "*?[\\"):
                return v
    return None

