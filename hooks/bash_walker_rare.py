"""The walker's methods for the rare constructs, loaded on the first call of one of them.

``bash_walker.Walker`` keeps what a common command reaches (lists, pipelines, words, redirections,
wrappers, scripts by path, cd, globs); the methods here read loops and groups, nested shell texts
(``bash -c``, ``sh <<EOF``, a shell fed by a pipe), command substitutions with a constant output,
arithmetic, field splitting, special variables, script arguments, detached and timed commands.
A benign corpus (tests/corpus/real_world.json) reaches each of them in under 5% of its commands; the
hook pays their bytecode (~55 KB, unmarshalled at every start) only when a command does.

``Walker.__getattr__`` (called only when the normal lookup fails) puts every method of
``RareWalking`` on ``Walker`` the first time, so behaviour is exactly that of one class.
"""
from __future__ import annotations

from swarmgate import lean_os as os

from swarmgate.bounded_read import read_bytes
from swarmgate.break_switch import broken as _broken
from swarmgate.hooks import bash_lexical as _lx
from swarmgate.hooks.bash_parse import parse_text
from swarmgate.hooks.bash_results import Loop, Program, command_name
from swarmgate.hooks.bash_words import base_vars, c_unescape, expand
from swarmgate.hooks.bash_wrappers import SHELLS

TYPE_CHECKING = False
if TYPE_CHECKING:   # annotations only: these methods join bash_walker.Walker, which imports this module
    from swarmgate.hooks.bash_walker import Ctx

_MAX_LOOP_VALUES = 8           # `for x in a b c`: the body is read once per value up to this

# commands that do not create files (a missing script after them still cannot run)
_NO_FILE_CREATION = frozenset({
    "cd", "pushd", "popd", "export", "set", "shopt", "unset", "echo", "printf", "true", "false",
    ":", "test", "[", "[[", "ls", "pwd", "cat", "head", "tail", "grep", "rg", "which", "type",
    "command", "env", "nice", "nohup", "timeout", "time", "sudo", "source", ".", "wc", "sort",
    "date", "sleep", "chmod", "chown", "stat", "file", "id", "whoami", "uname", "hostname",
    "alias", "read", "wait", "kill", "jobs", "trap", "declare", "local", "readonly"})


