"""`swarmgate report --html FILE`: the session flow as one self-contained page.

Pure: ``render(model) -> str``. Inline CSS and inline SVG only: no script, no
font, no image, no link to anything outside the file (a test checks that no
``http``/``src=``/``@import`` appears), so the page opens the same offline,
attached to an issue, or years later.

Sections: the agents' lanes on one time axis (dispatch → start → each tool
call → refusals with their codes → hand-back), the round's graph planned vs
done with verify results, the runner's jobs (booked vs peak; 250 and 254
marked), alerts, token usage per agent and per agent type, the hook latency
distribution, and the decisions per guard code. Every mark carries a
``<title>`` with its details (shown on hover).
"""
from __future__ import annotations

import html
import time

from swarmgate.sizes import human

LABEL_W = 230
PLOT_W = 920
LANE_H = 46
TOP = 34
TOOL_COLORS = {"Bash": "#2b6cb0", "Monitor": "#2b6cb0", "Write": "#2f855a", "Edit": "#2f855a",
               "MultiEdit": "#2f855a", "NotebookEdit": "#2f855a", "Read": "#718096", "Agent": "#6b46c1",
               "Task": "#6b46c1", "SendMessage": "#b7791f"}
VERDICT_COLORS = {"close": "#c6f6d5", "open": "#edf2f7", "next-round": "#fefcbf", "drop": "#e2e8f0"}
VERIFY_COLORS = {"pass": "#2f855a", "fail": "#c53030", "oom": "#c53030", "timeout": "#c05621",
                 "pushed-out": "#c05621", "refused": "#975a16", "not run": "#718096"}

CSS = """
body{font:14px/1.45 -apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;color:#1a202c;margin:0;background:#f7fafc}
header{background:#1a202c;color:#f7fafc;padding:18px 28px}
header h1{margin:0 0 4px;font-size:20px} header p{margin:2px 0;color:#cbd5e0;font-size:13px}
main{padding:8px 28px 40px} section{background:#fff;border:1px solid #e2e8f0;border-radius:8px;margin:18px 0;padding:14px 18px}
h2{font-size:16px;margin:0 0 10px} h3{font-size:14px;margin:12px 0 6px}
.cards{display:flex;flex-wrap:wrap;gap:10px;margin-top:12px}
.card{background:#2d3748;border-radius:6px;padding:6px 12px;min-width:110px}
.card b{display:block;font-size:18px;color:#fff} .card span{font-size:12px;color:#a0aec0}
table{border-collapse:collapse;width:100%;font-size:13px} th,td{border-bottom:1px solid #edf2f7;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f7fafc;font-weight:600} td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.badge{display:inline-block;border-radius:4px;padding:0 6px;font-size:12px;font-weight:600;color:#fff}
.b-oom{background:#c53030} .b-push{background:#c05621} .b-ok{background:#2f855a} .b-fail{background:#744210} .b-other{background:#718096}
tr.oom td{background:#fff5f5} tr.pushed td{background:#fffaf0}
.muted{color:#718096} .legend span{margin-right:14px;font-size:12px} code{font-size:12px;background:#edf2f7;padding:0 3px;border-radius:3px}
svg text{font-family:inherit} .problems li{color:#975a16}
.hists{display:flex;flex-wrap:wrap;gap:8px 28px} .hist h3{margin:4px 0 0} .hist p{margin:0 0 2px;font-size:12px}
"""


def esc(text) -> str:
    return html.escape("" if text is None else str(text), quote=True)


def _clock(t: float | None, with_date: bool = False) -> str:
    if t is None:
        return "?"
    fmt = "%Y-%m-%d %H:%M:%S" if with_date else "%H:%M:%S"
    return time.strftime(fmt, time.localtime(t)) + (f".{int(t * 1000) % 1000:03d}" if not with_date else "")


def _size(n) -> str:
    if n is None:
        return "-"
    return human(int(n))


