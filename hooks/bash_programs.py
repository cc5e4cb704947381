"""Programs that run commands in their own ways, read for the walker.

The wrapper table (``bash_wrappers``) says where a wrapper's command is when an
option list can say it. The programs here need a few lines of code each: ``env -S``,
``xargs``, ``watch``, ``parallel``, ``tmux``/``screen`` (keys typed into a shell),
``docker --entrypoint``, ``gdb -ex 'shell ...'``, ``hyperfine``, ``tar``'s
command options, ``sed``'s ``e`` command and ``s///e``, ``awk``'s ``system()``,
``expect``'s ``spawn``/``send`` and ``vim -c '!...'``.

Each reader is ``read(walker, name, args, largs, env, ctx, text)`` and returns True
when it handled the command, None to fall through to the wrapper table. ``largs``
holds, per argument, where its last unresolved expansion ends (-1: static).
"""
from __future__ import annotations

from swarmgate.hooks.bash_results import Program
from swarmgate.hooks.bash_wrappers import TABLE, Wrapper, find_command, skip_opts

_XARGS = Wrapper("xargs", options=("-a", "--arg-file", "-d", "--delimiter", "-E", "-e", "-I", "-L", "-n",
                                   "--max-args", "-P", "--max-procs", "-s", "--max-chars",
                                   "--process-slot-var", "--eof"))
_PARALLEL = Wrapper("parallel", options=(
    "-j", "--jobs", "-P", "-S", "--sshlogin", "-a", "--arg-file", "-d", "--delimiter", "-I", "--colsep",
    "-C", "--joblog", "--results", "--tmpdir", "--timeout", "-L", "-n", "-N", "--halt", "--memfree",
    "--load", "--delay", "--workdir", "--wd", "-E", "--tag-string", "--retries", "--sshloginfile",
    "--basefile", "--env"))
_TMUX_RUN = ("new", "new-session", "new-window", "neww", "split-window", "splitw", "respawn-pane",
             "respawnp", "respawn-window", "respawnw", "run-shell", "run", "display-popup", "popup")
_TMUX_OPTS = {"-s", "-n", "-c", "-t", "-x", "-y", "-e", "-F", "-l", "-L", "-S", "-f", "-w", "-h", "-d",
              "-b", "-T", "-E"}
_KEY_NAMES = frozenset(("Enter", "C-m", "KPEnter", "C-j", "Escape", "C-c", "Space", "Tab"))


def read_env(wk, name, args, largs, env, ctx, text):
    """``env [-i] [-u NAME] [NAME=VALUE...] [-S TEXT | COMMAND ARGS]``."""
    w = TABLE["env"]
    n = len(args)
    i = 0
    env2 = dict(env)
    while i < n:
        a = args[i]
        if a in ("-S", "--split-string") or a.startswith("--split-string="):
            body = a.split("=", 1)[1] if "=" in a else (args[i + 1] if i + 1 < n else "")
            rest = args[i + 1:] if "=" in a else args[i + 2:]
            if (largs[i + 1] if "=" not in a and i + 1 < n else largs[i]) >= 0:
                wk.unverifiable("env -S with a text that cannot be read statically", text)
                return True
            wk._nested_text(" ".join([body] + rest), ctx.sub("env", wrapper="env"), "env -S", text)
            return True
        if a.startswith("-S") and len(a) > 2:
            wk._nested_text(" ".join([a[2:]] + args[i + 1:]), ctx.sub("env", wrapper="env"), "env -S", text)
            return True
        if a == "--":
            i += 1
            break
        if a.startswith("-") and a != "-":
            i += 1 + w.options.get(a, 0)
            continue
        if "=" in a and a.split("=", 1)[0].isidentifier():
            k, v = a.split("=", 1)
            env2[k] = v
            i += 1
            continue
        break
    while i < n and "=" in args[i] and args[i].split("=", 1)[0].isidentifier():
        k, v = args[i].split("=", 1)
        env2[k] = v
        i += 1
    return wk._inner(args, largs, i, env2, ctx.sub("env", wrapper="env"), text)


