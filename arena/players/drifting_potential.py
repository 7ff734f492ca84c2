"""Luo's generic potential-based expert algorithm (Algorithm 3) with a choice of potential."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import ClassVar

import numpy as np
from numba import njit
from scipy.special import gammaln

from arena.errors import ConfigError
from arena.experts.components import ExpertsPlayer
from arena.kernels import normalize_log_weights
from arena.metrics.base import exact_quantile_rank
from arena.params import NON_NEGATIVE, POSITIVE, IsNone, OneOf
from arena.spec import GameSpec, PlayerTags
from arena.validation import kernel_views

POTENTIALS = ("exp", "two_norm", "nh_dt", "bbm")
"""Potential families by name; the kernel receives the index into this tuple."""

BOUND_EPS = (0.1, 0.25)
"""Quantiles ε for which ``bounds`` declares the ε-quantile regret bound (besides ε = 1/N)."""

LN2 = math.log(2.0)


def log_cosh(eta: float) -> float:
    """Return ``ln cosh η`` without overflow (``η + log1p(e^{−2η}) − ln 2``)."""
    a = abs(eta)
    return a + math.log1p(math.exp(-2.0 * a)) - LN2


def default_margin(horizon: int, n_actions: int) -> float:
    """Return the boost-by-majority threshold ``m = sqrt(2(T+1) ln(2N)) − 1`` (at least 0).

    It solves ``2 exp(−(m+1)²/(2(T+1))) = 1/N``, the relaxed-DGv1 minimax value of Luo 2016, §2.1.3
    (from Mukherjee & Schapire 2010) at ``ε = 1/N``: the margin an optimal ±1 chip player can hold
    all but a 1/N fraction below.

    Examples
    --------
    >>> round(default_margin(100, 10), 4)
    23.5996
    """
    return max(0.0, math.sqrt(2.0 * (horizon + 1) * math.log(2.0 * n_actions)) - 1.0)


def _bbm_log_window(n: int, k: np.ndarray, margin: float) -> np.ndarray:
    """``log(Φ_t(k−1) − Φ_t(k+1))`` at integer positions k for the table with n = T − t steps.

    ``Φ_t(k) = P[k + S_n ≤ −m]``, ``S_n = 2B − n``, ``B ~ Bin(n, ½)``, is the CDF of B at
    ``⌊(n − m − k)/2⌋``; the difference of two CDFs one step apart is the pmf at
    ``j = ⌊(n − m − k + 1)/2⌋`` (zero outside 0..n).
    """
    j = np.floor((n - margin - k + 1.0) / 2.0)
    inside = (j >= 0) & (j <= n)
    jj = np.where(inside, j, 0.0)
    logpmf = gammaln(n + 1.0) - gammaln(jj + 1.0) - gammaln(n - jj + 1.0) - n * LN2
    return np.where(inside, logpmf, -np.inf)


def bbm_table(n: int, k: np.ndarray, margin: float) -> np.ndarray:
    """Return ``Φ_t(k) = P[k + S_n ≤ −m]`` at integer positions k (``n = T − t``), exactly.

    Examples
    --------
    >>> bbm_table(2, np.array([-3.0, -1.0, 0.0, 1.0, 3.0]), 0.0).tolist()
    [1.0, 0.75, 0.75, 0.25, 0.0]
    """
    from scipy.stats import binom

    return binom.cdf(np.floor((n - margin - np.asarray(k, dtype=np.float64)) / 2.0), n, 0.5)


def potential_values(
    potential: str,
    t: int,
    s: np.ndarray,
    *,
    eta: float = math.nan,
    horizon: int = 0,
    margin: float = 0.0,
) -> np.ndarray:
    """Return ``Φ_t(s)`` elementwise for a named potential family (the anytime normalization).

    Each family satisfies Algorithm 3's condition ``Φ_t(s−1) + Φ_t(s+1) ≤ 2Φ_{t−1}(s)``; the
    constants of the thesis (scale a, threshold R, horizon terms) are fixed so that no horizon is
    needed except for ``bbm``:

    * ``exp``: ``Φ_t(s) = cosh(η)^{−t} e^{−ηs}`` (equality in the condition; ``Φ_0(0) = 1``);
    * ``two_norm``: ``Φ_t(s) = [s]_-² − t`` (Lemma 1 with a = 1, minus the constant T);
    * ``nh_dt``: ``Φ_t(s) = e^{[s]_-²/(3t)} − 1 − ½ Σ_{τ≤t} (e^{4/(3τ)} − 1)`` for t ≥ 1 and
      ``Φ_0 ≡ 0`` (Lemma 2 with a = 1, d = 3, minus the constant ``1 − b_0``);
    * ``bbm``: ``Φ_t(s) = P[s + S_{T−t} ≤ −m]`` at integer s (binomial CDF), linearly
      interpolated in between (equality in the condition; see :class:`DriftingPotential`).
    """
    s = np.asarray(s, dtype=np.float64)
    neg = np.minimum(s, 0.0)
    if potential == "exp":
        return np.exp(-eta * s - t * log_cosh(eta))
    if potential == "two_norm":
        return neg**2 - t
    if potential == "nh_dt":
        if t == 0:
            return np.zeros_like(s)
        tau = np.arange(1, t + 1, dtype=np.float64)
        return np.exp(neg**2 / (3.0 * t)) - 1.0 - 0.5 * float(np.expm1(4.0 / (3.0 * tau)).sum())
    if potential == "bbm":
        k = np.floor(s)
        f = s - k
        n = horizon - t
        return (1.0 - f) * bbm_table(n, k, margin) + f * bbm_table(n, k + 1.0, margin)
    raise ValueError(f"unknown potential {potential!r}")


def potential_log_weights(
    potential: str,
    t: int,
    s: np.ndarray,
    *,
    eta: float = math.nan,
    horizon: int = 0,
    margin: float = 0.0,
) -> np.ndarray:
    """Return ``log(Φ_t(s−1) − Φ_t(s+1))`` up to an additive constant, elementwise.

    The differences are taken in closed form where a literal subtraction would overflow or
    cancel: ``exp`` gives ``−ηs`` (dropping ``ln(2 sinh η) − t ln cosh η``); ``nh_dt`` gives
    ``A + log(−expm1(B − A))`` with ``A = [s−1]_-²/(3t)``, ``B = [s+1]_-²/(3t)``; ``bbm`` uses
    the pmf form of the table difference (see :func:`_bbm_log_window`). ``−inf`` is weight 0.

    Examples
    --------
    >>> w = np.exp(potential_log_weights("two_norm", 2, np.array([-0.5, 0.5])))
    >>> (w / w.sum()).round(12).tolist()  # weights (1.5², 0.5²), so p_2 = (0.9, 0.1)
    [0.9, 0.1]
    """
    s = np.asarray(s, dtype=np.float64)
    with np.errstate(divide="ignore"):
        if potential == "exp":
            return -eta * s
        if potential == "two_norm":
            return np.log(np.minimum(s - 1.0, 0.0) ** 2 - np.minimum(s + 1.0, 0.0) ** 2)
        if potential == "nh_dt":
            a = np.minimum(s - 1.0, 0.0) ** 2 / (3.0 * t)
            b = np.minimum(s + 1.0, 0.0) ** 2 / (3.0 * t)
            return np.where(a > b, a + np.log(-np.expm1(b - a)), -np.inf)
        if potential == "bbm":
            k = np.floor(s)
            f = s - k
            n = horizon - t
            lo = np.log(1.0 - f) + _bbm_log_window(n, k, margin)
            hi = np.log(f) + _bbm_log_window(n, k + 1.0, margin)
            return np.logaddexp(lo, hi)
    raise ValueError(f"unknown potential {potential!r}")


@njit(cache=True, nogil=True)
def _log_binom_pmf_half(n, j):
    if j < 0 or j > n:
        return -np.inf
    return math.lgamma(n + 1.0) - math.lgamma(j + 1.0) - math.lgamma(n - j + 1.0) - n * LN2


@njit(cache=True, nogil=True)
def _row_probs(s, t, code, eta, horizon, margin, out):
    """Fill ``out`` with Algorithm 3's p at round t for one replicate's chip positions ``s``."""
    n_act = s.shape[0]
    m = -np.inf
    for i in range(n_act):
        x = s[i]
        if code == 0:  # exp
            lw = -eta * x
        elif code == 1:  # two_norm
            a = min(x - 1.0, 0.0)
            b = min(x + 1.0, 0.0)
            w = a * a - b * b
            lw = math.log(w) if w > 0.0 else -np.inf
        elif code == 2:  # nh_dt
            a = min(x - 1.0, 0.0)
            b = min(x + 1.0, 0.0)
            a = a * a / (3.0 * t)
            b = b * b / (3.0 * t)
            lw = a + math.log(-math.expm1(b - a)) if a > b else -np.inf
        else:  # bbm
            k = math.floor(x)
            f = x - k
            n = horizon - t
            lo = -np.inf
            hi = -np.inf
            if f < 1.0:
                lo = math.log(1.0 - f) + _log_binom_pmf_half(
                    n, math.floor((n - margin - k + 1.0) / 2.0)
                )
            if f > 0.0:
                hi = math.log(f) + _log_binom_pmf_half(n, math.floor((n - margin - k) / 2.0))
            top = max(lo, hi)
            if top == -np.inf:
                lw = -np.inf
            else:
                lw = top + math.log(math.exp(lo - top) + math.exp(hi - top))
        out[i] = lw
        if lw > m:
            m = lw
    normalize_log_weights(out, m)


@njit(cache=True, nogil=True)
def _drifting_probs(s, t, code, eta, horizon, margin, out):
    """Fill ``out`` (R, N) with Algorithm 3's p at round t for the positions ``s`` (R, N)."""
    for r in range(s.shape[0]):
        _row_probs(s[r], t, code, eta, horizon, margin, out[r])


