"""The sketches of ``Σ_s ĝ_sĝ_sᵀ`` that Sketched Online Newton keeps, and the inverses it reads.

One readable function per step of Luo 2016, §4.4–4.5, each checked by its doctest:

* the updates: :func:`potter_update` (``full``: Potter's square root of ``A^{-1}``),
  :func:`rp_inverse_update` (random projection, Alg. 12), :func:`fd_shrink` (Frequent
  Directions, Alg. 13), :func:`fd_epoch_update` (its epoch version, Alg. 16–17),
  :func:`orthonormalize_rows` and :func:`k_gram_schmidt` (Oja's sketch, Alg. 14, and the
  ``K`` inner product of its sparse version, Alg. 23);
* the inverses: :func:`stable_sketch_inverse` when :func:`inverse_is_plausible` says a
  Sherman–Morrison-updated one lost its digits, and :func:`psd_pseudo_inverse` /
  :func:`pseudo_inverse_direction` for the α = 0 variant (Appendix C).

:class:`arena.players.son.SON` calls them in its readable path; its numba kernels are their twins
and live beside it in :mod:`arena.players.son`.
"""

from __future__ import annotations

import math

import numpy as np


def fd_shrink(s: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray, float]:
    """Frequent Directions shrink of a sketch whose last row was just filled (Luo 2016, Alg. 13).

    With the Gram matrix ``S Sᵀ = U Λ Uᵀ`` (eigenvalues descending) and ``ρ = λ_m`` the smallest,
    the new sketch ``S' = diag(√(max(λ_i − ρ, 0)/λ_i)) Uᵀ S`` has orthogonal rows of squared norms
    ``λ_i − ρ``, i.e. ``S'ᵀS' = V_tᵀ(Σ_t − ρI)V_t`` of the thesis, its last row 0, and
    ``H = (αI + S'S'ᵀ)^{-1} = diag(1/(α + λ_i − ρ))``. Working on the m×m Gram matrix instead of
    the d×d covariance handles ``m > d`` and rank deficiency (rows with ``λ_i = 0`` become 0).
    Returns ``(S', H, ρ)``.

    Examples
    --------
    >>> s, h, rho = fd_shrink(np.array([[3.0, 0.0], [0.0, 4.0]]), 1.0)
    >>> np.round(s, 12).tolist(), np.diag(h).tolist(), rho
    ([[0.0, 2.645751311065], [0.0, 0.0]], [0.125, 1.0], 9.0)
    """
    lam, u = np.linalg.eigh(s @ s.T)
    lam, u = lam[::-1], u[:, ::-1]
    rho = max(float(lam[-1]), 0.0)
    kept = np.maximum(lam - rho, 0.0)
    scale = np.where(lam > 0.0, np.sqrt(kept / np.where(lam > 0.0, lam, 1.0)), 0.0)
    new = scale[:, None] * (u.T @ s)
    new[-1] = 0.0  # exactly zero: the next gradient is inserted there
    kept[-1] = 0.0
    return new, np.diag(1.0 / (alpha + kept)), rho


