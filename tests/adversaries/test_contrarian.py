"""Tests of the contrarian 0-1 adversary (arena/adversaries/contrarian.py; Shalev-Shwartz 2007,
§2.3)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from arena.adversaries.contrarian import MIN_LOSS_AT_MISTAKE, Contrarian
from arena.errors import ConfigError
from arena.oco.losses import RoundData, evaluate, prediction_loss
from arena.params import validate_params
from tests.helpers.oco_adversaries import (
    OGD,
    Perceptron,
    SignFoil,
    Zero,
    declared,
    drive,
)

SURROGATES = ("hinge", "logistic", "absolute", "squared")


def players():
    return [
        Zero(),
        OGD(eta=0.1),
        OGD(eta=1.0, w0=0.3),
        OGD(eta=0.01, w0=-2.0),
        Perceptron(),
        SignFoil(scale=0.5),
    ]


def literal_labels(predictions):
    """Shalev-Shwartz 2007, §1.1: the opposite of the learner's answer; ŷ = 0 counts as answering
    +1."""
    return [-1.0 if p >= 0 else 1.0 for p in predictions]


@pytest.mark.parametrize("surrogate", SURROGATES)
@pytest.mark.parametrize("dim", [1, 3])
def test_every_deterministic_player_errs_every_round(surrogate, dim):
    horizon, n_rep = 41, 3
    for player in players():
        res = drive(player, Contrarian(loss=surrogate), dim, horizon, n_rep)
        x, y, pred = res["x"], res["y"], res["prediction"]
        e1 = np.zeros(dim)
        e1[0] = 1.0
        assert np.array_equal(x, np.broadcast_to(e1, x.shape))  # X = {1}: x_t = e_1
        for r in range(n_rep):
            assert y[r].tolist() == literal_labels(pred[r].tolist())
        assert np.all(y * pred <= 0)  # a mistake every round (zero margin included)
        # exactly t mistakes, as declared (exact integers)
        mistakes = np.cumsum(y * pred <= 0, axis=1).astype(float)
        np.testing.assert_array_equal(declared(res, ("mistakes", math.nan), n_rep), mistakes)
        # the surrogate pays at least its value at margin 0 every round; the declared loss bound
        # holds (1e-12: sums of t floats of size ≤ a few)
        assert np.all(res["value"] >= MIN_LOSS_AT_MISTAKE[surrogate] - 1e-15)
        lb_loss = declared(res, ("loss", math.nan), n_rep)
        assert np.all(np.cumsum(res["value"], axis=1) >= lb_loss - 1e-12)


@pytest.mark.parametrize("surrogate", SURROGATES)
def test_best_constant_errs_at_most_half_and_comparator_regret_bound(surrogate):
    horizon, n_rep = 40, 2
    for player in players():
        res = drive(player, Contrarian(loss=surrogate), 2, horizon, n_rep)
        y, comp = res["y"], res["comp"]
        learner = np.cumsum(res["value"], axis=1)
        lb = declared(res, ("comparator_regret", 1.0), n_rep)
        for r in range(n_rep):
            for t in range(1, horizon + 1):
                u = comp[r, t - 1]
                assert abs(u[0]) == 1.0 and np.all(u[1:] == 0)  # a constant label, ±e_1
                margins = y[r, :t] * u[0]
                assert np.sum(margins <= 0) <= t // 2  # the best constant: ≤ ⌊t/2⌋ mistakes
                # literal comparator loss Σ_s ℓ(⟨u, x_s⟩, y_s)
                comp_loss = sum(
                    float(prediction_loss(surrogate, np.array(u[0]), np.array(ys))[0])
                    for ys in y[r, :t]
                )
                # 1e-9: both sides are sums of ≤ 40 terms of size ≤ 2
                assert learner[r, t - 1] - comp_loss >= lb[r, t - 1] - 1e-9
        # 0-1 regret ≥ T − ⌊T/2⌋
        best = np.minimum((y > 0).sum(axis=1), (y < 0).sum(axis=1))
        assert np.all(horizon - best >= horizon - horizon // 2)


@pytest.mark.parametrize("surrogate", ["hinge", "absolute", "squared"])
def test_declared_regret_is_below_the_numerical_best_in_hindsight(surrogate):
    horizon, n_rep = 30, 2
    for player in players():
        res = drive(player, Contrarian(loss=surrogate), 1, horizon, n_rep)
        y = res["y"]
        learner = np.cumsum(res["value"], axis=1)
        lb = declared(res, ("regret", math.nan), n_rep)
        for r in range(n_rep):
            for t in (1, 2, 7, horizon):
                ys = y[r, :t]

                def total(u, ys=ys):
                    return float(prediction_loss(surrogate, np.full(ys.shape, u), ys)[0].sum())

                best = minimize_scalar(
                    total, bounds=(-3.0, 3.0), method="bounded", options={"xatol": 1e-10}
                ).fun
                # 1e-6: the bounded scalar search stops within xatol·(number of terms) of the min
                assert learner[r, t - 1] - best >= lb[r, t - 1] - 1e-6


def test_replicates_are_independent_and_deterministic():
    etas = np.array([0.05, 0.5, 2.0])
    batch = drive(OGD(eta=etas, w0=0.2), Contrarian(), 1, 25, n_rep=3)
    again = drive(OGD(eta=etas, w0=0.2), Contrarian(), 1, 25, n_rep=3)
    np.testing.assert_array_equal(batch["y"], again["y"])
    for r, eta in enumerate(etas):
        alone = drive(OGD(eta=eta, w0=0.2), Contrarian(), 1, 25, n_rep=1)
        np.testing.assert_array_equal(alone["y"][0], batch["y"][r])
        np.testing.assert_array_equal(alone["w"][0], batch["w"][r])


def test_zero_learner_always_gets_minus_one():
    res = drive(Zero(), Contrarian(), 1, 5)
    assert res["y"][0].tolist() == [-1.0] * 5
    assert res["comp"][0, -1].tolist() == [-1.0]


def test_reset_restarts_the_game():
    adv = Contrarian()
    first = drive(OGD(eta=0.3), adv, 1, 10)
    second = drive(OGD(eta=0.3), adv, 1, 10)  # drive resets the same instance
    np.testing.assert_array_equal(first["y"], second["y"])


def test_gradient_bound_holds():
    for loss in ("hinge", "logistic", "absolute"):
        adv = Contrarian(loss=loss)
        res = drive(OGD(eta=1.0, w0=3.0), adv, 2, 20, n_rep=2)
        for t in range(20):
            rd = RoundData(x=res["x"][:, t], y=res["y"][:, t])
            _, grad, _, _ = evaluate(loss, 0.0, res["w"][:, t], rd)
            assert np.all(np.linalg.norm(grad, axis=1) <= adv.gradient_bound())
    assert Contrarian(loss="squared").gradient_bound() is None


def test_config_errors():
    with pytest.raises(ConfigError, match="adversary contrarian: parameter 'loss': must be one of"):
        validate_params(Contrarian(loss="zero_one"))
    assert Contrarian().resolve_dim(None) == 1
    assert Contrarian().get_params() == {"loss": "hinge"}
    assert Contrarian.tags.protocol == "classification" and not Contrarian.tags.oblivious
    assert "comparator" in Contrarian.tags.oracle


def test_engine_end_to_end_against_registered_players():
    import arena.players.ogd as ogd
    import arena.players.perceptron as perceptron
    from arena.game import run_game

    horizon = 30
    for player in (perceptron.Perceptron(), ogd.OGD(schedule="fixed", eta=0.5)):
        rows = run_game(
            player,
            Contrarian(),
            n_actions=1,
            horizon=horizon,
            replicates=2,
            metrics={"loss": {}, "mistakes": {}, "regret": {"radius": [np.inf]}, "lower_bound": {}},
        ).rows
        for metric in ("mistakes", "loss", "regret"):
            got = rows[rows.metric == metric].sort_values(["replicate", "t"])
            lb = rows[rows.metric == f"lower_bound:{metric}"].sort_values(["replicate", "t"])
            assert np.all(got.value.to_numpy() >= lb.value.to_numpy() - 1e-6)  # solver tolerance
        mistakes = rows[rows.metric == "mistakes"]
        np.testing.assert_array_equal(mistakes.value, mistakes.t)  # T mistakes, every checkpoint
