"""The decision log's summary, pure: counts per guard code (each code by its own decision), per
decision, agent and client, latency per event (median, p95), the most refused inputs. `swarmgate
report` prints it (log_view) and the session-flow model carries it (flow_model)."""
from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from swarmgate import decision_log


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of non-empty values."""
    xs = sorted(values)
    if not xs:
        return 0.0

    k = max(0, min(len(xs) - 1, math.ceil(q / 100.0 * len(xs)) - 1))
    return float(xs[k])


def code_decisions(r: dict, advisory: frozenset | set = frozenset()) -> dict:
    """{code: that code's own decision} of one log record.

    Records carry ``findings`` (each code's decision) since the log learnt it; for older ones
    an advisory code (a report that never refuses: R01, C01, ...) counts as "context" and every
    other code as the combined decision, which is then the best that is known.
    """
    own = r.get("findings")
    dec = str(r.get("decision", "?"))
    out = {}
    for code in r.get("codes") or []:
        code = str(code)
        if isinstance(own, dict) and isinstance(own.get(code), str):
            out[code] = own[code]
        else:
            out[code] = "context" if code in advisory else dec
    return out


def summarize(records: Sequence[dict], top: int = 10, advisory: frozenset | set = frozenset()) -> dict:
    """Counts per (code, decision), latency per event, the most refused inputs (pure).

    Per code, each code's own decision is counted (``code_decisions``): an advisory report on a
    call that another guard refused is counted as context, not as a refusal.
    """
    per_code: dict[str, dict[str, int]] = {}
    per_decision: dict[str, int] = {}
    per_agent: dict[str, dict[str, int]] = {}
    per_client: dict[str, dict[str, int]] = {}
    latency: dict[str, list[float]] = {}
    refused: dict[str, int] = {}
    for r in records:
        dec = str(r.get("decision", "?"))
        per_decision[dec] = per_decision.get(dec, 0) + 1
        actor = str(r.get("agent_type") or ("subagent" if r.get("agent_id") else "main"))
        per_agent.setdefault(actor, {})
        per_agent[actor][dec] = per_agent[actor].get(dec, 0) + 1
        row = per_client.setdefault(decision_log.client_of(r), {})
        row[dec] = row.get(dec, 0) + 1
        own = code_decisions(r, advisory) or {"-": dec}
        for code, cdec in own.items():
            row = per_code.setdefault(code, {})
            row[cdec] = row.get(cdec, 0) + 1
        try:
            latency.setdefault(str(r.get("event", "?")), []).append(float(r.get("latency_ms")))
        except (TypeError, ValueError):
            pass
        if dec in ("deny", "block", "ask") and r.get("input"):
            refused[str(r["input"])] = refused.get(str(r["input"]), 0) + 1
    lat = {ev: {"n": len(xs), "median_ms": round(statistics.median(xs), 2), "p95_ms": round(percentile(xs, 95), 2)}
           for ev, xs in sorted(latency.items()) if xs}
    top_refused = sorted(refused.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
    return {"total": len(records), "decisions": dict(sorted(per_decision.items())),
            "codes": {c: dict(sorted(v.items())) for c, v in sorted(per_code.items())},
            "agents": {a: dict(sorted(v.items())) for a, v in sorted(per_agent.items())},
            "clients": {c: dict(sorted(v.items())) for c, v in sorted(per_client.items())},
            "latency": lat, "top_refused": [{"input": k, "count": n} for k, n in top_refused]}
