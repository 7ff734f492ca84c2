"""The "Worst cases found" section: a report over a replayed attack shows the sequence found, its
regret curve beside the bound, and the certified lower bound (issue 33, item 3)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from arena import run_game
from arena.apps.attack import run_attack
from arena.reporting import build_report
from arena.reporting.sections.worst_cases import attack_folders, read_attack
from arena.results import manifest, write_json_atomic, write_parquet_atomic


def _replayed(root, attack, horizon):
    for player in ("ftl", "hedge"):
        run = run_game(
            player,
            "replay",
            adversary_params={"path": str(attack / "worst.npy")},
            horizon=horizon,
            replicates=2,
            metrics={"regret": {}, "bound": {}, "lower_bound": {}},
        )
        write_parquet_atomic(run.rows, root / player / "results.parquet")
        write_json_atomic(manifest(run), root / player / "manifest.json")


def test_report_shows_the_worst_case_found_and_its_certified_lower_bound(tmp_path):
    results = tmp_path / "results"
    attack = results / "attacks" / "ftl-N2-T16"
    assert run_attack(["player=ftl", "horizon=16", f"out={attack}"]) == 0
    _replayed(results, attack, 16)
    out = tmp_path / "report"
    page = build_report(results, out, name="attacked").read_text()
    assert "Worst cases found" in page and "worst-cases-table" in page
    table = pd.read_csv(out / "tables" / "worst_cases.csv")
    row = table.iloc[0]
    assert (row.attack, row.player, row.method, row.value) == ("ftl-N2-T16", "ftl", "exact", 4.0)
    assert row.certified and np.isnan(row.bound)  # ftl declares no bound
    assert (out / "figures" / "worst_case_ftl-N2-T16.png").stat().st_size > 0
    # the certificate reaches the lower-bound machinery: ftl is forced exactly, hedge gets none
    ratios = pd.read_csv(out / "tables" / "lower_bound_ratios.csv")
    assert ratios.player.tolist() == ["ftl"]
    assert ratios.lower_bound.iloc[0] == 4.0 and ratios.ratio_max.iloc[0] == 1.0


@pytest.mark.slow  # a second report build; the first test is the feature's
def test_an_attacks_folder_elsewhere_and_its_curves(tmp_path):
    attack = tmp_path / "attacks" / "hedge-N2-T12"
    assert run_attack(["player=hedge", "horizon=12", f"out={attack}"]) == 0
    assert attack_folders(tmp_path / "attacks") == [attack] == attack_folders(attack)
    found = read_attack(attack)
    record = json.loads((attack / "worst.json").read_text())
    # the certified curve is the DP's path regret to rounding, and ends at the value
    by_round = pd.read_csv(attack / "worst_by_round.csv")
    np.testing.assert_allclose(found["regret"], by_round.path_regret, atol=1e-12)
    np.testing.assert_allclose(found["bound"], by_round.bound, rtol=1e-12)
    assert abs(found["regret"][-1] - record["value"]) < 1e-9 and found["certified"]
    results = tmp_path / "results"
    _replayed(results, attack, 12)
    out = tmp_path / "report"
    build_report(results, out, name="elsewhere", attacks=tmp_path / "attacks")
    table = pd.read_csv(out / "tables" / "worst_cases.csv")
    assert table.player.tolist() == ["hedge"] and table.ratio.iloc[0] < 1.0
