"""Metrics of the boosting protocol: progressive error and loss, the base learner, the learners.

* ``mistakes`` — ``#{s ≤ t : y_s ŷ_s ≤ 0}``, the progressive (online) 0-1 loss (a zero margin is
  a mistake, as the mistake bounds of Luo 2016, §3.1, count ``1{s_t^N ≤ 0}``);
* ``loss`` — ``Σ_{s≤t} ℓ(ŷ_s, y_s)`` for the game's example loss;
* ``base_mistakes``, ``base_loss`` — the same for the protocol's base learner: one copy of the
  booster's weak learner fed every example with weight 1 (the "VW baseline" / base learner column
  of Luo 2016, Tables 3.2–3.3);
* ``improvement`` — the relative improvement over the base learner in percent,
  ``100·(base − booster)/base``, of the mistakes in classification and of the loss in regression
  (the statistic of Luo 2016, §3.1.5 and §3.2.5; Beygelzimer et al. 2015, §6);
* ``learners_used`` — how many of the N weak learners were called with a positive weight so far;
* ``weighted_edge`` — the weighted edge ``γ_i = Σ_s w_s^i z_s^i / (2 Σ_s w_s^i)`` of learner i
  (Luo 2016, §3.1.4, Theorem 11), param i (1-based);
* ``test_error`` — the 0-1 error (classification) or the mean loss (regression) of the booster's
  current hypothesis on the adversary's held-out split, at each checkpoint.

References
----------
Luo 2016, §3.1 (Theorems 9, 11, 12 and Table 3.2) and §3.2 (Table 3.3); Beygelzimer, Hazan, Kale &
Luo 2015, §6.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

import numpy as np

from arena.boosting.components import TASKS, Booster
from arena.metric import Metric, Record
from arena.oco.literal import scalar_loss
from arena.oco.losses import prediction_loss
from arena.spec import GameSpec


class BoostingBlock(NamedTuple):
    """One chunk of a boosting game, as the metrics see it.

    Attributes
    ----------
    x : ndarray (R, n, d)
        The features.
    y : ndarray (R, n)
        The labels (±1) or targets.
    predictions : ndarray (R, n)
        The booster's ``ŷ_t``.
    values : ndarray (R, n)
        ``ℓ(ŷ_t, y_t)`` for the game's example loss.
    base_predictions, base_values : ndarray (R, n) or None
        The protocol's base learner's prediction and loss (None when no metric reads them).
    t0 : int
        First round of the chunk.
    """

    x: np.ndarray
    y: np.ndarray
    predictions: np.ndarray
    values: np.ndarray
    base_predictions: np.ndarray | None
    base_values: np.ndarray | None
    t0: int


class BoostingCore:
    """Running totals of a boosting game after round ``t``, shared by its metrics."""

    def __init__(self, n_replicates: int):
        self.t = 0
        self.loss = np.zeros(n_replicates)
        self.mistakes = np.zeros(n_replicates)
        self.base_loss = np.zeros(n_replicates)
        self.base_mistakes = np.zeros(n_replicates)


@dataclass(frozen=True, kw_only=True)
class BoostingRecord(Record):
    """The literal record of one replicate of a boosting game after round ``t`` (every round).

    Attributes
    ----------
    y : ndarray, shape (t,)
        The labels (±1) or targets.
    predictions : ndarray, shape (t,)
        The booster's ``ŷ_s``.
    base_predictions : ndarray, shape (t,), optional
        The protocol's base learner's prediction (when a metric reads it).
    """

    y: np.ndarray
    predictions: np.ndarray
    base_predictions: np.ndarray | None = None


def totals_bruteforce(record: BoostingRecord, base: bool = False) -> tuple[float, float]:
    """Return (loss, mistakes) of the booster (or of the base learner) summed round by round:
    the textbook loss ``ℓ(ŷ_s, y_s)`` and ``1{y_s ŷ_s ≤ 0}``."""
    predictions = record.base_predictions if base else record.predictions
    if predictions is None:
        raise ValueError("the record holds no base-learner predictions")
    loss = mistakes = 0.0
    for p, y in zip(predictions.tolist(), record.y.tolist(), strict=True):
        loss += scalar_loss(record.spec.loss, p, y)[0]
        mistakes += 1.0 if y * p <= 0.0 else 0.0
    return loss, mistakes


class BoostingMetric(Metric):
    """Base of the boosting protocol's metrics: ``advance(block: BoostingBlock, core)``.

    ``reads_base`` makes the stepper train the protocol's base learner; ``tasks`` lists the
    hosted protocols where the metric means something.
    """

    protocols: ClassVar[frozenset[str] | None] = frozenset({"boosting"})
    reads_base: ClassVar[bool] = False
    tasks: ClassVar[frozenset[str]] = frozenset(TASKS)

    def applicable(self, player: Any, adversary: Any) -> str | None:
        if not isinstance(player, Booster):
            return "defined for the boosting protocol only"
        task = adversary.tags.protocol
        if task not in self.tasks:
            return f"defined for {'/'.join(sorted(self.tasks))} boosting only, not {task}"
        return super().applicable(player, adversary)


class BoostingMistakes(BoostingMetric):
    """Progressive mistakes ``#{s ≤ t : y_s ŷ_s ≤ 0}`` of the booster (classification).

    Examples
    --------
    >>> from arena.game import run_game
    >>> from arena.boosting.testing import MajorityVote, ThresholdStream
    >>> rows = run_game(MajorityVote(n_learners=3), ThresholdStream(), n_actions=2,
    ...                 horizon=100, metrics=["mistakes"]).rows
    >>> bool(0 < rows.value.iloc[-1] < 50)
    True
    """

    name = "mistakes"
    tasks: ClassVar[frozenset[str]] = frozenset({"classification"})

    def values(self, core: BoostingCore) -> np.ndarray:
        return core.mistakes[:, None].copy()

    def reference(self, record: BoostingRecord, param: float) -> float:
        """The booster's mistakes, counted round by round (:func:`totals_bruteforce`)."""
        return totals_bruteforce(record)[1]


