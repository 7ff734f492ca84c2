"""Sparse RP-SON / Oja-SON (Luo 2016, Alg. 15, 22–23) equal the dense versions on sparse streams."""

from __future__ import annotations

import numpy as np
import pytest

from arena.errors import ConfigError
from arena.oco.domains import Domain
from arena.players.son import SON
from arena.spec import GameSpec
from tests.players.test_son import play


def sparse_stream(seed, n, d, nnz):
    """Examples with ``nnz`` nonzero N(0, 9) coordinates at random places, random ±1 labels."""
    rng = np.random.default_rng(seed)
    x = np.zeros((n, d))
    for t in range(n):
        x[t, rng.choice(d, nnz, replace=False)] = 3.0 * rng.normal(size=nnz)
    return x, np.where(rng.random(n) < 0.5, -1.0, 1.0)


@pytest.mark.parametrize("sketch", ["rp", "oja"])
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
def test_sparse_equals_dense(sketch, loss, params):
    x, y = sparse_stream(0, 300, 50, 5)
    dense, _ = play(SON(sketch=sketch, m=5, alpha=0.5, **params), x, y, loss=loss, seed=3)
    sparse, _ = play(SON(sketch=sketch, m=5, alpha=0.5, sparse=True, **params), x, y, loss=loss,
                     seed=3)  # fmt: skip
    # same draws r_t; the split w = ū + Sᵀb (Zᵀb) adds in another order: measured ≤ 3.2e-11
    # (RP) and ≤ 9.2e-11 (Oja) with ‖w‖∞ ≤ 72, relative ≤ 2e-12; the identities are exact
    scale = max(1.0, float(np.abs(dense).max()))
    assert np.abs(sparse - dense).max() <= 1e-10 * scale


def test_sparse_oja_dense_fallback_keeps_equality(monkeypatch):
    """The dense round taken when K grows (VW's reset) leaves the predictions unchanged."""
    import arena.players.son as son

    # the dense round fires 3 times in these 200 rounds (measured; 0 times at the default 1e7)
    monkeypatch.setattr(son, "SPARSE_OJA_REBASE", 3.0)
    x, y = sparse_stream(1, 200, 30, 4)
    kw = {"sketch": "oja", "m": 4, "alpha": 0.5, "C": 1.0}
    dense, _ = play(SON(**kw), x, y, seed=3)
    sparse, _ = play(SON(**kw, sparse=True), x, y, seed=3)
    assert np.abs(sparse - dense).max() <= 1e-10 * max(1.0, float(np.abs(dense).max()))


def test_sparse_refused_for_full():
    spec = GameSpec("classification", 4, 5, dim=4, domain=Domain(), loss="logistic")
    with pytest.raises(ConfigError, match="sparse"):
        SON(sketch="full", m=2, sparse=True).reset(spec, [np.random.default_rng(0)])


def _block_game(params, x, y, loss, replicates=2, seed=3):
    """The stream x (T, d), y (T,) for every replicate as one block: (spec, RoundData, player)."""
    from arena.oco.losses import RoundData, SparseRows

    n, d = x.shape
    spec = GameSpec("classification", d, n, dim=d, domain=Domain(), loss=loss,
                    n_replicates=replicates)  # fmt: skip
    xs = SparseRows.from_dense(np.stack([x] * replicates))
    data = RoundData(x=xs, y=np.stack([y] * replicates))
    player = SON(**params)
    player.reset(spec, [np.random.default_rng(seed + r) for r in range(replicates)])
    return spec, data, player


KERNEL_CASES = [
    ("logistic", {"C": 1.0}),
    ("squared", {"C": 1.0}),
    ("logistic", {"C": None, "eta": 0.5}),
    ("hinge", {"C": 0.5, "diagonal": True}),
    # VW's ĝ = g/2 without projection (squared loss diverges unprojected on these large rows)
    ("logistic", {"C": None, "sigma": 0.25, "eta": 0.0}),
]


