"""multi-host-run: run one deterministic job on the second machine, then bring results back (SPEC §5.4).

    multi-host-run --peer [NAME] --memory-cap CAP [--label L] [--fetch PATH...] -- COMMAND...
    multi-host-run --memory-cap CAP [--label L] -- COMMAND...     (here, through run-with-memory-cap)

Peer steps: 1 refuse (243) unless the across-machines switch is on — never run
here instead; 2 the cap may not exceed the peer's max_cap; 3 toolchains compared
line by line (242); 4 exactly the files `git ls-files` lists copied to
runs/<label>/ on the peer, `git init` + commit there; 5 started fully detached
(setsid, stdin /dev/null, inherited descriptors closed) under the peer's
run-with-memory-cap, polled every 5 s, cores sampled every 300 s; 6 --fetch
copies artifacts back; 7 the run tree and its pid/exit/log files deleted and
read back as gone (246); 8 on TERM/INT/HUP: stop the tree (freeze, re-enumerate,
TERM leaves first, CONT, KILL after 30 s), fetch partial artifacts, delete, 247;
9 the peer's output has its private names and addresses replaced.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence

from swarmgate import cell_outcome as outcome
from swarmgate.break_switch import broken
from swarmgate.exit_codes import Exit
from swarmgate.front_door import entry
from swarmgate.hosts import ssh
from swarmgate.hosts.tool_cli import load_hosts, parser, preamble, split_command
from swarmgate.selftest import Cell, Suite
from swarmgate.sizes import human, parse_size

PROC_TREE_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "proc_tree.py")

CORES_SNIPPET = r"""
import time
def s():
    with open('/proc/stat') as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v), v[3] + (v[4] if len(v) > 4 else 0)
