"""The metric interface every protocol shares, and the one rule that picks a metric's class.

A **metric** is a component (registry kind ``metric``, entry-point group ``arena.metrics``) that
streams one quantity of a game (architecture: metrics). Its class declares the protocols whose
games compute it (:attr:`Metric.protocols`) and carries its own brute-force definition
(:meth:`Metric.reference`), which the protocols' literal reference loops call and the tests
compare with the streamed values. A new metric is therefore one module and one entry-point line.

**Dispatch.** A protocol computes the metric *name* ``n`` with the registered class whose
``name == n`` and whose ``protocols`` contain the protocol (:func:`metric_for`). Several protocols
may share a name, and so a column of the results (``loss``, ``regret``, ``dynamic_regret``,
``mistakes``: reports compare them alike), each with its own class registered under its own
entry-point name: the metric's name, or ``name.<qualifier>`` (``regret`` for the experts block,
``regret.oco``, ``loss.boosting``). Two registered classes claiming the same (name, protocol) is
an error naming both, as is a registered metric that declares no protocols or whose entry-point
name does not begin with its name.

This module is part of the core: it imports no protocol and no metric module; the driver
(:mod:`arena.game`) imports it, and the metric modules of every protocol import it.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from arena import registry
from arena.base import Component
from arena.errors import ArenaError, ConfigError, UnknownComponentError
from arena.spec import GameSpec

__all__ = [
    "EVERY_PROTOCOL",
    "Metric",
    "Record",
    "metric_for",
    "metric_index",
    "metric_problem",
    "protocol_reason",
]


class _EveryProtocol(frozenset):
    """The ``protocols`` of a metric computed in every protocol: it contains every name."""

    def __new__(cls) -> _EveryProtocol:
        return super().__new__(cls)

    def __contains__(self, protocol: object) -> bool:
        return isinstance(protocol, str)

    def __bool__(self) -> bool:
        return True

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _EveryProtocol)

    def __ne__(self, other: object) -> bool:
        return not isinstance(other, _EveryProtocol)

    def __hash__(self) -> int:
        return hash("EVERY_PROTOCOL")

    def __repr__(self) -> str:
        return "EVERY_PROTOCOL"

    def __reduce__(self):
        return (_EveryProtocol, ())


EVERY_PROTOCOL: frozenset[str] = _EveryProtocol()
"""The ``protocols`` of a protocol-generic metric, whose value comes from a component's
declaration rather than from a protocol's block (``bound``, ``lower_bound``): every protocol, a
plugin's included, computes it.

