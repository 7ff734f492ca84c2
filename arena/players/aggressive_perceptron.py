"""The aggressive Perceptron: OGD with a fixed step on the hinge loss (Srebro, Lecture 16)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from arena.oco.components import OCOPlayer, game_dim
from arena.oco.losses import EXAMPLE_LOSSES, Feedback
from arena.params import POSITIVE
from arena.players._quasi_additive import read_example
from arena.spec import GameSpec, PlayerTags


class AggressivePerceptron(OCOPlayer):
    """Aggressive Perceptron: ``w_1 = 0``, ``w_{t+1} = w_t + η [[y_t⟨w_t, x_t⟩ ≤ 1]] y_t x_t``.

    Unprojected online gradient descent with step ``η`` on the hinge ``ℓ_t(w) = [1 − y_t⟨w, x_t⟩]₊``
    (at the kink ``y⟨w, x⟩ = 1`` it takes the subgradient ``−y x``, as the lecture's indicator
    ``≤ 1`` says). Unlike the Perceptron it also updates on correct rounds with margin ≤ 1, and η
    matters (the margin 1 is not scale-free); ``η = 1`` is the lecture's rule.

    Parameters
    ----------
    eta : float
        Step size η > 0.

    Notes
    -----
    Guarantee (unprojected OGD with a fixed step started at 0, Zinkevich 2003: ``Σ⟨g_t, w_t − u⟩ ≤
    ‖u‖²/(2η) + (η/2)Σ‖g_t‖²``): for every ``u ∈ ℝ^d``, with ``U`` the update rounds, ``Σ_t ℓ_t(w_t)
    − Σ_t ℓ_t(u) ≤ ‖u‖²/(2η) + (η/2) Σ_{t∈U} ‖x_t‖²`` (:meth:`hinge_regret_bound`). The hinge
    upper-bounds the 0-1 loss (a mistake has ``ℓ_t(w_t) ≥ 1``), hence ``|M| ≤ Σ_t ℓ_t(u) + ‖u‖²/(2η)
    + (η/2)Σ_{t∈U}‖x_t‖²`` (:meth:`mistake_bound`). Both depend on ``u``: nothing is declared by
    :meth:`bounds`.

    Examples
    --------
    >>> from arena.oco.domains import Domain
    >>> from arena.oco.losses import RoundData, feedback
    >>> spec = GameSpec("classification", 2, 2, dim=2, domain=Domain(), loss="hinge")
    >>> p = AggressivePerceptron()
    >>> p.reset(spec, [np.random.default_rng(0)])
    >>> for x, y in [([0.5, 0.0], 1.0), ([1.0, 0.0], 1.0)]:  # margins 0 and 0.5: both update
    ...     rd = RoundData(x=np.array([x]), y=np.array([y]))
    ...     p.update(feedback("hinge", 0.0, p.predict(rd.x), rd))
    >>> p.predict().tolist(), p.mistakes.tolist()
    ([[1.5, 0.0]], [1])

    References
    ----------
    Srebro, Lecture 16, slides "...back to the Perceptron" (the "aggressive Perceptron").
    """

    tags = PlayerTags(
        protocols=frozenset({"classification"}),
        randomized=False,
        domains=frozenset({"unconstrained"}),
        losses=frozenset(EXAMPLE_LOSSES),
    )
    parameter_constraints: ClassVar = {"eta": [POSITIVE]}

    def __init__(self, eta: float = 1.0):
        self.eta = eta

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._eta = float(self.eta)
        d = game_dim(spec)
        n_rep = spec.n_replicates
        self._w = np.zeros((n_rep, d))
        self._mistakes = np.zeros(n_rep, dtype=np.int64)
        self._updates = np.zeros(n_rep, dtype=np.int64)
        self._sq_norms = np.zeros(n_rep)

    def predict(self, x: np.ndarray | None = None) -> np.ndarray:
        return self._w.copy()

    def update(self, fb: Feedback) -> None:
        x, y, pred = read_example(fb)
        margin = y * pred
        upd = margin <= 1.0
        self._w += (np.where(upd, self._eta * y, 0.0))[:, None] * x
        self._mistakes += margin <= 0.0
        self._updates += upd
        self._sq_norms += np.where(upd, np.einsum("rd,rd->r", x, x), 0.0)

    @property
    def mistakes(self) -> np.ndarray:
        """Number of mistakes ``|M|`` so far (R,)."""
        return self._mistakes.copy()

    @property
    def updates(self) -> np.ndarray:
        """Number of update rounds ``|U|`` (margin ≤ 1) so far (R,)."""
        return self._updates.copy()

    def hinge_regret_bound(self, u_norm) -> np.ndarray:
        """Return ``‖u‖²/(2η) + (η/2)Σ_{t∈U}‖x_t‖²``, the OGD bound on the hinge regret to ``u``."""
        u2 = np.asarray(u_norm, dtype=np.float64) ** 2
        return u2 / (2.0 * self._eta) + 0.5 * self._eta * self._sq_norms

    def mistake_bound(self, u_norm, hinge) -> np.ndarray:
        """Return ``H + ‖u‖²/(2η) + (η/2)Σ_{t∈U}‖x_t‖²``, ``H = Σ_t [1 − y_t⟨u, x_t⟩]₊`` (all t)."""
        return np.asarray(hinge, dtype=np.float64) + self.hinge_regret_bound(u_norm)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"eta": 0.1}
