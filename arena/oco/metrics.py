"""Streaming metrics of the OCO, classification, multiclass and regression protocols.

Notation: the learner plays ``w_t`` and suffers ``f_t(w_t)``; ``F_t(u) = Σ_{s≤t} f_s(u)``.

* ``loss`` — ``Σ_{s≤t} f_s(w_s)``;
* ``mistakes`` — classification: ``#{s ≤ t : y_s ⟨w_s, x_s⟩ ≤ 0}`` (a zero margin is a mistake);
  multiclass: ``#{s ≤ t : ŷ_s ≠ y_s}`` (the 0-1 loss; a tie for the top score is a mistake);
* ``regret`` — ``Σ f_s(w_s) − min_{u∈K} F_t(u)``, the best fixed comparator in hindsight within the
  game's domain K (param ``radius``: NaN = K itself, r = the L2 ball of radius r, for unconstrained
  learners). Exact closed forms for linear losses (running ``Σ g_s``, O(d) state), exact for the
  squared loss by streaming sufficient statistics (``Σ x xᵀ``, ``Σ y x``, ``Σ y²``: O(d²) state),
  and a numerical convex solve at checkpoints for hinge, absolute, logistic and multiclass hinge
  losses, which must keep the examples (O(t·d) state; refused above :data:`MAX_STORED_FLOATS`);
* ``comparator_regret`` — ``Σ f_s(w_s) − F_t(c·u*)`` for the adversary's declared comparator
  ``u*`` (param ``c``), for unconstrained learners whose guarantee depends on ``‖u‖``;
* ``dynamic_regret`` — ``Σ f_s(w_s) − Σ_s min_{u∈K} f_s(u)`` (per-round best comparator);
* ``path_length`` — ``Σ_{s≥2} ‖u*_s − u*_{s−1}‖₂`` of those per-round minimizers (the
  minimum-norm one where it is not unique; see :func:`arena.oco.hindsight.per_round_best`).

References
----------
Shalev-Shwartz 2007, §2.2 (R(u, T) and best in hindsight); Srebro, Lecture 16 (regret against
the ball, whose best comparator for linear losses is ``−B v/‖v‖₂``); Kotłowski 2017, §2
(comparator-dependent regret of unconstrained learners); Zinkevich 2003 (dynamic regret and path
length).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

import numpy as np

from arena.metric import Metric, Record
from arena.oco.components import (
    INSTANCE_RANKING,
    KESLER,
    LABEL_RANKING,
    MULTICLASS,
    feature_dim,
)
from arena.oco.domains import Domain
from arena.oco.literal import round_loss
from arena.oco.losses import (
    RoundData,
    dense_features,
    dense_gradient,
    evaluate,
    multiclass_hinge,
)
from arena.spec import GameSpec

MAX_STORED_FLOATS = 50_000_000
"""Largest metric state (floats, all replicates) a metric may keep: 400 MB."""


class OCOBlock(NamedTuple):
    """One chunk of consecutive rounds of R replicates, as the OCO metrics see it.

    Attributes
    ----------
    w : ndarray (R, n, d) or None
        Points played; None in a game played through predictions, where no active metric
        reads points (:attr:`OCOMetric.reads_points`).
    values : ndarray (R, n)
        ``f_t(w_t)``.
    grads : ndarray (R, n, d) or None
        The arena's subgradients at ``w_t``; None on a sparse stream (features
        :class:`~arena.oco.losses.SparseRows`), where they are ``dloss·x`` (+ σ(w − z)) and
        :meth:`dense_grads` forms them.
    data : RoundData
        The rounds' data with a round axis.
    predictions : ndarray (R, n) or None
        ``⟨w_t, x_t⟩`` for example-based losses.
    t0 : int
        First round of the chunk (1-based).
    dloss : ndarray (R, n) or None
        ``ℓ'(ŷ_t, y_t)`` for example-based losses.
    """

    w: np.ndarray
    values: np.ndarray
    grads: np.ndarray | None
    data: RoundData
    predictions: np.ndarray | None
    t0: int
    dloss: np.ndarray | None = None

    def dense_grads(self, sigma: float) -> np.ndarray:
        """Return the subgradients (R, n, d), formed from ``dloss`` and sparse features if need
        be (O(R·n·d)); ``sigma`` is the game's σ."""
        if self.grads is not None:
            return self.grads
        return dense_gradient(self.dloss, self.data, sigma, self.w)


