"""The classification stump on sparse rows (O(nnz) a round: lazy group offsets and segment
trees, :mod:`arena.weak_learners._sparse_stump`) equals its dense path on the same data, and the
boosters' per-round loops hand it the sparse rows."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from arena.boosting.components import WeakSpec
from arena.oco.losses import SparseRows
from arena.weak_learners.stump import Stump

R, L, D, T = 2, 3, 40, 160


def _rows(x: np.ndarray) -> SparseRows:
    """A round's (R, d) rows as SparseRows (explicit zeros dropped)."""
    m = sp.csr_matrix(x)
    m.eliminate_zeros()
    return SparseRows(m.indptr, m.indices, m.data, x.shape)


def _stream(seed: int, dyadic: bool):
    """Sparse rows (about 4 non-zeros of d = 40, small integers: many ties with the thresholds,
    negative values included), labels ±1 and weights (dyadic: multiples of 1/4, zeros
    included; else uniform on [0, 1))."""
    rng = np.random.default_rng(seed)
    x = np.where(rng.random((T, R, D)) < 0.1, rng.integers(-3, 4, (T, R, D)), 0).astype(float)
    y = np.where(rng.random((T, R, L)) < 0.5, -1.0, 1.0)
    w = rng.integers(0, 5, (T, R, L)) / 4.0 if dyadic else rng.random((T, R, L))
    return x, y, w


def _pair(k: int) -> tuple[Stump, Stump]:
    spec = WeakSpec("classification", D, L, R, T)
    out = []
    for _ in range(2):
        wl = Stump(n_thresholds=k)
        wl.reset(spec, [[np.random.default_rng(0)] * L] * R)
        out.append(wl)
    return out[0], out[1]


@pytest.mark.parametrize("k", [1, 4, 16])
def test_sparse_rows_give_the_dense_stumps_exactly_with_dyadic_weights(k):
    """Dyadic weights make every partial sum exact, so the reassociated errors are the dense
    ones to the bit and every prediction (ties included) is the same."""
    dense, sparse = _pair(k)
    x, y, w = _stream(1, dyadic=True)
    for t in range(T):
        assert np.array_equal(sparse.predict(_rows(x[t])), dense.predict(x[t])), t
        dense.update(x[t], y[t], w[t])
        sparse.update(_rows(x[t]), y[t], w[t])
    sparse._to_dense()
    assert np.array_equal(sparse._errors, dense._errors)
    assert np.array_equal(sparse._thresholds, dense._thresholds)
    assert np.array_equal(sparse._total, dense._total)


def test_sparse_rows_give_the_dense_errors_to_rounding_with_real_weights():
    """Real weights: the errors differ only by reassociation, each a sum of at most T = 160
    terms in [0, 1): |error| ≤ 160, so the gap is below 160 · 160 · 2⁻⁵³ ≈ 3e-12; 1e-10."""
    dense, sparse = _pair(4)
    x, y, w = _stream(2, dyadic=False)
    agree = 0
    for t in range(T):
        agree += np.sum(sparse.predict(_rows(x[t])) == dense.predict(x[t]))
        dense.update(x[t], y[t], w[t])
        sparse.update(_rows(x[t]), y[t], w[t])
    sparse._to_dense()
    np.testing.assert_allclose(sparse._errors, dense._errors, rtol=0, atol=1e-10)
    # continuous weights leave no exact ties between distinct sums: the same stumps throughout
    assert agree == T * R * L


