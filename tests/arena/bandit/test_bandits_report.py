"""The committed bandit report (reports/bandits/): the README's numbers are the report's, and the
report's numbers are what the arena measures today.

The tournament is ``configs/tournament/bandits.yaml`` (``make reports`` rebuilds the report). A
cell is a pure function of its player, adversary, parameters and seed, so a cell played alone
reproduces the tournament's rows. The tolerance, 1e-6 relative, only absorbs last-bit differences
of the math library between machines (exp, log, sqrt in the kernels); any change of a player, an
adversary or the seeding moves these numbers by far more.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

from arena.game import run_game
from tests.helpers.readme import readme_table

ROOT = Path(__file__).resolve().parents[3]
REPORT = ROOT / "reports" / "bandits"
CONFIG = yaml.safe_load((ROOT / "configs" / "tournament" / "bandits.yaml").read_text())
README_GAMES = [  # README column → the report's game label and metric
    ("bernoulli", "pseudo_regret"),
    ("stochastically_constrained", "pseudo_regret"),
    ("corrupted(budget=1000)", "pseudo_regret"),
    ("ucb_trap", "pseudo_regret"),
    ("distribution_reader(rule=heaviest)", "regret"),
]


def leaderboard() -> pd.DataFrame:
    board = pd.read_csv(REPORT / "tables" / "leaderboards.csv")
    return board[board.param.isna()].set_index(["metric", "game", "player"])["mean"]


def bandit_table() -> dict[str, list[float]]:
    rows = readme_table("| player | stochastic, gap 0.1 |")
    return {re.match(r"`([^`]+)`", k).group(1): [float(c) for c in v] for k, v in rows.items()}


def test_the_readme_quotes_the_committed_report():
    board = leaderboard()
    games = set(board.index.get_level_values("game"))
    assert {g for g, _ in README_GAMES} <= games, games
    rows = bandit_table()
    assert set(rows) == {"tsallis_inf", "exp3pp", "exp3", "ucb1", "thompson", "hedge"}
    for player, values in rows.items():
        for (game, metric), value in zip(README_GAMES, values, strict=True):
            assert value == pytest.approx(round(board[(metric, game, player)], 1), abs=1e-9), (
                player,
                game,
            )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("player", "adversary", "params", "game"),
    [
        ("tsallis_inf", "stochastically_constrained", {}, "stochastically_constrained"),
        ("ucb1", "stochastically_constrained", {}, "stochastically_constrained"),
        ("thompson", "bernoulli", {"gap": 0.1}, "bernoulli"),
        ("exp3", "corrupted", {"budget": 1000.0}, "corrupted(budget=1000)"),
    ],
)
def test_a_cell_played_alone_reproduces_the_report(player, adversary, params, game):
    run = run_game(
        player,
        adversary,
        adversary_params=params,
        n_actions=CONFIG["n_actions"][0],
        horizon=CONFIG["horizon"],
        replicates=CONFIG["replicates"],
        seed=CONFIG["seed"],
        per_decade=CONFIG["per_decade"],
        metrics={"pseudo_regret": {}, "regret": {}},
    )
    rows = run.rows[run.rows.t == CONFIG["horizon"]]
    board = leaderboard()
    for metric in ("pseudo_regret", "regret"):
        measured = rows[rows.metric == metric].value.mean()
        assert measured == pytest.approx(board[(metric, game, player)], rel=1e-6), metric
