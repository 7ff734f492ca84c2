"""NormalHedge (Chaudhuri, Freund & Hsu 2009): parameter-free weights, scale found each round."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numba import njit

from arena.experts.components import ExpertsPlayer
from arena.spec import GameSpec, PlayerTags
from arena.validation import kernel_views

SNAP_RTOL = 1e-12
"""Cumulative regrets with ``|R| < SNAP_RTOL · t`` count as 0 at round t (rounding, §1.6)."""

MAX_BISECTIONS = 200
"""Safety cap on the safeguarded Newton iterations for ``log c`` (typically 5-10 suffice)."""


@njit(cache=True, nogil=True)
def normal_hedge_scale(regret, tol, buf):
    """Return the scale ``c`` with ``Σ_i exp([R_i]_+²/c) = N e``, or NaN if every ``R_i ≤ 0``.

    Regrets with ``R_i < tol`` count as ``[R_i]_+ = 0``. With ``x_i = [R_i]_+²`` and
    ``M = max x``, the root lies in ``[M/(1 + ln N), M]`` (at the left end the largest term alone
    is ``N e``; at the right end every term is at most e), and inside that bracket every exponent
    is at most ``1 + ln N``, so nothing overflows. ``log c`` is found by Newton's method from the
    left end of the bracket (monotone convergence, since the equation is convex and decreasing
    in ``log c``), safeguarded by bisection. ``buf`` is scratch space of length N (the positive
    ``x_i``).

    Examples
    --------
    >>> c = normal_hedge_scale(np.array([0.5, -0.5]), 1e-12, np.empty(2))
    >>> round(c, 10)  # 0.25 / ln(2e − 1)
    0.1677987347
    """
    n_act = regret.shape[0]
    n_pos = 0
    m = 0.0
    for i in range(n_act):
        if regret[i] >= tol and regret[i] > 0.0:
            x = regret[i] * regret[i]
            buf[n_pos] = x
            n_pos += 1
            if x > m:
                m = x
    if n_pos == 0:
        return np.nan
    log_target = math.log(n_act) + 1.0
    n_zero = n_act - n_pos
    lo = math.log(m / (1.0 + math.log(n_act)))
    hi = math.log(m)
    # g(u) = log Σ_i exp(x_i e^{−u}) − log(N e) is decreasing and convex in u = log c, and
    # g(lo) ≥ 0 ≥ g(hi): Newton's method started at lo increases monotonically to the root
    # without leaving the bracket. The bisection step is a safeguard against rounding only.
    u = lo
    for _ in range(MAX_BISECTIONS):
        inv_c = math.exp(-u)
        s = float(n_zero)
        d = 0.0
        for k in range(n_pos):
            a = buf[k] * inv_c
            e = math.exp(a)
            s += e
            d += a * e
        g = math.log(s) - log_target
        if g > 0.0:
            lo = u
        else:
            hi = u
        if g == 0.0 or d == 0.0:
            break
        step = g * s / d  # −g / g'(u)
        nxt = u + step
        if not (lo <= nxt <= hi):
            nxt = 0.5 * (lo + hi)
        if abs(nxt - u) <= 4e-16 * max(1.0, abs(u)) or hi - lo <= 4e-16 * max(1.0, abs(lo)):
            u = nxt
            break
        u = nxt
    return math.exp(u)


@njit(cache=True, nogil=True)
def _nh_row_probs(regret, tol, buf, out):
    """Fill ``out`` with NormalHedge's p for one replicate's regrets (uniform in the fallback)."""
    n_act = regret.shape[0]
    c = normal_hedge_scale(regret, tol, buf)
    if math.isnan(c):
        for i in range(n_act):
            out[i] = 1.0 / n_act
        return
    m = -np.inf
    for i in range(n_act):
        r = regret[i]
        if r >= tol and r > 0.0:
            lw = math.log(r) + r * r / c
        else:
            lw = -np.inf
        out[i] = lw
        if lw > m:
            m = lw
    total = 0.0
    for i in range(n_act):
        w = math.exp(out[i] - m)
        out[i] = w
        total += w
    for i in range(n_act):
        out[i] /= total


@njit(cache=True, nogil=True)
def normal_hedge_probs(regret, tol, out):
    """Fill ``out`` (R, N) with NormalHedge's p for the regrets ``regret`` (R, N)."""
    buf = np.empty(regret.shape[1])
    for r in range(regret.shape[0]):
        _nh_row_probs(regret[r], tol, buf, out[r])


@njit(cache=True, nogil=True)
def _normal_hedge_play_block(losses, regret, rounds_done, lo, scale, probs):
    """Play a chunk: ``probs[r, j]`` is p at round ``rounds_done + j + 1``; ``regret`` advances."""
    n_rep, n, n_act = losses.shape
    buf = np.empty(n_act)
    for r in range(n_rep):
        for j in range(n):
            p = probs[r, j]
            _nh_row_probs(regret[r], SNAP_RTOL * (rounds_done + j + 1), buf, p)
            h = 0.0
            for i in range(n_act):
                h += p[i] * ((losses[r, j, i] - lo) / scale)
            for i in range(n_act):
                regret[r, i] += h - (losses[r, j, i] - lo) / scale


