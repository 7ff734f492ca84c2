"""Sketched Online Newton (Luo, Agarwal, Cesa-Bianchi & Langford 2016): full, RP, FD, Oja sketch.

FD comes in two versions: per-round (Alg. 13) and epoch (Alg. 16–17, sketch of 2m rows).

The readable sketch updates and inverses are in :mod:`arena.players._sketches`; this module holds
the player and its numba kernels, their twins."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from numba import njit

from arena.base import Footprint, shape_text
from arena.errors import ConfigError
from arena.oco.components import OCOPlayer, game_dim
from arena.oco.losses import (
    EXAMPLE_LOSSES,
    LOSS_CODES,
    Feedback,
    RoundData,
    SparseRows,
    is_sparse,
    kernel_data,
    prediction_loss_scalar,
)
from arena.params import NON_NEGATIVE, POSITIVE, Boolean, Interval, IsNone, OneOf
from arena.players._fd_sparse import SparseFD
from arena.players._sketches import (
    INVERSE_SLACK,
    fd_epoch_update,
    fd_shrink,
    inverse_is_plausible,
    orthonormalize_rows,
    potter_update,
    psd_pseudo_inverse,
    pseudo_inverse_direction,
    rp_inverse_update,
    stable_sketch_inverse,
)
from arena.spec import GameSpec, PlayerTags
from arena.validation import readonly_contiguous

SKETCHES = ("full", "rp", "fd", "oja", "fd_epoch")
"""``full``: ``A_t = αI + Σ_s ĝ_s ĝ_sᵀ`` exactly; ``rp``: Gaussian random projection (Alg. 12);
``fd``: Frequent Directions (Alg. 13); ``oja``: Oja's streaming PCA (Alg. 14); ``fd_epoch``:
Frequent Directions, epoch version (Alg. 16 with Alg. 17; 2m rows, one shrink every m rounds)."""


DIAGONAL_INIT = 0.1
"""``D_1 = 0.1·I`` of the diagonal adaptation (Luo 2016, §4.6.2, footnote 14)."""


SPARSE_SKETCHES = frozenset({"rp", "oja", "fd", "fd_epoch"})
"""Sketches with the sparse implementation of Luo 2016, §4.5 (``sparse=True``)."""


SPARSE_OJA_REBASE = 1e7
"""``max|K|`` above which sparse Oja-SON does the round densely (Vowpal Wabbit's threshold)."""


SPARSE_OJA_SPREAD = 1e4
"""Largest ratio of the diagonal of the Cholesky factor of ``FKFᵀ`` that sparse Oja-SON accepts
(``cond(FKFᵀ)`` about its square, 1e8: half of float64's digits left)."""


BOUNDED_SKETCHES = frozenset({"full", "fd", "fd_epoch"})
"""Sketches with a deterministic regret bound (Luo 2016, Thm 16 and Thm 18; ``fd_epoch``: Thm 18
with the sketch's 2m rows in its logarithmic term, Luo 2016, §4.5.2). RP-SON's Thm 17
holds in expectation / with high probability for a sketch size ``m = Ω((r + ln(T/δ))ε⁻²)`` with
unspecified constants; Oja-SON has no guarantee (Luo 2016, end of §4.4.3)."""


def fd_sketching_term(spectrum: np.ndarray, m: int) -> np.ndarray:
    """Return ``min_{0≤k<m} mΩ_k/(m − k)``, ``Ω_k = Σ_{i>k} λ_i``, per row of ``spectrum``.

    The sketching error of Frequent Directions in Luo 2016, Thm 18 (``Σ_t ρ_t ≤ Ω_k/(m − k)``
    for every k < m, Ghashami et al. 2016), at its best k. ``spectrum``: eigenvalues of
    ``Σ_s ĝ_sĝ_sᵀ``, shape (R, d), any order (negative round-off counts 0); ``k = 0`` gives
    ``Ω_0``, the trace. A spectrum with at most ``m − 1`` nonzero values gives 0 (the sketch is
    exact).

    Examples
    --------
    >>> fd_sketching_term(np.array([[9.0, 1.0, 1.0, 1.0]]), 2).tolist()  # k = 1: 2·3/1
    [6.0]
    >>> fd_sketching_term(np.array([[1.0, 1.0, 1.0, 1.0]]), 2).tolist()  # k = 0: the trace
    [4.0]
    """
    lam = -np.sort(-np.maximum(np.asarray(spectrum, dtype=np.float64), 0.0), axis=1)
    n_rep, d = lam.shape
    width = max(m, d)
    padded = np.zeros((n_rep, width))
    padded[:, :d] = lam
    # Ω_k = Σ_{i>k} λ_i = total − (sum of the top k)
    tails = padded.sum(axis=1, keepdims=True) - np.concatenate(
        [np.zeros((n_rep, 1)), np.cumsum(padded, axis=1)[:, : m - 1]], axis=1
    )
    ks = np.arange(m)
    return (m * np.maximum(tails, 0.0) / (m - ks)).min(axis=1)


def tau(y: float, c: float) -> float:
    """Return ``τ_C(y) = sign(y)·max{|y| − C, 0}`` (Luo 2016, Lemma 11).

    Examples
    --------
    >>> tau(3.0, 1.0), tau(-0.5, 1.0), tau(-2.5, 1.0)
    (2.0, 0.0, -1.5)
    """
    return math.copysign(max(abs(y) - c, 0.0), y) if abs(y) > c else 0.0


def scalar_lipschitz(loss: str, c: float, protocol: str) -> float | None:
    """Return L with ``|ℓ'(z)| ≤ L`` whenever ``|z| ≤ C`` (Luo 2016, Assumption 1), or None.

    Hinge, logistic and absolute losses are 1-Lipschitz; the arena's squared loss ``½(z − y)²``
    has ``|ℓ'| = |z − y| ≤ C + 1`` on ±1 labels (``classification``), and no bound is known for
    real labels (``regression``).

    Examples
    --------
    >>> scalar_lipschitz("squared", 2.0, "classification"), scalar_lipschitz("hinge", 2.0, "x")
    (3.0, 1.0)
    """
    if loss in ("hinge", "logistic", "absolute"):
        return 1.0
    if loss == "squared" and protocol == "classification":
        return c + 1.0
    return None


SKETCH_CODES = {name: code for code, name in enumerate(SKETCHES)}
"""Kernel codes of the sketches (``full`` 0, ``rp`` 1, ``fd`` 2, ``oja`` 3, ``fd_epoch`` 4)."""


UPDATED_INVERSE_SKETCHES = frozenset({"rp", "fd_epoch"})
"""Sketches whose H is kept by Sherman–Morrison steps: a computed ``A^{-1}v`` that fails
:func:`inverse_is_plausible` is recomputed by :func:`stable_sketch_inverse`."""


@njit(cache=True, nogil=True)
def _apply_ainv_row(code, alpha, root, s, h, v, out):
    """Write ``A^{-1}v`` of one replicate into ``out`` (numba twin of ``SON._apply_ainv``)."""
    d = v.shape[0]
    if code == 0:  # A^{-1} = WWᵀ
        tmp = np.zeros(d)
        for i in range(d):  # row by row (cache order); each tmp[k] still sums i ascending
            for k in range(d):
                tmp[k] += root[i, k] * v[i]
        for i in range(d):
            acc = 0.0
            for k in range(d):
                acc += root[i, k] * tmp[k]
            out[i] = acc
        return
    m = s.shape[0]
    sv = np.zeros(m)
    for a in range(m):
        acc = 0.0
        for k in range(d):
            acc += s[a, k] * v[k]
        sv[a] = acc
    hsv = np.zeros(m)
    for a in range(m):
        acc = 0.0
        for b in range(m):
            acc += h[a, b] * sv[b]
        hsv[a] = acc
    for i in range(d):
        acc = 0.0
        for a in range(m):
            acc += s[a, i] * hsv[a]
        out[i] = (v[i] - acc) / alpha
    if code != 1 and code != 4:  # UPDATED_INVERSE_SKETCHES
        return
    q = 0.0
    sq = 0.0
    for i in range(d):
        q += v[i] * out[i]
        sq += out[i] * out[i]
    if q > 0.0 and alpha * sq <= q * (1.0 + INVERSE_SLACK):  # inverse_is_plausible
        return
    _, sv, vt = np.linalg.svd(s, full_matrices=False)  # stable_sketch_inverse
    k_rows = sv.shape[0]
    b = np.empty((k_rows, d))
    coef = np.zeros(k_rows)
    for a in range(k_rows):
        bv = 0.0
        for k in range(d):
            b[a, k] = sv[a] * vt[a, k]
            bv += b[a, k] * v[k]
        coef[a] = bv / (alpha + sv[a] * sv[a])
    for i in range(d):
        acc = 0.0
        for a in range(k_rows):
            acc += b[a, i] * coef[a]
        out[i] = (v[i] - acc) / alpha


@njit(cache=True, nogil=True)
def _sherman_morrison(h, p, q):
    """``H ← (H^{-1} + p qᵀ)^{-1} = H − (Hp)(qᵀH)/(1 + qᵀHp)`` in place (numba)."""
    m = h.shape[0]
    hp = np.zeros(m)
    qh = np.zeros(m)
    for a in range(m):
        acc = 0.0
        acc2 = 0.0
        for b in range(m):
            acc += h[a, b] * p[b]
            acc2 += q[b] * h[b, a]
        hp[a] = acc
        qh[a] = acc2
    acc = 0.0
    for a in range(m):
        acc += q[a] * hp[a]
    den = 1.0 + acc
    for a in range(m):
        for b in range(m):
            h[a, b] -= hp[a] * qh[b] / den


@njit(cache=True, nogil=True)
def _gram_schmidt_rows(v):
    """Modified Gram–Schmidt on the rows of ``v`` in row order, in place (numba twin of
    :func:`orthonormalize_rows`, the QR with a positive diagonal: the same rows up to round-off
    of order ε·cond(v), here ε for Oja's well-conditioned ``V + Γ(Vĝ)ĝᵀ``). O(m²d) in loops
    over contiguous rows: no LAPACK call, so no thread pool to start each round (the Householder
    QR of the d×m transpose was most of dense Oja-SON's round at d = 1000).

    Returns False, with ``v`` partly overwritten, when a row loses more than half of float64's
    digits to the projections (``‖row after‖ < 1e-8·‖row before‖``, a large ĝ swamping V, Luo
    2016, footnote 13): the caller then takes the Householder QR, which stays orthonormal.
    """
    m, d = v.shape
    for a in range(m):
        before = 0.0
        for k in range(d):
            before += v[a, k] * v[a, k]
        for p in range(a):
            acc = 0.0
            for k in range(d):
                acc += v[p, k] * v[a, k]
            for k in range(d):
                v[a, k] -= acc * v[p, k]
        acc = 0.0
        for k in range(d):
            acc += v[a, k] * v[a, k]
        if not (acc > 1e-16 * before and math.isfinite(acc)):
            return False
        norm = math.sqrt(acc)
        for k in range(d):
            v[a, k] /= norm
    return True


@njit(cache=True, nogil=True)
def _sketch_update_row(code, alpha, t, gh, root, s, h, v, lam, rv):
    """SketchUpdate(ĝ) of one replicate in place (numba twin of ``SON._sketch_update``).

    ``rv`` is RP's draw ``r_t`` of this round (unused by the other sketches); ``fd_epoch``
    reads its τ off t.
    """
    d = gh.shape[0]
    if code == 0:  # potter_update of A^{-1} = WWᵀ
        a = np.zeros(d)
        for i in range(d):  # row by row, as in _apply_ainv_row
            for k in range(d):
                a[k] += root[i, k] * gh[i]
        acc = 0.0
        for k in range(d):
            acc += a[k] * a[k]
        total = 1.0 + acc
        gamma = 1.0 / (total + math.sqrt(total))
        ra = np.zeros(d)
        for i in range(d):
            acc = 0.0
            for k in range(d):
                acc += root[i, k] * a[k]
            ra[i] = acc
        for i in range(d):
            for k in range(d):
                root[i, k] -= gamma * (ra[i] * a[k])
        return
    m = s.shape[0]
    if code == 1:  # RP: S += r ĝᵀ, H by two Sherman–Morrison steps (rp_inverse_update)
        gg = 0.0
        for k in range(d):
            gg += gh[k] * gh[k]
        q = np.zeros(m)
        for a in range(m):
            acc = 0.0
            for k in range(d):
                s[a, k] += rv[a] * gh[k]
                acc += s[a, k] * gh[k]
            q[a] = acc - (gg / 2.0) * rv[a]
        _sherman_morrison(h, q, rv)
        _sherman_morrison(h, rv, q)
        return
    if code == 2:  # Frequent Directions (fd_shrink)
        for k in range(d):
            s[m - 1, k] = gh[k]
        lam_, u = np.linalg.eigh(s @ s.T)
        for b in range(m):
            h[:, b] = 0.0
        top = np.zeros(m)
        rho = max(lam_[0], 0.0)  # eigh is ascending: the smallest first
        rows = u.T @ s
        for a in range(m):
            src = m - 1 - a  # descending order, as fd_shrink
            lam_a = lam_[src]
            kept = max(lam_a - rho, 0.0)
            scale = math.sqrt(kept / lam_a) if lam_a > 0.0 else 0.0
            if a == m - 1:
                scale = 0.0
                kept = 0.0
            for k in range(d):
                s[a, k] = scale * rows[src, k]
            top[a] = kept
        for a in range(m):
            h[a, a] = 1.0 / (alpha + top[a])
        return
    if code == 4:  # Frequent Directions, epoch version (fd_epoch_update); S has 2m rows
        half = m // 2
        tau_ = (t - 1) % half + 1
        row = half + tau_ - 1
        for k in range(d):
            s[row, k] = gh[k]
        if tau_ < half:
            gg = 0.0
            for k in range(d):
                gg += gh[k] * gh[k]
            q = np.zeros(m)
            e = np.zeros(m)
            e[row] = 1.0
            for a in range(m):
                acc = 0.0
                for k in range(d):
                    acc += s[a, k] * gh[k]
                q[a] = acc
            q[row] -= gg / 2.0
            _sherman_morrison(h, q, e)
            _sherman_morrison(h, e, q)
            return
        lam_, u = np.linalg.eigh(s @ s.T)  # ascending: Σ_ii is lam_[m - 1 - i]
        rho = max(lam_[m - half], 0.0)  # Σ_mm
        rows = u.T @ s
        for a in range(m):
            src = m - 1 - a
            kept = 0.0
            scale = 0.0
            if a < half - 1 and lam_[src] > 0.0:
                kept = max(lam_[src] - rho, 0.0)
                scale = math.sqrt(kept / lam_[src])
            for k in range(d):
                s[a, k] = scale * rows[src, k]
            for b in range(m):
                h[a, b] = 0.0
            h[a, a] = 1.0 / (alpha + kept)
        return
    gamma = 1.0 / t  # Oja
    vg = np.zeros(m)
    for a in range(m):
        acc = 0.0
        for k in range(d):
            acc += v[a, k] * gh[k]
        vg[a] = acc
    raw = np.empty((m, d))  # V + Γ(Vĝ)ĝᵀ
    for a in range(m):
        lam[a] = (1.0 - gamma) * lam[a] + gamma * vg[a] * vg[a]
        for k in range(d):
            raw[a, k] = v[a, k] + gamma * (vg[a] * gh[k])
            v[a, k] = raw[a, k]
    if not _gram_schmidt_rows(v):  # orthonormalize_rows; LAPACK only when ill-conditioned
        q_, r_ = np.linalg.qr(raw.T)
        for a in range(m):
            sign = -1.0 if r_[a, a] < 0.0 else 1.0
            for k in range(d):
                v[a, k] = q_[k, a] * sign
    for a in range(m):
        energy = t * lam[a]
        root = math.sqrt(energy)
        for k in range(d):
            s[a, k] = root * v[a, k]
        for b in range(m):
            h[a, b] = 0.0
        h[a, a] = 1.0 / (alpha + energy)


@njit(cache=True, nogil=True)
def _son_play_block(
    loss_code, x, y, code, alpha, c, lip, eta0, sig, t0, eta_sum, diagonal,
    u, dsum, root, s, h, v, lam, draws, gsq, ghsq, out,
):  # fmt: skip
    """Play a block of dense SON rounds (numba twin of ``SON.predict``/``SON.update``).

    ``out[r, j]`` is ``w_t`` of round ``t = t0 + j + 1``; the state arrays advance in place;
    ``draws[r, j]`` is RP's ``r_t``; ``lip`` the L of ``SON._assumed_gradient`` (inf: none).
    Returns ``eta_sum + Σ_j η_t`` (the running ``Σ_t η_t``).
    """
    n_rep, n, d = out.shape
    scale = np.ones(d)
    xt = np.empty(d)
    wt = np.empty(d)
    w = np.empty(d)
    ax = np.empty(d)
    grad = np.empty(d)
    gt = np.empty(d)
    gh = np.empty(d)
    step = np.empty(d)
    rv = np.zeros(draws.shape[2])
    for r in range(n_rep):
        for j in range(n):
            t = t0 + j + 1
            if diagonal:
                for i in range(d):
                    scale[i] = 1.0 / math.sqrt(dsum[r, i])
            ux = 0.0
            for i in range(d):
                xt[i] = x[r, j, i] * scale[i]
                wt[i] = u[r, i]
                ux += wt[i] * xt[i]
            if math.isfinite(c) and abs(ux) > c:  # the projection of Lemma 11
                shift = math.copysign(abs(ux) - c, ux)
                _apply_ainv_row(code, alpha, root[r], s[r], h[r], xt, ax)
                den = 0.0
                for i in range(d):
                    den += xt[i] * ax[i]
                if not den > 0.0:  # as SON._project: the metric of A_0 = αI
                    den = 0.0
                    for i in range(d):
                        ax[i] = xt[i]
                        den += xt[i] * ax[i]
                if den > 0.0:
                    for i in range(d):
                        wt[i] -= (shift / den) * ax[i]
            for i in range(d):
                w[i] = wt[i] * scale[i]
                out[r, j, i] = w[i]
            p = 0.0
            for i in range(d):
                p += x[r, j, i] * w[i]
            _, dl = prediction_loss_scalar(loss_code, p, y[r, j])
            if abs(dl) > lip:  # SON._assumed_gradient
                dl = math.copysign(lip, dl)
            for i in range(d):
                grad[i] = dl * x[r, j, i]
            sketch_scale = math.sqrt(sig + eta0 / math.sqrt(t))
            gg = 0.0
            for i in range(d):
                wt[i] = w[i] / scale[i]  # as update() recovers w̃ from the played w
                gt[i] = grad[i] * scale[i]
                gh[i] = sketch_scale * gt[i]
                gg += gt[i] * gt[i]
            gsq[r] += gg
            hh = 0.0
            for i in range(d):
                hh += gh[i] * gh[i]
            ghsq[r] += hh
            if code == 1:
                for a in range(rv.shape[0]):
                    rv[a] = draws[r, j, a]
            _sketch_update_row(code, alpha, t, gh, root[r], s[r], h[r], v[r], lam[r], rv)
            _apply_ainv_row(code, alpha, root[r], s[r], h[r], gt, step)
            for i in range(d):
                u[r, i] = wt[i] - step[i]
                if diagonal:
                    dsum[r, i] += grad[i] * grad[i]
    for j in range(n):
        eta_sum += eta0 / math.sqrt(t0 + j + 1)
    return eta_sum


@njit(cache=True, nogil=True)
def _lower_cholesky(a, lower):
    """Cholesky ``a = LLᵀ`` into ``lower`` (m×m, numba); False when ``a`` is not numerically
    positive definite (a pivot ≤ 0 or not finite), where ``np.linalg.cholesky`` raises."""
    m = a.shape[0]
    for i in range(m):
        for j in range(m):
            lower[i, j] = 0.0
    for j in range(m):
        acc = a[j, j]
        for p in range(j):
            acc -= lower[j, p] * lower[j, p]
        if not (acc > 0.0 and math.isfinite(acc)):
            return False
        root = math.sqrt(acc)
        lower[j, j] = root
        for i in range(j + 1, m):
            acc = a[i, j]
            for p in range(j):
                acc -= lower[i, p] * lower[j, p]
            lower[i, j] = acc / root
    return True


@njit(cache=True, nogil=True)
def _forward_solve(lower, rhs, out):
    """``out = L^{-1} rhs`` for a lower-triangular L (m×m) and a vector rhs (numba)."""
    m = lower.shape[0]
    for i in range(m):
        acc = rhs[i]
        for p in range(i):
            acc -= lower[i, p] * out[p]
        out[i] = acc / lower[i, i]


@njit(cache=True, nogil=True)
def _basis_dot(oja, basis, zt, r, indices, lo, s, vec, out):
    """``out = B[:, support] @ vec`` of replicate r: B = Z read from its transpose ``zt``
    (d, m) rows (Oja: a feature's m entries are adjacent), or S (m, d) (RP)."""
    m = out.shape[0]
    for a in range(m):
        out[a] = 0.0
    if oja:
        for q in range(s):
            i = indices[lo + q]
            for a in range(m):
                out[a] += zt[r, i, a] * vec[q]
    else:
        for a in range(m):
            acc = 0.0
            for q in range(s):
                acc += basis[r, a, indices[lo + q]] * vec[q]
            out[a] = acc


@njit(cache=True, nogil=True)
def _son_sparse_block(
    loss_code, indptr, indices, values, y, oja, alpha, c, lip, eta0, sig, t0, diagonal,
    rebase, spread, u, dsum, b, basis, zt, h, f, k, lam, draws, gsq, ghsq, pred, out, points,
):  # fmt: skip
    """Play a block of Sparse RP-SON / Oja-SON rounds on CSR rows (row ``r·n + j``), numba twin
    of :meth:`SON.predict` / :meth:`SON.update` with ``sparse=True`` (Luo 2016, Alg. 15, 22–23).

    O(m·s + m²) a round for RP and O(m·s + m³) for Oja (s the row's nonzeros): the prediction
    ``⟨w_t, x_t⟩ = ⟨ū, x⟩ − c‖x‖² + ⟨b + c·dir, Bx⟩`` is read off the representation
    ``w_t = ū − cx + Bᵀ(b + c·dir)`` (B = ``basis``: S for RP, Z for Oja) on x's support, and
    written to ``pred[r, j]``. With ``points`` the point ``w_t`` itself is also written to
    ``out[r, j]`` (O(md), what the protocol records today); Oja's rebase round (the dense
    round of :meth:`SON._oja_sparse_update`) is O(m²d). ``basis`` is RP's S (R, m, d), ``zt``
    Oja's Zᵀ (R, d, m), ``h`` RP's H, ``f``, ``k``, ``lam`` Oja's F, K = ZZᵀ and Λ;
    ``draws[r, j]`` RP's ``r_t``.
    """
    n_rep, d = u.shape
    n = pred.shape[1]
    m = b.shape[1]
    width = 1
    for kk in range(n_rep * n):
        width = max(width, indptr[kk + 1] - indptr[kk])
    xv = np.empty(width)
    gv = np.empty(width)
    ghv = np.empty(width)
    raw = np.empty(width)
    bx = np.empty(m)
    xh = np.empty(m)
    dxh = np.empty(m)
    direction = np.empty(m)
    coefs = np.empty(m)
    zg = np.empty(m)
    fzg = np.empty(m)
    delta = np.empty(m)
    bg = np.empty(m)
    tmp = np.empty(m)
    fkf = np.empty((m, m))
    kf = np.empty((m, m))
    lower = np.empty((m, m))
    fnew = np.empty((m, m))
    col = np.empty(m)
    for r in range(n_rep):
        br = b[r]
        for j in range(n):
            t = t0 + j + 1
            done = t - 1
            lo = indptr[r * n + j]
            s = indptr[r * n + j + 1] - lo
            inner = 0.0
            xx = 0.0
            for q in range(s):
                i = indices[lo + q]
                xv[q] = (
                    values[lo + q] * (1.0 / math.sqrt(dsum[r, i])) if diagonal else values[lo + q]
                )
                inner += u[r, i] * xv[q]
                xx += xv[q] * xv[q]
            _basis_dot(oja, basis, zt, r, indices, lo, s, xv, bx)  # Bx on the support
            for a in range(m):
                inner += br[a] * bx[a]
            # the projection (Alg. 15 / 22, lines 3–5)
            if oja:
                for a in range(m):
                    acc = 0.0
                    for p in range(a + 1):  # F is lower triangular
                        acc += f[r, a, p] * bx[p]
                    xh[a] = acc
                    energy = done * lam[r, a]
                    dxh[a] = energy / (alpha + energy) * acc
                for a in range(m):
                    acc = 0.0
                    for p in range(a, m):
                        acc += f[r, p, a] * dxh[p]
                    direction[a] = acc
            else:
                for a in range(m):
                    xh[a] = bx[a]
                for a in range(m):
                    acc = 0.0
                    for p in range(m):
                        acc += h[r, a, p] * xh[p]
                    dxh[a] = acc
                    direction[a] = acc
            coef = 0.0
            if abs(inner) > c:
                shift = math.copysign(abs(inner) - c, inner)
                acc = 0.0
                for a in range(m):
                    acc += xh[a] * dxh[a]
                den = xx - acc
                if den > 0.0:
                    coef = shift / den
            p_t = inner - coef * xx
            for a in range(m):
                coefs[a] = br[a] + coef * direction[a]
                p_t += coef * direction[a] * bx[a]
            pred[r, j] = p_t
            if points:
                for i in range(d):
                    acc = u[r, i]
                    if oja:
                        for a in range(m):
                            acc += zt[r, i, a] * coefs[a]
                    else:
                        for a in range(m):
                            acc += basis[r, a, i] * coefs[a]
                    out[r, j, i] = acc
                for q in range(s):
                    out[r, j, indices[lo + q]] -= coef * xv[q]
                if diagonal:
                    for i in range(d):
                        out[r, j, i] *= 1.0 / math.sqrt(dsum[r, i])
            _, dl = prediction_loss_scalar(loss_code, p_t, y[r, j])
            if abs(dl) > lip:
                dl = math.copysign(lip, dl)
            # the update (Alg. 15 lines 6–9; Alg. 22 lines 7–9 with Alg. 23)
            sketch_scale = math.sqrt(sig + eta0 / math.sqrt(t))
            gg = 0.0
            hh = 0.0
            for q in range(s):
                i = indices[lo + q]
                raw[q] = dl * values[lo + q]
                gv[q] = raw[q] * (1.0 / math.sqrt(dsum[r, i])) if diagonal else raw[q]
                ghv[q] = sketch_scale * gv[q]
                gg += gv[q] * gv[q]
                hh += ghv[q] * ghv[q]
                u[r, i] -= coef * xv[q]
            for a in range(m):
                br[a] += coef * direction[a]
            gsq[r] += gg
            ghsq[r] += hh
            if not oja:
                rv = draws[r, j]
                rb = 0.0
                for a in range(m):
                    rb += rv[a] * br[a]
                    acc = 0.0
                    for q in range(s):
                        i = indices[lo + q]
                        basis[r, a, i] += rv[a] * ghv[q]
                        acc += basis[r, a, i] * ghv[q]
                    zg[a] = acc - (hh / 2.0) * rv[a]
                _sherman_morrison(h[r], zg, rv)
                _sherman_morrison(h[r], rv, zg)
                for q in range(s):
                    u[r, indices[lo + q]] -= rb * ghv[q] + gv[q] / alpha
                _basis_dot(oja, basis, zt, r, indices, lo, s, gv, bg)
                for a in range(m):
                    acc = 0.0
                    for p in range(m):
                        acc += h[r, a, p] * bg[p]
                    br[a] += acc / alpha
            else:
                gamma = 1.0 / t
                _basis_dot(oja, basis, zt, r, indices, lo, s, ghv, zg)
                for a in range(m):
                    acc = 0.0
                    for p in range(a + 1):
                        acc += f[r, a, p] * zg[p]
                    fzg[a] = acc
                    lam[r, a] = (1.0 - gamma) * lam[r, a] + gamma * acc * acc
                    tmp[a] = gamma * acc
                _forward_solve(f[r], tmp, delta)  # δ = F^{-1}ΓFZĝ (F lower triangular)
                db = 0.0
                for a in range(m):
                    db += delta[a] * br[a]
                kmax = 0.0
                for a in range(m):
                    for p in range(m):
                        k[r, a, p] += delta[a] * zg[p] + zg[a] * delta[p] + hh * delta[a] * delta[p]
                        kmax = max(kmax, abs(k[r, a, p])) if math.isfinite(k[r, a, p]) else math.inf
                for q in range(s):
                    i = indices[lo + q]
                    for a in range(m):
                        zt[r, i, a] += delta[a] * ghv[q]
                for q in range(s):
                    u[r, indices[lo + q]] -= gv[q] / alpha + db * ghv[q]
                ok = kmax <= rebase
                if ok:  # FKFᵀ = LLᵀ; F ← L^{-1}F (k_gram_schmidt)
                    for a in range(m):
                        for p in range(m):
                            acc = 0.0
                            for e in range(p + 1):
                                acc += k[r, a, e] * f[r, p, e]
                            kf[a, p] = acc
                    for a in range(m):
                        for p in range(a + 1):  # the lower half: all the Cholesky reads
                            acc = 0.0
                            for e in range(a + 1):
                                acc += f[r, a, e] * kf[e, p]
                            fkf[a, p] = acc
                    ok = _lower_cholesky(fkf, lower)
                    if ok:
                        lo_d = math.inf
                        hi_d = 0.0
                        for a in range(m):
                            lo_d = min(lo_d, lower[a, a])
                            hi_d = max(hi_d, lower[a, a])
                        ok = lo_d >= hi_d / spread
                if ok:
                    for p in range(m):
                        for a in range(m):
                            tmp[a] = f[r, a, p]
                        _forward_solve(lower, tmp, col)
                        for a in range(m):
                            fnew[a, p] = col[a]
                    for a in range(m):
                        for p in range(m):
                            f[r, a, p] = fnew[a, p] if p <= a else 0.0
                else:  # the dense round: ū ← ū + Zᵀb, Z ← GramSchmidt(FZ), F ← I, b ← 0
                    for i in range(d):
                        acc = 0.0
                        for a in range(m):
                            acc += zt[r, i, a] * br[a]
                        u[r, i] += acc
                    q_, r_ = np.linalg.qr(
                        np.ascontiguousarray(zt[r]) @ np.ascontiguousarray(f[r]).T
                    )
                    for a in range(m):
                        sign = -1.0 if r_[a, a] < 0.0 else 1.0
                        for i in range(d):
                            zt[r, i, a] = q_[i, a] * sign
                    kz = np.ascontiguousarray(zt[r]).T @ np.ascontiguousarray(zt[r])
                    for a in range(m):
                        br[a] = 0.0
                        for p in range(m):
                            k[r, a, p] = kz[a, p]
                            f[r, a, p] = 1.0 if a == p else 0.0
                _basis_dot(oja, basis, zt, r, indices, lo, s, gv, bg)
                for a in range(m):
                    acc = 0.0
                    for p in range(a + 1):
                        acc += f[r, a, p] * bg[p]
                    energy = t * lam[r, a]
                    tmp[a] = energy / (alpha + energy) * acc
                for a in range(m):
                    acc = 0.0
                    for p in range(a, m):
                        acc += f[r, p, a] * tmp[p]
                    br[a] += acc / alpha
            if diagonal:
                for q in range(s):
                    dsum[r, indices[lo + q]] += raw[q] * raw[q]


class SON(OCOPlayer):
    """Sketched Online Newton: ONS with the example-wise projection ``K_t = {w : |⟨w, x_t⟩| ≤ C}``.

    Luo 2016, §4.3–4.4, Algorithm 11 (= Luo, Agarwal, Cesa-Bianchi & Langford 2016). With
    ``u_1 = 0``, ``g_t = ℓ'_t(⟨w_t, x_t⟩) x_t`` and the to-sketch vector
    ``ĝ_t = √(σ_t + η_t) g_t``, round t:

    1. (projection, Lemma 11)
       ``w_t = u_t − τ_C(⟨u_t, x_t⟩)/(x_tᵀA_{t−1}^{-1}x_t) · A_{t−1}^{-1}x_t``, the
       ``A_{t−1}``-projection of ``u_t`` onto ``K_t``, ``τ_C(y) = sign(y) max{|y| − C, 0}``;
    2. predict ``⟨w_t, x_t⟩``, receive ``g_t``; ``A_t = αI + S_tᵀS_t`` with the sketch updated by
       ``ĝ_t``;
    3. ``u_{t+1} = w_t − A_t^{-1} g_t``.

    ``A_t^{-1} = (1/α)(I − S_tᵀH_tS_t)``, ``H_t = (αI_m + S_tS_tᵀ)^{-1}`` (Woodbury). The sketch:

    * ``full``: ``S_tᵀS_t = Σ_{s≤t} ĝ_sĝ_sᵀ`` exactly (Eq. 4.4); ``A_t^{-1} = W_tW_tᵀ`` kept by
      Potter's square-root form of the Sherman–Morrison update (:func:`potter_update`), O(d²)
      per round;
    * ``rp`` (Alg. 12): ``S_t = S_{t−1} + r_tĝ_tᵀ`` with ``r_t ~ N(0, I_m/m)`` from the replicate's
      generator, ``H`` by two Sherman–Morrison steps with ``q = S_tĝ − (‖ĝ‖²/2) r_t``, O(md);
      a computed ``A^{-1}v`` that no ``A ⪰ αI`` can give (:func:`inverse_is_plausible`) is
      recomputed from the SVD of ``S_t`` (:func:`stable_sketch_inverse`, O(m²d));
    * ``fd`` (Alg. 13): Frequent Directions (:func:`fd_shrink`), O(m²d + m³) here (the thesis's
      O(md) needs rank-one SVD updates);
    * ``fd_epoch`` (Luo 2016, §4.5.2, Alg. 16 with Alg. 17; Ghashami et al. 2016's fast
      variant): Frequent Directions with a sketch ``S = [DV; G]`` of **2m rows**, m from the
      last eigendecomposition and a buffer G for the epoch's ĝ's; within an epoch H gets RP's
      two Sherman–Morrison steps with ``r = e_{m+τ}`` (O(md + m²) per round), and every m-th
      round (τ = m) the 2m×d sketch is decomposed and shrunk by its m-th eigenvalue
      (:func:`fd_epoch_update`, O(m²d) once per epoch, O(md) amortized). ``m`` is the epoch
      length and half the sketch's rows: ``fd_epoch`` with m has the guarantee of ``fd`` with m
      (below) at the price of a sketch twice as large, and is exact (equal to ``full``) while
      ``rank(Σ ĝĝᵀ) ≤ m − 1``;
    * ``oja`` (Alg. 14): ``Γ_t = I/t``; ``Λ ← (1 − 1/t)Λ + (1/t)(Vĝ)²``,
      ``V ← GramSchmidt(V + (1/t)(Vĝ)ĝᵀ)`` (rows, in order), ``S = (tΛ)^{1/2}V``,
      ``H = diag(1/(α + tΛ))``; ``V_0`` the first m standard basis vectors (any orthonormal rows
      are allowed; this one keeps the player deterministic). O(m²d).

    Parameters
    ----------
    sketch : {"full", "rp", "fd", "oja", "fd_epoch"}
        How ``Σ ĝ_sĝ_sᵀ`` is approximated.
    m : int
        Sketch size (ignored by ``full``; ``oja`` needs ``m ≤ d``); for ``fd_epoch`` the epoch
        length, the sketch having 2m rows (at most 2m − 1 of them nonzero).
    alpha : float
        ``α ≥ 0`` of ``A_0 = αI`` (1/α is the step size of the first-order part). ``α = 0``
        (``full`` only): the pseudo-inverse variant of Luo 2016, Appendix C.2,
        ``u_{t+1} = w_t − A_t^†g_t`` with the projection of Lemma 15 (App. C.1) in the
        ``A_{t−1}`` seminorm (:func:`pseudo_inverse_direction`); ``A_t`` is kept as a matrix and
        pseudo-inverted each round, O(d³), with the readable per-round loop (no kernel). No regret
        bound is evaluated for it.
    C : float or None
        Bound on the predictions, ``K_t = {w : |⟨w, x_t⟩| ≤ C}`` (Eq. 4.1). None: no projection
        (as in Vowpal Wabbit's Oja-SON) and no bound.
    sigma : float
        Curvature ``σ_t ≡ σ ≥ 0`` of Assumption 2 (0: plain convexity).
    eta : float or None
        ``η_t = η/√t`` (non-increasing, as Theorems 16 and 18 need). None: the thesis's tuning
        ``η = √d/(CL)`` (Luo 2016, after Thm 16), with L the loss's scalar Lipschitz constant on
        ``|z| ≤ C`` (:func:`scalar_lipschitz`); needs C and a known L. Use 0 with ``σ > 0`` for
        the logarithmic-regret regime (4.5).
    diagonal : bool
        Diagonal adaptation (Luo 2016, §4.6.2): the algorithm runs on ``x̃_t = D_t^{-1/2}x_t`` with
        ``D_t = 0.1·I + diag(Σ_{s<t} g_s g_sᵀ)`` (the arena's gradients, footnote 14) and plays
        ``w_t = D_t^{-1/2}w̃_t``, so that ``⟨w_t, x_t⟩ = ⟨w̃_t, x̃_t⟩``; its gradient is
        ``g̃_t = D_t^{-1/2}g_t``. This makes the player (nearly) invariant to per-coordinate scaling
        whatever the sketch; the thesis proves no bound for it, and none is evaluated.
    sparse : bool
        ``rp``, ``oja``, ``fd`` and ``fd_epoch`` (not ``full``): the sparse implementations of
        Luo 2016, §4.5 — Sparse RP-SON (Algorithm 15, ``w = ū + Sᵀb``, O(m² + ms) per round
        for s nonzeros), Sparse Oja-SON (Algorithms 22–23, ``w = ū + Zᵀb`` with ``V = FZ``,
        O(m³ + ms); line 3 of Alg. 23 needs ``F^{-1}`` where Eq. 4.6 prints ``A^{-1}``) and
        Sparse FD-SON (Algorithms 18–21, ``w = ū + Zᵀb``, ``S = [DFZ; G]``;
        :class:`~arena.players._fd_sparse.SparseFD`). The prediction ``⟨w_t, x_t⟩`` is read off
        the representation on x's support (:meth:`play_predictions`); forming ``w_t`` itself
        costs O(md) more (:meth:`play_block`, :meth:`current_point`). On a sparse stream
        (:class:`~arena.oco.losses.SparseRows`; the player is tagged ``sparse_input``) the rows'
        support is read from the CSR arrays and the gradient formed on it, never densified; the
        dense sketches densify the rows. Same predictions as the dense
        version (same draws) to round-off on well-posed streams; where a huge ĝ swamps V
        (unbounded predictions, no C) both are ill-conditioned and can part.

        Sparse FD-SON serves both ``fd`` (Alg. 13: a buffer G of one row, a decomposition every
        round) and ``fd_epoch`` (Alg. 16–17, which Algs 18–21 sparsify: a buffer of m rows).
        As printed, Algs 18–21 cannot run; our repair of the three defects: (1) Alg. 19, line 9
        inverts N1 of Alg. 20, which is singular (rank 0 at the first epoch, ≤ m − 1 after,
        because the m-th sketch row has weight ``D_mm = 0``): only the rows of F' with
        ``D'_ii > 0`` are prescribed (``N1``'s), the others (weight 0) complete them
        orthonormally, ``Δ = F'^{-1}[N2; 0]``; (2) Alg. 18, line 10 reads G after Alg. 19,
        line 13 reset it: ``ū ← ū − Gᵀ(Δᵀb)`` needs the buffer before the reset; (3) the
        factored form drifts, and a direction outside span(Z) entering the sketch makes N1
        ill-conditioned: the state **re-materializes** (``ū ← ū + Zᵀb``, ``b ← 0``,
        ``Z ← [V'; 0]``, ``F ← I``, O(m²·|support seen|) ≤ O(m²d)) whenever F' or Z leave
        the bound :data:`~arena.players._fd_sparse.SPARSE_FD_COND` and at least every
        :data:`~arena.players._fd_sparse.SPARSE_FD_PERIOD` decompositions. Per round
        O(ms + m²), plus O(msB + (m + B)³) per decomposition (B the buffer), plus the
        re-materializations: the thesis's O(m² + ms) average (Thm 19) holds only while new
        directions seldom enter; on random sparse rows at high d nearly every decomposition
        re-materializes (``benchmarks/README.md``). Equal to dense FD-SON to 1e-10 relative
        over 5000 rounds where dense FD-SON is itself reproducible (its two implementations
        agree), see ``tests/players/test_son_fd_sparse.py``. Readable numpy, no kernel.

    Notes
    -----
    Protocols: ``classification`` and ``regression`` only. The projection needs the example
    ``x_t`` before the prediction and the gradient must be ``ℓ'(⟨w, x_t⟩)x_t``; in plain ``oco``
    there is no ``x_t``, so ``K_t`` is undefined and the player refuses the game (as it refuses a
    game with a strongly convex term ``σ_game > 0``, whose gradient is not of that form).

    Guarantees, for every ``w ∈ K = ∩_t K_t`` on every loss sequence (adaptive adversaries
    included) satisfying Assumptions 1 (``|ℓ'_t(z)| ≤ L`` on ``|z| ≤ C``) and 2 (curvature σ):

    * full (Luo 2016, Thm 16):
      ``R_T(w) ≤ (α/2)‖w‖² + 2(CL)² Σ_t η_t + d/(2(σ + η_T)) ln(1 + (σ + η_T) Σ_t ‖g_t‖²/(dα))``;
    * fd (Luo 2016, Thm 18, taken at ``k = 0`` where ``Ω_0 = tr(G_TᵀG_T) = Σ_t ‖ĝ_t‖²``):
      ``R_T(w) ≤ (α/2)‖w‖² + m/(2(σ + η_T)) ln(1 + tr(S_TᵀS_T)/(mα))
      + Σ_t ‖ĝ_t‖²/(2(σ + η_T)α) + 2(CL)² Σ_t η_t``; given the spectrum of ``G_TᵀG_T`` (which
      the player does not keep), the ``Σ_t ‖ĝ_t‖²`` term becomes its best
      ``min_{k<m} mΩ_k/(m − k)`` (:func:`fd_sketching_term`);
    * fd_epoch (Luo 2016, §4.5.2: "the exact same guarantee with the only price of doubling the
      sketch size"): the fd bound with ``2m`` for m in the logarithmic term,
      ``m ln(1 + tr/(mα))`` ↦ ``2m ln(1 + tr(S_TᵀS_T)/(2mα))`` (``rank S_T ≤ 2m − 1``). The
      ``Ω_0`` term is unchanged: the shrink at the end of an epoch removes ``Δ ⪰ 0`` with
      ``tr Δ ≥ mρ`` and ``Δ ⪯ ρI``, so Ghashami et al. 2016's argument gives
      ``Σ tr Δ ≤ mΩ_k/(m − k)`` and ``Σ⟨A_t^{-1}, Δ_t⟩ ≤ Σ tr Δ_t/α``;
    * rp: Thm 17 bounds the regret only in expectation / with probability 1 − δ for a sketch
      size with unspecified constants: no bound is evaluated;
    * oja: no regret guarantee is known (the thesis gives none).

    :meth:`regret_bound` evaluates these for a comparator norm ``‖w‖``. :meth:`bounds` declares
    none: the arena's ``regret`` compares with the best point of the whole domain, which need not
    lie in ``K`` (the theorems' comparator set). The metric ``invariant_regret``
    (:class:`arena.oco.sketch.InvariantRegret`) measures the regret to the best comparator of
    ``K`` and logs :meth:`invariant_regret_bound` at that comparator's norm beside it.

    Invariance (Luo 2016, §4.3.2): the predictions are unchanged when every ``x_t`` is replaced by
    ``Mx_t`` for ``M = sQ`` (Q orthogonal) and α by ``s²α`` (``A'_t = MA_tMᵀ``; full, rp with the
    same draws, fd). For other invertible M, ``αI`` is the ℓ2 part that breaks exact invariance
    (the ``(α/2)‖w‖²`` term of the bounds): feeding ``Mx_t`` with ``A_0 = αMMᵀ`` instead would
    restore it. The α = 0 variant, which Luo 2016, App. C.2 calls truly invariant, is invariant
    to ``M = sQ`` with no change of α, but NOT exactly invariant to a general invertible M while
    ``A_t`` is rank deficient: with ``A' = MAMᵀ``, ``(MAMᵀ)^† ≠ M^{-T}A^†M^{-1}`` for singular A
    and non-orthogonal M, and the orthogonal projector ``I − A^†A`` of Lemma 15's second case
    (one of many minimizers, as the lemma notes) is not covariant either, so the predictions
    part within the first rounds on generic data (tested at d = 6). Exact invariance needs a
    covariant full-rank ``A_0`` (such as ``A_0 = αMMᵀ`` above).

    Numerics: the player is guarded for extreme scales (the ``ill_conditioned`` stream at
    κ = 10⁶ with features scaled by 10^±6, 10⁶ rounds, stay finite): ``full`` keeps
    ``A_t^{-1} = WWᵀ`` (Potter), which stays positive semidefinite where the plain
    Sherman–Morrison update of ``A^{-1}`` loses definiteness once ``‖ĝ‖²/α`` nears 1/ε; RP falls
    back to an SVD of S (above); a projection whose ``xᵀA^{-1}x`` is not positive projects in
    ``A_0``'s metric instead; and ``ℓ'`` is clipped to ``[−L, L]`` (:meth:`_assumed_gradient`),
    a no-op in exact arithmetic. With α far too small for the features (10⁶ with α = 1) the
    sketches' unsketched directions take steps of ``1/α``, ``⟨w_t, x_t⟩`` is then computed with
    an error larger than C and FD/RP/Oja predict at chance; ``α ↦ s²α`` (the invariant tuning)
    or ``diagonal=True`` avoids that.

    Speed: :meth:`play_block` (oblivious adversaries) runs the dense sketches (``fd_epoch``
    included) in a numba kernel
    (:func:`_son_play_block`) that reproduces :meth:`predict`/:meth:`update` to ~1e-14 (dense
    Oja orthonormalizes by Gram–Schmidt in loops, :func:`_gram_schmidt_rows`, no LAPACK call a
    round), and sparse RP/Oja in :func:`_son_sparse_block` (to ~1e-11 relative: the
    prediction is summed from the representation, see the tests); α = 0 and Sparse FD-SON use
    the readable loop (Sparse FD-SON's fast path is :meth:`play_predictions`).
    A game runs with one BLAS thread unless ``ARENA_BLAS_THREADS`` says otherwise
    (:func:`arena.resources.blas_threads`).

    Examples
    --------
    >>> from arena.oco.domains import Domain
    >>> from arena.oco.losses import RoundData, feedback
    >>> spec = GameSpec("classification", 2, 5, dim=2, domain=Domain(), loss="hinge")
    >>> p = SON(sketch="full", alpha=1.0, C=1.0, eta=1.0)
    >>> p.reset(spec, [np.random.default_rng(0)])
    >>> rd = RoundData(x=np.array([[1.0, 0.0]]), y=np.array([1.0]))
    >>> p.update(feedback("hinge", 0.0, p.predict(rd.x), rd))
    >>> np.round(p.predict(rd.x), 12).tolist()
    [[0.5, 0.0]]

    References
    ----------
    Luo 2016, §4.2–4.5, Algorithms 11–14, 16–17, Lemmas 11–12, Theorems 16–18; Luo, Agarwal,
    Cesa-Bianchi & Langford (2016), "Efficient second order online learning by sketching",
    NIPS 29; Ghashami, Liberty, Phillips & Woodruff (2016), "Frequent Directions: simple and
    deterministic matrix sketching", SIAM J. Comput. 45(5).
    """

    tags = PlayerTags(
        protocols=frozenset({"classification", "regression"}),
        randomized=False,
        domains=frozenset({"unconstrained"}),
        losses=frozenset(EXAMPLE_LOSSES),
        block_kernel=True,
        sparse_input=True,
    )
    parameter_constraints: ClassVar = {
        "sketch": [OneOf(*SKETCHES)],
        "m": [Interval(1, None, integer=True)],
        "alpha": [NON_NEGATIVE],
        "C": [POSITIVE, IsNone()],
        "sigma": [NON_NEGATIVE],
        "eta": [NON_NEGATIVE, IsNone()],
        "diagonal": [Boolean()],
        "sparse": [Boolean()],
    }

    def __init__(
        self,
        sketch: str = "fd",
        m: int = 10,
        alpha: float = 1.0,
        C: float | None = 1.0,
        sigma: float = 0.0,
        eta: float | None = None,
        diagonal: bool = False,
        sparse: bool = False,
    ):
        self.sketch = sketch
        self.m = m
        self.alpha = alpha
        self.C = C
        self.sigma = sigma
        self.eta = eta
        self.diagonal = diagonal
        self.sparse = sparse

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        who = self.label()
        if spec.protocol not in self.tags.protocols:
            raise ConfigError(
                who,
                "protocol",
                "K_t = {w : |<w, x_t>| <= C} needs examples x_t (plain oco has none)",
            )
        if float(spec.sigma or 0.0) > 0.0:
            raise ConfigError(who, "sigma", "the gradient must be l'(<w, x>) x: no game sigma > 0")
        d = game_dim(spec)
        m = int(self.m)
        if self.sparse and self.sketch not in SPARSE_SKETCHES:
            raise ConfigError(
                who,
                "sparse",
                f"implemented for sketch in {sorted(SPARSE_SKETCHES)}, not {self.sketch}",
            )
        if float(self.alpha) == 0.0 and self.sketch != "full":
            raise ConfigError(
                who,
                "alpha",
                f"alpha = 0 (the pseudo-inverse variant) needs sketch full, not "
                f"{self.sketch}: A_t = S_t^T S_t has rank <= m",
            )
        if self.sketch == "oja" and m > d:
            raise ConfigError(who, "m", f"oja needs m <= d = {d} orthonormal rows, got {m}")
        loss = spec.loss or "squared"
        self._loss = loss
        c = math.inf if self.C is None else float(self.C)
        lip = scalar_lipschitz(loss, c, spec.protocol) if self.C is not None else None
        if self.eta is None:
            if lip is None:
                raise ConfigError(
                    who, "eta", "null (eta = sqrt(d)/(CL)) needs C and a loss with a known L"
                )
            eta = math.sqrt(d) / (c * lip)
        else:
            eta = float(self.eta)
        self._alpha, self._c, self._lip, self._eta0, self._sig = (
            float(self.alpha),
            c,
            lip,
            eta,
            float(self.sigma),
        )
        self._d, self._m, self._rngs = d, m, list(rngs)
        n = spec.n_replicates
        self._u = np.zeros((n, d))  # in the coordinates of x̃ when diagonal
        self._dsum = np.full((n, d), DIAGONAL_INIT)  # D_t of the diagonal adaptation
        if self.sketch == "full" and self._alpha == 0.0:
            self._amat = np.zeros((n, d, d))  # A_t itself, for its pseudo-inverse
        elif self.sketch == "full":  # A_t^{-1} = WWᵀ (potter_update)
            self._root = np.broadcast_to(np.eye(d) / math.sqrt(self._alpha), (n, d, d)).copy()
        else:
            rows = 2 * m if self.sketch == "fd_epoch" else m  # fd_epoch: S = [DV; G]
            # Sparse FD-SON keeps Z and G in SparseFD (about the same memory): no dense S
            self._s = np.zeros((n, rows, 0 if self.sparse and "fd" in self.sketch else d))
            self._h = np.broadcast_to(np.eye(rows) / self._alpha, (n, rows, rows)).copy()
        if self.sketch == "oja":
            self._v = np.broadcast_to(np.eye(m, d), (n, m, d)).copy()
            self._lam = np.zeros((n, m))
        self._b = np.zeros((n, m))  # sparse: w = ū + Sᵀb (RP) or ū + Zᵀb (Oja, FD), ū in _u
        if self.sparse and self.sketch in ("fd", "fd_epoch"):  # Luo 2016, Alg. 18–21, repaired
            self._fd = []
            for r in range(n):
                state = SparseFD(d, m, self._alpha, 1 if self.sketch == "fd" else m)
                state.u, state.b = self._u[r], self._b[r]  # views: the state updates in place
                self._fd.append(state)
        if self.sparse and self.sketch == "oja":  # V = FZ, K = ZZᵀ (Luo 2016, Alg. 22)
            # Z stored as its transpose (R, d, m), so that a feature's m entries are adjacent for
            # the kernel; _z is the (R, m, d) view the readable code reads and writes
            self._zt = self._v.transpose(0, 2, 1).copy()
            self._z = self._zt.transpose(0, 2, 1)
            self._f = np.broadcast_to(np.eye(m), (n, m, m)).copy()
            self._k = self._f.copy()
        self._t = 0
        self._eta_sum = 0.0
        self._gsq = np.zeros(n)  # Σ‖g_t‖²
        self._ghsq = np.zeros(n)  # Σ‖ĝ_t‖²

    def footprint(self, spec: GameSpec) -> Footprint:
        """The sketch's matrices and the work of one SketchUpdate per round and replicate.

        ``full`` holds a d×d matrix per replicate (and, with α = 0, takes its
        eigendecomposition every round); the other sketches hold S (m or 2m rows of d) and H
        (m×m or 2m×2m), and FD decomposes ``SSᵀ`` (m×m) every round, about 10·m³ operations,
        so a sketch larger than d costs far more than ``full`` and holds nothing more.
        """
        d, m, n_rep = game_dim(spec), int(self.m), int(spec.n_replicates)
        if self.sketch == "full":
            eigen = 10 * d**3 if float(self.alpha) == 0.0 else 0  # psd_pseudo_inverse
            name = "A_t" if eigen else "the root of A_t⁻¹"
            return Footprint(
                memory=8 * n_rep * (d * d + 3 * d),
                work=n_rep * (6 * d * d + eigen),
                parameter="sketch",
                what=f"sketch=full with d={d}: a {shape_text(n_rep, d, d)} float64 matrix ({name})",
                advice="use a sketch of m ≪ d rows (sketch=fd, rp or oja), or lower n_actions",
            )
        rows = 2 * m if self.sketch == "fd_epoch" else m
        per_round = {  # one SketchUpdate and one A⁻¹v (Woodbury) per round and replicate
            "rp": 2 * rows * d + 4 * rows * rows,
            "fd": 10 * m**3 + 4 * m * m * d,  # eigh of SSᵀ and the rows Uᵀ S
            "fd_epoch": (10 * rows**3 + 4 * rows * rows * d) // m + 4 * rows * rows,
            "oja": 4 * d * m * m + 2 * m * d,  # the QR of a d×m matrix
        }.get(self.sketch, 4 * rows * rows * d)
        oja = m * d + m if self.sketch == "oja" else 0
        sparse = 2 * m * m + m * d if self.sparse and self.sketch == "oja" else 0
        return Footprint(
            memory=8 * n_rep * (rows * d + rows * rows + 3 * d + m + oja + sparse),
            work=n_rep * (per_round + 2 * rows * d + rows * rows + 4 * d),
            parameter="m",
            what=f"sketch={self.sketch} with m={m} (d={d}): a "
            f"{shape_text(n_rep, rows, rows)} float64 H and {shape_text(n_rep, rows, d)} sketch",
            advice=f"lower m (a sketch of more than d = {d} rows holds no more than sketch=full)"
            if m > d
            else "lower m",
        )

    def _apply_ainv(self, r: int, v: np.ndarray) -> np.ndarray:
        """Return ``A^{-1}v`` of replicate r (the current sketch; α = 0: ``A^†v``)."""
        if self.sketch == "full" and self._alpha == 0.0:
            return psd_pseudo_inverse(self._amat[r])[0] @ v
        if self.sketch == "full":
            root = self._root[r]
            return root @ (root.T @ v)
        s, h = self._s[r], self._h[r]
        out = (v - s.T @ (h @ (s @ v))) / self._alpha
        if self.sketch in UPDATED_INVERSE_SKETCHES and not inverse_is_plausible(
            v, out, self._alpha
        ):
            out = stable_sketch_inverse(s, self._alpha, v)
        return out

    def _coordinate_scale(self) -> np.ndarray:
        """Return ``D_t^{-1/2}`` (R, d) with diagonal adaptation, else ones."""
        if not self.diagonal:
            return np.ones_like(self._u)
        return 1.0 / np.sqrt(self._dsum)

    def predict(self, x: np.ndarray | None = None) -> np.ndarray:
        """Return ``w_t``: ``u_t`` projected onto ``K_t`` in the ``A_{t−1}`` norm (Lemma 11)."""
        scale = self._coordinate_scale()
        if is_sparse(x) and self.sparse:
            return self._project_sparse(None, self._supports(x, scale)) * scale
        x = x.densify() if is_sparse(x) else x
        features = x if x is None else np.asarray(x, dtype=np.float64) * scale
        if self.sparse:
            return self._project_sparse(features) * scale
        return self._project(features) * scale

    @staticmethod
    def _supports(x: SparseRows, scale: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """Return each replicate's row of sparse features as ``(support, x̃ on it)``, with
        ``x̃ = D^{-1/2}x`` read on the support only (``scale`` (R, d) is ``D^{-1/2}``)."""
        out = []
        for r in range(x.shape[0]):
            lo, hi = int(x.indptr[r]), int(x.indptr[r + 1])
            idx = x.indices[lo:hi]
            out.append((idx, x.values[lo:hi] * scale[r, idx]))
        return out

    def _sparse_fd(self) -> bool:
        """Whether this is Sparse FD-SON (``fd``/``fd_epoch`` with ``sparse=True``)."""
        return bool(self.sparse) and self.sketch in ("fd", "fd_epoch")

    @staticmethod
    def _row_support(row: np.ndarray | tuple) -> tuple[np.ndarray, np.ndarray]:
        """``(support, values)`` of a dense row, or the pair itself."""
        if isinstance(row, tuple):
            return row
        idx = np.flatnonzero(row)
        return idx, row[idx]

    def _sparse_basis(self) -> np.ndarray:
        """The rows of the sparse representation ``w = ū + basisᵀb``: S (RP) or Z (Oja)."""
        return self._z if self.sketch == "oja" else self._s

    def _sparse_projection(self, r: int, x: np.ndarray | tuple, done: int) -> tuple:
        """The projection step of Sparse RP-SON / Oja-SON (Luo 2016, Alg. 15 / 22, lines 3–5).

        RP: ``x̂ = Sx``, ``c = τ_C(⟨ū, x⟩ + ⟨b, x̂⟩)/(‖x‖² − x̂ᵀHx̂)``, ``b' = b + cHx̂``; Oja
        (``V = FZ``, ``D = (t−1)Λ/(α + (t−1)Λ)``): ``x̂ = FZx``,
        ``c = τ_C(⟨ū, x⟩ + ⟨b, Zx⟩)/(‖x‖² − x̂ᵀDx̂)``, ``b' = b + c·FᵀDx̂``; both ``w̄ = ū − cx``.
        O(ms + m²). ``done = t − 1``, the rounds completed before this one. ``x`` is a dense row
        or a sparse one as ``(support, values)``. Returns ``(support, x on it, c, the direction
        added to b)``.
        """
        b = self._b[r]
        if isinstance(x, tuple):
            idx, xv = x
        else:
            idx = np.flatnonzero(x)
            xv = x[idx]
        if self.sketch == "oja":
            zx = self._z[r][:, idx] @ xv
            xh = self._f[r] @ zx
            energy = done * self._lam[r]  # (t − 1)Λ_{t−1}
            dxh = energy / (self._alpha + energy) * xh
            direction = self._f[r].T @ dxh
            inner = float(self._u[r, idx] @ xv + b @ zx)
        else:
            xh = self._s[r][:, idx] @ xv
            dxh = direction = self._h[r] @ xh
            inner = float(self._u[r, idx] @ xv + b @ xh)
        coef = 0.0
        shift = tau(inner, self._c)
        if shift != 0.0:
            den = float(xv @ xv - xh @ dxh)
            if den > 0.0:
                coef = shift / den
        return idx, xv, coef, direction

    def _project_sparse(self, x: np.ndarray | None, supports: list | None = None) -> np.ndarray:
        """Return ``w_t = ū − cx + basisᵀ(b + c·direction)`` (O(md): the arena needs ``w_t``).

        The features are dense rows ``x`` or sparse ones, ``supports`` (:meth:`_supports`)."""
        if self._sparse_fd():
            rows = supports if supports is not None else x
            return np.stack(
                [
                    st.point()
                    if rows is None
                    else st.projected_point(*self._row_support(rows[r]), self._c)
                    for r, st in enumerate(self._fd)
                ]
            )
        basis = self._sparse_basis()
        out = self._u + np.einsum("rmd,rm->rd", basis, self._b)
        if x is None and supports is None:
            return out
        for r in range(out.shape[0]):
            row = supports[r] if supports is not None else x[r]
            idx, xv, coef, direction = self._sparse_projection(r, row, self._t)
            if coef != 0.0:
                out[r] += basis[r].T @ (coef * direction)
                out[r, idx] -= coef * xv
        return out

    def _project(self, x: np.ndarray | None) -> np.ndarray:
        """Return the projection of ``u_t`` onto ``K_t`` (of the features ``x``, maybe x̃)."""
        w = self._u.copy()
        if x is None or not math.isfinite(self._c):
            return w
        for r in range(w.shape[0]):
            shift = tau(float(w[r] @ x[r]), self._c)
            if shift == 0.0:
                continue
            if self.sketch == "full" and self._alpha == 0.0:
                w[r] -= shift * pseudo_inverse_direction(self._amat[r], x[r])
                continue
            ax = self._apply_ainv(r, x[r])
            den = float(x[r] @ ax)
            if not den > 0.0:  # A^{-1} numerically indefinite: project in A_0 = αI's metric
                ax = x[r].copy()
                den = float(x[r] @ ax)
            if den > 0.0:
                w[r] -= (shift / den) * ax
        return w

    def update(self, fb: Feedback) -> None:
        if self._sparse_fd():
            self._update_fd_sparse(fb)
            return
        if fb.sparse and self.sparse:
            self._update_sparse_rows(fb)
            return
        if fb.sparse:  # a dense sketch: O(md) or more a round anyway
            fb = Feedback(fb.w, fb.value, fb.grad, fb.data.densified(), fb.prediction, fb.dloss)
        self._t += 1
        t = self._t
        eta_t = self._eta0 / math.sqrt(t)
        self._eta_sum += eta_t
        sketch_scale = math.sqrt(self._sig + eta_t)
        coordinate_scale = self._coordinate_scale()
        raw = self._assumed_gradient(fb)
        grads = raw * coordinate_scale
        if self.sparse:
            x = fb.data.x
            features = None if x is None else np.asarray(x, dtype=np.float64) * coordinate_scale
            self._update_sparse(features, grads, sketch_scale)
            if self.diagonal:
                self._dsum += raw**2
            return
        w = np.asarray(fb.w, dtype=np.float64) / coordinate_scale
        for r in range(w.shape[0]):
            g = grads[r]
            gh = sketch_scale * g
            self._gsq[r] += float(g @ g)
            self._ghsq[r] += float(gh @ gh)
            self._sketch_update(r, gh)
            self._u[r] = w[r] - self._apply_ainv(r, g)
        if self.diagonal:
            self._dsum += raw**2

    def _assumed_gradient(self, fb: Feedback) -> np.ndarray:
        """The arena's gradient ``ℓ'(p)x`` with ``ℓ'`` clipped to ``[−L, L]`` (Assumption 1).

        The projection makes ``|p| ≤ C``, where ``|ℓ'| ≤ L``, so in exact arithmetic this is the
        arena's gradient. In floating point ``p = ⟨w, x⟩`` carries an error ``ε‖w‖‖x‖``; when
        ``1/α`` is far too large a step for the features' scale (features scaled by 10⁶ with
        α = 1, the sketches' unsketched directions) that error exceeds C, and the squared
        loss's unbounded ``ℓ'`` would feed it back into ever larger steps until overflow.
        """
        grad = np.asarray(fb.grad, dtype=np.float64)
        if self._lip is None or fb.dloss is None:
            return grad
        dl = np.asarray(fb.dloss, dtype=np.float64)
        over = np.abs(dl) > self._lip
        if over.any():
            grad = grad.copy()
            x = np.asarray(fb.data.x, dtype=np.float64)
            grad[over] = np.copysign(self._lip, dl[over])[:, None] * x[over]
        return grad

    def play_block(self, data: RoundData, spec: GameSpec) -> np.ndarray:
        """Play a block against known data: the numba kernel for the dense sketches.

        :func:`_son_play_block` does what :meth:`predict` and :meth:`update` do, round by round,
        on the same state (RP's ``r_t`` are drawn up front from the same generators, in the same
        order); sparse RP/Oja-SON play :func:`_son_sparse_block`, and Sparse FD-SON and α = 0 the
        readable per-round loop (FD's fast path is :meth:`play_predictions`). Where a projected
        prediction lands exactly on a kink of the loss (the hinge with C = 1: ``y·p = 1``) the
        kernel's dot product and the engine's may round to different sides and pick different
        (equally valid) subgradients; the kernel is deterministic and independent of the block
        split.
        """
        if self._sparse_fd() or self._alpha == 0.0:
            return super().play_block(data, spec)
        if self.sparse:
            return self._play_sparse(data, points=True)[1]
        loss_code, _, x, y, _, _ = kernel_data(data, spec.loss)
        n_rep, n, d = self._u.shape[0], x.shape[1], self._d
        dummy = np.zeros((n_rep, 1, 1))
        full = self.sketch == "full"
        if self.sketch == "rp":
            sd = 1.0 / math.sqrt(self._m)
            draws = np.stack([rng.normal(0.0, sd, (n, self._m)) for rng in self._rngs])
        else:
            draws = np.zeros((1, 1, 1))
        oja = self.sketch == "oja"
        out = np.empty((n_rep, n, d))
        self._eta_sum = _son_play_block(
            loss_code,
            x,
            y,
            SKETCH_CODES[self.sketch],
            self._alpha,
            self._c,
            math.inf if self._lip is None else self._lip,
            self._eta0,
            self._sig,
            self._t,
            self._eta_sum,
            bool(self.diagonal),
            self._u,
            self._dsum,
            self._root if full else dummy,
            dummy if full else self._s,
            dummy if full else self._h,
            self._v if oja else dummy,
            self._lam if oja else np.zeros((n_rep, 1)),
            draws,
            self._gsq,
            self._ghsq,
            out,
        )
        self._t += n
        return out

    def play_predictions(self, data: RoundData, spec: GameSpec) -> np.ndarray:
        """Play a block and return the predictions ``⟨w_t, x_t⟩`` (R, n) only, no points.

        ``sparse=True``: the kernel :func:`_son_sparse_block` reads each prediction off the
        representation ``w = ū + Bᵀb`` on the row's support, O(m·s + m²) (RP) or O(m·s + m³)
        (Oja) a round, and never forms ``w_t`` (O(md)); :meth:`current_point` gives the point
        when asked. The dense sketches play :meth:`play_block` and take ``⟨w_t, x_t⟩``.
        """
        if self.sparse:
            return self._play_sparse(data, points=False)[0]
        points = self.play_block(data, spec)
        x = data.x
        if is_sparse(x):
            return x.dot(points)
        return np.einsum("rnd,rnd->rn", points, np.asarray(x, dtype=np.float64))

    def plays_predictions(self) -> bool:
        """Return whether a sparse game may be played through :meth:`play_predictions`: the
        sparse sketches without the projection of Lemma 11 (``C=None``), whose next point does
        not depend on the next round's features, so :meth:`point` is the point played."""
        return bool(self.sparse) and self.C is None

    def point(self) -> np.ndarray:
        """Return the point ``w_{t+1}`` of the next round (R, d), exactly: ``ū + Bᵀb`` formed
        once, O(md) (:meth:`current_point` without features; ``C=None`` only)."""
        return self.current_point(None)

    def current_point(self, x: np.ndarray | SparseRows | None = None) -> np.ndarray:
        """Return the exact dense point ``w_t`` (R, d) of the next round, O(md).

        With the round's features ``x`` (dense (R, d) or :class:`SparseRows`) it is the point
        played against them, the projection of Lemma 11 included (:meth:`predict`, pure); with
        None it is ``u_t`` before the projection (``ū + Bᵀb`` in the sparse representation,
        ``D_t^{-1/2}``-scaled with diagonal adaptation). For a protocol that records points
        only when asked, after :meth:`play_predictions`.
        """
        return self.predict(x)

    def _play_sparse(self, data: RoundData, points: bool) -> tuple[np.ndarray, np.ndarray]:
        """Sparse RP-/Oja-SON over a block in :func:`_son_sparse_block`; returns
        ``(predictions (R, n), points (R, n, d) or a dummy)``. Dense rows are read as CSR."""
        x = data.x
        if not is_sparse(x):
            x = SparseRows.from_dense(np.asarray(x, dtype=np.float64))
        if self._sparse_fd():
            return self._play_fd_sparse(x, np.asarray(data.y, dtype=np.float64)), np.empty(0)
        n_rep, n, d = self._u.shape[0], x.shape[1], self._d
        oja = self.sketch == "oja"
        if oja:
            draws = np.zeros((1, 1, 1))
        else:
            sd = 1.0 / math.sqrt(self._m)
            draws = np.stack([rng.normal(0.0, sd, (n, self._m)) for rng in self._rngs])
        pred = np.empty((n_rep, n))
        out = np.empty((n_rep, n, d)) if points else np.empty((1, 1, 1))
        dummy = np.zeros((n_rep, 1, 1))
        _son_sparse_block(
            LOSS_CODES[self._loss],
            x.indptr,
            x.indices,
            x.values,
            readonly_contiguous(data.y, np.float64),
            oja,
            self._alpha,
            self._c,
            math.inf if self._lip is None else self._lip,
            self._eta0,
            self._sig,
            self._t,
            bool(self.diagonal),
            SPARSE_OJA_REBASE,
            SPARSE_OJA_SPREAD,
            self._u,
            self._dsum,
            self._b,
            dummy if oja else self._s,
            self._zt if oja else dummy,
            dummy if oja else self._h,
            self._f if oja else dummy,
            self._k if oja else dummy,
            self._lam if oja else np.zeros((n_rep, 1)),
            draws,
            self._gsq,
            self._ghsq,
            pred,
            out,
            points,
        )
        for j in range(n):
            self._eta_sum += self._eta0 / math.sqrt(self._t + j + 1)
        self._t += n
        return pred, out

    def _play_fd_sparse(self, x: SparseRows, y: np.ndarray) -> np.ndarray:
        """Sparse FD-SON's predictions over a block, round by round in :class:`SparseFD`
        (readable numpy): each is read off ``ū + Zᵀb`` on the row's support, O(m·s + m²) a
        round plus the decompositions; no ``w_t`` is formed. (Its :meth:`play_block` is the
        predict/update loop, which forms ``w_t`` anyway.)"""
        n_rep, n = self._u.shape[0], x.shape[1]
        pred = np.empty((n_rep, n))
        for j in range(n):
            self._t += 1
            self._eta_sum += self._eta0 / math.sqrt(self._t)
            for r in range(n_rep):
                row = r * n + j
                lo, hi = int(x.indptr[row]), int(x.indptr[row + 1])
                pred[r, j] = self._fd_round(r, x.indices[lo:hi], x.values[lo:hi], y[r, j])
        return pred

    def _update_fd_sparse(self, fb: Feedback) -> None:
        """:meth:`update` of Sparse FD-SON, dense or sparse rows: :meth:`_fd_round` per replicate.

        The step's ``ℓ'`` is taken at the prediction the representation gives (``⟨w_t, x_t⟩`` in
        exact arithmetic, the engine's ``fb.dloss`` to round-off), so that this loop,
        :meth:`play_block` and :meth:`play_predictions` take the same steps: FD-SON amplifies a
        round-off difference in ℓ' (see the tests), and the predictions path has no ``w_t``."""
        self._t += 1
        self._eta_sum += self._eta0 / math.sqrt(self._t)
        x, y = fb.data.x, np.asarray(fb.data.y, dtype=np.float64)
        for r in range(self._u.shape[0]):
            if is_sparse(x):
                lo, hi = int(x.indptr[r]), int(x.indptr[r + 1])
                idx, values = x.indices[lo:hi], x.values[lo:hi]
            else:
                row = np.asarray(x[r], dtype=np.float64)
                idx = np.flatnonzero(row)
                values = row[idx]
            self._fd_round(r, idx, values, y[r])

    def _fd_round(self, r: int, idx: np.ndarray, values: np.ndarray, y: float) -> float:
        """One round of Sparse FD-SON for replicate r on the row's support (``self._t`` is t):
        the projection (Lemma 11), ``p = ⟨w_t, x_t⟩``, ``ℓ'(p)`` clipped to ``[−L, L]``
        (:meth:`_assumed_gradient`), and the update of :class:`SparseFD`. Returns p."""
        state = self._fd[r]
        scale = 1.0 / np.sqrt(self._dsum[r, idx]) if self.diagonal else 1.0
        xv = values * scale
        p = state.apply_projection(idx, xv, self._c)
        _, dl = prediction_loss_scalar(LOSS_CODES[self._loss], p, float(y))
        if self._lip is not None and abs(dl) > self._lip:
            dl = math.copysign(self._lip, dl)
        raw = dl * values
        gv = raw * scale
        ghv = math.sqrt(self._sig + self._eta0 / math.sqrt(self._t)) * gv
        self._gsq[r] += float(gv @ gv)
        self._ghsq[r] += float(ghv @ ghv)
        state.update(idx, gv, ghv)
        if self.diagonal:
            self._dsum[r, idx] += raw**2
        return p

    def _update_sparse_rows(self, fb: Feedback) -> None:
        """:meth:`update` of the sparse sketches on sparse rows: the same steps, with the
        gradient ``ℓ'x`` (``ℓ'`` clipped as in :meth:`_assumed_gradient`) formed on each row's
        support, and ``D_t`` (diagonal adaptation) updated there only."""
        self._t += 1
        eta_t = self._eta0 / math.sqrt(self._t)
        self._eta_sum += eta_t
        sketch_scale = math.sqrt(self._sig + eta_t)
        x = fb.data.x
        dl = np.asarray(fb.dloss, dtype=np.float64)
        if self._lip is not None:
            dl = np.where(np.abs(dl) > self._lip, np.copysign(self._lip, dl), dl)
        for r in range(x.shape[0]):
            lo, hi = int(x.indptr[r]), int(x.indptr[r + 1])
            idx, values = x.indices[lo:hi], x.values[lo:hi]
            raw = dl[r] * values
            if self.diagonal:
                scale = 1.0 / np.sqrt(self._dsum[r, idx])
                features, grad = values * scale, raw * scale
            else:
                features, grad = values, raw
            self._update_sparse_row(r, idx, features, grad, sketch_scale)
            if self.diagonal:
                self._dsum[r, idx] += raw**2

    def _update_sparse(self, x: np.ndarray | None, grads: np.ndarray, sketch_scale: float) -> None:
        """Sparse RP-SON's update (Luo 2016, Alg. 15, lines 3–9): O(ms + m²) given the support.

        The projection of :meth:`predict` is redone (predict keeps no state); then, with
        ``w = w̄ + Sᵀb`` and ``S' = S + rĝᵀ``: ``w − A^{-1}g = w̄ − (r·b)ĝ − g/α +
        S'ᵀ(b + HS'g/α)``, so ``ū ← w̄ − (r·b)ĝ − g/α`` and ``b ← b + HS'g/α`` touch only the
        support of ``g = ℓ'(⟨w, x⟩)x`` (that of x).
        """
        for r in range(grads.shape[0]):
            if x is None:
                idx = np.flatnonzero(grads[r])
                self._update_sparse_row(r, idx, None, grads[r, idx], sketch_scale)
            else:
                idx = np.flatnonzero(x[r])
                self._update_sparse_row(r, idx, x[r][idx], grads[r, idx], sketch_scale)

    def _update_sparse_row(
        self,
        r: int,
        idx: np.ndarray,
        xv: np.ndarray | None,
        gv: np.ndarray,
        sketch_scale: float,
    ) -> None:
        """One replicate's sparse update, given the support, the features and the gradient on
        it (``xv`` None: no projection)."""
        if xv is not None:
            idx, xv, coef, direction = self._sparse_projection(r, (idx, xv), self._t - 1)
            self._u[r, idx] -= coef * xv
            self._b[r] += coef * direction
        ghv = sketch_scale * gv
        self._gsq[r] += float(gv @ gv)
        self._ghsq[r] += float(ghv @ ghv)
        if self.sketch == "oja":
            self._oja_sparse_update(r, idx, gv, ghv)
            return
        rv = self._rngs[r].normal(0.0, 1.0 / math.sqrt(self._m), self._m)
        s = self._s[r]
        s[:, idx] += np.outer(rv, ghv)
        q = s[:, idx] @ ghv - (float(ghv @ ghv) / 2.0) * rv
        self._h[r] = rp_inverse_update(self._h[r], rv, q)
        b = self._b[r]
        self._u[r, idx] -= float(rv @ b) * ghv + gv / self._alpha
        self._b[r] = b + self._h[r] @ (s[:, idx] @ gv) / self._alpha

    def _oja_sparse_update(self, r: int, idx: np.ndarray, gv: np.ndarray, ghv: np.ndarray) -> None:
        """Sparse Oja-SON's update (Luo 2016, Alg. 22 lines 7–9 with Alg. 23), O(m³ + ms).

        ``V = FZ`` with ``K = ZZᵀ``: ``V + Γ(Vĝ)ĝᵀ = F(Z + δĝᵀ)`` for ``δ = F^{-1}ΓFZĝ`` (the
        thesis's Eq. 4.6 prints ``A^{-1}``; it must be ``F^{-1}``), ``K`` gets the matching
        rank-two update, and Gram–Schmidt of the rows of FZ is Gram–Schmidt of the rows of F in
        the K inner product (:func:`k_gram_schmidt`), so Z changes only on the support of ĝ.
        ``w = w̄ + Zᵀb = w̄ + Z'ᵀb − (δ·b)ĝ`` gives ``ū ← w̄ − g/α − (δ·b)ĝ`` and
        ``b ← b + FᵀDFZ'g/α`` with ``D = tΛ/(α + tΛ)``.

        Against drift (Luo 2016, §4.5 notes the representation must be reset now and then;
        Vowpal Wabbit does it when ``max|K| > 1e7``) the round is done densely, ``ū ← ū + Z'ᵀb``,
        ``b ← 0``, ``Z ← GramSchmidt(FZ')``, ``F ← I`` (O(m²d), the dense version's step), when
        ``max|K|`` exceeds :data:`SPARSE_OJA_REBASE`, when ``FKFᵀ`` is not numerically positive
        definite, or when its Cholesky factor's diagonal spreads by more than
        :data:`SPARSE_OJA_SPREAD` (a large ĝ swamping V, Luo 2016, footnote 13).
        """
        gamma = 1.0 / self._t
        z, f, b = self._z[r], self._f[r], self._b[r]
        zg = z[:, idx] @ ghv
        fzg = f @ zg
        self._lam[r] = (1.0 - gamma) * self._lam[r] + gamma * fzg * fzg
        delta = np.linalg.solve(f, gamma * fzg)
        k = self._k[r]
        k += np.outer(delta, zg) + np.outer(zg, delta) + float(ghv @ ghv) * np.outer(delta, delta)
        z[:, idx] += np.outer(delta, ghv)
        self._u[r, idx] -= gv / self._alpha + float(delta @ b) * ghv
        lower = None
        if np.isfinite(k).all() and np.abs(k).max() <= SPARSE_OJA_REBASE:
            try:
                lower = np.linalg.cholesky(f @ k @ f.T)
            except np.linalg.LinAlgError:
                lower = None
        diag = None if lower is None else np.diag(lower)
        if diag is None or diag.min() < diag.max() / SPARSE_OJA_SPREAD:
            self._u[r] += z.T @ b
            b = np.zeros(self._m)
            z[:] = orthonormalize_rows(f @ z)
            k[:] = z @ z.T
            f = np.eye(self._m)
        else:
            f = np.linalg.solve(lower, f)  # k_gram_schmidt(f, k), reusing the factor
        energy = self._t * self._lam[r]
        shrink = energy / (self._alpha + energy)
        b = b + f.T @ (shrink * (f @ (z[:, idx] @ gv))) / self._alpha
        self._f[r], self._b[r] = f, b

    def _sketch_update(self, r: int, gh: np.ndarray) -> None:
        """SketchUpdate(ĝ) of Algorithms 12–14 and 16 (full: the exact :func:`potter_update`)."""
        if self.sketch == "full" and self._alpha == 0.0:
            self._amat[r] += np.outer(gh, gh)
        elif self.sketch == "full":
            self._root[r] = potter_update(self._root[r], gh)
        elif self.sketch == "rp":
            rv = self._rngs[r].normal(0.0, 1.0 / math.sqrt(self._m), self._m)
            s = self._s[r]
            s += np.outer(rv, gh)
            q = s @ gh - (float(gh @ gh) / 2.0) * rv
            self._h[r] = rp_inverse_update(self._h[r], rv, q)
        elif self.sketch == "fd":
            s = self._s[r]
            s[-1] = gh
            self._s[r], self._h[r], _ = fd_shrink(s, self._alpha)
        elif self.sketch == "fd_epoch":
            tau_t = (self._t - 1) % self._m + 1  # τ of Alg. 16: 1 at t = 1, reset after τ = m
            self._s[r], self._h[r] = fd_epoch_update(self._s[r], self._h[r], gh, tau_t, self._alpha)
        else:
            gamma = 1.0 / self._t
            v = self._v[r]
            vg = v @ gh
            self._lam[r] = (1.0 - gamma) * self._lam[r] + gamma * vg * vg
            v = orthonormalize_rows(v + gamma * np.outer(vg, gh))
            self._v[r] = v
            energy = self._t * self._lam[r]
            self._s[r] = np.sqrt(energy)[:, None] * v
            self._h[r] = np.diag(1.0 / (self._alpha + energy))

    def sketch_weight(self, t: int) -> float:
        """Return ``√(σ + η_t)``, the factor of the to-sketch vector ``ĝ_t = √(σ + η_t) g_t``.

        Examples
        --------
        >>> from arena.oco.domains import Domain
        >>> p = SON(sketch="oja", m=1, C=1.0, sigma=0.0, eta=4.0)
        >>> p.reset(GameSpec("classification", 1, 3, dim=1, domain=Domain(), loss="hinge"),
        ...         [np.random.default_rng(0)])
        >>> p.sketch_weight(4)
        1.4142135623730951
        """
        return math.sqrt(self._sig + self._eta0 / math.sqrt(t))

    def sketch_eigenvalues(self, k: int) -> np.ndarray:
        """Return the sketch's estimate of the top-k eigenvalues of ``G_tᵀG_t = Σ_{s≤t} ĝ_sĝ_sᵀ``.

        Shape (R, k), descending, zero-padded beyond the sketch's rank. ``full``: the exact
        spectrum, read off ``A_t^{-1}`` as ``1/μ_i − α`` (accurate relative to ``λ_i + α``);
        ``rp``, ``fd`` and ``fd_epoch``: the spectrum of ``S_tᵀS_t`` (the nonzero eigenvalues of
        the m×m, or 2m×2m, ``S_tS_tᵀ``; FD's is ``Σ_t − ρI`` after the shrink, an underestimate,
        and ``fd_epoch``'s adds the epoch's buffered ĝ's exactly); α = 0: the spectrum
        of ``A_t``; ``oja``:
        ``tΛ_{t,i}``, the estimate Luo 2016, Figure 4.1 compares with ``λ_i(G_tᵀG_t)``. With
        diagonal adaptation these are the eigenvalues of the sum over the rescaled ``ĝ_s``.

        Examples
        --------
        >>> from arena.oco.domains import Domain
        >>> from arena.oco.losses import RoundData, feedback
        >>> p = SON(sketch="fd", m=2, alpha=1.0, C=None, eta=1.0)
        >>> p.reset(GameSpec("regression", 2, 5, dim=2, domain=Domain(), loss="squared"),
        ...         [np.random.default_rng(0)])
        >>> rd = RoundData(x=np.array([[3.0, 0.0]]), y=np.array([1.0]))
        >>> p.update(feedback("squared", 0.0, p.predict(rd.x), rd))
        >>> p.sketch_eigenvalues(3).tolist()  # ĝ = 1·(0 − 1)·x: one eigenvalue 9
        [[9.0, 0.0, 0.0]]
        """
        k = int(k)
        n = self._u.shape[0]
        if self.sketch == "full" and self._alpha == 0.0:
            est = np.maximum(np.linalg.eigvalsh(self._amat), 0.0)
        elif self.sketch == "full":  # A^{-1} = WWᵀ: its eigenvalues are W's squared singular values
            est = 1.0 / np.linalg.svd(self._root, compute_uv=False) ** 2 - self._alpha
            est = np.maximum(est, 0.0)
        elif self.sketch == "oja":
            est = self._t * self._lam
        elif self._sparse_fd():  # SSᵀ from the representation; pad to the dense sketch's rows
            rows = self._s.shape[1]
            est = np.zeros((n, rows))
            for r, state in enumerate(self._fd):
                lam = np.maximum(np.linalg.eigvalsh(state.gram()), 0.0)
                est[r, : lam.shape[0]] = lam
        else:
            est = np.maximum(np.linalg.eigvalsh(self._s @ self._s.transpose(0, 2, 1)), 0.0)
        est = -np.sort(-est, axis=1)
        out = np.zeros((n, k))
        width = min(k, est.shape[1])
        out[:, :width] = est[:, :width]
        return out

    def declares_regret_bound(self) -> bool:
        """Return whether :meth:`regret_bound` evaluates a bound in this game (after ``reset``).

        True for ``full``, ``fd`` and ``fd_epoch`` without diagonal adaptation, with C, a loss
        of known scalar Lipschitz constant L, ``α > 0`` and ``σ + η_t > 0`` (σ > 0 or η > 0).
        """
        return (
            self.sketch in BOUNDED_SKETCHES
            and not self.diagonal
            and self._lip is not None
            and self._alpha > 0.0
            and (self._sig > 0.0 or self._eta0 > 0.0)
        )

    def invariant_regret_bound(
        self, comparator_norm: float | np.ndarray, spectrum: np.ndarray | None = None
    ) -> np.ndarray | None:
        """Return the bound the metric ``invariant_regret`` compares with, shape (R,), or None.

        :meth:`regret_bound` at ``‖w‖ = comparator_norm`` (one norm, or one per replicate) and
        the spectrum of ``Σ_s ĝ_sĝ_sᵀ`` if given: the bound of Luo 2016, Thm 16 (``full``) or
        Thm 18 (``fd``, ``fd_epoch``) on ``R_t(w)`` for ``w ∈ K``; before the first round
        ``(α/2)‖w‖²`` (``R_0(w) = 0``). None where the player declares no bound
        (:meth:`declares_regret_bound`).
        """
        if not self.declares_regret_bound():
            return None
        norm = np.broadcast_to(np.asarray(comparator_norm, dtype=np.float64), self._u.shape[:1])
        if self._t == 0:
            return self._alpha / 2.0 * norm**2
        return self.regret_bound(norm, spectrum)

    def regret_bound(
        self, comparator_norm: float | np.ndarray = 0.0, spectrum: np.ndarray | None = None
    ) -> np.ndarray | None:
        """Return the Notes' bound on ``R_t(w)`` for ``‖w‖ = comparator_norm``, shape (R,).

        None for ``rp`` and ``oja`` (no deterministic bound), with diagonal adaptation, without C,
        when L is unknown, or for the α = 0 variant (whose bound, Luo 2016, Eq. C.2 and Thm 23,
        is not evaluated).
        Valid for comparators ``w ∈ K`` and losses meeting the assumptions with the given σ.
        ``comparator_norm``: one norm, or one per replicate (shape (R,)). ``spectrum`` (fd and
        fd_epoch; shape (R, d)): the eigenvalues of ``Σ_s ĝ_sĝ_sᵀ`` (the player keeps only its
        sketch, not this matrix); with it Thm 18's sketching term is taken at its best k,
        ``min_{k<m} mΩ_k/(m − k)`` (:func:`fd_sketching_term`), without it at ``k = 0``
        (``Ω_0 = Σ_t ‖ĝ_t‖²``).
        """
        if not self.declares_regret_bound() or self._t == 0:
            return None
        curv = self._sig + self._eta0 / math.sqrt(self._t)
        base = self._alpha / 2.0 * comparator_norm**2 + 2.0 * (self._c * self._lip) ** 2 * (
            self._eta_sum
        )
        if self.sketch == "full":
            d = self._d
            return base + d / (2.0 * curv) * np.log1p(curv * self._gsq / (d * self._alpha))
        rows = self._s.shape[1]  # m, or 2m for fd_epoch (rank S_T ≤ 2m − 1)
        if self._sparse_fd():
            trace = np.array([float(np.trace(state.gram())) for state in self._fd])
        else:
            trace = np.einsum("rij,rij->r", self._s, self._s)
        tail = self._ghsq if spectrum is None else fd_sketching_term(spectrum, int(self.m))
        return (
            base
            + rows / (2.0 * curv) * np.log1p(trace / (rows * self._alpha))
            + tail / (2.0 * curv * self._alpha)
        )

    @classmethod
    def _unit_test_params(cls):
        # C = 1.5, not 1: projected predictions land exactly on ±C, and at C = 1 on the hinge's
        # kink y·p = 1, where rounding (numpy's dot against the kernel's) picks the subgradient
        yield {"sketch": "full", "alpha": 1.0, "C": 1.5, "eta": 0.5}
        yield {"sketch": "fd", "m": 3, "C": 1.5, "eta": 0.5}
        yield {"sketch": "fd_epoch", "m": 2, "C": 1.5, "eta": 0.5}
        yield {"sketch": "rp", "m": 3, "C": 1.5, "eta": 0.5}
        yield {"sketch": "oja", "m": 2, "C": 2.0, "eta": 0.5, "diagonal": True}
        yield {"sketch": "rp", "m": 3, "C": 1.5, "eta": 0.5, "sparse": True}
        yield {"sketch": "oja", "m": 2, "C": 1.5, "eta": 0.5, "sparse": True}
        # Sparse FD-SON (sparse with fd / fd_epoch) runs the suite in
        # tests/players/test_son_fd_sparse.py, marked slow: about 9 s a configuration
        # no projection: sparse games are played through predictions (plays_predictions)
        yield {"sketch": "oja", "m": 2, "C": None, "eta": 0.5, "sparse": True}
