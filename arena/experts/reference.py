"""The reference game loop: the experts protocol played literally, one round at a time.

:func:`reference_play` is the specification that the fast engine
(:func:`arena.game.run_game` playing :class:`arena.experts.game.ExpertsProtocol`) must reproduce
to 1e-12. It shares only the setup with the driver (:func:`arena.game.prepare_game`: validation,
seeding, cloning and ``reset``) and the skeleton of every reference loop
(:class:`arena.reference.ReferenceLoop`: the rounds, the stored history, the checkpoints, the
rows); the rounds, the action draws and every metric are written out independently:

* each round (:meth:`ExpertsLoop.play_round`) calls ``predict``, shows ``p_t`` to the adversary,
  asks it for ``l_t`` through ``losses(t, history)`` (an oblivious adversary answers with
  ``losses_block(t, 1)``), draws ``I_t`` by inverse CDF, records the round in the
  :class:`~arena.spec.History` and gives the player its feedback (:meth:`ExpertsLoop.outcome`
  and :meth:`ExpertsLoop.round_update`: ``update`` sees ``l_t``) (Luo 2016, §2.1.2);
* the whole history is stored, and at each checkpoint every metric is recomputed from it by its
  own brute-force definition (:meth:`arena.metric.Metric.reference`, handed one
  :class:`~arena.metrics.base.ExpertsRecord` per replicate).

The bandit loop (:class:`arena.bandit.reference.BanditLoop`) is this loop with its feedback
overridden. Memory and time grow with T (O(T²) per checkpoint for the interval metrics): this is a
test oracle for small games, not a way to run experiments.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

from arena.metrics.base import ExpertsRecord
from arena.reference import ReferenceLoop
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


class ExpertsOutcome(NamedTuple):
    """What an experts player is owed after ``p_t`` (:meth:`ExpertsLoop.respond`).

    Attributes
    ----------
    losses : ndarray, shape (R, N)
        ``l_t``, read-only (the arena's own array).
    actions : ndarray of int, shape (R,)
        The draws ``I_t ~ p_t`` (0-based), for a player tagged ``observes_action``.
    confidences : ndarray, shape (R, N), or None
        The confidences announced before ``p_t`` in a sleeping game, else None.
    """

    losses: np.ndarray
    actions: np.ndarray
    confidences: np.ndarray | None


class ExpertsLoop(ReferenceLoop):
    """The experts protocol's rounds, literally (Luo 2016, §2.1.2): confidences (sleeping
    experts), ``p_t``, ``l_t``, the draw ``I_t``, the player's feedback.

    Examples
    --------
    The rows of :func:`arena.game.run_game`, to 1e-12:

    >>> import pandas as pd
    >>> from arena.game import run_game
    >>> kw = dict(n_actions=3, horizon=20, replicates=2, metrics={"regret": {}})
    >>> ref = ExpertsLoop.reference_play("hedge", "greedy", **kw)
    >>> pd.testing.assert_frame_equal(ref, run_game("hedge", "greedy", **kw).rows, atol=1e-12)
    """

    record_type = ExpertsRecord

    def start(self) -> None:
        """The adversary's view of the game (the :class:`~arena.spec.History`), and which oracle
        series the metrics read."""
        adversary = self.adversary
        self.sleeping = adversary.tags.emits_confidences
        self.want_means = any("means" in m.requires for m in self.game.metrics)
        self.want_competitor = any("competitor" in m.requires for m in self.game.metrics)
        want_tree = any("reached" in m.requires for m in self.game.metrics)  # tree_regret
        self.parents = np.asarray(adversary.tree_parents()) if want_tree else None
        self.history = History(
            self.n_rep,
            self.spec.n_actions,
            adversary.tags.sees_distribution,
            owner=Who("adversary", adversary),
        )

    def round_context(self, t: int) -> np.ndarray | None:
        """The confidences ``I_t`` (R, N) a sleeping game announces before ``p_t``, else None."""
        if not self.sleeping:
            return None
        conf = np.array(self.adversary.confidences(t, self.history), dtype=np.float64)
        _check_shape("adversary.confidences", conf, (self.n_rep, self.spec.n_actions), t)
        return conf

    def round_predict(self, t: int, context: np.ndarray | None) -> np.ndarray:
        """``p_t`` (R, N): ``player.predict()``, given the confidences in a sleeping game."""
        player = self.player
        p = player.predict() if context is None else player.predict(confidences=context)
        return np.array(p, dtype=np.float64)

    def round_respond(
        self, t: int, output: np.ndarray, context: np.ndarray | None
    ) -> ExpertsOutcome:
        """``p_t`` shown to the adversary, ``l_t``, the draw ``I_t``, the round recorded."""
        adversary, history = self.adversary, self.history
        shape = (self.n_rep, self.spec.n_actions)
        p = np.array(output, dtype=np.float64)
        _check_shape("player.predict", p, shape, t)
        history._show(p)
        loss = np.array(adversary.losses(t, history), dtype=np.float64)
        _check_shape("adversary.losses", loss, shape, t)
        actions = np.empty(self.n_rep, dtype=np.int64)
        for r in range(self.n_rep):
            u = self.action_rngs[r].random()
            actions[r] = draw_action(p[r], u)
        outcome = self.outcome(p, loss, actions, context)
        history._record(p, loss, actions)

        self.store(probs=p, losses=loss, actions=actions)  # each (R, N), I_t (R,)
        if self.sleeping:
            self.store(confidences=context)
        if self.want_means:  # μ_t
            self.store(means=np.array(adversary.oracle("means", t, 1), dtype=np.float64)[:, 0])
        if self.want_competitor:  # u_t of tv_regret
            u = np.array(adversary.oracle("competitor", t, 1), dtype=np.float64)
            self.store(competitor=np.broadcast_to(u, (self.n_rep, 1, self.spec.n_actions))[:, 0])
        if self.parents is not None:  # the edges x_t traverses (tree experts)
            reached = np.array(adversary.oracle("reached", t, 1), dtype=np.float64)[:, 0]
            self.store(reached=reached)
        return outcome

    def outcome(
        self, probs: np.ndarray, losses: np.ndarray, actions: np.ndarray, conf: np.ndarray | None
    ) -> Any:
        """Full information: what the player is owed is the whole ``l_t`` (its draw ``I_t`` if
        it ``observes_action``, the confidences in a sleeping game)."""
        losses.flags.writeable = False  # the player observes l_t, it must not change it
        return ExpertsOutcome(losses, actions.copy(), conf)

    def round_update(self, outcome: ExpertsOutcome) -> None:
        """``player.update(l_t)``, with ``actions=I_t`` for a player that ``observes_action``
        and ``confidences`` in a sleeping game."""
        extra = {}
        if self.player.tags.observes_action:
            extra["actions"] = outcome.actions.copy()
        if outcome.confidences is not None:
            extra["confidences"] = outcome.confidences
        self.player.update(outcome.losses, **extra)

    def record_fields(self, rounds: Mapping[str, np.ndarray | None]) -> dict[str, Any]:
        """``p_s``, ``l_s``, ``I_s`` and the oracle series stored, the tree's template and the
        previous checkpoint."""
        return {**rounds, "parents": self.parents, "previous": self.previous}


reference_play = ExpertsLoop.reference_play
"""The protocol's ``reference_loop``: :meth:`ExpertsLoop.reference_play` (the keyword arguments
of :func:`arena.game.prepare_game`; the tidy rows ``run_game`` equals to 1e-12)."""


def _check_shape(what: str, arr: np.ndarray, shape: tuple[int, int], t: int) -> None:
    if arr.shape != shape:
        raise ValueError(f"{what} returned shape {arr.shape} at round {t}, expected {shape}")
