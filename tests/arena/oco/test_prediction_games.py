"""Sparse games played through predictions: the same rows as through points, O(d) work only
once a chunk, and the engine still refuses what a player gets wrong (a point outside the domain,
a non-finite prediction)."""

from __future__ import annotations

import numpy as np
import pytest

import arena.oco.game as oco_game
from arena.adversaries.sparse_stream import SparseStream
from arena.errors import GameError
from arena.game import run_game
from arena.players.ogd import OGD
from arena.testing.common import BLOCK_ATOL

METRICS = {"loss": {}, "mistakes": {}, "regret": {}}
KW = dict(horizon=300, replicates=2, seed=1, n_actions=200)


@pytest.fixture
def chunks(monkeypatch):
    """Count the chunks played through predictions."""
    count = {"n": 0}
    real = oco_game._prediction_chunk

    def spy(*args, **kwargs):
        count["n"] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(oco_game, "_prediction_chunk", spy)
    return count


@pytest.mark.parametrize("domain", [{}, {"domain": "ball", "radius": 0.5}])
def test_predictions_give_the_rows_of_points(tmp_path, chunks, domain):
    """With a trace the game records w_t (through points); without, through predictions: the
    kernels add the same products in the same order, so the rows are bitwise equal."""
    fast = run_game(OGD(eta=0.5), SparseStream(nnz=5, **domain), metrics=METRICS, **KW).rows
    assert chunks["n"] > 0
    seen = chunks["n"]
    trace = tmp_path / "trace.parquet"
    slow = run_game(
        OGD(eta=0.5), SparseStream(nnz=5, **domain), metrics=METRICS, trace_path=trace, **KW
    ).rows
    assert chunks["n"] == seen  # the trace reads w_t: played through points
    np.testing.assert_array_equal(fast.value.to_numpy(), slow.value.to_numpy())
    assert fast.drop(columns="value").equals(slow.drop(columns="value"))


def test_a_metric_that_reads_points_gets_them(chunks):
    metrics = {"loss": {}, "online_to_batch": {}}
    rows = run_game(OGD(eta=0.5), SparseStream(nnz=5, test_size=20), metrics=metrics, **KW).rows
    assert chunks["n"] == 0 and rows.metric.str.startswith("online_to_batch").any()


def test_dense_rows_and_dense_players_play_through_points(chunks):
    run_game(OGD(eta=0.5), SparseStream(nnz=5, representation="dense"), metrics=METRICS, **KW)
    run_game("ftrl", SparseStream(nnz=5, domain="ball"), metrics=METRICS, **KW)
    assert chunks["n"] == 0


def test_ogd_reports_its_exact_point_after_a_block():
    """The ball's lazy scale is folded in: point() is the next point play_block plays."""
    from arena.oco.losses import RoundData, SparseRows
    from arena.spec import GameSpec

    adv = SparseStream(nnz=4, domain="ball", radius=0.3)
    spec = GameSpec(
        "classification", 50, 40, dim=50, domain=adv.declared_domain(), loss="hinge", sparse=True
    )
    adv.reset(spec, [np.random.default_rng(0)])
    data = adv.data_block(1, 40)
    first, second = (
        RoundData(x=data.x.rounds(lo, lo + 20), y=data.y[:, lo : lo + 20]) for lo in (0, 20)
    )
    a, b = OGD(eta=2.0), OGD(eta=2.0)
    a.reset(spec, [np.random.default_rng(0)])
    b.reset(spec, [np.random.default_rng(0)])
    assert a.plays_predictions()
    pred = a.play_predictions(first, spec)
    w = b.play_block(first, spec)
    assert isinstance(first.x, SparseRows)
    np.testing.assert_allclose(pred, first.x.dot(w.reshape(-1, 50)).reshape(1, 20), rtol=0, atol=0)
    nxt = b.play_block(second, spec)[:, 0]
    assert np.linalg.norm(nxt) == pytest.approx(0.3, rel=1e-12)  # the ball binds: a scale < 1
    np.testing.assert_allclose(a.point(), nxt, rtol=0, atol=BLOCK_ATOL)


class _Escapes(OGD):
    """Predicts as ogd, but reports a point outside the ball."""

    def point(self):
        return super().point() + 10.0


BAD: dict[str, int] = {}


class _NaN(OGD):
    """Predicts NaN in the last round of the first chunk that ends after round 3."""

    def play_predictions(self, data, spec):
        t0 = self._rounds + 1
        out = super().play_predictions(data, spec)
        if self._rounds >= 3 and "round" not in BAD:  # the game plays a clone: note it here
            BAD["round"] = t0 + out.shape[1] - 1
            out[0, -1] = np.nan
        return out


def test_a_point_outside_the_domain_is_refused_once_a_chunk():
    with pytest.raises(GameError, match="outside the ball"):
        run_game(_Escapes(eta=0.5), SparseStream(nnz=5, domain="ball"), metrics=METRICS, **KW)


def test_a_non_finite_prediction_is_refused_naming_its_round():
    BAD.clear()
    with pytest.raises(GameError, match="non-finite prediction") as err:
        run_game(_NaN(eta=0.5), SparseStream(nnz=5), metrics=METRICS, **KW)
    assert f"round {BAD['round']}" in str(err.value)


class _Shifted(OGD):
    """Reports predictions off by 0.1: the conformance check must catch it."""

    def play_predictions(self, data, spec):
        return super().play_predictions(data, spec) + 0.1


class _StalePoint(OGD):
    """Reports the point before the block, not after it."""

    def play_predictions(self, data, spec):
        self._before = self._w.copy()
        return super().play_predictions(data, spec)

    def point(self):
        return self._before.copy()


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        (_Shifted(eta=0.5), "play_predictions differs"),
        (_StalePoint(eta=0.5), "point\\(\\) differs"),
    ],
)
def test_the_conformance_check_catches_wrong_predictions_and_points(broken, message):
    from arena.oco.checks import check_oco_predictions_match_points

    check_oco_predictions_match_points(OGD(eta=0.5))  # the real one passes
    with pytest.raises(AssertionError, match=message):
        check_oco_predictions_match_points(broken)
