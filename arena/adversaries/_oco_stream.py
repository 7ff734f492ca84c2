"""Shared machinery of the data-stream OCO adversaries: ordered block generation and samplers.

Every oblivious data adversary of :mod:`arena.adversaries.random_linear`,
:mod:`arena.adversaries.separable_stream`, :mod:`arena.adversaries.ill_conditioned`,
:mod:`arena.adversaries.strongly_convex` and :mod:`arena.adversaries.dataset_stream` draws its
rounds forward, in round order, from the replicate's stream: :class:`StreamAdversary` turns that
generator into ``data_block(t0, n)`` for any split of the rounds into consecutive blocks (the last
block is kept, so asking for it again, as the per-round ``features``/``reveal`` path does, returns
the same data). The samplers consume a fixed number of draws per round, so the split never changes
the data.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from scipy.special import ndtr

from arena.oco.components import ObliviousOCOAdversary
from arena.oco.domains import DOMAIN_KINDS, Domain
from arena.oco.losses import EXAMPLE_LOSSES, RoundData, SparseRows, is_sparse
from arena.params import OneOf

SPLIT_PARAMS = frozenset({"test_fraction", "test_size"})
"""The parameters by which a stream adversary holds out a test split (0: none)."""


class StreamAdversary(ObliviousOCOAdversary):
    """Base of oblivious OCO adversaries whose rounds are generated forward, in round order.

    Subclasses build their state in ``reset``, call :meth:`_start_stream` at its end and implement
    :meth:`_generate`, which returns the next ``n`` rounds (arrays with a round axis) and advances
    the replicates' streams. :meth:`data_block` then serves any consecutive split of the rounds;
    rounds skipped over are generated and discarded, and rounds already passed (other than the
    last block, which is kept) cannot be asked again.
    """

    def feature_bound(self) -> float | None:
        """Return ``X ≥ ‖x_t‖₂`` for every round (example-based data), or None if unknown.

        :class:`arena.adversaries.rescaled.Rescaled` multiplies it by the largest scale to declare
        the rescaled game's gradient bound.
        """
        return None

    def stream_identity(self) -> tuple[str, dict]:
        """The registry name and parameters that seed the stream, without a test split's
        parameter (``test_fraction`` / ``test_size``) when it is 0: a game without a split keeps
        the stream (and the published numbers) it had before those parameters existed."""
        name, params = super().stream_identity()
        return name, {k: v for k, v in params.items() if k not in SPLIT_PARAMS or v}

    def test_split(self) -> RoundData:
        """Return the held-out test examples of every replicate: ``x`` (R, m, d), ``y`` (R, m).

        Only for adversaries whose tags declare the oracle ``"test_split"`` (a dataset with
        ``test_fraction > 0``, an i.i.d. stream with ``test_size > 0``): examples drawn with the
        replicate's seed that the stream never shows, on which the ``online_to_batch`` metric
        evaluates the risk of the learner's averaged and last iterates (Shalev-Shwartz 2007,
        Appendix B.3). Valid after ``reset``; the arrays are copies.
        """
        split = getattr(self, "_test", None)
        if split is None:
            raise KeyError(f"{self!r} holds out no test split")
        return RoundData(*(None if a is None else a.copy() for a in split))

    def _start_stream(self) -> None:
        self._next_t = 1  # first round not generated yet
        self._cache_t0 = 1
        self._cache: RoundData | None = None

    def _generate(self, n: int) -> RoundData:
        """Return the next ``n`` rounds, arrays (R, n, ...), advancing the streams."""
        raise NotImplementedError

    def data_block(self, t0: int, n: int) -> RoundData:
        t0, n = int(t0), int(n)
        end = t0 + n
        if t0 < self._cache_t0:
            raise ValueError(
                f"{self.registry_name()}: rounds {t0}.. were already passed (the data are "
                "generated forward only; ask for rounds in order)"
            )
        parts: list[RoundData] = []
        if self._cache is not None:
            cached_end = self._cache_t0 + block_rounds(self._cache)
            if t0 < cached_end:
                hi = min(end, cached_end)
                parts.append(slice_rounds(self._cache, t0 - self._cache_t0, hi - self._cache_t0))
        if t0 > self._next_t:
            self._generate(t0 - self._next_t)  # skipped rounds: generated and discarded
            self._next_t = t0
        if end > self._next_t or not parts:
            parts.append(self._generate(max(end - self._next_t, 0)))
            self._next_t = max(end, self._next_t)
        block = concat_rounds(parts)
        self._cache_t0, self._cache = t0, block
        return RoundData(*(None if a is None else a.copy() for a in block))


def block_rounds(data: RoundData) -> int:
    """Number of rounds of a block (the round axis is axis 1)."""
    for a in data:
        if a is not None:
            return int(a.shape[1])
    return 0


def slice_rounds(data: RoundData, lo: int, hi: int) -> RoundData:
    """Rounds ``lo .. hi-1`` of a block (sparse features too)."""
    return RoundData(
        *(None if a is None else a.rounds(lo, hi) if is_sparse(a) else a[:, lo:hi] for a in data)
    )


def concat_rounds(parts: list[RoundData]) -> RoundData:
    """Concatenate blocks along the round axis."""
    if len(parts) == 1:
        return parts[0]
    return RoundData(
        *(
            None
            if parts[0][k] is None
            else SparseRows.concat_rounds([p[k] for p in parts])
            if is_sparse(parts[0][k])
            else np.concatenate([p[k] for p in parts], axis=1)
            for k in range(len(RoundData._fields))
        )
    )


# ----------------------------------------------------------------------------------------------
# samplers (fixed number of draws per round)


# BLAS products (``@``, ``einsum`` with optimize) may round a row differently depending on how
# many rows are multiplied at once; these reductions add the terms one coordinate at a time, in
# a fixed order, so each row's result is bitwise the same whatever the block size.


@njit(cache=True, nogil=True)
def _row_dot_kernel(a, b, out):
    for i in range(a.shape[0]):
        s = a[i, 0] * b[i, 0]
        for k in range(1, a.shape[1]):
            s += a[i, k] * b[i, k]
        out[i] = s


@njit(cache=True, nogil=True)
def _rows_times_kernel(a, mt, out):
    for i in range(a.shape[0]):
        for e in range(mt.shape[1]):
            s = a[i, 0] * mt[0, e]
            for k in range(1, a.shape[1]):
                s += a[i, k] * mt[k, e]
            out[i, e] = s


def row_dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Return ``Σ_k a[..., k]·b[..., k]`` summed in coordinate order (bitwise block-independent)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.broadcast_to(np.asarray(b, dtype=np.float64), a.shape)
    k = a.shape[-1]
    flat_a = np.ascontiguousarray(a).reshape(-1, k)
    flat_b = np.ascontiguousarray(b).reshape(-1, k)
    out = np.empty(flat_a.shape[0])
    _row_dot_kernel(flat_a, flat_b, out)
    return out.reshape(a.shape[:-1])


def row_norm(a: np.ndarray) -> np.ndarray:
    """Return the Euclidean norm of each row of ``a``, block-independent (see :func:`row_dot`)."""
    return np.sqrt(row_dot(a, a))


def rows_times(a: np.ndarray, mt: np.ndarray) -> np.ndarray:
    """Return ``a @ mt`` for rows ``a`` (..., k) and a matrix ``mt`` (k, e), summed in order."""
    a = np.asarray(a, dtype=np.float64)
    mt = np.ascontiguousarray(mt, dtype=np.float64)
    k = a.shape[-1]
    flat = np.ascontiguousarray(a).reshape(-1, k)
    out = np.empty((flat.shape[0], mt.shape[1]))
    _rows_times_kernel(flat, mt, out)
    return out.reshape(*a.shape[:-1], mt.shape[1])


def uniforms_from_normals(z: np.ndarray) -> np.ndarray:
    """Map standard normals to uniforms on [0, 1] with the normal CDF ``Φ`` (exact in law)."""
    return ndtr(z)


def ball_points(z: np.ndarray, u: np.ndarray, radius: float) -> np.ndarray:
    """Return points uniform in the L2 ball of ``radius`` from normals ``z`` (..., d) and uniforms.

    The direction is ``z/‖z‖`` (uniform on the sphere) and the norm ``radius·u^{1/d}``, so each
    point costs d normals and one uniform ``u`` (shape ``z.shape[:-1]``).
    """
    d = z.shape[-1]
    norms = row_norm(z)[..., None]
    direction = z / np.where(norms > 0, norms, 1.0)
    return direction * (radius * u[..., None] ** (1.0 / d))


def unit_vector(rng: np.random.Generator, d: int) -> np.ndarray:
    """A uniformly random unit vector of ℝ^d (d normals, normalized)."""
    while True:
        v = rng.standard_normal(d)
        n = float(np.linalg.norm(v))
        if n > 0:
            return v / n


def haar_orthogonal(rng: np.random.Generator, d: int) -> np.ndarray:
    """A Haar-random orthogonal d×d matrix: QR of a Gaussian matrix, column signs of diag(R).

    The sign correction makes the law exactly Haar (Mezzadri 2007, "How to generate random
    matrices from the classical compact groups").
    """
    q, r = np.linalg.qr(rng.standard_normal((d, d)))
    signs = np.sign(np.diag(r))
    signs[signs == 0] = 1.0
    return q * signs


# ----------------------------------------------------------------------------------------------
# the domain and the loss, declared by the data adversaries' parameters

DOMAIN = [OneOf(*DOMAIN_KINDS)]
"""What a data adversary's ``domain`` parameter may be."""

EXAMPLE_LOSS = [OneOf(*EXAMPLE_LOSSES)]
"""What a data adversary's ``loss`` parameter may be (a loss of an example ``(x, y)``)."""


def make_domain(kind: str, radius: float | None) -> Domain:
    """Return the :class:`Domain` of the (declared) parameters ``domain`` and ``radius``.

    ``radius`` is the ball's radius or the box's half-width; the simplex and ``ℝ^d`` ignore it,
    so None is allowed for them.
    """
    return Domain(kind, 1.0 if radius is None else float(radius))


def example_gradient_bound(loss: str, domain: Domain, x_max: float, y_max: float, dim=None):
    """Return a bound on ``‖ℓ'(⟨w, x⟩, y)·x‖`` over ``w`` in the domain, ``‖x‖ ≤ x_max``, ``|y| ≤
    y_max``, or None.

    Hinge, absolute and logistic losses have ``|ℓ'| ≤ 1``: ``x_max``. The squared loss has
    ``|ℓ'| = |⟨w, x⟩ − y| ≤ max_{w∈K} ‖w‖₂·x_max + y_max`` on a bounded domain (ball: radius;
    simplex: 1; box: ``radius·√d`` when ``dim`` is known), unbounded otherwise (None).
    """
    if loss in ("hinge", "absolute", "logistic"):
        return float(x_max)
    if domain.kind == "unconstrained" or (domain.kind == "box" and dim is None):
        return None
    w_max = domain.max_norm(1 if dim is None else int(dim))
    return float(x_max * (w_max * x_max + y_max))


class InstanceTags:
    """A ``tags`` attribute computed from an instance's parameters (e.g. the protocol of a dataset).

    Read on the class it is ``default`` (what the registry and the docs show); read on an instance
    it calls the instance's ``_instance_tags()``.
    """

    def __init__(self, default):
        self.default = default

    def __get__(self, obj, owner=None):
        if obj is None:
            return self.default
        return obj._instance_tags()
