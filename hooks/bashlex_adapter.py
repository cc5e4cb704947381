"""bashlex's tree converted into ``bash_lexical`` nodes, refused where bashlex is known wrong.

``convert(trees, src)`` raises ``PositionMismatch`` (a ValueError) when the tree
cannot be trusted: a here-document body read as commands, a substitution inside
single quotes, ``NAME[i]=v`` read as a command, positions that do not match the
words, or commands the conversion did not reach. The caller then uses the
lexical parser instead.
"""
from __future__ import annotations

from swarmgate.hooks import bash_lexical as _lx
from swarmgate.hooks.bash_words import expand


def convert(trees, src: str) -> _lx.Seq:
    """bashlex's top-level trees for ``src`` as one ``Seq``."""
    _conv["cmds"], _conv["heredocs"] = [], []
    items = []
    for t in trees:
        items.extend(_bl_items(t, src))
    _check_heredocs(src)
    seen: set = set()
    if sum(_bl_count_commands(t, seen) for t in trees) != len(_conv["cmds"]):
        raise PositionMismatch("the bashlex tree has commands the conversion did not reach")
    return _lx.Seq(items, src)


def _bl_items(node, src: str) -> list:
    """bashlex top-level/list node -> [(node, terminator)]."""
    if node.kind == "list":
        items: list = []
        for p in node.parts:
            if p.kind == "operator":
                op = p.op
                if items and op in (";", "&&", "||", "&"):
                    items[-1] = (items[-1][0], op)
                continue
            items.append((_bl(p, src), ""))
        return items
    return [(_bl(node, src), "")]


def _bl_seq(nodes, src: str) -> _lx.Seq:
    items: list = []
    for n in nodes:
        if n.kind == "reservedword":
            continue
        if n.kind == "operator":
            if items and n.op in (";", "&&", "||", "&"):
                items[-1] = (items[-1][0], n.op)
            continue
        items.extend(_bl_items(n, src))
    return _lx.Seq(items, "")


_conv: dict = {"cmds": [], "heredocs": []}   # positions seen while converting one bashlex tree


def _check_heredocs(src: str) -> None:
    """bashlex reads a here-document inside { }, ( ), if, loops or functions
    after the compound command, and parses its body as commands: a command
    that starts inside a body means the tree is wrong."""
    for rend, hend in _conv["heredocs"]:
        nl = src.find("\n", rend)
        if nl < 0:
            continue
        for start in _conv["cmds"]:
            if nl < start < hend:
                raise PositionMismatch("bashlex read a here-document body as commands")


class PositionMismatch(ValueError):
    """bashlex's positions do not point at the word it reports (it happens
    inside backquotes with escapes): its tree is not used."""


def _bl_word(node, src: str) -> _lx.Word:
    raw = src[node.pos[0]:node.pos[1]]
    word = getattr(node, "word", None)
    if word is not None and word != raw and expand(raw, {})[0] != word:
        raise PositionMismatch(f"{raw!r} != {word!r}")
    subs: list = []
    _bl_collect_subs(node, src, subs)
    return _lx.Word(raw, subs)


def _in_single_quotes(raw: str, offset: int) -> bool:
    """Is ``raw[offset]`` inside single quotes (outside double quotes)?"""
    sq = dq = False
    i = 0
    while i < offset and i < len(raw):
        c = raw[i]
        if c == "\\" and not sq:
            i += 2
            continue
        if c == "'" and not dq:
            sq = not sq
        elif c == '"' and not sq:
            dq = not dq
        i += 1
    return sq


def _bl_collect_subs(node, src: str, subs: list, top=None) -> None:
    top = node if top is None else top
    for p in getattr(node, "parts", ()) or ():
        k = p.kind
        if k in ("commandsubstitution", "processsubstitution") and hasattr(top, "pos"):
            raw = src[top.pos[0]:top.pos[1]]
            if _in_single_quotes(raw, p.pos[0] - top.pos[0]):
                raise PositionMismatch("bashlex read a substitution inside single quotes")
        if k == "commandsubstitution":
            kind = "backtick" if src[p.pos[0]:p.pos[0] + 1] == "`" else "cmdsubst"
            subs.append((kind, _bl_seq([p.command], src)))
        elif k == "processsubstitution":
            kind = "procsubst-in" if src[p.pos[0]:p.pos[0] + 1] == "<" else "procsubst-out"
            subs.append((kind, _bl_seq([p.command], src)))
        else:
            _bl_collect_subs(p, src, subs, top)


