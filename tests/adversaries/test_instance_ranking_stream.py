"""The instance-ranking stream: the same rounds under any split into blocks, equally likely grades
ordered as the hidden scores."""

from __future__ import annotations

import numpy as np

from arena.adversaries.instance_ranking_stream import InstanceRankingStream
from arena.spec import GameSpec


def test_blocks_grades_and_order():
    adv = InstanceRankingStream(n_items=4, levels=3, noise=0.0)
    spec = GameSpec("instance_ranking", 3, 300, n_replicates=2, dim=3, n_classes=4)
    a, b = adv.clone(), adv.clone()
    a.reset(spec, [np.random.default_rng(s) for s in (0, 1)])
    b.reset(spec, [np.random.default_rng(s) for s in (0, 1)])
    whole = a.data_block(1, 300)
    parts = [b.data_block(1, 11), b.data_block(12, 200), b.data_block(212, 89)]
    for name in ("x", "y"):
        np.testing.assert_array_equal(
            getattr(whole, name), np.concatenate([getattr(p, name) for p in parts], axis=1)
        )
    # three grades, about a third each (2400 draws: ±0.05 is over 5 standard deviations)
    share = [(whole.y == g).mean() for g in (0.0, 1.0, 2.0)]
    assert set(np.unique(whole.y)) == {0.0, 1.0, 2.0} and max(abs(p - 1 / 3) for p in share) < 0.05
    # without noise a higher grade always has a higher hidden score
    scores = np.einsum("rnkd,rd->rnk", whole.x.reshape(2, 300, 4, 3), a.target())
    higher = whole.y[..., :, None] > whole.y[..., None, :]
    gaps = scores[..., :, None] - scores[..., None, :]
    assert np.all(gaps[higher] > 0.0)
