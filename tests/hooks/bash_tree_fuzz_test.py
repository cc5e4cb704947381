"""Property and fuzz tests: analyze() never raises, always stops, never silently misses.

The time checks below are hang detectors (a generous multiple of the budget),
not performance assertions: the analyser must stop, however hostile the text.
"""
from __future__ import annotations

import os
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from swarmgate.hooks import bash_lexical, bash_parse, bash_tree, bash_walker
from swarmgate.hooks.bash_tree import Analysis, analyze

HANG = 10.0   # seconds: far above any budget used here; only a hang can exceed it
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def timed(text, cwd="/", **kw):
    t = time.monotonic()
    an = analyze(text, cwd=cwd, **kw)
    took = time.monotonic() - t
    assert isinstance(an, Analysis)
    assert took < HANG, f"analyze took {took:.1f}s"
    return an


# ---------------------------------------------------------------- random input

@FAST
@given(st.text(max_size=300))
def test_random_text_never_raises(text):
    timed(text, budget_s=0.5)


@FAST
@given(st.binary(max_size=300))
def test_random_bytes_never_raise(data):
    timed(data.decode("latin-1"), budget_s=0.5)


_PIECES = ["cargo", "test", "--workspace", " ", " ", ";", "&&", "||", "|", "&", "(", ")", "{", "}",
           "$(", "`", "'", '"', "\\", "<<EOF\n", "\nEOF\n", "\n", "if", "then", "fi", "while",
           "do", "done", "for x in", "case", "esac", ")", ";;", "bash -c", "eval", "$X", "${Y}",
           "<(", ">(", ">", "2>&1", "=", "A=1", "#", "!", "[[", "]]", "((", "))", "function f",
           "xargs", "env", "sudo", "timeout 5", "find . -exec", "\\;", "<<<", "$((1+", "~"]


@FAST
@given(st.lists(st.sampled_from(_PIECES), max_size=60))
def test_shell_shaped_noise_never_raises(pieces):
    timed("".join(pieces), budget_s=0.5)


# ---------------------------------------------------------------- no silent bypass

_WRAPS = [
    "{x}", "env B=2 {x}", "nice -n 5 {x}", "nohup {x} &", "timeout 60 {x}",
    "time {x}", "command {x}", "exec {x}", "sudo {x}", "setsid {x}", "xargs -a f {x}",
    "bash -c '{x}'", "sh -lc '{x}'", "eval '{x}'", "( {x} )", "{{ {x}; }}", "echo a | {x}",
    "{x} | tail -5", "true && {x}", "false || {x}", "if true; then {x}; fi",
    "while true; do {x}; break; done", "for i in 1; do {x}; done", "echo $({x})",
    "echo `{x}`", "f() {{ {x}; }}; f", "run-with-memory-cap 8G -- {x}", "watch -n 1 {x}",
    "find . -exec {x} \\;", "bash <<EOF\n{x}\nEOF\n", "echo '{x}' | bash",
    "case a in a) {x};; esac", "stdbuf -oL {x}", "[[ -f x ]] && {x}",
]
_EXECS = {"env", "nice", "nohup", "timeout", "command", "exec", "sudo", "setsid", "xargs",
          "run-with-memory-cap", "watch", "find", "stdbuf"}


def _simple(text):
    return not any(c in text for c in "|;&<>(){}\n`$") and text.split()[0] not in ("if", "while", "for", "case")


_HEAVY = ["cargo test --workspace", "/usr/bin/cargo test --workspace", "\\cargo test --workspace",
          "c'argo' test --workspace"]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from(_WRAPS), min_size=1, max_size=4), st.sampled_from(_HEAVY),
       st.booleans())
def test_heavy_command_is_found_through_any_nesting(wraps, heavy, prefix):
    text = heavy
    for w in wraps:
        if ("'" in w and "'" in text) or ("`" in w and "`" in text):
            continue   # unescaped nesting of quotes/backquotes changes the meaning (bash too)
        if w.split()[0] in _EXECS and not _simple(text):
            continue   # these run one simple command, not shell syntax (bash too)
        if w.startswith(("watch", "parallel")) and any(q in text for q in "'\"\\"):
            continue   # watch joins its words for sh -c: quotes are lost (bash too)
        if "\n" in text and not w.endswith("{x}"):
            continue   # a heredoc must end its line: text after it is another command
        text = w.format(x=text)
    if prefix:   # an assignment prefix is only an assignment at the shell level
        text = "A=1 " + text
    an = timed(text, budget_s=2.0, max_depth=8)
    found = any(c.name == "cargo" and c.args[:1] == ["test"] and "--workspace" in c.args
                for c in an.commands)
    assert found or an.unverifiable, (text, [c.words for c in an.commands])


