"""The ``structured`` protocol object: the player predicts a label string, the stream reveals
the answer, the round costs ``ρ(y_t, ŷ_t)`` (Shalev-Shwartz 2007, §5.3.3).

The stepper plays a chunk round by round (inference is the player's own dynamic program, so
there is no block kernel to share), validates every prediction (shape (R, m), labels in
``0 … k−1``) and advances the running cost ``Σ_s ρ(y_s, ŷ_s)`` that the ``structured_cost``
metric reads.
"""

from __future__ import annotations

from typing import Any, ClassVar, NamedTuple

import numpy as np

from arena.errors import ConfigError, GameError
from arena.protocol import GameProtocol, PreparedGame, Stepper
from arena.spec import GameSpec
from arena.structured.components import STRUCTURED, StructuredAdversary, StructuredPlayer
from arena.validation import describe


class StructuredBlock(NamedTuple):
    """A chunk of rounds as the metrics read it: ``x`` (R, n, m, d), ``y`` and ``predictions``
    (R, n, m) ints, ``costs`` (R, n) = ``ρ(y_t, ŷ_t)``."""

    x: np.ndarray
    y: np.ndarray
    predictions: np.ndarray
    costs: np.ndarray


class StructuredCore:
    """The running totals: ``cost`` (R,) = ``Σ_{s≤t} ρ(y_s, ŷ_s)``, added round by round."""

    def __init__(self, n_rep: int):
        self.cost = np.zeros(n_rep)


def check_prediction(
    player: Any, y_hat: Any, spec: GameSpec, t: int, ids: np.ndarray
) -> np.ndarray:
    """Return ``y_hat`` as an (R, m) int array, or raise :class:`GameError` naming the player,
    the round and the first replicate at fault."""
    who = describe("player", player)
    arr = np.asarray(y_hat)
    shape = (spec.n_replicates, spec.n_actions)
    if arr.shape != shape:
        raise GameError(who, f"predict returned shape {arr.shape}, expected {shape}", round=t)
    as_int = arr.astype(np.int64) if np.issubdtype(arr.dtype, np.number) else None
    if as_int is None:
        raise GameError(who, f"predict returned dtype {arr.dtype}, not labels", round=t)
    bad = (as_int != arr) | (as_int < 0) | (as_int >= spec.n_classes)
    rows = np.flatnonzero(bad.any(axis=1))
    if rows.size:
        r = int(rows[0])
        raise GameError(
            who,
            f"predicted labels {arr[r].tolist()!r} outside 0 … {spec.n_classes - 1}",
            round=t,
            replicate=int(ids[r]),
        )
    return as_int


class StructuredStepper(Stepper):
    """Plays a reset structured game chunk by chunk for the driver."""

    def __init__(self, game: PreparedGame):
        self.player, self.adversary, self.spec = game.player, game.adversary, game.spec
        self.ids = game.ids
        self.structure = game.spec.structure
        self.core = StructuredCore(game.spec.n_replicates)
        s = self.structure
        self.round_elements = int(np.prod(s.input_shape)) + 2 * s.length + 1

    def _checked(self, x: np.ndarray, y: np.ndarray, t0: int, n: int) -> tuple:
        """The stream's chunk as float inputs and int labels, or a :class:`GameError` naming
        the stream, the first bad round and replicate."""
        s, n_rep = self.structure, self.spec.n_replicates
        who = describe("adversary", self.adversary)
        want_x, want_y = (n_rep, n, *s.input_shape), (n_rep, n, s.length)
        if x.shape != want_x or y.shape != want_y:
            raise GameError(
                who,
                f"examples returned {x.shape} and {y.shape}, not {want_x} and {want_y}",
                round=t0,
            )
        bad = ~np.isfinite(x.astype(np.float64)).reshape(n_rep, n, -1).all(axis=2)
        bad |= ((y < 0) | (y >= s.n_labels) | (y != np.floor(y))).any(axis=2)
        if bad.any():
            r, j = (int(v[0]) for v in np.nonzero(bad))
            raise GameError(
                who,
                "a non-finite input or a label outside 0 … "
                f"{s.n_labels - 1}: {np.asarray(y[r, j]).tolist()!r}",
                round=t0 + j,
                replicate=int(self.ids[r]),
            )
        return x.astype(np.float64), y.astype(np.int64)

    def step(self, t0: int, n: int) -> StructuredBlock:
        x_all, y_all = self.adversary.examples(t0, n)
        n_rep, s = self.spec.n_replicates, self.structure
        x_all, y_all = self._checked(np.asarray(x_all), np.asarray(y_all), t0, n)
        preds = np.empty((n_rep, n, s.length), dtype=np.int64)
        costs = np.empty((n_rep, n))
        for j in range(n):
            t = t0 + j
            x, y = x_all[:, j], y_all[:, j]
            y_hat = check_prediction(
                self.player, self.player.predict(x.copy()), self.spec, t, self.ids
            )
            self.player.update(x.copy(), y.copy(), y_hat.copy())
            preds[:, j] = y_hat
            costs[:, j] = [s.cost(y[r], y_hat[r]) for r in range(n_rep)]
            self.core.cost += costs[:, j]  # round by round: chunk-free sums
        return StructuredBlock(x_all, y_all, preds, costs)


class StructuredProtocol(GameProtocol):
    """The ``structured`` protocol (architecture: protocols): a :class:`StructuredPlayer`
    against a :class:`StructuredAdversary`, whose declared structure is ``spec.structure``;
    ``n_actions`` is the string length m, ``n_classes`` the alphabet size k and ``dim`` the
    per-position input dimension d."""

    default_metrics: ClassVar[dict[str, Any]] = {"structured_cost": {}}
    reference_loop: ClassVar[str] = "arena.structured.reference:reference_play_structured"
    conformance_checks: ClassVar[str] = "arena.structured.checks:CHECKS"

    def check_pair(self, player: Any, adversary: Any) -> None:
        if not isinstance(adversary, StructuredAdversary):
            raise ConfigError(
                describe("adversary", adversary), "protocol", "is no structured stream"
            )
        if not isinstance(player, StructuredPlayer):
            raise ConfigError(
                describe("player", player), "protocol", f"does not play the {STRUCTURED} protocol"
            )

    def make_spec(
        self, player: Any, adversary: Any, *, horizon: int, n_actions: int | None, ids: np.ndarray
    ) -> tuple[GameSpec, dict[str, Any]]:
        structure = adversary.structure()
        if n_actions is not None and int(n_actions) != structure.length:
            raise ConfigError(
                describe("adversary", adversary),
                "n_actions",
                f"the stream's strings have length {structure.length}, got n_actions={n_actions}",
            )
        spec = GameSpec(
            STRUCTURED,
            structure.length,
            horizon,
            (0.0, float(structure.length)),
            n_replicates=int(ids.size),
            dim=structure.n_features,
            replicate_ids=tuple(ids.tolist()),
            n_classes=structure.n_labels,
            structure=structure,
        )
        return spec, {"structure": structure.describe()}

    def identity(self, player: Any, adversary: Any, spec: GameSpec) -> tuple[dict, dict]:
        game = {
            "adversary": type(adversary).registry_name(),
            "params": adversary.get_params(),
            "protocol": STRUCTURED,
        }
        return game, {}

    def start(self, game: PreparedGame) -> StructuredStepper:
        return StructuredStepper(game)
