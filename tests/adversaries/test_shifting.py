"""ShiftingExperts: the best expert changes at k change points (Herbster & Warmuth 1998)."""

from __future__ import annotations

import numpy as np
import pytest

from arena import play
from arena.adversaries.shifting import ShiftingExperts
from arena.errors import ConfigError
from arena.params import validate_params
from arena.spec import GameSpec
from tests.helpers import clt_band, rngs
from tests.helpers.experts import assert_split_invariant


def reset(adversary, n_act=4, horizon=100, n_rep=3, seed=0):
    adversary.reset(GameSpec("experts", n_act, horizon, n_replicates=n_rep), rngs(seed, n_rep))
    return adversary


def test_even_change_points_split_the_horizon_into_equal_segments():
    adv = reset(ShiftingExperts(n_switches=3, gap=0.3, base=0.6), horizon=100)
    means = adv.oracle("means", 1, 100)
    for r in range(3):
        best = means[r].argmin(axis=1)
        assert set(np.flatnonzero(np.diff(best)) + 2) == {26, 51, 76}  # first rounds of segments
        # every other expert has the base mean, the segment's best base − gap
        assert np.allclose(np.sort(means[r], axis=1)[:, 0], 0.3)
        assert np.allclose(np.sort(means[r], axis=1)[:, 1:], 0.6)


def test_consecutive_best_experts_differ_and_random_change_points_are_distinct():
    adv = reset(ShiftingExperts(n_switches=5, change_points="random"), n_act=3, horizon=60)
    means = adv.oracle("means", 1, 60)
    for r in range(3):
        best = means[r].argmin(axis=1)
        changes = np.flatnonzero(np.diff(best))
        assert len(changes) == 5  # five distinct change rounds, each to another expert
        assert all(best[c] != best[c + 1] for c in changes)


def test_losses_are_bernoulli_draws_of_the_means_and_split_invariant():
    adv = ShiftingExperts(n_switches=2, gap=0.2, base=0.5)
    spec = GameSpec("experts", 3, 3000, n_replicates=2)
    assert set(np.unique(assert_split_invariant(adv, spec))) <= {0.0, 1.0}
    adv = reset(ShiftingExperts(n_switches=2, gap=0.2, base=0.5), 3, 3000, 2)
    means = adv.oracle("means", 1, 3000)
    mean, half_width = clt_band((adv.losses_block(1, 3000) - means).reshape(-1))
    assert abs(mean) <= half_width


def test_a_switching_comparator_beats_every_fixed_expert():
    df = play(
        "fixed_share",
        ShiftingExperts(n_switches=3, gap=0.4),
        n_actions=4,
        horizon=2000,
        replicates=4,
        metrics={"shifting_regret": {"k": [0, 3]}},
    )
    last = df[df.t == 2000].groupby("param").value.mean()
    # regret to the best 3-switch sequence exceeds regret to the best fixed expert by about
    # T·gap·(1 − 1/(k+1)) = 600 in expectation
    assert last[3.0] - last[0.0] > 400


@pytest.mark.parametrize(
    ("params", "n_act", "horizon", "bad"),
    [
        ({"n_switches": 100}, 4, 100, "n_switches"),
        ({"gap": 0.6, "base": 0.5}, 4, 100, "gap"),
        ({}, 1, 100, "n_actions"),
    ],
)
def test_game_dependent_errors_name_the_parameter(params, n_act, horizon, bad):
    with pytest.raises(ConfigError) as info:
        reset(ShiftingExperts(**params), n_act=n_act, horizon=horizon)
    assert info.value.parameter == bad and info.value.component == "adversary shifting_experts"


@pytest.mark.parametrize(
    ("params", "bad"),
    [
        ({"n_switches": -1}, "n_switches"),
        ({"gap": 1.5}, "gap"),
        ({"change_points": "x"}, "change_points"),
    ],
)
def test_declared_constraints_name_the_parameter(params, bad):
    with pytest.raises(ConfigError) as info:
        validate_params(ShiftingExperts(**params))
    assert info.value.parameter == bad
