"""EXP3++ (Seldin & Lugosi 2017, Algorithm 1): literal transcription, golden values, the ξ
convention, unbiasedness, numerical robustness and Theorem 1's bound on several adversaries."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.bandit.checks import check_estimate_unbiased
from arena.game import run_game
from arena.players.exp3pp import Exp3PlusPlus
from tests.helpers.bandit import draw, expected_bound_holds, run_block, z_scores


def literal_exp3pp(losses, uniforms, c=18.0):
    """Algorithm 1 written from the paper, one replicate, plain Python floats; returns the
    distributions and the number of (round, arm) pairs where ξ_t(a) was the binding cap."""
    horizon, k = len(losses), len(losses[0])
    big_l, out, xi_bound = [0.0] * k, [], 0
    for t in range(1, horizon + 1):
        beta = 0.5 * math.sqrt(math.log(k) / (t * k))
        eta = beta
        low = min(big_l)
        w = [math.exp(-eta * (x - low)) for x in big_l]
        rho = [wi / sum(w) for wi in w]
        eps = []
        for a in range(k):
            gap = min(1.0, (big_l[a] - low) / t)
            if t * gap**2 > 1.0:  # ln(t Δ̂²) > 0: the formula applies
                xi = c * math.log(t * gap**2) / (t * gap**2)
            else:  # Δ̂ = 0 or ln(t Δ̂²) ≤ 0: no cap from ξ
                xi = math.inf
            eps.append(min(1 / (2 * k), beta, xi))
            xi_bound += xi < min(1 / (2 * k), beta)
        p = [(1 - sum(eps)) * rho[a] + eps[a] for a in range(k)]
        out.append(p)
        a_t = draw(p, uniforms[t - 1])
        big_l[a_t] += losses[t - 1][a_t] / p[a_t]  # divided by ρ̃_t(A_t), the one drawn with
    return np.array(out), xi_bound


@pytest.mark.parametrize("c", [18.0, 0.5, 0.02, 0.0])
def test_fast_path_equals_literal_transcription(c):
    rng = np.random.default_rng(1)
    losses, uniforms = rng.random((3, 300, 5)), rng.random((3, 300))
    losses[..., 2] = np.round(losses[..., 2])
    losses[..., 4] = 1.0  # a clearly bad arm, so that the gap estimates grow
    _, fast = run_block(Exp3PlusPlus(c=c), losses, uniforms)
    bound_rounds = 0
    for r in range(3):
        slow, n_bound = literal_exp3pp(losses[r].tolist(), uniforms[r].tolist(), c)
        bound_rounds += n_bound
        assert float(np.abs(fast[r] - slow).max()) <= 1e-12
    if c <= 0.5:  # the ξ branch was exercised, not only the 1/(2K) and β_t caps
        assert bound_rounds > 0


def test_golden_values():
    """K = 2, c = 0.1; arm 0 always loses 1, arm 1 never.

    t = 1: β_1 = ½√(ln 2/2), ε = min(¼, β_1, ∞) = ¼ each, ρ̃_1 = (½, ½); u = 0.1 draws arm 0, so
    L̃ = (2, 0). t = 2: β_2 = ½√(ln 2/4) = η_2; Δ̂(0) = min(1, 2/2) = 1, t Δ̂² = 2,
    ξ(0) = 0.1 ln 2 / 2 ≈ 0.0347 < β_2 ≈ 0.208 binds; arm 1 is the leader (Δ̂ = 0, ξ = ∞),
    ε(1) = β_2; ρ(0) = 1/(1 + e^{2η_2})."""
    losses = np.array([[[1.0, 0.0]] * 2])
    uniforms = np.array([[0.1, 0.5]])
    _, p = run_block(Exp3PlusPlus(c=0.1), losses, uniforms)
    beta2 = 0.5 * math.sqrt(math.log(2) / 4)
    xi0 = 0.1 * math.log(2) / 2
    rho0 = 1 / (1 + math.exp(2 * beta2))
    p0 = (1 - xi0 - beta2) * rho0 + xi0
    assert np.allclose(p[0], [[0.5, 0.5], [p0, 1 - p0]], atol=1e-15, rtol=0)
    # with the default c = 18, ξ(0) = 18 ln 2/2 ≈ 6.2 does not bind: ε = β_2 for both arms
    _, p = run_block(Exp3PlusPlus(), losses, uniforms)
    p0 = (1 - 2 * beta2) * rho0 + beta2
    assert np.allclose(p[0, 1], [p0, 1 - p0], atol=1e-15, rtol=0)


def test_small_gap_estimate_means_no_cap_from_xi():
    """t Δ̂² ≤ 1 (the formula's logarithm ≤ 0, or Δ̂ = 0): ε_t(a) = min{1/(2K), β_t}; just
    above, ξ is tiny and binds."""
    player, _ = run_block(Exp3PlusPlus(c=18.0), np.zeros((1, 1, 3)), np.zeros((1, 1)))
    t = 100
    player._rounds = t - 1
    beta = 0.5 * math.sqrt(math.log(3) / (t * 3))
    for gap, binds in ((0.0, False), (0.1, False), (0.10001, True)):  # t Δ̂² = 0, 1, 1.0002
        player._est[...] = [[0.0, gap * t, 0.0]]
        p = player.predict()[0]
        eps = min(1 / 6, beta)
        if binds:
            x = t * gap**2
            eps1 = min(eps, 18.0 * math.log(x) / x)
            assert eps1 < 0.2 * eps
        else:
            eps1 = eps
        w1 = math.exp(-beta * gap * t)
        rho = np.array([1.0, w1, 1.0]) / (2 + w1)
        want = (1 - 2 * eps - eps1) * rho + np.array([eps, eps1, eps])
        assert np.allclose(p, want, atol=1e-15, rtol=0)


def test_estimate_is_unbiased_for_the_probability_used():
    """E[ℓ̃_t(a) | ρ̃_t] = ℓ_t(a): 20 000 independent draws after a common history in which the
    gap estimates cap some exploration, every arm within |z| ≤ 4.5."""
    check_estimate_unbiased(Exp3PlusPlus())
    history = np.tile([0.9, 0.1, 0.5, 1.0], (20_000, 60, 1))
    common = np.tile(np.random.default_rng(2).random(60), (20_000, 1))
    player, _ = run_block(Exp3PlusPlus(c=0.5), history, common, horizon=100)
    p = player.predict()
    assert len(np.unique(p[0].round(12))) > 2  # exploration differs between arms
    losses = np.tile([0.0, 0.25, 1.0, 0.6], (20_000, 1))
    before = player.estimates()
    actions = np.array([draw(p[r].tolist(), u) for r, u in
                        enumerate(np.random.default_rng(3).random(20_000))])  # fmt: skip
    player.update(actions, losses[np.arange(20_000), actions], p)
    z = z_scores(player.estimates() - before, losses)
    assert np.nanmax(np.abs(z)) <= 4.5  # arm 0's estimate is exactly 0 (z is NaN)


@pytest.mark.slow
@pytest.mark.parametrize("c", [18.0, 0.5])
def test_a_million_rounds_stay_finite(c):
    run = run_game(Exp3PlusPlus(c=c), "bernoulli", n_actions=9, horizon=10**6, replicates=2,
                   metrics=["regret", "entropy"], per_decade=1)  # fmt: skip
    assert np.isfinite(run.rows.value).all()  # and the driver validated every p_t


def test_a_million_rounds_kernel_probabilities_in_unit_interval():
    """10⁶ rounds through the kernel: every ρ̃_t is finite, in [0, 1] and sums to 1."""
    rng = np.random.default_rng(5)
    losses = (rng.random((1, 10**6, 3)) < [0.2, 0.5, 0.8]).astype(np.float64)
    player, p = run_block(Exp3PlusPlus(), losses, rng.random((1, 10**6)))
    assert np.isfinite(p).all() and (p >= 0).all() and (p <= 1).all()
    assert np.abs(p.sum(axis=-1) - 1).max() <= 1e-12
    assert np.isfinite(player.estimates()).all()


def test_worst_case_estimates_do_not_overflow():
    player, _ = run_block(Exp3PlusPlus(), np.zeros((1, 1, 3)), np.zeros((1, 1)))
    player._est[...] = [[1e308, 1.7e308, 0.0]]
    p = player.predict()
    assert np.isfinite(p).all() and abs(p.sum() - 1.0) <= 1e-15 and p[0, 2] > 0.5


ADVERSARIES = [("bernoulli", {}), ("fair_coin", {}), ("ftl_killer", {}),
               ("shifting_experts", {}), ("piecewise_stochastic", {}), ("comb", {}),
               ("greedy", {}), ("heavier_half", {})]  # fmt: skip


@pytest.mark.parametrize("c", [18.0, 0.5])
@pytest.mark.parametrize(("adversary", "adv_params"), ADVERSARIES)
def test_declared_bound_holds_in_expectation(c, adversary, adv_params):
    """Theorem 1 on oblivious adversaries and, through the regret metric (E[max] ≥ the
    pseudo-regret's max of E), on two adaptive ones that read ρ̃_t."""
    worst = expected_bound_holds(Exp3PlusPlus(c=c), adversary, adversary_params=adv_params,
                                 n_actions=4, horizon=2000, replicates=32, seed=4)  # fmt: skip
    assert worst <= 1.0


def test_bound_is_the_theorem():
    """Seldin & Lugosi 2017, Theorem 1: 4√(K t ln K), for any t (anytime), scaled by hi − lo."""
    for k, t in ((2, 100), (9, 10_000)):
        p, _ = run_block(Exp3PlusPlus(), np.zeros((1, 1, k)), np.zeros((1, 1)))
        assert p.regret_bound(t) == pytest.approx(4 * math.sqrt(k * t * math.log(k)))
        (((metric, param), value),) = p.bounds(t).items()
        assert metric == "regret" and math.isnan(param) and value == p.regret_bound(t)
    run = run_game(Exp3PlusPlus(), "bernoulli", n_actions=3, horizon=50, replicates=1,
                   metrics={"bound": {}})  # fmt: skip
    rows = run.rows[run.rows.t == 50]
    assert float(rows.value.iloc[0]) == pytest.approx(4 * math.sqrt(3 * 50 * math.log(3)))
