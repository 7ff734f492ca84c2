"""The self-confirming adaptive linear adversary: each round rewards the way the learner leans."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from arena.oco.components import AdaptiveOCOAdversary
from arena.oco.domains import Domain
from arena.oco.losses import RoundData
from arena.params import POSITIVE, OneOf
from arena.spec import AdversaryTags, GameSpec


class SelfConfirming(AdaptiveOCOAdversary):
    """Linear losses ``f_t(w) = ⟨g_t, w⟩`` with ``g_t = −G·w_t/‖w_t‖``, chosen after seeing w_t.

    Parameters
    ----------
    G : float
        The norm of every ``g_t`` (> 0), declared as the gradient bound.
    domain : {"ball", "box"}
        The feasible set K: the Euclidean ball or the box ``[−radius, radius]^d`` (the same
        segment when d = 1).
    radius : float
        Radius of the ball, half-width of the box.

    Notes
    -----
    Each round the adversary reads the learner's point ``w_t`` and charges the loss whose
    gradient points against it, ``g_t = −G·w_t/‖w_t‖`` (``g_t = −G·e_1`` when ``w_t = 0``, a
    deterministic tie rule), so the learner's current lean is the right one and the round
    rewards going further that way. A learner that commits to the boundary at once loses
    nothing to the best point; one that keeps a mass of its distribution on the other side (an
    exponential-weights average, whose mean stays inside K) pays ``G·(‖u‖ − ‖w_t‖)``-like
    amounts every round until its weights concentrate. In d = 1 the losses are
    ``f_t(w) = −G·sign(w_t)·w``. It is an adaptive adversary in the sense of Luo 2016,
    Appendix A.3 (the OCO adversary may see ``w_t``; Theorem 22 holds against it), and the
    OCO counterpart of the experts' ``greedy`` and ``distribution_reader``, which read ``p_t``.
    Every replicate is the same game for a deterministic player. No regret value is declared.

    Examples
    --------
    >>> adv = SelfConfirming(G=2.0)
    >>> adv.reveal(1, np.array([[0.3], [-0.1], [0.0]])).g.ravel().tolist()
    [-2.0, 2.0, -2.0]
    """

    parameter_constraints: ClassVar = {
        "G": [POSITIVE],
        "domain": [OneOf("ball", "box")],
        "radius": [POSITIVE],
    }
    tags: ClassVar[AdversaryTags] = AdversaryTags(protocol="oco", oblivious=False)

    def __init__(self, G: float = 1.0, domain: str = "ball", radius: float = 1.0):
        self.G = G
        self.domain = domain
        self.radius = radius

    def resolve_dim(self, requested: int | None) -> int:
        return 1 if requested is None else int(requested)

    def declared_domain(self) -> Domain:
        return Domain(self.domain, float(self.radius))

    def declared_loss(self) -> str:
        return "linear"

    def gradient_bound(self) -> float:
        return float(self.G)

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._G = float(self.G)

    def reveal(self, t: int, w: np.ndarray) -> RoundData:
        w = np.asarray(w, dtype=np.float64)
        norms = np.linalg.norm(w, axis=1, keepdims=True)
        e1 = np.zeros_like(w)
        e1[:, 0] = 1.0
        lean = np.where(norms > 0, w / np.where(norms > 0, norms, 1.0), e1)
        return RoundData(g=-self.G * lean)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"G": 0.5, "domain": "box", "radius": 2.0}
