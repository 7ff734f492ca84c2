"""Errors raised by the arena, naming the component, parameter, round and replicate at fault."""

from __future__ import annotations


class ArenaError(Exception):
    """Base class of every error the arena raises on purpose (bad input, bad component output)."""


def _rebuild(cls: type, args: tuple, kwargs: dict, state: dict) -> BaseException:
    """Unpickle an error whose ``__init__`` takes other arguments than its message."""
    exc = cls(*args, **kwargs)
    exc.__dict__.update(state)
    return exc


class ConfigError(ArenaError, ValueError):
    """An invalid hyperparameter, game parameter or metric parameter, found before any round runs.

    Parameters
    ----------
    component : str
        Registry name or repr of the component whose parameter is invalid.
    parameter : str
        The parameter name.
    message : str
        What is wrong and what is allowed.
    noun : str
        What ``parameter`` is called in the message (``key`` for a command-line key).
    """

    def __init__(self, component: str, parameter: str, message: str, *, noun: str = "parameter"):
        self.component = component
        self.parameter = parameter
        self._init = ((component, parameter, message), {"noun": noun})
        super().__init__(f"{component}: {noun} {parameter!r}: {message}")

    def __reduce__(self):
        # a process pool or Dask worker sends a cell's error back pickled; the default rebuilds
        # it from its message alone, which this __init__ does not take
        args, kwargs = self._init
        return _rebuild, (type(self), args, kwargs, dict(self.__dict__))


class ReportPathError(ArenaError, ValueError):
    """A report name that is not a plain name, or a report folder the report may not write into.

    A report writes (and, on a rebuild, deletes) files in its folder only: a name with a path
    separator, ``..`` or a leading ``.`` is refused, and so is a non-empty folder that holds no
    record of an earlier report.
    """


class UnknownComponentError(ArenaError, LookupError):
    """A registry name that no installed distribution declares; the message lists close matches."""


class GameError(ArenaError, RuntimeError):
    """A component produced an invalid value during play (NaN, wrong shape, out of range).

    Parameters
    ----------
    component : str
        ``player`` or ``adversary`` followed by its repr.
    message : str
        What was wrong.
    round : int
        The 1-based round at which it happened.
    replicate : int or None
        The global replicate index (None: the whole batch, e.g. an array of the wrong shape).
    last_round : int, optional
        Given when the round is not known exactly: a block call of rounds ``round..last_round``
        raised without marking its round (:func:`mark_failure`).
    """

    def __init__(
        self,
        component: str,
        message: str,
        *,
        round: int,
        replicate: int | None = None,
        last_round: int | None = None,
    ):
        self.component = component
        self.round = round
        self.replicate = replicate
        self._init = ((component, message), {"round": round, "replicate": replicate,
                                              "last_round": last_round})  # fmt: skip
        where = "all replicates" if replicate is None else f"replicate {replicate}"
        # a block call that raised without saying at which of its rounds: name them all, never
        # its first round as if it were the one
        many = last_round is not None and last_round != round
        rounds = f"rounds {round}..{last_round}" if many else f"round {round}"
        super().__init__(f"{component}: {message} ({rounds}, {where})")

    def __reduce__(self):
        args, kwargs = self._init
        return _rebuild, (type(self), args, kwargs, dict(self.__dict__))


class UndeclaredDistributionError(GameError):
    """An adaptive adversary read ``history.probs`` without declaring ``sees_distribution``.

    The arena shows ``p_t`` only to adversaries whose tags say they read it (the tag is part of
    what the reports and the conformance suite know about the adversary), so the read itself is
    refused, naming the adversary, the round and the tag to add.
    """


_AT = "_arena_failed_at"
"""Attribute of an exception holding where in a block it was raised (:func:`mark_failure`)."""


def mark_failure(
    exc: BaseException, *, offset: int | None = None, replicate: int | None = None
) -> BaseException:
    """Record on ``exc`` where in a block it was raised; return ``exc``, to be raised again.

    A block call (``play_block``, ``losses_block``) plays many rounds of many replicates at once;
    when it raises, the driver knows only the block. The readable per-round loops (the default
    ``play_block`` of each protocol, the replicate clones of a lifted single-game player) mark
    what they know, so that the game's error names the exact round and replicate
    (:func:`failed_at`); an outer mark does not overwrite an inner one.

    Parameters
    ----------
    exc : BaseException
        The exception being raised.
    offset : int, optional
        The 0-based round of the block at which it was raised.
    replicate : int, optional
        The 0-based position, in the batch, of the replicate whose call raised.

    Examples
    --------
    >>> exc = mark_failure(ValueError("boom"), offset=205)
    >>> failed_at(mark_failure(exc, replicate=3))
    (205, 3)
    """
    offset0, replicate0 = failed_at(exc)
    position = (offset0 if offset0 is not None else offset,)
    position += (replicate0 if replicate0 is not None else replicate,)
    try:
        setattr(exc, _AT, position)
    except (AttributeError, TypeError):  # an exception type without a __dict__: nothing known
        pass
    return exc


def failed_at(exc: BaseException) -> tuple[int | None, int | None]:
    """Return ``(offset, replicate)`` marked on ``exc`` by :func:`mark_failure` (None: unknown)."""
    at = getattr(exc, _AT, None)
    return at if isinstance(at, tuple) and len(at) == 2 else (None, None)
