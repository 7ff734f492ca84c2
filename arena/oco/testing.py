"""Minimal OCO components for doctests, conformance checks and engine tests.

:class:`ZeroPlayer` always plays ``w_t = 0`` (the trivial algorithm that always predicts zero,
Kotłowski 2017, §1); the adversaries are the smallest oblivious and
adaptive games: a constant linear loss and the "anti-gradient" adaptive linear loss ``g_t =
−G·w_t/‖w_t‖`` (a standard adaptive adversary; Srebro, Lecture 16).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from arena.errors import ConfigError
from arena.oco.components import OCO_FAMILY, AdaptiveOCOAdversary, ObliviousOCOAdversary, OCOPlayer
from arena.oco.domains import Domain
from arena.oco.losses import LOSS_KINDS, Feedback, RoundData, relevant_code
from arena.spec import AdversaryTags, GameSpec, PlayerTags


class ZeroPlayer(OCOPlayer):
    """The player that always plays ``w_t = 0`` (in the simplex: the uniform point).

    Examples
    --------
    >>> from arena import play
    >>> df = play(ZeroPlayer(), ConstantLinear(), n_actions=2, horizon=10, metrics=["regret"])
    >>> float(df.value.iloc[-1])  # ‖Σ g_t‖ = 10 on the unit ball
    10.0
    """

    name = "zero"
    tags: ClassVar[PlayerTags] = PlayerTags(
        protocols=OCO_FAMILY, randomized=False, losses=frozenset(LOSS_KINDS)
    )

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        point = np.zeros(spec.dim)
        if spec.domain.kind == "simplex":
            point[:] = 1.0 / spec.dim
        self._w = np.tile(point, (spec.n_replicates, 1))

    def predict(self, x: np.ndarray | None = None) -> np.ndarray:
        return self._w.copy()

    def update(self, fb: Feedback) -> None:
        pass


class ConstantLinear(ObliviousOCOAdversary):
    """Linear losses ``g_t = G·e_1`` every round on the ball of radius ``radius``.

    Parameters
    ----------
    G : float
        Gradient norm.
    radius : float
        Radius of the ball domain.
    """

    name = "constant_linear"
    tags: ClassVar[AdversaryTags] = AdversaryTags(protocol="oco", oblivious=True)

    def __init__(self, G=1.0, radius=1.0):
        self.G = G
        self.radius = radius

    def declared_domain(self) -> Domain:
        return Domain("ball", float(self.radius))

    def gradient_bound(self) -> float:
        return float(self.G)

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._spec = spec

    def data_block(self, t0: int, n: int) -> RoundData:
        g = np.zeros((self._spec.n_replicates, n, self._spec.dim))
        g[..., 0] = float(self.G)
        return RoundData(g=g)


class AntiGradient(AdaptiveOCOAdversary):
    """Adaptive linear losses ``g_t = −G·w_t/‖w_t‖`` (``G·e_1`` when ``w_t = 0``) on a ball.

    Parameters
    ----------
    G : float
        Gradient norm.
    radius : float
        Radius of the ball domain.
    """

    name = "anti_gradient"
    tags: ClassVar[AdversaryTags] = AdversaryTags(protocol="oco", oblivious=False)

    def __init__(self, G=1.0, radius=1.0):
        self.G = G
        self.radius = radius

    def declared_domain(self) -> Domain:
        return Domain("ball", float(self.radius))

    def gradient_bound(self) -> float:
        return float(self.G)

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._spec = spec

    def reveal(self, t: int, w: np.ndarray) -> RoundData:
        norms = np.linalg.norm(w, axis=1, keepdims=True)
        e1 = np.zeros_like(w)
        e1[:, 0] = 1.0
        direction = np.where(norms > 0, -w / np.where(norms > 0, norms, 1.0), e1)
        return RoundData(g=float(self.G) * direction)


class ProjectedGradient(OCOPlayer):
    """Greedy projected gradient descent ``w_{t+1} = Π_K(w_t − (eta/√t)·g_t)`` (a partner).

    The smallest learning player, used by the conformance suite and engine tests; the registered,
    tuned and compiled version is ``ogd`` (:mod:`arena.players.ogd`).

    Parameters
    ----------
    eta : float
        Step-size scale.
    """

    name = "projected_gradient"
    tags: ClassVar[PlayerTags] = PlayerTags(
        protocols=OCO_FAMILY, randomized=False, losses=frozenset(LOSS_KINDS)
    )

    def __init__(self, eta=0.5):
        self.eta = eta

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._domain = spec.domain
        self._t = 1
        start = np.zeros((spec.n_replicates, spec.dim))
        if spec.domain.kind == "simplex":
            start += 1.0 / spec.dim
        self._w = spec.domain.project(start)

    def predict(self, x: np.ndarray | None = None) -> np.ndarray:
        return self._w.copy()

    def update(self, fb: Feedback) -> None:
        self._w = self._domain.project(self._w - self.eta / np.sqrt(self._t) * fb.grad)
        self._t += 1


class GaussianData(ObliviousOCOAdversary):
    """Oblivious Gaussian linear losses ``g_t ~ N(0, I)`` on a chosen domain (a partner).

    :class:`GaussianClassification` and :class:`GaussianRegression` draw examples ``x_t ~ N(0, I)``
    labelled by a planted unit ``u*`` instead (``y = sign(⟨u*, x⟩ + 0.3ε)``, resp.
    ``⟨u*, x⟩ + 0.1ε``); ``u*`` is the declared comparator.

    Parameters
    ----------
    loss : str
        Loss family (:data:`arena.oco.losses.LOSS_KINDS`).
    domain : str
        Domain kind.
    radius : float
        Domain radius.
    sigma : float
        Strong-convexity weight (then ``z_t ~ 0.3·N(0, I)``).
    """

    name = "gaussian_data"
    tags: ClassVar[AdversaryTags] = AdversaryTags(
        protocol="oco", oblivious=True, oracle=frozenset({"comparator"})
    )

    def __init__(self, loss="linear", domain="ball", radius=1.0, sigma=0.0):
        self.loss = loss
        self.domain = domain
        self.radius = radius
        self.sigma = sigma

    def declared_domain(self) -> Domain:
        return Domain(self.domain, float(self.radius))

    def declared_loss(self) -> str:
        return self.loss

    def declared_sigma(self) -> float:
        return float(self.sigma)

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._spec = spec
        self._rngs = list(rngs)
        u = np.stack([g.standard_normal(spec.dim) for g in self._rngs])
        self._u = u / np.linalg.norm(u, axis=1, keepdims=True)

    def data_block(self, t0: int, n: int) -> RoundData:
        # one draw of n rows per replicate, a row per round: any split gives the same sequence
        d = self._spec.dim
        example = self.loss != "linear"
        width = d + (1 if example else 0) + (d if self.sigma else 0)
        draws = np.stack([rng.standard_normal((n, width)) for rng in self._rngs])
        z = 0.3 * draws[..., width - d :] if self.sigma else None
        if not example:
            return RoundData(g=draws[..., :d].copy(), z=z)
        x = draws[..., :d].copy()
        noise = draws[..., d]
        score = np.einsum("rnd,rd->rn", x, self._u)
        if self.tags.protocol == "classification":
            y = np.where(score + 0.3 * noise >= 0, 1.0, -1.0)
        else:
            y = score + 0.1 * noise
        return RoundData(x=x, y=y, z=z)

    def comparator(self) -> np.ndarray:
        return self._u.copy()


class GaussianClassification(GaussianData):
    """Gaussian examples with noisy ±1 labels from a planted separator (:class:`GaussianData`)."""

    name = "gaussian_classification"
    tags: ClassVar[AdversaryTags] = AdversaryTags(
        protocol="classification", oblivious=True, oracle=frozenset({"comparator"})
    )

    def __init__(self, loss="hinge", domain="unconstrained", radius=1.0, sigma=0.0):
        super().__init__(loss, domain, radius, sigma)


class GaussianRegression(GaussianData):
    """Gaussian examples with real targets from a planted ``u*``; see :class:`GaussianData`."""

    name = "gaussian_regression"
    tags: ClassVar[AdversaryTags] = AdversaryTags(
        protocol="regression", oblivious=True, oracle=frozenset({"comparator"})
    )

    def __init__(self, loss="squared", domain="ball", radius=1.0, sigma=0.0):
        super().__init__(loss, domain, radius, sigma)


class GaussianMulticlass(ObliviousOCOAdversary):
    """Gaussian features ``x_t ~ N(0, I)`` labelled ``argmax_r ⟨u_r, x_t⟩ + 0.3ε_r`` (a partner).

    The ``multiclass`` partner of the conformance suite: a planted ``U ∈ ℝ^{k×d'}`` (Gaussian,
    unit Frobenius norm, the declared comparator, flattened) and per-label Gaussian noise ε_r.
    ``n_actions`` is the dimension ``k·d'`` of ``w_t`` (default ``3k``).

    Parameters
    ----------
    n_classes : int
        k ≥ 2.
    loss : str
        ``multiclass_hinge``.
    domain : str
        Domain kind of ``w_t``.
    radius : float
        Domain radius.
    """

    name = "gaussian_multiclass"
    tags: ClassVar[AdversaryTags] = AdversaryTags(
        protocol="multiclass", oblivious=True, oracle=frozenset({"comparator"})
    )

    def __init__(self, n_classes=3, loss="multiclass_hinge", domain="unconstrained", radius=1.0):
        self.n_classes = n_classes
        self.loss = loss
        self.domain = domain
        self.radius = radius

    def declared_classes(self) -> int:
        return int(self.n_classes)

    def resolve_dim(self, requested: int | None, horizon: int | None = None) -> int:
        k = int(self.n_classes)
        dim = 3 * k if requested is None else int(requested)
        if dim % k:
            raise ConfigError(self.label(), "n_actions", f"must be a multiple of k = {k}")
        return dim

    def declared_domain(self) -> Domain:
        return Domain(self.domain, float(self.radius))

    def declared_loss(self) -> str:
        return self.loss

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._k = int(spec.n_classes)
        self._d = int(spec.dim) // self._k
        self._rngs = list(rngs)
        u = np.stack([g.standard_normal(self._k * self._d) for g in self._rngs])
        self._u = u / np.linalg.norm(u, axis=1, keepdims=True)

    def data_block(self, t0: int, n: int) -> RoundData:
        k, d = self._k, self._d
        draws = np.stack([rng.standard_normal((n, d + k)) for rng in self._rngs])
        x = draws[..., :d].copy()
        scores = np.einsum("rkd,rnd->rnk", self._u.reshape(-1, k, d), x) + 0.3 * draws[..., d:]
        return RoundData(x=x, y=np.argmax(scores, axis=-1).astype(np.float64))

    def comparator(self) -> np.ndarray:
        return self._u.copy()


class GaussianLabelRanking(GaussianMulticlass):
    """Gaussian features ``x_t ~ N(0, I)``, relevant labels ``⟨u_r, x_t⟩ + 0.3ε_r > 0`` (a partner).

    The ``label_ranking`` partner of the conformance suite: the planted ``U`` of
    :class:`GaussianMulticlass` (the declared comparator), a label relevant when its noisy score is
    positive, ``y_t = Σ_{r∈Y_t} 2^r`` (the set may be empty or full: such a round has no pair).
    """

    name = "gaussian_label_ranking"
    tags: ClassVar[AdversaryTags] = AdversaryTags(
        protocol="label_ranking", oblivious=True, oracle=frozenset({"comparator"})
    )

    def __init__(self, n_classes=3, loss="label_ranking_hinge", domain="unconstrained", radius=1.0):
        super().__init__(n_classes, loss, domain, radius)

    def data_block(self, t0: int, n: int) -> RoundData:
        k, d = self._k, self._d
        draws = np.stack([rng.standard_normal((n, d + k)) for rng in self._rngs])
        x = draws[..., :d].copy()
        scores = np.einsum("rkd,rnd->rnk", self._u.reshape(-1, k, d), x) + 0.3 * draws[..., d:]
        return RoundData(x=x, y=relevant_code(scores > 0.0))


class GaussianInstanceRanking(ObliviousOCOAdversary):
    """k = 3 Gaussian instances a round scored ``⟨u, x_i⟩ + 0.3ε_i`` (a partner).

    The ``instance_ranking`` partner of the conformance suite: a planted unit ``u ∈ ℝ^d`` (the
    declared comparator), the rows of ``X_t`` standard normal, the target scores real.
    """

    name = "gaussian_instance_ranking"
    tags: ClassVar[AdversaryTags] = AdversaryTags(
        protocol="instance_ranking", oblivious=True, oracle=frozenset({"comparator"})
    )

    def __init__(self, loss="ranking_avg", domain="unconstrained", radius=1.0):
        self.loss = loss
        self.domain = domain
        self.radius = radius

    def declared_classes(self) -> int:
        return 3

    def declared_domain(self) -> Domain:
        return Domain(self.domain, float(self.radius))

    def declared_loss(self) -> str:
        return self.loss

    def reset(self, spec: GameSpec, rngs: Sequence[np.random.Generator]) -> None:
        self._d = int(spec.dim)
        self._rngs = list(rngs)
        u = np.stack([g.standard_normal(self._d) for g in self._rngs])
        self._u = u / np.linalg.norm(u, axis=1, keepdims=True)

    def data_block(self, t0: int, n: int) -> RoundData:
        d = self._d
        draws = np.stack([rng.standard_normal((n, 3 * d + 3)) for rng in self._rngs])
        x = draws[..., : 3 * d].copy()
        y = np.einsum("rnkd,rd->rnk", x.reshape(*x.shape[:2], 3, d), self._u)
        return RoundData(x=x, y=y + 0.3 * draws[..., 3 * d :])

    def comparator(self) -> np.ndarray:
        return self._u.copy()
