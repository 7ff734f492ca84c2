"""The Perceptron: the quasi-additive classifier with the identity link (Shalev-Shwartz 2007)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from numba import njit

from arena.oco.components import OCOPlayer, game_dim
from arena.oco.losses import EXAMPLE_LOSSES, Feedback, RoundData, is_sparse
from arena.params import POSITIVE
from arena.players._quasi_additive import lemma19, read_example, sparse_axpy
from arena.spec import GameSpec, PlayerTags
from arena.validation import readonly_contiguous


@njit(cache=True, nogil=True)
def _perceptron_sparse_block(indptr, indices, values, y, c, total, mistakes, x_max, out):
    """Play a block of sparse rows (CSR, row ``r·n + j``): O(nnz) arithmetic a round.

    ``out[r, j] = Σ_{i∈M} y_i x_i / c`` (the one O(d) pass: the point the protocol records);
    the margin ``y⟨w, x⟩`` is summed over the row's entries in column order, as the arena's
    sparse prediction is; a mistake adds ``y·x`` on the row's coordinates.
    """
    n_rep, d = total.shape
    n = out.shape[1]
    for r in range(n_rep):
        for j in range(n):
            for i in range(d):
                out[r, j, i] = total[r, i] / c
            k = r * n + j
            p = 0.0
            for q in range(indptr[k], indptr[k + 1]):
                p += values[q] * out[r, j, indices[q]]
            label = y[r, j]
            if label * p <= 0.0:
                sq = 0.0
                for q in range(indptr[k], indptr[k + 1]):
                    total[r, indices[q]] += label * values[q]
                    sq += values[q] * values[q]
                mistakes[r] += 1
                x_max[r] = max(x_max[r], math.sqrt(sq))


class Perceptron(OCOPlayer):
    """Perceptron: ``w_1 = 0``; on a mistake (``y_t⟨w_t, x_t⟩ ≤ 0``), ``w_{t+1} = w_t + y_t x_t/c``.

    Shalev-Shwartz 2007, Figure 5.1, with ``Link(θ) = θ`` (``f = ½‖w‖²`` on ℝ^d, conservative
    dual ascent on the
    hinge ``[1 − y⟨w, x⟩]₊`` of the mistake rounds only). ``w_t = (1/c) Σ_{i∈M, i<t} y_i x_i``, so
    predictions do not depend on ``c > 0`` (§5.1.1); ``c = 1`` is the Perceptron of Srebro,
    Lecture 16 (``w_{t+1} = w_t + [[y_t⟨w_t, x_t⟩ ≤ 0]] y_t x_t``).

    Parameters
    ----------
    c : float
        Trade-off constant of Fig 5.1 (> 0); it only scales ``w_t``.

    Notes
    -----
    Guarantee (Shalev-Shwartz 2007, Corollary 5): with ``M`` the mistake rounds and
    ``X = max_{t∈M} ‖x_t‖₂``, for every ``u ∈ ℝ^d``,
    ``|M| ≤ H + X‖u‖√H + X²‖u‖²`` where ``H = Σ_{t∈M} [1 − y_t⟨u, x_t⟩]₊``. On data separable with
    margin γ by a unit ``u`` (``y_t⟨u, x_t⟩ ≥ γ``) and ``‖x_t‖ ≤ R`` this is Novikoff's
    ``|M| ≤ (R/γ)²``. The bound depends on ``u``, so it is exposed as :meth:`mistake_bound` and not
    declared by :meth:`bounds` (a ``("mistakes", nan)`` bound must hold for the run whatever ``u``).

    The player plays in ``classification`` only, on an unconstrained domain; it ignores the
    arena's surrogate loss and reads ``x_t``, ``y_t`` and ``ŷ_t = ⟨w_t, x_t⟩`` from the feedback.
    Sparse rows (tag ``sparse_input``) cost O(nnz) a round besides the recorded ``w_t``.

    Examples
    --------
    >>> from arena.oco.domains import Domain
    >>> from arena.oco.losses import RoundData, feedback
    >>> spec = GameSpec("classification", 2, 2, dim=2, domain=Domain(), loss="hinge")
    >>> p = Perceptron()
    >>> p.reset(spec, [np.random.default_rng(0)])
    >>> for x, y in [([1.0, 0.5], 1.0), ([0.5, -2.0], -1.0)]:
    ...     rd = RoundData(x=np.array([x]), y=np.array([y]))
    ...     p.update(feedback("hinge", 0.0, p.predict(rd.x), rd))
    >>> p.predict().tolist(), p.mistakes.tolist()
    ([[1.0, 0.5]], [1])

    References
    ----------
    Rosenblatt (1958). Shalev-Shwartz 2007, Figure 5.1 (§5.1), §5.1.1 and Corollary 5; Srebro,
    Lecture 16, slides "...back to the Perceptron" (Perceptron as OGD on the mistake rounds).
    """

    tags = PlayerTags(
        protocols=frozenset({"classification"}),
        randomized=False,
        domains=frozenset({"unconstrained"}),
        losses=frozenset(EXAMPLE_LOSSES),
        sparse_input=True,
    )
    parameter_constraints: ClassVar = {"c": [POSITIVE]}

    def __init__(self, c: float = 1.0):
        self.c = c

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._c = float(self.c)
        d = game_dim(spec)
        self._sum = np.zeros((spec.n_replicates, d))  # Σ_{i∈M} y_i x_i (exact for integer x)
        self._mistakes = np.zeros(spec.n_replicates, dtype=np.int64)
        self._x_max = np.zeros(spec.n_replicates)

    def predict(self, x: np.ndarray | None = None) -> np.ndarray:
        return self._sum / self._c

    def update(self, fb: Feedback) -> None:
        x, y, pred = read_example(fb)
        err = y * pred <= 0.0
        if is_sparse(x):  # O(nnz): the row's coordinates only
            sparse_axpy(self._sum, np.where(err, y, 0.0), x)
            norms = np.sqrt(x.row_norms_sq())
        else:
            self._sum += np.where(err, y, 0.0)[:, None] * x
            norms = np.linalg.norm(x, axis=1)
        self._mistakes += err
        self._x_max = np.maximum(self._x_max, np.where(err, norms, 0.0))

    def play_block(self, data: RoundData, spec: GameSpec) -> np.ndarray:
        """The per-round loop; sparse rows by a compiled O(nnz) kernel."""
        if not is_sparse(data.x):
            return super().play_block(data, spec)
        x = data.x
        out = np.empty(x.shape)
        y = readonly_contiguous(data.y, np.float64)
        args = (x.indptr, x.indices, x.values, y, self._c, self._sum)
        _perceptron_sparse_block(*args, self._mistakes, self._x_max, out)
        return out

    @property
    def mistakes(self) -> np.ndarray:
        """Number of mistakes ``|M|`` so far, per replicate (R,)."""
        return self._mistakes.copy()

    @property
    def radius(self) -> np.ndarray:
        """``X = max_{t∈M} ‖x_t‖₂`` over the mistake rounds so far (R,) (0 before any mistake)."""
        return self._x_max.copy()

    def mistake_bound(self, u_norm, hinge) -> np.ndarray:
        """Return Cor 5's bound ``H + X‖u‖√H + X²‖u‖²`` on ``|M|`` (R,).

        Parameters
        ----------
        u_norm : float or ndarray (R,)
            ``‖u‖₂`` of the comparator.
        hinge : float or ndarray (R,)
            ``H = Σ_{t∈M} [1 − y_t⟨u, x_t⟩]₊``, the comparator's hinge loss on the mistake rounds.
        """
        return lemma19(self._x_max * np.asarray(u_norm, dtype=np.float64), hinge)

    def comparator_mistake_bound(self, u, hinge) -> np.ndarray:
        """Return Cor 5's bound on ``|M|`` at the comparator ``u`` (R, d), per replicate (R,).

        ``hinge`` is ``Σ_{t∈M}[1 − y_t⟨u, x_t⟩]₊`` (R,); the ``mistake_bound`` metric calls this
        with an adversary's declared comparator.
        """
        return self.mistake_bound(np.linalg.norm(np.asarray(u, dtype=np.float64), axis=-1), hinge)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"c": 0.25}
