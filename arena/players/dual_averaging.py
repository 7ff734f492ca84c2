"""Dual averaging (lazy projected OGD): the projection of the scaled negative gradient sum."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from arena.errors import ConfigError
from arena.oco.components import OCO_PROTOCOLS, OCOPlayer, game_dim, game_domain
from arena.oco.losses import Feedback
from arena.params import POSITIVE, IsNone, OneOf
from arena.spec import GameSpec, PlayerTags

SCHEDULES = ("fixed", "sqrt")


class DualAveraging(OCOPlayer):
    """Lazy projected OGD / dual averaging: ``w_t = Π_K(−(1/c_t) Σ_{s<t} g_s)``.

    The primal-dual framework of Shalev-Shwartz 2007 (Figure 3.1 for a fixed ``c``, Figure 3.2
    for a schedule ``c_t``) with ``f = ½‖w‖²`` on the domain K (whose link is the Euclidean
    projection, Example 1) and the conservative rule: the dual variables are the
    arena's subgradients ``g_s`` at ``w_s``. ``w_1 = Π_K(0)``.

    Parameters
    ----------
    schedule : {"sqrt", "fixed"}
        ``c_t = c√t`` (Figure 3.2, non-decreasing) or ``c_t = c`` (Figure 3.1).
    c : float or None
        The trade-off ``c > 0``. None tunes it from ``M = max_{u∈K} ‖u‖₂`` (the
        comparator radius: ``f(u) ≤ U = M²/2``) and ``G = spec.gradient_bound``
        (``L = G²/2``): ``c = G√T/M`` (fixed; Cor 1's ``√(TL/U)``, needs the horizon) or
        ``c_t = (G/M)√t`` (sqrt; Cor 2's ``√(tL/U)``). Both need a bounded domain and ``G > 0``.

    Notes
    -----
    Guarantee (Shalev-Shwartz 2007, Lemma 2; Lemma 1 for a fixed c): for every u in K and every
    sequence of convex losses, ``R_T(u) ≤ c_T ‖u‖²/2 + ½ Σ_t ‖g_t‖²/c_t``. ``bounds`` declares it
    with ``‖u‖ ≤ M`` and the run's gradients. With ``‖g_t‖ ≤ G`` and the tuned c this is ``≤ GM√T``
    (fixed, Cor 1: ``2√(LUT)``) and ``≤ (3/2)GM√T`` (sqrt: ``GM√T/2 + (GM/2)(2√T − 1)``; Cor 2
    states the looser ``4√(LUT) = 2GM√T``). Note M is the radius of the comparator set, not its
    diameter. No bound is declared on an unbounded domain.

    The lazy update differs from greedy projected OGD (:class:`~arena.players.ogd.OGD`) on bounded
    domains; on ℝ^d with a fixed c both are ``w_{t+1} = w_t − g_t/c``. It is
    :class:`~arena.players.ftrl.FTRL` with the ``"l2"`` regularizer and ``η_t = 1/c_t``.

    Examples
    --------
    >>> from arena.oco.domains import Domain
    >>> from arena.oco.losses import RoundData, feedback
    >>> spec = GameSpec("oco", 2, 10, dim=2, domain=Domain("box", 1.0), loss="linear")
    >>> p = DualAveraging(schedule="fixed", c=2.0)
    >>> p.reset(spec, [np.random.default_rng(0)])
    >>> p.update(feedback("linear", 0.0, p.predict(), RoundData(g=np.array([[4.0, -1.0]]))))
    >>> p.predict().tolist()
    [[-1.0, 0.5]]

    References
    ----------
    Shalev-Shwartz 2007: Figure 3.1 (§3.3), Figure 3.2, Lemma 2 and Corollary 2 (§3.5),
    Corollary 1 (§3.4), Example 1 (§4.2), the remark that Zinkevich's algorithms are instances
    (§3.7).
    """

    tags = PlayerTags(protocols=OCO_PROTOCOLS, randomized=False)
    parameter_constraints: ClassVar = {"schedule": [OneOf(*SCHEDULES)], "c": [POSITIVE, IsNone()]}

    def __init__(self, schedule: str = "sqrt", c: float | None = None):
        self.schedule = schedule
        self.c = c

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        who = self.label()
        dim = game_dim(spec)
        domain = game_domain(spec)
        c = None if self.c is None else float(self.c)
        radius = domain.max_norm(dim)
        if c is None:
            G = spec.gradient_bound
            if not math.isfinite(radius) or G is None or not G > 0:
                raise ConfigError(
                    who, "c", "null (tuned) needs a bounded domain and spec.gradient_bound > 0"
                )
            if self.schedule == "fixed":
                if spec.horizon is None:
                    raise ConfigError(who, "c", "null with schedule 'fixed' needs the horizon")
                c = G * math.sqrt(spec.horizon) / radius
            else:
                c = G / radius
        self._c = c
        self._sqrt = self.schedule == "sqrt"
        self._radius = radius
        self._domain = domain
        n_rep = spec.n_replicates
        self._sum = np.zeros((n_rep, dim))
        self._acc = np.zeros(n_rep)
        self._rounds = 0

    def tradeoff(self, t: int) -> float:
        """Return ``c_t``, the trade-off that plays ``w_t``."""
        return self._c * math.sqrt(t) if self._sqrt else self._c

    def predict(self, x: np.ndarray | None = None) -> np.ndarray:
        return self._domain.project(-self._sum / self.tradeoff(self._rounds + 1))

    def update(self, fb: Feedback) -> None:
        t = self._rounds + 1
        g = np.asarray(fb.grad, dtype=np.float64)
        self._acc += np.einsum("ri,ri->r", g, g) / self.tradeoff(t)
        self._sum += g
        self._rounds = t

    def bounds(self, t: int) -> dict[tuple[str, float], np.ndarray]:
        """Declare ``c_t M²/2 + ½ Σ_s ‖g_s‖²/c_s`` (Shalev-Shwartz 2007, Lemma 2) if bounded."""
        if not math.isfinite(self._radius):
            return {}
        return {("regret", math.nan): self.regret_bound(t)}

    def regret_bound(self, t: int) -> np.ndarray:
        """Return ``c_t M²/2 + ½ Σ_{s≤t} ‖g_s‖²/c_s``, shape (R,)."""
        if t == 0:
            return 0.5 * self._acc
        return 0.5 * self.tradeoff(t) * self._radius**2 + 0.5 * self._acc

    @classmethod
    def _unit_test_params(cls):
        yield {"c": 2.0}
        yield {"schedule": "fixed", "c": 5.0}
