"""The runner's pure parts: admission, prediction, classification, kernel-log parsing,
history marks, ledger reconcile, the CLI's argument errors, the systemd backend's exact
commands and the cgroup v2 parser (against a directory tree written by the test)."""
import json
import os
import subprocess
import sys

import pytest

from swarmgate.hosts import admission, cgroups, history, kernel_log, ledger, outcome, runner_cli, scope_report, status
from swarmgate.hosts.runner import _head_need
from swarmgate.procinfo import identity

M = 1 << 20


# --- admission ---

def test_admits_when_everything_fits_exactly():
    d = admission.decide(1000, 300, 100, [admission.Running(400, 150)], 550)
    # non-reclaimable 200 + not grown 250 + need 550 = 1000
    assert d.admit and not d.never_fits and d.non_reclaimable == 200 and d.pending == 250


def test_refuses_one_byte_over_and_says_how_short():
    d = admission.decide(1000, 300, 100, [admission.Running(400, 150)], 551)
    assert not d.admit and not d.never_fits and d.short == 1


def test_page_cache_is_subtracted_unless_broken():
    assert admission.decide(256, 200, 195, [], 128).admit
    d = admission.decide(256, 200, 195, [], 128, subtract_page_cache=False)
    assert not d.admit and d.never_fits


def test_grown_beyond_booking_counts_zero_not_negative():
    d = admission.decide(1000, 700, 0, [admission.Running(100, 600)], 300)
    assert d.pending == 0 and d.admit


def test_never_fits_only_when_nothing_runs():
    assert admission.decide(100, 0, 0, [], 101).never_fits
    d = admission.decide(100, 0, 0, [admission.Running(10, 0)], 101)
    assert not d.admit and not d.never_fits


def test_prediction_books_history_peak_not_cap():
    p = admission.predict(24 << 30, {"peak": 1800 * M})
    assert p.need == 1800 * M and p.basis == "history"


def test_prediction_books_the_cap_without_history_or_when_marked():
    assert admission.predict(8 * M, None).basis == "cap"
    assert admission.predict(8 * M, {"peak": M, "pushed_out": True}).need == 8 * M
    assert admission.predict(8 * M, {"peak": M, "ceiling_hit": True}).need == 8 * M
    assert admission.predict(8 * M, {"peak": M}, book_cap=True).need == 8 * M


def test_prediction_never_exceeds_the_cap_and_unbounded_is_its_own_basis():
    assert admission.predict(8 * M, {"peak": 20 * M}).need == 8 * M
    p = admission.predict(8 * M, {"peak": 2 * M}, unbounded=True)
    assert p.basis == "unbounded" and p.need == 2 * M
    assert admission.OOM_SCORE_ADJ == {"unbounded": 1000, "history": 500, "cap": 0}


# --- classification ---

RUN = "/slice/run-1-2"


def test_kernel_line_tells_own_cap_from_parent_full():
    own = [{"oom_memcg": RUN, "task_memcg": RUN}]
    parent = [{"oom_memcg": "/slice", "task_memcg": RUN}]
    assert outcome.oom_kind(None, 1, 0, own, RUN) == "own"
    assert outcome.oom_kind(None, 1, 5, parent, RUN) == "total"  # failcnt from page cache misleads
    other = [{"oom_memcg": "/x", "task_memcg": "/x/y"}]
    assert outcome.oom_kind(None, 0, 0, other, RUN) is None


def test_counters_fallback_v1_and_v2():
    assert outcome.oom_kind(None, 1, 3, None, RUN) == "own"      # v1: own failcnt
    assert outcome.oom_kind(None, 1, 0, None, RUN) == "total"    # v1: killed, own limit never failed
    assert outcome.oom_kind(2, 1, 0, [], RUN) == "own"           # v2: events.local oom
    assert outcome.oom_kind(0, 1, 0, [], RUN) == "total"
    assert outcome.oom_kind(None, 0, 9, None, RUN) is None       # failcnt alone is page cache, not OOM


def test_a_victim_in_a_cgroup_the_command_made_inside_its_run_is_the_runs():
    sub = [{"oom_memcg": RUN, "task_memcg": RUN + "/sub"}]
    assert outcome.oom_kind(None, 0, 0, sub, RUN) == "own"
    assert outcome.oom_kind(None, 0, 0, [{"oom_memcg": "/slice", "task_memcg": RUN + "/sub"}], RUN) == "total"
    assert outcome.oom_kind(None, 0, 0, [{"oom_memcg": RUN + "0", "task_memcg": RUN + "0"}], RUN) is None


