"""The "Tuned steps and sketches" section and the committed report of Luo 2016, §4.6
(reports/second-order/): the best-step selection on tiny hand-made rows, and the README's numbers
against the committed tables (read from the files, never re-simulated: the tournaments behind the
report take minutes; ``make reports`` rebuilds it).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from arena.reporting.sections.second_order import (
    LUO_2016_TABLE_D3,
    _thesis_d3_summary,
    best_tuned,
    second_order,
    thesis_column,
    tuning_families,
    tuning_grid,
    wins_against,
)
from tests.helpers.readme import readme_table

ROOT = Path(__file__).resolve().parents[3]
REPORT = ROOT / "reports" / "second-order"


def _rows(cells: dict[tuple[str, str, str], list[float]], horizon: int = 10) -> pd.DataFrame:
    """Final ``mistakes`` rows: ``(game, player, params JSON) → mistakes per replicate``."""
    out = []
    for (game, player, params), values in cells.items():
        for r, v in enumerate(values):
            out.append((game, player, params, horizon, horizon, r, v))
    columns = ["game_label", "player", "player_params", "t", "horizon", "replicate", "value"]
    return pd.DataFrame(out, columns=columns).assign(metric="mistakes")


def test_the_best_step_is_the_least_mean_error_per_game_and_family():
    rows = _rows(
        {
            # son(m=5): α = 2 wins game a (mean 1 mistake), α = 1 wins game b
            ("a", "son", '{"alpha":1.0,"m":5}'): [2.0, 4.0],
            ("a", "son", '{"alpha":2.0,"m":5}'): [1.0, 1.0],
            ("a", "son", '{"alpha":4.0,"m":5}'): [3.0, 3.0],
            ("b", "son", '{"alpha":1.0,"m":5}'): [0.0, 2.0],
            ("b", "son", '{"alpha":2.0,"m":5}'): [5.0, 5.0],
            ("b", "son", '{"alpha":4.0,"m":5}'): [6.0, 4.0],
            # son(m=9): a tie between α = 1 and α = 4 goes to the smaller step
            ("a", "son", '{"alpha":1.0,"m":9}'): [3.0, 3.0],
            ("a", "son", '{"alpha":4.0,"m":9}'): [2.0, 4.0],
            # adagrad is tuned over eta; ftl has no grid and is left out
            ("a", "adagrad", '{"eta":0.5}'): [9.0, 9.0],
            ("a", "adagrad", '{"eta":0.25}'): [8.0, 6.0],
            ("a", "ftl", "{}"): [0.0, 0.0],
            # tuned in game a only: one value in game c is no tuning there
            ("c", "son", '{"alpha":1.0,"m":9}'): [1.0, 1.0],
        }
    )
    cells = rows[["player", "player_params"]].drop_duplicates()
    families = tuning_families(cells)
    assert set(families["family"]) == {"son(m=5)", "son(m=9)", "adagrad"}
    assert set(families.loc[families.player == "adagrad", "tuned"]) == {"eta"}
    grid = tuning_grid(rows, families)
    # error rates are mistakes / T, averaged over replicates
    a5 = grid[(grid.game_label == "a") & (grid.family == "son(m=5)")]
    assert a5["mean"].tolist() == pytest.approx([0.3, 0.1, 0.3])
    best = best_tuned(grid).set_index(["game_label", "family"])
    assert set(best.index) == {
        ("a", "son(m=5)"),
        ("b", "son(m=5)"),
        ("a", "son(m=9)"),
        ("a", "adagrad"),
    }
    assert best.loc[("a", "son(m=5)"), "step"] == 2.0
    assert not best.loc[("a", "son(m=5)"), "at_edge"]
    assert best.loc[("b", "son(m=5)"), "step"] == 1.0
    assert best.loc[("b", "son(m=5)"), "at_edge"]
    assert best.loc[("a", "son(m=9)"), "step"] == 1.0
    assert best.loc[("a", "adagrad"), "step"] == 0.25
    assert best.loc[("a", "adagrad"), "mean"] == pytest.approx(0.7)
    # the interval is the t-interval of the best step's replicates (0.6 and 0.8)
    half = 12.706204736174707 * np.std([0.6, 0.8], ddof=1) / math.sqrt(2)
    assert best.loc[("a", "adagrad"), "ci_high"] == pytest.approx(0.7 + half)
    assert wins_against(best.reset_index(), "adagrad") == {"son(m=5)": (1, 1), "son(m=9)": (1, 1)}


def test_the_section_needs_a_tuned_grid_or_sketch_rows():
    cells = pd.DataFrame({"player": ["ftl", "hedge"], "player_params": ["{}", '{"eta":0.1}']})
    ctx = SimpleNamespace(src=SimpleNamespace(cells=cells), logged={"mistakes", "regret"})
    assert second_order(ctx) is None


def test_the_thesis_columns_and_their_summary():
    assert thesis_column("son", {"sketch": "fd", "m": 1, "diagonal": False}) == "noDiag m=0"
    assert thesis_column("son", {"sketch": "oja", "m": 10, "diagonal": True}) == "Diag m=10"
    assert thesis_column("son", {"sketch": "full"}) is None
    summary = _thesis_d3_summary()
    assert len(LUO_2016_TABLE_D3) == 23
    # Luo 2016, §4.6.2: with diagonal adaptation Oja-SON beats ADAGRAD on most datasets
    # (18 of 23 at m = 0: all but covtype, mushrooms, rcv1, w1a, w8a)
    assert summary["Diag m=0"][1] == 18
    assert summary["ADAGRAD"] == (pytest.approx(0.081066), 0)


KAPPA_GAMES = {  # README column → the report's game label
    "κ = 10": "ill_conditioned N=100 T=5000",
    "κ = 30": "ill_conditioned(kappa=30) N=100 T=5000",
    "κ = 100": "ill_conditioned(kappa=100) N=100 T=5000",
    "κ = 200": "ill_conditioned(kappa=200) N=100 T=5000",
}
README_FAMILIES = {  # README row → the report's family label
    "`adagrad`": "adagrad",
    "`son`, full matrix": "son(diagonal=False, m=10, sketch=full)",
    "`son`, Oja sketch, m = 10": "son(diagonal=False, m=10, sketch=oja)",
    "`son`, Oja sketch, m = 5": "son(diagonal=False, m=5, sketch=oja)",
    "`son`, FD sketch, m = 10": "son(diagonal=False, m=10, sketch=fd)",
    "`son`, m = 0 (gradient descent)": "son(diagonal=False, m=1, sketch=fd)",
}


def test_the_readme_quotes_the_committed_report():
    tuned = pd.read_csv(REPORT / "tables" / "tuned_error.csv")
    tuned = tuned.set_index(["game_label", "family"])
    rows = readme_table("| progressive error at the best step |")
    assert set(rows) == set(README_FAMILIES)
    for row, family in README_FAMILIES.items():
        for cell, game in zip(rows[row], KAPPA_GAMES.values(), strict=True):
            # the README gives three decimals of the mean over replicates
            assert float(cell) == pytest.approx(round(tuned.loc[(game, family), "mean"], 3)), (
                row,
                game,
            )
    # the qualitative claim: AdaGrad's error grows with κ far more than full SON's
    ada = [tuned.loc[(g, "adagrad"), "mean"] for g in KAPPA_GAMES.values()]
    full = [
        tuned.loc[(g, README_FAMILIES["`son`, full matrix"]), "mean"] for g in KAPPA_GAMES.values()
    ]
    assert ada[-1] / ada[0] > 2.0 and full[-1] / full[0] < 1.2
    # every κ game's best step is inside its grid (a wider grid would not change the table)
    kappa = tuned.loc[list(KAPPA_GAMES.values())]
    assert not kappa["at_edge"].any()


def test_the_readme_quotes_the_datasets_and_the_sketch_error():
    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    tuned = pd.read_csv(REPORT / "tables" / "tuned_error.csv")
    raw = tuned[tuned.game_label.str.contains("standardize=False")].set_index("family")["mean"]
    diag, ada = raw["son(diagonal=True, m=10, sketch=oja)"], raw["adagrad"]
    assert f"breast-cancer features, {diag:.3f} against {ada:.3f}" in text
    # the only stand-in game where diagonally adapted Oja-SON beats AdaGrad
    wide = tuned.pivot(index="game_label", columns="family", values="mean")
    wins = wide[wide["son(diagonal=True, m=10, sketch=oja)"] < wide["adagrad"]].index.tolist()
    assert len(wins) == 1 and "standardize=False" in wins[0]
    sketch = pd.read_csv(REPORT / "tables" / "sketch_error.csv")
    oja = sketch[sketch.player_label.str.contains("sketch=oja") & (sketch.param == 10)]
    quoted = re.search(
        r"falls from ([\d.]+) at t = 100 to ([\d.]+) at t = 3000 at κ = 10, "
        r"and from ([\d.]+) to ([\d.]+) at κ = 200",
        text,
    )
    assert quoted, "the README lost its Figure 4.1 sentence"
    values = [float(v) for v in quoted.groups()]
    for game, (first, last) in zip(
        ["ill_conditioned N=100 T=3000", "ill_conditioned(kappa=200) N=100 T=3000"],
        [values[:2], values[2:]],
        strict=True,
    ):
        curve = oja[oja.game_label == game].set_index("t")["mean"]
        assert first == pytest.approx(round(curve[100.0], 2))
        assert last == pytest.approx(round(curve[3000.0], 2))


def test_the_report_shows_the_section_its_figures_and_the_thesis_numbers():
    text = (REPORT / "report.md").read_text(encoding="utf-8")
    assert "## Tuned steps and sketches" in text
    for figure in ("tuned_error_vs_kappa_ill_conditioned", "sketch_error_vs_t"):
        assert (REPORT / "figures" / f"{figure}.png").is_file()
        assert f"figures/{figure}.png" in text
    # Luo 2016, Table D.3's counts beside ours
    assert "| son(diagonal=True, m=1, sketch=fd) | Diag m=0 |" in text
    assert "18 of 23" in text
    sketch = pd.read_csv(REPORT / "tables" / "sketch_error.csv")
    oja = sketch[sketch.player_label.str.contains("sketch=oja") & (sketch.param == 10)]
    # Oja's top-10 eigenvalue error falls between t = 100 and T at both condition numbers
    for _, game in oja.groupby("game_label"):
        game = game.sort_values("t")
        assert game["mean"].iloc[-1] < game["mean"].iloc[0]
