"""Component base: hyperparameters in ``__init__``, ``get_params``, ``clone`` and ``repr``.

Every player, adversary and metric is a :class:`Component`. Its ``__init__`` stores its arguments
verbatim under the same names and does nothing else (scikit-learn / River convention); game state is
built in ``reset``. ``get_params``, ``clone`` and ``repr`` are derived from the ``__init__``
signature, so a component round-trips through ``eval(repr(c))`` and through canonical JSON.
"""

from __future__ import annotations

import inspect
import json
import math
import numbers
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, Self

import numpy as np

from arena.errors import ArenaError

_JSON_SCALARS = frozenset({str, int, float, bool, type(None)})
"""The exact types :func:`_jsonable` returns as they are (not their subclasses: ``np.float64``
is a ``float`` that becomes a plain one)."""


def _jsonable(value: Any) -> Any:
    """Return a JSON-serializable version of a hyperparameter value (arrays become lists)."""
    if type(value) in _JSON_SCALARS:  # most values: answered before the isinstance chain
        return value
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple | list):
        return [v if type(v) in _JSON_SCALARS else _jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, Component):
        return {"name": value.registry_name(), "params": value.get_params()}
    # OmegaConf containers arrive from Hydra; convert them without importing omegaconf eagerly.
    if type(value).__module__.startswith("omegaconf"):
        from omegaconf import OmegaConf

        return _jsonable(OmegaConf.to_container(value, resolve=True))
    return value


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), allow_nan=True)
"""The encoder ``json.dumps(..., sort_keys=True, separators=(",", ":"), allow_nan=True)`` builds
at every call, built once."""

_SCALAR_TEXT = {
    str: json.encoder.encode_basestring_ascii,
    int: int.__repr__,
    bool: lambda value: "true" if value else "false",
    type(None): lambda value: "null",
}
"""A top-level scalar's text, as the encoder writes it (``ensure_ascii``: its string escaping)."""


def _float_text(value: float) -> str:
    """A float's text as ``json`` writes it with ``allow_nan=True``."""
    if value != value:
        return "NaN"
    if value == math.inf:
        return "Infinity"
    if value == -math.inf:
        return "-Infinity"
    return float.__repr__(value)


_SCALAR_TEXT[float] = _float_text


def canonical_json(obj: Any) -> str:
    """Serialize ``obj`` as canonical JSON: sorted keys, no spaces, arrays as lists.

    The text of ``json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=True)``
    (tested to the character): a scalar written directly and a container by one encoder kept for
    the process (a game serializes a dozen parameters; each ``json.dumps`` built its encoder, and
    a scalar's took 1.7–2.0 µs against 0.2–0.4).

    Examples
    --------
    >>> canonical_json({"b": 1, "a": [1.5, "x"]})
    '{"a":[1.5,"x"],"b":1}'
    >>> canonical_json(float("nan")), canonical_json(-0.0), canonical_json(True)
    ('NaN', '-0.0', 'true')
    """
    value = _jsonable(obj)
    text = _SCALAR_TEXT.get(type(value))
    return text(value) if text is not None else _CANONICAL.encode(value)


def canonical_json_with(fields: dict[str, Any], encoded: dict[str, str]) -> str:
    """Serialize a mapping as :func:`canonical_json` does, taking some values already serialized.

    ``encoded[k]`` must be ``canonical_json(fields[k])``; it is spliced in, not serialized again
    (a game's run id, cell key and rows each hold the components' parameters: serialized once,
    they cost a one-replicate game 35 µs less). The text is the same, character for character:
    the keys sorted, each value's own canonical JSON between them.

    Examples
    --------
    >>> fields = {"b": [1.5, "x"], "a": {"z": 1, "y": 2}}
    >>> text = canonical_json_with(fields, {"a": canonical_json(fields["a"])})
    >>> text == canonical_json(fields)
    True
    """
    parts = [
        f"{json.dumps(str(key))}:{encoded[key] if key in encoded else canonical_json(value)}"
        for key, value in sorted(fields.items(), key=lambda item: str(item[0]))
    ]
    return "{" + ",".join(parts) + "}"


def file_digest(path: Any) -> str:
    """Return the first 16 hex digits of the SHA-256 of a file's contents.

    Data files are part of an experiment's identity: the same parameters over an edited file are
    another experiment (another run id and cell), never a silent overwrite or a mixed resume.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "f.csv"
    >>> _ = p.write_text("0,1")
    >>> file_digest(p)
    '83b97b859aa5f81b'
    """
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()[:16]


GIB = 2**30
"""Bytes in a GiB, the unit of every memory figure in a refusal."""


