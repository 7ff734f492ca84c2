"""The reference loop of the boosting protocol: one round at a time, metrics from the history.

:func:`reference_play_boosting` is the specification the driver (:class:`arena.boosting.game.
BoostingProtocol`) must reproduce to 1e-12. It shares only the setup (:func:`arena.game.
prepare_game`). Each round it asks the adversary for one example (``data_block(t, 1)``), the
booster for ``ŷ_t`` (``predict``), then calls ``update`` with the label, and does the same for the
base learner one round at a time; the losses come from the textbook scalar formulas
(:func:`arena.oco.reference.scalar_loss`) and every metric is recomputed from the stored history
at each checkpoint.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from arena.game import declared_rows, prepare_game
from arena.oco.reference import scalar_loss
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
    n_rep, kind = spec.n_replicates, spec.loss
    checkpoints = set(game.grid.tolist())
    base = None
    if any(getattr(m, "reads_base", False) for m in game.metrics):
        base = player.base_learner(spec)
    history: list[tuple[np.ndarray, np.ndarray, np.ndarray | None]] = []  # (y_t, ŷ_t, base ŷ_t)
    test = adversary.test_split() if "test_split" in adversary.tags.oracle else None
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
        for m in game.metrics:
            if m.name in ("bound", "lower_bound"):
                labelled = declared_rows(m.name, player, adversary, t, n_rep)
            elif m.name == "weighted_edge":
                labelled = _edges(m, player, spec)
            else:
                value = _metric(m.name, kind, spec.task, history, player, test)
                labelled = [(m.name, float("nan"), value)]
            rows.extend(reference_rows(game.constants, game.ids, t, labelled))
    return tidy_frame(rows)


def _totals(kind: str, history, which: int) -> tuple[np.ndarray, np.ndarray]:
    """(loss, mistakes) of the booster (which=1) or the base learner (which=2), summed by loops."""
    n_rep = history[0][0].shape[0]
    loss, mistakes = np.zeros(n_rep), np.zeros(n_rep)
    for h in history:
        for r in range(n_rep):
            p, y = float(h[which][r]), float(h[0][r])
            loss[r] += scalar_loss(kind, p, y)[0]
            mistakes[r] += 1.0 if y * p <= 0.0 else 0.0
    return loss, mistakes


def _metric(name: str, kind: str, task: str, history, player, test) -> np.ndarray:
    if name in ("loss", "mistakes"):
        loss, mistakes = _totals(kind, history, 1)
        return loss if name == "loss" else mistakes
    if name in ("base_loss", "base_mistakes"):
        loss, mistakes = _totals(kind, history, 2)
        return loss if name == "base_loss" else mistakes
    if name == "improvement":
        ours = _totals(kind, history, 1)[task == "classification"]
        base = _totals(kind, history, 2)[task == "classification"]
        return np.array(
            [100.0 * (b - o) / b if b > 0 else np.nan for o, b in zip(ours, base, strict=True)]
        )
    if name == "learners_used":
        calls = player.learner_totals()["calls"]
        return np.array([float(sum(1 for c in row if c > 0)) for row in calls])
    if name == "test_error":
        scores = np.asarray(player.score(test.x), dtype=np.float64)
        out = []
        for r in range(scores.shape[0]):
            pairs = list(zip(scores[r], test.y[r], strict=True))
            if task == "classification":
                out.append(sum(1.0 for s, y in pairs if y * s <= 0.0) / len(pairs))
            else:
                total = sum(scalar_loss(kind, float(s), float(y))[0] for s, y in pairs)
                out.append(total / len(pairs))
        return np.array(out)
    raise ValueError(f"the boosting reference loop knows no metric {name!r}")


def _edges(metric, player, spec) -> list:
    totals = player.learner_totals()
    out = []
    for _, param in metric.row_keys(spec):  # the learners the metric logs (1-based)
        i = int(param)
        values = []
        for r in range(totals["weight"].shape[0]):
            w, e = float(totals["weight"][r, i - 1]), float(totals["edge"][r, i - 1])
            values.append(e / (2.0 * w) if w > 0 else np.nan)
        out.append(("weighted_edge", float(i), values))
    return out
