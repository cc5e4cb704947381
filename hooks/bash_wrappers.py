"""The wrapper table: programs that run another command, and how to find that command.

One table, as data, used by the walker (``bash_walker``: what a text runs), by the
pattern matcher (``command_patterns.views``: the program an argv really starts) and
by the guards (``LAUNCHERS``: who started whom). Extensible by config
(``[bash] wrappers``, see ``from_config``).

An entry (``Wrapper``) says, for one program name:
- ``subcommands``: the command follows only after one of these words (``uv run``,
  ``docker compose run``; a space separates the words of a nested subcommand);
  global options may come before them;
- ``options``: options that take a value (``{"-n": 1, "--bind": 2}``: the number of
  values; the table writes ``("-n", ("--bind", 2))``); ``--opt=value`` and ``-oVALUE`` are
  understood without listing;
- ``operands``: words between the options and the command (``timeout DURATION``,
  ``docker run IMAGE``, ``flock FILE``, ``rustup run TOOLCHAIN``);
- ``shell_options``: options whose value is a shell text (``su -c``, ``npx -c``,
  ``sbatch --wrap``), also after the operands (``flock FILE -c TEXT``);
- ``shell``: the command words are joined by spaces and run by a shell (``ssh``,
  ``watch``, ``watchexec``, ``sg``);
- ``command_flags``: after this option the rest is the command (``gdb --args``,
  ``python -m MOD``, ``nix develop --command``);
- ``no_run``: options with which nothing runs (``command -v``, ``taskset -p PID``);
- ``detach``: options that put the command in the background (``setsid -f``);
- ``assignments``: ``NAME=VALUE`` words before the command set its environment;
- ``runs_operand``: False when only a shell option runs something (``su USER``,
  ``script FILE``);
- ``label``: the ``via`` label (``{}`` is replaced by the first operand: ``ssh:HOST``);
  empty: the command keeps its caller's ``via``;
- ``interleaved``: options may also follow the operands (argparse-style tools:
  ``run-with-memory-cap 8G --label x -- CMD``); ``--`` then ends them;
- ``env_runner``: it runs a program from a managed environment or package (``uv run``,
  ``npx``, ``conda run``, ``python -m``): a pattern naming that program matches the
  runner's own argv too (``command_patterns.views``), as an exec-time check sees it;
- ``anywhere``: the shell option or command flag may follow operands (``su - USER -c
  TEXT``, ``nix shell PKG -c CMD``), not only the options.

Programs whose semantics no table entry can say (shells, ``env -S``, ``xargs``,
``find -exec``, ``parallel``, ``make``, interpreters, ``tar``, ``sed``, ``awk``,
``hyperfine``, ``expect``, ``vim``, ``tmux``) are listed in ``SPECIAL`` and read by
the walker's own code; they still get an entry here when part of them is tabular.
"""
from __future__ import annotations

SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "yash", "busybox-sh", "fish",
                    "tcsh", "csh"})
INTERPRETERS = {  # name prefix -> options that take inline code
    "python": ("-c",), "pypy": ("-c",), "node": ("-e", "--eval", "-p", "--print"),
    "nodejs": ("-e", "--eval", "-p", "--print"), "deno": ("eval",), "bun": ("-e", "--eval"),
    "perl": ("-e", "-E"), "ruby": ("-e",), "php": ("-r",), "lua": ("-e",),
    "Rscript": ("-e",), "julia": ("-e", "--eval"), "tclsh": (), "osascript": ("-e",),
}
INTERP_PREFIXES = tuple(INTERPRETERS)

FIELDS = ("subcommands", "options", "operands", "shell_options", "shell", "command_flags", "no_run",
          "detach", "assignments", "runs_operand", "label", "operands_unless", "interleaved", "env_runner",
          "anywhere")
# the fields `[bash] wrappers` may set, with what each must be
CONFIG_FIELDS = {
    "subcommands": "a list of strings", "options": "a list of strings", "operands": "an integer 0-8",
    "shell_options": "a list of strings", "shell": "true or false", "command_flags": "a list of strings",
    "no_run": "a list of strings", "assignments": "true or false",
}


class Wrapper:
    """How to find the command one program runs (see the module doc)."""
    __slots__ = FIELDS + ("name",)

    def __init__(self, name: str, *, subcommands=(), options=None, operands: int = 0,
                 shell_options=(), shell: bool = False, command_flags=(), no_run=(), detach=(),
                 assignments: bool = False, runs_operand: bool = True, label: str | None = None,
                 operands_unless=(), interleaved: bool = False, env_runner: bool = False,
                 anywhere: bool = False) -> None:
        self.name = name
        self.subcommands = tuple(tuple(s.split()) for s in subcommands)
        if isinstance(options, dict):
            self.options = dict(options)
        else:
            self.options = {o: 1 for o in (options or ())}
        self.operands = operands
        self.shell_options = frozenset(shell_options)
        self.shell = shell
        self.command_flags = frozenset(command_flags)
        self.no_run = frozenset(no_run)
        self.detach = frozenset(detach)
        self.assignments = assignments
        self.runs_operand = runs_operand
        self.label = name if label is None else label
        self.operands_unless = frozenset(operands_unless)
        self.interleaved = interleaved
        self.env_runner = env_runner
        self.anywhere = anywhere

    def __repr__(self) -> str:
        return f"Wrapper({self.name!r})"


class Found:
    """Where a wrapper's command is: ``kind`` "argv" (``index``: the command's first word in
    the wrapper's arguments), "shell" (``text``: a shell text), "none" (nothing runs) or
    "unknown" (the table cannot tell). ``env``: assignments it adds; ``detach``; ``operand``:
    the first operand (for labels such as ``ssh:HOST``)."""
    __slots__ = ("kind", "index", "text", "env", "detach", "operand", "text_index")

    def __init__(self, kind: str, index: int = -1, text: str | None = None, env=None,
                 detach: bool = False, operand: str | None = None, text_index: int = -1) -> None:
        self.kind = kind
        self.index = index
        self.text = text
        self.env = env or {}
        self.detach = detach
        self.operand = operand
        self.text_index = text_index   # the argument holding the shell text (-1: joined words)

    def __repr__(self) -> str:
        return f"Found({self.kind!r}, {self.index}, {self.text!r})"


