"""SHA-256 hex digests for the hook's paths, without `import hashlib`.

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
