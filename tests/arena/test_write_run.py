"""``write_run`` keeps an experiment's folder whole (issue 14, class 4).

The same experiment run with other replicates merges into its folder instead of replacing the
rows already there; a folder the arena did not write, or whose manifest is unreadable, is refused.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from arena import run_game
from arena.errors import ConfigError
from arena.results import write_run

GAME = dict(n_actions=4, horizon=120, seed=3, metrics={"regret": {}, "sa_regret": {"tau": [5, 20]}})


def test_other_replicates_of_the_same_experiment_are_merged(tmp_path):
    write_run(run_game("hedge", "bernoulli", replicates=2, **GAME), tmp_path)
    write_run(run_game("hedge", "bernoulli", replicates=[3, 2], **GAME), tmp_path)
    merged = pd.read_parquet(tmp_path / "results.parquet")
    # replicate r's rows do not depend on the batch: the folder equals one run of 0..3
    whole = run_game("hedge", "bernoulli", replicates=4, **GAME).rows
    pd.testing.assert_frame_equal(merged, whole, check_dtype=False)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["config"]["replicates"] == [0, 1, 2, 3]
    assert manifest["n_rows"] == len(whole)


def test_rerunning_the_same_replicates_replaces_them(tmp_path):
    first = run_game("hedge", "bernoulli", replicates=2, **GAME)
    write_run(first, tmp_path)
    write_run(run_game("hedge", "bernoulli", replicates=2, **GAME), tmp_path)
    again = pd.read_parquet(tmp_path / "results.parquet")
    pd.testing.assert_frame_equal(again, first.rows, check_dtype=False)


def test_another_experiment_is_refused(tmp_path):
    write_run(run_game("hedge", "bernoulli", replicates=2, **GAME), tmp_path)
    with pytest.raises(ConfigError, match="already holds a different experiment"):
        write_run(run_game("ftl", "bernoulli", replicates=2, **GAME), tmp_path)


def test_a_results_file_without_a_manifest_is_not_ours(tmp_path):
    (tmp_path / "results.parquet").write_bytes(b"someone else's")
    with pytest.raises(ConfigError, match="without a manifest"):
        write_run(run_game("hedge", "bernoulli", replicates=1, **GAME), tmp_path)
    assert (tmp_path / "results.parquet").read_bytes() == b"someone else's"


def test_an_unreadable_manifest_is_named(tmp_path):
    (tmp_path / "manifest.json").write_text("{ not json")
    with pytest.raises(ConfigError, match="is not a readable manifest"):
        write_run(run_game("hedge", "bernoulli", replicates=1, **GAME), tmp_path)
