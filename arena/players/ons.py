"""Online Newton Step (Hazan, Agarwal & Kale 2007): logarithmic regret on exp-concave losses."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from numba import njit

from arena.errors import ConfigError
from arena.oco.components import OCO_PROTOCOLS, OCOPlayer
from arena.oco.domains import KIND_CODES
from arena.oco.losses import LOSS_CODES, Feedback, RoundData, kernel_data, round_gradient
from arena.params import POSITIVE, IsNone
from arena.spec import GameSpec, PlayerTags

SMOOTH_LOSSES = frozenset({"linear", "squared", "logistic"})
"""Losses (plus the σ term) for which the bound is declared: differentiable ones, where the
exp-concavity lemma applies as stated (hinge and absolute have kinks)."""

SECULAR_MAX_ITER = 200
"""Newton iterations allowed for the ball projection's multiplier (it converges in ~5-10)."""


@njit(cache=True, nogil=True)
def ball_generalized_projection(a_mat, y, radius, out):
    """Write ``argmin_{‖x‖ ≤ radius} (x − y)ᵀ A (x − y)`` into ``out`` (A symmetric, A ≻ 0).

    Inside the ball ``x = y``. Outside, the KKT conditions give ``x(μ) = (A + μI)^{-1} A y`` with
    the multiplier ``μ > 0`` solving ``‖x(μ)‖ = radius``. In the eigenbasis ``A = Q Λ Qᵀ``,
    ``c = Qᵀ y``: ``‖x(μ)‖² = Σ_i (λ_i c_i/(λ_i + μ))²``. The function ``φ(μ) = 1/r − 1/‖x(μ)‖``
    is convex and decreasing, so Newton's method from ``μ = 0`` (where ``φ > 0``) increases
    monotonically to the root without overshooting (Moré & Sorensen 1983); it stops when a step
    is below ``1e-15·μ`` (the root to machine precision). The result is finally scaled onto the
    sphere (a relative change ≤ 1e-15). One symmetric eigendecomposition, O(d³), per projection.
    """
    d = y.shape[0]
    s = 0.0
    for i in range(d):
        s += y[i] * y[i]
    if s <= radius * radius:
        for i in range(d):
            out[i] = y[i]
        return
    lam, q = np.linalg.eigh(a_mat)
    a = np.zeros(d)  # a_i = λ_i (Qᵀy)_i, so x(μ) = Q (a_i/(λ_i + μ))
    for i in range(d):
        c = 0.0
        for k in range(d):
            c += q[k, i] * y[k]
        a[i] = lam[i] * c
    mu = 0.0
    for _ in range(SECULAR_MAX_ITER):
        n2 = 0.0
        s3 = 0.0
        for i in range(d):
            z = a[i] / (lam[i] + mu)
            n2 += z * z
            s3 += z * z / (lam[i] + mu)
        n = math.sqrt(n2)
        if n <= radius or s3 == 0.0:
            break
        step = (n - radius) * n2 / (radius * s3)
        mu += step
        if step <= 1e-15 * mu:
            break
    nrm2 = 0.0
    for k in range(d):
        out[k] = 0.0
    for i in range(d):
        z = a[i] / (lam[i] + mu)
        for k in range(d):
            out[k] += q[k, i] * z
    for k in range(d):
        nrm2 += out[k] * out[k]
    nrm = math.sqrt(nrm2)
    if nrm > radius:
        for k in range(d):
            out[k] *= radius / nrm


def woodbury_capacity(dim: int) -> int:
    """Columns ``k_max`` of the low-rank buffer of the ball projection (see :func:`_ons_step`).

    A refresh costs one eigendecomposition (~10 d³), a projection ~10 Newton steps of O(d k²);
    ``k_max ≈ 2 d^{2/3}`` roughly balances them (d = 10: 9; d = 1000: 200).
    """
    return max(4, round(2.0 * dim ** (2.0 / 3.0)))


