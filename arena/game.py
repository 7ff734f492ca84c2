"""The game driver: one loop that plays every feedback model, R replicates per call.

The driver owns what every game has (architecture: the shape): resolving the components once,
validating the game parameters, the run id and the cell key, seeding, ``reset`` with one error
mapping, metric activation, the chunk / checkpoint / trace / progress loop, row assembly and
:class:`GameRun`. What differs between feedback models is a :class:`GameProtocol`, looked up in the
registry (entry-point group ``arena.protocols``) by the adversary's ``tags.protocol`` (or the
player's protocol that hosts it, :func:`game_protocol`): its game
description (:class:`~arena.spec.GameSpec`), its metrics, its per-chunk step (which advances the
shared running totals the metrics read), its trace columns and its literal reference loop.

Rounds are processed in chunks that end on every checkpoint: a chunk is one call of the
protocol's step (one ``losses_block`` / ``play_block`` pair against an oblivious adversary, a
per-round loop batched over replicates against an adaptive one); the metrics then consume the
chunk, so memory is O(R·N·chunk + metric state), never O(T).

The driver imports no protocol: a protocol module imports the driver, never the reverse.
"""

from __future__ import annotations

import hashlib
import importlib
import math
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from arena import registry
from arena.base import GIB, NEGLIGIBLE, Footprint, canonical_json, declared_footprint
from arena.checkpoints import log_grid
from arena.errors import ArenaError, ConfigError, GameError, failed_at
from arena.metric import Metric, metric_for, metric_problem
from arena.params import validate_params
from arena.results import GameRun, TraceWriter, assemble_rows
from arena.seeding import replicate_streams
from arena.spec import GameSpec

MAX_HORIZON = 2**31 - 1

MAX_SEED = 2**63 - 1

STATE_ARRAYS = 6
"""Arrays of shape (replicates, n_actions) a game holds at least (the player's state, the round's
distribution and losses, the metrics' running totals): the memory estimate's multiplier."""

STREAM_BYTES = 3000
"""Bytes of the three random streams of one replicate (measured: about 2.8 kB)."""
"""Largest root seed: the ``seed`` column of the results is int64, so a larger seed would play the
whole game and only then fail to be written."""

MAX_PER_DECADE = 10_000
MAX_ALL_CHECKPOINTS = 10**7
"""The longest game ``checkpoints="all"`` logs every round of (the grid is 8 bytes a round)."""
ROW_BYTES = 224
"""Bytes one tidy row takes in memory (measured: T = 10⁴ rounds × 32 replicates of one metric,
320,000 rows, 224 bytes each), for refusing a checkpoint grid whose rows cannot fit."""
"""Most checkpoints per decade: the grid is built from ``per_decade · log10(T)`` candidate rounds,
and beyond this every round up to T ≈ 4·10³ is already a checkpoint (use ``checkpoints``)."""

OPS_PER_SECOND = 2e9
"""Elementary operations per second (a flop, a float64 read or written) that the time estimate
assumes: one core of a current machine in compiled loops. Measured: SON's FD sketch (about 10·m³
operations per round and replicate, an m×m eigendecomposition) at m = 400 runs at 1–3·10⁹ on
the development machine, the experts kernels at a few 10⁹ per element and round."""

MAX_HOURS = 12.0
"""The longest estimated game (one ``arena run``, one tournament cell) the driver starts:
beyond it a game is refused before round 1, naming the parameter that makes it long. The
environment variable :data:`MAX_HOURS_VARIABLE` changes it (``inf``: no limit)."""

MAX_HOURS_VARIABLE = "ARENA_MAX_HOURS"

DEFAULT_CHUNK_ELEMENTS = 2**18
"""Default bound on R·n·N (R·n·d in OCO games) per chunk buffer: 2 MiB of float64. Large enough
that the per-chunk Python cost is small against the kernels, small enough to stay in cache."""


# ----------------------------------------------------------------------------------------------
# validation helpers shared by the driver and the protocols


def describe(kind: str, component: Any) -> str:
    """Return ``"<kind> <registry name> <repr>"``, the prefix of every error about a component."""
    return f"{kind} {type(component).registry_name()} {component!r}"


class Who:
    """A component's description, rendered only when an error message needs it (``repr`` reads
    the ``__init__`` signature, too slow to build on every chunk)."""

    def __init__(self, kind: str, component: Any):
        self.kind, self.component = kind, component

    def __str__(self) -> str:
        return describe(self.kind, self.component)


def call_component(kind: str, comp: Any, what: str, t0: int, fn, *args, rounds: int = 1):
    """Call ``fn(*args)`` for a component; an unexpected exception stops the game naming it.

    An :class:`~arena.errors.ArenaError` passes through; anything else becomes a
    :class:`~arena.errors.GameError` naming the component, what it was doing and the round: the
    exact one where the call marked it (a block call of ``rounds`` rounds from ``t0``,
    :func:`arena.errors.mark_failure`), else every round of the block (:func:`component_failure`).
    """
    try:
        return fn(*args)
    except ArenaError:
        raise
    except Exception as exc:
        raise component_failure(
            Who(kind, comp), what, exc, **failure_where(exc, t0, rounds)
        ) from exc


