"""Exp3-IX: literal transcription, golden values, the declared (biased) estimator expectation,
robustness, the bound in expectation and Neu's high-probability bound."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.bandit.checks import check_estimate_unbiased
from arena.game import run_game
from arena.players.exp3_ix import Exp3IX
from tests.helpers.bandit import draw, expected_bound_holds, run_block, z_scores


def literal_exp3_ix(losses, uniforms, eta, gamma=None, anytime=False):
    """Exp3-IX from its definition (Neu 2015), one replicate, plain Python floats."""
    horizon, k = len(losses), len(losses[0])
    est, out = [0.0] * k, []
    for t in range(1, horizon + 1):
        e = math.sqrt(math.log(k) / (k * t)) if anytime else eta
        g = e / 2 if gamma is None else gamma
        low = min(est)
        w = [math.exp(-e * (x - low)) for x in est]
        total = sum(w)
        p = [wi / total for wi in w]
        out.append(p)
        a = draw(p, uniforms[t - 1])
        est[a] += losses[t - 1][a] / (p[a] + g)
    return np.array(out)


@pytest.mark.parametrize(
    ("params", "eta", "anytime"),
    [({}, None, False), ({"eta": "anytime"}, None, True), ({"eta": 0.4, "gamma": 0.1}, 0.4, False),
     ({"eta": "anytime", "gamma": 0.0}, None, True)],
)  # fmt: skip
def test_fast_path_equals_literal_transcription(params, eta, anytime):
    rng = np.random.default_rng(2)
    losses, uniforms = rng.random((3, 200, 6)), rng.random((3, 200))
    _, fast = run_block(Exp3IX(**params), losses, uniforms)
    if params.get("eta", "tuned") == "tuned":
        eta = math.sqrt(2 * math.log(6) / (6 * 200))
    for r in range(3):
        slow = literal_exp3_ix(losses[r].tolist(), uniforms[r].tolist(), eta,
                               params.get("gamma"), anytime)  # fmt: skip
        assert float(np.abs(fast[r] - slow).max()) <= 1e-12


def test_golden_values():
    """K = 2, η = ln 2, γ = ½, arm 0 always loses 1: p_1 = (½, ½), u = 0.1 draws arm 0 and
    L̂_0 = 1/(½ + ½) = 1, so p_2 ∝ (2^{−1}, 1) = (1/3, 2/3); u = 0.2 draws arm 0 again,
    L̂_0 = 1 + 1/(1/3 + 1/2) = 2.2, p_3 ∝ (2^{−2.2}, 1)."""
    losses = np.array([[[1.0, 0.0]] * 3])
    _, p = run_block(Exp3IX(eta=math.log(2), gamma=0.5), losses, np.array([[0.1, 0.2, 0.9]]))
    third = 2**-2.2 / (1 + 2**-2.2)
    want = [[0.5, 0.5], [1 / 3, 2 / 3], [third, 1 - third]]
    assert np.allclose(p[0], want, atol=1e-15, rtol=0)


@pytest.mark.parametrize("params", [{}, {"eta": "anytime"}, {"eta": 0.5, "gamma": 0.2}])
def test_estimate_has_its_declared_expectation(params):
    """E[ℓ̂_{t,i} | p_t] = p_{t,i} ℓ_{t,i} / (p_{t,i} + γ_t) (the implicit-exploration bias), tested
    with the probability used to draw I_t; the unbiased target is rejected (the test has power)."""
    check_estimate_unbiased(Exp3IX(**params))
    n = 20_000
    player, _ = run_block(Exp3IX(eta=0.5, gamma=0.2), np.full((n, 4, 3), 0.5),
                          np.full((n, 4), 0.7), horizon=50)  # fmt: skip
    p = player.predict()
    losses = np.tile([0.9, 0.4, 1.0], (n, 1))
    target = player.estimate_expectation(losses, p)
    before = player.estimates()
    actions = np.array([draw(p[r].tolist(), u)
                        for r, u in enumerate(np.random.default_rng(4).random(n))])  # fmt: skip
    player.update(actions, losses[np.arange(n), actions], p)
    added = player.estimates() - before
    assert np.abs(z_scores(added, target)).max() <= 4.5
    assert np.abs(z_scores(added, losses)).min() > 10  # biased w.r.t. ℓ: detected


@pytest.mark.parametrize("params", [{}, {"eta": "anytime"}])
def test_a_million_rounds_stay_finite(params):
    run = run_game(Exp3IX(**params), "bernoulli", n_actions=9, horizon=10**6, replicates=2,
                   metrics=["regret"], per_decade=1)  # fmt: skip
    assert np.isfinite(run.rows.value).all()


ADVERSARIES = ["bernoulli", "fair_coin", "ftl_killer", "shifting_experts", "piecewise_stochastic"]


@pytest.mark.parametrize("params", [{}, {"eta": "anytime"}, {"eta": 0.2, "gamma": 0.05}])
@pytest.mark.parametrize("adversary", ADVERSARIES)
def test_declared_bound_holds_in_expectation(params, adversary):
    worst = expected_bound_holds(Exp3IX(**params), adversary, n_actions=4, horizon=2000,
                                 replicates=32, seed=5)  # fmt: skip
    assert worst <= 1.0


@pytest.mark.parametrize("adversary", ["bernoulli", "ftl_killer", "shifting_experts"])
def test_high_probability_bound(adversary):
    """Neu 2015, Theorem 1 at δ = 0.1: the fraction of replicates whose realized regret exceeds
    the bound is at most δ + 4√(δ(1 − δ)/M) (M = 200 replicates)."""
    delta, m, horizon, k = 0.1, 200, 1000, 4
    rows = run_game(Exp3IX(), adversary, n_actions=k, horizon=horizon, replicates=m, seed=6,
                    metrics=["realized_regret"], checkpoints=[horizon]).rows  # fmt: skip
    player, _ = run_block(Exp3IX(), np.zeros((1, 1, k)), np.zeros((1, 1)), horizon=horizon)
    bound = player.high_probability_bound(delta)
    assert bound == pytest.approx(
        2 * math.sqrt(2 * k * horizon * math.log(k))
        + (math.sqrt(2 * k * horizon / math.log(k)) + 1) * math.log(2 / delta)
    )
    exceed = float((rows.value > bound).mean())
    assert exceed <= delta + 4 * math.sqrt(delta * (1 - delta) / m)


def test_high_probability_bound_needs_the_tuned_defaults():
    player, _ = run_block(Exp3IX(eta="anytime"), np.zeros((1, 1, 2)), np.zeros((1, 1)))
    with pytest.raises(ValueError, match="Theorem 1"):
        player.high_probability_bound(0.1)
