"""One capped run: admission, the run in its own cgroup, classification, bookkeeping.

The flow (SPEC §5.1):
1. the slice (parent of every run) exists and has the total as its limit;
2. admission under the ledger lock: reconcile (dead wrappers' bookings and run
   cgroups go), predict this run's need from history, admit or wait
   (printing who holds what every ``report_every`` s), or exit 252 at once
   when the run can never fit;
3. create the run's cgroup with its cap, fork a child that starts its own
   session, moves itself into the cgroup, sets ``oom_score_adj`` and only then
   execs the command (it never runs outside its cap: a failure here is 251);
4. pass stdout/stderr through while scanning them for CUDA out-of-memory
   messages (stdin is inherited untouched); TERM/INT/HUP to the wrapper stop
   every process in the cgroup; ``--timeout`` does the same and gives 253;
5. read the run's counters and the kernel log, classify (250/254/245/...),
   kill what is left, remove the cgroup, drop the booking, record the peak.

Run-path module: no rich, psutil or filelock (see bench/runner_overhead.py).
"""
from __future__ import annotations

import os
import signal
import time

from swarmgate.break_switch import broken
from swarmgate.exit_codes import Exit
from swarmgate.sizes import human

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
POLL_S = 0.1            # how often a waiter looks whether the ledger changed
FULL_CHECK_S = 1.0      # a full admission check at least this often while waiting
GRACE_S = 3.0           # TERM → KILL when stopping a run
TAIL_BYTES = 64 * 1024  # bounded tail of the output kept for the GPU scan


def say(msg: str) -> None:
    try:
        os.write(2, (f"run-with-memory-cap: {msg}\n").encode())
    except OSError:
        pass


class Options:
    def __init__(self, *, cap: int, argv: list[str], label: str, total: int, slice_name: str,
                 wait: float, report_every: float, backend: str = "auto", timeout: float | None = None,
                 unbounded: bool = False, cap_text: str = "") -> None:
        self.cap = cap
        self.cap_text = cap_text or human(cap)
        self.argv = argv
        self.label = label
        self.total = total
        self.slice_name = slice_name
        self.wait = wait
        self.report_every = report_every
        self.backend = backend
        self.timeout = timeout
        self.unbounded = unbounded


class SetupError(Exception):
    """The cap could not be set up: exit 251, the command does not run."""


class ExecError(Exception):
    """The command could not be executed (127 not found, 126 not executable)."""

    code = 127


