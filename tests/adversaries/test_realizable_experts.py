"""realizable_experts: ±1 expert advice whose label is always the target expert's."""

from __future__ import annotations

import numpy as np
import pytest

from arena.adversaries.realizable_experts import RealizableExperts
from arena.errors import ConfigError
from tests.helpers.oco_adversaries import (
    assert_replicate_determinism,
    assert_split_invariant,
    fresh,
    spec_for,
)


def literal_stream(adv: RealizableExperts, spec, seed: int):
    """The Notes' sampling rule, one replicate and one round at a time."""
    from tests.helpers import rngs

    n, horizon = spec.dim, spec.horizon
    xs = np.empty((spec.n_replicates, horizon, n))
    ys = np.empty((spec.n_replicates, horizon))
    for r, rng in enumerate(rngs(seed, spec.n_replicates)):
        target = int(rng.integers(n))
        for t in range(horizon):
            u = rng.random(n + 1)
            y = 1.0 if u[0] < 0.5 else -1.0
            for i in range(n):
                agree = i == target or u[i + 1] < adv.agreement
                xs[r, t, i] = y if agree else -y
            ys[r, t] = y
    return xs, ys


@pytest.mark.parametrize("agreement", [0.5, 0.9, 1.0, 0.0])
def test_data_equal_the_literal_rule_and_are_realizable(agreement):
    adv = RealizableExperts(agreement=agreement)
    spec = spec_for(adv, n_rep=3, horizon=25, dim=7)
    data = assert_split_invariant(adv, spec, seed=2)
    assert_replicate_determinism(adv, spec)
    x, y = literal_stream(adv, spec, 2)
    np.testing.assert_array_equal(data.x, x)
    np.testing.assert_array_equal(data.y, y)
    target = fresh(adv, spec, 2).target()
    np.testing.assert_array_equal(data.x[np.arange(3), :, target], data.y)
    comp = fresh(adv, spec, 2).comparator()
    assert (np.einsum("rtd,rd->rt", data.x, comp) * data.y == 1.0).all()  # margin 1 everywhere


def test_agreement_rate():
    adv = RealizableExperts(agreement=0.8)
    spec = spec_for(adv, n_rep=2, horizon=2000, dim=11)
    data = fresh(adv, spec, 0).data_block(1, 2000)
    target = fresh(adv, spec, 0).target()
    agree = data.x == data.y[:, :, None]
    mask = np.ones_like(agree, dtype=bool)
    mask[np.arange(2), :, target] = False
    rate, m = agree[mask].mean(), mask.sum()
    assert abs(rate - 0.8) < 5 * np.sqrt(0.8 * 0.2 / m)  # 5 standard errors


def test_game_constants():
    adv = RealizableExperts()
    assert adv.resolve_dim(None) == 16 and adv.resolve_dim(3) == 3
    assert adv.declared_loss() == "hinge" and adv.realizable_coordinate()
    with pytest.raises(ConfigError, match="N ≥ 1"):
        adv.resolve_dim(0)
