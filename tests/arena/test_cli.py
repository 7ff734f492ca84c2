"""End-to-end tests of ``arena``: exact schema, manifest, clear errors, no partial output.

The first test (and one of the two runs of the seed test) runs the command in a subprocess, as a
user would; the others call its entry point in-process
(:func:`tests.helpers.cli.arena_in_process`), since they check what a command prints and writes,
not how a process starts or exits (exit codes and signals of the real command:
test_hardening_exits.py; the installed script: ``make test-wheel``).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from arena.results import ARROW_SCHEMA, SCHEMA
from tests.helpers.cli import arena, arena_in_process


def test_run_writes_exact_schema_and_manifest(tmp_path):
    out = tmp_path / "run"
    res = arena(
        "run",
        "player=hedge",
        "adversary=fair_coin",
        "n_actions=4",
        "horizon=200",
        "replicates=3",
        "seed=7",
        f"hydra.run.dir={out}",
        "metrics.shifting_regret.k=[0,1,3]",
        "metrics.sa_regret.tau=[5,20]",
        "metrics.quantile_regret.eps=[0.2]",
        "~metrics.entropy",
        "trace=true",
        cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr
    assert "regret" in res.stdout and "95% CI" in res.stdout
    schema = pq.read_schema(out / "results.parquet")
    assert schema.names == SCHEMA
    assert [f.type for f in schema] == [f.type for f in ARROW_SCHEMA]
    df = pq.read_table(out / "results.parquet").to_pandas()
    assert set(df.metric) >= {"regret", "shifting_regret", "sa_regret", "quantile_regret"}
    assert "entropy" not in set(df.metric)
    assert sorted(df[df.metric == "shifting_regret"].param.unique()) == [0.0, 1.0, 3.0]
    assert sorted(df[df.metric == "sa_regret"].param.unique()) == [5.0, 20.0]
    assert df[df.metric == "quantile_regret"].param.unique().tolist() == [0.2]
    assert df.replicate.nunique() == 3 and df.t.max() == 200
    # k = 0 is the ordinary regret, row for row
    last = df[df.t == 200]
    k0 = last[(last.metric == "shifting_regret") & (last.param == 0)].value.to_numpy()
    np.testing.assert_allclose(k0, last[last.metric == "regret"].value.to_numpy(), atol=1e-12)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["run_id"] == df.run_id.iloc[0]
    assert manifest["config"]["seed"] == 7 and "numpy" in manifest["versions"]
    assert "git_revision" in manifest
    trace = pq.read_table(out / "trace.parquet").to_pandas()
    assert len(trace) == 3 * 200 and len(trace.probs.iloc[0]) == 4


def test_same_seed_identical_results(tmp_path):
    """The same seed gives the same rows in another process: one run in a subprocess, the
    other in this process (hash randomization and import order differ between the two)."""
    frames = []
    for name, command in (("a", arena), ("b", arena_in_process)):
        res = command(
            "run",
            "adversary=bernoulli",
            "horizon=150",
            "replicates=2",
            "seed=3",
            f"hydra.run.dir={tmp_path / name}",
            cwd=tmp_path,
        )
        assert res.returncode == 0, res.stderr
        frames.append(pq.read_table(tmp_path / name / "results.parquet").to_pandas())
    assert frames[0].equals(frames[1])


def test_list_shows_components_and_parameters(tmp_path):
    res = arena_in_process("list", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    for name in (
        "hedge",
        "ftl",
        "bernoulli",
        "fair_coin",
        "ftl_killer",
        "shifting_experts",
        "greedy",
        "replay",
        "regret",
        "quantile_regret",
        "sa_regret",
    ):
        assert f"  {name} " in res.stdout
    assert "eta='tuned'" in res.stdout and "eps=(0.01, 0.1, 0.25)" in res.stdout


def test_list_weak_learners_by_task(capsys):
    from arena.apps.cli import main

    assert main(["list", "weak_learners"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("weak_learners\n")
    # grouped by the tasks each learner learns: the oracle reads features (classification only)
    assert " [classification, regression]\n" in out and " [classification]\n" in out
    assert out.index("oracle") < out.index(" [classification, regression]")
    for name, params in [
        ("linear", "(step='adagrad', loss='logistic', rate=0.5)"),
        ("stump", "(n_thresholds=16, rate=0.1)"),
        ("neural", "(hidden=10, rate=0.1)"),
    ]:
        assert f"  {name:<18} {params}" in out
    assert "players" not in out  # only the kind asked for


def _bad_replay(tmp_path: Path, array) -> str:
    path = tmp_path / "bad.npy"
    np.save(path, array)
    return str(path)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["player=hedg"], "did you mean 'hedge'"),
        (["adversary=fair_coins"], "did you mean 'fair_coin'"),
        (["player.eta=-0.1"], "player hedge: parameter 'eta'"),
        (["horizon=0"], "parameter 'horizon'"),
        (["horizon=-3"], "parameter 'horizon'"),
        (["replicates=0"], "parameter 'replicates'"),
        (["metrics.quantile_regret.eps=[1.5]"], "parameter 'eps'"),
        (["metrics.shifting_regret.k=[-1]"], "parameter 'k'"),
    ],
)
def test_bad_input_one_clear_message_and_no_output(tmp_path, args, needle):
    out = tmp_path / "run"
    res = arena_in_process("run", "horizon=50", *args, f"hydra.run.dir={out}", cwd=tmp_path)
    assert res.returncode != 0
    assert needle in res.stderr, res.stderr
    assert "Traceback" not in res.stderr
    assert res.stderr.strip().count("\n") == 0, res.stderr  # one line
    assert not (out / "results.parquet").exists()
    assert not out.exists() or not any(p.name != ".hydra" for p in out.iterdir())


@pytest.mark.parametrize(
    ("array", "needle"),
    [
        (np.zeros((10,)), "expected shape T×N"),
        (np.full((20, 3), 0.5), "the file has T = 20 rounds"),
        (np.full((60, 3), 1.5), "outside [0, 1]"),
        (np.where(np.eye(60, 3) > 0, np.nan, 0.5), "not finite"),
    ],
)
def test_replay_bad_files(tmp_path, array, needle):
    out = tmp_path / "run"
    path = _bad_replay(tmp_path, array)
    res = arena_in_process(
        "run",
        "adversary=replay",
        f"adversary.path={path}",
        "horizon=50",
        f"hydra.run.dir={out}",
        cwd=tmp_path,
    )
    assert res.returncode != 0
    assert needle in res.stderr, res.stderr
    assert "adversary replay" in res.stderr
    assert not (out / "results.parquet").exists()


def test_replay_n_actions_mismatch(tmp_path):
    path = _bad_replay(tmp_path, np.full((60, 3), 0.5))
    res = arena_in_process(
        "run",
        "adversary=replay",
        f"adversary.path={path}",
        "horizon=50",
        "n_actions=4",
        f"hydra.run.dir={tmp_path / 'run'}",
        cwd=tmp_path,
    )
    assert res.returncode != 0 and "n_actions=3" in res.stderr


def test_different_experiment_in_same_directory_refused(tmp_path):
    out = tmp_path / "run"
    first = arena_in_process("run", "horizon=40", "seed=1", f"hydra.run.dir={out}", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    before = (out / "results.parquet").read_bytes()
    again = arena_in_process("run", "horizon=40", "seed=1", f"hydra.run.dir={out}", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    other = arena_in_process("run", "horizon=40", "seed=2", f"hydra.run.dir={out}", cwd=tmp_path)
    assert other.returncode != 0 and "different experiment" in other.stderr
    assert (out / "results.parquet").read_bytes() == before


def test_demo_runs_and_prints_where_results_are(tmp_path):
    res = arena_in_process(
        "demo",
        "--results",
        str(tmp_path / "t"),
        "--report",
        str(tmp_path / "r"),
        "--horizon",
        "200",
        "--replicates",
        "4",
        "--executor",
        "serial",
        cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr
    assert "report:" in res.stdout and "results:" in res.stdout
    assert (tmp_path / "r" / "index.html").is_file() and (tmp_path / "r" / "report.md").is_file()
    assert len(list((tmp_path / "t" / "parts").glob("results-*.parquet"))) == 15


def test_weak_learner_group_sets_a_boosters_weak_learner(tmp_path):
    """``weak_learner=NAME weak_learner.param=…`` is the booster's ``weak_learner`` and
    ``weak_learner_params``; a player that boosts nothing is refused, touching no file."""
    out = tmp_path / "run"
    res = arena_in_process(
        "run",
        "player=online_bbm",
        "player.n_learners=3",
        "adversary=dataset_stream",
        "weak_learner=linear",
        "weak_learner.rate=0.25",
        "horizon=40",
        "replicates=1",
        f"hydra.run.dir={out}",
        "metrics=boosting_protocol",
        cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr
    params = json.loads((out / "manifest.json").read_text())["config"]["player_params"]
    assert params["weak_learner"] == "linear"
    assert params["weak_learner_params"] == {"step": "adagrad", "loss": "logistic", "rate": 0.25}
    bad = tmp_path / "bad"
    res = arena_in_process(
        "run", "player=hedge", "weak_learner=stump", f"hydra.run.dir={bad}", cwd=tmp_path
    )
    assert res.returncode == 2 and "takes no weak learner" in res.stderr
    assert not bad.exists()