def _bl_redir(node, src: str) -> _lx.Redir:
    op = node.type
    fd = node.input if isinstance(getattr(node, "input", None), int) else None
    out = node.output
    if isinstance(out, int) or isinstance(out, str):
        r = _lx.Redir(op, fd, None, int(out) if isinstance(out, int) or out.isdigit() else -1)
        return r
    r = _lx.Redir(op, fd, _bl_word(out, src))
    hd = getattr(node, "heredoc", None)
    if hd is not None and op in ("<<", "<<-"):
        _conv["heredocs"].append((node.pos[1], hd.pos[1]))
        raw = r.target.raw
        r.quoted = any(ch in raw for ch in "'\"\\")
        r.delim = raw.replace("'", "").replace('"', "").replace("\\", "")
        body = hd.value
        k = body.rfind("\n")
        if k >= 0 and body[k + 1:].strip("\t") == r.delim:
            body = body[:k + 1]
        elif body.strip("\t") == r.delim:
            body = ""
        r.heredoc = body
    return r


def _bl_flat(parts) -> list:
    out = []
    for p in parts:
        if p.kind == "reservedword":
            if isinstance(p.word, list):
                out.extend(_bl_flat(p.word))
            continue
        out.append(p)
    return out


def _bl_count_commands(node, seen: set | None = None, depth: int = 0) -> int:
    """Every distinct CommandNode in a bashlex tree (to check nothing was dropped;
    a node reachable twice, like a function's body, counts once)."""
    if seen is None:
        seen = set()
    if id(node) in seen:
        return 0
    seen.add(id(node))
    if depth > 500:
        raise PositionMismatch("bashlex tree too deep")
    n = 1 if getattr(node, "kind", None) == "command" else 0
    for v in vars(node).values():
        if isinstance(v, list):
            for x in v:
                if hasattr(x, "kind"):
                    n += _bl_count_commands(x, seen, depth + 1)
        elif hasattr(v, "kind") and hasattr(v, "__dict__"):
            n += _bl_count_commands(v, seen, depth + 1)
    return n


def _bl(node, src: str):
    k = node.kind
    text = src[node.pos[0]:node.pos[1]] if hasattr(node, "pos") else ""
    if k == "command":
        _conv["cmds"].append(node.pos[0])
        first = next((p for p in node.parts if p.kind in ("word", "assignment")), None)
        if first is not None and first.kind == "word":
            raw0 = src[first.pos[0]:first.pos[1]]
            b = raw0.find("[")
            if b > 0 and raw0[:b].isidentifier() and ("]=" in raw0 or "]+=" in raw0):
                raise PositionMismatch("bashlex read NAME[i]=value as a command")
        assigns, words, redirs = [], [], []
        for p in node.parts:
            if p.kind == "assignment" and not words:
                assigns.append(_bl_word(p, src))
            elif p.kind in ("word", "assignment"):
                words.append(_bl_word(p, src))
            elif p.kind == "redirect":
                redirs.append(_bl_redir(p, src))
        return _lx.Cmd(assigns, words, redirs, text)
    if k == "pipeline":
        cmds = [_bl(p, src) for p in node.parts if p.kind not in ("pipe", "reservedword")]
        return cmds[0] if len(cmds) == 1 else _lx.Pipe(cmds, text)
    if k == "list":
        return _lx.Seq(_bl_items(node, src), text)
    if k == "compound":
        redirs = [_bl_redir(r, src) for r in (getattr(node, "redirects", None) or [])]
        lst = node.list
        first = lst[0] if lst else None
        if first is not None and first.kind == "reservedword" and first.word in ("{", "("):
            kind = "brace" if first.word == "{" else "subshell"
            return _lx.Group(kind, _bl_seq(lst, src), redirs, text)
        inner = [p for p in lst if p.kind != "reservedword"]
        if len(inner) == 1:
            got = _bl(inner[0], src)
            if hasattr(got, "redirs"):
                got.redirs = list(got.redirs) + redirs
            return got
        return _lx.Group("brace", _bl_seq(lst, src), redirs, text)
    if k == "if":
        # bashlex wraps a third and later elif in a reservedword node whose
        # `word` is the list of nodes: flatten it
        parts = [_bl_seq([p], src) for p in _bl_flat(node.parts)]
        return _lx.If(parts, [], text)
    if k in ("while", "until"):
        seqs = [p for p in node.parts if p.kind != "reservedword"]
        cond = _bl_seq(seqs[:1], src)
        body = _bl_seq(seqs[1:], src)
        return _lx.Loop(k, cond, [], body, [], text)
    if k == "for":
        words, body, seen_in, seen_do, var = [], [], False, False, None
        for p in node.parts:
            if p.kind == "reservedword":
                if p.word == "in":
                    seen_in = True
                elif p.word == "do":
                    seen_do = True
                continue
            if seen_do:
                body.append(p)
            elif seen_in and p.kind == "word":
                words.append(_bl_word(p, src))
            elif not seen_in and p.kind == "word" and var is None:
                var = p.word if p.word.isidentifier() else None
        return _lx.Loop("for", None, words, _bl_seq(body, src), [], text, var if seen_in else None)
    if k == "function":
        name = node.name.word if hasattr(node, "name") else ""
        return _lx.Func(name, _bl(node.body, src), text)
    raise ValueError(f"bashlex node kind {k!r} not handled")
