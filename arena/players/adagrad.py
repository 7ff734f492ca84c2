"""AdaGrad: diagonal (per-coordinate steps) and scalar-norm adaptive online gradient descent."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from numba import njit

from arena.errors import ConfigError
from arena.oco.components import OCO_PROTOCOLS, OCOPlayer, game_dim, game_domain
from arena.oco.domains import KIND_CODES, project_row
from arena.oco.losses import (
    LOSS_CODES,
    Feedback,
    RoundData,
    is_sparse,
    kernel_data,
    prediction_loss_scalar,
    round_gradient,
)
from arena.params import POSITIVE, IsNone, OneOf
from arena.spec import GameSpec, PlayerTags

VARIANTS = ("diagonal", "norm")

DIAGONAL, NORM = 0, 1
"""Kernel codes of the variants."""

_NEWTON_ITERATIONS = 100


@njit(cache=True, nogil=True)
def mahalanobis_ball_row(y, a, radius, out):
    """Write ``argmin_{‖x‖₂ ≤ radius} Σ_i a_i (x_i − y_i)²`` into ``out`` (``a ≥ 0``; numba).

    Outside the ball the minimizer is ``x_i = a_i y_i/(a_i + μ)`` with ``μ > 0`` solving
    ``‖x(μ)‖ = radius``; coordinates with ``a_i = 0`` cost nothing and go to 0. ``μ`` is found by
    Newton's method on ``1/‖x(μ)‖ − 1/radius``, which is concave and increasing in μ (the secular
    equation of trust-region methods, Moré & Sorensen 1983), so the iterates rise monotonically
    to the root from ``μ = 0``.
    """
    d = y.shape[0]
    s = 0.0
    for i in range(d):
        s += y[i] * y[i]
    if s <= radius * radius:
        for i in range(d):
            out[i] = y[i]
        return
    h0 = 0.0
    for i in range(d):
        if a[i] > 0.0:
            h0 += y[i] * y[i]
    mu = 0.0
    if h0 > radius * radius:
        for _ in range(_NEWTON_ITERATIONS):
            h = 0.0
            dh = 0.0
            for i in range(d):
                if a[i] > 0.0:
                    q = a[i] * y[i] / (a[i] + mu)
                    h += q * q
                    dh += q * q / (a[i] + mu)
            phi = 1.0 / math.sqrt(h) - 1.0 / radius
            if phi >= 0.0:
                break
            step = -phi * h**1.5 / dh
            if step <= 1e-17 * mu:
                break
            mu += step
    s = 0.0
    for i in range(d):
        out[i] = a[i] * y[i] / (a[i] + mu) if a[i] > 0.0 else 0.0
        s += out[i] * out[i]
    nrm = math.sqrt(s)
    if nrm > radius:  # float rounding at the root: pull back onto the sphere
        for i in range(d):
            out[i] *= radius / nrm


@njit(cache=True, nogil=True)
def _adagrad_step(variant, kind_code, radius, eta, x, grad, sumsq, y, a):
    """One AdaGrad step of a single game: ``sumsq`` accumulates, ``x`` moves in place
    (``y`` and ``a`` are scratch buffers of length d)."""
    d = x.shape[0]
    if variant == DIAGONAL:
        for i in range(d):
            sumsq[i] += grad[i] * grad[i]
            y[i] = x[i] - eta * grad[i] / math.sqrt(sumsq[i]) if sumsq[i] > 0.0 else x[i]
        if kind_code == 1:
            for i in range(d):
                a[i] = math.sqrt(sumsq[i])
            mahalanobis_ball_row(y, a, radius, x)
        else:
            project_row(kind_code, radius, y, x)
    else:
        sq = 0.0
        for i in range(d):
            sq += grad[i] * grad[i]
        sumsq[0] += sq
        if sumsq[0] > 0.0:
            step = eta / math.sqrt(sumsq[0])
            for i in range(d):
                y[i] = x[i] - step * grad[i]
            project_row(kind_code, radius, y, x)


@njit(cache=True, nogil=True)
def _adagrad_play_block(
    loss_code, sigma, kind_code, radius, g, x, y, z, has_z, variant, eta, w, sumsq, out
):
    """Play a block: ``out[r, j]`` is ``w`` before round j's step; ``w``, ``sumsq`` advance."""
    n_rep, d = w.shape
    n = out.shape[1]
    grad = np.empty(d)
    buf = np.empty(d)
    roots = np.empty(d)
    for r in range(n_rep):
        for j in range(n):
            for i in range(d):
                out[r, j, i] = w[r, i]
            round_gradient(loss_code, sigma, w[r], g, x, y, z, has_z, r, j, grad)
            _adagrad_step(variant, kind_code, radius, eta, w[r], grad, sumsq[r], buf, roots)


