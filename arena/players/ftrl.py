"""Follow the Regularized Leader on linearized losses, generic over a regularizer object, or on
the raw convex losses (``objective="raw"``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from arena.errors import ConfigError
from arena.oco.components import OCO_PROTOCOLS, OCOPlayer, game_dim, game_domain
from arena.oco.losses import EXAMPLE_LOSSES, Feedback, is_sparse
from arena.params import POSITIVE, InstanceOf, Interval, IsNone, OneOf
from arena.players.regularizers import REGULARIZERS, Regularizer, make_regularizer
from arena.spec import GameSpec, PlayerTags

SCHEDULES = ("fixed", "sqrt")
OBJECTIVES = ("linearized", "raw")
RAW_LOSSES = frozenset({"linear", *EXAMPLE_LOSSES})
"""Loss families ``objective="raw"`` minimizes exactly (all but the multiclass hinge)."""


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
    objective : {"linearized", "raw"}
        ``"linearized"`` (default): the losses seen through their subgradients, as above.
        ``"raw"``: FTRL on the convex losses themselves, ``w_t = argmin_{w∈K} Σ_{s<t} f_s(w) +
        ‖w‖²/(2η_t)`` (``"l2"`` only), solved exactly at every round by the comparators of
        :mod:`arena.oco.hindsight`: in closed form for linear losses (the projection of
        ``−η_t Σ g``, as linearized) and for the squared loss (streamed ``Σxxᵀ``, ``Σyx``: an
        eigendecomposition, and the secular equation on a ball or an active set on a box or
        simplex), by a certified convex solve over the stored examples for the hinge, absolute
        and logistic losses (HiGHS / L-BFGS-B through scipy). The game's ``(σ/2)‖w − z_s‖²``
        terms are part of ``f_s``. Costs O(d²) a round and O(d²) memory for the squared loss,
        a solve over the t examples (O(t·d) memory) for the others.

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

    ``objective="raw"`` is the lecture's FTRL proper (slide "Follow the Regularized Leader":
    the regularized cumulative loss itself, not its linearization). Guarantee (Shalev-Shwartz
    2012, Theorem 2.11, with the (1/η)-strongly convex ``R(w) = ‖w‖²/(2η)``): if every ``f_t``
    is G-Lipschitz on K, ``R_T(u) ≤ (½‖u‖² − min_K ½‖w‖²)/η + ηTG²`` for every ``u ∈ K``.
    ``bounds`` declares ``U/η + ηtG²`` (``U = max_K ½‖u‖²``, ``G = spec.gradient_bound``) for
    the fixed schedule on a bounded domain with a declared G, and nothing otherwise (no bound of
    this form is proved here for the raw losses with a moving η_t).

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
        "objective": [OneOf(*OBJECTIVES)],
    }

    def __init__(
        self,
        regularizer: str | Regularizer = "l2",
        schedule: str = "sqrt",
        eta: float | None = None,
        p: float | None = None,
        objective: str = "linearized",
    ):
        self.regularizer = regularizer
        self.schedule = schedule
        self.eta = eta
        self.p = p
        self.objective = objective

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
        self._raw = self.objective == "raw"
        if self._raw:
            self._reset_raw(spec, domain, dim)

    def _reset_raw(self, spec: GameSpec, domain, dim: int) -> None:
        who = self.label()
        if self.regularizer != "l2":
            raise ConfigError(who, "objective", "'raw' is implemented for regularizer 'l2' only")
        loss = spec.loss or "linear"
        if loss not in RAW_LOSSES:
            raise ConfigError(who, "objective", f"'raw' has no exact solver for the {loss} loss")
        self._domain = domain
        self._loss = loss
        self._sigma_game = float(spec.sigma or 0.0)
        self._G = spec.gradient_bound
        n_rep = spec.n_replicates
        self._z_sum = np.zeros((n_rep, dim))
        if loss == "squared":
            self._xx = np.zeros((n_rep, dim, dim))
            self._yx = np.zeros((n_rep, dim))
            self._yy = np.zeros(n_rep)
        elif loss != "linear":
            self._xs: list[np.ndarray] = []
            self._ys: list[np.ndarray] = []
        self._point = domain.project(np.zeros((n_rep, dim)))  # argmin_K R: no loss seen yet

    def _raw_point(self) -> np.ndarray:
        """``argmin_{w∈K} Σ_{s≤t} f_s(w) + ‖w‖²/(2η_{t+1})`` after the t rounds played."""
        from arena.oco import hindsight

        t = self._rounds
        # the regularizer and the game's σ-terms form one isotropic quadratic:
        # (σt + 1/η)/2·‖w‖² − σ⟨Σz, w⟩ + const
        s = self._sigma_game * t + 1.0 / self.learning_rate(t + 1)
        lin = self._sigma_game * self._z_sum
        if self._loss == "linear":
            _, w = hindsight.best_quadratic(
                None, lin - self._sum, 0.0, self._domain, isotropic=s, return_argmin=True
            )
            return w
        if self._loss == "squared":
            eye = np.eye(self._xx.shape[1])
            _, w = hindsight.best_quadratic(
                self._xx + s * eye, self._yx + lin, 0.5 * self._yy, self._domain,
                return_argmin=True,
            )  # fmt: skip
            return w
        X, Y = np.stack(self._xs, axis=1), np.stack(self._ys, axis=1)
        _, w = hindsight.best_examples(
            self._loss, X, Y, self._domain, sigma=s, z_sum=lin / s,
            z_sqsum=np.zeros(X.shape[0]), t=1, return_argmin=True,
        )  # fmt: skip
        return w

    @property
    def regularizer_object(self) -> Regularizer:
        """The :class:`~arena.players.regularizers.Regularizer` this game uses (after ``reset``)."""
        return self._reg

    def learning_rate(self, t: int) -> float:
        """Return ``η_t``, the rate that plays ``w_t``."""
        return self._eta / math.sqrt(t) if self._sqrt else self._eta

    def predict(self, x: np.ndarray | None = None) -> np.ndarray:
        if self._raw:
            return self._point.copy()
        return self._reg.link(-self.learning_rate(self._rounds + 1) * self._sum)

    def update(self, fb: Feedback) -> None:
        t = self._rounds + 1
        g = np.asarray(fb.grad, dtype=np.float64)
        self._acc += self.learning_rate(t) * self._reg.dual_norm(g) ** 2
        if self._raw:
            self._add_raw(fb)
        else:
            self._sum += g
        self._rounds = t
        if self._raw:
            self._point = self._raw_point()

    def _add_raw(self, fb: Feedback) -> None:
        data = fb.data
        if self._sigma_game:
            self._z_sum += np.asarray(data.z, dtype=np.float64)
        if self._loss == "linear":
            self._sum += np.asarray(data.g, dtype=np.float64)
            return
        x = data.x.densify() if is_sparse(data.x) else np.asarray(data.x, dtype=np.float64)
        y = np.asarray(data.y, dtype=np.float64)
        if self._loss == "squared":
            self._xx += np.einsum("ri,rj->rij", x, x)
            self._yx += y[:, None] * x
            self._yy += y * y
        else:
            self._xs.append(x.copy())
            self._ys.append(y.copy())

    def bounds(self, t: int) -> dict[tuple[str, float], np.ndarray]:
        """Declare ``U/η_t + ½ Σ_s η_s ‖g_s‖_*²`` (Shalev-Shwartz 2007, Lemma 2) if U < ∞; for
        ``objective="raw"``, ``U/η + ηtG²`` (Shalev-Shwartz 2012, Theorem 2.11) with a fixed η
        and a declared G."""
        if not math.isfinite(self._U):
            return {}
        if self._raw and (self._sqrt or self._G is None or not math.isfinite(self._G)):
            return {}
        return {("regret", math.nan): self.regret_bound(t)}

    def regret_bound(self, t: int) -> np.ndarray:
        """Return ``U/η_t + ½ Σ_{s≤t} η_s ‖g_s‖_*²`` (raw: ``U/η + ηtG²``), shape (R,)."""
        if self._raw:
            value = self._U / self._eta + self._eta * t * float(self._G) ** 2
            return np.full(self._acc.shape, value)
        if t == 0:
            return 0.5 * self._acc
        return self._U / self.learning_rate(t) + 0.5 * self._acc

    @classmethod
    def _unit_test_params(cls):
        yield {"eta": 0.5}
        yield {"regularizer": "entropic", "eta": 0.5}
        yield {"regularizer": "pnorm", "eta": 0.5}
        yield {"schedule": "fixed", "eta": 0.2}
        yield {"objective": "raw", "eta": 0.5}
