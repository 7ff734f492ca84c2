"""The "Lower bound / measured" table, the online-to-batch section's lecture-bound table and the
boosting exp-bound table, on hand-made rows: every ratio, interval and maximum is computed here
by hand."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from arena.reporting.sections.boosting_exp_bound import boosting_exp_bounds
from arena.reporting.sections.lower_bound_ratios import lower_bound_ratios
from arena.reporting.sections.online_to_batch import lecture_bound_ratios

HORIZON = 10


def _rows(game, player, metric, values, *, param=math.nan, t=HORIZON, **extra):
    n = len(values)
    return pd.DataFrame(
        {
            "run_id": f"{game}/{player}",
            "seed": 1,
            "replicate": np.arange(n),
            "t": t,
            "horizon": HORIZON,
            "metric": metric,
            "param": float(param),
            "value": np.asarray(values, dtype=float),
            "game_label": game,
            "player_label": player,
            **extra,
        }
    )


def _t_half(values):
    v = np.asarray(values, dtype=float)
    return sps.t.ppf(0.975, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size)


def test_lower_bound_ratios_by_hand():
    rows = pd.concat(
        [
            _rows("g", "a", "mistakes", [10.0, 20.0, 40.0]),
            _rows("g", "a", "lower_bound:mistakes", [10.0, 10.0, 10.0]),
            # an earlier checkpoint below its lower bound: not at T, not counted
            _rows("g", "a", "mistakes", [1.0, 1.0, 1.0], t=5),
            _rows("g", "a", "lower_bound:mistakes", [5.0, 5.0, 5.0], t=5),
            # a value ≤ 0 under a positive lower bound breaks it: the largest ratio is infinite,
            # the mean and interval are over the finite ratios, the measured mean counts it
            _rows("g", "b", "regret", [-2.0, 4.0, 8.0]),
            _rows("g", "b", "lower_bound:regret", [2.0, 2.0, 2.0]),
            # measured without a lower bound: no row
            _rows("g", "c", "regret", [1.0, 2.0, 3.0]),
        ],
        ignore_index=True,
    )
    table = lower_bound_ratios(rows).set_index(["player", "metric"])
    assert sorted(table.index) == [("a", "mistakes"), ("b", "regret")]
    a = table.loc[("a", "mistakes")]
    ratios = [1.0, 0.5, 0.25]
    assert a.n == 3 and a.t == HORIZON
    assert a.ratio_mean == pytest.approx(np.mean(ratios), rel=1e-12)
    assert a.ratio_ci_high - a.ratio_mean == pytest.approx(_t_half(ratios), rel=1e-9)
    assert a.ratio_max == 1.0 and a.lower_bound == 10.0
    assert a.value == pytest.approx(70 / 3)
    assert a.value_ci_low == pytest.approx(70 / 3 - _t_half([10, 20, 40]), rel=1e-9)
    b = table.loc[("b", "regret")]
    assert b.n == 2 and b.ratio_max == math.inf and b.ratio_mean == pytest.approx(0.375)
    assert b.value == pytest.approx(10 / 3)


LECTURE_FTRL = json.dumps({"eta": 2.0 / (2 * math.sqrt(2) * 2.0), "schedule": "sqrt"})
"""The lecture's step for G = 2, B = 2: η = B/(2√2 G)."""


def _o2b(
    game, params, values, adversary="separable_stream", t=200, metric="avg_risk", player="ftrl",
    player_params=LECTURE_FTRL,
):  # fmt: skip
    return _rows(
        game,
        "p",
        f"online_to_batch:{metric}",
        values,
        t=t,
        adversary=adversary,
        adversary_params=json.dumps(params, sort_keys=True),
    ).assign(horizon=t, player=player, player_params=player_params)