def wrote_read_only(exc: BaseException) -> bool:
    """Whether ``exc`` is what numpy or numba raise on a write into a read-only array.

    Examples
    --------
    >>> try:
    ...     readonly(np.zeros(2))[0] = 1.0
    ... except ValueError as exc:
    ...     wrote_read_only(exc)
    True
    """
    text = str(exc)
    # numpy: "assignment destination is read-only", "output array is read-only";
    # numba (typing a kernel that writes into a read-only argument): "Cannot modify readonly array"
    return (isinstance(exc, ValueError) and "read-only" in text) or "readonly array" in text


def component_failure(
    who: Any,
    what: str,
    exc: BaseException,
    *,
    round: int,
    replicate: int | None = None,
    typed: bool = True,
    last_round: int | None = None,
) -> GameError:
    """Return the :class:`~arena.errors.GameError` of a component call ``what`` that raised.

    A write into an input the engine handed read-only (the losses, data, confidences or
    uniforms of a chunk, a round's feedback, the history) is named as such in one line: the
    arena shares those arrays with the metrics and the other replicates, so a component that
    changed them would silently change the results (a player zeroing its losses would show
    zero regret). Any other exception is quoted (after its type name, if ``typed``). ``round``,
    ``replicate`` and ``last_round`` locate it, as :func:`failure_where` finds them.
    """
    who = str(who)  # a Who renders its repr only now, when the message is needed
    if wrote_read_only(exc):
        return GameError(
            who,
            f"{what} wrote into an array the arena hands it read-only (its inputs are shared "
            "with the metrics); copy an input before changing it",
            round=round,
            replicate=replicate,
            last_round=last_round,
        )
    detail = f"{type(exc).__name__}: {exc}" if typed else str(exc)
    return GameError(
        who, f"{what} failed: {detail}", round=round, replicate=replicate, last_round=last_round
    )


def failure_where(exc: BaseException, t0: int, rounds: int, ids: Any = None) -> dict[str, Any]:
    """The :class:`~arena.errors.GameError` keywords of ``exc``, raised by a call that played
    ``rounds`` rounds from ``t0`` for the replicates ``ids`` (None: not named).

    The round and replicate are the ones the call marked (:func:`arena.errors.mark_failure`);
    an unmarked block call is named by all its rounds, never by its first as if it were the one.

    Examples
    --------
    >>> from arena.errors import mark_failure
    >>> failure_where(mark_failure(ValueError(), offset=205), 795, 206, [0, 1])
    {'round': 1000, 'replicate': 0}
    >>> failure_where(ValueError(), 795, 206)
    {'round': 795, 'replicate': None, 'last_round': 1000}
    """
    offset, position = failed_at(exc)
    replicate = None if ids is None else int(ids[position if position is not None else 0])
    if offset is not None:
        return {"round": t0 + offset, "replicate": replicate}
    return {"round": t0, "replicate": replicate, "last_round": t0 + rounds - 1}


def readonly(a: np.ndarray) -> np.ndarray:
    """Return a read-only view of ``a``: what a component is shown, it may not change.

    Examples
    --------
    >>> readonly(np.zeros(2)).flags.writeable
    False
    """
    v = np.asarray(a).view()
    v.flags.writeable = False
    return v


def first_offender(mask: np.ndarray) -> tuple[int, int]:
    """Return (replicate, round) of the earliest True of an (R, n, ...) mask: the least round,
    then the least replicate (the one a :class:`~arena.errors.GameError` names).

    Examples
    --------
    >>> first_offender(np.array([[False, True], [True, False]]))
    (1, 0)
    """
    flat = mask.reshape(mask.shape[0], mask.shape[1], -1).any(axis=2)
    j = int(np.argmax(flat.any(axis=0)))
    return int(np.argmax(flat[:, j])), j


