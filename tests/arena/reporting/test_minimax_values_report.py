"""The committed minimax-values report (reports/minimax-values/): its exact values are the closed
forms, its coverage count is what the report and the README say, and a cell played alone
reproduces its means.

The tournaments are ``configs/tournament/minimax_values*.yaml`` (``arena reproduce --only
minimax-values`` rebuilds the report). Against fair coins and COMB every non-anticipating player's
expected regret is ``T/2 − E[min_i L_{T,i}]``: ``LB(T, N)`` for fair coins (Cesa-Bianchi et al.
1997), Cover's ``V_T`` for COMB with two experts (Cover 1965) and this project's exact dynamic
program ``comb_values`` for K ≥ 3 (Gravin, Peres & Sivan 2016 prove the K = 3 value
asymptotically).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from arena.adversaries.lower_bound import comb_values, cover_values
from arena.adversaries.stochastic import fair_coin_lower_bound
from arena.game import run_game
from arena.players.cover2 import cover_value

ROOT = Path(__file__).resolve().parents[3]
REPORT = ROOT / "reports" / "minimax-values"
TABLE = pd.read_csv(REPORT / "tables" / "minimax_values.csv")
FINAL = TABLE[TABLE.t == TABLE.horizon].set_index(["game", "player"])
# the CSV keeps 10 significant digits
CSV_RTOL = 1e-9


def test_the_exact_values_are_the_closed_forms():
    games = TABLE.groupby(["game", "adversary", "n_actions", "horizon"])
    assert len(games) == 6
    for (game, adversary, n, horizon), part in games:
        ts = part["t"].to_numpy()
        if adversary == "fair_coin":
            want = np.array([fair_coin_lower_bound(int(t), int(n)) for t in ts])
        else:
            assert adversary == "comb"
            values, t_max = comb_values(int(n), int(horizon))
            assert t_max == horizon  # the program reaches T: the values are exact throughout
            want = values[ts]
            if n == 2:  # Cover's game, two ways
                assert np.allclose(want, cover_values(int(horizon))[ts], rtol=1e-12, atol=0)
                assert np.allclose(want, [cover_value(int(t)) for t in ts], rtol=1e-12, atol=0)
        assert np.allclose(part["exact"], want, rtol=CSV_RTOL, atol=0), game


def test_the_values_at_t_400_against_their_asymptotics():
    # V_T = sqrt(T/(2π)) + o(1) (Cover 1965); the K = 3 COMB value is sqrt(8T/(9π)) up to
    # lower-order terms (Abbasi-Yadkori, Bartlett & Gabillon 2017); both within 0.01 at T = 400
    exact = FINAL.groupby(level="game")["exact"].first()
    assert exact["comb N=2"] == pytest.approx(math.sqrt(400 / (2 * math.pi)), abs=0.01)
    assert exact["comb N=3"] == pytest.approx(math.sqrt(8 * 400 / (9 * math.pi)), abs=0.01)
    # COMB beats fair coins with the same number of experts
    assert exact["comb N=2"] > exact["fair_coin N=2"]


def test_every_mean_at_t_covers_its_exact_value_within_a_few_percent():
    assert FINAL["covered"].all()
    assert ((FINAL.ci_high - FINAL.ci_low) / 2 / FINAL.exact).max() < 0.03
    assert FINAL.ratio.between(0.99, 1.01).all()


def test_cover2_attains_its_value_on_every_comb_sequence():
    # Cover's player has regret exactly V_T on every (1,0)/(0,1) sequence: every replicate of
    # COMB with two experts, so the worst replicate, the mean and the declared bound coincide
    comb = FINAL.loc[("comb N=2", "cover2")]
    for column in ("mean", "worst", "bound", "ci_low", "ci_high"):
        assert comb[column] == pytest.approx(comb["exact"], rel=CSV_RTOL)
    # on fair coins (passes included) it stays at or below V_T, and only Cover's player does so
    coins = FINAL.loc[("fair_coin N=2", "cover2")]
    assert coins["worst"] <= coins["bound"] == pytest.approx(comb["exact"], rel=CSV_RTOL)
    others = FINAL.loc["comb N=2"].drop(index="cover2")
    assert (others["worst"] > others["exact"]).all()


def test_the_coverage_count_is_what_the_report_and_the_readme_say():
    covered = int(TABLE["covered"].sum())
    total = int(TABLE["covered"].notna().sum())
    report = (REPORT / "report.md").read_text(encoding="utf-8")
    said = re.search(r"(\d+) of (\d+) intervals \(([\d.]+)%\) contain the exact value", report)
    assert said is not None
    assert (int(said[1]), int(said[2])) == (covered, total)
    assert float(said[3]) == pytest.approx(round(100 * covered / total, 1), abs=1e-9)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    line = next(x for x in readme.splitlines() if x.startswith("Minimax values:"))
    assert f"{covered} of {total} checkpoint intervals" in line
    low, high = FINAL.ratio.min(), FINAL.ratio.max()
    assert f"ratios {low:.3f}–{high:.3f}" in line
    assert f"V_400 = {FINAL.loc[('comb N=2', 'cover2'), 'exact']:.3f}" in line


@pytest.mark.slow
def test_a_cell_played_alone_reproduces_the_report():
    config = yaml.safe_load(
        (ROOT / "configs" / "tournament" / "minimax_values_fair_coin.yaml").read_text()
    )
    run = run_game(
        "hedge",
        "fair_coin",
        n_actions=10,
        horizon=config["horizon"],
        replicates=config["replicates"],
        seed=config["seed"],
        per_decade=config["per_decade"],
        metrics={"regret": {}, "lower_bound": {}},
    )
    means = run.rows.groupby(["metric", "t"]).value.mean()
    want = TABLE[(TABLE.game == "fair_coin N=10") & (TABLE.player == "hedge")].set_index("t")
    assert len(want) == 25
    # a cell is a pure function of its player, adversary, parameters and seed; 1e-6 absorbs
    # only last-bit differences of the math library between machines
    assert np.allclose(means["regret"][want.index], want["mean"], rtol=1e-6, atol=0)
    assert np.allclose(means["lower_bound:regret"][want.index], want["exact"], rtol=CSV_RTOL)
