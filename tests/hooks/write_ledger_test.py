"""hooks/write_ledger.py: who wrote what, appended and read back; a torn line loses one line."""
from __future__ import annotations

from swarmgate.hooks import write_ledger as wl


def test_record_and_owners(tmp_path):
    repo = str(tmp_path)
    assert wl.record(repo, "s1", "agent:a", [(wl.stored(repo, f"{repo}/src/a.py"), False)], now=100) == ""
    assert wl.record(repo, "s1", "agent:b", [(wl.stored(repo, f"{repo}/build"), True)], now=200) == ""
    with open(wl.ledger_path(repo), "a") as f:
        f.write('{"torn": \n')
    wl.record(repo, "s1", "main:s1", [(f"{repo}/build/keep.txt", False)], now=300)
    o = wl.owners(repo, repo, since=150)
    assert o.owner(f"{repo}/src/a.py") == "agent:a"
    assert o.owner(f"{repo}/build/out.o") == "agent:b"          # under a tree b wrote
    assert o.owner(f"{repo}/build/keep.txt") == "main:s1"       # written after the tree
    assert o.owner(f"{repo}/other") is None
    assert o.owner(f"{repo}/src/a.py", since=150) is None        # older than `since`: of unknown origin
    assert o.seen == {"agent:b", "main:s1"}                       # a wrote before `since`
    assert '"p":"src/a.py"' in open(wl.ledger_path(repo)).read()  # kept relative inside the repository


def test_agent_keys():
    assert wl.agent_key("s", "a1") == "agent:a1"
    assert wl.agent_key("s", None) == "main:s"
    assert "subagent a1" == wl.describe("agent:a1")


def test_a_symlinked_ledger_is_not_followed(tmp_path):
    repo = tmp_path / "repo"
    (repo / ".swarmgate" / "log").mkdir(parents=True)
    target = tmp_path / "elsewhere"
    target.write_text("")
    (repo / ".swarmgate" / "log" / "writes.jsonl").symlink_to(target)
    assert wl.record(str(repo), "s", "agent:a", [("x", False)]) != ""
    assert target.read_text() == ""