class _Stop:
    """Signal bookkeeping: the first TERM/INT/HUP wins; the run loop is woken by a pipe."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self.old: dict = {}

    def install(self) -> None:
        for s in STOP_SIGNALS:
            self.old[s] = signal.signal(s, self._handler)

    def _handler(self, signum, frame) -> None:
        if self.signum is None:
            self.signum = signum

    def restore(self) -> None:
        for s, h in self.old.items():
            try:
                signal.signal(s, h)
            except (TypeError, ValueError):
                pass


# --- admission -------------------------------------------------------------

def foreign_runs(data: dict, backend, slice_name: str) -> dict:
    """{cgroup path: its memory limit} of live runs in the slice this ledger does not book.

    The slice is the truth about what runs; the ledger is only this state directory's record of it.
    A run started with another SWARMGATE_STATE_DIR (a private ledger) is in the same slice all the
    same: admission counts it booked at its cap, so neither ledger lets the other overcommit."""
    from swarmgate.hosts.cgroups import owner_of
    from swarmgate.procinfo import is_alive

    known = {b.get("cgroup") for b in data["bookings"].values()}
    out = {}
    for name in backend.runs(slice_name):
        path = backend.run_path(slice_name, name)
        owner = owner_of(name)
        if path in known or owner is None or not is_alive(owner[0], owner[1]):
            continue
        limit = backend.counters(path).limit
        out[path] = int(limit) if limit is not None and limit < (1 << 60) else 0
    return out


def snapshot(data: dict, backend, slice_path: str, foreign: dict | None = None):
    """(running bookings, slice counters) consistent enough to never over-admit.

    Each run's use is read before and after the slice's and the smaller kept: a run
    that grows in between was counted in the slice at least at its first value, one
    that ends in between at least at its second. (Either single order lets one
    case through: the slice would hold less than the runs' uses say.) Runs of another
    ledger (``foreign``: path -> cap) count as bookings of their cap.
    """
    from swarmgate.hosts.admission import Running

    foreign = foreign or {}
    books = [int(b.get("booked") or 0) for b in data["bookings"].values()] + list(foreign.values())
    paths = [b.get("cgroup") for b in data["bookings"].values()] + list(foreign)

    def uses():
        return [backend.counters(p).non_reclaimable if p and os.path.isdir(p) else 0 for p in paths]

    before = uses()
    sl = backend.counters(slice_path)
    after = uses()
    running = [Running(b, min(x, y)) for b, x, y in zip(books, before, after)]
    return running, sl


def holders_text(data: dict, backend) -> str:
    rows = []
    for b in sorted(data["bookings"].values(), key=lambda r: r.get("since", 0)):
        cur = 0
        path = b.get("cgroup")
        if path and os.path.isdir(path):
            cur = backend.counters(path).usage
        rows.append(f"{b.get('label')!r} pid {b.get('pid')} books {human(int(b.get('booked') or 0))} "
                    f"({b.get('basis')}), uses {human(cur)}")
    waiting = [f"{w.get('label')!r} pid {w.get('pid')} needs {human(int(w.get('need') or 0))}"
               for w in data["waiters"].values()]
    text = "holders: " + ("; ".join(rows) if rows else "none")
    if waiting:
        text += " | waiting: " + "; ".join(waiting)
    return text


def admit(opts: Options, backend, me: dict, slice_path: str) -> tuple[int | None, dict | None]:
    """Wait for a turn. Returns (exit code, None) to stop, or (None, booking) when admitted."""
    from swarmgate.hosts import admission, history, ledger
    from swarmgate.hosts.cgroups import run_name

    bid = ledger.booking_id(me["pid"], me["start"])
    run_path = backend.run_path(opts.slice_name, run_name(me["pid"], me["start"]))
    t0 = time.monotonic()
    next_report = t0 + opts.report_every
    queued = False
    stop = opts._stop  # type: ignore[attr-defined]
    from swarmgate.state_paths import ledger_path

    lpath = str(ledger_path())
    last_sig: tuple | None = None
    last_full = 0.0
    reclaim = _Reclaim(backend, slice_path)
    while True:
        reclaim.run_if_wanted(say)
        # a full check only when the ledger changed (a run ended or started), or every FULL_CHECK_S
        # (usage, page cache, dead wrappers), or when it is time to give up: many waiters stay cheap
        sig = _stat_sig(lpath)
        now = time.monotonic()
        if (queued and sig == last_sig and now - last_full < FULL_CHECK_S and stop.signum is None
                and now - t0 < opts.wait and now < next_report):
            time.sleep(POLL_S)
            continue
        last_full = now
        with ledger.lock():
            data = ledger.load()
            if not broken("no-phantom-reconcile"):
                cleanup = ledger.reconcile(data, backend, opts.slice_name)
                if cleanup.changed:
                    ledger.save(data)  # saved at once: the next check (or run) finds nothing to repeat
                if cleanup.line():
                    say(cleanup.line())
            hist = history.load()
            pred = admission.predict(opts.cap, history.entry(hist, opts.label), opts.unbounded,
                                     book_cap=broken("book-cap-not-peak"))
            foreign = foreign_runs(data, backend, opts.slice_name)
            if foreign and not queued:
                say(f"{len(foreign)} run(s) in slice {opts.slice_name} are booked in another ledger than "
                    f"{lpath} (another SWARMGATE_STATE_DIR): counted at their caps")
            running, sl = snapshot(data, backend, slice_path, foreign)
            subtract = not broken("no-page-cache-subtraction")
            d = admission.decide(opts.total, sl.usage, sl.reclaimable, running, pred.need,
                                 subtract_page_cache=subtract, head_need=_head_need(data, bid))
            if reclaim.wanted(d, sl, subtract_page_cache=subtract):
                last_full = 0.0  # decided again at once, not after the next full-check interval
                continue  # out of the lock: the kernel reclaims, then this round is decided again
            if d.admit:
                data["waiters"].pop(bid, None)
                booking = {"label": opts.label, "cap": opts.cap, "booked": pred.need, "basis": pred.basis,
                           "pid": me["pid"], "start": me["start"], "cgroup": run_path,
                           "since": round(time.time(), 3), "command": " ".join(opts.argv)[:300],
                           "why": pred.why, "session": ledger.session_of()}
                data["bookings"][bid] = booking
                ledger.save(data)
                return None, booking
            waited = time.monotonic() - t0
            give_up = d.never_fits or waited >= opts.wait or stop.signum is not None
            if give_up:
                if bid in data["waiters"]:
                    del data["waiters"][bid]
                    ledger.save(data)
            elif not queued:
                data["waiters"][bid] = {"label": opts.label, "need": pred.need, "cap": opts.cap,
                                        "pid": me["pid"], "start": me["start"],
                                        "since": round(time.time(), 3), "session": ledger.session_of()}
                ledger.save(data)
            holders = holders_text(data, backend) if (give_up or not queued
                                                      or time.monotonic() >= next_report) else ""
            last_sig = _stat_sig(lpath)  # inside the lock: a change by anyone after this is seen
        if stop.signum is not None:
            if not give_up:   # the signal came after this round's check: leave the queue before going
                with ledger.lock():
                    data = ledger.load()
                    if data["waiters"].pop(bid, None) is not None:
                        ledger.save(data)
            say(f"stopped by signal {stop.signum} while waiting for memory; nothing ran")
            return 128 + stop.signum, None
        if d.never_fits:
            say(f"exit 252: can never fit here: needs {human(d.need)} ({pred.why}) + "
                f"{human(d.non_reclaimable)} already in use > total {human(opts.total)}, and nothing is "
                f"running that could make room. Lower the cap (or the job), raise [memory] total / lower "
                f"[memory] margin, or run it on a bigger host.")
            return int(Exit.NO_TURN), None
        if give_up:
            second_host_hint(opts, pred.need, "before giving up")
            say(f"exit 252: no turn after {waited:.0f}s: needs {human(d.need)} ({pred.why}); in use "
                f"{human(d.non_reclaimable)} + booked-not-grown {human(d.pending)} of total "
                f"{human(opts.total)}; short {human(d.short)}. {holders}. Rerun later, raise --wait, "
                f"or lower the cap.")
            return int(Exit.NO_TURN), None
        if not queued:
            queued = True
            say(f"waiting for memory (up to {opts.wait:g}s): needs {human(d.need)} ({pred.why}); "
                f"in use {human(d.non_reclaimable)} + booked-not-grown {human(d.pending)} of total "
                f"{human(opts.total)}; short {human(d.short)}. {holders}")
            second_host_hint(opts, pred.need, "entering the queue")
        elif holders:
            next_report = time.monotonic() + opts.report_every
            say(f"still waiting ({waited:.0f}s): short {human(d.short)}. {holders}")
        time.sleep(POLL_S)


class _Reclaim:
    """Leftovers of ended runs in an idle slice never cost a turn.

    A slice in which nothing runs can still hold charges: page cache the kernel lags in counting
    as such, and kernel caches no memory.stat line calls reclaimable (a run that looked up a
    million names leaves ~190M of dentries). When they are all that stands between a run and its
    turn, the kernel is asked once to reclaim them, outside the ledger's lock, and the round is
    decided again; a run never gets "can never fit" for memory nothing uses.
    """

    def __init__(self, backend, slice_path: str) -> None:
        self.backend, self.slice_path = backend, slice_path
        self.tried = self.pending = False
        self.before = 0

    def wanted(self, d, sl, subtract_page_cache: bool) -> bool:
        if self.tried or not subtract_page_cache or d.admit or not d.never_fits or d.need > d.total:
            return False
        self.tried = self.pending = True
        self.before = sl.usage
        return True

    def run_if_wanted(self, say) -> None:
        if not self.pending:
            return
        self.pending = False
        if self.backend.reclaim(self.slice_path):
            after = self.backend.counters(self.slice_path).usage
            if self.before - after >= 1 << 20:
                say(f"nothing runs in the slice but it held {human(self.before)} from ended runs (caches the "
                    f"kernel keeps); reclaimed them: {human(after)} left")


def _head_need(data: dict, me: str) -> int:
    """The need of the longest waiter ahead of ``me`` (0 when nobody is ahead)."""
    mine = data["waiters"].get(me, {}).get("since", float("inf"))
    ahead = [w for k, w in data["waiters"].items() if k != me and float(w.get("since") or 0) < mine]
    if not ahead:
        return 0
    head = min(ahead, key=lambda w: float(w.get("since") or 0))
    return int(head.get("need") or 0)


def _stat_sig(path: str) -> tuple | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def second_host_hint(opts: Options, need: int, when: str) -> None:
    """If a peer is configured and would take the run now, print the exact line to switch. Never moves it."""
    try:
        from swarmgate.hosts_config import load_hosts_config

        hc = load_hosts_config()
    except Exception as e:  # noqa: BLE001 - a hint must never break the run
        say(f"second host: not checked ({e})")
        return
    if not hc.peers or not hc["across_machines"]["enabled"]:
        return
    try:
        from swarmgate.hosts import host_resources  # the collector of the hosts issue
        read_peer = host_resources.read_peer
        judge = host_resources.judge
    except (ImportError, AttributeError):
        say("second host: not checked (the host-resources collector is not available in this build)")
        return
    import shlex

    budget = float(hc["report"]["host_budget_s"])
    for name, peer in hc.peers.items():
        try:
            verdict = judge(read_peer(peer, hc, budget), need, 1, False)
        except Exception as e:  # noqa: BLE001 - a hint must never break the run
            say(f"second host {name}: could not read its free memory ({e})")
            continue
        if not verdict.get("readable") or verdict.get("lacks"):
            continue
        free = int(verdict.get("available") or 0)
        line = (f"multi-host-run --peer {name} --memory-cap {opts.cap_text} --label {shlex.quote(opts.label)} "
                f"-- {shlex.join(opts.argv)}")
        say(f"→ the second host {name} would take it now (free {human(free)}, needs {human(need)}): "
            f"switch with: {line}")
        from swarmgate.alerts import write_alert

        write_alert("runner-fits-on-peer", f"a run waiting for memory here would fit on {name} now: {line}",
                    source="run-with-memory-cap", peer=name, free=free, need=need, label=opts.label,
                    command=line, when=when, pid=os.getpid())
        return


# --- the run ---------------------------------------------------------------

def _spawn(argv: list[str], backend, path: str | None, oom_adj: int | None, out_w: int, err_w: int,
           uncapped_ok: bool, report_w: int | None = None) -> int:
    """fork; the child joins the cgroup and sets oom_score_adj BEFORE exec. Raises SetupError.
    ``report_w`` becomes the child's fd 3 (the systemd scope's report, hosts/scope_report.py)."""
    r, w = os.pipe2(os.O_CLOEXEC)
    pid = os.fork()
    if pid == 0:  # child
        stage = "setup"
        try:
            os.close(r)
            os.setsid()
            for s in (*STOP_SIGNALS, signal.SIGPIPE, signal.SIGXFSZ, signal.SIGCHLD):
                signal.signal(s, signal.SIG_DFL)
            if path is not None:
                stage = "cgroup"
                try:
                    backend.add_pid(path, os.getpid())
                except OSError:
                    if not uncapped_ok:
                        raise
            if oom_adj is not None:
                stage = "oom_score_adj"
                with open("/proc/self/oom_score_adj", "w") as f:
                    f.write(str(oom_adj))
            os.dup2(out_w, 1)
            os.dup2(err_w, 2)
            if report_w is not None:
                from swarmgate.hosts.scope_report import FD

                os.dup2(report_w, FD)
                os.set_inheritable(FD, True)
            stage = "exec"
            os.execvp(argv[0], argv)
        except BaseException as e:  # noqa: BLE001 - report to the parent, never run uncapped
            try:
                os.write(w, f"{stage}\0{getattr(e, 'errno', 0) or 0}\0{getattr(e, 'strerror', None) or e}".encode())
            finally:
                os._exit(127)
    os.close(w)
    chunks = []
    while True:
        b = os.read(r, 4096)
        if not b:
            break
        chunks.append(b)
    os.close(r)
    if chunks:
        os.waitpid(pid, 0)
        stage, _, rest = b"".join(chunks).decode(errors="replace").partition("\0")
        err, _, msg = rest.partition("\0")
        if stage == "exec":
            import errno

            e = ExecError(f"{argv[0]}: {msg}")
            e.code = 127 if err == str(errno.ENOENT) else 126  # as a shell reports it
            raise e
        raise SetupError(f"could not put the command into its cgroup ({stage}: {msg})")
    return pid


class _Pump:
    """Pass a child's stream through untouched while watching it for CUDA OOM messages."""

    def __init__(self, src: int, dst: int) -> None:
        self.src = src
        self.dst = dst
        self.tail = b""
        self.gpu_oom = False
        self.broken = False

    def feed(self, data: bytes) -> None:
        from swarmgate.hosts.outcome import CUDA_OOM_MARKERS

        if not self.broken:
            view = memoryview(data)
            try:
                while view:
                    n = os.write(self.dst, view)
                    view = view[n:]
            except OSError:
                self.broken = True  # our reader went away: the child gets SIGPIPE on its next write
        window = self.tail[-64:] + data
        if not self.gpu_oom and any(m in window for m in CUDA_OOM_MARKERS):
            self.gpu_oom = True
        self.tail = (self.tail + data)[-TAIL_BYTES:]