@njit(cache=True, nogil=True)
def _adagrad_sparse_block(
    loss_code, variant, box, radius, indptr, indices, values, y, eta, w, sumsq, out
):
    """Play a block of sparse rows (CSR, row ``r·n + j``) on ℝ^d or a box: O(nnz) arithmetic.

    A zero gradient coordinate leaves ``G_{t,i}`` and ``w_i`` as they are, and clipping to the
    box is coordinatewise, so only the row's coordinates change; the operations on them are the
    dense kernel's (bitwise equal). Writing ``out[r, j] = w`` is the one O(d) pass a round.
    """
    n_rep, d = w.shape
    n = out.shape[1]
    for r in range(n_rep):
        for j in range(n):
            for i in range(d):
                out[r, j, i] = w[r, i]
            k = r * n + j
            p = 0.0
            for q in range(indptr[k], indptr[k + 1]):
                p += values[q] * w[r, indices[q]]
            _, dl = prediction_loss_scalar(loss_code, p, y[r, j])
            if variant == DIAGONAL:
                for q in range(indptr[k], indptr[k + 1]):
                    i = indices[q]
                    g = dl * values[q]
                    sumsq[r, i] += g * g
                    if sumsq[r, i] > 0.0:
                        v = w[r, i] - eta * g / math.sqrt(sumsq[r, i])
                        w[r, i] = min(max(v, -radius), radius) if box else v
            else:
                sq = 0.0
                for q in range(indptr[k], indptr[k + 1]):
                    g = dl * values[q]
                    sq += g * g
                sumsq[r, 0] += sq
                if sumsq[r, 0] > 0.0:
                    step = eta / math.sqrt(sumsq[r, 0])
                    for q in range(indptr[k], indptr[k + 1]):
                        i = indices[q]
                        v = w[r, i] - step * (dl * values[q])
                        w[r, i] = min(max(v, -radius), radius) if box else v