@njit(cache=True, nogil=True)
def _shifted_apply(lam, h, k, chol, mu, v, out, t1, t2):
    """``out = (Λ + μI + H Hᵀ)^{-1} v`` by Woodbury, with ``chol`` the Cholesky factor of
    ``K = I_k + Hᵀ(Λ + μI)^{-1}H`` (all in the eigenbasis of the refreshed matrix)."""
    d = lam.shape[0]
    for i in range(d):
        out[i] = v[i] / (lam[i] + mu)
    if k == 0:
        return
    for a in range(k):
        t1[a] = 0.0
    for i in range(d):
        for a in range(k):
            t1[a] += h[i, a] * out[i]
    for a in range(k):  # L t2 = t1
        s = t1[a]
        for b in range(a):
            s -= chol[a, b] * t2[b]
        t2[a] = s / chol[a, a]
    for a in range(k - 1, -1, -1):  # Lᵀ t2 = t2
        s = t2[a]
        for b in range(a + 1, k):
            s -= chol[b, a] * t2[b]
        t2[a] = s / chol[a, a]
    for i in range(d):
        s = 0.0
        for a in range(k):
            s += h[i, a] * t2[a]
        out[i] -= s / (lam[i] + mu)


@njit(cache=True, nogil=True)
def _lowrank_ball_projection(q_mat, lam, h, k, c, radius, out, xt, st, chol, t1, t2):
    """Generalized projection onto the ball with ``A = Q(Λ + H Hᵀ)Qᵀ`` and ``c = Qᵀ A y``.

    The same secular-equation Newton iteration as :func:`ball_generalized_projection`, with
    ``(A + μI)^{-1}`` applied by Woodbury (O(d k² + k³) per step instead of an eigendecomposition)
    in the eigenbasis Q, where ``x(μ) = Q (Λ + μI + H Hᵀ)^{-1} c`` has the same norm as its
    coordinates. Writes ``x`` into ``out``.
    """
    d = lam.shape[0]
    mu = 0.0
    done = False
    for _ in range(SECULAR_MAX_ITER):
        for a in range(k):
            for b in range(a + 1):
                chol[a, b] = 1.0 if a == b else 0.0
        for i in range(d):
            inv = 1.0 / (lam[i] + mu)
            for a in range(k):
                ha = h[i, a] * inv
                for b in range(a + 1):
                    chol[a, b] += ha * h[i, b]
        for a in range(k):  # in-place Cholesky of the lower triangle
            for b in range(a + 1):
                s = chol[a, b]
                for m in range(b):
                    s -= chol[a, m] * chol[b, m]
                chol[a, b] = math.sqrt(s) if a == b else s / chol[b, b]
        _shifted_apply(lam, h, k, chol, mu, c, xt, t1, t2)
        n2 = 0.0
        for i in range(d):
            n2 += xt[i] * xt[i]
        n = math.sqrt(n2)
        if done or n <= radius:
            break
        _shifted_apply(lam, h, k, chol, mu, xt, st, t1, t2)
        s3 = 0.0
        for i in range(d):
            s3 += xt[i] * st[i]
        if s3 <= 0.0:
            break
        step = (n - radius) * n2 / (radius * s3)
        mu += step
        done = step <= 1e-15 * mu  # one more pass evaluates x at the final μ
    nrm2 = 0.0
    for j in range(d):
        s = 0.0
        for i in range(d):
            s += q_mat[j, i] * xt[i]
        out[j] = s
        nrm2 += s * s
    nrm = math.sqrt(nrm2)
    if nrm > radius:
        for j in range(d):
            out[j] *= radius / nrm


