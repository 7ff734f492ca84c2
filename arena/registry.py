"""Registry of players, adversaries, metrics and protocols, discovered through entry points only.

Groups ``arena.players``, ``arena.adversaries``, ``arena.metrics``, ``arena.protocols`` and
``arena.weak_learners``
(architecture: parameters). Loading is lazy and per name: listing reads entry-point metadata
only, and a plugin whose import fails breaks only itself. Two distributions claiming the same name
in one group is an error naming both.
"""

from __future__ import annotations

import difflib
import importlib
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from arena.errors import ArenaError, ConfigError, UnknownComponentError

KINDS = {
    "player": "arena.players",
    "adversary": "arena.adversaries",
    "metric": "arena.metrics",
    "protocol": "arena.protocols",
    "weak_learner": "arena.weak_learners",
}


@dataclass(frozen=True)
class Registered:
    """One registry entry: the name, the entry point and the distribution that declares it."""

    name: str
    entry_point: EntryPoint
    distribution: str


@cache
def _claims(kind: str) -> dict[str, tuple[Registered, ...]]:
    """Every claim on each name of ``kind``: one entry normally, several on a conflict."""
    if kind not in KINDS:
        raise ValueError(f"unknown component kind {kind!r}; expected one of {sorted(KINDS)}")
    found: dict[str, list[Registered]] = {}
    # a distribution's name is parsed from its METADATA on every `.name` (0.3 s for the ~200
    # entry points of a command line); the entry points of one distribution share its object
    dist_names: dict[int, str] = {}
    for ep in entry_points(group=KINDS[kind]):
        if ep.dist is None:
            dist = "<unknown distribution>"
        else:
            dist = dist_names.get(id(ep.dist)) or dist_names.setdefault(id(ep.dist), ep.dist.name)
        claims = found.setdefault(ep.name, [])
        # the same distribution seen twice on sys.path (e.g. an editable install) is one claim
        if not any(c.entry_point.value == ep.value and c.distribution == dist for c in claims):
            claims.append(Registered(ep.name, ep, dist))
    return {name: tuple(found[name]) for name in sorted(found)}


@cache
def _names_by_target() -> dict[str, str]:
    """``{"module:Class": name}`` of every registered player and adversary."""
    out: dict[str, str] = {}
    for kind in ("player", "adversary", "weak_learner"):
        for name, claims in _claims(kind).items():
            for claim in claims:
                out.setdefault(claim.entry_point.value, name)
    return out


def name_of(cls: type) -> str | None:
    """Return the registry name of a player, adversary or weak learner class, or None if it is not
    registered.

    Read from the entry points' metadata (no plugin is imported): the name is declared once, in
    the distribution's ``pyproject.toml``.
    """
    return _names_by_target().get(f"{cls.__module__}:{cls.__qualname__}")


def available(kind: str) -> list[str]:
    """Return the sorted registry names of ``kind`` (``player``, ``adversary`` or ``metric``)."""
    return list(_claims(kind))


def conflict(kind: str, name: str) -> str | None:
    """Return a message naming the distributions that claim ``name`` twice, or None."""
    claims = _claims(kind).get(name, ())
    if len(claims) < 2:
        return None
    who = " and ".join(f"{c.distribution} ({c.entry_point.value})" for c in claims)
    return f"{kind} name {name!r} is claimed by more than one distribution: {who}"


def entry(kind: str, name: str) -> Registered:
    """Return the registry entry of ``name``, or raise with the closest names (or the conflict)."""
    claims = _claims(kind)
    if name not in claims:
        close = difflib.get_close_matches(name, list(claims), n=3, cutoff=0.5)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        raise UnknownComponentError(
            f"unknown {kind} {name!r}{hint} (available: {', '.join(claims) or 'none'})"
        )
    problem = conflict(kind, name)
    if problem:
        raise ArenaError(problem)
    return claims[name][0]


@cache
def _target(value: str) -> tuple[str, tuple[str, ...]]:
    """An entry point's ``"module:attr.path"`` as the module and the attribute path (parsed once;
    ``EntryPoint.load`` matches its pattern on every call)."""
    ep = EntryPoint(name="", value=value, group="")
    return ep.module, tuple(filter(None, ep.attr.split("."))) if ep.attr else ()


def load(kind: str, name: str) -> type:
    """Import and return the class registered as ``name``; import failures name the plugin.

    What ``EntryPoint.load`` returns (the module imported, or found in ``sys.modules``, and its
    attribute read now, so a class patched in its module is the one returned), at a third of its
    cost: a game loads its components and metrics a few times each.
    """
    reg = entry(kind, name)
    try:
        module, path = _target(reg.entry_point.value)
        found = sys.modules.get(module)
        if found is None or getattr(getattr(found, "__spec__", None), "_initializing", False):
            # not imported yet, or being imported by another thread: import_module waits for it
            found = importlib.import_module(module)
        for attr in path:
            found = getattr(found, attr)
        return found
    except Exception as exc:  # a broken plugin must not take the others down
        raise ArenaError(
            f"{kind} {name!r} from distribution {reg.distribution} failed to import "
            f"({reg.entry_point.value}): {type(exc).__name__}: {exc}"
        ) from exc


def check_param_names(kind: str, name: str, cls: type, params: Mapping[str, Any]) -> None:
    """Raise :class:`~arena.errors.ConfigError` naming the first parameter ``cls`` does not take."""
    unknown = set(params) - set(cls.param_names())
    if unknown:
        bad = sorted(unknown)[0]
        close = difflib.get_close_matches(bad, cls.param_names(), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ConfigError(
            f"{kind} {name}", bad, f"unknown parameter{hint} (valid: {cls.param_names()})"
        )


def make(kind: str, name: str, /, **params):
    """Instantiate the registered component ``name`` with ``params``, validated against the
    constraints it declares (:func:`arena.params.validate_params`)."""
    from arena.params import validate_params

    cls = load(kind, name)
    check_param_names(kind, name, cls, params)
    component = cls(**params)
    validate_params(component)
    return component


def make_inner(
    owner: str, kind: str, value: Any, params: Mapping[str, Any] | None, *, name_param: str
) -> Any:
    """Return the component a meta-component names in its parameter ``name_param``.

    ``value`` is a registry name of ``kind`` (made with ``params``) or an instance (cloned with
    ``params``); ``params`` is the owner's parameter ``<name_param>_params``. A refusal becomes a
    :class:`~arena.errors.ConfigError` naming ``owner`` and which of its two parameters is at
    fault: ``<name_param>_params`` when the bad value is one of ``params``, else ``name_param``.
    Used by every component that takes another by name (``flh``'s base, ``bandit_wrapper``'s
    player, ``matrix_game``'s opponent, a booster's weak learner, ``adaboost_ol``'s expert player).

    Examples
    --------
    >>> make_inner("player flh", "player", "hedge", {"eta": 0.5}, name_param="base")
    Hedge(eta=0.5)
    >>> make_inner("player flh", "player", "hedge", {"eta": -1}, name_param="base")
    Traceback (most recent call last):
    ...
    arena.errors.ConfigError: player flh: parameter 'base_params': player hedge: ...
    """
    params = dict(params or {})
    try:
        if isinstance(value, str):
            return make(kind, value, **params)
        return value.clone(**params)
    except ConfigError as exc:
        bad = f"{name_param}_params" if exc.parameter in params else name_param
        raise ConfigError(owner, bad, str(exc)) from exc
    except ArenaError as exc:
        raise ConfigError(owner, name_param, str(exc)) from exc
