"""Preflight: header conditions, exit 78 naming what is unmet, nothing run."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pynvml
import pytest

from swarmgate.exit_codes import Exit
from swarmgate.gate import preflight


def script(tmp_path: Path, header: str, body: str = "", name: str = "job.sh") -> tuple[Path, Path]:
    ran = tmp_path / f"{name}.ran"
    p = tmp_path / name
    p.write_text(f"#!/bin/sh\n{header}\nset -e\n{body}\necho run >> {ran}\n")
    p.chmod(0o755)
    return p, ran


def test_parse_header():
    h = preflight.parse_header("""#!/bin/bash
# admission: inputs-changed crates/ scripts/crash/ env:SINGLEFS_THREAD_CAP
# run-condition: command bash git rsync python3
# run-condition: single-instance
# run-condition: gpu
# run-condition: memory 8G
echo body
# run-condition: command ignored-after-the-header
""")
    assert h.inputs == ["crates/", "scripts/crash/"] and h.env == ["SINGLEFS_THREAD_CAP"]
    assert h.commands == ["bash", "git", "rsync", "python3"]
    assert h.single_instance and h.gpu == 1 and h.memory == 8 << 30 and not h.errors
    bad = preflight.parse_header("# run-condition: teleport\n# admission: sometimes\n")
    assert len(bad.errors) == 2 and "teleport" in bad.errors[0].why


def test_missing_command_is_78_naming_it_and_nothing_runs(gate_env, tmp_path, capsys):
    p, ran = script(tmp_path, "# run-condition: command sh swarmgate-no-such-tool")
    assert preflight.main([str(p)]) == Exit.PREFLIGHT == 78
    err = capsys.readouterr().err
    assert "swarmgate-no-such-tool" in err and "way out" in err and "78" in err
    assert not ran.exists()


def test_met_conditions_run_the_script_with_its_args(gate_env, tmp_path):
    p, ran = script(tmp_path, "# run-condition: command sh", body='test "$1" = hello')
    assert preflight.main([str(p), "--", "hello"]) == 0
    assert ran.read_text() == "run\n"
    assert preflight.main([str(p), "--", "other"]) != 0


def test_admission_inputs_changed(gate_env, tmp_path, monkeypatch):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.c").write_text("int a;\n")
    p, ran = script(tmp_path, "# admission: inputs-changed src/ env:GATE_MODE")
    assert preflight.main([str(p)]) == 0
    assert preflight.main([str(p)]) == Exit.PREFLIGHT          # nothing changed since the success
    assert ran.read_text() == "run\n"
    assert preflight.main([str(p), "--force"]) == 0             # the way out
    (tmp_path / "src" / "a.c").write_text("int a = 1;\n")
    assert preflight.main([str(p)]) == 0                        # an input changed
    monkeypatch.setenv("GATE_MODE", "x")
    assert preflight.main([str(p)]) == 0                        # an env input changed
    assert preflight.main([str(p)]) == Exit.PREFLIGHT
    assert ran.read_text().count("run") == 4


def test_failure_is_not_recorded_as_success(gate_env, tmp_path):
    (tmp_path / "in.txt").write_text("1")
    p, ran = script(tmp_path, "# admission: inputs-changed in.txt", body="exit 3")
    assert preflight.main([str(p)]) == 3
    assert preflight.main([str(p)]) == 3                        # still admitted: no success recorded


def test_single_instance(gate_env, tmp_path):
    started = tmp_path / "started"
    p, ran = script(tmp_path, "# run-condition: single-instance", body=f"touch {started}; sleep 30")
    first = subprocess.Popen([sys.executable, "-m", "swarmgate", "preflight", str(p)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert started.exists()
        cp = subprocess.run([sys.executable, "-m", "swarmgate", "preflight", str(p)], capture_output=True, text=True)
        assert cp.returncode == 78
        assert "single-instance" in cp.stderr and f"pid {first.pid}" in cp.stderr
        assert ran.exists() is False
    finally:
        os.killpg(first.pid, signal.SIGKILL)   # the preflight process, its script and the sleep
        first.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.killpg(first.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    with pytest.raises(ProcessLookupError):
        os.killpg(first.pid, 0)
    # the holder died: the lock is free again (flock goes with the process)
    lock = preflight.InstanceLock(p)
    assert lock.try_acquire() is None
    lock.release()


def test_memory_condition(gate_env, tmp_path, capsys):
    p, ran = script(tmp_path, "# run-condition: memory 100000G")
    assert preflight.main([str(p)]) == 78
    assert "memory" in capsys.readouterr().err and not ran.exists()
    p, ran = script(tmp_path, "# run-condition: memory 1M", name="small.sh")
    assert preflight.main([str(p)]) == 0


def test_gpu_without_a_driver_is_unmet_not_a_crash(gate_env, tmp_path, capsys, monkeypatch):
    def no_driver():
        raise pynvml.NVMLError_LibraryNotFound()
    monkeypatch.setattr(pynvml, "nvmlInit", no_driver)   # the thinnest layer: the NVML call
    p, ran = script(tmp_path, "# run-condition: gpu")
    assert preflight.main([str(p)]) == 78
    err = capsys.readouterr().err
    assert "gpu" in err and "no NVIDIA driver" in err and not ran.exists()


def test_gpu_present_is_met(gate_env, tmp_path, monkeypatch):
    monkeypatch.setattr(pynvml, "nvmlInit", lambda: None)
    monkeypatch.setattr(pynvml, "nvmlDeviceGetCount", lambda: 2)
    monkeypatch.setattr(pynvml, "nvmlShutdown", lambda: None)
    p, ran = script(tmp_path, "# run-condition: gpu 2")
    assert preflight.main([str(p)]) == 0 and ran.exists()


def test_unreadable_header_is_78_with_the_fix(gate_env, tmp_path, capsys):
    p, ran = script(tmp_path, "# run-condition: teleport")
    assert preflight.main([str(p)]) == 78
    assert "teleport" in capsys.readouterr().err and not ran.exists()


def test_check_only_and_json(gate_env, tmp_path, capsys):
    p, ran = script(tmp_path, "# run-condition: command swarmgate-no-such-tool")
    assert preflight.main([str(p), "--check", "--json"]) == 78
    report = json.loads(capsys.readouterr().out)
    assert report["exit"] == 78 and "swarmgate-no-such-tool" in report["unmet"][0]["why"]
    p2, ran2 = script(tmp_path, "# run-condition: command sh", name="ok.sh")
    assert preflight.main([str(p2), "--check"]) == 0 and not ran2.exists()


def test_missing_script_and_break_outside_selftest(gate_env, tmp_path, monkeypatch):
    assert preflight.main([str(tmp_path / "nope.sh")]) == Exit.USAGE
    p, ran = script(tmp_path, "")
    monkeypatch.setenv("SWARMGATE_BREAK", "preflight-ignores-conditions")
    assert preflight.main([str(p)]) == Exit.USAGE and not ran.exists()


def test_umbrella_verb_routes_to_preflight(gate_env, tmp_path):
    p, ran = script(tmp_path, "# run-condition: command swarmgate-no-such-tool")
    cp = subprocess.run([sys.executable, "-m", "swarmgate", "preflight", str(p)], capture_output=True, text=True)
    assert cp.returncode == 78 and "swarmgate-no-such-tool" in cp.stderr and not ran.exists()


def test_gate_applies_run_conditions_before_a_stage(repo):
    repo.config("""
