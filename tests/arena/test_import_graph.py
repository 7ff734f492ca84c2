"""No import cycle anywhere in the library (issue 13: the driver imports no protocol).

The graph has an edge A → B for every ``import B`` / ``from B import …`` in module A, at module
level or inside a function (a deferred import is still a dependency), except under
``if TYPE_CHECKING:``, which never runs. ``from pkg import name`` is an edge to ``pkg.name`` when
that is a module, else to ``pkg``. Importing a submodule also runs its parents' ``__init__``; those
implicit edges are Python's package mechanics, not dependencies of the code, and are left out.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# the built-in components are arena.players, arena.adversaries and arena.weak_learners: the wheel
# installs the one package arena (issue 35), so the graph walks arena/ only
PACKAGES = ("arena",)


def module_files(packages: tuple[str, ...] = PACKAGES) -> dict[str, Path]:
    """Map every module name of the packages to its file."""
    out = {}
    for package in packages:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out[name] = path
    return out


def _runtime_nodes(tree: ast.AST):
    """Yield the nodes of ``tree`` outside ``if TYPE_CHECKING:`` blocks."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            stack.extend(node.orelse)
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Return ``{module: {modules it imports}}`` restricted to ``modules``."""
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        for node in _runtime_nodes(ast.parse(path.read_text(), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = name.split(".")
                    anchor = anchor if is_package else anchor[:-1]
                    anchor = anchor[: len(anchor) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    targets.append(sub if sub in modules else base)
            graph[name].update(t for t in targets if t in modules and t != name)
    return graph


@functools.cache
def _library_graph() -> dict[str, set[str]]:
    """The library's import graph, parsed once per test process (four tests read it)."""
    return import_graph(module_files())


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Return the strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
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
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_library_has_no_import_cycle():
    assert cycles(_library_graph()) == []


def test_the_driver_imports_no_protocol():
    graph = _library_graph()
    for protocol in ("arena.experts", "arena.oco"):
        reached = {m for m in graph["arena.game"] if m.startswith(protocol)}
        assert not reached, f"arena.game imports {sorted(reached)}"


# ----------------------------------------------------------------------------------------------
# units: no two of them import each other (issue 29)

CORE = "arena.<core>"


def unit_of(module: str, root: Path = ROOT) -> str | None:
    """The unit of a module: ``arena.X`` for a subpackage ``arena/X/``, :data:`CORE` for the root
    modules ``arena/*.py``, the top-level package otherwise; None for the facade
    ``arena/__init__.py``, which re-exports the public API and is exempt.

    Examples
    --------
    >>> unit_of("arena.oco.metrics"), unit_of("arena.game"), unit_of("arena.players.hedge")
    ('arena.oco', 'arena.<core>', 'arena.players')
    >>> unit_of("arena") is None, unit_of("arena.apps.cli")
    (True, 'arena.apps')
    """
    parts = module.split(".")
    if parts[0] != "arena":
        return parts[0]
    if len(parts) == 1:
        return None
    if (root / "arena" / parts[1]).is_dir():
        return f"arena.{parts[1]}"
    return CORE


def unit_edges(graph: dict[str, set[str]], root: Path = ROOT) -> dict[tuple[str, str], list[str]]:
    """Return ``{(unit A, unit B): ["a -> b", ...]}``: every import from one unit into another."""
    edges: dict[tuple[str, str], list[str]] = {}
    for a, targets in graph.items():
        ua = unit_of(a, root)
        for b in sorted(targets):
            ub = unit_of(b, root)
            if ua is not None and ub is not None and ua != ub:
                edges.setdefault((ua, ub), []).append(f"{a} -> {b}")
    return edges


def mutual_units(edges: dict[tuple[str, str], list[str]]) -> list[tuple[str, str]]:
    """Return the pairs of units that import each other, each once (sorted)."""
    return sorted({tuple(sorted(pair)) for pair in edges if (pair[1], pair[0]) in edges})


def test_no_two_units_import_each_other():
    """No two units import each other: the core, each subpackage of arena (protocol folders,
    metrics, applications, reports, conformance suite) and the component packages."""
    edges = unit_edges(_library_graph())
    mutual = mutual_units(edges)
    detail = {pair: (edges[pair][:3], edges[pair[::-1]][:3]) for pair in mutual}
    assert not mutual, detail


def test_the_core_imports_no_metric_module():
    graph = _library_graph()
    core = [m for m in graph if unit_of(m) == CORE]
    reached = {(m, t) for m in core for t in graph[m] if unit_of(t) == "arena.metrics"}
    assert not reached


def test_the_unit_walk_finds_mutual_imports(tmp_path):
    for name, text in {
        "arena/__init__.py": "from arena.x import f",
        "arena/game.py": "from arena.metrics.m import g",
        "arena/metrics/__init__.py": "",
        "arena/metrics/m.py": "from arena.game import h",
        "arena/x/__init__.py": "",
        "arena/x/f.py": "import arena.players.p",
        "arena/players/__init__.py": "",
        "arena/players/p.py": "import arena.game",
    }.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    modules = {
        ".".join(p.relative_to(tmp_path).with_suffix("").parts).removesuffix(".__init__"): p
        for p in tmp_path.rglob("*.py")
    }
    edges = unit_edges(import_graph(modules), root=tmp_path)
    assert mutual_units(edges) == [("arena.<core>", "arena.metrics")]
    assert ("arena.players", "arena.<core>") in edges
    assert ("arena.x", "arena.players") in edges


@pytest.mark.parametrize(
    ("sources", "expected"),
    [
        ({"a": "import b", "b": "def f():\n    import a"}, [["a", "b"]]),
        ({"a": "from b import x", "b": "x = 1"}, []),
        (
            {
                "a": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import b",
                "b": "import a",
            },
            [],
        ),
        ({"a": "import b", "b": "import c", "c": "from a import y"}, [["a", "b", "c"]]),
    ],
)
def test_the_cycle_finder_finds_cycles(tmp_path, sources, expected):
    modules = {}
    for name, text in sources.items():
        path = tmp_path / f"{name}.py"
        path.write_text(text)
        modules[name] = path
    assert cycles(import_graph(modules)) == expected