class OCOCore:
    """Running totals of an OCO game (rounds completed, cumulative learner loss, mistakes)."""

    def __init__(self, n_replicates: int, dim: int):
        self.t = 0
        self.learner = np.zeros(n_replicates)
        self.mistakes = np.zeros(n_replicates)
        self.last_w: np.ndarray | None = np.zeros((n_replicates, dim))
        """The last point played (R, d); None in a game played through predictions."""


@dataclass(frozen=True, kw_only=True)
class OCORecord(Record):
    """The literal record of one replicate of an OCO game after round ``t`` (every round).

    Attributes
    ----------
    w : ndarray, shape (t, d)
        The points ``w_s`` played.
    values : ndarray, shape (t,)
        ``f_s(w_s)``, evaluated by the textbook formulas (:mod:`arena.oco.literal`).
    grads : ndarray, shape (t, d)
        The subgradients at ``w_s`` the player was shown.
    data : RoundData
        The rounds' data with the round axis first (``g`` (t, d) or ``x`` (t, d'), ``y`` (t,);
        ``z`` (t, d) for σ-terms), so row s of it is round s + 1's example.
    predictions : ndarray, shape (t,), optional
        ``⟨w_s, x_s⟩`` (the predicted label in ``multiclass``); None for linear losses.
    """

    w: np.ndarray
    values: np.ndarray
    grads: np.ndarray
    data: RoundData
    predictions: np.ndarray | None = None


def learner_loss_bruteforce(record: OCORecord) -> float:
    """Return ``Σ_{s≤t} f_s(w_s)``, added round by round."""
    return sum(float(v) for v in record.values)


class OCOMetric(Metric):
    """Base of metrics of the OCO protocols: ``advance(block: OCOBlock, core: OCOCore)``.

    **contract — points.** ``reads_points`` says whether ``advance`` or ``values`` read the
    points played (``block.w``, ``core.last_w``). True by default (a plugin metric is assumed to
    read them); a metric that reads only losses, predictions, ``dloss`` and the data sets it
    False. When every active metric says False, no trace is written, and the player plays a
    sparse game through predictions (:meth:`~arena.oco.components.OCOPlayer.plays_predictions`),
    the engine never materializes ``w_t``: ``block.w`` and ``core.last_w`` are then None.
    """

    protocols: ClassVar[frozenset[str] | None] = frozenset(
        {"oco", "classification", "regression", MULTICLASS}
    )
    reads_points: ClassVar[bool] = True


class OCOLoss(OCOMetric):
    """Cumulative loss ``Σ_{s≤t} f_s(w_s)`` of the learner."""

    reads_points: ClassVar[bool] = False
    protocols = frozenset({"oco", "classification", "regression", *KESLER, INSTANCE_RANKING})

    name = "loss"

    def values(self, core: OCOCore) -> np.ndarray:
        return core.learner[:, None].copy()

    def reference(self, record: OCORecord, param: float) -> float:
        """The brute-force definition: :func:`learner_loss_bruteforce`."""
        return learner_loss_bruteforce(record)


class Mistakes(OCOMetric):
    """Number of mistakes ``#{s ≤ t : y_s⟨w_s, x_s⟩ ≤ 0}`` in online classification.

    A zero margin counts as a mistake, as the mistake bounds of Shalev-Shwartz 2007, §5.1,
    require. In ``multiclass`` it counts ``ŷ_s ≠ y_s`` (the cumulative 0-1 loss), where a tie
    between the true label and another for the top score is a mistake (§5.3.2). In
    ``label_ranking`` it counts the rounds with a ranking mistake (prediction −1, Ch. 8).
    """

    reads_points: ClassVar[bool] = False

    name = "mistakes"
    protocols = frozenset({"classification", MULTICLASS, LABEL_RANKING})

    def values(self, core: OCOCore) -> np.ndarray:
        return core.mistakes[:, None].copy()

    def reference(self, record: OCORecord, param: float) -> float:
        """The rounds counted one by one: ``y_s⟨w_s, x_s⟩ ≤ 0``, or ``ŷ_s ≠ y_s`` in multiclass."""
        multiclass = record.spec.protocol in KESLER
        count = 0
        for pred, y in zip(record.predictions, record.data.y, strict=True):
            count += (pred != y) if multiclass else (y * pred <= 0.0)
        return float(count)