def read_xargs(wk, name, args, largs, env, ctx, text):
    """``xargs [opts] CMD ARGS``: CMD ARGS plus the words it reads; with ``-I R`` each input
    line replaces R (unknown input: the words holding R are unknown)."""
    i = skip_opts(args, 0, _XARGS.options)
    if i >= len(args):
        return True   # xargs without a command runs echo
    repl = None
    for k, o in enumerate(args[:i]):
        if o == "-I" and k + 1 < len(args):
            repl = args[k + 1]
        elif o.startswith("-I") and len(o) > 2:
            repl = o[2:]
        elif o in ("-i", "--replace"):
            repl = "{}"
        elif o.startswith(("-i", "--replace=")) and len(o) > 2:
            repl = o.split("=", 1)[1] if "=" in o else o[2:]
    extra = wk._input_words()
    sub = ctx.sub("xargs", wrapper="xargs")
    if repl is None:
        # the words it reads are appended: known when the input is literal,
        # else one dynamic placeholder word ($XARGS_INPUT)
        if extra is None:
            args, largs = args + ["$XARGS_INPUT"], largs + [len("$XARGS_INPUT")]
        else:
            args, largs = args + extra[:64], largs + [-1] * len(extra[:64])
        return wk._inner(args, largs, i, env, sub, text)
    lines = None
    if extra is not None:
        lines = [ln for ln in (wk._input_text() or "").split("\n") if ln.strip()][:16]
    if lines:
        for line in lines:
            words = [a.replace(repl, line) for a in args[i:]]
            wk._inner(words, [-1] * len(words), 0, env, sub, text)
        return True
    # unknown input: each word holding the replacement string is unknown ($XARGS_INPUT, so a
    # shell text made of it is read as a dynamic word, not as a literal `{}`)
    words = [a.replace(repl, "$XARGS_INPUT") if repl and repl in a else a for a in args[i:]]
    lw = [len(a) if "$XARGS_INPUT" in a and repl in b else la
          for a, b, la in zip(words, args[i:], largs[i:])]
    return wk._inner(words, lw, 0, env, sub, text)


def read_watch(wk, name, args, largs, env, ctx, text):
    """``watch [-x] CMD``: joined for ``sh -c`` unless ``-x``."""
    w = TABLE["watch"]
    i = skip_opts(args, 0, w.options)
    if any(a in ("-x", "--exec") or (a.startswith("-") and not a.startswith("--") and "x" in a[1:])
           for a in args[:i]):
        return wk._inner(args, largs, i, env, ctx.sub("watch", wrapper="watch"), text)
    return None


def read_parallel(wk, name, args, largs, env, ctx, text):
    i = skip_opts(args, 0, _PARALLEL.options)
    rest = args[i:]
    sep = next((k for k, a in enumerate(rest) if a in (":::", "::::", ":::+", "::::+")), len(rest))
    cmd_words = rest[:sep]
    sub = ctx.sub("parallel", wrapper="parallel")
    if cmd_words and sep < len(rest) and rest[sep] == ":::":
        # one job per argument: {} replaced, or the argument appended
        for a in rest[sep + 1:sep + 17]:
            if a.startswith(":::"):
                break
            words = [w.replace("{}", a) for w in cmd_words]
            if not any("{}" in w for w in cmd_words):
                words.append(a)
            wk._nested_text(" ".join(words), sub, "parallel", text)
    elif cmd_words:
        wk._nested_text(" ".join(cmd_words + ["$PARALLEL_INPUT"]), sub, "parallel", text)
    elif sep < len(rest) and rest[sep] == ":::":
        # no command: each argument is a command line
        for a in rest[sep + 1:]:
            if a.startswith(":::"):
                break
            wk._nested_text(a, sub, "parallel", text)
    else:
        wk.unverifiable("parallel reads the commands it runs from its input", text)
    return True


def read_tmux(wk, name, args, largs, env, ctx, text):
    """``tmux new ... CMD`` runs CMD in a new pane (a detached job); ``send-keys ... Enter``
    types a command into a pane's shell."""
    i = skip_opts(args, 0, {"-L", "-S", "-f", "-T"})
    if i >= len(args):
        return True
    sub_cmd = args[i]
    if sub_cmd in ("send-keys", "send", "send-key"):
        j = skip_opts(args, i + 1, {"-t", "-N"})
        keys = [a for a in args[j:] if a not in _KEY_NAMES]
        if any(x >= 0 for x in largs[j:]):
            wk.unverifiable("tmux send-keys types text that cannot be read statically into a shell", text)
        elif keys:
            wk._nested_text(" ".join(keys), ctx.sub("tmux send-keys", bg=wk._detach(ctx, text),
                                                    wrapper=name), "tmux send-keys", text)
        return True
    if sub_cmd in _TMUX_RUN:
        j = skip_opts(args, i + 1, _TMUX_OPTS - {"-d", "-b", "-h"})
        if j < len(args):
            wk._nested_text(" ".join(args[j:]), ctx.sub(name, bg=wk._detach(ctx, text), wrapper=name),
                            name, text)
    return True


