"""The drifting-game (DGv1) adversary: chip movements under the player's weights, as losses."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from scipy.special import gammaln

from arena.errors import GameError
from arena.experts.components import AdaptiveAdversary
from arena.params import POSITIVE, Interval, IsNone, OneOf
from arena.spec import AdversaryTags, GameSpec, History

STRATEGIES = ("random", "potential", "binary")
POTENTIALS = ("binomial", "exp", "two_norm", "nh_dt")

STEP = 0.5
"""Half the DGv1 spread: symmetric movements ±½ are the largest with ``max z − min z ≤ 1``."""

CONSTRAINT_TOL = 1e-12
"""Float slack allowed on ``p·d ≤ 0`` and on the spread (the pivot's move is solved in floats)."""

LN2 = math.log(2.0)


def default_threshold(horizon: int, n_actions: int) -> float:
    """Return the default threshold ``R₀ = ⌈2 sqrt(T ln N / 2)⌉ / 2`` (the fair-coin rate on ½ℤ).

    Examples
    --------
    >>> default_threshold(100, 10)
    11.0
    """
    return max(0.5, math.ceil(2.0 * math.sqrt(horizon * math.log(max(n_actions, 2)) / 2)) / 2)


def binomial_potential(t: int, x: np.ndarray, horizon: int, threshold: float) -> np.ndarray:
    """Return the boost-by-majority potential ``Φ_t(x) = P(x + ½ S_{T−t} ≥ R₀)``.

    ``S_m`` is a sum of m fair ±1 steps, so with ``B ~ Bin(m, ½)`` this is ``P(B ≥ ⌈R₀ − x +
    m/2⌉)``: the chance that a chip at regret position x ends at or above R₀ if every later
    movement is a fair ±½ step. ``Φ_T(x) = 1{x ≥ R₀}`` and ``Φ_{t−1}(x) = ½(Φ_t(x − ½) +
    Φ_t(x + ½))`` for every real x: the boost-by-majority recursion of Luo 2016, §2.1.1, written
    in the indexing of its Eq. (2.1) (the printed recursion defines ``Φ_t`` from ``Φ_{t+1}``);
    Freund 1995; Schapire 2001.

    Examples
    --------
    >>> binomial_potential(0, np.array([0.0]), 2, 1.0).tolist()  # P(½ S_2 ≥ 1) = ¼
    [0.25]
    """
    from scipy.stats import binom

    m = horizon - t
    c = np.ceil(threshold - np.asarray(x, dtype=np.float64) + m / 2 - 1e-9)
    return binom.sf(c - 1, m, 0.5)


def _log_binom_pmf_half(m: int, j: np.ndarray) -> np.ndarray:
    inside = (j >= 0) & (j <= m)
    jj = np.where(inside, j, 0.0)
    out = gammaln(m + 1.0) - gammaln(jj + 1.0) - gammaln(m - jj + 1.0) - m * LN2
    return np.where(inside, out, -np.inf)


def log_gains(
    potential: str, t: int, x: np.ndarray, *, horizon: int, threshold: float, eta: float
) -> np.ndarray:
    """Return ``log(Φ_t(x + ½) − Φ_t(x − ½))``, the log of what an up-move gains over a down-move.

    The potentials are written in regret coordinates (x = R, the seed's chip is s = −x), each
    nondecreasing in x, so the gain is ≥ 0 (``−inf`` means 0):

    * ``binomial``: the boost-by-majority table of :func:`binomial_potential`; its gain is the
      binomial pmf at ``⌈R₀ − x + (T−t)/2 − ½⌉``;
    * ``exp``: ``e^{ηx}`` (Hedge's potential), gain ∝ ``e^{ηx}``;
    * ``two_norm``: ``[x]_+²`` (the 2-norm algorithm);
    * ``nh_dt``: ``exp([x]_+²/(3t))`` (NormalHedge.DT).

    Examples
    --------
    >>> np.exp(log_gains("two_norm", 1, np.array([-1.0, 0.0, 1.0]), horizon=1, threshold=0,
    ...                  eta=1.0)).tolist()
    [0.0, 0.25, 2.0]
    """
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(divide="ignore"):
        if potential == "binomial":
            m = horizon - t
            j = np.ceil(threshold - x + m / 2 - 0.5 - 1e-9)
            return _log_binom_pmf_half(m, j)
        if potential == "exp":
            return eta * x
        if potential == "two_norm":
            return np.log(np.maximum(x + STEP, 0.0) ** 2 - np.maximum(x - STEP, 0.0) ** 2)
        if potential == "nh_dt":
            a = np.maximum(x + STEP, 0.0) ** 2 / (3.0 * t)
            b = np.maximum(x - STEP, 0.0) ** 2 / (3.0 * t)
            return np.where(a > b, a + np.log(-np.expm1(np.minimum(b - a, 0.0))), -np.inf)
    raise ValueError(f"unknown potential {potential!r}")


class DriftingGame(AdaptiveAdversary):
    """The DGv1 drifting-game adversary: chip movements ``d_t`` under ``p_t``, played as losses.

    Parameters
    ----------
    strategy : {"random", "potential", "binary"}
        How the movements are chosen each round (see Notes).
    potential : {"binomial", "exp", "two_norm", "nh_dt"}
        The potential the ``potential`` strategy pushes up (``binary`` always uses
        ``binomial``; ``random`` uses none).
    threshold : float, optional
        R₀ of the binomial potential (chips at regret ≥ R₀ count as lost for the player);
        default :func:`default_threshold` ``⌈2 sqrt(T ln N/2)⌉/2``.
    eta : float, optional
        η > 0 of the ``exp`` potential; default ``sqrt(8 ln N / T)``.

    Notes
    -----
    **Protocol (DGv1, Luo 2016, §2.1.2).** The adversary holds N chips. Written in
    regret coordinates (chip i at ``X_{t,i} = −s_{t,i}``, the thesis's position negated), each
    round it reads the player's ``p_t`` and moves the chips by
    ``d_t ∈ [−1, 1]^N`` subject to

    * ``p_t·d_t ≤ 0`` (the seed's ``p_t·z_t ≥ β = 0`` with ``z = −d``), and
    * ``max_i d_{t,i} − min_i d_{t,i} ≤ 1`` (DGv1's ``|z_i − z_j| ≤ 1``).

    Both are checked every round; a violation raises :class:`~arena.errors.GameError` naming the
    round and replicate. The movements are played as the losses of Luo 2016, Algorithm 1:
    ``l_t = z_t − min_j z_{t,j} = max_j d_{t,j} − d_t ∈ [0, 1]^N``.

    **What the player's regret sees.** ``r_{t,i} = p_t·l_t − l_{t,i} = d_{t,i} − p_t·d_t``, so
    ``R_{t,i} = X_{t,i} + K_t`` with the common slack ``K_t = −Σ_{s≤t} p_s·d_s ≥ 0``: the experts'
    regrets are the chips shifted up together, and the fraction of experts with ``R_{t,i} ≥ R``
    (metric ``dg_score``) is at least the DG loss, the fraction of chips with ``X_{t,i} ≥ R``
    (metric ``dg_loss``, read from :meth:`dg_positions`) — Luo 2016, proof of Theorem 1, part (1).

    **Strategies.** All move by ±½ (the largest symmetric DGv1 step), except one pivot chip of
    ``potential``:

    * ``random``: independent fair signs (one uniform per chip and round from the replicate's
      stream); if ``p·d > 0``, up-moves are flipped to down-moves, heaviest chips first, until
      ``p·d ≤ 0`` — a greedy repair of ours, not from the papers.
    * ``potential``: greedily maximize the increase of ``Σ_i Φ_t(X_i + d_i)`` for the named
      potential: chips are taken in decreasing order of gain per unit weight
      ``(Φ_t(X_i + ½) − Φ_t(X_i − ½))/p_{t,i}`` (chips of weight 0 first: their up-move is free)
      and moved up while the up-moving mass stays ≤ ½; the next chip (the pivot) gets the
      fractional move that makes ``p·d = 0`` exactly, the rest move down. For a convex potential
      this is the linear-programming relaxation's optimum (Luo 2016, Eq. 2.3, lets convex
      potentials treat [−1, 1] as {−1, +1}); ``p·d = 0`` leaves no slack, so ``R = X``.
    * ``binary``: the boost-by-majority adversary of the binary (±½) chip game: the same greedy
      with the binomial potential, but the pivot moves down, so every movement is ±½ and the
      chips stay on the lattice ½ℤ where the BBM potential recursion is exact. Against the
      boost-by-majority player (weights ``∝ Φ_t(X + ½) − Φ_t(X − ½)``) all chips have the same
      gain per weight: the player's weights make the adversary indifferent.

    **Exact guarantee it exercises** (Luo 2016, Eq. 2.2; Freund 1995): for ±½ moves,
    ``Φ_t(X + d) = Φ_{t−1}(X) + d(Φ_t(X + ½) − Φ_t(X − ½))`` exactly, so a player with BBM weights
    keeps ``Σ_i Φ_t(X_{t,i})`` nonincreasing and the DG loss ``≤ Φ_0(0) = P(½ S_T ≥ R₀)`` against
    ``random`` and ``binary``. Hedge with rate η keeps ``dg_score(R) ≤ cosh(η)^t e^{−ηR}`` on every
    loss sequence (the exponential potential of Luo 2016, §2.1.4, satisfies
    ``Σ_i e^{ηR_{t,i}} ≤ cosh(η) Σ_i e^{ηR_{t−1,i}}``), hence against all three.

    Examples
    --------
    >>> from arena import play
    >>> df = play("hedge", DriftingGame(), n_actions=8, horizon=50,
    ...           metrics={"loss": {}})
    >>> int(df.t.max())
    50

    References
    ----------
    Schapire (2001), "Drifting games"; Luo & Schapire (NIPS 2014), "A drifting-games analysis for
    online learning and applications to boosting"; Freund (1995), boost-by-majority; Luo 2016,
    §2.1.
    """

    parameter_constraints: ClassVar = {
        "strategy": [OneOf(*STRATEGIES)],
        "potential": [OneOf(*POTENTIALS)],
        "threshold": [Interval(), IsNone()],
        "eta": [POSITIVE, IsNone()],
    }
    tags = AdversaryTags(oblivious=False, sees_distribution=True, needs_horizon=True)

    def __init__(
        self,
        strategy: str = "random",
        potential: str = "binomial",
        threshold: float | None = None,
        eta: float | None = None,
    ):
        self.strategy = strategy
        self.potential = potential
        self.threshold = threshold
        self.eta = eta

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        horizon, n = int(spec.horizon), spec.n_actions
        if self.threshold is None:
            threshold = default_threshold(horizon, n)
        else:
            threshold = float(self.threshold)
        if self.eta is None:
            eta = math.sqrt(8.0 * math.log(max(n, 2)) / horizon)
        else:
            eta = float(self.eta)
        self._rngs = list(rngs)
        self._ids = spec.replicates()
        self._horizon, self._threshold, self._eta = horizon, threshold, eta
        self._x = np.zeros((spec.n_replicates, n))
        self._slack = np.zeros(spec.n_replicates)
        self._last = np.zeros((spec.n_replicates, n))

    # ------------------------------------------------------------------------------------------
    # what the metrics and tests read

    def dg_positions(self) -> np.ndarray:
        """Return the chip positions ``X_{t,i}`` (regret coordinates, ``−s``), shape (R, N)."""
        return self._x.copy()

    def dg_slack(self) -> np.ndarray:
        """Return ``K_t = −Σ_s p_s·d_s ≥ 0``, so that the experts' regrets are ``X + K``; (R,)."""
        return self._slack.copy()

    def last_movements(self) -> np.ndarray:
        """Return the movements ``d_t`` of the last round, shape (R, N)."""
        return self._last.copy()

    def resolved_threshold(self) -> float:
        """Return R₀ (after reset)."""
        return self._threshold

    def potential_values(self, t: int, x: np.ndarray) -> np.ndarray:
        """Return the binomial potential ``Φ_t(x)`` of this game's horizon and threshold."""
        return binomial_potential(t, x, self._horizon, self._threshold)

    # ------------------------------------------------------------------------------------------
    # the strategies

    def _movements(self, t: int, p: np.ndarray) -> np.ndarray:
        """Return the movements ``d_t`` (R, N) for the weights ``p`` (R, N) at round t."""
        if self.strategy == "random":
            return self._random(p)
        potential = "binomial" if self.strategy == "binary" else self.potential
        return self._greedy(t, p, potential, pivot=self.strategy == "potential")

    def _random(self, p: np.ndarray) -> np.ndarray:
        n_rep, n = p.shape
        d = np.full((n_rep, n), -STEP)
        for r, rng in enumerate(self._rngs):
            up = rng.random(n) < 0.5
            excess = p[r, up].sum() - 0.5 * p[r].sum()
            if excess > 0:  # flip up-moves to down-moves, heaviest chips first
                idx = np.flatnonzero(up)
                order = idx[np.argsort(-p[r, idx], kind="stable")]
                removed_before = np.cumsum(p[r, order]) - p[r, order]
                up[order[removed_before < excess]] = False
            d[r, up] = STEP
        return d

    def _greedy(self, t: int, p: np.ndarray, potential: str, pivot: bool) -> np.ndarray:
        n_rep, n = p.shape
        log_g = log_gains(
            potential, t, self._x, horizon=self._horizon, threshold=self._threshold, eta=self._eta
        )
        with np.errstate(divide="ignore", invalid="ignore"):
            density = np.where(p > 0, log_g - np.log(np.where(p > 0, p, 1.0)), np.inf)
        d = np.full((n_rep, n), -STEP)
        for r in range(n_rep):
            order = np.argsort(-density[r], kind="stable")
            total = p[r].sum()
            cum = np.cumsum(p[r, order])
            fits = cum <= 0.5 * total
            k = int(fits.sum())  # cum is nondecreasing: the chips that fit are a prefix
            d[r, order[:k]] = STEP
            if pivot and k < n:
                i = order[k]
                mass_up = cum[k - 1] if k > 0 else 0.0
                # Σ p d = ½ P_up − ½ (total − P_up − p_i) + p_i d_i = 0
                d[r, i] = np.clip(STEP * (total - 2.0 * mass_up - p[r, i]) / p[r, i], -STEP, STEP)
        return d

    def _check(self, t: int, p: np.ndarray, d: np.ndarray) -> None:
        who = f"{self.label()} (strategy={self.strategy!r})"
        spread = d.max(axis=1) - d.min(axis=1)
        drift = np.einsum("rn,rn->r", p, d)
        for r in range(d.shape[0]):
            problem = None
            if not np.isfinite(d[r]).all() or np.abs(d[r]).max() > 1.0:
                problem = "a movement outside [−1, 1]"
            elif spread[r] > 1.0 + CONSTRAINT_TOL:
                problem = f"spread max d − min d = {spread[r]!r} > 1"
            elif drift[r] > CONSTRAINT_TOL:
                problem = f"p·d = {drift[r]!r} > 0 (the chips' weighted drift must be ≤ 0)"
            if problem:
                raise GameError(
                    who,
                    f"DGv1 constraint violated: {problem}",
                    round=t,
                    replicate=int(self._ids[r]),
                )

    def losses(self, t: int, history: History) -> np.ndarray:
        p = np.asarray(history.probs, dtype=np.float64)
        if t > self._horizon:
            raise ValueError(f"the drifting game has T = {self._horizon} rounds, not {t}")
        d = self._movements(t, p)
        self._check(t, p, d)
        self._x += d
        self._slack -= np.einsum("rn,rn->r", p, d)
        self._last = d
        return np.clip(d.max(axis=1, keepdims=True) - d, 0.0, 1.0)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"strategy": "potential", "potential": "exp"}
        yield {"strategy": "potential", "potential": "nh_dt"}
        yield {"strategy": "binary", "threshold": 2.0}
