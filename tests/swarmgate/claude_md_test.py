"""swarmgate/claude_md.py and its use by `swarmgate install`: the import of .claude/main-agent.md in
the repository's CLAUDE.md, added once, removed byte for byte by `--uninstall` (a real temporary
repository, the real install). That the client reads it is tests/e2e/agents_path_e2e_test.py's."""
from __future__ import annotations

import pytest

from swarmgate import claude_md, install


def _install(repo, *extra: str) -> None:
    assert install.main([str(repo), *extra]) == 0


@pytest.mark.parametrize("before", [
    None,
    b"",
    b"# Project\n\nBuild with make.\n",
    b"# Project\n\nno newline at the end",
    b"# Windows\r\n\r\nlines\r\n",
    b"caf\xc3\xa9 and a stray \xff byte\n",
])
def test_install_then_uninstall_gives_back_the_exact_bytes(repo, before):
    path = repo / "CLAUDE.md"
    if before is not None:
        path.write_bytes(before)
    _install(repo)
    text = path.read_bytes()
    assert text.count(claude_md.IMPORT.encode()) == 1
    assert text.startswith(before or b"") and text.splitlines()[-1].strip() == claude_md.IMPORT.encode()
    assert (repo / ".claude" / "main-agent.md").is_file()   # what the import names is there
    _install(repo)
    assert path.read_bytes() == text                         # a second install changes nothing
    _install(repo, "--uninstall")
    if before is None:
        assert not path.exists()
    else:
        assert path.read_bytes() == before


def test_the_user_own_import_is_left_alone(repo):
    mine = f"# Mine\n{claude_md.IMPORT}\n".encode()
    (repo / "CLAUDE.md").write_bytes(mine)
    _install(repo)
    assert (repo / "CLAUDE.md").read_bytes() == mine
    _install(repo, "--uninstall")
    assert (repo / "CLAUDE.md").read_bytes() == mine


def test_lines_the_user_added_after_install_stay_on_uninstall(repo):
    (repo / "CLAUDE.md").write_bytes(b"# Project\n")
    _install(repo)
    path = repo / "CLAUDE.md"
    path.write_bytes(path.read_bytes() + b"\nmy own note\n")
    _install(repo, "--uninstall")
    assert path.read_bytes() == b"# Project\n\nmy own note\n"


def test_a_created_file_the_user_wrote_into_is_kept_without_our_lines(repo):
    _install(repo)
    path = repo / "CLAUDE.md"
    path.write_bytes(b"# Notes of my own\n" + path.read_bytes())
    _install(repo, "--uninstall")
    assert path.read_bytes() == b"# Notes of my own\n"


def test_dry_run_writes_nothing_and_says_it(repo, capsys):
    _install(repo, "--dry-run")
    assert not (repo / "CLAUDE.md").exists()
    assert f"CLAUDE.md: {claude_md.IMPORT}" in capsys.readouterr().out


def test_a_codex_only_install_leaves_claude_md_alone(repo):
    _install(repo, "--client", "codex")
    assert not (repo / "CLAUDE.md").exists()


def test_unwiring_claude_keeps_the_import_out_while_another_client_stays(repo):
    (repo / "CLAUDE.md").write_bytes(b"# P\n")
    _install(repo, "--client", "claude,codex")
    _install(repo, "--uninstall", "--client", "claude")
    assert (repo / "CLAUDE.md").read_bytes() == b"# P\n"
    assert (repo / ".claude" / "main-agent.md").is_file()     # codex still wired: templates stay
    _install(repo, "--uninstall")
    assert (repo / "CLAUDE.md").read_bytes() == b"# P\n"


def test_wire_and_unwire_are_inverse_on_their_own():
    for raw in (None, b"a", b"a\n", b"a\r\nb\r\n"):
        new, rec = claude_md.wire(raw, None)
        assert new is not None and rec
        assert claude_md.wire(new, rec) == (None, rec)
        assert claude_md.unwire(new, rec) == raw
