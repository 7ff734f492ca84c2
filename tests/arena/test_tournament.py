"""Tournaments: cross product, resume, SIGKILL safety, executor equivalence, failing cells."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from arena.apps.tournament import Tournament, TournamentConfig
from arena.errors import ArenaError
from arena.results import SCHEMA

SMALL = {
    "name": "small",
    "players": ["hedge", {"name": "hedge", "grid": {"eta": [0.1, "anytime"]}}, "ftl"],
    "adversaries": ["fair_coin", {"name": "bernoulli", "params": {"gap": 0.2}}, "greedy"],
    "n_actions": [3],
    "horizon": 120,
    "replicates": 4,
    "seed": 9,
    "metrics": {"regret": {}, "shifting_regret": {"k": [1, 2]}, "sa_regret": {"tau": [10]}},
}


def load_parts(directory: Path) -> pd.DataFrame:
    parts = sorted((directory / "parts").glob("results-*.parquet"))
    frame = pd.concat([pd.read_parquet(p) for p in parts], ignore_index=True)
    return frame.sort_values(["cell", "replicate", "t", "metric", "param"]).reset_index(drop=True)


def test_cross_product_with_grids_and_dedup():
    cells = TournamentConfig.from_mapping(SMALL).cells()
    # players: hedge, hedge(eta=0.1), hedge(eta=anytime), ftl  ×  3 adversaries  ×  1 N
    assert len(cells) == 4 * 3
    assert len({c.id for c in cells}) == len(cells)
    doubled = {**SMALL, "players": ["hedge", "hedge"]}
    assert len(TournamentConfig.from_mapping(doubled).cells()) == 3


def test_unknown_key_and_bad_executor_are_refused(tmp_path):
    with pytest.raises(ArenaError, match="unknown key"):
        TournamentConfig.from_mapping({**SMALL, "horizn": 5})
    with pytest.raises(ArenaError, match="executor"):
        Tournament(TournamentConfig.from_mapping(SMALL), tmp_path, executor="threads")


def test_resume_skips_finished_cells_and_refuses_other_configs(tmp_path):
    config = TournamentConfig.from_mapping(SMALL)
    first = Tournament(config, tmp_path / "t", executor="serial").run()
    assert len(first.finished) == 12 and not first.failed
    stamp = {p: p.stat().st_mtime_ns for p in (tmp_path / "t" / "parts").iterdir()}
    again = Tournament(config, tmp_path / "t", executor="serial").run()
    assert again.finished == [] and len(again.skipped) == 12
    assert stamp == {p: p.stat().st_mtime_ns for p in (tmp_path / "t" / "parts").iterdir()}
    other = TournamentConfig.from_mapping({**SMALL, "horizon": 121})
    with pytest.raises(ArenaError, match=r"different tournament.*horizon"):
        Tournament(other, tmp_path / "t", executor="serial").run()
    rows = load_parts(tmp_path / "t")
    assert list(pq.read_schema(next((tmp_path / "t" / "parts").glob("*.parquet"))).names) == SCHEMA
    assert rows.cell.nunique() == 12 and rows.replicate.nunique() == 4


def test_checkpoints_key_logs_the_rounds_it_names_and_keeps_old_digests(tmp_path):
    small = {**SMALL, "players": ["hedge"], "adversaries": ["fair_coin"], "horizon": 12}
    # a tournament written before the key existed has the same digest as one with it unset
    assert "checkpoints" not in TournamentConfig.from_mapping(small).as_dict()
    for checkpoints, rounds in (("all", list(range(1, 13))), ([3, 7], [3, 7, 12])):
        config = TournamentConfig.from_mapping({**small, "checkpoints": checkpoints})
        Tournament(config, tmp_path / str(checkpoints), executor="serial").run()
        assert sorted(load_parts(tmp_path / str(checkpoints)).t.unique()) == rounds
    bad = TournamentConfig.from_mapping({**small, "checkpoints": [0, 7]})
    with pytest.raises(ArenaError, match=r"'checkpoints'.*\[1, 12\]"):
        bad.validate()


def test_executors_give_identical_rows(tmp_path):
    config = TournamentConfig.from_mapping({**SMALL, "players": ["hedge", "ftl"]})
    frames = {}
    for executor, n_jobs in (("serial", None), ("local", 2), ("dask", 2)):
        Tournament(config, tmp_path / executor, executor=executor, n_jobs=n_jobs).run()
        frames[executor] = load_parts(tmp_path / executor)
    pd.testing.assert_frame_equal(frames["serial"], frames["local"], check_exact=True)
    pd.testing.assert_frame_equal(frames["serial"], frames["dask"], check_exact=True)
    # each cell's manifest says where it ran (issue 35): the executor, and under Dask the worker
    for executor in ("serial", "local", "dask"):
        for part in sorted((tmp_path / executor / "parts").glob("manifest-*.json")):
            ran = json.loads(part.read_text())["executor"]
            assert ran["kind"] == executor and ran["host"] and ran["pid"] > 0
            assert (ran["worker"] or "").startswith("tcp://") == (executor == "dask"), ran
            assert json.loads(part.read_text())["arena_version"]


def test_failing_cell_is_recorded_and_the_rest_goes_on(tmp_path, monkeypatch):
    from arena.adversaries.stochastic import Bernoulli
    from arena.errors import GameError

    def broken(self, t0, n):  # an error while playing, not a configuration error
        raise GameError("adversary bernoulli", "gap exploded", round=t0)

    # serial executor: the cells run in this process, so the patch reaches them
    monkeypatch.setattr(Bernoulli, "losses_block", broken)
    config = TournamentConfig.from_mapping(
        {
            **SMALL,
            "players": ["hedge"],
            "adversaries": ["fair_coin", {"name": "bernoulli", "params": {"gap": 0.2}}],
        }
    )
    result = Tournament(config, tmp_path / "t", executor="serial").run()
    assert len(result.finished) == 1 and len(result.failed) == 1
    failures = pd.read_parquet(tmp_path / "t" / "failures.parquet")
    assert failures.adversary.tolist() == ["bernoulli"]
    assert "gap" in failures.error.iloc[0] and "Traceback" in failures.traceback.iloc[0]
    # re-running retries the failed cell only, and keeps recording it
    again = Tournament(config, tmp_path / "t", executor="serial").run()
    assert again.finished == [] and again.failed == result.failed


def test_sigkill_mid_run_loses_only_cells_in_flight(tmp_path):
    out = tmp_path / "killed"
    config = {**SMALL, "horizon": 3000, "replicates": 16, "n_actions": [20]}
    script = (
        "import json, sys\n"
        "from arena.apps.tournament import Tournament, TournamentConfig\n"
        "cfg = TournamentConfig.from_mapping(json.loads(sys.argv[1]))\n"
        "Tournament(cfg, sys.argv[2], executor='serial').run()\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script, json.dumps(config), str(out)])
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if len(list((out / "parts").glob("manifest-*.json"))) >= 2:
            break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done_before = {
        p.stem.removeprefix("manifest-") for p in (out / "parts").glob("manifest-*.json")
    }
    assert 2 <= len(done_before) < 12
    # every part on disk is whole: each finished cell's Parquet reads back completely
    for cell in done_before:
        table = pq.read_table(out / "parts" / f"results-{cell}.parquet")
        assert table.num_rows > 0
    resumed = Tournament(TournamentConfig.from_mapping(config), out, executor="serial").run()
    assert set(resumed.skipped) == done_before
    assert len(resumed.finished) == 12 - len(done_before)
    assert not list((out / "parts").glob(".*.tmp"))
    # a resumed tournament equals an uninterrupted one
    Tournament(TournamentConfig.from_mapping(config), tmp_path / "clean", executor="serial").run()
    pd.testing.assert_frame_equal(load_parts(out), load_parts(tmp_path / "clean"))


def test_cli_tournament_and_multirun(tmp_path):
    cli = [sys.executable, "-m", "arena.apps.cli"]
    res = subprocess.run(
        [
            *cli,
            "tournament",
            "tournament=demo",
            f"out={tmp_path / 'demo'}",
            "tournament.horizon=100",
            "tournament.replicates=2",
            "executor=serial",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr
    assert "15 cell(s) run" in res.stdout
    assert len(list((tmp_path / "demo" / "parts").glob("results-*.parquet"))) == 15
    bad = subprocess.run(
        [*cli, "tournament", "tournament=dmeo"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert bad.returncode != 0 and "did you mean 'demo'" in bad.stderr
    multi = subprocess.run(
        [
            *cli,
            "run",
            "-m",
            "player=hedge,ftl",
            "adversary=fair_coin",
            "horizon=50",
            "replicates=2",
            "metrics=regret",
            f"hydra.sweep.dir={tmp_path / 'multi'}",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert multi.returncode == 0, multi.stderr
    from arena.results import load_results

    rows = load_results(tmp_path / "multi")
    assert set(rows.player) == {"hedge", "ftl"}


def _cmdline(process) -> str:
    """A process's command line, or "" for one that is exiting (a zombie has none to read)."""
    import psutil

    try:
        return " ".join(process.cmdline())
    except psutil.Error:
        return ""


def test_sigkill_of_the_coordinator_ends_its_workers(tmp_path):
    import psutil

    out = tmp_path / "orphans"
    config = {**SMALL, "horizon": 200_000, "replicates": 8, "n_actions": [50]}
    script = (
        "import json, sys\n"
        "from arena.apps.tournament import Tournament, TournamentConfig\n"
        "cfg = TournamentConfig.from_mapping(json.loads(sys.argv[1]))\n"
        "Tournament(cfg, sys.argv[2], executor='local', n_jobs=2).run()\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script, json.dumps(config), str(out)])
    coordinator = psutil.Process(proc.pid)
    deadline = time.monotonic() + 120
    workers: list = []
    while time.monotonic() < deadline and len(workers) < 2:
        # the pool's workers run multiprocessing's spawn entry point (its resource tracker not)
        workers = [p for p in coordinator.children() if "spawn_main" in _cmdline(p)]
        time.sleep(0.1)
    assert len(workers) == 2, "the pool never started"
    time.sleep(2.0)  # the workers are playing their first cells
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    _, alive = psutil.wait_procs(workers, timeout=15)
    assert not alive, f"workers outlived their coordinator: {[p.pid for p in alive]}"
