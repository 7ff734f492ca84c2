"""The synthetic multi-label stream: the same rounds under any split into blocks, relevant sets
from the hidden keywords, never empty or full without noise."""

from __future__ import annotations

import numpy as np

from arena.adversaries.label_ranking_stream import LabelRankingStream
from arena.oco.losses import relevant_mask
from arena.spec import GameSpec


def test_stream_sets_and_chunks():
    adv = LabelRankingStream(n_classes=4, density=0.2, target_features=3)
    spec = GameSpec("label_ranking", 80, 60, n_replicates=2, dim=80, n_classes=4)
    a, b = adv.clone(), adv.clone()
    a.reset(spec, [np.random.default_rng(s) for s in (0, 1)])
    b.reset(spec, [np.random.default_rng(s) for s in (0, 1)])
    whole = a.data_block(1, 60)
    parts = [b.data_block(1, 7), b.data_block(8, 40), b.data_block(48, 13)]
    for name in ("x", "y"):
        np.testing.assert_array_equal(
            getattr(whole, name), np.concatenate([getattr(p, name) for p in parts], axis=1)
        )
    mask = relevant_mask(whole.y, 4)
    assert mask.any(axis=-1).all() and (~mask).any(axis=-1).all()  # no noise: never empty/full
    hits = np.einsum("rkd,rnd->rnk", a.target().reshape(2, 4, 20), whole.x)
    on = hits >= 1.0  # the jitter (< 0.01) never lifts an integer keyword count past 1
    count = on.sum(axis=-1)
    inner = (count > 0) & (count < 4)
    assert np.array_equal(mask[inner], on[inner])
    assert (mask[count == 0].sum(axis=-1) == 1).all()  # the top label alone
    assert (mask[count == 4].sum(axis=-1) == 3).all()  # all but the lowest
    assert inner.any() and (count == 0).any()
