"""State files: atomic writes, tolerant reads, no symlink following, locks."""
from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import threading

import pytest
from filelock import FileLock, Timeout

from swarmgate import statefile as sf


def test_write_and_read_json(tmp_path):
    p = tmp_path / "d" / "state.json"
    sf.write_json_atomic(p, {"a": 1})
    assert sf.read_json(p, {}) == {"a": 1}
    assert [x.name for x in p.parent.iterdir()] == ["state.json"]  # no temp file left behind


def test_absent_file_gives_the_default(tmp_path):
    assert sf.read_json(tmp_path / "none.json", {"d": 1}) == {"d": 1}
    assert sf.read_text(tmp_path / "none.txt") is None


def _writer(path, n):
    for i in range(n):
        sf.write_json_atomic(path, {"i": i, "pad": "x" * 20000})


def test_atomic_write_readers_never_see_half_a_file(tmp_path):
    p = tmp_path / "big.json"
    sf.write_json_atomic(p, {"i": -1, "pad": ""})
    proc = multiprocessing.get_context("fork").Process(target=_writer, args=(p, 150))
    proc.start()
    try:
        seen = 0
        while proc.is_alive() or seen == 0:
            data = json.loads(p.read_text())  # would raise on a torn file
            assert "i" in data
            seen += 1
    finally:
        proc.join(30)
    assert proc.exitcode == 0
    assert not proc.is_alive()


@pytest.mark.parametrize("content, why", [("{not json", "not JSON"), ("[1, 2]", "expected a JSON dict")])
def test_corrupt_json_is_quarantined_and_the_default_returned(tmp_path, content, why):
    p = tmp_path / "ledger.json"
    p.write_text(content)
    said = []
    assert sf.read_json(p, {"fresh": True}, report=said.append) == {"fresh": True}
    assert not p.exists()
    moved = [x for x in tmp_path.iterdir() if x.name.startswith("ledger.json.corrupt-")]
    assert len(moved) == 1 and moved[0].read_text() == content  # nothing lost
    assert len(said) == 1 and why in said[0] and str(p) in said[0]


def test_corrupt_json_is_reported_on_stderr_by_default(tmp_path, capsys):
    p = tmp_path / "x.json"
    p.write_text("garbage")
    assert sf.read_json(p, None) is None
    err = capsys.readouterr().err
    assert "was corrupt" in err and "x.json" in err


def test_planted_symlink_is_not_followed_on_write(tmp_path):
    target = tmp_path / "victim.txt"
    target.write_text("precious\n")
    link = tmp_path / "state" / "ledger.json"
    link.parent.mkdir()
    os.symlink(target, link)
    sf.write_json_atomic(link, {"a": 1})
    assert target.read_text() == "precious\n"  # the target is unchanged
    assert not link.is_symlink() and json.loads(link.read_text()) == {"a": 1}


def test_planted_symlink_is_not_followed_on_read_or_append(tmp_path):
    target = tmp_path / "victim.jsonl"
    target.write_text('{"x": 1}\n')
    link = tmp_path / "log.jsonl"
    os.symlink(target, link)
    with pytest.raises(sf.StateError):
        sf.read_text(link)
    with pytest.raises(sf.StateError):
        sf.append_jsonl(link, {"y": 2})
    assert target.read_text() == '{"x": 1}\n'


def test_symlinked_state_dir_is_refused(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    os.symlink(real, tmp_path / "state")
    with pytest.raises(sf.StateError):
        sf.ensure_dir(tmp_path / "state")


def test_jsonl_skips_torn_lines(tmp_path):
    p = tmp_path / "h.jsonl"
    sf.append_jsonl(p, {"a": 1})
    with open(p, "a") as f:
        f.write('{"torn": \n[1]\n')
    sf.append_jsonl(p, {"b": 2})
    assert list(sf.read_jsonl(p)) == [{"a": 1}, {"b": 2}]


def test_lock_excludes_and_times_out(tmp_path):
    lock = tmp_path / "l" / "x.lock"
    inside = threading.Event()
    release = threading.Event()

    def holder():
        with sf.locked(lock):
            inside.set()
            release.wait(10)

    t = threading.Thread(target=holder)
    t.start()
    try:
        assert inside.wait(10)
        with pytest.raises(sf.StateError) as e:
            with sf.locked(lock, timeout=0.2):
                pass
        assert "could not take the lock" in str(e.value)
    finally:
        release.set()
        t.join(10)
    with sf.locked(lock, timeout=1):  # free again
        pass


def test_lock_on_a_symlink_is_refused(tmp_path):
    target = tmp_path / "t"
    target.write_text("")
    os.symlink(target, tmp_path / "x.lock")
    with pytest.raises(sf.StateError):
        with sf.locked(tmp_path / "x.lock"):
            pass


def test_two_corruptions_in_one_second_keep_both_copies(tmp_path):
    p = tmp_path / "s.json"
    p.write_text("bad one")
    sf.read_json(p, {}, report=lambda m: None)
    p.write_text("bad two")
    sf.read_json(p, {}, report=lambda m: None)
    kept = sorted(x.read_text() for x in tmp_path.iterdir() if ".corrupt-" in x.name)
    assert kept == ["bad one", "bad two"]


def test_lock_excludes_filelock_users_of_the_same_path(tmp_path):
    path = tmp_path / "shared.lock"
    with sf.locked(path):
        with pytest.raises(Timeout):
            FileLock(str(path), timeout=0.1).acquire()
    other = FileLock(str(path), timeout=1)
    other.acquire()
    try:
        with pytest.raises(sf.StateError):
            with sf.locked(path, timeout=0.1):
                pass
    finally:
        other.release()


def _hold(path, ready, release):
    with sf.locked(path):
        ready.set()
        release.wait(20)


def test_lock_excludes_another_process(tmp_path):
    ctx = multiprocessing.get_context("fork")
    ready, release = ctx.Event(), ctx.Event()
    path = tmp_path / "p.lock"
    proc = ctx.Process(target=_hold, args=(path, ready, release))
    proc.start()
    try:
        assert ready.wait(20)
        with pytest.raises(sf.StateError):
            with sf.locked(path, timeout=0.2):
                pass
    finally:
        release.set()
        proc.join(20)
    assert proc.exitcode == 0 and not proc.is_alive()
    with sf.locked(path, timeout=5):  # released when the holder let go
        pass


def test_lock_on_something_that_is_not_a_file_is_refused(tmp_path):
    os.mkfifo(tmp_path / "fifo.lock")
    with pytest.raises(sf.StateError) as e:
        with sf.locked(tmp_path / "fifo.lock", timeout=0.1):
            pass
    assert "not a regular file" in str(e.value)


def test_lock_does_not_import_filelock(tmp_path):
    code = (f"import sys; from swarmgate import statefile as sf\n"
            f"with sf.locked({str(tmp_path / 'x.lock')!r}): pass\n"
            "print('filelock' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False", out.stderr
