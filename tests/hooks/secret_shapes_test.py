"""hooks/secret_shapes.py: key-shaped strings found and redacted inside JSON-shaped values."""
from __future__ import annotations

import pytest

from swarmgate.hook_protocol import render
from swarmgate.hooks.secret_shapes import redact


@pytest.mark.parametrize("text,kind", [
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----", "private key"),
    ("id AKIAIOSFODNN7EXAMPLE", "AWS access key id"),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "AWS secret key"),
    ("ghp_" + "a" * 36, "GitHub token"), ("xoxb-1234567890-abcdefghij", "Slack token"),
    ("sk-ant-" + "b" * 30, "API key"), ("AIza" + "c" * 35, "Google API key"),
    ("password=correcthorsebattery", "secret value"),
])
def test_shapes(text, kind):
    out, n = redact(text)
    assert n == 1 and f"[redacted: {kind}]" in out


def test_structure_is_kept_and_plain_text_untouched():
    value = {"content": [{"type": "text", "text": "AKIAIOSFODNN7EXAMPLE"}], "n": 3, "ok": True}
    out, n = redact(value)
    assert n == 1 and out["n"] == 3 and out["ok"] is True and out["content"][0]["type"] == "text"
    assert redact("def main():\n    token = get_token()\n") == ("def main():\n    token = get_token()\n", 0)


def test_the_hook_answers_with_the_redacted_output():
    out = render("PostToolUse", "allow", "", "", updated_input={"tool_response": ["x"]})
    assert out == {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedMCPToolOutput": ["x"]}}
    assert "updatedMCPToolOutput" not in str(render("PostToolUse", "allow", "", "ctx"))