class RareWalking:
    def walk_group(self, g: _lx.Group, ctx: Ctx) -> None:
        self.walk_redir_subs(g.redirs, ctx)
        if g.kind == "subshell":
            saved = (dict(self.vars), self.cwd)
            self.walk(g.body, ctx.sub("subshell"))
            self.vars, self.cwd = saved
        else:
            self.walk(g.body, ctx.sub("group"))

    def walk_loop(self, node: _lx.Loop, ctx: Ctx) -> None:
        loop = Loop(node.kind if node.kind != "select" else "for", node.text)
        self.an.loops.append(loop)
        self.walk_redir_subs(node.redirs, ctx)
        sub = ctx.sub(f"loop:{loop.kind}")
        self.collect.append(loop.condition_commands)
        try:
            if node.cond is not None:
                self.walk(node.cond, sub)
            for w in node.words:
                self.walk_word_subs(w, sub)
        finally:
            self.collect.pop()
        if node.kind in ("for", "select") and node.words:
            pass
        values = self._loop_values(node)
        self.collect.append(loop.body_commands)
        self.loops_open.append(loop)
        try:
            if not values:
                # unknown values (or none we can see): the body is read once
                if node.var:
                    self.vars[node.var] = None
                self.walk(node.body, sub)
            else:
                # a short constant list: the body is read once per value
                self.expanded_loops += 1
                try:
                    for v in values:
                        self.vars[node.var] = v
                        self.walk(node.body, sub)
                finally:
                    self.expanded_loops -= 1
        finally:
            self.loops_open.pop()
            self.collect.pop()

    def _loop_values(self, node) -> list | None:
        """The values of ``for VAR in WORDS`` when constant (globs expanded in
        the known cwd) and at most _MAX_LOOP_VALUES; else None."""
        if node.kind not in ("for", "select") or not node.var or not node.words:
            return None
        if self.expanded_loops >= 2:
            return None   # nested value loops would multiply: read inner ones once
        vals, lasts = self._expand_words(node.words)   # braces, splitting and globs included
        if any(x >= 0 for x in lasts) or len(vals) > _MAX_LOOP_VALUES:
            return None
        return vals

    def _special_variable(self, name: str, value: str, last: int, ctx: Ctx, text: str) -> None:
        """Variables whose value a shell runs: PROMPT_COMMAND (a command text before each
        prompt), PS0/PS1/PS2/PS4 (their substitutions run when the prompt or the `set -x`
        trace is printed)."""
        if name in ("PROMPT_COMMAND",) or name.startswith("PROMPT_COMMAND["):
            if last >= 0:
                self.unverifiable(f"{name} is set to a command that cannot be read statically", text)
            elif value.strip():
                self._nested_text(value, ctx.sub(name), name, text)
        elif name in ("PS0", "PS1", "PS2", "PS4") and ("$(" in value or "`" in value):
            self._heredoc_expansions(value, ctx, name)

    def _arith_injection(self, expr: str, ctx: Ctx, literal: bool = False) -> None:
        """An arithmetic context (``$(( ))``, ``(( ))``, ``let``, ``declare -i``, subscripts,
        ``[[ -eq ]]``) evaluates variables' values as expressions again: ``a[$(cmd)]`` in a
        value runs cmd. ``literal``: ``expr`` is text bash itself evaluates (a ``let``
        argument), whose substitutions run too."""
        if literal and ("$(" in expr or "`" in expr):
            self._heredoc_expansions(expr, ctx, "arithmetic")
        i, n = 0, len(expr)
        seen = 0
        while i < n and seen < 32:
            c = expr[i]
            if c.isalpha() or c == "_":
                j = i
                while j < n and (expr[j].isalnum() or expr[j] == "_"):
                    j += 1
                name = expr[i:j]
                i = j
                if name not in self.vars:
                    continue
                seen += 1
                val = self.vars[name]
                # (a value that cannot be read is not refused here: `n=$(nproc); $((n+1))` is
                # everyday shell, and the exec-time layer sees what actually runs)
                if val is not None and ("$(" in val or "`" in val):
                    self._heredoc_expansions(val, ctx, "arithmetic")
                continue
            i += 1

    def _split_fields(self, v: str, last: int):
        """An unquoted expansion split into fields by IFS (default: blanks); None when the
        value is one field. IFS set to something unknown makes every field unknown."""
        ifs = self.vars.get("IFS", " \t\n") if "IFS" in self.vars else " \t\n"
        if ifs is None:
            return [(v, len(v))]
        seps = ifs if ifs else ""
        if not seps or not any(c in v for c in seps):
            return None
        fields, cur = [], []
        for c in v:
            if c in seps:
                if cur:
                    fields.append("".join(cur))
                    cur = []
                elif c not in " \t\n":
                    fields.append("")   # a non-blank separator delimits an empty field
                continue
            cur.append(c)
        if cur:
            fields.append("".join(cur))
        return [(f, -1 if last < 0 else len(f)) for f in fields]

    def _maker_before(self) -> bool:
        """Did an earlier command of this text possibly create files (not only print)?"""
        return any(c.name not in _NO_FILE_CREATION or any(r.writes and r.target != "/dev/null"
                                                           for r in c.redirects)
                   for c in self.an.commands)

    def _const_subst(self, inner: str) -> str | None:
        """The output of a command substitution whose result is certain:
        ``pwd``, ``dirname X``, ``basename X``, ``cd X && pwd``,
        ``git rev-parse --show-toplevel`` (X constant). Else None."""
        t = inner.strip()
        if t == "pwd" or t == "pwd -P":
            return self.cwd if self._known_dir(self.cwd) else None
        if t.startswith(("echo ", "printf ", "cat ")) and not any(c in t for c in ";|&<>`\n"):
            return self._literal_output(t)
        if t.startswith(("dirname ", "basename ")):
            arg = t.split(None, 1)[1].strip()
            v, last = expand(arg, self.vars, self._const_subst)
            if last >= 0 or any(c in v for c in " \t\n;|&<>"):
                return None
            return os.path.dirname(v) or "." if t.startswith("dirname") else os.path.basename(v)
        for sep in ("&&", ";"):
            if sep in t:
                head, _, tail = t.partition(sep)
                head, tail = head.strip(), tail.strip()
                for junk in (">/dev/null", "> /dev/null", "2>/dev/null", "2> /dev/null", "1>/dev/null"):
                    head = head.replace(junk, "").strip()
                if head.startswith("cd ") and tail in ("pwd", "pwd -P") and self._known_dir(self.cwd):
                    v, last = expand(head[3:].strip(), self.vars, self._const_subst)
                    if last >= 0 or not v:
                        return None
                    return os.path.normpath(os.path.join(self.cwd, os.path.expanduser(v)))
                return None
        if t == "git rev-parse --show-toplevel" and self._known_dir(self.cwd):
            from swarmgate.hooks.git_runs import git_dirs   # the one reader of where a worktree begins

            found = git_dirs(self.cwd)
            return found[0] if found else None
        return None

    def _literal_output(self, t: str) -> str | None:
        """What ``echo WORDS``, ``printf FMT ARGS`` or ``cat FILE`` prints, when certain (the
        words literal, the file small and readable or written earlier by this command);
        trailing newlines removed, as command substitution does."""
        seq, _, unsure = parse_text(t, self.deadline, self.parser)
        if unsure or len(seq.items) != 1 or type(seq.items[0][0]) is not _lx.Cmd:
            return None
        node = seq.items[0][0]
        if node.redirs or node.assigns:
            return None
        out = self._static_output(node)
        if out is None:
            return None
        if out[0] == "text":
            return out[1].rstrip("\n")
        parts = []
        for f in out[1]:
            p = self._abspath(f)
            if p is None or not self._known_dir(p):
                return None
            if p in self.written:
                content = self.written[p]
                if content is None or content[0] != "text":
                    return None
                parts.append(content[1])
                continue
            try:
                if not os.path.isfile(p) or os.path.getsize(p) > 4096:
                    return None
                with open(p, "rb") as fh:
                    parts.append(fh.read(4096).decode("utf-8"))
            except (OSError, UnicodeDecodeError):
                return None
        return "".join(parts).rstrip("\n")

    def _detach(self, ctx: Ctx, text: str) -> int:
        """A wrapper that puts its command in the background: one more level."""
        if ctx.bg > 0:
            self.an.nested_background.append(text.strip())
        return ctx.bg + 1

    def _inner_now(self, args, largs, i, env, ctx, text) -> None:
        self._inner(args, largs, i, env, ctx, text)

    def _input_words(self) -> list | None:
        """The words on the current command's stdin when they are literal, else None."""
        body = self._input_text()
        return None if body is None else body.split()

    def _input_text(self) -> str | None:
        """The text on the current command's stdin when it is literal, else None."""
        redirs, _, feed = self._io
        for r in redirs:
            if r.op in ("<<", "<<-") and r.fd in (None, 0):
                return self._heredoc_text(r)
            if r.op == "<<<":
                return None if "$" in r.target else r.target
            if r.op == "<" and r.fd in (None, 0):
                return None
        if feed is not None:
            out = self._static_output(feed)
            if out is not None and out[0] == "text":
                return out[1]
        return None

    def _embedded_commands(self, ctx: Ctx) -> None:
        """The shell commands in the code of the programs recorded since the last call (``os.system(...)``,
        ``child_process.exec(...)``, perl's backticks: hooks/embedded_shell.py), each walked like
        ``bash -c TEXT`` in the program's directory, reached through ``INTERPRETER SINK``."""
        from swarmgate.hooks.embedded_shell import shell_calls

        progs = self.an.programs
        while self.programs_read < len(progs):
            prog = progs[self.programs_read]
            self.programs_read += 1
            if not prog.code:
                continue
            calls = shell_calls(prog.interpreter, prog.code)
            if not calls:
                continue
            # each runs in a shell of its own (`sh -c`): what it sets or cd's into does not outlive it
            for sink, body in calls:
                label = f"{prog.interpreter} {sink}"
                sub = type(ctx)(prog.via + (label,), ctx.bg, ctx.depth, ctx.wrappers + (prog.interpreter,),
                                ctx.env, ctx.script, ctx.redirs)
                saved = (dict(self.vars), self.cwd, self.positional)
                if prog.cwd is not None:   # a recipe's program runs in its file's directory
                    self.cwd = prog.cwd
                self._set_positional([], [])
                try:
                    self._nested_text(body, sub, label, prog.text)
                finally:
                    self.vars, self.cwd, self.positional = saved

    def _nested_text(self, body: str, ctx: Ctx, what: str, text: str, script: str | None = None) -> None:
        if ctx.depth + 1 > self.max_depth:
            self.problem(f"nesting deeper than {self.max_depth} levels ({what})")
            self.unverifiable(f"{what}: nested deeper than {self.max_depth} levels", text)
            return
        seq, by, unsure = parse_text(body, self.deadline, self.parser)
        if by != "bashlex" and by != self.an.parsed_by:
            self.problem(f"{what}: parsed by the lexical fallback")
        if unsure:
            self.problem(f"{what}: {unsure}")
            self.unverifiable(f"{what}: could not be read with confidence ({unsure})", body)
        # commands in the nested text inherit the stdin of the command that runs it
        self.stdin_stack.append(self._io)
        try:
            self.walk(seq, ctx.sub(None, depth=ctx.depth + 1))
        finally:
            self.stdin_stack.pop()

    def _shell(self, name, args, largs, env, redirs, raw_redirs, ctx, text, feed) -> None:
        i, n = 0, len(args)
        cmd_string = None
        reads_stdin = False
        startup: list = []
        while i < n:
            a = args[i]
            if a == "--" or a == "-":
                i += 1
                break
            if a in ("--rcfile", "--init-file") and i + 1 < n:
                startup.append((args[i + 1], largs[i + 1]))
                i += 2
                continue
            if a in ("-o", "+o", "-O", "+O"):
                i += 2
                continue
            if a.startswith("--"):
                i += 1
                continue
            if a.startswith(("-", "+")):
                letters = a[1:]
                if "c" in letters and a[0] == "-":
                    cmd_string = i + 1
                if "s" in letters and a[0] == "-":
                    reads_stdin = True
                i += 1
                continue
            break
        sub = ctx.sub("bash -c" if cmd_string is not None else None)
        # files the shell sources before its commands: BASH_ENV (bash), ENV (sh), --rcfile
        for var in ("BASH_ENV", "ENV"):
            if var in env:
                startup.append((env[var], 0 if "$" in env[var] else -1))
            elif self.vars.get(var) is not None or var in self.vars:
                v = self.vars.get(var)
                startup.append((v or "", -1 if v is not None else 0))
        for f, last in startup:
            if f == "" and last < 0:
                continue
            self._script_args = None
            self._script_arg(f, last, env, ctx.sub("startup file"), text, f"{name} startup file", share=True)
        if cmd_string is not None:
            # first operand after the options is the command string
            j = cmd_string
            while j < n and args[j].startswith("-") and j < i:
                j += 1
            j = max(j, i)
            if j >= n:
                self.unverifiable(f"{name} -c without a command string", text)
                return
            # bash -c STR NAME ARGS...: $0 = NAME, "$@" = ARGS
            saved = (self.positional, dict(self.vars))
            self._set_positional(args[j + 2:], largs[j + 2:])
            if j + 1 < n:
                self.vars["0"] = args[j + 1] if largs[j + 1] < 0 else None
            try:
                self._nested_text(args[j], sub, f"{name} -c", text)
            finally:
                self.positional = saved[0]
                for k in [k for k in self.vars if k.isdigit() or k in "#@*"]:
                    del self.vars[k]
                self.vars.update({k: v for k, v in saved[1].items() if k.isdigit() or k in "#@*"})
            return
        if i < n and not reads_stdin:
            self._script_args = (args[i + 1:], largs[i + 1:])
            self._script_arg(args[i], largs[i], env, ctx, text, name, share=False)
            return
        self._shell_stdin(name, redirs, feed, ctx, text)

    def _shell_stdin(self, name, redirs, feed, ctx, text) -> None:
        """A shell reading commands from its standard input."""
        src = None
        for r in redirs:
            if r.op in ("<<", "<<-") and (r.fd in (None, 0)):
                src = ("text", r.heredoc or "", "heredoc-shell")
            elif r.op == "<<<":
                src = ("text", r.target + "\n", "herestring-shell")
            elif r.op == "<" and r.fd in (None, 0):
                if r.target.startswith(("<(", ">(")) or "$" in r.target:
                    src = None
                    self.unverifiable(f"{name} reads its input from something that cannot be "
                                      "read statically", text)
                    return
                src = ("files", [r.target], "stdin")
        if src is None and feed is None and not redirs and self.stdin_stack:
            # no input of its own: it reads what the enclosing command was given
            outer_redirs, _, outer_feed = self.stdin_stack[-1]
            if outer_redirs or outer_feed is not None:
                saved = self.stdin_stack.pop()
                try:
                    self._shell_stdin(name, outer_redirs, outer_feed, ctx, text)
                finally:
                    self.stdin_stack.append(saved)
                return
        if src is None and feed is not None:
            src = self._static_output(feed)
            if src is None:
                self.unverifiable(
                    f"input piped into {name} cannot be read statically "
                    f"({getattr(feed, 'text', '')[:60].strip()} | {name})", text)
                return
        if src is None:
            return   # no input: the shell reads nothing (the Bash tool has no stdin)
        kind, val, label = src
        if kind == "text":
            self._nested_text(val, ctx.sub(label), f"{name} <<input", text)
        else:
            for f in val:
                self._run_script_path(f, ctx.sub("stdin"), text, f"{name} < file", share=False)

    def _static_output(self, node):
        """What a pipeline element writes to stdout, when statically known:
        ("text", str, label) | ("files", [paths], label) | None."""
        if type(node) is not _lx.Cmd or not node.words:
            return None
        vals, last = self._expand_words(node.words)
        name = command_name(vals[0])
        args, largs = vals[1:], last[1:]
        if name == "echo":
            k = 0
            while k < len(args) and args[k] in ("-n", "-e", "-E", "-ne", "-en"):
                k += 1
            if any(x >= 0 for x in largs[k:]):
                return None
            body = " ".join(args[k:])
            if "-e" in args[:k] or "-ne" in args[:k] or "-en" in args[:k]:
                body = c_unescape(body)
            return ("text", body + "\n", "echo-shell")
        if name == "printf":
            if args[:1] == ["--"]:
                args, largs = args[1:], largs[1:]
            if not args or any(x >= 0 for x in largs):
                return None
            fmt = args[0]
            if "%" not in fmt.replace("%%", ""):
                return ("text", c_unescape(fmt).replace("%%", "%"), "printf-shell")
            if fmt in ("%s", "%s\\n", "%s\n") and len(args) > 1:
                return ("text", "\n".join(args[1:]) + "\n", "printf-shell")
            return None
        if name == "cat":
            files = [a for a in args if not a.startswith("-") or a == "-"]
            if any(largs[args.index(f)] >= 0 for f in files) or "-" in files:
                return None
            if files:
                return ("files", files, "stdin")
            for r in node.redirs:
                if r.op in ("<<", "<<-") and r.heredoc is not None:
                    body = self._heredoc_text(r)
                    return None if body is None else ("text", body, "heredoc-shell")
                if r.op == "<<<" and r.target is not None:
                    v, l2 = expand(r.target.raw, self.vars)
                    return None if l2 >= 0 else ("text", v + "\n", "herestring-shell")
                if r.op == "<" and r.target is not None:
                    v, l2 = expand(r.target.raw, self.vars)
                    return None if l2 >= 0 else ("files", [v], "stdin")
            return None
        return None

    def run_in(self, body: str, ctx: Ctx, what: str, text: str, cwd: str | None = None) -> None:
        """Run ``body`` as a shell text in a shell of its own (``sh -c``: variables, positional
        parameters and the directory are restored afterwards), in ``cwd`` when given."""
        saved = (dict(self.vars), self.cwd, self.positional)
        if cwd is not None:
            self.cwd = cwd
        self.vars = base_vars(self.cwd)
        self._set_positional([], [])
        try:
            self._nested_text(body, ctx, what, text)
        finally:
            self.vars, self.cwd, self.positional = saved

    def find_upwards(self, names, start: str | None = None) -> str | None:
        """The first of ``names`` in ``start`` (default: the cwd) or its ancestors, as a path
        (also one this command wrote earlier), else None."""
        d = start if start is not None else self.project_dir()
        if d is None:
            return None
        for _ in range(64):
            for nm in names:
                p = os.path.join(d, nm)
                if p in self.written or os.path.isfile(p):
                    return p
            up = os.path.dirname(d)
            if up == d:
                return None
            d = up
        return None

    def run_hook(self, path: str, ctx: Ctx, text: str, cwd: str | None) -> None:
        """A hook file a tool runs by itself (a git hook): read like a script at command
        position when bash would run it as one, scanned as a program otherwise."""
        saved = self.cwd
        if cwd is not None:
            self.cwd = cwd
        try:
            if path in self.written or script_kind(path) == "shell":
                self._script_args = ([], [])
                self._run_script_path(path, ctx, text, "hook", share=False)
                return
            body = self._read_code(path)
            if body is None:
                self.unverifiable(f"hook {path} cannot be read", text)
                return
            first = body.split("\n", 1)[0]
            interp = command_name(first[2:].split()[-1]) if first.startswith("#!") and first[2:].split() \
                else "hook"
            self.an.programs.append(Program(interp, body, text, self._cwd_or_none(), ctx.via, "file"))
        finally:
            self.cwd = saved

    def _script_arg(self, word: str, last: int, env, ctx, text, how: str, share: bool) -> None:
        if word.startswith(("<(", ">(")):
            self.unverifiable(f"{how} <(...): shell input from a process substitution cannot be "
                              "read statically", text)
            return
        if last >= 0:
            self.unverifiable(f"{how} {word}: the script path is dynamic", text)
            return
        if word in ("/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"):
            redirs, _, feed = self._io
            self._shell_stdin(how, redirs, feed, ctx, text)
            return
        if word.startswith(("/dev/fd/", "/proc/self/fd/")):
            if not self._fd_input(word, how, ctx, text):
                self.unverifiable(f"{how} {word}: shell input from a file descriptor cannot be read "
                                  "statically", text)
            return
        self._run_script_path(word, ctx, text, how, share)

    def _fd_input(self, word: str, how: str, ctx, text) -> bool:
        """``bash /dev/fd/N`` whose own redirections open N on a here-string, a here-document or a
        file (``bash /dev/fd/3 3<<<'TEXT'``): read what N holds. False when N is opened elsewhere."""
        num = word.rsplit("/", 1)[1]
        if not num.isdigit():
            return False
        redirs, _, _ = self._io
        own = [r for r in redirs if r.fd is not None and str(r.fd) == num]
        if not own or own[-1].op not in ("<<", "<<-", "<<<", "<"):
            return False
        r = own[-1]
        if r.op == "<<<":
            if "$" in r.target or "`" in r.target:
                return False
            self._nested_text(r.target + "\n", ctx.sub("herestring-shell"), f"{how} <<input", text)
        elif r.op == "<":
            if r.target.startswith(("<(", ">(")) or "$" in r.target:
                return False
            self._run_script_path(r.target, ctx.sub("stdin"), text, f"{how} < file", share=False)
        else:
            self._nested_text(r.heredoc or "", ctx.sub("heredoc-shell"), f"{how} <<input", text)
        return True

    def _maybe_script(self, w0: str, args, env, ctx, text, dir_dynamic: bool = False) -> None:
        """A path at command position: a shell script if bash would run it as one."""
        p = self._abspath(w0)
        if p is None:
            self.unverifiable(f"{w0}: cannot tell where it is (the directory changed to "
                              "something unknown)", text)
            return
        if p in self.written:
            self._run_script_path(w0, ctx, text, "run", share=False)
            return
        if not self._known_dir(p) or dir_dynamic:
            if w0.endswith((".sh", ".bash")) or self._wrote_unknown_dir:
                self.unverifiable(f"{w0}: cannot tell where it is (a script in a directory that "
                                  "cannot be named: the directory changed to, or is, something unknown)", text)
            else:
                self.problem(f"{w0}: in a directory that cannot be named; not read")
            return
        kind = script_kind(p)
        if kind == "missing":
            if w0.endswith((".sh", ".bash")):
                self._missing_script(p, text)
            return
        if kind == "shell":
            self._run_script_path(w0, ctx, text, "run", share=False)

    def _run_script_path(self, word: str, ctx, text, how: str, share: bool) -> None:
        p = self._abspath(word)
        if p is None:
            self.unverifiable(f"{how} {word}: cannot tell where it is (the directory changed to "
                              "something unknown)", text)
            return
        if p not in self.written and not self._known_dir(p):
            self.unverifiable(f"{how} {word}: cannot tell where it is (the directory changed to "
                              "something unknown)", text)
            return
        label = f"script:{p}"
        # each file at most once per analysis (symlinks resolved; a file written
        # by this command counts as one file too)
        key = p if p in self.written else os.path.realpath(p)
        sargs = tuple(self._script_args[0]) if self._script_args else ()
        if key in self.seen_scripts and not _broken("no-script-once-guard"):
            if self.script_args.get(key, ()) != sargs and not share:
                # read once per judgement; with other arguments it may run other commands
                self.unverifiable(f"{how} {word}: run again with other arguments ({' '.join(sargs)[:60]}); "
                                  "each script is read once per command", text)
            return
        self.seen_scripts.add(key)
        self.script_args[key] = sargs
        if p in self.written and self.written[p] is not None and self.written[p][0] == "files" and (
                p in self.written[p][1] or any(f in self.written and self.written.get(f) is not None
                                               and self.written[f][0] == "files" and p in self.written[f][1]
                                               for f in self.written[p][1])):
            self.unverifiable(f"{p} is copied onto itself by this same command, then run: what it "
                              "holds then cannot be read statically", text)
            return
        if p not in self.written and self.tree_changed is not None:
            self.unverifiable(f"{how} {word}: an earlier command ({self.tree_changed}) may have changed "
                              "it: its content at run time cannot be read statically", text)
            return
        if p in self.written:
            content = self.written[p]
            if content is None:
                self.unverifiable(f"{p} is written by this same command with content that "
                                  "cannot be read statically, then run", text)
                return
            if content[0] == "text":
                self._script_body(content[1], p, ctx.sub(label, script=p), text, share)
                return
            for f in content[1]:
                self._run_script_path(f, ctx, text, how, share)
            return
        body = self._read_script(p, text)
        if body is None:
            return
        self.an.scripts_read.append(p)
        self._script_body(body, p, ctx.sub(label, script=p), text, share)

    def _script_body(self, body: str, path: str, ctx, text, share: bool) -> None:
        saved_vars, saved_cwd, saved_pos = dict(self.vars), self.cwd, self.positional
        script_args, self._script_args = self._script_args, None
        if not share:
            self.vars = base_vars(self.cwd)
            self.positional = []
        if script_args is not None:
            self._set_positional(*script_args)
        elif not share:
            self._set_positional([], [])
        self.vars["0"] = path
        self.vars["BASH_SOURCE"] = path
        try:
            self._nested_text(body, ctx, f"script {path}", text, script=path)
        finally:
            if not share:
                self.vars, self.cwd = saved_vars, saved_cwd
            self.positional = saved_pos if (not share or script_args is not None) else self.positional

    def _missing_script(self, p: str, text: str) -> None:
        """A script that does not exist cannot run, unless an earlier command of
        this text creates it in a way we cannot see (python writing it, git
        checkout, a build): then its content is unknown."""
        maker = next((c for c in self.an.commands[:-1]
                      if c.name not in _NO_FILE_CREATION
                      or any(r.writes and r.target != "/dev/null" for r in c.redirects)), None)
        if maker is None or p.endswith("/bin/activate"):
            # (a virtualenv's activate script, made by `python -m venv`, is standard)
            self.problem(f"script {p} does not exist (it cannot run either)")
            return
        self.problem(f"script {p} does not exist yet")
        self.unverifiable(f"script {p} does not exist yet: an earlier command ({maker.name}) may "
                          "create it, and what it would contain cannot be read", text)

    def _cwd_or_none(self) -> str | None:
        return self.cwd if self._known_dir(self.cwd) else None

    def _stdin_program(self, raw_redirs) -> tuple[str | None, bool]:
        """(program text, unknown) for an interpreter reading its program from stdin."""
        _, _, feed = self._io
        for r in raw_redirs:
            if r.op in ("<<", "<<-") and r.heredoc is not None:
                return r.heredoc, False
            if r.op == "<<<" and r.target is not None:
                return expand(r.target.raw, self.vars)[0], False
            if r.op == "<" and r.fd in (None, 0) and r.target is not None:
                v, last = expand(r.target.raw, self.vars)
                body = self._read_code(v) if last < 0 else None
                return body, body is None
        if feed is None:
            return None, False
        out = self._static_output(feed)
        if out is None:
            return None, True
        if out[0] == "text":
            return out[1], False
        parts = [self._read_code(f) for f in out[1]]
        if any(p is None for p in parts):
            return None, True
        return "\n".join(parts), False

    def _read_code(self, path: str) -> str | None:
        p = self._abspath(path)
        if p is None or not self._known_dir(p):
            return None
        try:
            return read_bytes(p, self.max_script_bytes).decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None


_SHEBANG_SHELLS = SHELLS


def script_kind(p: str) -> str:
    """'shell' | 'other' | 'missing' for a path at command position."""
    try:
        st = os.stat(p)
    except OSError:
        return "missing"
    import stat as _stat
    if not _stat.S_ISREG(st.st_mode):
        return "other"
    try:
        head = read_bytes(p, 256, truncate=True)
    except OSError:
        return "other"
    if head.startswith(b"#!"):
        line = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
        if not line:
            return "other"
        prog = command_name(line[0])
        if prog == "env":
            rest = [x for x in line[1:] if not x.startswith("-")]
            prog = command_name(rest[0]) if rest else ""
        return "shell" if prog in _SHEBANG_SHELLS else "other"
    if p.endswith((".sh", ".bash")):
        return "shell"
    if b"\0" in head or head.startswith(b"\x7fELF"):
        return "other"
    if st.st_mode & 0o111:
        return "shell"   # executable text without a shebang: bash runs it as a script
    return "other"