class BoostingLoss(BoostingMetric):
    """Progressive loss ``Σ_{s≤t} ℓ(ŷ_s, y_s)`` of the booster for the game's example loss."""

    name = "loss"

    def values(self, core: BoostingCore) -> np.ndarray:
        return core.loss[:, None].copy()

    def reference(self, record: BoostingRecord, param: float) -> float:
        """The booster's loss, added round by round (:func:`totals_bruteforce`)."""
        return totals_bruteforce(record)[0]


class BaseMistakes(BoostingMetric):
    """Progressive mistakes of the base learner (the weak learner alone, every example)."""

    name = "base_mistakes"
    reads_base = True
    tasks: ClassVar[frozenset[str]] = frozenset({"classification"})

    def values(self, core: BoostingCore) -> np.ndarray:
        return core.base_mistakes[:, None].copy()

    def reference(self, record: BoostingRecord, param: float) -> float:
        """The base learner's mistakes, counted round by round (:func:`totals_bruteforce`)."""
        return totals_bruteforce(record, base=True)[1]


class BaseLoss(BoostingMetric):
    """Progressive loss of the base learner (the weak learner alone, every example)."""

    name = "base_loss"
    reads_base = True

    def values(self, core: BoostingCore) -> np.ndarray:
        return core.base_loss[:, None].copy()

    def reference(self, record: BoostingRecord, param: float) -> float:
        """The base learner's loss, added round by round (:func:`totals_bruteforce`)."""
        return totals_bruteforce(record, base=True)[0]


class Improvement(BoostingMetric):
    """Relative improvement over the base learner, ``100·(base − booster)/base`` percent.

    Of the progressive mistakes in classification, of the progressive loss in regression; NaN
    while the base learner has neither erred nor lost.

    Examples
    --------
    >>> from arena.game import run_game
    >>> from arena.boosting.testing import MajorityVote, ThresholdStream
    >>> rows = run_game(MajorityVote(n_learners=5), ThresholdStream(), n_actions=2,
    ...                 horizon=200, metrics=["improvement", "mistakes", "base_mistakes"]).rows
    >>> last = rows[rows.t == 200].set_index("metric").value
    >>> m, b = last["mistakes"], last["base_mistakes"]
    >>> bool(abs(last["improvement"] - 100 * (b - m) / b) < 1e-12)
    True
    """

    name = "improvement"
    reads_base = True

    def start(self, spec: GameSpec) -> None:
        super().start(spec)
        self._classification = spec.task == "classification"

    def values(self, core: BoostingCore) -> np.ndarray:
        if self._classification:
            base, ours = core.base_mistakes, core.mistakes
        else:
            base, ours = core.base_loss, core.loss
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.where(base > 0, 100.0 * (base - ours) / np.where(base > 0, base, 1.0), np.nan)
        return out[:, None]

    def reference(self, record: BoostingRecord, param: float) -> float:
        """``100·(base − booster)/base`` of the mistakes (classification) or the loss
        (regression) of :func:`totals_bruteforce`; NaN while the base is 0."""
        column = 1 if record.spec.task == "classification" else 0
        ours = totals_bruteforce(record)[column]
        base = totals_bruteforce(record, base=True)[column]
        return 100.0 * (base - ours) / base if base > 0 else math.nan


class _LearnerTotalsMetric(BoostingMetric):
    """A metric read from the booster's per-learner totals (:meth:`Booster.learner_totals`)."""

    def applicable(self, player: Any, adversary: Any) -> str | None:
        reason = super().applicable(player, adversary)
        if reason is None and type(player).learner_totals is Booster.learner_totals:
            return "the booster reports no per-learner totals (learner_totals)"
        return reason


