"""Projections onto the simplex, the ℓ1 ball and the floored simplex (numba kernels).

Three projections of Shalev-Shwartz 2007, Chapter 7, §7.1, each a per-row numba kernel that a
player's block kernel can call (``*_row(v, radius_or_floor, out)``) and a batched NumPy-facing
wrapper over the leading axes:

* :func:`project_simplex` — Euclidean projection onto ``{w ≥ 0, Σ w = z}`` (Figure 7.1);
* :func:`project_l1_ball` — Euclidean projection onto ``{‖w‖₁ ≤ z}`` (Figure 7.2: the simplex
  projection of ``|v|`` with the signs of ``v`` put back; the printed figure's ``sign(μ_i)ν_i``
  is a slip for ``sign(μ_i)β_i``);
* :func:`project_entropic_floor` — the entropic (relative-entropy) projection
  ``argmin_{w ≥ ε, Σw = 1} Σ w_i ln(w_i/u_i)`` onto the simplex with a floor ε (Figure 7.3 and
  Lemma 9). The printed recursion ``Z ← Z + (εZ − u_l)/(1 − ε)`` gives weights that do not sum
  to 1 for ``l ≥ 2``; the kernel computes the normalizer directly,
  ``Z_l = Σ_{j>l} u_(j) / (1 − lε)`` over the ascending order.

The sort makes each O(d log d), as in Duchi, Shalev-Shwartz, Singer & Chandra (2008), §3–4.

References
----------
Shalev-Shwartz 2007, §7.1.1 (Figure 7.1, Lemmas 6–7), §7.1.2 (Figure 7.2, Lemma 8), §7.1.3
(Figure 7.3, Lemma 9). Duchi, Shalev-Shwartz, Singer & Chandra (2008), "Efficient projections
onto the ℓ1-ball for learning in high dimensions", ICML, Figures 1 and 2.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def simplex_row(v, z, out):
    """Project one vector ``v`` onto ``{w ≥ 0, Σ w = z}`` into ``out`` (Figure 7.1).

    With ``μ`` the entries of ``v`` sorted descending,
    ``ρ = max{j : μ_j − (Σ_{r≤j} μ_r − z)/j > 0}`` and ``θ = (Σ_{r≤ρ} μ_r − z)/ρ``; the
    projection is ``max(v − θ, 0)``. ``out`` may be ``v``.
    """
    d = v.shape[0]
    mu = np.sort(v)
    css = 0.0
    theta = 0.0
    for j in range(d):
        css += mu[d - 1 - j]
        t = (css - z) / (j + 1)
        if mu[d - 1 - j] - t > 0.0:
            theta = t
    for i in range(d):
        x = v[i] - theta
        out[i] = x if x > 0.0 else 0.0


@njit(cache=True, nogil=True)
def l1_ball_row(v, z, out):
    """Project one vector ``v`` onto ``{‖w‖₁ ≤ z}`` into ``out`` (Figure 7.2, corrected).

    ``v`` itself when ``‖v‖₁ ≤ z``; otherwise ``β = Π_{simplex(z)}(|v|)`` and
    ``w_i = sign(v_i) β_i`` (Lemma 8: the projection keeps the signs). ``out`` may be ``v``.
    """
    d = v.shape[0]
    s = 0.0
    for i in range(d):
        s += abs(v[i])
    if s <= z:
        for i in range(d):
            out[i] = v[i]
        return
    a = np.empty(d)
    for i in range(d):
        a[i] = abs(v[i])
    beta = np.empty(d)
    simplex_row(a, z, beta)
    for i in range(d):
        if v[i] < 0.0 and beta[i] > 0.0:
            out[i] = -beta[i]
        else:
            out[i] = beta[i]


@njit(cache=True, nogil=True)
def entropic_floor_row(u, eps, out):
    """Entropic projection of ``u > 0`` (any scale) onto ``{w ≥ ε, Σ w = 1}``, into ``out``.

    Figure 7.3 with the corrected normalizer: sort ``u`` ascending; the floored coordinates are
    the ``l`` smallest (Lemma 9) for the smallest ``l`` with ``u_(l+1)/Z_l > ε``, where
    ``Z_l = Σ_{j>l} u_(j)/(1 − lε)``; then ``w_j = ε`` on them and ``u_j/Z_l`` elsewhere. Needs
    ``0 ≤ ε < 1/d`` (``dε < 1``: at ``l = d − 1`` the test reads ``1 − (d−1)ε > ε``, so some
    ``l`` always qualifies). ``out`` may be ``u``.
    """
    d = u.shape[0]
    order = np.argsort(u)
    tail = 0.0
    for i in range(d):
        tail += u[i]
    n_floor = d - 1
    norm = u[order[d - 1]] / (1.0 - (d - 1) * eps)
    for ell in range(d):
        z_l = tail / (1.0 - ell * eps)
        if u[order[ell]] > eps * z_l:
            n_floor = ell
            norm = z_l
            break
        tail -= u[order[ell]]
    # Write in ascending order so ``out`` may alias ``u`` (u[order[j]] is read before written).
    for j in range(d):
        k = order[j]
        out[k] = eps if j < n_floor else u[k] / norm


@njit(cache=True, nogil=True)
def _rows(kind, v, param, out):
    n = v.shape[0]
    for r in range(n):
        if kind == 0:
            simplex_row(v[r], param, out[r])
        elif kind == 1:
            l1_ball_row(v[r], param, out[r])
        else:
            entropic_floor_row(v[r], param, out[r])


def _batched(kind: int, v: np.ndarray, param: float) -> np.ndarray:
    v = np.asarray(v, dtype=np.float64)
    flat = np.ascontiguousarray(v.reshape(-1, v.shape[-1]))
    out = np.empty_like(flat)
    _rows(kind, flat, float(param), out)
    return out.reshape(v.shape)


def project_simplex(v: np.ndarray, z: float = 1.0) -> np.ndarray:
    """Return the Euclidean projection of each row (last axis) of ``v`` onto ``{w ≥ 0, Σw = z}``.

    Examples
    --------
    >>> project_simplex(np.array([0.5, 1.5, -1.0])).tolist()
    [0.0, 1.0, 0.0]
    """
    return _batched(0, v, z)


def project_l1_ball(v: np.ndarray, z: float = 1.0) -> np.ndarray:
    """Return the Euclidean projection of each row (last axis) of ``v`` onto ``{‖w‖₁ ≤ z}``.

    Examples
    --------
    >>> project_l1_ball(np.array([[0.2, -0.3], [2.0, -1.0]])).tolist()
    [[0.2, -0.3], [1.0, 0.0]]
    """
    return _batched(1, v, z)


def project_entropic_floor(u: np.ndarray, eps: float) -> np.ndarray:
    """Return ``argmin_{w ≥ ε, Σw = 1} KL(w ‖ u)`` for each row (last axis) of ``u ≥ 0``.

    Needs ``0 ≤ ε < 1/d``. With ``ε = 0`` it is ``u/Σu``.

    Examples
    --------
    >>> project_entropic_floor(np.array([0.01, 0.09, 0.9]), 0.1).round(4).tolist()
    [0.1, 0.1, 0.8]
    """
    return _batched(2, u, eps)
