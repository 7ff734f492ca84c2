"""The report's "Time-varying competitors" and "Tree experts" sections, built from two small
tournaments in one folder (the layout of `make reports`' Luo 2016 Tables 2.3/2.4 report): their
tables against an independent computation from the rows, the wall time column from the cells'
manifests, and both tournaments named in the provenance."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from arena.apps.tournament import Tournament, TournamentConfig
from arena.reporting import build_report, load_source
from arena.reporting.sections.time_varying import time_varying_table
from arena.reporting.sections.trees import tree_table

ROOT = Path(__file__).resolve().parents[3]

CHANGING = {
    "name": "changing",
    "players": ["hedge", {"name": "ada_normal_hedge_tv", "params": {"starts": "geometric"}}],
    "adversaries": [{"name": "shifting_experts", "params": {"n_switches": 2}}],
    "n_actions": [4],
    "horizon": 300,
    "replicates": 3,
    "seed": 5,
    "metrics": {"regret": {}, "tv_regret": {}, "tv_variation": {}, "tv_loss": {}, "bound": {}},
}
TREES = {
    "name": "trees",
    "players": ["ada_normal_hedge", "pruning_hedge"],
    "adversaries": [{"name": "tree_experts", "grid": {"depth": [2, 3]}}],
    "n_actions": [None],
    "horizon": 300,
    "replicates": 3,
    "seed": 5,
    "metrics": {"regret": {}, "tree_regret": {}, "bound": {}},
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("tables")
    for config in (CHANGING, TREES):
        cfg = TournamentConfig.from_mapping(config)
        Tournament(cfg, root / config["name"], executor="serial").run()
    return root


def test_tables_equal_an_independent_computation_from_the_rows(folder):
    src = load_source(folder)
    rows = src.rows
    final = rows[rows.t == rows.horizon]

    def at_t(metric, game, player):
        sel = final[(final.metric == metric) & (final.game_label == game)]
        return sel[sel.player_label == player].sort_values("replicate").value.to_numpy()

    tv = time_varying_table(rows)
    assert len(tv) == 2  # two players in the one game with a declared competitor
    for r in tv.itertuples(index=False):
        regret = at_t("tv_regret", r.game_label, r.player_label)
        assert r.mean == pytest.approx(regret.mean(), rel=1e-12)
        assert r.V == pytest.approx(at_t("tv_variation", r.game_label, r.player_label).mean())
        assert r.V == pytest.approx(3.0)  # a 2-switch sequence of point masses: k + 1
        bound = at_t("bound:tv_regret", r.game_label, r.player_label)
        if str(r.player_label).startswith("ada_normal_hedge_tv"):
            assert r.ratio == pytest.approx((regret / bound).max(), rel=1e-12) and r.ratio < 1
        else:
            assert bound.size == 0 and np.isnan(r.bound) and np.isnan(r.ratio)

    trees = tree_table(rows, src.cells)
    assert sorted(set(trees.n_actions)) == [6, 14]  # 2^{D+1} − 2 edges for D = 2, 3
    for r in trees.itertuples(index=False):
        regret = at_t("tree_regret", r.game_label, r.player_label)
        assert r.mean == pytest.approx(regret.mean(), rel=1e-12)
        cell = src.cells[
            (src.cells.game_label == r.game_label) & (src.cells.player_label == r.player_label)
        ].iloc[0]
        want = 1e6 * cell.wall_time_s / (cell.horizon * cell.replicates)
        assert r.us_per_round == pytest.approx(want, rel=1e-12) and r.us_per_round > 0
        declared = at_t("bound:tree_regret", r.game_label, r.player_label)
        if r.player_label == "pruning_hedge":
            assert r.bound == pytest.approx(declared.mean()) and (regret <= declared).all()
        else:
            assert np.isnan(r.bound)


def test_the_report_shows_both_sections_and_both_tournaments(folder, tmp_path):
    build_report(folder, tmp_path / "r", name="tables", metrics=["tv_regret", "tree_regret"])
    text = (tmp_path / "r" / "report.md").read_text()
    assert "## Time-varying competitors" in text and "## Tree experts" in text
    assert "Tournament `changing`" in text and "Tournament `trees`" in text
    assert (tmp_path / "r" / "figures" / "tree_regret_vs_n.png").is_file()
    table = pd.read_csv(tmp_path / "r" / "tables" / "tree_regret.csv")
    assert set(table.player_label) == {"ada_normal_hedge", "pruning_hedge"}
    # the summary counts the rows with a declared bound, from the same tables
    tv = pd.read_csv(tmp_path / "r" / "tables" / "time_varying.csv")
    n_tv, over_tv = int(tv.ratio.notna().sum()), int((tv.ratio > 1).sum())
    assert (
        f"[Regret to the time-varying competitor over Theorem 7's bound at T](#time-varying-"
        f"competitors): {n_tv - over_tv} of {n_tv} hold"
    ) in text
    n_tree = int(table.bound.notna().sum())
    assert (
        n_tree >= 1
        and (
            f"(#tree-experts): {n_tree - int((table['mean'] > table.bound).sum())} of {n_tree} hold"
        )
        in text
    )
    # the wall time per round changes from run to run: the build's record holds it
    timing = pd.read_csv(tmp_path / "r" / "run" / "tree_timing.csv")
    assert "us_per_round" not in table and (timing.us_per_round > 0).all()
    assert (
        "µs / round" not in text
        and "µs / round" in (tmp_path / "r" / "run" / "report.md").read_text()
    )


def test_sections_are_absent_without_their_metrics(tmp_path):
    cfg = TournamentConfig.from_mapping({**CHANGING, "metrics": {"regret": {}}})
    Tournament(cfg, tmp_path / "t", executor="serial").run()
    build_report(tmp_path / "t", tmp_path / "r", name="plain")
    text = (tmp_path / "r" / "report.md").read_text()
    assert "## Time-varying competitors" not in text and "## Tree experts" not in text


@pytest.mark.parametrize("name", ["changing_environments", "tree_experts"])
def test_the_tables_tournaments_validate(name):
    config = yaml.safe_load((ROOT / "configs" / "tournament" / f"{name}.yaml").read_text())
    TournamentConfig.from_mapping(config).validate()
