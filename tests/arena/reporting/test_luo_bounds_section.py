"""The sections "Constant regret under a gap" (Luo 2016, §2.3, Theorem 5, part 2) and
"Drifting-game bounds" (Luo 2016, Appendix A.2–A.3, Theorems 21 and 22)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from arena.game import run_game
from arena.reporting.sections.luo_bounds import (
    DG_THEOREMS,
    drifting_table,
    gap_constant,
    gap_table,
)


def test_gap_constant_is_theorem_4s_a_with_bs_upper_bound():
    # A = 3(ln N + ln(5/2 + (3/2) ln(1 + T)) + 1); N = 10, T = 10⁴, α = 0.1: A/α = 182.84
    assert gap_constant(10, 10_000) / 0.1 == pytest.approx(182.8413, abs=1e-4)
    assert gap_constant(2, 0) == pytest.approx(3 * (math.log(2) + math.log(2.5) + 1), rel=1e-15)


def gap_rows(game, adversary_params, player_params='{"q":null}', values=None):
    """Two replicates at the checkpoints 100, 999, 1000, 5000, 10000."""
    values = values or {100: (1.0, 1.0), 999: (5.0, 5.0), 1000: (10.0, 20.0),
                        5000: (50.0, 40.0), 10_000: (100.0, 40.0)}  # fmt: skip
    return pd.DataFrame(
        [
            {"metric": "pseudo_regret", "player": "ada_normal_hedge",
             "player_params": player_params, "adversary": "bernoulli",
             "adversary_params": adversary_params, "game_label": game,
             "player_label": "ada_normal_hedge", "n_actions": 10, "horizon": 10_000,
             "seed": 0, "replicate": r, "t": t, "value": v[r]}
            for t, v in values.items()
            for r in (0, 1)
        ]
    )  # fmt: skip


def test_gap_table_reads_the_gap_games_of_adanormalhedge_with_the_uniform_prior():
    rows = pd.concat(
        [
            gap_rows("g", '{"best":0,"gap":0.1,"means":null}'),
            gap_rows("given means", '{"best":0,"gap":0.1,"means":[0.1,0.5]}'),
            gap_rows("prior", '{"best":0,"gap":0.1,"means":null}', '{"q":[0.9,0.1]}'),
        ]
    )
    out = gap_table(rows)
    assert out["game_label"].tolist() == ["g"]  # the others' A is not Theorem 4's at q uniform
    r = out.iloc[0]
    bound = gap_constant(10, 10_000) / 0.1
    assert r["bound"] == pytest.approx(bound, rel=1e-15)
    assert r["mean"] == 70.0 and r["n"] == 2
    assert r["ratio_max"] == pytest.approx(100.0 / bound, rel=1e-15)
    assert r["ratio_mean"] == pytest.approx(70.0 / bound, rel=1e-15)
    # t₀ = 1000, the last checkpoint at or below T/10; exponents ln(100/10)/ln 10 = 1 and
    # ln(40/20)/ln 10
    assert r["t_from"] == 1000
    assert r["slope"] == pytest.approx((1.0 + math.log10(2.0)) / 2, rel=1e-12)
    assert r["slope_ci_low"] < r["slope"] < r["slope_ci_high"]
    # the references over the same rounds: A/α's own growth and a ln t growth's
    a_ratio = gap_constant(10, 10_000) / gap_constant(10, 1000)
    assert r["bound_slope"] == pytest.approx(math.log10(a_ratio), rel=1e-12)
    assert r["log_slope"] == pytest.approx(math.log10(4 / 3), rel=1e-12)


def test_gap_table_is_empty_without_gap_games():
    rows = gap_rows("fair", '{"best":0,"gap":0.0,"means":null}')
    assert gap_table(rows).empty
    assert gap_table(rows.assign(metric="regret")).empty


def test_adanormalhedge_meets_theorem_5_and_flattens_on_a_small_gap_game():
    # N = 5, α = 0.2, T = 3000, 8 replicates: each replicate's pseudo-regret stays below A/α
    # (the theorem bounds its mean; every replicate stays below a third of it here), and the
    # regret has stopped growing over the last decade (exponent below 0.05; √T would give 0.5)
    run = run_game("ada_normal_hedge", "bernoulli", adversary_params={"gap": 0.2}, n_actions=5,
                   horizon=3000, replicates=8, seed=1, metrics={"pseudo_regret": {}})  # fmt: skip
    rows = run.rows.assign(game_label="g", player_label="ada_normal_hedge")
    r = gap_table(rows).iloc[0]
    assert r["n"] == 8 and r["ratio_max"] < 1 / 3
    assert abs(r["slope"]) < 0.05 and r["t_from"] <= 300


def drifting_rows():
    """Two replicates of dg_bandit (bandit) and continuous_exp_weights (oco), and of exp3."""
    out = []
    for player, protocol, values, bound in (
        ("dg_bandit", "bandit", (90.0, 130.0), 100.0),
        ("continuous_exp_weights", "oco", (10.0, 30.0), 40.0),
        ("exp3", "bandit", (1.0, 1.0), 2.0),
    ):
        for r in (0, 1):
            for metric, value in (("regret", values[r]), ("bound:regret", bound)):
                out.append(
                    {"metric": metric, "param": np.nan, "t": 50, "horizon": 50, "run_id": player,
                     "seed": 0, "replicate": r, "player": player, "player_label": player,
                     "game_label": f"game {player}", "protocol": protocol, "value": value}
                )  # fmt: skip
    return pd.DataFrame(out)


def test_drifting_table_names_each_theorem_and_its_basis():
    out = drifting_table(drifting_rows()).set_index("player")
    assert set(out.index) == set(DG_THEOREMS)  # exp3 is no drifting-game algorithm here
    bandit, oco = out.loc["dg_bandit"], out.loc["continuous_exp_weights"]
    assert "Theorem 21" in bandit["theorem"] and "Theorem 22" in oco["theorem"]
    # Theorem 21 bounds an expectation: the mean over replicates, no per-replicate maximum (one
    # replicate above R is no violation)
    assert bandit["basis"] == "in expectation" and math.isnan(bandit["ratio_max"])
    assert bandit["ratio_mean"] == pytest.approx(1.1, rel=1e-12)
    # Theorem 22 holds on every sequence: every replicate's ratio
    assert oco["basis"] == "per replicate" and oco["ratio_max"] == pytest.approx(0.75)
    assert oco["ratio_mean"] == pytest.approx(0.5)