def real_array(raw: Any, who: Any, what: str, *, round: int, replicate: int | None = None):
    """Return a component's output as a float64 array, or stop the game naming what it returned.

    Only real numbers are accepted: strings, ``None``, objects and ragged lists would make numpy
    raise a bare ``ValueError``, and complex values would lose their imaginary part silently.

    Parameters
    ----------
    raw : array_like
        What the component returned.
    who : str or Who
        The component, for the message.
    what : str
        What it returned (``"losses_block"``, ``"predict"``), for the message.
    round, replicate : int
        Where, for the message.

    Examples
    --------
    >>> real_array([[0.5, 1]], "adversary x", "losses", round=3).dtype
    dtype('float64')
    >>> real_array([["a", "b"]], "adversary x", "losses", round=3, replicate=0)
    Traceback (most recent call last):
    ...
    arena.errors.GameError: adversary x: losses returned str values ('a'), expected real ...
    """
    if isinstance(raw, np.ndarray) and raw.dtype == np.float64:
        return raw
    try:
        arr = np.asarray(raw)
    except (ValueError, TypeError) as exc:  # ragged nesting, a broken __array__
        raise GameError(
            who, f"{what} returned no array of numbers ({exc})", round=round, replicate=replicate
        ) from None
    if arr.dtype.kind not in "biuf":
        flat = arr.reshape(-1)
        first = flat[0].item() if flat.size and isinstance(flat[0], np.generic) else None
        example = f" ({(first if first is not None else flat[0])!r})" if flat.size else ""
        kind = {"c": "complex", "U": "str", "S": "bytes", "O": "object"}.get(arr.dtype.kind)
        raise GameError(
            who,
            f"{what} returned {kind or arr.dtype.name} values{example}, expected real numbers",
            round=round,
            replicate=replicate,
        )
    return arr.astype(np.float64, copy=False)


def check_int(component: str, name: str, value: Any, minimum: int) -> int:
    """Return ``value`` as an int ≥ ``minimum`` (an integral float is accepted), or raise."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise ConfigError(component, name, f"must be an integer ≥ {minimum}, got {value!r}")
    if value < minimum:
        raise ConfigError(component, name, f"must be ≥ {minimum}, got {value}")
    return int(value)


def replicate_ids(replicates: int | Iterable[int]) -> np.ndarray:
    """Return the global replicate indices of a count R (0..R-1) or of explicit indices."""
    if not isinstance(replicates, Iterable) or isinstance(replicates, str | bytes):
        # a float, a bool or text is a (bad) count, never a list of indices
        count = check_int("game", "replicates", replicates, 1)
        # the indices and streams alone, before any game state: refused before np.arange
        need = count * (8 + STREAM_BYTES)
        have = available_memory()
        if have is not None and need > have:
            raise ConfigError(
                "game",
                "replicates",
                f"replicates={count} need at least {size_text(need)} of memory for their "
                f"indices and random streams alone, and {size_text(have)} are available; lower "
                "replicates, or split them over several runs of the same experiment "
                "(replicates=[0,1,...], merged in one folder)",
            )
        return np.arange(count, dtype=np.int64)
    try:
        ids = np.asarray(
            [check_int("game", "replicates", r, 0) for r in replicates], dtype=np.int64
        )
    except ConfigError:
        ids = np.empty(0, dtype=np.int64)  # reported below with what is allowed
    if ids.size == 0 or (ids < 0).any() or np.unique(ids).size != ids.size:
        raise ConfigError("game", "replicates", "must be a count ≥ 1 or distinct indices ≥ 0")
    return ids


def checkpoint_grid(
    horizon: int, checkpoints: Sequence[int] | str | None, per_decade: int
) -> np.ndarray:
    """Return the snapshot rounds: ``checkpoints`` (validated, plus T), every round 1..T for
    ``"all"`` (at most :data:`MAX_ALL_CHECKPOINTS`), or the log-spaced grid.

    ``per_decade`` is validated even when ``checkpoints`` makes it unused, so that a bad value is
    refused rather than silently kept in a configuration.
    """
    per_decade = check_int("game", "per_decade", per_decade, 1)
    if per_decade > MAX_PER_DECADE:
        raise ConfigError(
            "game", "per_decade", f"must be ≤ {MAX_PER_DECADE}, got {per_decade} (or checkpoints)"
        )
    if checkpoints is None:
        return log_grid(horizon, per_decade)
    if isinstance(checkpoints, str) and checkpoints == "all":
        if horizon > MAX_ALL_CHECKPOINTS:
            raise ConfigError(
                "game",
                "checkpoints",
                f"'all' logs every round: at most {MAX_ALL_CHECKPOINTS:.0e} rounds, got "
                f"horizon={horizon} (list the rounds you need, or use per_decade)",
            )
        return np.arange(1, horizon + 1, dtype=np.int64)
    try:
        grid = np.unique([check_int("game", "checkpoints", c, 1) for c in checkpoints])
    except (ConfigError, TypeError):  # an entry that is no integer, or no list at all
        grid = np.empty(0, dtype=np.int64)
    if grid.size == 0 or grid[0] < 1 or grid[-1] > horizon:
        raise ConfigError(
            "game", "checkpoints", f"must be integers in [1, {horizon}], or 'all' (every round)"
        )
    return np.unique(np.append(grid, horizon))


def resolve_component(kind: str, obj: Any, params: Mapping[str, Any] | None = None):
    """Return a component instance from an instance or a registry name (plus parameters)."""
    if isinstance(obj, str):
        return registry.make(kind, obj, **dict(params or {}))
    if params:
        return obj.clone(**dict(params))
    return obj


def _digest(text: str, n: int) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:n]


# ----------------------------------------------------------------------------------------------
# the protocol interface


class GameProtocol:
    """One feedback model, as the driver plays it: the strategy object of :func:`run_game`.

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
        return _load(self.reference_loop, self.name, "reference loop")(player, adversary, **kwargs)

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


