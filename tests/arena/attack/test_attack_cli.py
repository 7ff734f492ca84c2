"""``arena attack``: the exact worst case from the command line (issue 33's "done when")."""

from __future__ import annotations

import json

import numpy as np
import pytest

from arena import play
from arena.apps.attack import parse_attack_args
from arena.errors import ConfigError
from tests.helpers.contract import run_in_process


def test_arena_attack_prints_the_worst_case_and_writes_a_sequence_replay_plays(tmp_path):
    done = run_in_process(["attack", "player=hedge", "n_actions=2", "horizon=60"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "worst-case regret" in done.stdout and "exact" in done.stdout
    folder = tmp_path / "outputs" / "attacks" / "hedge-N2-T60"
    provenance = json.loads((folder / "worst.json").read_text())
    losses = np.load(folder / "worst.npy", allow_pickle=False)
    assert losses.shape == (60, 2) and provenance["complete"] is True
    assert 0 < provenance["value"] <= provenance["bound"]  # tuned Hedge stays under its bound
    # the sequence written, replayed through the engine, gives the value printed (the DP's)
    rows = play(
        "hedge",
        "replay",
        n_actions=2,
        horizon=60,
        adversary_params={"path": str(folder / "worst.npy")},
        metrics={"regret": {}},
    )
    assert rows[rows.t == 60].value.iloc[0] == pytest.approx(provenance["value"], abs=1e-9)
    assert (folder / "worst_by_round.csv").read_text().startswith("t,")
    assert not list(folder.glob("*.tmp"))


def test_player_parameters_and_a_grid_are_passed_through(tmp_path):
    done = run_in_process(
        ["attack", "player=ftl", "horizon=12", "losses=[0,0.5,1]", "out=ftl"], tmp_path
    )
    assert done.returncode == 0, done.stderr
    provenance = json.loads((tmp_path / "ftl" / "worst.json").read_text())
    assert provenance["loss_values"] == [0.0, 0.5, 1.0]
    opts = parse_attack_args(["player=hedge", "horizon=5", "player.eta=0.25", "reduce=true"])
    assert opts["params"] == {"eta": 0.25} and opts["reduce"] is True


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["player=hedge"], "'horizon': is required"),
        (["player=hedge", "horizn=5"], "did you mean 'horizon'"),
        (["player=hedge", "horizon=five"], "must be an integer"),
        (["horizon=5", "oops"], "expected KEY=VALUE"),
    ],
)
def test_bad_arguments_are_refused_in_one_line(tmp_path, args, needle):
    with pytest.raises(ConfigError, match=needle):
        parse_attack_args(args)
    done = run_in_process(["attack", *args], tmp_path)
    assert done.returncode == 2 and needle.split(":")[-1].strip("' ") in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "outputs").exists()