def read_screen(wk, name, args, largs, env, ctx, text):
    """``screen -X stuff TEXT`` types TEXT into a window's shell; the rest is tabular."""
    for k, a in enumerate(args):
        if a == "stuff" and k > 0 and "-X" in args[:k] and k + 1 < len(args):
            if largs[k + 1] >= 0:
                wk.unverifiable("screen -X stuff types text that cannot be read statically into a shell", text)
            else:
                body = args[k + 1].replace("\\r", "\n").replace("\\n", "\n").replace("^M", "\n")
                wk._nested_text(body, ctx.sub("screen stuff", bg=wk._detach(ctx, text), wrapper=name),
                                "screen stuff", text)
            return True
    if "-X" in args or "-r" in args or "-x" in args or "-ls" in args or "-list" in args:
        return True
    w = TABLE["screen"]
    f = find_command(w, args)
    if f.kind != "argv":
        return True
    bg = wk._detach(ctx, text) if f.detach else None
    return wk._inner(args, largs, f.index, env, ctx.sub(name, bg=bg, wrapper=name), text)


def read_container(wk, name, args, largs, env, ctx, text):
    """``docker run --entrypoint PROG IMAGE ARGS`` runs PROG ARGS; the rest is tabular."""
    w = TABLE[name]
    f = find_command(w, args)
    if f.kind == "none":
        return True
    ep = None
    for k, a in enumerate(args[:f.index if f.kind == "argv" else len(args)]):
        if a == "--entrypoint" and k + 1 < len(args):
            ep = (args[k + 1], largs[k + 1])
        elif a.startswith("--entrypoint="):
            ep = (a.split("=", 1)[1], largs[k])
    sub = ctx.sub(w.label, wrapper=name)
    if ep is not None and ep[0]:
        tail = args[f.index:] if f.kind == "argv" else []
        ltail = largs[f.index:] if f.kind == "argv" else []
        return wk._inner([ep[0]] + tail, [ep[1]] + ltail, 0, env, sub, text)
    if f.kind == "argv":
        return wk._inner(args, largs, f.index, env, sub, text)
    return True


def read_gdb(wk, name, args, largs, env, ctx, text):
    """``gdb -ex 'shell CMD'`` (also ``!CMD``); ``gdb --args PROG ARGS`` and ``gdb -ex run PROG``
    run PROG; ``gdb PROG core`` only reads it."""
    runs = False
    for k, a in enumerate(args):
        val, last = None, -1
        if a in ("-ex", "-iex", "--eval-command", "--init-eval-command") and k + 1 < len(args):
            val, last = args[k + 1], largs[k + 1]
        elif a.startswith(("--eval-command=", "--init-eval-command=")):
            val, last = a.split("=", 1)[1], largs[k]
        if val is not None:
            _debugger_command(wk, val, last, ctx, text, name)
            runs = runs or val.strip().split(" ", 1)[0] in ("run", "r", "start", "starti")
    w = TABLE["gdb"]
    f = find_command(w, args)
    if f.kind == "argv":
        return wk._inner(args, largs, f.index, env, ctx.sub(name, wrapper=name), text)
    if runs and f.operand is not None and f.kind == "none":
        k = args.index(f.operand) if f.operand in args else -1
        if k >= 0:
            return wk._inner(args[:k + 1], largs[:k + 1], k, env, ctx.sub(name, wrapper=name), text)
    return True


def _debugger_command(wk, cmd: str, last: int, ctx, text, name) -> None:
    c = cmd.strip()
    for pre in ("shell ", "!", "pipe ", "| "):
        if c.startswith(pre):
            if last >= 0:
                wk.unverifiable(f"{name} runs a shell command that cannot be read statically", text)
                return
            body = c[len(pre):]
            if pre in ("pipe ", "| "):
                body = body.split("|", 1)[1] if "|" in body else ""
            if body.strip():
                wk._nested_text(body, ctx.sub(f"{name} shell", wrapper=name), f"{name} shell", text)
            return


