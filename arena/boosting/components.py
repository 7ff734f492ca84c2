"""Component bases of the boosting protocol: boosters and the weak learners they own.

Round t (Luo 2016, §3.1.1 and §3.2.1; Beygelzimer, Hazan, Kale & Luo 2015, §2), for R replicates
at once:

1. the data adversary (a ``classification`` or ``regression`` stream, unchanged) shows ``x_t``;
2. the booster queries its N weak learners (each a stateful online learner, not a function),
   combines their outputs and predicts ``ŷ_t`` (a label ±1 or a score in classification, a real
   number in regression);
3. the arena reveals ``y_t`` and charges ``ℓ(ŷ_t, y_t)``;
4. the booster feeds its weak learners, each with an importance weight or a sampled 0/1 weight
   as its algorithm says (regression boosters: with the residual target of the linear loss they
   pass on), and updates its combination.

**Weak learners are batched over lanes.** A booster owns one :class:`WeakLearner` object with
``L = N`` independent *lanes* per replicate: ``predict(x)`` returns the (R, L) outputs of every
learner, ``update(x, target, weight)`` takes (R, L) targets and weights. Lane i's outputs depend
only on what lane i was fed and on its own random stream (the conformance suite checks this), so
a booster is N independent learners whose per-round work is one vectorized call. Every boosting
algorithm of the sources computes all N weights of a round from the N predictions before any
update (the weights depend on the partial votes ``s_t^{i−1}``, themselves functions of the
predictions), so nothing is lost by updating the lanes together.

**One update rule for classification and regression.** ``update`` takes a gradient step (or its
learner's equivalent) on the weighted example loss ``weight·ℓ(A(x), target)``. For the linear loss
``c·A(x)`` that online gradient boosting feeds (Beygelzimer et al. 2015, Algorithms 1–2), the
booster passes the target ``A(x) − c`` with weight 1 to a squared-loss learner: the gradient of
``½(v − (A(x) − c))²`` at ``v = A(x)`` is ``c``, the linear loss's.

References
----------
Luo 2016, §3.1 (online boosting for classification; Figure 3.1 is one round of this protocol) and
§3.2 (online gradient boosting); Beygelzimer, Hazan, Kale & Luo 2015, §2.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from arena import registry
from arena.base import Component, Footprint, declared_footprint, shape_text
from arena.components import Player
from arena.errors import ArenaError, ConfigError, GameError, mark_failure
from arena.params import InstanceOf, Interval, IsNone
from arena.spec import GameSpec, PlayerTags

TASKS = ("classification", "regression")
"""The hosted protocols, whose data adversaries a booster plays."""

LANE_STREAM_BYTES = 1000
"""Bytes of one lane's random stream (a ``numpy.random.Generator``; measured: about 990)."""

LANE_STREAM_OPS = 1e5
"""Work of creating one lane's stream (its SeedSequence hashing; measured 50–200 µs)."""

BOOSTER_LANE_ARRAYS = 8
"""Arrays of shape (R, N) a booster holds besides its learners (α, totals, the final layer's
state, a round's votes and weights): the estimate's multiplier."""

BASE_LANE_KEY = 2**32 - 1
"""Stream key of the protocol's own base learner (lanes of the booster use keys 0 … N−1)."""


@dataclass(frozen=True)
class WeakSpec:
    """What a weak learner is told before round 1.

    Parameters
    ----------
    task : str
        ``classification`` (outputs in {−1, +1}, targets ±1) or ``regression`` (real outputs in
        ``[−bound, bound]``).
    n_features : int
        Dimension d of ``x_t``.
    n_lanes : int
        Independent learners L per replicate (a booster's N).
    n_replicates : int
        Replicates R on the first axis of every array.
    horizon : int or None
        Rounds T of the game, if known.
    bound : float
        D: the largest ``|A(x)|`` a regression learner may output (Beygelzimer et al. 2015, §2:
        the base class is D-bounded); 1 in classification.
    lane_ids : tuple of int
        Which learner each lane is: lane j is the booster's learner ``lane_ids[j]`` (0-based; the
        protocol's base learner is :data:`BASE_LANE_KEY`), the key of the lane's stream. Empty
        means ``0 … L−1``. A learner whose behaviour depends on its index (``oracle``) reads it.
    replicate_ids : tuple of int
        The game's global replicate index of each row (empty: ``0 … R−1``), for messages.
    """

    task: str
    n_features: int
    n_lanes: int
    n_replicates: int = 1
    horizon: int | None = None
    bound: float = 1.0
    lane_ids: tuple[int, ...] = ()
    replicate_ids: tuple[int, ...] = ()

    def lanes(self) -> tuple[int, ...]:
        """The learner index of each lane (``lane_ids``, or ``0 … L−1``)."""
        return self.lane_ids or tuple(range(self.n_lanes))


