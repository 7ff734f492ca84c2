"""KT coin betting for online linear optimization (Orabona & Pál 2016): parameter-free OCO."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from arena.errors import ConfigError
from arena.oco.components import OCO_PROTOCOLS, OCOPlayer
from arena.oco.losses import Feedback
from arena.params import POSITIVE, IsNone, OneOf
from arena.spec import GameSpec, PlayerTags

VARIANTS = ("1d", "ball")


def kt_olo_regret_bound(u_norm, t: int, eps: float = 1.0):
    """Return ``‖u‖ √(t ln(1 + 24 t² ‖u‖²/ε²)) + ε (1 − 1/(e √(π t)))`` (rewards ``‖c_s‖ ≤ 1``).

    Orabona & Pál (2016), Corollary "Regret Bound for Algorithm 1" (KT OLO in a Hilbert space,
    initial endowment ε). ``u_norm`` may be an array; ``t ≥ 1``.

    Examples
    --------
    >>> round(float(kt_olo_regret_bound(0.0, 100)), 6)  # against u = 0: at most ε
    0.979245
    """
    u = np.abs(np.asarray(u_norm, dtype=np.float64))
    log_term = np.log1p(24.0 * t * t * u * u / (eps * eps))
    return u * np.sqrt(t * log_term) + eps * (1.0 - 1.0 / (math.e * math.sqrt(math.pi * t)))


class KT(OCOPlayer):
    """Krichevsky–Trofimov coin betting for unconstrained online linear optimization.

    The player bets on the "coins" ``c_t = −g_t/G`` (``G`` = the game's declared
    ``gradient_bound``, so that ``‖c_t‖₂ ≤ 1``), starting from wealth ``ε``:

    * ``variant="ball"`` (Hilbert-space KT OLO, Orabona & Pál 2016, Algorithm 1):
      ``w_t = β_t·Wealth_{t−1}·Σ_{s<t} c_s/‖Σ_{s<t} c_s‖`` with ``β_t = ‖Σ_{s<t} c_s‖/t``, i.e.
      ``w_t = (1/t)(ε + Σ_{s<t} ⟨c_s, w_s⟩) Σ_{s<t} c_s``;
    * ``variant="1d"``: one independent 1-d KT bettor per coordinate, each with its own wealth
      ``ε``: ``w_{t,i} = (1/t)(ε + Σ_{s<t} c_{s,i} w_{s,i}) Σ_{s<t} c_{s,i}`` (for ``d = 1`` both
      variants are the same 1-d algorithm, the KT bettor ``w_t = β_t Wealth_{t−1}``,
      ``β_t = Σ_{s<t} c_s / t``).

    ``Wealth_t = ε + Σ_{s≤t} ⟨c_s, w_s⟩ = ε − (1/G) Σ_{s≤t} ⟨g_s, w_s⟩`` (per coordinate for
    ``"1d"``). No learning rate and no comparator scale are tuned: the player is parameter-free.

    Parameters
    ----------
    variant : {"ball", "1d"}
        Hilbert-space (vector) bettor or coordinate-wise 1-d bettors.
    initial_wealth : float
        The endowment ``ε > 0`` (of each coordinate's bettor for ``"1d"``).
    gradient_bound : float or None
        The scale ``G`` of the coins ``c_t = −g_t/G``. None (default): the game's declared
        ``spec.gradient_bound`` (required then). A number is the user's assertion that
        ``‖g_t‖₂ ≤ G``; if a gradient exceeds it, the coin leaves the unit ball and the guarantee
        (and the positivity of the wealth) is void.

    Notes
    -----
    Guarantee (Orabona & Pál 2016, Corollary for Algorithm 1): for
    every sequence with ``‖g_t‖₂ ≤ G`` (adaptive adversaries included), every ``u ∈ ℝ^d`` and
    every ``T ≥ 1``, the linearized regret ``Σ_t ⟨g_t, w_t − u⟩`` (hence the regret of any convex
    losses with these subgradients) is at most

    * ``"ball"``: ``G·[‖u‖ √(T ln(1 + 24T²‖u‖²/ε²)) + ε(1 − 1/(e√(πT)))]``;
    * ``"1d"``: ``G·Σ_i [|u_i| √(T ln(1 + 24T²u_i²/ε²)) + ε(1 − 1/(e√(πT)))]`` (each coordinate
      is a 1-d instance with coins ``|c_{t,i}| ≤ ‖c_t‖ ≤ 1``; the bounds add up).

    The rewards of the paper are the coins ``c_t = −g_t/G``; the regret scales by ``G``.
    :meth:`regret_bound` evaluates these bounds. They depend on the comparator, which the player
    never sees, so :meth:`bounds` declares nothing (the ``comparator_regret`` metric's
    comparator ``c·u*`` is the adversary's; a report can evaluate :meth:`regret_bound` at
    ``‖c·u*‖`` itself). On ±1 coins (``d = 1``) the wealth equals the KT potential
    ``F_T(Σ c) = ε 2^T Γ((T+1)/2 + x/2) Γ((T+1)/2 − x/2)/(π T!)`` exactly, and
    ``Wealth_T ≥ F_T(‖Σ c‖)`` in general (Orabona & Pál 2016, the KT potential).

    Requires the unconstrained domain and a gradient bound (the game's or the player's). The
    state is O(d) per replicate and a round costs O(d).

    Examples
    --------
    >>> from arena.oco.domains import Domain
    >>> from arena.oco.losses import RoundData, feedback
    >>> spec = GameSpec("oco", 1, 3, dim=1, domain=Domain("unconstrained"), loss="linear",
    ...                 gradient_bound=1.0)
    >>> p = KT()
    >>> p.reset(spec, [np.random.default_rng(0)])
    >>> for _ in range(3):
    ...     w = p.predict()
    ...     p.update(feedback("linear", 0.0, w, RoundData(g=np.array([[-1.0]]))))
    >>> p.predict().tolist(), p.wealth().tolist()  # three +1 coins: bets 0, 1/2, 1
    ([[1.875]], [2.5])

    References
    ----------
    Orabona & Pál (2016), "Coin Betting and Parameter-Free Online Learning", NIPS, §5.1,
    Algorithm 1 and its corollary (source ``NIPS-2016-camera-ready/kt-estimator.tex`` of
    DavidPal/coin-betting-and-online-learning).
    """

    tags = PlayerTags(
        protocols=OCO_PROTOCOLS, randomized=False, domains=frozenset({"unconstrained"})
    )
    parameter_constraints: ClassVar = {
        "variant": [OneOf(*VARIANTS)],
        "initial_wealth": [POSITIVE],
        "gradient_bound": [POSITIVE, IsNone()],
    }

    def __init__(
        self,
        variant: str = "ball",
        initial_wealth: float = 1.0,
        gradient_bound: float | None = None,
    ):
        self.variant = variant
        self.initial_wealth = initial_wealth
        self.gradient_bound = gradient_bound

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        who = self.label()
        eps = float(self.initial_wealth)
        if spec.domain is not None and spec.domain.kind != "unconstrained":
            raise ConfigError(
                who, "domain", f"KT is unconstrained-only, got domain {spec.domain.kind!r}"
            )
        grad_bound = spec.gradient_bound if self.gradient_bound is None else self.gradient_bound
        if grad_bound is None or not (math.isfinite(grad_bound) and grad_bound > 0):
            raise ConfigError(
                who,
                "gradient_bound",
                "KT needs a gradient bound G > 0 (its coins are −g_t/G, which must have norm ≤ 1): "
                f"declared by the game or given to the player, got {grad_bound!r}",
            )
        n_rep, dim = spec.n_replicates, int(spec.dim)
        self._eps = eps
        self._scale = float(grad_bound)
        self._dim = dim
        self._coin_sum = np.zeros((n_rep, dim))
        wealth_shape = (n_rep, dim) if self.variant == "1d" else (n_rep,)
        self._wealth = np.full(wealth_shape, eps)
        self._rounds = 0

    def predict(self, x: np.ndarray | None = None) -> np.ndarray:
        t = self._rounds + 1
        if self.variant == "1d":
            return self._coin_sum / t * self._wealth
        return self._coin_sum / t * self._wealth[:, None]

    def update(self, fb: Feedback) -> None:
        coins = -np.asarray(fb.grad, dtype=np.float64) / self._scale
        gain = coins * fb.w
        self._wealth += gain if self.variant == "1d" else gain.sum(axis=1)
        self._coin_sum += coins
        self._rounds += 1

    def wealth(self) -> np.ndarray:
        """Return ``Wealth_t`` after the rounds played: (R,) for ``"ball"``, (R, d) for ``"1d"``."""
        return self._wealth.copy()

    def coin_sum(self) -> np.ndarray:
        """Return ``Σ_{s≤t} c_s`` with ``c_s = −g_s/G``, shape (R, d)."""
        return self._coin_sum.copy()

    def regret_bound(self, u_norm, t: int) -> float:
        """Return the proven bound on the linearized regret against ``u`` after ``t ≥ 1`` rounds.

        ``u_norm`` is ``‖u‖₂`` for ``"ball"``; for ``"1d"`` it is the vector ``(|u_1|, …, |u_d|)``
        (a scalar is broadcast to every coordinate). See the Notes for the formula.
        """
        if self.variant == "ball":
            return self._scale * float(kt_olo_regret_bound(u_norm, t, self._eps))
        u = np.broadcast_to(np.abs(np.asarray(u_norm, dtype=np.float64)), (self._dim,))
        return self._scale * float(np.sum(kt_olo_regret_bound(u, t, self._eps)))

    @classmethod
    def _unit_test_params(cls):
        # The conformance partners declare no gradient bound; N(0, I_3) gradients stay below 10.
        yield {"gradient_bound": 10.0}
        yield {"variant": "1d", "gradient_bound": 10.0}
        yield {"initial_wealth": 0.25, "gradient_bound": 10.0}
