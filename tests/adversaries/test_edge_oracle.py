"""The edge-oracle stream (Luo 2016, the two constructions of Theorem 10's proof): its law, its
declared lower bound (the Bayes error) and Online BBM's mistakes on it (Theorem 9's scale)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from arena.adversaries.edge_oracle import EdgeOracle, majority_error
from arena.game import run_game
from arena.players.online_bbm import OnlineBBM, bbm_potential
from arena.spec import GameSpec
from arena.testing.common import rngs


def exact_majority_error(n: int, edge: Fraction) -> Fraction:
    p = Fraction(1, 2) + edge
    terms = [math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)]
    return sum(t for k, t in enumerate(terms) if 2 * k < n) + sum(
        t / 2 for k, t in enumerate(terms) if 2 * k == n
    )


def draw(adversary: EdgeOracle, d: int, horizon: int, n_rep: int = 2, seed: int = 0):
    adversary.reset(GameSpec("classification", d, horizon, dim=d), rngs(seed, n_rep))
    return adversary.data_block(1, horizon)


def test_bits_have_the_edge_and_warmup_none():
    """Each bit equals y w.p. ½ + edge (4σ over 50·300 bits), labels are fair, the first T_0
    rounds carry edge 0, and the held-out split has the informative law."""
    edge, d, horizon, t0 = 0.15, 50, 600, 300
    data = draw(EdgeOracle(edge=edge, warmup=t0, test_size=300), d, horizon)
    agree = data.x == data.y[:, :, None]
    n_bits = t0 * d
    for rate, p in (
        (agree[:, :t0].mean(axis=(1, 2)), 0.5),
        (agree[:, t0:].mean(axis=(1, 2)), 0.65),
    ):
        assert (np.abs(rate - p) < 4 * math.sqrt(p * (1 - p) / n_bits)).all()
    assert np.abs(data.y.mean(axis=1)).max() < 4 / math.sqrt(horizon)
    adv = EdgeOracle(edge=edge, warmup=t0, test_size=300)
    draw(adv, d, horizon)
    test = adv.test_split()
    assert test.x.shape == (2, 300, d)
    rate = (test.x == test.y[:, :, None]).mean(axis=(1, 2))
    assert (np.abs(rate - 0.65) < 4 * math.sqrt(0.65 * 0.35 / n_bits)).all()


def test_majority_error_is_the_exact_binomial_tail():
    """Luo 2016, proof of Theorem 10: N = 51 bits right w.p. 0.7 (thesis γ = 0.1 in ½ + 2γ):
    exact error 1.364e-3 against Hoeffding's exp(−8Nγ²) = 1.69e-2; odd and even n against exact
    rationals (1e-13 relative: scipy's binomial CDF)."""
    assert majority_error(51, 0.2) == pytest.approx(1.3641e-3, abs=5e-8)
    assert math.exp(-8 * 51 * 0.1**2) == pytest.approx(1.6907e-2, abs=5e-6)
    for n in (1, 2, 7, 10, 51):
        for edge in ("0", "1/10", "1/5", "9/20"):
            exact = float(exact_majority_error(n, Fraction(edge)))
            assert majority_error(n, float(Fraction(edge))) == pytest.approx(exact, rel=1e-13)
            assert exact <= math.exp(-2 * n * float(Fraction(edge)) ** 2) + 1e-15


def test_declared_lower_bound_and_online_bbm_at_theorem_9_scale():
    """The declared bound is ``½·min(t, T_0) + err(d)·(t − T_0)⁺``. Online BBM with N = d
    oracle lanes and the matched γ = 2·edge is the majority vote: its mean mistakes sit within
    4σ of the bound (which it attains: here Φ_0(0) = err(d)), and below Theorem 9's
    ``exp(−Nγ²/2)·T`` scale after the warm-up; a perceptron is no better than the bound."""
    edge, d, horizon, t0, n_rep = 0.15, 21, 1500, 100, 4
    adversary = EdgeOracle(edge=edge, warmup=t0)
    adversary.reset(GameSpec("classification", d, horizon, dim=d), rngs(0, 1))
    err = majority_error(d, edge)
    assert adversary.lower_bounds(50)[("mistakes", math.nan)] == 25.0
    assert adversary.lower_bounds(horizon)[("mistakes", math.nan)] == pytest.approx(
        50 + err * (horizon - t0), rel=1e-15
    )
    gamma = 2 * edge
    assert bbm_potential(0, 0, d, gamma) == pytest.approx(err, rel=1e-12)
    metrics = ["mistakes", "lower_bound"]
    kw = dict(n_actions=d, horizon=horizon, replicates=n_rep, metrics=metrics)
    for player in (OnlineBBM(n_learners=d, gamma=gamma), "perceptron"):
        rows = run_game(player, adversary, **kw).rows
        last = rows[rows.t == horizon].groupby("metric").value
        mean, bound = last.mean()["mistakes"], last.mean()["lower_bound:mistakes"]
        var = (t0 * 0.25 + (horizon - t0) * err * (1 - err)) / n_rep
        assert mean >= bound - 4 * math.sqrt(var), player
        if isinstance(player, OnlineBBM):
            assert abs(mean - bound) <= 4 * math.sqrt(var)
            assert mean - t0 / 2 <= math.exp(-d * gamma**2 / 2) * (horizon - t0)
