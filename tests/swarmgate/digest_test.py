"""swarmgate/digest.py gives hashlib's digest (the keys of state already on disk depend on it)."""
from __future__ import annotations

import hashlib

import pytest

from swarmgate.digest import sha1_hex, sha256_hex


@pytest.mark.parametrize("data", [b"", b"/home/user/repo", "ünïcode \udcff".encode("utf-8", "surrogateescape")])
def test_the_digest_is_hashlibs(data):
    assert sha256_hex(data) == hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("data", [b"", b"blob 3\0abc", bytes(range(256)) * 100])
def test_the_sha1_is_hashlibs_and_names_a_blob_as_git_does(data):
    assert sha1_hex(data) == hashlib.sha1(data).hexdigest()
    assert sha1_hex(b"blob 0\0") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"  # git's empty blob
