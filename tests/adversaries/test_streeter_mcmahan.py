"""streeter_mcmahan: Kotłowski 2017's Lemma 3.1 environment, the walk conditioned to end low."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from arena import play
from arena.adversaries.streeter_mcmahan import StreeterMcMahan, streeter_mcmahan_bound
from arena.errors import ConfigError
from arena.oco.domains import Domain
from arena.oco.losses import RoundData, feedback
from arena.players.kt import KT
from arena.spec import GameSpec
from tests.helpers import rngs
from tests.helpers.oco_adversaries import (
    assert_replicate_determinism,
    assert_split_invariant,
    spec_for,
)


def literal_bound(u: float, horizon: int, eps: float, G: float = 1.0, only: int | None = None):
    """The proof's bound by exact rational sums over the binomial law, every threshold tried (or
    the threshold ``only``)."""
    best = None
    for minus in range(horizon + 1) if only is None else [only]:
        weights = [Fraction(math.comb(horizon, m), 2**horizon) for m in range(minus, horizon + 1)]
        prob = sum(weights)
        drop = sum(
            w * (2 * m - horizon) for w, m in zip(weights, range(minus, horizon + 1), strict=True)
        )
        value = G * u * float(drop / prob) - eps * float((1 - prob) / prob)
        if best is None or value > best[3]:
            best = (minus, float(prob), float(drop / prob), value)
    return best


def literal_signs(adversary, spec, seed: int) -> np.ndarray:
    """The sequence written from the sampling rule, one replicate and one round at a time: m from
    the conditioned Binomial(T, ½) by inverse CDF, then −1 with probability (−1 left)/(rounds
    left)."""
    horizon = spec.horizon
    minus0 = streeter_mcmahan_bound(adversary.u, horizon, adversary.origin_regret).minus
    weights = [math.comb(horizon, m) for m in range(minus0, horizon + 1)]
    out = np.empty((spec.n_replicates, horizon))
    for r, rng in enumerate(rngs(seed, spec.n_replicates)):
        draw, acc, m = rng.random() * sum(weights), 0, horizon
        for j, w in enumerate(weights):
            acc += w
            if draw < acc:
                m = minus0 + j
                break
        left = horizon
        for t in range(horizon):
            if rng.random() < m / left:
                out[r, t] = -1.0
                m -= 1
            else:
                out[r, t] = 1.0
            left -= 1
    return out * adversary.G


@pytest.mark.parametrize(
    ("u", "horizon", "eps"), [(1.0, 1, 1.0), (1.0, 12, 1.0), (2.5, 30, 0.3), (1.0, 40, 0.0)]
)
def test_bound_equals_the_exact_rational_computation(u, horizon, eps):
    got = streeter_mcmahan_bound(u, horizon, eps)
    _, _, _, value = literal_bound(u, horizon, eps)
    # thresholds whose values tie exactly (T = 1) may be split either way by rounding: the
    # chosen one must reach the exact maximum, and its statistics be the exact ones
    assert got.value == pytest.approx(value, rel=1e-10, abs=1e-12)
    _, prob, drop, value = literal_bound(u, horizon, eps, only=got.minus)
    assert got.prob == pytest.approx(prob, rel=1e-12)
    assert got.mean_drop == pytest.approx(drop, rel=1e-12)
    assert got.value == pytest.approx(value, rel=1e-10, abs=1e-12)


def test_bound_has_the_lemma_order():
    # Kotłowski 2017, Lemma 3.1: order |u|√(T log(|u|√T/ε)); measured ratios 0.66, 0.91, 1.03
    ratios = [
        streeter_mcmahan_bound(1.0, t, 1.0).value / math.sqrt(t * math.log(math.sqrt(t)))
        for t in (100, 10**4, 10**6)
    ]
    assert [round(r, 2) for r in ratios] == [0.66, 0.91, 1.03]
    # far below the √(2T/π)·u of a plain random walk would be a bug: the log factor is there
    assert streeter_mcmahan_bound(1.0, 10**6, 1.0).value > 2 * math.sqrt(2e6 / math.pi)


@pytest.mark.parametrize("params", [{}, {"u": 3.0, "origin_regret": 0.5, "G": 2.0}])
def test_data_equal_the_literal_sampling_rule(params):
    adv = StreeterMcMahan(**params)
    spec = spec_for(adv, n_rep=4, horizon=37)
    data = assert_split_invariant(adv, spec, seed=5)
    np.testing.assert_array_equal(data.g[:, :, 0], literal_signs(adv, spec, 5))
    assert_replicate_determinism(adv, spec)
    # every sequence lies in the event: D_T = −Σ s_t ≥ k
    minus = streeter_mcmahan_bound(adv.u, 37, adv.origin_regret).minus
    assert ((data.g[:, :, 0] < 0).sum(axis=1) >= minus).all()


def test_sequential_rule_is_uniform_on_each_count():
    # probability of each ±1 sequence with m coins −1 under "−1 w.p. (−1 left)/(rounds left)"
    horizon = 6
    for m in range(horizon + 1):
        for seq in itertools.product((-1, 1), repeat=horizon):
            if seq.count(-1) != m:
                continue
            prob, minus, left = Fraction(1), m, horizon
            for s in seq:
                p_minus = Fraction(minus, left)
                prob *= p_minus if s == -1 else 1 - p_minus
                minus -= s == -1
                left -= 1
            assert prob == Fraction(1, math.comb(horizon, m))


def all_sequences_of_the_event(adv: StreeterMcMahan, horizon: int) -> np.ndarray:
    """Every ±G sequence of the conditioning event, (n, T), and its fair-coin weight."""
    minus = streeter_mcmahan_bound(adv.u, horizon, adv.origin_regret, adv.G).minus
    seqs = np.array(list(itertools.product((-1.0, 1.0), repeat=horizon)))
    return adv.G * seqs[(seqs < 0).sum(axis=1) >= minus]


def exact_conditional_regret(player, adv: StreeterMcMahan, horizon: int) -> np.ndarray:
    """``E[R_t(u) | E]`` for t = 1..T, exactly: the player plays every sequence of E (each equally
    likely given E) as one replicate."""
    g = all_sequences_of_the_event(adv, horizon)
    n = g.shape[0]
    spec = GameSpec(
        "oco", 1, horizon, n_replicates=n, dim=1, domain=Domain("unconstrained"),
        loss="linear", gradient_bound=adv.G,
    )  # fmt: skip
    player.reset(spec, rngs(0, n))
    regret = np.zeros(n)
    out = []
    for t in range(horizon):
        w = player.predict()
        rd = RoundData(g=g[:, t : t + 1])
        player.update(feedback("linear", 0.0, w, rd))
        regret += g[:, t] * (w[:, 0] - adv.u)
        out.append(regret.mean())
    return np.array(out)


@pytest.mark.parametrize(("wealth", "G"), [(1.0, 1.0), (0.25, 1.0), (1.0, 2.0)])
def test_kt_meets_the_declared_bound_exactly_in_expectation(wealth, G):
    # KT's origin regret is at most G·ε₀ at every t (Orabona & Pál 2016): ε = G·ε₀
    horizon = 14
    adv = StreeterMcMahan(u=1.0, origin_regret=G * wealth, G=G)
    spec = spec_for(adv, n_rep=1, horizon=horizon)
    adv.reset(spec, rngs(0, 1))
    mean = exact_conditional_regret(KT(initial_wealth=wealth), adv, horizon)
    declared = [adv.lower_bounds(t)[("comparator_regret", 1.0)] for t in range(1, horizon + 1)]
    assert (mean >= np.array(declared) - 1e-9).all()
    assert declared[-1] > 0  # not vacuous at T


def test_the_zero_player_attains_the_bound_with_zero_origin_regret():
    horizon = 10
    adv = StreeterMcMahan(u=2.0, origin_regret=0.0)
    adv.reset(spec_for(adv, n_rep=1, horizon=horizon), rngs(0, 1))

    class Zero(KT):
        def predict(self, x=None):
            return np.zeros((self._coin_sum.shape[0], 1))

    mean = exact_conditional_regret(Zero(), adv, horizon)
    declared = [adv.lower_bounds(t)[("comparator_regret", 1.0)] for t in range(1, horizon + 1)]
    np.testing.assert_allclose(mean, declared, rtol=1e-12)


def test_engine_rows_and_refusals():
    rows = play(
        "kt", StreeterMcMahan(u=1.0, origin_regret=1.0), n_actions=1, horizon=100, replicates=64,
        checkpoints=[50, 100], metrics=["comparator_regret", "lower_bound"],
    )  # fmt: skip
    lb = rows[rows.metric == "lower_bound:comparator_regret"].set_index("t").value
    assert lb.loc[100].iloc[0] == pytest.approx(streeter_mcmahan_bound(1.0, 100, 1.0).value)
    reg = rows[(rows.metric == "comparator_regret") & (rows.param == 1.0) & (rows.t == 100)]
    se = reg.value.std(ddof=1) / math.sqrt(len(reg))
    assert reg.value.mean() >= lb.loc[100].iloc[0] - 4 * se
    with pytest.raises(ConfigError, match="1-d"):
        StreeterMcMahan().resolve_dim(3)
