"""The chain structure's dynamic programs against enumeration of every string (tiny k, m)."""

from __future__ import annotations

import numpy as np
import pytest

from arena.structured.chain import ChainStructure


def _brute_argmax(s, w, x, augment=None, scale=1.0):
    best, arg = -np.inf, None
    for y in s.all_strings():
        v = float(w @ s.features(x, y))
        if augment is not None:
            v += scale * s.cost(augment, y)
        if v > best:
            best, arg = v, y
    return arg, best


@pytest.mark.parametrize(("k", "m", "d"), [(2, 1, 1), (3, 4, 2)])
def test_viterbi_and_loss_augmented_equal_enumeration(k, m, d):
    s = ChainStructure(k, m, d)
    rng = np.random.default_rng(k * 10 + m)
    for _ in range(15):
        w, x = rng.standard_normal(s.dim), rng.standard_normal((m, d))
        y = rng.integers(0, k, size=m)
        got = s.argmax(w, x)
        want, value = _brute_argmax(s, w, x)
        assert np.array_equal(got, want)
        assert float(w @ s.features(x, got)) == pytest.approx(value, abs=1e-12)
        aug = s.argmax(w, x, augment=y, scale=0.7)
        want_aug, value_aug = _brute_argmax(s, w, x, augment=y, scale=0.7)
        assert np.array_equal(aug, want_aug)
        assert float(w @ s.features(x, aug)) + 0.7 * s.cost(y, aug) == pytest.approx(value_aug)
        # (5.22): the max over y' != y, clipped at 0
        brute = max(
            [
                s.cost(y, o) - float(w @ (s.features(x, y) - s.features(x, o)))
                for o in s.all_strings()
                if np.any(o != y)
            ]
            + [0.0]
        )
        assert s.max_loss(w, x, y) == pytest.approx(brute, abs=1e-12)


def test_features_and_cost_by_hand():
    s = ChainStructure(2, 3, 1)
    x = np.array([[2.0], [3.0], [5.0]])
    phi = s.features(x, np.array([1, 0, 1]))
    # emissions: label 0 gets x_2 = 3, label 1 gets x_1 + x_3 = 7; start e_1; transitions 1→0, 0→1
    assert phi.tolist() == [3.0, 7.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0]
    assert s.cost(np.array([1, 0, 1]), np.array([0, 0, 0])) == 2.0
    assert s.max_difference_norm(x, np.array([0, 0, 0])) == pytest.approx(
        max(
            np.linalg.norm(s.features(x, o) - s.features(x, np.array([0, 0, 0])))
            for o in s.all_strings()[1:]
        )
    )
    with pytest.raises(ValueError, match="exceed"):
        ChainStructure(4, 7, 1).all_strings()


def test_all_features_equal_features_string_by_string():
    s = ChainStructure(3, 3, 2)
    x = np.random.default_rng(1).standard_normal((3, 2))
    want = np.array([s.features(x, y) for y in s.all_strings()])
    np.testing.assert_allclose(s.all_features(x), want, atol=1e-12, rtol=0)
