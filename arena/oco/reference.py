"""The reference loop of the OCO protocols: one round at a time, metrics from the stored history.

:func:`reference_play_oco` is the specification the driver (:func:`arena.game.run_game` playing
:class:`arena.oco.game.OCOProtocol`) must reproduce to 1e-12. It shares only the setup
(:func:`arena.game.prepare_game`: validation, seeding, cloning and ``reset``) and the skeleton of
every reference loop (:class:`arena.reference.ReferenceLoop`). Each round
(:meth:`OCOLoop.play_round`) it asks the adversary for ``x_t`` (``features``), the player for
``w_t`` (``predict``), the adversary for the loss (``reveal``; an oblivious adversary answers from
``data_block(t, 1)``), evaluates the loss and its subgradient with the textbook scalar formulas
(:mod:`arena.oco.literal`; sparse rows pair by pair), and calls ``update``. At each checkpoint
every metric is recomputed from the whole stored history by its own brute-force definition
(:meth:`arena.metric.Metric.reference`, one :class:`~arena.oco.metrics.OCORecord` per replicate):
the best comparator in hindsight over all stored examples (for the squared loss too, where the
driver streams sufficient statistics), the per-round minimizers round by round.

Memory and time grow with T: a test oracle for small games, not a way to run experiments.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from arena.oco.literal import round_loss, scalar_loss
from arena.oco.losses import (
    INSTANCE_RANKING_LOSSES,
    LABEL_RANKING_LOSSES,
    MULTICLASS_LOSSES,
    Feedback,
    RoundData,
    dense_features,
    is_sparse,
)
from arena.oco.metrics import OCORecord
from arena.reference import ReferenceLoop

NO_DLOSS = (*MULTICLASS_LOSSES, *LABEL_RANKING_LOSSES, *INSTANCE_RANKING_LOSSES)
"""Losses that are no function of one prediction ``⟨w, x⟩``: no derivative ``ℓ'`` is shown."""


class OCOLoop(ReferenceLoop):
    """The OCO protocols' rounds, literally: ``x_t``, ``w_t``, the revealed loss, ``f_t(w_t)``
    and a subgradient, ``update``.

    Examples
    --------
    The rows of :func:`arena.game.run_game`, to 1e-12:

    >>> import pandas as pd
    >>> from arena.game import run_game
    >>> from arena.oco.testing import AntiGradient, ZeroPlayer
    >>> kw = dict(n_actions=2, horizon=8, replicates=2, metrics=["loss", "regret"])
    >>> ref = OCOLoop.reference_play(ZeroPlayer(), AntiGradient(), **kw)
    >>> pd.testing.assert_frame_equal(
    ...     ref, run_game(ZeroPlayer(), AntiGradient(), **kw).rows, atol=1e-12)
    """

    record_type = OCORecord

    def round_context(self, t: int) -> Any:
        """``x_t`` as the player is shown it (None in plain ``oco``): a sparse stream's rows as
        they are to a player that reads them (``spec.sparse``), else dense (R, d)."""
        x = self.adversary.features(t)
        x = None if x is None else x.copy() if is_sparse(x) else np.array(x, dtype=np.float64)
        self._x = x  # as the stream gave it: the round's data carry it
        return x if self.spec.sparse else dense_features(x)

    def round_predict(self, t: int, context: Any) -> np.ndarray:
        """``w_t`` (R, d): ``player.predict(x_t)``."""
        return np.array(self.player.predict(context), dtype=np.float64)

    def round_respond(self, t: int, output: np.ndarray, context: Any) -> Feedback:
        """The adversary's loss of ``w_t`` (``reveal``), ``f_t(w_t)`` and a subgradient by the
        textbook formulas; the round stored; the :class:`~arena.oco.losses.Feedback` returned."""
        adversary, spec, n_rep = self.adversary, self.spec, self.n_rep
        kind, sigma, x = spec.loss, spec.sigma, self._x
        w = np.array(output, dtype=np.float64)
        if w.shape != (n_rep, spec.dim):
            raise ValueError(f"player.predict returned shape {w.shape} at round {t}")
        rd = adversary.reveal(t, w.copy())
        rd = RoundData(*(a if a is None or is_sparse(a) else np.array(a, np.float64) for a in rd))
        if rd.x is None and x is not None:
            rd = rd._replace(x=x)
        values = np.empty(n_rep)
        grads = np.empty((n_rep, spec.dim))
        predictions = np.empty(n_rep) if kind != "linear" else None
        for r in range(n_rep):
            values[r], grads[r], pred = round_loss(kind, sigma, w[r], rd, r)
            if predictions is not None:
                predictions[r] = pred
        dloss = None
        if predictions is not None and kind not in NO_DLOSS:
            dloss = np.array([scalar_loss(kind, predictions[r], rd.y[r])[1] for r in range(n_rep)])
        shown = rd if spec.sparse else rd.densified()
        fb = Feedback(w.copy(), values.copy(), grads.copy(), shown, predictions, dloss, sigma)
        rd = rd.densified()  # the record keeps dense rows: the metrics' definitions read them
        # w_t (R, d), f_t(w_t) (R,), the subgradients shown (R, d), ⟨w_t, x_t⟩ (the label in
        # multiclass) and the round's data, each field (R, ...)
        self.store(w=w, values=values, grads=grads.copy(), predictions=predictions, **rd._asdict())
        return fb

    def round_update(self, outcome: Feedback) -> None:
        """``player.update(fb)``."""
        self.player.update(outcome)

    def record_fields(self, rounds: Mapping[str, np.ndarray | None]) -> dict[str, Any]:
        """The points, values, subgradients and predictions, and the rounds' data as one
        :class:`~arena.oco.losses.RoundData` with the round axis first (a field that some round
        lacks is None)."""
        data = RoundData(*(rounds[name] for name in RoundData._fields))
        return {
            "w": rounds["w"],
            "values": rounds["values"],
            "grads": rounds["grads"],
            "data": data,
            "predictions": rounds["predictions"],
        }


reference_play_oco = OCOLoop.reference_play
"""The protocol's ``reference_loop``: :meth:`OCOLoop.reference_play` (the keyword arguments
of :func:`arena.game.prepare_game`; the tidy rows ``run_game`` equals to 1e-12)."""
