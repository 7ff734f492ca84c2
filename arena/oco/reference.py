"""The reference loop of the OCO protocols: one round at a time, metrics from the stored history.

:func:`reference_play_oco` is the specification the driver (:func:`arena.game.run_game` playing
:class:`arena.oco.game.OCOProtocol`) must reproduce to 1e-12. It shares only the setup
(:func:`arena.game.prepare_game`: validation, seeding, cloning and ``reset``). Each round it asks
the adversary for ``x_t`` (``features``), the player for ``w_t`` (``predict``), the adversary for
the loss (``reveal``; an oblivious adversary answers from ``data_block(t, 1)``), evaluates the loss
and its subgradient with the textbook scalar formulas (:mod:`arena.oco.literal`), and calls
``update``. At each checkpoint every metric is recomputed from the whole stored history by its
own brute-force definition (:meth:`arena.metric.Metric.reference`, one
:class:`~arena.oco.metrics.OCORecord` per replicate): the best comparator in hindsight over
all stored examples (for the squared loss too, where the driver streams sufficient statistics),
the per-round minimizers round by round.

Memory and time grow with T: a test oracle for small games, not a way to run experiments.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from arena.game import prepare_game
from arena.oco.literal import round_loss, scalar_loss
from arena.oco.losses import Feedback, RoundData
from arena.oco.metrics import OCORecord
from arena.results import reference_rows, tidy_frame


def reference_play_oco(player: Any, adversary: Any, **kwargs: Any) -> pd.DataFrame:
    """Play an OCO game with the literal per-round loop; return the engine's tidy rows.

    Parameters
    ----------
    player, adversary : component or registry name
    **kwargs
        The keyword arguments of :func:`arena.game.prepare_game`.

    Examples
    --------
    >>> from arena.game import run_game
    >>> from arena.oco.testing import AntiGradient, ZeroPlayer
    >>> kw = dict(n_actions=2, horizon=8, replicates=2, metrics=["loss", "regret"])
    >>> ref = reference_play_oco(ZeroPlayer(), AntiGradient(), **kw)
    >>> pd.testing.assert_frame_equal(
    ...     ref, run_game(ZeroPlayer(), AntiGradient(), **kw).rows, atol=1e-12)
    """
    game = prepare_game(player, adversary, **kwargs)
    player, adversary, spec = game.player, game.adversary, game.spec
    n_rep, dim, kind, sigma = spec.n_replicates, spec.dim, spec.loss, spec.sigma
    checkpoints = set(game.grid.tolist())

    points: list[np.ndarray] = []  # w_t, each (R, d)
    values_seen: list[np.ndarray] = []  # f_t(w_t), each (R,)
    grads_seen: list[np.ndarray] = []  # the subgradients shown, each (R, d)
    data_seen: list[RoundData] = []  # the rounds' data, each field (R, ...)
    predictions_seen: list[np.ndarray | None] = []  # ⟨w_t, x_t⟩ (the label in multiclass)
    rows: list[dict[str, Any]] = []
    for t in range(1, spec.horizon + 1):
        x = adversary.features(t)
        x = None if x is None else np.array(x, dtype=np.float64)
        w = np.array(player.predict(x), dtype=np.float64)
        if w.shape != (n_rep, dim):
            raise ValueError(f"player.predict returned shape {w.shape} at round {t}")
        rd = adversary.reveal(t, w.copy())
        rd = RoundData(*(None if a is None else np.array(a, dtype=np.float64) for a in rd))
        if rd.x is None and x is not None:
            rd = rd._replace(x=x)
        values = np.empty(n_rep)
        grads = np.empty((n_rep, dim))
        predictions = np.empty(n_rep) if kind != "linear" else None
        for r in range(n_rep):
            values[r], grads[r], pred = round_loss(kind, sigma, w[r], rd, r)
            if predictions is not None:
                predictions[r] = pred
        dloss = None
        if predictions is not None and kind != "multiclass_hinge":
            dloss = np.array([scalar_loss(kind, predictions[r], rd.y[r])[1] for r in range(n_rep)])
        player.update(Feedback(w.copy(), values.copy(), grads.copy(), rd, predictions, dloss))
        points.append(w)
        values_seen.append(values)
        grads_seen.append(grads.copy())
        data_seen.append(rd)
        predictions_seen.append(predictions)
        if t not in checkpoints:
            continue
        records = [
            OCORecord(
                t=t,
                replicate=r,
                spec=spec,
                player=player,
                adversary=adversary,
                w=np.stack([w_s[r] for w_s in points]),
                values=np.array([v[r] for v in values_seen]),
                grads=np.stack([g[r] for g in grads_seen]),
                data=_replicate_data(data_seen, r),
                predictions=None
                if predictions is None
                else np.array([p[r] for p in predictions_seen]),
            )
            for r in range(n_rep)
        ]
        for m in game.metrics:  # rows ordered by metric, then parameter, then replicate
            rows.extend(reference_rows(game.constants, game.ids, t, m.reference_rows(records)))
    return tidy_frame(rows)


def _replicate_data(data_seen: list[RoundData], r: int) -> RoundData:
    """Replicate r's rounds as one RoundData with the round axis first (a field that some round
    lacks is None)."""
    fields = []
    for i in range(len(RoundData._fields)):
        rounds = [rd[i] for rd in data_seen]
        fields.append(None if any(a is None for a in rounds) else np.stack([a[r] for a in rounds]))
    return RoundData(*fields)
