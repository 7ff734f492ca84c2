"""The committed report of Luo 2016's Tables 2.1, 2.3 and 2.4 (reports/luo-tables/): the README's
numbers are the report's, and the report's numbers are what the arena measures today.

The tournaments are ``configs/tournament/luo_table_2_1.yaml``, ``changing_environments.yaml``,
``tree_experts.yaml``, ``luo_gap.yaml``, ``luo_dg_bandit.yaml`` and ``luo_dg_oco.yaml`` (``make
reports`` rebuilds the report; their horizons differ, so every game's label names its T). A cell
is a pure function of its player, adversary, parameters and seed, so a cell played alone
reproduces the tournament's rows. The tolerance, 1e-6 relative, only absorbs last-bit differences
of the math library between machines; any change of a player, an adversary, a metric or the
seeding moves these numbers by far more.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from arena.game import run_game
from tests.helpers.readme import readme_table

ROOT = Path(__file__).resolve().parents[3]
REPORT = ROOT / "reports" / "luo-tables"
TABLE_2_1 = yaml.safe_load((ROOT / "configs" / "tournament" / "luo_table_2_1.yaml").read_text())
CHANGING = yaml.safe_load(
    (ROOT / "configs" / "tournament" / "changing_environments.yaml").read_text()
)
TREES = yaml.safe_load((ROOT / "configs" / "tournament" / "tree_experts.yaml").read_text())
SHIFTING = "shifting_experts(n_switches=4) N=10 T=10000"
README_PLAYERS = {  # README row → the report's player label
    "`ada_normal_hedge_tv` (geometric cover)": "ada_normal_hedge_tv(starts=geometric)",
    "`flh`": "flh",
    "`cbce`": "cbce",
    "`saol`": "saol",
    "`fixed_share`, tuned with the 4 switches": "fixed_share(alpha=tuned, n_switches=4)",
    "`fixed_share`, untuned (α = 10⁻⁴)": "fixed_share(alpha=0.0001, n_switches=None)",
    "`hedge` (anytime)": "hedge(eta=anytime)",
}
TREE_GAMES = [
    "tree_experts(depth=2) N=6 T=10000",
    "tree_experts N=30 T=10000",
    "tree_experts(depth=6) N=126 T=10000",
    "tree_experts(depth=8) N=510 T=10000",
]
TABLE_2_1_BOUNDED = {  # registry name → the report's label (anytime Hedge plays Table 2.3)
    "hedge": "hedge(eta=tuned)",
    "two_norm": "two_norm",
    "normal_hedge_dt": "normal_hedge_dt",
    "ada_normal_hedge": "ada_normal_hedge",
}
"""Table 2.1's players that declare bounds (NormalHedge declares none)."""


def first_number(cell: str) -> float:
    return float(re.match(r"[\d.]+", cell).group(0))


def test_the_readme_quotes_the_committed_report():
    sa = pd.read_csv(REPORT / "tables" / "sa_regret_vs_tau.csv")
    sa = sa[(sa.game == SHIFTING) & (sa.param == 1000)].set_index("player")["mean"]
    board = pd.read_csv(REPORT / "tables" / "leaderboards.csv")
    adaptive = board[(board.metric == "adaptive_regret") & (board.game == SHIFTING)]
    adaptive = adaptive.set_index("player")["mean"]
    tv = pd.read_csv(REPORT / "tables" / "time_varying.csv")
    tv = tv[tv.game_label == SHIFTING].set_index("player_label")
    rows = readme_table("| N = 10, shifting experts (4 switches) |")
    assert set(rows) == set(README_PLAYERS)
    for row, player in README_PLAYERS.items():
        quoted = [first_number(c) for c in rows[row]]
        want = [sa[player], adaptive[player], tv.loc[player, "mean"]]
        for q, w in zip(quoted, want, strict=True):
            digits = 1 if w < 1000 else 0  # the README gives four significant digits
            assert q == pytest.approx(round(w, digits), abs=1e-9), (row, q, w)
    assert "(V = 5)" in (ROOT / "README.md").read_text(encoding="utf-8")
    assert (tv.loc[:, "V"] == 5).all()

    trees = pd.read_csv(REPORT / "tables" / "tree_regret.csv")
    trees = trees.set_index(["game_label", "player_label"])["mean"]
    rows = readme_table("| tree regret at T |")
    players = {row: re.match(r"`([^`]+)`", row).group(1) for row in rows}
    assert set(players.values()) == {"ada_normal_hedge", "ml_prod", "pruning_hedge"}
    for row, player in players.items():
        for game, cell in zip(TREE_GAMES, rows[row], strict=True):
            value = trees[(game, player)]
            digits = 2 if value < 10 else 1
            assert float(cell) == pytest.approx(round(value, digits), abs=1e-9), (row, game)


def test_no_declared_bound_is_exceeded_in_the_report():
    violations = pd.read_csv(REPORT / "tables" / "bound_violations.csv")
    assert violations.empty