def _float_or_nan(value: Any) -> float:
    """``float(value)``, also accepting YAML's and Hydra's spellings of NaN (``.nan``, ``nan``)."""
    if isinstance(value, str) and value.strip().lower() in (".nan", "nan", "null", "none"):
        return math.nan
    if value is None:
        return math.nan
    return float(value)


def _comparator_domain(domain: Domain, radius: float) -> Domain:
    if math.isnan(radius):
        return domain
    if math.isinf(radius):
        return Domain("unconstrained")
    return Domain("ball", float(radius))


class OCORegret(OCOMetric):
    """Regret to the best fixed comparator in hindsight, ``Σ f_s(w_s) − min_{u∈K} F_t(u)``.

    Parameters
    ----------
    radius : list of float
        Comparator sets: NaN is the game's domain; ``r > 0`` is the L2 ball of radius r (useful
        for unconstrained learners, whose regret against all of ℝ^d is often infinite); ``inf``
        is ℝ^d explicitly (allowed for the hinge and multiclass hinge losses, whose minimum over ℝ^d
        is attained, but not by default: their minimizers are arbitrarily large separators). In
        ``multiclass`` the comparator is ``W ∈ ℝ^{k×d'}`` (all linear multiclass predictors for
        ``inf``) and the ball is the Frobenius ball ``‖W‖_F ≤ r``.

    Notes
    -----
    Linear losses: ``min_{u∈K} ⟨G_t, u⟩`` in closed form (ball ``−r‖G_t‖``, box ``−r‖G_t‖₁``,
    simplex ``min_i G_{t,i}``), with the σ-term an isotropic quadratic solved by projection.
    Squared loss: ``F_t(u) = ½uᵀH u − hᵀu + c`` from streamed sums, minimized exactly (trust-region
    subproblem on the ball). Hinge, absolute and logistic: a convex solve over the stored examples
    at each checkpoint (:func:`arena.oco.hindsight.best_examples`); multiclass hinge: an exact LP
    over them on ℝ^{kd}, a box or the simplex (:func:`arena.oco.hindsight.best_multiclass`; its
    ball comparator, a second-order cone program, is not applicable). Unbounded comparator
    problems (linear losses on ℝ^d, logistic on ℝ^d) are not applicable; set ``radius``.
    """

    reads_points: ClassVar[bool] = False

    name = "regret"
    param_name = "radius"

    def __init__(self, radius=(math.nan,)):
        self.radius = radius

    def param_values(self, spec: GameSpec) -> list[float]:
        return self._param_list(
            self.radius,
            _float_or_nan,
            lambda v: None if (math.isnan(v) or v > 0) else "must be > 0, inf or NaN",
        )

    def game_reason(self, spec: GameSpec) -> str | None:
        kind = spec.loss
        for r in self.param_values(spec):
            dom = _comparator_domain(spec.domain, r)
            # NaN (the default) is cautious about ℝ^d; inf asks for ℝ^d explicitly, refused only
            # where the infimum is −∞ or not attained
            refused = (
                ("linear", "logistic")
                if math.isinf(r)
                else ("linear", "logistic", "hinge", "multiclass_hinge")
            )
            if dom.kind == "unconstrained" and kind in refused:
                if not spec.sigma:
                    # linear: −∞; logistic on separable data: approached at infinity; hinge:
                    # attained by arbitrarily large separators (Kotłowski 2017's unconstrained
                    # setting: pair the best comparator with a radius)
                    return (
                        f"the best comparator over ℝ^d is unbounded or not attained for {kind} "
                        "losses; set metrics.regret.radius=[...]"
                    )
            if kind == "multiclass_hinge" and dom.kind == "ball":
                # a second-order cone program (hindsight.best_multiclass says why it is left out)
                return (
                    "the multiclass hinge's best comparator in a ball is not implemented; "
                    "set metrics.regret.radius=[inf] (every linear multiclass predictor)"
                )
        return _History.reason(spec)

    def start(self, spec: GameSpec) -> None:
        super().start(spec)
        self._radii = self.param_values(spec)
        self._history = _History(spec)

    def advance(self, block: OCOBlock, core: OCOCore) -> None:
        self._history.add(block.data)

    def _best(self, dom: Domain) -> np.ndarray:
        from arena.oco import hindsight

        spec, hist = self._spec, self._history
        t, sigma = hist.t, float(spec.sigma)
        if spec.loss == "linear":
            if not sigma:
                return hindsight.best_linear(hist.g_sum, dom)
            # Σ ⟨g,u⟩ + σ/2‖u − z‖² = ½(σt)‖u‖² − ⟨σZ − G, u⟩ + σ/2 Σ‖z‖²
            h = sigma * hist.z_sum - hist.g_sum
            c = 0.5 * sigma * hist.z_sq
            return hindsight.best_quadratic(
                None, h, c, dom, isotropic=np.full(spec.n_replicates, sigma * t)
            )
        if spec.loss == "multiclass_hinge":
            return hindsight.best_multiclass(hist.X[:, :t], hist.Y[:, :t], spec.n_classes, dom)
        if spec.loss == "squared":
            H, h, c = hist.H, hist.h, hist.c
            if sigma:
                H = H + sigma * t * np.eye(spec.dim)
                h = h + sigma * hist.z_sum
                c = c + 0.5 * sigma * hist.z_sq
            return hindsight.best_quadratic(H, h, c, dom)
        return hindsight.best_examples(
            spec.loss,
            hist.X[:, :t],
            hist.Y[:, :t],
            dom,
            sigma=sigma,
            z_sum=hist.z_sum if sigma else None,
            z_sqsum=hist.z_sq if sigma else None,
            t=t,
        )

    def values(self, core: OCOCore) -> np.ndarray:
        domain = self._spec.domain
        cols = [core.learner - self._best(_comparator_domain(domain, r)) for r in self._radii]
        return np.stack(cols, axis=1)

    def reference(self, record: OCORecord, param: float) -> float:
        """The brute-force definition: :func:`regret_bruteforce`."""
        return regret_bruteforce(record, float(param))