def test_lecture_bound_ratios_by_hand():
    clean = {"margin": 0.5, "feature_radius": 2.0, "noise": 0.0, "loss": "hinge"}
    rows = pd.concat(
        [
            _o2b("clean", clean, [0.4, 0.8]),
            _o2b("clean", clean, [0.2, 0.2], metric="last_risk"),
            # label noise: the best risk in the ball is not 0, no row
            _o2b("noisy", {**clean, "noise": 0.1}, [0.4, 0.8]),
            # another loss or another adversary: no row
            _o2b("logistic", {**clean, "loss": "logistic"}, [0.4, 0.8]),
            _o2b("data", {}, [0.4, 0.8], adversary="dataset_stream"),
            # another player, or FTRL off the lecture's step or schedule: the bound covers none
            _o2b("ogd", clean, [0.4, 0.8], player="ogd", player_params="{}"),
            _o2b("step", clean, [0.4, 0.8], player_params='{"eta": 1.0}'),
            _o2b("fixed", clean, [0.4, 0.8], player_params=LECTURE_FTRL.replace("sqrt", "fixed")),
        ],
        ignore_index=True,
    )
    table = lecture_bound_ratios(rows).set_index(["game", "iterate"])
    assert sorted(table.index) == [("clean", "averaged"), ("clean", "last")]
    bound = math.sqrt(32 * 2.0**2 * 2.0**2 / 200)  # G = R = 2, B = 1/γ = 2: 1.6
    avg = table.loc[("clean", "averaged")]
    assert avg.G == 2.0 and avg.B == 2.0 and avg.bound == pytest.approx(bound, rel=1e-12)
    assert avg.risk == pytest.approx(0.6)
    assert avg.ratio_mean == pytest.approx(0.6 / bound, rel=1e-12)
    assert avg.ratio_max == pytest.approx(0.8 / bound, rel=1e-12)
    assert avg.ratio_ci_high - avg.ratio_mean == pytest.approx(
        _t_half([0.4 / bound, 0.8 / bound]), rel=1e-9
    )
    assert table.loc[("clean", "last")].ratio_max == pytest.approx(0.2 / bound, rel=1e-12)


def test_boosting_exp_bounds_by_hand():
    def boost(player, params, metric, values):
        label = f"{player}{params}"
        return _rows("b", label, metric, values).assign(player=player, player_params=params)

    rows = pd.concat(
        [
            boost("hedge", '{"eta": 0.4}', "vote_train_error", [0.1, 0.0, 0.05]),
            boost("hedge", '{"eta": 0.4}', "mean_edge", [0.2, 0.3, 0.25]),
            # a tuned η is not in the rows, another player has no α: no row
            boost("hedge", '{"eta": "tuned"}', "vote_train_error", [0.1, 0.1, 0.1]),
            boost("hedge", '{"eta": "tuned"}', "mean_edge", [0.2, 0.2, 0.2]),
            boost("normal_hedge_dt", "{}", "vote_train_error", [0.1, 0.1, 0.1]),
            boost("normal_hedge_dt", "{}", "mean_edge", [0.2, 0.2, 0.2]),
        ],
        ignore_index=True,
    )
    table = boosting_exp_bounds(rows)
    assert len(table) == 1
    r = table.iloc[0]
    alpha, edges = 0.2, np.array([0.2, 0.3, 0.25])
    bounds = np.exp(-HORIZON * (2 * alpha * edges - alpha**2 / 2))  # Hoeffding, per round
    ratios = np.array([0.1, 0.0, 0.05]) / bounds
    assert r.alpha == alpha and r.t == HORIZON and r.n == 3
    assert r.bound == pytest.approx(bounds.mean(), rel=1e-12)
    assert r.ratio_max == pytest.approx(ratios.max(), rel=1e-12)
    assert r.ratio_mean == pytest.approx(ratios.mean(), rel=1e-12)
    assert r.thesis_bound == pytest.approx(math.exp(-2 * 0.1**2 * HORIZON), rel=1e-12)
    assert np.all(bounds <= math.exp(-2 * 0.1**2 * HORIZON))  # every edge ≥ γ = α/2 = 0.1
