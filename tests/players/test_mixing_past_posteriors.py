"""Oracle tests of Mixing Past Posteriors (``arena.players.mixing_past_posteriors``): Bousquet &
Warmuth 2002 (JMLR 3), Herbster & Warmuth 1998; Bousquet & Warmuth 2002, and the Fixed Share bound
of CBL Thm 5.2 it generalizes.

The declared bounds are derived in the player's docstring (telescoping of the mix losses along a
comparator path); they are checked here on the adversary catalog against an independent
transcription of the same formula. Deterministic inequalities use ``lhs <= rhs + 1e-9·max(1,
|rhs|)`` (our tolerance convention).
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
from arena.players.mixing_past_posteriors import MixingPastPosteriors
from tests.helpers import check_declared, metric_table, save_matrix, traced
from tests.helpers.experts import (
    assert_simplex,
    loss_matrices,
    play_blocks,
    play_catalog,
    play_loop,
    spec_for,
)

P_ATOL = 1e-10
"""The transcription mixes explicit β-weighted sums of stored posteriors in the linear domain;
the player uses a running sum (uniform) or the same sum in another order (decaying) and log
weights: rounding differences ~T·1e-16, far below 1e-10, which still catches any wrong β."""


def literal_mpp(losses, eta, alpha, scheme, gamma=1.0):
    """Bousquet & Warmuth (2002) MPP, literally: v_0 = w_1 uniform; p_t = w_t; loss update
    v_t ∝ w_t e^{−η l_t}; mixing update w_{t+1} = Σ_{q=0}^{t} β_{t+1}(q) v_q with β_{t+1}(t) = 1 − α
    and, for q < t, α/t ("uniform past") or α (t−q)^{−γ} / Σ_{q'<t} (t−q')^{−γ} ("decaying past").
    """
    horizon, n = losses.shape
    posteriors = [[1.0 / n] * n]
    w = list(posteriors[0])
    out = np.empty((horizon, n))
    for t in range(1, horizon + 1):
        out[t - 1] = w
        v = [w[i] * math.exp(-eta * losses[t - 1][i]) for i in range(n)]
        s = sum(v)
        v = [x / s for x in v]
        posteriors.append(v)
        if scheme == "uniform":
            beta = [alpha / t] * t
        else:
            raw = [(t - q) ** -gamma for q in range(t)]
            beta = [alpha * b / sum(raw) for b in raw]
        beta.append(1.0 - alpha)
        w = [sum(beta[q] * posteriors[q][i] for q in range(t + 1)) for i in range(n)]
    return out


def derived_bound(k, t, n, alpha, eta, scheme, gamma=1.0):
    """The player's docstring bound, transcribed: the m latest boundaries s = t−1..t−m each cost
    ln(N/c_{s+1}) instead of ln(1/(1−α)), c_{s+1} = α/s (uniform) or α s^{−γ}/Σ_{j≤s} j^{−γ}."""

    def share(s):
        if scheme == "uniform":
            return alpha / s
        return alpha * s**-gamma / sum(j**-gamma for j in range(1, s + 1))

    best = -math.inf
    for m in range(min(k, t - 1) + 1):
        switches = sum(math.log(n / share(s)) for s in range(t - m, t))
        code = math.log(n) + switches + (t - 1 - m) * math.log(1.0 / (1.0 - alpha))
        best = max(best, code / eta + eta * t / 8.0)
    return best


PARAMS = [
    {"eta": 0.5, "alpha": 0.05, "scheme": "uniform"},
    {"eta": 2.0, "alpha": 0.3, "scheme": "uniform"},
    {"eta": 0.7, "alpha": 0.1, "scheme": "decaying", "gamma": 1.0},
    {"eta": 1.5, "alpha": 0.2, "scheme": "decaying", "gamma": 2.5},
    {"eta": 1.0, "alpha": 0.0, "scheme": "decaying"},
]


# ----------------------------------------------------------------------------------------------
# 1. literal transcription


@pytest.mark.parametrize("params", PARAMS, ids=lambda p: f"{p['scheme']}-{p['alpha']}")
def test_matches_literal_transcription(params, tmp_path):
    horizon, n_act = 200, 4
    mats = loss_matrices(np.random.default_rng(3), horizon, n_act)
    losses = np.stack(list(mats.values()))
    player = MixingPastPosteriors(**params)
    want = np.stack(
        [
            literal_mpp(m, params["eta"], params["alpha"], params["scheme"], params.get("gamma", 1))
            for m in mats.values()
        ]
    )
    spec = spec_for(losses)
    np.testing.assert_allclose(play_loop(player, losses, spec), want, rtol=0, atol=P_ATOL)
    for cuts in ([1], [5, 6, 150], list(range(0, horizon, 17))):
        np.testing.assert_allclose(
            play_blocks(player, losses, spec, cuts=cuts), want, rtol=0, atol=P_ATOL
        )
    # unknown horizon: the decaying store grows on demand
    anytime = spec_for(losses, horizon=None)
    np.testing.assert_allclose(play_loop(player, losses, anytime), want, rtol=0, atol=P_ATOL)
    np.testing.assert_allclose(
        play_blocks(player, losses, anytime, cuts=[3, 120]), want, rtol=0, atol=P_ATOL
    )
    _, tr = traced(
        player,
        Replay(path=save_matrix(tmp_path, losses)),
        tmp_path,
        horizon=horizon,
        replicates=3,
        metrics={"regret": {}},
    )
    np.testing.assert_allclose(tr["probs"], want, rtol=0, atol=P_ATOL)
    assert_simplex(tr["probs"], "engine trace")


def test_affine_declared_range(tmp_path):
    rng = np.random.default_rng(4)
    unit = rng.random((2, 300, 4))
    lo, hi = 1.0, 5.0
    kw = {"horizon": 300, "replicates": 2, "metrics": {"regret": {}, "bound": {}}}
    player = MixingPastPosteriors(eta=0.7, alpha=0.03)
    rows_a, a = traced(player, Replay(path=save_matrix(tmp_path, unit)), tmp_path, **kw)
    wide = Replay(path=save_matrix(tmp_path, lo + (hi - lo) * unit), loss_range=[lo, hi])
    rows_b, b = traced(player, wide, tmp_path, **kw)
    np.testing.assert_allclose(b["probs"], a["probs"], rtol=0, atol=1e-12)
    for metric in ("regret", "bound:regret"):
        np.testing.assert_allclose(
            metric_table(rows_b, metric)[1], 4.0 * metric_table(rows_a, metric)[1], rtol=1e-9
        )


# ----------------------------------------------------------------------------------------------
# 2. reductions (exact identities)


def test_reductions(tmp_path):
    rng = np.random.default_rng(5)
    losses = rng.random((2, 300, 5))
    spec = spec_for(losses)
    # α = 0: no mixing, Hedge with the same η (both in log space; ~T ulps apart)
    for scheme in ("uniform", "decaying"):
        a = play_loop(MixingPastPosteriors(eta=0.8, alpha=0.0, scheme=scheme), losses, spec)
        np.testing.assert_allclose(a, play_loop(Hedge(eta=0.8), losses, spec), atol=1e-12)
    # decaying with γ = 0 weighs every past posterior 1/t: the uniform scheme
    uni = play_loop(MixingPastPosteriors(eta=0.8, alpha=0.1), losses, spec)
    dec = play_loop(
        MixingPastPosteriors(eta=0.8, alpha=0.1, scheme="decaying", gamma=0.0), losses, spec
    )
    np.testing.assert_allclose(dec, uni, rtol=0, atol=1e-12)
    # at t = 1 both schemes mix v_1 with the start vector v_0 only: p_1, p_2 are Fixed Share's
    fs = play_loop(FixedShare(eta=0.8, alpha=0.1, n_switches=None), losses, spec)
    np.testing.assert_allclose(uni[:, :2], fs[:, :2], rtol=0, atol=1e-15)
    np.testing.assert_allclose(dec[:, :2], fs[:, :2], rtol=0, atol=1e-15)
    assert np.abs(uni[:, 2:] - fs[:, 2:]).max() > 1e-3  # and they differ afterwards


def test_not_bayes_over_jump_back_paths():
    # Herbster & Warmuth 1998; Bousquet & Warmuth 2002 suggests the brute-force mixture test of
    # Herbster & Warmuth 1998 "applies to every
    # scheme". For uniform past the natural path prior is P(i_{t+1} | i_{1:t}) =
    # (1−α)·1[i_{t+1} = i_t] + (α/t)(1/N + Σ_{1≤q<t} 1[i_{t+1} = i_q]) ("jump back to the expert of
    # time q"). MPP mixes filtering posteriors v_q, not posteriors smoothed on later data, so the
    # mix-loss identity fails (by ~1e-2 here): the identity test is not applicable to MPP.
    rng = np.random.default_rng(0)
    horizon, n, eta, alpha = 5, 2, 1.0, 0.3
    gaps = []
    for _ in range(5):
        losses = rng.random((horizon, n))
        p = play_loop(
            MixingPastPosteriors(eta=eta, alpha=alpha), losses[None], spec_for(losses[None])
        )[0]
        mix = (-np.log((p * np.exp(-eta * losses)).sum(axis=1)) / eta).sum()
        log_prior, total = [], []
        for path in itertools.product(range(n), repeat=horizon):
            lp = -math.log(n)
            for t in range(1, horizon):
                back = 1.0 / n + sum(path[t] == path[q - 1] for q in range(1, t))
                lp += math.log((1 - alpha) * (path[t] == path[t - 1]) + alpha / t * back)
            log_prior.append(lp)
            total.append(sum(losses[t, path[t]] for t in range(horizon)))
        bayes = -logsumexp(np.array(log_prior) - eta * np.array(total)) / eta
        gaps.append(abs(mix - bayes))
    assert max(gaps) > 1e-3, gaps


# ----------------------------------------------------------------------------------------------
# 3. declared bounds on the catalog


@pytest.mark.parametrize(
    ("params", "n_act", "horizon"),
    [
        ({}, 2, 2000),
        ({"eta": 1.0, "alpha": 0.05}, 10, 2000),
        ({"eta": 3.0, "alpha": 0.5}, 50, 200),
        ({"eta": 0.7, "alpha": 0.1, "scheme": "decaying", "gamma": 1.0}, 10, 300),
        ({"eta": "tuned", "alpha": 0.02, "scheme": "decaying", "gamma": 2.0}, 2, 300),
    ],
)
def test_declared_bounds_hold_on_the_catalog(params, n_act, horizon, tmp_path):
    player = MixingPastPosteriors(**params)
    spec = GameSpec("experts", n_act, horizon)
    resolved = player.clone()
    resolved.reset(spec, [None])
    eta, alpha = resolved.learning_rate(), params.get("alpha", 0.01)
    scheme, gamma = params.get("scheme", "uniform"), params.get("gamma", 1.0)
    metrics = {"regret": {}, "shifting_regret": {"k": [1, 2, 4, 8]}, "bound": {}}
    checked = 0
    for label, rows in play_catalog(player, tmp_path, n_act, horizon, metrics):
        checked += check_declared(rows, f"{params} {label}")
        ts = np.unique(rows.t.to_numpy())
        for k in (0, 1, 2, 4, 8):
            name = "bound:regret" if k == 0 else "bound:shifting_regret"
            declared = metric_table(rows, name, math.nan if k == 0 else float(k))[1]
            own = [derived_bound(k, int(t), n_act, alpha, eta, scheme, gamma) for t in ts]
            np.testing.assert_allclose(declared, np.broadcast_to(own, declared.shape), rtol=1e-9)
    assert checked > 0


def test_fixed_share_special_case_of_the_bound():
    # with c_{s+1} = α for every s the derived bound is CBL Thm 5.2; uniform past pays ln(s/α)
    # per switch instead of ln(1/α), so its bound is larger by Σ ln s over the charged boundaries
    p = MixingPastPosteriors(eta=0.5, alpha=0.1)
    p.reset(GameSpec("experts", 6, 100), [None])
    fs = FixedShare(eta=0.5, alpha=0.1, n_switches=2)
    fs.reset(GameSpec("experts", 6, 100), [None])
    t = 100
    extra = (math.log(99) + math.log(98)) / 0.5
    assert p.shifting_bound(2, t) == pytest.approx(fs.shifting_bound(2, t) + extra, rel=1e-12)
    assert p.shifting_bound(0, t) == pytest.approx(fs.shifting_bound(0, t), rel=1e-12)


# ----------------------------------------------------------------------------------------------
# 4. invariances, structure, validation


def test_shift_permutation_simplex(tmp_path):
    # permutation invariance and the simplex; every weight stays ≥ α·c/N with c the prior's share
    rng = np.random.default_rng(10)
    base = rng.random((300, 5)) / 2
    shift = rng.random((300, 1)) / 2
    perm = rng.permutation(5)
    for params in PARAMS[:4]:
        player = MixingPastPosteriors(**params)
        spec = spec_for(base[None])
        a = play_loop(player, base[None], spec)
        b = play_loop(player, (base + shift)[None], spec)
        c = play_loop(player, base[None, :, perm], spec)
        np.testing.assert_allclose(b, a, rtol=0, atol=1e-12)
        np.testing.assert_allclose(c, a[:, :, perm], rtol=0, atol=1e-12)
        assert_simplex(a, str(params))
        assert a.min() > 0


def test_errors():
    for params, name, allowed in [
        ({"alpha": 1.0}, "alpha", "a real number in [0, 1)"),
        ({"alpha": "x"}, "alpha", "a real number in [0, 1)"),
        ({"eta": -1.0}, "eta", "a real number in (0, inf) or one of 'tuned'"),
        ({"scheme": "fixed"}, "scheme", "one of 'uniform', 'decaying'"),
        ({"gamma": -1.0}, "gamma", "a real number in [0, inf)"),
    ]:
        with pytest.raises(ConfigError, match=name) as err:
            validate_params(MixingPastPosteriors(**params))
        assert err.value.component == "player mixing_past_posteriors"
        assert allowed in str(err.value)
    with pytest.raises(ConfigError, match="horizon"):
        MixingPastPosteriors().reset(GameSpec("experts", 3, None), [None])


def test_hydra_config_lists_every_parameter():
    # no YAML file: `arena run player=mixing_past_posteriors` composes the node generated from
    # the signature
    node = generated_node("player", "mixing_past_posteriors")
    assert node.pop("_target_") == "arena.players.mixing_past_posteriors.MixingPastPosteriors"
    assert node == MixingPastPosteriors.param_defaults()
