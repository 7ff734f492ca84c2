"""The OCO losses by the textbook formulas, one example at a time, in plain Python.

The literal side of the OCO protocols: the reference loop (:mod:`arena.oco.reference`) evaluates
each round's loss and subgradient with these, and the OCO metrics' brute-force definitions
(:mod:`arena.oco.metrics`) evaluate comparators with them, independently of the vectorized
:mod:`arena.oco.losses` the driver uses.
"""

from __future__ import annotations

import math

import numpy as np

from arena.oco.losses import RoundData, is_sparse

__all__ = [
    "instance_ranking_round",
    "label_ranking_round",
    "multiclass_round",
    "round_loss",
    "scalar_loss",
]


def scalar_loss(kind: str, p: float, y: float) -> tuple[float, float]:
    """Return ``(ℓ(p, y), ℓ'(p, y))`` by the textbook formulas (one example).

    Examples
    --------
    >>> scalar_loss("squared", 3.0, 1.0), scalar_loss("hinge", 0.25, -1.0)
    ((2.0, 2.0), (1.25, 1.0))
    """
    if kind == "absolute":
        return abs(p - y), (1.0 if p > y else -1.0 if p < y else 0.0)
    if kind == "squared":
        return 0.5 * (p - y) ** 2, p - y
    if kind == "hinge":
        return (1.0 - y * p, -y) if y * p < 1.0 else (0.0, 0.0)
    if kind == "logistic":
        m = y * p
        value = math.log1p(math.exp(-m)) if m >= 0 else -m + math.log1p(math.exp(m))
        return value, -y / (1.0 + math.exp(m)) if m > -700 else -y
    raise ValueError(kind)


def multiclass_round(w: np.ndarray, x: np.ndarray, y: float) -> tuple[float, list, float]:
    """Return the multiclass hinge ``(value, subgradient, predicted label)`` by plain loops.

    Shalev-Shwartz 2007, Eq. (5.19) with γ = 1: scores ``⟨w_r, x⟩`` of the rows of W
    (row-major in ``w``), ``s`` the first highest-scoring wrong label, margin
    ``m = ⟨w_y − w_s, x⟩``; subgradient ``φ(x, s) − φ(x, y)`` when ``m < 1``; prediction y if
    ``m > 0``, else s.

    Examples
    --------
    >>> multiclass_round(np.array([1.0, 0.0, 0.0, 2.0]), np.array([3.0, 1.0]), 1.0)
    (2.0, [3.0, 1.0, -3.0, -1.0], 0.0)
    """
    d = x.shape[0]
    k = w.shape[0] // d
    scores = [sum(float(w[r * d + i]) * float(x[i]) for i in range(d)) for r in range(k)]
    label = int(y)
    runner = -1
    for r in range(k):
        if r != label and (runner < 0 or scores[r] > scores[runner]):
            runner = r
    margin = scores[label] - scores[runner]
    grad = [0.0] * (k * d)
    if margin < 1.0:
        for i in range(d):
            grad[runner * d + i] += float(x[i])
            grad[label * d + i] -= float(x[i])
    return max(0.0, 1.0 - margin), grad, float(label if margin > 0.0 else runner)


def label_ranking_round(w: np.ndarray, x: np.ndarray, y: float) -> tuple[float, list, float]:
    """Return the max-pair hinge ``(value, subgradient, prediction)`` by plain loops.

    Shalev-Shwartz 2007, Eq. (8.1) with γ = 1, every pair enumerated: ``Y`` the bits of
    ``int(y)``, the loss ``max_{r∈Y, s∉Y} [1 − (ρ_r − ρ_s)]₊`` over the scores ``ρ_r = ⟨w_r, x⟩``;
    the subgradient of the first pair (r ascending, then s) of least ``ρ_r − ρ_s``; the
    prediction y when every such difference is > 0, else −1.

    Examples
    --------
    >>> label_ranking_round(np.array([1.0, 0.0, 0.0, 2.0]), np.array([3.0, 1.0]), 2.0)
    (2.0, [3.0, 1.0, -3.0, -1.0], -1.0)
    """
    d = x.shape[0]
    k = w.shape[0] // d
    scores = [sum(float(w[r * d + i]) * float(x[i]) for i in range(d)) for r in range(k)]
    code = int(y)
    relevant = [r for r in range(k) if (code >> r) & 1]
    irrelevant = [s for s in range(k) if not (code >> s) & 1]
    best = None
    for r in relevant:
        for s in irrelevant:
            diff = scores[r] - scores[s]
            if best is None or diff < best[0]:
                best = (diff, r, s)
    grad = [0.0] * (k * d)
    if best is None:
        return 0.0, grad, float(y)
    margin, r, s = best
    if margin < 1.0:
        for i in range(d):
            grad[s * d + i] += float(x[i])
            grad[r * d + i] -= float(x[i])
    return max(0.0, 1.0 - margin), grad, float(y) if margin > 0.0 else -1.0


