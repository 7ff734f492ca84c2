"""Alignment (Shalev-Shwartz 2007, Ch. 9): Fig 9.1's dynamic program against enumeration, and
Fig 5.4 + "Last" on the synthetic stream."""

from __future__ import annotations

import numpy as np
import pytest

from arena.adversaries.alignment_stream import AlignmentStream
from arena.players.structured_self_tuned import StructuredSelfTuned
from arena.structured.alignment import AlignmentStructure, last_conversion


def test_dynamic_program_equals_enumeration_of_alignments():
    s = AlignmentStructure(
        n_frames=9, n_events=3, n_types=2, n_features=2, max_duration=5, tolerance=1
    )
    everything = s.all_strings()
    # compositions of 9 into 3 parts in 1..5, first start 0
    assert len(everything) == 19 and all(s.valid(y) for y in everything)
    rng = np.random.default_rng(7)
    for _ in range(12):
        x = np.zeros(s.input_shape)
        x[:, :2] = rng.standard_normal((9, 2))
        x[:3, 2] = rng.integers(0, 2, size=3)
        w, y = rng.standard_normal(s.dim), everything[rng.integers(len(everything))]
        for aug in (None, y):
            got = s.argmax(w, x, augment=aug, scale=0.7)
            extra = [0.0 if aug is None else 0.7 * s.cost(aug, o) for o in everything]
            values = [
                float(w @ s.features(x, o)) + e for o, e in zip(everything, extra, strict=True)
            ]
            best = int(np.argmax(values))
            assert np.array_equal(got, everything[best])
        brute = max(
            [
                s.cost(y, o) - float(w @ (s.features(x, y) - s.features(x, o)))
                for o in everything
                if np.any(o != y)
            ]
            + [0.0]
        )
        assert s.max_loss(w, x, y) == pytest.approx(brute, abs=1e-12)


def test_features_by_hand_and_infeasible_alignment_refused():
    s = AlignmentStructure(n_frames=4, n_events=2, n_types=2, n_features=1, max_duration=3)
    x = np.array([[1.0, 0.0], [2.0, 1.0], [4.0, 0.0], [8.0, 0.0]])  # events (0, 1)
    phi = s.features(x, np.array([0, 1]))
    # type 0: frame 0 (1); type 1: frames 1–3 (14); change |2 − 1|; durations 1, 3
    assert phi.tolist() == pytest.approx([1.0, 14.0, 1.0, (1 + 9) / 3, 4 / 3])
    with pytest.raises(ValueError, match="no alignment"):
        AlignmentStructure(9, 2, 2, 1, 3).argmax(np.zeros(5), np.zeros((9, 2)))
    with pytest.raises(ValueError, match="must lie in"):
        AlignmentStream(n_frames=30, n_events=2, max_duration=4).structure()


def test_last_hypothesis_beats_the_untrained_one():
    out = last_conversion(StructuredSelfTuned(), AlignmentStream(), n_train=30, n_test=20)
    assert out["last_within_1"] > out["zero_within_1"] + 20.0
