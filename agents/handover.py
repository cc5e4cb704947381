"""`agent-handover AGENT_ID`: a hand-over file from a subagent's transcript (SPEC §6.2).

When a subagent stops half-way, the main agent does not read its
conversation and retell it (every retelling loses something). This tool
extracts, mechanically:

- the dispatch prompt (the subagent's first user message);
- the files it wrote or edited: Write / Edit / MultiEdit / NotebookEdit calls,
  and the shell writes found in its Bash/Monitor commands (redirections,
  ``tee``, and, when swarmgate's bash parser is available, ``cp``/``mv``/...
  destinations);
- each command it ran, with its output (matched by ``tool_use_id``), trimmed
  to its head and tail with a marker in between;
- its last message;

into Markdown on stdout or ``--out FILE`` (written atomically), for the next
dispatch's prompt to point at.

Transcripts (Claude Code 2.1.332): ``<projects>/<cwd with every non-alphanumeric
character as ->/<session>/subagents/agent-<id>.jsonl``, where ``<projects>`` is
``$CLAUDE_CONFIG_DIR/projects`` or ``~/.claude/projects``; ``--transcripts DIR``
overrides it. Assistant entries hold ``tool_use`` blocks in
``message.content``; user entries hold ``tool_result`` blocks. Other entry
types (attachments, api requests) are skipped, and so are torn or garbage
lines (counted in the header).
"""
from __future__ import annotations

import json
import os
import sys

from swarmgate.front_door import entry

FILE_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")
SHELL_TOOLS = ("Bash", "Monitor")
HEAD_LINES = 30
TAIL_LINES = 30
MAX_LINE_CHARS = 400
MAX_OUTPUT_CHARS = 6000


class HandoverError(Exception):
    """No transcript, or nothing to hand over; the message says where it looked."""


# --- finding the transcript ---

def projects_dir() -> str:
    base = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    return os.path.join(base, "projects")


def project_dir_name(cwd: str) -> str:
    """Claude Code's directory name for a project: every character but [A-Za-z0-9-] becomes -."""
    return "".join(c if (c.isascii() and c.isalnum()) or c == "-" else "-" for c in cwd)


def _agent_file(agent_id: str) -> str:
    aid = agent_id[len("agent-"):] if agent_id.startswith("agent-") else agent_id
    if aid.endswith(".jsonl"):
        aid = aid[:-6]
    return f"agent-{aid}.jsonl"


def find_transcript(agent_id: str, session: str | None = None, transcripts: str | None = None,
                    cwds: list[str] | None = None) -> str:
    """Path of the subagent's transcript. Raises HandoverError naming where it looked.

    ``agent_id`` may also be a path to a .jsonl file. Without ``session`` every
    session of the project is searched; when the project directory is not
    found under the expected name, every project is searched. With several
    matches the newest wins.
    """
    import glob

    if agent_id.endswith(".jsonl") and os.path.isfile(agent_id):
        return os.path.abspath(agent_id)
    if not agent_id or "/" in agent_id:
        raise HandoverError(f"agent id {agent_id!r}: expected the id SubagentStop reported "
                            f"(e.g. a312abff3e81cf34f) or a path to a .jsonl transcript")
    name = _agent_file(agent_id)
    root = transcripts or projects_dir()
    sess = session or "*"
    patterns = []
    for cwd in cwds or [os.getcwd()]:
        patterns.append(os.path.join(root, project_dir_name(cwd), sess, "subagents", name))
    patterns += [
        os.path.join(root, "*", sess, "subagents", name),  # another project name scheme
        os.path.join(root, sess, "subagents", name),       # DIR is one project's directory
        os.path.join(root, "subagents", name),             # DIR is one session's directory
        os.path.join(root, name),                          # DIR holds the file
    ]
    for pat in patterns:
        found = [p for p in glob.glob(pat) if os.path.isfile(p)]
        if found:
            found.sort(key=lambda p: os.path.getmtime(p), reverse=True)
            return found[0]
    raise HandoverError(f"no transcript {name} found under {root} (looked for "
                        f"{patterns[0]}{' and in every project' if len(patterns) > 1 else ''}); "
                        f"pass --session ID or --transcripts DIR")


# --- reading it ---

