"""No import circle among the product's modules: what a module imports when it is imported (its
top-level imports, and the packages they run on the way) never leads back to it. A circle makes the
result depend on which module is imported first (a half-initialised module, an AttributeError at
import); `if TYPE_CHECKING:` imports and imports inside functions run later and are not edges."""
from __future__ import annotations

from tests.project.package_map import import_time_imports, modules


def graph() -> dict[str, set[str]]:
    return {m: import_time_imports(m, p) for m, p in modules().items()}


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in edges.get(v, ()):
                out.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_no_import_circle_among_the_products_modules():
    found = circles(graph())
    assert not found, ("import circles (each module imports the next at import time):\n"
                       + "\n".join(" <-> ".join(c) for c in found)
                       + "\nmove what both need into a module of its own, or import it where it is used")


def test_the_graph_sees_the_imports_it_must():
    """Top-level imports are edges, and so are the packages they pass (else the first test is vacuous)."""
    edges = graph()
    assert {"swarmgate.front_door", "swarmgate.config", "swarmgate.gate"} <= edges["swarmgate.install"]
    assert {"swarmgate", "swarmgate.front_door"} <= edges["swarmgate.hosts.runner_cli"]


def test_circles_finds_a_circle_and_reads_type_checking_and_functions_as_no_edge(tmp_path):
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []
    source = ("TYPE_CHECKING = False\nif TYPE_CHECKING:\n    from swarmgate import guard\n"
              "def f():\n    from swarmgate import config\n"
              "try:\n    from swarmgate import statefile\nexcept ImportError:\n    pass\n")
    p = tmp_path / "probe.py"
    p.write_text(source)
    assert import_time_imports("swarmgate.probe", p) == {"swarmgate", "swarmgate.statefile"}
