"""Tsallis-INF: literal transcription, golden values, the normalization, unbiasedness of both
estimators, numerical robustness and Theorem 1's bound on several adversaries."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.bandit.checks import check_estimate_unbiased
from arena.game import run_game
from arena.players.tsallis_inf import TsallisInf, _tsallis_normalize, tsallis_probs
from tests.helpers.bandit import draw, expected_bound_holds, run_block, z_scores


def literal_weights(est, eta):
    """w_i = 4 (η (L̂_i − x))^{−2} with Σ w = 1, x found by plain bisection on (min L̂ − 2√K/η,
    min L̂ − 2/η] to the last bit (another method than the player's Newton iteration)."""
    k, low = len(est), min(est)
    a, b = low - 2 * math.sqrt(k) / eta, low - 2 / eta  # Σ w(a) ≤ 1 ≤ Σ w(b)
    for _ in range(2000):
        mid = 0.5 * (a + b)
        if mid in (a, b):
            break
        if sum(4 / (eta * (e - mid)) ** 2 for e in est) > 1:
            b = mid
        else:
            a = mid
    w = [4 / (eta * (e - b)) ** 2 for e in est]
    return [wi / sum(w) for wi in w]


def literal_tsallis_inf(losses, uniforms, rv):
    """Zimmert & Seldin 2021, Algorithm 1 with α = ½, one replicate, plain Python floats."""
    horizon = len(losses)
    est, out = [0.0] * len(losses[0]), []
    for t in range(1, horizon + 1):
        eta = (4 if rv else 2) / math.sqrt(t)
        w = literal_weights(est, eta)
        out.append(w)
        a = draw(w, uniforms[t - 1])
        for i in range(len(est)):
            b = 0.5 if rv and w[i] >= eta**2 else 0.0
            est[i] += (1 if i == a else 0) * (losses[t - 1][i] - b) / w[i] + b
    return np.array(out)


@pytest.mark.parametrize("estimator", ["rv", "iw"])
def test_fast_path_equals_literal_transcription(estimator):
    rng = np.random.default_rng(2)
    losses, uniforms = rng.random((3, 300, 5)), rng.random((3, 300))
    losses[..., 1] = np.round(losses[..., 1])
    losses[..., 3] *= 0.2  # a better arm, so the probabilities spread and B switches on
    _, fast = run_block(TsallisInf(estimator=estimator), losses, uniforms)
    for r in range(3):
        slow = literal_tsallis_inf(losses[r].tolist(), uniforms[r].tolist(), estimator == "rv")
        assert float(np.abs(fast[r] - slow).max()) <= 1e-12


def test_golden_values():
    """K = 2: p_1 = (½, ½); u = 0.1 draws arm 0 with loss ℓ, so L̂ = (2ℓ, 0). At t = 2,
    w_i = 4 (η_2 (L̂_i − x))^{−2} = (9/25, 16/25) iff η_2 · 2ℓ = 2/(3/5) − 2/(4/5) = 5/6:
    ℓ = 5/(12√2) for "iw" (η_2 = 2/√2) and 5/(24√2) for "rv" (η_2 = 4/√2; B = 0 while η_t² > 1)."""
    for estimator, loss in (("iw", 5 / (12 * math.sqrt(2))), ("rv", 5 / (24 * math.sqrt(2)))):
        losses = np.array([[[loss, 0.3], [0.0, 0.0]]])
        _, p = run_block(TsallisInf(estimator=estimator), losses, np.array([[0.1, 0.9]]))
        assert np.allclose(p[0], [[0.5, 0.5], [9 / 25, 16 / 25]], atol=1e-12, rtol=0)


def test_reduced_variance_estimate_by_hand():
    """At t = 64, η_t = 4/8 = ½ and η_t² = ¼: with p = (0.5, 0.3, 0.2), B = (½, ½, 0); drawing arm 1
    with loss 0.9 adds (½, (0.9 − ½)/0.3 + ½, 0) = (0.5, 11/6, 0) to L̂."""
    player, _ = run_block(TsallisInf(), np.zeros((1, 63, 3)), np.zeros((1, 63)))
    assert player.learning_rate() == 0.5
    before = player.estimates()
    player.update(np.array([1]), np.array([0.9]), np.array([[0.5, 0.3, 0.2]]))
    assert np.allclose(player.estimates() - before, [[0.5, 11 / 6, 0.0]], atol=1e-15, rtol=0)


def test_normalization_is_exact_and_never_fails():
    """Σ w = 1 to 1e-12 before the final division, readable and kernel equal, on estimates up to
    1e12 apart, negative ones (the RV estimate), ties and rates from 4 down to 10⁻⁴."""
    rng = np.random.default_rng(9)
    cases = [rng.random((4, 9)) * s for s in (1.0, 1e3, 1e6, 1e12)]
    cases += [-rng.random((2, 9)) * 50, np.zeros((1, 9)), np.array([[0.0] * 8 + [1e15]])]
    for est in cases:
        for eta in (4.0, 0.5, 4e-3, 1e-4):
            w = tsallis_probs(est, eta)
            out = np.empty(est.shape[1])
            for r in range(est.shape[0]):
                _tsallis_normalize(est[r], eta, out)
                assert float(np.abs(out - w[r]).max()) <= 1e-14
                slow = literal_weights(est[r].tolist(), eta)
                assert float(np.abs(w[r] - slow).max()) <= 1e-12
            assert np.isfinite(w).all() and (w >= 0).all() and (w <= 1).all()
            assert np.abs(w.sum(axis=1) - 1).max() <= 1e-15 * 9


@pytest.mark.parametrize("estimator", ["rv", "iw"])
def test_estimate_is_unbiased_for_the_probability_used(estimator):
    """E[ℓ̂_{t,i} | w_t] = ℓ_{t,i} for the probability I_t was drawn with: the conformance test
    (1e-6 family-wise) and, late in a game where B_{t,i} = ½ for the likely arms, |z| ≤ 4.5."""
    check_estimate_unbiased(TsallisInf(estimator=estimator))
    m = 20_000
    skew = np.broadcast_to([0.9, 0.1, 0.5, 0.7], (m, 200, 4)).copy()
    player, _ = run_block(TsallisInf(estimator=estimator), skew, np.full((m, 200), 0.37))
    p = player.predict()
    assert estimator == "iw" or (p[0] >= player.learning_rate() ** 2).sum() >= 1
    losses = np.tile([0.0, 0.25, 1.0, 0.6], (m, 1))
    before = player.estimates()
    actions = np.array([draw(p[r].tolist(), u) for r, u in
                        enumerate(np.random.default_rng(3).random(m))])  # fmt: skip
    player.update(actions, losses[np.arange(m), actions], p)
    z = z_scores(player.estimates() - before, losses)
    assert np.nanmax(np.abs(z)) <= 4.5


@pytest.mark.parametrize("estimator", ["rv", "iw"])
def test_a_million_rounds_stay_finite(estimator):
    run = run_game(TsallisInf(estimator=estimator), "bernoulli", n_actions=9, horizon=10**6,
                   replicates=2, metrics=["regret", "entropy"], per_decade=1)  # fmt: skip
    assert np.isfinite(run.rows.value).all()  # and the driver validated every p_t


@pytest.mark.parametrize("estimator", ["rv", "iw"])
def test_extreme_estimates_stay_a_distribution(estimator):
    """Estimates 1e7 apart (a 10⁷-round game's scale) at the rate of t = 10⁷."""
    player, _ = run_block(TsallisInf(estimator=estimator), np.zeros((1, 1, 9)), np.zeros((1, 1)))
    player._est[...] = np.linspace(0, 1e7, 9)
    player._rounds = 10**7
    p = player.predict()
    assert np.isfinite(p).all() and abs(p.sum() - 1) <= 1e-14 and p[0, 0] > 0.99


ADVERSARIES = [("bernoulli", {}), ("fair_coin", {}), ("ftl_killer", {}),
               ("shifting_experts", {}), ("piecewise_stochastic", {}), ("comb", {}),
               ("greedy", {}), ("heavier_half", {})]  # fmt: skip


@pytest.mark.parametrize("estimator", ["rv", "iw"])
@pytest.mark.parametrize(("adversary", "adv_params"), ADVERSARIES)
def test_declared_bound_holds_in_expectation(estimator, adversary, adv_params):
    """Theorem 1 on oblivious adversaries and, through the regret metric (E[max] ≥ the
    pseudo-regret's max of E), on two adaptive ones that read w_t."""
    worst = expected_bound_holds(TsallisInf(estimator=estimator), adversary,
                                 adversary_params=adv_params, n_actions=4, horizon=2000,
                                 replicates=32, seed=4)  # fmt: skip
    assert worst <= 1.0


def test_bound_is_the_theorem():
    """Zimmert & Seldin 2021, Theorem 1: 4√(KT) + 1 (IW), 2√(KT) + 10 K ln T + 16 (RV)."""
    for k, horizon in ((2, 100), (9, 10_000)):
        p, _ = run_block(TsallisInf(estimator="iw"), np.zeros((1, 1, k)), np.zeros((1, 1)))
        assert p.regret_bound(horizon) == pytest.approx(4 * math.sqrt(k * horizon) + 1)
        p, _ = run_block(TsallisInf(), np.zeros((1, 1, k)), np.zeros((1, 1)))
        want = 2 * math.sqrt(k * horizon) + 10 * k * math.log(horizon) + 16
        assert p.regret_bound(horizon) == pytest.approx(want)


def test_stochastic_regime_regret_is_logarithmic():
    """Best of both worlds, the stochastic half: with a gap of 0.2 the mean pseudo-regret grows
    far slower than √t (from t = 10³ to 10⁴ it at most doubles, √t would triple it)."""
    rows = run_game(TsallisInf(), "bernoulli", n_actions=4, horizon=10_000, replicates=16,
                    adversary_params={"gap": 0.2}, metrics=["pseudo_regret"], seed=1,
                    per_decade=1).rows  # fmt: skip
    mean = rows.groupby("t").value.mean()
    assert mean[10_000] <= 2.0 * mean[1000]