[[gate.stages]]
name = "needs-tool"
command = "sh scripts/check.sh"
inputs = ["**"]
""")
    repo.write("scripts/check.sh", "#!/bin/sh\n# run-condition: command swarmgate-no-such-tool\ntouch /tmp/never\n")
    repo.git("add", ".")
    r = repo.gate()
    o = [o for o in r.outcomes if o.stage == "needs-tool"][0]
    assert o.verdict == "not-run" and o.rc == 78 and r.red
    assert "swarmgate-no-such-tool" in o.output
    assert not (repo.state / "gate-cache" / "verdicts" / "needs-tool").exists()


def test_admission_paths_are_relative_to_the_scripts_repository(gate_env, tmp_path, monkeypatch):
    repo = tmp_path / "proj"
    (repo / "scripts").mkdir(parents=True)
    (repo / ".git").mkdir()
    (repo / "src").mkdir()
    (repo / "src" / "x.c").write_text("1")
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(tmp_path))   # another project: must not matter
    monkeypatch.chdir(tmp_path)
    p, ran = script(repo / "scripts", "# admission: inputs-changed src/")
    assert preflight.base_dir(p) == repo
    assert preflight.main([str(p)]) == 0
    assert preflight.main([str(p)]) == 78
    (repo / "src" / "x.c").write_text("2")
    assert preflight.main([str(p)]) == 0