def rp_inverse_update(h: np.ndarray, rv: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Return ``(H^{-1} + qrᵀ + rqᵀ)^{-1}`` by two Sherman–Morrison steps (Luo 2016, Alg. 12).

    Examples
    --------
    >>> h = rp_inverse_update(np.eye(2), np.array([1.0, 0.0]), np.array([0.0, 0.5]))
    >>> np.allclose(h, np.linalg.inv(np.eye(2) + [[0.0, 0.5], [0.5, 0.0]]))
    True
    """
    hq = h @ q
    h = h - np.outer(hq, rv @ h) / (1.0 + float(rv @ hq))
    hr = h @ rv
    return h - np.outer(hr, q @ h) / (1.0 + float(q @ hr))


def fd_epoch_update(
    s: np.ndarray, h: np.ndarray, gh: np.ndarray, tau: int, alpha: float
) -> tuple[np.ndarray, np.ndarray]:
    """SketchUpdate(ĝ) of Frequent Directions, epoch version (Luo 2016, Alg. 16 with Alg. 17).

    The sketch ``S = [DV; G]`` has 2m rows: ``DV`` (m rows) from the last eigendecomposition,
    G (m rows) buffering the epoch's ĝ's; ``H = (αI_{2m} + SSᵀ)^{-1}``. ĝ goes into row
    ``m + τ`` (1-based) of S, the τ-th of G. While ``τ < m``, ``SSᵀ`` grows by ``qeᵀ + eqᵀ``
    with ``e = e_{m+τ}`` and ``q = Sĝ − (ĝ·ĝ/2)e`` (S with ĝ inserted), and H gets the two
    Sherman–Morrison steps of RP (:func:`rp_inverse_update` with ``r = e``). At ``τ = m`` the
    top-m eigen-system ``(V', Σ)`` of ``SᵀS`` is computed, ``D_ii = √(Σ_ii − Σ_mm)``,
    ``S ← [DV'; 0]`` and ``H = diag(1/(α + D²), 1/α·1_m)``. Algorithm 17 finds the eigen-system
    through ``M = GVᵀ``, ``G − MV = LQ`` and the (m + r)-square ``C``; here, as in
    :func:`fd_shrink`, it is read off the 2m×2m Gram matrix ``SSᵀ = UΣUᵀ`` (the same nonzero
    eigenvalues, Lemma 12), ``DV' = diag(√((Σ_ii − Σ_mm)/Σ_ii)) UᵀS`` (0 where ``Σ_ii = 0``),
    which needs no orthonormal V (``m > d``, rank-deficient buffers) and is cheaper than a thin
    SVD of S (measured 39 µs against 240 µs at m = 10, d = 400).
    ``tau`` is τ ∈ {1, …, m}: round t has ``τ = ((t − 1) mod m) + 1``. Returns ``(S', H')``.

    Examples
    --------
    >>> s, h = np.zeros((2, 2)), np.eye(2)  # m = 1: every round ends an epoch
    >>> s, h = fd_epoch_update(s, h, np.array([3.0, 4.0]), 1, 1.0)
    >>> (s + 0.0).tolist(), np.diag(h).tolist()  # D_11 = √(Σ_11 − Σ_11) = 0
    ([[0.0, 0.0], [0.0, 0.0]], [1.0, 1.0])
    >>> s, h = fd_epoch_update(np.zeros((4, 2)), np.eye(4), np.array([3.0, 4.0]), 1, 1.0)
    >>> s[2].tolist(), bool(np.allclose(h, np.linalg.inv(np.eye(4) + s @ s.T)))
    ([3.0, 4.0], True)
    """
    m = s.shape[0] // 2
    s = s.copy()
    s[m + tau - 1] = gh
    if tau < m:
        e = np.zeros(2 * m)
        e[m + tau - 1] = 1.0
        q = s @ gh - (float(gh @ gh) / 2.0) * e
        return s, rp_inverse_update(h, e, q)
    lam, u = np.linalg.eigh(s @ s.T)
    lam, u = lam[::-1], u[:, ::-1]  # Σ_ii, descending (the nonzero ones of SᵀS)
    rho = max(float(lam[m - 1]), 0.0)  # Σ_mm
    kept = np.zeros(2 * m)
    kept[: m - 1] = np.maximum(lam[: m - 1] - rho, 0.0)  # D_mm = √(Σ_mm − Σ_mm) = 0 exactly
    positive = lam[: m - 1] > 0.0
    scale = np.zeros(2 * m)
    scale[: m - 1][positive] = np.sqrt(kept[: m - 1][positive] / lam[: m - 1][positive])
    new = np.zeros_like(s)
    new[: m - 1] = scale[: m - 1, None] * (u[:, : m - 1].T @ s)  # D V'
    return new, np.diag(1.0 / (alpha + kept))


def k_gram_schmidt(f: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Gram–Schmidt of the rows of F, in row order, in the inner product ``⟨a, c⟩ = aᵀKc``.

    Luo 2016, Algorithm 23 ("Decompose"): returns ``Q = L^{-1}F`` with ``FKFᵀ = LLᵀ``
    (Cholesky, L lower triangular with a positive diagonal), so that ``QKQᵀ = I``; with
    ``K = ZZᵀ`` the rows of ``QZ`` are those :func:`orthonormalize_rows` makes of ``FZ``.

    Examples
    --------
    >>> z = np.array([[2.0, 0.0, 0.0], [1.0, 1.0, 0.0]])
    >>> q = k_gram_schmidt(np.eye(2), z @ z.T)
    >>> np.allclose(q @ z, orthonormalize_rows(z))
    True
    """
    lower = np.linalg.cholesky(f @ k @ f.T)
    return np.linalg.solve(lower, f)


def orthonormalize_rows(v: np.ndarray) -> np.ndarray:
    """Gram–Schmidt on the rows of ``v`` in row order (QR of ``vᵀ`` with a positive diagonal of R).

    Examples
    --------
    >>> (np.round(orthonormalize_rows(np.array([[2.0, 0.0], [1.0, 1.0]])), 12) + 0.0).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    q, r = np.linalg.qr(v.T)
    signs = np.where(np.diag(r) < 0.0, -1.0, 1.0)
    return (q * signs).T


def potter_update(root: np.ndarray, gh: np.ndarray) -> np.ndarray:
    """Return W' with ``W'W'ᵀ = (A + ĝĝᵀ)^{-1}`` given ``WWᵀ = A^{-1}`` (Potter's square root).

    With ``a = Wᵀĝ`` and ``s = 1 + ‖a‖²``, ``W' = W − γ(Wa)aᵀ``, ``γ = 1/(s + √s)``: then
    ``(I − γaaᵀ)² = I − aaᵀ/s`` and ``W'W'ᵀ = A^{-1} − A^{-1}ĝĝᵀA^{-1}/(1 + ĝᵀA^{-1}ĝ)``, the
    Sherman–Morrison update, but ``W'W'ᵀ`` is positive semidefinite by construction and the
    factor needs only half the digits (Potter & Stern 1963, the square-root filter; Bierman
    1977, square-root covariance updates). The plain Sherman–Morrison update of ``A^{-1}``
    loses definiteness once ``‖ĝ‖²/α`` nears 1/ε (features scaled by 10⁶), and SON's
    projection then divides by a non-positive ``xᵀA^{-1}x``.

    Examples
    --------
    >>> root = potter_update(np.eye(2), np.array([1.0, 1.0]))
    >>> np.allclose(root @ root.T, np.linalg.inv(np.eye(2) + np.ones((2, 2))))
    True
    """
    a = root.T @ gh
    s = 1.0 + float(a @ a)
    gamma = 1.0 / (s + math.sqrt(s))
    return root - gamma * np.outer(root @ a, a)


def stable_sketch_inverse(s: np.ndarray, alpha: float, v: np.ndarray) -> np.ndarray:
    """Return ``A^{-1}v`` for ``A = αI + SᵀS`` through the singular value decomposition of S.

    With ``S = UΣVᵀ`` the rows ``B = ΣVᵀ`` are orthogonal, ``SᵀS = BᵀB`` and
    ``A^{-1}v = (v − Σ_a B_a (B_a·v)/(α + ‖B_a‖²))/α``, exact up to ``ε‖v‖/α`` (the rounding of
    v itself), whereas ``Sᵀ(H(Sv))`` with a Sherman–Morrison-updated H multiplies H's absolute
    rounding error ``ε/α`` by ``‖S‖²`` (and an eigendecomposition of ``SSᵀ`` would lose its small
    eigenvalues to the absolute error ``ε‖S‖²``). O(m²d + m³): RP-SON's fallback when the cheap
    check of :func:`inverse_is_plausible` fails.

    Examples
    --------
    >>> s = np.array([[1e9, 0.0, 0.0], [0.0, 2.0, 0.0]])
    >>> v = np.array([1.0, 1.0, 1.0])
    >>> exact = np.array([1.0 / (1.0 + 1e18), 0.2, 1.0])
    >>> bool(np.abs(stable_sketch_inverse(s, 1.0, v) - exact).max() < 1e-15)
    True
    """
    _, sv, vt = np.linalg.svd(s, full_matrices=False)
    b = sv[:, None] * vt
    return (v - b.T @ ((b @ v) / (alpha + sv * sv))) / alpha


INVERSE_SLACK = 1e-6
"""Relative slack of :func:`inverse_is_plausible` (an accurate ``A^{-1}v`` rounds at ~1e-15)."""


def inverse_is_plausible(v: np.ndarray, av: np.ndarray, alpha: float) -> bool:
    """Whether ``av`` can be ``A^{-1}v`` for some ``A ⪰ αI``: ``vᵀav > 0`` and ``α‖av‖² ≤ vᵀav``.

    ``A ⪰ αI`` gives ``A^{-2} ⪯ A^{-1}/α``, hence ``‖A^{-1}v‖² ≤ vᵀA^{-1}v/α``; a computed
    ``A^{-1}v`` that breaks this (by more than :data:`INVERSE_SLACK`) has lost its digits.

    Examples
    --------
    >>> v = np.array([1.0, 0.0])
    >>> inverse_is_plausible(v, np.array([0.5, 0.0]), 1.0), inverse_is_plausible(v, 1e3 * v, 1.0)
    (True, False)
    """
    q = float(v @ av)
    return q > 0.0 and alpha * float(av @ av) <= q * (1.0 + INVERSE_SLACK)


RANGE_RTOL = 1e-12
"""``x ∉ range(A)`` when ``‖(I − A^†A)x‖² > RANGE_RTOL·‖x‖²`` (α = 0 variant)."""


def psd_pseudo_inverse(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(A^†, A^†A)`` of a symmetric PSD matrix: the Moore–Penrose pseudo-inverse and
    the orthogonal projector on ``range(A)``.

    Eigenvalues at most ``d·ε·λ_max`` count as zero (the rank rule of ``numpy.linalg.matrix_rank``).

    Examples
    --------
    >>> pinv, proj = psd_pseudo_inverse(np.array([[4.0, 0.0], [0.0, 0.0]]))
    >>> pinv.tolist(), proj.tolist()
    ([[0.25, 0.0], [0.0, 0.0]], [[1.0, 0.0], [0.0, 0.0]])
    """
    lam, vec = np.linalg.eigh(a)
    tol = max(float(lam[-1]), 0.0) * a.shape[0] * np.finfo(np.float64).eps
    kept = vec[:, lam > tol]
    return (kept / lam[lam > tol]) @ kept.T, kept @ kept.T


def pseudo_inverse_direction(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Return z such that ``w = u − τ_C(⟨u, x⟩)·z`` is the ``‖·‖_A``-projection of Lemma 15.

    Luo 2016, Appendix C.1 (PSD A, x ≠ 0): ``z = A^†x/(xᵀA^†x)`` if ``x ∈ range(A)``, else
    ``z = (I − A^†A)x/(xᵀ(I − A^†A)x)`` (membership up to :data:`RANGE_RTOL`). Either way
    ``⟨z, x⟩ = 1``, so ``⟨w, x⟩ = ⟨u, x⟩ − τ_C(⟨u, x⟩)``.

    Examples
    --------
    >>> pseudo_inverse_direction(np.diag([2.0, 0.0]), np.array([1.0, 1.0])).tolist()
    [0.0, 1.0]
    >>> pseudo_inverse_direction(np.diag([2.0, 0.0]), np.array([3.0, 0.0])).tolist()
    [0.3333333333333333, 0.0]
    """
    pinv, proj = psd_pseudo_inverse(a)
    resid = x - proj @ x
    if float(resid @ resid) > RANGE_RTOL * float(x @ x):
        return resid / float(x @ resid)
    ax = pinv @ x
    return ax / float(x @ ax)
