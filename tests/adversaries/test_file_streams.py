"""The example streams over a user's file: the same examples in every format play the same game,
sparse data stay sparse and are counted once, the data's identity is recorded, and every
example-stream protocol runs from ``play`` and from the command line."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp

from arena import play
from arena.adversaries._file_data import FILE_DEFAULTS
from arena.adversaries.boosting_oracle import BoostingOracle
from arena.adversaries.dataset_stream import DatasetStream
from arena.adversaries.multiclass_dataset_stream import MulticlassDatasetStream
from arena.data.files import save_examples, stored_bytes
from arena.errors import ConfigError
from arena.metrics.boosting import VoteTrainError
from arena.oco.losses import SparseRows, dense_features
from arena.players.ogb_span import OGBSpan
from arena.spec import GameSpec
from tests.helpers.cli import arena_in_process

FORMATS = ("d.svm", "d.svm.gz", "d.csv", "d.parquet", "d.npz", "d_sparse.npz")
LIGHT = {"loss": {}, "mistakes": {}}
"""The metrics these tests read (the default set solves hindsight problems: slow to compile)."""


@pytest.fixture(scope="module")
def examples():
    rng = np.random.default_rng(7)
    X = sp.random(120, 15, density=0.25, random_state=rng, format="csr")
    X.data = np.round(4 * X.data - 1, 4)
    w = rng.standard_normal(15)
    return X, np.where(X @ w > 0, 1.0, -1.0), np.round(X @ w, 6)


def write(folder, name, X, y):
    sparse = name.endswith((".svm", ".svm.gz", "_sparse.npz"))
    return str(save_examples(folder / name, X if sparse else X.toarray(), y))


def rows(df):
    return df.sort_values(["replicate", "t", "metric"]).value.to_numpy()


@pytest.mark.parametrize("standardize", [True, False])
def test_the_same_examples_in_every_format_play_the_same_game(tmp_path, examples, standardize):
    X, y, _ = examples
    games = []
    for name in FORMATS:
        adv = DatasetStream(
            "file", path=write(tmp_path, name, X, y), domain="ball", standardize=standardize
        )
        adv.reset(GameSpec("classification", 15, 50, dim=15), [np.random.default_rng(0)])
        block = adv.data_block(1, 50)
        if name in FORMATS[:2] + FORMATS[-2:]:  # a sparse and a dense file of each kind
            # ftrl reads dense rows only: a sparse file's rows are densified for it, bitwise
            df = play("ftrl", adv, horizon=50, replicates=2, seed=3, metrics=LIGHT)
        else:
            df = games[0][3:]
        played = (rows(df), df.cell.iloc[0]) if not isinstance(df, tuple) else df
        assert isinstance(block.x, SparseRows) == name.endswith(("svm", "gz", "_sparse.npz"))
        games.append((dense_features(block.x), block.y, adv.gradient_bound(), *played))
    first = games[0]
    for other in games[1:]:
        np.testing.assert_array_equal(other[0], first[0])
        np.testing.assert_array_equal(other[1], first[1])
        assert other[2] == first[2]
        np.testing.assert_array_equal(other[3], first[3])  # bitwise the same rows
    assert len({g[4] for g in games}) == 1  # the same examples: the same cell and seeds


@pytest.mark.parametrize("player", ["ogd", "perceptron", "adagrad", "passive_aggressive"])
def test_a_sparse_player_plays_a_sparse_file_as_the_same_file_dense(tmp_path, examples, player):
    """The sparse path adds a row's products in column order over its entries, the dense path
    over all d coordinates (BLAS for some players), so results agree to rounding: 1e-12
    relative over 60 rounds of values of order 10 is a few hundred ulps, far below any
    algorithmic difference (a different update changes the second decimal)."""
    X, y, _ = examples
    frames = []
    for name in ("d.svm", "d.csv"):
        path = write(tmp_path, name, X, y)
        domain = {"domain": "ball", "radius": 3.0} if player in ("ogd", "adagrad") else {}
        adv = DatasetStream("file", path=path, standardize=False, **domain)
        assert adv.sparse_features() == (name == "d.svm")
        frames.append(play(player, adv, horizon=60, replicates=2, seed=5, metrics=LIGHT))
    sparse, dense = frames
    assert sparse.cell.iloc[0] == dense.cell.iloc[0]  # the same examples: the same game
    np.testing.assert_allclose(rows(sparse), rows(dense), rtol=1e-12, atol=1e-12)


def test_a_sparse_file_streams_sparse_rows_and_a_sparse_test_split(tmp_path, examples):
    X, y, _ = examples
    adv = DatasetStream("file", path=write(tmp_path, "t.svm", X, y), test_fraction=0.25)
    adv.reset(GameSpec("classification", 15, 10, dim=15, n_replicates=2),
              [np.random.default_rng(r) for r in range(2)])  # fmt: skip
    block, test = adv.data_block(1, 7).x, adv.test_split().x
    assert isinstance(block, SparseRows) and block.shape == (2, 7, 15) and block.check() is None
    assert isinstance(test, SparseRows) and test.shape == (2, 30, 15) and test.check() is None
    assert block.nnz == int((block.densify() != 0).sum())  # only the entries: O(nnz)


def test_sparse_data_stay_sparse_and_are_shared_by_replicates_and_games(tmp_path, examples):
    X, y, _ = examples
    path = write(tmp_path, "s.svm", X, y)
    a, b = DatasetStream("file", path=path), DatasetStream("file", path=path)
    for adv, n_rep in ((a, 1), (b, 4)):
        adv.reset(GameSpec("classification", 15, 10, dim=15, n_replicates=n_rep),
                  [np.random.default_rng(r) for r in range(n_rep)])  # fmt: skip
    assert sp.issparse(a._X) and a._X is b._X  # one copy, whatever the replicates
    assert a.rows(np.array([[0, 5]])).shape == (1, 2, 15)


def test_the_memory_estimate_counts_the_data_once(tmp_path):
    rng = np.random.default_rng(0)
    X = sp.random(3000, 20000, density=0.002, random_state=rng, format="csr")
    path = write(tmp_path, "big.svm", X, rng.choice([-1.0, 1.0], 3000))
    adv = DatasetStream("file", path=path, standardize=False)
    data = stored_bytes(adv._data()[0]) + 2 * 8 * 3000  # the file's labels and the mapped ones

    def memory(n_rep):
        return adv.footprint(
            GameSpec("classification", 20000, 10, dim=20000, n_replicates=n_rep)
        ).memory

    widest = int(np.diff(X.indptr).max())

    def blocks(n_rep):  # two blocks of 16·R sparse rows: the widest row's entries, 16 B each
        return 2 * (16 * n_rep * widest * 16 + 8 * (16 * n_rep + 1))

    for n_rep in (1, 8):  # the data once, then per replicate a permutation and the sparse blocks
        assert memory(n_rep) == data + blocks(n_rep) + 8 * n_rep * 3000
    assert blocks(8) < 16 * 8 * 20000 * 8 / 50  # by entries, not R·n·d
    assert data < X.toarray().nbytes / 100  # held sparse: not n × d
    scaled = DatasetStream("file", path=path)  # standardized: the file's copy is kept too
    spec = GameSpec("classification", 20000, 10, dim=20000, n_replicates=1)
    copy = stored_bytes(scaled._data()[0])  # the scaled features beside the file's
    assert scaled.footprint(spec).memory == memory(1) + copy


def test_a_game_whose_data_do_not_fit_is_refused_naming_the_file(tmp_path, examples, monkeypatch):
    X, y, _ = examples
    path = write(tmp_path, "m.svm", X, y)
    import arena.resources as resources

    monkeypatch.setattr(resources, "available_memory", lambda: 2**13)
    with pytest.raises(ConfigError) as err:
        play("ogd", DatasetStream("file", path=path, domain="ball"), horizon=5, metrics=LIGHT)
    assert "parameter 'path'" in str(err.value) and "examples of file" in str(err.value)


def test_a_rescaled_file_stream_keeps_its_identity_and_provenance(tmp_path, examples):
    from arena.adversaries.rescaled import Rescaled

    X, y, _ = examples
    path = write(tmp_path, "d.svm", X, y)
    base = DatasetStream("file", path=path, domain="ball")
    adv = Rescaled("dataset_stream", {"dataset": "file", "path": path, "domain": "ball"})
    assert adv.data_identity() == base.data_identity()
    assert adv.data_provenance() == base.data_provenance()
    df = play("adagrad", adv, horizon=30, metrics=LIGHT)
    assert df.protocol.iloc[0] == "classification"


def test_the_data_identity_is_the_content_not_the_folder(tmp_path, examples):
    X, y, _ = examples
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    one, two = write(tmp_path / "a", "d.svm", X, y), write(tmp_path / "b", "d.svm", X, y)
    adv = DatasetStream("file", path=one)
    assert adv.data_identity()["dataset"].startswith("file: examples sha256 ")
    assert adv.data_identity()["dataset"].endswith(" (120 × 15)")
    assert (
        adv.data_provenance()["path"].startswith(f"{one} (")
        and "sha256" in adv.data_provenance()["path"]
    )
    first = play("ogd", DatasetStream("file", path=one, domain="ball"), horizon=20, metrics=LIGHT)
    again = play("ogd", DatasetStream("file", path=two, domain="ball"), horizon=20, metrics=LIGHT)
    assert first.cell.iloc[0] == again.cell.iloc[0]
    np.testing.assert_array_equal(rows(first), rows(again))
    save_examples(two, X[:-1], y[:-1])  # an edited file is another experiment
    edited = play("ogd", DatasetStream("file", path=two, domain="ball"), horizon=20, metrics=LIGHT)
    assert edited.cell.iloc[0] != first.cell.iloc[0]


@pytest.mark.parametrize(
    "cls", [DatasetStream, MulticlassDatasetStream, BoostingOracle], ids=lambda c: c.__name__
)
def test_the_bundled_streams_keep_their_keys(cls):
    adv = cls()
    assert not set(FILE_DEFAULTS) & set(adv.cell_params())
    if hasattr(adv, "stream_identity"):
        assert not set(FILE_DEFAULTS) & set(adv.stream_identity()[1])


def test_path_needs_dataset_file_and_a_bundled_set_refuses_a_path(tmp_path, examples):
    X, y, _ = examples
    path = write(tmp_path, "d.svm", X, y)
    with pytest.raises(ConfigError, match="parameter 'path': dataset=breast_cancer is bundled"):
        DatasetStream(path=path).resolve_dim(None)
    with pytest.raises(ConfigError, match="parameter 'path': dataset=file reads the file"):
        DatasetStream("file").resolve_dim(None)
    bad = tmp_path / "bad.svm"
    bad.write_text("1 1:1\n-1 0:2\n")
    with pytest.raises(ConfigError) as err:
        DatasetStream("file", path=str(bad)).resolve_dim(None)
    assert str(err.value) == (
        f"adversary dataset_stream: parameter 'path': {bad} line 2: feature index 0 "
        "(svmlight indices start at 1)"
    )


def test_every_example_stream_plays_a_file_through_play(tmp_path, examples):
    X, y, target = examples
    binary, regression = write(tmp_path, "b.svm", X, y), write(tmp_path, "r.svm", X, target)
    classes = np.digitize(target, [-0.5, 0.5]) + 1.0
    multi = write(tmp_path, "m.svm", X, classes)
    df = play("ogd", DatasetStream("file", path=binary, domain="ball"), horizon=60, metrics=LIGHT)
    assert df.protocol.iloc[0] == "classification" and "mistakes" in set(df.metric)
    df = play(
        "ogd",
        DatasetStream("file", path=regression, task="regression", domain="ball"),
        horizon=60,
        metrics=LIGHT,
    )
    assert df.protocol.iloc[0] == "regression" and "loss" in set(df.metric)
    multiclass = MulticlassDatasetStream("file", path=multi)
    df = play("multiclass_perceptron", multiclass, horizon=60, metrics=LIGHT)
    assert df.protocol.iloc[0] == "multiclass" and df.n_actions.iloc[0] == 3 * 15
    df = play("online_bbm", DatasetStream("file", path=binary), horizon=60)
    assert df.protocol.iloc[0] == "boosting"
    booster = OGBSpan(label_bound=10.0)
    df = play(booster, DatasetStream("file", path=regression, task="regression"), horizon=60)
    assert df.protocol.iloc[0] == "boosting"
    oracle = BoostingOracle("file", path=binary, test_fraction=0.25)
    df = play("normal_hedge_dt", oracle, horizon=20, metrics=[VoteTrainError()])
    assert df.n_actions.iloc[0] == 90 and df.value.iloc[-1] < 0.5


def test_every_example_stream_plays_a_file_from_the_command_line(tmp_path, examples):
    X, y, target = examples
    binary, regression = write(tmp_path, "b.svm", X, y), write(tmp_path, "r.svm.bz2", X, target)
    multi = write(tmp_path, "m.svm", X, np.digitize(target, [-0.5, 0.5]) + 1.0)
    runs = {
        "classification": (
            "player=ogd",
            f"adversary.path={binary}",
            "adversary.domain=ball",
            "metrics=boosting_protocol",  # loss and mistakes here: the others are skipped
        ),
        "regression": (
            "player=ogd",
            f"adversary.path={regression}",
            "adversary.task=regression",
            "adversary.domain=ball",
            "metrics=boosting_protocol",
        ),
        "boosting": ("player=online_bbm", f"adversary.path={binary}", "metrics=boosting_protocol"),
    }
    for protocol, args in runs.items():
        out = tmp_path / protocol
        res = arena_in_process(
            "run", *args, "adversary=dataset_stream", "adversary.dataset=file", "horizon=40",
            "replicates=2", f"hydra.run.dir={out}", cwd=tmp_path,
        )  # fmt: skip
        assert res.returncode == 0, res.stderr
        config = json.loads((out / "manifest.json").read_text())["config"]
        assert config["protocol"] == protocol and "sha256" in config["data"]["dataset"]
        assert config["data_files"]["path"].startswith(args[1].split("=", 1)[1])
    out = tmp_path / "multiclass"
    res = arena_in_process(
        "run", "player=multiclass_perceptron", "adversary=multiclass_dataset_stream",
        "adversary.dataset=file", f"adversary.path={multi}", "adversary.classes=[3,2,1]",
        "horizon=40", "metrics=boosting_protocol", f"hydra.run.dir={out}", cwd=tmp_path,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert json.loads((out / "manifest.json").read_text())["config"]["n_actions"] == 45
    rng = np.random.default_rng(5)  # a source's dataset by name, from a data folder
    (tmp_path / "data").mkdir()
    heart = sp.random(270, 13, density=0.7, random_state=rng, format="csr")
    save_examples(tmp_path / "data" / "heart_scale.gz", heart, rng.choice([-1.0, 1.0], 270))
    out = tmp_path / "heart"
    res = arena_in_process(
        "run", "player=ogd", "adversary=dataset_stream", "adversary.dataset=heart",
        f"adversary.data_dir={tmp_path / 'data'}", "adversary.domain=ball", "horizon=40",
        "metrics=boosting_protocol", f"hydra.run.dir={out}", cwd=tmp_path,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    config = json.loads((out / "manifest.json").read_text())["config"]
    assert config["data"]["dataset"].startswith("heart: examples sha256 ")
    assert config["data_files"]["path"].startswith(str(tmp_path / "data" / "heart_scale.gz"))
    bad = tmp_path / "bad.csv"
    bad.write_text("y,x\n1,2\n-1,2,3\n")
    res = arena_in_process(
        "run", "player=ogd", "adversary=dataset_stream", "adversary.dataset=file",
        f"adversary.path={bad}", f"hydra.run.dir={tmp_path / 'bad'}", cwd=tmp_path,
    )  # fmt: skip
    assert res.returncode != 0
    assert f"{bad} line 3: 3 fields, expected 2 (as in line 1)" in res.stderr


def test_a_tournament_resumes_over_the_same_examples_and_refuses_edited_ones(tmp_path, examples):
    """A tournament cell records the examples' digest; resuming after the file is rewritten in
    another format (same examples) skips it, after the examples changed it is refused."""
    from arena.apps.tournament import Tournament, TournamentConfig
    from arena.errors import ArenaError

    X, y, _ = examples
    path = write(tmp_path, "d.svm", X, y)
    config = TournamentConfig.from_mapping(
        {
            "name": "files",
            "players": ["ogd"],
            "adversaries": [
                {
                    "name": "dataset_stream",
                    "params": {"dataset": "file", "path": path, "domain": "ball"},
                }
            ],
            "n_actions": [None],
            "horizon": 30,
            "replicates": 2,
            "metrics": LIGHT,
        }
    )
    first = Tournament(config, tmp_path / "t", executor="serial").run()
    assert len(first.finished) == 1 and not first.failed
    save_examples(path, X.toarray(), y)  # the same examples, written dense: the same data
    assert len(Tournament(config, tmp_path / "t", executor="serial").run().skipped) == 1
    save_examples(path, X[:-1], y[:-1])
    with pytest.raises(ArenaError, match=r"the data of adversary dataset_stream .* changed"):
        Tournament(config, tmp_path / "t", executor="serial").run()
