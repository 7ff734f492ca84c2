"""Luo's drifting-game bandit algorithm (Luo 2016, Appendix A.2, Algorithm 24, EXP3 instance):
literal transcriptions (the EXP3 instance and the general algorithm with a callable potential),
the reduction to loss-based Exp3, the potential recursion (A.3), the random-movement constraints
checked by exact enumeration, Theorem 21's bound (closed form, golden values, on adversaries),
unbiasedness and numerical robustness."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.bandit.checks import check_estimate_unbiased
from arena.errors import ConfigError
from arena.game import run_game
from arena.players.dg_bandit import (
    DriftingGameBandit,
    dg_movement,
    exp_alpha,
    exp_potential,
    theorem_radius,
    tuned_eta,
)
from arena.players.exp3 import Exp3
from tests.helpers.bandit import draw, expected_bound_holds, run_block, z_scores


def literal_dg_bandit(losses, uniforms, eta):
    """The EXP3 instance written from its definition, one replicate, plain Python floats."""
    horizon, k = len(losses), len(losses[0])
    s, out = [0.0] * k, []
    for t in range(1, horizon + 1):
        low = min(s)
        w = [math.exp(-eta * (x - low)) for x in s]
        p = [wi / sum(w) for wi in w]
        out.append(p)
        i_t = draw(p, uniforms[t - 1])
        loss = losses[t - 1][i_t]
        s = [s[i] + ((loss / p[i_t] if i == i_t else 0.0) - loss) for i in range(k)]
    return np.array(out)


GRID = np.linspace(-30, 30, 601)
"""The positions s over which the general algorithm takes the max defining α_t."""


class GeneralAlgorithm24:
    """Algorithm 24 for any potential, literally: ``Φ_T`` and ``Φ_T''`` are callables; ``Φ_{t−1}``
    is built backward from (A.3) with equality,
    ``Φ_{t−1}(s) = (½ + Kα_t) Φ_t(s−1) + (½ − Kα_t) Φ_t(s+1)``,
    ``α_t = ½ max_s Φ_t''(s−1)/(Φ_t(s−1) − Φ_t(s+1))`` (the max over a grid of s). Each ``Φ_t`` is
    kept exactly as a finite combination ``Σ_j c_j Φ_T(s + j)`` over integer offsets j, so the
    recursion costs O(T²) instead of O(2^T)."""

    def __init__(self, phi_final, phi_final_dd, horizon, n_act, grid=GRID):
        self.phi_final, self.phi_final_dd, self.k = phi_final, phi_final_dd, n_act
        self.combos = {horizon: {0: 1.0}}  # t -> {offset j: coefficient}
        self.alphas = {}
        for t in range(horizon, 0, -1):
            ratio = [self.dd(t, s - 1) / (self.phi(t, s - 1) - self.phi(t, s + 1)) for s in grid]
            alpha = 0.5 * max(ratio)
            self.alphas[t] = alpha
            a, b = 0.5 + n_act * alpha, 0.5 - n_act * alpha
            nxt = {}
            for j, c in self.combos[t].items():  # Φ_t(s ∓ 1) = Σ_j c_j Φ_T(s ∓ 1 + j)
                nxt[j - 1] = nxt.get(j - 1, 0.0) + a * c
                nxt[j + 1] = nxt.get(j + 1, 0.0) + b * c
            self.combos[t - 1] = nxt

    def phi(self, t, s):
        return sum(c * self.phi_final(s + j) for j, c in self.combos[t].items())

    def dd(self, t, s):
        return sum(c * self.phi_final_dd(s + j) for j, c in self.combos[t].items())

    def play(self, losses, uniforms):
        horizon = len(losses)
        s, out = [0.0] * self.k, []
        for t in range(1, horizon + 1):
            w = [self.phi(t, si - 1) - self.phi(t, si + 1) for si in s]
            p = [wi / sum(w) for wi in w]
            out.append(p)
            i_t = draw(p, uniforms[t - 1])
            loss = losses[t - 1][i_t]
            s = [s[i] + ((loss / p[i_t] if i == i_t else 0.0) - loss) for i in range(self.k)]
        return np.array(out)


def _game(seed=1, n_rep=3, horizon=200, k=5):
    rng = np.random.default_rng(seed)
    losses, uniforms = rng.random((n_rep, horizon, k)), rng.random((n_rep, horizon))
    losses[..., 2] = np.round(losses[..., 2])
    return losses, uniforms


@pytest.mark.parametrize("params", [{}, {"eta": 0.1}, {"eta": 0.05, "epsilon": 0.5}])
def test_fast_path_equals_literal_transcription(params):
    losses, uniforms = _game()
    player, fast = run_block(DriftingGameBandit(**params), losses, uniforms)
    eta = player.learning_rate()
    if not params:
        assert eta == pytest.approx(
            math.sqrt(2 * math.log(5) / (200 * (1 + 5 * math.sqrt(math.e))))
        )
    for r in range(3):
        slow = literal_dg_bandit(losses[r].tolist(), uniforms[r].tolist(), eta)
        assert float(np.abs(fast[r] - slow).max()) <= 1e-12


@pytest.mark.parametrize("eta", [0.01, 0.3, 1.5])
def test_reduces_to_exp3_without_exploration(eta):
    """p_{t,i} ∝ exp(−η s_{t−1,i}) and s_{t−1,i} = L̂_{t−1,i} − Σ_τ ℓ_{τ,i_τ}: the p-sequence is
    loss-based Exp3's with γ = 0 and the same fixed η, to 1e-12."""
    losses, uniforms = _game(seed=2, horizon=300)
    _, dg = run_block(DriftingGameBandit(eta=eta), losses, uniforms)
    _, exp3 = run_block(Exp3(eta=eta, gamma=0.0), losses, uniforms)
    assert float(np.abs(dg - exp3).max()) <= 1e-12


