"""The self-tuned structured-output learner of Shalev-Shwartz (2007), Figure 5.4."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from arena.params import POSITIVE
from arena.spec import GameSpec
from arena.structured.components import StructuredPlayer


class StructuredSelfTuned(StructuredPlayer):
    """Self-tuned aggressive learner for structured output (Shalev-Shwartz 2007, Figure 5.4).

    Predicts ``ŷ_t = argmax_y ⟨θ_t, φ(x_t, y)⟩`` (5.20) by the stream's dynamic program
    (Viterbi over the Markov-decomposable features (5.21)); ``θ_1 = 0``, ``X_0 = 0``, ``M_0 = 0``.
    When ``ρ(y_t, ŷ_t) > 0``:

    * ``M_t = M_{t−1} + 1``, ``a_t = φ(x_t, y_t) − φ(x_t, ŷ_t)``, ``X_t = max(‖a_t‖, X_{t−1})``,
    * ``c_t = X_t √(M_t / (2U))``,
    * ``α_t = min{1, [c_t ρ(y_t, ŷ_t) − ⟨θ_t, a_t⟩]₊ / ‖a_t‖²}``, ``θ_{t+1} = θ_t + α_t a_t``;

    otherwise nothing changes.

    **Guarantee** (Theorem 7): with ρ's range in ``{0} ∪ [1, ∞)``,
    ``X = max_t max_{y′≠y_t} ‖φ(x_t, y′) − φ(x_t, y_t)‖`` and
    ``Loss(u) = Σ_t max_{y′≠y_t}[ρ(y_t, y′) − ⟨u, φ(x_t, y_t) − φ(x_t, y′)⟩]₊``, every u with
    ``‖u‖ ≤ √(2U)`` satisfies ``Σ_t ρ(y_t, ŷ_t) ≤ Loss(u) + X√(8U·Loss(u)) + 8X²U``
    (:meth:`comparator_cost_bound`, logged by the ``structured_cost_bound`` metric).

    Parameters
    ----------
    U : float
        The radius parameter (> 0): the bound covers the comparators with ``‖u‖² ≤ 2U``.

    Notes
    -----
    O(m·k² + dim) a round per replicate. Where ``a_t = 0`` while ``ρ > 0`` (two strings with
    the same features; the figure divides by ``‖a_t‖² = 0``) the step is skipped: no ``α``
    moves θ along a zero vector. Ties in the argmax go to the smaller label (the structure's
    Viterbi). ``arena.structured.literal.fig54`` transcribes the figure with the argmax by
    enumeration; the tests hold this player to it.

    References
    ----------
    Shalev-Shwartz, S. (2007). *Online Learning: Theory, Algorithms, and Applications*. PhD
    thesis, The Hebrew University. §5.3.3, Figure 5.4, Theorem 7.

    Examples
    --------
    >>> from arena.game import run_game
    >>> rows = run_game("structured_self_tuned", "structured_stream", horizon=30, replicates=1,
    ...                 metrics=["structured_cost"]).rows
    >>> float(rows.value.iloc[-1]) < 30 * 4  # fewer than m = 4 errors a round
    True
    """

    parameter_constraints: ClassVar = {"U": [POSITIVE]}

    def __init__(self, U: float = 50.0):
        self.U = U

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._structure = spec.structure
        n_rep = spec.n_replicates
        self.theta = np.zeros((n_rep, self._structure.dim))
        self.mistakes = np.zeros(n_rep, dtype=np.int64)
        self.x_max = np.zeros(n_rep)

    def predict(self, x: np.ndarray) -> np.ndarray:
        s = self._structure
        return np.stack([s.argmax(self.theta[r], x[r]) for r in range(self.theta.shape[0])])

    def update(self, x: np.ndarray, y: np.ndarray, y_hat: np.ndarray) -> None:
        s = self._structure
        for r in range(self.theta.shape[0]):
            rho = s.cost(y[r], y_hat[r])
            if rho <= 0.0:
                continue
            self.mistakes[r] += 1
            a = s.features(x[r], y[r]) - s.features(x[r], y_hat[r])
            sq = float(a @ a)
            self.x_max[r] = max(math.sqrt(sq), self.x_max[r])
            if sq == 0.0:
                continue
            c = self.x_max[r] * math.sqrt(self.mistakes[r] / (2.0 * self.U))
            alpha = min(1.0, max(c * rho - float(self.theta[r] @ a), 0.0) / sq)
            self.theta[r] += alpha * a

    def comparator_cost_bound(self, u: np.ndarray, loss: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Theorem 7 at comparators ``u`` (R, dim) with losses ``Loss(u)`` and ``X`` (R,):
        ``Loss + X√(8U·Loss) + 8X²U`` where ``‖u‖ ≤ √(2U)``, ``inf`` elsewhere."""
        loss, x = np.asarray(loss, dtype=np.float64), np.asarray(x, dtype=np.float64)
        inside = np.linalg.norm(u, axis=1) <= math.sqrt(2.0 * self.U) * (1.0 + 1e-12)
        value = loss + x * np.sqrt(8.0 * self.U * loss) + 8.0 * x**2 * self.U
        return np.where(inside, value, np.inf)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"U": 0.5}
