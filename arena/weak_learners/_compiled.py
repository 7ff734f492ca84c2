"""The weak learners' compiled lanes as the boosters' chunk kernels call them, over CSR rows.

A booster's chunk kernel (``arena/players/online_bbm.py``, ``arena/players/adaboost_ol.py``) plays
every round of a chunk in one numba loop when its weak learner has a compiled lane: ``linear``
(:mod:`arena.weak_learners.linear`) and ``normalized_linear``
(:mod:`arena.weak_learners.normalized`). :func:`compiled_lanes` hands the kernel the learner's kind,
constants and state arrays; :func:`lane_score`, :func:`lane_output` and :func:`lane_learn` dispatch
on the kind. The rows are CSR arrays (``indptr``, ``indices``, ``values``: row ``r·n + j`` is
replicate r's example of round j, as :class:`arena.oco.losses.SparseRows`), so a lane reads and
moves only the row's entries and the bias: O(nnz) per lane and round. A dense chunk is passed as the
CSR arrays of all its entries (:func:`dense_csr`), which the lanes read in the dense kernels' order,
so the two forms give the same numbers (``tests/players/test_boosting_kernels.py``).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numba import njit

from arena.validation import readonly, readonly_contiguous
from arena.weak_learners.linear import LinearLearner, linear_update_row
from arena.weak_learners.normalized import (
    NormalizedLinear,
    _normalized_output,
    _normalized_update,
)

LINEAR, NORMALIZED = 0, 1
"""Kinds of compiled lanes."""

_NO_ARRAY = np.zeros((0, 0, 0))


class CompiledLanes(NamedTuple):
    """What a chunk kernel needs of a weak learner: kind, constants and state (updated in place).

    ``code`` is :meth:`LinearLearner.kernel_code` (``linear``) or ``1`` when a
    ``normalized_linear`` lane answers its sign; ``aux``/``scale``/``stats`` are the learner's
    other state arrays (empty (0, 0, 0) where it has none).
    """

    kind: int
    code: int
    rate: float
    bound: float
    theta: np.ndarray
    aux: np.ndarray
    scale: np.ndarray
    stats: np.ndarray


def compiled_lanes(learner: Any) -> CompiledLanes | None:
    """Return ``learner``'s compiled lanes, or None when it has none (the booster then plays its
    readable per-round loop). Only the registered classes qualify, not subclasses, which may
    change the rule."""
    if type(learner) is LinearLearner:
        theta, sq_grads = learner.kernel_state()
        spec = learner._spec
        return CompiledLanes(
            LINEAR,
            learner.kernel_code(),
            float(learner.rate),
            float(spec.bound),
            theta,
            sq_grads,
            _NO_ARRAY,
            _NO_ARRAY,
        )
    if type(learner) is NormalizedLinear and learner._spec.task == "classification":
        theta, sq_grads, scale, stats = learner.kernel_state()
        return CompiledLanes(
            NORMALIZED,
            int(learner.output == "sign"),
            float(learner.rate),
            1.0,
            theta,
            sq_grads,
            scale,
            stats,
        )
    return None


def dense_csr(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The CSR arrays of every entry of a dense chunk ``x`` (R, n, d), zeros included, read-only
    as :class:`~arena.oco.losses.SparseRows`' are (one compiled specialization of the kernels).

    Examples
    --------
    >>> [a.tolist() for a in dense_csr(np.array([[[1.0, 0.0]]]))]
    [[0, 2], [0, 1], [1.0, 0.0]]
    """
    n_rep, n, d = x.shape
    indptr = np.arange(n_rep * n + 1, dtype=np.int64) * d
    indices = np.tile(np.arange(d, dtype=np.int64), n_rep * n)
    return readonly(indptr), readonly(indices), readonly_contiguous(x, np.float64).reshape(-1)


@njit(cache=True, nogil=True)
def lane_score(theta, r, lane, cols, vals):
    """``θ·x̃`` of lane ``(r, lane)`` on the row's entries ``(cols, vals)``, the bias last."""
    acc = 0.0
    for k in range(cols.shape[0]):
        acc += theta[r, lane, cols[k]] * vals[k]
    return acc + theta[r, lane, theta.shape[2] - 1]


@njit(cache=True, nogil=True)
def lane_output(kind, code, bound, stats, r, lane, score):
    """The lane's answer to a classification example with score ``θ·x̃``."""
    if kind == LINEAR:
        return 1.0 if score >= 0.0 else -1.0
    return _normalized_output(stats, r, lane, score, code == 1)


@njit(cache=True, nogil=True)
def lane_learn(kind, code, rate, bound, theta, aux, scale, stats, r, lane, cols, vals, score, y, w):
    """One update of lane ``(r, lane)`` with target ``y`` and weight ``w`` (0: a no-op)."""
    if kind == LINEAR:
        linear_update_row(theta, aux, r, lane, cols, vals, score, y, w, code, rate, bound)
    else:
        _normalized_update(theta, aux, scale, stats, r, lane, cols, vals, score, y, w, rate)