def read_entries(path: str) -> tuple[list[dict], int]:
    """(entries, unreadable line count). Torn and garbage lines are skipped and counted."""
    from swarmgate.bounded_read import TRANSCRIPT_MAX, read_bytes

    entries: list[dict] = []
    bad = 0
    for raw in read_bytes(path, TRANSCRIPT_MAX).split(b"\n"):
        line = raw.decode("utf-8", errors="replace").strip()
        if not line:
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            bad += 1
            continue
        if isinstance(rec, dict):
            entries.append(rec)
        else:
            bad += 1
    return entries, bad


def _blocks(entry: dict) -> list:
    msg = entry.get("message")
    if not isinstance(msg, dict):
        return []
    content = msg.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def _text_of(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for b in content:
            if isinstance(b, dict):
                if b.get("type") == "text" and isinstance(b.get("text"), str):
                    parts.append(b["text"])
                elif b.get("type") == "image":
                    parts.append("[image]")
            elif isinstance(b, str):
                parts.append(b)
        return "\n".join(parts)
    return "" if content is None else str(content)


def extract(entries: list[dict]) -> dict:
    """The mechanical hand-over from transcript entries.

    Returns {"prompt": str, "session": str, "agent_id": str, "cwd": str,
    "calls": [{"id", "name", "input", "cwd", "result": str|None, "is_error": bool}],
    "last_message": str}.
    """
    out: dict = {"prompt": "", "session": "", "agent_id": "", "cwd": "", "calls": [],
                 "last_message": ""}
    by_id: dict[str, dict] = {}
    for e in entries:
        etype = e.get("type")
        if etype not in ("user", "assistant"):
            continue
        out["session"] = out["session"] or str(e.get("sessionId") or "")
        out["agent_id"] = out["agent_id"] or str(e.get("agentId") or "")
        out["cwd"] = out["cwd"] or str(e.get("cwd") or "")
        blocks = _blocks(e)
        if etype == "user":
            results = [b for b in blocks if b.get("type") == "tool_result"]
            if not results and not out["prompt"] and not e.get("isMeta"):
                text = _text_of(e["message"].get("content"))
                if text.strip():
                    out["prompt"] = text
            for b in results:
                call = by_id.get(str(b.get("tool_use_id") or ""))
                if call is not None:
                    call["result"] = _text_of(b.get("content"))
                    call["is_error"] = bool(b.get("is_error"))
            continue
        texts = [b.get("text") for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)]
        if any(t.strip() for t in texts):
            out["last_message"] = "\n".join(t for t in texts if t.strip())
        for b in blocks:
            if b.get("type") != "tool_use":
                continue
            call = {"id": str(b.get("id") or ""), "name": str(b.get("name") or ""),
                    "input": b.get("input") if isinstance(b.get("input"), dict) else {},
                    "cwd": str(e.get("cwd") or out["cwd"]), "result": None, "is_error": False}
            out["calls"].append(call)
            if call["id"]:
                by_id[call["id"]] = call
    return out


# --- shell writes ---

def _fallback_writes(command: str) -> list[tuple[str, str]]:
    """Redirection and tee targets by a quote-aware scan (when the bash parser is absent)."""
    import shlex

    lex = shlex.shlex(command, posix=True, punctuation_chars=";&|()<>")
    lex.whitespace_split = True
    lex.commenters = ""
    try:
        tokens = list(lex)
    except ValueError:  # unbalanced quotes: scan what we can
        tokens = command.split()
    out: list[tuple[str, str]] = []
    ops = (">", ">>", ">|", "&>", "&>>", ">&")
    i = 0
    at_start = True
    while i < len(tokens):
        t = tokens[i]
        if t in ops and i + 1 < len(tokens):
            target = tokens[i + 1]
            if t == ">&" and (target.isdigit() or target == "-"):
                i += 2
                continue
            if not target.startswith(("&", "/dev/null", "/dev/std")):
                out.append((target, f"redirection `{t} {target}`"))
            i += 2
            continue
        if t in (";", "&&", "||", "|", "&", "(", ")", "|&"):
            at_start = True
            i += 1
            continue
        if at_start and t == "tee":
            j = i + 1
            while j < len(tokens) and tokens[j] not in (";", "&&", "||", "|", "&", ")", ">", ">>"):
                if not tokens[j].startswith("-"):
                    out.append((tokens[j], f"`tee {tokens[j]}`"))
                j += 1
            i = j
            continue
        at_start = "=" in t and not t.startswith("=") and at_start  # assignments keep the start
        i += 1
    return [(p, how) for p, how in out if p not in ("/dev/null", "/dev/stdout", "/dev/stderr", "-")]


