"""Kernel-log OOM parsing on recorded lines (tests/hooks/fixtures/)."""
from __future__ import annotations

import time
from datetime import UTC, datetime

from swarmgate.hooks import kernel_oom as K
from swarmgate.hooks.session_context import section_oom
from tests.hooks.conftest import FIXTURES


def _t(stamp: str) -> float:
    return time.mktime(time.strptime(stamp, "%a %b %d %H:%M:%S %Y"))


def test_recorded_dmesg_T_cgroup_kills():
    text = (FIXTURES / "dmesg_T_memcg.txt").read_text()
    kills = K.parse(text, now=_t("Sun Nov 29 13:00:00 2026"))
    assert [(k.pid, k.name, k.kind) for k in kills] == [
        (10212, "python3", K.CGROUP), (14820, "python3", K.CGROUP), (15282, "python3", K.CGROUP)]
    own, _, parent = kills
    assert own.oom_memcg == own.task_memcg == "/sgx/a"
    assert parent.oom_memcg == "/sgtest-manual" and parent.task_memcg.startswith("/sgtest-manual/run-")
    assert "the limit of a parent was hit" in K.describe(parent)
    assert "the limit of a parent" not in K.describe(own)
    assert own.time == _t("Sun Nov 29 12:10:05 2026")
    assert own.anon_rss_kb == 65280


def test_recorded_whole_machine_kills():
    text = (FIXTURES / "dmesg_T_global.txt").read_text()
    kills = K.parse(text, now=_t("Sun Nov 29 09:00:00 2026"))
    assert [(k.pid, k.name, k.kind) for k in kills] == [(48790, "rustc", K.MACHINE),
                                                      (51002, "qemu-system-x86", K.MACHINE)]
    assert kills[0].oom_memcg == ""  # global_oom: no memcg
    assert kills[1].oom_memcg == "/"


def test_raw_dmesg_uses_boot_time():
    text = (FIXTURES / "dmesg_raw_memcg.txt").read_text()
    kills = K.parse(text, now=2000.0, boot_time=1000.0)
    assert [(k.pid, k.kind, round(k.time, 3)) for k in kills] == [(14820, K.CGROUP, 1848.169),
                                                                (15282, K.CGROUP, 1855.942)]
    # without a boot time, kills are kept with no time
    assert all(k.time is None for k in K.parse(text, now=2000.0))


def test_journalctl_short_iso_both_kinds():
    text = (FIXTURES / "journalctl_k_iso.txt").read_text()
    kills = K.parse(text, now=1795000000.0)
    assert [(k.pid, k.name, k.kind) for k in kills] == [(7313, "cc1plus", K.MACHINE), (9001, "python3", K.CGROUP)]
    assert kills[0].time == datetime(2026, 11, 29, 2, 11, 45, tzinfo=UTC).timestamp()
    assert kills[1].oom_memcg == "/swarmgate-heavy.slice/run-88.scope"


def test_journalctl_default_format_and_year_rollover():
    now = time.mktime((2027, 1, 2, 10, 0, 0, 0, 0, -1))
    text = ("Dec 31 23:59:58 host kernel: oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,"
            "mems_allowed=0,global_oom,task_memcg=/,task=make,pid=77,uid=0\n"
            "Dec 31 23:59:58 host kernel: Out of memory: Killed process 77 (make) total-vm:10kB, anon-rss:8kB, "
            "file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:4kB oom_score_adj:0\n")
    (k,) = K.parse(text, now=now)
    assert k.kind == K.MACHINE and time.localtime(k.time).tm_year == 2026


def test_recent_keeps_the_last_12_hours():
    text = (FIXTURES / "dmesg_T_global.txt").read_text()
    now = _t("Sun Nov 29 11:45:00 2026")
    kills = K.recent(K.parse(text, now=now), now)
    assert {k.pid for k in kills} == {51002}  # 23:52 is 11 h 52 min ago; 23:41 is 12 h 4 min ago


def test_summary_without_killed_line_and_unrelated_lines():
    text = ("[Sun Nov 29 12:00:00 2026] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,"
            "mems_allowed=0,oom_memcg=/a,task_memcg=/a/b,task=java,pid=5,uid=0\n"
            "[Sun Nov 29 12:00:01 2026] usb 1-1: new high-speed USB device\n"
            "[Sun Nov 29 12:00:02 2026] echo Killed process 3 (fake) is text in a command line\n")
    kills = K.parse(text, now=_t("Sun Nov 29 12:10:00 2026"))
    assert [(k.pid, k.name, k.kind, k.oom_memcg) for k in kills] == [(5, "java", K.CGROUP, "/a")]


def test_section_splits_machine_from_cgroup():
    text = (FIXTURES / "journalctl_k_iso.txt").read_text()
    now = datetime(2026, 11, 29, 4, 0, 0, tzinfo=UTC).timestamp()
    lines = section_oom(text, "journalctl -k", now=now)
    joined = "\n".join(lines)
    assert "RED: whole machine ran out of memory 1 time(s)" in joined
    assert "cc1plus (pid 7313)" in joined
    assert "inside a cgroup limit (the cap did its job; the job needs a bigger cap or less memory): 1" in joined
    assert "python3 (pid 9001) in /swarmgate-heavy.slice/run-88.scope" in joined
    assert section_oom("", "dmesg -T", now=0.0) == ["none (read dmesg -T)"]


def test_live_read_is_bounded_and_never_raises():
    t0 = time.monotonic()
    text, source = K.read_live(timeout=3.0)
    assert time.monotonic() - t0 < 30
    assert isinstance(text, str) and source
