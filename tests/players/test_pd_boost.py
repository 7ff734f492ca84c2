"""AdaBoost, capped AdaBoost and Gentle-Boost as primal–dual experts players over the examples
(Shalev-Shwartz 2007, Chapter 6): literal transcriptions, the dual step, and the e^{−2γ²T} bound
on the boosting games."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize_scalar

from arena import play
from arena.game import reference_play, run_game
from arena.players.pd_boost import AdaBoost, CappedAdaBoost, GentleBoost, round_factor
from arena.spec import GameSpec

PLAYERS = {
    "adaboost": AdaBoost,
    "capped_adaboost": CappedAdaBoost,
    "gentle_boost": GentleBoost,
}


def literal_boost(losses, rule, param=None):
    """Chapter 6 of Shalev-Shwartz 2007 in plain floats for one replicate: ``v = 2ℓ − 1``;
    ``w⁺ = Σ_{v_i = 1} w_i``, ``w⁻ = Σ_{v_i = −1} w_i``; AdaBoost ``α = min{1/c, ½ log(w⁺/w⁻)}``
    (6.5) (c = None: (6.6)), capped ``min{2γ, ½ log(w⁺/w⁻)}``, Gentle ``α = ⟨w, v⟩``, each
    floored at 0 (``α ∈ [0, 1/c]``); then the multiplicative update
    ``w_i ← w_i e^{−α v_i} / Z`` from ``w`` uniform. Returns the w's played and the α's."""
    t_max, m = losses.shape
    w = [1.0 / m] * m
    played, alphas = [], []
    for t in range(t_max):
        played.append(list(w))
        v = [2.0 * float(losses[t, i]) - 1.0 for i in range(m)]
        w_plus = sum(w[i] for i in range(m) if v[i] == 1.0)
        w_minus = sum(w[i] for i in range(m) if v[i] == -1.0)
        if rule == "gentle":
            alpha = sum(w[i] * v[i] for i in range(m))
        else:
            opt = math.inf if w_minus == 0.0 else 0.5 * math.log(w_plus / w_minus)
            cap = {"ada": math.inf if param is None else 1.0 / param, "capped": 2.0 * (param or 0)}
            alpha = min(cap[rule], opt)
        alpha = max(alpha, 0.0)
        alphas.append(alpha)
        e = [w[i] * math.exp(-alpha * v[i]) for i in range(m)]
        w = [x / sum(e) for x in e]
    return np.array(played), np.array(alphas)


def drive(player, losses):
    """Play the (R, T, m) losses through predict/update; return the (R, T, m) distributions."""
    n_rep, horizon, m = losses.shape
    player.reset(GameSpec("experts", m, horizon, n_replicates=n_rep), [None] * n_rep)
    out = np.empty_like(losses)
    for t in range(horizon):
        out[:, t] = player.predict()
        player.update(losses[:, t])
    return out


def coin_losses(seed, n_rep=2, horizon=25, m=12, right=0.7):
    """``ℓ = 1{h(x_i) = y_i}`` of hypotheses right on each example with probability ``right``."""
    rng = np.random.default_rng(seed)
    return (rng.random((n_rep, horizon, m)) < right).astype(np.float64)


@pytest.mark.parametrize(
    ("player", "rule", "param"),
    [
        (AdaBoost(), "ada", None),
        (AdaBoost(c=1.5), "ada", 1.5),
        (CappedAdaBoost(gamma=0.1), "capped", 0.1),
        (GentleBoost(), "gentle", None),
    ],
)
def test_matches_literal_transcription(player, rule, param):
    losses = coin_losses(1)
    got = drive(player, losses)
    for r in range(losses.shape[0]):
        want, alphas = literal_boost(losses[r], rule, param)
        np.testing.assert_allclose(got[r], want, rtol=0, atol=1e-12)
        # the weighted vote's margins are Σ_s α_s v_s
        np.testing.assert_allclose(
            player.vote_margins()[r], alphas @ (2.0 * losses[r] - 1.0), rtol=1e-12, atol=1e-12
        )
    # the exp loss is Π_s Z_s = Π_s b(α_s, e_s) (v ∈ {±1}: the convexity bound is an equality)
    np.testing.assert_allclose(player.exp_loss(), player.exp_loss_bound(), rtol=1e-10)
    if rule != "capped":  # AdaBoost (1/c = 0.67 ≥ every edge here) and Gentle: ≤ e^{−2Σγ_s²}
        assert (player.exp_loss_bound() <= player.edge_bound() * (1 + 1e-12)).all()


def test_adaboost_step_maximizes_the_dual_gain():
    """Eq. (6.5): ``α = min{1/c, ½ ln(w⁺/w⁻)}`` maximizes ``−c log Σ_i w_i e^{−α v_i}`` over
    ``[0, 1/c]`` (the increase of the dual (6.3) at a fixed θ), checked numerically."""
    rng = np.random.default_rng(2)
    for _ in range(50):
        w = rng.dirichlet(np.ones(9))
        v = rng.choice([-1.0, 1.0], size=9)
        c = float(rng.choice([0.2, 1.0, 4.0]))
        edge = float(w @ v)
        alpha = float(AdaBoost(c=c).alpha(np.array([edge]))[0])
        res = minimize_scalar(
            lambda a, w=w, v=v: math.log(float(w @ np.exp(-a * v))),
            bounds=(0.0, 1.0 / c),
            method="bounded",
            options={"xatol": 1e-12},
        )
        assert alpha == pytest.approx(res.x, abs=1e-6)
        assert float(round_factor(np.array(alpha), np.array(edge))) == pytest.approx(
            float(w @ np.exp(-alpha * v)), rel=1e-12
        )


@pytest.mark.parametrize("name", sorted(PLAYERS))
def test_rows_equal_the_reference_loop(name):
    kw = dict(
        n_actions=None,
        horizon=12,
        replicates=2,
        seed=4,
        checkpoints=[1, 5, 12],
        adversary_params={"dataset": "digits"},
        metrics={"weighted_vote_train_error": {}, "bound": {}},
    )
    rows = run_game(name, "boosting_oracle", **kw).rows
    ref = reference_play(name, "boosting_oracle", **kw)
    pd.testing.assert_frame_equal(ref, rows, atol=1e-12)
    assert set(rows.metric) == {"weighted_vote_train_error", "bound:weighted_vote_train_error"}


def final(name, adversary, params=None, adversary_params=None, horizon=40):
    df = play(
        name,
        adversary,
        player_params=params or {},
        adversary_params=adversary_params or {},
        horizon=horizon,
        replicates=2,
        seed=7,
        metrics=["weighted_vote_train_error", "bound", "mean_edge"],
    )
    return df.pivot_table(index=["replicate", "t"], columns="metric", values="value")


@pytest.mark.parametrize("name", sorted(PLAYERS))
@pytest.mark.parametrize("dataset", ["breast_cancer", "digits"])
def test_training_error_below_exp_minus_2_gamma_squared_t_on_stumps(name, dataset):
    """Against the exhaustive stump oracle: error ≤ Π_t b(α_t, e_t) (declared) ≤
    exp(−2 Σ_t γ_t²) ≤ exp(−2 t γ̄_t²) (Cauchy–Schwarz, γ̄_t the mean edge) for AdaBoost and
    Gentle-Boost; the capped step (γ = 0.05 ≤ every stump's edge here) ≤ e^{−2γ²t}."""
    params = {"gamma": 0.05} if name == "capped_adaboost" else {}
    wide = final(name, "boosting_oracle", params, {"dataset": dataset})
    error, bound = wide["weighted_vote_train_error"], wide["bound:weighted_vote_train_error"]
    t = wide.index.get_level_values("t").to_numpy()
    assert (error <= bound).all()
    if name == "capped_adaboost":
        assert (wide["mean_edge"] >= 0.05).all()
        assert (bound <= np.exp(-2 * 0.05**2 * t) * (1 + 1e-12)).all()
    else:
        assert (bound <= np.exp(-2 * t * wide["mean_edge"] ** 2) * (1 + 1e-12)).all()
    assert bound.groupby("replicate").last().max() < 0.2


@pytest.mark.parametrize("name", sorted(PLAYERS))
def test_exp_bound_against_a_weak_learner_of_edge_exactly_gamma(name):
    """``edge_boosting_oracle`` answers with edge ≥ γ every round: the declared bound, and so the
    training error, is below e^{−2γ²t} at every checkpoint."""
    gamma = 0.15
    params = {"gamma": gamma} if name == "capped_adaboost" else {}
    wide = final(name, "edge_boosting_oracle", params, {"edge": gamma}, horizon=60)
    t = wide.index.get_level_values("t").to_numpy()
    bound = wide["bound:weighted_vote_train_error"]
    assert (wide["weighted_vote_train_error"] <= bound).all()
    assert (bound <= np.exp(-2 * gamma**2 * t) * (1 + 1e-12)).all()


def test_skipped_for_other_players_and_adversaries():
    metrics = ["loss", "weighted_vote_train_error"]
    run = run_game("hedge", "boosting_oracle", horizon=3, metrics=metrics)
    assert "no vote_margins" in run.skipped_metrics["weighted_vote_train_error"]
    run = run_game("adaboost", "bernoulli", horizon=3, metrics=metrics)
    assert "not a boosting oracle" in run.skipped_metrics["weighted_vote_train_error"]
