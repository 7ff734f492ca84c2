"""The ``instance_ranking`` protocol (Shalev-Shwartz 2007, §5.3.4): ℓ^avg and ℓ^max against their
literal pair enumeration, their subgradients and Lipschitz constant (the norm), the P0 player
against its transcription, and the engine against the reference loop."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from arena import run_game
from arena.adversaries.instance_ranking_stream import InstanceRankingStream
from arena.oco.literal import instance_ranking_round
from arena.oco.losses import instance_ranking
from arena.oco.reference import reference_play_oco
from arena.oco.testing import GaussianInstanceRanking
from arena.players.instance_ranking import InstanceRanking, pair_lipschitz

KINDS = ("ranking_avg", "ranking_max")


def test_losses_equal_the_literal_pairs_and_are_norm_lipschitz():
    rng = np.random.default_rng(0)
    k, d, n = 4, 3, 150
    w = rng.standard_normal((n, d))
    x = rng.standard_normal((n, k * d))
    y = rng.integers(0, 3, (n, k)).astype(np.float64)  # grades: ties, sometimes E = ∅
    for kind in KINDS:
        value, grad, pred = instance_ranking(kind, w, x, y)
        for i in range(n):
            v, g, p = instance_ranking_round(kind, w[i], x[i], list(y[i]))
            assert value[i] == pytest.approx(v, abs=1e-12) and pred[i] == pytest.approx(p)
            np.testing.assert_allclose(grad[i], g, rtol=0, atol=1e-12)
        # a subgradient: f(v) ≥ f(w) + ⟨g, v − w⟩ at random v
        v = w + rng.standard_normal((n, d))
        assert np.all(instance_ranking(kind, v, x, y)[0] >= value + ((v - w) * grad).sum(1) - 1e-12)
        # Lipschitz with constant max_{(i,j)∈E} ‖x_i − x_j‖ (not its square: an erratum of §5.3.4)
        rows = x.reshape(n, k, d)
        pairs = y[:, :, None] > y[:, None, :]
        dist = np.linalg.norm(rows[:, :, None] - rows[:, None, :], axis=-1)
        lip = np.where(pairs, dist, 0.0).max(axis=(1, 2))
        assert np.all(np.linalg.norm(grad, axis=1) <= lip + 1e-12)
        if kind == "ranking_max":  # attained: the norm, which can be below its square
            hit = np.linalg.norm(grad, axis=1) > 0
            assert np.any(np.isclose(np.linalg.norm(grad, axis=1)[hit], lip[hit]))
    assert pair_lipschitz(x, k) == pytest.approx(dist.max(axis=(1, 2)))


@pytest.mark.parametrize(
    ("player", "adversary"),
    [
        (InstanceRanking("sqrt_t", 1.0), InstanceRankingStream(n_items=3, levels=3)),
        (InstanceRanking(c=3.0), GaussianInstanceRanking(loss="ranking_max")),
    ],
)
def test_engine_equals_reference_loop(player, adversary):
    kw = dict(horizon=30, replicates=2, seed=2, metrics=["loss"], per_decade=3)
    rows = run_game(player, adversary, n_actions=3, **kw).rows
    ref = reference_play_oco(player, adversary, n_actions=3, **kw)
    pd.testing.assert_frame_equal(rows, ref, check_exact=False, atol=1e-12, rtol=0)
    assert set(rows.protocol) == {"instance_ranking"}
