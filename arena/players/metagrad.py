"""MetaGrad (van Erven & Koolen 2016): tilted exponential weights over a grid of learning rates,
each rate running an ONS-like slave on a quadratic surrogate of the linearized loss."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from numba import njit

from arena.errors import ConfigError
from arena.oco.components import OCO_PROTOCOLS, OCOPlayer, game_dim, game_domain
from arena.oco.losses import Feedback, RoundData, kernel_data, round_gradient
from arena.params import POSITIVE, IsNone, OneOf
from arena.players.ons import _lowrank_ball_projection
from arena.spec import GameSpec, PlayerTags

VARIANTS = ("full", "diagonal")

BALL, BOX = 1, 2
"""Kernel codes of the domains (the codes of :data:`arena.oco.domains.KIND_CODES`)."""

SLAVE_GRADIENT_FACTOR = 0.98
"""``½(1 + 2/5)²`` rounded up: with ``η ≤ 1/(5DG)`` the slave's surrogate gradient is
``η(1 − 2x)g`` with ``|x| ≤ 1/5``, so ``½‖∇‖²_Σ ≤ 0.98 η² gᵀΣg`` (why the grid has the 5)."""


def grid_size(horizon: int) -> int:
    """Return ``k = ⌈½ log₂ T⌉``, the largest grid index, exactly (the least k with ``4^k ≥ T``).

    Examples
    --------
    >>> [grid_size(t) for t in (1, 2, 4, 5, 16, 17, 10**4)]
    [0, 1, 1, 2, 2, 3, 7]
    """
    k = 0
    while 4**k < horizon:
        k += 1
    return k


def learning_rate_grid(horizon: int, diameter: float, grad: float) -> tuple[np.ndarray, np.ndarray]:
    """Return the grid ``η_i = 2^{−i}/(5DG)`` and its prior ``π_1(η_i) = C/((i+1)(i+2))``.

    ``i = 0, …, k`` with ``k = ⌈½ log₂ T⌉`` and ``C = 1 + 1/(1 + k)``, which normalizes the prior
    (``Σ_{i≤k} 1/((i+1)(i+2)) = (k+1)/(k+2)``); van Erven & Koolen 2016, §3.

    Examples
    --------
    >>> etas, prior = learning_rate_grid(16, 2.0, 1.0)
    >>> etas.tolist(), prior.round(4).tolist(), float(prior.sum())
    ([0.1, 0.05, 0.025], [0.6667, 0.2222, 0.1111], 1.0)
    """
    k = grid_size(horizon)
    i = np.arange(k + 1, dtype=np.float64)
    etas = 2.0**-i / (5.0 * diameter * grad)
    prior = (1.0 + 1.0 / (1.0 + k)) / ((i + 1.0) * (i + 2.0))
    return etas, prior


@njit(cache=True, nogil=True)
def _metagrad_step(
    w, g, ws, sig, logpi, smat, etas, inv_d2, kind, radius, half_sigma, quad, sq, eig_q, eig_lam,
    lam_i, work, hbuf, chol, t1, t2,
):  # fmt: skip
    """One MetaGrad round on one block of coordinates (the whole vector, or one coordinate).

    ``w`` is the master's point ``w_t`` (overwritten with ``w_{t+1}``), ``g`` the gradient at
    it; slave i holds ``ws[i]`` and ``sig[i] = Σ_t^{η_i}``; ``logpi`` are the master's normalized
    log-weights and ``smat = Σ_s g_s g_sᵀ``. Per slave: ``x = η(w_t − w^η_t)ᵀg_t``, master loss
    ``ℓ = −x + x²``; Sherman–Morrison with ``v = √2 η g``; ``∇ℓ^η(w^η) = η(1 − 2x)g``,
    ``w̃ = w^η − Σ_{t+1}∇``, then the projection in the norm of ``Σ_{t+1}^{-1} = D^{-2}I + 2η²S``
    (clipping on an interval or box, a secular-equation Newton solve on the ball in the
    eigenbasis of S, shared by all slaves of the round).
    """
    m, d = ws.shape
    gg = 0.0
    for a in range(d):
        gg += g[a] * g[a]
        for b in range(d):
            smat[a, b] += g[a] * g[b]
    u = work[0]
    y = work[1]
    c = work[2]
    xt = work[3]
    st = work[4]
    have_eig = False
    top = -np.inf
    for i in range(m):
        eta = etas[i]
        x = 0.0
        for a in range(d):
            x += (w[a] - ws[i, a]) * g[a]
        x *= eta
        logpi[i] -= x * x - x
        if logpi[i] > top:
            top = logpi[i]
        q = 0.0
        for a in range(d):
            s = 0.0
            for b in range(d):
                s += sig[i, a, b] * g[b]
            u[a] = s
            q += g[a] * s
        c2 = 2.0 * eta * eta
        den = 1.0 + c2 * q
        for a in range(d):
            for b in range(d):
                sig[i, a, b] -= c2 * u[a] * u[b] / den
        shrink = 1.0 - 2.0 * x
        coef = eta * shrink / den  # Σ_{t+1} ∇ = coef·u, since Σ_{t+1} g = u/den
        quad[i] += eta * eta * shrink * shrink * q / den
        extra = eta * gg - half_sigma
        if extra > 0.0:
            sq[i] += extra
        ny = 0.0
        for a in range(d):
            y[a] = ws[i, a] - coef * u[a]
            ny += y[a] * y[a]
        if d == 1 or kind == BOX:  # Σ-projection onto an interval or a box (diagonal Σ): clip
            for a in range(d):
                ws[i, a] = min(max(y[a], -radius), radius)
        elif ny <= radius * radius:
            for a in range(d):
                ws[i, a] = y[a]
        else:
            if not have_eig:
                lam_s, q_s = np.linalg.eigh(smat)
                for a in range(d):
                    eig_lam[a] = lam_s[a]
                    for b in range(d):
                        eig_q[a, b] = q_s[a, b]
                have_eig = True
            for a in range(d):
                lam_i[a] = inv_d2 + c2 * eig_lam[a]
            for a in range(d):
                s = 0.0
                for b in range(d):
                    s += eig_q[b, a] * y[b]
                c[a] = lam_i[a] * s
            _lowrank_ball_projection(eig_q, lam_i, hbuf, 0, c, radius, ws[i], xt, st, chol, t1, t2)
    total = 0.0
    for i in range(m):
        total += math.exp(logpi[i] - top)
    log_z = top + math.log(total)
    for a in range(d):
        u[a] = 0.0
    norm = 0.0
    for i in range(m):
        logpi[i] -= log_z
        p = math.exp(logpi[i]) * etas[i]
        norm += p
        for a in range(d):
            u[a] += p * ws[i, a]
    for a in range(d):
        w[a] = u[a] / norm


@njit(cache=True, nogil=True)
def _scratch(b):
    """Work arrays of :func:`_metagrad_step` for blocks of b coordinates (allocated once)."""
    return (
        np.empty((b, b)), np.empty(b), np.empty(b), np.empty((5, b)), np.zeros((b, 1)),
        np.empty((1, 1)), np.empty(1), np.empty(1),
    )  # fmt: skip


@njit(cache=True, nogil=True)
def _metagrad_round(
    w, g, ws, sig, logpi, smat, etas, inv_d2, kind, radius, half_sigma, quad, sq, scratch
):
    """One round of one replicate: every block (one, or one per coordinate) steps in place."""
    n_blocks, b = ws.shape[0], ws.shape[2]
    eig_q, eig_lam, lam_i, work, hbuf, chol, t1, t2 = scratch
    for k in range(n_blocks):
        lo = k * b
        _metagrad_step(
            w[lo : lo + b], g[lo : lo + b], ws[k], sig[k], logpi[k], smat[k], etas, inv_d2,
            kind, radius, half_sigma, quad[k], sq[k], eig_q, eig_lam, lam_i, work, hbuf, chol,
            t1, t2,
        )  # fmt: skip


@njit(cache=True, nogil=True)
def _metagrad_play_block(
    loss_code, sigma, g, x, y, z, has_z, w, ws, sig, logpi, smat, etas, inv_d2, kind, radius,
    quad, sq, out,
):  # fmt: skip
    """Play a block: ``out[r, j]`` is ``w`` at the block's round j; the state advances in place.

    The round's gradient is formed as the arena forms it (:func:`round_gradient`)."""
    n_rep, d = w.shape
    n = out.shape[1]
    grad = np.empty(d)
    half_sigma = 0.5 * sigma
    scratch = _scratch(ws.shape[3])
    for r in range(n_rep):
        for j in range(n):
            for i in range(d):
                out[r, j, i] = w[r, i]
            round_gradient(loss_code, sigma, w[r], g, x, y, z, has_z, r, j, grad)
            _metagrad_round(
                w[r], grad, ws[r], sig[r], logpi[r], smat[r], etas, inv_d2, kind, radius,
                half_sigma, quad[r], sq[r], scratch,
            )  # fmt: skip


