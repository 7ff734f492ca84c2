"""What the driver and the protocols check, and how they name the component at fault.

Two kinds of helper, shared by :mod:`arena.game` and every protocol's stepper and reference loop:

- **a component's calls and outputs during play**: :func:`describe` and :class:`Who` (the prefix
  of every message about a component), :func:`call_component`, :func:`component_failure` and
  :func:`failure_where` (an exception of a component becomes a
  :class:`~arena.errors.GameError` naming it, the round and the replicate), :func:`readonly` and
  :func:`wrote_read_only` (inputs are handed read-only; a write into one is named as such),
  :func:`real_array` (real numbers only) and :func:`first_offender` (which replicate and round);
- **the game's parameters before round 1**: :func:`check_int`, :func:`replicate_ids`,
  :func:`checkpoint_grid` and :func:`resolve_component` (an instance, or a registry name and its
  parameters).

Each raises :class:`~arena.errors.ConfigError` or :class:`~arena.errors.GameError` with the
component, the parameter, the round and the replicate (architecture: bad input).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from arena import registry
from arena.checkpoints import log_grid
from arena.errors import ArenaError, ConfigError, GameError, failed_at
from arena.resources import check_replicates

MAX_PER_DECADE = 10_000
"""Most checkpoints per decade: the grid is built from ``per_decade · log10(T)`` candidate rounds,
and beyond this every round up to T ≈ 4·10³ is already a checkpoint (use ``checkpoints``)."""

MAX_ALL_CHECKPOINTS = 10**7
"""The longest game ``checkpoints="all"`` logs every round of (the grid is 8 bytes a round)."""


# ----------------------------------------------------------------------------------------------
# a component's calls and outputs during play


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


def call_component(
    kind: str,
    comp: Any,
    what: str,
    t0: int,
    fn,
    *args,
    rounds: int = 1,
    ids: Any = None,
    typed: bool = True,
):
    """Call ``fn(*args)`` for a component; an unexpected exception stops the game naming it.

    An :class:`~arena.errors.ArenaError` passes through; anything else becomes a
    :class:`~arena.errors.GameError` naming the component, what it was doing and the round: the
    exact one where the call marked it (a block call of ``rounds`` rounds from ``t0``,
    :func:`arena.errors.mark_failure`), else every round of the block (:func:`component_failure`),
    and the replicate of ``ids`` it marked. ``typed`` quotes the exception's type name.

    Examples
    --------
    >>> from arena.players.hedge import Hedge
    >>> try:
    ...     call_component("player", Hedge(), "play_block", 5, {}.pop, "w", rounds=3)
    ... except ArenaError as exc:
    ...     print(exc)
    player hedge Hedge(): play_block failed: KeyError: 'w' (rounds 5..7, all replicates)
    """
    try:
        return fn(*args)
    except ArenaError:
        raise
    except Exception as exc:
        raise component_failure(
            Who(kind, comp), what, exc, typed=typed, **failure_where(exc, t0, rounds, ids)
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


def readonly_contiguous(a: Any, dtype: Any = None) -> np.ndarray:
    """Return ``a`` as a C-contiguous array (of ``dtype`` if given), read-only: a view where no
    copy is needed. What a kernel with a C-layout signature is shown of a slice or a list.

    Examples
    --------
    >>> x = readonly_contiguous(np.arange(6.0).reshape(2, 3)[:, 1:])
    >>> x.flags.c_contiguous, x.flags.writeable, x.tolist()
    (True, False, [[1.0, 2.0], [4.0, 5.0]])
    """
    return readonly(np.ascontiguousarray(a, dtype=dtype))


def kernel_views(*arrays: Any) -> tuple:
    """Return the arrays a compiled kernel only reads as :func:`readonly_contiguous` views (None
    stays None): what a ``play_block`` hands its kernel.

    numba compiles one specialization per layout and per writeability of each argument, and the
    driver shows a player read-only views where a test or a user shows it its own arrays: without
    this, each kernel compiled twice or three times (0.5–5 s each).

    Examples
    --------
    >>> losses, uniforms = kernel_views(np.zeros((1, 4, 2))[:, ::2], None)
    >>> losses.flags.c_contiguous, losses.flags.writeable, uniforms
    (True, False, None)
    """
    return tuple(None if a is None else readonly_contiguous(a) for a in arrays)


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


# ----------------------------------------------------------------------------------------------
# the game's parameters


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
        check_replicates(count)  # refused before np.arange allocates the indices
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
