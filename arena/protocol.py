"""The protocol interface: what a feedback model supplies to the one driver.

A :class:`GameProtocol` is the strategy object of :func:`arena.game.run_game` (architecture: the
shape): its game description (:class:`~arena.spec.GameSpec`), its metrics (one dispatch rule,
:func:`arena.metric.metric_for`), its game key, its per-chunk :class:`Stepper` (which advances
the shared running totals the metrics read), its trace columns, its literal reference loop and
its part of the conformance suite. Protocols are registered in the entry-point group
``arena.protocols``; :func:`game_protocol` names the one a game is played in (the adversary's
``tags.protocol``, or the player's protocol that hosts it) and :func:`protocol_for` loads it.

This module and the driver import no protocol: a protocol folder imports them, never the reverse.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from arena import registry
from arena.base import NEGLIGIBLE, Footprint
from arena.errors import ArenaError
from arena.metric import Metric, metric_for
from arena.results import TraceWriter
from arena.spec import GameSpec


@dataclass
class PreparedGame:
    """A game resolved and reset, ready for its first round (shared by driver and reference loops).

    Attributes
    ----------
    protocol : GameProtocol
    player, adversary : component
        Fresh clones, already ``reset`` for the batch.
    spec : GameSpec
    metrics : list of Metric
        The applicable metrics (not yet started).
    skipped : dict
        Requested metrics that do not apply, with the reason.
    grid : ndarray
        Checkpoint rounds (ending with T).
    ids : ndarray
        Global replicate indices.
    streams : GameStreams
        Per replicate: the adversary's, the action draws' and the player's streams
        (:class:`arena.seeding.GameStreams`: a sequence of triples; the action streams made
        when first read).
    config : dict
        Resolved configuration (manifest content).
    constants : dict
        Values of the constant columns of the tidy rows.
    footprint : Footprint
        The estimated memory and work of the whole game (:func:`~arena.resources.check_resources`).
    game_key : str
        The game's identity without the player (the key of its replicates' streams).

    A game only checked (:func:`arena.game.check_game`) has the same attributes, but its
    components are not yet reset, its metrics not attached and its ``streams`` empty.
    """

    protocol: GameProtocol
    player: Any
    adversary: Any
    spec: GameSpec
    metrics: list[Metric]
    skipped: dict[str, str]
    grid: np.ndarray
    ids: np.ndarray
    streams: Sequence[tuple[np.random.Generator, ...]]
    config: dict
    constants: dict
    footprint: Footprint = NEGLIGIBLE
    game_key: str = ""

    @property
    def action_rngs(self) -> list[np.random.Generator]:
        """Per-replicate streams of the arena's action uniforms (made at the first read)."""
        actions = getattr(self.streams, "actions", None)
        return list(actions) if actions is not None else [s[1] for s in self.streams]