def instance_ranking_round(kind: str, w: np.ndarray, x: np.ndarray, y) -> tuple[float, list, float]:
    """Return ``ranking_avg`` / ``ranking_max`` ``(value, subgradient, prediction)`` by loops.

    Shalev-Shwartz 2007, §5.3.4: every pair (i, j) with ``y_i > y_j`` enumerated (i, then j
    ascending), ``ℓ_ij = max(0, (y_i − y_j) − ⟨w, x_i − x_j⟩)``; avg: the mean of ``ℓ_ij`` and of
    ``−(x_i − x_j)`` over the pairs with ``ℓ_ij > 0`` divided by ``|E|``; max: the first largest
    ``ℓ_ij`` and, when positive, its ``−(x_i − x_j)``; prediction: the share of pairs with
    ``⟨w, x_i⟩ ≤ ⟨w, x_j⟩``.

    Examples
    --------
    >>> instance_ranking_round("ranking_max", np.zeros(1), np.array([1.0, 0.0]), [1.0, 0.0])
    (1.0, [-1.0], 1.0)
    """
    d = w.shape[0]
    k = len(y)
    rows = [[float(x[i * d + c]) for c in range(d)] for i in range(k)]
    score = [sum(rows[i][c] * float(w[c]) for c in range(d)) for i in range(k)]
    pairs = [(i, j) for i in range(k) for j in range(k) if float(y[i]) > float(y[j])]
    grad = [0.0] * d
    if not pairs:
        return 0.0, grad, 0.0
    hinge = {
        p: max(0.0, float(y[p[0]]) - float(y[p[1]]) - (score[p[0]] - score[p[1]])) for p in pairs
    }
    wrong = sum(1 for i, j in pairs if score[i] <= score[j]) / len(pairs)
    if kind == "ranking_avg":
        for (i, j), h in hinge.items():
            if h > 0:
                for c in range(d):
                    grad[c] -= (rows[i][c] - rows[j][c]) / len(pairs)
        return sum(hinge.values()) / len(pairs), grad, wrong
    best = pairs[0]
    for p in pairs:
        if hinge[p] > hinge[best]:
            best = p
    if hinge[best] > 0:
        i, j = best
        grad = [-(rows[i][c] - rows[j][c]) for c in range(d)]
    return hinge[best], grad, wrong


def round_loss(kind: str, sigma: float, w: np.ndarray, data: RoundData, r: int):
    """Return ``(f(w), subgradient, prediction)`` of row ``r`` of ``data`` by plain loops.

    A row is one example: replicate r of one round's data (the reference loop), or round r of one
    replicate's record (a metric's brute-force definition). Sparse features
    (:class:`~arena.oco.losses.SparseRows`, one row per replicate) are read pair by pair.

    Examples
    --------
    >>> from arena.oco.losses import SparseRows
    >>> x = SparseRows.from_dense(np.array([[0.0, 2.0, 0.0]]))
    >>> v, g, p = round_loss("squared", 0.0, np.array([1.0, 1.0, 1.0]), RoundData(x=x, y=[1.0]), 0)
    >>> v, g.tolist(), p
    (0.5, [0.0, 2.0, 0.0], 2.0)
    """
    d = w.shape[0]
    if kind == "multiclass_hinge":
        value, grad, prediction = multiclass_round(w, data.x[r], float(data.y[r]))
    elif kind == "label_ranking_hinge":
        value, grad, prediction = label_ranking_round(w, data.x[r], float(data.y[r]))
    elif kind in ("ranking_avg", "ranking_max"):
        value, grad, prediction = instance_ranking_round(kind, w, data.x[r], list(data.y[r]))
    elif kind == "linear":
        g = data.g[r]
        value = sum(float(g[i]) * float(w[i]) for i in range(d))
        grad = [float(g[i]) for i in range(d)]
        prediction = None
    elif is_sparse(data.x):  # the row's stored pairs (i, x_i): ⟨w, x⟩ and ℓ'·x over them
        lo, hi = int(data.x.indptr[r]), int(data.x.indptr[r + 1])
        pairs = [(int(data.x.indices[p]), float(data.x.values[p])) for p in range(lo, hi)]
        prediction = sum(v * float(w[i]) for i, v in pairs)
        value, dl = scalar_loss(kind, prediction, float(data.y[r]))
        grad = [0.0] * d
        for i, v in pairs:
            grad[i] = dl * v
    else:
        x = data.x[r]
        prediction = sum(float(x[i]) * float(w[i]) for i in range(d))
        value, dl = scalar_loss(kind, prediction, float(data.y[r]))
        grad = [dl * float(x[i]) for i in range(d)]
    if sigma:
        z = np.zeros(d) if data.z is None else data.z[r]
        value += 0.5 * sigma * sum((float(w[i]) - float(z[i])) ** 2 for i in range(d))
        grad = [grad[i] + sigma * (float(w[i]) - float(z[i])) for i in range(d)]
    return value, np.array(grad), prediction
