"""docs/architecture.md, "Adding a protocol", followed literally: its python blocks (in order, one
module) and its entry points, installed as a distribution in a temporary folder, give a protocol
that the one driver plays and the one reference skeleton plays through the protocol's round hooks,
with the same rows, and whose metric the metric walker checks (issue 29)."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest

from arena import registry
from arena.errors import GameError
from arena.game import reference_play, run_game
from arena.metric import metric_for, metric_index
from arena.protocol import game_protocol, protocol_for
from arena.reference import ReferenceLoop
from arena.results import SCHEMA
from arena.rounds import start
from tests.helpers.doc_blocks import blocks, entry_points, install, section
from tests.helpers.metric_walker import cases, check_case

ATOL = 1e-12


def clear_registry() -> None:
    registry._claims.cache_clear()
    registry._names_by_target.cache_clear()


@pytest.fixture
def forecast(tmp_path, monkeypatch):
    """The section's module and entry points as an installed distribution; yields the module."""
    text = section("Adding a protocol")
    (toml,) = blocks(text, "toml")
    points = entry_points(toml)
    (module_name,) = {t.partition(":")[0] for names in points.values() for t in names.values()}
    install(tmp_path, module_name, "\n\n".join(blocks(text, "python")), points)
    monkeypatch.syspath_prepend(str(tmp_path))
    clear_registry()
    yield __import__(module_name)
    clear_registry()
    sys.modules.pop(module_name, None)


def test_the_section_shows_every_part_of_a_protocol():
    text = section("Adding a protocol")
    points = entry_points(blocks(text, "toml")[0])
    assert set(points) == {"arena.protocols", "arena.players", "arena.adversaries", "arena.metrics"}
    source = "\n".join(blocks(text, "python"))
    for part in ("(GameProtocol)", "(Stepper)", "(Record)", "(Metric)", "(ReferenceLoop)"):
        assert part in source, part


def test_the_protocol_is_registered_with_its_components(forecast):
    assert "forecast" in registry.available("protocol")
    assert isinstance(protocol_for("forecast"), forecast.ForecastProtocol)
    player = registry.make("player", "laplace")
    assert game_protocol(player, registry.make("adversary", "biased_coin")) == "forecast"
    assert metric_for("brier", "forecast") is forecast.Brier
    # the reference hooks are the round and the record type: the skeleton does everything else
    hooks = {k for k in vars(forecast.ForecastLoop) if not k.startswith("__")}
    assert hooks == {"record_type", "play_round"}
    assert issubclass(forecast.ForecastLoop, ReferenceLoop)


@pytest.mark.parametrize("chunk_elements", [1 << 18, 1, 7])
def test_the_driver_and_the_reference_loop_agree(forecast, chunk_elements):
    kw = dict(horizon=100, replicates=4, seed=3, adversary_params={"bias": 0.3})
    rows = run_game("laplace", "biased_coin", chunk_elements=chunk_elements, **kw).rows
    ref = reference_play("laplace", "biased_coin", **kw)
    assert list(rows.columns) == SCHEMA and len(rows) > 0
    assert set(rows.protocol) == {"forecast"} and set(rows.metric) == {"brier"}
    assert set(rows.player) == {"laplace"} and set(rows.adversary) == {"biased_coin"}
    pd.testing.assert_frame_equal(rows.drop(columns="value"), ref.drop(columns="value"))
    np.testing.assert_allclose(rows.value, ref.value, rtol=0, atol=ATOL)
    # the smoothed frequency against a coin of bias 0.3: about 0.3·0.7 = 0.21 a round
    final = rows[rows.t == 100].value.to_numpy() / 100
    assert np.all(np.abs(final - 0.21) < 0.1)
    # the protocol's own function names the same loop
    assert ref.equals(forecast.reference_play("laplace", "biased_coin", **kw))


def test_replicates_and_checkpoints_are_the_skeletons(forecast):
    kw = dict(horizon=30, seed=9, checkpoints=[3, 17])
    ref = reference_play("laplace", "biased_coin", replicates=[5, 2], **kw)
    assert ref.replicate.unique().tolist() == [5, 2] and ref.t.unique().tolist() == [3, 17, 30]
    alone = reference_play("laplace", "biased_coin", replicates=[2], **kw)
    assert np.array_equal(alone.value.to_numpy(), ref[ref.replicate == 2].value.to_numpy())
    rows = run_game("laplace", "biased_coin", replicates=[5, 2], **kw).rows
    np.testing.assert_allclose(rows.value, ref.value, rtol=0, atol=ATOL)


def test_the_one_round_api_plays_a_loop_that_writes_its_round_whole(forecast):
    # the section's loop writes play_round, not the four round hooks: a hand loop plays it whole
    kw = dict(horizon=30, replicates=[5, 2], seed=9, checkpoints=[3, 17])
    session = start("laplace", "biased_coin", **kw)
    assert isinstance(session, forecast.ForecastLoop) and not session.splits_rounds
    for t in session.rounds():
        session.play_round(t)
    assert session.rows().equals(reference_play("laplace", "biased_coin", **kw))
    with pytest.raises(NotImplementedError, match="does not split its rounds"):
        start("laplace", "biased_coin", **kw).predict()


def test_the_stepper_names_a_bad_forecast(forecast):
    class Overconfident(forecast.Laplace):
        def predict(self):
            return super().predict() * 3.0

    with pytest.raises(GameError, match=r"forecast .* is not in \[0, 1\].*round 1"):
        run_game(Overconfident(), "biased_coin", horizon=5, replicates=2)


def test_the_metric_walker_checks_its_metric(forecast):
    (case,) = [case for case in cases(metric_index()) if case.key == "brier"]
    assert case.protocol == "forecast"
    assert check_case(case), "no forecast game computes brier"