def test_misread_switch_calls_every_oom_own():
    parent = [{"oom_memcg": "/slice", "task_memcg": RUN}]
    assert outcome.oom_kind(None, 1, 0, parent, RUN, misread_parent=True) == "own"


def test_classify_priorities():
    assert outcome.classify(137, signalled=15, timed_out=True, oom="own") == 143
    assert outcome.classify(137, timed_out=True, oom="own") == 253
    assert outcome.classify(137, oom="own", gpu_kernel=True) == 250
    assert outcome.classify(137, oom="total") == 254
    assert outcome.classify(0, gpu_kernel=True) == 245
    assert outcome.classify(1, gpu_output=True) == 245
    assert outcome.classify(0, gpu_output=True) == 0
    assert outcome.classify(3) == 3


def test_every_special_code_has_a_line_that_says_what_to_do():
    for code in (245, 250, 253, 254):
        text = outcome.explain(code, cap="1G", label="x", timeout=5, total="4G", peak="1G")
        assert text and f"exit {code}" in text
    assert outcome.explain(0, cap="1G", label="x") is None


def test_kernel_oom_line_parsing():
    line = ("oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,"
            "oom_memcg=/s,task_memcg=/s/run-5-6,task=python3,pid=77,uid=0")
    assert kernel_log.oom_lines(["unrelated", line]) == [
        {"oom_memcg": "/s", "task_memcg": "/s/run-5-6", "pid": "77", "task": "python3", "usage": None}]
    # the report's usage line before the summary is the OOM cgroup's charge at the kill; one report's
    # usage never leaks into the next summary
    report = ["memory: usage 49152kB, limit 49152kB, failcnt 12", "memory+swap: usage 49152kB, limit 49152kB",
              "Memory cgroup stats for /s/run-5-6:", line.replace("oom_memcg=/s,", "oom_memcg=/s/run-5-6,"), line]
    ooms = kernel_log.oom_lines(report)
    assert [o["usage"] for o in ooms] == [48 << 20, None]
    assert outcome.usage_at_own_oom(ooms, "/s/run-5-6") == 48 << 20
    assert outcome.usage_at_own_oom(ooms, "/s/run-7-8") is None  # another run's OOM says nothing of this one
    assert outcome.usage_at_own_oom(ooms[1:], "/s/run-5-6") is None  # the total's OOM: not the run's charge
    assert outcome.usage_at_own_oom(None, "/s/run-5-6") is None
    assert kernel_log.gpu_oom(["NVRM: ... NV_ERR_NO_MEMORY ..."])
    assert not kernel_log.gpu_oom(["nothing"])


def test_kernel_log_unreadable_is_none(tmp_path):
    k = kernel_log.KernelLog(str(tmp_path / "missing"))
    assert not k.readable and k.read_new() is None


# --- history ---

def test_history_marks_and_clearing():
    h = {"version": 1, "labels": {}}
    history.record(h, "a", peak=100, duration_s=1.0, outcome="ok", basis="cap", cap=500)
    assert h["labels"]["a"]["peak"] == 100
    history.record(h, "a", peak=50, duration_s=0.2, outcome="pushed_out", basis="history", cap=500)
    e = h["labels"]["a"]
    assert e["pushed_out"] and e["peak"] == 100  # a partial run's peak is not trusted
    history.record(h, "a", peak=300, duration_s=1.0, outcome="ok", basis="cap", cap=500)
    assert "pushed_out" not in h["labels"]["a"] and h["labels"]["a"]["peak"] == 300
    history.record(h, "a", peak=500, duration_s=1.0, outcome="own_cap", basis="history", cap=500)
    assert h["labels"]["a"]["ceiling_hit"]


def test_history_keeps_the_largest_of_the_last_runs():
    h = {"version": 1, "labels": {}}
    for p in (900, 100, 100, 100, 100, 100):
        history.record(h, "b", peak=p, duration_s=1, outcome="ok", basis="history", cap=1000)
    assert h["labels"]["b"]["peak"] == 100  # the 900 fell out of the window


def test_label_is_the_normalised_command():
    assert history.normalise(["cargo", "test", "  --all\n"]) == "cargo test --all"


# --- ledger ---

