"""EXP3++ (Seldin & Lugosi 2017, Algorithm 1): literal transcription, golden values, the ξ
convention, unbiasedness, numerical robustness and Theorem 1's bound on several adversaries."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.bandit.checks import check_estimate_unbiased
from arena.game import run_game
from arena.players.exp3pp import BAND_EVERY, Exp3PlusPlus, xi_free_band
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


def formula_round(est: list[float], t: int, c: float) -> tuple[list[float], int]:
    """ρ̃_t from ``L̃_{t−1}`` by the formula alone, plain Python floats, in the kernel's order of
    operations (``t·Δ̂·Δ̂``, sums in arm order, ``(1 − Σε)(w/Σw) + ε``): no threshold, no band,
    a logarithm wherever ``t Δ̂² > 1``; ``math`` calls the C library the kernel calls. Also
    returns the number of arms whose ``ξ_t(a)`` is below the floor (binds)."""
    k = len(est)
    beta = 0.5 * math.sqrt(math.log(k) / (t * k))
    floor = min(0.5 / k, beta)
    low = min(est)
    w = [math.exp(-beta * (x - low)) for x in est]
    eps = []
    for x in est:
        gap = min(1.0, (x - low) / t)
        big_x = t * gap * gap
        eps.append(min(floor, c * math.log(big_x) / big_x) if big_x > 1.0 else floor)
    total, eps_sum = sum(w), sum(eps)
    n_bound = sum(e < floor for e in eps)
    return [(1.0 - eps_sum) * (wi / total) + ei for wi, ei in zip(w, eps, strict=True)], n_bound


def xi_root(t: int, c: float, k: int, upper: bool) -> float:
    """The x > 1 where ``c ln(x)/x`` meets round t's floor (below e or above), by bisection."""
    return xi_root_of(min(0.5 / k, 0.5 * math.sqrt(math.log(k) / (t * k))), c, upper)


def xi_root_of(floor: float, c: float, upper: bool) -> float:
    """The x > 1 where ``c ln(x)/x = floor`` (below e or above), by bisection."""
    a, b = (math.e, 1e30) if upper else (1.0, math.e)
    for _ in range(200):
        mid = 0.5 * (a + b)
        if (c * math.log(mid) / mid >= floor) == upper:
            a = mid
        else:
            b = mid
    return a


def test_band_where_xi_cannot_bind_is_sound_and_wide():
    """On the band of ``xi_free_band`` every ``c ln(x)/x`` (its ends and 10⁴ points between)
    exceeds the floor; with the default c = 18 the band nearly reaches the larger root of
    ξ = floor, and c = 0 or a floor that ξ never exceeds gives no band."""
    for floor in (1 / 18, 1e-2, 2.5e-3, 1e-4, 1e-7):
        for c in (18.0, 1.0, 0.5, 0.02):
            x_lo, x_hi = xi_free_band(floor, c)
            if not x_lo < x_hi:
                assert floor > 0.05 * c  # empty only where ξ's peak c/e is near the floor
                continue
            grid = np.concatenate([[x_lo, x_hi], np.geomspace(x_lo, x_hi, 10_000)])
            assert (c * np.log(grid) / grid >= floor).all()
            if c == 18.0:
                assert x_lo - 1 <= 3 * floor / c
                assert x_hi >= 0.95 * xi_root_of(floor, c, upper=True)
    assert xi_free_band(0.05, 0.0) == (math.inf, -math.inf)
    assert xi_free_band(0.05, 0.1) == (math.inf, -math.inf)  # c/e < floor: ξ binds everywhere


@pytest.mark.parametrize("c", [18.0, 0.5, 0.02, 0.0])
def test_kernel_equals_formula_at_the_edges_of_its_shortcut(c):
    """The kernel skips ξ_t(a) where ``t Δ̂² ≤ 1`` or inside the band where ξ cannot bind; arms
    placed at and around every edge (x = 1, the band's ends, the true roots of ξ = floor, within
    10⁻¹⁶ … 10⁻³ relative) get, bit for bit, the distribution of the formula with no shortcut."""
    k = 9
    for t in (1, 2, 3, 20, 21, 1000, 10**4, 10**6, 10**8, 10**12):
        floor = min(0.5 / k, 0.5 * math.sqrt(math.log(k) / (t * k)))
        x_lo, x_hi = xi_free_band(floor, c)
        edges = [1.0, math.e, 0.5 * t, t]
        edges += [x for x in (x_lo, x_hi) if math.isfinite(x)]
        if c > 0 and c / math.e > floor:  # ξ dips below the floor on both sides of e
            edges += [xi_root(t, c, k, False), xi_root(t, c, k, True)]
        xs = [x * (1 + d) for x in edges for d in (-1e-3, -1e-9, -1e-12, -3e-16, 0.0, 3e-16,
                                                    1e-12, 1e-9, 1e-3)]  # fmt: skip
        distances = [math.sqrt(x * t) for x in xs if x > 0]  # d with d²/t = x: Δ̂ = d/t
        rows = [[0.0, *distances[i : i + k - 1]] for i in range(0, len(distances), k - 1)]
        rows[-1] += [0.0] * (k - len(rows[-1]))
        n_rep = len(rows)
        player, _ = run_block(Exp3PlusPlus(c=c), np.zeros((n_rep, 1, k)), np.zeros((n_rep, 1)))
        player._est[...] = rows
        player._rounds = t - 1
        got = player.play_block(np.zeros((n_rep, 1, k)), np.full((n_rep, 1), 0.5))[:, 0]
        want = np.array([formula_round(row, t, c)[0] for row in rows])
        assert np.array_equal(got, want), (t, c, np.abs(got - want).max())


def test_long_chunk_equals_formula_where_xi_binds():
    """From t = 10⁸, where the default c = 18 lets ξ bind on arms with large gaps: a chunk of
    many band blocks gives, round by round, the formula's distributions bit for bit."""
    k, n, t0 = 5, 3 * BAND_EVERY + 7, 10**8
    rng = np.random.default_rng(7)
    est0 = np.array([[0.0, 0.3, 0.5, 0.8, 1.0], [0.0, 0.05, 0.001, 0.2, 0.9]]) * t0
    est0 += rng.random(est0.shape)
    losses = rng.random((2, n, k))
    uniforms = rng.random((2, n))
    player, _ = run_block(Exp3PlusPlus(), np.zeros((2, 1, k)), np.zeros((2, 1)))
    player._est[...] = est0
    player._rounds = t0 - 1
    got = player.play_block(losses, uniforms)
    n_xi = 0
    for r in range(2):
        est = est0[r].tolist()
        for j in range(n):
            p, n_bound = formula_round(est, t0 + j, 18.0)
            assert p == got[r, j].tolist()
            n_xi += n_bound
            a = draw(p, uniforms[r, j])
            est[a] += losses[r, j, a] / p[a]
    assert n_xi > 0


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
