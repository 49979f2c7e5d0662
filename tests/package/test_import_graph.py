"""The shape of src/npsummary: no import cycle, front ends independent, layers only import down.

The graph is built from the source with ``ast``: every ``import`` and ``from ... import`` in a
module counts, at module level, inside functions and under ``if TYPE_CHECKING:`` alike, since a
cycle through a function-level import is still a cycle (it only fails later, at the first call).
``from package import name`` is an edge to ``package.name`` when that is a module, else to the
package. The implicit import of a module's parent packages is not an edge (the package
``__init__`` files below ``npsummary`` are docstrings).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from paths import ROOT

PACKAGE = ROOT / "src" / "npsummary"


def _module_name(path: Path) -> str:
    parts = ["npsummary", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def import_graph() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(edges between npsummary modules, top-level names of outside modules each one imports)."""
    modules = _modules()
    edges: dict[str, set[str]] = {name: set() for name in modules}
    outside: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[: len(parts) - node.level + 1])
                    source = f"{base}.{node.module}" if node.module else base
                else:
                    source = node.module or ""
                targets = [
                    f"{source}.{a.name}" if f"{source}.{a.name}" in modules else source
                    for a in node.names
                ]
            for target in targets:
                if target == "npsummary" or target.startswith("npsummary."):
                    assert target in modules, f"{name} imports {target}, which does not exist"
                    if target != name:
                        edges[name].add(target)
                else:
                    outside[name].add(target.partition(".")[0])
    return edges, outside


def find_cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return cycles


def _area(module: str) -> str:
    """The package directly under npsummary a module belongs to (or the module itself)."""
    parts = module.split(".")
    if parts[1:2] == ["_frontends"] and len(parts) > 3:
        return ".".join(parts[:3])  # npsummary._frontends.tbx, .tf2, .v1
    return ".".join(parts[:2])


GRAPH, OUTSIDE = import_graph()

FRONT_ENDS = {
    "npsummary._frontends.tbx",
    "npsummary._frontends.tf2",
    "npsummary._frontends.v1",
}

# Each area may import only from itself and from the areas of its own or lower layers (front
# ends never from each other: see test_no_front_end_imports_another).
LAYERS = [
    {"npsummary._common", "npsummary._format", "npsummary.proto"},
    {"npsummary._histogram", "npsummary._imaging"},
    {"npsummary._summaries", "npsummary._sinks"},
    {"npsummary._core", "npsummary.reader"},
    {"npsummary._frontends"},
    FRONT_ENDS,
    {
        "npsummary",
        "npsummary.__main__",
        "npsummary._cli",
        "npsummary.experimental",
        "npsummary.hparams",
        "npsummary.tensorboardx_summary",
        "npsummary.torch_summary",
        "npsummary.v1",
        "npsummary.writer",
    },
    {"npsummary.integrations"},  # thin adapters over the public API, imported only by users
]


def _layer(area: str) -> int:
    (found,) = [i for i, group in enumerate(LAYERS) if area in group]
    return found


def test_the_graph_sees_the_package() -> None:
    assert len(GRAPH) > 80
    assert "npsummary._sinks.base" in GRAPH["npsummary._core.event_writer"]
    # function-level imports are edges too
    assert "npsummary._frontends.tbx.summary_writer" in GRAPH["npsummary._frontends.tbx.patch"]


def test_find_cycles_finds_a_cycle() -> None:
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle() -> None:
    assert find_cycles(GRAPH) == []


def test_no_front_end_imports_another() -> None:
    crossings = sorted(
        f"{module} -> {target}"
        for module, targets in GRAPH.items()
        for target in targets
        if _area(module) in FRONT_ENDS
        and _area(target) in FRONT_ENDS
        and _area(target) != _area(module)
    )
    assert crossings == []


@pytest.mark.parametrize(
    ("public", "front_end"),
    [
        ("npsummary.writer", "npsummary._frontends.tbx"),
        ("npsummary.tensorboardx_summary", "npsummary._frontends.tbx"),
        ("npsummary.torch_summary", "npsummary._frontends.tbx"),
        ("npsummary.experimental", "npsummary._frontends.tf2"),
        ("npsummary.v1", "npsummary._frontends.v1"),
    ],
)
def test_each_public_module_is_the_face_of_one_front_end(public: str, front_end: str) -> None:
    assert {_area(t) for t in GRAPH[public] if _area(t) in FRONT_ENDS} == {front_end}


def test_every_area_has_a_layer() -> None:
    for module in GRAPH:
        _layer(_area(module))


@pytest.mark.parametrize("area", sorted({_area(m) for m in GRAPH}))
def test_layers_only_import_down(area: str) -> None:
    upward = sorted(
        f"{module} -> {target}"
        for module, targets in GRAPH.items()
        if _area(module) == area
        for target in targets
        if _area(target) != area and _layer(_area(target)) > _layer(area)
    )
    assert upward == []


def test_common_imports_only_numpy_and_the_standard_library() -> None:
    allowed = set(sys.stdlib_module_names) | {"numpy"}
    found = {
        f"{module}: {name}"
        for module, names in OUTSIDE.items()
        if _area(module) == "npsummary._common"
        for name in names
        if name not in allowed
    }
    found |= {
        f"{module} -> {target}"
        for module, targets in GRAPH.items()
        if _area(module) == "npsummary._common"
        for target in targets
        if _area(target) != "npsummary._common"
    }
    assert sorted(found) == []


# Packages whose __init__ is their API (and which `import npsummary` does not import).
WITH_AN_API = ("npsummary._cli", "npsummary.proto", "npsummary.reader", "npsummary._histogram")


def test_package_init_files_below_the_top_are_docstrings() -> None:
    # Importing a subpackage must cost nothing: `import npsummary` stays as fast as before.
    for name, path in _modules().items():
        if path.name != "__init__.py" or name.count(".") == 0:
            continue
        if name in (
            "npsummary._cli",
            "npsummary.proto",
            "npsummary.reader",
            "npsummary._histogram",
        ):
            continue  # packages with an API of their own
        body = ast.parse(path.read_text(encoding="utf-8")).body
        assert len(body) == 1 and isinstance(body[0], ast.Expr), name