def _status_code(status: int) -> int:
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


class _Sampler:
    """What the run's cgroup holds, read while the run lives (every 0.5 s, and once at the start):

    - its processes, so a userspace OOM killer's line about a pid can be matched to the run later;
    - for a backend whose run cgroup vanishes the moment the run ends (systemd removes a scope's
      cgroup when its last process exits, and stops it right after an OOM kill under
      OOMPolicy=stop), its counters: ``final()`` reads the cgroup if it is still there, else gives
      the last sample, with the highest peak seen. Other backends: the final read alone.
    """

    EVERY_S = 0.5

    def __init__(self, backend, path: str | None) -> None:
        self.backend, self.path = backend, path
        self.enabled = path is not None and bool(getattr(backend, "transient_runs", False))
        self.last = None
        self.peak: int | None = None
        self.pids: set[int] = set()
        self.next = 0.0

    def _read(self):
        if not os.path.isdir(self.path):
            return None
        c = self.backend.counters(self.path)
        if not os.path.isdir(self.path):
            return None  # removed while we read: the values may be zeros of a vanished file
        self.peak = max(x for x in (self.peak, c.peak, c.usage) if x is not None)
        return c

    def tick(self, now: float) -> None:
        if self.path is None or now < self.next:
            return
        self.next = now + self.EVERY_S
        if len(self.pids) < 10000:
            self.pids.update(self.backend.tree_pids(self.path))
        if self.enabled:
            self.last = self._read() or self.last

    def final(self):
        if self.path is None:
            return None
        c = self._read() if self.enabled else self.backend.counters(self.path)
        c = c or self.last
        if c is not None and self.enabled:
            c.peak = self.peak
        return c