class GameProtocol:
    """One feedback model, as the driver plays it: the strategy of :func:`~arena.game.run_game`.

    A protocol is registered under the name that adversaries declare in ``tags.protocol`` (entry
    point group ``arena.protocols``; one class may serve several names, e.g. ``oco``,
    ``classification`` and ``regression``). The driver instantiates it with that name for each
    game. Subclasses implement the methods below; ``docs/architecture.md`` ("Adding a protocol")
    walks through them.

    Attributes
    ----------
    default_metrics : mapping
        The metrics of a game whose caller names none (``{name: params}``).
    min_chunk_rounds : int
        Fewest rounds per chunk (unless ``chunk_elements`` is smaller): protocols whose
        components pay Python overhead per chunk and per replicate raise it.
    """

    default_metrics: ClassVar[Mapping[str, Any]] = {}
    min_chunk_rounds: ClassVar[int] = 1
    hosts: ClassVar[frozenset[str]] = frozenset()
    """Protocols of adversaries this protocol also plays, when the player plays this one and not
    the adversary's (the bandit protocol hosts every experts adversary: :func:`game_protocol`)."""
    chunk_invariant: ClassVar[bool] = False
    """Whether this protocol's rows are bit-identical for every chunk size (seeding contract:
    replicate r's rows depend on neither the replicates beside it nor the chunk size). Where it
    is, a game split over threads (:mod:`arena.parallel`) plays each block in chunks sized for
    the block's own replicates, fewer chunks and so less Python under the GIL per round;
    otherwise each block plays the whole game's chunk boundaries. Declare it only where every
    metric's and component's arithmetic is chunk-free (the experts and bandit protocols; the
    conformance check ``check_rows_chunk_invariant`` holds each component to it): the OCO
    family's metrics sum each chunk apart, so their ``loss``, ``regret`` and ``path_length``
    differ in the last bits (≤ 6e-14) between chunk sizes."""
    reference_loop: ClassVar[str] = ""
    """``"module:function"`` of the protocol's literal per-round loop (:meth:`reference_play`)."""
    conformance_checks: ClassVar[str] = ""
    """``"module:attribute"`` of its :class:`arena.testing.ProtocolChecks` (:meth:`conformance`)."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

    def check_pair(self, player: Any, adversary: Any) -> None:
        """Raise :class:`~arena.errors.ConfigError` unless ``player`` can play this protocol
        against ``adversary``."""
        raise NotImplementedError

    def make_spec(
        self, player: Any, adversary: Any, *, horizon: int, n_actions: int | None, ids: np.ndarray
    ) -> tuple[GameSpec, dict[str, Any]]:
        """Return the game's spec and the protocol's entries of the manifest's config.

        Called on the fresh clones, before ``reset``; a ``ValueError`` or ``TypeError`` of the
        adversary's declarations becomes a :class:`~arena.errors.ConfigError` naming it.
        """
        raise NotImplementedError

    def metric_class(self, name: str) -> type[Metric] | str:
        """Return the class that computes metric ``name`` in this protocol, or why none does.

        The one rule of every protocol (:func:`arena.metric.metric_for`): the registered metric
        named ``name`` whose ``protocols`` contain this protocol's name.
        """
        return metric_for(name, self.name)

    def accepts_metric(self, metric: Metric) -> bool:
        """Whether a metric instance given by the caller is computed as it is: its class serves
        this protocol (else the protocol's own implementation of its name is used)."""
        return self.name in (type(metric).protocols or ())

    def identity(self, player: Any, adversary: Any, spec: GameSpec) -> tuple[dict, dict]:
        """Return the game key (what fixes the loss stream: common random numbers across players)
        and the protocol's extra fields of the cell key, both JSON-able mappings."""
        raise NotImplementedError

    def start(self, game: PreparedGame) -> Stepper:
        """Return the stepper that plays the (reset) game chunk by chunk."""
        raise NotImplementedError

    def trace_writer(self, path: Path, game: PreparedGame) -> TraceWriter:
        """Return the writer of the per-round trace (``trace_path`` of :func:`run_game`)."""
        raise NotImplementedError(f"the {self.name} protocol writes no trace")

    def reference_play(self, player: Any, adversary: Any, **kwargs: Any) -> pd.DataFrame:
        """Play the game with the protocol's literal per-round loop; return the tidy rows.

        The loop is named by :attr:`reference_loop` and imported only when called: the
        protocol's module does not depend on its test oracles.
        """
        return self.reference_loop_target()(player, adversary, **kwargs)

    def reference_loop_target(self) -> Any:
        """Return what :attr:`reference_loop` names, imported now (the one-round API,
        :mod:`arena.rounds`, finds the loop's class through it)."""
        return _load(self.reference_loop, self.name, "reference loop")

    def conformance(self) -> Any:
        """Return the protocol's part of the conformance suite, an
        :class:`arena.testing.ProtocolChecks` (its checks and its partners), named by
        :attr:`conformance_checks`."""
        return _load(self.conformance_checks, self.name, "conformance checks")


def _load(target: str, protocol: str, what: str) -> Any:
    if not target:
        raise NotImplementedError(f"the {protocol} protocol declares no {what}")
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


class CoreSnapshots:
    """The core at the end of each segment of a span (:meth:`Stepper.core_snapshots`).

    The driver reads every checkpoint's metrics from it, then calls :meth:`finish`, which raises
    the span's fault if it had one: the rows of the rounds before a fault are read first, as a
    game played segment by segment reads them.

    Attributes
    ----------
    ends : list of int
        The segments' last rounds, in order, up to the segment before the span's first fault.
    """

    ends: list[int]

    def at(self, s: int) -> Any:
        """Return the core as it stood at the end of round ``ends[s]``."""
        raise NotImplementedError

    def stacked(self, points: list[int]) -> Any:
        """Return one core whose replicate ``k·R + r`` is the game's replicate r at
        ``ends[points[k]]``, or None where the stepper cannot stack them.

        A metric whose values are computed row by row (:func:`arena.metric.computes_rowwise`)
        reads every checkpoint of the span in one call on it (``points``: the snapshots that
        are checkpoints, in order).
        """
        return None

    def finish(self) -> None:
        """Raise the span's fault, if any; otherwise leave the running core at the span's end."""


class Stepper:
    """Plays one prepared game chunk by chunk for the driver.

    Attributes
    ----------
    core : object
        The running totals every metric of the protocol may read (advanced by :meth:`step`).
    """

    core: Any
    round_elements: int | None = None
    """Values a chunk buffer holds per round and replicate (None: the game's ``n_actions``); the
    driver sizes its chunks to ``chunk_elements // (R·round_elements)`` rounds."""

    plays_spans: bool = False
    """Whether :meth:`step_span` plays a chunk that crosses checkpoints faster than as one
    :meth:`step` per segment; the driver then asks for such chunks where the protocol is
    :attr:`~GameProtocol.chunk_invariant`."""

    def step(self, t0: int, n: int) -> Any:
        """Play rounds ``t0 .. t0+n-1`` of every replicate; return the block the metrics read."""
        raise NotImplementedError

    def step_span(self, t0: int, n: int, ends: list[int]) -> Iterator[tuple[int, Any]]:
        """Play rounds ``t0 .. t0+n-1`` as segments ending at the rounds of ``ends`` (increasing,
        the last ``t0+n-1``); yield each segment's last round and block, in order.

        The driver asks for spans that cross checkpoints only in a protocol whose rows do not
        depend on the chunks (:attr:`GameProtocol.chunk_invariant`); the segments end at the
        checkpoints, where it reads the metrics. By default each segment is a :meth:`step` of
        its own; a stepper may play the span's losses and ``p_t`` in one call each and only the
        totals segment by segment, which spares a short game most of its Python per checkpoint.
        """
        start = t0
        for end in ends:
            yield end, self.step(start, end - start + 1)
            start = end + 1

    plays_core_spans: bool = False
    """Whether :meth:`core_snapshots` plays spans; the driver then asks for spans and plays them
    by it where every metric reads only the core (:func:`~arena.metric.reads_core_only`) and no
    trace is written, whether or not :attr:`plays_spans` (the experts stepper plays core spans
    of any number of replicates, blocks segment by segment only for one)."""

    def core_snapshots(self, t0: int, n: int, ends: list[int]) -> CoreSnapshots:
        """Play a span as :meth:`step_span` does, for metrics that read nothing but the core;
        return the core as it stood at each segment's end.

        No block is built: the segments' totals are advanced in one call that keeps their values
        at each segment's end (:class:`CoreSnapshots`; their arrays are not the running core's).
        The running core ends the span as :meth:`step_span` leaves it once the driver has read
        the snapshots and called :meth:`CoreSnapshots.finish`.
        """
        raise NotImplementedError

    def will_trace(self) -> None:
        """Told by the driver before round 1 when it writes a per-round trace: the blocks must
        then carry everything the trace writer reads (default: nothing to change)."""


def game_protocol(player: Any, adversary: Any) -> str:
    """Return the name of the protocol a game is played in.

    The adversary's ``tags.protocol``, unless the player does not play it but plays a protocol
    that hosts it (:attr:`GameProtocol.hosts`): a bandit player against an experts adversary
    plays the bandit protocol on the same losses (architecture: the shape).

    Examples
    --------
    >>> from arena import registry
    >>> game_protocol(registry.make("player", "hedge"), registry.make("adversary", "bernoulli"))
    'experts'
    >>> game_protocol(registry.make("player", "exp3"), registry.make("adversary", "bernoulli"))
    'bandit'
    """
    name = adversary.tags.protocol
    protocols = getattr(getattr(player, "tags", None), "protocols", frozenset())
    if name in protocols:
        return name
    for other in sorted(protocols):
        try:
            cls = registry.load("protocol", other)
        except ArenaError:  # a player's protocol nobody registered: check_pair names the mismatch
            continue
        if name in getattr(cls, "hosts", frozenset()):
            return other
    return name


def protocol_for(name: str) -> GameProtocol:
    """Return the registered protocol ``name`` (an adversary's ``tags.protocol``).

    Examples
    --------
    >>> protocol_for("experts"), protocol_for("classification")
    (ExpertsProtocol('experts'), OCOProtocol('classification'))
    """
    return registry.load("protocol", name)(name)


# ----------------------------------------------------------------------------------------------
# the driver
