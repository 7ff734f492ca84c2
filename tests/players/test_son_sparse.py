"""Sparse RP-SON (Luo 2016, Alg. 15) equals dense RP-SON (Alg. 11 + 12) on sparse streams."""

from __future__ import annotations

import numpy as np
import pytest

from arena.errors import ConfigError
from arena.oco.domains import Domain
from arena.spec import GameSpec
from players.son import SON
from tests.players.test_son import play


def sparse_stream(seed, n, d, nnz):
    """Examples with ``nnz`` nonzero N(0, 9) coordinates at random places, random ±1 labels."""
    rng = np.random.default_rng(seed)
    x = np.zeros((n, d))
    for t in range(n):
        x[t, rng.choice(d, nnz, replace=False)] = 3.0 * rng.normal(size=nnz)
    return x, np.where(rng.random(n) < 0.5, -1.0, 1.0)


@pytest.mark.parametrize(
    ("loss", "params"),
    [
        ("logistic", {"C": 1.0}),
        ("squared", {"C": 1.0}),
        ("logistic", {"C": None, "eta": 0.5}),
        # hinge with C = 0.5: |⟨w, x⟩| ≤ 0.5 < 1 keeps the margin off the kink y⟨w, x⟩ = 1, where
        # a round-off difference would flip ℓ' between −y and 0 (both versions are then right)
        ("hinge", {"C": 0.5, "diagonal": True}),
    ],
)
def test_sparse_rp_equals_dense_rp(loss, params):
    x, y = sparse_stream(0, 300, 50, 5)
    dense, _ = play(SON(sketch="rp", m=5, alpha=0.5, **params), x, y, loss=loss, seed=3)
    sparse, _ = play(SON(sketch="rp", m=5, alpha=0.5, sparse=True, **params), x, y, loss=loss,
                     seed=3)  # fmt: skip
    # same draws r_t; the split w = ū + Sᵀb adds in another order: measured ≤ 3.2e-11 with
    # ‖w‖∞ ≤ 50 (relative ≤ 1e-12); the identities of Luo 2016, Alg. 15 are exact
    scale = max(1.0, float(np.abs(dense).max()))
    assert np.abs(sparse - dense).max() <= 1e-10 * scale


def test_sparse_refused_for_full_fd_and_oja():
    spec = GameSpec("classification", 4, 5, dim=4, domain=Domain(), loss="logistic")
    for sketch in ("full", "fd", "oja"):
        with pytest.raises(ConfigError, match="sparse"):
            SON(sketch=sketch, m=2, sparse=True).reset(spec, [np.random.default_rng(0)])
