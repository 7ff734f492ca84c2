"""The skeleton of every protocol's literal reference loop: the rounds, the checkpoints, the rows.

Each protocol's fast path (:meth:`arena.game.GameProtocol.start` → :meth:`arena.game.Stepper.step`)
must reproduce a plain per-round loop to 1e-12 (architecture: fast path and reference). What
every such loop does is written here once, in :class:`ReferenceLoop`: prepare the game
(:func:`arena.game.prepare_game`: validation, seeding, cloning and ``reset``, shared with the
driver), play rounds 1 … T one at a time, store what each round showed, and at each checkpoint
build one record per replicate (a :class:`arena.metric.Record`), hand the records to every
metric's brute-force definition (:meth:`arena.metric.Metric.reference_rows`) and assemble the tidy
rows (:func:`arena.results.reference_rows`, :func:`arena.results.tidy_frame`).

What differs between protocols is in a subclass per protocol (its ``reference.py``), as the fast
path's differences are in its :class:`~arena.game.Stepper`, through three hooks:

* :meth:`ReferenceLoop.start`: the state the protocol keeps across rounds (the adversary's
  :class:`~arena.spec.History`, a base learner), before round 1;
* :meth:`ReferenceLoop.play_round`: one round, a literal transcription of the protocol's feedback
  rule (who is shown what, in which order), which stores the round with :meth:`ReferenceLoop.store`;
* :meth:`ReferenceLoop.record_fields`: what a metric's reference reads of one replicate, from the
  stored rounds.

A protocol may split its round into four hooks instead of writing :meth:`~ReferenceLoop.play_round`
whole, and the built-in protocols do: :meth:`~ReferenceLoop.round_context` (what the player is shown
before it predicts), :meth:`~ReferenceLoop.round_predict` (the player's call),
:meth:`~ReferenceLoop.round_respond` (the adversary's and the arena's side of the round, which
stores it) and :meth:`~ReferenceLoop.round_update` (the player's feedback). The loop is then also
the **one-round API** (:mod:`arena.rounds`, ``docs/one-round.md``): :meth:`~ReferenceLoop.context`,
:meth:`~ReferenceLoop.predict`, :meth:`~ReferenceLoop.respond` and :meth:`~ReferenceLoop.update`
call those hooks one at a time from a researcher's own loop, which may call the player's own
``predict`` and ``update`` in their place, and :meth:`~ReferenceLoop.rows` returns the tidy rows
of the rounds played so far. :meth:`~ReferenceLoop.play_round` is the four in order, so the
reference loop and a hand loop run the same code.

The metrics' definitions are independent of the streaming code, and so is this loop: it stores the
whole history, so memory and time grow with T (O(T²) per checkpoint for the interval metrics). It
is a test oracle for small games, not a way to run experiments.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from arena.game import prepare_game
from arena.metric import Record
from arena.protocol import PreparedGame
from arena.results import reference_rows, tidy_frame


class ReferenceLoop:
    """The literal per-round loop of one protocol, played on one prepared game.

    A protocol subclasses it, sets :attr:`record_type` and writes :meth:`play_round` (and
    :meth:`start`, :meth:`record_fields` where the defaults do not do); :meth:`reference_play`
    then plays a game from the arguments of :func:`arena.game.prepare_game` and returns the tidy
    rows that ``run_game(...).rows`` must equal to 1e-12.

    Parameters
    ----------
    game : PreparedGame
        The game, resolved and reset (:func:`arena.game.prepare_game`).

    Attributes
    ----------
    game : PreparedGame
    player, adversary : component
        The game's components (reset clones).
    spec : GameSpec
    n_rep : int
        The replicates R played at once.
    action_rngs : list of numpy.random.Generator
        Per replicate, the stream of the arena's action uniforms (the draws of ``I_t``).
    previous : int
        The last checkpoint logged (0 before the first): the window of the window metrics.

    Examples
    --------
    A loop that only counts rounds, with a record holding the replicate's round numbers:

    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True, kw_only=True)
    ... class CountRecord(Record):
    ...     rounds: np.ndarray
    >>> class CountLoop(ReferenceLoop):
    ...     record_type = CountRecord
    ...     def play_round(self, t):
    ...         self.store(rounds=np.full(self.n_rep, t))
    >>> loop = CountLoop(prepare_game("hedge", "bernoulli", n_actions=2, horizon=3, replicates=2))
    >>> for t in (1, 2, 3):
    ...     loop.play_round(t)
    >>> record = loop.records(3)[1]
    >>> record.t, record.replicate, record.rounds
    (3, 1, array([1, 2, 3]))
    """

    record_type: ClassVar[type[Record]] = Record
    """The class of the records the metrics' references read (the protocol's ``Record``)."""

    def __init__(self, game: PreparedGame):
        self.game = game
        self.player, self.adversary, self.spec = game.player, game.adversary, game.spec
        self.n_rep = game.spec.n_replicates
        self.action_rngs = game.action_rngs
        self.previous = 0
        self.rounds_seen: dict[str, list[Any]] = {}
        self._checkpoints = frozenset(game.grid.tolist())
        self._started = False
        self._settled = 0  # rounds whose checkpoint rows are built (or that are no checkpoint)
        self._shown: tuple[int, Any] | None = None  # (round, what its player is shown)
        self._rows: list[dict[str, Any]] = []

    @classmethod
    def reference_play(cls, player: Any, adversary: Any, **kwargs: Any) -> pd.DataFrame:
        """Play a game with this loop and return its tidy rows (:data:`arena.results.SCHEMA`).

        Parameters
        ----------
        player, adversary : component or registry name
            As for :func:`arena.game.run_game`.
        **kwargs
            The keyword arguments of :func:`arena.game.prepare_game` (``horizon``, ``n_actions``,
            ``replicates``, ``seed``, ``metrics``, ``checkpoints``, ``per_decade``,
            ``player_params``, ``adversary_params``).

        Returns
        -------
        pandas.DataFrame
            One row per checkpoint, metric, parameter value and replicate, in that order.
        """
        return cls(prepare_game(player, adversary, **kwargs)).play()

    def play(self) -> pd.DataFrame:
        """Play rounds 1 … T; at each checkpoint, every metric's reference on the records.

        Returns
        -------
        pandas.DataFrame
            The tidy rows, ordered by checkpoint, then metric, parameter and replicate.
        """
        self._begin()
        for t in range(self.played + 1, self.spec.horizon + 1):
            self.play_round(t)
            self._settle()
        return self.rows()

    # -- the one-round API ---------------------------------------------------------------------

    @property
    def played(self) -> int:
        """The rounds played so far: those whose round the loop has stored."""
        return max((len(seen) for seen in self.rounds_seen.values()), default=0)

    @property
    def round(self) -> int:
        """The round being played (1-based): the one after the last stored."""
        return self.played + 1

    @property
    def splits_rounds(self) -> bool:
        """Whether the protocol writes the four round hooks (else only :meth:`play_round`), so
        that :meth:`context`, :meth:`predict`, :meth:`respond` and :meth:`update` apply."""
        return type(self).round_respond is not ReferenceLoop.round_respond

    def rounds(self) -> Iterator[int]:
        """Yield the rounds t = :attr:`round` … T, each once its predecessor is played.

        A round is played when the loop's body has called :meth:`respond` (or
        :meth:`play_round`); once the body is done, the round's checkpoint rows are built, with
        the player as its feedback left it (a declared bound, a player's estimates). A body that
        played nothing raises ``RuntimeError``: the game would never advance.
        """
        self._begin()
        while self.round <= self.spec.horizon:
            t = self.round
            yield t
            if self.played < t:
                raise RuntimeError(
                    f"round {t} ended unplayed: call respond(output) (or play_round(t)) in "
                    "the loop's body"
                )
            self._settle()

    def context(self) -> Any:
        """Return what the player is shown this round before it predicts (the protocol's
        :meth:`round_context`: None, a sleeping game's confidences, the features ``x_t``).

        Fetched from the adversary once a round; later calls in the same round return it again.
        """
        self._begin()
        self._settle()
        t = self.round
        if t > self.spec.horizon:
            raise RuntimeError(f"the game has {self.spec.horizon} rounds: all are played")
        if self._shown is None or self._shown[0] != t:
            self._shown = (t, self.round_context(t))
        return self._shown[1]

    def predict(self) -> Any:
        """Return the player's prediction this round, called as the engine calls it
        (:meth:`round_predict`, with :meth:`context`)."""
        return self.round_predict(self.round, self.context())

    def respond(self, output: Any) -> Any:
        """Play the rest of the round against the player's ``output`` (its ``predict``'s answer)
        and return what the player is owed (the protocol's :meth:`round_respond`): the
        adversary's answer, the arena's draw and evaluation, the round stored for the rows."""
        context = self.context()
        return self.round_respond(self.round, output, context)

    def update(self, outcome: Any) -> None:
        """Hand the player the round's ``outcome`` (what :meth:`respond` returned) as the engine
        hands it (:meth:`round_update`), and end the round."""
        self.round_update(outcome)
        self._settle()

    def rows(self) -> pd.DataFrame:
        """Return the tidy rows (:data:`arena.results.SCHEMA`) of the checkpoints played so far.

        After every round of the game they equal ``arena.play``'s rows of the same game (to
        1e-12: the conformance check ``check_one_round_matches_engine``).
        """
        self._settle()
        return tidy_frame(list(self._rows))

    def _begin(self) -> None:
        if not self._started:
            self._started = True
            self.start()

    def _settle(self) -> None:
        """Build the rows of the played round if it is a checkpoint (once)."""
        t = self.played
        if t <= self._settled:
            return
        if t > self._settled + 1:
            raise RuntimeError(f"rounds {self._settled + 1} to {t} were stored at once")
        self._settled = t
        if t not in self._checkpoints:
            return
        game = self.game
        records = self.records(t)
        for m in game.metrics:  # rows ordered by metric, then parameter, then replicate
            self._rows.extend(
                reference_rows(game.constants, game.ids, t, m.reference_rows(records))
            )
        self.previous = t

    # -- the protocol's hooks ------------------------------------------------------------------

    def start(self) -> None:
        """Set up what the protocol keeps across rounds, before round 1 (default: nothing)."""

    def play_round(self, t: int) -> None:
        """Play round ``t`` of every replicate and :meth:`store` what it showed.

        The default plays the four round hooks in order (:meth:`context`, :meth:`predict`,
        :meth:`respond`, :meth:`update`); a protocol that does not split its round overrides it.
        """
        if t != self.round:
            raise ValueError(f"round {t} played out of turn: round {self.round} is next")
        self.update(self.respond(self.predict()))

    def round_context(self, t: int) -> Any:
        """What the player is shown before it predicts in round ``t`` (default: nothing)."""
        return None

    def round_predict(self, t: int, context: Any) -> Any:
        """The player's ``predict`` in round ``t``, called as the protocol calls it."""
        raise NotImplementedError(f"{type(self).__name__} does not split its rounds")

    def round_respond(self, t: int, output: Any, context: Any) -> Any:
        """The rest of round ``t`` against the player's ``output``: :meth:`store` it and return
        what the player's ``update`` is owed."""
        raise NotImplementedError(f"{type(self).__name__} does not split its rounds")

    def round_update(self, outcome: Any) -> None:
        """Hand the player round's ``outcome`` (what :meth:`round_respond` returned)."""
        raise NotImplementedError(f"{type(self).__name__} does not split its rounds")

    def record_fields(self, rounds: Mapping[str, np.ndarray | None]) -> dict[str, Any]:
        """Return the protocol's fields of one replicate's record (beyond ``t``, ``replicate``,
        ``spec``, ``player`` and ``adversary``, which every record has).

        Parameters
        ----------
        rounds : mapping
            Each stored series of the replicate, rounds 1 … t along the first axis (None where a
            round stored None).

        The default returns ``rounds`` as they are: the series are named as the record's fields.
        """
        return dict(rounds)

    # -- the history ---------------------------------------------------------------------------

    def store(self, **series: np.ndarray | None) -> None:
        """Append this round's arrays, each with the replicate axis first, to the named series."""
        for name, value in series.items():
            self.rounds_seen.setdefault(name, []).append(value)

    def records(self, t: int) -> list[Record]:
        """Return one :attr:`record_type` per replicate, after round ``t``, from the whole history.

        Each series is stacked along a round axis after the replicate axis, so replicate r's
        series has rounds 1 … t along its first axis; a series with a None round is None.
        """
        stacked = {
            name: None if any(a is None for a in seen) else np.stack(seen, axis=1)
            for name, seen in self.rounds_seen.items()
        }
        return [
            self.record_type(
                t=t,
                replicate=r,
                spec=self.spec,
                player=self.player,
                adversary=self.adversary,
                **self.record_fields({k: None if a is None else a[r] for k, a in stacked.items()}),
            )
            for r in range(self.n_rep)
        ]