_DATA_CMDS = ["echo {q}", "printf '%s\\n' {q}", "grep -rn {q} .", "rg {q} src", "git commit -m {q}",
              "git log --grep={q}", "cat <<'EOF'\n{raw}\nEOF", "# {raw}"]


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(_DATA_CMDS),
       st.text(alphabet=st.characters(blacklist_characters="'\x00\r"), max_size=60))
def test_single_quoted_data_is_never_a_command(template, payload):
    payload = payload.replace("EOF", "E0F")
    text = template.format(q="'" + payload + "'", raw=payload.replace("\n", " "))
    an = timed(text, budget_s=1.0)
    assert all(c.name in ("echo", "printf", "grep", "rg", "git", "cat") for c in an.commands), \
        (text, [c.words for c in an.commands])


# ---------------------------------------------------------------- adversarial

def test_thousand_levels_of_command_substitution():
    text = "echo " + "$(echo " * 1000 + "x" + ")" * 1000
    an = timed(text, budget_s=2.0)
    assert an.unverifiable and an.problems


def test_thousand_levels_of_backticks_and_subshells():
    timed("(" * 1000 + "cargo test" + ")" * 1000, budget_s=2.0)
    an = timed("{ " * 1000 + "cargo test" + "; }" * 1000, budget_s=2.0)
    assert an.unverifiable or any(c.name == "cargo" for c in an.commands)
    timed("bash -c '" + "eval " * 500 + "cargo test'", budget_s=2.0)


def test_hundred_kilobyte_command():
    text = "echo " + "word " * 20000 + "; cargo test --workspace"
    an = timed(text, budget_s=2.0)
    assert any(c.name == "cargo" for c in an.commands) or an.unverifiable
    text = "; ".join(f"echo {i} | grep -v x" for i in range(6000))
    timed(text, budget_s=1.0)


def test_unterminated_heredoc_runs_to_the_end_like_bash():
    an = timed("bash <<EOF\ncargo test --workspace", budget_s=1.0)
    assert any(c.name == "cargo" for c in an.commands)
    an = timed("cat <<EOF\ncargo test --workspace", budget_s=1.0)
    assert [c.name for c in an.commands] == ["cat"] and not an.unverifiable


def test_unbalanced_quotes_are_unverifiable():
    for text in ["echo 'a", 'echo "a', "echo `a", "echo $(a", "echo ${a"]:
        an = timed(text, budget_s=1.0)
        assert an.unverifiable, text


def test_scripts_sourcing_each_other_in_a_cycle(tmp_path):
    for k in range(5):
        (tmp_path / f"s{k}.sh").write_text(f"source ./s{(k + 1) % 5}.sh\n. ./s{k}.sh\nbash s{(k + 2) % 5}.sh\n")
    an = timed("source ./s0.sh", str(tmp_path), budget_s=2.0)
    assert sorted(an.scripts_read) == sorted(str(tmp_path / f"s{k}.sh") for k in range(5))


def test_script_reading_many_scripts_stays_bounded(tmp_path):
    # each script runs ten others: without "each file once" this is 10**6 reads
    for k in range(30):
        body = "".join(f"./s{(k * 7 + j) % 30}.sh\n" for j in range(10))
        p = tmp_path / f"s{k}.sh"
        p.write_text(body)
        p.chmod(0o755)
    an = timed("./s0.sh", str(tmp_path), budget_s=2.0, max_depth=6)
    assert len(an.scripts_read) == len(set(an.scripts_read)) <= 30


def test_binary_file_at_command_position(tmp_path):
    exe = tmp_path / "tool"
    exe.write_bytes(b"\x7fELF" + os.urandom(4096))
    exe.chmod(0o755)
    an = timed("./tool --x", str(tmp_path), budget_s=1.0)
    assert an.scripts_read == [] and any(c.name == "tool" for c in an.commands)
    an = timed("bash ./tool", str(tmp_path), budget_s=1.0)
    assert an.unverifiable
    an = timed("source ./tool", str(tmp_path), budget_s=1.0)
    assert an.unverifiable


def test_huge_script_is_not_read(tmp_path):
    p = tmp_path / "huge.sh"
    with open(p, "w") as fh:
        fh.write("echo x\n" * 400_000)   # ~2.8 MB
    p.chmod(0o755)
    an = timed("./huge.sh", str(tmp_path), budget_s=2.0)
    assert an.unverifiable and an.scripts_read == []


def test_rs_file_mistaken_for_script_cannot_recurse(tmp_path):
    """Seed 003: a .rs file read as a shell script, paths in it read as scripts, 6 levels, 100 s."""
    src = tmp_path / "src"
    src.mkdir()
    for k in range(8):
        (src / f"m{k}.rs").write_text(
            f"// see `src/m{k + 1}.rs` and \"`src/m{(k + 2) % 8}.rs`\"\nfn f() {{ let s = \"$(x)\"; }}\n")
    an = timed('git commit -m "fix `src/m0.rs` and `bash src/m1.rs`"', str(tmp_path), budget_s=2.0)
    assert len(an.scripts_read) == len(set(an.scripts_read))
    assert str(src / "m0.rs") not in an.scripts_read   # not executable, no shebang: not a script


