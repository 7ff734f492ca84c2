"""A synthetic multi-label stream: sparse binary features, a hidden sparse k×d target, relevant
sets above a threshold, optional label noise (a stand-in for Shalev-Shwartz 2007, §8.4's Enron)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from arena.adversaries._oco_stream import StreamAdversary
from arena.errors import ConfigError
from arena.oco.domains import Domain
from arena.oco.losses import MAX_RANKING_LABELS, RoundData, relevant_code
from arena.params import POSITIVE, Interval
from arena.spec import AdversaryTags, GameSpec

JITTER = 0.01
"""Scale of the uniform jitter added to the target scores, so that equal scores rank at random."""


class LabelRankingStream(StreamAdversary):
    """Binary bag-of-words examples labelled with the labels their hidden sparse target ranks high.

    Per replicate, ``reset`` draws a target ``U ∈ {0, 1}^{k×d}``: each label r owns
    ``target_features`` distinct features (its "keywords"), drawn uniformly. Each round the
    features are ``x_{t,i} ~ Bernoulli(density)`` independently (an email's words, as the binary
    vectors of Shalev-Shwartz 2007, §8.4), the scores are ``a_r = ⟨u_r, x_t⟩ + 0.01·v_r`` with
    ``v_r ~ U[0, 1)`` (a tie-breaker), and the relevant set is ``Y_t = {r : a_r ≥ threshold}``,
    or the top-scoring label when that is empty, less the lowest-scoring label when it is full.
    With ``noise > 0`` each label's membership is then flipped with that probability (the set may
    become empty or full; such a round has no pair). ``y_t = Σ_{r∈Y_t} 2^r``.

    Parameters
    ----------
    n_classes : int
        The number of labels k, 2 ≤ k ≤ 52. ``n_actions`` is the dimension ``k·d`` (default
        ``40k``: d = 40 features), with d ≥ k·target_features.
    density : float
        Probability in (0, 1] that a feature is on.
    target_features : int
        Keywords per label (≥ 1): the target is sparse, the regime where the entropic
        regularizer's updates are expected to help (Table 8.1's claim).
    threshold : float
        A label is relevant when at least this many of its keywords (plus jitter) are on.
    noise : float
        Probability in [0, 1] that a label's membership in ``Y_t`` is flipped.

    Notes
    -----
    Each round costs ``d + 2k`` uniforms of the replicate's stream, drawn as one row (features,
    jitter, noise), so any split of the rounds into blocks gives the same stream. No comparator
    is declared: on the fallback rounds and through the jitter the target ``U`` ranks ``Y_t``
    first but with no margin, so no finite comparator has zero loss.
    ``‖x_t‖₂ ≤ √d`` (the feature bound); the max-pair hinge's subgradient is ``±x_t`` in two
    rows, so the gradient bound is ``√(2d)``.

    Examples
    --------
    >>> adv = LabelRankingStream(n_classes=3, density=0.3, target_features=2)
    >>> spec = GameSpec("label_ranking", 30, 5, dim=30, n_classes=3)
    >>> adv.reset(spec, [np.random.default_rng(0)])
    >>> rd = adv.data_block(1, 5)
    >>> rd.x.shape, rd.y.shape, bool(((rd.y > 0) & (rd.y < 7)).all())  # Y neither empty nor full
    ((1, 5, 10), (1, 5), True)

    References
    ----------
    Shalev-Shwartz 2007, Ch. 8 (online label ranking; §8.4 the Enron experiments this stands in
    for: binary bag-of-words emails, folders as labels).
    """

    parameter_constraints: ClassVar = {
        "n_classes": [Interval(2, MAX_RANKING_LABELS, integer=True)],
        "density": [Interval(0, 1, closed="right")],
        "target_features": [Interval(1, None, integer=True)],
        "threshold": [POSITIVE],
        "noise": [Interval(0, 1)],
    }
    tags = AdversaryTags(protocol="label_ranking", oblivious=True)

    def __init__(
        self,
        n_classes: int = 6,
        density: float = 0.1,
        target_features: int = 4,
        threshold: float = 1.0,
        noise: float = 0.0,
    ):
        self.n_classes = n_classes
        self.density = density
        self.target_features = target_features
        self.threshold = threshold
        self.noise = noise

    def declared_classes(self) -> int:
        return int(self.n_classes)

    def declared_loss(self) -> str:
        return "label_ranking_hinge"

    def declared_domain(self) -> Domain:
        return Domain("unconstrained")

    def resolve_dim(self, requested: int | None, horizon: int | None = None) -> int:
        k, s = int(self.n_classes), int(self.target_features)
        dim = 40 * k if requested is None else int(requested)
        if dim % k or dim // k < k * s:
            raise ConfigError(
                self.label(),
                "n_actions",
                f"the dimension k·d of w_t must be a multiple of k = {k} with d ≥ k·"
                f"target_features = {k * s} features (at least {k * k * s}), got {dim}",
            )
        return dim

    def feature_bound(self) -> float | None:
        return float(np.sqrt(self._d)) if hasattr(self, "_d") else None

    def gradient_bound(self) -> float | None:
        return None

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        k = int(spec.n_classes)
        d = int(spec.dim) // k
        s = int(self.target_features)
        self._k, self._d = k, d
        self._rngs = list(rngs)
        targets = np.zeros((len(self._rngs), k, d))
        for i, rng in enumerate(self._rngs):
            words = rng.permutation(d)[: k * s].reshape(k, s)  # distinct keywords per label
            np.put_along_axis(targets[i], words, 1.0, axis=1)
        self._u = targets
        self._start_stream()

    def target(self) -> np.ndarray:
        """The hidden target ``U`` of every replicate, flattened (R, k·d)."""
        return self._u.reshape(len(self._rngs), -1).copy()

    def _generate(self, n: int) -> RoundData:
        k, d = self._k, self._d
        n_rep = len(self._rngs)
        x = np.empty((n_rep, n, d))
        y = np.empty((n_rep, n))
        for i, rng in enumerate(self._rngs):
            u = rng.random((n, d + 2 * k))
            x[i] = (u[:, :d] < float(self.density)).astype(np.float64)
            scores = x[i] @ self._u[i].T + JITTER * u[:, d : d + k]
            mask = scores >= float(self.threshold)
            rows = np.arange(n)
            mask[rows, np.argmax(scores, axis=1)] |= ~mask.any(axis=1)
            full = mask.all(axis=1)
            mask[rows[full], np.argmin(scores[full], axis=1)] = False
            mask ^= u[:, d + k :] < float(self.noise)
            y[i] = relevant_code(mask)
        return RoundData(x=x, y=y)

    @classmethod
    def _unit_test_params(cls):
        yield {}
