"""Loss families of the OCO, classification, multiclass and regression protocols, with subgradients.

Every round's convex loss is

``f_t(w) = ⟨g_t, w⟩ + (σ/2)‖w − z_t‖²``                         (``loss="linear"``), or
``f_t(w) = ℓ(⟨w, x_t⟩, y_t) + (σ/2)‖w − z_t‖²``                 (example-based losses), or
``f_t(w) = max_{r≠y_t} [1 − ⟨w_{y_t} − w_r, x_t⟩]₊``            (``loss="multiclass_hinge"``),

with ``ℓ`` one of ``absolute |p − y|``, ``squared ½(p − y)²``, ``hinge [1 − y p]₊`` and
``logistic log(1 + e^{−y p})``; ``σ ≥ 0`` is a constant of the game (strongly convex environments,
Shalev-Shwartz 2007, §4.1, Lemma 4) and ``z_t`` defaults to 0. The multiclass hinge (Shalev-Shwartz
2007, Eq. (5.19) with γ = 1; Crammer et al. 2006, §7) reads ``w ∈ ℝ^{k·d}`` as the rows
``w_0 .. w_{k−1}`` of ``W ∈ ℝ^{k×d}`` (row-major), ``x_t ∈ ℝ^d`` and a label ``y_t ∈ {0..k−1}``.
The arena evaluates ``f_t`` and one subgradient at the player's ``w_t``; players never compute
losses themselves, so every player sees the same subgradient convention:

* ``absolute``: ``sign(p − y)·x`` (0 at ``p = y``);
* ``hinge``: ``−y·x`` when ``y p < 1``, else 0 (the kink ``y p = 1`` takes 0);
* ``logistic``: ``−y·x / (1 + e^{y p})``;
* ``multiclass_hinge``: with ``s`` the highest-scoring wrong label (the first on ties) and the
  margin ``m = ⟨w_y − w_s, x⟩``, ``φ(x, s) − φ(x, y)`` (``+x`` in row s, ``−x`` in row y) when
  ``m < 1``, else 0 (Shalev-Shwartz 2007, §5.3.2).

In ``multiclass`` the prediction is the label ``ŷ_t``: ``y_t`` when ``m > 0``, else ``s`` — a tie
for the top score is a mistake (as a zero margin is in binary classification; the mistake bounds
need ``f_t(w_t) ≥ 1`` on every mistake round).

References
----------
Shalev-Shwartz 2007, §2.1 and §5.3.1 (regression losses), Eq. (5.1) (hinge; the equation prints
``w_t`` inside the hinge where the comparator's ``w`` is meant), §5.3.2 and Eq. (5.19) (multiclass);
Kotłowski 2017, §2 (1-Lipschitz logistic and hinge); Crammer, Dekel, Keshet, Shalev-Shwartz &
Singer 2006, §7 (the multiclass hinge of the single-label case).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

EXAMPLE_LOSSES: tuple[str, ...] = ("absolute", "squared", "hinge", "logistic")
"""Losses of a scalar prediction ``⟨w, x⟩`` (classification and regression)."""
MULTICLASS_LOSSES: tuple[str, ...] = ("multiclass_hinge",)
"""Losses of the ``multiclass`` protocol (k scores ``⟨w_r, x⟩``)."""
LOSS_KINDS: tuple[str, ...] = ("linear", *EXAMPLE_LOSSES, *MULTICLASS_LOSSES)
LOSS_CODES = {k: i for i, k in enumerate(("linear", *EXAMPLE_LOSSES))}
"""Integer codes of the scalar loss kinds, for kernels (:func:`prediction_loss_scalar`); the
multiclass losses have none (no compiled player plays them)."""


class RoundData(NamedTuple):
    """What the adversary reveals in one round, for R replicates.

    Attributes
    ----------
    g : ndarray (R, d) or None
        Linear part ``g_t`` (``loss="linear"``).
    x : ndarray (R, d) or None
        Features ``x_t`` (example-based losses; shown before predicting in classification and
        regression).
    y : ndarray (R,) or None
        Labels ``y_t`` (±1 in classification; the label index ``0 .. k−1``, as a float, in
        multiclass).
    z : ndarray (R, d) or None
        Centre of the strongly convex term (None: 0).
    """

    g: np.ndarray | None = None
    x: np.ndarray | None = None
    y: np.ndarray | None = None
    z: np.ndarray | None = None

    def round(self, j: int) -> RoundData:
        """Return round ``j`` of a block (arrays with a round axis at position 1)."""
        return RoundData(*(None if a is None else a[:, j] for a in self))


class Feedback(NamedTuple):
    """What a player observes after round t (batched over R replicates).

    Attributes
    ----------
    w : ndarray (R, d)
        The point ``w_t`` the player committed to.
    value : ndarray (R,)
        ``f_t(w_t)``.
    grad : ndarray (R, d)
        The arena's subgradient of ``f_t`` at ``w_t`` (convention in the module docstring).
    data : RoundData
        The raw round (``g`` or ``x, y``, and ``z``).
    prediction : ndarray (R,) or None
        ``ŷ_t = ⟨w_t, x_t⟩`` for example-based losses; the predicted label (a tie for the top
        score counts as a mistake: see the module docstring) for ``multiclass_hinge``.
    dloss : ndarray (R,) or None
        ``ℓ'(ŷ_t, y_t)``, the derivative in the prediction (so ``grad = dloss·x + σ(w − z)``);
        None for linear and multiclass losses.
    """

    w: np.ndarray
    value: np.ndarray
    grad: np.ndarray
    data: RoundData
    prediction: np.ndarray | None = None
    dloss: np.ndarray | None = None


def prediction_loss(kind: str, p: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(ℓ(p, y), ℓ'(p, y))`` elementwise for an example-based loss.

    Examples
    --------
    >>> v, d = prediction_loss("hinge", np.array([0.5, 2.0]), np.array([1.0, 1.0]))
    >>> v.tolist(), d.tolist()
    ([0.5, 0.0], [-1.0, -0.0])
    """
    p = np.asarray(p, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if kind == "absolute":
        return np.abs(p - y), np.sign(p - y)
    if kind == "squared":
        r = p - y
        return 0.5 * r * r, r
    if kind == "hinge":
        m = y * p
        return np.maximum(1.0 - m, 0.0), np.where(m < 1.0, -y, -0.0 * y)
    if kind == "logistic":
        m = y * p
        return np.logaddexp(0.0, -m), -y * _expit(-m)
    raise ValueError(f"unknown example loss {kind!r}; expected one of {EXAMPLE_LOSSES}")


def multiclass_scores(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Return the k scores ``⟨w_r, x⟩`` of flattened ``W`` (..., k·d) on features x (..., d).

    Examples
    --------
    >>> multiclass_scores(np.array([1.0, 0.0, 0.0, 2.0, -1.0, -1.0]), np.array([3.0, 1.0]))
    array([ 3.,  2., -4.])
    """
    w = np.asarray(w, dtype=np.float64)
    x = np.asarray(x, dtype=np.float64)
    d = x.shape[-1]
    if d == 0 or w.shape[-1] % d:
        raise ValueError(f"w has {w.shape[-1]} coordinates, not a multiple of the {d} features")
    k = w.shape[-1] // d
    return np.einsum("...kd,...d->...k", w.reshape(*w.shape[:-1], k, d), x)


def multiclass_margin(
    w: np.ndarray, x: np.ndarray, y: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return ``(margin, runner_up, label)``: ``m = ⟨w_y − w_s, x⟩`` against the highest-scoring
    wrong label ``s`` (the first on ties), ``s`` and ``y`` as integer arrays (broadcast shape).

    Examples
    --------
    >>> m, s, y = multiclass_margin(np.array([1.0, 0.0, 0.0, 2.0]), np.array([3.0, 1.0]), 1.0)
    >>> float(m), int(s), int(y)
    (-1.0, 0, 1)
    """
    scores = multiclass_scores(w, x)
    k = scores.shape[-1]
    label = np.broadcast_to(np.asarray(y), scores.shape[:-1]).astype(np.int64)
    own = np.take_along_axis(scores, label[..., None], axis=-1)[..., 0]
    others = np.where(np.arange(k) == label[..., None], -np.inf, scores)
    runner = np.argmax(others, axis=-1)
    margin = own - np.take_along_axis(scores, runner[..., None], axis=-1)[..., 0]
    return margin, runner, label


def multiclass_hinge(
    w: np.ndarray, x: np.ndarray, y: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Return ``(value, subgradient, label, margin)`` of the multiclass hinge, batched.

    ``value = [1 − m]₊`` with the margin ``m = ⟨w_y − w_s, x⟩`` against the highest-scoring wrong
    label ``s`` (the first on ties); the subgradient (shape (..., k·d), broadcast) is ``+x`` in row
    s and ``−x`` in row y when ``m < 1``, else 0; ``label`` is the prediction ``ŷ``: y if
    ``m > 0``, else s (a tie for the top score is a mistake).

    Parameters
    ----------
    w : ndarray (..., k·d)
        Flattened ``W`` (row r = ``w_r``).
    x : ndarray (..., d)
    y : ndarray (...)
        Labels in ``0 .. k−1`` (integer-valued floats).

    Examples
    --------
    >>> w = np.array([1.0, 0.0, 0.0, 2.0, -1.0, -1.0])     # W rows (1, 0), (0, 2), (−1, −1)
    >>> v, g, label, m = multiclass_hinge(w, np.array([3.0, 1.0]), np.array(1.0))
    >>> float(v), g.tolist(), float(label), float(m)       # s = 0 (score 3 > 2): a mistake
    (2.0, [3.0, 1.0, -3.0, -1.0, 0.0, 0.0], 0.0, -1.0)

    References
    ----------
    Shalev-Shwartz 2007, Eq. (5.19) (γ = 1) and its subgradient (§5.3.2).
    """
    x = np.asarray(x, dtype=np.float64)
    margin, runner, label = multiclass_margin(w, x, y)
    k, d = np.shape(w)[-1] // x.shape[-1], x.shape[-1]
    value = np.maximum(1.0 - margin, 0.0)
    step = np.where(margin < 1.0, 1.0, 0.0)
    rows = (np.arange(k) == runner[..., None]).astype(np.float64)
    rows -= np.arange(k) == label[..., None]
    x_full = np.broadcast_to(x, (*margin.shape, d))
    grad = step[..., None, None] * rows[..., :, None] * x_full[..., None, :]
    predicted = np.where(margin > 0.0, label, runner).astype(np.float64)
    return value, grad.reshape(*margin.shape, k * d), predicted, margin


def _expit(a: np.ndarray) -> np.ndarray:
    """Stable logistic function ``1/(1 + e^{−a})``."""
    out = np.empty_like(a)
    pos = a >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-a[pos]))
    e = np.exp(a[~pos])
    out[~pos] = e / (1.0 + e)
    return out


def evaluate(
    kind: str, sigma: float, w: np.ndarray, data: RoundData
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Return ``(f(w), subgradient, prediction, dloss)`` for points ``w`` of shape (..., d).

    ``data`` arrays broadcast against ``w`` (one round: (R, d); a block: (R, n, d)).

    Examples
    --------
    >>> w = np.array([[1.0, -1.0]])
    >>> v, g, _, _ = evaluate("linear", 0.0, w, RoundData(g=np.array([[0.5, 2.0]])))
    >>> v.tolist(), g.tolist()
    ([-1.5], [[0.5, 2.0]])
    """
    w = np.asarray(w, dtype=np.float64)
    if kind == "multiclass_hinge":
        value, grad, prediction, _ = multiclass_hinge(w, data.x, data.y)
        dloss = None
    elif kind == "linear":
        g = np.asarray(data.g, dtype=np.float64)
        value = np.einsum("...i,...i->...", g, w)
        grad = np.array(g, dtype=np.float64, copy=True)
        prediction = dloss = None
    else:
        x = np.asarray(data.x, dtype=np.float64)
        prediction = np.einsum("...i,...i->...", x, w)
        value, dloss = prediction_loss(kind, prediction, data.y)
        grad = dloss[..., None] * x
    if sigma:
        diff = w if data.z is None else w - data.z
        value = value + 0.5 * sigma * np.einsum("...i,...i->...", diff, diff)
        grad = grad + sigma * diff
    return value, grad, prediction, dloss


def feedback(kind: str, sigma: float, w: np.ndarray, data: RoundData) -> Feedback:
    """Return the :class:`Feedback` of one round for committed points ``w`` (R, d)."""
    value, grad, prediction, dloss = evaluate(kind, sigma, w, data)
    return Feedback(w, value, grad, data, prediction, dloss)


@njit(cache=True)
def prediction_loss_scalar(code, p, y):
    """Return ``(ℓ(p, y), ℓ'(p, y))`` for the loss of :data:`LOSS_CODES` ``code`` (numba)."""
    if code == 1:
        r = p - y
        return abs(r), (1.0 if r > 0 else (-1.0 if r < 0 else 0.0))
    if code == 2:
        r = p - y
        return 0.5 * r * r, r
    if code == 3:
        m = y * p
        if m < 1.0:
            return 1.0 - m, -y
        return 0.0, 0.0
    if code == 4:
        m = y * p
        if m >= 0:
            e = math.exp(-m)
            return math.log1p(e), -y * e / (1.0 + e)
        e = math.exp(m)
        return -m + math.log1p(e), -y / (1.0 + e)
    return 0.0, 0.0


def kernel_data(data: RoundData, loss: str | None):
    """Unpack a block of :class:`RoundData` into the arrays :func:`round_gradient` reads.

    Returns ``(loss_code, g, x, y, z, has_z)``: (R, n, d) float arrays (a (1, 1, 1) dummy where
    the round data has none), labels (R, n) (dummy (1, 1)) and whether ``z`` is given.
    """
    if (loss or "linear") not in LOSS_CODES:
        raise ValueError(f"no compiled kernel evaluates the {loss} loss")
    code = LOSS_CODES[loss or "linear"]
    dummy3 = np.zeros((1, 1, 1))
    g = dummy3 if data.g is None else np.ascontiguousarray(data.g, dtype=np.float64)
    x = dummy3 if data.x is None else np.ascontiguousarray(data.x, dtype=np.float64)
    y = np.zeros((1, 1)) if data.y is None else np.ascontiguousarray(data.y, dtype=np.float64)
    has_z = data.z is not None
    z = np.ascontiguousarray(data.z, dtype=np.float64) if has_z else dummy3
    return code, g, x, y, z, has_z


@njit(cache=True)
def round_gradient(loss_code, sigma, w, g, x, y, z, has_z, r, j, grad):
    """Write the arena's subgradient of round ``j`` of replicate ``r`` at ``w`` into ``grad``.

    Same convention as :func:`arena.oco.losses.evaluate`: ``g_t`` (linear) or ``ℓ'(⟨w, x⟩, y)·x``,
    plus ``σ(w − z_t)``.
    """
    d = w.shape[0]
    if loss_code == 0:
        for i in range(d):
            grad[i] = g[r, j, i]
    else:
        p = 0.0
        for i in range(d):
            p += x[r, j, i] * w[i]
        _, dl = prediction_loss_scalar(loss_code, p, y[r, j])
        for i in range(d):
            grad[i] = dl * x[r, j, i]
    if sigma != 0.0:
        for i in range(d):
            diff = w[i] - z[r, j, i] if has_z else w[i]
            grad[i] += sigma * diff