def shell_write_targets(command: str, cwd: str = "") -> list[tuple[str, str]]:
    """[(path as written, how)] files a shell command writes.

    Uses swarmgate's bash parser (``swarmgate.hooks.bash_tree.analyze`` and
    ``shell_writes.shell_writes``) when present, else a quote-aware scan of
    redirections and ``tee``.
    """
    try:
        from swarmgate.hooks.bash_tree import analyze
        from swarmgate.hooks.shell_writes import shell_writes
    except Exception:  # noqa: BLE001 - the parser is optional here
        return _fallback_writes(command)
    try:
        analysis = analyze(command, cwd=cwd or ".")
        return [(path, how) for _cmd, path, how, _here in shell_writes(analysis, cwd or ".")]
    except Exception:  # noqa: BLE001 - a parser failure must not lose the hand-over
        return _fallback_writes(command)


def _resolve(path: str, cwd: str) -> str:
    if not path or path.startswith(("/", "$", "~")) or not cwd:
        return path
    return os.path.normpath(os.path.join(cwd, path))


def files_written(calls: list[dict]) -> list[tuple[str, list[str]]]:
    """[(path, [how, ...])] in first-seen order."""
    seen: dict[str, list[str]] = {}
    for c in calls:
        inp = c["input"]
        if c["name"] in FILE_TOOLS:
            p = inp.get("file_path") or inp.get("notebook_path")
            if isinstance(p, str) and p:
                how = c["name"] + (" (refused)" if c["is_error"] else "")
                seen.setdefault(_resolve(p, c["cwd"]), []).append(how)
        elif c["name"] in SHELL_TOOLS:
            cmd = inp.get("command")
            if isinstance(cmd, str) and cmd.strip():
                for p, how in shell_write_targets(cmd, c["cwd"]):
                    seen.setdefault(_resolve(p, c["cwd"]), []).append(
                        "shell " + how + (" (command failed or refused)" if c["is_error"] else ""))
    return list(seen.items())


# --- rendering ---

def trim(text: str, head: int = HEAD_LINES, tail: int = TAIL_LINES,
         max_line: int = MAX_LINE_CHARS, max_chars: int = MAX_OUTPUT_CHARS) -> str:
    """Head and tail of ``text`` with a marker saying how much was left out."""
    lines = text.splitlines()
    lines = [ln if len(ln) <= max_line else ln[:max_line] + f" [... {len(ln) - max_line} chars trimmed]"
             for ln in lines]
    if len(lines) > head + tail:
        cut = len(lines) - head - tail
        lines = lines[:head] + [f"[... {cut} lines trimmed ...]"] + lines[-tail:]
    out = "\n".join(lines)
    if len(out) > max_chars:
        half = max_chars // 2
        out = out[:half] + f"\n[... {len(out) - 2 * half} chars trimmed ...]\n" + out[-half:]
    return out


def _fence(text: str, lang: str = "") -> str:
    longest = run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    f = "`" * max(3, longest + 1)
    return f"{f}{lang}\n{text.rstrip()}\n{f}"


def _inline(text: str) -> str:
    one = " ".join(text.split())
    if len(one) > 160:
        one = one[:157] + "..."
    return "`" + one.replace("`", "'") + "`"


