"""Exp3 (loss-based, optional γ mixing): literal transcription, golden values, unbiasedness,
numerical robustness and its proven bound on several adversaries."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.bandit.checks import check_estimate_unbiased
from arena.game import run_game
from arena.players.exp3 import Exp3
from tests.helpers.bandit import draw, expected_bound_holds, run_block, z_scores


def literal_exp3(losses, uniforms, eta, gamma=0.0, anytime=False):
    """Exp3 written from its definition, one replicate, plain Python floats."""
    horizon, k = len(losses), len(losses[0])
    est, out = [0.0] * k, []
    for t in range(1, horizon + 1):
        e = math.sqrt(math.log(k) / (k * t)) if anytime else eta
        low = min(est)
        w = [math.exp(-e * (x - low)) for x in est]
        total = sum(w)
        p = [(1 - gamma) * (wi / total) + gamma / k for wi in w]
        out.append(p)
        a = draw(p, uniforms[t - 1])
        est[a] += losses[t - 1][a] / p[a]
    return np.array(out)


@pytest.mark.parametrize(
    ("params", "eta", "anytime"),
    [({"eta": 0.3}, 0.3, False), ({"eta": "anytime"}, None, True), ({}, None, False),
     ({"eta": 0.7, "gamma": 0.2}, 0.7, False), ({"eta": "anytime", "gamma": 0.05}, None, True)],
)  # fmt: skip
def test_fast_path_equals_literal_transcription(params, eta, anytime):
    rng = np.random.default_rng(1)
    losses, uniforms = rng.random((3, 200, 5)), rng.random((3, 200))
    losses[..., 2] = np.round(losses[..., 2])
    _, fast = run_block(Exp3(**params), losses, uniforms)
    if params.get("eta", "tuned") == "tuned":
        eta = math.sqrt(2 * math.log(5) / (5 * 200))
    for r in range(3):
        slow = literal_exp3(losses[r].tolist(), uniforms[r].tolist(), eta,
                            params.get("gamma", 0.0), anytime)  # fmt: skip
        assert float(np.abs(fast[r] - slow).max()) <= 1e-12


def test_golden_values():
    """K = 2, η = ln 2, arm 0 always loses 1, arm 1 never: p_1 = (½, ½), u = 0.1 draws arm 0 and
    L̂_0 = 1/½ = 2, so p_2 ∝ (2^{−2}, 1) = (0.2, 0.8); u = 0.5 draws arm 1 (loss 0), p_3 = p_2;
    u = 0.1 draws arm 0 again, L̂_0 = 2 + 1/0.2 = 7, p_4 ∝ (2^{−7}, 1) = (1/129, 128/129)."""
    losses = np.array([[[1.0, 0.0]] * 4])
    uniforms = np.array([[0.1, 0.5, 0.1, 0.9]])
    _, p = run_block(Exp3(eta=math.log(2)), losses, uniforms)
    want = [[0.5, 0.5], [0.2, 0.8], [0.2, 0.8], [1 / 129, 128 / 129]]
    assert np.allclose(p[0], want, atol=1e-15, rtol=0)
    _, p = run_block(Exp3(eta=math.log(2), gamma=0.5), losses, uniforms)
    # γ = ½: p_2 = ½ (0.2, 0.8) + ¼ = (0.35, 0.65); u = 0.5 draws arm 1, u = 0.1 arm 0
    assert np.allclose(p[0, :3], [[0.5, 0.5], [0.35, 0.65], [0.35, 0.65]], atol=1e-15, rtol=0)


@pytest.mark.parametrize("params", [{}, {"eta": "anytime"}, {"eta": 0.5, "gamma": 0.3}])
def test_estimate_is_unbiased_for_the_probability_used(params):
    """E[ℓ̂_{t,i} | p_t] = ℓ_{t,i}: 20 000 independent draws after a common history, every arm
    within the conformance test's 1e-6 family-wise limit (|z| ≤ 5.3), and here |z| ≤ 4.5."""
    check_estimate_unbiased(Exp3(**params))
    player, _ = run_block(Exp3(**params), np.full((20_000, 5, 4), 0.5), np.full((20_000, 5), 0.3),
                          horizon=100)  # fmt: skip
    p = player.predict()
    losses = np.tile([0.0, 0.25, 1.0, 0.6], (20_000, 1))
    before = player.estimates()
    actions = np.array([draw(p[r].tolist(), u) for r, u in
                        enumerate(np.random.default_rng(3).random(20_000))])  # fmt: skip
    player.update(actions, losses[np.arange(20_000), actions], p)
    z = z_scores(player.estimates() - before, losses)
    assert np.nanmax(np.abs(z)) <= 4.5  # arm 0's estimate is exactly 0 (z is NaN)


@pytest.mark.parametrize("params", [{}, {"eta": "anytime"}, {"eta": 0.05, "gamma": 0.01}])
def test_a_million_rounds_stay_finite(params):
    run = run_game(Exp3(**params), "bernoulli", n_actions=9, horizon=10**6, replicates=2,
                   metrics=["regret", "entropy"], per_decade=1)  # fmt: skip
    assert np.isfinite(run.rows.value).all()  # and the driver validated every p_t


def test_worst_case_estimates_do_not_overflow():
    """Estimates near the float64 limit still give a valid distribution (shift by the minimum)."""
    player, _ = run_block(Exp3(eta=1.0), np.zeros((1, 1, 3)), np.zeros((1, 1)))
    player._est[...] = [[1e308, 1.7e308, 0.0]]
    p = player.predict()
    assert np.isfinite(p).all() and p.sum() == 1.0 and p[0, 2] == 1.0


ADVERSARIES = [("bernoulli", {}), ("fair_coin", {}), ("ftl_killer", {}),
               ("shifting_experts", {}), ("piecewise_stochastic", {}), ("comb", {})]  # fmt: skip


@pytest.mark.parametrize("params", [{}, {"eta": "anytime"}, {"eta": 0.1, "gamma": 0.1}])
@pytest.mark.parametrize(("adversary", "adv_params"), ADVERSARIES)
def test_declared_bound_holds_in_expectation(params, adversary, adv_params):
    worst = expected_bound_holds(Exp3(**params), adversary, adversary_params=adv_params,
                                 n_actions=4, horizon=2000, replicates=32, seed=4)  # fmt: skip
    assert worst <= 1.0


def test_tuned_bound_is_the_theorem():
    """Bubeck & Cesa-Bianchi 2012, Theorem 3.1: √(2 T K ln K) at the tuned rate, and at most
    2√(T K ln K) anytime."""
    for k, horizon in ((2, 100), (9, 10_000)):
        p, _ = run_block(Exp3(), np.zeros((1, 1, k)), np.zeros((1, 1)), horizon=horizon)
        assert p.regret_bound(horizon) == pytest.approx(math.sqrt(2 * horizon * k * math.log(k)))
        p, _ = run_block(Exp3(eta="anytime"), np.zeros((1, 1, k)), np.zeros((1, 1)))
        assert p.regret_bound(horizon) <= 2 * math.sqrt(horizon * k * math.log(k))