def _num(n) -> str:
    return f"{int(n):,}" if isinstance(n, (int, float)) else "-"


# --- lanes ---------------------------------------------------------------------------------

def _ticks(span: float) -> float:
    for step in (0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 86400):
        if span / step <= 10:
            return step
    return span / 10


LABEL_ROW_H = 13   # a row of labels above a lane's marks; a lane grows by a row where labels would meet
LABEL_GAP = 4      # px kept free between two labels of a row
FAILED = "#dd6b20"  # a call that ran and failed (exit != 0, 127: not found)


def label_width(text: str, size: int = 11) -> float:
    """The width a bold label takes, measured on the widest of the page's fonts (DejaVu Sans
    Bold: about 0.7 em for capitals and digits), plus a little room."""
    return len(text) * size * 0.7 + 4


def place_labels(labels: list[dict], lo: float, hi: float) -> list[dict]:
    """Rows for labels that would meet (pure). Each label (``cx``: where its mark is, ``text``,
    ``size``) gets ``x0``/``x1`` (centred on its mark, kept inside ``lo``..``hi``) and ``row``:
    from left to right, the lowest row where it meets no label already placed."""
    rows: list[float] = []  # per row, where its last label ends
    out = []
    for lab in _merge_repeats(sorted(labels, key=lambda v: v["cx"])):
        w = label_width(lab["text"], lab.get("size", 11))
        x0 = min(max(lab["cx"] - w / 2, lo), max(hi - w, lo))
        row = next((i for i, end in enumerate(rows) if x0 >= end + LABEL_GAP), len(rows))
        if row == len(rows):
            rows.append(0.0)
        rows[row] = x0 + w
        out.append({**lab, "x0": x0, "x1": x0 + w, "row": row})
    return out


def _merge_repeats(labels: list[dict]) -> list[dict]:
    """Labels of the same text whose marks are closer than the label is wide: one label, "×N"."""
    out: list[dict] = []
    for lab in labels:  # left to right
        near = next((o for o in reversed(out) if o["base"] == lab["text"] and o["kind"] == lab.get("kind")
                     and lab["cx"] - o["cx"] < label_width(o["text"], o.get("size", 11))), None)
        if near is not None:
            near["count"] += 1
            near["text"] = f'{near["base"]} ×{near["count"]}'
            continue
        out.append({**lab, "base": lab["text"], "count": 1})
    return out


def lanes_layout(session: dict) -> dict | None:
    """Where the lanes and their labels go (pure): the time scale, each lane's top, height and
    middle, and each label's box (``x0``, ``x1``, ``y0``, ``y1``, baseline ``y``). No two boxes
    meet: a lane whose labels would meet gets a row more above its marks. None without times."""
    lanes = session["lanes"]
    t0, t1 = session.get("start"), session.get("end")
    if t0 is None or t1 is None:
        return None
    span = max(t1 - t0, 0.5)
    t0 -= span * 0.02
    span *= 1.04

    def x(t: float) -> float:
        return LABEL_W + (t - t0) / span * PLOT_W

    top = TOP
    out = []
    for lane in lanes:
        labels = []
        for e in lane["events"]:
            if e.get("t") is None:
                continue
            if e["kind"] in ("refusal", "stop-refused", "handback-refused"):
                labels.append({"cx": x(e["t"]), "text": ", ".join(e.get("codes") or []) or "refused",
                               "size": 11, "kind": "refusal"})
            elif e.get("failed"):
                labels.append({"cx": x(e["t"]), "text": f"exit {e['exit']}" if e.get("exit") is not None
                               else "failed", "size": 10, "kind": "failed"})
        boxes = place_labels(labels, LABEL_W, LABEL_W + PLOT_W + 20)
        extra = max((b["row"] for b in boxes), default=0) * LABEL_ROW_H
        mid = top + extra + LANE_H / 2
        for b in boxes:
            b["y"] = mid - 11 - b["row"] * LABEL_ROW_H   # the baseline
            b["y0"], b["y1"] = b["y"] - b["size"] * 0.8, b["y"] + b["size"] * 0.25
        out.append({"id": lane["id"], "top": top, "h": LANE_H + extra, "y": mid, "labels": boxes})
        top += LANE_H + extra
    return {"t0": t0, "span": span, "x": x, "lanes": out, "height": top + 12}