@pytest.mark.parametrize("budget", [0.01, 0.05])
def test_tiny_budgets_stop_cleanly(tmp_path, budget):
    """A budget too small for the whole command ends the reading without an exception, and never
    silently: the heavy command at the end is either read, or the command is unverifiable (refused)
    because the budget ran out, and says so."""
    text = "; ".join(f"bash -c 'echo {i} | cat'" for i in range(400)) + "; cargo test --workspace"
    an = timed(text, str(tmp_path), budget_s=budget)
    reached = any(c.words[:3] == ["cargo", "test", "--workspace"] for c in an.commands)
    ran_out = [u for u in an.unverifiable if f"did not finish within {budget:g} s" in u.reason]
    assert reached or ran_out, (an.commands[-3:], an.unverifiable)
    if ran_out:
        assert any(f"time budget of {budget:g} s exhausted" in p for p in an.problems), an.problems
    else:
        assert len([c for c in an.commands if c.words[:1] == ["cat"]]) == 400   # read in full


# ---------------------------------------------------------------- the two parsers agree

def _lexical_view(text, cwd="/"):
    seq, unsure = bash_lexical.parse(text)
    w = bash_walker.Walker(bash_tree.Analysis(), cwd, 8, float("inf"), 1 << 20)
    w.source = text   # as bash_tree.analyze sets it
    w.walk(seq, bash_walker.Ctx())
    w.finish(bash_walker.Ctx())
    return [_view(c) for c in w.an.commands], unsure


def _view(c):
    return (c.words, c.via, c.background, [(r.op, r.target, r.fd) for r in c.redirects], c.assignments)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from(_WRAPS), min_size=1, max_size=4),
       st.sampled_from(["cargo test --workspace", "ls -la 'a b' \"c $d\"", "echo x > f 2>&1",
                        "A=1 cmd <<< 'x y'", "a | b && c || d &"]))
def test_lexical_fallback_reads_what_bashlex_reads(wraps, text):
    """Where bashlex parses, the fallback must see the same commands, the same way."""
    for w in wraps:
        if ("'" in w and "'" in text) or ("`" in w and "`" in text):
            continue
        if "\n" in text and not w.endswith("{x}"):
            continue
        text = w.format(x=text)
    bash_parse.clear_cache()
    an = analyze(text, cwd="/", max_depth=8, parser="auto")
    if an.parsed_by != "bashlex":
        return
    lexical, unsure = _lexical_view(text)
    assert unsure is None
    assert lexical == [_view(c) for c in an.commands], text


def test_nested_constant_loops_do_not_multiply():
    text = "".join(f"for v{k} in 1 2 3 4 5 6 7 8; do " for k in range(8)) + "echo x" + "; done" * 8
    an = timed(text, budget_s=2.0)
    assert len(an.commands) <= 64 and not an.unverifiable


# ---------------------------------------------------------------- real scripts as a corpus

def _system_shell_lines(limit: int) -> list[str]:
    """Lines of the machine's own shell scripts (/usr/bin, /usr/sbin): real-world syntax."""
    lines: set[str] = set()
    for d in ("/usr/bin", "/usr/sbin"):
        try:
            names = sorted(os.listdir(d))
        except OSError:
            continue
        for name in names:
            p = os.path.join(d, name)
            try:
                if not os.path.isfile(p) or os.path.getsize(p) > 60000:
                    continue
                with open(p, "rb") as fh:
                    head = fh.read(64)
                if not head.startswith(b"#!") or b"sh" not in head.split(b"\n")[0] or \
                        any(x in head.split(b"\n")[0] for x in (b"perl", b"python", b"ruby", b"node")):
                    continue
                with open(p, encoding="utf-8") as fh:
                    for line in fh.read().split("\n"):
                        line = line.strip()
                        if line and not line.startswith("#") and len(line) < 300:
                            lines.add(line)
            except (OSError, UnicodeDecodeError):
                continue
    ordered = sorted(lines)
    step = max(1, len(ordered) // limit)
    return ordered[::step][:limit]


def test_both_parsers_agree_on_the_machines_own_scripts():
    """Where bashlex's tree is trusted, the fallback reads exactly the same commands
    (this comparison found five bashlex bugs that are now refused)."""
    lines = _system_shell_lines(600)
    if len(lines) < 100:
        pytest.skip(f"only {len(lines)} shell-script lines on this machine")
    compared = 0
    for text in lines:
        bash_parse.clear_cache()
        an = analyze(text, cwd="/tmp", budget_s=2.0, parser="auto")
        if an.parsed_by != "bashlex":
            continue
        compared += 1
        lexical, unsure = _lexical_view(text, "/tmp")
        assert unsure is None, text
        assert lexical == [_view(c) for c in an.commands], text
    assert compared > 50