def supervise(pid: int, pumps: list[_Pump], backend, path: str | None, stop: _Stop,
              timeout: float | None, wake_r: int, sampler: _Sampler | None = None) -> tuple[int, bool]:
    """Pass output through until the child ends; stop the whole run on a signal or the timeout.

    Returns (the child's code, timed out).
    """
    import selectors

    sel = selectors.DefaultSelector()
    for p in pumps:
        os.set_blocking(p.src, False)
        sel.register(p.src, selectors.EVENT_READ, p)
    sel.register(wake_r, selectors.EVENT_READ, "wake")
    pidfd = None
    try:
        pidfd = os.pidfd_open(pid)
        sel.register(pidfd, selectors.EVENT_READ, "exit")
    except (AttributeError, OSError):
        pidfd = None
    start = time.monotonic()
    deadline = start + timeout if timeout else None
    timed_out = False
    stopping_since: float | None = None
    code: int | None = None
    open_pumps = len(pumps)
    drain_until: float | None = None
    while True:
        now = time.monotonic()
        if sampler is not None and code is None:
            sampler.tick(now)
        if code is None and stopping_since is None and (stop.signum is not None or
                                                        (deadline is not None and now >= deadline)):
            timed_out = stop.signum is None
            stopping_since = now
            _signal_run(pid, backend, path, signal.SIGTERM)
        if code is None and stopping_since is not None and now - stopping_since >= GRACE_S:
            _signal_run(pid, backend, path, signal.SIGKILL)
            stopping_since = now + 3600  # once
        if code is None:
            wpid, status = os.waitpid(pid, os.WNOHANG)
            if wpid == pid:
                code = _status_code(status)
                # the run is over: nothing of it may outlive the command
                if path is not None:
                    backend.kill_all(path)
                drain_until = time.monotonic() + 2.0
                if pidfd is not None:
                    sel.unregister(pidfd)
                    os.close(pidfd)
                    pidfd = None
        if code is not None and (open_pumps == 0 or time.monotonic() >= (drain_until or 0)):
            break
        wait_s = 0.5 if pidfd is not None else 0.05
        if deadline is not None and code is None and stopping_since is None:
            wait_s = max(min(wait_s, deadline - time.monotonic()), 0)
        if code is not None:
            wait_s = max(min(wait_s, (drain_until or 0) - time.monotonic()), 0)
        for key, _ in sel.select(wait_s):
            if key.data == "wake":
                try:
                    os.read(wake_r, 512)
                except OSError:
                    pass
            elif key.data == "exit":
                pass
            else:
                p = key.data
                try:
                    data = os.read(p.src, 65536)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                if data:
                    p.feed(data)
                    if p.broken:
                        sel.unregister(p.src)
                        os.close(p.src)
                        open_pumps -= 1
                else:
                    sel.unregister(p.src)
                    os.close(p.src)
                    open_pumps -= 1
    for p in pumps:
        try:
            sel.unregister(p.src)
            os.close(p.src)
        except (KeyError, ValueError, OSError):
            pass
    if pidfd is not None:
        os.close(pidfd)
    sel.close()
    return code, timed_out


