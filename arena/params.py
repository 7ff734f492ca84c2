"""Declarative parameter constraints and the one validator that checks them.

A component declares, once, what each constructor parameter may be; :func:`validate_params`
checks every declared parameter before any round and names the component (by its registry name),
the parameter and what is allowed. Modelled on scikit-learn's ``_parameter_constraints``: a
parameter is valid when it satisfies at least one of its constraints; a parameter that is not
declared is not validated here (its component checks it in ``reset``, typically because what is
allowed depends on the game, e.g. a prior's length on N).

What depends on the game is checked in ``reset`` and named with ``component.label()`` like the
declared constraints; the checks several components share live here too (:func:`per_expert`,
:func:`expert_prior`).

Examples
--------
>>> from arena.base import Component
>>> class Toy(Component):
...     parameter_constraints = {"eta": [Interval(0, None, closed="neither"), OneOf("tuned")]}
...     def __init__(self, eta="tuned"):
...         self.eta = eta
>>> validate_params(Toy(eta=0.5))
>>> validate_params(Toy(eta=-1))
Traceback (most recent call last):
...
arena.errors.ConfigError: component Toy: parameter 'eta': must be a real number in (0, inf) or \
one of 'tuned', got -1
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from arena.errors import ConfigError


class Constraint:
    """One allowed form of a parameter value."""

    def accepts(self, value: Any) -> bool:
        """Whether ``value`` satisfies the constraint."""
        raise NotImplementedError

    def describe(self) -> str:
        """The constraint in words, as error messages and ``arena list`` show it."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{self.describe()}>"


class Interval(Constraint):
    """A real (or integer) number in an interval; ``None`` bounds are infinite.

    Parameters
    ----------
    lo, hi : float or None
        The bounds (None: unbounded on that side).
    closed : {"both", "left", "right", "neither"}
        Which bounds belong to the interval. Unbounded sides never include ±inf: an interval
        accepts finite numbers only, unless ``allow_inf`` is set.
    integer : bool
        Accept integers only (integral floats such as ``3.0`` from a YAML file are accepted).
    allow_inf : bool
        Also accept ``+inf`` / ``-inf`` where the interval is unbounded on that side.

    Examples
    --------
    >>> Interval(0, 1).accepts(1.0), Interval(0, 1, closed="left").accepts(1.0)
    (True, False)
    >>> Interval(1, None, integer=True).describe()
    'an integer ≥ 1'
    >>> Interval(0, None, closed="neither").accepts(math.inf)
    False
    """

    def __init__(
        self,
        lo: float | None = None,
        hi: float | None = None,
        *,
        closed: str = "both",
        integer: bool = False,
        allow_inf: bool = False,
    ):
        if closed not in ("both", "left", "right", "neither"):
            raise ValueError(f"closed must be both, left, right or neither, got {closed!r}")
        self.lo, self.hi, self.closed = lo, hi, closed
        self.integer, self.allow_inf = integer, allow_inf

    def accepts(self, value: Any) -> bool:
        # a plain int or float is answered without the numbers.Real ABC check (the slow part of
        # validating a component's parameters, which every game does a few times)
        if type(value) not in (int, float) and (
            isinstance(value, bool) or not isinstance(value, numbers.Real)
        ):
            return False
        v = float(value)
        if math.isnan(v):
            return False
        if math.isinf(v):
            unbounded = self.hi is None if v > 0 else self.lo is None
            return self.allow_inf and unbounded
        if self.integer and not v.is_integer():
            return False
        if self.lo is not None:
            if v < self.lo or (v == self.lo and self.closed in ("right", "neither")):
                return False
        if self.hi is not None:
            if v > self.hi or (v == self.hi and self.closed in ("left", "neither")):
                return False
        return True

    def describe(self) -> str:
        what = "an integer" if self.integer else "a real number"
        lo_in = self.closed in ("both", "left")
        hi_in = self.closed in ("both", "right")
        if self.lo is not None and self.hi is None:
            bound = f"{'≥' if lo_in else '>'} {_num(self.lo)}"
            if not self.integer:
                return f"{what} in {'[' if lo_in else '('}{_num(self.lo)}, inf)"
            return f"{what} {bound}"
        if self.lo is None and self.hi is not None:
            return f"{what} {'≤' if hi_in else '<'} {_num(self.hi)}"
        if self.lo is None and self.hi is None:
            return f"a finite {what.removeprefix('a ').removeprefix('an ')}"
        return (
            f"{what} in {'[' if lo_in else '('}{_num(self.lo)}, {_num(self.hi)}"
            f"{']' if hi_in else ')'}"
        )


class OneOf(Constraint):
    """One of a fixed set of values (strings, usually).

    Examples
    --------
    >>> OneOf("uniform", "lowest").accepts("lowest"), OneOf("uniform").describe()
    (True, "one of 'uniform'")
    """

    def __init__(self, *options: Any):
        self.options = options

    def accepts(self, value: Any) -> bool:
        return any(type(value) is type(o) and value == o for o in self.options)

    def describe(self) -> str:
        return "one of " + ", ".join(repr(o) for o in self.options)


class IsNone(Constraint):
    """The value ``None`` (``null`` in a YAML file): "let the component choose"."""

    def accepts(self, value: Any) -> bool:
        return value is None

    def describe(self) -> str:
        return "null"


class Boolean(Constraint):
    """``True`` or ``False`` (numpy's ``bool_`` too: a value read back from an array)."""

    def accepts(self, value: Any) -> bool:
        return isinstance(value, bool | np.bool_)

    def describe(self) -> str:
        return "a boolean"