@njit(cache=True, nogil=True)
def _drifting_play_block(losses, s, rounds_done, code, eta, horizon, margin, lo, scale, probs):
    """Play a chunk: ``probs[r, j]`` is p at round ``rounds_done + j + 1``; ``s`` advances."""
    n_rep, n, n_act = losses.shape
    for r in range(n_rep):
        for j in range(n):
            p = probs[r, j]
            _row_probs(s[r], rounds_done + j + 1, code, eta, horizon, margin, p)
            h = 0.0
            for i in range(n_act):
                h += p[i] * ((losses[r, j, i] - lo) / scale)
            for i in range(n_act):
                s[r, i] += (losses[r, j, i] - lo) / scale - h


class _TagsByPotential:
    """Class attribute ``tags``: ``needs_horizon`` only for an instance with ``potential="bbm"``."""

    base = PlayerTags(protocols=frozenset({"experts"}), block_kernel=True)

    def __get__(self, obj, owner=None) -> PlayerTags:
        if obj is not None and getattr(obj, "potential", None) == "bbm":
            return replace(self.base, needs_horizon=True)
        return self.base


class DriftingPotential(ExpertsPlayer):
    """Algorithm 3 (Luo): ``p_{t,i} ∝ Φ_t(s_{t−1,i} − 1) − Φ_t(s_{t−1,i} + 1)`` for a named Φ.

    Parameters
    ----------
    potential : {"nh_dt", "two_norm", "exp", "bbm"}
        The potential family (see :func:`potential_values`): ``"nh_dt"`` (default,
        NormalHedge.DT), ``"two_norm"`` (the 2-norm algorithm), ``"exp"`` (exponential weights,
        needs ``eta``) or ``"bbm"`` (the boost-by-majority binomial table, needs the horizon).
    eta : float, optional
        Rate η > 0 of the ``exp`` potential; only for ``potential="exp"``.
    margin : float, optional
        Threshold m ≥ 0 of ``bbm``'s final loss ``Φ_T(s) = 1{s ≤ −m}``; only for
        ``potential="bbm"``. Default :func:`default_margin` ``sqrt(2(T+1) ln(2N)) − 1``.

    Notes
    -----
    With losses mapped to [0, 1] by the declared range, the chip positions are ``s_0 = 0`` and
    ``s_{t,i} = s_{t−1,i} + ℓ_{t,i} − p_t·ℓ_t`` (``s = −R``, Algorithm 3 line 8), and the
    learner plays ``p_{t,i} ∝ Φ_t(s_{t−1,i} − 1) − Φ_t(s_{t−1,i} + 1)`` (line 7), normalized in
    the log domain (:func:`potential_log_weights`); a row of zero weights falls back to uniform.
    :meth:`potential_sum` returns ``Σ_i Φ_t(s_{t,i})`` per replicate, which Theorem 2's proof
    shows is nonincreasing in t whenever Φ_t is convex and satisfies the condition of line 3
    (Luo 2016, Eq. 2.2).

    * ``exp``: ``p ∝ e^{−η s} ∝ e^{−η L}``, i.e. Hedge with rate η on the unit-range losses.
      Bound (Theorem 2 with Hoeffding's lemma on ``z = ℓ − p·ℓ ∈ [−1, 1]``, Luo 2016, §2.1.4,
      "Exponential Weights (EXP) Algorithm"):
      ``R_(k)(t) ≤ (ln(N/k) + t ln cosh η)/η``; the thesis's relaxation ``ln(N/k)/η + tη/2`` is
      weaker than Hedge's textbook ``η t/8`` only because it uses the range of z.
    * ``two_norm``: the same p as :class:`arena.players.two_norm.TwoNorm`, bound ``sqrt(tN/k)``.
    * ``nh_dt``: the same p as :class:`arena.players.normal_hedge_dt.NormalHedgeDT` (expected
    state),
      bound ``sqrt(3t ln((N/k)(1 − b_0) + 1))`` with ``1 − b_0 = ½ Σ_{τ≤t} (e^{4/(3τ)} − 1)``.
    * ``bbm``: the boost-by-majority potential for a known horizon T (Luo 2016, §2.1.1, with
      the recursion written in the indexing of Eq. 2.1: the printed one defines ``Φ_t`` from
      ``Φ_{t+1}``): ``Φ_t(s) = P[s + S_{T−t} ≤ −m]`` with S a sum of
      T − t fair ±1 steps, a binomial CDF, tabulated at the integer positions. **Extension to
      real s: linear interpolation of the table.** The interpolated table still satisfies the
      condition of line 3 *with equality* for every real s (interpolation is linear and the
      binomial recursion holds at every integer), and the weights are nonnegative (the table is
      nonincreasing). But it is **not convex**: ``S_{T−t}`` has the parity of T − t, so the
      integer table is a staircase, constant on pairs of neighbours, whose second differences
      take both signs; no convex function, the interpolation included, passes through it.
      Eq. (2.3), which lets Algorithm 3 treat movements in [−1, 1] as ±1, therefore
      fails, and the potential can increase under the experts protocol's movements
      ``z = ℓ − p·ℓ``. The invariant ``Σ_i Φ_t(s_t) ≤ Σ_i Φ_{t−1}(s_{t−1})`` holds only for ±1
      movements (the boosting chip game). So this player
      **declares no bound**; it is here as the drifting-game baseline. Chips out of reach of the
      threshold get weight exactly 0, and if all are out of reach p falls back to uniform.
      An instance with ``potential="bbm"`` reports ``tags.needs_horizon = True`` (the class
      attribute ``tags`` depends on the instance's potential); rounds beyond T are refused.

    ``bounds`` declares the ``exp``, ``two_norm`` and ``nh_dt`` bounds for the regret (k = 1) and
    the ε-quantile regret at ε ∈ {0.1, 0.25} (``k = ⌈εN⌉``), times the loss range width; they hold
    for every loss sequence in range, adaptive adversaries included.

    Examples
    --------
    >>> from arena import play
    >>> df = play(DriftingPotential(potential="two_norm"), "fair_coin", n_actions=10,
    ...           horizon=1000, metrics={"regret": {}, "bound": {}})
    >>> last = df[df.t == 1000].set_index("metric").value
    >>> bool(last["regret"] <= last["bound:regret"])
    True

    References
    ----------
    Luo 2016: the drifting game and boost-by-majority (§2.1.1, Eq. 2.1), Eq. (2.3), Algorithm 3
    and Theorem 2 (§2.1.3), EXP, Lemma 1 and Corollary 1, Lemma 2 and Corollary 2 (§2.1.4).
    Freund (1995), "Boosting a weak learning algorithm by majority".
    """

    tags = _TagsByPotential()
    parameter_constraints: ClassVar = {
        "potential": [OneOf(*POTENTIALS)],
        "eta": [POSITIVE, IsNone()],
        "margin": [NON_NEGATIVE, IsNone()],
    }

    def __init__(
        self, potential: str = "nh_dt", eta: float | None = None, margin: float | None = None
    ):
        self.potential = potential
        self.eta = eta
        self.margin = margin

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        who = self.label()
        eta = math.nan
        if self.potential == "exp":
            if self.eta is None:
                raise ConfigError(who, "eta", "potential='exp' needs a rate eta > 0")
            eta = float(self.eta)
        elif self.eta is not None:
            raise ConfigError(who, "eta", "only applies to potential='exp'")
        horizon, margin = 0, 0.0
        if self.potential == "bbm":
            if spec.horizon is None:
                raise ConfigError(who, "horizon", "potential='bbm' needs the horizon")
            horizon = int(spec.horizon)
            if self.margin is None:
                margin = default_margin(horizon, spec.n_actions)
            else:
                margin = float(self.margin)
        elif self.margin is not None:
            raise ConfigError(who, "margin", "only applies to potential='bbm'")
        self._code = POTENTIALS.index(self.potential)
        self._eta, self._horizon, self._margin = eta, horizon, margin
        self._n = spec.n_actions
        self._lo, self._scale = spec.loss_range[0], spec.loss_scale
        self._s = np.zeros((spec.n_replicates, spec.n_actions))
        self._rounds = 0
        self._sum_t, self._sum = 0, 0.0  # cache of Σ_{τ≤t} (e^{4/(3τ)} − 1) for nh_dt's bound

    def _kw(self) -> dict:
        return {"eta": self._eta, "horizon": self._horizon, "margin": self._margin}

    @property
    def positions(self) -> np.ndarray:
        """Chip positions ``s_{t,i} = −R_{t,i}`` (unit-range losses), shape (R, N), a copy."""
        return self._s.copy()

    def potential_sum(self, t: int) -> np.ndarray:
        """Return ``Σ_i Φ_t(s_i)`` per replicate at the current positions, shape (R,).

        After t rounds, ``potential_sum(t)`` is the quantity that Theorem 2's proof keeps
        nonincreasing: ``potential_sum(t) ≤`` the value of ``potential_sum(t − 1)`` taken before
        round t (for ``exp``, ``two_norm`` and ``nh_dt``; ``bbm`` only under ±1 movements).
        (The parameter ``potential`` holds the family's name, hence this method's name.)
        """
        return potential_values(self.potential, t, self._s, **self._kw()).sum(axis=1)

    def _check_rounds(self, last: int) -> None:
        if self.potential == "bbm" and last > self._horizon:
            raise ValueError(f"bbm is defined for rounds ≤ T = {self._horizon}, not {last}")

    def predict(self, confidences: np.ndarray | None = None) -> np.ndarray:
        t = self._rounds + 1
        self._check_rounds(t)
        # the compiled row function of the kernel, so both paths agree bitwise (bbm's log-pmf
        # via lgamma differs between scipy and libm by ~1e-13); potential_log_weights is the
        # readable numpy statement of the same weights, checked against it in the tests
        out = np.empty_like(self._s)
        _drifting_probs(self._s, t, self._code, self._eta, self._horizon, self._margin, out)
        return out

    def update(self, losses: np.ndarray, actions: np.ndarray | None = None) -> None:
        unit = (losses - self._lo) / self._scale
        h = np.einsum("rn,rn->r", self.predict(), unit)
        self._s += unit - h[:, None]
        self._rounds += 1

    def play_block(
        self,
        losses: np.ndarray,
        confidences: np.ndarray | None = None,
        uniforms: np.ndarray | None = None,
    ) -> np.ndarray:
        losses, confidences, uniforms = kernel_views(losses, confidences, uniforms)
        self._check_rounds(self._rounds + losses.shape[1])
        probs = np.empty_like(losses)
        _drifting_play_block(
            losses,
            self._s,
            self._rounds,
            self._code,
            self._eta,
            self._horizon,
            self._margin,
            self._lo,
            self._scale,
            probs,
        )
        self._rounds += losses.shape[1]
        return probs

    def bounds(self, t: int) -> dict[tuple[str, float], float]:
        """Declare the bound of the chosen potential (see Notes); ``bbm`` declares none."""
        if self.potential == "bbm":
            return {}
        out = {("regret", math.nan): self.quantile_bound(t, 1)}
        for eps in BOUND_EPS:
            out["quantile_regret", eps] = self.quantile_bound(t, exact_quantile_rank(eps, self._n))
        return out

    def quantile_bound(self, t: int, k: int) -> float:
        """Return the bound on the k-th largest regret after t rounds (raw loss units)."""
        n = self._n
        if self.potential == "exp":
            bound = (math.log(n / k) + t * log_cosh(self._eta)) / self._eta
        elif self.potential == "two_norm":
            bound = math.sqrt(t * n / k)
        elif self.potential == "nh_dt":
            one_minus_b0 = 0.5 * self._exp_sum(t)
            bound = math.sqrt(3.0 * t * math.log1p(n / k * one_minus_b0))
        else:
            raise ValueError("bbm declares no bound")
        return self._scale * bound

    def _exp_sum(self, t: int) -> float:
        """``Σ_{τ≤t} (e^{4/(3τ)} − 1)``, extended incrementally between checkpoints."""
        if t < self._sum_t:
            self._sum_t, self._sum = 0, 0.0
        if t > self._sum_t:
            tau = np.arange(self._sum_t + 1, t + 1, dtype=np.float64)
            self._sum += float(np.expm1(4.0 / (3.0 * tau)).sum())
            self._sum_t = t
        return self._sum

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"potential": "two_norm"}
        yield {"potential": "exp", "eta": 0.5}
        yield {"potential": "bbm"}
        yield {"potential": "bbm", "margin": 2.0}
