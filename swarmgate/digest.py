"""SHA-256 (and git's SHA-1 blob ids) as hex digests for the hot paths, without `import hashlib`.

hashlib loads OpenSSL's bindings (and blake2) before it hashes anything: milliseconds of a hook call
that needs one digest of a path or a prompt. CPython's own `_sha256` gives the same digest.
"""
from __future__ import annotations

try:
    from _sha256 import sha256 as _sha256
except ImportError:  # pragma: no cover - an interpreter without the builtin module
    from hashlib import sha256 as _sha256


def sha256_hex(data: bytes) -> str:
    """hashlib.sha256(data).hexdigest()."""
    return _sha256(data).hexdigest()


def sha1_hex(data: bytes) -> str:
    """hashlib.sha1(data).hexdigest() (what git names a blob by: sha1 of b"blob N\\0" + content).

    `_sha1` is imported here, not at the top: the Agent hook loads this module for SHA-256 on every
    dispatch and never asks for a SHA-1 (its import budget); gate-staged, which does, pays one import.
    """
    try:
        from _sha1 import sha1
    except ImportError:  # pragma: no cover - an interpreter without the builtin module
        from hashlib import sha1
    return sha1(data).hexdigest()
