"""Follow the Regularized Leader on linearized losses, generic over a regularizer object."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from arena.errors import ConfigError
from arena.oco.components import OCO_PROTOCOLS, OCOPlayer, game_dim, game_domain
from arena.oco.losses import Feedback
from arena.params import POSITIVE, InstanceOf, Interval, IsNone, OneOf
from arena.players.regularizers import REGULARIZERS, Regularizer, make_regularizer
from arena.spec import GameSpec, PlayerTags

SCHEDULES = ("fixed", "sqrt")


class FTRL(OCOPlayer):
    """Linearized FTRL / dual averaging: ``w_t = argmin_{w∈K} ⟨Σ_{s<t} g_s, w⟩ + R(w)/η_t``.

    Equivalently ``w_t = ∇R*(−η_t Σ_{s<t} g_s)``, the regularizer's link (the primal-dual
    framework of Shalev-Shwartz 2007, Figures 3.1/3.2, with the conservative rule and
    ``c_t = 1/η_t``), with ``g_s`` the arena's subgradients at ``w_s``.

    Parameters
    ----------
    regularizer : {"l2", "entropic", "pnorm"} or Regularizer
        ``"l2"``: ``½‖w‖²`` on the game's domain (link: Euclidean projection; every domain);
        ``"entropic"``: relative entropy to uniform (link: softmax; simplex only); ``"pnorm"``:
        ``‖w‖_q²/(2(q−1))`` (p-norm link; unconstrained only). A
        :class:`~arena.players.regularizers.Regularizer` instance is used as given, moved onto the
        game's domain with ``on`` (programmatic use: instances are not JSON parameters). The
        class tags list every domain; ``reset`` raises ConfigError when the regularizer does not
        support the game's domain.
    schedule : {"sqrt", "fixed"}
        ``η_t = η/√t`` or ``η_t = η``.
    eta : float or None
        η. None tunes it from ``U = max_{u∈K} R(u)`` and ``L = G²/2`` with
        ``G = spec.gradient_bound`` (a bound on every dual norm used here, since ``‖·‖_∞`` and
        ``‖·‖_p`` with ``p ≥ 2`` are ≤ ``‖·‖₂``): ``η = √(U/(LT))`` (fixed, Shalev-Shwartz 2007,
        Cor 1, needs the horizon) or ``η = √(U/L)`` (sqrt, ``c_t = √(tL/U)`` of Cor 2); both
        need ``U < ∞`` and ``G > 0``.
    p : float or None
        Dual exponent ``p ≥ 2`` of ``"pnorm"``; None uses ``max(2, 2 ln d)`` (Gentile 2003's
        choice, not in Shalev-Shwartz 2007). Must be None otherwise.

    Notes
    -----
    Guarantee (Shalev-Shwartz 2007, Lemma 2; ``R ≥ 0`` and 1-strongly convex w.r.t. ``‖·‖``, η_t
    non-increasing): for every u in the domain and every sequence of convex losses,
    ``R_T(u) ≤ R(u)/η_T + ½ Σ_t η_t ‖g_t‖_*²``. ``bounds`` declares it with ``R(u) ≤ U`` and the
    run's dual norms; with ``‖g_t‖_* ≤ G`` and the tuned η it is ``≤ 2√(LUT) = G√(2UT)`` (fixed,
    Cor 1) and ``≤ 3√(LUT)`` (sqrt; Cor 2 states the looser ``4√(LUT)``). No bound
    is declared when ``U = ∞`` (unconstrained domain).

    Conventions (Srebro, Lecture 16): the lecture writes the averaged objective
    ``(1/t)⟨v_t, w⟩ + λ_t Ψ(w)`` with ``w_{t+1}`` using ``λ_t``; here ``η`` indexes the round that
    plays the point, ``w_t`` uses ``η_t`` and ``Σ_{s<t}`` (Shalev-Shwartz 2007's ``c_t``), so the
    lecture's ``1/(tλ_t)`` is our ``η_{t+1}``, and ``λ_t = λ/t`` is our fixed ``η = 1/λ`` for
    ``Ψ = ½‖w‖²`` but ``η = 1/(2λ)`` for the lecture's ``Ψ = ‖w‖²`` (slides "FTRL for Linear
    Problems" and "Follow the Regularized Linearized Leader"; beware the factor 2).
    With ``"l2"`` on ℝ^d and a fixed η this is fixed-step OGD; on a bounded domain it is the lazy
    projection, i.e. :class:`~arena.players.dual_averaging.DualAveraging` with ``c = 1/η``; with
    ``"entropic"`` it is :class:`~arena.players.eg.EG`.

    Examples
    --------
    >>> from arena.oco.domains import Domain
    >>> from arena.oco.losses import RoundData, feedback
    >>> spec = GameSpec("oco", 2, 10, dim=2, domain=Domain("simplex"), loss="linear")
    >>> p = FTRL(regularizer="entropic", schedule="fixed", eta=math.log(3.0))
    >>> p.reset(spec, [np.random.default_rng(0)])
    >>> p.update(feedback("linear", 0.0, p.predict(), RoundData(g=np.array([[1.0, 0.0]]))))
    >>> p.predict().round(3).tolist()
    [[0.25, 0.75]]

    References
    ----------
    Shalev-Shwartz 2007: Figure 3.1 and Corollary 1 (§3.3-3.4), Figure 3.2, Lemma 2 and
    Corollary 2 (§3.5); Srebro, Lecture 16, slides "FTRL for Linear Problems" and "Linearized
    FTRL" to "Normalized Exponentiated Gradient (EG)" (FTRL, linearized FTRL and its Ψ
    instances).
    """

    tags = PlayerTags(protocols=OCO_PROTOCOLS, randomized=False)
    parameter_constraints: ClassVar = {
        "regularizer": [OneOf(*REGULARIZERS), InstanceOf(Regularizer, "a Regularizer instance")],
        "schedule": [OneOf(*SCHEDULES)],
        "eta": [POSITIVE, IsNone()],
        "p": [Interval(2, None), IsNone()],
    }

    def __init__(
        self,
        regularizer: str | Regularizer = "l2",
        schedule: str = "sqrt",
        eta: float | None = None,
        p: float | None = None,
    ):
        self.regularizer = regularizer
        self.schedule = schedule
        self.eta = eta
        self.p = p

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        who = self.label()
        dim = game_dim(spec)
        domain = game_domain(spec)
        eta = None if self.eta is None else float(self.eta)
        try:  # the regularizer's own sets and p (the declaration checks names and values)
            if isinstance(self.regularizer, Regularizer):
                if self.p is not None:
                    raise ValueError("p is given by the Regularizer instance")
                reg = self.regularizer.on(domain)
            else:
                p = self.p
                if self.regularizer == "pnorm" and p is None:
                    p = max(2.0, 2.0 * math.log(dim))
                reg = make_regularizer(self.regularizer, domain, p)
        except ValueError as err:
            raise ConfigError(who, "regularizer", str(err)) from None
        U = float(reg.max_value(domain, dim))
        if eta is None:
            G = spec.gradient_bound
            if not math.isfinite(U) or G is None or not G > 0:
                raise ConfigError(
                    who, "eta", "null (tuned) needs a bounded domain and spec.gradient_bound > 0"
                )
            L = G * G / 2.0
            if self.schedule == "fixed":
                if spec.horizon is None:
                    raise ConfigError(who, "eta", "null with schedule 'fixed' needs the horizon")
                eta = math.sqrt(U / (L * spec.horizon))
            else:
                eta = math.sqrt(U / L)
            eta = eta if eta > 0 else 1.0  # U = 0: a one-point domain, any rate
        self._reg = reg
        self._eta = eta
        self._sqrt = self.schedule == "sqrt"
        self._U = U
        n_rep = spec.n_replicates
        self._sum = np.zeros((n_rep, dim))
        self._acc = np.zeros(n_rep)
        self._rounds = 0

    @property
    def regularizer_object(self) -> Regularizer:
        """The :class:`~arena.players.regularizers.Regularizer` this game uses (after ``reset``)."""
        return self._reg

    def learning_rate(self, t: int) -> float:
        """Return ``η_t``, the rate that plays ``w_t``."""
        return self._eta / math.sqrt(t) if self._sqrt else self._eta

    def predict(self, x: np.ndarray | None = None) -> np.ndarray:
        return self._reg.link(-self.learning_rate(self._rounds + 1) * self._sum)

    def update(self, fb: Feedback) -> None:
        t = self._rounds + 1
        g = np.asarray(fb.grad, dtype=np.float64)
        self._acc += self.learning_rate(t) * self._reg.dual_norm(g) ** 2
        self._sum += g
        self._rounds = t

    def bounds(self, t: int) -> dict[tuple[str, float], np.ndarray]:
        """Declare ``U/η_t + ½ Σ_s η_s ‖g_s‖_*²`` (Shalev-Shwartz 2007, Lemma 2) if U < ∞."""
        if not math.isfinite(self._U):
            return {}
        return {("regret", math.nan): self.regret_bound(t)}

    def regret_bound(self, t: int) -> np.ndarray:
        """Return ``U/η_t + ½ Σ_{s≤t} η_s ‖g_s‖_*²``, shape (R,)."""
        if t == 0:
            return 0.5 * self._acc
        return self._U / self.learning_rate(t) + 0.5 * self._acc

    @classmethod
    def _unit_test_params(cls):
        yield {"eta": 0.5}
        yield {"regularizer": "entropic", "eta": 0.5}
        yield {"regularizer": "pnorm", "eta": 0.5}
        yield {"schedule": "fixed", "eta": 0.2}