@pytest.mark.parametrize(("eta", "k"), [(0.3, 4), (0.1, 3)])
def test_general_algorithm_24_equals_the_fast_class(eta, k):
    """The general Algorithm 24, given only Φ_T(s) = exp(−η(s + R)) and its second derivative,
    builds the closed-form Φ_t and the constant α, and plays the fast class's distributions."""
    horizon, radius = 25, 3.0

    def phi_final(s):
        return math.exp(-eta * (s + radius))

    def phi_final_dd(s):
        return eta**2 * math.exp(-eta * (s + radius))

    general = GeneralAlgorithm24(phi_final, phi_final_dd, horizon, k)
    for t in (horizon, horizon - 1, 10, 1, 0):
        for s in (-7.5, -1.0, 0.0, 0.3, 4.0):
            want = float(exp_potential(s, t, horizon, eta, radius, k))
            assert general.phi(t, s) == pytest.approx(want, rel=1e-12)
    for alpha in general.alphas.values():
        assert alpha == pytest.approx(exp_alpha(eta), rel=1e-12)
    losses, uniforms = _game(seed=3, n_rep=2, horizon=horizon, k=k)
    _, fast = run_block(DriftingGameBandit(eta=eta), losses, uniforms)
    for r in range(2):
        slow = general.play(losses[r].tolist(), uniforms[r].tolist())
        assert float(np.abs(fast[r] - slow).max()) <= 1e-12


@pytest.mark.parametrize("eta", [0.05, 0.5, 1.0, 2.0])
def test_exp_potential_satisfies_a3_with_equality(eta):
    """(½ + Kα) Φ_t(s−1) + (½ − Kα) Φ_t(s+1) = Φ_{t−1}(s), α = ½ Φ_t''(s−1)/(Φ_t(s−1) − Φ_t(s+1))
    the same for every s, and Φ_t''' = −η³ Φ_t ≤ 0."""
    k, horizon, radius = 7, 20, 2.0
    s = np.linspace(-10, 10, 41)
    alpha = exp_alpha(eta)
    for t in (horizon, 11, 1):
        phi = lambda x, t=t: exp_potential(x, t, horizon, eta, radius, k)  # noqa: E731
        lhs = (0.5 + k * alpha) * phi(s - 1) + (0.5 - k * alpha) * phi(s + 1)
        assert np.allclose(lhs, exp_potential(s, t - 1, horizon, eta, radius, k), rtol=1e-12)
        ratio = 0.5 * eta**2 * phi(s - 1) / (phi(s - 1) - phi(s + 1))
        assert np.allclose(ratio, alpha, rtol=1e-12, atol=0)
    assert exp_potential(0.0, 0, horizon, eta, theorem_radius(horizon, eta, 0.2, k), k) == (
        pytest.approx(0.2, rel=1e-12)
    )  # R is the radius that makes Φ_0(0) = ε


