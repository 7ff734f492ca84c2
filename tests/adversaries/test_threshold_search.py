"""Tests of the binary-search threshold adversary (arena/adversaries/threshold_search.py;
Shalev-Shwartz 2007 A4, Example 6, corrected)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.adversaries.threshold_search import ThresholdSearch, embed, threshold_separator
from arena.errors import ConfigError
from arena.params import validate_params
from tests.helpers.oco_adversaries import (
    OGD,
    Halving,
    Perceptron,
    SignFoil,
    Zero,
    declared,
    drive,
    game_spec,
)

EMBEDDINGS = ("thermometer", "one_hot")


def players(embedding):
    return [
        Zero(),
        OGD(eta=0.3),
        OGD(eta=1.0, w0=0.2),
        Perceptron(),
        SignFoil(scale=0.7),
        Halving(embedding),
    ]


def literal_example_6(predictions_of, n, horizon):
    """Example 6 of Shalev-Shwartz 2007 with the query and updates corrected for one game, in plain
    Python.

    ``predictions_of(t, x)`` returns the learner's ŷ_t for the point x. Returns the queries,
    the labels, the number of forcing rounds and the final interval.
    """
    lo, hi = 1, n
    queries, labels, forced = [], [], 0
    for t in range(1, horizon + 1):
        if lo < hi:
            x = lo + (hi - lo + 1) // 2
            if predictions_of(t, x) > 0:  # the learner says +1
                y, hi = -1.0, x - 1
            else:
                y, lo = 1.0, x
            forced += 1
        else:  # the target h_lo is determined: cycle through X with its labels
            x = (t - 1) % n + 1
            y = 1.0 if x <= lo else -1.0
        queries.append(x)
        labels.append(y)
    return queries, labels, forced, (lo, hi)


def decode(phi, n, embedding):
    if embedding == "thermometer":
        return int(np.rint(n - phi.sum() + 1))
    return int(np.argmax(phi)) + 1


@pytest.mark.parametrize("embedding", EMBEDDINGS)
@pytest.mark.parametrize("n", [2, 4, 8, 64, 5, 12, 100])
def test_every_deterministic_player_errs_on_every_forcing_round(embedding, n):
    m_floor, m_ceil = math.floor(math.log2(n)), math.ceil(math.log2(n))
    horizon, n_rep = m_ceil + 6, 2
    for player in players(embedding):
        res = drive(player, ThresholdSearch(embedding=embedding), n, horizon, n_rep)
        x, y, pred = res["x"], res["y"], res["prediction"]
        lb = declared(res, ("mistakes", math.nan), n_rep)
        for r in range(n_rep):
            points = [decode(x[r, t], n, embedding) for t in range(horizon)]
            for t in range(horizon):  # the features are the documented embedding of the point
                np.testing.assert_array_equal(x[r, t], embed(np.array(points[t]), n, embedding))
            q, labels, forced, (lo, hi) = literal_example_6(
                lambda t, _x, row=pred[r]: row[t - 1], n, horizon
            )
            assert points == q and y[r].tolist() == labels
            if n & (n - 1) == 0:
                assert forced == m_floor  # n = 2^m: exactly log₂ n forcing rounds
            else:
                assert m_floor <= forced <= m_ceil
            # every forcing round is a mistake (zero margin included)
            assert np.all(y[r, :forced] * pred[r, :forced] <= 0)
            # the final interval is non-empty and the labels are realizable by h_lo
            assert 1 <= lo <= hi <= n and lo == hi
            assert all(
                (1.0 if p <= lo else -1.0) == lab for p, lab in zip(points, labels, strict=True)
            )
            # declared: F_t forcing rounds so far, ≥ min(t, ⌊log₂ n⌋), ≤ the mistakes made
            expected = np.minimum(np.arange(1, horizon + 1), forced)
            np.testing.assert_array_equal(lb[r], expected)
            assert np.all(lb[r] >= np.minimum(np.arange(1, horizon + 1), m_floor))
            assert np.all(np.cumsum(y[r] * pred[r] <= 0) >= lb[r])


@pytest.mark.parametrize("embedding", EMBEDDINGS)
def test_comparator_is_consistent_with_every_label_so_far(embedding):
    n, horizon, n_rep = 16, 12, 2
    for player in players(embedding):
        res = drive(player, ThresholdSearch(embedding=embedding), n, horizon, n_rep)
        x, y, comp = res["x"], res["y"], res["comp"]
        learner = np.cumsum(res["value"], axis=1)
        lb_regret = declared(res, ("regret", math.nan), n_rep)
        lb_comp = declared(res, ("comparator_regret", 1.0), n_rep)
        for r in range(n_rep):
            for t in range(horizon):
                u = comp[r, t]
                margins = y[r, : t + 1] * (x[r, : t + 1] @ u)
                np.testing.assert_array_equal(margins, 1.0)  # h_l is exact: margin 1, hinge 0
                # comparator hinge loss 0, so comparator regret = learner loss ≥ declared
                assert learner[r, t] >= lb_comp[r, t] and learner[r, t] >= lb_regret[r, t]


@pytest.mark.parametrize("embedding", EMBEDDINGS)
def test_every_threshold_is_an_exact_linear_function(embedding):
    n = 9
    phi = embed(np.arange(1, n + 1), n, embedding)
    for i in range(1, n + 1):
        h = np.where(np.arange(1, n + 1) <= i, 1.0, -1.0)
        np.testing.assert_array_equal(phi @ threshold_separator(np.array(i), n, embedding), h)
    # batched over replicates
    u = threshold_separator(np.array([2, 5]), n, embedding)
    assert u.shape == (2, n)


def test_gradient_bound():
    assert ThresholdSearch(embedding="one_hot").gradient_bound() == 1.0
    assert ThresholdSearch().gradient_bound() is None  # ‖φ(1)‖ = √n: n unknown before reset


def test_replicates_are_independent_and_deterministic():
    etas = np.array([0.05, 0.5, 3.0])
    batch = drive(OGD(eta=etas, w0=0.1), ThresholdSearch(), 32, 12, n_rep=3)
    again = drive(OGD(eta=etas, w0=0.1), ThresholdSearch(), 32, 12, n_rep=3)
    np.testing.assert_array_equal(batch["x"], again["x"])
    for r, eta in enumerate(etas):
        alone = drive(OGD(eta=eta, w0=0.1), ThresholdSearch(), 32, 12, n_rep=1)
        np.testing.assert_array_equal(alone["x"][0], batch["x"][r])
        np.testing.assert_array_equal(alone["y"][0], batch["y"][r])


def test_config_errors():
    with pytest.raises(ConfigError, match="'embedding': must be one of 'thermometer', 'one_hot'"):
        validate_params(ThresholdSearch(embedding="binary"))
    with pytest.raises(ConfigError, match="n_actions"):
        adv = ThresholdSearch()
        adv.reset(game_spec(adv, 1, 5), [None])


def test_engine_end_to_end_against_registered_players():
    import arena.players.ogd as ogd
    import arena.players.perceptron as perceptron
    from arena.game import run_game

    n, horizon = 32, 12
    for player in (perceptron.Perceptron(), ogd.OGD(schedule="fixed", eta=0.5)):
        rows = run_game(
            player,
            ThresholdSearch(),
            n_actions=n,
            horizon=horizon,
            replicates=2,
            metrics={"mistakes": {}, "regret": {"radius": [np.inf]}, "lower_bound": {}},
        ).rows
        for metric in ("mistakes", "regret"):
            got = rows[rows.metric == metric].sort_values(["replicate", "t"])
            lb = rows[rows.metric == f"lower_bound:{metric}"].sort_values(["replicate", "t"])
            assert np.all(got.value.to_numpy() >= lb.value.to_numpy() - 1e-6)  # solver tolerance
        last = rows[(rows.metric == "lower_bound:mistakes") & (rows.t == horizon)].value
        assert np.all(last == 5)  # log₂ 32
