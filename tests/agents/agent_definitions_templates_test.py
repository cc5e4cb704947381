"""The rules/ templates: every agent definition parses as Claude Code needs it, every rule it
lists exists, and dispatch-prompt prints a skeleton D20 refuses until it is filled."""
from __future__ import annotations

import re
import subprocess

import pytest

from tests.agents.support import RULES, tool
from swarmgate.agents import agent_definitions as ad
from swarmgate.agents.dispatch_prompt import PLACEHOLDER_PATTERN, find_placeholders, skeleton
from swarmgate.config import defaults, load_config
from tests.builders import THREADS

TYPES = ["implementer", "researcher", "tool-implementer", "experiment-designer", "experiment-runner",
         "mutation-triage", "rescanner", "write-back", "prosecution", "attack", "defence", "clerk"]
# Claude Code 2.1.332's tool names (sdk-tools.d.ts and the binary's tool table)
CLAUDE_TOOLS = {"Agent", "Task", "Bash", "BashOutput", "KillShell", "Edit", "MultiEdit", "Read", "Write",
                "NotebookEdit", "Glob", "Grep", "LS", "WebFetch", "WebSearch", "TodoWrite", "Monitor",
                "SendMessage", "TaskStop", "AskUserQuestion", "ListAgents"}
YAML_SPECIAL_START = tuple("[]{}&*!|>'\"%@`,?#")


def agent_files():
    return sorted((RULES / "agents").glob("*.md"))


def test_every_seed_type_is_shipped_and_nothing_else():
    assert sorted(p.stem for p in agent_files()) == sorted(TYPES)


@pytest.mark.parametrize("path", agent_files(), ids=lambda p: p.stem)
def test_agent_definition_is_valid_claude_code_frontmatter(path):
    text = path.read_text()
    fields, body = ad.parse_frontmatter(text, str(path))
    assert fields["name"] == path.stem
    assert len(fields["description"]) > 20
    assert fields["tools"], "every type lists its tools (no implicit all-tools)"
    unknown = set(fields["tools"]) - CLAUDE_TOOLS
    assert not unknown, f"{path.name}: unknown tool names {unknown}"
    assert "Agent" not in fields["tools"] and "Task" not in fields["tools"], "subagents do not dispatch"
    assert fields["rules"], "every type lists the rules SubagentStart gives it"
    for rel in fields["rules"]:
        assert (RULES / rel).is_file(), f"{path.name} lists {rel}, which rules/ does not ship"
    assert body.strip()
    # the frontmatter must also be what a real YAML parser accepts: plain scalars may not
    # hold ': ' or ' #' or start with an indicator; list items that do must be quoted
    lines = text.split("---")[1].strip().splitlines()
    for line in lines:
        if line.startswith("  - "):
            item = line[4:]
            if ": " in item or item.startswith(YAML_SPECIAL_START):
                assert item[0] in "\"'" and item[-1] == item[0], f"{path.name}: quote {item!r}"
            continue
        key, _, value = line.partition(": ")
        value = value.strip()
        if value:
            assert ": " not in value and " #" not in value, f"{path.name}: {key} needs quoting"
            assert not value.startswith(YAML_SPECIAL_START), f"{path.name}: {key} needs quoting"


def test_rules_say_how_and_link_why_to_records():
    for path in [*(RULES / "rules").glob("*.md"), RULES / "agent-common.md", RULES / "main-agent.md"]:
        text = path.read_text()
        assert "read only to trace history" in text and "records/" in text, path.name


def test_every_shipped_rule_is_used_by_some_type():
    used = set()
    for path in agent_files():
        used |= set(ad.parse_frontmatter(path.read_text())[0]["rules"])
    shipped = {f"rules/{p.name}" for p in (RULES / "rules").glob("*.md")}
    assert shipped == used


def test_main_agent_names_the_round_tools():
    text = (RULES / "main-agent.md").read_text()
    assert text.startswith("# Main agent\n\nEvery task enters here.")
    for needle in ("swarmgate records new", "dispatch-prompt", "agent-handover", "SWARMGATE_HEAVY=commit",
                   "run-with-memory-cap", "gate-staged", "SendMessage", "records verdict", "clerk"):
        assert needle in text, needle


def test_agent_common_names_every_shared_constraint():
    text = (RULES / "agent-common.md").read_text()
    for needle in ("heavy test: do not run", "thread cap:", "scratch:", "not deleted: <reason>",
                   "SWARMGATE_RUN_SCOPE=", "Write scope", "timers", ".claude/swarmgate.toml"):
        assert needle in text, needle