@dataclass(frozen=True)
class Footprint:
    """What a component's parameters make one game cost: memory held and work per round.

    A component declares it through :meth:`Component.footprint`; the driver adds the game's own
    state to every declaration and refuses, before anything is allocated, a game that cannot fit
    in memory or would run for longer than the time limit (:func:`arena.resources.check_resources`).
    An estimate is about the truth (within a small factor), never a guess on the safe side: a
    refusal must be one the game could not have passed.

    Attributes
    ----------
    memory : float
        The most bytes held at once from ``reset`` to the last round, all replicates together
        (a temporary of ``reset``, such as the lanes' random streams, counts).
    work : float
        Elementary operations per round, all replicates together (one flop or one float64 read
        or written; the driver converts them to seconds at :data:`arena.resources.OPS_PER_SECOND`).
    setup : float
        Elementary operations before round 1 (a pilot simulation, per-lane random streams).
    parameter : str
        The parameter whose value drives the cost, named by a refusal (``""``: none of the
        component's own; the game's sizes then carry it).
    what : str
        What holds or costs it, with the numbers, e.g. ``"k=[10000000]: a (16, 10, 10000001)
        float64 table"``.
    advice : str
        What to change instead, when it is not simply "lower ``parameter``" (``"use a sketch
        (sketch=fd, rp or oja with m ≪ d)"``).

    Examples
    --------
    >>> f = Footprint(memory=8 * 10**6, work=10**6, parameter="k", what="a table")
    >>> f.seconds(horizon=1000, ops_per_second=1e9), (f + Footprint(memory=8.0)).parameter
    (1.0, 'k')
    """

    memory: float = 0.0
    work: float = 0.0
    setup: float = 0.0
    parameter: str = ""
    what: str = ""
    advice: str = ""

    def seconds(self, horizon: int, ops_per_second: float) -> float:
        """Return the estimated seconds of a game of ``horizon`` rounds: setup plus every round."""
        return (float(self.setup) + float(self.work) * float(horizon)) / float(ops_per_second)

    def __add__(self, other: Footprint) -> Footprint:
        """Return both costs together, named after the one that holds more memory."""
        named = self if self.memory >= other.memory else other
        return Footprint(
            memory=self.memory + other.memory,
            work=self.work + other.work,
            setup=self.setup + other.setup,
            parameter=named.parameter,
            what=named.what,
            advice=named.advice,
        )


NEGLIGIBLE = Footprint()
"""The default declaration, nothing beyond the driver's own estimate of the game's state."""


def shape_text(*dims: Any) -> str:
    """Return ``"(16, 10, 11)"``: an array's shape as a refusal shows it.

    Examples
    --------
    >>> shape_text(16, 10, 11)
    '(16, 10, 11)'
    """
    return "(" + ", ".join(str(int(d)) for d in dims) + ")"


def declared_footprint(component: Any, spec: Any) -> Footprint:
    """Return ``component.footprint(spec)``, checked: a plugin's broken estimate is named."""
    who = component.label() if hasattr(component, "label") else repr(component)
    try:
        out = component.footprint(spec)
    except ArenaError:
        raise
    except Exception as exc:  # a plugin's bug: name the component, keep the cause chained
        raise ArenaError(f"{who}: footprint failed: {type(exc).__name__}: {exc}") from exc
    sizes = (out.memory, out.work, out.setup) if isinstance(out, Footprint) else ()
    if not sizes or not all(isinstance(v, numbers.Real) and 0 <= v < math.inf for v in sizes):
        raise ArenaError(
            f"{who}: footprint must return a Footprint of finite sizes ≥ 0, got {out!r}"
        )
    return out


_INIT_PARAMS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _init_params(cls: type) -> tuple[tuple[str, ...], inspect.Signature]:
    """``cls.__init__``'s hyperparameter names and signature, read once per class.

    ``inspect.signature`` costs about 0.1 ms (1 ms for a class that inherits ``object.__init__``,
    whose signature is parsed from its text), and a game reads the names of every metric and
    component several times (validation, ``get_params``, the run's config): with the default
    metric set that was most of a game's fixed cost. The cache is keyed weakly by the class (so
    classes made in tests go away) and checked against the ``__init__`` it was read from (held
    weakly too), so a class whose ``__init__`` is replaced afterwards is read again.
    """
    init = cls.__init__
    hit = _INIT_PARAMS.get(cls)
    if hit is not None and hit[0]() is init:
        return hit[1], hit[2]
    sig = inspect.signature(init)
    names = tuple(
        p.name
        for p in sig.parameters.values()
        if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    )
    try:
        ref = weakref.ref(init)
    except TypeError:  # a builtin slot wrapper (object.__init__) lives forever
        ref = lambda init=init: init  # noqa: E731
    _INIT_PARAMS[cls] = (ref, names, sig)
    return names, sig


