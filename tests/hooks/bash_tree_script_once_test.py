"""The bash reader reads each script at most once per judgement (SPEC §4.3; the seed's guard once
recursed six levels through a file and took 100 s). Its break switch, no-script-once-guard, makes
that observable: scripts sourcing each other are read again and again until the depth bound."""
from __future__ import annotations

from swarmgate import break_switch as bs
from swarmgate.hooks.bash_tree import analyze


def _write(tmp_path):
    (tmp_path / "a.sh").write_text(". ./b.sh\necho a\n")
    (tmp_path / "b.sh").write_text(". ./a.sh\necho b\n")
    (tmp_path / "self.sh").write_text(". ./self.sh\necho self\n")


def test_each_script_is_read_once_per_judgement(tmp_path):
    _write(tmp_path)
    an = analyze("bash a.sh && source self.sh && bash a.sh", cwd=str(tmp_path), max_depth=6, budget_s=2.0)
    assert sorted(an.scripts_read) == sorted(str(tmp_path / n) for n in ("a.sh", "b.sh", "self.sh"))
    assert an.unverifiable == []


def test_with_the_switch_the_same_scripts_recurse_to_the_depth_bound(tmp_path, monkeypatch):
    _write(tmp_path)
    with bs.selftest_marker() as env:
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        monkeypatch.setenv(bs.BREAK_ENV, "no-script-once-guard")
        bs._cache.clear()
        an = analyze("source self.sh", cwd=str(tmp_path), max_depth=6, budget_s=2.0)
    assert an.scripts_read.count(str(tmp_path / "self.sh")) == 7
    assert [u.reason for u in an.unverifiable] == [f"script {tmp_path / 'self.sh'}: nested deeper than 6 levels"]
