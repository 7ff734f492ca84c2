"""A found sequence certifies a lower bound on its player's regret (issue 33, item 3)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from arena.apps.attack import run_attack
from arena.attack.certificate import certify
from arena.game import run_game


@pytest.fixture(scope="module")
def ftl_worst(tmp_path_factory):
    out = tmp_path_factory.mktemp("attack") / "ftl"
    assert run_attack(["player=ftl", "n_actions=2", "horizon=24", f"out={out}"]) == 0
    return out


def _replay(player, folder, horizon=24, **params):
    return run_game(
        player,
        "replay",
        player_params=params,
        adversary_params={"path": str(folder / "worst.npy")},
        horizon=horizon,
        metrics={"regret": {}, "lower_bound": {}},
    )


def test_replaying_ftl_worst_against_ftl_declares_its_regret_exactly(ftl_worst):
    run = _replay("ftl", ftl_worst)
    rows = run.rows
    regret = rows[rows.metric == "regret"].set_index("t").value
    declared = rows[rows.metric == "lower_bound:regret"].set_index("t").value
    assert len(declared) == len(regret) > 1
    assert (declared == regret).all()  # bit for bit at every checkpoint
    provenance = json.loads((ftl_worst / "worst.json").read_text())
    assert declared.loc[24] == provenance["value"] == 6.0  # T/4: the DP's value (uniform ties)
    assert provenance["certificate"]["deterministic"] is True


def test_no_declaration_against_another_player_parameters_or_horizon(ftl_worst):
    cases = [
        (("hedge", ftl_worst), {}, "certifies ftl's regret, not hedge's"),
        (("ftl", ftl_worst), {"tie_break": "lowest"}, "with parameters"),
        (("ftl", ftl_worst, 20), {}, "T = 24, not N = 2, T = 20"),
    ]
    for args, params, why in cases:
        run = _replay(*args, **params)
        assert not run.rows.metric.str.startswith("lower_bound").any()
        assert why in run.skipped_metrics["lower_bound"]


def test_an_edited_sequence_or_a_random_player_certifies_nothing(ftl_worst, tmp_path):
    edited = tmp_path / "worst.npy"
    losses = np.load(ftl_worst / "worst.npy")
    np.save(edited, 1.0 - losses)
    (tmp_path / "worst.json").write_text((ftl_worst / "worst.json").read_text())
    run = _replay("ftl", tmp_path)
    assert "is not the sequence worst.json certifies" in run.skipped_metrics["lower_bound"]
    # ftpl samples its p_t: the regret on a fixed sequence changes with the seed
    cert = certify("ftpl", {}, ftl_worst / "worst.npy", 24)
    assert cert["deterministic"] is False and "differs between seeds" in cert["why"]


def test_a_gallery_report_runs_its_attacks_once(tmp_path):
    from arena.apps.attack import check_attack_spec, run_attack_specs

    spec = check_attack_spec("test", {"player": "ftl", "horizons": [6, 8]})
    lines: list[str] = []
    folders = run_attack_specs([spec], tmp_path, echo=lines.append)
    assert [f.name for f in folders] == ["ftl-N2-T6", "ftl-N2-T8"] and len(lines) == 2
    values = [json.loads((f / "worst.json").read_text())["value"] for f in folders]
    assert values == [1.5, 2.0]  # T/4 with uniform ties
    assert run_attack_specs([spec], tmp_path, echo=lines.append) == folders
    assert len(lines) == 2  # written once: a rerun skips them