def test_random_movements_by_exact_enumeration():
    """Luo 2016, proof of Theorem 21: E_t[z_i] = ℓ_i − p·ℓ, E_t[z_i²] ≤ 1/p_i − 1 and
    E_t[p·z] = 0, enumerating i_t ~ p_t exactly (z ≥ −1 too)."""
    rng = np.random.default_rng(4)
    for _ in range(200):
        k = int(rng.integers(1, 8))
        p = rng.dirichlet(np.full(k, 0.5)) + 1e-9
        p /= p.sum()
        loss = rng.random(k)
        loss[rng.random(k) < 0.3] = rng.integers(0, 2)
        moves = np.array([dg_movement(p, j, loss[j]) for j in range(k)])  # row j: i_t = j
        assert (moves >= -1.0).all()
        mean = p @ moves
        assert np.allclose(mean, loss - p @ loss, atol=1e-12, rtol=0)
        assert (p @ moves**2 <= 1 / p - 1 + 1e-9).all()
        assert abs(p @ (moves @ p)) <= 1e-12 * max(1.0, float(np.abs(moves).max()))


def test_declared_bound_is_the_closed_form():
    """Theorem 21: R = (1/η) ln(1/ε) + (t/η) ln((e^η + e^{−η})/2 + ½ K e^η η²), scaled by
    hi − lo; declared for ε ≤ 1/K only (ε > 1/K bounds the ⌈εK⌉-th best arm)."""
    for params, k, t in (({"eta": 0.2}, 4, 100), ({}, 10, 1000), ({"eta": 1.0}, 3, 7)):
        p, _ = run_block(DriftingGameBandit(**params), np.zeros((1, 1, k)), np.zeros((1, 1)),
                         horizon=1000)  # fmt: skip
        eta = p.learning_rate()
        direct = (math.log(k) + t * math.log((math.exp(eta) + math.exp(-eta)) / 2
                                             + 0.5 * k * math.exp(eta) * eta**2)) / eta  # fmt: skip
        assert p.regret_bound(t) == pytest.approx(direct, rel=1e-13)
        (((metric, param), value),) = p.bounds(t).items()
        assert metric == "regret" and math.isnan(param) and value == p.regret_bound(t)
    p, _ = run_block(DriftingGameBandit(eta=0.2, epsilon=0.5), np.zeros((1, 1, 4)),
                     np.zeros((1, 1)))  # fmt: skip
    assert p.bounds(10) == {} and p.regret_bound(10) > 0
    run = run_game(DriftingGameBandit(eta=0.2), "bernoulli", n_actions=4, horizon=40,
                   replicates=1, metrics={"bound": {}})  # fmt: skip
    last = run.rows[run.rows.t == 40].value.iloc[0]
    assert last == pytest.approx(theorem_radius(40, 0.2, 0.25, 4), rel=1e-12)


GOLDEN = [(10, 10**3, 283.8), (100, 10**4, 3908.6), (1000, 10**5, 47740.7)]


@pytest.mark.parametrize(("k", "horizon", "golden"), GOLDEN)
def test_golden_worst_case_values(k, horizon, golden):
    """The worst-case values of Theorem 21 at ε = 1/K and η*: sqrt(2T(1 + K√e) ln K) (η* ≤ 1),
    e.g. 283.8 at K = 10, T = 10³; the exact R at η* lies below it."""
    p, _ = run_block(DriftingGameBandit(), np.zeros((1, 1, k)), np.zeros((1, 1)), horizon=horizon)
    assert p.learning_rate() == tuned_eta(horizon, k, 1 / k) <= 1.0
    assert round(p.tuned_bound(), 1) == golden
    assert p.regret_bound(horizon) <= p.tuned_bound()


