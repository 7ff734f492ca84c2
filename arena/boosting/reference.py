"""The reference loop of the boosting protocol: one round at a time, metrics from the history.

:func:`reference_play_boosting` is the specification the driver (:class:`arena.boosting.game.
BoostingProtocol`) must reproduce to 1e-12. It shares only the setup (:func:`arena.game.
prepare_game`) and the skeleton of every reference loop (:class:`arena.reference.ReferenceLoop`).
Each round (:meth:`BoostingLoop.play_round`) it asks the adversary for one example
(``data_block(t, 1)``), the booster for ``ŷ_t`` (``predict``, which asks its weak learners), then
calls ``update`` with the label (the booster feeds its weak learners), and does the same for the
base learner one round at a time. At each checkpoint every metric is recomputed from the stored
history by its own brute-force definition (:meth:`arena.metric.Metric.reference`, one
:class:`~arena.boosting.metrics.BoostingRecord` per replicate; the losses from the textbook scalar
formulas, :func:`arena.oco.literal.scalar_loss`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from arena.boosting.metrics import BoostingRecord
from arena.oco.losses import dense_features
from arena.reference import ReferenceLoop


class BoostingOutcome(NamedTuple):
    """What a booster is owed after ``ŷ_t`` (:meth:`BoostingLoop.respond`): the arguments of
    ``update``, in order.

    Attributes
    ----------
    x : ndarray, shape (R, d)
        The round's features ``x_t`` (dense).
    y : ndarray, shape (R,)
        Its labels ``y_t`` (±1 in classification, real in regression).
    """

    x: np.ndarray
    y: np.ndarray


class BoostingLoop(ReferenceLoop):
    """The boosting protocol's rounds, literally: ``x_t``, the booster's ``ŷ_t``, ``y_t`` to the
    booster, and the same example to the protocol's base learner when a metric reads it.

    Examples
    --------
    The rows of :func:`arena.game.run_game`, to 1e-12:

    >>> import pandas as pd
    >>> from arena.game import run_game
    >>> from arena.boosting.testing import MajorityVote, ThresholdStream
    >>> kw = dict(n_actions=2, horizon=40, replicates=2,
    ...           metrics=["mistakes", "loss", "base_mistakes", "improvement"])
    >>> ref = BoostingLoop.reference_play(MajorityVote(n_learners=3), ThresholdStream(), **kw)
    >>> pd.testing.assert_frame_equal(
    ...     ref, run_game(MajorityVote(n_learners=3), ThresholdStream(), **kw).rows, atol=1e-12)
    """

    record_type = BoostingRecord

    def start(self) -> None:
        """The base learner (one lane fed every example), when a metric reads it."""
        self.base = None
        if any(getattr(m, "reads_base", False) for m in self.game.metrics):
            self.base = self.player.base_learner(self.spec)

    def round_context(self, t: int) -> np.ndarray:
        """``x_t`` (R, d), dense; the label is kept for :meth:`round_respond`."""
        data = self.adversary.data_block(t, 1)
        self._y = np.array(data.y[:, 0], dtype=np.float64)
        return np.array(dense_features(data.round(0).x), dtype=np.float64)  # sparse rows densified

    def round_predict(self, t: int, context: np.ndarray) -> np.ndarray:
        """``ŷ_t`` (R,): ``booster.predict(x_t)`` (it asks its weak learners)."""
        return np.array(self.player.predict(context.copy()), dtype=np.float64)

    def round_respond(self, t: int, output: np.ndarray, context: np.ndarray) -> BoostingOutcome:
        """``y_t`` revealed, the base learner's round on the same example, the round stored."""
        base, x, y = self.base, context, self._y
        prediction = np.array(output, dtype=np.float64)
        base_prediction = None
        if base is not None:
            base_prediction = np.array(base.predict(x.copy())[:, 0], dtype=np.float64)
            base.update(x.copy(), y[:, None].copy(), np.ones((self.n_rep, 1)))
        # y_t, ŷ_t and the base learner's ŷ_t, each (R,): the record's fields
        self.store(y=y, predictions=prediction, base_predictions=base_prediction)
        return BoostingOutcome(x, y)

    def round_update(self, outcome: BoostingOutcome) -> None:
        """``booster.update(x_t, y_t)`` (the booster feeds its weak learners)."""
        self.player.update(outcome.x.copy(), outcome.y.copy())


reference_play_boosting = BoostingLoop.reference_play
"""The protocol's ``reference_loop``: :meth:`BoostingLoop.reference_play` (the keyword arguments
of :func:`arena.game.prepare_game`; the tidy rows ``run_game`` equals to 1e-12)."""