OUTPUT_TOL = 1e-12
"""Relative slack on a regression weak learner's bound D (its outputs are clipped to it)."""


def check_weak_outputs(learner: WeakLearner, spec: WeakSpec, out: Any, round: int) -> None:
    """Raise :class:`~arena.errors.GameError` unless ``out`` is a valid ``predict`` of ``learner``.

    Valid: an (R, L) array of real numbers, in ``[−1, 1]`` in classification, finite and within
    ``[−D, D]`` in regression (:class:`WeakSpec`). A booster weighs its learners by edges
    ``y·h(x)`` that assume these ranges: a learner predicting 7.0 would give a weighted edge of
    −3.2 (outside [−½, ½]) and boost nonsense without a word. The registered learners answer
    labels (±1, which the conformance suite's ``check_weak_output_range`` demands); a
    confidence-rated answer inside [−1, 1] keeps every edge bounded, so play accepts it (the
    Vowpal Wabbit comparison's real-valued learner, ``benchmarks/bench_vw_boosting.py``). The
    error names the learner, the lane, the value, the round (``round``) and the replicate.

    Examples
    --------
    >>> from arena.boosting.testing import LaneSGD
    >>> spec = WeakSpec("classification", n_features=1, n_lanes=2, n_replicates=1)
    >>> check_weak_outputs(LaneSGD(), spec, np.array([[1.0, -1.0]]), round=3)
    >>> check_weak_outputs(LaneSGD(), spec, np.array([[1.0, 7.0]]), round=3)
    Traceback (most recent call last):
    ...
    arena.errors.GameError: weak learner lane_sgd LaneSGD(): predict gave 7.0 in lane 1, not in ...
    """
    from arena.validation import Who

    arr = np.asarray(out)
    shape = (spec.n_replicates, spec.n_lanes)
    # rendered only in a message: a repr from the signature costs more than the check itself
    who = Who("weak learner", learner)
    if arr.shape != shape or arr.dtype.kind not in "biuf":
        raise GameError(
            str(who),
            f"predict returned {arr.dtype.name} values of shape {arr.shape}, expected real "
            f"numbers of shape {shape} (replicates, lanes)",
            round=round,
        )
    if spec.task == "classification":
        bad = ~(np.abs(arr) <= 1.0)  # NaN fails too
        allowed = "not in [−1, 1] (a classification weak learner predicts a label or a confidence)"
    else:
        bad = ~(np.abs(arr) <= spec.bound * (1.0 + OUTPUT_TOL))  # NaN fails too
        allowed = f"not a finite value in [−D, D] = [−{spec.bound:g}, {spec.bound:g}]"
    if bad.any():
        r, lane = (int(i) for i in np.argwhere(bad)[0])
        ids = spec.replicate_ids or tuple(range(spec.n_replicates))
        raise GameError(
            str(who),
            f"predict gave {float(arr[r, lane])!r} in lane {lane}, {allowed}",
            round=round,
            replicate=int(ids[r]),
        )


def _outermost(cls: type, name: str, fn: Callable) -> Callable:
    """Return ``fn`` wrapped so that only the most derived override of ``name`` runs ``act``: a
    subclass calling ``super().predict(x)`` is checked (and counted) once, not per level."""

    def acts(self: WeakLearner) -> bool:
        return getattr(type(self), name) is wrapper

    if name == "reset":

        def wrapper(self, spec, rngs):
            fn(self, spec, rngs)
            if acts(self):
                self._checked_spec, self._rounds_fed = spec, 0

    elif name == "predict":

        def wrapper(self, x):
            out = fn(self, x)
            spec = getattr(self, "_checked_spec", None)
            if spec is not None and acts(self):
                check_weak_outputs(self, spec, out, self._rounds_fed + 1)
            return out

    else:

        def wrapper(self, x, target, weight):
            fn(self, x, target, weight)
            if acts(self) and hasattr(self, "_rounds_fed"):
                self._rounds_fed += 1

    functools.update_wrapper(wrapper, fn)
    wrapper._checks_weak_outputs = True  # type: ignore[attr-defined]
    return wrapper