class Stepper:
    """Plays one prepared game chunk by chunk for the driver.

    Attributes
    ----------
    core : object
        The running totals every metric of the protocol may read (advanced by :meth:`step`).
    """

    core: Any

    def step(self, t0: int, n: int) -> Any:
        """Play rounds ``t0 .. t0+n-1`` of every replicate; return the block the metrics read."""
        raise NotImplementedError


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
    streams : list of tuple of Generator
        Per replicate: the adversary's, the action draws' and the player's streams.
    config : dict
        Resolved configuration (manifest content).
    constants : dict
        Values of the constant columns of the tidy rows.
    footprint : Footprint
        The estimated memory and work of the whole game (:func:`check_resources`).
    """

    protocol: GameProtocol
    player: Any
    adversary: Any
    spec: GameSpec
    metrics: list[Metric]
    skipped: dict[str, str]
    grid: np.ndarray
    ids: np.ndarray
    streams: list[tuple[np.random.Generator, ...]]
    config: dict
    constants: dict
    footprint: Footprint = NEGLIGIBLE

    @property
    def action_rngs(self) -> list[np.random.Generator]:
        """Per-replicate streams of the arena's action uniforms."""
        return [s[1] for s in self.streams]


def resolve_metrics(protocol: GameProtocol, metrics: Any) -> tuple[list[Metric], dict[str, str]]:
    """Build a game's metrics; return them and those the protocol skips (with the reason).

    ``metrics`` is ``{name: params}`` (a ``None`` value or ``enabled: false`` switches one off),
    a list of names or instances, or None for the protocol's defaults.
    """
    if metrics is None:
        metrics = protocol.default_metrics
    out: list[Metric] = []
    skipped: dict[str, str] = {}

    def add(name: str, params: dict) -> None:
        cls = protocol.metric_class(name)
        if isinstance(cls, str):
            skipped[name] = cls
            return
        try:
            registry.check_param_names("metric", name, cls, params)
        except ConfigError as exc:
            raise _other_protocol_metric(protocol, name, exc) or exc from None
        try:
            metric = cls(**params)
        except TypeError as exc:
            raise ConfigError(f"metric {name}", "params", str(exc)) from exc
        validate_params(metric)
        out.append(metric)

    if isinstance(metrics, Mapping):
        for name, params in metrics.items():
            if params is None or params is False:
                continue
            params = dict(params) if params is not True else {}
            if not params.pop("enabled", True):
                continue
            add(str(name), params)
    else:
        for m in metrics:
            if isinstance(m, str):
                add(m, {})
            elif getattr(type(m), "protocols", None) is None:  # no protocol can dispatch it
                raise ArenaError(str(metric_problem(m.name, type(m))))
            elif protocol.accepts_metric(m):
                out.append(m)
            else:
                add(m.name, {})
    names = [m.name for m in out]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise ConfigError("metrics", sorted(dup)[0], "listed twice")
    return out, skipped


def check_memory(replicates: int, n_actions: int, chunk_rounds: int = 1) -> int:
    """Refuse a game whose state cannot fit in this machine's memory; return the estimate.

    The estimate (bytes) is ``R·N·8·(STATE_ARRAYS + chunk_rounds) + R·STREAM_BYTES``: a lower
    bound on what any player needs, so a refused game could not have run, and it is refused
    before anything is allocated rather than after minutes of swapping.

    Raises
    ------
    ConfigError
        Naming both sizes, the memory needed and the memory available.

    Examples
    --------
    >>> check_memory(64, 1000) < 10**7
    True
    >>> check_memory(10**8, 10**5)
    Traceback (most recent call last):
    ...
    arena.errors.ConfigError: game: parameter 'replicates': replicates=100000000 × n_actions=...
    """
    need = replicates * n_actions * 8 * (STATE_ARRAYS + chunk_rounds) + replicates * STREAM_BYTES
    have = available_memory()
    if have is not None and need > have:
        raise ConfigError(
            "game",
            "n_actions" if n_actions > replicates else "replicates",  # the larger is named
            f"replicates={replicates} × n_actions={n_actions} need at least {need / 2**30:.3g} GiB "
            f"of memory for the game's state, and {have / 2**30:.3g} GiB are available; lower "
            "replicates or n_actions, or split the replicates over several runs of the same "
            "experiment (replicates=[0,1,...], merged in one folder)",
        )
    return need


