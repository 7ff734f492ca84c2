"""KT coin-betting experts (Orabona & Pál 2016, Algorithm 2 "KT-LEA"): parameter-free experts."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from numba import njit

from arena.errors import ConfigError
from arena.experts.components import ExpertsPlayer
from arena.metrics.base import exact_quantile_rank
from arena.params import NON_NEGATIVE, POSITIVE, IsNone, ListOf, OneOf, expert_prior
from arena.spec import GameSpec, PlayerTags
from arena.validation import kernel_views

QUANTILE_EPS = (0.01, 0.1, 0.25)
"""ε values at which the ε-quantile regret bound is declared (the default metric's)."""

COIN_TIE = 1e-12
"""A coin sum within ``COIN_TIE·t`` of 0 after t rounds is set to exactly 0 (see the Notes)."""

LOG_E_SQRT_PI = 1.0 + 0.5 * math.log(math.pi)
"""``ln(e √π)``, the constant of the lower bound on the shifted KT potential."""


def kt_log_potential(t: int, x, delta: float = 0.0, eps: float = 1.0):
    """Return ``ln F_t(x)`` for the δ-shifted KT potential with initial endowment ε.

    ``F_t(x) = ε 2^t Γ(δ+1) Γ((t+δ+1)/2 + x/2) Γ((t+δ+1)/2 − x/2) / (Γ((δ+1)/2)² Γ(t+δ+1))``,
    defined for ``|x| < t + δ + 1``; δ = 0 is the KT potential ``ε 2^t Γ(·)Γ(·)/(π t!)``
    (Orabona & Pál 2016, Thm "KT potential"). Computed with ``lgamma``.

    Examples
    --------
    >>> round(float(np.exp(kt_log_potential(1, 1.0))), 12)  # one +1 coin from wealth 1: 1 + 0
    1.0
    """
    from scipy.special import gammaln

    x = np.asarray(x, dtype=np.float64)
    a = (t + delta + 1.0) / 2.0
    return (
        math.log(eps)
        + t * math.log(2.0)
        + gammaln(delta + 1.0)
        + gammaln(a + x / 2.0)
        + gammaln(a - x / 2.0)
        - 2.0 * gammaln((delta + 1.0) / 2.0)
        - gammaln(t + delta + 1.0)
    )


@njit(cache=True, nogil=True)
def kt_bet(coin_sum, wealth, t, delta):
    """The KT bet of round t: ``w_t = β_t · Wealth_{t−1}`` with ``β_t = (Σ_{s<t} c_s)/(t + δ)``."""
    return coin_sum / (t + delta) * wealth


@njit(cache=True, nogil=True)
def _kt_coin_betting(coins, delta, eps, wealth_out):
    """Bet on coins ``c_1..c_T ∈ [−1, 1]`` from wealth ε; ``wealth_out[t] = Wealth_t``."""
    wealth = eps
    coin_sum = 0.0
    wealth_out[0] = wealth
    for s in range(coins.shape[0]):
        w = kt_bet(coin_sum, wealth, s + 1, delta)
        wealth += coins[s] * w
        coin_sum += coins[s]
        wealth_out[s + 1] = wealth


def kt_coin_betting(coins, delta: float = 0.0, eps: float = 1.0) -> np.ndarray:
    """Return the wealth ``Wealth_0..Wealth_T`` of the (δ-shifted) KT bettor on the given coins.

    The same :func:`kt_bet` drives every copy inside :class:`KTExperts`. On ±1 coins the wealth
    equals the KT potential ``F_T(Σ c)`` exactly (Orabona & Pál 2016).

    Examples
    --------
    >>> kt_coin_betting([1.0, 1.0]).tolist()  # bets 0, then 1/2 of the wealth on a repeat
    [1.0, 1.0, 1.5]
    """
    coins = np.ascontiguousarray(coins, dtype=np.float64)
    out = np.empty(coins.shape[0] + 1)
    _kt_coin_betting(coins, float(delta), float(eps), out)
    return out


@njit(cache=True, nogil=True)
def _kt_round(coin_sums, wealth, prior, t, delta, losses, scale, p, bets):
    """Play round t of one replicate: fill ``p`` (the prediction), then update the N bettors.

    ``coin_sums`` (N,) are the coin sums ``G̃_i``; ``wealth`` (N,) the wealths ``W_i``. The coin of
    copy i is ``c_i = Σ_j p_j d_j − d_i`` with ``d = l' − min l'`` (= ``g_i − ⟨g, p⟩`` for rewards
    ``g = 1 − l'``), clipped at 0 from below when its bet ``w_i ≤ 0``.
    """
    n_act = prior.shape[0]
    _kt_predict(coin_sums, wealth, prior, t, delta, p, bets)
    m = np.inf
    for i in range(n_act):
        if losses[i] < m:
            m = losses[i]
    h = 0.0
    for i in range(n_act):
        h += p[i] * ((losses[i] - m) / scale)
    for i in range(n_act):
        c = h - (losses[i] - m) / scale
        if bets[i] <= 0.0 and c < 0.0:
            c = 0.0
        wealth[i] += c * bets[i]
        g = coin_sums[i] + c
        coin_sums[i] = 0.0 if abs(g) <= COIN_TIE * t else g


@njit(cache=True, nogil=True)
def _kt_predict(coin_sums, wealth, prior, t, delta, p, bets):
    """``bets_i = w_{t,i}``; ``p ∝ π_i [w_{t,i}]_+``, or ``p = π`` when every bet is ≤ 0."""
    n_act = prior.shape[0]
    s = 0.0
    for i in range(n_act):
        bets[i] = kt_bet(coin_sums[i], wealth[i], t, delta)
        v = prior[i] * bets[i] if bets[i] > 0.0 else 0.0
        p[i] = v
        s += v
    if s > 0.0:
        for i in range(n_act):
            p[i] /= s
    else:
        for i in range(n_act):
            p[i] = prior[i]


@njit(cache=True, nogil=True)
def _kt_predict_all(coin_sums, wealth, prior, t, delta, probs):
    n_rep, n_act = coin_sums.shape
    bets = np.empty(n_act)
    for r in range(n_rep):
        _kt_predict(coin_sums[r], wealth[r], prior, t, delta, probs[r], bets)


@njit(cache=True, nogil=True)
def _kt_update_all(losses, coin_sums, wealth, prior, t, delta, scale):
    n_rep, n_act = losses.shape
    bets = np.empty(n_act)
    p = np.empty(n_act)
    for r in range(n_rep):
        _kt_round(coin_sums[r], wealth[r], prior, t, delta, losses[r], scale, p, bets)


@njit(cache=True, nogil=True)
def _kt_play_block(losses, coin_sums, wealth, prior, rounds_done, delta, scale, probs):
    """Play a chunk (R, n, N): ``probs[r, j] = p_t`` at ``t = rounds_done + j + 1``."""
    n_rep, n, n_act = losses.shape
    bets = np.empty(n_act)
    for r in range(n_rep):
        for j in range(n):
            _kt_round(
                coin_sums[r],
                wealth[r],
                prior,
                rounds_done + j + 1,
                delta,
                losses[r, j],
                scale,
                probs[r, j],
                bets,
            )


class KTExperts(ExpertsPlayer):
    """KT-LEA: one Krichevsky–Trofimov coin bettor per expert, weights ∝ prior × positive bet.

    Parameter-free: no learning rate. Losses are mapped to [0, 1] with the declared range
    (``l' = (l − lo)/(hi − lo)``, rewards ``g = 1 − l'``); the bounds scale by ``hi − lo``.

    Parameters
    ----------
    prior : list of float or None
        Prior π over the experts (length N, entries > 0, summing to 1 within 1e-9; it is then
        renormalized). None: uniform.
    delta : "half_horizon" or float
        Shift δ ≥ 0 of the KT potential. ``"half_horizon"`` (default, needs the horizon T) is the
        paper's δ = T/2 (Algorithm 2); a number (e.g. 0) gives an anytime player with a
        ``ln t``-worse bound.

    Notes
    -----
    Algorithm 2 of Orabona & Pál (2016), with ``G̃_i = 0`` and wealth
    ``W_i = 1`` at the start; at round t:

    * bet ``w_{t,i} = G̃_i/(t + δ) · W_i`` (:func:`kt_bet`);
    * ``p̂_i = π_i [w_{t,i}]_+`` and ``p_t = p̂/‖p̂‖_1``, or ``p_t = π`` if ``‖p̂‖_1 = 0``;
    * coin ``g̃_{t,i} = g_{t,i} − ⟨g_t, p_t⟩ = p_t·l'_t − l'_{t,i}``, replaced by ``[·]_+`` when
      ``w_{t,i} ≤ 0``;
    * ``W_i += g̃_{t,i} w_{t,i}`` and ``G̃_i += g̃_{t,i}``.

    Two numerical conventions: the coin is computed as ``Σ_j p_j d_j − d_i`` with
    ``d = l' − min_j l'_j`` (equal to the paper's ``g_i − ⟨g, p⟩`` when ``Σ p = 1``, and exactly 0
    in a round where all losses are equal, where ``1 − Σ p`` would leave ±1 ulp); and a coin sum
    within ``1e-12·t`` of 0 is set to exactly 0 (:data:`COIN_TIE`). The second is a tie rule like
    FTL's: ``p`` jumps when the only positive bet is tiny (all the mass goes to it, versus ``π``
    when every bet is ≤ 0), so rounding must not decide the sign of a coin sum that is 0 in exact
    arithmetic, as happens constantly with {0, 1} losses. Both change the state by ~1e-12 at
    most, far inside the 1e-9 tolerance of the bounds.

    Each copy is the δ-shifted KT bettor, whose wealth is at least the potential
    ``F_t(G̃_i)`` (:func:`kt_log_potential`, ε = 1; equality on ±1 coins), and
    ``Σ_i π_i g̃_{t,i} w_{t,i} ≤ 0`` every round, so ``Σ_i π_i F_t(G̃_{t,i}) ≤ 1`` and
    ``Σ_i π_i W_i ≤ 1`` (each wealth is at most ``1/π_i``: nothing overflows).

    Guarantee (Orabona & Pál 2016, Thm "Regret Bound for Experts" and the proof of Cor. "Regret
    Bound for Algorithm 2"), for rewards in [0, 1] (adaptive adversaries included), every t ≥ 1
    and every ``u ∈ Δ_N``: ``Regret_t(u) ≤ h_t^{−1}(KL(u‖π))`` with

        ``h_t^{−1}(c) = sqrt(2(t+δ)(c + ln(e√π) + ½ ln((t+δ)/(1+δ))))``.

    With δ = T/2 this is increasing in t and at t = T at most ``sqrt(3T(3 + KL(u‖π)))`` (the
    corollary for Algorithm 2), so the player declares, at every checkpoint t:

    * δ = T/2: ``bound:regret = sqrt(3T(3 + max_i ln(1/π_i)))`` (point masses ``u = e_i``;
      ``sqrt(3T(3 + ln N))`` for the uniform prior) and ``bound:quantile_regret`` at ε ∈
      (0.01, 0.1, 0.25) with ``KL = −ln k + (1/k)·(sum of the k largest ln(1/π_i))``,
      ``k = ⌈εN⌉`` (u uniform on the k experts of largest regret; ``ln(N/k)`` when uniform);
    * a numeric δ: the same with ``h_t^{−1}(·)`` evaluated at t.

    Examples
    --------
    >>> from arena import play
    >>> df = play(KTExperts(), "ftl_killer", n_actions=2, horizon=200,
    ...           metrics={"regret": {}, "bound": {}})
    >>> last = df[df.t == 200].set_index("metric").value
    >>> round(float(last["bound:regret"]), 6) == round(math.sqrt(3 * 200 * (3 + math.log(2))), 6)
    True
    >>> bool(last["regret"] <= last["bound:regret"])
    True

    References
    ----------
    Orabona & Pál (2016), "Coin Betting and Parameter-Free Online Learning", NIPS: Algorithm 2,
    Theorem "Regret Bound for Experts", Corollary "Regret Bound for Algorithm 2", Theorem "KT
    potential" (sources ``DavidPal/coin-betting-and-online-learning``,
    ``NIPS-2016-camera-ready/kt-estimator.tex``, ``reduction-experts.tex``,
    ``appendix-kt-potential.tex``; the corollary's proof in
    ``NIPS-2016-submission/appendix-kt-reductions.tex``).
    """

    tags = PlayerTags(protocols=frozenset({"experts"}), block_kernel=True)
    parameter_constraints: ClassVar = {
        "prior": [ListOf(POSITIVE), IsNone()],
        "delta": [NON_NEGATIVE, OneOf("half_horizon")],
    }

    def __init__(self, prior: Sequence[float] | None = None, delta: float | str = "half_horizon"):
        self.prior = prior
        self.delta = delta

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        who = self.label()
        n_act, horizon = spec.n_actions, spec.horizon
        # a probability vector: its sum is a fact about the whole list, which no per-item
        # declaration states (the other players' priors are normalized silently)
        if self.prior is not None and abs(math.fsum(self.prior) - 1.0) > 1e-9:
            raise ConfigError(who, "prior", f"must sum to 1, sums to {math.fsum(self.prior)!r}")
        prior = expert_prior(self, "prior", n_act)
        if self.delta == "half_horizon":
            if horizon is None:
                raise ConfigError(who, "delta", "'half_horizon' needs the horizon; use 0")
            delta, self._half = horizon / 2.0, True
        else:
            delta, self._half = float(self.delta), False
        self._prior, self._delta, self._horizon = prior, delta, horizon
        self._scale = spec.loss_scale
        self._coin_sums = np.zeros((spec.n_replicates, n_act))
        self._wealth = np.ones((spec.n_replicates, n_act))
        self._rounds = 0
        # KL(u‖π) for the declared comparators: point masses, and u uniform on k experts
        neg_log = np.sort(-np.log(prior))[::-1]
        self._kl_point = float(neg_log[0])
        self._kl_quantile = {
            eps: float(neg_log[:k].mean() - math.log(k))
            for eps in QUANTILE_EPS
            for k in [exact_quantile_rank(eps, n_act)]
        }

    def wealth(self) -> np.ndarray:
        """Return the wealth ``W_i = 1 + Σ_s g̃_{s,i} w_{s,i}`` of every copy, shape (R, N)."""
        return self._wealth.copy()

    def coin_sums(self) -> np.ndarray:
        """Return the coin sums ``G̃_i = Σ_s g̃_{s,i}`` of every copy, shape (R, N)."""
        return self._coin_sums.copy()

    def shift(self) -> float:
        """Return the δ in use (T/2 for ``"half_horizon"``)."""
        return self._delta

    def predict(self, confidences: np.ndarray | None = None) -> np.ndarray:
        probs = np.empty_like(self._wealth)
        _kt_predict_all(
            self._coin_sums, self._wealth, self._prior, self._rounds + 1, self._delta, probs
        )
        return probs

    def update(self, losses: np.ndarray, actions: np.ndarray | None = None) -> None:
        _kt_update_all(
            np.ascontiguousarray(losses, dtype=np.float64),
            self._coin_sums,
            self._wealth,
            self._prior,
            self._rounds + 1,
            self._delta,
            self._scale,
        )
        self._rounds += 1

    def play_block(
        self,
        losses: np.ndarray,
        confidences: np.ndarray | None = None,
        uniforms: np.ndarray | None = None,
    ) -> np.ndarray:
        losses, confidences, uniforms = kernel_views(losses, confidences, uniforms)
        probs = np.empty_like(losses)
        _kt_play_block(
            losses,
            self._coin_sums,
            self._wealth,
            self._prior,
            self._rounds,
            self._delta,
            self._scale,
            probs,
        )
        self._rounds += losses.shape[1]
        return probs

    def comparator_bound(self, kl: float, t: int) -> float:
        """Return the declared bound on ``Regret_t(u)`` for a comparator with ``KL(u‖π) = kl``."""
        if self._half:
            horizon = self._horizon
            return self._scale * math.sqrt(3.0 * horizon * (3.0 + kl))
        s = t + self._delta
        log_ratio = math.log(s / (1.0 + self._delta))
        return self._scale * math.sqrt(2.0 * s * (kl + LOG_E_SQRT_PI + 0.5 * log_ratio))

    def bounds(self, t: int) -> dict[tuple[str, float], float]:
        """Declare the bounds of the Notes on the regret and the ε-quantile regret."""
        out = {("regret", math.nan): self.comparator_bound(self._kl_point, t)}
        for eps, kl in self._kl_quantile.items():
            out[("quantile_regret", eps)] = self.comparator_bound(kl, t)
        return out

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"delta": 0.0}
        yield {"prior": [0.5, 0.25, 0.25], "delta": 3.0}