class ComparatorRegret(OCOMetric):
    """Regret ``Σ f_s(w_s) − F_t(c·u*)`` against the adversary's declared comparator ``u*``.

    Parameters
    ----------
    c : list of float
        Scales of the comparator (``c·u*``); unconstrained learners' guarantees grow with ``‖u‖``
        (e.g. KT's ``‖u‖√(T ln(1 + T²‖u‖²))``, Kotłowski 2017's ``‖u‖_{A_T}``-penalized bounds).

    Notes
    -----
    Requires the adversary oracle ``comparator``. A comparator fixed after ``reset`` is streamed
    (``F_t(c·u*)`` accumulated chunk by chunk, O(d) state). An adversary whose comparator is built
    from the play (``comparator_moves``, e.g. ``u* = (y_1, …, y_t)`` of the orthogonal-basis
    construction) is re-read at each checkpoint and evaluated on the whole history: running
    ``Σ g`` for linear losses, ``Σ x xᵀ, Σ y x, Σ y²`` for the squared loss, the stored examples
    otherwise (refused above :data:`MAX_STORED_FLOATS`).
    """

    reads_points: ClassVar[bool] = False

    name = "comparator_regret"
    param_name = "c"
    requires = frozenset({"comparator"})

    def __init__(self, c=(0.5, 1.0, 2.0, 4.0)):
        self.c = c

    def param_values(self, spec: GameSpec) -> list[float]:
        return self._param_list(
            self.c, float, lambda v: None if math.isfinite(v) else "must be finite"
        )

    def applicable(self, player: Any, adversary: Any) -> str | None:
        self._moves = bool(getattr(adversary, "comparator_moves", False))
        return super().applicable(player, adversary)

    def attach(self, player: Any, adversary: Any) -> None:
        self._adversary = adversary

    def game_reason(self, spec: GameSpec) -> str | None:
        return _History.reason(spec) if self._moves else None

    def start(self, spec: GameSpec) -> None:
        super().start(spec)
        self._scales = np.asarray(self.param_values(spec), dtype=np.float64)
        self._comp = np.zeros((spec.n_replicates, self._scales.size))
        if self._moves:
            self._history = _History(spec)
        else:
            self._u = self._read(spec)

    def _read(self, spec: GameSpec) -> np.ndarray:
        u = np.asarray(self._adversary.comparator(), dtype=np.float64)
        if u.shape != (spec.n_replicates, spec.dim) or not np.isfinite(u).all():
            raise ValueError(
                f"comparator() must return finite values of shape {(spec.n_replicates, spec.dim)}"
            )
        return u

    def advance(self, block: OCOBlock, core: OCOCore) -> None:
        if self._moves:
            self._history.add(block.data)
            return
        spec = self._spec
        for k, c in enumerate(self._scales):
            vals, _, _, _ = evaluate(spec.loss, spec.sigma, (c * self._u)[:, None, :], block.data)
            self._comp[:, k] += vals.sum(axis=1)

    def values(self, core: OCOCore) -> np.ndarray:
        if self._moves:
            u = self._read(self._spec)
            for k, c in enumerate(self._scales):
                self._comp[:, k] = self._history.total_loss(c * u)
        return core.learner[:, None] - self._comp

    def reference(self, record: OCORecord, param: float) -> float:
        """``Σ_s f_s(w_s) − Σ_s f_s(c·u*)`` with every round's loss at ``c·u*`` evaluated by the
        textbook formulas, ``u*`` the comparator the adversary declares after round t (it may
        be built from the play so far)."""
        spec = record.spec
        comparator = np.asarray(record.adversary.comparator(), dtype=np.float64)
        u = param * comparator[record.replicate]
        total = sum(
            round_loss(spec.loss, spec.sigma, u, record.data, s)[0] for s in range(record.t)
        )
        return learner_loss_bruteforce(record) - total