class WeakLearner(Component):
    """Base of online weak learners, batched over replicates and lanes.

    Subclasses implement :meth:`reset`, :meth:`predict` and :meth:`update`, and list the tasks
    they learn in :attr:`tasks`. ``predict`` is pure; ``update`` must skip a lane whose weight is
    0 exactly (a sampling booster passes 0 to the learners it does not call), leaving its state
    bit for bit as it was.

    Every ``predict`` is validated (:func:`check_weak_outputs`: ±1 in classification, within
    ``[−D, D]`` in regression) whoever calls it, the booster or the protocol's base learner, so a
    learner that predicts 7.0 stops the game with a :class:`~arena.errors.GameError` naming it,
    the round and the replicate. The round is that of the learner's own updates (the boosters
    query their learners before feeding them each example); on held-out examples (``test_error``)
    it is the round after the checkpoint. The base class wraps the subclass's methods to do this
    (:meth:`__init_subclass__`), so plugin authors write plain ``reset``/``predict``/``update``.
    """

    kind: ClassVar[str] = "weak_learner"
    tasks: ClassVar[frozenset[str]] = frozenset(TASKS)
    conformance_protocol: ClassVar[str] = "boosting"
    """The protocol whose conformance checks apply (:func:`arena.testing.common.protocol_names`)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Wrap the class's own ``reset``, ``predict`` and ``update`` so that every prediction is
        validated and every update counted (:func:`_outermost`); the outputs are returned as
        they are, so results do not change by a bit."""
        super().__init_subclass__(**kwargs)
        for name in ("reset", "predict", "update"):
            fn = cls.__dict__.get(name)
            if callable(fn) and not getattr(fn, "_checks_weak_outputs", False):
                setattr(cls, name, _outermost(cls, name, fn))

    def reset(self, spec: WeakSpec, rngs: Sequence[Sequence[np.random.Generator]]) -> None:
        """Build the state of R × L learners; ``rngs[r][i]`` is lane i of replicate r's stream."""
        raise NotImplementedError

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Return every lane's output on ``x`` (R, d): shape (R, L), ±1 or in ``[−D, D]``."""
        raise NotImplementedError

    def update(self, x: np.ndarray, target: np.ndarray, weight: np.ndarray) -> None:
        """Learn from ``x`` (R, d) with per-lane targets and importance weights (R, L), ≥ 0."""
        raise NotImplementedError

    def answers_labels(self) -> bool:
        """Whether a classification lane answers labels ±1 (the default) rather than confidences
        in ``[−1, 1]`` (a learner answering its clipped score, as Vowpal Wabbit's do; every
        booster of the sources reads ``y·h(x)`` as a real edge either way)."""
        return True

    def footprint(self, spec: WeakSpec) -> Footprint:
        """The R × L learners' state: by default a linear learner's, three float64 arrays of
        shape (R, L, d + 1) (weights, gradient sums, an update's temporary) and O(d) work per
        lane and round. A learner whose state grows with a parameter overrides it."""
        lanes = int(spec.n_replicates) * int(spec.n_lanes)
        d1 = int(spec.n_features) + 1
        return Footprint(
            memory=8 * 3 * lanes * d1,
            work=6 * lanes * d1,
            what=f"{spec.n_lanes} lanes of {shape_text(spec.n_replicates, d1)} weights",
        )


WEAK_LEARNER_CONSTRAINTS: dict[str, list] = {
    "n_learners": [Interval(1, None, integer=True)],
    "weak_learner": [
        InstanceOf(str, "a weak learner's registry name"),
        InstanceOf(WeakLearner, "a weak learner instance"),
    ],
    "weak_learner_params": [InstanceOf(Mapping, "a mapping of its parameters"), IsNone()],
}
"""The parameters every booster shares (the number N and the weak learner with its parameters)."""


