"""Tests of the orthogonal-basis hinge adversary (arena/adversaries/orthogonal_hinge.py;
Shalev-Shwartz 2007 A3, Thm 4)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.adversaries.orthogonal_hinge import OrthogonalHinge
from arena.errors import ConfigError
from arena.params import validate_params
from tests.helpers.oco_adversaries import (
    OGD,
    Perceptron,
    SignFoil,
    Zero,
    declared,
    drive,
    game_spec,
)


def players():
    return [
        Zero(),
        OGD(eta=0.1),
        OGD(eta=2.0, w0=0.5),
        OGD(eta=0.3, w0=-1.0),
        Perceptron(),
        SignFoil(scale=3.0),
    ]


def hinge(margin):
    return max(0.0, 1.0 - margin)


@pytest.mark.parametrize("scale", [1.0, 0.25, 4.0])
@pytest.mark.parametrize("extra_dims", [0, 3])
def test_theorem_4_facts_hold_round_by_round(scale, extra_dims):
    horizon, n_rep = 30, 3
    dim = horizon + extra_dims
    for player in players():
        adv = OrthogonalHinge(scale=scale)
        res = drive(player, adv, dim, horizon, n_rep)
        x, y, w, comp = res["x"], res["y"], res["w"], res["comp"]
        for r in range(n_rep):
            labels = []
            for t in range(1, horizon + 1):
                e_t = np.zeros(dim)
                e_t[t - 1] = scale
                assert np.array_equal(x[r, t - 1], e_t)  # x_t = s·e_t
                # Shalev-Shwartz 2007, §3.6: y_t = −1 if w_{t,t} ≥ 0 else +1 (w_t committed after
                # x_t)
                y_lit = -1.0 if w[r, t - 1, t - 1] >= 0 else 1.0
                assert y[r, t - 1] == y_lit
                labels.append(y_lit)
                # g_t(w_t) ≥ 1: the learner's hinge loss is at least 1 every round (exact)
                assert res["value"][r, t - 1] >= 1.0
                # the comparator so far: u = (y_1, …, y_t, 0, …)/s
                u_lit = np.zeros(dim)
                u_lit[:t] = np.array(labels) / scale
                np.testing.assert_array_equal(comp[r, t - 1], u_lit)
                # g_s(u) = 0 for every s ≤ t (margin exactly 1), so R(u, t) = learner loss ≥ t
                comp_loss = sum(hinge(y[r, s] * float(x[r, s] @ u_lit)) for s in range(t))
                assert comp_loss == 0.0
                learner = float(res["value"][r, :t].sum())
                assert learner - comp_loss >= t
            # R(u, T) ≥ T = 2 s² f(u), f(u) = ½‖u‖²
            u = comp[r, -1]
            f_u = 0.5 * float(u @ u)
            assert math.isclose(2 * scale**2 * f_u, horizon, rel_tol=1e-12)  # rounding of 1/s²
            assert float(res["value"][r].sum()) >= 2 * scale**2 * f_u - 1e-9
        # every round is a mistake, as declared
        mistakes = np.cumsum(y * res["prediction"] <= 0, axis=1).astype(float)
        np.testing.assert_array_equal(mistakes, np.broadcast_to(np.arange(1, horizon + 1), y.shape))
        for key in (
            ("mistakes", math.nan),
            ("loss", math.nan),
            ("regret", math.nan),
            ("comparator_regret", 1.0),
        ):
            np.testing.assert_array_equal(
                declared(res, key, n_rep), np.broadcast_to(np.arange(1.0, horizon + 1), y.shape)
            )


@pytest.mark.parametrize("scale", [1.0, 3.0])
def test_perceptron_errs_every_round_and_its_bound_is_tight(scale):
    horizon = 25
    res = drive(Perceptron(), OrthogonalHinge(scale=scale), horizon, horizon, n_rep=2)
    # w_t lies in the span of e_1..e_{t−1}, so ŷ_t = 0 and y_t = −1 every round
    assert np.all(res["prediction"] == 0.0)
    assert np.all(res["y"] == -1.0)
    u = res["comp"][:, -1]
    # #M = T = X²‖u‖² (Shalev-Shwartz 2007, §3.7): X = s, ‖u‖² = T/s²
    n_mistakes = (res["y"] * res["prediction"] <= 0).sum(axis=1)
    np.testing.assert_allclose(scale**2 * (u * u).sum(axis=1), n_mistakes, rtol=1e-12)
    assert np.all(n_mistakes == horizon)


def test_gradient_bound_is_the_scale():
    adv = OrthogonalHinge(scale=2.5)
    assert adv.gradient_bound() == 2.5
    res = drive(OGD(eta=1.0), adv, 12, 12, n_rep=2)
    grads = np.abs(res["x"]).max(axis=2)  # |ℓ'| ∈ {0, 1} times ‖x_t‖ = s
    assert np.all(grads <= 2.5)


def test_replicates_are_independent_and_deterministic():
    etas = np.array([0.1, 1.0, 5.0])
    w0 = 0.1
    batch = drive(OGD(eta=etas, w0=w0), OrthogonalHinge(), 15, 15, n_rep=3)
    again = drive(OGD(eta=etas, w0=w0), OrthogonalHinge(), 15, 15, n_rep=3)
    np.testing.assert_array_equal(batch["y"], again["y"])
    for r, eta in enumerate(etas):
        alone = drive(OGD(eta=eta, w0=w0), OrthogonalHinge(), 15, 15, n_rep=1)
        np.testing.assert_array_equal(alone["y"][0], batch["y"][r])
        np.testing.assert_array_equal(alone["comp"][0], batch["comp"][r])


def test_reset_restarts_the_game():
    adv = OrthogonalHinge()
    first = drive(SignFoil(), adv, 10, 10, n_rep=2)
    second = drive(SignFoil(), adv, 10, 10, n_rep=2)
    np.testing.assert_array_equal(first["y"], second["y"])
    np.testing.assert_array_equal(first["comp"], second["comp"])


def test_config_errors():
    adv = OrthogonalHinge()
    with pytest.raises(ConfigError, match="n_actions"):
        adv.reset(game_spec(adv, 5, 6), [None])
    with pytest.raises(ConfigError, match="horizon"):
        adv.reset(game_spec(adv, 5, None), [None])
    for bad in (0.0, -1.0, math.inf, "1"):
        with pytest.raises(ConfigError, match=r"'scale': must be a real number in \(0, inf\)"):
            validate_params(OrthogonalHinge(scale=bad))
    assert OrthogonalHinge.tags.needs_horizon
    assert adv.resolve_dim(7) == 7 and adv.resolve_dim(None, horizon=12) == 12


def test_engine_end_to_end_against_registered_players():
    """The engine plays the construction; rows agree with the forced quantities."""
    import arena.players.ogd as ogd
    import arena.players.perceptron as perceptron
    from arena.game import run_game

    horizon = 24
    for player in (perceptron.Perceptron(), ogd.OGD(schedule="fixed", eta=0.5)):
        rows = run_game(
            player,
            OrthogonalHinge(),
            n_actions=horizon,
            horizon=horizon,
            replicates=2,
            metrics={"loss": {}, "mistakes": {}, "regret": {"radius": [np.inf]}, "lower_bound": {}},
        ).rows
        for metric in ("mistakes", "loss", "regret"):
            got = rows[rows.metric == metric].sort_values(["replicate", "t"])
            lb = rows[rows.metric == f"lower_bound:{metric}"].sort_values(["replicate", "t"])
            assert np.all(got.value.to_numpy() >= lb.value.to_numpy() - 1e-6)  # solver tolerance
        mistakes = rows[(rows.metric == "mistakes") & (rows.t == horizon)].value
        assert np.all(mistakes == horizon)