class _History:
    """What a comparator needs to know of ``F_t``: sums for linear and squared losses, the stored
    examples for the others (O(t·d))."""

    def __init__(self, spec: GameSpec):
        n_rep, dim = spec.n_replicates, spec.dim
        self.spec, self.t = spec, 0
        self.g_sum = np.zeros((n_rep, dim))
        self.z_sum = np.zeros((n_rep, dim))
        self.z_sq = np.zeros(n_rep)
        if spec.loss == "squared":
            self.H = np.zeros((n_rep, dim, dim))
            self.h = np.zeros((n_rep, dim))
            self.c = np.zeros(n_rep)
        elif spec.loss != "linear":
            self.X = np.empty((n_rep, spec.horizon, feature_dim(spec)))
            self.Y = np.empty((n_rep, spec.horizon))

    @staticmethod
    def reason(spec: GameSpec) -> str | None:
        n_rep, dim, horizon = spec.n_replicates, spec.dim, spec.horizon
        if spec.loss == "squared" and n_rep * dim * dim > MAX_STORED_FLOATS:
            return f"the squared-loss statistics need R·d² = {n_rep * dim * dim} floats"
        if spec.loss in ("hinge", "absolute", "logistic", "multiclass_hinge"):
            need = n_rep * horizon * (feature_dim(spec) + 1)
            if need > MAX_STORED_FLOATS:
                return f"the {spec.loss} history needs R·T·(d+1) = {need} floats"
        return None

    def add(self, data: RoundData) -> None:
        n = (data.g if data.g is not None else data.y).shape[1]
        if self.spec.sigma and data.z is not None:
            self.z_sum += data.z.sum(axis=1)
            self.z_sq += np.einsum("rnd,rnd->r", data.z, data.z)
        if self.spec.loss == "linear":
            self.g_sum += data.g.sum(axis=1)
        elif self.spec.loss == "squared":
            x = dense_features(data.x)  # O(R·n·d), as the O(R·d²) statistics themselves
            self.H += np.einsum("rni,rnj->rij", x, x)
            self.h += np.einsum("rn,rni->ri", data.y, x)
            self.c += 0.5 * np.einsum("rn,rn->r", data.y, data.y)
        else:
            self.X[:, self.t : self.t + n] = dense_features(data.x)
            self.Y[:, self.t : self.t + n] = data.y
        self.t += n

    def total_loss(self, u: np.ndarray) -> np.ndarray:
        """Return ``F_t(u) = Σ_{s≤t} f_s(u)`` for one point per replicate, shape (R,)."""
        from arena.oco.losses import prediction_loss

        spec, t = self.spec, self.t
        if spec.loss == "linear":
            total = np.einsum("rd,rd->r", self.g_sum, u)
        elif spec.loss == "squared":
            total = (
                0.5 * np.einsum("rd,rde,re->r", u, self.H, u)
                - np.einsum("rd,rd->r", self.h, u)
                + self.c
            )
        elif spec.loss == "multiclass_hinge":
            total = multiclass_hinge(u[:, None, :], self.X[:, :t], self.Y[:, :t])[0].sum(axis=1)
        else:
            pred = np.einsum("rnd,rd->rn", self.X[:, :t], u)
            total = prediction_loss(spec.loss, pred, self.Y[:, :t])[0].sum(axis=1)
        if spec.sigma:
            sq = np.einsum("rd,rd->r", u, u)
            total = total + 0.5 * spec.sigma * (
                t * sq - 2 * np.einsum("rd,rd->r", self.z_sum, u) + self.z_sq
            )
        return total