@pytest.mark.parametrize("sketch", ["rp", "oja"])
@pytest.mark.parametrize(("loss", "params"), KERNEL_CASES)
def test_sparse_kernel_equals_readable_and_dense(sketch, loss, params):
    """The numba kernel (``_son_sparse_block``) against the readable sparse loop and dense SON.

    Tolerance 1e-9·max(1, ‖w‖∞): the kernel takes ``⟨w_t, x_t⟩`` from the representation
    ``ū − cx + Bᵀ(b + c·dir)`` on x's support where the readable loop materializes ``w_t`` and the
    engine sums over its coordinates, so ℓ' differs by round-off each round and the split
    representation amplifies it (measured ≤ 4.1e-10 with ‖w‖∞ ≈ 25 for RP, 1.9e-11 for Oja:
    relative ≤ 2e-11); the F of Oja's kernel is exactly lower triangular where LAPACK's solve
    leaves round-off above the diagonal.
    """
    from arena.oco.components import OCOPlayer

    x, y = sparse_stream(0, 300, 50, 5)
    kw = {"sketch": sketch, "m": 5, "alpha": 0.5, **params}
    spec, data, kernel = _block_game({**kw, "sparse": True}, x, y, loss)
    fast = kernel.play_block(data, spec)
    spec, data, readable = _block_game({**kw, "sparse": True}, x, y, loss)
    slow = OCOPlayer.play_block(readable, data, spec)
    scale = max(1.0, float(np.abs(slow).max()))
    assert np.abs(fast - slow).max() <= 1e-9 * scale
    spec, data, dense = _block_game(kw, x, y, loss)
    reference = OCOPlayer.play_block(dense, data, spec)
    assert np.abs(fast - reference).max() <= 1e-9 * scale
    # the state the kernel leaves is the readable loop's
    assert np.abs(kernel.current_point() - readable.current_point()).max() <= 1e-9 * scale


@pytest.mark.parametrize("sketch", ["rp", "oja"])
def test_play_predictions_skips_points_and_current_point_gives_them(sketch):
    """Predictions only (no w_t formed) equal ⟨w_t, x_t⟩ of play_block; the point on demand
    after the block is the one play_block's next round would play."""
    from arena.oco.losses import RoundData

    x, y = sparse_stream(2, 120, 40, 6)
    kw = {"sketch": sketch, "m": 4, "alpha": 1.0, "C": 1.0, "sparse": True}
    spec, data, a = _block_game(kw, x, y, "logistic")
    _, _, b = _block_game(kw, x, y, "logistic")
    first, rest = data.x.rounds(0, 100), data.x.rounds(100, 120)
    ys = data.y
    points = a.play_block(RoundData(x=first, y=ys[:, :100]), spec)
    preds = b.play_predictions(RoundData(x=first, y=ys[:, :100]), spec)
    assert preds.shape == (2, 100)
    np.testing.assert_allclose(preds, first.dot(points), rtol=1e-12, atol=1e-12)
    nxt = rest.round(0)
    expected = a.play_block(RoundData(x=rest, y=ys[:, 100:]), spec)[:, 0]
    np.testing.assert_allclose(b.current_point(nxt), expected, rtol=1e-12, atol=1e-12)
    # without features: u_t before the projection, ū + Bᵀb
    basis = b._z if sketch == "oja" else b._s
    unprojected = b._u + np.einsum("rmd,rm->rd", basis, b._b)
    np.testing.assert_array_equal(b.current_point(), unprojected)


def test_sparse_kernel_rebase_equals_readable(monkeypatch):
    """The kernel's dense round (max|K| over the threshold) equals the readable loop's."""
    import arena.players.son as son
    from arena.oco.components import OCOPlayer

    monkeypatch.setattr(son, "SPARSE_OJA_REBASE", 3.0)  # fires 3 times in 200 rounds
    x, y = sparse_stream(1, 200, 30, 4)
    kw = {"sketch": "oja", "m": 4, "alpha": 0.5, "C": 1.0, "sparse": True}
    spec, data, kernel = _block_game(kw, x, y, "logistic")
    fast = kernel.play_block(data, spec)
    spec, data, readable = _block_game(kw, x, y, "logistic")
    slow = OCOPlayer.play_block(readable, data, spec)
    assert np.abs(fast - slow).max() <= 1e-9 * max(1.0, float(np.abs(slow).max()))


def test_dense_oja_kernel_equals_readable_at_larger_d():
    """Dense Oja's kernel (Gram–Schmidt in loops) against the readable loop (LAPACK QR):
    the two orthonormalizations differ by O(ε) a round; measured 1e-13 over 300 rounds."""
    from arena.oco.components import OCOPlayer
    from arena.oco.losses import RoundData

    rng = np.random.default_rng(5)
    n, d = 300, 200
    x = rng.normal(size=(2, n, d)) / np.sqrt(d)
    y = np.where(rng.random((2, n)) < 0.5, -1.0, 1.0)
    spec = GameSpec("classification", d, n, dim=d, domain=Domain(), loss="squared",
                    n_replicates=2)  # fmt: skip
    out = []
    for fast in (True, False):
        p = SON(sketch="oja", m=8, alpha=1.0, C=None, sigma=0.25, eta=0.0)
        p.reset(spec, [np.random.default_rng(r) for r in range(2)])
        data = RoundData(x=x, y=y)
        out.append(p.play_block(data, spec) if fast else OCOPlayer.play_block(p, data, spec))
    assert np.abs(out[0] - out[1]).max() <= 1e-10 * max(1.0, float(np.abs(out[1]).max()))