def _signal_run(pid: int, backend, path: str | None, sig: int) -> None:
    """Every process of the run, not only the child."""
    try:
        os.killpg(pid, sig)
    except OSError:
        pass
    if path is not None:
        backend.kill_all(path, sig, settle_s=0.5)


def execute(opts: Options) -> int:
    """The whole run; the exit code of SPEC §9."""
    from swarmgate.break_switch import refusal

    msg = refusal()
    if msg:
        say(msg)
        return int(Exit.USAGE)
    stop = _Stop()
    stop.install()
    opts._stop = stop  # type: ignore[attr-defined]
    try:
        return _execute(opts, stop)
    finally:
        stop.restore()


def _execute(opts: Options, stop: _Stop) -> int:
    from swarmgate.hosts import cgroups, history, ledger
    from swarmgate.procinfo import identity
    from swarmgate.statefile import StateError

    uncapped_ok = broken("run-uncapped-on-setup-failure")
    me = identity()
    try:
        backend = cgroups.get(opts.backend)
        slice_path = backend.ensure_slice(opts.slice_name,
                                          None if broken("no-slice-total") else opts.total)
    except cgroups.CgroupError as e:
        if uncapped_ok:
            return _run_uncapped(opts)
        say(f"exit 251: the memory cap could not be set up, so the command was not run (it never runs "
            f"uncapped): {e}")
        return int(Exit.USAGE)
    outer = backend.enclosing_run(opts.slice_name)
    agent = None if outer is not None else backend.enclosing_agent(opts.slice_name)
    grant = None
    if outer is None and agent is None:
        # the hook's single-use authorization for exactly this command (main agent, B01/B02 allowed
        # it): taken now, while the tool call that granted it is still starting, marked once booked
        from swarmgate import heavy_grants
        grant = heavy_grants.consume(opts.argv)
    if outer is not None:
        # called from inside a capped run (a script that runs the runner): the enclosing run's
        # booking already holds this memory; a second booking could wait on itself forever
        booking = _nested(opts, backend, outer, me)
    elif agent is not None:
        # a subagent's command: its containment cgroup is booked at its cap already and bounds this
        # run too; it gets its own cap inside (v1) and can never be authorized for heavy programs
        say(f"inside subagent containment cgroup {os.path.basename(agent)}: this run is also bounded by "
            f"the agent's cap and books nothing of its own")
        booking = _nested(opts, backend, agent, me)
    else:
        try:
            code, booking = admit(opts, backend, me, slice_path)
        except StateError as e:
            say(f"exit 251: {e}")
            return int(Exit.USAGE)
        if booking is None:
            return int(code or 0)
    path: str | None = booking["cgroup"]
    t0 = time.monotonic()
    result = None
    marked = None
    try:
        if grant is not None and path is not None:
            from swarmgate import heavy_grants
            heavy_grants.mark(path, me, grant)
            marked = path
        result = _run_booked(opts, backend, booking, stop, uncapped_ok)
        return result[0]
    finally:
        if marked is not None:
            from swarmgate import heavy_grants
            heavy_grants.unmark(marked)
        duration = time.monotonic() - t0
        if path is not None:
            backend.kill_all(path)
            if not backend.remove(path):
                say(f"could not remove {path}; the next run removes it")
        try:
            with ledger.lock():
                data = ledger.load()
                data["bookings"].pop(ledger.booking_id(me["pid"], me["start"]), None)
                ledger.save(data)
                if result is not None and result[1] is not None:
                    hist = history.load()
                    history.record(hist, opts.label, peak=result[2], duration_s=duration,
                                   outcome=result[1], basis=booking["basis"], cap=opts.cap)
                    history.save(hist)
        except (StateError, OSError) as e:
            say(f"could not update the ledger/history ({e}); the next run reconciles it")
        if result is not None:
            ledger.log_run({"label": opts.label, "session": booking.get("session") or ledger.session_of(),
                            "pid": me["pid"], "cap": opts.cap, "booked": booking.get("booked"),
                            "basis": booking.get("basis"), "peak": result[2], "exit": result[0],
                            "outcome": result[1], "started": round(time.time() - duration, 3),
                            "ended": round(time.time(), 3), "duration_s": round(duration, 3),
                            "command": " ".join(opts.argv)[:300]})


