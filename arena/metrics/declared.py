"""The declared guarantees ``bound`` (the player's proven regret bound) and ``lower_bound`` (the
adversary's reference lower bound): rows read from a component's declaration at each checkpoint,
computed in every protocol."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from arena.metric import EVERY_PROTOCOL, Metric
from arena.metrics.base import Core
from arena.spec import GameSpec


def _labels(keys: list[tuple[str, float]]) -> list[tuple[str, float | None]]:
    """Keys comparable with ``==`` (NaN params, which never equal themselves, become None)."""
    return [(m, None if p != p else p) for m, p in keys]


class _Declared(Metric):
    """Rows ``<prefix>:<metric>`` read from a component's declaration at each checkpoint.

    Protocol-generic: the value comes from the component, not from a protocol's block, so every
    protocol computes it (:data:`~arena.metric.EVERY_PROTOCOL`); ``values`` reads ``core.t``
    only.
    """

    protocols: ClassVar[frozenset[str] | None] = EVERY_PROTOCOL
    prefix: ClassVar[str] = ""

    def _declared(self, t: int) -> dict:
        raise NotImplementedError

    def start(self, spec: GameSpec) -> None:
        super().start(spec)
        self._keys: list[tuple[str, float]] | None = None
        self._raw_keys: list | None = None  # the keys as declared at the last checkpoint

    def values(self, core: Core) -> np.ndarray:
        declared = self._declared(core.t)
        raw = list(declared)
        # the same keys as the last checkpoint's (compared as given: a NaN param is the same
        # object each time) skip their conversion and comparison
        if raw != self._raw_keys:
            keys = [(str(m), float(p)) for m, p in raw]
            if self._keys is None:
                self._keys = keys
            elif _labels(keys) != _labels(self._keys):
                raise ValueError(
                    f"{self.name}: the declared keys changed from {self._keys} to {keys}"
                )
            self._raw_keys = raw
        n_rep = self._spec.n_replicates
        values = list(declared.values())
        if all(type(v) is float for v in values):  # one number per key: one row, repeated
            return np.repeat(np.array(values, dtype=np.float64)[None, :], n_rep, axis=0)
        cols = [np.broadcast_to(np.asarray(v, dtype=np.float64), (n_rep,)) for v in values]
        return np.stack(cols, axis=1) if cols else np.empty((n_rep, 0))

    def row_keys(self, spec: GameSpec) -> list[tuple[str, float]]:
        return [(f"{self.prefix}:{m}", p) for m, p in (self._keys or [])]

    def _declaration(self, player, adversary, t: int) -> dict:
        raise NotImplementedError

    def reference_rows(self, records) -> list[tuple[str, float, list[float]]]:
        """The declaration itself, read from the game's component after round t: a value a
        component declares has no definition but the declaration, whatever the protocol."""
        first = records[0]
        declared = self._declaration(first.player, first.adversary, first.t)
        return [
            (f"{self.prefix}:{metric}", float(param), np.broadcast_to(value, (len(records),)))
            for (metric, param), value in declared.items()
        ]


class Bound(_Declared):
    """The player's proven regret bound, evaluated on the run's own quantities.

    A player declares ``bounds(t) -> {(metric, param): value}``; each entry becomes rows with
    metric ``bound:<metric>`` and the bounded metric's param (e.g. ``bound:regret`` next to
    ``regret``, ``bound:quantile_regret`` with ε), so reports overlay them and tests assert them.
    A player whose bounds exist only in some games (``pruning_hedge``: tree games) also defines
    ``bounds_reason(adversary) -> str | None``, why it declares none against this adversary.
    """

    name = "bound"
    prefix = "bound"

    def applicable(self, player, adversary) -> str | None:
        method = getattr(type(player), "bounds", None)
        # a protocol's base class declares none (arena.components.declares_nothing)
        declares = method is not None and not getattr(method, "declares_nothing", False)
        if not declares:
            return "the player declares no bound"
        reason = getattr(player, "bounds_reason", None)
        return reason(adversary) if callable(reason) else None

    def attach(self, player, adversary) -> None:
        self._source = player

    def _declared(self, t: int) -> dict:
        return self._source.bounds(t)

    def _declaration(self, player, adversary, t: int) -> dict:
        return player.bounds(t)


class LowerBound(_Declared):
    """The adversary's reference lower bound on a metric (e.g. fair coins: ``LB(T, N)``).

    Logged as metric ``lower_bound:<metric>`` with the bounded metric's param. An adversary whose
    lower bound holds against some players and games only (``replay`` of a certified sequence)
    also defines ``lower_bounds_reason(player, spec=None) -> str | None``: why it declares none
    here, checked before the game (against the player) and again with the game's spec.
    """

    name = "lower_bound"
    prefix = "lower_bound"

    def applicable(self, player, adversary) -> str | None:
        from arena.components import Adversary

        declares = getattr(type(adversary), "lower_bounds", None) is not Adversary.lower_bounds
        if not declares:
            return "the adversary declares no lower bound"
        reason = getattr(adversary, "lower_bounds_reason", None)
        # kept for game_reason, which sees the spec but not the components
        self._pair = (player, reason) if callable(reason) else None
        return reason(player) if callable(reason) else None

    def game_reason(self, spec: GameSpec) -> str | None:
        pair = getattr(self, "_pair", None)
        return pair[1](pair[0], spec) if pair is not None else None

    def attach(self, player, adversary) -> None:
        self._source = adversary
        self._player = player

    def _declared(self, t: int) -> dict:
        return self._source.lower_bounds(t, self._player)

    def _declaration(self, player, adversary, t: int) -> dict:
        return adversary.lower_bounds(t, player)
