"""The ``label_ranking`` protocol: the max-pair hinge against its literal form, the two ranking
metrics against brute force and the reference loop, and the engine's refusals."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from arena import run_game
from arena.adversaries.label_ranking_stream import LabelRankingStream
from arena.errors import ConfigError, GameError
from arena.oco.literal import label_ranking_round
from arena.oco.losses import label_ranking_hinge, relevant_code, relevant_mask
from arena.oco.ranking import misordered_fraction
from arena.oco.reference import reference_play_oco
from arena.oco.testing import GaussianLabelRanking, GaussianMulticlass
from arena.players.label_ranking import LabelRanking

METRICS = {"loss": {}, "mistakes": {}, "ranking_loss": {}, "ranking_mistakes": {}}


def test_hinge_equals_the_literal_pair_enumeration():
    rng = np.random.default_rng(0)
    k, d = 4, 3
    w = np.round(rng.standard_normal((200, k * d)), 1)  # rounded: ties between scores occur
    x = np.round(rng.standard_normal((200, d)), 1)
    y = rng.integers(0, 2**k, 200).astype(np.float64)  # 0 and 15 (no pair) included
    value, grad, pred, _ = label_ranking_hinge(w, x, y)
    for i in range(200):
        v, g, p = label_ranking_round(w[i], x[i], y[i])
        assert value[i] == pytest.approx(v, abs=1e-12) and pred[i] == p
        np.testing.assert_allclose(grad[i], g, rtol=0, atol=1e-12)
    assert relevant_code(relevant_mask(y, k)).tolist() == y.tolist()


def test_misordered_fraction_by_brute_force():
    rng = np.random.default_rng(1)
    k = 5
    scores = rng.integers(0, 3, (300, k)).astype(np.float64)  # many ties: a tie is misordered
    mask = rng.random((300, k)) < 0.5
    frac, any_bad = misordered_fraction(scores, mask)
    for i in range(300):
        pairs = [(r, s) for r, s in itertools.product(range(k), repeat=2)
                 if mask[i, r] and not mask[i, s]]  # fmt: skip
        bad = [p for p in pairs if scores[i, p[0]] <= scores[i, p[1]]]
        assert frac[i] == pytest.approx(len(bad) / len(pairs) if pairs else 0.0, abs=1e-15)
        assert any_bad[i] == bool(bad)


@pytest.mark.parametrize(
    ("player", "adversary"),
    [
        (LabelRanking("III", c=0.5), LabelRankingStream(n_classes=3, density=0.3,
                                                        target_features=2, noise=0.1)),
        (LabelRanking("II", "entropic", c=0.3), GaussianLabelRanking(n_classes=3)),
    ],
)  # fmt: skip
def test_engine_equals_reference_loop(player, adversary):
    kw = dict(horizon=30, replicates=2, seed=3, metrics=METRICS, per_decade=3)
    rows = run_game(player, adversary, **kw).rows
    ref = reference_play_oco(player, adversary, **kw)
    pd.testing.assert_frame_equal(rows, ref, check_exact=False, atol=1e-12, rtol=0)
    assert set(rows.protocol) == {"label_ranking"} and set(rows.metric) == set(METRICS)
    last = rows[rows.t == 30].pivot(index="replicate", columns="metric", values="value")
    # the loss's prediction and the metric's own scores agree on the mistake rounds
    np.testing.assert_array_equal(last.mistakes, last.ranking_mistakes)
    assert (last.ranking_loss <= last.ranking_mistakes).all() and (last.ranking_loss >= 0).all()


def test_engine_refusals():
    class BadCode(GaussianLabelRanking):
        def data_block(self, t0, n):
            rd = super().data_block(t0, n)
            return rd._replace(y=np.full_like(rd.y, 8.0))  # 2^3: label 3 of k = 3

    with pytest.raises(GameError, match=r"relevant set 8\.0"):
        run_game(LabelRanking(), BadCode(n_classes=3), horizon=5, replicates=1)
    with pytest.raises(ConfigError, match="the multiclass protocol needs one of"):
        run_game("multiclass_pa", GaussianMulticlass(loss="label_ranking_hinge"), horizon=5)
    with pytest.raises(ConfigError, match="k ≤ 52"):
        run_game(LabelRanking(), GaussianLabelRanking(n_classes=53), horizon=5, n_actions=53)
