"""swarmgate/digest.py gives hashlib's digest (the keys of state already on disk depend on it)."""
from __future__ import annotations

import hashlib

import pytest

from swarmgate.digest import sha256_hex


@pytest.mark.parametrize("data", [b"", b"/home/user/repo", "ünïcode \udcff".encode("utf-8", "surrogateescape")])
def test_the_digest_is_hashlibs(data):
    assert sha256_hex(data) == hashlib.sha256(data).hexdigest()
