"""The reference game loop: the experts protocol played literally, one round at a time.

:func:`reference_play` is the specification that the fast engine
(:func:`arena.game.run_game` playing :class:`arena.experts.game.ExpertsProtocol`) must reproduce
to 1e-12. It shares only the setup with the driver (:func:`arena.game.prepare_game`: validation,
seeding, cloning and ``reset``); the rounds, the action draws and every metric are written out here
independently:

* each round calls ``predict``, shows ``p_t`` to the adversary, asks it for ``l_t`` through
  ``losses(t, history)`` (an oblivious adversary answers with ``losses_block(t, 1)``), draws
  ``I_t`` by inverse CDF, calls ``update`` and records the round in the :class:`~arena.spec.History`
  (Luo 2016, §2.1.2);
* the whole history is stored, and at each checkpoint every metric is recomputed from it by its
  own brute-force definition (:meth:`arena.metric.Metric.reference`, handed one
  :class:`~arena.metrics.base.ExpertsRecord` per replicate).

Memory and time grow with T (O(T²) per checkpoint for the interval metrics): this is a test
oracle for small games, not a way to run experiments.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from arena.components import Adversary
from arena.experts.components import ExpertsPlayer
from arena.game import prepare_game
from arena.metrics.base import ExpertsRecord
from arena.results import reference_rows, tidy_frame
from arena.spec import History
from arena.validation import Who


def draw_action(p: np.ndarray, u: float) -> int:
    """Return the inverse-CDF draw of ``p`` at ``u``: the first i with ``p_1 + … + p_i > u``.

    If rounding leaves ``u`` at or above the total mass, the last expert with positive weight is
    drawn, never an expert with weight zero. For ``p ≥ 0`` this is
    ``searchsorted(cumsum(p), u, side="right")``; the explicit "first i" also covers the tiny
    negative weights (≥ −1e-12) that the engine tolerates, where the cumulative sum is not sorted.

    Examples
    --------
    >>> draw_action(np.array([0.25, 0.0, 0.75]), 0.25), draw_action(np.array([0.5, 0.5, 0.0]), 1.0)
    (2, 1)
    """
    above = np.flatnonzero(np.cumsum(p) > u)
    if above.size:
        return int(above[0])
    return int(np.flatnonzero(p > 0.0)[-1])


def reference_play(
    player: ExpertsPlayer | str, adversary: Adversary | str, **kwargs: Any
) -> pd.DataFrame:
    """Play a game with the literal per-round loop and return the tidy rows of :func:`run_game`.

    Parameters
    ----------
    player, adversary : component or registry name
        As for :func:`arena.game.run_game`.
    **kwargs
        The keyword arguments of :func:`arena.game.prepare_game` (``horizon``, ``n_actions``,
        ``replicates``, ``seed``, ``metrics``, ``checkpoints``, ``per_decade``, ``player_params``,
        ``adversary_params``).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`arena.results.SCHEMA`, one row per checkpoint, metric, parameter value and
        replicate, in that order; the same values as ``run_game(...).rows`` up to 1e-12.

    Examples
    --------
    >>> from arena.game import run_game
    >>> kw = dict(n_actions=3, horizon=20, replicates=2, metrics={"regret": {}})
    >>> ref = reference_play("hedge", "greedy", **kw)
    >>> pd.testing.assert_frame_equal(ref, run_game("hedge", "greedy", **kw).rows, atol=1e-12)
    """
    game = prepare_game(player, adversary, **kwargs)
    player, adversary, spec = game.player, game.adversary, game.spec
    n_rep, n_act = spec.n_replicates, spec.n_actions
    checkpoints = set(game.grid.tolist())
    want_means = any("means" in m.requires for m in game.metrics)
    want_competitor = any("competitor" in m.requires for m in game.metrics)
    want_tree = any("reached" in m.requires for m in game.metrics)  # tree_regret
    sleeping = adversary.tags.emits_confidences

    history = History(
        n_rep, n_act, adversary.tags.sees_distribution, owner=Who("adversary", adversary)
    )
    probs_seen: list[np.ndarray] = []  # p_t, each (R, N)
    losses_seen: list[np.ndarray] = []  # l_t, each (R, N)
    actions_seen: list[np.ndarray] = []  # I_t, each (R,)
    means_seen: list[np.ndarray] = []  # μ_t, each (R, N)
    competitors_seen: list[np.ndarray] = []  # u_t of tv_regret, each (R, N)
    confidences_seen: list[np.ndarray] = []  # I_t, each (R, N)
    reached_seen: list[np.ndarray] = []  # the edges x_t traverses (tree experts), each (R, N)
    rows: list[dict[str, Any]] = []

    previous = 0  # the last checkpoint logged: the window of the window metrics
    for t in range(1, spec.horizon + 1):
        if sleeping:
            conf = np.array(adversary.confidences(t, history), dtype=np.float64)
            _check_shape("adversary.confidences", conf, (n_rep, n_act), t)
            confidences_seen.append(conf)
            p = np.array(player.predict(confidences=conf), dtype=np.float64)
        else:
            p = np.array(player.predict(), dtype=np.float64)
        _check_shape("player.predict", p, (n_rep, n_act), t)
        history._show(p)
        loss = np.array(adversary.losses(t, history), dtype=np.float64)
        _check_shape("adversary.losses", loss, (n_rep, n_act), t)
        loss.flags.writeable = False  # the player observes l_t, it must not change it
        actions = np.empty(n_rep, dtype=np.int64)
        for r in range(n_rep):
            u = game.action_rngs[r].random()
            actions[r] = draw_action(p[r], u)
        extra = {}
        if player.tags.observes_action:
            extra["actions"] = actions.copy()
        if sleeping:
            extra["confidences"] = confidences_seen[-1]
        player.update(loss, **extra)
        history._record(p, loss, actions)

        probs_seen.append(p)
        losses_seen.append(loss)
        actions_seen.append(actions)
        if want_means:
            means_seen.append(np.array(adversary.oracle("means", t, 1), dtype=np.float64)[:, 0])
        if want_competitor:
            u = np.array(adversary.oracle("competitor", t, 1), dtype=np.float64)
            competitors_seen.append(np.broadcast_to(u, (n_rep, 1, n_act))[:, 0])
        if want_tree:
            reached_seen.append(np.array(adversary.oracle("reached", t, 1), dtype=np.float64)[:, 0])

        if t not in checkpoints:
            continue
        probs_t = np.stack(probs_seen, axis=1)  # (R, t, N)
        losses_t = np.stack(losses_seen, axis=1)
        actions_t = np.stack(actions_seen, axis=1)  # (R, t)
        means_t = np.stack(means_seen, axis=1) if want_means else None
        conf_t = np.stack(confidences_seen, axis=1) if sleeping else None
        competitor_t = np.stack(competitors_seen, axis=1) if want_competitor else None
        reached_t = np.stack(reached_seen, axis=1) if want_tree else None
        parents = np.asarray(adversary.tree_parents()) if want_tree else None
        records = [
            ExpertsRecord(
                t=t,
                replicate=r,
                spec=spec,
                player=player,
                adversary=adversary,
                probs=probs_t[r],
                losses=losses_t[r],
                actions=actions_t[r],
                means=None if means_t is None else means_t[r],
                confidences=None if conf_t is None else conf_t[r],
                competitor=None if competitor_t is None else competitor_t[r],
                parents=parents,
                reached=None if reached_t is None else reached_t[r],
                previous=previous,
            )
            for r in range(n_rep)
        ]
        for m in game.metrics:  # rows ordered by metric, then parameter, then replicate
            rows.extend(reference_rows(game.constants, game.ids, t, m.reference_rows(records)))
        previous = t

    return tidy_frame(rows)


def _check_shape(what: str, arr: np.ndarray, shape: tuple[int, int], t: int) -> None:
    if arr.shape != shape:
        raise ValueError(f"{what} returned shape {arr.shape} at round {t}, expected {shape}")
