"""The reference game loop of the bandit protocol: one round at a time, literally.

:func:`reference_play` is the specification that the driver playing
:class:`arena.bandit.game.BanditProtocol` must reproduce to 1e-12. Its rounds are the experts
protocol's (:class:`arena.experts.reference.ExpertsLoop`: ``predict``, ``p_t`` shown to the
adversary, ``l_t`` through ``losses(t, history)``, ``I_t`` drawn by inverse CDF from the
replicate's action stream, the round recorded), with the feedback overridden, as
:class:`arena.bandit.game.BanditStepper` overrides the experts stepper's: the player is handed
``I_t``, ``l_{t,I_t}`` and ``p_t``, nothing else (Bubeck & Cesa-Bianchi 2012, §3). At each
checkpoint every metric is recomputed from the stored history by its own brute-force definition
(:meth:`arena.metric.Metric.reference`, one :class:`~arena.metrics.base.ExpertsRecord` per
replicate: the arena knows ``l_t``). Memory and time grow with T: a test oracle for small games.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from arena.experts.reference import ExpertsLoop


class BanditOutcome(NamedTuple):
    """What a bandit player is owed after ``p_t`` (:meth:`BanditLoop.respond`): the arguments of
    ``update``, in order.

    Attributes
    ----------
    actions : ndarray of int, shape (R,)
        The arms ``I_t ~ p_t`` the arena drew (0-based).
    losses : ndarray, shape (R,)
        Their losses ``l_{t,I_t}``.
    probs : ndarray, shape (R, K)
        The ``p_t`` they were drawn from.
    """

    actions: np.ndarray
    losses: np.ndarray
    probs: np.ndarray


class BanditLoop(ExpertsLoop):
    """The experts loop, but ``update`` sees only ``I_t``, ``l_{t,I_t}`` and ``p_t`` (its
    :meth:`outcome` and :meth:`round_update` overridden).

    Examples
    --------
    The rows of :func:`arena.game.run_game`, to 1e-12; a pair that plays no bandit game is refused:

    >>> import pandas as pd
    >>> from arena.game import run_game
    >>> kw = dict(n_actions=3, horizon=20, replicates=2, metrics={"regret": {}, "arm_pulls": {}})
    >>> ref = BanditLoop.reference_play("exp3", "bernoulli", **kw)
    >>> pd.testing.assert_frame_equal(ref, run_game("exp3", "bernoulli", **kw).rows, atol=1e-12)
    >>> BanditLoop.reference_play("hedge", "bernoulli", n_actions=2, horizon=5)
    Traceback (most recent call last):
    ...
    ValueError: not a bandit game: Hedge() against Bernoulli()
    """

    def start(self) -> None:
        """Refuse a game that is not a bandit game, then set up the experts loop's state."""
        if self.spec.protocol != "bandit":
            raise ValueError(f"not a bandit game: {self.player!r} against {self.adversary!r}")
        super().start()

    def outcome(
        self, probs: np.ndarray, losses: np.ndarray, actions: np.ndarray, conf: np.ndarray | None
    ) -> BanditOutcome:
        """Bandit feedback: the drawn arms, their losses and the distributions played."""
        observed = np.array([losses[r, actions[r]] for r in range(self.n_rep)])  # l_{t,I_t}
        return BanditOutcome(actions.copy(), observed, probs.copy())

    def round_update(self, outcome: BanditOutcome) -> None:
        """``player.update(I_t, l_{t,I_t}, p_t)``."""
        self.player.update(outcome.actions, outcome.losses, outcome.probs)


reference_play = BanditLoop.reference_play
"""The protocol's ``reference_loop``: :meth:`BanditLoop.reference_play` (the keyword arguments
of :func:`arena.game.prepare_game`; the tidy rows ``run_game`` equals to 1e-12)."""