class MetaGrad(OCOPlayer):
    """MetaGrad: exponential weights over learning rates η, each η running a Newton-type slave.

    A grid of learning rates ``η_i = 2^{−i}/(5DG)``, ``i = 0, …, ⌈½ log₂ T⌉``, with prior
    ``π_1(η_i) = C/((i+1)(i+2))`` (:func:`learning_rate_grid`). Each round, with ``w_t`` the
    master's point and ``g_t`` the arena's subgradient there, slave η suffers the surrogate loss

    ``ℓ^η_t(u) = −η(w_t − u)ᵀg_t + η²((w_t − u)ᵀg_t)²``

    and the master (van Erven & Koolen 2016, Algorithm 1) plays the *tilted* mean and updates by
    exponential weights on the slaves' surrogate losses:

    ``w_t = Σ_η π_t(η) η w^η_t / Σ_η π_t(η) η``,  ``π_{t+1}(η) ∝ π_t(η) e^{−ℓ^η_t(w^η_t)}``.

    Slave η (Algorithm 2) starts at ``w^η_1 = 0`` with ``Σ_1 = D²I`` and, after round t,

    ``Σ_{t+1} = (D^{−2}I + 2η² Σ_{s≤t} g_s g_sᵀ)^{−1}``,
    ``w̃ = w^η_t − Σ_{t+1}(η g_t + 2η² g_t g_tᵀ(w^η_t − w_t))``,
    ``w^η_{t+1} = argmin_{u∈K} (u − w̃)ᵀ Σ_{t+1}^{−1} (u − w̃)``.

    Σ is kept by Sherman–Morrison (O(d²) per slave per round); the projection onto a ball is a
    Newton solve of the 1-d secular equation for the KKT multiplier in the eigenbasis of
    ``Σ_s g_s g_sᵀ``, which serves every slave (one O(d³) eigendecomposition in a round where
    some slave leaves the ball; :func:`arena.players.ons.ball_generalized_projection` explains the
    iteration). On an interval (d = 1) or a box with diagonal Σ it is clipping.

    Parameters
    ----------
    variant : {"full", "diagonal"}
        ``"full"``: the algorithm above on the ball (any d; in d = 1 also the box).
        ``"diagonal"``: an independent one-dimensional MetaGrad per coordinate, on the box
        ``[−r, r]^d`` (in d = 1 also the ball), with interval length ``D = 2r`` in its grid.
        This is the coordinate-wise version of van Erven, Koolen & van der Hoeven 2021 and
        the diagonal MetaGrad of the authors' reference code (``DirkvdH/Online-Appendix-
        MetaGrad``); its slaves have diagonal Σ, and it equals ``"full"`` in d = 1 (same
        arithmetic, bit for bit). One master over slaves whose surrogate has ``diag(g_t²)`` in
        place of ``g_t g_tᵀ`` is not offered: its master loss ``−x + η²Σ_i (w_t − w^η)_i² g_i²``
        can fall below ``−x + x²``, and then the potential argument below
        (``e^{x − x²} ≤ 1 + x``) does not apply.
    G : float or None
        The bound G on ``‖g_t‖₂`` used by the grid. None: the game's declared gradient bound.

    Notes
    -----
    Guarantee (for the domains above, D their Euclidean diameter, ``‖∇f_t‖ ≤ G`` on K, every
    convex ``f_t`` that is σ-strongly convex for σ ≥ 0 — σ is the game's ``(σ/2)‖w − z_t‖²``
    weight — and every u ∈ K, adaptive adversaries included). It follows the paper's proof:

    1. *Master* (Lemma on tilted exponential weights): ``Φ_t = Σ_η π_1(η) e^{−Σ_{s≤t}
       ℓ^η_s(w^η_s)}`` never increases, because ``e^{x − x²} ≤ 1 + x`` for ``x ≥ −½`` (here
       ``|x| = η|(w_t − w^η_t)ᵀg_t| ≤ ηDG ≤ 1/5``) and the tilted mean makes
       ``Σ_η π_t(η) η(w_t − w^η_t) = 0``; hence ``−Σ_t ℓ^η_t(w^η_t) ≤ ln(1/π_1(η))``.
    2. *Slave* (ONS analysis; exact for a quadratic surrogate): the Pythagorean inequality of
       the Σ_{t+1}^{−1}-projection and ``Σ_{t+1}^{−1} = Σ_t^{−1} + 2η² g_t g_tᵀ`` give
       ``Σ_t [ℓ^η_t(w^η_t) − ℓ^η_t(u)] ≤ ‖u‖²/(2D²) + ½ Σ_t ∇_tᵀΣ_{t+1}∇_t =: S^η_t``.
    3. With ``−ℓ^η_t(u) = η r_t − η²r_t²``, ``r_t = (w_t − u)ᵀg_t``, and
       ``f_t(w_t) − f_t(u) ≤ r_t − (σ/2)‖w_t − u‖²``, ``r_t² ≤ ‖g_t‖²‖w_t − u‖² ≤ ‖g_t‖²D²``:

       ``Regret_t ≤ min_i [D² Σ_{s≤t} (η_i‖g_s‖² − σ/2)_+ + (ln(1/π_1(η_i)) + S^{η_i}_t)/η_i]`` (1)

    with ``‖u‖²/(2D²) ≤ 1/8`` (0 is the centre of K). :meth:`bounds` declares (1), evaluated on
    the run (summed over coordinates for ``"diagonal"``, each with ``D = 2r`` and ``g_{t,i}``).
    Closed forms (:meth:`regret_bound`), with ``k = ⌈½ log₂ T⌉``, ``ln(1/π_1) ≤ 2 ln(k+1)``,
    ``½‖∇‖²_Σ ≤ 0.98 η²‖g‖²_Σ``, ``Σ_t ∇ᵀΣ∇ ≤ ln det`` and ``Σ_{t+1} ⪯ D²I``:

    * ``A = 2 ln(k+1) + 1/8 + 0.49 d ln(1 + 2t/(25d))``: ``Regret_t ≤ 3√(A V) + 10DG·A`` for
      ``V = D²G²t`` — the paper's ``O(√(V_T^u d ln T) + d ln T)`` (with ``V_T^u =
      Σ_t r_t²`` in place of V it bounds ``Σ_t r_t`` for each u);
    * ``A' = 2 ln(k+1) + 1/8``: ``Regret_t ≤ 3√(1.98 A' D²G²t) + 10DG·A'``, the
      ``O(DG√(T ln ln T))`` worst case;
    * σ > 0 and a grid point ``η_i ≤ σ/(2G²)``: ``Regret_t ≤ A/η_i`` for the largest such
      ``η_i``, i.e. ``O((G²/σ) d ln T)``.

    (The grid minimum in ``3√(AV) + 10DGA``: ``η* = √(A/V) ≥ η_0`` is covered by ``η_0``,
    ``2A/η_0``; otherwise a grid point lies in ``(η*/2, η*]``, giving ``η*V + 2A/η* = 3√(AV)``;
    ``η* ≥ η_k`` because ``4^k ≥ T`` and ``A ≥ 1/8``.) These have the form of the paper's main
    bounds; the constants encoded are the ones proven here step by step.

    ``bounds`` declares (1) when G is the game's declared gradient bound (or a larger ``G``), which
    the arena enforces every round. Cost per round: full O(m d²) plus O(d³) in projecting rounds,
    diagonal O(m d), with ``m = k + 1`` slaves.

    Examples
    --------
    >>> from arena.oco.domains import Domain
    >>> from arena.oco.losses import feedback
    >>> spec = GameSpec("oco", 2, 100, dim=2, domain=Domain("ball", 1.0), gradient_bound=1.0)
    >>> p = MetaGrad()
    >>> p.reset(spec, [np.random.default_rng(0)])
    >>> for _ in range(100):
    ...     p.update(feedback("linear", 0.0, p.predict(), RoundData(g=np.array([[0.6, -0.8]]))))
    >>> p.predict().round(3).tolist(), p.etas.size
    ([[-0.6, 0.8]], 5)
    >>> bound = p.bounds(100)[("regret", math.nan)]
    >>> bool(bound[0] <= p.regret_bound(100))
    True

    References
    ----------
    van Erven & Koolen 2016: §3 (grid and prior, the surrogate losses), Algorithm 1 (master),
    Algorithm 2 (slave) and the main regret theorem; van Erven, Koolen & van der Hoeven 2021
    (the coordinate-wise version); Hazan, Agarwal & Kale 2007 (the ONS analysis of step 2).
    """

    tags = PlayerTags(
        protocols=OCO_PROTOCOLS,
        randomized=False,
        needs_horizon=True,
        block_kernel=True,
        domains=frozenset({"ball", "box"}),
    )
    parameter_constraints: ClassVar = {"variant": [OneOf(*VARIANTS)], "G": [POSITIVE, IsNone()]}

    def __init__(self, variant: str = "full", G: float | None = None):
        self.variant = variant
        self.G = G

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        who = self.label()
        dim = game_dim(spec)
        domain = game_domain(spec)
        if spec.horizon is None:
            raise ConfigError(who, "horizon", "the learning-rate grid needs the horizon T")
        if domain.kind not in ("ball", "box"):
            raise ConfigError(who, "domain", f"needs a ball or a box, got {domain.kind!r}")
        full = self.variant == "full"
        if dim > 1 and full and domain.kind == "box":
            raise ConfigError(
                who, "domain", "variant 'full' plays a ball (a box only in d = 1); on a box use "
                "variant='diagonal'"
            )  # fmt: skip
        if dim > 1 and not full and domain.kind == "ball":
            raise ConfigError(
                who, "domain", "variant 'diagonal' plays a box (a ball only in d = 1); on a ball "
                "use variant='full'"
            )  # fmt: skip
        game_g = spec.gradient_bound
        known = game_g is not None and math.isfinite(game_g) and game_g > 0
        if self.G is None and not known:
            raise ConfigError(who, "G", "the game declares no gradient bound; give G > 0")
        grad = float(self.G) if self.G is not None else float(game_g)
        radius = float(domain.radius)
        block = dim if full else 1
        n_blocks = 1 if full else dim
        diam = domain.diameter(dim) if full else 2.0 * radius
        self._etas, prior = learning_rate_grid(int(spec.horizon), diam, grad)
        self._neg_log_prior = -np.log(prior)
        self._grad, self._diam, self._radius = grad, diam, radius
        self._rho_term = (domain.max_norm(dim) if full else radius) ** 2 / (2.0 * diam**2)
        self._kind = BALL if domain.kind == "ball" else BOX
        self._block, self._n_blocks, self._k = block, n_blocks, grid_size(int(spec.horizon))
        self._loss = spec.loss or "linear"
        self._sigma = float(spec.sigma)
        self._bound_ok = known and grad >= float(game_g)
        n_rep, m = spec.n_replicates, self._etas.size
        self._w = np.zeros((n_rep, dim))
        self._ws = np.zeros((n_rep, n_blocks, m, block))
        self._sig = np.broadcast_to(
            diam**2 * np.eye(block), (n_rep, n_blocks, m, block, block)
        ).copy()
        self._logpi = np.broadcast_to(np.log(prior), (n_rep, n_blocks, m)).copy()
        self._smat = np.zeros((n_rep, n_blocks, block, block))
        self._quad = np.zeros((n_rep, n_blocks, m))
        self._sq = np.zeros((n_rep, n_blocks, m))
        self._rounds = 0

    @property
    def etas(self) -> np.ndarray:
        """The grid of learning rates ``η_0 > η_1 > … > η_k``, a copy."""
        return self._etas.copy()

    @property
    def master_weights(self) -> np.ndarray:
        """The master's ``π_t(η)``, shape (R, blocks, m): one block (full) or one per coordinate."""
        return np.exp(self._logpi)

    @property
    def slave_points(self) -> np.ndarray:
        """The slaves' ``w^η_t``, shape (R, blocks, m, block size), a copy."""
        return self._ws.copy()

    def predict(self, x: np.ndarray | None = None) -> np.ndarray:
        return self._w.copy()

    def update(self, fb: Feedback) -> None:
        # a writable copy, as the block kernel's own gradient buffer is: the step is then
        # compiled once, not once more for the driver's read-only gradients
        grad = np.array(fb.grad, dtype=np.float64)
        w = np.ascontiguousarray(fb.w, dtype=np.float64).copy()
        scratch = _scratch(self._block)
        for r in range(w.shape[0]):
            _metagrad_round(
                w[r], grad[r], self._ws[r], self._sig[r], self._logpi[r], self._smat[r],
                self._etas, self._diam**-2, self._kind, self._radius, 0.5 * self._sigma,
                self._quad[r], self._sq[r], scratch,
            )  # fmt: skip
        self._w = w
        self._rounds += 1

    def play_block(self, data: RoundData, spec: GameSpec) -> np.ndarray:
        code, g, x, y, z, has_z = kernel_data(data, self._loss)
        n = next(a.shape[1] for a in (data.g, data.x, data.y) if a is not None)
        out = np.empty((self._w.shape[0], n, self._w.shape[1]))
        _metagrad_play_block(
            code, self._sigma, g, x, y, z, has_z, self._w, self._ws, self._sig, self._logpi,
            self._smat, self._etas, self._diam**-2, self._kind, self._radius, self._quad,
            self._sq, out,
        )  # fmt: skip
        self._rounds += n
        return out

    def bounds(self, t: int) -> dict[tuple[str, float], np.ndarray]:
        """Declare bound (1) of the Notes when G is the game's gradient bound or larger."""
        if not self._bound_ok:
            return {}
        return {("regret", math.nan): self.data_dependent_bound()}

    def data_dependent_bound(self) -> np.ndarray:
        """Return bound (1) of the Notes after the rounds played, shape (R,).

        ``Σ_blocks min_i [D² Σ_s (η_i‖g_s‖² − σ/2)_+ + (ln(1/π_1(η_i)) + 1/8 + ½Σ_s ∇ᵀΣ∇)/η_i]``
        (the 1/8 is ``max_{u∈K}‖u‖²/(2D²)``).
        """
        etas = self._etas
        fixed = self._neg_log_prior + self._rho_term
        per = self._diam**2 * self._sq + (fixed + 0.5 * self._quad) / etas
        return per.min(axis=2).sum(axis=1)

    def regret_bound(self, t: int) -> float:
        """Return the smallest closed form of the Notes after t rounds (worst case, ``‖g‖ ≤ G``)."""
        d, dg = self._block, self._diam * self._grad
        base = 2.0 * math.log(self._k + 1.0) + self._rho_term
        a_full = base + 0.5 * SLAVE_GRADIENT_FACTOR * d * math.log1p(2.0 * t / (25.0 * d))
        best = 3.0 * math.sqrt(a_full * dg * dg * t) + 10.0 * dg * a_full
        lnln = 3.0 * math.sqrt((1.0 + SLAVE_GRADIENT_FACTOR) * base * dg * dg * t)
        best = min(best, lnln + 10.0 * dg * base)
        if self._sigma > 0:
            fit = self._etas[self._etas <= self._sigma / (2.0 * self._grad**2)]
            if fit.size:
                best = min(best, a_full / float(fit[0]))
        return self._n_blocks * best

    @classmethod
    def _unit_test_params(cls):
        # The conformance partners declare no gradient bound: G is given.
        yield {"G": 4.0}
        yield {"variant": "diagonal", "G": 4.0}