def _check_rows(n_checkpoints: int, replicates: int, n_values: int) -> None:
    """Refuse a checkpoint grid whose tidy rows (checkpoints × replicates × metric values, about
    :data:`ROW_BYTES` each) cannot fit in the memory available, before any round is played."""
    need = n_checkpoints * replicates * n_values * ROW_BYTES
    have = available_memory()
    if have is not None and need > have:
        raise ConfigError(
            "game",
            "checkpoints",
            f"{n_checkpoints} checkpoints × {replicates} replicates × {n_values} metric values "
            f"make {n_checkpoints * replicates * n_values:.3g} rows, about {need / 2**30:.3g} GiB; "
            f"{have / 2**30:.3g} GiB are available: log fewer rounds (per_decade, a list) or "
            "fewer metrics",
        )


def available_memory() -> int | None:
    """Bytes of memory available to a new allocation (Linux ``MemAvailable``; else physical)."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        import os

        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def size_text(nbytes: float) -> str:
    """Return a byte count as a refusal shows it: GiB, or MiB below one GiB."""
    if nbytes >= GIB:
        return f"{nbytes / GIB:.3g} GiB"
    return f"{nbytes / 2**20:.3g} MiB"


def duration_text(seconds: float) -> str:
    """Return seconds as a refusal shows them (s, min, h or days)."""
    if seconds < 120:
        return f"{seconds:.3g} s"
    if seconds < 7200:
        return f"{seconds / 60:.3g} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.3g} h"
    return f"{seconds / 86400:.3g} days"


def max_hours() -> float:
    """Return the time limit of one game in hours: :data:`MAX_HOURS`, or ``ARENA_MAX_HOURS``.

    Raises
    ------
    ConfigError
        When the variable is set to something other than a number of hours > 0 (or ``inf``).
    """
    raw = os.environ.get(MAX_HOURS_VARIABLE, "").strip()
    if not raw:
        return MAX_HOURS
    try:
        hours = float(raw)
    except ValueError:
        hours = math.nan
    if not hours > 0:  # also refuses nan
        raise ConfigError(
            "environment",
            MAX_HOURS_VARIABLE,
            f"must be a number of hours > 0 (inf: no limit), got {raw!r}",
            noun="variable",
        )
    return hours


def game_footprints(
    player: Any,
    adversary: Any,
    metrics: Sequence[Metric],
    spec: GameSpec,
    *,
    n_checkpoints: int = 1,
    n_values: int = 1,
    chunk_rounds: int = 1,
) -> list[tuple[str, Footprint]]:
    """Return what each part of a game costs: the game's own state and rows, then every component.

    The game's part is the estimate of :func:`check_memory` (its arrays of shape (R, N) and the
    replicates' streams) and the tidy rows of the checkpoint grid; the components' parts are their
    :meth:`~arena.base.Component.footprint` declarations, labelled as errors label them.
    """
    n_rep, n_act = int(spec.n_replicates), int(spec.n_actions)
    state = n_rep * n_act * 8 * (STATE_ARRAYS + chunk_rounds) + n_rep * STREAM_BYTES
    rows = n_checkpoints * n_rep * n_values
    parts = [
        (
            "game",
            Footprint(
                memory=state,
                work=n_rep * n_act * (STATE_ARRAYS + n_values),
                parameter="n_actions" if n_act > n_rep else "replicates",
                what=f"replicates={n_rep} × n_actions={n_act} (the game's state)",
            ),
        ),
        (
            "game",
            Footprint(
                memory=rows * ROW_BYTES,
                parameter="checkpoints",
                what=f"{n_checkpoints} checkpoints × {n_rep} replicates × {n_values} metric "
                f"values ({rows:.3g} rows)",
            ),
        ),
    ]
    for comp in (player, adversary, *metrics):
        parts.append((comp.label(), declared_footprint(comp, spec)))
    return parts


def check_resources(parts: Sequence[tuple[str, Footprint]], spec: GameSpec) -> Footprint:
    """Refuse a game whose parts cannot fit in memory or would outlast the time limit.

    The parts (:func:`game_footprints`) are added up; the refusal names the part that needs the
    most (its component and parameter), what it needs, what the whole game needs and what this
    machine has: the memory available now, or the time limit (:func:`max_hours`). Returns the
    total, which a tournament adds up over its cells.

    Raises
    ------
    ConfigError
        Before anything of the game is allocated.

    Examples
    --------
    >>> from arena.spec import GameSpec
    >>> spec = GameSpec("experts", 10, 1000, n_replicates=4)
    >>> part = Footprint(memory=2.0**80, parameter="k", what="k=[10**20]: a table")
    >>> check_resources([("metric toy", part)], spec)
    Traceback (most recent call last):
    ...
    arena.errors.ConfigError: metric toy: parameter 'k': k=[10**20]: a table needs 1.13e+15 GiB ...
    """
    total = NEGLIGIBLE
    for _, part in parts:
        total = total + part
    n_rep, n_act, horizon = int(spec.n_replicates), int(spec.n_actions), int(spec.horizon or 1)
    sizes = f"replicates={n_rep}, n_actions={n_act}"
    have = available_memory()
    if have is not None and total.memory > have:
        who, worst = max(parts, key=lambda p: p[1].memory)
        param = worst.parameter or ("n_actions" if n_act > n_rep else "replicates")
        if worst.advice:
            advice = worst.advice
        elif param in ("n_actions", "replicates"):
            advice = (
                "lower n_actions or replicates, or split the replicates over several runs of "
                "the same experiment (replicates=[0,1,...], merged in one folder)"
            )
        else:
            advice = f"lower {param}"
        raise ConfigError(
            who,
            param,
            f"{worst.what} needs {size_text(worst.memory)} of memory; the game needs "
            f"{size_text(total.memory)} in all ({sizes}) and {size_text(have)} are "
            f"available: {advice}",
        )
    limit = max_hours()
    seconds = total.seconds(horizon, OPS_PER_SECOND)
    if seconds > limit * 3600:
        who, worst = max(parts, key=lambda p: p[1].seconds(horizon, OPS_PER_SECOND))
        param = worst.parameter or "horizon"
        before = duration_text(worst.setup / OPS_PER_SECOND)
        setup = f" and {before} before round 1" if worst.setup else ""
        raise ConfigError(
            who,
            param,
            f"{worst.what} costs about {duration_text(worst.work / OPS_PER_SECOND)} a round"
            f"{setup}: "
            f"{horizon} rounds ({sizes}) would take about {duration_text(seconds)} (at "
            f"{OPS_PER_SECOND:.0e} operations/s), over the limit of {limit:g} h: "
            f"{worst.advice or f'lower {param}'}, or raise the limit ({MAX_HOURS_VARIABLE}=HOURS)",
        )
    return total


def _other_protocol_metric(protocol: GameProtocol, name: str, exc: ConfigError):
    """A clearer error where a metric's parameter belongs to the same-named metric of another
    protocol (``metrics=oco`` on an experts game: OCO's ``regret`` takes ``radius``)."""
    takers = []
    for other in registry.available("protocol"):
        if other == protocol.name:
            continue
        try:
            cls = protocol_for(other).metric_class(name)
        except ArenaError:
            continue
        if not isinstance(cls, str) and exc.parameter in cls.param_names():
            takers.append(other)
    if not takers:
        return None
    valid = exc.args[0].rpartition("(valid: ")[2].rstrip(")")
    article = "an" if protocol.name[:1] in "aeiou" else "a"
    return ConfigError(
        f"metric {name}",
        exc.parameter,
        f"is a parameter of {name} in {'/'.join(takers)} games, and this is {article} "
        f"{protocol.name} game: is the metric set meant for another protocol? ({name} here "
        f"takes {'no parameters' if valid in ('', '[]') else valid})",
    )


def prepare_game(
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
) -> PreparedGame:
    """Validate the inputs, derive the seeds, clone and reset the components (see :func:`run_game`).

    Every invalid input raises :class:`~arena.errors.ConfigError` here, before any round runs.
    """
    player = resolve_component("player", player, player_params)
    adversary = resolve_component("adversary", adversary, adversary_params)
    validate_params(player)
    validate_params(adversary)
    protocol = protocol_for(game_protocol(player, adversary))
    protocol.check_pair(player, adversary)
    horizon = check_int("game", "horizon", horizon, 1)
    if horizon > MAX_HORIZON:
        raise ConfigError("game", "horizon", f"must be ≤ {MAX_HORIZON}")
    seed = check_int("game", "seed", seed, 0)
    if seed > MAX_SEED:
        raise ConfigError("game", "seed", f"must be ≤ 2**63 - 1 = {MAX_SEED}, got {seed}")
    ids = replicate_ids(replicates)
    # the grid is checked here, with the other game parameters, before any metric or reset work
    grid = checkpoint_grid(horizon, checkpoints, per_decade)
    if n_actions is not None:
        n_actions = check_int("game", "n_actions", n_actions, 1)
    player, adversary = player.clone(), adversary.clone()
    adversary.bind_player(player.clone())
    try:
        spec, protocol_config = protocol.make_spec(
            player, adversary, horizon=horizon, n_actions=n_actions, ids=ids
        )
    except ArenaError:
        raise
    except (ValueError, TypeError) as exc:
        raise ConfigError(describe("adversary", adversary), "parameters", str(exc)) from exc

    check_memory(len(ids), spec.n_actions, protocol.min_chunk_rounds)
    metric_objs, skipped = resolve_metrics(protocol, metrics)
    active: list[Metric] = []
    n_values = 0  # rows per checkpoint and replicate
    for m in metric_objs:
        reason = m.applicable(player, adversary)
        if reason is None:
            values = m.param_values(spec)  # validates the parameters before any round
            reason = m.game_reason(spec)
        if reason:
            skipped[m.name] = reason
            continue
        active.append(m)
        n_values += len(values)
    if not active:
        raise ConfigError("metrics", "metrics", "no metric left to compute")
    _check_rows(grid.size, len(ids), n_values)
    # every part's declared size, before any reset or metric allocates it
    parts = game_footprints(
        player,
        adversary,
        active,
        spec,
        n_checkpoints=grid.size,
        n_values=n_values,
        chunk_rounds=protocol.min_chunk_rounds,
    )
    footprint = check_resources(parts, spec)

    player_name, adversary_name = type(player).registry_name(), type(adversary).registry_name()
    game_fields, cell_fields = protocol.identity(player, adversary, spec)
    data = adversary.data_identity()
    if data:  # only where there is data, so that every other game keeps its key
        game_fields = {**game_fields, "data": data}
    game_key = canonical_json(game_fields)
    cell_key = canonical_json(
        {
            "player": player_name,
            "player_params": player.get_params(),
            "game": game_key,
            "horizon": horizon,
            "protocol": spec.protocol,
            **cell_fields,
        }
    )
    config = {
        "cell_key": cell_key,
        "player": player_name,
        "player_params": player.get_params(),
        "adversary": adversary_name,
        "adversary_params": adversary.get_params(),
        "protocol": spec.protocol,
        "n_actions": spec.n_actions,
        **protocol_config,
        **({"data": data} if data else {}),
        "horizon": horizon,
        "seed": seed,
        "replicates": ids.tolist(),
        "metrics": {m.name: m.get_params() for m in active},
        "checkpoints": grid.tolist(),
    }
    run_id = _digest(canonical_json({k: v for k, v in config.items() if k != "replicates"}), 16)
    cell_id = _digest(cell_key, 12)
    config["run_id"], config["cell"] = run_id, cell_id

    streams = [replicate_streams(seed, game_key, cell_key, int(r)) for r in ids]
    for kind, comp, rngs in (
        ("adversary", adversary, [s[0] for s in streams]),
        ("player", player, [s[2] for s in streams]),
    ):
        try:
            comp.reset(spec, rngs)
        except ArenaError:
            raise
        except (ValueError, TypeError, KeyError) as exc:
            raise ConfigError(describe(kind, comp), "reset", str(exc)) from exc
        except Exception as exc:  # a plugin's bug: name the component, keep the cause chained
            raise ArenaError(
                f"{describe(kind, comp)}: reset failed: {type(exc).__name__}: {exc}"
            ) from exc
    for m in active:
        m.attach(player, adversary)

    constants = {
        "run_id": run_id,
        "cell": cell_id,
        "player": player_name,
        "player_params": player.params_json(),
        "adversary": adversary_name,
        "adversary_params": adversary.params_json(),
        "protocol": spec.protocol,
        "n_actions": spec.n_actions,
        "horizon": horizon,
        "seed": seed,
    }
    return PreparedGame(
        protocol,
        player,
        adversary,
        spec,
        active,
        skipped,
        grid,
        ids,
        streams,
        config,
        constants,
        footprint,
    )


def run_game(
    player: Any,
    adversary: Any,
    *,
    trace_path: str | Path | None = None,
    chunk_elements: int = DEFAULT_CHUNK_ELEMENTS,
    progress: bool = False,
    **game: Any,
) -> GameRun:
    """Play R replicates of a game of any protocol and return the tidy metric rows.

    Parameters
    ----------
    player, adversary : component or registry name
        What plays; instances are cloned, never mutated. The adversary's ``tags.protocol``
        chooses the feedback model (experts, oco, classification, regression, or a plugin's).
    horizon : int
        Number of rounds T ≥ 1.
    n_actions : int, optional
        Number of experts N, or the dimension d of an OCO game (default: the adversary's).
    replicates : int or iterable of int
        A count R (replicates 0..R-1) or explicit global replicate indices; replicate r's rows do
        not depend on which others run beside it.
    seed : int
        Root seed (architecture: seeding).
    metrics : mapping or list, optional
        ``{name: params}`` (``None`` switches one off) or metric instances; default: the
        protocol's (:data:`arena.metrics.builtin.DEFAULT_METRICS` for experts games).
    checkpoints : sequence of int or "all", optional
        Rounds to snapshot (T is always added), or ``"all"`` for every round (at most
        :data:`MAX_ALL_CHECKPOINTS`; about :data:`ROW_BYTES` bytes per row in memory, and a
        grid whose rows cannot fit is refused); default :func:`arena.checkpoints.log_grid` with
        ``per_decade``.
    per_decade : int
        Checkpoints per decade of the default grid (10).
    player_params, adversary_params : mapping, optional
        Constructor parameters (with a registry name) or overrides (with an instance).

        These game parameters (``horizon`` to ``adversary_params``) are the keyword arguments of
        :func:`prepare_game`; the three below are the driver's own.
    trace_path : path, optional
        Also stream the per-round trace of every replicate to this Parquet file (experts:
        ``p_t``, ``l_t``, ``I_t``; OCO: ``w_t``, ``f_t(w_t)`` and the round's data).
    chunk_elements : int
        Bound on R·n·N per chunk buffer (memory vs per-chunk overhead).
    progress : bool
        Show a progress bar over rounds.

    Returns
    -------
    GameRun
    """
    started = time.perf_counter()
    game = prepare_game(player, adversary, **game)
    spec, active, protocol = game.spec, game.metrics, game.protocol
    for m in active:
        m.start(spec)
    stepper = protocol.start(game)
    core = stepper.core
    max_chunk = max(
        min(protocol.min_chunk_rounds, chunk_elements),
        chunk_elements // (spec.n_replicates * spec.n_actions),
    )
    checkpoint_set = set(game.grid.tolist())
    snap_t: list[int] = []
    snap_vals: list[list[np.ndarray]] = []
    trace = protocol.trace_writer(Path(trace_path), game) if trace_path is not None else None
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(
            total=spec.horizon,
            unit="round",
            desc=f"{game.constants['player']} vs {game.constants['adversary']}",
        )
    try:
        t0 = 1
        for stop in game.grid.tolist():
            while t0 <= stop:
                n = min(max_chunk, stop - t0 + 1)
                block = stepper.step(t0, n)
                for m in active:
                    m.advance(block, core)
                if trace is not None:
                    trace.write(block)
                if bar is not None:
                    bar.update(n)
                t0 += n
            if stop in checkpoint_set:
                snap_t.append(stop)
                vals = [np.asarray(m.values(core), dtype=np.float64) for m in active]
                _check_values(vals, active, spec, stop, game.ids)
                snap_vals.append(vals)
    except BaseException:
        if trace is not None:
            trace.abort()
        raise
    finally:
        if bar is not None:
            bar.close()
    if trace is not None:
        trace.commit()
    rows = assemble_rows(snap_t, snap_vals, active, spec, game.ids, game.constants)
    return GameRun(rows, game.config, game.skipped, time.perf_counter() - started)


def _check_values(
    vals: list[np.ndarray], metrics: list[Metric], spec: GameSpec, t: int, ids: np.ndarray
) -> None:
    """Stop the game before a metric's infinite value at checkpoint ``t`` is written.

    NaN is a metric's "undefined here" (an edge before any weight, an improvement over a base
    learner that made no mistake) and is written; ±inf is an overflow, never a result, unless the
    metric defines it (:attr:`arena.metric.Metric.infinite_values`: ``sketch_error``). One
    ``isinf`` over R values per metric and checkpoint: nothing against the rounds.
    """
    for m, v in zip(metrics, vals, strict=True):
        if m.infinite_values:
            continue
        v = v.reshape(v.shape[0], -1)
        bad = np.isinf(v)
        if bad.any():
            r, c = (int(i) for i in np.argwhere(bad)[0])
            metric, param = m.row_keys(spec)[c]
            where = "" if math.isnan(param) else f" (param {param:g})"
            raise GameError(
                f"metric {metric}{where}",
                f"value {float(v[r, c])!r} is not finite: the game's "
                "losses or the player's state overflowed float64",
                round=t,
                replicate=int(ids[r]),
            )


def play(player: Any, adversary: Any, **kwargs: Any) -> pd.DataFrame:
    """Play a game and return its tidy results table (see :func:`run_game` for the arguments).

    Examples
    --------
    >>> from arena.results import SCHEMA
    >>> df = play("hedge", "fair_coin", n_actions=4, horizon=100, replicates=2,
    ...           metrics={"regret": {}})
    >>> list(df.columns) == SCHEMA, df.replicate.nunique(), int(df.t.max())
    (True, 2, 100)
    """
    return run_game(player, adversary, **kwargs).rows


def reference_play(player: Any, adversary: Any, **kwargs: Any) -> pd.DataFrame:
    """Play a game with its protocol's literal per-round loop; return the tidy rows.

    The keyword arguments are those of :func:`prepare_game`. The rows equal
    ``run_game(...).rows`` to 1e-12: the reference loop is the specification the driver's fast
    path reproduces (architecture: fast path and reference).

    Examples
    --------
    >>> kw = dict(n_actions=3, horizon=20, replicates=2, metrics={"regret": {}})
    >>> ref = reference_play("hedge", "greedy", **kw)
    >>> pd.testing.assert_frame_equal(ref, run_game("hedge", "greedy", **kw).rows, atol=1e-12)
    """
    adv = resolve_component("adversary", adversary, kwargs.pop("adversary_params", None))
    plr = resolve_component("player", player, kwargs.pop("player_params", None))
    return protocol_for(game_protocol(plr, adv)).reference_play(plr, adv, **kwargs)
