"""The p-norm Perceptron: quasi-additive classifier with the p-norm link (Shalev-Shwartz 2007)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from arena.oco.components import OCOPlayer, game_dim
from arena.oco.losses import EXAMPLE_LOSSES, Feedback
from arena.params import POSITIVE
from arena.players._quasi_additive import (
    P_CONSTRAINTS,
    lemma19,
    pnorm,
    pnorm_link,
    read_example,
    resolve_p,
)
from arena.spec import GameSpec, PlayerTags


class PNormPerceptron(OCOPlayer):
    """p-norm Perceptron: ``θ_1 = 0``, on a mistake ``θ += (1/c) y_t x_t``; ``w_t = Link(θ_t)``.

    Shalev-Shwartz 2007, Figure 5.1, with the link (5.9)
    ``Link_i(θ) = sign(θ_i)|θ_i|^{p−1} / ‖θ‖_p^{p−2}`` and ``Link(0) = 0`` (which removes the
    0/0). ``p = 2`` is the Perceptron; large p approaches Winnow (§5.1.4). The link is
    homogeneous of degree 1, so predictions do not depend on ``c > 0`` (§5.1.4).

    Parameters
    ----------
    p : float or "auto"
        The link's exponent, ``p ≥ 2``. ``"auto"`` (default) is ``max(2, 2 ln d)``, Gentile's
        tuning (Gentile 2003; not stated in Shalev-Shwartz 2007): with
        ``X_p ≈ X_∞`` it makes the bound of Cor 7 logarithmic in d for sparse comparators.
    c : float
        Trade-off constant of Fig 5.1 (> 0); it only scales ``w_t``.

    Notes
    -----
    ``w_t`` is Fig 5.1's ``Link(θ_t)``. In the primal–dual view (``f = ‖w‖_q²/(2(q−1))``,
    ``q = p/(p−1)``) the played point would be ``∇f*(Σ y x / c) = Link(Σ y x)/(c(p−1))``: the two
    differ by the factor ``p − 1``, i.e. ``primal_dual`` with ``c' = c/(p−1)`` plays the same ``w``.

    Guarantee (Corollary 7): with ``X = max_{t∈M} ‖x_t‖_p`` and ``q = p/(p−1)``, for every u,
    ``|M| ≤ H + X‖u‖_q √((p−1)H) + (p−1)X²‖u‖_q²``, ``H = Σ_{t∈M}[1 − y_t⟨u, x_t⟩]₊``
    (:meth:`mistake_bound`; u-dependent, so not declared by :meth:`bounds`).

    Examples
    --------
    >>> from arena.oco.domains import Domain
    >>> from arena.oco.losses import RoundData, feedback
    >>> spec = GameSpec("classification", 2, 3, dim=2, domain=Domain(), loss="hinge")
    >>> p = PNormPerceptron(p=3.0)
    >>> p.reset(spec, [np.random.default_rng(0)])
    >>> rd = RoundData(x=np.array([[3.0, -4.0]]), y=np.array([1.0]))
    >>> p.update(feedback("hinge", 0.0, p.predict(rd.x), rd))
    >>> p.predict().round(6).tolist()  # sign(θ)|θ|²/‖θ‖_3 with ‖θ‖_3 = 91^(1/3)
    [[2.000915, -3.557183]]

    References
    ----------
    Grove, Littlestone & Schuurmans (2001); Gentile (2003). Shalev-Shwartz 2007, Figure 5.1
    (§5.1), §5.1.4, Eq. (5.9) and Corollary 7.
    """

    tags = PlayerTags(
        protocols=frozenset({"classification"}),
        randomized=False,
        domains=frozenset({"unconstrained"}),
        losses=frozenset(EXAMPLE_LOSSES),
    )
    parameter_constraints: ClassVar = {"p": P_CONSTRAINTS, "c": [POSITIVE]}

    def __init__(self, p: float | str = "auto", c: float = 1.0):
        self.p = p
        self.c = c

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._c = float(self.c)
        d = game_dim(spec)
        self._p = resolve_p(self.p, d)
        self._sum = np.zeros((spec.n_replicates, d))  # Σ_{i∈M} y_i x_i; θ_t = sum/c
        self._mistakes = np.zeros(spec.n_replicates, dtype=np.int64)
        self._x_max = np.zeros(spec.n_replicates)

    @property
    def p_value(self) -> float:
        """The exponent p in use (``"auto"`` resolved)."""
        return self._p

    def predict(self, x: np.ndarray | None = None) -> np.ndarray:
        return pnorm_link(self._sum / self._c, self._p)

    def update(self, fb: Feedback) -> None:
        x, y, pred = read_example(fb)
        err = y * pred <= 0.0
        self._sum += np.where(err, y, 0.0)[:, None] * x
        self._mistakes += err
        self._x_max = np.maximum(self._x_max, np.where(err, pnorm(x, self._p), 0.0))

    @property
    def mistakes(self) -> np.ndarray:
        """Number of mistakes ``|M|`` so far (R,)."""
        return self._mistakes.copy()

    @property
    def radius(self) -> np.ndarray:
        """``X = max_{t∈M} ‖x_t‖_p`` over the mistake rounds so far (R,)."""
        return self._x_max.copy()

    def mistake_bound(self, u_qnorm, hinge) -> np.ndarray:
        """Return Cor 7's bound ``H + X‖u‖_q√((p−1)H) + (p−1)X²‖u‖_q²`` on ``|M|`` (R,).

        ``u_qnorm`` is ``‖u‖_q`` (``q = p/(p−1)``), ``hinge`` is ``Σ_{t∈M}[1 − y_t⟨u, x_t⟩]₊``.
        """
        b = self._x_max * np.asarray(u_qnorm, dtype=np.float64) * np.sqrt(self._p - 1.0)
        return lemma19(b, hinge)

    def comparator_mistake_bound(self, u, hinge) -> np.ndarray:
        """Return Cor 7's bound on ``|M|`` at the comparator ``u`` (R, d), per replicate (R,).

        ``hinge`` is ``Σ_{t∈M}[1 − y_t⟨u, x_t⟩]₊`` (R,); ``‖u‖_q`` uses ``q = p/(p − 1)``. The
        ``mistake_bound`` metric calls this with an adversary's declared comparator.
        """
        q = self._p / (self._p - 1.0)
        return self.mistake_bound(pnorm(np.asarray(u, dtype=np.float64), q), hinge)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"p": 2.0}
        yield {"p": 4.0, "c": 0.5}