class _PerRoundBest(OCOMetric):
    """Shared state of ``dynamic_regret`` and ``path_length`` (per-round minimizers)."""

    reads_points: ClassVar[bool] = False

    def game_reason(self, spec: GameSpec) -> str | None:
        if spec.domain.kind == "unconstrained" and spec.loss == "linear" and not spec.sigma:
            return "min_u ⟨g_t, u⟩ over ℝ^d is −∞ for linear losses"
        if spec.sigma and spec.loss != "linear" and spec.domain.kind in ("box", "simplex"):
            return "per-round minimizers of example losses with σ > 0 on a box or simplex"
        if spec.loss == "multiclass_hinge" and spec.domain.kind not in ("unconstrained", "ball"):
            return "per-round minimizers of the multiclass hinge on a box or simplex"
        return None

    def start(self, spec: GameSpec) -> None:
        super().start(spec)
        self._sum_best = np.zeros(spec.n_replicates)
        self._path = np.zeros(spec.n_replicates)
        self._last: np.ndarray | None = None

    def advance(self, block: OCOBlock, core: OCOCore) -> None:
        from arena.oco import hindsight

        spec, data = self._spec, block.data
        source = data.g if spec.loss == "linear" else dense_features(data.x)
        best, argmin = hindsight.per_round_best(
            spec.loss, spec.domain, source, data.y, spec.sigma, data.z, spec.n_classes
        )
        self._sum_best += best.sum(axis=1)
        if self._last is not None:
            self._path += np.linalg.norm(argmin[:, 0] - self._last, axis=-1)
        if argmin.shape[1] > 1:
            self._path += np.linalg.norm(np.diff(argmin, axis=1), axis=-1).sum(axis=1)
        self._last = argmin[:, -1].copy()


class OCODynamicRegret(_PerRoundBest):
    """Dynamic regret ``Σ f_s(w_s) − Σ_s min_{u∈K} f_s(u)`` (comparator = per-round best)."""

    name = "dynamic_regret"

    def values(self, core: OCOCore) -> np.ndarray:
        return (core.learner - self._sum_best)[:, None]

    def reference(self, record: OCORecord, param: float) -> float:
        """``Σ_s f_s(w_s)`` minus the per-round minima of :func:`per_round_bruteforce`."""
        return learner_loss_bruteforce(record) - per_round_bruteforce(record)[0]


class PathLength(_PerRoundBest):
    """Path length ``Σ_{s≥2} ‖u*_s − u*_{s−1}‖₂`` of the per-round best comparators."""

    name = "path_length"

    def values(self, core: OCOCore) -> np.ndarray:
        return self._path[:, None].copy()

    def reference(self, record: OCORecord, param: float) -> float:
        """The path of the per-round minimizers of :func:`per_round_bruteforce`."""
        return per_round_bruteforce(record)[1]