def test_tuned_rate_refused_where_the_theorem_needs_eta_at_most_one():
    with pytest.raises(ConfigError, match="exceeds 1"):
        run_block(DriftingGameBandit(epsilon=1e-300), np.zeros((1, 1, 2)), np.zeros((1, 1)))
    with pytest.raises(ConfigError, match="horizon"):
        run_game(DriftingGameBandit(), "bernoulli", n_actions=3, horizon=None, replicates=1)
    p, _ = run_block(DriftingGameBandit(eta=2.0, epsilon=1e-300), np.zeros((1, 1, 2)),
                     np.zeros((1, 1)))  # fmt: skip
    assert math.isfinite(p.regret_bound(10))  # a fixed η > 1 is allowed: the exact R holds


def test_estimate_is_unbiased_for_the_probability_used():
    """The estimates add 1{I_t = i} ℓ_{t,i}/p_{t,i} (unbiased: the suite's check) and the chips
    move by z_t with E_t[z_{t,i}] = ℓ_{t,i} − p_t·ℓ_t; 20 000 draws here with |z| ≤ 4.5 each."""
    check_estimate_unbiased(DriftingGameBandit())
    player, _ = run_block(DriftingGameBandit(eta=0.5), np.full((20_000, 5, 4), 0.5),
                          np.full((20_000, 5), 0.3), horizon=100)  # fmt: skip
    p = player.predict()
    losses = np.tile([0.0, 0.25, 1.0, 0.6], (20_000, 1))
    before, chips = player.estimates(), player.state()
    actions = np.array([draw(p[r].tolist(), u) for r, u in
                        enumerate(np.random.default_rng(3).random(20_000))])  # fmt: skip
    player.update(actions, losses[np.arange(20_000), actions], p)
    assert np.nanmax(np.abs(z_scores(player.estimates() - before, losses))) <= 4.5
    target = losses - (p * losses).sum(axis=1, keepdims=True)
    assert np.nanmax(np.abs(z_scores(player.state() - chips, target))) <= 4.5


@pytest.mark.slow
def test_a_million_rounds_stay_finite():
    run = run_game(DriftingGameBandit(), "bernoulli", n_actions=9, horizon=10**6, replicates=2,
                   metrics=["regret", "entropy"], per_decade=1)  # fmt: skip
    assert np.isfinite(run.rows.value).all()


def test_a_million_rounds_kernel_probabilities_in_unit_interval():
    rng = np.random.default_rng(5)
    losses = (rng.random((1, 10**6, 3)) < [0.2, 0.5, 0.8]).astype(np.float64)
    player, p = run_block(DriftingGameBandit(eta=0.05), losses, rng.random((1, 10**6)))
    assert np.isfinite(p).all() and (p >= 0).all() and (p <= 1).all()
    assert np.abs(p.sum(axis=-1) - 1).max() <= 1e-12
    assert np.isfinite(player.state()).all()


ADVERSARIES = [("bernoulli", {}), ("fair_coin", {}), ("ftl_killer", {}),
               ("shifting_experts", {}), ("piecewise_stochastic", {}), ("comb", {}),
               ("greedy", {}), ("heavier_half", {})]  # fmt: skip


@pytest.mark.parametrize("params", [{}, {"eta": 0.1}])
@pytest.mark.parametrize(("adversary", "adv_params"), ADVERSARIES)
def test_declared_bound_holds_in_expectation(params, adversary, adv_params):
    """Theorem 21 on oblivious adversaries and on two adaptive ones that read p_t (the theorem
    allows a non-oblivious adversary)."""
    worst = expected_bound_holds(DriftingGameBandit(**params), adversary,
                                 adversary_params=adv_params, n_actions=4, horizon=2000,
                                 replicates=32, seed=4)  # fmt: skip
    assert worst <= 1.0