class LearnersUsed(_LearnerTotalsMetric):
    """Number of weak learners called with a positive weight so far (of the booster's N)."""

    name = "learners_used"

    def attach(self, player: Any, adversary: Any) -> None:
        self._player = player

    def values(self, core: BoostingCore) -> np.ndarray:
        calls = np.asarray(self._player.learner_totals()["calls"])
        return (calls > 0).sum(axis=1, dtype=np.float64)[:, None]

    def reference(self, record: BoostingRecord, param: float) -> float:
        """The learners the booster reports having called with a positive weight (its
        declaration: ``learner_totals()["calls"]``), counted one by one."""
        calls = np.asarray(record.player.learner_totals()["calls"])[record.replicate]
        return float(sum(1 for c in calls.tolist() if c > 0))


class WeightedEdge(_LearnerTotalsMetric):
    """Weighted edge ``γ_i = Σ_s w_s^i z_s^i / (2 Σ_s w_s^i)`` of weak learner i (classification).

    ``z_s^i = y_s·WL^i(x_s)`` and ``w_s^i`` is the weight the booster computed for learner i in
    round s (before any sampling): Luo 2016, §3.1.4, defines it for AdaBoost.OL's Theorem 11, where
    ``Σ_i γ_i²`` drives the mistake bound, and it is how the online weak-learning assumption
    (eq. 3.3) reads on a run. NaN while ``Σ_s w_s^i = 0``. Param: i (1-based); ``learners`` picks
    some (default: all N).
    """

    name = "weighted_edge"
    param_name = "learners"
    tasks: ClassVar[frozenset[str]] = frozenset({"classification"})

    def __init__(self, learners: list[int] | None = None):
        self.learners = learners

    def param_values(self, spec: GameSpec) -> list[float]:
        if self.learners is None:
            return [math.nan]
        return [float(i) for i in self._param_list(self.learners, int, _positive)]

    def attach(self, player: Any, adversary: Any) -> None:
        self._player = player
        n = int(player.n_learners)
        chosen = (
            range(1, n + 1)
            if self.learners is None
            else self._param_list(self.learners, int, _positive)
        )
        self._index = [i for i in chosen if i <= n]

    def row_keys(self, spec: GameSpec) -> list[tuple[str, float]]:
        return [(self.name, float(i)) for i in self._index]

    def values(self, core: BoostingCore) -> np.ndarray:
        totals = self._player.learner_totals()
        weight = np.asarray(totals["weight"])[:, [i - 1 for i in self._index]]
        edge = np.asarray(totals["edge"])[:, [i - 1 for i in self._index]]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(weight > 0, edge / (2.0 * np.where(weight > 0, weight, 1.0)), np.nan)

    def reference(self, record: BoostingRecord, param: float) -> float:
        """``Σ_s w_s^i z_s^i / (2 Σ_s w_s^i)`` from the totals the booster declares
        (``learner_totals()``: weight and edge of learner ``i = param``, 1-based)."""
        totals = record.player.learner_totals()
        i = int(param) - 1
        weight = float(np.asarray(totals["weight"])[record.replicate, i])
        edge = float(np.asarray(totals["edge"])[record.replicate, i])
        return edge / (2.0 * weight) if weight > 0 else math.nan


def _positive(i: int) -> str | None:
    return None if i >= 1 else "must be ≥ 1"


class TestError(BoostingMetric):
    """Held-out error of the booster's current hypothesis, at each checkpoint.

    The 0-1 error ``(1/m) #{k : y_k ŷ(x_k) ≤ 0}`` in classification, the mean example loss in
    regression, over the adversary's test split (oracle ``test_split``: ``dataset_stream``'s
    ``test_fraction``), read through the booster's :meth:`~arena.boosting.components.Booster.score`.
    """

    name = "test_error"
    requires = frozenset({"test_split"})

    def attach(self, player: Any, adversary: Any) -> None:
        self._player = player
        self._test = adversary.test_split()

    def start(self, spec: GameSpec) -> None:
        super().start(spec)
        self._loss, self._task = spec.loss, spec.task

    def values(self, core: BoostingCore) -> np.ndarray:
        scores = np.asarray(self._player.score(self._test.x), dtype=np.float64)
        y = self._test.y
        if self._task == "classification":
            return (y * scores <= 0.0).mean(axis=1)[:, None]
        losses, _ = prediction_loss(self._loss, scores, y)
        return losses.mean(axis=1)[:, None]

    def advance(self, block: BoostingBlock, core: BoostingCore) -> None:
        return None

    def reference(self, record: BoostingRecord, param: float) -> float:
        """The booster's current scores on the adversary's test split, example by example: the
        fraction with ``y ŷ ≤ 0`` (classification) or the mean textbook loss (regression)."""
        test = record.adversary.test_split()
        scores = np.asarray(record.player.score(test.x), dtype=np.float64)[record.replicate]
        pairs = list(
            zip(scores.tolist(), np.asarray(test.y)[record.replicate].tolist(), strict=True)
        )
        if record.spec.task == "classification":
            return sum(1.0 for s, y in pairs if y * s <= 0.0) / len(pairs)
        return sum(scalar_loss(record.spec.loss, s, y)[0] for s, y in pairs) / len(pairs)