def read_hyperfine(wk, name, args, largs, env, ctx, text):
    """``hyperfine [opts] CMD...``: every operand, and the setup/prepare/cleanup options, is a
    shell text (with ``{param}`` placeholders left in)."""
    w = TABLE["hyperfine"]
    sub = ctx.sub("hyperfine", wrapper=name)
    i, n = 0, len(args)
    texts = []
    while i < n:
        a = args[i]
        opt = a.split("=", 1)[0] if a.startswith("--") else a
        if opt in w.shell_options:
            if "=" in a and a.startswith("--"):
                texts.append((a.split("=", 1)[1], largs[i]))
                i += 1
            elif i + 1 < n:
                texts.append((args[i + 1], largs[i + 1]))
                i += 2
            else:
                i += 1
            continue
        if opt in ("-P", "--parameter-scan"):
            i += 4
            continue
        if opt in ("-L", "--parameter-list"):
            i += 3
            continue
        if a.startswith("-") and a != "-":
            i += 1 if "=" in a else 1 + w.options.get(opt, 0)
            continue
        texts.append((a, largs[i]))
        i += 1
    for body, last in texts[:16]:
        if last >= 0:
            wk.unverifiable("hyperfine runs a command that cannot be read statically", text)
            continue
        wk._nested_text(body, sub, "hyperfine", text)
    return True


_TAR_LONG = ("--checkpoint-action=exec=", "--to-command=", "--use-compress-program=", "--info-script=",
             "--new-volume-script=", "--rsh-command=")


def read_tar(wk, name, args, largs, env, ctx, text):
    """tar options that run a command: ``--checkpoint-action=exec=CMD``, ``--to-command=CMD``,
    ``-I/--use-compress-program CMD``, ``-F/--info-script CMD``, ``--rsh-command``."""
    sub = ctx.sub("tar", wrapper=name)
    for k, a in enumerate(args):
        body, last = None, largs[k]
        for pre in _TAR_LONG:
            if a.startswith(pre):
                body = a[len(pre):]
                break
        else:
            if a in ("-I", "--use-compress-program", "-F", "--info-script", "--new-volume-script",
                     "--to-command", "--rsh-command") and k + 1 < len(args):
                body, last = args[k + 1], largs[k + 1]
        if body is None:
            continue
        if last >= 0:
            wk.unverifiable("tar runs a command that cannot be read statically", text)
            continue
        wk._nested_text(body, sub, "tar", text)
    return True


def read_sed(wk, name, args, largs, env, ctx, text):
    """sed's ``e COMMAND`` runs COMMAND; ``s/.../.../e`` runs the edited line (unknown text)."""
    if "--sandbox" in args:
        return True
    scripts = []
    i, n = 0, len(args)
    explicit = False
    while i < n:
        a = args[i]
        if a in ("-e", "--expression") and i + 1 < n:
            scripts.append((args[i + 1], largs[i + 1]))
            explicit = True
            i += 2
            continue
        if a.startswith("--expression="):
            scripts.append((a.split("=", 1)[1], largs[i]))
            explicit = True
        elif a in ("-f", "--file") and i + 1 < n:
            body = wk._read_code(args[i + 1]) if largs[i + 1] < 0 else None
            scripts.append((body or "", 0 if body is None else -1))
            explicit = True
            i += 2
            continue
        elif a.startswith("-") and not a.startswith(("--", "-i")) and "e" in a[1:]:
            # a cluster: flags, then e taking the rest of the word or the next one (-ne SCRIPT)
            k = a.index("e", 1)
            if k < len(a) - 1:
                scripts.append((a[k + 1:], largs[i]))
            elif i + 1 < n:
                scripts.append((args[i + 1], largs[i + 1]))
                i += 1
            explicit = True
        elif not a.startswith("-") and not explicit:
            scripts.append((a, largs[i]))
            explicit = True
        i += 1
    for body, last in scripts:
        if "e" not in body:
            continue
        runs, flagged = sed_commands(body)
        if flagged:
            wk.unverifiable("sed's e flag runs the edited line as a shell command: what runs cannot "
                            "be read statically", text)
        for c in runs:
            if last >= 0:
                wk.unverifiable("sed's e command runs a command that cannot be read statically", text)
            else:
                wk._nested_text(c, ctx.sub("sed e", wrapper=name), "sed e", text)
    return True