class Component:
    """Base of players, adversaries and metrics: parameters only in ``__init__``.

    Subclasses store each ``__init__`` argument under the same attribute name, and declare what
    each parameter may be in ``parameter_constraints`` (:mod:`arena.params`; checked by one
    validator before any round). A registered component's name is its entry point's; ``name``
    names an unregistered one (a test partner) and ``version`` is bumped on any behaviour change.

    Examples
    --------
    >>> class Toy(Component):
    ...     name = "toy"
    ...     def __init__(self, eta=0.5, mode="fixed"):
    ...         self.eta = eta
    ...         self.mode = mode
    >>> Toy(eta=0.1)
    Toy(eta=0.1)
    >>> Toy(eta=0.1).clone(mode="x").get_params()
    {'eta': 0.1, 'mode': 'x'}
    """

    name: ClassVar[str] = ""
    version: ClassVar[int] = 1
    kind: ClassVar[str] = "component"
    """What the component is in messages (``player``, ``adversary`` or ``metric``)."""
    parameter_constraints: ClassVar[dict[str, list[Any]]] = {}
    """``{parameter: [constraint, ...]}``: each value must satisfy one (:mod:`arena.params`)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Resolve the class's own ``tags`` against its base's: fields it did not give inherit.

        Tags are capabilities the engine and the conformance suite act on; a subclass that states
        one new capability must keep the ones its base established (an ``AdaptiveAdversary``
        subclass declaring ``sees_distribution`` stays adaptive). A ``tags`` that is not an
        :class:`arena.spec.InheritableTags` (a descriptor computing tags per instance) is kept.
        """
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("tags")
        if not hasattr(own, "inherit"):
            return
        # super(cls, cls) reads the next class in the MRO, through descriptors (read on a class)
        parent = getattr(super(cls, cls), "tags", None)
        if type(parent) is type(own):
            cls.tags = own.inherit(parent)

    @classmethod
    def param_names(cls) -> list[str]:
        """Return the hyperparameter names, in ``__init__`` signature order."""
        return list(_init_params(cls)[0])

    @classmethod
    def param_defaults(cls) -> dict[str, Any]:
        """Return ``{name: default}`` per hyperparameter (``inspect.Parameter.empty``: none)."""
        names, sig = _init_params(cls)
        return {n: sig.parameters[n].default for n in names}

    @classmethod
    def registry_name(cls) -> str:
        """Return the name of the entry point that registers this class, else its own ``name``,
        else the class name.

        A subclass of a registered component behaves differently, so it never inherits its
        parent's name (nor its seeds and run ids): only a ``name`` set on the class itself counts.
        """
        from arena.registry import name_of

        return name_of(cls) or cls.__dict__.get("name") or cls.__name__

    def label(self) -> str:
        """Return ``"<kind> <registry name>"`` (e.g. ``player hedge``), how errors name it.

        ``kind`` is read on the class: a component may have a parameter of that name (the
        strongly convex adversary's ``kind="quadratic"``), which the instance attribute holds.
        """
        return f"{type(self).kind} {self.registry_name()}"

    def get_params(self) -> dict[str, Any]:
        """Return the hyperparameters as a dict, read from the attributes of the same names."""
        return {n: getattr(self, n) for n in self.param_names()}

    def params_json(self) -> str:
        """Return the hyperparameters as canonical JSON (sorted keys), as logged in results."""
        return canonical_json(self.get_params())

    def clone(self, **overrides: Any) -> Self:
        """Return a fresh, un-reset copy with the same hyperparameters, some optionally replaced."""
        unknown = set(overrides) - set(self.param_names())
        if unknown:
            from arena.errors import ConfigError

            raise ConfigError(
                self.registry_name(),
                sorted(unknown)[0],
                f"unknown parameter; valid parameters are {self.param_names()}",
            )
        params = {**self.get_params(), **overrides}
        return type(self)(**params)

    def __repr__(self) -> str:
        defaults = self.param_defaults()
        parts = []
        for n, v in self.get_params().items():
            d = defaults[n]
            same = d is not inspect.Parameter.empty and _same(d, v)
            if not same:
                parts.append(f"{n}={v!r}")
        return f"{type(self).__name__}({', '.join(parts)})"

    def footprint(self, spec: Any) -> Footprint:
        """Return the memory and the work per round this component's parameters imply in a game.

        ``spec`` describes the game (an :class:`arena.spec.GameSpec`; for a weak learner, its
        :class:`arena.boosting.components.WeakSpec`); the component is not yet reset. The default,
        :data:`NEGLIGIBLE`, suits a component whose state is a few arrays of shape (R, N): the
        driver's own estimate covers it. A component whose state or work per round grows with a
        parameter (a table of k+1 budgets, a d×d matrix, a pilot of many games) overrides it,
        naming that parameter, so that an impossible value is refused before round 1 with the
        numbers rather than running until the machine kills it (architecture: bad input).
        """
        return NEGLIGIBLE

    @classmethod
    def _unit_test_params(cls) -> Iterator[dict[str, Any]]:
        """Yield small, valid parameter sets used by the conformance tests."""
        yield {}


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(canonical_json(a) == canonical_json(b))
    except (TypeError, ValueError):
        return a is b
