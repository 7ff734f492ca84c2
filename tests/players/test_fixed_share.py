"""Oracle tests of Fixed Share (``arena.players.fixed_share``): Herbster & Warmuth 1998; CBL Thm
5.2, Herbster & Warmuth 1998; Bousquet & Warmuth 2002 and CBL Thm 5.2 / Cor. 5.1.

Every constant comes from those sources (copied here with a citation; no external file is read at
test time). Deterministic inequalities use ``lhs <= rhs + 1e-9·max(1, |rhs|)`` (our tolerance
convention).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.special import logsumexp

from arena import GameSpec
from arena.adversaries.replay import Replay
from arena.apps.hydra_support import generated_node
from arena.errors import ConfigError
from arena.params import validate_params
from arena.players.fixed_share import FixedShare
from arena.players.hedge import Hedge
from tests.helpers import assert_below, check_declared, metric_table, save_matrix, traced
from tests.helpers.experts import (
    assert_simplex,
    loss_matrices,
    play_blocks,
    play_catalog,
    play_loop,
    spec_for,
)

P_ATOL = 1e-10
"""The transcription mixes in the linear domain, the player in the log domain; both are O(T)
sequences of roundings of ~1e-16 relative, so 200 rounds stay below 1e-13, and 1e-10 still
separates a wrong formula (an error of order α or η per round) by many orders of magnitude."""

IDENTITY_RTOL = 1e-9
"""Herbster & Warmuth 1998: the path identity matched to 1e-9 (sums of ≤ 6 logs of O(1) numbers)."""


def literal_fixed_share(losses, eta, alpha, lo=0.0, hi=1.0):
    """CBL §5.2 / Herbster & Warmuth 1998, literally: w_1 uniform; p_t = w_t;
    v_{t,i} ∝ w_{t,i} e^{−η l_{t,i}}; w_{t+1,i} = α/N + (1 − α) v_{t,i}. One game, (T, N) losses."""
    horizon, n = losses.shape
    w = [1.0 / n] * n
    out = np.empty((horizon, n))
    for t in range(horizon):
        total = sum(w)
        out[t] = [wi / total for wi in w]
        unit = [(losses[t][i] - lo) / (hi - lo) for i in range(n)]
        v = [w[i] * math.exp(-eta * unit[i]) for i in range(n)]
        s = sum(v)
        v = [vi / s for vi in v]
        w = [alpha / n + (1.0 - alpha) * v[i] for i in range(n)]
    return out


def cbl_bound(m, t, n, alpha, eta):
    """CBL Thm 5.2 (CBL Thm 5.2) for unit losses, one value of m."""
    term = 0.0 if m == 0 else m * math.log(1.0 / alpha)
    rest = 0.0 if t - m - 1 == 0 else (t - m - 1) * math.log(1.0 / (1.0 - alpha))
    return ((m + 1) * math.log(n) + term + rest) / eta + eta * t / 8.0


def resolved(player, n, horizon):
    p = player.clone()
    p.reset(GameSpec("experts", n, horizon), [np.random.default_rng(0)])
    return p.learning_rate(), p.switching_rate()


PARAMS = [
    {"eta": 0.5, "alpha": 0.05, "n_switches": None},
    {"eta": 2.0, "alpha": 0.2, "n_switches": 2},
    {"eta": 0.1, "alpha": 0.0, "n_switches": None},
    {"eta": "tuned", "alpha": "tuned", "n_switches": 3},
    {"eta": 1.0, "alpha": 0.9, "n_switches": 1},
]


# ----------------------------------------------------------------------------------------------
# 1. literal transcription: predict/update, play_block (several splits), engine + replay


@pytest.mark.parametrize("params", PARAMS, ids=lambda p: f"{p['eta']}-{p['alpha']}")
@pytest.mark.parametrize("n_act", [2, 5])
def test_matches_literal_transcription(params, n_act, tmp_path):
    horizon = 200
    rng = np.random.default_rng(n_act)
    mats = loss_matrices(rng, horizon, n_act)
    losses = np.stack(list(mats.values()))
    player = FixedShare(**params)
    eta, alpha = resolved(player, n_act, horizon)
    want = np.stack([literal_fixed_share(m, eta, alpha) for m in mats.values()])
    spec = spec_for(losses)
    np.testing.assert_allclose(play_loop(player, losses, spec), want, rtol=0, atol=P_ATOL)
    for cuts in ([1], [7, 8, 100], list(range(0, horizon, 13))):
        got = play_blocks(player, losses, spec, cuts=cuts)
        np.testing.assert_allclose(got, want, rtol=0, atol=P_ATOL)
    _, tr = traced(
        player,
        Replay(path=save_matrix(tmp_path, losses)),
        tmp_path,
        horizon=horizon,
        replicates=3,
        metrics={"regret": {}},
    )
    np.testing.assert_array_equal(tr["losses"], losses)
    np.testing.assert_allclose(tr["probs"], want, rtol=0, atol=P_ATOL)
    assert_simplex(tr["probs"], "engine trace")


def test_affine_declared_range(tmp_path):
    # losses lo + (hi − lo)·l on the declared range [lo, hi] are mapped back to l: same p, and the
    # regret (and the declared bound) scale by hi − lo (metamorphic tests)
    rng = np.random.default_rng(4)
    unit = rng.random((2, 300, 4))
    lo, hi = -1.0, 2.0
    kw = {"horizon": 300, "replicates": 2, "metrics": {"regret": {}, "bound": {}}}
    player = FixedShare(eta=0.7, alpha=0.03, n_switches=2)
    rows_a, a = traced(player, Replay(path=save_matrix(tmp_path, unit)), tmp_path, **kw)
    wide = Replay(path=save_matrix(tmp_path, lo + (hi - lo) * unit), loss_range=[lo, hi])
    rows_b, b = traced(player, wide, tmp_path, **kw)
    np.testing.assert_allclose(b["probs"], a["probs"], rtol=0, atol=1e-12)
    for metric in ("regret", "bound:regret"):
        # 300 terms of size ≤ 3: float sums agree to ~1e-12 relative
        np.testing.assert_allclose(
            metric_table(rows_b, metric)[1], 3.0 * metric_table(rows_a, metric)[1], rtol=1e-9
        )


# ----------------------------------------------------------------------------------------------
# 2. exact identity: Fixed Share = Bayes over all N^T switching paths (Herbster & Warmuth 1998)


def path_mixture(losses, eta, alpha):
    """Brute force over every path i_{1:T}: prior P(i_1) = 1/N, P(i_{t+1} = j | i_t = i) =
    α/N + (1 − α)·1[i = j]. Returns (−(1/η) ln Σ prior e^{−η L(path)}, marginals p_t (T, N))."""
    horizon, n = losses.shape
    log_prior, loss_to, last = [], [], []
    for path in itertools.product(range(n), repeat=horizon):
        lp = -math.log(n)
        for a, b in itertools.pairwise(path):
            step = alpha / n + (1.0 - alpha) * (a == b)
            lp += math.log(step) if step > 0 else -math.inf  # α = 0: no switching paths
        log_prior.append(lp)
        loss_to.append(np.cumsum([0.0, *(losses[t, path[t]] for t in range(horizon))]))
        last.append(path)
    log_prior, loss_to, paths = np.array(log_prior), np.array(loss_to), np.array(last)
    total = -logsumexp(log_prior - eta * loss_to[:, -1]) / eta
    marg = np.empty((horizon, n))
    for t in range(horizon):
        logw = log_prior - eta * loss_to[:, t]  # data before round t + 1
        for j in range(n):
            marg[t, j] = math.exp(logsumexp(logw[paths[:, t] == j]) - logsumexp(logw))
    return total, marg


@pytest.mark.parametrize("case", range(30))
def test_bayes_over_switching_paths(case):
    # Herbster & Warmuth 1998: Σ_t m_t^{FS} = −(1/η) ln Σ_paths prior(path) e^{−η L(path)} exactly,
    # with m_t = −(1/η) ln Σ_i p_{t,i} e^{−η l_{t,i}}; and p_t is the posterior marginal of i_t.
    # T ≤ 6, N ≤ 3, 30 random cases (matched to 1e-9).
    rng = np.random.default_rng(case)
    horizon, n = int(rng.integers(1, 7)), int(rng.integers(2, 4))
    eta = float(rng.choice([0.1, 0.5, 1.0, 3.0]))
    alpha = float(rng.choice([0.0, 0.05, 0.3, 0.7]))
    losses = rng.random((horizon, n)) if case % 2 else rng.integers(0, 2, (horizon, n)) * 1.0
    probs = play_loop(
        FixedShare(eta=eta, alpha=alpha, n_switches=None), losses[None], spec_for(losses[None])
    )[0]
    mix = -np.log(np.einsum("tn,tn->t", probs, np.exp(-eta * losses))) / eta
    want, marg = path_mixture(losses, eta, alpha)
    assert abs(mix.sum() - want) <= IDENTITY_RTOL * max(1.0, abs(want)), (mix.sum(), want)
    # marginals: sums of ≤ 729 terms, compared in float64 to 1e-12
    np.testing.assert_allclose(probs, marg, rtol=0, atol=1e-12)


def test_golden_second_round():
    # two experts, l_1 = (0, 1): v_1 = (1, e^{−η})/(1 + e^{−η}), p_2 = α/2 + (1 − α) v_1
    # (update of Herbster & Warmuth 1998 by hand); p_1 uniform (structural invariant)
    eta, alpha = 0.8, 0.1
    p = FixedShare(eta=eta, alpha=alpha, n_switches=None)
    p.reset(GameSpec("experts", 2, 5), [None])
    assert p.predict()[0].tolist() == [0.5, 0.5]
    p.update(np.array([[0.0, 1.0]]))
    v = np.array([1.0, math.exp(-eta)]) / (1.0 + math.exp(-eta))
    np.testing.assert_allclose(p.predict()[0], alpha / 2 + (1 - alpha) * v, rtol=0, atol=1e-15)


# ----------------------------------------------------------------------------------------------
# 3. declared bounds on the adversary catalog (CBL Thm 5.2, CBL Thm 5.2)

BOUND_PARAMS = [
    {},  # tuned η and α for n_switches = 3
    {"eta": 0.5, "alpha": 0.01, "n_switches": 2},
    {"eta": 2.0, "alpha": 0.3, "n_switches": 5},
    {"eta": 1.0, "alpha": 0.9, "n_switches": 2},  # α > N/(N+1) for N = 2: B_t(m) decreases in m
]


@pytest.mark.parametrize(("n_act", "horizon"), [(2, 2000), (10, 200), (50, 2000)])
def test_declared_bounds_hold_on_the_catalog(n_act, horizon, tmp_path):
    checked = 0
    ks = [0, 1, 2, 3, 4, 5]
    metrics = {"regret": {}, "shifting_regret": {"k": ks}, "bound": {}}
    for params in BOUND_PARAMS:
        player = FixedShare(**params)
        eta, alpha = resolved(player, n_act, horizon)
        for label, rows in play_catalog(player, tmp_path, n_act, horizon, metrics, replicates=2):
            label = f"{params} {label} N={n_act} T={horizon}"
            checked += check_declared(rows, label)
            ts = np.unique(rows.t.to_numpy())
            # the player's own bound is the test's transcription of CBL Thm 5.2
            k = params.get("n_switches", 3)
            declared = metric_table(rows, "bound:shifting_regret", float(k))[1]
            own = [
                max(cbl_bound(m, t, n_act, alpha, eta) for m in range(min(k, t - 1) + 1))
                for t in ts
            ]
            np.testing.assert_allclose(declared, np.broadcast_to(own, declared.shape), rtol=1e-12)
            # every budget m ≤ 5 against the k-switch DP optimum (m ≤ 5, 200 cases)
            for m in ks:
                bound = [
                    max(cbl_bound(j, t, n_act, alpha, eta) for j in range(min(m, t - 1) + 1))
                    for t in ts
                ]
                assert_below(metric_table(rows, "shifting_regret", float(m))[1], bound, label)
    assert checked > 0


def test_tuned_rates_and_row_14():
    # CBL Cor. 5.1 / CBL Cor. 5.1: with α = m/(T−1) the bracket at T is
    # (m+1) ln N + (T−1) H(m/(T−1)) and the tuned η gives sqrt((T/2)[(m+1) ln N + (T−1) H])
    horizon, n, m = 1001, 7, 4
    p = FixedShare(n_switches=m)
    p.reset(GameSpec("experts", n, horizon), [None])
    a = m / (horizon - 1)
    entropy = -a * math.log(a) - (1 - a) * math.log(1 - a)
    bracket = (m + 1) * math.log(n) + (horizon - 1) * entropy
    assert p.switching_rate() == a
    assert p.learning_rate() == pytest.approx(math.sqrt(8 * bracket / horizon), rel=1e-12)
    want = math.sqrt(horizon / 2 * bracket)
    assert p.bounds(horizon)[("shifting_regret", float(m))] == pytest.approx(want, rel=1e-12)


def test_bracket_is_monotone_in_m_iff_alpha_small():
    # B(m) − B(m−1) = [ln N + ln((1−α)/α)]/η ≥ 0 iff α ≤ N/(N+1): then B_t(k) covers ≤ k switches
    for n in (2, 3, 10):
        for alpha in np.linspace(0.01, 0.99, 99):
            diffs = np.diff([cbl_bound(m, 100, n, alpha, 1.0) for m in range(6)])
            assert (diffs >= -1e-12).all() == (alpha <= n / (n + 1) + 1e-12), (n, alpha)


# ----------------------------------------------------------------------------------------------
# 4. reductions and invariances


def test_alpha_zero_is_hedge(tmp_path):
    # α = 0 removes the share step: Fixed Share is Hedge with the same η (Herbster & Warmuth 1998;
    # Bousquet & Warmuth 2002);
    # with n_switches = 0 the tuned α is 0 and the tuned η is Hedge's sqrt(8 ln N/T)
    rng = np.random.default_rng(9)
    losses = rng.random((2, 400, 6))
    path = save_matrix(tmp_path, losses)
    kw = {"horizon": 400, "replicates": 2, "metrics": {"regret": {}}}
    for fs, hedge in [
        (FixedShare(eta=0.9, alpha=0.0, n_switches=None), Hedge(eta=0.9)),
        (FixedShare(n_switches=0), Hedge()),
    ]:
        _, a = traced(fs, Replay(path=path), tmp_path, **kw)
        _, b = traced(hedge, Replay(path=path), tmp_path, **kw)
        # log-space products vs exp(−η(L − min L)): ~T ulps of ηL apart
        np.testing.assert_allclose(a["probs"], b["probs"], rtol=0, atol=1e-12)


def test_shift_and_permutation(tmp_path):
    # invariance/I2: l_t + c_t·1 leaves v_t (hence p) unchanged; permuting experts
    # permutes p. Shifted sums round differently before normalization: 1e-12.
    rng = np.random.default_rng(10)
    base = rng.random((300, 5)) / 2
    shift = rng.random((300, 1)) / 2
    perm = rng.permutation(5)
    player = FixedShare(eta=1.3, alpha=0.02, n_switches=None)
    spec = spec_for(base[None])
    a = play_loop(player, base[None], spec)
    b = play_loop(player, (base + shift)[None], spec)
    c = play_loop(player, base[None, :, perm], spec)
    np.testing.assert_allclose(b, a, rtol=0, atol=1e-12)
    np.testing.assert_allclose(c, a[:, :, perm], rtol=0, atol=1e-12)


# ----------------------------------------------------------------------------------------------
# 5. structure, validation, config


def test_simplex_purity_and_floor():
    # U1 simplex; Fixed Share keeps every weight ≥ α/N after round 1 (mixing with uniform)
    rng = np.random.default_rng(11)
    losses = rng.integers(0, 2, (4, 500, 8)).astype(float)
    probs = play_loop(FixedShare(eta=5.0, alpha=0.01, n_switches=None), losses, spec_for(losses))
    assert_simplex(probs, "fixed share")
    assert probs[:, 1:].min() >= 0.01 / 8 * (1 - 1e-12)


def test_errors():
    spec = GameSpec("experts", 3, 10)
    for params, name, allowed in [  # refused by the declaration, before any reset
        ({"alpha": 1.0}, "alpha", "a real number in [0, 1) or one of 'tuned'"),
        ({"alpha": -0.1}, "alpha", "a real number in [0, 1) or one of 'tuned'"),
        ({"eta": 0.0}, "eta", "a real number in (0, inf) or one of 'tuned'"),
        ({"eta": "fast"}, "eta", "a real number in (0, inf) or one of 'tuned'"),
        ({"n_switches": -1}, "n_switches", "an integer ≥ 0 or null"),
        ({"n_switches": 1.5}, "n_switches", "an integer ≥ 0 or null"),
    ]:
        with pytest.raises(ConfigError, match=name) as err:
            validate_params(FixedShare(**params))
        assert err.value.component == "player fixed_share" and allowed in str(err.value)
    for params, name in [  # valid values that do not fit together or with the game
        ({"alpha": "tuned", "n_switches": None}, "alpha"),
        ({"n_switches": 9}, "n_switches"),  # tuned α = 9/9 = 1
        ({"eta": "tuned", "alpha": 0.0, "n_switches": 2}, "eta"),  # infinite bracket
    ]:
        player = FixedShare(**params)
        validate_params(player)
        with pytest.raises(ConfigError, match=name) as err:
            player.reset(spec, [None])
        assert err.value.component == "player fixed_share"
    with pytest.raises(ConfigError, match="horizon"):
        FixedShare().reset(GameSpec("experts", 3, None), [None])


def test_hydra_config_lists_every_parameter():
    # no YAML file: `arena run player=fixed_share` composes the node generated from the signature
    node = generated_node("player", "fixed_share")
    assert node.pop("_target_") == "arena.players.fixed_share.FixedShare"
    assert node == FixedShare.param_defaults()
