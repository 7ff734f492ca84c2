"""Errors raised by the arena, naming the component, parameter, round and replicate at fault."""

from __future__ import annotations


class ArenaError(Exception):
    """Base class of every error the arena raises on purpose (bad input, bad component output)."""


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
        super().__init__(f"{component}: {noun} {parameter!r}: {message}")


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
    """

    def __init__(self, component: str, message: str, *, round: int, replicate: int | None = None):
        self.component = component
        self.round = round
        self.replicate = replicate
        where = "all replicates" if replicate is None else f"replicate {replicate}"
        super().__init__(f"{component}: {message} (round {round}, {where})")


class UndeclaredDistributionError(GameError):
    """An adaptive adversary read ``history.probs`` without declaring ``sees_distribution``.

    The arena shows ``p_t`` only to adversaries whose tags say they read it (the tag is part of
    what the reports and the conformance suite know about the adversary), so the read itself is
    refused, naming the adversary, the round and the tag to add.
    """