def test_reconcile_drops_dead_holders_only(state_dir):
    p = subprocess.Popen(["true"])
    p.wait()
    data = ledger.empty()

    me = identity()
    data["bookings"]["dead"] = {"pid": p.pid, "start": 1, "booked": 5, "label": "d"}
    data["bookings"]["live"] = {"pid": me["pid"], "start": me["start"], "booked": 5, "label": "l"}
    data["bookings"]["reused"] = {"pid": me["pid"], "start": (me["start"] or 0) + 1, "booked": 5, "label": "r"}
    data["waiters"]["w"] = {"pid": p.pid, "start": 1, "label": "w"}
    notes = ledger.reconcile(data)
    assert set(data["bookings"]) == {"live"} and data["waiters"] == {}
    assert len(notes) == 2


def test_ledger_round_trip_and_lock(state_dir):
    with ledger.lock():
        d = ledger.load()
        d["bookings"]["k"] = {"pid": 1, "start": 2, "booked": 3, "label": "x"}
        ledger.save(d)
    with ledger.lock():
        assert ledger.load()["bookings"]["k"]["booked"] == 3


def test_run_cgroup_names_carry_their_owner():
    name = cgroups.run_name(123, 456)
    assert cgroups.owner_of(name) == (123, 456)
    assert cgroups.owner_of("something-else") is None
    assert cgroups.valid_name("swarmgate-heavy") and not cgroups.valid_name("../x")


# --- CLI ---

@pytest.mark.parametrize("argv,fragment", [
    ([], "after `--`"),
    (["8G", "--"], "no command"),
    (["--", "true"], "memory cap first"),
    (["eight", "--", "true"], "CAP"),
    (["8G", "--timeout", "x", "--", "true"], "--timeout"),
    (["8G", "--backend", "docker", "--", "true"], "--backend"),
    (["8G", "--bogus", "--", "true"], "unknown option --bogus"),
])
def test_usage_errors_are_251_with_one_clear_line(argv, fragment, capsys, state_dir):
    assert runner_cli.main(argv) == 251
    err = capsys.readouterr().err
    assert fragment in err and "Traceback" not in err


def test_parse_accepts_every_option():
    o = runner_cli.parse(["1.5G", "--label=k", "--timeout", "9", "--wait", "0", "--backend", "cgroup1",
                          "--unbounded", "--", "cmd", "--label", "x"])
    assert o["cap_bytes"] == int(1.5 * (1 << 30)) and o["label"] == "k" and o["timeout"] == 9.0
    assert o["wait"] == 0.0 and o["unbounded"] and o["command"] == ["cmd", "--label", "x"]


def test_bad_config_is_251_naming_the_key(tmp_path, monkeypatch, capsys, state_dir):
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "swarmgate.toml").write_text('[memory]\ntotal = "lots"\n')
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(tmp_path))
    assert runner_cli.main(["1G", "--", "true"]) == 251
    assert "total" in capsys.readouterr().err