@pytest.mark.slow
@pytest.mark.parametrize(
    ("config", "player", "player_params", "adversary", "adversary_params", "metric", "game"),
    [
        (
            CHANGING,
            "ada_normal_hedge_tv",
            {"starts": "geometric"},
            "shifting_experts",
            {"n_switches": 4, "gap": 0.2},
            "tv_regret",
            SHIFTING,
        ),
        (
            CHANGING,
            "flh",
            {},
            "shifting_experts",
            {"n_switches": 4, "gap": 0.2},
            "adaptive_regret",
            SHIFTING,
        ),
        (TREES, "pruning_hedge", {}, "tree_experts", {"depth": 6}, "tree_regret", TREE_GAMES[2]),
        (
            TREES,
            "ada_normal_hedge",
            {},
            "tree_experts",
            {"depth": 8},
            "tree_regret",
            TREE_GAMES[3],
        ),
    ],
)
def test_a_cell_played_alone_reproduces_the_report(
    config, player, player_params, adversary, adversary_params, metric, game
):
    run = run_game(
        player,
        adversary,
        player_params=player_params,
        adversary_params=adversary_params,
        n_actions=config["n_actions"][0],
        horizon=config["horizon"],
        replicates=config["replicates"],
        seed=config["seed"],
        per_decade=config["per_decade"],
        metrics={metric: {}},
    )
    measured = run.rows[(run.rows.t == config["horizon"]) & (run.rows.metric == metric)]
    board = pd.read_csv(REPORT / "tables" / "leaderboards.csv")
    row = board[(board.metric == metric) & (board.game == game) & board.param.isna()]
    want = row[row.player.str.split("(").str[0] == player]["mean"]
    assert len(want) == 1, row.player.tolist()
    assert measured.value.mean() == pytest.approx(float(want.iloc[0]), rel=1e-6)


def table_2_1_games() -> list[str]:
    games = []
    for adversary in TABLE_2_1["adversaries"]:
        if isinstance(adversary, str):
            games.append(f"{adversary} N=10 T=5000")
        else:
            params = ", ".join(f"{k}={v}" for k, v in adversary["params"].items())
            games.append(f"{adversary['name']}({params}) N=10 T=5000")
    return games


def test_table_2_1_ratios_cover_every_game_and_stay_below_one():
    ratios = pd.read_csv(REPORT / "tables" / "bound_ratios.csv")
    games = table_2_1_games()
    sub = ratios[ratios.game.isin(games)]
    assert set(sub.game) == set(games)
    assert set(sub.player) == set(TABLE_2_1_BOUNDED.values())  # NormalHedge: no bound, no ratio
    for metric, param in (("regret", None), ("quantile_regret", 0.1), ("quantile_regret", 0.25)):
        rows = sub[
            (sub.metric == metric) & (sub.param.isna() if param is None else sub.param == param)
        ]
        assert len(rows) == len(games) * len(TABLE_2_1_BOUNDED), (metric, param)
        assert (rows.n == TABLE_2_1["replicates"]).all()
    # every declared bound holds on every replicate (the ratios below 1), but the bandit
    # player's (Luo 2016, Theorem 21), which bounds an expectation: there the mean's upper 95%
    # limit; and at ε = 1/N = 0.1 (k = 1) the quantile regret and its bound are the regret and
    # its bound
    per = ratios[ratios.basis == "per replicate"]
    mean = ratios[ratios.basis == "in expectation"]
    assert len(per) + len(mean) == len(ratios) and (per.ratio_max <= 1 + 1e-9).all()
    assert set(mean.player) <= {"dg_bandit"} and (mean.ratio_ci_high <= 1).all()
    regret = sub[sub.metric == "regret"].set_index(["game", "player"]).sort_index()
    first = sub[(sub.metric == "quantile_regret") & (sub.param == 0.1)]
    first = first.set_index(["game", "player"]).sort_index()
    for column in ("value", "bound", "ratio_mean", "ratio_max"):
        np.testing.assert_allclose(first[column], regret[column], rtol=1e-12)
    text = (REPORT / "report.md").read_text(encoding="utf-8")
    assert "## Measured / bound" in text
    assert "Measured without a declared bound (no ratio)" in text and "`normal_hedge`:" in text


@pytest.mark.slow
@pytest.mark.parametrize(
    ("player", "adversary", "params"),
    [("hedge", "anti_hedge", {"eta": 0.0607}), ("two_norm", "comb", {})],
)
def test_a_table_2_1_cell_played_alone_reproduces_its_ratios(player, adversary, params):
    run = run_game(
        player,
        adversary,
        adversary_params=params,
        n_actions=TABLE_2_1["n_actions"][0],
        horizon=TABLE_2_1["horizon"],
        replicates=TABLE_2_1["replicates"],
        seed=TABLE_2_1["seed"],
        per_decade=TABLE_2_1["per_decade"],
        metrics=TABLE_2_1["metrics"],
    )
    final = run.rows[run.rows.t == TABLE_2_1["horizon"]]
    ratios = pd.read_csv(REPORT / "tables" / "bound_ratios.csv")
    game = next(g for g in table_2_1_games() if g.startswith(adversary))
    ratios = ratios[(ratios.game == game) & (ratios.player == TABLE_2_1_BOUNDED[player])]
    for metric, param in (("regret", None), ("quantile_regret", 0.1), ("quantile_regret", 0.25)):

        def column(name, metric=metric, param=param):
            sel = final[final.metric == name]
            sel = sel[sel.param.isna()] if param is None else sel[sel.param == param]
            return sel.sort_values("replicate").value.to_numpy()

        ratio = column(metric) / column(f"bound:{metric}")
        want = ratios[(ratios.metric == metric)]
        want = want[want.param.isna()] if param is None else want[want.param == param]
        assert len(want) == 1
        assert ratio.mean() == pytest.approx(float(want.ratio_mean.iloc[0]), rel=1e-6)
        assert ratio.max() == pytest.approx(float(want.ratio_max.iloc[0]), rel=1e-6)
