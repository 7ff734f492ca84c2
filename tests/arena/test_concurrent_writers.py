"""Concurrent and killed writers lose nothing (issue 14, classes 2 and 5).

One writer per output folder at a time: a second ``arena run`` or tournament into a folder in use
is refused in one line naming the holder; temporary files name their writer, so a resumed
tournament removes only the leftovers of writers that are gone.
"""

from __future__ import annotations

import os
import socket

import pytest

from arena.apps.tournament import Tournament, TournamentConfig
from arena.errors import ConfigError
from arena.results import folder_lock, temporary_prefix
from tests.helpers.cli import arena

SMALL = {
    "name": "small",
    "players": ["hedge"],
    "adversaries": ["fair_coin"],
    "n_actions": [3],
    "horizon": 50,
    "replicates": 2,
    "seed": 1,
    "metrics": {"regret": {}},
}


def test_a_run_into_a_folder_in_use_is_refused_naming_the_holder(tmp_path):
    out = tmp_path / "run"
    args = ("run", "player=hedge", "adversary=fair_coin", "horizon=50", f"hydra.run.dir={out}")
    with folder_lock(out, "a test holding the folder"):
        refused = arena(*args, cwd=tmp_path)
    assert refused.returncode != 0
    assert "Traceback" not in refused.stderr
    assert "is in use by a test holding the folder (pid" in refused.stderr
    assert not (out / "results.parquet").exists()
    done = arena(*args, cwd=tmp_path)  # released: the same command now runs
    assert done.returncode == 0, done.stderr
    assert (out / "results.parquet").is_file()


def test_a_second_tournament_into_a_folder_in_use_is_refused(tmp_path):
    config = TournamentConfig.from_mapping(SMALL)
    with folder_lock(tmp_path / "t", "the first tournament"):
        with pytest.raises(ConfigError, match="is in use by the first tournament"):
            Tournament(config, tmp_path / "t", executor="serial").run()
    result = Tournament(config, tmp_path / "t", executor="serial").run()
    assert len(result.finished) == 1


def test_a_resume_removes_only_temporaries_whose_writer_is_gone(tmp_path):
    config = TournamentConfig.from_mapping(SMALL)
    Tournament(config, tmp_path, executor="serial").run()
    parts = tmp_path / "parts"
    live = parts / f"{temporary_prefix(parts / 'results-x.parquet')}live.tmp"  # this process
    dead = parts / f".results-y.parquet~{socket.gethostname()}~{2**22 + 12345}~dead.tmp"
    elsewhere = parts / ".results-z.parquet~another-host~1~busy.tmp"
    for p in (live, dead, elsewhere):
        p.write_bytes(b"partial")
    assert not _alive(2**22 + 12345)
    Tournament(config, tmp_path, executor="serial").run()
    assert live.exists() and elsewhere.exists()
    assert not dead.exists()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