a = s(); time.sleep(1); b = s()
import os
tot = b[0] - a[0]; idle = b[1] - a[1]
print('%.2f %d' % ((tot - idle) / tot * os.cpu_count() if tot else 0.0, os.cpu_count()))
"""


def say(msg: str) -> None:
    print(f"multi-host-run: {msg}", file=sys.stderr, flush=True)


def default_label(command: list[str]) -> str:
    words = [os.path.basename(w) for w in command[:2]]
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", "-".join(words)).strip("-")[:40] or "job"
    return f"{slug}-{hashlib.sha1(' '.join(command).encode()).hexdigest()[:8]}"


def valid_label(label: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.:-]{0,100}", label)) and ".." not in label


class Stop(Exception):
    pass


class PeerRun:
    """One run on a peer: the paths and the ssh calls, no policy."""

    def __init__(self, peer: dict, label: str, redact: ssh.Redactor) -> None:
        self.peer = peer
        self.label = label
        self.redact = redact
        root = peer["work_root"].rstrip("/")
        self.dir = f"{root}/runs/{label}"
        self.pid_file = f"{self.dir}.pid"
        self.exit_file = f"{self.dir}.exit"
        self.log_file = f"{self.dir}.log"
        self.remote_pid: int | None = None
        self.offset = 0
        self.mark = f"__swarmgate_exit_{os.urandom(6).hex()}__:"

    def run(self, remote: str, **kw) -> subprocess.CompletedProcess:
        return ssh.run(self.peer, remote, **kw)

    def copy_tree(self, repo: str) -> int:
        """Copy exactly `git ls-files` to the peer; git init + commit there. Returns the file count."""
        ls = subprocess.run(["git", "-C", repo, "ls-files", "-z"], capture_output=True, check=True)
        names = [n for n in ls.stdout.split(b"\0") if n and os.path.lexists(os.path.join(repo, n.decode()))]
        listing = b"\0".join(names) + (b"\0" if names else b"")
        d = shlex.quote(self.dir)
        setup = (f"test -e {d} && {{ echo 'run tree exists' >&2; exit 3; }}; "
                 f"mkdir -p {d} && cd {d} && tar -xf - && git init -q . && "
                 f"git -c user.name=swarmgate -c user.email=swarmgate@localhost add -A && "
                 f"git -c user.name=swarmgate -c user.email=swarmgate@localhost commit -qm "
                 f"{shlex.quote('snapshot for ' + self.label)} --allow-empty")
        tar = subprocess.Popen(["tar", "-cf", "-", "--no-recursion", "--null", "-T", "-"], cwd=repo,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = tar.communicate(listing, timeout=600)
        if tar.returncode != 0:
            raise ssh.PeerError(f"tar of the tracked files failed: {err.decode(errors='replace').strip()[-300:]}")
        cp = self.run(setup, input_bytes=out, timeout=600)
        if cp.returncode == 3:
            raise ssh.PeerError(f"the peer already has a run tree for label {self.label!r} "
                                f"(another run with this label, or a leftover): pick another --label")
        if cp.returncode != 0:
            raise ssh.PeerError(f"copying the tree to the peer failed: "
                                f"{self.redact(cp.stderr.decode(errors='replace').strip()[-300:])}")
        return len(names)

    def start(self, command_text: str) -> None:
        """Start fully detached from the ssh session; only the setsid nohup is backgrounded."""
        close_fds = ('for f in /proc/$$/fd/*; do n="${f##*/}"; '
                     'case "$n" in ""|*[!0-9]*) continue;; esac; '
                     '[ "$n" -gt 2 ] && eval "exec $n>&-"; done 2>/dev/null; ')
        detached = (f"{close_fds}echo $$ > {shlex.quote(self.pid_file)}; "
                    f"cd {shlex.quote(self.dir)} && {command_text} > {shlex.quote(self.log_file)} 2>&1; "
                    f"echo $? > {shlex.quote(self.exit_file)}")
        remote = (f"rm -f -- {shlex.quote(self.pid_file)} {shlex.quote(self.exit_file)} "
                  f"{shlex.quote(self.log_file)} || exit 1; "
                  f"setsid nohup bash -c {shlex.quote(detached)} < /dev/null > /dev/null 2>&1 &")
        self.run(remote, timeout=60, check=True)
        for _ in range(100):
            cp = self.run(f"cat {shlex.quote(self.pid_file)} 2>/dev/null", timeout=30)
            text = cp.stdout.decode().strip()
            if text.isdigit():
                self.remote_pid = int(text)
                return
            time.sleep(0.1)
        raise ssh.PeerError("the job did not record its pid on the peer")

    def poll(self) -> tuple[bytes, int | None]:
        """New output since the last poll, and the exit code once the job has ended.

        The exit file is read before the log: the job writes it after its output is complete, so
        once it is there the log read after it holds everything. Read the other way round, output
        written between the two reads was never read (the loop ends with the exit code): the run's
        output came back empty now and then on a loaded machine."""
        remote = (f"cat {shlex.quote(self.exit_file)} 2>/dev/null; printf %s {self.mark}; "
                  f"tail -c +{self.offset + 1} {shlex.quote(self.log_file)} 2>/dev/null; true")
        cp = self.run(remote, timeout=60)
        data = cp.stdout
        mark = self.mark.encode()
        idx = data.find(mark)
        head, out = (data[:idx], data[idx + len(mark):]) if idx >= 0 else (b"", data)
        self.offset += len(out)
        code = head.decode(errors="replace").strip()
        return out, (int(code) if code.lstrip("-").isdigit() else None)

    def cores(self) -> str:
        cp = self.run(f"{self.peer['python']} -c {shlex.quote(CORES_SNIPPET)}", timeout=30)
        parts = cp.stdout.decode().split()
        return f"{parts[0]} of {parts[1]} cores in use" if len(parts) == 2 else "cores unreadable"

    def stop(self, grace: float) -> str:
        if self.remote_pid is None:
            return "no job started"
        with open(PROC_TREE_SOURCE, "rb") as f:
            src = f.read()
        cp = self.run(f"{self.peer['python']} - {self.remote_pid} {grace}", input_bytes=src,
                      timeout=grace + 60)
        return cp.stdout.decode().strip() or cp.stderr.decode().strip()

    def fetch(self, paths: list[str], dest: str) -> list[str]:
        """Copy artifacts back (relative paths inside the run tree). Returns what was missing."""
        missing = []
        for rel in paths:
            if os.path.isabs(rel) or ".." in rel.split("/"):
                missing.append(rel)
                continue
            cp = self.run(f"cd {shlex.quote(self.dir)} && test -e {shlex.quote(rel)} && "
                          f"tar -cf - -- {shlex.quote(rel)}", timeout=600)
            if cp.returncode != 0 or not cp.stdout:
                missing.append(rel)
                continue
            os.makedirs(dest, exist_ok=True)
            subprocess.run(["tar", "-xf", "-", "-C", dest], input=cp.stdout, check=True)
        return missing

    def delete(self) -> bool:
        """Delete the run tree and its pid/exit/log files; True only when read back as gone."""
        paths = " ".join(shlex.quote(p) for p in (self.dir, self.pid_file, self.exit_file, self.log_file))
        if not broken("no-peer-cleanup"):
            self.run(f"rm -rf -- {paths}", timeout=300)
        cp = self.run(f"for p in {paths}; do test -e \"$p\" && echo \"$p\"; done; true", timeout=60)
        return cp.returncode == 0 and not cp.stdout.strip()


def toolchain_diff(peer: dict, commands: list[str], redact: ssh.Redactor) -> list[str]:
    """Lines that differ between here and the peer, per configured version command."""
    diffs = []
    for cmd in commands:
        here = subprocess.run(cmd, shell=True, capture_output=True, timeout=60)
        there = ssh.run(peer, cmd, timeout=60)
        a = (here.stdout + here.stderr).decode(errors="replace").splitlines()
        b = (there.stdout + there.stderr).decode(errors="replace").splitlines()
        if here.returncode != there.returncode:
            diffs.append(f"`{cmd}`: exit {here.returncode} here, {there.returncode} on the peer")
        for i in range(max(len(a), len(b))):
            la = a[i] if i < len(a) else "<missing>"
            lb = b[i] if i < len(b) else "<missing>"
            if la != lb:
                diffs.append(f"`{cmd}` line {i + 1}: here {la!r} / peer {redact(lb)!r}")
    return diffs


def peer_secrets(peer: dict) -> list[str]:
    secrets = [peer["host"], *peer.get("redact", [])]
    try:
        cp = ssh.run(peer, "hostname; hostname -f 2>/dev/null; hostname -I 2>/dev/null", timeout=30)
        for w in cp.stdout.decode(errors="replace").split():
            if w not in ("localhost", "127.0.0.1", "::1") or w == peer["host"]:
                secrets.append(w)
    except ssh.PeerError:
        pass
    return secrets


def run_local(cap: str, label: str, command: list[str]) -> int:
    runner = os.path.join(os.path.dirname(sys.executable), "run-with-memory-cap")
    argv = [runner if os.path.exists(runner) else "run-with-memory-cap", cap, "--label", label, "--", *command]
    try:
        return subprocess.call(argv)
    except FileNotFoundError:
        say("run-with-memory-cap is not installed: refusing to run uncapped")
        return Exit.USAGE


def run_on_peer(args, hosts, command: list[str]) -> int:
    if not hosts.peers:
        say(f"no peer is configured in {hosts.path or '~/.config/swarmgate/hosts.toml'} ([peers.NAME] host = ...)")
        return Exit.PEER_OFF
    name = args.peer or next(iter(hosts.peers))
    peer = hosts.peers.get(name)
    if peer is None:
        say(f"unknown peer {name!r} (configured: {', '.join(hosts.peers)})")
        return Exit.USAGE
    if not hosts["across_machines"]["enabled"]:
        if broken("switch-off-falls-back-to-local"):
            return run_local(args.memory_cap, args.label, command)
        say("the cross-machine switch is off ([across_machines] enabled = false in "
            f"{hosts.path or '~/.config/swarmgate/hosts.toml'}); nothing was run, here or there. "
            "Turn it on, or run here with `run-with-memory-cap`.")
        return Exit.PEER_OFF
    cap = parse_size(args.memory_cap)
    if peer.get("max_cap") and cap > peer["max_cap"]:
        say(f"--memory-cap {human(cap)} exceeds peer {name}'s max_cap {human(peer['max_cap'])}: "
            f"lower the cap, or run the job here")
        return Exit.USAGE

    redact = ssh.Redactor(peer_secrets(peer))
    try:
        ssh.run(peer, "true", timeout=30, check=True)
    except ssh.PeerError as e:
        say(f"{redact(str(e))}; nothing was run (no local fallback)")
        return Exit.PEER_OFF

    if not broken("no-toolchain-check"):
        diffs = toolchain_diff(peer, hosts["toolchain"]["commands"], redact)
        if diffs:
            say("toolchains differ; results from the two machines could not be combined:\n  " +
                "\n  ".join(diffs))
            return Exit.TOOLCHAIN_DIFFERS

    repo = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True)
    if repo.returncode != 0:
        say("not inside a git repository: multi-host-run copies exactly `git ls-files`")
        return Exit.USAGE
    run = PeerRun(peer, args.label, redact)

    stop_signal: list[int] = []

    def on_signal(signum, frame):  # noqa: ARG001
        stop_signal.append(signum)
        raise Stop()

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)}
    code: int | None = None
    started = False
    try:
        n = run.copy_tree(repo.stdout.strip())
        say(f"copied {n} tracked files to peer {name}:runs/{args.label}/")
        env = f"SWARMGATE_STATE_DIR={shlex.quote(peer['state_dir'])} " if peer.get("state_dir") else ""
        inner = f"bash -c {shlex.quote(ssh.quote(command))}" if len(command) > 1 else command[0]
        if broken("peer-without-memory-cap"):
            text = inner
        else:
            text = (f"{env}{peer['runner']} {shlex.quote(args.memory_cap)} --label "
                    f"{shlex.quote(args.label)} -- {inner}")
        run.start(text)
        started = True
        say(f"started on peer {name} (pid {run.remote_pid}); polling every {args.poll:g}s")
        last_sample = time.monotonic()
        while True:
            out, code = run.poll()
            if out:
                sys.stdout.write(redact(out.decode(errors="replace")))
                sys.stdout.flush()
            if code is not None:
                break
            if time.monotonic() - last_sample >= args.sample_every:
                say(f"peer {name}: {run.cores()}")
                last_sample = time.monotonic()
            time.sleep(args.poll)
    except Stop:
        say(f"signal {stop_signal[0]}: stopping the job on the peer")
        for s in old:
            signal.signal(s, signal.SIG_IGN)
        if started:
            say(redact(f"peer: {run.stop(args.grace)}"))
            out, _ = run.poll()
            if out:
                sys.stdout.write(redact(out.decode(errors="replace")))
        missing = run.fetch(args.fetch or [], args.fetch_dest) if args.fetch else []
        if missing:
            say(f"not fetched (missing): {', '.join(missing)}")
        if not run.delete():
            say(f"the run tree on peer {name} could not be verified deleted")
            return Exit.PEER_CLEANUP
        return Exit.SIGNALLED
    except ssh.PeerError as e:
        say(redact(str(e)))
        if started:
            run.stop(args.grace)
        if not run.delete():
            return Exit.PEER_CLEANUP
        return Exit.PEER_OFF
    finally:
        for s, h in old.items():
            signal.signal(s, h)

    if args.fetch:
        missing = run.fetch(args.fetch, args.fetch_dest)
        if missing:
            say(f"not fetched (missing on the peer): {', '.join(missing)}")
    if not run.delete():
        say(f"the run tree on peer {name} could not be verified deleted: remove "
            f"{redact(run.dir)} and its .pid/.exit/.log files by hand")
        return Exit.PEER_CLEANUP
    say(f"peer {name}: exit {code}; run tree deleted and verified gone")
    return code if code is not None else Exit.PEER_OFF


@entry("multi-host-run")
def main(argv: Sequence[str] | None = None) -> int:
    opts, command = split_command(argv)
    p = parser("multi-host-run", __doc__)
    p.add_argument("--peer", nargs="?", const="", default=None, metavar="NAME",
                   help="run on the peer NAME (default: the first configured peer)")
    p.add_argument("--memory-cap", "--cap", dest="memory_cap", help="memory cap of the run (e.g. 16G)")
    p.add_argument("--label", help="run label (history key, peer run directory name)")
    p.add_argument("--fetch", nargs="+", action="extend", metavar="PATH", help="artifacts to copy back")
    p.add_argument("--fetch-dest", default=".", help="where fetched artifacts go (default: here)")
    p.add_argument("--poll", type=float, default=5.0, help="seconds between polls (default 5)")
    p.add_argument("--sample-every", type=float, default=300.0, help="seconds between core samples (default 300)")
    p.add_argument("--grace", type=float, default=30.0, help="seconds between TERM and KILL (default 30)")
    args = p.parse_args(opts)
    stop = preamble(args, "multi-host-run", say, command)
    if stop is not None:
        return stop
    if not args.memory_cap:
        say("--memory-cap is required (every run is capped)")
        return Exit.USAGE
    try:
        parse_size(args.memory_cap)
    except ValueError as e:
        say(f"--memory-cap: {e}")
        return Exit.USAGE
    args.label = args.label or default_label(command)
    if not valid_label(args.label):
        say(f"--label {args.label!r}: use letters, digits and . _ : - only")
        return Exit.USAGE
    if args.peer is None:
        return run_local(args.memory_cap, args.label, command)
    hosts = load_hosts(args, say)
    if isinstance(hosts, int):
        return hosts
    return run_on_peer(args, hosts, command)


if __name__ == "__main__":
    sys.exit(main())


# --- self-test: the "peer" is another directory on this machine (local transport),
# the command runs under the real run-with-memory-cap with a 256M cap ---

def _selftest_run(tmp: str, *, enabled: bool = True, toolchain: str = "python3 -VV", redact: str = "",
                  command: str = "true") -> tuple[int, str, str]:
    repo = tempfile.mkdtemp(prefix="repo-", dir=tmp)
    slice_name = f"swarmgate-selftest-{uuid.uuid4().hex[:8]}"
    os.makedirs(os.path.join(repo, ".claude"))
    with open(os.path.join(repo, ".claude", "swarmgate.toml"), "w") as f:
        f.write(f'[memory]\ntotal = "512M"\nslice = "{slice_name}"\n')
    genv = dict(os.environ, GIT_AUTHOR_NAME="s", GIT_AUTHOR_EMAIL="s@s", GIT_COMMITTER_NAME="s",
                GIT_COMMITTER_EMAIL="s@s")
    subprocess.run(["git", "init", "-q", repo], check=True, env=genv)
    subprocess.run(["git", "-C", repo, "add", "."], check=True, env=genv)
    subprocess.run(["git", "-C", repo, "commit", "-qm", "s"], check=True, env=genv)
    root = os.path.join(tmp, "peer-root")
    runner = os.path.join(os.path.dirname(sys.executable), "run-with-memory-cap")
    hosts = os.path.join(tmp, "hosts.toml")
    with open(hosts, "w") as f:
        f.write(f"[across_machines]\nenabled = {'true' if enabled else 'false'}\n"
                f"[toolchain]\ncommands = [{json.dumps(toolchain)}]\n"
                f"[peers.self]\nhost = \"selftest-peer\"\ntransport = \"local\"\nwork_root = {json.dumps(root)}\n"
                f"runner = {json.dumps(runner)}\nstate_dir = {json.dumps(os.path.join(tmp, 'peer-state'))}\n"
                f"redact = [{json.dumps(redact) if redact else ''}]\n")
    try:
        cp = subprocess.run([sys.executable, "-m", "swarmgate", "multi-host-run", "--hosts-config", hosts,
                             "--peer", "self", "--memory-cap", "256M", "--label", "selftest", "--poll", "0.1",
                             "--", "bash", "-c", command], cwd=repo, capture_output=True, text=True, timeout=120)
    finally:
        cg = f"/sys/fs/cgroup/memory/{slice_name}"
        # reverse path order puts every child before its parent (sorted() alone would undo topdown=False)
        for dirpath, _, _ in sorted(os.walk(cg), reverse=True) if os.path.isdir(cg) else []:
            try:
                os.rmdir(dirpath)
            except OSError:
                pass
    return cp.returncode, cp.stdout, cp.stderr


def _tmp():
    return tempfile.TemporaryDirectory(prefix="swarmgate-mhr-")


def _ran(rc: int, err: str, what: str):
    """BROKEN unless the peer run itself succeeded (the cells below judge what it left)."""
    if rc != 0:
        tail = " ".join(err.strip().splitlines()[-2:])[-200:]
        return outcome.broken(f"multi-host-run {what} exited {rc}: {tail}")
    return None


def _cell_capped():
    with _tmp() as t:
        rc, out, err = _selftest_run(t, command="cat /proc/self/cgroup")
        return _ran(rc, err, "of a command printing its cgroup") or outcome.protected(
            "swarmgate-selftest-" in out, "the peer command ran outside run-with-memory-cap's cgroup")


def _cell_toolchain():
    with _tmp() as t:
        rc, _, err = _selftest_run(t, toolchain="echo ${SWARMGATE_ON_PEER:-here}")
        return outcome.by_exit(rc, Exit.TOOLCHAIN_DIFFERS, 0, "multi-host-run with a differing toolchain", err)


def _cell_cleanup():
    with _tmp() as t:
        rc, _, err = _selftest_run(t)
        runs = os.path.join(t, "peer-root", "runs")
        if not os.path.isdir(runs):
            return _ran(rc, err, "of `true`") or outcome.broken("the peer's run tree was never made")
        if rc == Exit.PEER_CLEANUP and os.listdir(runs):
            rc = 0  # 246: the tree was left and the driver said so (its read-back works; the cleanup did not)
        return _ran(rc, err, "of `true`") or outcome.protected(os.listdir(runs) == [], "the peer's run tree was left")


def _cell_redact():
    with _tmp() as t:
        rc, out, err = _selftest_run(t, redact="peer-7.internal.example", command="echo on peer-7.internal.example")
        bad = _ran(rc, err, "echoing the peer's name")
        if bad:
            return bad
        if "on <peer>" in out and "internal.example" not in out:
            return outcome.green()
        if "on peer-7.internal.example" in out:
            return outcome.red("the peer's private name came through")
        return outcome.broken(f"the peer's output is missing: {out.strip()[-200:]!r}")


def _cell_switch_off():
    with _tmp() as t:
        marker = os.path.join(t, "ran-here")
        rc, _, err = _selftest_run(t, enabled=False, command=f"touch {marker}")
        ran = os.path.exists(marker)
        if rc == Exit.PEER_OFF and not ran:
            return outcome.green("243, nothing ran")
        if ran:
            return outcome.red("the switch was off and the command ran here instead")
        return outcome.broken(f"multi-host-run with the switch off exited {rc} and ran nothing: "
                      + " ".join(err.strip().splitlines()[-2:])[-200:])


def selftest_suite():
    return Suite("multi-host-run",
                 [Cell("B-peer-run-is-capped", _cell_capped), Cell("C-toolchain-mismatch-refused", _cell_toolchain),
                  Cell("E-peer-tree-deleted", _cell_cleanup), Cell("G-peer-output-redacted", _cell_redact),
                  Cell("H-switch-off-runs-nothing", _cell_switch_off)],
                 {"peer-without-memory-cap": ["B-peer-run-is-capped"],
                  "no-toolchain-check": ["C-toolchain-mismatch-refused"],
                  "no-peer-cleanup": ["E-peer-tree-deleted"],
                  "no-redact": ["G-peer-output-redacted"],
                  "switch-off-falls-back-to-local": ["H-switch-off-runs-nothing"]})
