"""AdaNormalHedge (Luo & Schapire 2015): parameter-free experts with a prior; sleeping experts."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from numba import njit

from arena.experts.components import ExpertsPlayer
from arena.metrics.base import exact_quantile_rank
from arena.params import POSITIVE, IsNone, ListOf, expert_prior
from arena.spec import GameSpec, PlayerTags
from arena.validation import kernel_views

LN2 = math.log(2.0)

SMALL_X = 1e-8
"""Below this ``x = (R+1)²/D`` the weight's log is taken as ``ln x + x/2`` (``ln expm1(x)`` to
within ``x²/24``), so that ``(R+1)²`` underflowing to 0 cannot zero a positive weight."""

QUANTILE_EPS = (0.1, 0.25)
"""The ε of the declared quantile-regret bounds (Luo 2016, §2.3, the ε-regret form of (2.6))."""


@njit(cache=True, nogil=True)
def _log_w(big_r, big_c):
    """``ln w(R, C)`` for ``w(R, C) = ½[Φ(R+1, C+1) − Φ(R−1, C+1)]``; ``−inf`` when ``R ≤ −1``.

    Piecewise with ``D = 3(C+1)`` (Luo 2016, Algorithm 6): 0 if ``R ≤ −1``;
    ``½ expm1((R+1)²/D)`` if ``−1 < R ≤ 1``; ``½ e^{(R−1)²/D} expm1(4R/D)`` if ``R > 1``.
    """
    if big_r <= -1.0:
        return -np.inf
    d = 3.0 * (big_c + 1.0)
    if big_r <= 1.0:
        x = (big_r + 1.0) * (big_r + 1.0) / d
        if x < SMALL_X:
            return 2.0 * math.log(big_r + 1.0) - math.log(d) + 0.5 * x - LN2
        return math.log(math.expm1(x)) - LN2
    return (big_r - 1.0) * (big_r - 1.0) / d + math.log(math.expm1(4.0 * big_r / d)) - LN2


def log_weight(big_r: np.ndarray, big_c: np.ndarray) -> np.ndarray:
    """Return ``ln w(R, C)`` elementwise (``−inf`` where ``R ≤ −1``), without overflow.

    ``w(R, C) = ½[Φ(R+1, C+1) − Φ(R−1, C+1)]`` with ``Φ(R, C) = exp([R]_+²/(3C))`` (Luo 2016,
    §2.3). The difference of exponentials is never formed: with ``D = 3(C+1)``,
    ``ln w = [R−1]_+²/D + ln expm1(δ) − ln 2`` where ``δ = (R+1)²/D`` for ``R ≤ 1`` and
    ``δ = 4R/D`` (the exact difference of the exponents) for ``R > 1``.

    Examples
    --------
    >>> round(float(np.exp(log_weight(np.array(0.0), np.array(0.0)))), 10)  # ½(e^{1/3} − 1)
    0.1978062125
    >>> float(np.exp(log_weight(np.array(-1.0), np.array(3.0))))
    0.0
    """
    big_r, big_c = np.broadcast_arrays(np.asarray(big_r, float), np.asarray(big_c, float))
    # One compiled pass instead of ~20 numpy calls: a wrapped AdaNormalHedge calls this twice a
    # round on (1, K) arrays, where the calls' overhead, not the arithmetic, was the cost.
    out = np.empty(big_r.shape)
    _log_weight_into(np.ravel(big_r), np.ravel(big_c), out.reshape(-1))
    return out


@njit(cache=True, nogil=True)
def _log_weight_into(big_r, big_c, out):
    """:func:`log_weight` on flat arrays into ``out``: the same operations in the same order as
    :func:`_log_w`, except that a NaN ``R`` gives ``−inf`` (neither branch's mask holds)."""
    for i in range(big_r.size):
        r = big_r[i]
        d = 3.0 * (big_c[i] + 1.0)
        if r > -1.0 and r <= 1.0:
            x = (r + 1.0) * (r + 1.0) / d
            if x < SMALL_X:
                out[i] = 2.0 * math.log(r + 1.0) - math.log(d) + 0.5 * x - LN2
            else:
                out[i] = math.log(math.expm1(x)) - LN2
        elif r > 1.0:
            out[i] = (r - 1.0) * (r - 1.0) / d + math.log(math.expm1(4.0 * r / d)) - LN2
        else:
            out[i] = -np.inf


def ada_probs(
    big_r: np.ndarray, big_c: np.ndarray, log_q: np.ndarray, confidences: np.ndarray | None
) -> np.ndarray:
    """Return ``p_i ∝ q_i I_i w(R_i, C_i)`` row-wise, or ``p_i ∝ q_i I_i`` if every term is 0.

    Normalized by log-sum-exp. ``confidences=None`` means ``I ≡ 1``. Raises ``ValueError`` when
    no expert is awake in some row.

    Examples
    --------
    >>> p = ada_probs(np.array([[0.5, -0.5]]), np.array([[0.5, 0.5]]), np.log([0.5, 0.5]), None)
    >>> round(float(p[0, 0]), 10)  # (e^½ − 1)/((e^½ − 1) + (e^{1/18} − 1))
    0.9190652059
    """
    return _probs_and_fallback(big_r, big_c, log_q, confidences)[0]


def _probs_and_fallback(big_r, big_c, log_q, confidences):
    """``(p, dead)``: the distributions and, per row, whether the fallback ``q·I`` was used."""
    lw = log_weight(big_r, big_c) + log_q
    base = np.broadcast_to(log_q, big_r.shape)
    if confidences is not None:
        with np.errstate(divide="ignore"):
            log_i = np.log(np.asarray(confidences, dtype=np.float64))
        lw = lw + log_i
        base = base + log_i
    m = lw.max(axis=-1, keepdims=True)
    dead = ~np.isfinite(m[..., 0])
    if dead.any():  # every awake expert has R ≤ −1: fall back to q·I (Eq. 2.7 still holds)
        lw = np.where(dead[..., None], base, lw)
        m = lw.max(axis=-1, keepdims=True)
        if not np.isfinite(m).all():
            raise ValueError("no expert is awake (every confidence is 0)")
    w = np.exp(lw - m)
    return w / w.sum(axis=-1, keepdims=True), dead


@njit(cache=True, nogil=True)
def _quantile_root(c_top, log_q_low, log_budget, out):
    """Bisection for ``sup{y ≥ 0 : Σ_j e^{ln q_j + y/(3 c_j)} ≤ B}`` per row; ``out = sqrt(y)``.

    ``c_top[r]``: the k largest C of row r in ascending order; ``log_q_low``: the k smallest
    ln q in ascending order (paired index by index, the pairing that minimizes the sum).
    """
    n_rep, k = c_top.shape
    m = log_q_low[k - 1]
    mass = 0.0
    for j in range(k):
        mass += math.exp(log_q_low[j] - m)
    log_mass = m + math.log(mass)
    for r in range(n_rep):
        lo = 0.0
        hi = 3.0 * c_top[r, k - 1] * max(log_budget[r] - log_mass, 0.0)
        for _ in range(200):
            if hi - lo <= 4e-16 * hi:
                break
            mid = 0.5 * (lo + hi)
            top = -np.inf
            for j in range(k):
                v = log_q_low[j] + (mid / (3.0 * c_top[r, j]) if c_top[r, j] > 0.0 else np.inf)
                if v > top:
                    top = v
            total = 0.0
            if top < np.inf:
                for j in range(k):
                    c = c_top[r, j]
                    v = log_q_low[j] + (mid / (3.0 * c) if c > 0.0 else np.inf)
                    total += math.exp(v - top)
            if top < np.inf and top + math.log(total) <= log_budget[r]:
                lo = mid
            else:
                hi = mid
        out[r] = math.sqrt(hi)


def quantile_bound(
    big_c: np.ndarray, log_q: np.ndarray, log_budget: np.ndarray, k: int
) -> np.ndarray:
    """Return a bound on the k-th largest regret ``R_{(k)}`` per row (see :class:`AdaNormalHedge`).

    With ``C^{[1]} ≤ … ≤ C^{[k]}`` the k largest ``C_i`` and ``q_{[1]} ≤ … ≤ q_{[k]}`` the k
    smallest ``q_i``, it is ``sup{x ≥ 0 : g(x) ≤ B}`` for ``g(x) = Σ_j q_{[j]} e^{x²/(3C^{[j]})}``,
    found by bisection on ``x²`` from the bracket ``[0, 3 C_max ln(B / Σ_j q_{[j]})]``.

    Examples
    --------
    >>> c = np.full((1, 4), 10.0)  # equal C and uniform q: sqrt(3 C ln(N B / k)) exactly
    >>> x = quantile_bound(c, np.log(np.full(4, 0.25)), np.log([2.0]), k=2)
    >>> bool(abs(x[0] - math.sqrt(30 * math.log(4))) < 1e-12)
    True
    """
    c_top = np.ascontiguousarray(np.sort(big_c, axis=1)[:, big_c.shape[1] - k :])
    log_q_low = np.ascontiguousarray(np.sort(log_q)[:k])
    out = np.empty(big_c.shape[0])
    _quantile_root(c_top, log_q_low, np.ascontiguousarray(log_budget, dtype=np.float64), out)
    return out


def subset_uniform_bound(
    big_c: np.ndarray, log_q: np.ndarray, log_budget: np.ndarray, k: int
) -> np.ndarray:
    """Return a bound on the subset-uniform quantile regret ``R(u_S)`` per row, u uniform on the
    k experts S of largest regret (see :class:`AdaNormalHedge`).

    Theorem 4's (2.6) gives ``R(u_S) ≤ sqrt(3 (u·C)(RE(u||q) + ln B + 1))`` for every S, with
    ``RE(u||q) = −ln k − (1/k) Σ_{i∈S} ln q_i ≥ 0``. The top-k set S itself jumps when tied
    regrets swap ranks, so the bound is taken at its largest over all k-subsets, bounded by the
    product of the two factors' maxima: ``(1/k)·(sum of the k largest C_i)`` and
    ``−ln k − (1/k)·(sum of the k smallest ln q_i) + ln B + 1``. It is continuous in the state
    and, with uniform q, equals ``sqrt(3 C̄_top (ln(N/k) + ln B + 1))``.

    Examples
    --------
    >>> c = np.array([[10.0, 4.0, 10.0, 1.0]])
    >>> x = subset_uniform_bound(c, np.log(np.full(4, 0.25)), np.log([2.0]), k=2)
    >>> bool(abs(x[0] - math.sqrt(30 * (math.log(2) + math.log(2) + 1))) < 1e-12)
    True
    """
    c_top = np.sort(big_c, axis=1)[:, big_c.shape[1] - k :].mean(axis=1)
    relative_entropy = -math.log(k) - np.sort(log_q)[:k].mean()
    return np.sqrt(3.0 * c_top * (relative_entropy + log_budget + 1.0))


@njit(cache=True, nogil=True)
def _ada_play_block(
    losses, confidences, has_conf, big_r, big_c, log_q, lo, scale, probs, scratch, fallbacks
):
    """Play a chunk; ``probs[r, j]`` is p at the chunk's round j; ``R``, ``C`` advance in place.

    ``scratch`` is a length-N work array; ``fallbacks[r]`` counts the rounds where every awake
    expert had zero weight.
    """
    n_rep, n, n_act = losses.shape
    q = np.exp(log_q)
    for r in range(n_rep):
        for j in range(n):
            if _linear_weights(big_r[r], big_c[r], q, confidences, has_conf, j, r, probs[r, j]):
                _finish_round(losses, confidences, has_conf, big_r, big_c, lo, scale, probs, r, j)
                continue
            m = -np.inf
            for i in range(n_act):
                v = log_q[i] + _log_w(big_r[r, i], big_c[r, i])
                if has_conf:
                    c = confidences[r, j, i]
                    v = v + math.log(c) if c > 0.0 else -np.inf
                scratch[i] = v
                if v > m:
                    m = v
            if m == -np.inf:
                fallbacks[r] += 1
                for i in range(n_act):
                    v = log_q[i]
                    if has_conf:
                        c = confidences[r, j, i]
                        v = v + math.log(c) if c > 0.0 else -np.inf
                    scratch[i] = v
                    if v > m:
                        m = v
                if m == -np.inf:
                    raise ValueError("no expert is awake (every confidence is 0)")
            s = 0.0
            for i in range(n_act):
                e = math.exp(scratch[i] - m)
                probs[r, j, i] = e
                s += e
            for i in range(n_act):
                probs[r, j, i] /= s
            _finish_round(losses, confidences, has_conf, big_r, big_c, lo, scale, probs, r, j)


LINEAR_MAX_EXPONENT = 700.0
"""The linear-domain weights are used while every exponent stays below this (e^700 < 1.8e308)."""

LINEAR_MIN_SUM = 1e-280
"""...and while their sum is not tiny; otherwise the round is recomputed in the log domain."""


@njit(cache=True, nogil=True)
def _linear_weights(big_r, big_c, q, confidences, has_conf, j, r, out):
    """Try the round's p in the linear domain (2 transcendental calls per expert instead of 3).

    ``w = ½ expm1((R+1)²/D)`` for ``−1 < R ≤ 1`` and ``½ e^{(R−1)²/D} expm1(4R/D)`` for
    ``R > 1``. By the potential invariant (Lemma 4) the exponents stay below ``ln(B/q_i)``, so in
    a correct run this never overflows; if an exponent exceeds :data:`LINEAR_MAX_EXPONENT`, the
    sum is tiny or every weight is 0 (the sleeping fallback), it returns False and the caller
    uses the log-domain path. Agrees with it to a few ulps.
    """
    n_act = big_r.shape[0]
    total = 0.0
    for i in range(n_act):
        rr = big_r[i]
        w = 0.0
        if rr > -1.0:
            d = 3.0 * (big_c[i] + 1.0)
            if rr <= 1.0:
                w = 0.5 * math.expm1((rr + 1.0) * (rr + 1.0) / d)
            else:
                a = (rr - 1.0) * (rr - 1.0) / d
                if a > LINEAR_MAX_EXPONENT:
                    return False
                w = 0.5 * math.exp(a) * math.expm1(4.0 * rr / d)
            w *= q[i]
            if has_conf:
                w *= confidences[r, j, i]
        out[i] = w
        total += w
    if not total > LINEAR_MIN_SUM:
        return False
    for i in range(n_act):
        out[i] /= total
    return True


@njit(cache=True, nogil=True)
def _finish_round(losses, confidences, has_conf, big_r, big_c, lo, scale, probs, r, j):
    """Advance ``R`` and ``C`` of replicate r with round j's losses, given ``probs[r, j]``."""
    n_act = losses.shape[2]
    hat = 0.0
    for i in range(n_act):
        hat += probs[r, j, i] * ((losses[r, j, i] - lo) / scale)
    for i in range(n_act):
        x = hat - (losses[r, j, i] - lo) / scale
        if has_conf:
            x = confidences[r, j, i] * x
        big_r[r, i] += x
        big_c[r, i] += abs(x)


class AdaNormalHedge(ExpertsPlayer):
    """AdaNormalHedge (Algorithm 6): ``p_{t,i} ∝ q_i w(R_{t−1,i}, C_{t−1,i})``, no learning rate.

    Losses are mapped to [0, 1] with the declared range ``[lo, hi]``; ``R`` and ``C`` below are
    in those units and the declared bounds are scaled back by ``hi − lo``.

    Parameters
    ----------
    q : list of float, optional
        Prior weights ``q_i > 0``, one per expert (normalized internally; need not sum to 1).
        ``None`` (default) is the uniform prior.

    Notes
    -----
    With ``ℓ̂_t = p_t·ℓ_t`` and confidences ``I_{t,i} ∈ [0, 1]`` (``I ≡ 1`` in the plain game):

    * ``p_{t,i} ∝ q_i I_{t,i} w(R_{t−1,i}, C_{t−1,i})`` (Luo 2016, Algorithm 6 and Eq. 2.8);
    * ``r_{t,i} = I_{t,i}(ℓ̂_t − ℓ_{t,i})``, ``R_{t,i} = R_{t−1,i} + r_{t,i}``,
      ``C_{t,i} = C_{t−1,i} + |r_{t,i}|``;
    * ``w(R, C) = ½[Φ(R+1, C+1) − Φ(R−1, C+1)]``, ``Φ(R, C) = exp([R]_+²/(3C))``, ``Φ(0,0) = 1``
      (§2.3). Both terms use ``C + 1`` as in the thesis and in Luo & Schapire 2015; PyNOL's
      ``Φ(R−1, C−1)`` (``pynol/learner/meta.py``) is a bug. The weight is computed in the log
      domain (:func:`log_weight`).
    * If every awake expert has ``R ≤ −1`` (possible only with confidences), ``p ∝ q·I`` on the
      awake set (our choice: the thesis leaves this case open); Eq. (2.7)
      ``Σ_i q_i w_i r_{t,i} = 0`` still holds, so Lemma 4 and Theorem 6 do.

    In the sleeping protocol the engine announces ``I_t`` to :meth:`predict`; since
    :meth:`update` does not receive it, ``predict`` keeps the last announced ``I_t`` for the
    round's update (its only side effect; repeated calls return the same ``p``).

    Guarantees, for every loss sequence (adaptive adversaries included), with ``q`` normalized
    and ``B_t = 1 + (3/2) Σ_i q_i (1 + ln(1 + C_{t,i}))`` (Luo 2016, Lemma 4 and
    Theorem 4), in units of ``hi − lo``:

    * point masses (from Lemma 4): ``[R_{t,i}]_+ ≤ sqrt(3 C_{t,i} ln(B_t/q_i))``, hence
      ``regret ≤ max_i sqrt(3 C_{t,i} ln(B_t/q_i))``, declared as ``bound:regret``;
    * quantiles, derived here from Lemma 4 likewise: if the k-th largest regret ``x = R_{(k)}``
      (``k = ⌈εN⌉``) is positive, the k experts S ranked first all have ``R_i ≥ x``, so
      ``Σ_{i∈S} q_i e^{x²/(3C_i)} ≤ B_t``; by rearrangement that sum is at least
      ``g(x) = Σ_{j≤k} q_{[j]} e^{x²/(3C^{[j]})}`` (the k smallest q ascending against the k
      largest C ascending). Hence ``ε-quantile regret ≤ sup{x ≥ 0 : g(x) ≤ B_t}``
      (:func:`quantile_bound`), declared as ``bound:quantile_regret`` for ε ∈ {0.1, 0.25}. With
      ``C_i ≤ t`` and uniform q it is at most ``sqrt(3t ln(N B_t/k))``, below the thesis's
      ``sqrt(3t(ln(N/k) + ln B_t + 1))`` (§2.3, after Theorem 4). Unlike Theorem 4's (2.6)
      evaluated at the top-k set,
      it is continuous in the state (no jump when tied experts swap ranks);
    * subset-uniform quantiles (Theorem 4, (2.6)): with S the ``k = ⌈εN⌉`` experts of largest
      regret and u uniform on S, ``R(u) ≤ sqrt(3 (u·C_t)(RE(u||q) + ln B_t + 1))``, taken at its
      largest over the k-subsets so that it is continuous in the state
      (:func:`subset_uniform_bound`), declared as ``bound:subset_quantile_regret`` for the same ε;
    * confidences (Theorem 6): the point-mass bound holds for
      ``R_{t,i} = Σ_s I_{s,i}(ℓ̂_s − ℓ_{s,i})``, declared as ``bound:sleeping_regret`` (instead
      of the two above) in games that announce confidences.

    ``E[R_{T,i*}] ≤ 3(ln(1/q_{i*}) + ln B + 1)/α`` in a stochastic game with gap α (Theorem 5,
    part 2): the regret to the best expert does not grow with T. O(N) time per round.

    Examples
    --------
    >>> from arena import play
    >>> df = play(AdaNormalHedge(), "bernoulli", n_actions=4, horizon=500,
    ...           metrics={"regret": {}, "bound": {}})
    >>> last = df[df.t == 500].set_index("metric").value
    >>> bool(last["regret"] <= last["bound:regret"])
    True

    References
    ----------
    Luo & Schapire (2015), "Achieving all with no parameters: AdaNormalHedge", COLT.
    Luo 2016, §2.3: Algorithm 6 and Theorem 4, Lemmas 3-4 (§2.3.1), confidence-rated and
    sleeping experts (§2.3.2, Eq. 2.8 and Theorem 6).
    """

    tags = PlayerTags(
        protocols=frozenset({"experts"}), block_kernel=True, supports_confidences=True
    )
    parameter_constraints: ClassVar = {"q": [ListOf(POSITIVE), IsNone()]}

    def __init__(self, q: list[float] | None = None):
        self.q = q

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        n = spec.n_actions
        q = expert_prior(self, "q", n)
        self._q = q
        self._log_q = np.log(q)
        self._lo, self._scale = spec.loss_range[0], spec.loss_scale
        self._big_r = np.zeros((spec.n_replicates, n))
        self._big_c = np.zeros((spec.n_replicates, n))
        self._fallbacks = np.zeros(spec.n_replicates, dtype=np.int64)
        self._sleeping = False
        self._rounds = 0

    # -- readable path ------------------------------------------------------------------------

    def predict(self, confidences: np.ndarray | None = None) -> np.ndarray:
        if confidences is not None:
            confidences = np.array(confidences, dtype=np.float64)
        return ada_probs(self._big_r, self._big_c, self._log_q, confidences)

    def update(
        self,
        losses: np.ndarray,
        actions: np.ndarray | None = None,
        confidences: np.ndarray | None = None,
    ) -> None:
        # the arena hands update the same I_t that predict saw (sleeping games only)
        conf = None if confidences is None else np.array(confidences, dtype=np.float64)
        p, dead = _probs_and_fallback(self._big_r, self._big_c, self._log_q, conf)
        unit = (np.asarray(losses, dtype=np.float64) - self._lo) / self._scale
        hat = np.einsum("rn,rn->r", p, unit)
        r = hat[:, None] - unit
        if conf is not None:
            self._sleeping = True
            r = conf * r
        self._fallbacks += dead
        self._big_r += r
        self._big_c += np.abs(r)
        self._rounds += 1

    # -- fast path ----------------------------------------------------------------------------

    def play_block(
        self,
        losses: np.ndarray,
        confidences: np.ndarray | None = None,
        uniforms: np.ndarray | None = None,
    ) -> np.ndarray:
        losses, confidences, uniforms = kernel_views(losses, confidences, uniforms)
        losses = np.ascontiguousarray(losses, dtype=np.float64)
        probs = np.empty_like(losses)
        has_conf = confidences is not None
        conf = (
            np.ascontiguousarray(confidences, dtype=np.float64) if has_conf else np.ones((1, 1, 1))
        )
        if has_conf:
            self._sleeping = True
        _ada_play_block(
            losses,
            conf,
            has_conf,
            self._big_r,
            self._big_c,
            self._log_q,
            float(self._lo),
            float(self._scale),
            probs,
            np.empty(losses.shape[2]),
            self._fallbacks,
        )
        self._rounds += losses.shape[1]
        return probs

    # -- state and guarantees -----------------------------------------------------------------

    @property
    def cumulative_regrets(self) -> np.ndarray:
        """``R_t`` per replicate and expert (unit-range losses), a copy."""
        return self._big_r.copy()

    @property
    def cumulative_magnitudes(self) -> np.ndarray:
        """``C_t = Σ_s |r_s|`` per replicate and expert (unit-range losses), a copy."""
        return self._big_c.copy()

    @property
    def fallback_rounds(self) -> np.ndarray:
        """Per replicate, the number of rounds played with the all-zero fallback ``p ∝ q·I``."""
        return self._fallbacks.copy()

    def potential_budget(self) -> np.ndarray:
        """``B_t = 1 + (3/2) Σ_i q_i (1 + ln(1 + C_{t,i}))`` per replicate (Lemma 4, Σq = 1)."""
        return 1.0 + 1.5 * (self._q * (1.0 + np.log1p(self._big_c))).sum(axis=1)

    def bounds(self, t: int) -> dict[tuple[str, float], np.ndarray]:
        """Declare the point-mass (``regret``), quantile and sleeping bounds of the class notes."""
        budget = self.potential_budget()
        log_b = np.log(budget)
        point = np.sqrt(3.0 * self._big_c * (log_b[:, None] - self._log_q)).max(axis=1)
        point = self._scale * point
        if self._sleeping:
            return {("sleeping_regret", math.nan): point}
        out = {("regret", math.nan): point}
        n = self._big_r.shape[1]
        for eps in QUANTILE_EPS:
            k = exact_quantile_rank(eps, n)
            out[("quantile_regret", eps)] = self._scale * quantile_bound(
                self._big_c, self._log_q, log_b, k
            )
            out[("subset_quantile_regret", eps)] = self._scale * subset_uniform_bound(
                self._big_c, self._log_q, log_b, k
            )
        return out

    @classmethod
    def _unit_test_params(cls):
        # a prior has one weight per expert, and the generic suites play different N (3 and 4),
        # so only the uniform prior is offered here; priors are tested in the player's own tests
        yield {}
