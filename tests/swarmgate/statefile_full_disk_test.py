"""A state write on a full filesystem is one StateError naming the path and the errno, never a traceback.

The filesystem is real: a 256 KiB tmpfs mounted for the test (root) and filled to ENOSPC.
"""
import os

import pytest

from swarmgate import statefile
from tests import builders as build


@pytest.fixture
def full_fs(tmp_path):
    with build.full_filesystem(tmp_path / "full") as state:
        yield state


def test_a_write_on_a_full_filesystem_is_a_state_write_error_naming_path_and_errno(full_fs):
    path = full_fs / "ledger.json"
    with pytest.raises(statefile.StateWriteError) as e:
        statefile.write_json_atomic(path, {"bookings": {"x": "y" * 100_000}})
    assert str(e.value) == f"cannot write {path}: No space left on device (ENOSPC)"
    assert isinstance(e.value, statefile.StateError) and isinstance(e.value, OSError) and e.value.errno == 28
    assert os.listdir(full_fs) == []  # the temp file went with the failure: nothing half-written is left


def test_a_failed_write_leaves_the_old_file_whole(full_fs):
    path = full_fs / "history.json"
    os.unlink(full_fs.parent / "filler")  # room for the old file, then full again
    statefile.write_json_atomic(path, {"a": 1})
    build.fill(full_fs.parent / "filler")
    with pytest.raises(statefile.StateWriteError, match="ENOSPC"):
        statefile.write_json_atomic(path, {"a": 2, "pad": "z" * 100_000})
    assert statefile.read_json(path, default=None) == {"a": 1}