# ----------------------------------------------------------------------------------------------
# brute-force definitions (the metrics' references)


def regret_bruteforce(record: OCORecord, radius: float) -> float:
    """Return ``Σ_s f_s(w_s) − min_{u∈K} Σ_s f_s(u)`` of one replicate from its whole record.

    The best comparator is computed over every stored example, for the squared loss too (where
    the streaming metric keeps sufficient statistics): the closed form of the domain for linear
    losses (:meth:`~arena.oco.domains.Domain.min_linear`), the quadratic programme of the σ-term
    (:func:`arena.oco.hindsight.best_quadratic`), a convex solve over the examples
    (:func:`arena.oco.hindsight.best_examples`) or the multiclass LP
    (:func:`arena.oco.hindsight.best_multiclass`). ``radius``: NaN the game's domain, r the ball
    of radius r, inf ℝ^d.
    """
    from arena.oco import hindsight

    spec, t = record.spec, record.t
    kind, sigma = spec.loss, spec.sigma
    learner = learner_loss_bruteforce(record)
    dom = spec.domain if math.isnan(radius) else Domain("ball", float(radius))
    if math.isinf(radius):
        dom = Domain("unconstrained")
    g, x, y, z = (
        None if a is None else np.asarray(a)[None]  # one replicate: (1, t, ...)
        for a in (record.data.g, record.data.x, record.data.y, record.data.z)
    )
    if kind == "multiclass_hinge":
        return learner - float(hindsight.best_multiclass(x, y, spec.n_classes, dom)[0])
    if kind == "linear":
        g_sum = g.sum(axis=1)
        if not sigma:
            best = dom.min_linear(g_sum)[0]
        else:
            z_sum = np.zeros_like(g_sum) if z is None else z.sum(axis=1)
            z_sq = np.zeros(1) if z is None else (z * z).sum(axis=(1, 2))
            best = hindsight.best_quadratic(
                None,
                sigma * z_sum - g_sum,
                0.5 * sigma * z_sq,
                dom,
                isotropic=np.full(1, sigma * t),
            )
        return learner - float(best[0])
    z_sum = None if (z is None or not sigma) else z.sum(axis=1)
    z_sq = None if (z is None or not sigma) else (z * z).sum(axis=(1, 2))
    if sigma and z is None:
        z_sum, z_sq = np.zeros((1, spec.dim)), np.zeros(1)
    best = hindsight.best_examples(kind, x, y, dom, sigma=sigma, z_sum=z_sum, z_sqsum=z_sq, t=t)
    return learner - float(best[0])


def per_round_bruteforce(record: OCORecord) -> tuple[float, float]:
    """Return ``(Σ_s min_{u∈K} f_s(u), Σ_{s≥2} ‖u*_s − u*_{s−1}‖₂)``, round by round.

    Each round's minimizer is solved alone (:func:`arena.oco.hindsight.per_round_best` on a
    one-round, one-replicate block), and the path adds the distances between consecutive ones.
    """
    from arena.oco import hindsight

    spec, data = record.spec, record.data
    total, path, last = 0.0, 0.0, None
    for s in range(record.t):
        source = data.g[s] if spec.loss == "linear" else data.x[s]
        best, argmin = hindsight.per_round_best(
            spec.loss,
            spec.domain,
            np.asarray(source)[None, None],
            None if data.y is None else np.asarray(data.y[s])[None, None],
            spec.sigma,
            None if data.z is None else np.asarray(data.z[s])[None, None],
            spec.n_classes,
        )
        total += float(best[0, 0])
        if last is not None:
            path += float(np.linalg.norm(argmin[0, 0] - last))
        last = argmin[0, 0]
    return total, path


OCO_DEFAULT_METRICS: dict[str, dict] = {
    "loss": {},
    "mistakes": {},
    "regret": {},
    "comparator_regret": {"c": [0.5, 1.0, 2.0, 4.0]},
    "dynamic_regret": {},
    "path_length": {},
    "online_to_batch": {},
    "bound": {},
    "lower_bound": {},
    "sketch_error": {"k": [10]},
}
"""The default metric set of an OCO / classification / regression game."""