class NormalHedge(ExpertsPlayer):
    """NormalHedge: ``p_{t,i} ∝ [R_{t−1,i}]_+ exp([R_{t−1,i}]_+²/c_t)`` with ``c_t`` from a search.

    It has no hyperparameter.

    Notes
    -----
    With losses mapped to [0, 1] by the declared range, the learner keeps the cumulative regrets
    ``R_{t,i} = Σ_{τ≤t} (p_τ·ℓ_τ − ℓ_{τ,i})`` and, at round t, with ``x_i = [R_{t−1,i}]_+²``:

    * if every ``R_{t−1,i} ≤ 0`` (always at t = 1, and whenever no expert has beaten the
      learner, e.g. all experts identical so far): ``p_t`` is uniform;
    * otherwise it finds ``c_t > 0`` with ``Σ_i exp(x_i/c_t) = N e`` and plays
      ``p_{t,i} ∝ [R_{t−1,i}]_+ exp(x_i/c_t)``; experts with ``R ≤ 0`` get weight exactly 0.

    This is the s-form of Luo 2016 (Algorithm 5, lines 6-7; Table 2.1) at ``s = −R``. Its ``c``
    is twice the ``c`` of the original paper (Chaudhuri, Freund & Hsu 2009), whose equation is
    ``(1/N) Σ_i exp([R_i]_+²/(2c)) = e``; the weights are identical after normalization.
    ``c_t`` is found by safeguarded Newton steps in ``log c`` on the bracket
    ``[M/(1 + ln N), M]``, ``M = max_i x_i``, where no exponential can overflow
    (:func:`normal_hedge_scale`); the weights are normalized in the log domain.

    **Implementation choices not in the sources**: the uniform fallback at t ≥ 2 when every
    regret is ≤ 0 (the thesis specifies uniform only at t = 1, Algorithm 5 lines 3-4, and the
    equation has no root then); and regrets with ``|R| < 10⁻¹²·t`` are treated as 0. The second
    matters because NormalHedge is invariant to rescaling the losses: a
    regret of 4e−17 left by rounding (e.g. every expert losing 0.3 each round) would otherwise
    receive all the mass.

    Guarantee: Luo 2016 states only an order, ``R_T^ε = O(sqrt(T ln(1/ε) + ln² N))`` (Table 2.1).
    The original paper's theorem has explicit constants, but they were not checked here, so
    this player **declares no bound** (``bounds`` is not
    overridden).

    Examples
    --------
    >>> from arena import GameSpec
    >>> nh = NormalHedge(); nh.reset(GameSpec("experts", 2, None), [None])
    >>> nh.predict().tolist()
    [[0.5, 0.5]]
    >>> nh.update(np.array([[0.0, 1.0]])); nh.predict().tolist()  # R_1 = (½, −½)
    [[1.0, 0.0]]

    References
    ----------
    Chaudhuri, Freund & Hsu (2009), "A parameter-free hedging algorithm", NIPS.
    Luo 2016: Table 2.1 (§2.1.3), the comparison with NormalHedge.DT (§2.1.4, after
    Corollary 2), Algorithm 5 NH-Boost (§2.2).
    """

    tags = PlayerTags(protocols=frozenset({"experts"}), block_kernel=True)

    def __init__(self):
        pass

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._lo, self._scale = spec.loss_range[0], spec.loss_scale
        self._regret = np.zeros((spec.n_replicates, spec.n_actions))
        self._rounds = 0

    @property
    def regret(self) -> np.ndarray:
        """Cumulative regrets ``R_{t,i}`` in unit-range losses, shape (R, N) (a copy)."""
        return self._regret.copy()

    def snap_tolerance(self) -> float:
        """Return the tolerance below which ``|R|`` counts as 0 at the next round t."""
        return SNAP_RTOL * (self._rounds + 1)

    def predict(self, confidences: np.ndarray | None = None) -> np.ndarray:
        out = np.empty_like(self._regret)
        normal_hedge_probs(self._regret, self.snap_tolerance(), out)
        return out

    def update(self, losses: np.ndarray, actions: np.ndarray | None = None) -> None:
        unit = (losses - self._lo) / self._scale
        h = np.einsum("rn,rn->r", self.predict(), unit)
        self._regret += h[:, None] - unit
        self._rounds += 1

    def play_block(
        self,
        losses: np.ndarray,
        confidences: np.ndarray | None = None,
        uniforms: np.ndarray | None = None,
    ) -> np.ndarray:
        losses, confidences, uniforms = kernel_views(losses, confidences, uniforms)
        probs = np.empty_like(losses)
        _normal_hedge_play_block(losses, self._regret, self._rounds, self._lo, self._scale, probs)
        self._rounds += losses.shape[1]
        return probs
