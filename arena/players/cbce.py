"""CBCE: Coin Betting for Changing Environments, a KT sleeping-experts meta-learner over
base-learner copies on the geometric covering, for strongly adaptive regret."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from arena.experts.components import ExpertsPlayer
from arena.players.flh import BASE_CONSTRAINTS, CopyMixture

ZETA2 = math.pi**2 / 6.0


def log_prior(start: int) -> float:
    """Return ``ln(1 / (a² (1 + ⌊log₂ a⌋)))``, the unnormalized log-prior of an interval starting
    at ``a`` (Jun et al. 2017). Every interval of the covering starting at a gets it; there are
    ``ν₂(a) + 1 ≤ 1 + ⌊log₂ a⌋`` of them, so the normalizer is at most ``Σ_a a⁻² = π²/6``.

    Examples
    --------
    >>> round(math.exp(-log_prior(4)), 6)
    48.0
    """
    return -(2.0 * math.log(start) + math.log(start.bit_length()))


def multiplicity(start: int, t: int) -> int:
    """Return how many covering intervals ``[a, a + 2^k − 1]`` (``k ≤ ν₂(a)``) contain round t.

    Examples
    --------
    >>> [multiplicity(4, t) for t in (4, 5, 6, 7)]
    [3, 2, 1, 1]
    """
    top = (start & -start).bit_length() - 1
    need = (t - start).bit_length()  # ⌈log₂(t − a + 1)⌉: the shortest level reaching t
    return max(0, top - need + 1)


def kt_log_potential(n: int, x: float) -> float:
    """Return ``ln F_n(x)``, the KT potential of Orabona & Pál (2016) with initial wealth 1:
    ``F_n(x) = 2^n Γ((n+1)/2 + x/2) Γ((n+1)/2 − x/2) / (π n!)`` for ``|x| < n + 1``.

    Examples
    --------
    >>> round(math.exp(kt_log_potential(1, 1.0)), 12)  # one coin bet at β = 0: wealth 1
    1.0
    """
    a = (n + 1) / 2.0
    return (
        n * math.log(2.0)
        + math.lgamma(a + x / 2.0)
        + math.lgamma(a - x / 2.0)
        - math.log(math.pi)
        - math.lgamma(n + 1.0)
    )


class CBCE(CopyMixture):
    """Coin Betting for Changing Environments: sleeping KT coin betting over geometric copies.

    One copy of the base experts player (``base``) runs on each interval of the geometric
    covering; the copies are the sleeping experts of a KT coin-betting meta-learner whose prior
    decays with the interval's start.

    Parameters
    ----------
    base : str or ExpertsPlayer
        The base learner: a registered experts player's name or an instance (cloned).
    base_params : mapping, optional
        Parameters of the base learner (``player=cbce player.base=hedge
        '+player.base_params={eta:anytime}'``).

    Notes
    -----
    **Covering.** Intervals ``J = [a, a + 2^k − 1]``, ``a = m 2^k``, m ≥ 1 (Daniely, Gonen &
    Shalev-Shwartz 2015). Intervals with the same start run the same black box on the same
    losses, so one copy per start serves them all (it lives ``2^{ν₂(a)}`` rounds,
    :func:`~arena.players.flh.lifetime`); ``mult_t(a)`` (:func:`multiplicity`) of them are awake at
    t.

    **Meta-learner** (Jun, Orabona, Wright & Willett 2017, Algorithm "Sleeping CB" and CBCE): the
    reduction of learning with expert advice to KT coin betting of Orabona & Pál (2016,
    "From coin betting to LEA", Algorithm 2 with δ = 0), with sleeping experts. Each interval J
    keeps its own KT bettor over its awake rounds: after n awake rounds with coins
    ``g̃_{1..n}``, ``Wealth = 1 + Σ g̃_s w_s`` and the bet is
    ``w = β Wealth``, ``β = (Σ_s g̃_s)/(n + 1)`` (the KT fraction at the bettor's own round
    n + 1). With the prior ``π_J ∝ 1/(a² (1 + ⌊log₂ a⌋))`` (:func:`log_prior`),

    * ``p̂_J = π_J [w_J]_+`` for the awake J; the copies' weights are
      ``v_a ∝ mult_t(a) π(a) [w_a]_+``, or ``∝ mult_t(a) π(a)`` (the prior on the awake
      intervals) when every ``[w]_+`` is 0;
    * play ``p_t = Σ_a v_a q_{t,a}``; then with ``r_{t,a} = ĥ_t − h_{t,a}`` (unit-range losses,
      evaluated as ``Σ_b v_b (h_{t,b} − h_{t,a})``, exactly 0 when the copies agree) the coin
      is ``g̃ = r`` if ``w > 0`` and ``g̃ = [r]_+`` otherwise.

    A newborn bets ``w = 0``, so round 1 plays the prior.

    **Guarantee** (the proof of Orabona & Pál 2016, Theorem 3, with sleeping experts, as in
    Jun et al. 2017; constants derived here). Each round ``Σ_{J awake} π_J g̃_J w_J ≤ 0``, so
    ``Σ_J π_J Wealth_J ≤ 1`` and ``Wealth_J ≤ 1/π_J``; the KT bettor has
    ``Wealth ≥ F_n(Σ g̃)`` (:func:`kt_log_potential`, Orabona & Pál 2016, Theorem "KT
    potential"), ``Σ r ≤ Σ g̃``, and ``ln F_n(x) ≥ ln F_n(0) + x²/(2(n+1))`` (the McLaurin
    coefficients of ``ln Γ(a + y) + ln Γ(a − y)`` are non-negative and ``ψ'(a) ≥ 1/a``). Hence
    on every prefix of n rounds of an interval J starting at a,
    ``Σ r_{t,J} ≤ sqrt(2 (n + 1) (ln(1/π_J) − ln F_n(0)))`` with
    ``ln(1/π_J) ≤ ln(π²/6) + ln(a² (1 + ⌊log₂ a⌋))``; ``−ln F_n(0)`` grows with n (property
    (c) of the potential at g = 0). Every interval ``[s, e] ⊆ [1, t]`` is cut by
    :func:`~arena.players.ada_normal_hedge_tv.cover_partition` into ``m ≤ m_t = ⌊log₂ t⌋ + 1``
    prefixes of covering intervals of distinct levels; Cauchy-Schwarz over them gives, in units
    of ``hi − lo``, with ``D_t = ln(π²/6) + ln(t² (1 + ⌊log₂ t⌋)) − ln F_t(0)``,

    ``regret on [s, e] ≤ sqrt(2 m_t (e − s + 1 + m_t) D_t) + Σ_k max_{a: ν₂(a) = k} M_a``

    with ``M_a`` the running maximum of the regret bound copy a declares
    (:meth:`~arena.players.flh.CopyMixture.base_bound_terms`). Declared as ``bound:adaptive_regret``
    (and ``bound:regret``) with ``e − s + 1 = t`` when the base declares a regret bound;
    ``O(sqrt(|I| log t)) + Σ base`` per interval, the strongly adaptive rate of Jun et al.
    (2017) (their Theorem 2 states it as ``O(sqrt(|I| log T))`` plus the black box's regret).

    Examples
    --------
    >>> from arena import play
    >>> df = play(CBCE("hedge", {"eta": "anytime"}), "shifting_experts", n_actions=3,
    ...           horizon=200, metrics={"adaptive_regret": {}, "bound": {}})
    >>> last = df[df.t == 200].set_index("metric").value
    >>> bool(last["adaptive_regret"] <= last["bound:adaptive_regret"])
    True

    References
    ----------
    Jun, Orabona, Wright & Willett (2017), "Improved strongly adaptive online learning using
    coin betting", AISTATS (Sleeping CB, CBCE, the prior and the strongly adaptive bound).
    Orabona & Pál (2016), "Coin betting and parameter-free online learning", NIPS (the KT
    potential, its betting fraction and the LEA reduction).
    Daniely, Gonen & Shalev-Shwartz (2015), "Strongly adaptive online learning", ICML (the
    geometric covering).
    """

    parameter_constraints: ClassVar = dict(BASE_CONSTRAINTS)

    def __init__(
        self,
        base: str | ExpertsPlayer = "hedge",
        base_params: Mapping[str, Any] | None = None,
    ):
        self.base = base
        self.base_params = base_params

    starts = "geometric"

    def _meta_start(self) -> None:
        self._sum_g = np.zeros((self._n_rep, 1))
        self._wealth = np.ones((self._n_rep, 1))
        self._awake = [0]  # rounds each copy has played (the same in every replicate)

    def bets(self) -> np.ndarray:
        """Return the KT bets ``w = β Wealth`` of the live copies, shape (R, M)."""
        n = np.array(self._awake, dtype=np.float64)
        return self._sum_g / (n + 1.0) * self._wealth

    def _meta_weights(self) -> np.ndarray:
        t = self._t + 1
        starts = [c.start for c in self._copies]
        prior = np.array(
            [multiplicity(a, t) * math.exp(log_prior(a) - log_prior(starts[0])) for a in starts]
        )
        hat = prior[None, :] * np.maximum(self.bets(), 0.0)
        total = hat.sum(axis=1, keepdims=True)
        fallback = np.broadcast_to(prior / prior.sum(), hat.shape)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(total > 0.0, hat / np.where(total > 0, total, 1.0), fallback)

    def _meta_update(self, h: np.ndarray, mix: np.ndarray) -> None:
        w = self.bets()
        v = self._meta_weights()
        # r_{t,a} = ĥ_t − h_{t,a} = Σ_b v_b (h_b − h_a): exactly 0 when the copies agree (Σ v_b
        # is 1 only up to rounding, and a spurious ±1e-17 would flip the sign test on w)
        r = np.einsum("rb,rba->ra", v, h[:, :, None] - h[:, None, :])
        g = np.where(w > 0.0, r, np.maximum(r, 0.0))
        self._wealth = self._wealth + g * w
        self._sum_g = self._sum_g + g
        self._awake = [n + 1 for n in self._awake]

    def _meta_remove(self, dead: list[int]) -> None:
        keep = np.ones(self._sum_g.shape[1], dtype=bool)
        keep[dead] = False
        self._sum_g, self._wealth = self._sum_g[:, keep], self._wealth[:, keep]
        self._awake = [n for j, n in enumerate(self._awake) if keep[j]]

    def _meta_birth(self, t: int) -> None:
        self._sum_g = np.concatenate([self._sum_g, np.zeros((self._n_rep, 1))], axis=1)
        self._wealth = np.concatenate([self._wealth, np.ones((self._n_rep, 1))], axis=1)
        self._awake.append(0)

    def wealth(self) -> np.ndarray:
        """Return the live copies' KT wealth ``1 + Σ g̃ w``, shape (R, M)."""
        return self._wealth.copy()

    @staticmethod
    def meta_bound(t: int) -> float:
        """Return ``sqrt(2 m_t (t + m_t) D_t)``, the declared bound's meta part (unit range)."""
        if t == 0:
            return 0.0
        m = t.bit_length()
        d = math.log(ZETA2) - log_prior(t) - kt_log_potential(t, 0.0)
        return math.sqrt(2.0 * m * (t + m) * d)

    def bounds(self, t: int) -> dict[tuple[str, float], np.ndarray]:
        """Declare the adaptive-regret bound of the Notes (none if the base declares none)."""
        if not self._base_bounds:
            return {}
        _, by_level = self.base_bound_terms()
        value = self._scale * self.meta_bound(self._t) + by_level
        return {("regret", math.nan): value, ("adaptive_regret", math.nan): value}

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"base": "ada_hedge"}
        yield {"base_params": {"eta": "anytime"}}