def sed_commands(script: str) -> tuple[list, bool]:
    """(commands sed's ``e`` command runs, whether an ``s`` command carries the ``e`` flag)."""
    runs: list[str] = []
    flagged = False
    i, n = 0, len(script)
    while i < n:
        c = script[i]
        if c in " \t\n;{}!":
            i += 1
            continue
        # address: numbers, $, /re/, \cREc, ranges
        if c.isdigit() or c in "$,~+":
            i += 1
            continue
        if c == "/" or (c == "\\" and i + 1 < n):
            d = "/" if c == "/" else script[i + 1]
            j = i + (1 if c == "/" else 2)
            while j < n and script[j] != d:
                j += 2 if script[j] == "\\" else 1
            i = j + 1
            while i < n and script[i] in "IM":
                i += 1
            continue
        if c == "e":
            j = script.find("\n", i)
            j = n if j < 0 else j
            cmd = script[i + 1:j].strip()
            if cmd:
                runs.append(cmd)
            else:
                flagged = True   # `e` alone runs the pattern space
            i = j
            continue
        if c in "sy" and i + 1 < n:
            d = script[i + 1]
            j = i + 2
            parts = 0
            while j < n and parts < 2:
                if script[j] == "\\":
                    j += 2
                    continue
                if script[j] == d:
                    parts += 1
                j += 1
            k = j
            while k < n and script[k] not in ";\n}":
                if c == "s" and script[k] == "e":
                    flagged = True
                if script[k] == "w":   # `w FILE` ends the flags
                    k = script.find("\n", k)
                    k = n if k < 0 else k
                    break
                k += 1
            i = k
            continue
        if c in "aic":   # text commands: to the end of the line
            j = script.find("\n", i)
            i = n if j < 0 else j
            continue
        if c in "rRwWbtT:":   # a file name or a label to the end of the line
            j = script.find("\n", i)
            j2 = script.find(";", i) if c in "btT" else -1
            ends = [x for x in (j, j2) if x >= 0]
            i = min(ends) if ends else n
            continue
        i += 1
    return runs, flagged


def read_awk(wk, name, args, largs, env, ctx, text):
    """awk's ``system("CMD")`` runs CMD; any other command text (pipes to or from a command,
    built strings) is scanned by the guards as a program."""
    i, n = 0, len(args)
    code, last = None, -1
    while i < n:
        a = args[i]
        if a in ("-f", "--file") and i + 1 < n:
            code = wk._read_code(args[i + 1]) if largs[i + 1] < 0 else None
            last = -1 if code is not None else 0
            break
        if a in ("-v", "-F", "--assign", "--field-separator", "-W") and i + 1 < n:
            i += 2
            continue
        if a == "--":
            i += 1
            if i < n:
                code, last = args[i], largs[i]
            break
        if a.startswith("-") and a != "-":
            i += 1
            continue
        code, last = a, largs[i]
        break
    if code is None:
        if last >= 0:
            wk.an.programs.append(Program(name, None, text, wk._cwd_or_none(), ctx.via, "file"))
        return True
    if last >= 0:
        wk.an.programs.append(Program(name, None, text, wk._cwd_or_none(), ctx.via, "inline"))
        return True
    if "system" in code or "|" in code:
        lits = _call_literals(code, "system")
        for body in lits:
            wk._nested_text(body, ctx.sub("awk system", wrapper=name), "awk system()", text)
        compact = code.replace(" ", "")
        if compact.count("system(") > len(lits) or any(s in compact for s in ('|"sh"', '|"bash"', "|\"/bin/sh\"",
                                                                              '|"zsh"', '|"dash"')):
            # system() on text built from the input, or lines printed into a shell
            wk.unverifiable(f"{name} runs commands built from its input (system() or a pipe to a shell): "
                            "what runs cannot be read statically", text)
        wk.an.programs.append(Program(name, code, text, wk._cwd_or_none(), ctx.via, "inline"))
    return True


def _call_literals(code: str, func: str) -> list:
    """The string-literal arguments of ``func("...")`` calls in ``code``."""
    out = []
    k = code.find(func)
    while k >= 0 and len(out) < 16:
        j = k + len(func)
        while j < len(code) and code[j] in " \t(":
            j += 1
        if j < len(code) and code[j] == '"' and "(" in code[k + len(func):j + 1]:
            e = j + 1
            buf = []
            while e < len(code) and code[e] != '"':
                if code[e] == "\\" and e + 1 < len(code):
                    buf.append({"n": "\n", "t": "\t"}.get(code[e + 1], code[e + 1]))
                    e += 2
                    continue
                buf.append(code[e])
                e += 1
            if e + 1 < len(code) and code[e + 1:].lstrip().startswith(")"):
                out.append("".join(buf))
        k = code.find(func, k + 1)
    return out