@njit(cache=True, nogil=True)
def _ons_step(w, g, a_mat, a_inv, q_mat, lam, h, kk, r, beta, dom, radius, work, chol):
    """One ONS update of replicate ``r`` in place; returns ``g_tᵀ A_t^{-1} g_t``.

    ``A_t = A_{t−1} + g gᵀ``; Sherman–Morrison: with ``u = A_{t−1}^{-1} g`` and ``q = gᵀu``,
    ``A_t^{-1} = A_{t−1}^{-1} − u uᵀ/(1 + q)`` and ``A_t^{-1} g = u/(1 + q)``; then
    ``y = w − (1/β) A_t^{-1} g`` and ``w ← Π^{A_t}_K(y)``.

    Ball only: ``A_t = Q(Λ + H Hᵀ)Qᵀ`` is kept as the eigendecomposition of an earlier ``A`` plus
    the later gradients in its eigenbasis (``H``'s first ``kk[r]`` columns, ``Qᵀ g_s``). When the
    buffer is full (``kk[r] = k_max + 1`` marks it stale), the next projection first refreshes
    ``Q, Λ = eigh(A_t)`` and empties ``H``. At ``A_0 = εI``, ``Q = I`` and ``Λ = ε``.
    """
    d = w.shape[0]
    u = work[0]
    y = work[1]
    q = 0.0
    for i in range(d):
        s = 0.0
        for k in range(d):
            s += a_inv[i, k] * g[k]
        u[i] = s
        q += g[i] * s
    den = 1.0 + q
    for i in range(d):
        for k in range(d):
            a_inv[i, k] -= (u[i] * u[k]) / den
    if dom == 1:  # A itself is only needed by the ball projection
        for i in range(d):
            for k in range(d):
                a_mat[i, k] += g[i] * g[k]
    ny2 = 0.0
    for i in range(d):
        y[i] = w[i] - u[i] / den / beta
        ny2 += y[i] * y[i]
    if dom != 1:
        for i in range(d):
            w[i] = y[i]
        return q / den
    cap = h.shape[1]
    k = kk[r]
    if k < cap:
        for i in range(d):
            s = 0.0
            for j in range(d):
                s += q_mat[j, i] * g[j]
            h[i, k] = s
        kk[r] = k + 1
    else:
        kk[r] = cap + 1
    if ny2 <= radius * radius:
        for i in range(d):
            w[i] = y[i]
        return q / den
    if kk[r] > cap:  # refresh the eigendecomposition
        lam_new, q_new = np.linalg.eigh(a_mat)
        for i in range(d):
            lam[i] = lam_new[i]
            for j in range(d):
                q_mat[i, j] = q_new[i, j]
        kk[r] = 0
    z = work[2]
    c = work[3]
    for i in range(d):
        s = 0.0
        for j in range(d):
            s += a_mat[i, j] * y[j]
        z[i] = s
    for i in range(d):
        s = 0.0
        for j in range(d):
            s += q_mat[j, i] * z[j]
        c[i] = s
    _lowrank_ball_projection(
        q_mat, lam, h, kk[r], c, radius, w, work[4], work[5], chol, work[6], work[7]
    )
    return q / den


@njit(cache=True, nogil=True)
def _ons_play_block(
    lin_g,
    feat,
    labels,
    centres,
    loss_code,
    sigma,
    has_z,
    w,
    a_mat,
    a_inv,
    q_mat,
    lam,
    h,
    kk,
    beta,
    dom,
    radius,
    gsum,
    out,
):
    """Play a block: ``out[r, j]`` is ``w`` at the block's round j; the state advances in place.

    The round's gradient is formed as the arena forms it (:mod:`arena.oco.losses`): ``g_t``
    (linear) or ``ℓ'(⟨w, x⟩, y)·x``, plus ``σ(w − z)``.
    """
    n_rep, n, d = out.shape
    g = np.empty(d)
    work = np.empty((8, max(d, h.shape[2])))
    chol = np.empty((h.shape[2], h.shape[2]))
    for r in range(n_rep):
        for j in range(n):
            for i in range(d):
                out[r, j, i] = w[r, i]
            round_gradient(loss_code, sigma, w[r], lin_g, feat, labels, centres, has_z, r, j, g)
            gsum[r] += _ons_step(
                w[r],
                g,
                a_mat[r],
                a_inv[r],
                q_mat[r],
                lam[r],
                h[r],
                kk,
                r,
                beta,
                dom,
                radius,
                work,
                chol,
            )