def _nested(opts: Options, backend, outer: str, me: dict) -> dict:
    """A run inside an enclosing run: its own cap in a cgroup inside the enclosing one (v1), or,
    where that is impossible (v2 forbids processes beside child cgroups), the enclosing cap alone."""
    from swarmgate.hosts.cgroups import CgroupError

    name = f"nested-{me['pid']}-{me['start'] or 0}"
    try:
        path: str | None = backend.create_child(outer, name, opts.cap)
    except CgroupError as e:
        say(f"inside the capped run {os.path.basename(outer)}: running under its cap, without a cap of "
            f"its own ({e})")
        path = None
    return {"cgroup": path, "basis": "nested", "nested": True, "label": opts.label}


def _run_booked(opts: Options, backend, booking: dict, stop: _Stop,
                uncapped_ok: bool) -> tuple[int, str | None, int | None]:
    """Create the cgroup, run, classify. Returns (exit code, history outcome, peak)."""
    from swarmgate.hosts.admission import OOM_SCORE_ADJ
    from swarmgate.hosts import oom_killers
    from swarmgate.hosts.cgroups import CgroupError, Counters
    from swarmgate.hosts.kernel_log import KernelLog, gpu_oom, oom_lines
    from swarmgate.hosts.outcome import classify, explain, oom_kind, usage_at_own_oom

    path: str | None = booking["cgroup"]
    nested = bool(booking.get("nested"))
    if nested:
        argv = list(opts.argv)
    else:
        name = backend.name_of(path)
        try:
            backend.create_run(opts.slice_name, name, opts.cap)
        except CgroupError as e:
            if not uncapped_ok:
                say(f"exit 251: the memory cap could not be set up, so the command was not run (it never "
                    f"runs uncapped): {e}")
                return int(Exit.USAGE), None, None
            path = None
        argv = backend.command(opts.slice_name, name, opts.cap, opts.argv)
    oom_adj = None if broken("no-oom-score-adj") or nested else OOM_SCORE_ADJ[booking["basis"]]
    klog = KernelLog()
    out_r, out_w = os.pipe2(os.O_CLOEXEC)
    err_r, err_w = os.pipe2(os.O_CLOEXEC)
    report_r = report_w = None
    if getattr(backend, "reports_back", False) and not nested and path is not None:
        report_r, report_w = os.pipe2(os.O_CLOEXEC)
    wake_r, wake_w = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
    old_wakeup = signal.set_wakeup_fd(wake_w)
    try:
        try:
            pid = _spawn(argv, backend, path, oom_adj, out_w, err_w, uncapped_ok, report_w)
        except (SetupError, ExecError) as e:
            say(f"exit 251: {e}; the command was not run (it never runs uncapped)" if isinstance(e, SetupError)
                else f"{e}")
            for fd in (out_r, err_r, report_r):
                if fd is not None:
                    os.close(fd)
            klog.close()
            return (int(Exit.USAGE) if isinstance(e, SetupError) else e.code), None, None
        finally:
            for fd in (out_w, err_w, report_w):
                if fd is not None:
                    os.close(fd)
        pumps = [_Pump(out_r, 1), _Pump(err_r, 2)]
        sampler = _Sampler(backend, path)
        sampler.pids.add(pid)
        since = time.time()
        marks = oom_killers.oomd_marks(os.path.dirname(path), backend.hierarchy_root()) if path else {}
        rc, timed_out = supervise(pid, pumps, backend, path, stop, opts.timeout, wake_r, sampler)
    finally:
        signal.set_wakeup_fd(old_wakeup)
        os.close(wake_r)
        os.close(wake_w)
    counters = sampler.final()
    if report_r is not None:
        from swarmgate.hosts import scope_report

        rep = scope_report.read(report_r)
        if not rep.started and stop.signum is None and not timed_out:
            klog.close()
            say(f"exit 251: {argv[0]} could not start the run's scope (its own message is above), so the "
                f"command was not run (it never runs uncapped)")
            return int(Exit.USAGE), None, None
        counters = scope_report.merge(counters or Counters(), rep)
    kernel_readable = klog.readable
    messages = klog.read_new() or []
    klog.close()
    kind = None
    if path is not None:
        rel = "/" + os.path.relpath(path, backend.hierarchy_root())
        c = counters or Counters()  # a cgroup gone before any read: the kernel's line alone decides
        ooms = oom_lines(messages) if kernel_readable else None
        kind = oom_kind(c.oom, c.oom_kill, c.failcnt, ooms, rel, misread_parent=broken("misread-parent-oom-as-own"))
        at_oom = usage_at_own_oom(ooms, rel)
        if at_oom is not None and at_oom > (c.peak or c.usage or 0):
            c.peak = at_oom  # systemd removed the scope at the kill: its samples missed the top
            counters = c
    killed_by = None
    if kind is None and path is not None and rc != 0 and stop.signum is None and not timed_out:
        # not the kernel: earlyoom or systemd-oomd? (a journal look only for a TERM/KILL death)
        killed_by = oom_killers.find(path, backend.hierarchy_root(), marks,
                                     sampler.pids if rc in (128 + signal.SIGTERM, 128 + signal.SIGKILL) else set(),
                                     since, time.time(), unit=backend.unit_of(path))
        if killed_by is not None:
            kind = "total"
    code = classify(rc, signalled=stop.signum, timed_out=timed_out, oom=kind,
                    gpu_kernel=gpu_oom(messages), gpu_output=any(p.gpu_oom for p in pumps))
    peak = None
    if counters is not None:
        peak = counters.peak if counters.peak is not None else counters.usage
    outcome = {int(Exit.OWN_CAP): "own_cap", int(Exit.PUSHED_OUT): "pushed_out",
               int(Exit.TIMEOUT): "timeout"}.get(code)
    if outcome is None:
        outcome = "signalled" if stop.signum else ("ok" if code == 0 else "failed")
    text = explain(code, cap=opts.cap_text, label=opts.label, timeout=opts.timeout,
                   total="of the enclosing run" if nested else human(opts.total), peak=human(peak or 0),
                   killer=killed_by.killer if killed_by else "", killer_said=killed_by.detail if killed_by else "")
    if text:
        say(text[len("run-with-memory-cap: "):])
    return code, outcome, peak


def _run_uncapped(opts: Options) -> int:
    """ONLY under the break switch run-uncapped-on-setup-failure: the bug the self-test must catch."""
    import subprocess

    say("BREAK SWITCH run-uncapped-on-setup-failure: running WITHOUT a cap")
    return subprocess.call(opts.argv)