def lanes_svg(session: dict) -> str:
    lanes = session["lanes"]
    lay = lanes_layout(session)
    if lay is None:
        return "<p class='muted'>no timed events for this session</p>"
    t0, span, x, height = lay["t0"], lay["span"], lay["x"], lay["height"]
    out = [f'<svg class="lanes" width="{LABEL_W + PLOT_W + 20}" '
           f'height="{height:.0f}" role="img" aria-label="agents on a time axis">']
    step = _ticks(span)
    k = int(t0 // step) + 1
    while k * step <= t0 + span:
        tx = x(k * step)
        out.append(f'<line x1="{tx:.1f}" y1="{TOP - 6}" x2="{tx:.1f}" y2="{height - 8:.0f}" stroke="#edf2f7"/>')
        out.append(f'<text x="{tx:.1f}" y="{TOP - 12}" font-size="10" text-anchor="middle" fill="#718096">'
                   f'+{k * step - session["start"]:.1f}s</text>')
        k += 1
    y_of = {}
    for i, (lane, place) in enumerate(zip(lanes, lay["lanes"])):
        y = place["y"]
        y_of[lane["id"]] = y
        fill = "#f7fafc" if i % 2 == 0 else "#ffffff"
        tok = lane.get("tokens") or {}
        out.append(f'<g class="lane" data-agent="{esc(lane["id"])}" data-type="{esc(lane["type"])}">')
        out.append(f'<rect x="0" y="{place["top"]:.1f}" width="{LABEL_W + PLOT_W + 20}" height="{place["h"]}" '
                   f'fill="{fill}"/>')
        label = "main agent" if lane["id"] == "main" else f'{lane["type"]} {lane["id"][:10]}'
        failed = f', {lane["failed"]} failed' if lane.get("failed") else ""
        out.append(f'<text x="8" y="{y - 3:.1f}" font-size="13" font-weight="600">{esc(label)}</text>')
        out.append(f'<text x="8" y="{y + 13:.1f}" font-size="11" fill="#718096">{lane["tool_calls"]} calls, '
                   f'{lane["refusals"]} refused{failed}, {_num(tok.get("total", 0))} tokens</text>')
        if lane["first"] is not None:
            out.append(f'<line x1="{x(lane["first"]):.1f}" y1="{y:.1f}" x2="{x(lane["last"]):.1f}" y2="{y:.1f}" '
                       f'stroke="#cbd5e0" stroke-width="2"/>')
        out.append(_lane_marks(lane, x, y))
        for b in place["labels"]:
            color = "#c53030" if b["kind"] == "refusal" else "#9c4221"
            out.append(f'<text class="code {b["kind"]}" x="{b["x0"] + 2:.1f}" y="{b["y"]:.1f}" '
                       f'font-size="{b["size"]}" font-weight="700" fill="{color}">{esc(b["text"])}</text>')
        out.append("</g>")
    # dispatch connectors: from the dispatch in the main lane to where the subagent's lane begins
    main_y = y_of.get("main")
    for lane in lanes[1:]:
        d = next((e for e in lane["events"] if e["kind"] == "dispatch" and e.get("t") is not None), None)
        if d is None or main_y is None:
            continue
        y = y_of[lane["id"]]
        out.append(f'<line class="connector" x1="{x(d["t"]):.1f}" y1="{main_y + 8:.1f}" x2="{x(d["t"]):.1f}" '
                   f'y2="{y - 8:.1f}" stroke="#6b46c1" stroke-dasharray="3,3"/>')
    out.append("</svg>")
    return "".join(out)


def _lane_marks(lane: dict, x, y: float) -> str:
    out = []
    for e in lane["events"]:
        t = e.get("t")
        if t is None:
            continue
        kind = e["kind"]
        failed = f' failed (exit {e.get("exit") if e.get("exit") is not None else "?"}): {e.get("error") or ""}' \
            if e.get("failed") else ""
        tip = f'{_clock(t)} {kind}' + (f' {e.get("tool")}' if e.get("tool") else "") + \
              (f' [{", ".join(e.get("codes") or [])}]' if e.get("codes") else "") + \
              (f': {e.get("text")}' if e.get("text") else "") + failed
        title = f"<title>{esc(tip)}</title>"
        cx = x(t)
        if kind == "tool" or (kind == "dispatch" and e.get("id")):
            end = e.get("end") or t
            w = max(x(end) - cx, 3.0)
            color = "#e53e3e" if e.get("refused") else FAILED if e.get("failed") \
                else TOOL_COLORS.get(e.get("tool"), "#4a5568")
            if kind == "dispatch":
                out.append(f'<path class="mark dispatch{" failed" if e.get("failed") else ""}" '
                           f'd="M{cx:.1f},{y - 9:.1f} l7,9 l-7,9 l-7,-9 z" '
                           f'fill="{FAILED if e.get("failed") else "#6b46c1"}">{title}</path>')
            elif e.get("failed"):  # hatched with a dark edge, so it reads as failed in grey print too
                out.append(f'<rect class="mark tool failed" data-exit="{esc(e.get("exit"))}" x="{cx:.1f}" '
                           f'y="{y - 6:.1f}" width="{w:.1f}" height="12" rx="2" fill="{color}" stroke="#7b341e" '
                           f'stroke-width="1.5">{title}</rect>'
                           f'<path d="M{cx + 1:.1f},{y - 5:.1f} l{max(w - 2, 1):.1f},10 m0,-10 l-{max(w - 2, 1):.1f},10" '
                           f'stroke="#7b341e" stroke-width="1.2"/>')
            else:
                out.append(f'<rect class="mark tool" x="{cx:.1f}" y="{y - 6:.1f}" width="{w:.1f}" height="12" '
                           f'rx="2" fill="{color}" opacity="0.85">{title}</rect>')
        elif kind == "dispatch":
            out.append(f'<path class="mark dispatched" d="M{cx:.1f},{y - 8:.1f} l6,8 l-6,8 l-6,-8 z" fill="none" '
                       f'stroke="#6b46c1" stroke-width="2">{title}</path>')
        elif kind == "start":
            out.append(f'<path class="mark start" d="M{cx:.1f},{y - 7:.1f} l10,7 l-10,7 z" fill="#38a169">'
                       f'{title}</path>')
        elif kind in ("refusal", "stop-refused", "handback-refused"):
            codes = ", ".join(e.get("codes") or []) or "refused"
            out.append(f'<g class="refusal" data-codes="{esc(codes)}"><circle cx="{cx:.1f}" cy="{y:.1f}" r="7" '
                       f'fill="#e53e3e">{title}</circle></g>')
        elif kind in ("handback", "stop"):
            out.append(f'<rect class="mark {kind}" x="{cx - 5:.1f}" y="{y - 5:.1f}" width="10" height="10" '
                       f'fill="#1a202c">{title}</rect>')
    return "".join(out)


def legend() -> str:
    items = [("#6b46c1", "dispatch (◆ in the main lane, ◇ where the subagent's lane begins)"),
             ("#38a169", "start"), ("#2b6cb0", "Bash call"), ("#2f855a", "file write"), ("#718096", "other tool"),
             (FAILED, "failed: ran and exited non-zero (with its exit code; 127: command not found)"),
             ("#e53e3e", "refused (with the guard codes)"), ("#1a202c", "hand-back / stop")]
    return "<p class='legend'>" + "".join(f"<span><svg width='12' height='12'><rect width='12' height='12' "
                                            f"fill='{c}'/></svg> {esc(t)}</span>" for c, t in items) + "</p>"


# --- the record's graph ------------------------------------------------------------------

def graph_svg(rec: dict) -> str:
    tasks = rec["tasks"]
    if not tasks:
        return "<p class='muted'>the record has no tasks yet</p>"
    batches = sorted({t["batch"] or 1 for t in tasks})
    col = {b: i for i, b in enumerate(batches)}
    rows: dict[int, int] = {}
    pos = {}
    node_w, node_h, gap_x, gap_y = 210, 54, 70, 18
    for t in tasks:
        c = col[t["batch"] or 1]
        r = rows.get(c, 0)
        rows[c] = r + 1
        pos[t["id"]] = (20 + c * (node_w + gap_x), 30 + r * (node_h + gap_y))
    width = 40 + len(batches) * (node_w + gap_x)
    height = 40 + max(rows.values()) * (node_h + gap_y)
    out = [f'<svg class="graph" width="{width}" height="{height}">',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
           'orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#718096"/></marker></defs>']
    for b, c in col.items():
        out.append(f'<text x="{20 + c * (node_w + gap_x)}" y="18" font-size="12" fill="#718096">batch {b}</text>')
    for t in tasks:
        for d in t["deps"]:
            if d not in pos:
                continue
            x1, y1 = pos[d][0] + node_w, pos[d][1] + node_h / 2
            x2, y2 = pos[t["id"]][0], pos[t["id"]][1] + node_h / 2
            out.append(f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="#718096" marker-end="url(#arrow)"/>')
    for t in tasks:
        x0, y0 = pos[t["id"]]
        v = t.get("verify") or {}
        border = "#c53030" if t.get("unverified") else "#a0aec0"
        tip = f'{t["id"]}: {t["description"]} | verdict {t["verdict"]}' + (f' ({t["note"]})' if t["note"] else "") + \
              (f' | verify `{v.get("command")}`: {v.get("class")}' if v else "") + \
              (f' | S01: {t["unverified"]}' if t.get("unverified") else "")
        out.append(f'<g class="task" data-task="{esc(t["id"])}" data-verdict="{esc(t["verdict"])}">'
                   f'<title>{esc(tip)}</title><rect x="{x0}" y="{y0}" width="{node_w}" height="{node_h}" rx="6" '
                   f'fill="{VERDICT_COLORS.get(t["verdict"], "#fff")}" stroke="{border}" stroke-width="2"/>'
                   f'<text x="{x0 + 8}" y="{y0 + 17}" font-size="12" font-weight="700">{esc(t["id"])} · '
                   f'{esc(t["verdict"])}</text><text x="{x0 + 8}" y="{y0 + 32}" font-size="11">'
                   f'{esc(t["description"][:30])}</text>')
        if v:
            cls = v.get("class") or "not run"
            tries = f" ({v['attempts']} attempt(s))" if v.get("attempts") else ""
            out.append(f'<text x="{x0 + 8}" y="{y0 + 47}" font-size="11" font-weight="600" '
                       f'fill="{VERIFY_COLORS.get(cls, "#4a5568")}">verify: {esc(cls)}{esc(tries)}</text>')
        out.append("</g>")
    out.append("</svg>")
    return "".join(out)


def graph_table(rec: dict) -> str:
    rows = []
    for t in rec["tasks"]:
        v = t.get("verify") or {}
        rows.append(f"<tr><td>{esc(t['id'])}</td><td>{esc(t['description'])}</td><td>{esc(', '.join(t['deps']) or '-')}"
                    f"</td><td class='num'>{esc(t['batch'])}</td><td>{esc(t['verdict'])}"
                    f"{(': ' + esc(t['note'])) if t['note'] else ''}</td>"
                    f"<td>{('<code>' + esc(v.get('command')) + '</code> ' + esc(v.get('class'))) if v else '-'}"
                    f"{(' (exit ' + esc(v.get('exit')) + ')') if v.get('exit') is not None else ''}</td>"
                    f"<td>{esc(t.get('unverified') or '')}</td></tr>")
    return ("<table><tr><th>task</th><th>description</th><th>depends on</th><th class='num'>batch</th>"
            "<th>verdict</th><th>verify (latest)</th><th>S01 says</th></tr>" + "".join(rows) + "</table>")


# --- runs, tokens, alerts, latency, codes ---------------------------------------------------

def runs_table(runs: list[dict]) -> str:
    if not runs:
        return "<p class='muted'>no capped runs in this session</p>"
    rows = []
    for r in runs:
        code = r.get("exit")
        badge = {250: "<span class='badge b-oom'>OOM: hit its own cap (250)</span>",
                 254: "<span class='badge b-push'>pushed out by the total (254)</span>"}.get(
            code, f"<span class='badge {'b-ok' if code == 0 else 'b-fail'}'>{esc(r.get('class'))}</span>")
        booked, peak, cap = r.get("booked") or 0, r.get("peak") or 0, r.get("cap") or 0
        scale = max(cap, booked, peak, 1)
        bar = (f"<svg width='160' height='14'><rect width='{160 * booked / scale:.1f}' height='6' fill='#a0aec0'>"
               f"<title>booked {_size(booked)}</title></rect><rect y='7' width='{160 * peak / scale:.1f}' height='6' "
               f"fill='{'#c53030' if code in (250, 254) else '#2b6cb0'}'><title>peak {_size(peak)}</title></rect>"
               f"<line x1='{160 * cap / scale:.1f}' x2='{160 * cap / scale:.1f}' y1='0' y2='14' stroke='#1a202c'>"
               f"<title>cap {_size(cap)}</title></line></svg>")
        cls = "oom" if code == 250 else ("pushed" if code == 254 else "")
        rows.append(f"<tr class='{cls}'><td>{esc(r.get('label'))}</td><td>{esc(str(r.get('session') or '-')[:8])}</td>"
                    f"<td>{esc(r.get('backend') or 'local')}</td><td class='num'>{_size(cap)}</td>"
                    f"<td class='num'>{_size(booked)}</td><td class='num'>{_size(r.get('peak'))}</td><td>{bar}</td>"
                    f"<td class='num'>{esc(code)}</td><td>{badge}</td>"
                    f"<td class='num'>{float(r.get('duration_s') or 0):.1f}s</td></tr>")
    return ("<table><tr><th>label</th><th>session</th><th>where</th><th class='num'>cap</th><th class='num'>booked</th>"
            "<th class='num'>peak</th><th>booked / peak / cap</th><th class='num'>exit</th><th>class</th>"
            "<th class='num'>took</th></tr>" + "".join(rows) + "</table>")


def tokens_tables(model: dict) -> str:
    rows = []
    for s in model["sessions"]:
        for lane in s["lanes"]:
            tk = lane.get("tokens") or {}
            rows.append(f"<tr><td>{esc(lane['id'][:17])}</td><td>{esc(lane['type'])}</td>"
                        f"<td class='num'>{_num(tk.get('turns', 0))}</td><td class='num'>{_num(tk.get('input_tokens', 0))}</td>"
                        f"<td class='num'>{_num(tk.get('output_tokens', 0))}</td>"
                        f"<td class='num'>{_num(tk.get('cache_creation_input_tokens', 0))}</td>"
                        f"<td class='num'>{_num(tk.get('cache_read_input_tokens', 0))}</td>"
                        f"<td class='num'><b>{_num(tk.get('total', 0))}</b></td></tr>")
    head = ("<tr><th>{0}</th>{1}<th class='num'>turns</th><th class='num'>input</th><th class='num'>output</th>"
            "<th class='num'>cache write</th><th class='num'>cache read</th><th class='num'>total</th></tr>")
    per_agent = "<h3>per agent</h3><table>" + head.format("agent", "<th>type</th>") + "".join(rows) + "</table>"
    trows = []
    for typ, tk in list(model["tokens"]["by_type"].items()) + [("all agents", model["tokens"]["total"])]:
        strong = typ == "all agents"
        cell = (lambda v: f"<b>{_num(v)}</b>") if strong else _num
        trows.append(f"<tr class='{'total' if strong else ''}'><td>{esc(typ)}</td>"
                     f"<td class='num'>{cell(tk.get('turns', 0))}</td><td class='num'>{cell(tk.get('input_tokens', 0))}</td>"
                     f"<td class='num'>{cell(tk.get('output_tokens', 0))}</td>"
                     f"<td class='num'>{cell(tk.get('cache_creation_input_tokens', 0))}</td>"
                     f"<td class='num'>{cell(tk.get('cache_read_input_tokens', 0))}</td>"
                     f"<td class='num' data-total='{esc(typ)}'><b>{_num(tk.get('total', 0))}</b></td></tr>")
    per_type = "<h3>per agent type</h3><table>" + head.format("agent type", "") + "".join(trows) + "</table>"
    return per_agent + per_type


def alerts_table(alerts: list[dict]) -> str:
    if not alerts:
        return "<p class='muted'>no alerts</p>"
    return ("<table><tr><th>time</th><th>kind</th><th>from</th><th>message</th></tr>" + "".join(
        f"<tr><td>{_clock(a.get('time'))}</td><td>{esc(a.get('kind'))}</td><td>{esc(a.get('source'))}</td>"
        f"<td>{esc(a.get('message'))}</td></tr>" for a in alerts) + "</table>")


def latency_svgs(latency: dict) -> str:
    if not latency:
        return "<p class='muted'>no hook calls logged</p>"
    out = []
    for ev, v in latency.items():
        hist = v["histogram"]
        top = max((n for _, _, n in hist), default=1) or 1
        bw, h = 34, 80
        parts = [f"<svg class='latency' data-event='{esc(ev)}' width='{len(hist) * bw + 10}' height='{h + 34}'>"]
        for i, (lo, hi, n) in enumerate(hist):
            bh = h * n / top
            label = f"<{_ms(hi)}" if lo == 0 else (f"<{_ms(hi)}" if hi is not None else f"≥{_ms(lo)}")
            parts.append(f"<rect x='{5 + i * bw}' y='{h - bh + 4:.1f}' width='{bw - 8}' height='{bh:.1f}' fill='#4299e1'>"
                         f"<title>{esc(ev)}: {n} call(s) took {esc(label)} ms</title></rect>"
                         f"<text x='{5 + i * bw + (bw - 8) / 2}' y='{h + 18}' font-size='10' text-anchor='middle' "
                         f"fill='#4a5568'>{esc(label)}</text>"
                         + (f"<text x='{5 + i * bw + (bw - 8) / 2}' y='{h - bh}' font-size='10' text-anchor='middle'>"
                            f"{n}</text>" if n else ""))
        parts.append(f"<text x='5' y='{h + 32}' font-size='10' fill='#718096'>ms (upper bound of each bar)</text>"
                     f"</svg>")
        out.append(f"<div class='hist'><h3>{esc(ev)}</h3><p class='muted'>{v['n']} calls · median "
                   f"{v['median_ms']:.1f} ms · p95 {v['p95_ms']:.1f} ms · max {v['max_ms']:.1f} ms</p>"
                   + "".join(parts) + "</div>")
    return "<div class='hists'>" + "".join(out) + "</div>"


def _ms(n: int) -> str:
    return f"{n // 1000}s" if n >= 1000 else str(n)


def codes_table(summary: dict) -> str:
    codes = summary.get("codes") or {}
    if not codes:
        return "<p class='muted'>no decisions</p>"
    decs = sorted({d for row in codes.values() for d in row})
    return ("<table><tr><th>code</th>" + "".join(f"<th class='num'>{esc(d)}</th>" for d in decs) + "</tr>" + "".join(
        f"<tr><td>{esc(c)}</td>" + "".join(f"<td class='num'>{esc(row.get(d, ''))}</td>" for d in decs) + "</tr>"
        for c, row in codes.items()) + "</table><p class='muted'>Each code is counted by its own decision: an "
        "advisory report (R01, C01, ...) on a call another guard refused counts as context, not as a refusal. "
        "`-`: no guard had anything to say.</p>")


# --- the page ------------------------------------------------------------------------------

def render(model: dict) -> str:
    sessions = model["sessions"]
    n_agents = sum(len(s["lanes"]) for s in sessions)
    n_calls = sum(ln["tool_calls"] for s in sessions for ln in s["lanes"])
    n_refused = sum(ln["refusals"] for s in sessions for ln in s["lanes"])
    n_failed = sum(ln.get("failed", 0) for s in sessions for ln in s["lanes"])
    runs = model["runs"]
    n_oom = sum(1 for r in runs if r.get("exit") == 250)
    n_pushed = sum(1 for r in runs if r.get("exit") == 254)
    total_tokens = (model["tokens"]["total"] or {}).get("total", 0)
    scope = f"round {model['round']}" if model.get("round") else "session " + ", ".join(model["session_ids"] or ["-"])
    cards = [(n_agents, "agents"), (n_calls, "tool calls"), (n_refused, "refused"), (n_failed, "failed"),
             (_num(total_tokens), "tokens"),
             (len(runs), "runner jobs"), (n_oom, "OOM (250)"), (n_pushed, "pushed out (254)"),
             (len(model["alerts"]), "alerts")]
    parts = ["<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
             f"<title>swarmgate report: {esc(scope)}</title><style>{CSS}</style></head><body>",
             f"<header><h1>swarmgate session flow: {esc(scope)}</h1>",
             f"<p>{esc(model['repo'])} · {_clock(model.get('start'), True)} → {_clock(model.get('end'), True)}"
             f" · generated {_clock(model['generated'], True)}</p>",
             "<div class='cards'>" + "".join(f"<div class='card'><b>{esc(v)}</b><span>{esc(k)}</span></div>"
                                             for v, k in cards) + "</div></header><main>"]
    for s in sessions:
        parts.append(f"<section id='lanes-{esc(s['id'])}'><h2>Agents of session {esc(s['id'])} on one time axis</h2>"
                     + legend() + lanes_svg(s) + "</section>")
    if not sessions:
        parts.append("<section><h2>Agents</h2><p class='muted'>no session found in the decision log</p></section>")
    rec = model.get("record")
    if rec:
        parts.append(f"<section id='graph'><h2>Round {esc(rec['round'])}: planned vs done</h2>"
                     f"<p>goal: {esc(rec.get('goal'))} · exit: {esc(rec.get('exit'))}</p>"
                     + graph_svg(rec) + graph_table(rec) + "</section>")
    parts.append("<section id='runs'><h2>Runner jobs: booked vs peak, exit classes</h2>" + runs_table(runs)
                 + "</section>")
    parts.append("<section id='tokens'><h2>Token usage (from the transcripts' usage fields)</h2>"
                 + tokens_tables(model) + "</section>")
    parts.append("<section id='alerts'><h2>Alerts</h2>" + alerts_table(model["alerts"]) + "</section>")
    parts.append("<section id='latency'><h2>Hook latency distribution</h2>" + latency_svgs(model["latency"])
                 + "</section>")
    parts.append("<section id='codes'><h2>Decisions per guard code</h2>" + codes_table(model["summary"])
                 + "</section>")
    if model.get("problems"):
        parts.append("<section id='problems'><h2>What could not be read</h2><ul class='problems'>"
                     + "".join(f"<li>{esc(p)}</li>" for p in model["problems"]) + "</ul></section>")
    parts.append("</main></body></html>\n")
    return "".join(parts)
