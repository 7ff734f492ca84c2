"""Shared pieces of the linear online classifiers (Perceptron, p-norm, Winnow, PA, primal-dual).

Link functions of the quasi-additive family of Shalev-Shwartz 2007 (§5.1, Figure 5.1), the
relative-mistake-bound inequality (Appendix A.5, Lemma 19) and the reading of one classification
round from a :class:`~arena.oco.losses.Feedback`. A mistake is ``y_t ⟨w_t, x_t⟩ ≤ 0``: a zero
margin counts (the analysis needs ``g_t(w_t) ≥ γ`` on mistake rounds).
"""

from __future__ import annotations

import math

import numpy as np

from arena.errors import ConfigError
from arena.oco.losses import Feedback, SparseRows, is_sparse
from arena.params import Interval, OneOf
from arena.spec import GameSpec


def read_example(fb: Feedback) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return ``(x, y, ŷ)`` of one round: features (R, d), labels (R,), predictions ``⟨w_t, x_t⟩``.

    Sparse features (:class:`~arena.oco.losses.SparseRows`) are returned as they are.

    ``ŷ`` is the arena's ``fb.prediction`` (computed with the ``w_t`` the player committed); it is
    recomputed from ``fb.w`` only when the loss family carries none.
    """
    if fb.data.x is None or fb.data.y is None:
        raise ValueError("a classification / regression round needs features x and labels y")
    x = fb.data.x if is_sparse(fb.data.x) else np.asarray(fb.data.x, dtype=np.float64)
    y = np.asarray(fb.data.y, dtype=np.float64)
    pred = fb.prediction
    if pred is None:
        w = np.asarray(fb.w, dtype=np.float64)
        pred = x.dot(w) if is_sparse(x) else np.einsum("rd,rd->r", w, x)
    return x, y, np.asarray(pred, dtype=np.float64)


def sparse_axpy(w: np.ndarray, coef: np.ndarray, x: SparseRows) -> None:
    """Add ``coef[r]·x_r`` to ``w[r]`` in place for sparse rows x (R, d): O(nnz).

    Examples
    --------
    >>> w = np.zeros((2, 3))
    >>> sparse_axpy(w, np.array([2.0, -1.0]), SparseRows.from_dense(np.eye(2, 3)))
    >>> w.tolist()
    [[2.0, 0.0, 0.0], [0.0, -1.0, 0.0]]
    """
    rows = np.repeat(np.arange(x.n_rows), np.diff(x.indptr))
    lo, hi = int(x.indptr[0]), int(x.indptr[-1])
    np.add.at(w, (rows, x.indices[lo:hi]), coef[rows] * x.values[lo:hi])


def lemma19(b, c):
    """Return ``c + b² + b√c``: if ``x − b√x − c ≤ 0`` (``b, c ≥ 0``) then ``x`` is at most this.

    Shalev-Shwartz 2007, Lemma 19; it turns ``|M| ≤ b√|M| + H`` into a mistake bound.

    Examples
    --------
    >>> float(lemma19(2.0, 1.0))  # x − 2√x − 1 ≤ 0  ⇒  √x ≤ 1 + √2, x ≤ 3 + 2√2 ≤ 1 + 4 + 2
    7.0
    """
    b = np.asarray(b, dtype=np.float64)
    c = np.maximum(np.asarray(c, dtype=np.float64), 0.0)
    return c + b * b + b * np.sqrt(c)


def pnorm_link(theta: np.ndarray, p: float) -> np.ndarray:
    """Return the p-norm link (5.9) row-wise: ``sign(θ_i)|θ_i|^{p−1} / ‖θ‖_p^{p−2}``, 0 at θ = 0.

    Computed as ``‖θ‖_p · sign(θ_i) (|θ_i|/‖θ‖_p)^{p−1}`` with ``‖θ‖_p`` taken after dividing by
    ``max|θ_i|``, so no power overflows for large p (Link(0) = 0 removes the 0/0). The map is
    positively homogeneous of degree 1 and ``∇f* = Link/(p−1)`` for ``f = ‖w‖_q²/(2(q−1))``.

    Examples
    --------
    >>> pnorm_link(np.array([[3.0, -4.0], [0.0, 0.0]]), 2.0).tolist()
    [[3.0, -4.0], [0.0, 0.0]]
    """
    theta = np.asarray(theta, dtype=np.float64)
    norm = pnorm(theta, p)[..., None]
    safe = np.where(norm > 0.0, norm, 1.0)
    return np.where(norm > 0.0, safe * np.sign(theta) * (np.abs(theta) / safe) ** (p - 1.0), 0.0)


def pnorm(v: np.ndarray, p: float) -> np.ndarray:
    """Return ``‖v‖_p`` of each row (``p = inf`` allowed), scaled by ``max|v_i|`` (no overflow)."""
    v = np.abs(np.asarray(v, dtype=np.float64))
    m = v.max(axis=-1)
    if math.isinf(p):
        return m
    safe = np.where(m > 0.0, m, 1.0)
    return np.where(m > 0.0, safe * ((v / safe[..., None]) ** p).sum(axis=-1) ** (1.0 / p), 0.0)


def softmax(theta: np.ndarray) -> np.ndarray:
    """Return ``exp(θ_i) / Σ_j exp(θ_j)`` row-wise, shifted by the row maximum (no overflow)."""
    theta = np.asarray(theta, dtype=np.float64)
    e = np.exp(theta - theta.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


P_CONSTRAINTS = [Interval(2, None), OneOf("auto")]
"""What the ``p`` of a p-norm player may be: a number ≥ 2, or ``"auto"`` (:func:`resolve_p`)."""


def resolve_p(p: float | str, dim: int) -> float:
    """Return the p of a p-norm player in a game of dimension d: ``"auto"`` is ``max(2, 2 ln d)``.

    Examples
    --------
    >>> resolve_p("auto", 1), resolve_p(3, 100)
    (2.0, 3.0)
    """
    return max(2.0, 2.0 * math.log(dim)) if p == "auto" else float(p)


def check_domain_contains_l1_ball(spec: GameSpec, component: str, simplex_ok: bool) -> None:
    """Check that ``spec.domain`` contains every ``w`` the player can output (``‖w‖₁ ≤ 1``).

    Outputs on the simplex (``simplex_ok``) or in the ℓ1 unit ball lie in every ball or box of
    radius ≥ 1 (``‖w‖_∞ ≤ ‖w‖₂ ≤ ‖w‖₁ ≤ 1``).
    """
    dom = spec.domain
    if dom is None or dom.kind == "unconstrained":
        return
    if dom.kind == "simplex":
        if not simplex_ok:
            raise ConfigError(component, "domain", "signed weights do not lie on the simplex")
        return
    if dom.radius < 1.0:
        raise ConfigError(
            component, "domain", f"a {dom.kind} of radius {dom.radius} < 1 may not hold ‖w‖₁ ≤ 1"
        )
