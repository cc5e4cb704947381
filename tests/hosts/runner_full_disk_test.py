"""run-with-memory-cap with its state directory on a full filesystem: 251 and one line naming the path and
the errno (it was a traceback from ledger.save and exit 1, which reads as "the command failed"); the
command never runs uncapped. A real full filesystem (a small tmpfs, root) and real cgroups."""
import pytest

from tests import builders as build


@pytest.fixture
def full_state(tmp_path):
    with build.full_filesystem(tmp_path / "full") as state:
        yield state


def test_a_full_state_filesystem_is_251_in_one_line_and_the_command_does_not_run(sandbox, full_state, tmp_path):
    ran = tmp_path / "ran"
    r = sandbox.run(["64M", "--", "sh", "-c", f"touch {ran}"], SWARMGATE_STATE_DIR=str(full_state))
    err = r.stderr.decode(errors="replace")
    assert r.returncode == 251, err
    assert "Traceback" not in err and "No space left on device (ENOSPC)" in err and str(full_state) in err, err
    assert len([line for line in err.splitlines() if "exit 251" in line]) == 1, err
    assert not ran.exists()  # refused before it started: never a run outside a capped cgroup
