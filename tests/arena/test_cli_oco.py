"""``arena run`` plays OCO and classification games end to end (Hydra overrides, schema, errors)."""

from __future__ import annotations

import json

import pyarrow.parquet as pq

from arena.results import SCHEMA
from tests.helpers.cli import arena_in_process


def test_run_oco_game_with_metric_parameters(tmp_path):
    out = tmp_path / "run"
    res = arena_in_process(
        "run",
        "player=ogd",
        "adversary=random_linear",
        "adversary.domain=box",
        "adversary.distribution=sphere",
        "n_actions=3",
        "horizon=200",
        "replicates=3",
        "metrics=oco",
        "metrics.regret.radius=[.nan,2.0]",
        f"hydra.run.dir={out}",
        cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr
    assert "other protocols than oco: mistakes" in res.stdout  # classification only
    df = pq.read_table(out / "results.parquet").to_pandas()
    assert df.columns.tolist() == SCHEMA
    assert set(df.protocol) == {"oco"} and set(df.n_actions) == {3}
    assert {"loss", "regret", "dynamic_regret", "bound:regret"} <= set(df.metric)
    regret = df[(df.metric == "regret") & (df.t == 200)]
    assert regret.param.isna().sum() == 3 and (regret.param == 2.0).sum() == 3
    bound = df[(df.metric == "bound:regret") & (df.t == 200)].value.to_numpy()
    assert (regret[regret.param.isna()].value.to_numpy() <= bound + 1e-9).all()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["domain"] == {"kind": "box", "radius": 1.0}


def test_run_classification_counts_mistakes(tmp_path):
    out = tmp_path / "run"
    res = arena_in_process(
        "run", "player=perceptron", "adversary=separable_stream", "n_actions=4",
        "horizon=300", "replicates=2", f"hydra.run.dir={out}", cwd=tmp_path,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    df = pq.read_table(out / "results.parquet").to_pandas()
    mistakes = df[df.metric == "mistakes"]
    # Novikoff: at most (R/γ)² = (1/0.1)² = 100 mistakes on separable data with margin 0.1
    assert (mistakes.value <= 100).all() and (mistakes.value >= 1).all()


def test_experts_player_against_an_oco_adversary_is_a_clear_error(tmp_path):
    res = arena_in_process(
        "run", "player=hedge", "adversary=random_linear", "horizon=10",
        f"hydra.run.dir={tmp_path / 'run'}", cwd=tmp_path,
    )  # fmt: skip
    assert res.returncode == 2
    assert "experts protocol" in res.stderr and "random_linear" in res.stderr
    assert not (tmp_path / "run").exists()
