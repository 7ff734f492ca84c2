"""The multiclass Perceptron: the Perceptron on Kesler's construction (Shalev-Shwartz 2007)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from arena.oco.components import MULTICLASS, OCOPlayer, feature_dim
from arena.oco.losses import MULTICLASS_LOSSES, Feedback, multiclass_scores
from arena.params import POSITIVE, OneOf
from arena.players._quasi_additive import lemma19
from arena.spec import GameSpec, PlayerTags

VARIANTS = ("max", "uniform")


def error_set(scores: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Return the mask (..., k) of the wrong labels scoring at least the true label's score.

    The error set ``E = {r ≠ y : ⟨w_r, x⟩ ≥ ⟨w_y, x⟩}`` of Crammer & Singer (2003); it is non-empty
    exactly on the mistake rounds (a tie for the top score is a mistake).

    Examples
    --------
    >>> error_set(np.array([2.0, 3.0, 2.0]), np.array(0)).tolist()
    [False, True, True]
    """
    k = scores.shape[-1]
    own = np.take_along_axis(scores, labels[..., None], axis=-1)
    return (scores >= own) & (np.arange(k) != labels[..., None])


class MulticlassPerceptron(OCOPlayer):
    """Multiclass Perceptron: on a mistake, ``θ_y += x_t`` and the wrong top labels lose ``x_t``.

    Predicts ``ŷ_t = argmax_r ⟨w_r, x_t⟩`` with ``W_t = Θ_t/c`` (``Θ_1 = 0``); on a mistake
    (``⟨w_y, x_t⟩ ≤ max_{r≠y} ⟨w_r, x_t⟩``: a tie for the top score counts),

    * ``variant="max"``: ``θ_y += x_t``, ``θ_s −= x_t`` for the highest-scoring wrong label s (the
      first on ties). This is the binary Perceptron run on Kesler's examples
      ``z_t = φ(x_t, y_t) − φ(x_t, s) = (e_y − e_s) ⊗ x_t``, all labelled +1 (Duda, Hart & Stork
      2001, §5.12.1): the Euclidean conservative update of Shalev-Shwartz 2007, §5.3.2, on the
      multiclass hinge (5.19), the multiclass analogue of Figure 5.1;
    * ``variant="uniform"``: ``θ_y += x_t``, ``θ_r −= x_t/|E|`` for each r in the error set
      ``E = {r ≠ y : ⟨w_r, x_t⟩ ≥ ⟨w_y, x_t⟩}`` (Crammer & Singer 2003, the uniform
      ultraconservative additive update; ``max`` is their max update).

    ``W_t`` is flattened row-major (``w_t ∈ ℝ^{k·d}``, the ``multiclass`` protocol); predictions do
    not depend on ``c > 0``, which only scales ``W_t`` (and so the multiclass hinge the arena
    charges).

    Parameters
    ----------
    c : float
        Scale ``W_t = Θ_t/c`` (> 0), as the trade-off constant of Figure 5.1.
    variant : {"max", "uniform"}
        Which wrong labels lose ``x_t`` on a mistake.

    Notes
    -----
    Guarantee (Shalev-Shwartz 2007, Corollary 5 applied to the Kesler examples ``z_t``, derived):
    with M the mistake rounds and ``X = √2 · max_{t∈M} ‖x_t‖₂ ≥ max_{t∈M} ‖z_t‖`` (for ``uniform``
    ``‖z_t‖² = (1 + 1/|E|)‖x_t‖² ≤ 2‖x_t‖²``), for every ``U ∈ ℝ^{k×d}``,
    ``|M| ≤ H + X‖U‖_F√H + X²‖U‖_F²`` where
    ``H = Σ_{t∈M} max_{r≠y_t} [1 − ⟨u_{y_t} − u_r, x_t⟩]₊`` is U's multiclass hinge on the mistake
    rounds (it dominates ``[1 − ⟨U, z_t⟩]₊`` because ``⟨U, z_t⟩`` averages margins of U). The proof
    needs only ``⟨W_t, z_t⟩ ≤ 0`` on the mistake rounds, which both updates satisfy. On data that
    U separates with margin γ (``⟨u_y − u_r, x_t⟩ ≥ γ`` for r ≠ y, ``‖U‖_F = 1``) and
    ``‖x_t‖ ≤ R``, ``U/γ`` has H = 0 and ``|M| ≤ 2R²/γ²``: the bound of Crammer & Singer (2003)
    for every additive ultraconservative algorithm. The bound depends on U: it is exposed as
    :meth:`mistake_bound`, not declared by :meth:`bounds` (a declared bound must hold whatever U).

    The player plays the ``multiclass`` protocol only, on an unconstrained domain; it reads
    ``x_t``, ``y_t`` and ``W_t`` from the feedback and ignores the arena's subgradient.

    Examples
    --------
    >>> from arena.oco.domains import Domain
    >>> from arena.oco.losses import RoundData, feedback
    >>> spec = GameSpec("multiclass", 4, 2, dim=4, domain=Domain(), loss="multiclass_hinge",
    ...                 n_classes=2)
    >>> p = MulticlassPerceptron()
    >>> p.reset(spec, [np.random.default_rng(0)])
    >>> for x, y in [([1.0, 0.5], 1.0), ([0.5, -2.0], 0.0)]:
    ...     rd = RoundData(x=np.array([x]), y=np.array([y]))
    ...     p.update(feedback("multiclass_hinge", 0.0, p.predict(rd.x), rd))
    >>> p.predict().tolist(), p.mistakes.tolist()  # round 1: a tie at W = 0, θ_1 += x, θ_0 −= x
    ([[-1.0, -0.5, 1.0, 0.5]], [1])

    References
    ----------
    Shalev-Shwartz 2007, §5.3.2 (multiclass hinge (5.19) and its subgradient), Figure 5.1 and
    Corollary 5; Crammer & Singer (2003), "Ultraconservative online algorithms for multiclass
    problems", JMLR 3; Duda, Hart & Stork (2001), §5.12.1 (Kesler's construction).
    """

    tags = PlayerTags(
        protocols=frozenset({MULTICLASS}),
        randomized=False,
        domains=frozenset({"unconstrained"}),
        losses=frozenset(MULTICLASS_LOSSES),
    )
    parameter_constraints: ClassVar = {"c": [POSITIVE], "variant": [OneOf(*VARIANTS)]}

    def __init__(self, c: float = 1.0, variant: str = "max"):
        self.c = c
        self.variant = variant

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._c = float(self.c)
        self._k = int(spec.n_classes)
        self._d = feature_dim(spec)
        n_rep = spec.n_replicates
        self._theta = np.zeros((n_rep, self._k, self._d))
        self._mistakes = np.zeros(n_rep, dtype=np.int64)
        self._x_max = np.zeros(n_rep)

    def predict(self, x: np.ndarray | None = None) -> np.ndarray:
        return self._theta.reshape(self._theta.shape[0], -1) / self._c

    def update(self, fb: Feedback) -> None:
        x = np.asarray(fb.data.x, dtype=np.float64)
        labels = np.asarray(fb.data.y).astype(np.int64)
        scores = multiclass_scores(fb.w, x)
        errors = error_set(scores, labels)
        mistake = errors.any(axis=1)
        own = np.arange(self._k) == labels[:, None]
        if self.variant == "uniform":
            lose = errors / np.maximum(errors.sum(axis=1, keepdims=True), 1)
        else:  # the first highest-scoring wrong label, on the mistake rounds only
            runner = np.argmax(np.where(own, -np.inf, scores), axis=1)
            lose = (np.arange(self._k) == runner[:, None]) & mistake[:, None]
        gain = (own & mistake[:, None]).astype(np.float64)
        self._theta += (gain - lose)[:, :, None] * x[:, None, :]
        self._mistakes += mistake
        norms = np.linalg.norm(x, axis=1)
        self._x_max = np.maximum(self._x_max, np.where(mistake, norms, 0.0))

    @property
    def mistakes(self) -> np.ndarray:
        """Number of mistakes ``|M|`` so far, per replicate (R,)."""
        return self._mistakes.copy()

    @property
    def radius(self) -> np.ndarray:
        """``X = √2 · max_{t∈M} ‖x_t‖₂`` over the mistake rounds so far (R,) (0 before any)."""
        return np.sqrt(2.0) * self._x_max

    def mistake_bound(self, u_norm, hinge) -> np.ndarray:
        """Return the bound ``H + X‖U‖√H + X²‖U‖²`` on ``|M|`` (R,) (see the class Notes).

        Parameters
        ----------
        u_norm : float or ndarray (R,)
            ``‖U‖_F`` of the comparator.
        hinge : float or ndarray (R,)
            ``H``: U's multiclass hinge summed over the mistake rounds (over all rounds: a
            larger, still valid bound).
        """
        return lemma19(self.radius * np.asarray(u_norm, dtype=np.float64), hinge)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"c": 0.25, "variant": "uniform"}
