"""The library's layers (architecture: layers): the core, the protocol folders, the applications.

The **core** is the root of ``arena/`` (every ``arena/*.py`` but ``arena/__init__.py``): the driver,
the registry, parameters, seeding, results and the component bases. It reaches the protocols only
through the registry, and it never imports what is built on it: the applications
(``arena/apps/``), the report (``arena/reporting/``) or the conformance suite
(``arena/testing/``). ``arena/__init__.py`` is the public facade: it may import the protocol
folders, never the applications. Only the applications import the applications; the report in
particular reads result files and needs none of them.

The edges come from the import graph of ``tests/arena/test_import_graph.py`` (every import, at
module level or deferred inside a function, except under ``if TYPE_CHECKING:``).
"""

from __future__ import annotations

import tomllib

import pytest

from tests.arena.test_import_graph import PACKAGES, ROOT, import_graph, module_files

BUILT_ON_THE_CORE = ("arena.apps", "arena.reporting", "arena.testing")


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def core_modules(modules) -> list[str]:
    """The root modules of ``arena/`` but the facade."""
    return sorted(
        name
        for name, path in modules.items()
        if path.parent == ROOT / "arena" and path.name != "__init__.py"
    )


def protocol_folders() -> set[str]:
    """The packages that hold a registered protocol (entry-point group ``arena.protocols``)."""
    targets = _pyproject()["project"]["entry-points"]["arena.protocols"].values()
    return {".".join(target.split(":")[0].split(".")[:2]) for target in targets}


@pytest.fixture(scope="module")
def graph():
    return import_graph(module_files())


def test_the_core_is_the_root_of_arena():
    core = set(core_modules(module_files()))
    assert {"arena.game", "arena.registry", "arena.results", "arena.components"} <= core
    applications = {"cli", "tournament", "gallery", "reproduce", "demo", "hydra_support"}
    assert not core & {f"arena.{name}" for name in applications}, "applications live in arena/apps"


@pytest.mark.parametrize("upper", BUILT_ON_THE_CORE)
def test_the_core_imports_nothing_built_on_it(graph, upper):
    edges = {
        f"{m} -> {t}" for m in core_modules(module_files()) for t in graph[m] if _within(t, upper)
    }
    assert not edges, f"core modules import {upper}: {sorted(edges)}"


def test_the_core_reaches_the_protocols_only_through_the_registry(graph):
    folders = protocol_folders()
    assert {"arena.experts", "arena.oco", "arena.bandit", "arena.boosting"} <= folders
    edges = {
        f"{m} -> {t}"
        for m in core_modules(module_files())
        for t in graph[m]
        if any(_within(t, f) for f in folders)
    }
    assert not edges, f"core modules import a protocol folder: {sorted(edges)}"


def test_the_facade_imports_no_application(graph):
    assert not [t for t in graph["arena"] if _within(t, "arena.apps")]


def test_only_the_applications_import_the_applications(graph):
    edges = {
        f"{m} -> {t}"
        for m, targets in graph.items()
        if not _within(m, "arena.apps")
        for t in targets
        if _within(t, "arena.apps")
    }
    assert not edges, f"modules outside arena/apps import it: {sorted(edges)}"


def test_the_report_imports_no_application(graph):
    edges = {
        f"{m} -> {t}"
        for m, targets in graph.items()
        if _within(m, "arena.reporting")
        for t in targets
        if _within(t, "arena.apps")
    }
    assert not edges, f"arena.reporting imports the applications: {sorted(edges)}"


def test_the_import_graph_and_the_wheel_cover_every_package():
    """PACKAGES (the import-graph tests) and the wheel's package list name the same packages."""
    listed = {p for p in _pyproject()["tool"]["setuptools"]["packages"]}
    code = {p for p in listed if not _within(p, "arena.conf")}  # arena.conf is configs/
    assert {p.split(".")[0] for p in listed} == set(PACKAGES) == {"arena"}
    on_disk = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for package in PACKAGES
        for init in (ROOT / package).rglob("__init__.py")
    }
    assert on_disk == code, (
        f"missing from the wheel: {sorted(on_disk - code)}; listed but absent: "
        f"{sorted(code - on_disk)}"
    )