@pytest.mark.parametrize("agent_type", TYPES)
def test_dispatch_prompt_prints_a_skeleton_for_every_type(installed, agent_type):
    p = subprocess.run([tool("dispatch-prompt"), agent_type, "--repo", str(installed)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    lines = out.splitlines()
    assert "heavy test: do not run" in lines
    assert f"thread cap: {THREADS}" in lines   # [threads] heavy_default = "auto" on this machine
    # the skeleton as printed is refused by D20: placeholders match the agreed regex
    assert re.search(PLACEHOLDER_PATTERN, out)
    assert find_placeholders(out)[0] == "<task fill in>"
    agent = ad.load_agent(str(installed), defaults(), agent_type)
    assert ("scratch: <path fill in>" in lines) == agent["builds"]
    for extra in agent["prompt_lines"]:
        assert extra in lines
    filled = re.sub(PLACEHOLDER_PATTERN, "done", out)
    assert find_placeholders(filled) == []


def test_skeleton_reads_the_config(installed):
    (installed / ".claude" / "swarmgate.toml").write_text(
        '[threads]\nheavy_default = 7\n[dispatch]\nheavy_line = "HEAVY: NO"\nscratch_line = "tmpdir"\n')
    text = skeleton(str(installed), load_config(str(installed)), "implementer")
    assert "HEAVY: NO\n" in text and "thread cap: 7\n" in text and "tmpdir: <path fill in>\n" in text


def test_unknown_and_denied_types_list_the_known_ones(installed):
    for name, why in (("nosuch", "no agent type 'nosuch'"), ("general-purpose", "may not be dispatched")):
        p = subprocess.run([tool("dispatch-prompt"), name, "--repo", str(installed)],
                           capture_output=True, text=True)
        assert p.returncode == 251 and p.stdout == ""
        assert why in p.stderr and "implementer" in p.stderr and "clerk" in p.stderr


def test_dispatch_prompt_without_definitions_says_how_to_get_them(repo):
    p = subprocess.run([tool("dispatch-prompt"), "implementer", "--repo", str(repo)],
                       capture_output=True, text=True)
    assert p.returncode == 251 and "swarmgate install" in p.stderr


def test_placeholder_regex_edges():
    assert find_placeholders("a <x fill in> b <y\nfill in> <z <w fill in>") == ["<x fill in>", "<w fill in>"]
    assert find_placeholders("no <placeholder> here, fill in later") == []


def test_frontmatter_parser_errors_name_the_line():
    with pytest.raises(ad.DefinitionError, match="no frontmatter"):
        ad.parse_frontmatter("name: x\n", "a.md")
    with pytest.raises(ad.DefinitionError, match="not closed"):
        ad.parse_frontmatter("---\nname: x\n", "a.md")
    with pytest.raises(ad.DefinitionError, match=r"a.md:3: expected `key: value`"):
        ad.parse_frontmatter("---\nname: x\njunk\n---\n", "a.md")
    with pytest.raises(ad.DefinitionError, match="builds"):
        ad.parse_frontmatter("---\nbuilds: maybe\n---\n", "a.md")
    fields, body = ad.parse_frontmatter(
        "---\nname: x\ntools: [Read, 'Bash']\nrules:\n  - rules/a.md\n  - \"rules/b.md\"\n---\nbody\n")
    assert fields["tools"] == ["Read", "Bash"] and fields["rules"] == ["rules/a.md", "rules/b.md"]
    assert body == "body"


def test_subagent_context_is_common_plus_the_types_rules(installed):
    text = ad.subagent_context(str(installed), defaults(), "defence")
    assert text.startswith("## .claude/agent-common.md\n\n# Every subagent")
    assert "## .claude/rules/arguing.md" in text and "## .claude/rules/reviewing.md" in text
    assert "implementing.md" not in text
    # the main agent's rules are not given to subagents
    assert "Every task enters here" not in text


def test_subagent_context_names_missing_pieces(installed):
    (installed / ".claude" / "rules" / "arguing.md").unlink()
    text = ad.subagent_context(str(installed), defaults(), "attack")
    assert "rule rules/arguing.md listed by attack is missing" in text
    (installed / ".claude" / "agent-common.md").unlink()
    assert "agent-common.md is missing" in ad.subagent_context(str(installed), defaults(), "nosuch")


def test_known_types_and_load_agent_refuse_paths(installed):
    assert ad.known_types(str(installed), defaults()) == sorted(TYPES)
    assert ad.load_agent(str(installed), defaults(), "../agents/implementer") is None
    assert ad.load_agent(str(installed), defaults(), "general-purpose") is None
