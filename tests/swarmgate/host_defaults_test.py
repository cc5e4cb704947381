"""The defaults the machine gives (swarmgate/host_defaults.py): the margin, the total, the cap a
way-out names, the thread default; and the cap computed here, run here for real, is admitted (the
runner's 252 "can never fit here" is what a cap that does not fit answers)."""
from __future__ import annotations

import os

import pytest

from swarmgate import host_defaults as H
from swarmgate.config import Config, load_config, validate
from swarmgate.hosts import history, ledger
from swarmgate.hosts.runner_selftest import Sandbox
from tests.hosts.cgroups import cgroups_writable, need_real

G = 1 << 30
M = 1 << 20


def cfg(**memory) -> Config:
    return Config(validate({"memory": memory} if memory else {}), None, None, {})


@pytest.mark.parametrize("memory, margin", [
    (int(23.5 * G), int(23.5 * G) // 4),   # this project's machines: 24 GiB less the kernel's share
    (64 * G, 16 * G),
    (256 * G, 20 * G),                      # the seed's 20G margin on a big machine
    (3 * G, 1 * G),                         # at least 1 GiB ...
    (1536 * M, 768 * M),                    # ... but half of a machine under 2 GiB
])
def test_the_auto_margin_fits_the_machine(memory, margin):
    assert H.auto_margin(memory) == margin
    assert H.runner_total(cfg(), memory) == memory - margin


def test_a_configured_margin_or_total_is_used_as_written():
    assert H.margin(cfg(margin="2G"), 64 * G) == 2 * G
    assert H.runner_total(cfg(total="6G"), 64 * G) == 6 * G
    with pytest.raises(ValueError, match=r"\[memory\] margin 20G leaves nothing .* \[memory\] total"):
        H.runner_total(cfg(margin="20G"), 16 * G)


def test_the_cap_comes_from_the_history_and_never_exceeds_the_total():
    c = cfg(total="12G")
    assert H.heavy_cap_text(c, ["cargo", "test", "--workspace"]) == "8G"   # no history: default_prediction
    with ledger.lock():
        h = history.load()
        history.record(h, "cargo test --workspace", peak=int(2.2 * G), duration_s=60, outcome="ok",
                       basis="cap", cap=8 * G)
        history.record(h, "make check-full", peak=9 * G, duration_s=60, outcome="own_cap", basis="cap", cap=9 * G)
        history.save(h)
    assert H.heavy_cap_text(c, ["cargo", "test", "--workspace"]) == "4G"   # 2.2G peak x 1.5, whole GiB up
    assert H.heavy_cap_text(c, ["make", "check-full"]) == "12G"           # 9G cap hit x 1.5 > the total
    assert H.heavy_cap_text(cfg(total="1G"), ["true"]) == "1G"
    assert H.heavy_cap_text(cfg(total="900M", default_prediction="300M"), ["true"]) == "512M"


def test_the_size_is_written_as_the_runner_takes_it():
    assert [H.size_text(n) for n in (8 * G, 1536 * M, 512 * M)] == ["8G", "1536M", "512M"]


def test_the_machine_is_read():
    with open("/proc/meminfo") as f:
        assert f"{H.machine_memory() // 1024} kB" in f.read()
    assert H.machine_cores() == len(os.sched_getaffinity(0))


def test_the_cap_computed_here_is_admitted_here(monkeypatch):
    """The cap a way-out prints on this machine (default config: margin auto, the slice a test's own),
    and `auto`, run `true` under the real runner: rc 0, never 252."""
    need_real(cgroups_writable())
    sb = Sandbox(prefix="sgdefaults")
    slice_path = sb.backend().slice_path(sb.slice)
    try:
        with open(os.path.join(sb.repo, ".claude", "swarmgate.toml"), "w") as f:
            f.write(f'[memory]\nslice = "{sb.slice}"\n')
        monkeypatch.setenv("SWARMGATE_STATE_DIR", sb.state)
        cap = H.heavy_cap_text(load_config(sb.repo), ["cargo", "test", "--workspace"])
        for word in (cap, "auto"):
            p = sb.run([word, "--wait", "0", "--", "true"])
            assert p.returncode == 0, (word, p.returncode, p.stderr.decode())
    finally:
        sb.cleanup()
    assert not os.path.exists(slice_path) and not os.path.exists(sb.tmp)
