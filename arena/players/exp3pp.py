"""EXP3++: loss-based exponential weights with gap-dependent per-arm exploration (Seldin & Lugosi
2017)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from numba import njit

from arena.bandit.components import BanditPlayer
from arena.params import NON_NEGATIVE
from arena.sampling import sample_action
from arena.spec import GameSpec, PlayerTags
from arena.validation import kernel_views

DEFAULT_C = 18.0
"""The constant ``c`` of the exploration parameters ``ξ_t(a)`` (Seldin & Lugosi 2017, Theorem 2
takes ``c ≥ 18``; the default is that smallest value)."""


def exp3pp_probs(estimates: np.ndarray, t: int, c: float) -> np.ndarray:
    """Return EXP3++'s round-``t`` distribution ``ρ̃_t`` row-wise from the estimates ``L̃_{t−1}``.

    ``β_t = ½ sqrt(ln K / (t K))`` = ``η_t``; ``ρ_t(a) ∝ exp(−η_t (L̃_{t−1}(a) − min L̃_{t−1}))``
    (stable softmax); ``Δ̂_t(a) = min{1, (L̃_{t−1}(a) − min_{a'} L̃_{t−1}(a'))/t}``;
    ``ξ_t(a) = c ln(t Δ̂_t(a)²)/(t Δ̂_t(a)²)`` where ``t Δ̂_t(a)² > 1`` and ``+∞`` (no cap) where
    ``t Δ̂_t(a)² ≤ 1`` (zero gap included); ``ε_t(a) = min{1/(2K), β_t, ξ_t(a)}`` and
    ``ρ̃_t(a) = (1 − Σ_{a'} ε_t(a')) ρ_t(a) + ε_t(a)``.

    Examples
    --------
    >>> exp3pp_probs(np.zeros((1, 2)), 1, 18.0).tolist()  # uniform start
    [[0.5, 0.5]]
    >>> p = exp3pp_probs(np.array([[0.0, 1e308]]), 5, 18.0)  # no overflow; ε floors arm 1
    >>> bool(np.isfinite(p).all()), bool(p[0, 1] > 0)
    (True, True)
    """
    est = np.atleast_2d(np.asarray(estimates, dtype=np.float64))
    n_act = est.shape[-1]
    beta = 0.5 * math.sqrt(math.log(n_act) / (t * n_act))
    gap_raw = est - est.min(axis=-1, keepdims=True)
    w = np.exp(-beta * gap_raw)
    rho = w / w.sum(axis=-1, keepdims=True)
    gap = np.minimum(1.0, gap_raw / t)
    x = t * gap * gap
    capped = x > 1.0
    safe = np.where(capped, x, math.e)
    xi = np.where(capped, c * np.log(safe) / safe, np.inf)
    eps = np.minimum(min(0.5 / n_act, beta), xi)
    return (1.0 - eps.sum(axis=-1, keepdims=True)) * rho + eps


XI_MARGIN = 1e-9
"""Relative margin by which the fast path's thresholds stay inside the region where ``ξ_t(a)``
cannot bind: rounding moves the kernel's ``x = t Δ̂²`` and ``ξ`` by a few units in the last place
(~1e-15 relative), so a margin of 1e-9 leaves the decision that of the exact formula."""

BAND_EVERY = 32
"""Rounds between two certifications of the band of :func:`xi_free_band` in a chunk: the floor
``min(1/(2K), β_t)`` does not grow with t, so a band certified at a block's first round holds
for the whole block, and one certification (three logarithms) costs a 32nd of a round."""


@njit(cache=True, nogil=True, error_model="numpy")
def xi_free_band(floor: float, c: float) -> tuple[float, float]:
    """Return an interval ``[x_lo, x_hi]`` of ``x > 1`` on which ``c ln(x)/x ≥ floor (1 + m)``.

    ``m`` is :data:`XI_MARGIN`. On the interval ``ξ = c ln(x)/x`` exceeds the floor
    ``min(1/(2K), β_t)`` by more than rounding can undo, so ``ε_t(a)`` is the floor and the
    logarithm need not be taken. ``(inf, −inf)`` (empty) when no such interval is found
    (``c = 0``, or ``floor/c`` too large for ``ξ`` to exceed the floor anywhere).

    With ``q = floor (1 + 10⁻⁶)/c ≤ 0.05``: ``x_lo = 1 + 2q`` (``ln(1 + 2q) ≥ 2q − 2q²`` gives
    ``ln(x_lo)/x_lo ≥ q`` for ``q ≤ 1/4``) and ``x_hi = (L₁ + ln L₁)/q`` with ``L₁ = ln(1/q)``,
    below the larger root ``y/q`` of ``ln(x)/x = q`` (``y = −W₋₁(−q)``, Lambert's function),
    since ``y = L₁ + ln y > L₁ + ln L₁`` (1–3 % below it for the floors of a game). ``ln(x)/x``
    rises up to ``x = e`` and falls after, so its least value on the interval is at an end; both
    ends are checked numerically, and the band is returned only if both pass.

    Examples
    --------
    >>> lo, hi = xi_free_band(0.0025, 18.0)
    >>> 1.0 < lo < 1.001 and 7 * 10**4 < hi < 10**5
    True
    >>> xi_free_band(0.05, 0.0)  # c = 0: ξ = 0 binds wherever x > 1
    (inf, -inf)
    """
    if not c > 0.0:
        return np.inf, -np.inf
    q = floor * (1.0 + 1e-6) / c
    if not (0.0 < q <= 0.05):
        return np.inf, -np.inf
    l1 = math.log(1.0 / q)
    x_hi = (l1 + math.log(l1)) / q
    x_lo = 1.0 + 2.0 * q
    need = floor * (1.0 + XI_MARGIN)
    if x_lo < x_hi and c * math.log(x_lo) / x_lo >= need and c * math.log(x_hi) / x_hi >= need:
        return x_lo, x_hi
    return np.inf, -np.inf


@njit(cache=True, nogil=True, error_model="numpy")
def exp3pp_schedule(
    rounds_done: int, n: int, n_act: int, c: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return the per-round constants of a chunk of ``n`` rounds after ``rounds_done``.

    Returns ``beta`` (n,), ``β_t = ½ sqrt(ln K / (t K))`` computed as :func:`exp3pp_probs` does;
    ``floor`` (n,), ``min(1/(2K), β_t)``; and ``thresholds`` (n, 3), the bounds ``A ≤ B ≤ C``
    on ``s = d²`` (``d = L̃(a) − min L̃``, the arm's distance to the leader) between which the
    kernel's ``ε_t(a)`` is the floor without computing it:

    * ``s ≤ A = t (1 − m)``: then ``d < t``, and ``x = t Δ̂² ≈ d²/t < 1`` (no cap from ξ);
    * ``B ≤ s ≤ C`` with ``B = x_lo t (1 + m)``, ``C = x_hi t (1 − m)``: then
      ``x = min(t, d²/t)`` lies in the band ``[x_lo, x_hi]`` of :func:`xi_free_band` (``B = ∞``
      where ``t < x_lo (1 + m)`` or the band is empty), where ``ξ_t(a)`` exceeds the floor.

    ``m`` = :data:`XI_MARGIN`, far above the few rounding errors that separate the kernel's
    ``x`` from ``d²/t``. Every other ``s`` (and a NaN) takes the exact formula.
    """
    beta = np.empty(n)
    floor = np.empty(n)
    thresholds = np.empty((n, 3))
    x_lo, x_hi = np.inf, -np.inf
    for j in range(n):
        t = rounds_done + j + 1
        b = 0.5 * math.sqrt(math.log(n_act) / (t * n_act))
        f = min(0.5 / n_act, b)
        beta[j] = b
        floor[j] = f
        if j % BAND_EVERY == 0:  # the floor never grows: this band holds for the block
            x_lo, x_hi = xi_free_band(f, c)
        tf = float(t)
        thresholds[j, 0] = tf * (1.0 - XI_MARGIN)
        if x_lo < x_hi and tf >= x_lo * (1.0 + XI_MARGIN):
            thresholds[j, 1] = x_lo * tf * (1.0 + XI_MARGIN)
            thresholds[j, 2] = x_hi * tf * (1.0 - XI_MARGIN)
        else:
            thresholds[j, 1] = np.inf
            thresholds[j, 2] = -np.inf
    return beta, floor, thresholds


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def exp3pp_round_probs(est, t, beta, floor, thresholds, c, p, eps):
    """Write round t's ``ρ̃_t`` into ``p`` (K,) from one replicate's loss estimates ``est`` (K,):
    :func:`_exp3pp_play_block`'s round, given :func:`exp3pp_schedule`'s ``β_t``, floor and
    thresholds of that round; ``eps`` (K,) is scratch. The softmax shifted by the minimum, the
    weights and the ``ε`` summed in arm order, ``(1 − Σε)(w/Σw) + ε``."""
    n_act = est.shape[0]
    below_one, band_lo, band_hi = thresholds[0], thresholds[1], thresholds[2]
    m = np.inf
    for i in range(n_act):
        m = est[i] if est[i] < m else m
    total = 0.0
    eps_sum = 0.0
    for i in range(n_act):
        d = est[i] - m
        w = math.exp(-beta * d)
        p[i] = w
        total += w
        e = floor
        s = d * d
        if not (s <= below_one or (band_lo <= s <= band_hi)):
            gap = min(1.0, d / t)
            x = t * gap * gap
            if x > 1.0:
                e = min(floor, c * math.log(x) / x)
        eps[i] = e
        eps_sum += e
    mix = 1.0 - eps_sum
    for i in range(n_act):
        p[i] = mix * (p[i] / total) + eps[i]


@njit(cache=True, nogil=True, error_model="numpy")
def _exp3pp_play_block(losses, uniforms, est, rounds_done, c, lo, scale, probs):
    """Play a chunk of EXP3++: per round ``ρ̃_t``, the arena's draw, ``L̃_t(A_t) += ℓ/ρ̃_t(A_t)``.

    Reads only ``losses[r, j, A_t]``; ``est`` (R, K) advances in place. Each round performs the
    operations of :func:`exp3pp_probs` in the same order (softmax shifted by the minimum, the
    weights and the ``ε`` summed in arm order, ``(1 − Σε) (w/Σw) + ε``; ``math.exp`` where it
    calls ``np.exp``), with two savings that change no bit of ``ρ̃_t``:

    * ``β_t`` and the floor are the same in every replicate: :func:`exp3pp_schedule` computes
      them once per round of the chunk, not once per replicate-round;
    * ``ε_t(a) = min(floor, c ln(x)/x)`` takes a logarithm and two divisions per arm, yet is the
      floor for every arm whose ``x = t Δ̂²`` is at most 1 or inside the band where ``ξ`` cannot
      bind (with Seldin & Lugosi's ``c = 18`` and K = 9, every arm of the first 10⁶ rounds, as
      ``x ≤ t``); the schedule's thresholds on the squared distance to the leader decide that
      with one multiplication and two comparisons, and only the other arms take the formula.

    ``error_model="numpy"`` drops numba's zero-divisor checks: the divisors are ``t ≥ 1``,
    ``Σw ≥ 1`` (the leader's weight is 1), the declared range's width and ``ρ̃_t(A_t) > 0`` (the
    draw never lands on an arm of probability 0).
    """
    n_rep, n, n_act = losses.shape
    beta, floor, thresholds = exp3pp_schedule(rounds_done, n, n_act, c)
    eps = np.empty(n_act)  # scratch: one allocation a chunk, not a round
    for r in range(n_rep):
        for j in range(n):
            t = rounds_done + j + 1
            p = probs[r, j]
            exp3pp_round_probs(est[r], t, beta[j], floor[j], thresholds[j], c, p, eps)
            a = sample_action(p, uniforms[r, j])
            est[r, a] += ((losses[r, j, a] - lo) / scale) / p[a]


class Exp3PlusPlus(BanditPlayer):
    """EXP3++: exponential weights on importance-weighted losses, with per-arm exploration that
    shrinks on arms whose empirical gap is large (Seldin & Lugosi 2017, Algorithm 1).

    Round t (``t = 1, 2, …``, anytime), with ``β_t = ½ sqrt(ln K / (t K))`` and ``η_t = β_t``:

    * ``ρ_t(a) ∝ exp(−η_t L̃_{t−1}(a))`` (computed as ``exp(−η_t (L̃ − min L̃))``);
    * gap estimate ``Δ̂_t(a) = min{1, (L̃_{t−1}(a) − min_{a'} L̃_{t−1}(a'))/t}``;
    * ``ξ_t(a) = c ln(t Δ̂_t(a)²)/(t Δ̂_t(a)²)``, read as ``+∞`` (no cap) when
      ``t Δ̂_t(a)² ≤ 1``, where the formula is undefined (``Δ̂ = 0``) or not positive;
    * ``ε_t(a) = min{1/(2K), β_t, ξ_t(a)}`` and ``ρ̃_t(a) = (1 − Σ_{a'} ε_t(a')) ρ_t(a) + ε_t(a)``;
    * the arena draws ``A_t ~ ρ̃_t``; ``ℓ̃_t(a) = 1{A_t = a} ℓ_t(a)/ρ̃_t(A_t)``, divided by the
      probability ``A_t`` was actually drawn with (unbiased, ``E[ℓ̃_t | ρ̃_t] = ℓ_t``), and
      ``L̃_t = L̃_{t−1} + ℓ̃_t``.

    Losses are mapped to [0, 1] with the declared range ``[lo, hi]``; the bound scales by
    ``hi − lo``.

    Parameters
    ----------
    c : float
        The constant ``c ≥ 0`` of ``ξ_t(a)``; 18 (default) is the value of the paper's
        stochastic-regime analysis. Any ``c ≥ 0`` keeps the adversarial guarantee (``ξ ≥ 0``).

    Notes
    -----
    Guarantees (losses in [0, 1], every t):

    * adversarial regime (declared as ``bound:regret``): with ``η_t = β_t`` and any
      ``ξ_t(a) ≥ 0`` the pseudo-regret is at most ``4 sqrt(K t ln K)`` (Seldin & Lugosi 2017,
      Theorem 1, from Seldin & Slivkins 2014); against an oblivious adversary the pseudo-regret
      is the expectation of the ``regret`` metric;
    * stochastic regime (not declared): with the gap estimate above and ``c ≥ 18`` the
      pseudo-regret is ``O(Σ_{a: Δ(a) > 0} (ln t)²/Δ(a))`` plus a term that does not grow with t
      (Seldin & Lugosi 2017, Theorem 2); its constants are not explicit and it depends on gaps
      ``Δ(a)`` the player never sees, so the engine cannot draw it.

    Deviation, documented: where ``t Δ̂_t(a)² ≤ 1`` the formula for ``ξ_t(a)`` gives an
    undefined or non-positive value (``ln(t Δ̂²) ≤ 0``), which would make ``ε_t(a) ≤ 0``; such a
    gap estimate carries no evidence of a gap, so ``ξ_t(a) = +∞`` and the arm keeps the full
    exploration ``min{1/(2K), β_t}``. Numerics: ``ρ_t`` is a softmax shifted by the minimum, and
    ``ρ̃_t(a) ≥ ε_t(a) > 0`` bounds each importance weight, so 10⁶ rounds stay finite.

    Examples
    --------
    >>> from arena import play
    >>> df = play(Exp3PlusPlus(), "bernoulli", n_actions=5, horizon=2000, replicates=4,
    ...           metrics={"regret": {}, "bound": {}})
    >>> last = df[df.t == 2000].groupby("metric").value.mean()
    >>> bool(last["regret"] <= last["bound:regret"])
    True

    References
    ----------
    Seldin & Lugosi (2017), "An improved parametrization and analysis of the EXP3++ algorithm for
    stochastic and adversarial bandits", COLT 2017, PMLR 65, Algorithm 1, Theorems 1 and 2.
    Seldin & Slivkins (2014), "One practical algorithm for both stochastic and adversarial
    bandits", ICML 2014, PMLR 32 (EXP3++ and its adversarial bound).
    """

    tags = PlayerTags(protocols=frozenset({"bandit"}), block_kernel=True)
    parameter_constraints: ClassVar = {"c": [NON_NEGATIVE]}

    def __init__(self, c: float = DEFAULT_C):
        self.c = c

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._c = float(self.c)
        self._n_act = spec.n_actions
        self._lo, self._scale = spec.loss_range[0], spec.loss_scale
        self._est = np.zeros((spec.n_replicates, spec.n_actions))
        self._rounds = 0

    def learning_rate(self) -> float:
        """Return ``η_t = β_t = ½ sqrt(ln K / (t K))`` for the next round."""
        t = self._rounds + 1
        return 0.5 * math.sqrt(math.log(self._n_act) / (t * self._n_act))

    def predict(self) -> np.ndarray:
        return exp3pp_probs(self._est, self._rounds + 1, self._c)

    def update(self, actions: np.ndarray, losses: np.ndarray, probs: np.ndarray) -> None:
        rows = np.arange(actions.shape[0])
        unit = (np.asarray(losses, dtype=np.float64) - self._lo) / self._scale
        self._est[rows, actions] += unit / probs[rows, actions]  # ρ̃_t(A_t), the one drawn with
        self._rounds += 1

    play_block_out = True

    def play_block(
        self, losses: np.ndarray, uniforms: np.ndarray, out: np.ndarray | None = None
    ) -> np.ndarray:
        losses, uniforms = kernel_views(losses, uniforms)
        probs = np.empty_like(losses) if out is None else out
        _exp3pp_play_block(
            losses, uniforms, self._est, self._rounds, self._c, self._lo, self._scale, probs
        )
        self._rounds += losses.shape[1]
        return probs

    def estimates(self) -> np.ndarray:
        return self._est.copy()

    def bounds(self, t: int) -> dict[tuple[str, float], float]:
        """Declare Theorem 1's bound on the expected regret after ``t`` rounds (see Notes)."""
        return {("regret", math.nan): self.regret_bound(t)}

    def regret_bound(self, t: int) -> float:
        """Return ``(hi − lo) · 4 sqrt(K t ln K)`` (Seldin & Lugosi 2017, Theorem 1)."""
        k = self._n_act
        return self._scale * 4.0 * math.sqrt(k * t * math.log(k))

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"c": 0.5}