def read_expect(wk, name, args, largs, env, ctx, text):
    """expect runs ``spawn CMD``, ``exec CMD`` and types ``send "TEXT"`` into what it spawned."""
    code, last = None, -1
    i, n = 0, len(args)
    while i < n:
        a = args[i]
        if a == "-c" and i + 1 < n:
            code, last = args[i + 1], largs[i + 1]
            break
        if a in ("-f",) and i + 1 < n:
            code = wk._read_code(args[i + 1]) if largs[i + 1] < 0 else None
            last = -1 if code is not None else 0
            break
        if a.startswith("-"):
            i += 1
            continue
        code = wk._read_code(a) if largs[i] < 0 else None
        last = -1 if code is not None else 0
        break
    if code is None and last < 0:
        return True
    if code is None or last >= 0:
        wk.unverifiable("expect runs a script that cannot be read statically", text)
        return True
    sub = ctx.sub("expect", wrapper=name)
    for line in code.replace(";", "\n").split("\n"):
        s = line.strip()
        for kw in ("spawn ", "exec ", "system "):
            if s.startswith(kw):
                body = s[len(kw):].strip()
                while body.startswith("-"):
                    body = body.split(None, 1)[1] if " " in body else ""
                body = body.replace("[", "$(").replace("]", ")") if "[" in body else body
                if body:
                    wk._nested_text(body, sub, f"expect {kw.strip()}", text)
        if s.startswith("send "):
            body = s[5:].strip()
            if body.startswith("--"):
                body = body[2:].strip()
            if len(body) >= 2 and body[0] == body[-1] == '"':
                body = body[1:-1]
            elif body.startswith("{") and body.endswith("}"):
                body = body[1:-1]
            body = body.replace("\\r", "\n").replace("\\n", "\n")
            if body.strip():
                wk._nested_text(body, sub, "expect send", text)
    return True


_VIM_SHELL = ("!", "terminal ", "term ", "r !", "read !", "r!", "read!", "w !", "w!", "silent !",
              "silent! !", "silent!!", "exe \"!", "execute \"!")


def read_vim(wk, name, args, largs, env, ctx, text):
    """``vim -c ':!CMD'`` (also ``+'!CMD'``, ``--cmd``, ``:terminal CMD``, ``:r !CMD``)."""
    cmds = []
    for k, a in enumerate(args):
        if a in ("-c", "--cmd") and k + 1 < len(args):
            cmds.append((args[k + 1], largs[k + 1]))
        elif a.startswith("+") and len(a) > 1:
            cmds.append((a[1:], largs[k]))
    for c, last in cmds:
        s = c.strip().lstrip(":").strip()
        for pre in _VIM_SHELL:
            if s.startswith(pre):
                if last >= 0:
                    wk.unverifiable(f"{name} runs a shell command that cannot be read statically", text)
                    break
                body = s[len(pre):]
                if pre.startswith("exe"):
                    body = body.rstrip().rstrip('"')
                if body.strip():
                    wk._nested_text(body, ctx.sub(f"{name} !", wrapper=name), f"{name} !", text)
                break
        else:
            if "system(" in s or "systemlist(" in s or "jobstart(" in s or "term_start(" in s:
                wk.an.programs.append(Program(name, s, text, wk._cwd_or_none(), ctx.via, "inline"))
    return True


READERS = {
    "env": read_env, "xargs": read_xargs, "watch": read_watch, "parallel": read_parallel,
    "tmux": read_tmux, "screen": read_screen, "docker": read_container, "podman": read_container,
    "nerdctl": read_container, "gdb": read_gdb, "hyperfine": read_hyperfine, "tar": read_tar,
    "bsdtar": read_tar, "gtar": read_tar, "sed": read_sed, "gsed": read_sed, "awk": read_awk,
    "gawk": read_awk, "mawk": read_awk, "nawk": read_awk, "expect": read_expect, "vim": read_vim,
    "nvim": read_vim, "vi": read_vim, "ex": read_vim, "view": read_vim, "vimdiff": read_vim,
}