class ONS(OCOPlayer):
    """Online Newton Step: a quasi-Newton step in the metric of ``A_t = εI + Σ_{s≤t} g_s g_sᵀ``.

    Start at ``w_1 = 0`` (the centre of the ball). After round t, with ``g_t`` the arena's
    subgradient at ``w_t``:

    ``A_t = A_{t−1} + g_t g_tᵀ`` (``A_0 = εI``),  ``y_{t+1} = w_t − (1/β) A_t^{-1} g_t``,
    ``w_{t+1} = argmin_{w ∈ K} (w − y_{t+1})ᵀ A_t (w − y_{t+1})`` (generalized projection).

    ``A_t^{-1}`` is kept by Sherman–Morrison, O(d²) per round. The generalized projection is the
    identity on ``ℝ^d`` and exact on the ball: a Newton solve of the 1-d secular equation for the
    KKT multiplier, to machine precision (:func:`ball_generalized_projection` with a fresh
    eigendecomposition; the player applies ``(A_t + μI)^{-1}`` by Woodbury in the eigenbasis of an
    earlier ``A`` plus the ``k ≤ k_max`` gradients since, refreshing the eigendecomposition,
    O(d³), once ``k_max`` gradients have accumulated (:func:`woodbury_capacity`): O(d² + d k²)
    per projecting round). Box and simplex are not supported.

    Parameters
    ----------
    alpha : float or None
        Exp-concavity constant ``α`` of the losses (``exp(−α f_t)`` concave on K). None: derived
        from the game when it can be, i.e. ``α = σ/G²`` when ``σ > 0`` and the gradient bound G is
        declared (a σ-strongly convex loss with gradients ≤ G is σ/G²-exp-concave; Hazan 2016,
        Lemma 4.2); otherwise unknown, and then the default ``β`` ignores it and no bound is
        declared.
    beta : float or None
        Step parameter β > 0. None: ``½ min{1/(4GD), α}`` (Hazan, Agarwal & Kale 2007), or
        ``1/(8GD)`` when α is unknown; needs a bounded domain (diameter D) and a declared G.
    eps : float or None
        Initial ``A_0 = εI``, ε > 0. None: ``1/(β²D²)`` (Hazan, Agarwal & Kale 2007).

    Notes
    -----
    Guarantee, for α-exp-concave losses on K of diameter D with ``‖∇f_t‖ ≤ G`` on K and any
    ``β ≤ ½ min{1/(GD), α}`` and ``ε > 0`` (the proof of Hazan 2016, Thm 4.3/4.5): by the
    exp-concavity lemma ``f_t(w_t) − f_t(u) ≤ g_tᵀ(w_t − u) − (β/2)(g_tᵀ(w_t − u))²``, and the
    generalized-projection (Pythagoras) step, for every ``u ∈ K`` and ``T ≥ 1``

    ``Regret_T ≤ (1/(2β)) Σ_{t≤T} g_tᵀ A_t^{-1} g_t + βεD²/2``                          (1)
    ``        ≤ (1/(2β)) d ln(1 + T G²/(dε)) + βεD²/2``                                  (2)

    (``Σ g_tᵀA_t^{-1}g_t ≤ ln det A_T/det A_0`` and AM–GM on the eigenvalues of ``A_T``). With the
    defaults (``β = ½ min{1/(4GD), α}``, ``ε = 1/(β²D²)``) (2) is at most
    ``max{4GD, 1/α}·(d ln(1 + T/(64d)) + 1)``, which is at most Hazan, Agarwal & Kale's
    ``5(1/α + GD) d ln T`` for every ``T ≥ 3`` (their statement cannot hold at T = 1, where
    ``ln T = 0``). We encode the bounds we prove, (1) and (2), not the paper's constant. Hazan's
    book (2nd ed., Thm 4.5) uses ``β = ½ min{1/(GD), α}`` (the lemma holds for
    ``|2β g_tᵀ(w − u)| ≤ 1``), which (2) covers too.

    :meth:`bounds` declares (1) (from the run's own ``g_tᵀA_t^{-1}g_t``) when α is known from the
    game (σ > 0, G declared) and ``alpha`` (if given) is at most ``σ/G²``, K is a ball, the loss
    is differentiable (linear, squared, logistic) and ``β ≤ ½ min{1/(GD), α}``;
    :meth:`regret_bound` evaluates (2).

    Examples
    --------
    >>> from arena.oco.domains import Domain
    >>> from arena.oco.losses import RoundData, feedback
    >>> spec = GameSpec("oco", 2, 10, dim=2, domain=Domain("ball", 1.0), loss="linear",
    ...                 sigma=1.0, gradient_bound=3.0)
    >>> p = ONS()
    >>> p.reset(spec, [np.random.default_rng(0)])
    >>> rd = RoundData(g=np.array([[1.0, 0.0]]), z=np.array([[0.5, 0.5]]))
    >>> for _ in range(10):
    ...     p.update(feedback("linear", 1.0, p.predict(), rd))
    >>> bool(np.linalg.norm(p.predict()) <= 1.0), sorted(p.bounds(10))
    (True, [('regret', nan)])

    References
    ----------
    Hazan, Agarwal & Kale (2007), "Logarithmic regret algorithms for online convex optimization",
    Machine Learning 69, Alg. "Online Newton Step" and Thm 2; Hazan (2016), *Introduction to
    Online Convex Optimization*, §4.4; Kotłowski 2017, §4.2 (ONS as the second-order baseline).
    """

    tags = PlayerTags(
        protocols=OCO_PROTOCOLS,
        randomized=False,
        block_kernel=True,
        domains=frozenset({"unconstrained", "ball"}),
    )
    parameter_constraints: ClassVar = {
        "alpha": [POSITIVE, IsNone()],
        "beta": [POSITIVE, IsNone()],
        "eps": [POSITIVE, IsNone()],
    }

    def __init__(
        self, alpha: float | None = None, beta: float | None = None, eps: float | None = None
    ):
        self.alpha = alpha
        self.beta = beta
        self.eps = eps

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        who = self.label()
        domain = spec.domain
        kind = "unconstrained" if domain is None else domain.kind
        if kind not in self.tags.domains:
            raise ConfigError(
                who, "domain", f"ONS supports {sorted(self.tags.domains)}, got {kind!r}"
            )
        dim = int(spec.dim)
        diam = math.inf if domain is None else domain.diameter(dim)
        grad = spec.gradient_bound
        known_g = grad is not None and math.isfinite(grad) and grad > 0
        game_alpha = spec.sigma / grad**2 if spec.sigma > 0 and known_g else None
        alpha = float(self.alpha) if self.alpha is not None else game_alpha
        if self.beta is not None:
            beta = float(self.beta)
        elif known_g and math.isfinite(diam) and diam > 0:
            beta = 0.5 / (4.0 * grad * diam)
            if alpha is not None:
                beta = min(beta, 0.5 * alpha)
        else:
            raise ConfigError(
                who,
                "beta",
                "the default ½min{1/(4GD), α} needs a bounded domain and a declared "
                "gradient_bound; pass beta (and eps) explicitly",
            )
        if self.eps is not None:
            eps = float(self.eps)
        elif math.isfinite(diam) and diam > 0:
            eps = 1.0 / (beta * beta * diam * diam)
        else:
            raise ConfigError(
                who, "eps", "the default 1/(β²D²) needs a bounded domain; pass eps explicitly"
            )
        self._beta, self._eps, self._alpha = beta, eps, alpha
        self._diam = diam
        self._grad = grad if known_g else None
        self._dom = KIND_CODES[kind]
        self._radius = 0.0 if domain is None else float(domain.radius)
        self._loss_code = LOSS_CODES[spec.loss or "linear"]
        self._sigma = float(spec.sigma)
        self._dim = dim
        # Proven bound (1) applies: α from the game, user α no larger, β small enough.
        self._bound_ok = (
            kind == "ball"
            and (spec.loss or "linear") in SMOOTH_LOSSES
            and game_alpha is not None
            and (self.alpha is None or float(self.alpha) <= game_alpha)
            and beta <= 0.5 * min(1.0 / (grad * diam), alpha) * (1.0 + 1e-12)
        )
        n_rep = spec.n_replicates
        self._w = np.zeros((n_rep, dim))
        self._a_inv = np.broadcast_to(np.eye(dim) / eps, (n_rep, dim, dim)).copy()
        self._bound_sum = np.zeros(n_rep)
        if kind == "ball":  # A, and its eigenbasis plus a low-rank buffer (see _ons_step)
            cap = woodbury_capacity(dim)
            self._a = np.broadcast_to(eps * np.eye(dim), (n_rep, dim, dim)).copy()
            self._q = np.broadcast_to(np.eye(dim), (n_rep, dim, dim)).copy()
            self._lam = np.full((n_rep, dim), eps)
            self._h = np.zeros((n_rep, dim, cap))
        else:
            cap = 1
            self._a = np.zeros((n_rep, 1, 1))
            self._q = np.zeros((n_rep, 1, 1))
            self._lam = np.zeros((n_rep, 1))
            self._h = np.zeros((n_rep, 1, 1))
        self._k = np.zeros(n_rep, dtype=np.int64)
        self._work = np.empty((8, max(dim, cap)))
        self._chol = np.empty((cap, cap))
        self._rounds = 0

    @property
    def step_parameters(self) -> tuple[float, float, float | None]:
        """Return the resolved ``(β, ε, α)`` (α None when unknown)."""
        return self._beta, self._eps, self._alpha

    def predict(self, x: np.ndarray | None = None) -> np.ndarray:
        return self._w.copy()

    def update(self, fb: Feedback) -> None:
        # a writable copy, as the block kernel's own gradient buffer is: the step is then
        # compiled once, not once more for the driver's read-only gradients
        grad = np.array(fb.grad, dtype=np.float64)
        w = np.ascontiguousarray(fb.w, dtype=np.float64).copy()
        for r in range(w.shape[0]):
            self._bound_sum[r] += _ons_step(
                w[r],
                grad[r],
                self._a[r],
                self._a_inv[r],
                self._q[r],
                self._lam[r],
                self._h[r],
                self._k,
                r,
                self._beta,
                self._dom,
                self._radius,
                self._work,
                self._chol,
            )
        self._w = w
        self._rounds += 1

    def play_block(self, data: RoundData, spec: GameSpec) -> np.ndarray:
        n_rep, dim = self._w.shape
        # read-only C arrays, dummies included: the one pattern of flags the kernel compiles for
        _, lin_g, feat, labels, centres, has_z = kernel_data(data, None)
        n = (lin_g if data.g is not None else feat).shape[1]
        out = np.empty((n_rep, n, dim))
        _ons_play_block(
            lin_g,
            feat,
            labels,
            centres,
            self._loss_code,
            self._sigma,
            has_z,
            self._w,
            self._a,
            self._a_inv,
            self._q,
            self._lam,
            self._h,
            self._k,
            self._beta,
            self._dom,
            self._radius,
            self._bound_sum,
            out,
        )
        self._rounds += n
        return out

    def bounds(self, t: int) -> dict[tuple[str, float], np.ndarray]:
        """Declare bound (1) of the Notes when its assumptions are verified from the game."""
        if not self._bound_ok:
            return {}
        return {("regret", math.nan): self.data_dependent_bound()}

    def data_dependent_bound(self) -> np.ndarray:
        """Return bound (1), ``(1/(2β)) Σ_{s≤t} g_sᵀA_s^{-1}g_s + βεD²/2``, shape (R,)."""
        b, e = self._beta, self._eps
        return self._bound_sum / (2.0 * b) + b * e * self._diam**2 / 2.0

    def regret_bound(self, t: int) -> float:
        """Return bound (2), ``(1/(2β)) d ln(1 + tG²/(dε)) + βεD²/2`` (needs G and a bounded K)."""
        if self._grad is None or not math.isfinite(self._diam):
            return math.inf
        b, e, d = self._beta, self._eps, self._dim
        return d * math.log1p(t * self._grad**2 / (d * e)) / (2.0 * b) + b * e * self._diam**2 / 2

    @classmethod
    def _unit_test_params(cls):
        # The conformance partners declare no gradient bound, so β and ε are given.
        yield {"beta": 0.05, "eps": 2.0}
        yield {"alpha": 0.5, "beta": 0.25, "eps": 1.0}
