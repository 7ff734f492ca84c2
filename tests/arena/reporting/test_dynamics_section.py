"""The report's "Game dynamics" section: the tail slopes of the duality gaps against an independent
least-squares computation, the theory column, and the tournament file it is built for."""

from __future__ import annotations

import inspect
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import stats as sps

from arena.apps.tournament import Tournament, TournamentConfig
from arena.reporting import build, load_source
from arena.reporting.render import render_markdown
from arena.reporting.sections.context import ReportContext
from arena.reporting.sections.dynamics import (
    ROUNDING_FLOOR,
    game_dynamics,
    gap_slope,
    theory,
)

ROOT = Path(__file__).resolve().parents[3]
CONFIG = yaml.safe_load((ROOT / "configs" / "tournament" / "game_dynamics.yaml").read_text())
HORIZON = 1000


def test_slope_of_a_power_law_and_its_interval_against_linregress():
    ts = np.unique(np.round(np.logspace(0, 4, 41)))
    exact = gap_slope(ts, 7.0 * ts**-0.5)
    assert exact["status"] == "fit"
    assert exact["slope"] == pytest.approx(-0.5, abs=1e-12)
    assert exact["ci_high"] - exact["ci_low"] == pytest.approx(0.0, abs=1e-9)
    # a wiggly curve: the slope and the interval are those of scipy's least squares on the
    # window (log t in the upper half of [0, log 10^4])
    noisy = 7.0 * ts**-1.0 * np.exp(0.3 * np.sin(ts))
    r = gap_slope(ts, noisy, level=0.9)
    window = np.log(ts) >= np.log(ts[-1]) / 2 - 1e-12
    fit = sps.linregress(np.log(ts[window]), np.log(noisy[window]))
    k = int(window.sum())
    half = sps.t.ppf(0.95, k - 2) * fit.stderr
    assert r["points"] == k and r["t_from"] == ts[window][0] and r["t_to"] == ts[-1]
    assert r["slope"] == pytest.approx(fit.slope, rel=1e-12)
    assert r["ci_high"] - r["slope"] == pytest.approx(half, rel=1e-9)
    assert r["slope"] - r["ci_low"] == pytest.approx(half, rel=1e-9)


def test_curves_without_a_power_law():
    ts = np.array([1.0, 10.0, 100.0, 1000.0, 10000.0])
    # a last iterate that converges at a linear rate reaches rounding level inside the window
    fast = np.array([1.0, 1e-3, 1e-7, 3e-15, 2e-16])
    r = gap_slope(ts, fast)
    assert r["status"] == "rounding" and r["t_rounding"] == 1000.0 and math.isnan(r["slope"])
    assert fast[3] <= ROUNDING_FLOOR * fast.max() < fast[2]
    # a start at the equilibrium: 0 throughout
    assert gap_slope(ts, np.zeros(5))["status"] == "zero"
    # too few checkpoints in the window to fit a line and see its residuals
    assert gap_slope(np.array([1.0, 10.0]), np.array([1.0, 0.1]))["status"] == "n/a"


def test_theory_column():
    assert theory("hedge", {"eta": "anytime"}, "average").slope == -0.5
    assert math.isnan(theory("hedge", {"eta": 0.1}, "average").slope)  # a fixed η: a floor
    assert theory("regret_matching", {"variant": "rm_plus"}, "average").slope == -0.5
    assert theory("optimistic_hedge", {"eta": 0.5}, "average").slope == -1.0
    assert theory("optimistic_gd", {}, "average").slope == -1.0
    assert theory("optimistic_gd", {}, "last").slope == -math.inf  # linear rate
    assert "Bailey & Piliouras" in theory("hedge", {"eta": 0.1}, "last").text
    assert "Cai et al." in theory("regret_matching", {}, "last").text
    assert theory("ftl", {}, "average").text == "—"


def test_no_section_without_gap_metrics():
    assert game_dynamics(SimpleNamespace(logged={"regret", "loss"})) is None


def test_the_tournament_file():
    cfg = TournamentConfig.from_mapping(CONFIG)
    cfg.validate()
    cells = cfg.cells()
    assert len(cells) == 15  # 5 players × 3 games, self-play everywhere
    assert {c.adversary for c in cells} == {"matrix_game"}
    assert all(c.adversary_params["opponent"] == "self" for c in cells)
    assert set(cfg.metrics) == {"regret", "bound", "duality_gap", "last_iterate_gap"}


def test_the_section_is_built_into_every_report():
    assert "game_dynamics(ctx)" in inspect.getsource(build._write)


@pytest.fixture(scope="module")
def section(tmp_path_factory):
    """Hedge and optimistic_gd (a larger step) on two of the tournament's games, T = 1000."""
    root = tmp_path_factory.mktemp("dynamics-section")
    short = {
        **CONFIG,
        "players": [CONFIG["players"][0], {"name": "optimistic_gd", "params": {"eta": 0.5}}],
        "adversaries": CONFIG["adversaries"][:2],
        "horizon": HORIZON,
        "per_decade": 10,
    }
    Tournament(TournamentConfig.from_mapping(short), root / "t", executor="serial").run()
    src = load_source(root / "t")
    (root / "figures").mkdir()
    (root / "tables").mkdir()
    ctx = ReportContext(src, ["regret"], 0.95, root / "figures", root / "tables", 0.0)
    return src, ctx, game_dynamics(ctx), root


def test_the_section_table_is_the_fit_of_the_rows(section):
    src, _, sec, root = section
    assert sec.title == "Game dynamics" and sec.anchor == "dynamics"
    table = pd.read_csv(root / "tables" / "dynamics_slopes.csv")
    assert len(table) == 8  # 2 players × 2 games × 2 iterates
    rows = src.rows
    for r in table[table.status == "fit"].itertuples(index=False):
        metric = "duality_gap" if r.iterate == "average" else "last_iterate_gap"
        cell = rows[
            (rows.metric == metric) & (rows.game_label == r.game) & (rows.player_label == r.player)
        ]
        curve = cell.groupby("t").value.mean()
        ts = curve.index.to_numpy(float)
        window = np.log(ts) >= np.log(ts[-1]) / 2 - 1e-12
        fit = sps.linregress(np.log(ts[window]), np.log(curve.to_numpy()[window]))
        assert r.slope == pytest.approx(fit.slope, rel=1e-9), (r.game, r.player, r.iterate)
    # measured at T = 1000: average-iterate slopes −1.00 and −0.98 (optimistic_gd), −0.64 and
    # −0.60 (Hedge); optimistic_gd's last iterate reaches rounding level on biased RPS
    avg = table[table.iterate == "average"].set_index(["player", "game"])
    ogd = avg.loc[avg.index.get_level_values(0).str.startswith("optimistic_gd")]
    hedge = avg.loc[avg.index.get_level_values(0).str.startswith("hedge")]
    assert ogd.slope.between(-1.1, -0.9).all() and hedge.slope.between(-0.75, -0.45).all()
    assert set(ogd.theory_slope) == {-1.0} and set(hedge.theory_slope) == {-0.5}
    last = table[(table.iterate == "last") & table.player.str.startswith("optimistic_gd")]
    assert "rounding" in set(last.status)
    text = render_markdown("r", sec.blocks)
    assert "Piliouras 2018" in text and "→ rounding level by t = 794" in text
    for name in ("dynamics_duality_gap", "dynamics_last_iterate_gap"):
        assert (root / "figures" / f"{name}.png").is_file()
