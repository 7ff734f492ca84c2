"""Issue 14 (hardening): bad configurations are refused in one line, before anything is written.

Each bad value of ``arena tournament`` and ``arena run`` must exit non-zero with one line that
names the key, leave the output folder unclaimed, and let the corrected command succeed in the
same folder. The commands run in-process (:func:`tests.helpers.cli.arena_in_process`, the console
script's entry point), since what is checked is what they print and write; one bad value of each
command also runs as a real subprocess, which must refuse with the same line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.apps.tournament import Tournament, TournamentConfig
from arena.errors import ArenaError, ConfigError
from arena.game import MAX_SEED, prepare_game
from arena.validation import checkpoint_grid
from tests.helpers.cli import arena, arena_in_process

TINY_TOURNAMENT = (
    "tournament=demo",
    "tournament.players=[hedge]",
    "tournament.adversaries=[fair_coin]",
    "tournament.horizon=100",
    "tournament.replicates=2",
    "tournament.n_actions=[3]",
    "executor=serial",
    "progress=false",
)
TINY_RUN = ("adversary=fair_coin", "n_actions=3", "horizon=100", "replicates=2", "progress=false")


def assert_one_line_error(res, *needles: str) -> None:
    """Non-zero exit, no traceback, one line on stderr that contains every needle."""
    assert res.returncode != 0, res.stdout
    assert "Traceback" not in res.stderr + res.stdout
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("arena: error: ")
    for needle in needles:
        assert needle in lines[0], lines[0]


# ----------------------------------------------------------------------------------------------
# arena tournament


@pytest.mark.parametrize(
    ("override", "needles"),
    [
        ("tournament.horizon=-1", ("'horizon'", "≥ 1")),
        ("tournament.players=[hedgee]", ("hedgee", "did you mean 'hedge'")),
        ("tournament.adversaries=[fair_coinn]", ("fair_coinn", "fair_coin")),
        ("tournament.replicates=0", ("'replicates'", "≥ 1")),
        ("tournament.seed=-5", ("'seed'", "≥ 0")),
        ("tournament.n_actions=[0]", ("'n_actions'", "≥ 1")),
        ("tournament.per_decade=0", ("'per_decade'", "≥ 1")),
        ("tournament.per_decade=2.5", ("'per_decade'", "integer")),
        ("tournament.checkpoints=all", ("optional key 'checkpoints'", "+tournament.checkpoints")),
        ("+tournament.checkpoints=[0]", ("'checkpoints'", "must be integers in [1, ")),
        ("tournament.metrics.sa_regret.tau=[-1]", ("sa_regret", "'tau'")),
        ("+tournament.metrics.no_such_metric={}", ("no_such_metric", "available")),
        (
            "tournament.adversaries=[{name:bernoulli,params:{gap:0.9}}]",
            ("bernoulli", "'gap'", "[0, 0.5]"),
        ),
        ("progress=maybe", ("'progress'", "true, false or auto")),
    ],
)
def test_bad_tournament_is_refused_before_the_folder_is_claimed(tmp_path, override, needles):
    out = tmp_path / "t"
    res = arena_in_process("tournament", *TINY_TOURNAMENT, f"out={out}", override, cwd=tmp_path)
    assert_one_line_error(res, *needles)
    assert not out.exists()
    # the corrected command runs in the same folder (it was not claimed)
    fixed = arena_in_process("tournament", *TINY_TOURNAMENT, f"out={out}", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stderr
    assert "1 cell(s) run" in fixed.stdout and "0 failed" in fixed.stdout
    assert len(list((out / "parts").glob("manifest-*.json"))) == 1


def test_bad_cell_among_good_ones_is_named_and_nothing_runs(tmp_path):
    config = TournamentConfig.from_mapping(
        {
            "name": "mixed",
            "players": ["hedge", {"name": "hedge", "grid": {"eta": [0.1, -1.0]}}],
            "adversaries": ["fair_coin"],
            "n_actions": [3],
            "horizon": 50,
            "replicates": 1,
            "metrics": {"regret": {}},
        }
    )
    with pytest.raises(ArenaError, match=r"cell hedge\(eta=-1.0\) vs fair_coin N=3: .*'eta'"):
        Tournament(config, tmp_path / "t", executor="serial").run()
    assert not (tmp_path / "t").exists()


def test_bad_player_entry_shapes_are_config_errors():
    base = {"name": "x", "adversaries": ["fair_coin"], "horizon": 10, "replicates": 1}
    with pytest.raises(ConfigError, match="params must be a mapping"):
        TournamentConfig.from_mapping({**base, "players": [{"name": "hedge", "params": 3}]}).cells()
    with pytest.raises(ConfigError, match="non-empty list"):
        TournamentConfig.from_mapping({**base, "players": []}).validate()


def test_refused_config_keeps_an_existing_tournament_untouched(tmp_path):
    out = tmp_path / "t"
    assert (
        arena_in_process("tournament", *TINY_TOURNAMENT, f"out={out}", cwd=tmp_path).returncode == 0
    )
    before = (out / "manifest.json").read_text()
    res = arena_in_process(
        "tournament", *TINY_TOURNAMENT, f"out={out}", "tournament.horizon=0", cwd=tmp_path
    )
    assert_one_line_error(res, "'horizon'")
    assert (out / "manifest.json").read_text() == before
    assert not (out / "failures.parquet").exists()


# ----------------------------------------------------------------------------------------------
# arena run


@pytest.mark.parametrize(
    ("override", "needles"),
    [
        ("per_decade=0", ("'per_decade'", "≥ 1")),
        ("per_decade=-3", ("'per_decade'", "≥ 1")),
        ("per_decade=abc", ("'per_decade'", "integer")),
        ("per_decade=2.5", ("'per_decade'", "integer")),
        ("per_decade=1000000", ("'per_decade'", "≤ 10000")),
        ("seed=18446744073709551616", ("'seed'", str(MAX_SEED))),
        ("seed=9223372036854775808", ("'seed'", str(MAX_SEED))),
        ("trace=maybe", ("'trace'", "true or false")),
        ("progress=maybe", ("'progress'", "true, false or auto")),
        ("replicates=abc", ("'replicates'", "integer")),
    ],
)
def test_bad_run_parameter_is_one_line_and_writes_nothing(tmp_path, override, needles):
    out = tmp_path / "run"
    res = arena_in_process("run", *TINY_RUN, f"hydra.run.dir={out}", override, cwd=tmp_path)
    assert_one_line_error(res, *needles)
    assert not out.exists()
    fixed = arena_in_process("run", *TINY_RUN, f"hydra.run.dir={out}", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stderr
    assert (out / "results.parquet").is_file()


@pytest.mark.parametrize(
    ("args", "folder"),
    [
        (("run", *TINY_RUN, "per_decade=0"), "hydra.run.dir"),
        (("tournament", *TINY_TOURNAMENT, "tournament.horizon=-1"), "out"),
    ],
)
def test_a_subprocess_refuses_with_the_same_line_as_in_process(tmp_path, args, folder):
    """The tests above call the entry point in-process; the command in its own process must
    print the same one line, exit with the same code and leave the folder unclaimed too."""
    here = arena_in_process(*args, f"{folder}={tmp_path / 'a'}", cwd=tmp_path)
    there = arena(*args, f"{folder}={tmp_path / 'b'}", cwd=tmp_path)
    assert_one_line_error(there)
    assert there.returncode == here.returncode
    assert there.stderr.replace(str(tmp_path / "b"), "X") == here.stderr.replace(
        str(tmp_path / "a"), "X"
    )
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_largest_seed_is_played_and_written(tmp_path):
    out = tmp_path / "run"
    res = arena_in_process(
        "run", *TINY_RUN, f"hydra.run.dir={out}", f"seed={MAX_SEED}", cwd=tmp_path
    )
    assert res.returncode == 0, res.stderr
    assert json.loads((out / "manifest.json").read_text())["config"]["seed"] == MAX_SEED


# ----------------------------------------------------------------------------------------------
# the one place each game parameter is validated


@pytest.mark.parametrize("per_decade", [0, -1, 2.5, "10", None, True])
def test_checkpoint_grid_refuses_bad_per_decade(per_decade):
    with pytest.raises(ConfigError, match="per_decade"):
        checkpoint_grid(100, None, per_decade)


def test_checkpoint_grid_accepts_integral_per_decade_and_checks_checkpoints():
    assert checkpoint_grid(100, None, 4.0).tolist() == [1, 2, 3, 6, 10, 18, 32, 56, 100]
    assert checkpoint_grid(100, [5, 50], 10).tolist() == [5, 50, 100]
    with pytest.raises(ConfigError, match="checkpoints"):
        checkpoint_grid(100, ["a"], 10)


@pytest.mark.parametrize(
    ("kwargs", "key"),
    [
        ({"seed": MAX_SEED + 1}, "seed"),
        ({"seed": 2**64}, "seed"),
        ({"replicates": [0, -1]}, "replicates"),
        ({"replicates": "3"}, "replicates"),
        ({"per_decade": 0}, "per_decade"),
    ],
)
def test_prepare_game_refuses_before_any_round(kwargs, key):
    with pytest.raises(ConfigError) as info:
        prepare_game("hedge", "fair_coin", n_actions=2, horizon=10, **kwargs)
    assert info.value.parameter == key


def test_demo_tournament_validates(tmp_path: Path):
    from omegaconf import OmegaConf

    from arena.apps.hydra_support import config_dir

    demo = OmegaConf.to_container(OmegaConf.load(config_dir() / "tournament" / "demo.yaml"))
    TournamentConfig.from_mapping(demo).validate()


def test_an_output_folder_that_cannot_be_written_is_refused_before_hydra(tmp_path, monkeypatch):
    """Run as root, the test suite cannot make a folder unwritable: the permission check is
    exercised through ``os.access``, which is what the command line consults."""
    import os

    from arena.apps.hydra_support import _check_output_folder

    real_access = os.access
    locked = tmp_path / "locked"
    locked.mkdir()
    monkeypatch.setattr(
        os, "access", lambda p, mode: False if Path(p) == locked else real_access(p, mode)
    )
    with pytest.raises(ConfigError, match="is not writable"):
        _check_output_folder("run", "hydra.run.dir", locked / "deep" / "run")
    assert not (locked / "deep").exists()
    _check_output_folder("run", "hydra.run.dir", tmp_path / "free" / "run")  # no error
