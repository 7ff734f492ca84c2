"""Held-out test splits of the stream adversaries (oracle ``test_split``): dataset_stream's
``test_fraction`` and separable_stream's ``test_size``. The test examples are never streamed, the
split is the replicate's own (seeded), and without a split the stream is what it was."""

from __future__ import annotations

import numpy as np
import pytest

from arena.adversaries.dataset_stream import DatasetStream, load_dataset
from arena.adversaries.separable_stream import SeparableStream
from arena.errors import ConfigError
from arena.params import validate_params
from tests.helpers.oco_adversaries import (
    assert_replicate_determinism,
    assert_split_invariant,
    blocks,
    fresh,
    spec_for,
)


def row_ids(X: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Index in X of each row of ``rows`` (X's rows are distinct on breast cancer)."""
    lookup = {r.tobytes(): i for i, r in enumerate(X)}
    return np.array([lookup[r.tobytes()] for r in rows])


def test_dataset_split_is_held_out_seeded_and_per_replicate():
    assert DatasetStream("breast_cancer", test_fraction=0.3).split_sizes() == (399, 170)
    adv = DatasetStream("breast_cancer", test_fraction=0.9)  # a short epoch: 57 examples
    n_train, m = adv.split_sizes()
    assert (n_train, m) == (57, 512)  # ⌊0.9·569⌋ = 512 held out
    assert adv.tags.oracle == frozenset({"test_split"})
    X, _ = load_dataset("breast_cancer", (0,), True, False)
    assert len({r.tobytes() for r in X}) == X.shape[0]
    spec = spec_for(adv, n_rep=3, horizon=2 * n_train + 5)  # into a third epoch
    data = assert_split_invariant(adv, spec)
    assert_replicate_determinism(adv, spec)
    test = fresh(adv, spec).test_split()
    assert test.x.shape == (3, m, 30) and test.y.shape == (3, m)
    for r in range(3):
        held = set(row_ids(X, test.x[r]).tolist())
        for epoch in range(2):
            shown = row_ids(X, data.x[r, epoch * n_train : (epoch + 1) * n_train])
            # each epoch shows every training example once and never a test example
            assert sorted(shown.tolist()) == sorted(set(range(569)) - held)
    assert not np.array_equal(test.x[0], test.x[1])  # each replicate draws its own split
    np.testing.assert_array_equal(fresh(adv, spec).test_split().x, test.x)  # same seed, same split
    other = fresh(adv, spec, seed=1).test_split()
    assert not np.array_equal(other.x, test.x)


def test_dataset_without_split_streams_every_example_and_refuses_an_empty_split():
    adv = DatasetStream("breast_cancer")
    assert adv.split_sizes() == (569, 0) and adv.tags.oracle == frozenset()
    spec = spec_for(adv, n_rep=1, horizon=569)
    shown = row_ids(
        load_dataset("breast_cancer", (0,), True, False)[0], blocks(adv, spec, [569]).x[0]
    )
    assert sorted(shown.tolist()) == list(range(569))
    with pytest.raises(KeyError, match="holds out no test split"):
        fresh(adv, spec).test_split()
    # without a split the parameter does not seed the stream: games keep the data they had
    assert "test_fraction" not in adv.stream_identity()[1]
    assert DatasetStream(test_fraction=0.3).stream_identity()[1]["test_fraction"] == 0.3
    assert "test_size" not in SeparableStream().stream_identity()[1]
    with pytest.raises(ConfigError, match="parameter 'test_fraction'"):
        validate_params(DatasetStream(test_fraction=1.0))
    with pytest.raises(ConfigError, match=r"test_fraction.*0 of the 569"):
        DatasetStream(test_fraction=0.001).split_sizes()


def test_separable_test_split_is_iid_of_the_same_law_and_never_streamed():
    adv = SeparableStream(margin=0.2, noise=0.1, test_size=400)
    assert adv.tags.oracle == frozenset({"comparator", "test_split"})
    assert SeparableStream().tags.oracle == frozenset({"comparator"})
    spec = spec_for(adv, n_rep=2, horizon=300, dim=4)
    data = assert_split_invariant(adv, spec)
    assert_replicate_determinism(adv, spec)
    game = fresh(adv, spec)
    test, u = game.test_split(), game.comparator()
    margins = np.abs(np.einsum("rmd,rd->rm", test.x, u))
    assert np.all(margins >= 1 - 1e-12) and np.all(np.linalg.norm(test.x, axis=2) <= 1 + 1e-12)
    flipped = (test.y != np.sign(np.einsum("rmd,rd->rm", test.x, u))).mean()
    assert 0.05 < flipped < 0.15  # noise 0.1: 800 labels, sd 0.011
    # independent of the stream: none of its examples is streamed
    for r in range(2):
        streamed = {row.tobytes() for row in data.x[r]}
        assert not any(row.tobytes() in streamed for row in test.x[r])
    # the split is the replicate stream's first m examples; the stream goes on after them
    plain = blocks(SeparableStream(margin=0.2, noise=0.1), spec, [300])
    np.testing.assert_array_equal(plain.x, test.x[:, :300])
    np.testing.assert_array_equal(plain.y, test.y[:, :300])
    with pytest.raises(ConfigError, match="parameter 'test_size'"):
        validate_params(SeparableStream(test_size=-1))
