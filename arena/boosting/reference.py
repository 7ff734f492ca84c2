"""The reference loop of the boosting protocol: one round at a time, metrics from the history.

:func:`reference_play_boosting` is the specification the driver (:class:`arena.boosting.game.
BoostingProtocol`) must reproduce to 1e-12. It shares only the setup (:func:`arena.game.
prepare_game`). Each round it asks the adversary for one example (``data_block(t, 1)``), the
booster for ``ŷ_t`` (``predict``), then calls ``update`` with the label, and does the same for the
base learner one round at a time. At each checkpoint every metric is recomputed from the stored
history by its own brute-force definition (:meth:`arena.metric.Metric.reference`, one
:class:`~arena.boosting.metrics.BoostingRecord` per replicate; the losses from the textbook scalar
formulas, :func:`arena.oco.literal.scalar_loss`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from arena.boosting.metrics import BoostingRecord
from arena.game import prepare_game
from arena.results import reference_rows, tidy_frame


def reference_play_boosting(player: Any, adversary: Any, **kwargs: Any) -> pd.DataFrame:
    """Play a boosting game with the literal per-round loop; return the engine's tidy rows.

    Parameters
    ----------
    player, adversary : component or registry name
    **kwargs
        The keyword arguments of :func:`arena.game.prepare_game`.

    Examples
    --------
    >>> from arena.game import run_game
    >>> from arena.boosting.testing import MajorityVote, ThresholdStream
    >>> kw = dict(n_actions=2, horizon=40, replicates=2,
    ...           metrics=["mistakes", "loss", "base_mistakes", "improvement"])
    >>> ref = reference_play_boosting(MajorityVote(n_learners=3), ThresholdStream(), **kw)
    >>> pd.testing.assert_frame_equal(
    ...     ref, run_game(MajorityVote(n_learners=3), ThresholdStream(), **kw).rows, atol=1e-12)
    """
    game = prepare_game(player, adversary, **kwargs)
    player, adversary, spec = game.player, game.adversary, game.spec
    n_rep = spec.n_replicates
    checkpoints = set(game.grid.tolist())
    base = None
    if any(getattr(m, "reads_base", False) for m in game.metrics):
        base = player.base_learner(spec)
    history: list[tuple[np.ndarray, np.ndarray, np.ndarray | None]] = []  # (y_t, ŷ_t, base ŷ_t)
    rows: list[dict[str, Any]] = []
    for t in range(1, spec.horizon + 1):
        data = adversary.data_block(t, 1)
        x = np.array(data.x[:, 0], dtype=np.float64)
        y = np.array(data.y[:, 0], dtype=np.float64)
        prediction = np.array(player.predict(x.copy()), dtype=np.float64)
        player.update(x.copy(), y.copy())
        base_prediction = None
        if base is not None:
            base_prediction = np.array(base.predict(x.copy())[:, 0], dtype=np.float64)
            base.update(x.copy(), y[:, None].copy(), np.ones((n_rep, 1)))
        history.append((y, prediction, base_prediction))
        if t not in checkpoints:
            continue
        records = [
            BoostingRecord(
                t=t,
                replicate=r,
                spec=spec,
                player=player,
                adversary=adversary,
                y=np.array([h[0][r] for h in history]),
                predictions=np.array([h[1][r] for h in history]),
                base_predictions=None if base is None else np.array([h[2][r] for h in history]),
            )
            for r in range(n_rep)
        ]
        for m in game.metrics:  # rows ordered by metric, then parameter, then replicate
            rows.extend(reference_rows(game.constants, game.ids, t, m.reference_rows(records)))
    return tidy_frame(rows)
