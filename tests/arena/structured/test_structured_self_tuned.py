"""Fig 5.4 (``structured_self_tuned``): equal to its literal transcription; Theorem 7 holds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from arena.adversaries.structured_stream import StructuredStream
from arena.errors import GameError
from arena.game import reference_play, run_game
from arena.players.structured_self_tuned import StructuredSelfTuned
from arena.spec import GameSpec
from arena.structured.literal import fig54
from arena.structured.testing import RandomStrings, StringPerceptron
from arena.testing.common import rngs


def _stream_examples(stream, n, n_rep=2, seed=3):
    s = stream.structure()
    spec = GameSpec(
        "structured",
        s.length,
        n,
        n_replicates=n_rep,
        dim=s.n_features,
        n_classes=s.n_labels,
        structure=s,
    )
    stream.reset(spec, rngs(seed, n_rep))
    x, y = stream.examples(1, n)
    return spec, x, y


def test_player_equals_literal_figure():
    stream = StructuredStream(n_labels=3, length=3, n_features=2, noise=0.2)
    spec, x, y = _stream_examples(stream, 40)
    player = StructuredSelfTuned(U=2.0)
    player.reset(spec, rngs(0, 2))
    preds = np.empty_like(y)
    for j in range(y.shape[1]):
        preds[:, j] = player.predict(x[:, j])
        player.update(x[:, j], y[:, j], preds[:, j])
    for r in range(2):
        literal = fig54(spec.structure, 2.0, zip(x[r], y[r], strict=True))
        assert preds[r].tolist() == literal
    assert player.mistakes.min() > 0  # the updates were exercised


def _theorem7(noise, seeds, horizon, margin=0.5):
    U = 0.5 / margin**2  # ‖u‖ = 1/γ = √(2U)
    kw = dict(horizon=horizon, replicates=2, metrics=["structured_cost", "structured_cost_bound"])
    out = []
    for seed in seeds:
        stream = StructuredStream(
            n_labels=2, length=2, n_features=1, margin=margin, noise=noise, transition_scale=0.0
        )
        rows = run_game(StructuredSelfTuned(U=U), stream, seed=seed, **kw).rows
        out.append(rows.pivot_table(index=["replicate", "t"], columns="metric", values="value"))
    return pd.concat(out)


@pytest.mark.parametrize("noise", [0.0, 0.1])
def test_theorem7_holds(noise):
    table = _theorem7(noise, [0, 1], 80)
    assert (table["structured_cost"] <= table["bound:structured_cost"]).all()
    loss = table["structured_comparator_loss"]
    assert (loss == 0).all() if noise == 0 else (loss.groupby(level=0).last() > 0).all()


@pytest.mark.slow
@pytest.mark.parametrize("noise", [0.0, 0.05, 0.2])
def test_theorem7_holds_over_many_seeds(noise):
    table = _theorem7(noise, range(20), 600)
    assert (table["structured_cost"] <= table["bound:structured_cost"]).all()


@pytest.mark.slow
def test_bound_check_catches_a_learner_that_does_not_learn():
    """Theorem 7 with the learner's U on a long separable stream is beaten by a player that never
    updates: the check can fail."""

    class Frozen(StructuredSelfTuned):
        def update(self, x, y, y_hat):
            pass

    stream = StructuredStream(n_labels=2, length=2, n_features=1, margin=0.5, transition_scale=0.0)
    kw = dict(horizon=2000, replicates=1, metrics=["structured_cost", "structured_cost_bound"])
    rows = run_game(Frozen(U=2.0), stream, **kw).rows
    last = rows[rows.t == 2000].set_index("metric").value
    assert last["structured_cost"] > last["bound:structured_cost"]


def test_fast_rows_equal_reference_with_small_chunks():
    kw = dict(horizon=9, replicates=2, metrics=["structured_cost", "structured_cost_bound"])
    stream = StructuredStream(n_labels=2, length=3, n_features=2, noise=0.1)
    fast = run_game(StructuredSelfTuned(U=3.0), stream, chunk_elements=40, **kw).rows
    pd.testing.assert_frame_equal(
        fast, reference_play(StructuredSelfTuned(U=3.0), stream, **kw), atol=1e-12, rtol=0
    )


def test_bound_is_inf_outside_the_ball_and_bad_predictions_are_named():
    p = StructuredSelfTuned(U=0.5)
    u = np.array([[1.0, 0.0], [2.0, 0.0]])
    got = p.comparator_cost_bound(u, np.array([4.0, 4.0]), np.array([1.0, 1.0]))
    assert got[0] == pytest.approx(4.0 + np.sqrt(16.0) + 4.0) and np.isinf(got[1])

    class OutOfRange(StringPerceptron):
        def predict(self, x):
            return super().predict(x) + 5

    with pytest.raises(GameError, match="outside 0"):
        run_game(OutOfRange(), RandomStrings(), horizon=3, replicates=1)


def test_a_stream_label_out_of_range_is_named():
    class BadLabels(RandomStrings):
        def examples(self, t0, n):
            x, y = super().examples(t0, n)
            return x, y + 7

    with pytest.raises(GameError, match="outside 0"):
        run_game(StringPerceptron(), BadLabels(), horizon=3, replicates=1)