class ListOf(Constraint):
    """A list (or tuple, or 1-D array) whose every item satisfies ``item``; non-empty unless
    ``allow_empty``.

    Examples
    --------
    >>> ListOf(Interval(0, 1)).accepts([0.2, 0.5]), ListOf(Interval(0, 1)).accepts([2])
    (True, False)
    >>> ListOf(Interval(1, None, integer=True), allow_empty=True).describe()
    'a list, each item an integer ≥ 1'
    """

    def __init__(self, item: Constraint, *, allow_empty: bool = False):
        self.item, self.allow_empty = item, allow_empty

    def accepts(self, value: Any) -> bool:
        if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
            return False
        items = list(value)
        return (self.allow_empty or bool(items)) and all(self.item.accepts(v) for v in items)

    def describe(self) -> str:
        kind = "a list" if self.allow_empty else "a non-empty list"
        return f"{kind}, each item {self.item.describe()}"


class Range(Constraint):
    """A range ``[lo, hi]``: two finite real numbers with ``lo < hi``.

    Examples
    --------
    >>> Range().accepts([0, 1]), Range().accepts([1]), Range().accepts([2, 1])
    (True, False, False)
    """

    def accepts(self, value: Any) -> bool:
        if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
            return False
        items = list(value)
        finite = Interval()
        return len(items) == 2 and all(map(finite.accepts, items)) and items[0] < items[1]

    def describe(self) -> str:
        return "a range [lo, hi] of two finite numbers with lo < hi"


class InstanceOf(Constraint):
    """An instance of a class (e.g. a regularizer object)."""

    def __init__(self, cls: type, what: str | None = None):
        self.cls, self.what = cls, what

    def accepts(self, value: Any) -> bool:
        return isinstance(value, self.cls)

    def describe(self) -> str:
        return self.what or f"a {self.cls.__name__}"


POSITIVE = Interval(0, None, closed="neither")
"""A finite real number > 0, the usual rate, scale or radius."""

NON_NEGATIVE = Interval(0, None)
"""A finite real number ≥ 0."""


def _num(x: float) -> str:
    return f"{x:g}"


def describe_constraints(cls: type) -> dict[str, str]:
    """Return ``{parameter: allowed values in words}`` for each parameter ``cls`` constrains.

    The words are those of the refusals (:func:`constraint_errors`), ``arena list`` and the
    documentation site's component pages.

    Examples
    --------
    >>> class C:
    ...     parameter_constraints = {"eta": [Interval(0, None, closed="neither"), OneOf("tuned")]}
    >>> describe_constraints(C)
    {'eta': "a real number in (0, inf) or one of 'tuned'"}
    """
    declared = getattr(cls, "parameter_constraints", {})
    return {name: " or ".join(c.describe() for c in cs) for name, cs in declared.items()}


def constraint_errors(component: Any) -> list[tuple[str, str]]:
    """Return ``(parameter, message)`` for each declared parameter whose value is not allowed."""
    declared = getattr(type(component), "parameter_constraints", {})
    out = []
    for name, constraints in declared.items():
        value = getattr(component, name)
        if not any(c.accepts(value) for c in constraints):
            allowed = " or ".join(c.describe() for c in constraints)  # as describe_constraints
            out.append((name, f"must be {allowed}, got {value!r}"))
    return out


def validate_params(component: Any) -> None:
    """Raise :class:`~arena.errors.ConfigError` for the first declared parameter not allowed.

    The message names the component as ``"<kind> <registry name>"`` (e.g. ``player hedge``).
    """
    errors = constraint_errors(component)
    if errors:
        name, message = errors[0]
        raise ConfigError(component.label(), name, message)


# ----------------------------------------------------------------------------------------------
# checks that depend on the game, shared by several components


def per_expert(component: Any, parameter: str, n: int) -> np.ndarray | None:
    """Return a per-expert list parameter as an array of length ``n``, or None if it is None.

    The items are checked by the component's declaration (e.g. ``ListOf(Interval(0, 1))``); what
    no declaration can say is the length, which is the game's number of experts.

    Examples
    --------
    >>> from arena.base import Component
    >>> class Toy(Component):
    ...     kind = "player"
    ...     def __init__(self, pi=None):
    ...         self.pi = pi
    >>> per_expert(Toy(pi=[1, 3]), "pi", 2).tolist()
    [1.0, 3.0]
    >>> per_expert(Toy(pi=[1, 3]), "pi", 3)
    Traceback (most recent call last):
    ...
    arena.errors.ConfigError: player Toy: parameter 'pi': needs one value per expert \
(n_actions = 3), got 2
    """
    values = getattr(component, parameter)
    if values is None:
        return None
    arr = np.asarray(list(values), dtype=np.float64)
    if arr.shape != (n,):
        raise ConfigError(
            component.label(),
            parameter,
            f"needs one value per expert (n_actions = {n}), got {arr.size}",
        )
    return arr


def expert_prior(component: Any, parameter: str, n: int) -> np.ndarray:
    """Return the prior over ``n`` experts that ``parameter`` gives, normalized to sum 1.

    None is the uniform prior; a list must have one (declared positive) mass per expert.
    """
    masses = per_expert(component, parameter, n)
    if masses is None:
        return np.full(n, 1.0 / n)
    return masses / masses.sum()


def check_declaration(cls: type) -> None:
    """Raise ``TypeError`` if ``cls`` declares constraints for names that are not parameters."""
    declared = set(getattr(cls, "parameter_constraints", {}))
    unknown = declared - set(cls.param_names())
    if unknown:
        raise TypeError(
            f"{cls.__name__} declares constraints for {sorted(unknown)}, which are not "
            f"parameters of its __init__ ({cls.param_names()})"
        )