def _meta(transcript: str) -> dict:
    path = transcript[:-len(".jsonl")] + ".meta.json" if transcript.endswith(".jsonl") else ""
    from swarmgate.bounded_read import read_text
    try:
        data = json.loads(read_text(path, 1 << 20, errors="strict"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def render(transcript: str, data: dict, bad_lines: int = 0, meta: dict | None = None) -> str:
    meta = meta or {}
    aid = data["agent_id"] or os.path.basename(transcript)[len("agent-"):-len(".jsonl")]
    atype = meta.get("agentType") or ""
    out = [f"# Hand-over: agent {aid}" + (f" ({atype})" if atype else ""), ""]
    out.append(f"- transcript: `{transcript}`")
    if data["session"]:
        out.append(f"- session: {data['session']}")
    if meta.get("description"):
        out.append(f"- dispatched as: {meta['description']}")
    if "finished" in meta:
        out.append(f"- finished: {'yes' if meta.get('finished') else 'no (it stopped half-way)'}")
    if data["cwd"]:
        out.append(f"- working directory: `{data['cwd']}`")
    if bad_lines:
        out.append(f"- {bad_lines} unreadable transcript line(s) skipped (torn or not JSON)")
    out.append("- extracted mechanically by `agent-handover`; nothing here was retold by the main agent")
    out += ["", "## Dispatch prompt", "", _fence(data["prompt"] or "(no dispatch prompt found)", "text"), ""]

    files = files_written(data["calls"])
    out.append(f"## Files written or edited ({len(files)})")
    out.append("")
    if files:
        for path, hows in files:
            counted: dict[str, int] = {}
            for h in hows:
                counted[h] = counted.get(h, 0) + 1
            desc = ", ".join(h + (f" ×{n}" if n > 1 else "") for h, n in counted.items())
            out.append(f"- `{path}`: {desc}")
    else:
        out.append("(none)")
    out.append("")

    shells = [c for c in data["calls"] if c["name"] in SHELL_TOOLS]
    out.append(f"## Commands ({len(shells)})")
    out.append("")
    if not shells:
        out.append("(none)")
        out.append("")
    for n, c in enumerate(shells, 1):
        cmd = c["input"].get("command") if isinstance(c["input"].get("command"), str) else ""
        if c["result"] is None:
            status = "no result in the transcript (still running when it stopped?)"
        elif c["is_error"]:
            status = "error"
        else:
            status = "ok"
        desc = c["input"].get("description")
        head = f"### {n}. {c['name']}: {status}"
        if isinstance(desc, str) and desc.strip():
            head += f" ({' '.join(desc.split())[:100]})"
        out += [head, "", _fence(cmd, "bash"), ""]
        if c["result"] is not None:
            out += ["Output:", "", _fence(trim(c["result"]) or "(empty)"), ""]
    out += ["## Last message", "", _fence(data["last_message"] or "(none)", "text"), ""]
    return "\n".join(out)


def handover(agent_id: str, session: str | None = None, transcripts: str | None = None,
             cwds: list[str] | None = None) -> str:
    """The hand-over Markdown for ``agent_id`` (raises HandoverError)."""
    path = find_transcript(agent_id, session, transcripts, cwds)
    try:
        entries, bad = read_entries(path)
    except OSError as e:
        raise HandoverError(f"cannot read {path}: {e}") from None
    data = extract(entries)
    if not data["prompt"] and not data["calls"] and not data["last_message"]:
        raise HandoverError(f"{path} holds no conversation ({len(entries)} entries, {bad} unreadable lines)")
    return render(path, data, bad, _meta(path))


@entry("agent-handover")
def main(argv: list[str] | None = None) -> int:
    from swarmgate.config import find_repo
    from swarmgate.tool_parser import ToolParser

    p = ToolParser(
        prog="agent-handover",
        description="Extract a subagent's dispatch prompt, files written, commands with trimmed "
                    "output and last message from its transcript, for the next dispatch.")
    p.add_argument("agent_id", help="the subagent's id (agent_id in the hook payloads), or a .jsonl path")
    p.add_argument("--session", help="session id (default: search every session of this project)")
    p.add_argument("--transcripts", help="projects directory (default: $CLAUDE_CONFIG_DIR/projects "
                                         "or ~/.claude/projects)")
    p.add_argument("--out", help="write the hand-over here (atomically) instead of stdout")
    args = p.parse_args(argv)
    cwds = [os.getcwd()]
    repo = find_repo()
    if repo not in cwds:
        cwds.append(repo)
    try:
        text = handover(args.agent_id, args.session, args.transcripts, cwds)
    except HandoverError as e:
        print(f"agent-handover: {e}", file=sys.stderr)
        return 1
    if args.out:
        from swarmgate.statefile import StateError, write_text_atomic
        try:
            write_text_atomic(os.path.abspath(args.out), text)
        except (OSError, StateError) as e:
            print(f"agent-handover: cannot write {args.out}: {e}", file=sys.stderr)
            return 1
        print(f"agent-handover: wrote {args.out}", file=sys.stderr)
        return 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
