"""multiclass_separable_stream (a multiclass linear target concept with margin, radius and label
noise) and multiclass_dataset_stream (scikit-learn's digits with all ten labels, iris, wine)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.adversaries.multiclass_dataset_stream import MulticlassDatasetStream, load_multiclass
from arena.adversaries.multiclass_separable_stream import MulticlassSeparableStream
from arena.errors import ConfigError
from arena.spec import GameSpec
from tests.helpers.multiclass import hinge_sum, margins


def reset(adv, k, d, R=2, T=10, seed=0):
    spec = GameSpec("multiclass", k * d, T, n_replicates=R, dim=k * d, n_classes=k)
    adv.reset(spec, [np.random.default_rng(seed + r) for r in range(R)])
    return adv


def test_separable_stream_margin_radius_labels_and_comparator():
    k, d, T, gamma, big_r = 4, 6, 3000, 0.08, 2.0
    adv = reset(MulticlassSeparableStream(n_classes=k, margin=gamma, feature_radius=big_r), k, d)
    data = adv.data_block(1, T)
    assert data.x.shape == (2, T, d) and data.y.shape == (2, T)
    assert np.all(np.linalg.norm(data.x, axis=2) <= big_r * (1 + 1e-12))
    U = adv.comparator().reshape(2, k, d) * gamma  # the planted U, unit Frobenius norm
    np.testing.assert_allclose(np.linalg.norm(U, axis=(1, 2)), 1.0, rtol=1e-12)
    m = margins(data, U)
    assert np.all(m >= gamma * (1 - 1e-12))  # every clean example has margin ≥ γ
    assert np.all(hinge_sum(data, U / gamma) <= 1e-9)  # the comparator's hinge is 0
    # the regular-simplex target makes the labels equally likely: 3000 draws, 4 labels, a
    # 5-standard-deviation band (sd = √(T·¼·¾) ≈ 24)
    counts = np.stack([np.bincount(data.y[r].astype(int), minlength=k) for r in range(2)])
    assert np.all(np.abs(counts - T / k) <= 5 * math.sqrt(T * 0.25 * 0.75))


def test_separable_stream_noise_and_block_splits():
    k, d, T = 3, 5, 2000
    clean = reset(MulticlassSeparableStream(n_classes=k, margin=0.05), k, d).data_block(1, T)
    adv = reset(MulticlassSeparableStream(n_classes=k, margin=0.05, noise=0.2), k, d)
    noisy = adv.data_block(1, T)
    # the noise draws are part of every candidate: the features do not depend on the noise level
    np.testing.assert_array_equal(noisy.x, clean.x)
    flipped = noisy.y != clean.y
    assert abs(flipped.mean() - 0.2) <= 5 * math.sqrt(0.2 * 0.8 / (2 * T))  # 5 sd
    assert np.all((noisy.y >= 0) & (noisy.y < k))
    adv = reset(MulticlassSeparableStream(n_classes=k, margin=0.05, noise=0.2), k, d)
    parts = [adv.data_block(t, n) for t, n in ((1, 1), (2, 700), (702, 299), (1001, 1000))]
    np.testing.assert_array_equal(np.concatenate([p.x for p in parts], axis=1), noisy.x)
    np.testing.assert_array_equal(np.concatenate([p.y for p in parts], axis=1), noisy.y)


def test_separable_stream_refuses_bad_settings():
    adv = MulticlassSeparableStream(n_classes=4)
    assert adv.resolve_dim(None) == 40
    for bad in (30, 41, 12):  # d = 7.5, not a multiple; d = 3 < k
        with pytest.raises(ConfigError, match="n_actions"):
            adv.resolve_dim(bad)
    # the largest margin in the unit ball is √k/(k−1) (2/3 for k = 4)
    with pytest.raises(ConfigError, match=r"'margin'.*largest margin"):
        reset(MulticlassSeparableStream(n_classes=4, margin=0.7), 4, 5)
    # possible but vanishingly rare margins are refused after 50·256 candidates
    with pytest.raises(ConfigError, match=r"'margin'.*choose a smaller margin"):
        reset(MulticlassSeparableStream(n_classes=4, margin=0.6), 4, 30).data_block(1, 10)


def test_digits_all_ten_labels_one_epoch():
    X, y, k = load_multiclass("digits")
    assert X.shape == (1797, 64) and k == 10
    adv = MulticlassDatasetStream("digits")
    assert adv.resolve_dim(None) == 640 and adv.declared_classes() == 10
    reset(adv, 10, 64, R=2, T=1797)
    data = adv.data_block(1, 1797)
    # one epoch shows every example once: the label counts of the dataset, in a shuffled order
    for r in range(2):
        np.testing.assert_array_equal(
            np.bincount(data.y[r].astype(int)), np.bincount(y.astype(int))
        )
    assert not np.array_equal(data.y[0], data.y[1])
    assert adv.gradient_bound() == pytest.approx(math.sqrt(2) * np.linalg.norm(X, axis=1).max())
    with pytest.raises(ConfigError, match="640"):
        adv.resolve_dim(64)


@pytest.mark.parametrize(("dataset", "shape", "k"), [("iris", (150, 4), 3), ("wine", (178, 13), 3)])
def test_small_datasets(dataset, shape, k):
    X, y, kk = load_multiclass(dataset, intercept=True)
    assert X.shape == (shape[0], shape[1] + 1) and kk == k
    assert np.all(X[:, -1] == 1.0) and sorted(set(y.tolist())) == list(range(k))
