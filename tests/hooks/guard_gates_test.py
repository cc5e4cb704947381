"""hooks/guard_gates.py: a gated guard module (registry.GATES) is loaded on a shell call only when its
gate holds, and that changes no finding: each gated check and act starts with its gate, and every
corpus command (workarounds, benign controls, real-world commands), for the main agent and a
subagent, gets the same findings from the gated guards as from all of them."""
from __future__ import annotations

import ast
import importlib
import inspect
import subprocess
import textwrap
import tomllib

import pytest

from swarmgate.config import Config, validate
from swarmgate.hook_engine import evaluate, gated_guards
from swarmgate.hook_protocol import HookEvent
from swarmgate.hooks import guard_gates, precious_places, registry, secret_paths, secret_reads
from tests.corpus import benign, counts, workarounds
from tests.corpus.corpus_test import corpus_repo  # noqa: F401 - the corpus's repository (env, config)
from tests.corpus.model import CONFIG


def _gate_name(test: ast.expr) -> str | None:
    """X for `not guard_gates.X(event, config)`."""
    if not (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and isinstance(test.operand, ast.Call)):
        return None
    f = test.operand.func
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "guard_gates":
        return f.attr
    return None


def _first_test(fn) -> ast.stmt:
    body = ast.parse(textwrap.dedent(inspect.getsource(fn))).body[0].body
    rest = [s for s in body if not isinstance(s, (ast.Import, ast.ImportFrom))
            and not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    return rest[0]


@pytest.mark.parametrize("module", sorted(registry.GATES))
def test_each_gated_check_and_act_starts_with_its_gate(module):
    gate = registry.GATES[module]
    assert callable(getattr(guard_gates, gate))
    mod = importlib.import_module(module)
    assert mod.GUARDS
    shell = [g for g in mod.GUARDS if g.applies("PreToolUse", "Bash") or g.applies("PreToolUse", "Monitor")]
    assert shell
    for g in shell:   # the guards a gate decides for (hooks/registry.gated: PreToolUse on Bash or Monitor)
        for fn in (g.check, g.act):
            if fn is None:
                continue
            first = _first_test(fn)
            assert isinstance(first, ast.If) and _gate_name(first.test) == gate, \
                f"{module}.{fn.__name__} must start with `if not guard_gates.{gate}(event, config): return None`"
            ret = first.body[0]
            assert isinstance(ret, ast.Return) and (ret.value is None or getattr(ret.value, "value", 0) is None)


def test_the_first_test_check_can_fail():
    def check(event, config):
        from swarmgate.break_switch import broken  # noqa: PLC0415 - the shape of a check
        if broken("x"):
            return None
        return None
    assert _gate_name(getattr(_first_test(check), "test", None)) is None


@pytest.fixture
def repo(corpus_repo, monkeypatch):  # noqa: F811 - the fixture imported above
    monkeypatch.setattr(registry, "_cache", None)   # gates apply only while modules load on demand
    subprocess.run(["git", "init", "-q", str(corpus_repo)], check=True)
    return corpus_repo


def _event(repo, command: str, subagent: bool, background: bool = False) -> HookEvent:
    p = {"session_id": "gates", "transcript_path": "", "cwd": str(repo), "hook_event_name": "PreToolUse",
         "tool_name": "Bash", "tool_input": {"command": command, "run_in_background": background}}
    if subagent:
        p.update(agent_id="gates-agent", agent_type="implementer")
    return HookEvent("PreToolUse", p, str(repo))


def _view(findings) -> list:
    return [(f.code, f.decision, f.message) for f in findings]


VERIFYING = CONFIG.replace("verify_patterns = []",
                           'verify_patterns = ["pytest", "cargo test", "npm test", "make check*"]')


@pytest.mark.parametrize("text", [CONFIG, VERIFYING], ids=["corpus-config", "with-verify-patterns"])
@pytest.mark.parametrize("subagent", [False, True], ids=["main", "subagent"])
def test_gates_change_no_finding_on_the_corpus(repo, subagent, text):
    assert VERIFYING != CONFIG
    raw = tomllib.loads(text)
    config = Config(validate(raw), None, str(repo), raw)
    # R01 reads its own gate through the host_resources derivation (the same function), and its
    # report reads the machine: left out of both sides
    everything = [g for g in registry.guards_for("PreToolUse", "Bash") if g.code != "R01"]
    commands = [(e.command, getattr(e, "files", None) or {}) for e in workarounds.ENTRIES + benign.ENTRIES]
    commands += [(x["command"], {}) for x in counts.real_world()]
    differ, skipped = [], 0
    for k, (command, files) in enumerate(commands):
        for rel, body in files.items():
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            (repo / rel).write_text(body)
        background = k % 7 == 0   # some calls run in the background (B31 reads that)
        want = _view(evaluate(_event(repo, command, subagent, background), config, everything))
        event = _event(repo, command, subagent, background)
        loaded = gated_guards(event, config)
        skipped += len(loaded) < len(everything) + 1
        got = _view(evaluate(event, config, [g for g in loaded if g.code != "R01"]))
        if got != want:
            differ.append(f"{command[:120]!r}: {want} != {got}")
    assert not differ, f"{len(differ)} of {len(commands)}:\n" + "\n".join(differ[:20])
    assert skipped > len(commands) // 2   # the gates do skip modules (else this proves nothing)


def test_a_benign_command_loads_no_gated_module(repo):
    raw = tomllib.loads(CONFIG)
    config = Config(validate(raw), None, str(repo), raw)
    codes = {g.code for g in gated_guards(_event(repo, "ls -la src", False), config)}
    assert {"B10", "B30", "B31", "T01", "W01", "A02", "R01", "X01", "X02"}.isdisjoint(codes), codes
    assert {"B01", "G01"} <= codes
    for command, code in [("while true; do sleep 5; done", "B30"), ("sleep 300; echo done", "T01"),
                          ("crontab -e", "T01"), ("cargo test --workspace", "R01"),
                          ("echo x > out.txt", "W01"), ("python3 -c 'open(\"a\", \"w\")'", "W01")]:
        assert code in {g.code for g in gated_guards(_event(repo, command, False), config)}, command
    raw = tomllib.loads(CONFIG.replace("verify_patterns = []", 'verify_patterns = ["pytest"]'))
    config = Config(validate(raw), None, str(repo), raw)
    assert "B10" in {g.code for g in gated_guards(_event(repo, "pytest tests/x", False), config)}
    assert "B10" not in {g.code for g in gated_guards(_event(repo, "ls", False), config)}


def test_the_gates_copies_of_the_loss_and_secret_tables_are_theirs():
    """guard_gates keeps the formatter names (L01) and the secret markers (K01, K02) so a benign call
    loads neither module; the copies equal the originals."""
    assert guard_gates._FORMATTER_NAMES == precious_places.FORMATTERS
    assert guard_gates.SECRET_MARKERS == secret_paths.MARKERS
    assert guard_gates.PRINTER_MARKERS == secret_reads.PRINTER_MARKERS