class AdaGrad(OCOPlayer):
    """AdaGrad, diagonal or scalar-norm: steps scaled by the root of past squared gradients.

    With ``w_1 = Π_K(0)`` and ``g_t`` the arena's subgradient at ``w_t``:

    * ``"diagonal"``: ``G_{t,i} = Σ_{s≤t} g_{s,i}²``,
      ``w_{t+1} = Π_K^{A_t}(w_t − η A_t^{−1} g_t)`` with ``A_t = diag(√G_t)`` (coordinates with
      ``G_{t,i} = 0`` are not moved). The projection minimizes ``‖w − y‖_{A_t}``: on a box it is
      clipping; on a ball it is the exact Mahalanobis projection (a 1-d root-find,
      :func:`mahalanobis_ball_row`). Domains: unconstrained, box, ball.
    * ``"norm"``: ``η_t = η/√(Σ_{s≤t}‖g_s‖²)``, ``w_{t+1} = Π_K(w_t − η_t g_t)`` (Euclidean
      projection; skipped while every gradient so far is 0). Every domain.

    Sparse rows (tag ``sparse_input``): with σ = 0 on ℝ^d or a box, both variants touch only the
    row's coordinates, O(nnz) a round; on a ball or simplex the block is densified.

    Parameters
    ----------
    variant : {"diagonal", "norm"}
        Per-coordinate or scalar step sizes.
    eta : float or None
        Step scale η. None uses the tuned ``η = D_∞/√2`` (diagonal; ``D_∞ = 2·radius`` bounds
        ``‖w − u‖_∞`` on a box or ball) or ``η = D/√2`` (norm; ``D`` the Euclidean diameter); both
        need a bounded domain.

    Notes
    -----
    Guarantees on every sequence of convex losses (adaptive adversaries included):

    * diagonal, box or ball (Duchi, Hazan & Singer 2011, Thm 5):
      ``R_T ≤ (D_∞²/(2η) + η)·Σ_i ‖g_{1:T,i}‖₂``, i.e. ``√2·D_∞·Σ_i ‖g_{1:T,i}‖₂`` at
      ``η = D_∞/√2``. The proof (``‖w_{t+1} − u‖²_{A_t} ≤ ‖w_t − η A_t^{−1}g_t − u‖²_{A_t}`` for
      the A_t-projection, telescoping ``Σ_t ‖w_t − u‖²_{A_t − A_{t−1}} ≤ D_∞² tr A_T`` and
      ``Σ_t g_{t,i}²/√G_{t,i} ≤ 2√G_{T,i}``) holds for any convex domain with
      ``‖w_t − u‖_∞ ≤ D_∞``, the ball included.
    * norm, bounded domain (Orabona, *A Modern Introduction to Online Learning*, Thm 4.14):
      ``R_T ≤ (D²/(2η) + η)·√(Σ_t ‖g_t‖²)``, i.e. ``√2·D·√(Σ_t ‖g_t‖²)`` at ``η = D/√2``.

    ``bounds`` declares these, evaluated on the run's gradients; none on an unbounded domain.

    Examples
    --------
    >>> from arena.oco.domains import Domain
    >>> from arena.oco.losses import feedback
    >>> spec = GameSpec("oco", 2, 10, dim=2, domain=Domain("box", 1.0), loss="linear")
    >>> p = AdaGrad(eta=0.5)
    >>> p.reset(spec, [np.random.default_rng(0)])
    >>> p.update(feedback("linear", 0.0, p.predict(), RoundData(g=np.array([[2.0, 0.0]]))))
    >>> p.predict().tolist()
    [[-0.5, 0.0]]

    References
    ----------
    Duchi, Hazan & Singer (2011), "Adaptive subgradient methods for online learning and stochastic
    optimization", JMLR, Thm 5; Orabona (2019), *A Modern Introduction to Online Learning*,
    Thm 4.14 (AdaGrad-norm).
    """

    tags = PlayerTags(
        protocols=OCO_PROTOCOLS,
        randomized=False,
        block_kernel=True,
        domains=frozenset({"unconstrained", "ball", "box", "simplex"}),
        sparse_input=True,
    )
    parameter_constraints: ClassVar = {"variant": [OneOf(*VARIANTS)], "eta": [POSITIVE, IsNone()]}

    def __init__(self, variant: str = "diagonal", eta: float | None = None):
        self.variant = variant
        self.eta = eta

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        who = self.label()
        dim = game_dim(spec)
        domain = game_domain(spec)
        eta = None if self.eta is None else float(self.eta)
        self._variant = DIAGONAL if self.variant == "diagonal" else NORM
        if self._variant == DIAGONAL:
            if domain.kind == "simplex":
                raise ConfigError(
                    who, "domain", "variant 'diagonal' supports unconstrained, box and ball domains"
                )
            scale = 2.0 * domain.radius if domain.kind != "unconstrained" else math.inf
        else:
            scale = domain.diameter(dim)
        if eta is None:
            if not math.isfinite(scale):
                raise ConfigError(who, "eta", "null (tuned) needs a bounded domain; give eta")
            eta = scale / math.sqrt(2.0) if scale > 0 else 1.0
        self._eta = eta
        self._scale = scale  # D_∞ (diagonal) or D (norm)
        self._domain = domain
        self._loss = spec.loss or "linear"
        self._sigma_game = float(spec.sigma or 0.0)
        n_rep = spec.n_replicates
        self._w = domain.project(np.zeros((n_rep, dim)))
        self._sumsq = np.zeros((n_rep, dim if self._variant == DIAGONAL else 1))
        self._rounds = 0

    def predict(self, x: np.ndarray | None = None) -> np.ndarray:
        return self._w.copy()

    def update(self, fb: Feedback) -> None:
        g = np.asarray(fb.grad, dtype=np.float64)
        if self._variant == DIAGONAL:
            self._sumsq += g * g
            root = np.sqrt(self._sumsq)
            safe = np.where(root > 0, root, 1.0)
            y = np.where(root > 0, self._w - self._eta * g / safe, self._w)
            if self._domain.kind == "ball":
                w = np.empty_like(y)
                for r in range(y.shape[0]):
                    mahalanobis_ball_row(y[r], root[r], float(self._domain.radius), w[r])
                self._w = w
            else:
                self._w = self._domain.project(y)
        else:
            self._sumsq[:, 0] += np.einsum("ri,ri->r", g, g)
            s = self._sumsq[:, 0]
            moving = s > 0
            step = np.where(moving, self._eta / np.sqrt(np.where(moving, s, 1.0)), 0.0)
            y = self._w - step[:, None] * g
            self._w = np.where(moving[:, None], self._domain.project(y), self._w)
        self._rounds += 1

    def play_block(self, data: RoundData, spec: GameSpec) -> np.ndarray:
        if (
            is_sparse(data.x)
            and not self._sigma_game
            and self._domain.kind in ("unconstrained", "box")
        ):
            return self._play_sparse(data)
        code, g, x, y, z, has_z = kernel_data(data, self._loss)
        n = next(a.shape[1] for a in (data.g, data.x, data.y) if a is not None)
        out = np.empty((self._w.shape[0], n, self._w.shape[1]))
        _adagrad_play_block(
            code,
            self._sigma_game,
            KIND_CODES[self._domain.kind],
            float(self._domain.radius),
            g,
            x,
            y,
            z,
            has_z,
            self._variant,
            self._eta,
            self._w,
            self._sumsq,
            out,
        )
        self._rounds += n
        return out

    def _play_sparse(self, data: RoundData) -> np.ndarray:
        x = data.x
        n_rep, n, d = x.shape
        out = np.empty((n_rep, n, d))
        _adagrad_sparse_block(
            LOSS_CODES[self._loss],
            self._variant,
            self._domain.kind == "box",
            float(self._domain.radius),
            x.indptr,
            x.indices,
            x.values,
            np.ascontiguousarray(data.y, dtype=np.float64),
            self._eta,
            self._w,
            self._sumsq,
            out,
        )
        self._rounds += n
        return out

    def bounds(self, t: int) -> dict[tuple[str, float], np.ndarray]:
        """Declare the regret bound of the Notes, evaluated on the gradients so far."""
        if not math.isfinite(self._scale):
            return {}
        return {("regret", math.nan): self.regret_bound(t)}

    def regret_bound(self, t: int) -> np.ndarray:
        """Return ``(D²/(2η) + η)·Σ_i √G_{t,i}`` (diagonal, D = D_∞) or ``·√Σ‖g‖²`` (norm)."""
        roots = np.sqrt(self._sumsq).sum(axis=1)
        return (self._scale**2 / (2.0 * self._eta) + self._eta) * roots

    @classmethod
    def _unit_test_params(cls):
        yield {"eta": 0.5}
        yield {"variant": "norm", "eta": 0.5}
