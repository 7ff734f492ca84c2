"""docs/architecture.md, "Adding a metric", followed literally: its module and its entry-point line,
installed as a distribution in a temporary folder, give a metric every protocol it declares
computes and the reference loops check, with nothing else changed (issue 29)."""

from __future__ import annotations

import sys

import pytest

from arena import registry
from arena.game import run_game
from arena.metric import metric_for, metric_index
from tests.helpers.doc_blocks import blocks, entry_points, install, section
from tests.helpers.metric_walker import cases, check_case


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """The section's module and entry point, as a distribution on sys.path (what ``pip install``
    of a plugin leaves: the module and a ``.dist-info`` with ``entry_points.txt``)."""
    text = section("Adding a metric")
    (module,) = blocks(text, "python")
    (toml,) = blocks(text, "toml")
    points = entry_points(toml)
    (names,) = points.values()
    ((key, target),) = names.items()
    module_name = target.partition(":")[0]
    install(tmp_path, module_name, module, points)
    monkeypatch.syspath_prepend(str(tmp_path))
    registry._claims.cache_clear()
    yield key
    registry._claims.cache_clear()
    sys.modules.pop(module_name, None)


def test_the_section_shows_one_module_and_one_entry_point_line():
    text = section("Adding a metric")
    assert len(blocks(text, "python")) == 1 and len(blocks(text, "toml")) == 1
    (toml,) = blocks(text, "toml")
    (names,) = entry_points(toml).values()
    assert len(names) == 1


def test_a_metric_added_as_the_section_says_is_computed_and_checked(installed):
    key = installed
    cls = metric_index()[key]
    assert not isinstance(cls, str), cls
    assert metric_for(cls.name, "experts") is cls
    run = run_game("hedge", "bernoulli", n_actions=3, horizon=20, metrics=[cls.name, "regret"])
    wide = run.rows.pivot_table(index=["replicate", "t"], columns="metric", values="value")
    t = wide.index.get_level_values("t").to_numpy()
    assert (abs(wide[cls.name] - wide["regret"] / t) < 1e-12).all()
    # the walker plays it in every protocol it declares, against its own reference
    mine = [case for case in cases(metric_index()) if case.key == key]
    assert {case.protocol for case in mine} == set(cls.protocols)
    for case in mine:
        assert check_case(case), f"no {case.protocol} game computes {key}"
