"""Strings shaped like keys and tokens, and their redaction (K03 in hooks/secret_guards.py).

``redact(value)`` returns (the value with every key-shaped string replaced by ``[redacted: KIND]``,
how many were replaced), walking strings inside lists and dicts (an MCP tool's result is JSON);
the shapes: PEM private keys, AWS access key ids and secret keys, GitHub, GitLab, Slack, npm,
PyPI, OpenAI and Anthropic tokens, Google API keys, JSON web tokens, and `password=` / `token=` /
`secret=` assignments with a long value. Loads `re`: only for the tool output it reads.
"""
from __future__ import annotations

import re

SHAPES = (
    ("private key", re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----.*?-----END [A-Z0-9 ]*PRIVATE KEY"
                               r"( BLOCK)?-----", re.S)),
    ("AWS access key id", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("AWS secret key", re.compile(r"(?i)(aws_secret_access_key\s*[=:]\s*)[A-Za-z0-9/+=]{40}")),
    ("GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{60,})\b")),
    ("GitLab token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}\b")),
    ("Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b")),
    ("npm token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
    ("PyPI token", re.compile(r"\bpypi-[A-Za-z0-9_-]{50,}\b")),
    ("API key", re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}\b")),
    ("Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("JSON web token", re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\b")),
    ("secret value", re.compile(r"(?i)\b((?:password|passwd|secret|token|api_key|apikey|auth)[A-Za-z_]*\s*[=:]\s*"
                                r"[\"']?)[^\s\"']{12,}")),
)


def _one(text: str) -> tuple[str, int]:
    n = 0
    for kind, pat in SHAPES:
        def sub(m, kind=kind, pat=pat):
            nonlocal n
            n += 1
            keep = m.group(1) if pat.groups and m.group(1) and kind in ("AWS secret key", "secret value") else ""
            return f"{keep}[redacted: {kind}]"
        text = pat.sub(sub, text)
    return text, n


def redact(value, depth: int = 0):
    """(value with key-shaped strings replaced, how many): strings, lists, dicts (module doc)."""
    if depth > 32:
        return value, 0
    if isinstance(value, str):
        return _one(value)
    if isinstance(value, list):
        out, n = [], 0
        for v in value:
            r, k = redact(v, depth + 1)
            out.append(r)
            n += k
        return out, n
    if isinstance(value, dict):
        out_d, n = {}, 0
        for key, v in value.items():
            r, k = redact(v, depth + 1)
            out_d[key] = r
            n += k
        return out_d, n
    return value, 0
