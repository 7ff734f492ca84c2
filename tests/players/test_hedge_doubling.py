"""Oracle tests of Hedge's doubling-trick schedule (``Hedge(eta="doubling")``): the
doubling-trick bound (CBL Ex. 2.8; the same factor in Orabona & Pál's KT-LEA section).

The rest of Hedge is covered by ``tests/players/test_hedge.py``. Deterministic inequalities use
``lhs <= rhs + 1e-9·max(1, |rhs|)`` (our tolerance convention).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena import GameSpec
from arena.adversaries.replay import Replay
from arena.players.hedge import Hedge
from tests.helpers import assert_below, check_declared, metric_table, save_matrix, traced
from tests.helpers.experts import (
    assert_simplex,
    loss_matrices,
    play_blocks,
    play_catalog,
    play_loop,
    spec_for,
)

P_ATOL = 1e-12
"""Softmaxes of O(2^m) epoch sums: float error ~1e-14 (as in tests/players/test_hedge.py)."""

ROW_5 = math.sqrt(2) / (math.sqrt(2) - 1)
"""CBL Ex. 2.8: √2/(√2 − 1) ≈ 3.41."""


def literal_doubling(losses):
    """CBL Ex. 2.8, literally: epoch m covers rounds 2^m .. 2^{m+1} − 1; inside it Hedge starts
    from uniform weights with η_m = sqrt(8 ln N / 2^m) on the epoch's cumulative losses."""
    horizon, n = losses.shape
    out = np.empty((horizon, n))
    for t in range(1, horizon + 1):
        m = math.floor(math.log2(t))
        while 2 ** (m + 1) <= t:  # guard the float log2 at powers of two
            m += 1
        while 2**m > t:
            m -= 1
        eta = math.sqrt(8 * math.log(n) / 2**m)
        start = 2**m
        cum = [sum(losses[s - 1][i] for s in range(start, t)) for i in range(n)]
        low = min(cum)
        w = [math.exp(-eta * (c - low)) for c in cum]
        out[t - 1] = [x / sum(w) for x in w]
    return out


def test_matches_literal_transcription(tmp_path):
    horizon, n_act = 200, 5
    mats = loss_matrices(np.random.default_rng(1), horizon, n_act)
    losses = np.stack(list(mats.values()))
    want = np.stack([literal_doubling(m) for m in mats.values()])
    player = Hedge(eta="doubling")
    for spec in (spec_for(losses), spec_for(losses, horizon=None)):  # needs no horizon
        np.testing.assert_allclose(play_loop(player, losses, spec), want, rtol=0, atol=P_ATOL)
        for cuts in ([1], [2, 3, 4, 64, 65], [63, 127], list(range(0, horizon, 9))):
            got = play_blocks(player, losses, spec, cuts=cuts)
            np.testing.assert_allclose(got, want, rtol=0, atol=P_ATOL)
    _, tr = traced(
        player,
        Replay(path=save_matrix(tmp_path, losses)),
        tmp_path,
        horizon=horizon,
        replicates=3,
        metrics={"regret": {}},
    )
    np.testing.assert_allclose(tr["probs"], want, rtol=0, atol=P_ATOL)
    assert_simplex(tr["probs"], "trace")


def test_restarts_and_rates():
    # p is uniform at every epoch start t = 2^m, and the rate of round t is sqrt(8 ln N / 2^m)
    h = Hedge(eta="doubling")
    h.reset(GameSpec("experts", 3, None), [None])
    for t in range(1, 300):
        m = t.bit_length() - 1
        assert h.learning_rate() == pytest.approx(math.sqrt(8 * math.log(3) / 2**m), rel=1e-15)
        if t & (t - 1) == 0:
            assert h.predict()[0].tolist() == [1 / 3] * 3
        h.update(np.array([[0.0, 1.0, 0.5]]))


def per_epoch_sum(n_act, t):
    """Σ over the epochs up to round t of sqrt(2^m ln N/2): the proof's sharper bound."""
    return sum(math.sqrt(2**m * math.log(n_act) / 2) for m in range(t.bit_length()))


@pytest.mark.parametrize(("n_act", "horizon"), [(2, 2000), (10, 200), (50, 2000)])
def test_declared_bound_row_5_on_the_catalog(n_act, horizon, tmp_path):
    metrics = {"regret": {}, "bound": {}}
    checked = 0
    for label, rows in play_catalog(Hedge(eta="doubling"), tmp_path, n_act, horizon, metrics):
        checked += check_declared(rows, label)
        ts = np.unique(rows.t.to_numpy())
        declared = metric_table(rows, "bound:regret")[1]
        row5 = ROW_5 * np.sqrt(ts * math.log(n_act) / 2)
        np.testing.assert_allclose(declared, np.broadcast_to(row5, declared.shape), rtol=1e-12)
        sharper = [per_epoch_sum(n_act, int(t)) for t in ts]
        assert_below(metric_table(rows, "regret")[1], sharper, f"{label}: Σ_m sqrt(2^m ln N/2)")
        assert_below(sharper, row5, "Σ_m 2^{m/2} ≤ (√2/(√2−1)) √T")
    assert checked > 0


def test_shift_permutation_and_range(tmp_path):
    rng = np.random.default_rng(2)
    base = rng.random((300, 4)) / 2
    shift = rng.random((300, 1)) / 2
    perm = rng.permutation(4)
    spec = spec_for(base[None])
    a = play_loop(Hedge(eta="doubling"), base[None], spec)
    np.testing.assert_allclose(
        play_loop(Hedge(eta="doubling"), (base + shift)[None], spec), a, atol=1e-10
    )
    np.testing.assert_allclose(
        play_loop(Hedge(eta="doubling"), base[None, :, perm], spec), a[:, :, perm], atol=1e-12
    )
    wide = spec_for(base[None], loss_range=(2.0, 4.0))
    np.testing.assert_allclose(
        play_loop(Hedge(eta="doubling"), 2.0 + 2.0 * base[None], wide), a, atol=1e-12
    )
