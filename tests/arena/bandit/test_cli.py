"""``arena run`` plays a bandit game end to end: a bandit player against an experts adversary."""

from __future__ import annotations

import json

import pyarrow.parquet as pq

from arena.results import SCHEMA
from tests.helpers.cli import arena_in_process


def test_run_a_bandit_game(tmp_path):
    out = tmp_path / "run"
    res = arena_in_process(
        "run", "player=exp3", "player.eta=anytime", "adversary=bernoulli", "adversary.gap=0.2",
        "n_actions=4", "horizon=500", "replicates=3", f"hydra.run.dir={out}", cwd=tmp_path,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    df = pq.read_table(out / "results.parquet").to_pandas()
    assert df.columns.tolist() == SCHEMA and set(df.protocol) == {"bandit"}
    assert {"regret", "pseudo_regret", "arm_pulls", "arm_pseudo_regret", "bound:regret"} <= set(
        df.metric
    )
    pulls = df[(df.metric == "arm_pulls") & (df.t == 500)]
    assert pulls.groupby("replicate").value.sum().tolist() == [500.0] * 3
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["protocol"] == "bandit"
    assert manifest["config"]["player_params"] == {"eta": "anytime", "gamma": 0.0}


def test_run_refuses_a_bandit_player_against_an_oco_adversary(tmp_path):
    res = arena_in_process("run", "player=ucb1", "adversary=random_linear", "horizon=10",
                f"hydra.run.dir={tmp_path / 'run'}", cwd=tmp_path)  # fmt: skip
    assert res.returncode == 2
    assert "this player plays the bandit protocol" in res.stderr
