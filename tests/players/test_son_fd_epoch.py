"""FD-SON, epoch version (Luo 2016, §4.5.2, Alg. 16 with Alg. 17): literal reference, sketch facts,
exactness below rank m, kernel, sketch_error."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.errors import ConfigError
from arena.oco.domains import Domain
from arena.oco.sketch import SketchError
from arena.players._sketches import fd_epoch_update
from arena.players.son import SON
from arena.spec import GameSpec
from tests.arena.metrics.test_sketch import drive
from tests.players.test_son import dloss, play, stream


def gram_schmidt_rows(r, tol=1e-9):
    """Alg. 17, line 2: ``R = LQ`` by Gram–Schmidt on the rows of R, dropping dependent rows.

    Modified Gram–Schmidt, twice per row ("twice is enough"); a row whose residual is below
    ``tol`` times its norm counts as dependent (r = rank R). Returns ``(L, Q)``, L of shape
    (rows, r), Q of shape (r, d) with orthonormal rows.
    """
    q_rows = []
    for row in r:
        res = row.copy()
        for _ in range(2):
            for q in q_rows:
                res = res - (res @ q) * q
        norm = np.linalg.norm(res)
        if norm > tol * max(np.linalg.norm(row), 1e-300):
            q_rows.append(res / norm)
    q = np.array(q_rows).reshape(len(q_rows), r.shape[1])
    return r @ q.T, q


def compute_eigen_system(d_diag, v, g):
    """Luo 2016, Algorithm 17, line by line: the top-m eigen-system of ``SᵀS``, ``S = [DV; G]``."""
    m = v.shape[0]
    mm = g @ v.T  # 1: M = GVᵀ
    ell, q = gram_schmidt_rows(g - mm @ v)  # 2: G − MV = LQ
    r = q.shape[0]
    c = np.zeros((m + r, m + r))  # 3: C = [[D², 0], [0, 0]] + [Mᵀ; Lᵀ][M L]
    c[:m, :m] = np.diag(d_diag**2)
    ml = np.hstack([mm, ell])
    c += ml.T @ ml
    lam, vec = np.linalg.eigh(c)
    order = np.argsort(lam)[::-1][:m]
    u = vec[:, order].T
    return u @ np.vstack([v, q]), lam[order]  # 4: V' = U[V; Q], Σ


def reference_fd_epoch_son(x, y, m, alpha, c, eta0, sigma=0.0, loss="logistic"):
    """Literal transcription of Luo 2016, Algorithm 11 with the sketch of Algorithms 16–17.

    Internal state τ, D, V, G, H as printed; H by the two Sherman–Morrison steps of line 4 and
    reset at the end of each epoch; ``A^{-1}`` through Woodbury with that H. V starts as the
    first m standard basis vectors (any orthonormal rows are allowed: D = 0 hides them).
    """
    n, d = x.shape
    tau, d_diag, v = 1, np.zeros(m), np.eye(m, d)
    g_buf, h = np.zeros((m, d)), np.eye(2 * m) / alpha
    u = np.zeros(d)
    ws = []

    def sketch():
        return np.vstack([d_diag[:, None] * v, g_buf])

    def a_inv_times(vec):
        s = sketch()
        return (vec - s.T @ (h @ (s @ vec))) / alpha

    for t in range(1, n + 1):
        xt = x[t - 1]
        ux = float(u @ xt)
        shift = math.copysign(max(abs(ux) - c, 0.0), ux)
        ax = a_inv_times(xt)
        w = u - (shift / float(xt @ ax)) * ax if shift != 0.0 else u.copy()
        ws.append(w)
        g = dloss(loss, float(w @ xt), y[t - 1]) * xt
        gh = math.sqrt(sigma + eta0 / math.sqrt(t)) * g
        g_buf[tau - 1] = gh  # 1: insert ĝ into the τ-th row of G
        if tau < m:
            e = np.zeros(2 * m)
            e[m + tau - 1] = 1.0  # 3: the (m + τ)-th basis vector
            q = sketch() @ gh - (gh @ gh) / 2.0 * e
            h = h - np.outer(h @ q, e @ h) / (1.0 + e @ h @ q)  # 4
            h = h - np.outer(h @ e, q @ h) / (1.0 + q @ h @ e)
            tau += 1
        else:
            v, sig = compute_eigen_system(d_diag, v, g_buf)  # 7
            d_diag = np.sqrt(np.maximum(sig - sig[m - 1], 0.0))  # 8
            h = np.diag(np.concatenate([1.0 / (alpha + d_diag**2), np.full(m, 1.0 / alpha)]))
            g_buf = np.zeros((m, d))  # 10
            tau = 1  # 11
        u = w - a_inv_times(g)
    return np.array(ws)


@pytest.mark.parametrize(("m", "loss", "sigma"), [(3, "hinge", 0.1), (2, "logistic", 0.0)])
def test_player_equals_literal_algorithms_16_and_17(m, loss, sigma):
    x, y = stream(11, 60, 8)
    kw = {"m": m, "alpha": 0.5, "C": 1.5, "eta": 0.7, "sigma": sigma}
    ws, _ = play(SON(sketch="fd_epoch", **kw), x, y, loss=loss)
    ref = reference_fd_epoch_son(x, y, m, 0.5, 1.5, 0.7, sigma=sigma, loss=loss)
    # The same quantities by other routes (SVD of S against Alg. 17's Gram–Schmidt and (m+r)
    # eigenproblem): observed ≤ 1e-14 on O(1) weights; 1e-10 leaves room for 60 rounds. (On the
    # squared loss, whose ℓ' = p − y feeds errors back, the same round-off grows to 1e-10 by
    # t = 48 with weights of norm 10: not a test of the transcription.)
    np.testing.assert_allclose(ws, ref, rtol=0, atol=1e-10)
    assert np.abs(ws).max() > 0.1  # the game moved
    # it is not FD (Alg. 13) with the same m: the sketches really differ
    fd, _ = play(SON(sketch="fd", **kw), x, y, loss=loss)
    assert np.abs(fd - ws).max() > 1e-3


def test_equals_full_son_on_gradients_of_rank_at_most_m_minus_1():
    # rank(Ĝ_T) ≤ 3 = m − 1: Σ_mm = 0 at every epoch end, nothing is shrunk and SᵀS = ĜᵀĜ
    # (Luo 2016, remark after Thm 18, with the epoch sketch). 1e-12 on O(1) weights: rounding
    # only (observed ~5e-15).
    x, y = stream(2, 80, 8, rank=3)
    full, _ = play(SON(sketch="full", alpha=0.3, C=1.0, eta=0.5), x, y)
    epoch, _ = play(SON(sketch="fd_epoch", m=4, alpha=0.3, C=1.0, eta=0.5), x, y)
    np.testing.assert_allclose(epoch, full, rtol=0, atol=1e-12)
    # rank 4 = m: the m-th eigenvalue is shrunk away at the epoch ends and the two differ
    x2, y2 = stream(2, 80, 8, rank=4)
    full2, _ = play(SON(sketch="full", alpha=0.3, C=1.0, eta=0.5), x2, y2)
    epoch2, _ = play(SON(sketch="fd_epoch", m=4, alpha=0.3, C=1.0, eta=0.5), x2, y2)
    assert np.max(np.abs(epoch2 - full2)) > 1e-3


@pytest.mark.parametrize(("m", "d"), [(3, 7), (4, 3)])
def test_sketch_invariants_and_frequent_directions_guarantee(m, d):
    """Driven directly with ĝ's of spread scales: H = (αI + SSᵀ)^{-1} (RP's O-SON-3 for the
    epoch sketch), the layout [DV; G], and the FD facts behind Thm 18: ``Δ = ĜᵀĜ − SᵀS ⪰ 0``
    and ``tr Δ ≤ mΩ_k/(m − k)`` for every k < m (Ghashami et al. 2016). ``m = 4 > d = 3``
    covers fewer than m eigenvalues."""
    rng = np.random.default_rng(8)
    alpha = 0.7
    s, h = np.zeros((2 * m, d)), np.eye(2 * m) / alpha
    total = np.zeros((d, d))
    for t in range(1, 41):
        gh = rng.normal(size=d) * np.geomspace(3.0, 0.3, d)
        tau = (t - 1) % m + 1
        s, h = fd_epoch_update(s, h, gh, tau, alpha)
        total += np.outer(gh, gh)
        want = np.linalg.inv(alpha * np.eye(2 * m) + s @ s.T)
        # rank-two Sherman–Morrison steps for ≤ m − 1 rounds from a diagonal H: observed
        # ~1e-16 relative; 1e-12 relative to ‖H‖ = 1/α
        np.testing.assert_allclose(h, want, rtol=0, atol=1e-12 / alpha)
        np.testing.assert_array_equal(s[m + tau :], 0.0)  # the buffer's unused rows
        if tau == m:  # epoch end: [DV'; 0], orthogonal rows, the m-th weight D_mm = 0
            np.testing.assert_array_equal(s[m - 1 :], 0.0)
            gram = s[:m] @ s[:m].T
            np.testing.assert_allclose(gram, np.diag(np.diag(gram)), rtol=0, atol=1e-12)
        delta = total - s.T @ s
        lam_delta = np.linalg.eigvalsh(delta)
        assert lam_delta.min() >= -1e-12 * np.abs(total).max()  # round-off of the sums
        lam = np.sort(np.linalg.eigvalsh(total))[::-1]
        for k in range(m):
            omega = lam[k:].sum()
            assert np.trace(delta) <= m * omega / (m - k) * (1 + 1e-12) + 1e-12
    if m <= d - 1:
        assert np.trace(delta) > 0.1  # the sketch did shrink
    else:  # rank ĜᵀĜ ≤ d ≤ m − 1: exact (Σ_mm = 0 at every epoch end)
        assert np.trace(delta) < 1e-10 * np.trace(total)


def test_sketch_error_is_exact_below_rank_m_and_matches_brute_force():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(20, 2)) @ rng.normal(size=(2, 6))  # rank 2 ≤ m − 1 = 2
    y = np.where(rng.random(20) < 0.5, -1.0, 1.0)
    player = SON(sketch="fd_epoch", m=3, alpha=0.5, C=1.0, eta=0.7)
    got, _, _ = drive(player, SketchError(k=[6]), x, y, chunk=5)
    assert (got < 1e-9).all(), got
    x = rng.normal(size=(24, 6)) * np.array([4.0, 2.0, 1.0, 1.0, 0.5, 0.5])
    y = np.where(rng.random(24) < 0.5, -1.0, 1.0)
    player = SON(sketch="fd_epoch", m=3, alpha=0.5, C=1.0, eta=0.7)
    got, est, exact = drive(player, SketchError(k=[1, 4]), x, y, chunk=4)
    expected = np.stack([(np.abs(est - exact) / exact)[:, :k].max(axis=1) for k in (1, 4)], 1)
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)  # eigvalsh round-off
    assert (est[:, 0] <= exact[:, 0] * (1 + 1e-12)).all()  # FD underestimates: SᵀS ⪯ ĜᵀĜ
    # t = 8: two kept rows (epoch end at t = 6, D_33 = 0) and two buffered ĝ's: rank 4, so the
    # 2m-row sketch estimates λ_4 where FD with m = 3 rows cannot (λ̂_4 = 0, error 1)
    assert est[1, 3] > 0.0 and got[1, 1] < 1.0


def test_refusals():
    spec = GameSpec("classification", 3, 5, dim=3, domain=Domain(), loss="hinge")
    # sparse=True is Sparse FD-SON (tests/players/test_son_fd_sparse.py)
    with pytest.raises(ConfigError, match="alpha"):
        SON(sketch="fd_epoch", m=2, alpha=0.0).reset(spec, [np.random.default_rng(0)])
