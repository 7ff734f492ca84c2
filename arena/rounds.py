"""The one-round API: any player and adversary of any protocol, driven one round at a time.

:func:`start` sets a game up exactly as :func:`arena.play` does (the driver's
:func:`~arena.game.prepare_game`: validation, the spec, the seeding contract of
:mod:`arena.seeding`, clones, ``reset``) and returns the protocol's literal reference loop
(:class:`arena.reference.ReferenceLoop`) on it, a **session**. A researcher's own loop then calls
the player's ``predict`` and ``update`` itself, River-like, and hands each prediction to the
session, which plays the adversary's and the arena's side of the round (``respond``)::

    session = start("hedge", "bernoulli", n_actions=3, horizon=50, replicates=2, seed=7)
    hedge = session.player
    for t in session.rounds():
        p = hedge.predict()            # p_t, (R, N)
        seen = session.respond(p)      # l_t (R, N) and the draw I_t (R,)
        hedge.update(seen.losses)
    rows = session.rows()              # arena.play's rows of the same game, to 1e-12

The session's round is the reference loop's own (its hooks, ``round_context`` …
``round_update``), so a hand loop and the reference loop run the same code, and the conformance
check ``check_one_round_matches_engine`` proves, component by component, that the rows of a game
played so equal the engine's. ``docs/one-round.md`` gives each protocol's shapes and examples.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from arena.game import prepare_game
from arena.reference import ReferenceLoop


def start(
    player: Any,
    adversary: Any,
    *,
    horizon: int,
    n_actions: int | None = None,
    replicates: int | Iterable[int] = 1,
    seed: int = 0,
    metrics: Any = None,
    checkpoints: Sequence[int] | str | None = None,
    per_decade: int = 10,
    player_params: Mapping[str, Any] | None = None,
    adversary_params: Mapping[str, Any] | None = None,
) -> ReferenceLoop:
    """Set a game up as :func:`arena.play` does and return its session, before round 1.

    Parameters
    ----------
    player, adversary : component or registry name
        As for :func:`arena.play`; instances are cloned, never mutated. The session's
        ``player`` and ``adversary`` are the reset clones the rounds use.
    horizon, n_actions, replicates, seed, metrics, checkpoints, per_decade, player_params, \
adversary_params
        As for :func:`arena.play`: the same values give the same spec, the same streams (replicate
        r's adversary, action and player generators, :func:`arena.seeding.replicate_streams`)
        and so the same rounds.

    Returns
    -------
    ReferenceLoop
        The protocol's loop (:class:`arena.experts.reference.ExpertsLoop`,
        :class:`~arena.bandit.reference.BanditLoop`, :class:`~arena.oco.reference.OCOLoop`,
        :class:`~arena.boosting.reference.BoostingLoop`, or a plugin protocol's): ``rounds()``,
        ``context()``, ``predict()``, ``respond(output)``, ``update(outcome)``,
        ``play_round(t)`` and ``rows()``.

    Raises
    ------
    arena.errors.ConfigError
        As :func:`arena.play` raises it, before any round.
    NotImplementedError
        If the game's protocol has no reference loop built on
        :class:`~arena.reference.ReferenceLoop`.

    Examples
    --------
    >>> import pandas as pd
    >>> from arena import play
    >>> kw = dict(n_actions=3, horizon=20, replicates=2, seed=7, metrics=["loss", "regret"])
    >>> session = start("hedge", "bernoulli", **kw)
    >>> for t in session.rounds():
    ...     p = session.player.predict()
    ...     session.player.update(session.respond(p).losses)
    >>> pd.testing.assert_frame_equal(
    ...     session.rows(), play("hedge", "bernoulli", **kw), check_exact=False, rtol=0, atol=1e-12)
    """
    game = prepare_game(
        player,
        adversary,
        horizon=horizon,
        n_actions=n_actions,
        replicates=replicates,
        seed=seed,
        metrics=metrics,
        checkpoints=checkpoints,
        per_decade=per_decade,
        player_params=player_params,
        adversary_params=adversary_params,
    )
    return loop_class(game.protocol)(game)


def loop_class(protocol: Any) -> type[ReferenceLoop]:
    """Return the :class:`~arena.reference.ReferenceLoop` subclass of ``protocol`` (a
    :class:`~arena.protocol.GameProtocol`): the class whose ``reference_play`` its
    ``reference_loop`` names.

    Examples
    --------
    >>> from arena.protocol import protocol_for
    >>> loop_class(protocol_for("bandit")).__name__
    'BanditLoop'
    """
    try:
        target = protocol.reference_loop_target()
    except NotImplementedError as exc:
        raise NotImplementedError(f"{exc}: no one-round API") from None
    owner = getattr(target, "__self__", None)
    if not (isinstance(owner, type) and issubclass(owner, ReferenceLoop)):
        raise NotImplementedError(
            f"the {protocol.name} protocol's reference loop ({protocol.reference_loop}) is not "
            "the reference_play of an arena.reference.ReferenceLoop: no one-round API"
        )
    return owner