def test_switching_between_dense_and_sparse_rows_changes_nothing():
    dense, mixed = _pair(4)
    x, y, w = _stream(3, dyadic=True)
    for t in range(T):
        rows = _rows(x[t]) if (t // 20) % 2 else x[t]
        assert np.array_equal(mixed.predict(rows), dense.predict(x[t]))
        dense.update(x[t], y[t], w[t])
        mixed.update(rows, y[t], w[t])


def test_a_block_of_rows_is_refused_in_one_line():
    _, sparse = _pair(2)
    x = _rows(np.zeros((R * 2, D)))
    x = SparseRows(x.indptr, x.indices, x.values, (R, 2, D))
    with pytest.raises(ValueError, match="expected one round's"):
        sparse.predict(x)


@pytest.mark.parametrize("booster", ["online_bbm", "adaboost_ol_s"])
def test_the_boosters_hand_the_stumps_sparse_rows_and_play_as_on_dense_ones(booster, monkeypatch):
    """A sparse chunk reaches the stumps as SparseRows (not densified), and the booster's
    predictions equal its dense chunk's (the sampling boosters: 0/1 weights, exact sums)."""
    from arena.players.adaboost_ol import AdaBoostOLS
    from arena.players.online_bbm import OnlineBBM
    from arena.spec import GameSpec

    stumps = {"weak_learner": "stump", "weak_learner_params": {"n_thresholds": 4}}
    seen = []
    original = Stump.update

    def spy(self, x, target, weight):
        seen.append(type(x).__name__)
        return original(self, x, target, weight)

    monkeypatch.setattr(Stump, "update", spy)
    x, y, _ = _stream(4, dyadic=True)
    xb, yb = np.transpose(x, (1, 0, 2)).copy(), np.transpose(y[:, :, 0]).copy()  # (R, n, d)
    block = sp.csr_matrix(xb.reshape(R * T, D))
    block.eliminate_zeros()
    sparse_x = SparseRows(block.indptr, block.indices, block.data, (R, T, D))
    spec = GameSpec("boosting", D, T, n_replicates=R, dim=D, loss="logistic", task="classification")
    outs = []
    for chunk in (sparse_x, xb):
        if booster == "online_bbm":
            player = OnlineBBM(n_learners=3, gamma=0.2, mode="sampling", **stumps)
        else:
            player = AdaBoostOLS(n_learners=3, **stumps)
        player.reset(spec, [np.random.default_rng([11, r]) for r in range(R)])
        outs.append(player.play_block(chunk, yb))
    assert "SparseRows" in seen and "ndarray" in seen
    assert np.array_equal(outs[0], outs[1])


@pytest.mark.parametrize(
    "player, params",
    [
        ("adaboost_ol_s", {"n_learners": 3, "weak_learner": "stump"}),
        ("online_bbm", {"n_learners": 3, "mode": "sampling", "weak_learner": "stump"}),
        ("online_bbm", {"n_learners": 3, "weak_learner": "linear"}),
        ("adaboost_ol", {"n_learners": 3, "weak_learner": "linear"}),
    ],
)
def test_a_sparse_file_with_a_test_split_plays_as_its_dense_copy(tmp_path, player, params):
    """The held-out examples of a sparse file reach the booster as SparseRows (its test error
    reads them, :func:`arena.boosting.components.held_out_rows`); the same examples stored
    dense play the same game (the key holds the examples' digest). Over stumps with 0/1
    weights every number is exact; over linear lanes the dot products' order may differ, which
    moves a score by ~1e-16 and, on these 60 held-out examples, no prediction."""
    from arena import play
    from arena.adversaries.dataset_stream import DatasetStream
    from arena.data.files import save_examples

    rng = np.random.default_rng(7)
    x = np.where(rng.random((300, 30)) < 0.15, rng.integers(-3, 4, (300, 30)), 0).astype(float)
    y = np.where(x[:, :5].sum(axis=1) + 0.5 * rng.standard_normal(300) > 0, 1.0, -1.0)
    rows = []
    for name in ("d.svm", "d.npz"):
        path = save_examples(tmp_path / name, sp.csr_matrix(x) if name == "d.svm" else x, y)
        stream = DatasetStream("file", path=str(path), test_fraction=0.2)
        out = play(player, stream, player_params=params, horizon=200, replicates=2,
                   metrics={"mistakes": {}, "test_error": {}})  # fmt: skip
        rows.append(out.sort_values(["metric", "t", "replicate"]).reset_index(drop=True))
    sparse, dense = rows
    assert set(sparse.metric) == {"mistakes", "test_error"}
    assert sparse.value.notna().all()
    assert np.array_equal(sparse.value.to_numpy(), dense.value.to_numpy())
