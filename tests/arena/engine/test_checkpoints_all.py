"""``checkpoints="all"``: every round in the tidy table, refused before round 1 when too big."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import arena.resources
from arena.errors import ConfigError
from arena.game import run_game
from arena.validation import MAX_ALL_CHECKPOINTS, checkpoint_grid
from tests.helpers.contract import assert_refused, run_in_process


def test_the_grid_is_every_round():
    np.testing.assert_array_equal(checkpoint_grid(7, "all", 10), np.arange(1, 8))
    with pytest.raises(ConfigError, match="at most"):
        checkpoint_grid(MAX_ALL_CHECKPOINTS + 1, "all", 10)
    with pytest.raises(ConfigError, match="or 'all'"):
        checkpoint_grid(7, "some", 10)


def test_every_round_is_logged_and_agrees_with_a_listed_grid():
    kw = {"n_actions": 3, "horizon": 30, "replicates": 2, "seed": 4, "metrics": ["regret"]}
    every = run_game("hedge", "bernoulli", checkpoints="all", **kw).rows
    listed = run_game("hedge", "bernoulli", checkpoints=list(range(1, 31)), **kw).rows
    assert sorted(every.t.unique()) == list(range(1, 31))
    assert len(every) == 30 * 2
    np.testing.assert_array_equal(every.value.to_numpy(), listed.value.to_numpy())


def test_rows_that_cannot_fit_are_refused_before_any_round(monkeypatch):
    monkeypatch.setattr(arena.resources, "available_memory", lambda: 10_000)
    with pytest.raises(ConfigError, match=r"30 checkpoints × 2 replicates × 1 metric values"):
        run_game("hedge", "bernoulli", n_actions=3, horizon=30, replicates=2,
                 checkpoints="all", metrics=["regret"])  # fmt: skip


def test_from_the_command_line(tmp_path):
    result = run_in_process(
        ["run", "checkpoints=all", "horizon=12", "replicates=2", "metrics=regret",
         "hydra.run.dir=out"], tmp_path
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    rows = pd.read_parquet(tmp_path / "out" / "results.parquet")
    assert sorted(rows.t.unique()) == list(range(1, 13))
    refused = run_in_process(["run", "checkpoints=some", "hydra.run.dir=bad"], tmp_path)
    assert_refused(refused, "'checkpoints'", "or 'all'")
    assert not (tmp_path / "bad").exists()