Examples
--------
>>> "experts" in EVERY_PROTOCOL and "any plugin protocol" in EVERY_PROTOCOL
True
"""


@dataclass(frozen=True, kw_only=True)
class Record:
    """The literal record of one replicate of a game after round ``t``, as a reference reads it.

    Each protocol extends it with what its rounds showed (the experts block's
    ``arena.metrics.base.ExpertsRecord``: ``p_t``, ``l_t``, ``I_t``, ...; OCO's
    ``arena.oco.metrics.OCORecord``: ``w_t``, ``f_t(w_t)``, the round data, ...); the reference
    loops build one per replicate at each checkpoint, from the whole stored history.

    Only ``t`` is required: a hand-built record (a test of one definition) leaves the game's
    context None, and the references that read it say so.

    Attributes
    ----------
    t : int
        Rounds played.
    replicate : int
        The replicate's position in the batch (0 .. R−1): what a component's batched declaration
        (the player's ``bounds(t)``, an adversary's ``comparator()``) is indexed by.
    spec : GameSpec
        The game.
    player, adversary : component
        The game's components after round ``t``, for metrics defined from what a component
        declares (a player's estimates or sketch, an adversary's comparator or chips).
    """

    t: int
    replicate: int = 0
    spec: GameSpec | None = None
    player: Any = None
    adversary: Any = None


class Metric(Component):
    """Base of streaming metrics.

    A metric is a component whose hyperparameter (if any) is the list of values of its ``param``
    column (ε, k or τ). ``start`` allocates O(N·params) state, ``advance`` consumes one chunk of
    rounds, ``values`` returns the snapshot ``(R, n_params)`` at the end of a chunk. Its
    :meth:`reference` is the brute-force definition the streaming implementation must equal.
    """

    kind: ClassVar[str] = "metric"
    param_name: ClassVar[str | None] = None
    requires: ClassVar[frozenset[str]] = frozenset()
    protocols: ClassVar[frozenset[str] | None] = None
    """The protocols whose games compute it (names of the ``arena.protocols`` entry points), or
    :data:`EVERY_PROTOCOL`. Every metric declares it: a registered metric that leaves it None is
    refused by :func:`metric_for`."""
    reads_increments: ClassVar[bool] = False
    """Whether :meth:`advance` reads the experts block's regret increments
    (``arena.metrics.base.regret_increments``): the experts protocol then fills them once per
    chunk for every metric, and skips that pass otherwise."""
    infinite_values: ClassVar[bool] = False
    """Whether ±inf is one of the metric's defined values (a relative error against an exact 0):
    the engine otherwise stops a game whose metric value at a checkpoint is infinite, an overflow
    that would be written as a result."""
    rowwise_values: ClassVar[bool] = False
    """Whether :meth:`values` computes replicate r's row from the core's rows of replicate r
    alone (and the metric's parameters): no reduction across replicates, no ``core.t``, no state
    of the metric's own sized by R. The driver may then read every checkpoint of a span of a
    one-replicate game in one call, on the span's snapshots stacked as replicates
    (:meth:`arena.protocol.CoreSnapshots.stacked`). Declared by the class that defines
    :meth:`values` (see :func:`computes_rowwise`)."""
    block_only: ClassVar[bool | None] = None
    """Whether :meth:`advance` and :meth:`values` read nothing but their block, the core and the
    adversary's oracles over the block's rounds: never a component's state, which is that of the
    last round played. The driver may then play a chunk across checkpoints in one call to each
    component and show it to the metrics segment by segment, ending at each checkpoint
    (:meth:`arena.protocol.Stepper.step_span`). None (default): True unless the class overrides
    :meth:`attach` (a metric that keeps a component may read its state); a subclass that
    overrides :meth:`attach` below a class that declared True must declare it again (see
    :func:`reads_block_only`)."""

    def param_values(self, spec: GameSpec) -> list[float]:
        """Return the values of the ``param`` column (``[nan]`` for a metric without parameter)."""
        return [math.nan]

    def applicable(self, player: Any, adversary: Any) -> str | None:
        """Return why this metric cannot be computed in this game, or None if it can."""
        provided = set(adversary.tags.oracle)
        if adversary.tags.emits_confidences:
            provided.add("confidences")
        missing = self.requires - provided
        return f"adversary exposes no {', '.join(sorted(missing))}" if missing else None

    def game_reason(self, spec: GameSpec) -> str | None:
        """Return why this metric cannot be computed in the game ``spec`` describes, or None.

        Checked before any round, after :meth:`applicable` and :meth:`param_values` (e.g. a
        comparator set that has no minimizer for the game's loss). Default: always computable.
        """
        return None

    def attach(self, player: Any, adversary: Any) -> None:
        """See the game's (reset) components; called before :meth:`start`. Default: nothing."""

    def row_keys(self, spec: GameSpec) -> list[tuple[str, float]]:
        """Return the ``(metric, param)`` label of each column of :meth:`values`."""
        return [(self.name, float(p)) for p in self.param_values(spec)]

    def start(self, spec: GameSpec) -> None:
        """Allocate the state for ``spec.n_replicates`` replicates."""
        self._spec = spec

    def advance(self, block: Any, core: Any) -> None:
        """Consume one chunk of rounds (``core`` already includes the chunk)."""

    def values(self, core: Any) -> np.ndarray:
        """Return the snapshot after the last advanced round, shape (R, n_params)."""
        raise NotImplementedError

    # ------------------------------------------------------------------------------------------
    # the brute-force definition

    def reference(self, record: Record, param: float) -> float:
        """Return the metric's value for one replicate by its brute-force definition.

        ``record`` is the literal record of the replicate's game so far (its protocol's
        :class:`Record`) and ``param`` the value of the ``param`` column (NaN for a metric
        without one). Written as literally as the definition allows, with none of the streaming
        implementation's tricks: it is the specification :meth:`values` must reproduce, called
        by the protocol's reference loop at every checkpoint.
        """
        raise NotImplementedError(f"metric {self.name} ({type(self).__name__}) has no reference")

    def reference_rows(self, records: Sequence[Record]) -> list[tuple[str, float, list[float]]]:
        """Return the reference's rows at one checkpoint: ``(metric, param, values by replicate)``.

        One row per column of :meth:`row_keys`, each value :meth:`reference` of one record
        (ordered as the replicates). Override it for rows :meth:`reference` cannot express (a
        declared bound beside the value, rows named by a component's declaration).
        """
        spec = records[0].spec
        return [
            (label, param, [float(self.reference(rec, param)) for rec in records])
            for label, param in self.row_keys(spec)
        ]

    def _param_list(self, values, kind: type, check) -> list:
        name = self.param_name
        if values is None:
            raise ConfigError(f"metric {self.name}", name, "must be a list of values, got None")
        if isinstance(values, int | float | str):
            values = [values]
        out = []
        for v in values:
            try:
                cv = kind(v)
            except (TypeError, ValueError) as exc:
                raise ConfigError(f"metric {self.name}", name, f"invalid value {v!r}") from exc
            if kind is int and float(v) != cv:
                raise ConfigError(f"metric {self.name}", name, f"must be an integer, got {v!r}")
            msg = check(cv)
            if msg:
                raise ConfigError(f"metric {self.name}", name, f"{msg}, got {v!r}")
            out.append(cv)
        return out


# ----------------------------------------------------------------------------------------------
# the one dispatch rule


def _protocols_text(protocols: frozenset[str]) -> str:
    if isinstance(protocols, _EveryProtocol):
        return "every protocol"
    names = sorted(protocols)
    return f"the {'/'.join(names)} protocol{'s' if len(names) > 1 else ''}"


def protocol_reason(cls: type[Metric], protocol: str) -> str | None:
    """Return why metric class ``cls`` is not computed in a game of ``protocol``, or None.

    Examples
    --------
    >>> from arena.bandit.metrics import ArmPulls
    >>> protocol_reason(ArmPulls, "experts")
    'defined for the bandit protocol only, not experts'
    >>> protocol_reason(ArmPulls, "bandit") is None
    True
    """
    declared = getattr(cls, "protocols", None)
    if declared is None:
        return f"{cls.__module__}:{cls.__qualname__} declares no protocols"
    if protocol in declared:
        return None
    return f"defined for {_protocols_text(declared)} only, not {protocol}"


def metric_problem(key: str, cls: Any) -> str | None:
    """Return what makes ``cls``, registered as the metric ``key``, unusable, or None.

    A registered metric is a :class:`Metric` subclass whose ``name`` is the entry-point name or
    its part before a dot (``regret.oco`` registers a ``regret``), and which declares the
    protocols that compute it (a set of protocol names, or :data:`EVERY_PROTOCOL`).

    Examples
    --------
    >>> class Undeclared(Metric):
    ...     name = "undeclared"
    >>> metric_problem("undeclared", Undeclared)
    'metric undeclared (arena.metric:Undeclared) declares no protocols: set protocols = ...'
    >>> from arena.oco.metrics import OCORegret
    >>> metric_problem("regret.oco", OCORegret) is None
    True
    """
    where = f"{getattr(cls, '__module__', '?')}:{getattr(cls, '__qualname__', cls)!s}"
    if not (isinstance(cls, type) and issubclass(cls, Metric)):
        return f"metric {key} ({where}) is not a subclass of arena.metric.Metric"
    name = cls.__dict__.get("name") or cls.name
    if key.partition(".")[0] != name:
        return (
            f"metric {key} ({where}) is named {name!r}: register a metric under its name or "
            f"'{name}.<qualifier>'"
        )
    declared = cls.protocols
    if declared is None:
        return (
            f"metric {key} ({where}) declares no protocols: set protocols = "
            "frozenset({...}) (the protocols whose games compute it) or EVERY_PROTOCOL"
        )
    if not isinstance(declared, frozenset) or not all(isinstance(p, str) for p in declared):
        return f"metric {key} ({where}): protocols must be a frozenset of protocol names"
    return None


@dataclass(frozen=True)
class _Claim:
    key: str
    cls: type[Metric] | None
    problem: str | None


def _claim(key: str) -> _Claim:
    try:
        cls = registry.load("metric", key)
    except ArenaError as exc:  # a broken or conflicting plugin breaks only its own name
        return _Claim(key, None, str(exc))
    problem = metric_problem(key, cls)
    return _Claim(key, None if problem else cls, problem)


def _names() -> list[str]:
    return sorted({key.partition(".")[0] for key in registry.available("metric")})


def reads_block_only(metric: Metric) -> bool:
    """Whether ``metric`` declares, or is taken to declare, :attr:`Metric.block_only`.

    Examples
    --------
    >>> from arena.metrics.regret import Regret
    >>> from arena.bandit.metrics import EstimateBias
    >>> reads_block_only(Regret()), reads_block_only(EstimateBias())
    (True, False)
    """
    # the most derived class that says decides: one that declares block_only, else one that
    # overrides attach (False: a subclass that keeps a component may read its state, even below
    # a class that declared True)
    for cls in type(metric).__mro__:
        if cls is Metric:
            return True
        declared = cls.__dict__.get("block_only")
        if declared is not None:
            return bool(declared)
        if "attach" in cls.__dict__:
            return False
    return True


def reads_core_only(metric: Metric) -> bool:
    """Whether ``metric``'s values are a function of the core alone (and its parameters).

    So it is when it reads no block (its :meth:`~Metric.advance` is :class:`Metric`'s, which
    does nothing, it reads no increments and requires no oracle) and no component
    (:func:`reads_block_only`). The
    driver then reads it from the core's snapshots at the checkpoints of a span played in one
    call (:meth:`arena.protocol.Stepper.core_snapshots`).

    Examples
    --------
    >>> from arena.metrics.regret import Regret
    >>> from arena.metrics.shifting import ShiftingRegret
    >>> reads_core_only(Regret()), reads_core_only(ShiftingRegret())
    (True, False)
    """
    return (
        type(metric).advance is Metric.advance
        and not metric.reads_increments
        and not metric.requires  # (an oracle the stepper asks and checks only for a block)
        and reads_block_only(metric)
    )


def computes_rowwise(metric: Metric) -> bool:
    """Whether ``metric``'s values are declared row by row (:attr:`Metric.rowwise_values`).

    The class that decides is the most derived one that declares it or defines ``values``: a
    subclass that computes its values its own way, below a class that declared them row by
    row, must declare it again.

    Examples
    --------
    >>> from arena.metrics.regret import Regret
    >>> class Centered(Regret):
    ...     def values(self, core):
    ...         v = super().values(core)
    ...         return v - v.mean()
    >>> computes_rowwise(Regret()), computes_rowwise(Centered())
    (True, False)
    """
    for cls in type(metric).__mro__:
        if "rowwise_values" in cls.__dict__:
            return bool(cls.__dict__["rowwise_values"])
        if "values" in cls.__dict__:
            return False
    return False


_KEYS_BY_NAME: list = []  # [(the registry's claims it was read from, {name: keys})]


def _keys_by_name() -> dict[str, list[str]]:
    """The registry's metric keys grouped by the name before their first dot, read again only
    when the registry is (its claims are cached: a game asks for every metric's class, and
    scanning every key per name was a third of a small game's metric setup)."""
    claims = registry._claims("metric")
    if not _KEYS_BY_NAME or _KEYS_BY_NAME[0][0] is not claims:
        grouped: dict[str, list[str]] = {}
        for key in claims:
            grouped.setdefault(key.partition(".")[0], []).append(key)
        _KEYS_BY_NAME[:] = [(claims, grouped)]
    return _KEYS_BY_NAME[0][1]


def metric_for(name: str, protocol: str) -> type[Metric] | str:
    """Return the class that computes metric ``name`` in a game of ``protocol``, or why none does.

    The one rule every protocol follows: the registered metric whose ``name`` is ``name`` and
    whose ``protocols`` contain ``protocol``. Only the entry points named ``name`` or
    ``name.<qualifier>`` are loaded (lazily, per name, as the registry loads every component), so
    a broken plugin breaks only its own names.

    Returns
    -------
    type or str
        The class, or a reason starting with ``"defined for"`` when every implementation of the
        name serves other protocols (a game skips the metric with it).

    Raises
    ------
    UnknownComponentError
        No registered metric has this name (the message names the closest ones).
    ArenaError
        Two registered classes claim (name, protocol); or no class serves it and one of the
        name's entry points is broken (failed to import, declares no protocols, misnamed).

    Examples
    --------
    >>> metric_for("regret", "experts").__name__, metric_for("regret", "oco").__name__
    ('Regret', 'OCORegret')
    >>> metric_for("arm_pulls", "experts")
    'defined for the bandit protocol only, not experts'
    >>> metric_for("bound", "boosting").__name__
    'Bound'
    """
    keys = _keys_by_name().get(name, [])
    if not keys:
        names = _names()
        close = difflib.get_close_matches(name, names, n=3, cutoff=0.5)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        raise UnknownComponentError(
            f"unknown metric {name!r}{hint} (available: {', '.join(names) or 'none'})"
        )
    claims = [_claim(k) for k in keys]
    serving = [c for c in claims if c.cls is not None and protocol in c.cls.protocols]
    if len(serving) > 1:
        who = " and ".join(
            f"{c.key} ({c.cls.__module__}:{c.cls.__qualname__}, "
            f"{registry.entry('metric', c.key).distribution})"
            for c in serving
        )
        raise ArenaError(f"metric {name!r} is defined twice for the {protocol} protocol: {who}")
    if serving:
        return serving[0].cls
    broken = [c.problem for c in claims if c.problem]
    if broken:
        raise ArenaError(broken[0])
    served = frozenset().union(*(c.cls.protocols for c in claims))  # none is EVERY_PROTOCOL
    return f"defined for {_protocols_text(frozenset(served))} only, not {protocol}"


def metric_index() -> dict[str, type[Metric] | str]:
    """Return every registered metric entry point: its class, or what makes it unusable.

    Loads every ``arena.metrics`` entry point (about 0.1 s); the tests walk it, and a plugin
    author can check a package with it. Two classes claiming one (name, protocol) are reported
    on both entry points.

    Examples
    --------
    >>> index = metric_index()
    >>> index["loss.oco"].__name__, index["loss.boosting"].__name__
    ('OCOLoss', 'BoostingLoss')
    >>> [key for key, found in index.items() if isinstance(found, str)]
    []
    """
    claims = {key: _claim(key) for key in registry.available("metric")}
    out: dict[str, type[Metric] | str] = {
        key: c.cls if c.cls is not None else str(c.problem) for key, c in claims.items()
    }
    by_name: dict[str, list[_Claim]] = {}
    for c in claims.values():
        if c.cls is not None:
            by_name.setdefault(c.key.partition(".")[0], []).append(c)
    protocols = set(registry.available("protocol"))
    for name, group in by_name.items():
        for i, a in enumerate(group):
            for b in group[i + 1 :]:
                both = _shared(a.cls.protocols, b.cls.protocols, protocols)
                if both:
                    problem = (
                        f"metric {name!r} is defined twice for the {'/'.join(sorted(both))} "
                        f"protocol{'s' if len(both) > 1 else ''}: {a.key} and {b.key}"
                    )
                    out[a.key] = out[b.key] = problem
    return out


def _shared(a: frozenset[str], b: frozenset[str], protocols: set[str]) -> set[str]:
    """The protocols two declarations both claim (``EVERY_PROTOCOL`` claims every one)."""
    every_a, every_b = isinstance(a, _EveryProtocol), isinstance(b, _EveryProtocol)
    if every_a and every_b:
        return set(protocols) or {"every"}
    if every_a:
        return set(b)
    if every_b:
        return set(a)
    return set(a) & set(b)
