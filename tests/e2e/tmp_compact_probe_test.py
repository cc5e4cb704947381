import json, re
from messages_api import Conversation, done, dispatch


def test_probe(claude_repo):
    claude_repo.add_agent("e2e-worker")
    (claude_repo.repo / "wip.txt").write_text("x\n")
    run = claude_repo.run("script:c1", [
        Conversation("script:c1", [dispatch("e2e-worker", "script:c1-sub\nheavy test: do not run", name="w1"), done("first")]),
        Conversation("script:c1-sub", [done("sub done")])])
    sid = run.session_id
    run2 = claude_repo.run("/compact", [Conversation("script:c1", [done("summary of the work")]),
                                        Conversation("", [done("summary")])], args=("--resume", sid))
    print("NREQ", len(run2.requests))
    for i, r in enumerate(run2.requests):
        raw = json.dumps(r.body)
        for m in re.finditer(r"swarmgate session start \((\w+)\)", raw):
            print("SRC", i, m.group(1))
    raw = json.dumps(run2.requests[-1].body)
    j = raw.rfind("swarmgate session start (compact)")
    if j >= 0:
        print("CTX", json.loads('"' + raw[j:j+2500].rsplit('"', 1)[0] + '"') if False else raw[j:j+2200].encode().decode('unicode_escape'))