def held_out_rows(x: Any, k: int, learners: Any = None) -> Any:
    """Example ``k`` of every replicate of a held-out block ``x`` (R, m, d), as a booster's
    learners read it: ``x[:, k]`` of a dense block; of a :class:`~arena.oco.losses.SparseRows`
    block, its rows as they are when ``learners`` read sparse rows (their attribute
    ``sparse_rows``, e.g. ``stump``), else densified (O(R·d) for the example).

    Examples
    --------
    >>> from arena.oco.losses import SparseRows
    >>> x = SparseRows([0, 1, 1], [2], [5.0], (1, 2, 3))
    >>> held_out_rows(x, 0).tolist(), held_out_rows(np.ones((1, 2, 3)), 1).tolist()
    ([[0.0, 0.0, 5.0]], [[1.0, 1.0, 1.0]])
    """
    from arena.oco.losses import is_sparse

    if not is_sparse(x):
        return x[:, k]
    rows = x.round(k)
    return rows if getattr(learners, "sparse_rows", False) else rows.densify()


class Booster(Player):
    """Base of boosters: predict ``ŷ_t`` from N weak learners, then feed them ``(x_t, y_t)``.

    A booster stores ``n_learners``, ``weak_learner`` (a registry name of the
    ``arena.weak_learners`` group, or an instance) and ``weak_learner_params`` among its
    parameters; :meth:`reset` of a subclass calls :meth:`make_learners` for its N lanes.
    Subclasses implement :meth:`predict` and :meth:`update`; a randomized booster draws from
    its own streams in ``update`` (so ``predict`` stays pure and the replicates batch-invariant).

    The hooks below feed the boosting metrics; the defaults report nothing and the metrics are
    then skipped.
    """

    tags: ClassVar[PlayerTags] = PlayerTags(protocols=frozenset({"boosting"}), randomized=False)
    tasks: ClassVar[frozenset[str]] = frozenset({"classification"})
    """The hosted protocols whose data this booster learns."""

    n_learners: int
    weak_learner: str | WeakLearner
    weak_learner_params: Mapping[str, Any] | None

    # ------------------------------------------------------------------------------------------
    # what every booster implements

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Return ``ŷ_t`` of every replicate for features ``x`` (R, d), shape (R,). Pure."""
        raise NotImplementedError

    def update(self, x: np.ndarray, y: np.ndarray) -> None:
        """Observe the label ``y_t`` (R,) of the example ``x`` (R, d) just predicted."""
        raise NotImplementedError

    def play_block(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Play n rounds: ``x`` (R, n, d), ``y`` (R, n); return the predictions (R, n).

        ``y[:, j]`` may be read only after round j's prediction is made. The default is the
        readable per-round loop; a kernel must reproduce it to 1e-12.
        """
        n_rep, n = y.shape
        out = np.empty((n_rep, n))
        for j in range(n):
            try:
                out[:, j] = self.predict(x[:, j])
                self.update(x[:, j], y[:, j])
            except Exception as exc:  # the game's error names this round, not the block's first
                mark_failure(exc, offset=j)
                raise
        return out

    def score(self, x: Any) -> np.ndarray:
        """Return the booster's predictions on held-out examples ``x`` (R, m, d), shape (R, m).

        Does not change the state (test error at checkpoints). The default calls :meth:`predict`
        on each example; a randomized booster overrides it with its deterministic hypothesis.
        ``x`` may be :class:`~arena.oco.losses.SparseRows` (a booster tagged ``sparse_input``):
        each example is then read as :func:`held_out_rows` gives it.
        """
        learners = getattr(self, "_learners", None)
        return np.stack(
            [self.predict(held_out_rows(x, k, learners)) for k in range(x.shape[1])], axis=1
        )

    # ------------------------------------------------------------------------------------------
    # diagnostics read by the metrics (None: not reported)

    def learner_totals(self) -> dict[str, np.ndarray] | None:
        """Return running sums per weak learner, each (R, N), or None.

        ``weight``: ``‖w^i‖₁ = Σ_s w_s^i`` (the weights the algorithm computed, before sampling);
        ``edge``: ``Σ_s w_s^i z_s^i`` with ``z_s^i = y_s·WL^i(x_s)`` (classification);
        ``calls``: the number of updates passed with a positive weight.
        The weighted edge of learner i is ``γ_i = edge / (2·weight)`` (Luo 2016, §3.1.4).
        """
        return None

    # ------------------------------------------------------------------------------------------
    # building the weak learners

    def footprint(self, spec: GameSpec) -> Footprint:
        """N weak learners per replicate, each with its own random stream, and the booster's
        per-learner arrays; the learners' own state is their
        :meth:`WeakLearner.footprint`."""
        n_rep, lanes = int(spec.n_replicates), int(self.n_learners)
        try:
            learner = self._weak_prototype()
            label = learner.label()
        except ArenaError:  # a bad weak learner is refused by reset, with its own message
            learner, label = WeakLearner(), "weak learner"
        weak = declared_footprint(learner, self.weak_spec(spec, lanes))
        per_lane = LANE_STREAM_BYTES + 8 * BOOSTER_LANE_ARRAYS
        return Footprint(
            memory=n_rep * lanes * per_lane + weak.memory,
            work=n_rep * lanes * BOOSTER_LANE_ARRAYS + weak.work,
            setup=n_rep * lanes * LANE_STREAM_OPS,
            parameter="n_learners",
            what=f"n_learners={lanes}: {n_rep} × {lanes} {label} lanes, a random stream each",
        )

    def _weak_prototype(self) -> WeakLearner:
        who = self.label()
        learner = registry.make_inner(
            who,
            "weak_learner",
            self.weak_learner,
            self.weak_learner_params,
            name_param="weak_learner",
        )
        if not isinstance(learner, WeakLearner):
            raise ConfigError(who, "weak_learner", f"{learner!r} is not a WeakLearner")
        return learner

    def weak_spec(self, spec: GameSpec, lanes: int) -> WeakSpec:
        """The :class:`WeakSpec` of this game for ``lanes`` learners per replicate."""
        return WeakSpec(
            task=str(spec.task),
            n_features=int(spec.dim),
            n_lanes=int(lanes),
            n_replicates=spec.n_replicates,
            horizon=spec.horizon,
            bound=1.0,
            replicate_ids=tuple(spec.replicate_ids or ()),
        )

    def make_learners(
        self,
        spec: GameSpec,
        rngs: Sequence[np.random.Generator],
        *,
        lanes: int | None = None,
        bound: float | None = None,
    ) -> WeakLearner:
        """Return the reset weak learner with ``lanes`` (default N) lanes for this game.

        Lane i of replicate r draws from ``default_rng([s_r, i])`` with ``s_r`` drawn once from
        the booster's stream ``rngs[r]`` (so a replicate depends on its own stream only), and
        :meth:`base_learner` uses the key :data:`BASE_LANE_KEY`. A learner that refuses the game
        raises a :class:`~arena.errors.ConfigError` naming this booster and ``weak_learner``.
        """
        lanes = int(self.n_learners if lanes is None else lanes)
        self._lane_seeds = [0 if rng is None else int(rng.integers(2**63)) for rng in rngs]
        return self._reset_learner(spec, lanes, list(range(lanes)), bound)

    def base_learner(self, spec: GameSpec, bound: float | None = None) -> WeakLearner:
        """Return a fresh one-lane copy of the weak learner, for the booster-vs-base metrics.

        Valid after :meth:`make_learners`; its stream (key :data:`BASE_LANE_KEY`) is apart from
        the lanes', so reading it never changes the booster's play.
        """
        return self._reset_learner(spec, 1, [BASE_LANE_KEY], bound)

    def _reset_learner(
        self, spec: GameSpec, lanes: int, keys: list[int], bound: float | None
    ) -> WeakLearner:
        learner = self._weak_prototype()
        wspec = self.weak_spec(spec, lanes)
        extra = {"lane_ids": tuple(keys)}
        if bound is not None:
            extra["bound"] = float(bound)
        wspec = WeakSpec(**{**wspec.__dict__, **extra})
        if wspec.task not in type(learner).tasks:
            raise ConfigError(
                self.label(),
                "weak_learner",
                f"{learner.label()} learns {sorted(type(learner).tasks)}, not {wspec.task}",
            )
        lane_rngs = [[np.random.default_rng([s, k]) for k in keys] for s in self._lane_seeds]
        try:
            learner.reset(wspec, lane_rngs)
        except ConfigError as exc:
            raise ConfigError(self.label(), "weak_learner_params", str(exc)) from exc
        except (ValueError, TypeError, KeyError) as exc:
            raise ConfigError(
                self.label(), "weak_learner", f"{learner.label()}: reset failed: {exc}"
            ) from exc
        return learner


def check_task(booster: Booster, spec: GameSpec) -> None:
    """Raise :class:`ConfigError` unless ``booster`` learns the game's task."""
    if spec.task not in type(booster).tasks:
        raise ConfigError(
            booster.label(),
            "protocol",
            f"boosts {'/'.join(sorted(type(booster).tasks))} learners, not {spec.task}",
        )
