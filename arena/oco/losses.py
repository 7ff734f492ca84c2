"""Loss families of the OCO, classification, multiclass and regression protocols, with subgradients.

Every round's convex loss is

``f_t(w) = ⟨g_t, w⟩ + (σ/2)‖w − z_t‖²``                         (``loss="linear"``), or
``f_t(w) = ℓ(⟨w, x_t⟩, y_t) + (σ/2)‖w − z_t‖²``                 (example-based losses), or
``f_t(w) = max_{r≠y_t} [1 − ⟨w_{y_t} − w_r, x_t⟩]₊``            (``loss="multiclass_hinge"``),
``f_t(w) = max_{r∈Y_t, s∉Y_t} [1 − ⟨w_r − w_s, x_t⟩]₊``         (``loss="label_ranking_hinge"``),
``f_t(w) = avg or max_{(i,j)∈E_t} [(y_i − y_j) − ⟨w, x_i − x_j⟩]₊``  (``loss="ranking_avg"``,
``"ranking_max"``),

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

* ``label_ranking_hinge`` (Shalev-Shwartz 2007, Eq. (8.1) with γ = 1; ``y_t = Σ_{r∈Y_t} 2^r``
  encodes the relevant set): with ``r'`` the lowest-scoring relevant label and ``s'`` the
  highest-scoring irrelevant one (the first on ties), i.e. the pair of (8.4), and the margin
  ``m = ⟨w_{r'} − w_{s'}, x⟩``, ``+x`` in row s' and ``−x`` in row r' when ``m < 1``, else 0. An
  empty or full ``Y_t`` has no pair: the loss and subgradient are 0. The prediction is ``y_t``
  when ``m > 0`` (every relevant label scores strictly above every irrelevant one), else −1
  (a ranking mistake; a tie is one).

* ``ranking_avg`` / ``ranking_max`` (Shalev-Shwartz 2007, §5.3.4, Eqs. (5.25)–(5.26)): ``x_t``
  holds the k rows ``x_1 .. x_k`` of ``X_t``, ``y_t ∈ ℝ^k`` the target scores, ``E_t`` the pairs
  with ``y_i > y_j``; avg: ``−(1/|E_t|) Σ_{violated (i,j)} (x_i − x_j)`` over the pairs with a
  positive hinge; max: ``−(x_i − x_j)`` for the first pair (i, then j ascending) of largest
  hinge when it is positive, else 0. Both are Lipschitz with constant
  ``max_{(i,j)∈E_t} ‖x_i − x_j‖₂`` (the norm; Shalev-Shwartz 2007, §5.3.4 prints its square: an
  erratum). The
  prediction is the fraction of ``E_t``'s pairs the scores ``X_t w`` misorder (``ŷ_i ≤ ŷ_j``;
  0 when ``E_t`` is empty): an instance ranking's prediction is a k-vector, and the engine keeps
  one number per round.

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
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from arena.validation import readonly_contiguous

EXAMPLE_LOSSES: tuple[str, ...] = ("absolute", "squared", "hinge", "logistic")
"""Losses of a scalar prediction ``⟨w, x⟩`` (classification and regression)."""
MULTICLASS_LOSSES: tuple[str, ...] = ("multiclass_hinge",)
"""Losses of the ``multiclass`` protocol (k scores ``⟨w_r, x⟩``)."""
LABEL_RANKING_LOSSES: tuple[str, ...] = ("label_ranking_hinge",)
"""Losses of the ``label_ranking`` protocol (k scores, a relevant set)."""
MAX_RANKING_LABELS = 52
"""Most labels of a ``label_ranking`` game: ``y_t = Σ_{r∈Y_t} 2^r`` must be exact in float64."""
INSTANCE_RANKING_LOSSES: tuple[str, ...] = ("ranking_avg", "ranking_max")
"""Losses of the ``instance_ranking`` protocol (k instances, target scores)."""
LOSS_KINDS: tuple[str, ...] = (
    "linear",
    *EXAMPLE_LOSSES,
    *MULTICLASS_LOSSES,
    *LABEL_RANKING_LOSSES,
    *INSTANCE_RANKING_LOSSES,
)
LOSS_CODES = {k: i for i, k in enumerate(("linear", *EXAMPLE_LOSSES))}
"""Integer codes of the scalar loss kinds, for kernels (:func:`prediction_loss_scalar`); the
multiclass losses have none (no compiled player plays them)."""


class SparseRows:
    """Feature rows in compressed sparse row (CSR) form: R replicates × n rounds, or R rows.

    The rows are those of a dense array of ``shape`` (``(R, n, d)`` for a block, ``(R, d)`` for
    one round) in C order: row ``r·n + j`` is replicate r's example of the block's round j, so
    ``scipy.sparse.csr_matrix((values, indices, indptr), shape=(R·n, d))`` reshaped to
    ``(R, n, d)`` is :meth:`densify`. Row k holds the pairs ``(indices[p], values[p])`` for
    ``indptr[k] ≤ p < indptr[k+1]``, with strictly increasing column indices in ``[0, d)``
    (canonical CSR: sorted, no duplicates; the engine checks it, O(nnz)). Explicit zeros are
    allowed and change nothing.

    An adversary emits them as ``RoundData.x`` (and declares
    :meth:`~arena.oco.components.OCOAdversary.sparse_features`); players whose tags say
    ``sparse_input=True`` receive them as they are (``predict(x)``, ``fb.data.x``, ``play_block``),
    the others receive :meth:`densify`'s array.

    Parameters
    ----------
    indptr : ndarray of int64, shape (rows + 1,)
    indices : ndarray of int64, shape (nnz,)
    values : ndarray of float64, shape (nnz,)
    shape : tuple of int
        The dense shape, ``(R, n, d)`` or ``(R, d)``; ``rows`` is the product of all but d.

    Examples
    --------
    >>> x = SparseRows.from_dense(np.array([[[0.0, 2.0, 0.0], [1.0, 0.0, 3.0]]]))  # R=1, n=2
    >>> x.indptr.tolist(), x.indices.tolist(), x.values.tolist(), x.nnz
    ([0, 1, 3], [1, 0, 2], [2.0, 1.0, 3.0], 3)
    >>> x.round(1).densify().tolist()       # round 2 of every replicate, shape (R, d)
    [[1.0, 0.0, 3.0]]
    >>> x.dot(np.array([[1.0, 1.0, 1.0]])).tolist()  # ⟨w_r, x_{r,j}⟩ in O(nnz)
    [[2.0, 4.0]]
    """

    __slots__ = ("indices", "indptr", "shape", "values")

    def __init__(self, indptr, indices, values, shape):
        # read-only C arrays whoever built the rows: the sparse kernels (5–7 s each to compile)
        # then see one layout and one flag, not one specialization per caller
        self.indptr = readonly_contiguous(indptr, np.int64)
        self.indices = readonly_contiguous(indices, np.int64)
        self.values = readonly_contiguous(values, np.float64)
        self.shape = tuple(int(s) for s in shape)

    def __repr__(self) -> str:
        return f"SparseRows(shape={self.shape}, nnz={self.nnz})"

    @property
    def ndim(self) -> int:
        """Number of dense dimensions (2 or 3)."""
        return len(self.shape)

    @property
    def d(self) -> int:
        """The feature dimension (last dense dimension)."""
        return self.shape[-1]

    @property
    def n_rows(self) -> int:
        """Number of rows, ``R·n`` (block) or R (one round)."""
        return int(np.prod(self.shape[:-1]))

    @property
    def nnz(self) -> int:
        """Number of stored entries."""
        return int(self.indptr[-1] - self.indptr[0]) if self.indptr.size else 0

    @classmethod
    def from_dense(cls, a: np.ndarray) -> SparseRows:
        """Return the rows of a dense array (..., d), keeping only its non-zero entries."""
        a = np.asarray(a, dtype=np.float64)
        flat = a.reshape(-1, a.shape[-1])
        mask = flat != 0.0
        indptr = np.zeros(flat.shape[0] + 1, dtype=np.int64)
        np.cumsum(mask.sum(axis=1), out=indptr[1:])
        rows, cols = np.nonzero(mask)
        return cls(indptr, cols, flat[rows, cols], a.shape)

    @classmethod
    def from_scipy(cls, matrix: Any, shape: tuple[int, ...]) -> SparseRows:
        """Return the rows of a ``scipy.sparse`` matrix of ``prod(shape[:-1])`` rows and d columns.

        The matrix is converted to canonical CSR (sorted indices, duplicates summed) first.
        """
        import scipy.sparse as sp

        m = sp.csr_matrix(matrix, dtype=np.float64)
        m.sum_duplicates()
        m.sort_indices()
        return cls(m.indptr, m.indices, m.data, shape)

    def to_scipy(self) -> Any:
        """Return the rows as a ``scipy.sparse.csr_matrix`` of shape (rows, d)."""
        import scipy.sparse as sp

        base = self.indptr[0]
        return sp.csr_matrix(
            (self.values[base:], self.indices[base:], self.indptr - base),
            shape=(self.n_rows, self.d),
        )

    def densify(self) -> np.ndarray:
        """Return the dense array of :attr:`shape` (O(rows·d) memory)."""
        out = np.zeros((self.n_rows, self.d))
        _sparse_scatter(self.indptr, self.indices, self.values, out)
        return out.reshape(self.shape)

    def copy(self) -> SparseRows:
        return SparseRows(self.indptr.copy(), self.indices.copy(), self.values.copy(), self.shape)

    def readonly(self) -> SparseRows:
        """Return a view whose arrays are read-only (what a component is shown)."""
        views = []
        for a in (self.indptr, self.indices, self.values):
            v = a.view()
            v.flags.writeable = False
            views.append(v)
        return SparseRows(*views, self.shape)

    def take_rows(self, rows: np.ndarray, shape: tuple[int, ...]) -> SparseRows:
        """Return the rows ``rows`` (in that order) as rows of the dense ``shape``: O(nnz of
        those rows).

        A stream over a file's examples holds them once as rows (N, d) and serves a block of
        R replicates × n rounds by their example indices in replicate-major order.

        Examples
        --------
        >>> examples = SparseRows([0, 1, 3, 4], [2, 0, 1, 3], [1.0, 2.0, 3.0, 4.0], (3, 4))
        >>> order = np.array([[2, 0], [1, 1]])          # replicate r's examples, rounds 1 and 2
        >>> block = examples.take_rows(order.reshape(-1), (2, 2, 4))
        >>> block.densify()[1].tolist()                  # replicate 1: example 1 twice
        [[2.0, 3.0, 0.0, 0.0], [2.0, 3.0, 0.0, 0.0]]
        """
        rows = np.asarray(rows, dtype=np.int64)
        start, stop = self.indptr[rows], self.indptr[rows + 1]
        lengths = stop - start
        indptr = np.zeros(rows.size + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        pos = np.repeat(start - indptr[:-1], lengths) + np.arange(int(indptr[-1]))
        return SparseRows(indptr, self.indices[pos], self.values[pos], shape)

    def rounds(self, lo: int, hi: int) -> SparseRows:
        """Return rounds ``lo .. hi−1`` of a block (R, n, d) as a block (R, hi − lo, d)."""
        n_rep, n, d = self.shape
        rows = (np.arange(n_rep)[:, None] * n + np.arange(lo, hi)[None, :]).reshape(-1)
        return self.take_rows(rows, (n_rep, hi - lo, d))

    def round(self, j: int) -> SparseRows:
        """Return round ``j`` of a block (R, n, d): the R rows ``r·n + j``, shape (R, d)."""
        n_rep, n, d = self.shape
        return self.take_rows(np.arange(n_rep) * n + j, (n_rep, d))

    @staticmethod
    def concat_rounds(parts: list[SparseRows]) -> SparseRows:
        """Concatenate blocks (R, n_i, d) along the round axis."""
        n_rep, d = parts[0].shape[0], parts[0].shape[-1]
        ns = [p.shape[1] for p in parts]
        rows = []
        offset = 0
        for n in ns:
            rows.append(offset + np.arange(n_rep)[:, None] * n + np.arange(n)[None, :])
            offset += n_rep * n
        joined = SparseRows(
            np.concatenate([np.zeros(1, np.int64)] + [np.diff(p.indptr) for p in parts]).cumsum(),
            np.concatenate([p.indices[p.indptr[0] : p.indptr[-1]] for p in parts]),
            np.concatenate([p.values[p.indptr[0] : p.indptr[-1]] for p in parts]),
            (offset, d),
        )
        order = np.concatenate(rows, axis=1).reshape(-1)
        return joined.take_rows(order, (n_rep, sum(ns), d))

    def row_norms_sq(self) -> np.ndarray:
        """Return ``‖x‖²`` of every row, shape ``shape[:-1]`` (O(nnz))."""
        out = np.empty(self.n_rows)
        _sparse_row_sq(self.indptr, self.values, out)
        return out.reshape(self.shape[:-1])

    def dot(self, w: np.ndarray) -> np.ndarray:
        """Return ``⟨w, x⟩`` row by row, shape ``shape[:-1]``, in O(nnz).

        ``w`` is (R, d) (one point per replicate, for every round of a block) or of the dense
        shape (one point per row). Each sum adds the products in increasing column order, so it
        is bitwise the dense ``Σ_i x_i w_i`` of a loop over i (zeros add nothing).
        """
        w = np.ascontiguousarray(w, dtype=np.float64)
        per_row = self.n_rows // max(1, w.size // self.d)
        out = np.empty(self.n_rows)
        rows = w.reshape(-1, self.d)
        _sparse_row_dots(self.indptr, self.indices, self.values, rows, per_row, out)
        return out.reshape(self.shape[:-1])

    def check(self) -> str | None:
        """Return what makes these rows malformed (None when they are canonical CSR)."""
        rows = self.n_rows
        if self.ndim not in (2, 3):
            return f"sparse rows of dense shape {self.shape}, expected (R, n, d)"
        if self.indptr.shape != (rows + 1,):
            return f"indptr of shape {self.indptr.shape}, expected ({rows + 1},)"
        lo, hi = int(self.indptr[0]), int(self.indptr[-1])
        if np.any(np.diff(self.indptr) < 0) or lo < 0 or hi > self.indices.size:
            return "indptr is not non-decreasing within the stored entries"
        if self.values.size != self.indices.size:
            return f"{self.indices.size} indices but {self.values.size} values"
        idx = self.indices[lo:hi]
        if idx.size and (idx.min() < 0 or idx.max() >= self.d):
            return f"a column index outside [0, {self.d})"
        if not _sparse_canonical(self.indptr, self.indices):
            return "column indices not strictly increasing within a row (canonical CSR)"
        return None


def is_sparse(x: Any) -> bool:
    """Return whether ``x`` holds :class:`SparseRows` (a sparse stream's features)."""
    return isinstance(x, SparseRows)


def dense_features(x: Any) -> Any:
    """Return ``x`` as a dense array when it is :class:`SparseRows`, else unchanged."""
    return x.densify() if isinstance(x, SparseRows) else x


@njit(cache=True, nogil=True)
def _sparse_scatter(indptr, indices, values, out):
    for k in range(out.shape[0]):
        for p in range(indptr[k], indptr[k + 1]):
            out[k, indices[p]] += values[p]


@njit(cache=True, nogil=True)
def _sparse_row_sq(indptr, values, out):
    for k in range(out.shape[0]):
        s = 0.0
        for p in range(indptr[k], indptr[k + 1]):
            s += values[p] * values[p]
        out[k] = s


@njit(cache=True, nogil=True)
def _sparse_row_dots(indptr, indices, values, w, per_row, out):
    """``out[k] = ⟨w[k // per_row], row k⟩``, products added in increasing column order."""
    for k in range(out.shape[0]):
        wk = w[k // per_row]
        s = 0.0
        for p in range(indptr[k], indptr[k + 1]):
            s += values[p] * wk[indices[p]]
        out[k] = s


@njit(cache=True, nogil=True)
def _sparse_canonical(indptr, indices):
    for k in range(indptr.shape[0] - 1):
        for p in range(indptr[k] + 1, indptr[k + 1]):
            if indices[p] <= indices[p - 1]:
                return False
    return True


class RoundData(NamedTuple):
    """What the adversary reveals in one round, for R replicates.

    Attributes
    ----------
    g : ndarray (R, d) or None
        Linear part ``g_t`` (``loss="linear"``).
    x : ndarray (R, d), SparseRows or None
        Features ``x_t`` (example-based losses; shown before predicting in classification and
        regression): dense, or :class:`SparseRows` of a sparse stream (example losses of the
        classification and regression protocols).
    y : ndarray (R,) or None
        Labels ``y_t`` (±1 in classification; the label index ``0 .. k−1``, as a float, in
        multiclass).
    z : ndarray (R, d) or None
        Centre of the strongly convex term (None: 0).
    """

    g: np.ndarray | None = None
    x: np.ndarray | SparseRows | None = None
    y: np.ndarray | None = None
    z: np.ndarray | None = None

    def round(self, j: int) -> RoundData:
        """Return round ``j`` of a block (arrays with a round axis at position 1)."""
        return RoundData(
            *(None if a is None else a.round(j) if is_sparse(a) else a[:, j] for a in self)
        )

    def densified(self) -> RoundData:
        """Return this data with dense features (sparse rows densified; otherwise itself)."""
        return self._replace(x=self.x.densify()) if is_sparse(self.x) else self


class Feedback:
    """What a player observes after round t (batched over R replicates).

    Attributes
    ----------
    w : ndarray (R, d)
        The point ``w_t`` the player committed to.
    value : ndarray (R,)
        ``f_t(w_t)``.
    grad : ndarray (R, d)
        The arena's subgradient of ``f_t`` at ``w_t`` (convention in the module docstring). On a
        sparse stream it is computed on first access, ``dloss·x + σ(w − z)`` densified (O(R·d)):
        a sparse-aware player reads ``dloss`` and ``data.x`` instead.
    data : RoundData
        The raw round (``g`` or ``x, y``, and ``z``).
    prediction : ndarray (R,) or None
        ``ŷ_t = ⟨w_t, x_t⟩`` for example-based losses; the predicted label (a tie for the top
        score counts as a mistake: see the module docstring) for ``multiclass_hinge``.
    dloss : ndarray (R,) or None
        ``ℓ'(ŷ_t, y_t)``, the derivative in the prediction (so ``grad = dloss·x + σ(w − z)``);
        None for linear and multiclass losses. With sparse ``x`` (:class:`SparseRows`) the
        gradient's sparse form is ``dloss[r]·x_r`` (plus ``σ(w − z)`` when ``sigma > 0``).
    sigma : float
        The game's σ (only needed to form ``grad`` lazily).
    """

    __slots__ = ("_grad", "data", "dloss", "prediction", "sigma", "value", "w")

    def __init__(
        self,
        w: np.ndarray,
        value: np.ndarray,
        grad: np.ndarray | None,
        data: RoundData,
        prediction: np.ndarray | None = None,
        dloss: np.ndarray | None = None,
        sigma: float = 0.0,
    ):
        self.w, self.value, self._grad, self.data = w, value, grad, data
        self.prediction, self.dloss, self.sigma = prediction, dloss, float(sigma)

    @property
    def sparse(self) -> bool:
        """Whether the features are :class:`SparseRows` (read ``dloss`` and ``data.x``)."""
        return is_sparse(self.data.x)

    @property
    def grad(self) -> np.ndarray:
        if self._grad is None:
            self._grad = dense_gradient(self.dloss, self.data, self.sigma, self.w)
        return self._grad


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


def relevant_mask(y: np.ndarray, k: int) -> np.ndarray:
    """Return the relevant sets ``Y_t`` encoded by ``y = Σ_{r∈Y} 2^r`` as a boolean (..., k) mask.

    Examples
    --------
    >>> relevant_mask(np.array([5.0, 2.0]), 3).tolist()       # {0, 2} and {1}
    [[True, False, True], [False, True, False]]
    """
    code = np.asarray(y, dtype=np.float64).astype(np.int64)
    return ((code[..., None] >> np.arange(k, dtype=np.int64)) & 1).astype(bool)


def relevant_code(mask: np.ndarray) -> np.ndarray:
    """Return ``y = Σ_{r∈Y} 2^r`` (float) of boolean relevant-set masks (..., k).

    Examples
    --------
    >>> relevant_code(np.array([[True, False, True]])).tolist()
    [5.0]
    """
    mask = np.asarray(mask, dtype=bool)
    powers = 2 ** np.arange(mask.shape[-1], dtype=np.int64)
    return (mask * powers).sum(axis=-1).astype(np.float64)


def ranking_pair(
    scores: np.ndarray, mask: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Return ``(margin, r', s', has_pair)``: the most violated pair of a label ranking.

    ``r'`` is the lowest-scoring relevant label and ``s'`` the highest-scoring irrelevant one (the
    first on ties), so ``m = ρ_{r'} − ρ_{s'} = min_{r∈Y, s∉Y} (ρ_r − ρ_s)``: Shalev-Shwartz 2007,
    Eq. (8.4). Where Y is empty or full there is no pair: ``has_pair`` False, margin +inf.

    Examples
    --------
    >>> m, r, s, ok = ranking_pair(np.array([3.0, 1.0, 2.0]), np.array([True, True, False]))
    >>> float(m), int(r), int(s), bool(ok)
    (-1.0, 1, 2, True)
    """
    scores = np.asarray(scores, dtype=np.float64)
    rel = np.where(mask, scores, np.inf)
    irr = np.where(mask, -np.inf, scores)
    r = np.argmin(rel, axis=-1)
    s = np.argmax(irr, axis=-1)
    has_pair = mask.any(axis=-1) & (~mask).any(axis=-1)
    low = np.take_along_axis(rel, r[..., None], axis=-1)[..., 0]
    high = np.take_along_axis(irr, s[..., None], axis=-1)[..., 0]
    margin = np.where(has_pair, low - np.where(has_pair, high, 0.0), np.inf)
    return margin, r, s, has_pair


def label_ranking_hinge(
    w: np.ndarray, x: np.ndarray, y: np.ndarray, gamma: float = 1.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Return ``(value, subgradient, prediction, margin)`` of the max-pair hinge, batched.

    ``g(w) = max_{r∈Y, s∉Y} [γ − ⟨w_r − w_s, x⟩]₊ = [γ − m]₊`` with the margin ``m`` of the
    pair of :func:`ranking_pair`; the subgradient (shape (..., k·d)) is ``+x`` in row s' and
    ``−x`` in row r' when ``m < γ``, else 0; the prediction is y when ``m > 0``, else −1.

    Parameters
    ----------
    w : ndarray (..., k·d)
        Flattened ``W`` (row r = ``w_r``).
    x : ndarray (..., d)
    y : ndarray (...)
        Relevant sets, ``Σ_{r∈Y} 2^r``.
    gamma : float
        The margin γ of Eq. (8.1) (the arena's loss uses γ = 1).

    Examples
    --------
    >>> w = np.array([1.0, 0.0, 0.0, 2.0, -1.0, -1.0])     # scores on x = (3, 1): 3, 2, −4
    >>> v, g, pred, m = label_ranking_hinge(w, np.array([3.0, 1.0]), np.array(3.0))  # Y={0,1}
    >>> float(v), g.tolist(), float(pred), float(m)       # m = 2 − (−4) = 6: no loss
    (0.0, [0.0, 0.0, 0.0, 0.0, 0.0, 0.0], 3.0, 6.0)
    >>> v, g, pred, m = label_ranking_hinge(w, np.array([3.0, 1.0]), np.array(2.0))  # Y={1}
    >>> float(v), g.tolist(), float(pred)                 # pair (1, 0): m = −1
    (2.0, [3.0, 1.0, -3.0, -1.0, 0.0, 0.0], -1.0)

    References
    ----------
    Shalev-Shwartz 2007, Eq. (8.1) and the pair (8.4).
    """
    x = np.asarray(x, dtype=np.float64)
    scores = multiclass_scores(w, x)
    k, d = scores.shape[-1], x.shape[-1]
    y = np.broadcast_to(np.asarray(y, dtype=np.float64), scores.shape[:-1])
    margin, r, s, has_pair = ranking_pair(scores, relevant_mask(y, k))
    value = np.where(has_pair, np.maximum(gamma - margin, 0.0), 0.0)
    step = np.where(has_pair & (margin < gamma), 1.0, 0.0)
    rows = (np.arange(k) == s[..., None]).astype(np.float64)
    rows -= np.arange(k) == r[..., None]
    x_full = np.broadcast_to(x, (*margin.shape, d))
    grad = step[..., None, None] * rows[..., :, None] * x_full[..., None, :]
    prediction = np.where(margin > 0.0, y, -1.0)
    # + 0.0 turns the −0.0 of 0·(−x) into 0.0
    return value, grad.reshape(*margin.shape, k * d) + 0.0, prediction, margin


def instance_ranking(
    kind: str, w: np.ndarray, x: np.ndarray, y: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return ``(value, subgradient, prediction)`` of ``ranking_avg`` / ``ranking_max``, batched.

    With the rows ``x_i`` of ``X`` (``x`` of shape (..., k·d)), ``E = {(i, j) : y_i > y_j}`` and
    the pair hinges ``ℓ_ij = [(y_i − y_j) − ⟨w, x_i − x_j⟩]₊``: avg ``(1/|E|) Σ_E ℓ_ij`` (5.25),
    max ``max_E ℓ_ij`` (5.26), 0 when E is empty; subgradients and prediction as in the module
    docstring.

    Parameters
    ----------
    kind : {"ranking_avg", "ranking_max"}
    w : ndarray (..., d)
    x : ndarray (..., k·d)
        The k instances' rows, flattened.
    y : ndarray (..., k)
        The target scores.

    Examples
    --------
    >>> x = np.array([1.0, 0.0, 0.0, 1.0, 0.0, 0.0])       # x_1 = e_1, x_2 = e_2, x_3 = 0
    >>> y = np.array([2.0, 1.0, 1.0])                      # E = {(1,2), (1,3)}
    >>> v, g, p = instance_ranking("ranking_avg", np.zeros(2), x, y)
    >>> float(v), g.tolist(), float(p)                     # ℓ_12 = ℓ_13 = 1
    (1.0, [-1.0, 0.5], 1.0)
    >>> v, g, p = instance_ranking("ranking_max", np.array([1.5, 0.0]), x, y)
    >>> float(v), g.tolist(), float(p)                     # ℓ_12 = 0, ℓ_13 = 0 (margins 1.5)
    (0.0, [0.0, 0.0], 0.0)

    References
    ----------
    Shalev-Shwartz 2007, §5.3.4, Eqs. (5.25) and (5.26).
    """
    w = np.asarray(w, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    k, d = y.shape[-1], w.shape[-1]
    rows = np.asarray(x, dtype=np.float64).reshape(*np.shape(x)[:-1], k, d)
    scores = np.einsum("...kd,...d->...k", rows, w)
    pairs = y[..., :, None] > y[..., None, :]  # (i, j) ∈ E
    gap = y[..., :, None] - y[..., None, :] - (scores[..., :, None] - scores[..., None, :])
    hinge = np.where(pairs, np.maximum(gap, 0.0), 0.0)
    n_pairs = pairs.sum(axis=(-2, -1))
    # ∇_w ℓ_ij = −(x_i − x_j) where ℓ_ij > 0; diff[..., i, j, :] = x_i − x_j
    diff = rows[..., :, None, :] - rows[..., None, :, :]
    if kind == "ranking_avg":
        value = hinge.sum(axis=(-2, -1)) / np.maximum(n_pairs, 1)
        active = (pairs & (gap > 0.0)).astype(np.float64)
        grad = -np.einsum("...ij,...ijd->...d", active, diff) / np.maximum(n_pairs, 1)[..., None]
    elif kind == "ranking_max":
        flat = hinge.reshape(*hinge.shape[:-2], k * k)
        best = np.argmax(flat, axis=-1)
        value = np.take_along_axis(flat, best[..., None], axis=-1)[..., 0]
        pick = (np.arange(k * k) == best[..., None]) & (value[..., None] > 0.0)
        pick = pick.reshape(hinge.shape).astype(np.float64)
        grad = -np.einsum("...ij,...ijd->...d", pick, diff)
    else:
        raise ValueError(f"unknown instance ranking loss {kind!r}")
    wrong = (pairs & (scores[..., :, None] <= scores[..., None, :])).sum(axis=(-2, -1))
    prediction = wrong / np.maximum(n_pairs, 1)
    return value, grad + 0.0, prediction


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
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None, np.ndarray | None]:
    """Return ``(f(w), subgradient, prediction, dloss)`` for points ``w`` of shape (..., d).

    ``data`` arrays broadcast against ``w`` (one round: (R, d); a block: (R, n, d)). With sparse
    features (:class:`SparseRows`, example losses) the predictions cost O(nnz) and the
    subgradient is returned as None: its sparse form is ``dloss·x`` (plus ``σ(w − z)``), and
    :func:`dense_gradient` builds the dense one.

    Examples
    --------
    >>> w = np.array([[1.0, -1.0]])
    >>> v, g, _, _ = evaluate("linear", 0.0, w, RoundData(g=np.array([[0.5, 2.0]])))
    >>> v.tolist(), g.tolist()
    ([-1.5], [[0.5, 2.0]])
    >>> x = SparseRows.from_dense(np.array([[0.0, 2.0]]))
    >>> v, g, p, dl = evaluate("hinge", 0.0, w, RoundData(x=x, y=np.array([1.0])))
    >>> v.tolist(), g, p.tolist(), dl.tolist()       # ⟨w, x⟩ = −2: hinge 3, gradient −1·x
    ([3.0], None, [-2.0], [-1.0])
    """
    w = np.asarray(w, dtype=np.float64)
    if is_sparse(data.x):
        if kind not in EXAMPLE_LOSSES:
            raise ValueError(f"sparse features need an example loss {EXAMPLE_LOSSES}, not {kind}")
        prediction = data.x.dot(w)
        value, dloss = prediction_loss(kind, prediction, data.y)
        if sigma:
            diff = w if data.z is None else w - data.z
            value = value + 0.5 * sigma * np.einsum("...i,...i->...", diff, diff)
        return value, None, prediction, dloss
    if kind == "multiclass_hinge":
        value, grad, prediction, _ = multiclass_hinge(w, data.x, data.y)
        dloss = None
    elif kind == "label_ranking_hinge":
        value, grad, prediction, _ = label_ranking_hinge(w, data.x, data.y)
        dloss = None
    elif kind in INSTANCE_RANKING_LOSSES:
        value, grad, prediction = instance_ranking(kind, w, data.x, data.y)
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


def dense_gradient(dloss: np.ndarray, data: RoundData, sigma: float, w: np.ndarray) -> np.ndarray:
    """Return the dense subgradient ``dloss·x + σ(w − z)`` of example losses (..., d).

    Examples
    --------
    >>> x = SparseRows.from_dense(np.array([[0.0, 2.0]]))
    >>> dense_gradient(np.array([-1.0]), RoundData(x=x), 0.0, np.zeros((1, 2))).tolist()
    [[-0.0, -2.0]]
    """
    grad = np.asarray(dloss)[..., None] * dense_features(data.x)
    if sigma:
        grad = grad + sigma * (w if data.z is None else w - data.z)
    return grad


def sparse_gradient_norms(
    dloss: np.ndarray, data: RoundData, sigma: float, w: np.ndarray
) -> np.ndarray:
    """Return ``‖dloss·x + σ(w − z)‖₂`` for sparse ``x``: O(nnz) when σ = 0, else dense."""
    if sigma:
        return np.linalg.norm(dense_gradient(dloss, data, sigma, w), axis=-1)
    return np.abs(dloss) * np.sqrt(data.x.row_norms_sq())


def feedback(kind: str, sigma: float, w: np.ndarray, data: RoundData) -> Feedback:
    """Return the :class:`Feedback` of one round for committed points ``w`` (R, d).

    With sparse features its ``grad`` is formed on first access (see :class:`Feedback`).
    """
    value, grad, prediction, dloss = evaluate(kind, sigma, w, data)
    return Feedback(w, value, grad, data, prediction, dloss, sigma)


@njit(cache=True, nogil=True)
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
    Sparse features are densified here (dense kernels).
    """
    data = data.densified()
    if (loss or "linear") not in LOSS_CODES:
        raise ValueError(f"no compiled kernel evaluates the {loss} loss")
    code = LOSS_CODES[loss or "linear"]
    # all four read-only, dummies included: numba compiles a kernel once per pattern of
    # read-only flags, and the engine shows read-only data where a test's arrays are writable
    dummy3 = _readonly_dense(np.zeros((1, 1, 1)))
    g = dummy3 if data.g is None else _readonly_dense(data.g)
    x = dummy3 if data.x is None else _readonly_dense(data.x)
    y = _readonly_dense(np.zeros((1, 1))) if data.y is None else _readonly_dense(data.y)
    has_z = data.z is not None
    z = _readonly_dense(data.z) if has_z else dummy3
    return code, g, x, y, z, has_z


def _readonly_dense(a: np.ndarray) -> np.ndarray:
    """Return ``a`` as a C-contiguous float64 array, read-only (a view where no copy is needed)."""
    return readonly_contiguous(a, np.float64)


@njit(cache=True, nogil=True)
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
