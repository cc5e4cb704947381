from swarmgate.config import defaults
from swarmgate.hooks.dispatch_prompt_parse import labelled_value, parse_int, parse_with_config, prompt_digest


def p(text):
    return parse_with_config(text, defaults())


def test_heavy_line_exact_or_bulleted():
    assert p("task: x\nheavy test: do not run\n").has_heavy_line
    assert p("- heavy test: do not run").has_heavy_line
    assert p("  1. `heavy test: do not run`").has_heavy_line
    assert not p("heavy test: run them all").has_heavy_line
    assert not p("Heavy Test: do not run").has_heavy_line  # exact wording
    assert not p("note: heavy test: do not run").has_heavy_line


def test_thread_cap_lines_and_reason_on_the_next_line():
    caps = p("thread cap: 31\n").thread_caps
    assert [(c.line_no, c.value, c.reason) for c in caps] == [(1, 31, None)]
    caps = p("a\nThread cap: 16\nthread cap reason: the tool deadlocks above 16\n").thread_caps
    assert [(c.line_no, c.value, c.reason) for c in caps] == [(2, 16, "the tool deadlocks above 16")]
    caps = p("thread cap: 16\n\nthread cap reason: too far\n").thread_caps
    assert caps[0].reason is None  # only the very next line counts
    assert p("thread cap: 31 (fewer if busy)").thread_caps[0].value is None
    assert p("thread cap：31").thread_caps[0].value == 31  # full-width colon
    # the reason line is not itself a thread cap line
    assert len(p("thread cap: 16\nthread cap reason: x\n").thread_caps) == 1


def test_parse_int_is_strict():
    assert parse_int("31") == 31
    assert parse_int("`31`") == 31
    for bad in ("31 threads", "3 1", "31.0", "-31", "thirty-one", "", "31,32"):
        assert parse_int(bad) is None, bad


def test_scratch_lines_and_placeholders():
    r = p("scratch: /work/tmp/a\n- scratch: `rel/b`\nscratch:\nscratch: <path fill in>\n"
          "task: <task fill in>\nVec<u8>\n")
    assert r.scratch == ["/work/tmp/a", "rel/b", "<path fill in>"]
    assert r.placeholders == ["<path fill in>", "<task fill in>"]


def test_labelled_value_needs_the_colon():
    assert labelled_value("scratch: x", "scratch") == "x"
    assert labelled_value("scratchpad: x", "scratch") is None
    assert labelled_value("scratch x", "scratch") is None


def test_prompt_digest_ignores_outer_whitespace():
    assert prompt_digest("a\nb\n") == prompt_digest("  a\nb")
    assert prompt_digest("a") != prompt_digest("b")
