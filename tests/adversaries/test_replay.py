"""Replay: a loss array from a file, the same for every replicate or one slice per replicate."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from arena import play
from arena.adversaries.replay import Replay, load_loss_array
from arena.errors import ConfigError
from arena.spec import GameSpec
from tests.helpers import rngs
from tests.helpers.experts import assert_split_invariant


def test_npy_csv_and_parquet_files_load_the_same_matrix(tmp_path):
    losses = np.random.default_rng(0).random((7, 3))
    np.save(tmp_path / "l.npy", losses)
    np.savetxt(tmp_path / "l.csv", losses, delimiter=",")
    pd.DataFrame(losses, columns=["a", "b", "c"]).to_parquet(tmp_path / "l.parquet")
    for name in ("l.npy", "l.csv", "l.parquet"):
        np.testing.assert_allclose(load_loss_array(tmp_path / name), losses, rtol=0, atol=1e-15)


def test_pickled_object_arrays_are_refused(tmp_path):
    path = tmp_path / "objects.npy"
    np.save(path, np.array([[{"x": 1}, None]], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match="cannot read a numeric loss array"):
        load_loss_array(path)


def test_every_replicate_replays_the_matrix_and_blocks_split_freely(tmp_path):
    losses = np.random.default_rng(1).random((50, 4))
    np.save(tmp_path / "l.npy", losses)
    spec = GameSpec("experts", 4, 50, n_replicates=3)
    got = assert_split_invariant(Replay(path=str(tmp_path / "l.npy")), spec)
    for r in range(3):
        np.testing.assert_array_equal(got[r], losses)


def test_an_r_by_t_by_n_file_gives_each_global_replicate_its_slice(tmp_path):
    losses = np.random.default_rng(2).random((4, 30, 2))
    np.save(tmp_path / "l.npy", losses)
    adv = Replay(path=str(tmp_path / "l.npy"))
    adv.reset(GameSpec("experts", 2, 30, n_replicates=2, replicate_ids=(3, 1)), rngs(0, 2))
    np.testing.assert_array_equal(adv.losses_block(1, 30), losses[[3, 1]])


def test_ftl_on_a_replayed_killer_sequence_pays_its_known_regret(tmp_path):
    t = np.arange(1, 101)
    losses = np.stack([np.where(t % 2 == 0, 0.0, 1.0), np.where(t % 2 == 0, 1.0, 0.0)], axis=1)
    losses[0] = (0.5, 0.0)
    np.save(tmp_path / "killer.npy", losses)
    df = play("ftl", Replay(path=str(tmp_path / "killer.npy")), horizon=100, metrics=["regret"])
    assert float(df.value.iloc[-1]) == pytest.approx(100 / 2 - 0.25)


@pytest.mark.parametrize(
    ("array", "kwargs", "fragment"),
    [
        (np.zeros((5, 2)), {"horizon": 6}, "the file has T = 5 rounds"),
        (np.full((5, 2), 2.0), {"horizon": 5}, "entry 2.0 at round 1, expert 0 is outside [0, 1]"),
        (np.array([[0.0, np.nan]] * 5), {"horizon": 5}, "is not finite"),
        (np.zeros((5, 2)), {"horizon": 5, "n_actions": 3}, "the file has N = 2 experts"),
        (np.zeros((2, 5, 2)), {"horizon": 5, "replicates": 3}, "holds 2 replicates"),
    ],
)
def test_bad_files_are_refused_before_round_one(tmp_path, array, kwargs, fragment):
    np.save(tmp_path / "bad.npy", array)
    with pytest.raises(ConfigError, match="adversary replay") as info:
        play("hedge", Replay(path=str(tmp_path / "bad.npy")), metrics=["regret"], **kwargs)
    assert fragment in str(info.value)


def test_a_declared_loss_range_is_enforced_and_used(tmp_path):
    np.save(tmp_path / "wide.npy", np.full((4, 2), -1.0))
    df = play(
        "hedge",
        Replay(path=str(tmp_path / "wide.npy"), loss_range=[-1.0, 2.0]),
        horizon=4,
        metrics=["loss"],
    )
    assert float(df.value.iloc[-1]) == pytest.approx(-4.0)


def test_missing_files_and_unknown_formats_name_the_path(tmp_path):
    with pytest.raises(ConfigError, match="no such file"):
        play("hedge", Replay(path=str(tmp_path / "none.npy")), horizon=3)
    (tmp_path / "l.txt").write_text("0 1")
    with pytest.raises(ConfigError, match="unsupported format"):
        play("hedge", Replay(path=str(tmp_path / "l.txt")), horizon=3)


@pytest.mark.parametrize(
    ("array", "dtype_word"),
    [
        (np.array([[0.5 + 1j, 0.0]] * 3), "complex"),
        (np.array([["a", "b"]] * 3), "<U1"),
        (np.array([[True, False]] * 3), "bool"),
    ],
)
def test_arrays_of_complex_strings_or_booleans_are_refused(tmp_path, array, dtype_word):
    np.save(tmp_path / "odd.npy", array)
    with pytest.raises(ValueError, match="a loss array must hold real numbers") as info:
        load_loss_array(tmp_path / "odd.npy")
    assert dtype_word in str(info.value)


def test_the_file_contents_are_part_of_the_experiment_identity(tmp_path):
    from arena.game import prepare_game

    path = tmp_path / "l.npy"
    np.save(path, np.zeros((20, 2)))
    kw = dict(horizon=20, metrics=["regret"])
    first = prepare_game("hedge", Replay(path=str(path)), **kw).config
    np.save(path, np.ones((20, 2)))  # same parameters, edited file
    second = prepare_game("hedge", Replay(path=str(path)), **kw).config
    assert first["adversary_params"] == second["adversary_params"]
    assert first["data"] != second["data"]
    assert first["run_id"] != second["run_id"] and first["cell"] != second["cell"]
