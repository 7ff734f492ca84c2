"""The reference game loop of the bandit protocol: one round at a time, literally.

:func:`reference_play` is the specification that the driver playing
:class:`arena.bandit.game.BanditProtocol` must reproduce to 1e-12. It shares only the setup with
the driver (:func:`arena.game.prepare_game`); each round it calls ``predict``, shows ``p_t`` to the
adversary, asks it for ``l_t`` through ``losses(t, history)``, draws ``I_t`` by inverse CDF from
the replicate's action stream (:func:`arena.experts.reference.draw_action`), hands the player
``I_t``, ``l_{t,I_t}`` and ``p_t`` — nothing else — and records the round. At each checkpoint
every metric is recomputed from the stored history by its own brute-force definition
(:meth:`arena.metric.Metric.reference`, one :class:`~arena.metrics.base.ExpertsRecord` per
replicate). Memory and time grow with T: a test oracle for small games.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from arena.bandit.components import BanditPlayer
from arena.components import Adversary
from arena.experts.reference import draw_action
from arena.game import prepare_game
from arena.metrics.base import ExpertsRecord
from arena.results import reference_rows, tidy_frame
from arena.spec import History
from arena.validation import Who


def reference_play(
    player: BanditPlayer | str, adversary: Adversary | str, **kwargs: Any
) -> pd.DataFrame:
    """Play a bandit game with the literal per-round loop; return the tidy rows of ``run_game``.

    Parameters
    ----------
    player, adversary : component or registry name
        A bandit player and an experts adversary (as for :func:`arena.game.run_game`).
    **kwargs
        The keyword arguments of :func:`arena.game.prepare_game`.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`arena.results.SCHEMA`; the same values as ``run_game(...).rows`` to 1e-12.

    Examples
    --------
    >>> from arena.game import run_game
    >>> kw = dict(n_actions=3, horizon=20, replicates=2, metrics={"regret": {}, "arm_pulls": {}})
    >>> ref = reference_play("exp3", "bernoulli", **kw)
    >>> pd.testing.assert_frame_equal(ref, run_game("exp3", "bernoulli", **kw).rows, atol=1e-12)
    """
    game = prepare_game(player, adversary, **kwargs)
    player, adversary, spec = game.player, game.adversary, game.spec
    if spec.protocol != "bandit":
        raise ValueError(f"not a bandit game: {player!r} against {adversary!r}")
    n_rep, n_act = spec.n_replicates, spec.n_actions
    checkpoints = set(game.grid.tolist())
    want_means = any("means" in m.requires for m in game.metrics)
    want_competitor = any("competitor" in m.requires for m in game.metrics)

    history = History(
        n_rep, n_act, adversary.tags.sees_distribution, owner=Who("adversary", adversary)
    )
    probs_seen: list[np.ndarray] = []  # p_t, each (R, K)
    losses_seen: list[np.ndarray] = []  # l_t, each (R, K): the arena's, never the player's
    actions_seen: list[np.ndarray] = []  # I_t, each (R,)
    means_seen: list[np.ndarray] = []
    competitors_seen: list[np.ndarray] = []  # u_t of tv_regret, each (R, N)
    rows: list[dict[str, Any]] = []

    previous = 0  # the last checkpoint logged: the window of the window metrics
    for t in range(1, spec.horizon + 1):
        p = np.array(player.predict(), dtype=np.float64)
        if p.shape != (n_rep, n_act):
            raise ValueError(f"player.predict returned shape {p.shape} at round {t}")
        history._show(p)
        loss = np.array(adversary.losses(t, history), dtype=np.float64)
        if loss.shape != (n_rep, n_act):
            raise ValueError(f"adversary.losses returned shape {loss.shape} at round {t}")
        actions = np.empty(n_rep, dtype=np.int64)
        observed = np.empty(n_rep)
        for r in range(n_rep):
            actions[r] = draw_action(p[r], game.action_rngs[r].random())
            observed[r] = loss[r, actions[r]]
        player.update(actions.copy(), observed, p.copy())
        history._record(p, loss, actions)

        probs_seen.append(p)
        losses_seen.append(loss)
        actions_seen.append(actions)
        if want_means:
            means_seen.append(np.array(adversary.oracle("means", t, 1), dtype=np.float64)[:, 0])
        if want_competitor:
            u = np.array(adversary.oracle("competitor", t, 1), dtype=np.float64)
            competitors_seen.append(np.broadcast_to(u, (n_rep, 1, n_act))[:, 0])

        if t not in checkpoints:
            continue
        probs_t = np.stack(probs_seen, axis=1)
        losses_t = np.stack(losses_seen, axis=1)
        actions_t = np.stack(actions_seen, axis=1)
        means_t = np.stack(means_seen, axis=1) if want_means else None
        competitor_t = np.stack(competitors_seen, axis=1) if want_competitor else None
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
                competitor=None if competitor_t is None else competitor_t[r],
                previous=previous,
            )
            for r in range(n_rep)
        ]
        for m in game.metrics:  # rows ordered by metric, then parameter, then replicate
            rows.extend(reference_rows(game.constants, game.ids, t, m.reference_rows(records)))
        previous = t
    return tidy_frame(rows)
