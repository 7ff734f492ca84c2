"""The reference game loop of the bandit protocol: one round at a time, literally.

:func:`reference_play` is the specification that the driver playing
:class:`arena.bandit.game.BanditProtocol` must reproduce to 1e-12. It shares only the setup with
the driver (:func:`arena.game.prepare_game`); each round it calls ``predict``, shows ``p_t`` to the
adversary, asks it for ``l_t`` through ``losses(t, history)``, draws ``I_t`` by inverse CDF from
the replicate's action stream (:func:`arena.experts.reference.draw_action`), hands the player
``I_t``, ``l_{t,I_t}`` and ``p_t`` — nothing else — and records the round. At each checkpoint
every metric is recomputed from the stored history by its brute-force definition
(:mod:`arena.metrics.bruteforce`). Memory and time grow with T: a test oracle for small games.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from arena.bandit.protocol import BanditPlayer
from arena.experts.reference import draw_action
from arena.game import Who, declared_rows, prepare_game
from arena.metrics import bruteforce
from arena.protocols import Adversary
from arena.results import reference_rows, tidy_frame
from arena.spec import History


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
    params = {m.name: m.param_values(spec) for m in game.metrics}

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
        for m in game.metrics:
            if m.name in ("bound", "lower_bound"):
                labelled = declared_rows(m.name, player, adversary, t, n_rep)
            elif "competitor" in m.requires:  # tv_regret (and its bound), tv_variation, tv_loss
                declares = getattr(player, "interval_regret_constant", None)
                labelled = bruteforce.tv_rows(
                    m.name,
                    probs_t,
                    losses_t,
                    np.stack(competitors_seen, axis=1),
                    None if declares is None else np.broadcast_to(declares(t), (n_rep,)),
                )
            elif m.name == "estimate_bias":  # reads the player's own estimates, as defined
                labelled = _estimate_bias_rows(player, spec, losses_t, params[m.name])
            elif m.name == "dg2_score":  # the chips move with losses mapped to [0, 1]
                labelled = _dg2_score_rows(spec, probs_t, losses_t, actions_t, params[m.name])
            else:
                labelled = [
                    (
                        m.name,
                        float(param),
                        [
                            bruteforce.evaluate(
                                m.name,
                                param,
                                probs_t[r],
                                losses_t[r],
                                actions_t[r],
                                None if means_t is None else means_t[r],
                                previous=previous,
                            )
                            for r in range(n_rep)
                        ],
                    )
                    for param in params[m.name]
                ]
            rows.extend(reference_rows(game.constants, game.ids, t, labelled))
        previous = t
    return tidy_frame(rows)


def _dg2_score_rows(spec, probs_t, losses_t, actions_t, thresholds) -> list:
    """``dg2_score`` per threshold and replicate from the whole history (the DGv2 chips)."""
    from arena.bandit.drifting import dg2_score_bruteforce

    unit = (losses_t - spec.loss_range[0]) / spec.loss_scale
    return [
        (
            "dg2_score",
            float(th),
            [
                dg2_score_bruteforce(probs_t[r], unit[r], actions_t[r], float(th))
                for r in range(spec.n_replicates)
            ],
        )
        for th in thresholds
    ]


def _estimate_bias_rows(player, spec, losses_t, arms) -> list:
    """``L̂_{t,i} − Σ_s (l_{s,i} − lo)/(hi − lo)`` per arm and replicate (``estimate_bias``)."""
    from arena.bandit.metrics import estimate_bias_bruteforce

    lo, scale = spec.loss_range[0], spec.loss_scale
    est = np.asarray(player.estimates(), dtype=np.float64)
    unit = (losses_t - lo) / scale
    return [
        (
            "estimate_bias",
            float(arm),
            [estimate_bias_bruteforce(est[r], unit[r], int(arm)) for r in range(spec.n_replicates)],
        )
        for arm in arms
    ]