def test_run_path_imports_stay_lean():
    code = ("import sys; import swarmgate.hosts.runner_cli as c, swarmgate.hosts.runner, "
            "swarmgate.hosts.cgroups, swarmgate.hosts.ledger, swarmgate.hosts.history, "
            "swarmgate.hosts.admission, swarmgate.hosts.outcome, swarmgate.hosts.kernel_log, swarmgate.config; "
            "print(sorted(m for m in ('rich', 'psutil', 'filelock', 'pynvml', 'bashlex') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "[]"


# --- systemd backend: the exact commands (live only where systemd is PID 1) ---

def test_systemd_run_command_is_exact():
    s = cgroups.Systemd("/sys/fs/cgroup")
    scope = "/sys/fs/cgroup/swarmgate.slice/swarmgate-heavy.slice/swarmgate-run-5-6.scope"
    assert s.command("swarmgate-heavy", "run-5-6", 8 << 30, ["cargo", "test"]) == [
        "systemd-run", "--scope", "--quiet", "--collect", "--unit=swarmgate-run-5-6.scope",
        "--slice=swarmgate-heavy.slice", "-p", "MemoryMax=8589934592", "-p", "MemorySwapMax=0",
        "-p", "OOMPolicy=stop", "--", "/bin/sh", "-c", scope_report.SCRIPT, "swarmgate-run", scope,
        "cargo", "test"]
    assert s.name_of(s.run_path("swarmgate-heavy", "run-5-6")) == "run-5-6"


def _scope_shell(tmp_path, argv, peak="123456", events="low 0\nmax 3\noom 1\noom_kill 1\n"):
    """Run the scope's shell outside systemd against a directory standing in for the scope's cgroup."""
    cg = tmp_path / "scope"
    cg.mkdir(exist_ok=True)
    (cg / "memory.peak").write_text(peak + "\n")
    (cg / "memory.events.local").write_text(events)
    r, w = os.pipe()
    p = subprocess.Popen(scope_report.wrap(str(cg), argv), preexec_fn=lambda: os.dup2(w, 3), pass_fds=(3,),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    os.close(w)
    out, err = p.communicate(timeout=30)
    return p.returncode, scope_report.read(r), out, err


def test_the_scope_shell_reports_start_status_peak_and_events_and_keeps_fd_3_from_the_command(tmp_path):
    rc, rep, out, err = _scope_shell(tmp_path, ["sh", "-c", "echo out; echo err >&2; [ -e /proc/self/fd/3 ] && "
                                                            "echo fd3; exit 7"])
    assert rc == 7 and rep.started and rep.rc == 7
    assert rep.peak == 123456 and rep.events == {"low": 0, "max": 3, "oom": 1, "oom_kill": 1}
    assert out == b"out\n" and err == b"err\n"  # and no "fd3": the command did not inherit the report fd
    c = scope_report.merge(cgroups.Counters(peak=999999, oom_kill=0), rep)
    assert (c.peak, c.oom, c.oom_kill, c.failcnt) == (999999, 1, 1, 3)
    rc, rep, _, err = _scope_shell(tmp_path, ["no-such-command-swarmgate"])
    assert rc == 127 and rep.started and b"no-such-command-swarmgate" in err
    assert not scope_report.parse(b"").started  # systemd-run failed before the shell ran


def test_systemd_slice_command_is_exact():
    s = cgroups.Systemd("/sys/fs/cgroup")
    assert s.slice_command("swarmgate-heavy", 4 << 30) == [
        "systemctl", "set-property", "--runtime", "swarmgate-heavy.slice", "MemoryMax=4294967296",
        "MemorySwapMax=0"]
    assert s.slice_command("x", None)[4] == "MemoryMax=infinity"


def test_systemd_paths_follow_slice_nesting():
    s = cgroups.Systemd("/sys/fs/cgroup")
    assert s.slice_path("swarmgate-heavy") == "/sys/fs/cgroup/swarmgate.slice/swarmgate-heavy.slice"
    assert s.run_path("swarmgate-heavy", "run-1-2") == \
        "/sys/fs/cgroup/swarmgate.slice/swarmgate-heavy.slice/swarmgate-run-1-2.scope"


def test_systemd_backend_refused_where_systemd_is_not_pid1():
    if cgroups.systemd_is_pid1():
        pytest.skip("systemd is PID 1 here: the refusal cannot be observed")
    with pytest.raises(cgroups.CgroupError, match="PID 1"):
        cgroups.get("systemd")


@pytest.mark.layout("systemd")  # systemd as PID 1 inside user-mode Linux (tests/vm)
def test_systemd_live_run_of_the_exact_command(tmp_path):
    s = cgroups.get("systemd")
    r, w = os.pipe()
    p = subprocess.run(s.command("swarmgate-test", "run-live-1", 64 << 20, ["sh", "-c", "exit 3"]),
                       preexec_fn=lambda: os.dup2(w, 3), pass_fds=(3,), timeout=60)
    os.close(w)
    rep = scope_report.read(r)
    assert p.returncode == 3 and rep.started and rep.rc == 3 and rep.peak and rep.peak > 0
    assert "oom" in rep.events


# --- cgroup v2: parsing against a fake tree (files written by the test) ---

def write_tree(path, files: dict) -> None:
    os.makedirs(path, exist_ok=True)
    for name, text in files.items():
        with open(os.path.join(path, name), "w") as f:
            f.write(text)


def test_cgroup2_counters_parse(tmp_path):
    run = tmp_path / "slice" / "run-1-2"
    write_tree(run, {
        "memory.current": "104857600\n", "memory.peak": "209715200\n", "memory.max": "268435456\n",
        "memory.events.local": "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\noom_group_kill 0\n",
        "memory.events": "low 0\nhigh 0\nmax 99\noom 9\noom_kill 9\n",
        "memory.stat": "anon 50000000\nfile 54857600\ninactive_file 40000000\nactive_file 14857600\n",
    })
    c = cgroups.CgroupV2(str(tmp_path)).counters(str(run))
    assert (c.usage, c.peak, c.limit, c.failcnt, c.oom, c.oom_kill) == (104857600, 209715200, 268435456, 12, 1, 1)
    assert c.reclaimable == 54857600 and c.non_reclaimable == 50000000
    assert outcome.oom_kind(c.oom, c.oom_kill, c.failcnt, None, "/slice/run-1-2") == "own"


def test_cgroup2_unlimited_and_missing_peak(tmp_path):
    write_tree(tmp_path / "s", {"memory.current": "5\n", "memory.max": "max\n",
                                "memory.events.local": "oom 0\noom_kill 2\n"})
    c = cgroups.CgroupV2(str(tmp_path)).counters(str(tmp_path / "s"))
    assert c.limit is None and c.peak is None and c.reclaimable == 0
    assert outcome.oom_kind(c.oom, c.oom_kill, c.failcnt, None, "/s") == "total"


def test_cgroup1_counters_parse(tmp_path):
    write_tree(tmp_path / "s", {
        "memory.usage_in_bytes": "300\n", "memory.max_usage_in_bytes": "400\n",
        "memory.limit_in_bytes": "9223372036854771712\n", "memory.failcnt": "3\n",
        "memory.oom_control": "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n",
        "memory.stat": "cache 1\ntotal_inactive_file 100\ntotal_active_file 20\ntotal_cache 130\n",
    })
    c = cgroups.CgroupV1(str(tmp_path)).counters(str(tmp_path / "s"))
    assert (c.usage, c.peak, c.failcnt, c.oom, c.oom_kill, c.reclaimable) == (300, 400, 3, None, 1, 120)


def test_status_json_reads_the_ledger(state_dir, tmp_path, monkeypatch, capsys):
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "swarmgate.toml").write_text(f'[memory]\nslice = "sgunit-{os.getpid()}"\n')
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(tmp_path))

    me = identity()
    with ledger.lock():
        d = ledger.load()
        d["bookings"]["me"] = {"pid": me["pid"], "start": me["start"], "booked": 5 * M, "label": "mine",
                               "basis": "cap", "cap": 5 * M, "since": 1}
        ledger.save(d)
    with ledger.lock():
        h = history.load()
        history.record(h, "mine", peak=M, duration_s=1, outcome="ok", basis="cap", cap=5 * M)
        history.save(h)
    assert status.main(["--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert [b["label"] for b in rep["bookings"]] == ["mine"]
    assert rep["history"][0]["label"] == "mine" and rep["history"][0]["peak"] == M
    assert status.main([]) == 0
    assert "mine" in capsys.readouterr().out


def test_a_run_may_pass_the_head_of_the_queue_only_if_both_fit():
    # 600 free: a 100 newcomer fits alone, but the head waits for 550
    assert not admission.decide(1000, 400, 0, [], 100, head_need=550).admit
    assert admission.decide(1000, 400, 0, [], 100, head_need=500).admit
    assert admission.decide(1000, 400, 0, [], 100).admit
    # never-fits is about the run itself, not the queue
    assert not admission.decide(1000, 0, 0, [], 100, head_need=5000).never_fits


def test_head_need_is_the_oldest_waiter_ahead():
    data = {"waiters": {"a": {"since": 5, "need": 50}, "b": {"since": 3, "need": 30},
                        "me": {"since": 4, "need": 1}}}
    assert _head_need(data, "me") == 30
    assert _head_need(data, "b") == 0
    assert _head_need(data, "new") == 30  # not queued yet: behind everyone


def test_systemd_backend_finds_its_run_scopes_for_reconcile(tmp_path):
    s = cgroups.Systemd(str(tmp_path))
    base = tmp_path / "swarmgate.slice" / "swarmgate-heavy.slice"
    for d in ("swarmgate-run-12-34.scope", "other.scope", "swarmgate-run-5-6.scope"):
        (base / d).mkdir(parents=True)
    assert s.runs("swarmgate-heavy") == ["run-12-34", "run-5-6"]
    assert s.run_path("swarmgate-heavy", "run-12-34") == str(base / "swarmgate-run-12-34.scope")
    assert cgroups.owner_of(s.runs("swarmgate-heavy")[0]) == (12, 34)
