"""The experts core kernel (:func:`arena.experts.game._core_advance`) against plain loops, bitwise.

The kernel draws ``I_t`` without a branch; the draw must be :func:`arena.sampling.sample_action`'s
for every row (zeros, a last positive entry, ``u`` beyond a sum below 1) and the totals the plain
per-round sums in the same order.
"""

from __future__ import annotations

import numpy as np
import pytest

from arena.experts.game import _core_advance
from arena.sampling import sample_action


def _plain(probs, losses, uniforms, cum, learner, realized, sum_min):
    n_rep, n, _ = probs.shape
    expected, got_realized = np.empty((n_rep, n)), np.empty((n_rep, n))
    actions = np.empty((n_rep, n), dtype=np.int64)
    for r in range(n_rep):
        for j in range(n):
            s = 0.0
            for i in range(probs.shape[2]):
                s += probs[r, j, i] * losses[r, j, i]
            a = sample_action(probs[r, j], uniforms[r, j])
            actions[r, j] = a
            expected[r, j], got_realized[r, j] = s, losses[r, j, a]
            cum[r] += losses[r, j]
            learner[r] += s
            realized[r] += losses[r, j, a]
            sum_min[r] += losses[r, j].min()
    return expected, got_realized, actions


@pytest.mark.parametrize("n_act", [1, 2, 5, 10, 33])
def test_core_advance_equals_the_plain_loop_bitwise(n_act):
    rng = np.random.default_rng(n_act)
    n_rep, n = 4, 60
    probs = rng.random((n_rep, n, n_act)) ** 4
    probs[rng.random(probs.shape) < 0.3] = 0.0  # zeros, some rows with a zero tail
    probs[:, :, 0] += 1e-3  # no all-zero row
    probs /= probs.sum(axis=-1, keepdims=True)
    probs[1] *= 1.0 - 1e-12  # sums a little below 1: u past the last partial sum
    losses = rng.random((n_rep, n, n_act))
    uniforms = rng.random((n_rep, n))
    uniforms[2, ::7] = 1.0 - 2.0**-53  # the largest uniform
    uniforms[3, ::5] = 0.0
    start = rng.random((n_rep, n_act)), rng.random(n_rep), rng.random(n_rep), rng.random(n_rep)
    want_state = [x.copy() for x in start]
    want = _plain(probs, losses, uniforms, *want_state)
    got_state = [x.copy() for x in start]
    got = np.empty((n_rep, n)), np.empty((n_rep, n)), np.empty((n_rep, n), dtype=np.int64)
    _core_advance(probs, losses, uniforms, *got_state, *got)
    for g, w in zip((*got, *got_state), (*want, *want_state), strict=True):
        np.testing.assert_array_equal(g, w)
        assert g.tobytes() == w.tobytes()  # bitwise, signed zeros included
