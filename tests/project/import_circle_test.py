"""No import circle among the product's modules, counting every import statement: what a module
imports anywhere in its source (top level, inside functions and methods, and the packages an import
runs on the way) never leads back to it. A lazy import inside a function is still a dependency: it
runs later, but the two modules then need each other, and which one is half-initialised depends on
who calls first. A lazy import kept for speed is fine (the hook's import budget,
tests/swarmgate/hook_start_import_budget_test.py); it must not be what closes a circle. Only
``if TYPE_CHECKING:`` imports (annotations, never run) are no edges."""
from __future__ import annotations

from tests.project.package_map import imports, modules


def graph() -> dict[str, set[str]]:
    return {m: imports(m, p) for m, p in modules().items()}


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
    assert not found, ("import circles (each module imports the next somewhere in its source, inside a "
                       "function too):\n" + "\n".join(" <-> ".join(c) for c in found)
                       + "\nmove what both need into a module of its own (named for what it is), pass a value or a "
                         "callback instead of importing back, or let the lower module expose a registry the higher "
                         "one registers into; a lazy import inside a function does not break a circle")


def test_the_graph_sees_the_imports_it_must():
    """Top-level imports are edges, so are the packages they pass and the imports inside functions
    (else the first test is vacuous)."""
    edges = graph()
    assert {"swarmgate.front_door", "swarmgate.config", "swarmgate.gate"} <= edges["swarmgate.install"]
    assert {"swarmgate", "swarmgate.front_door"} <= edges["swarmgate.hosts.runner_cli"]
    # lazy imports, for the hook's speed: edges all the same
    assert "swarmgate.hooks.shell_writers" in edges["swarmgate.hooks.shell_writes"]
    assert "swarmgate.selftest" in edges["swarmgate.front_door"]


def test_circles_finds_a_circle_and_reads_only_type_checking_as_no_edge(tmp_path):
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []
    source = ("TYPE_CHECKING = False\nif TYPE_CHECKING:\n    from swarmgate import guard\nelse:\n"
              "    from swarmgate import sizes\n"
              "def f():\n    from swarmgate import config\n"
              "class C:\n    def m(self):\n        def inner():\n            import swarmgate.digest\n"
              "try:\n    from swarmgate import statefile\n"
              "except ImportError:\n    from swarmgate.hooks import registry\n")
    p = tmp_path / "probe.py"
    p.write_text(source)
    assert imports("swarmgate.probe", p) == {"swarmgate", "swarmgate.sizes", "swarmgate.config", "swarmgate.digest",
                                             "swarmgate.statefile", "swarmgate.hooks", "swarmgate.hooks.registry"}


def test_a_function_level_import_back_closes_a_circle(tmp_path):
    """config imports nothing of the probe; the probe imports config only inside a function: one edge.
    A module config imports at its top that imports config back in a function is a circle."""
    p = tmp_path / "probe.py"
    p.write_text("def later():\n    from swarmgate.config import load_config\n    return load_config\n")
    edges = {"swarmgate.probe": imports("swarmgate.probe", p), "swarmgate.config": {"swarmgate.probe"}}
    assert edges["swarmgate.probe"] == {"swarmgate", "swarmgate.config"}
    assert circles(edges) == [["swarmgate.config", "swarmgate.probe"]]
