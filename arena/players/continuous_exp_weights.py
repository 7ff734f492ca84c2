"""Continuous exponential weights for OCO (Luo's Algorithm 25), by quadrature in d ≤ 2."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from numba import njit
from numpy.polynomial.legendre import leggauss

from arena.errors import ConfigError
from arena.oco.components import OCO_PROTOCOLS, OCOPlayer, game_dim, game_domain
from arena.oco.losses import Feedback, RoundData, kernel_data, prediction_loss_scalar
from arena.params import POSITIVE, IsNone, OneOf
from arena.players.drifting_potential import log_cosh
from arena.spec import GameSpec, PlayerTags

POTENTIALS = ("exp", "two_norm", "nh_dt")
"""Potential families (the codes of :mod:`arena.players.drifting_potential`'s kernel: 0, 1, 2)."""

MAX_DIM = 2

DEFAULT_PANELS = {1: 64, 2: 16}
"""Gauss–Legendre panels per axis by dimension (with 16 nodes each: 1024 nodes on an interval,
65 536 on a square)."""

PANEL_VARIATION_1E12 = 30.0
"""A 16-node Gauss–Legendre panel integrates ``e^{cx}`` and ``x e^{cx}`` to a relative error
below 1e-12 while ``|c|·h ≤ 30`` (h the panel width; measured: 2e-15 at 20, 3e-12 at 30, 8e-10
at 40), so the exp potential's ``w_t`` is exact to ~1e-12 while the log-density varies by at most
30 across every panel."""

LAMBDAS = np.logspace(-8.0, 0.0, 401)
"""Shrink factors λ over which the declared bound is minimized (every λ gives a valid bound)."""


def composite_gauss_legendre(radius: float, panels: int, nodes: int) -> tuple[np.ndarray, ...]:
    """Return the nodes and weights of a composite Gauss–Legendre rule on ``[−radius, radius]``.

    ``panels`` equal panels with ``nodes`` Gauss–Legendre nodes each: exact for piecewise
    polynomials of degree ``2·nodes − 1`` on the panels; all weights are positive. Nodes ascend.

    Examples
    --------
    >>> x, w = composite_gauss_legendre(1.0, 2, 2)
    >>> x.round(4).tolist(), w.tolist(), float((w * x**3).sum())
    ([-0.7887, -0.2113, 0.2113, 0.7887], [0.5, 0.5, 0.5, 0.5], 0.0)
    """
    t, v = leggauss(nodes)
    h = 2.0 * radius / panels
    left = -radius + h * np.arange(panels)
    x = (left[:, None] + 0.5 * h * (t[None, :] + 1.0)).ravel()
    w = np.tile(0.5 * h * v, panels)
    return x, w


def window_masses(x: np.ndarray, w: np.ndarray, radius: float, lambdas: np.ndarray) -> np.ndarray:
    """Return ``m(λ) = inf_a μ([a, a + 2λr])/μ([−r, r])`` over windows inside ``[−r, r]``.

    μ is the discrete measure ``Σ_j w_j δ_{x_j}`` (x ascending). Sliding a window to the right,
    its mass drops only when a node leaves on the left, so the infimum is the least of the
    masses of ``(x_j, x_j + L]`` (just after ``x_j`` leaves) and of the end windows
    ``[−r, −r + L]`` and ``[r − L, r]``, ``L = 2λr``. The right ends are pulled in by a relative
    1e-12, so that rounding can only lower a mass (the result stays a lower bound). O(n log n)
    per λ.

    Examples
    --------
    >>> x, w = composite_gauss_legendre(1.0, 4, 4)
    >>> window_masses(x, w, 1.0, np.array([1e-3, 0.3, 0.6, 1.0])).round(3).tolist()
    [0.0, 0.25, 0.582, 1.0]
    """
    cum = np.concatenate([[0.0], np.cumsum(w)])
    out = np.empty(lambdas.size)
    for k, lam in enumerate(lambdas):
        length = 2.0 * lam * radius
        inner = length * (1.0 - 1e-12)
        left = x[x <= radius - length]
        ends = np.array([-radius, radius - length])
        after = (
            cum[np.searchsorted(x, left + inner, side="right")]
            - cum[np.searchsorted(x, left, side="right")]
        )
        at_ends = (
            cum[np.searchsorted(x, ends + inner, side="right")]
            - cum[np.searchsorted(x, ends, side="left")]
        )
        out[k] = max(0.0, float(min(after.min(initial=np.inf), at_ends.min())) / cum[-1])
    return out


@njit(cache=True, nogil=True)
def _loss_at(loss_code, sigma, points, k, g, x, y, z, has_z, r, j):
    """``f_t(points[k])`` at round j of replicate r, by the formulas of :mod:`arena.oco.losses`."""
    d = points.shape[1]
    val = 0.0
    if loss_code == 0:
        for i in range(d):
            val += g[r, j, i] * points[k, i]
    else:
        p = 0.0
        for i in range(d):
            p += x[r, j, i] * points[k, i]
        val, _ = prediction_loss_scalar(loss_code, p, y[r, j])
    if sigma != 0.0:
        sq = 0.0
        for i in range(d):
            diff = points[k, i] - z[r, j, i] if has_z else points[k, i]
            sq += diff * diff
        val += 0.5 * sigma * sq
    return val


@njit(cache=True, nogil=True)
def _log_weight(s, t, code, eta):
    """``log(Φ_t(s − 1) − Φ_t(s + 1))`` up to a constant (``−inf``: weight 0), for the potentials
    of :func:`arena.players.drifting_potential.potential_log_weights` (same closed forms)."""
    if code == 0:
        return -eta * s
    a = min(s - 1.0, 0.0)
    b = min(s + 1.0, 0.0)
    if code == 1:
        v = a * a - b * b
        return math.log(v) if v > 0.0 else -np.inf
    a = a * a / (3.0 * t)
    b = b * b / (3.0 * t)
    return a + math.log(-math.expm1(b - a)) if a > b else -np.inf


@njit(cache=True, nogil=True)
def _cew_mean(s, log_omega, nodes, t, code, eta, lw, out):
    """Write Algorithm 25's mean ``Σ_k p_k x_k`` into ``out``, ``p_k ∝ ω_k (Φ_t(s_k − 1) −
    Φ_t(s_k + 1))``, normalized in the log domain. If every potential weight is 0 (``nh_dt`` with
    every chip at s ≥ 1) p falls back to ω, as Algorithm 3 falls back to uniform."""
    n, d = nodes.shape
    top = -np.inf
    for k in range(n):
        lw[k] = _log_weight(s[k], t, code, eta)
        if lw[k] > top:
            top = lw[k]
    if top == -np.inf:
        top = 0.0
        for k in range(n):
            lw[k] = 0.0
    for i in range(d):
        out[i] = 0.0
    total = 0.0
    for k in range(n):
        p = math.exp(log_omega[k] + lw[k] - top)
        total += p
        for i in range(d):
            out[i] += p * nodes[k, i]
    for i in range(d):
        out[i] /= total


@njit(cache=True, nogil=True)
def _cew_play_block(
    loss_code, sigma, g, x, y, z, has_z, nodes, log_omega, s, w, rounds_done, code, eta, scale, out
):
    """Play a block: ``out[r, j]`` is ``w_t`` of round ``rounds_done + j + 1``; ``s`` (the chips'
    positions ``s_t(x_k)`` in units of ``scale``) and ``w`` advance in place."""
    n_rep, n, d = out.shape
    n_nodes = nodes.shape[0]
    lw = np.empty(n_nodes)
    row = np.empty(d)
    inv = 1.0 / scale
    for r in range(n_rep):
        for j in range(n):
            t = rounds_done + j + 1
            for i in range(d):
                out[r, j, i] = w[r, i]
            played = _loss_at(loss_code, sigma, w, r, g, x, y, z, has_z, r, j)
            if loss_code == 0 and sigma == 0.0:  # linear: one dot product per node
                for i in range(d):
                    row[i] = g[r, j, i]
                for k in range(n_nodes):
                    v = 0.0
                    for i in range(d):
                        v += row[i] * nodes[k, i]
                    s[r, k] += (v - played) * inv
            else:
                for k in range(n_nodes):
                    f = _loss_at(loss_code, sigma, nodes, k, g, x, y, z, has_z, r, j)
                    s[r, k] += (f - played) * inv
            _cew_mean(s[r], log_omega, nodes, t + 1, code, eta, lw, w[r])


class ContinuousExpWeights(OCOPlayer):
    """Algorithm 25 of Luo 2016: a density over K from a drifting-game potential; play its mean.

    Every point ``x ∈ K`` is a chip at position ``s_t(x) = Σ_{τ≤t} (f_τ(x) − f_τ(w_τ))/B``
    (``s_0 ≡ 0``; B scales the movements into [−1, 1]). Round t plays

    ``w_t = ∫_K x p_t(x) dx``,  ``p_t(x) ∝ Φ_t(s_{t−1}(x) − 1) − Φ_t(s_{t−1}(x) + 1)``,

    in K by convexity. With the exponential potential ``Φ_T(s) = e^{−η(s+R)}`` this is
    ``p_t(x) ∝ exp(−(η/B) Σ_{τ<t} f_τ(x))``, continuous exponential weights (Cover 1991;
    Hazan, Agarwal & Kale 2007); the thesis's parameter-free potentials ``two_norm`` and
    ``nh_dt`` are available too (Luo 2016, §2.1.4, Lemmas 1–2; see
    :func:`arena.players.drifting_potential.potential_values`). The algorithm is inefficient in
    general: it needs integrals over K.

    **Quadrature.** The integrals are sums over a composite Gauss–Legendre rule
    (:func:`composite_gauss_legendre`; a tensor product on the square): ``panels`` panels per
    axis, ``nodes`` nodes each, and ``s_t`` is kept exactly at every node (each round's loss is
    evaluated there, for every loss family). For the exp potential the weight is smooth and a
    16-node panel is exact to ~1e-12 while the log-density ``−η s/B`` varies by at most 30
    across the panel (:data:`PANEL_VARIATION_1E12`); e.g. linear losses on ``[−r, r]`` with 64
    panels, for ``η|Σ_τ g_τ|/G ≤ 1920``. The ``two_norm`` and ``nh_dt`` weights are only C¹
    where ``s = ±1``, so panels crossing those level sets converge like ``h³`` (measured on an
    interval against adaptive quadrature: 3e-7, 8e-9, 1e-10 with 16, 64, 256 panels). d ≤ 2
    only: the node count is ``(panels·nodes)^d``.

    Parameters
    ----------
    potential : {"exp", "two_norm", "nh_dt"}
        The drifting-game potential. ``exp`` needs η (or the horizon).
    eta : float or None
        Rate η > 0 of the exp potential. None: ``√(2 d ln T/T)`` (``ln 2`` when T = 1), the
        thesis's tuning for ε = T^{−d} (Theorem 22).
    scale : float or None
        B > 0 with ``|f_t(x) − f_t(x')| ≤ B`` on K. None: ``G·D`` from the game's gradient bound G
        and the domain's diameter D.
    panels : int or None
        Gauss–Legendre panels per axis; None: 64 (d = 1), 16 (d = 2).
    nodes : int
        Nodes per panel.

    Notes
    -----
    Domains: an interval (``ball`` or ``box`` with d = 1) or a square (``box`` with d = 2).
    Guarantee (Luo 2016, Theorem 22, in the measure the player integrates against): the player is
    exactly Algorithm 3 on the nodes with prior weights ω_j, and ``w_t = Σ_j p_j x_j`` gives
    ``E_p[z_t] ≥ 0`` by Jensen, so ``Σ_j ω_j Φ_t(s_t(x_j))`` never increases (Theorem 2's proof)
    and the ω-mass of ``{s_t ≤ −R}`` is below ``Φ_0(0)`` (total mass 1). For any ``u ∈ K`` and
    ``λ ∈ (0, 1]`` the shrunk set ``(1 − λ)u + λK`` has ω-mass at least ``m(λ)``
    (:func:`window_masses`; ``m(λ) = λ^d`` for the Lebesgue measure of the thesis), and on it
    ``s_t ≥ −Regret^u_t/B − tλ`` by convexity. So, with ``R(ε)`` the potential's threshold,

    ``Regret_t ≤ B · min_λ [R_t(m(λ)) + tλ]``, at most ``Bt``,                            (1)

    ``R_t(ε) = (ln(1/ε) + t ln cosh η)/η`` (exp), ``√(t/ε)`` (two_norm, Corollary 1),
    ``√(3t ln((1 − b_0)/ε + 1))`` with ``1 − b_0 = ½Σ_{τ≤t}(e^{4/(3τ)} − 1)`` (nh_dt,
    Corollary 2). In the Lebesgue measure and with the default η the exp bound at T is at most
    ``B(√(2dT ln T) + 1)`` (ε = T^{−d}, Theorem 22's ``O(√(dT ln T))``); the quadrature measure
    approaches it as the rule is refined. :meth:`bounds` declares (1) when B is ``G·D`` from the
    game (or larger); it holds for every sequence, adaptive adversaries included.

    Examples
    --------
    >>> from arena.oco.domains import Domain
    >>> from arena.oco.losses import feedback
    >>> spec = GameSpec("oco", 1, 50, dim=1, domain=Domain("ball", 1.0), gradient_bound=1.0)
    >>> p = ContinuousExpWeights()
    >>> p.reset(spec, [np.random.default_rng(0)])
    >>> for _ in range(50):
    ...     p.update(feedback("linear", 0.0, p.predict(), RoundData(g=np.array([[0.5]]))))
    >>> c = p.step_rate * 25.0 / 2.0  # p_51(x) ∝ e^{−cx}: mean 1/c − coth(c)
    >>> bool(abs(p.predict()[0, 0] - (1 / c - 1 / math.tanh(c))) < 1e-12)
    True

    References
    ----------
    Luo 2016 (PhD thesis): §2.1.3 (Algorithm 3, Theorem 2), §2.1.4 (EXP; Lemma 1 and Corollary 1;
    Lemma 2 and Corollary 2), §2.1.6 (online convex optimization) and Appendix A.3 (Algorithm 25,
    Theorem 22); Cover 1991, "Universal portfolios"; Hazan, Agarwal & Kale 2007 (exponentially
    weighted online optimization, EWOO).
    """

    tags = PlayerTags(
        protocols=OCO_PROTOCOLS,
        randomized=False,
        block_kernel=True,
        max_actions=MAX_DIM,
        domains=frozenset({"ball", "box"}),
    )
    parameter_constraints: ClassVar = {
        "potential": [OneOf(*POTENTIALS)],
        "eta": [POSITIVE, IsNone()],
        "scale": [POSITIVE, IsNone()],
        "panels": [POSITIVE, IsNone()],
        "nodes": [POSITIVE],
    }

    def __init__(
        self,
        potential: str = "exp",
        eta: float | None = None,
        scale: float | None = None,
        panels: int | None = None,
        nodes: int = 16,
    ):
        self.potential = potential
        self.eta = eta
        self.scale = scale
        self.panels = panels
        self.nodes = nodes

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        who = self.label()
        dim = game_dim(spec)
        domain = game_domain(spec)
        if dim > MAX_DIM:
            raise ConfigError(
                who, "n_actions", f"integrates over K by quadrature in d ≤ {MAX_DIM}; got d = {dim}"
            )
        if domain.kind not in ("ball", "box") or (dim == 2 and domain.kind != "box"):
            raise ConfigError(
                who, "domain", f"needs an interval (d = 1) or a square (box, d = 2); got "
                f"{domain.kind!r} in d = {dim}"
            )  # fmt: skip
        for name in ("panels", "nodes"):
            value = getattr(self, name)
            if value is not None and value != int(value):
                raise ConfigError(who, name, f"must be a whole number, got {value!r}")
        eta = math.nan
        if self.potential == "exp":
            if self.eta is not None:
                eta = float(self.eta)
            elif spec.horizon is None:
                raise ConfigError(who, "eta", "the tuned η = √(2d ln T/T) needs the horizon")
            else:
                horizon = int(spec.horizon)
                eta = math.sqrt(2.0 * dim * math.log(max(horizon, 2)) / horizon)
        elif self.eta is not None:
            raise ConfigError(who, "eta", "only applies to potential='exp'")
        diam = domain.diameter(dim)
        game_g = spec.gradient_bound
        known = game_g is not None and math.isfinite(game_g) and game_g > 0
        if self.scale is None and not known:
            raise ConfigError(who, "scale", "the game declares no gradient bound G; give B > 0")
        scale = float(self.scale) if self.scale is not None else float(game_g) * diam
        radius = float(domain.radius)
        panels = DEFAULT_PANELS[dim] if self.panels is None else int(self.panels)
        x1, w1 = composite_gauss_legendre(radius, panels, int(self.nodes))
        if dim == 1:
            self._nodes = x1[:, None].copy()
            self._weights = w1 / w1.sum()
        else:
            grid = np.stack(np.meshgrid(x1, x1, indexing="ij"), axis=-1).reshape(-1, 2)
            self._nodes = np.ascontiguousarray(grid)
            self._weights = np.outer(w1, w1).ravel() / w1.sum() ** 2
        self._mass = window_masses(x1, w1, radius, LAMBDAS) ** dim
        self._code = POTENTIALS.index(self.potential)
        self._eta, self._scale, self._dim = eta, scale, dim
        self._bound_ok = known and scale >= float(game_g) * diam
        self._loss = spec.loss or "linear"
        self._sigma = float(spec.sigma)
        n_rep = spec.n_replicates
        self._s = np.zeros((n_rep, self._nodes.shape[0]))
        self._w = np.zeros((n_rep, dim))
        self._log_omega = np.log(self._weights)
        work = np.empty(self._nodes.shape[0])
        for r in range(n_rep):
            _cew_mean(
                self._s[r], self._log_omega, self._nodes, 1, self._code, eta, work, self._w[r]
            )
        self._rounds = 0
        self._nh_sum_t, self._nh_sum = 0, 0.0

    @property
    def step_rate(self) -> float:
        """The exp potential's resolved η (NaN for the other potentials)."""
        return self._eta

    @property
    def quadrature(self) -> tuple[np.ndarray, np.ndarray]:
        """The nodes (n, d) and normalized weights (n,) the player integrates with, copies."""
        return self._nodes.copy(), self._weights.copy()

    @property
    def positions(self) -> np.ndarray:
        """The chips' positions ``s_t(x_j)`` at the nodes (units of B), shape (R, n), a copy."""
        return self._s.copy()

    def predict(self, x: np.ndarray | None = None) -> np.ndarray:
        return self._w.copy()

    def update(self, fb: Feedback) -> None:
        data = RoundData(*(None if a is None else np.asarray(a)[:, None] for a in fb.data))
        self._advance(data, np.asarray(fb.w, dtype=np.float64).copy())

    def play_block(self, data: RoundData, spec: GameSpec) -> np.ndarray:
        return self._advance(data, self._w)

    def _advance(self, data: RoundData, w: np.ndarray) -> np.ndarray:
        code, g, x, y, z, has_z = kernel_data(data, self._loss)
        n = next(a.shape[1] for a in (data.g, data.x, data.y) if a is not None)
        out = np.empty((w.shape[0], n, w.shape[1]))
        _cew_play_block(
            code, self._sigma, g, x, y, z, has_z, self._nodes, self._log_omega, self._s, w,
            self._rounds, self._code, self._eta, self._scale, out,
        )  # fmt: skip
        self._w = w
        self._rounds += n
        return out

    def bounds(self, t: int) -> dict[tuple[str, float], float]:
        """Declare bound (1) of the Notes when B is the game's ``G·D`` or larger."""
        if not self._bound_ok:
            return {}
        return {("regret", math.nan): self.regret_bound(t)}

    def regret_bound(self, t: int) -> float:
        """Return bound (1) of the Notes after t rounds, in loss units."""
        ok = self._mass > 0
        eps, lam = self._mass[ok], LAMBDAS[ok]
        if self.potential == "exp":
            thr = (np.log(1.0 / eps) + t * log_cosh(self._eta)) / self._eta
        elif self.potential == "two_norm":
            thr = np.sqrt(t / eps)
        else:
            thr = np.sqrt(3.0 * t * np.log1p(0.5 * self._nh_exp_sum(t) / eps))
        return self._scale * min(float((thr + t * lam).min()), float(t))

    def _nh_exp_sum(self, t: int) -> float:
        """``Σ_{τ≤t} (e^{4/(3τ)} − 1)``, extended incrementally between checkpoints."""
        if t < self._nh_sum_t:
            self._nh_sum_t, self._nh_sum = 0, 0.0
        if t > self._nh_sum_t:
            tau = np.arange(self._nh_sum_t + 1, t + 1, dtype=np.float64)
            self._nh_sum += float(np.expm1(4.0 / (3.0 * tau)).sum())
            self._nh_sum_t = t
        return self._nh_sum

    def lebesgue_bound(self, t: int) -> float:
        """Return Theorem 22's exp bound for exact integrals, ``B·min_λ[R_t(λ^d) + tλ]``."""
        if self.potential != "exp":
            raise ValueError("lebesgue_bound is the exp potential's closed form")
        eps = LAMBDAS**self._dim
        thr = (np.log(1.0 / eps) + t * log_cosh(self._eta)) / self._eta
        return self._scale * min(float((thr + t * LAMBDAS).min()), float(t))

    @classmethod
    def _unit_test_params(cls):
        # The conformance partners declare no gradient bound (B is given); few nodes keep it fast.
        yield {"eta": 0.5, "scale": 8.0, "panels": 2, "nodes": 8}
        yield {"potential": "nh_dt", "scale": 8.0, "panels": 2, "nodes": 8}