class _Table(dict):
    """name -> Wrapper, each entry built on first use (a hook call looks up a few names of ~150:
    building them all costs a millisecond on every call). Until then an entry is its ``_BUILTIN``
    fields, ((field, value), ...)."""

    def __getitem__(self, name: str) -> Wrapper:
        v = dict.__getitem__(self, name)
        if v.__class__ is not Wrapper:
            kw = dict(v)
            opts = kw.get("options")
            if opts:
                if opts.__class__ is str:   # a list several entries share
                    opts = _SHARED_OPTIONS[opts]
                # an option, or (option, number of values) where it takes more than one
                kw["options"] = dict(o if o.__class__ is tuple else (o, 1) for o in opts)
            v = Wrapper(name, **kw)
            dict.__setitem__(self, name, v)
        return v

    def get(self, name: str, default=None):
        return self[name] if dict.__contains__(self, name) else default


# option lists that several entries share (such an entry's "options" names one); an option that
# takes more than one value is written (option, number of values)
_SHARED_OPTIONS = {
    "docker run": ("-a", "--attach", "--add-host", "--annotation", "--blkio-weight", "--blkio-weight-device",
                   "--cap-add", "--cap-drop", "--cgroup-parent", "--cgroupns", "--cidfile", "-c", "--cpu-shares",
                   "--cpu-period", "--cpu-quota", "--cpu-rt-period", "--cpu-rt-runtime", "--cpus", "--cpuset-cpus",
                   "--cpuset-mems", "--detach-keys", "--device", "--device-cgroup-rule", "--device-read-bps",
                   "--device-read-iops", "--device-write-bps", "--device-write-iops", "--dns", "--dns-option",
                   "--dns-search", "--domainname", "-e", "--env", "--env-file", "--expose", "--gpus", "--group-add",
                   "--health-cmd", "--health-interval", "--health-retries", "--health-start-period", "--health-timeout",
                   "-h", "--hostname", "--ip", "--ip6", "--ipc", "--isolation", "--kernel-memory", "-l", "--label",
                   "--label-file", "--link", "--link-local-ip", "--log-driver", "--log-opt", "--mac-address", "-m",
                   "--memory", "--memory-reservation", "--memory-swap", "--memory-swappiness", "--mount", "--name",
                   "--network", "--net", "--network-alias", "--oom-score-adj", "--pid", "--pids-limit", "--platform",
                   "-p", "--publish", "--pull", "--restart", "--runtime", "--security-opt", "--shm-size",
                   "--stop-signal", "--stop-timeout", "--storage-opt", "--sysctl", "--tmpfs", "--ulimit", "-u",
                   "--user", "--userns", "--uts", "-v", "--volume", "--volume-driver", "--volumes-from", "-w",
                   "--workdir", "--context", "-H", "--host", "--config", "-l", "--log-level", "--tlscacert",
                   "--tlscert", "--tlskey", "--pod", "--arch", "--os", "--variant", "--secret", "--userns-uid-map",
                   "--uidmap", "--gidmap", "-f", "--file", "--project-name", "--profile", "--project-directory",
                   "--env-from-file", "--entrypoint", "--index"),
    "slurm": ("-n", "--ntasks", "-c", "--cpus-per-task", "-N", "--nodes", "-p", "--partition", "-t", "--time", "--mem",
              "-J", "--job-name", "-w", "--nodelist", "-o", "--output", "-e", "--error", "-A", "--account", "--gres",
              "-G", "--gpus", "--mem-per-cpu", "-D", "--chdir", "-q", "--qos", "-C", "--constraint", "-x", "--exclude",
              "--export", "-d", "--dependency", "--ntasks-per-node", "--gpus-per-task", "-i", "--input", "-W",
              "--wait"),
    "coverage": ("--rcfile", "--source", "--include", "--omit", "--concurrency", "--context", "--data-file",
                 "--debug"),
    "ldso": ("--library-path", "--preload", "--argv0", "--audit", "--inhibit-rpath", "--glibc-hwcaps-prepend",
             "--glibc-hwcaps-mask"),
    "mpi": ("-n", "-np", "-N", "-c", "--host", "-H", "--hostfile", "--machinefile", "-hostfile", "-machinefile", "-x",
            "-wdir", "--wdir", "-wd", "--map-by", "--bind-to", "--rank-by", "--npernode", "-npernode",
            "--report-bindings", ("-env", 2), "--prefix", "-f", "-ppn", "--ppn", ("-genv", 2), "-hosts", ("--mca", 2),
            ("-mca", 2)),
    "python run": ("--with", "--python", "-p", "--env-file", "--directory", "--project", "--package", "--extra",
                   "--group", "--index", "--from", "--with-requirements", "--index-url", "--extra-index-url", "-w",
                   "-e", "--env", "-E"),
    "npx": ("-p", "--package", "--registry", "--cache", "--userconfig", "-w", "--workspace", "--prefix",
            "--node-options", "--shell"),
}
# the table, as one constant the compiler builds (the module's body does no work per entry):
# (name, ((field, value), ...)), the fields of ``Wrapper``
_BUILTIN = (
    # process attributes
    ("env", (("options", ("-u", "--unset", "-C", "--chdir")), ("assignments", True), ("label", "env"))),
    ("nice", (("options", ("-n", "--adjustment")), ("label", ""))),
    ("nohup", ()),
    ("setsid", (("detach", ("-f", "--fork")),)),
    ("stdbuf", (("options", ("-i", "--input", "-o", "--output", "-e", "--error")), ("label", ""))),
    ("ionice", (("options", ("-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "--pgid", "-u", "--uid")),
                ("no_run", ("-p", "--pid", "-P", "--pgid", "-u", "--uid")), ("label", ""))),
    ("chrt", (("options", ("-T", "--sched-runtime", "-P", "--sched-period", "-D", "--sched-deadline")), ("operands", 1),
              ("no_run", ("-p", "--pid")), ("label", ""))),
    ("taskset", (("operands", 1), ("no_run", ("-p", "--pid")), ("label", ""))),
    ("exec", (("options", ("-a",)), ("label", ""))),
    ("builtin", (("label", ""),)),
    ("command", (("no_run", ("-v", "-V")), ("label", ""))),
    ("time", (("options", ("-f", "--format", "-o", "--output")), ("label", ""))),
    ("timeout", (("options", ("-s", "--signal", "-k", "--kill-after")), ("operands", 1))),
    ("sudo", (("options", ("-u", "--user", "-g", "--group", "-C", "--close-from", "-D", "--chdir", "-h", "--host", "-p",
                           "--prompt", "-r", "--role", "-t", "--type", "-T", "--command-timeout", "-U", "--other-user",
                           "-R", "--chroot")), ("assignments", True), ("detach", ("-b", "--background")),
              ("no_run", ("-l", "--list", "-v", "--validate", "-k", "--reset-timestamp", "-K", "--remove-timestamp",
                          "-e", "--edit", "-V", "--version")))),
    ("doas", (("options", ("-u", "-C")), ("assignments", True))),
    ("run0", (("options", ("-u", "--user", "-g", "--group", "--unit", "--property", "--description", "--slice", "-D",
                           "--chdir", "--setenv", "--nice", "--machine")),)),
    ("pkexec", (("options", ("--user",)),)),
    ("su", (("anywhere", True),
            ("options", ("-s", "--shell", "-g", "--group", "-G", "--supp-group", "-w", "--whitelist-environment")),
            ("shell_options", ("-c", "--command", "--session-command")), ("runs_operand", False))),
    ("runuser", (("options", ("-u", "--user", "-g", "--group", "-G", "--supp-group", "-s", "--shell", "-w",
                              "--whitelist-environment")), ("shell_options", ("-c", "--command", "--session-command")),
                 ("operands", 1), ("operands_unless", ("-u", "--user")))),
    ("sg", (("operands", 1), ("shell_options", ("-c",)), ("shell", True))),
    ("newgrp", (("runs_operand", False),)),
    ("flock", (("options", ("-w", "--timeout", "-E", "--conflict-exit-code")), ("operands", 1),
               ("shell_options", ("-c", "--command")), ("no_run", ("-u", "--unlock")))),
    ("prlimit", (("options", ("-p", "--pid", "-o", "--output")), ("no_run", ("-p", "--pid")))),
    ("ulimit", (("runs_operand", False),)),
    ("numactl", (("options", ("-N", "--cpunodebind", "-m", "--membind", "-C", "--physcpubind", "-p", "--preferred",
                              "-i", "--interleave", "-P", "--preferred-many", "-b", "--balancing", "-w",
                              "--weighted-interleave")), ("no_run", ("-H", "--hardware", "-s", "--show")))),
    ("cgexec", (("options", ("-g", "-r")),)),
    ("unshare", (("options", ("--map-user", "--map-group", "--map-users", "--map-groups", "-S", "--setuid", "-G",
                              "--setgid", "-R", "--root", "-w", "--wd", "--propagation", "--setgroups",
                              "--kill-child")),)),
    ("nsenter", (("options", ("-t", "--target", "-S", "--setuid", "-G", "--setgid", "-r", "--root", "-w", "--wd", "-N",
                              "--net-socket")),)),
    ("chroot", (("options", ("--userspec", "--groups")), ("operands", 1))),
    ("bwrap", (("options", ("--args", "--argv0", "--chdir", "--unsetenv", "--lock-file", "--sync-fd", "--uid", "--gid",
                            "--hostname", "--userns", "--userns2", "--pidns", "--info-fd", "--json-status-fd",
                            "--seccomp", "--add-seccomp-fd", "--block-fd", "--userns-block-fd", "--exec-label",
                            "--file-label", "--proc", "--dev", "--tmpfs", "--mqueue", "--dir", "--remount-ro",
                            "--cap-add", "--cap-drop", "--perms", "--size", "--overlay-src", "--tmp-overlay",
                            ("--setenv", 2), ("--bind", 2), ("--bind-try", 2), ("--dev-bind", 2), ("--dev-bind-try", 2),
                            ("--ro-bind", 2), ("--ro-bind-try", 2), ("--file", 2), ("--bind-data", 2),
                            ("--ro-bind-data", 2), ("--symlink", 2), ("--chmod", 2), ("--ro-overlay", 2),
                            ("--overlay", 3))),)),
    ("firejail", (("options", ("--profile", "--name", "--private", "--whitelist", "--blacklist")),)),
    ("systemd-run", (("options", ("-p", "--property", "-u", "--unit", "--slice", "-E", "--setenv", "--description",
                                  "-M", "--machine", "--uid", "--gid", "--nice", "--working-directory", "--on-active",
                                  "--on-boot", "--on-startup", "--on-unit-active", "--on-unit-inactive",
                                  "--on-calendar", "--timer-property", "-H", "--host", "--path-property",
                                  "--socket-property", "--service-type", "--expand-environment")),)),
    ("systemd-inhibit", (("options", ("--what", "--who", "--why", "--mode")),)),
    ("dbus-run-session", (("options", ("--config-file", "--dbus-daemon")),)),
    ("xvfb-run", (("options", ("-n", "--server-num", "-s", "--server-args", "-e", "--error-file", "-f", "--auth-file",
                               "-p", "--xauth-protocol", "-w", "--wait")),)),
    ("unbuffer", ()),
    ("chronic", ()),
    ("caffeinate", (("options", ("-t", "-w")),)),
    ("catchsegv", ()),
    ("setarch", (("operands", 1),)),
    ("linux32", ()),
    ("linux64", ()),
    ("fakeroot", (("options", ("-l", "--lib", "--faked", "-s", "-i")),)),
    ("fakechroot", (("options", ("-l", "--lib", "-d", "--elfloader", "-s", "-e", "--environment")),)),
    ("proot", (("options", ("-r", "--rootfs", "-b", "--bind", "-m", "--mount", "-w", "--pwd", "--cwd", "-q", "--qemu",
                            "-k", "--kernel-release")),)),
    ("faketime", (("operands", 1), ("options", ("-f",)))),
    ("ccache", ()),
    ("sccache", ()),
    ("distcc", ()),
    ("icecc", ()),
    ("tsp", (("options", ("-L", "-D", "-N", "-E")),)),
    ("pueue", (("subcommands", ("add",)),
               ("options", ("-w", "--working-directory", "-g", "--group", "-a", "--after", "-l", "--label", "-d",
                            "--delay", "-o", "--priority")), ("shell", True))),
    # debuggers, tracers, profilers
    ("strace", (("options", ("-o", "-e", "-p", "-s", "-u", "-E", "-I", "-a", "-b", "-P", "-X", "-O", "-S", "--output",
                             "--trace", "--signal", "--status", "--attach", "--user", "--env", "--string-limit",
                             "--trace-path")), ("no_run", ("-p", "--attach")))),
    ("ltrace", (("options", ("-o", "--output", "-e", "-p", "-s", "-u", "-n", "--indent", "-a", "--align", "-A", "-D",
                             "--debug", "-F", "--config", "-l", "--library", "-L", "-x", "-w", "--where")),
                ("no_run", ("-p",)))),
    ("valgrind", (("options", ()),)),
    ("perf", (("subcommands", ("record", "stat", "trace", "mem record", "c2c record", "sched record", "lock record",
                               "kmem record", "kvm record", "top")),
              ("options", ("-e", "--event", "-o", "--output", "-p", "--pid", "-t", "--tid", "-c", "--count", "-F",
                           "--freq", "--call-graph", "-C", "--cpu", "-r", "--repeat", "-G", "--cgroup", "-I",
                           "--interval-print", "-x", "--field-separator", "-m", "--mmap-pages", "--filter",
                           "--exclude-perf", "-u", "--uid", "-j", "--branch-filter", "--switch-output", "-D",
                           "--delay")))),
    ("gdb", (("options", ("-ex", "-iex", "-x", "-ix", "-p", "--pid", "-c", "--core", "-d", "--directory", "-cd", "-s",
                          "--symbols", "-e", "--exec", "-se", "-b", "-l", "--data-directory", "-D", "--init-command",
                          "--init-eval-command", "--command", "--eval-command")), ("command_flags", ("--args",)),
             ("no_run", ("-p", "--pid")), ("runs_operand", False))),
    ("lldb", (("options", ("-o", "--one-line", "-O", "--one-line-before-file", "-s", "--source", "-S", "-p",
                           "--attach-pid", "-n", "--attach-name", "-c", "--core", "-a", "--arch")),
              ("command_flags", ("--",)), ("no_run", ("-p", "--attach-pid", "-n", "--attach-name")))),
    ("rr", (("subcommands", ("record",)), ("options", ("-o", "--output-trace-dir", "-c", "--num-cpu-ticks")))),
    ("heaptrack", (("options", ("-o", "--output", "-p", "--pid")), ("no_run", ("-p", "--pid")))),
    ("py-spy", (("subcommands", ("record", "top")),
                ("options", ("-o", "--output", "-f", "--format", "-r", "--rate", "-d", "--duration", "-p", "--pid",
                             "--idle", "-n")), ("no_run", ("-p", "--pid")))),
    ("hyperfine", (("options", ("-w", "--warmup", "-r", "--runs", "-m", "--min-runs", "-M", "--max-runs", "-D",
                                "--parameter-step-size", "-S", "--shell", "-u", "--time-unit", "--export-asciidoc",
                                "--export-csv", "--export-json", "--export-markdown", "--export-orgmode", "--style",
                                "-n", "--command-name", "--output", "--sort", "--input", "-i", "--ignore-failure")),
                   ("shell_options", ("-p", "--prepare", "-c", "--cleanup", "-s", "--setup", "--conclude",
                                      "--reference")))),
    # package / environment runners
    ("uv", (("env_runner", True), ("subcommands", ("run", "tool run")),
            ("options", ("--directory", "--project", "--python", "-p", "--cache-dir", "--config-file", "--color",
                         "--with", "--python", "-p", "--env-file", "--directory", "--project", "--package", "--extra",
                         "--group", "--index", "--from", "--with-requirements", "--index-url", "--extra-index-url",
                         "-w", "-e", "--env", "-E")), ("label", "uv run"))),
    ("uvx", (("env_runner", True), ("options", "python run"), ("label", "uvx"))),
    ("poetry", (("env_runner", True), ("subcommands", ("run",)), ("options", ("-C", "--directory", "-P", "--project")),
                ("label", "poetry run"))),
    ("pipenv", (("env_runner", True), ("subcommands", ("run",)), ("label", "pipenv run"))),
    ("pdm", (("env_runner", True), ("subcommands", ("run",)), ("options", ("-p", "--project", "-g", "--global")),
             ("label", "pdm run"))),
    ("hatch", (("env_runner", True), ("subcommands", ("run", "env run")),
               ("options", ("-e", "--env", "-p", "--project")), ("label", "hatch run"))),
    ("rye", (("env_runner", True), ("subcommands", ("run",)), ("options", ("--pyproject",)), ("label", "rye run"))),
    ("pipx", (("env_runner", True), ("subcommands", ("run",)),
              ("options", ("--spec", "--python", "--index-url", "--pip-args", "--pip-arg")), ("label", "pipx run"))),
    ("conda", (("env_runner", True), ("subcommands", ("run",)),
               ("options", ("-n", "--name", "-p", "--prefix", "--cwd")), ("label", "conda run"))),
    ("mamba", (("env_runner", True), ("subcommands", ("run",)),
               ("options", ("-n", "--name", "-p", "--prefix", "--cwd")), ("label", "mamba run"))),
    ("micromamba", (("env_runner", True), ("subcommands", ("run",)),
                    ("options", ("-n", "--name", "-p", "--prefix", "--cwd", "-r", "--root-prefix")),
                    ("label", "micromamba run"))),
    ("pixi", (("env_runner", True), ("subcommands", ("run", "exec")),
              ("options", ("-e", "--environment", "--manifest-path", "-s", "--spec")), ("label", "pixi run"),
              ("shell", True))),
    ("rustup", (("env_runner", True), ("subcommands", ("run",)), ("operands", 1), ("options", ("--toolchain",)),
                ("label", "rustup run"))),
    ("nix-shell", (("anywhere", True),
                   ("options", ("-p", "--packages", "-A", "--attr", "-I", "--arg", "--argstr", "-E", "--expr")),
                   ("shell_options", ("--run", "--command")), ("runs_operand", False))),
    ("nix", (("anywhere", True), ("subcommands", ("develop", "shell", "run")),
             ("options", ("-p", "--profile", "--expr", "-f", "--file", "-I", "--include")),
             ("command_flags", ("-c", "--command")), ("runs_operand", False))),
    ("npx", (("env_runner", True), ("options", "npx"), ("shell_options", ("-c", "--call")), ("label", "npx"))),
    ("bunx", (("env_runner", True), ("options", ("-p", "--package")), ("label", "bunx"))),
    ("npm", (("env_runner", True), ("subcommands", ("exec", "x")), ("options", "npx"),
             ("shell_options", ("-c", "--call")), ("label", "npm exec"))),
    ("pnpm", (("env_runner", True), ("subcommands", ("exec", "dlx")),
              ("options", ("-C", "--dir", "--filter", "-F", "--package")), ("shell_options", ("-c", "--shell-mode")),
              ("label", "pnpm exec"))),
    ("yarn", (("env_runner", True), ("subcommands", ("exec", "dlx")), ("options", ("-p", "--package")),
              ("label", "yarn exec"))),
    ("bun", (("env_runner", True), ("subcommands", ("x",)), ("options", ("-p", "--package")), ("label", "bun x"))),
    ("corepack", (("env_runner", True), ("runs_operand", True), ("label", ""))),
    ("docker", (("subcommands", ("run", "exec", "container run", "container exec", "compose run", "compose exec",
                                 "create", "container create")), ("options", "docker run"), ("operands", 1),
                ("label", "docker"))),
    ("podman", (("subcommands", ("run", "exec", "container run", "container exec", "compose run", "compose exec")),
                ("options", "docker run"), ("operands", 1), ("label", "podman"))),
    ("nerdctl", (("subcommands", ("run", "exec", "compose run", "compose exec")), ("options", "docker run"),
                 ("operands", 1), ("label", "nerdctl"))),
    ("docker-compose", (("subcommands", ("run", "exec")), ("options", "docker run"), ("operands", 1),
                        ("label", "docker-compose"))),
    ("kubectl", (("subcommands", ("exec", "run")),
                 ("options", ("-c", "--container", "-n", "--namespace", "--context", "--image", "-f", "--filename")),
                 ("operands", 1), ("label", "kubectl"))),
    ("lxc", (("subcommands", ("exec",)), ("options", ("--env", "--cwd", "--user", "--group", "--mode")),
             ("operands", 1), ("label", "lxc exec"))),
    ("toolbox", (("subcommands", ("run",)), ("options", ("-c", "--container", "-d", "--distro", "-r", "--release")),
                 ("label", "toolbox run"))),
    ("distrobox", (("anywhere", True), ("subcommands", ("enter",)), ("options", ("-n", "--name")),
                   ("command_flags", ("--", "-e", "--exec")), ("runs_operand", False), ("label", "distrobox"))),
    ("vagrant", (("anywhere", True), ("subcommands", ("ssh",)), ("shell_options", ("-c", "--command")),
                 ("runs_operand", False))),
    # schedulers, job launchers, remote
    ("srun", (("options", "slurm"),)),
    ("salloc", (("options", "slurm"),)),
    ("sbatch", (("anywhere", True), ("options", "slurm"), ("shell_options", ("--wrap",)), ("runs_operand", False))),
    ("mpirun", (("options", "mpi"),)),
    ("mpiexec", (("options", "mpi"),)),
    ("orterun", (("options", "mpi"),)),
    ("prun", (("options", "mpi"),)),
    ("ssh", (("options", ("-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L", "-l", "-m", "-O", "-o", "-p",
                          "-Q", "-R", "-S", "-W", "-w", "-B", "-P")), ("operands", 1), ("shell", True),
             ("label", "ssh:{}"))),
    ("watch", (("options", ("-n", "--interval", "-d", "--differences", "-q", "--equexit", "--chgexit", "-s")),
               ("shell", True), ("command_flags", ()))),
    ("watchexec", (("options", ("-e", "--exts", "-w", "--watch", "-W", "--watch-non-recursive", "-i", "--ignore", "-f",
                                "--filter", "-d", "--debounce", "--delay-run", "-s", "--signal", "--stop-signal",
                                "--stop-timeout", "-E", "--env", "--shell", "--project-origin", "--workdir",
                                "--emit-events-to", "--on-busy-update", "--poll", "--filter-file", "--ignore-file",
                                "--color", "-j", "--filter-prog")), ("shell", True))),
    ("entr", (("shell_options", ()),)),
    ("reflex", (("options", ("-r", "--regex", "-R", "--inverse-regex", "-g", "--glob", "-G", "--inverse-glob", "-c",
                             "--config", "-d", "--decoration")),)),
    ("nodemon", (("options", ("-w", "--watch", "-e", "--ext", "-i", "--ignore", "-d", "--delay", "-x", "--exec",
                              "--signal")), ("shell_options", ("-x", "--exec")))),
    ("script", (("anywhere", True),
                ("options", ("-t", "--timing", "-I", "--log-in", "-O", "--log-out", "-B", "--log-io", "-T",
                             "--log-timing", "-m", "--logging-format", "-E", "--echo")),
                ("shell_options", ("-c", "--command")), ("runs_operand", False))),
    ("screen", (("options", ("-S", "-c", "-e", "-h", "-p", "-T", "-t", "-X", "-L", "-Logfile")),
                ("detach", ("-d", "-D")), ("runs_operand", True))),
    ("dtach", (("options", ("-n", "-c", "-A", "-a", "-e", "-r", "-p")), ("detach", ("-n",)))),
    ("abduco", (("options", ("-n", "-c", "-A", "-a", "-e", "-r", "-p")),)),
    ("busybox", (("label", ""),)),
    ("toybox", (("label", ""),)),
    ("eatmydata", ()),
    ("with-contenv", ()),
    ("tini", (("options", ("-s", "-p", "-e")),)),
    ("dumb-init", (("options", ("-r", "--rewrite")),)),
    ("gosu", (("operands", 1),)),
    ("su-exec", (("operands", 1),)),
    ("setpriv", (("options", ("--reuid", "--regid", "--groups", "--inh-caps", "--ambient-caps", "--bounding-set",
                              "--securebits", "--pdeathsig", "--selinux-label", "--apparmor-profile",
                              "--landlock-access", "--landlock-rule", "--rlimit")),)),
    ("chpst", (("options", ("-u", "-U", "-b", "-e", "-/", "-n", "-l", "-L", "-m", "-d", "-o", "-p", "-f", "-c",
                            "-t")),)),
    ("softlimit", (("options", ("-m", "-d", "-s", "-l", "-a", "-o", "-p", "-f", "-c", "-r", "-t")),)),
    ("cpulimit", (("options", ("-l", "--limit", "-p", "--pid", "-e", "--exe", "-P", "--path")),
                  ("no_run", ("-p", "--pid", "-e", "--exe", "-P", "--path")))),
    ("trickle", (("options", ("-u", "-d", "-w", "-t", "-l", "-n")),)),
    ("proxychains", ()),
    ("proxychains4", (("options", ("-f",)),)),
    ("torsocks", ()),
    ("tsocks", ()),
    ("sem", (("options", ("-j", "--jobs", "--id")), ("label", "sem"))),
    ("retry", (("options", ("-t", "--tries", "-d", "--delay", "-m", "--min", "-x", "--max")), ("label", "retry"))),
    ("direnv", (("subcommands", ("exec",)), ("operands", 1), ("label", "direnv exec"))),
    ("dotenv", (("options", ("-f", "-e", "-v", "-c")),)),
    ("op", (("subcommands", ("run",)), ("options", ("--env-file",)), ("label", "op run"))),
    ("aws-vault", (("subcommands", ("exec",)), ("operands", 1), ("label", "aws-vault exec"))),
    ("sops", (("subcommands", ("exec-env", "exec-file")), ("operands", 1), ("shell", True), ("label", "sops exec"))),
    ("with-env", ()),
    # Python's own module runners, as `python -m NAME` yields them (issue 24 item 4): `python3 -m cProfile -m
    # pytest ...` runs pytest in the same process
    ("pdb", (("options", ("-c", "--command")), ("command_flags", ("-m",)), ("runs_operand", False))),
    ("cProfile", (("options", ("-o", "--outfile", "-s", "--sort")), ("command_flags", ("-m",)),
                  ("runs_operand", False))),
    ("profile", (("options", ("-o", "--outfile", "-s", "--sort")), ("command_flags", ("-m",)),
                 ("runs_operand", False))),
    ("trace", (("options", ("-f", "--file", "-C", "--coverdir", "--ignore-module", "--ignore-dir")),
               ("command_flags", ("--module", "-m")), ("runs_operand", False))),
    ("coverage", (("subcommands", ("run",)), ("options", "coverage"), ("command_flags", ("-m", "--module")),
                  ("runs_operand", False))),
    ("coverage3", (("subcommands", ("run",)), ("options", "coverage"), ("command_flags", ("-m", "--module")),
                   ("runs_operand", False))),
    ("python-coverage", (("subcommands", ("run",)), ("options", "coverage"), ("command_flags", ("-m", "--module")),
                         ("runs_operand", False))),
    ("memray", (("subcommands", ("run",)), ("options", ("-o", "--output", "--native", "--trace-python-allocators")),
                ("command_flags", ("-m",)), ("runs_operand", False))),
    ("scalene", (("options", ("--outfile", "--cpu-percent-threshold", "--profile-interval", "--profile-only")),
                 ("command_flags", ("-m", "---")), ("runs_operand", False))),
    ("pyinstrument", (("options", ("-o", "--outfile", "-r", "--renderer", "-i", "--interval")),
                      ("command_flags", ("-m",)), ("runs_operand", False))),
    # terminal emulators run the command after -e
    ("xterm", (("options", ("-T", "-title", "-geometry", "-g", "-fn", "-fa", "-fs", "-bg", "-fg", "-n", "-name",
                            "-class", "-xrm")), ("command_flags", ("-e",)), ("runs_operand", False))),
    ("uxterm", (("options", ("-T", "-title", "-geometry", "-g", "-fn", "-fa", "-fs")), ("command_flags", ("-e",)),
                ("runs_operand", False))),
    ("urxvt", (("options", ("-T", "-title", "-geometry", "-g", "-fn", "-name")), ("command_flags", ("-e",)),
               ("runs_operand", False))),
    ("gnome-terminal", (("options", ("--title", "--geometry", "--working-directory")),
                        ("command_flags", ("--", "-x", "-e")), ("runs_operand", False))),
    ("konsole", (("options", ("--workdir", "-p", "--profile")), ("command_flags", ("-e",)), ("runs_operand", False))),
    # the dynamic loader starts the program it is given, by path (`/lib64/ld-linux-x86-64.so.2 /usr/bin/cargo`)
    ("ld-linux-x86-64.so.2", (("options", "ldso"),)),
    ("ld-linux.so.2", (("options", "ldso"),)),
    ("ld-linux-aarch64.so.1", (("options", "ldso"),)),
    ("ld-musl-x86_64.so.1", (("options", "ldso"),)),
    ("ld.so", (("options", "ldso"),)),
    # swarmgate's own runners (SPEC §5)
    ("run-with-memory-cap", (("options", ("--label", "--timeout", "--wait", "--backend")), ("operands", 1),
                             ("interleaved", True))),
    ("host-dispatch", (("options", ("--mem", "--expect-duration", "--label", "--backend", "--threads")),)),
    ("multi-host-run", (("options", ("--memory-cap", "--label", "--fetch", "--host", "--timeout")),)),
    ("gpu-quiesce-run", ()),
    ("detached-run", (("subcommands", ("start",)), ("options", ("--label", "--wall-clock")))),
)

RUNNERS = ("run-with-memory-cap", "host-dispatch", "multi-host-run", "gpu-quiesce-run", "detached-run")
TABLE: dict[str, Wrapper] = _Table(_BUILTIN)

# the walker's own code reads these (semantics no table entry can hold); every command name
# dispatch() does more with than yield it
SPECIAL = frozenset(SHELLS) | frozenset({
    "break", "exit", "return", "source", ".", "trap", "eval", "cd", "pushd", "popd", "export",
    "declare", "typeset", "local", "readonly", "unset", "read", "mapfile", "readarray", "find", "make",
    "gmake", "alias", "printf", "set", "swarmgate", "xargs", "parallel", "tmux", "env", "tar", "sed",
    "gsed", "awk", "gawk", "mawk", "nawk", "busybox", "expect", "vim", "nvim", "vi", "ex", "view",
    "hyperfine", "docker", "podman", "nerdctl", "gdb", "git", "hash", "enable", "shopt", "bind",
    "coproc", "fc", "history", "ssh", "watch", "entr", "compgen", "complete", "let", "getopts", "dpkg"})

# programs that start other commands (a command they start inherits their assignments)
LAUNCHERS = frozenset(TABLE) | frozenset(SHELLS) | frozenset({
    "eval", "source", ".", "find", "xargs", "parallel", "swarmgate", "env", "make", "gmake"})


def is_python(name: str) -> bool:
    """python, python3, python3.11, pypy3 ..."""
    for p in ("python", "pypy"):
        if name.startswith(p) and name[len(p):].replace(".", "").isdigit() or name == p:
            return True
    return False


# python as a wrapper: `python -m MOD ARGS` runs MOD ARGS
PYTHON = Wrapper("python", options=("-W", "-X", "-Q", "--check-hash-based-pycs"), command_flags=("-m",),
                 runs_operand=False, label="python -m", env_runner=True)


def lookup(name: str, extra: dict | None = None) -> Wrapper | None:
    """The wrapper entry for a command name (config entries first), or None. Interpreters
    (``python -m``: ``PYTHON``) are not looked up here: they run code, too."""
    if extra:
        w = extra.get(name)
        if w is not None:
            return w
    return TABLE.get(name)


def _takes(w: Wrapper, opt: str) -> int:
    """How many values option ``opt`` takes (0: a flag)."""
    return w.options.get(opt, 0)


def _known(w: Wrapper, a: str) -> bool:
    """``a`` is one option of ``w`` as a whole word (``-np``, ``-ex``: single-dash long options)."""
    return (a in w.options or a in w.no_run or a in w.shell_options or a in w.command_flags
            or a in w.detach)


def _cluster(a: str) -> bool:
    return a.startswith("-") and not a.startswith("--") and len(a) > 2


def find_command(w: Wrapper, args: list) -> Found:
    """Where the command that ``w`` runs is in its arguments ``args`` (see ``Found``)."""
    n = len(args)
    i = 0
    if w.subcommands:
        # global options, then one of the subcommands
        while i < n and args[i].startswith("-") and args[i] != "--":
            a = args[i]
            i += 1 + (_takes(w, a) if "=" not in a else 0)
        for sub in w.subcommands:
            if tuple(args[i:i + len(sub)]) == sub:
                i += len(sub)
                break
        else:
            return Found("none")
    env: dict = {}
    detach = False
    have: set = set()
    while i < n:
        a = args[i]
        if a == "--":
            if a in w.command_flags:
                return Found("argv", i + 1, env=env, detach=detach)
            i += 1
            break
        if not a.startswith("-") or a == "-":
            if w.assignments and "=" in a and a.split("=", 1)[0].isidentifier():
                k, v = a.split("=", 1)
                env[k] = v
                i += 1
                continue
            break
        if _cluster(a) and not _known(w, a):
            # getopt cluster: letters are flags until one takes a value, which takes the rest
            # of the cluster (-n5) or, when it is the last letter, the next word (-dmS name)
            step = 1
            for j in range(1, len(a)):
                o = "-" + a[j]
                rest = a[j + 1:]
                if o in w.no_run:
                    return Found("none")
                if o in w.detach:
                    detach = True
                have.add(o)
                if o in w.command_flags:
                    return Found("argv", i if rest else i + 1, text=rest or None, env=env, detach=detach)
                if o in w.shell_options:
                    if rest:
                        return Found("shell", text=rest, env=env, detach=detach, text_index=i)
                    if i + 1 < n:
                        return Found("shell", text=args[i + 1], env=env, detach=detach, text_index=i + 1)
                    return Found("none")
                if _takes(w, o):
                    step = 1 if rest else 1 + _takes(w, o)
                    break
            i += step
            continue
        opt, eq, val = a.partition("=") if a.startswith("--") else (a, "", "")
        if opt in w.no_run:
            return Found("none")
        if opt in w.detach:
            detach = True
        have.add(opt)
        if opt in w.command_flags:
            if eq:
                return Found("argv", i, text=val, env=env, detach=detach)   # --command=X: X starts it
            return Found("argv", i + 1, env=env, detach=detach)
        if opt in w.shell_options:
            if eq:
                return Found("shell", text=val, env=env, detach=detach, text_index=i)
            if i + 1 < n:
                return Found("shell", text=args[i + 1], env=env, detach=detach, text_index=i + 1)
            return Found("none")
        i += 1 if eq else 1 + _takes(w, opt)
    operands = 0 if w.operands_unless & have else w.operands
    operand = args[i] if i < n else None
    i += operands
    if w.interleaved and operands:
        while i < n and args[i].startswith("-") and args[i] not in ("--", "-"):
            a = args[i]
            i += 1 if "=" in a else 1 + _takes(w, a)
    # a shell option right after the operands (`flock FILE -c TEXT`, `runuser USER -c TEXT`);
    # for `anywhere` entries (`su - USER -c TEXT`, `nix shell PKG -c CMD`), anywhere before `--`
    j = i
    while j < n and (w.shell_options or (w.command_flags and w.anywhere)):
        a = args[j]
        if a == "--":
            break
        opt = a.partition("=")[0]
        if opt in w.command_flags and w.anywhere:
            return Found("argv", j + 1, env=env, detach=detach, operand=operand)
        if opt in w.shell_options or (_cluster(a) and "-" + a[-1] in w.shell_options):
            if "=" in a and a.startswith("--"):
                return Found("shell", text=a.partition("=")[2], env=env, detach=detach, operand=operand,
                             text_index=j)
            if j + 1 < n:
                return Found("shell", text=args[j + 1], env=env, detach=detach, operand=operand,
                             text_index=j + 1)
            return Found("none")
        if not w.anywhere:
            break
        j += 1
    if i < n and args[i] == "--" and operands:
        i += 1
    if not w.runs_operand or i >= n:
        return Found("none", operand=operand)
    if w.shell:
        return Found("shell", i, text=" ".join(args[i:]), env=env, detach=detach, operand=operand)
    return Found("argv", i, env=env, detach=detach, operand=operand)


def inner_argv(name: str, args: list, extra: dict | None = None, runners_only: bool = False):
    """(name, args) of the command a wrapper runs directly as an argv, or None (not a wrapper,
    nothing runs, or it runs a shell text). ``runners_only``: only through ``env_runner``
    entries (the program is the same one)."""
    w = lookup(name, extra) or (PYTHON if is_python(name) else None)
    if w is None or (runners_only and not w.env_runner):
        return None
    f = find_command(w, list(args))
    if f.kind != "argv":
        return None
    if f.text:   # -mMOD, --command=X
        return f.text, list(args[f.index + 1:])
    if f.index >= len(args):
        return None
    return args[f.index], list(args[f.index + 1:])


# ---------------------------------------------------------------- config

def from_config(raw: dict) -> dict:
    """``[bash] wrappers`` (name -> table of CONFIG_FIELDS) as Wrapper entries. Raises
    ValueError naming the wrapper and the field that is wrong."""
    if not isinstance(raw, dict):
        raise ValueError("expected a table of wrapper name -> {options, operands, subcommands, "
                         "shell_options, shell, command_flags, no_run, assignments}")
    out = {}
    for name, spec in raw.items():
        if not isinstance(name, str) or not name.strip() or "/" in name or " " in name:
            raise ValueError(f"wrapper name {name!r}: expected a command name (no spaces or slashes)")
        if not isinstance(spec, dict):
            raise ValueError(f"wrapper {name!r}: expected a table such as {{ options = [\"-n\"], "
                             f"operands = 1 }}")
        kw: dict = {}
        for field, value in spec.items():
            want = CONFIG_FIELDS.get(field)
            if want is None:
                raise ValueError(f"wrapper {name!r}: unknown field {field!r} (known: "
                                 f"{', '.join(CONFIG_FIELDS)})")
            ok = (isinstance(value, bool) if want == "true or false" else
                  isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 8
                  if want.startswith("an integer") else
                  isinstance(value, list) and all(isinstance(x, str) and x.strip() for x in value))
            if not ok:
                raise ValueError(f"wrapper {name!r}: {field} must be {want}, found {value!r}")
            kw[field] = value
        out[name] = kw
    return out


def compile_config(specs: dict | None) -> dict | None:
    """Wrapper entries from validated ``[bash] wrappers`` data (cached per process)."""
    if not specs:
        return None
    key = repr(sorted((k, sorted(v.items())) for k, v in specs.items()))
    hit = _compiled.get(key)
    if hit is None:
        hit = _compiled[key] = {name: Wrapper(name, **kw) for name, kw in specs.items()}
    return hit


_compiled: dict = {}


# ---------------------------------------------------------------- option helpers

def opt_value(args: list, short: str, longs: tuple = ()) -> str | None:
    """The value of option -X (also inside a getopt cluster: -qc VALUE, -cVALUE) or --long[=V]."""
    n = len(args)
    for k, a in enumerate(args):
        if a == "--":
            return None
        if longs and a.startswith(longs):
            if "=" in a:
                return a.split("=", 1)[1]
            if a in longs and k + 1 < n:
                return args[k + 1]
        if a.startswith("-") and not a.startswith("--") and short in a[1:]:
            j = a.index(short, 1)
            if j < len(a) - 1:
                return a[j + 1:]
            if k + 1 < n:
                return args[k + 1]
    return None


def skip_opts(args: list, i: int, takes) -> int:
    """Skip options starting at args[i]; return index of the first operand."""
    n = len(args)
    while i < n:
        a = args[i]
        if a == "--":
            return i + 1
        if not a.startswith("-") or a == "-":
            return i
        if "=" in a and a.startswith("--"):
            i += 1
            continue
        if a in takes:
            i += 2
            continue
        if not a.startswith("--") and len(a) > 2:
            for k in range(1, len(a)):
                if "-" + a[k] in takes:
                    i += 2 if k == len(a) - 1 else 1
                    break
            else:
                i += 1
            continue
        i += 1
    return i
